/**
 * The node's role in app.ts's start-up (docs/decisions/scale-out.md, "Scale-out"): which engine it runs and what the
 * cluster adds. ROLE=single (the default) is today's process and loads nothing more; ROLE=sequencer and
 * ROLE=replica load cluster.ts, and with it the NATS clients, through a dynamic import. ROLE=gateway is a
 * replica whose writes go to the sequencer (`gateway`).
 */
import { AUTO_NAME } from '../journal/checkpoints/checkpoints.ts';
import { clearScratch } from '../journal/checkpoints/snapshots.ts';
import { HistoryFloorError, historyFloorOf } from '../journal/checkpoints/state-snapshot.ts';
import type { ReplicaRole, SequencerRole } from './cluster.ts';
import type { SnapshotShipper } from '../replication/snapshot-shipper.ts';
import type { CommandForwarder } from '../replication/commands.ts';
import type { HistoryBackfill } from '../replication/history-backfill.ts';
import type { AuthServices } from '../edge/auth/auth.ts';
import type { Metrics } from '../edge/pipeline/metrics.ts';
import { Checkpointer, type CheckpointPolicy } from '../engine/checkpointer.ts';
import { Engine, type EngineOptions, type EngineSurface } from '../engine/engine.ts';
import { threadSpec } from '../engine/shard/shard-threads.ts';
import type { Store } from '../journal/env.ts';
import type { AuxDb, ReplicationLog } from '../journal/replication-log.ts';
import type { ViewSink, ViewWrites } from '../projections/projector.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Config } from '../runtime/config.ts';
import type { Logger } from '../runtime/log.ts';
import type { Closers } from './closers.ts';
import type { KeptThreads } from './kept-threads.ts';

/** What the cluster role adds (cluster.ts); ROLE=single loads none of it. */
export interface RoleParts {
  cluster?: typeof import('./cluster.ts');
  sequencer?: SequencerRole;
  replica?: ReplicaRole;
  /** ROLE=gateway: the way its writes take to the sequencer. */
  gateway?: CommandForwarder;
  /**
   * A replica or gateway whose store has a history floor (started from a state snapshot): the way its reads
   * of history take to the sequencer (edge/pipeline/route.ts `history`).
   */
  history?: CommandForwarder;
  /** Such a node's history copied back in (replication/history-backfill.ts; cluster.backfill), once its store is open. */
  backfill?: HistoryBackfill;
  /** The matching engine (single and sequencer), once open. */
  engine?: Engine;
  /** The node's checkpoints and retention (engine/checkpointer.ts), every role with a store. */
  checkpointer?: Checkpointer;
  /** ROLE=sequencer: its snapshots for the followers, and the stream's bound (replication/snapshot-shipper.ts). */
  shipper?: SnapshotShipper;
  /**
   * What read routes report in X-Journal-Seq. ROLE=single: the engine's committed journal seq. In a cluster
   * the replication log's sequence (rseq), which every write moves, not only the journal's events (an API
   * key, a catalog edit, a reward accrual): the sequencer's committed rseq, a replica's applied one.
   */
  journalSeq: () => number;
  /**
   * ROLE=sequencer: what the answer of a write reports in X-Journal-Seq, the last rseq drawn as it leaves (at
   * least the rseq of the record that holds the write, which committed before the answer). Other roles: none
   * (a single node has no replica to wait for; a replica takes no writes).
   */
  writeSeq?: () => number;
}

/**
 * Before the store opens: every clustered role empties DATA_DIR's snapshot scratch (what a kill left) and
 * refuses a NATS server whose TLS it cannot trust (cluster.ts checkNatsTls), and a follower's (replica,
 * gateway, standby) new or lagging store is replaced by the newest snapshot the sequencer shipped (cluster.ts
 * prepareFollower). Nothing for ROLE=single.
 */
export async function prepareStore(config: Readonly<Config>, log: Logger, metrics: Metrics): Promise<void> {
  const r = config.cluster.role;
  if (r === 'single') return;
  // What a node killed while it shipped, installed or backfilled a snapshot left (whole-store sized).
  clearScratch(config.dataDir);
  const cluster = await import('./cluster.ts');
  await cluster.checkNatsTls(config);
  if (r !== 'replica' && r !== 'gateway' && r !== 'standby') return;
  await cluster.prepareFollower(config, log, metrics);
}

/** Loads cluster.ts for the sequencer and replica roles; a sequencer's store logs what replicas need from here on. */
export async function openRole(raw: Store, config: Readonly<Config>, log: Logger, metrics: Metrics, lease: { term?: number; leaseTerm?: () => number | undefined } = {}): Promise<RoleParts> {
  const parts: RoleParts = { journalSeq: () => 0 };
  const r = config.cluster.role;
  const floor = historyFloorOf(raw);
  // Its answers would lack the history below the floor, and a sequencer's store is every follower's source.
  if ((r === 'single' || r === 'sequencer') && floor > 0) {
    throw new HistoryFloorError(
      `this store holds the history after journal seq ${floor} only (installed from a state snapshot, its backfill not done): it cannot run as the ${r}; run it as a replica, gateway or standby until its backfill is done (pm_history_backfill_done)`,
    );
  }
  if (r === 'single') return parts;
  parts.cluster = await import('./cluster.ts');
  // Refused before anything opens: no credentials outside a test (replication/nats-link.ts checkCredentials).
  parts.cluster.checkNatsSettings(config, log);
  if (config.cluster.role === 'sequencer') parts.sequencer = parts.cluster.openSequencer(raw, config, log, metrics, lease.term);
  const leaseTerm = config.cluster.failover.enabled ? lease.leaseTerm ?? (() => undefined) : undefined;
  if (config.cluster.role === 'gateway') parts.gateway = parts.cluster.openGateway(config, log, metrics, leaseTerm);
  if (floor > 0) {
    parts.history = parts.cluster.openGateway(config, log, metrics, leaseTerm, 'reads');
    log.info({ floor }, 'this store holds the history after journal seq `floor` only: reads of history go to the sequencer');
  }
  return parts;
}

/**
 * The engine: recovered from the store before anything can trade (single, sequencer), or a replica's read
 * surface over its store. A sequencer's publisher closes after the engine, so the last commits are offered.
 */
export async function openEngine(o: {
  config: Readonly<Config>;
  opts: Pick<EngineOptions, 'timers' | 'shardTime' | 'onExpiry' | 'proof' | 'onProof'>;
  store: Store;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  closers: Closers;
  role: RoleParts;
  keys: AuthServices['keys'];
  /** The projections' deferred view writes: they ride the engine's journal commits (projector.ts). */
  viewWrites: Pick<ViewWrites, 'ride'>;
  /** A revertible node's matching threads, taken over by the engine (kept-threads.ts). */
  threads?: KeptThreads;
}): Promise<EngineSurface> {
  const { config, role, metrics } = o;
  let surface: EngineSurface | undefined;
  const checkpointer = new Checkpointer({
    store: o.store,
    policy: checkpointPolicy(config),
    log: o.log,
    committedSeq: () => surface?.committedSeq ?? 0,
    pruneLog: config.cluster.role === 'standby',
  });
  role.checkpointer = checkpointer;
  // Registered before the engine, so closed after it: the shutdown checkpoint stands at the engine's last commit.
  o.closers.add('checkpointer', () => checkpointer.close());
  metrics.watch('pm_checkpoint', () => checkpointer.stats(), {
    seq: 'Journal seq of the newest automatic checkpoint (what a start after a crash replays from)',
    written: 'Checkpoints written since start',
    failures: 'Checkpoints that failed since start (logged)',
    lastMs: 'ms the last checkpoint took (its proof and its file, on the checkpoint thread)',
    lastReplayed: 'Journal events the last checkpoint\'s proof replayed',
    prunedTo: 'Journal seq up to which retention has archived or pruned the journal',
  });
  if (role.cluster !== undefined && config.cluster.role !== 'sequencer') {
    const replica = role.cluster.openReplica(o.store, config, o.log, metrics, (apiKeys) => o.keys.replicated(apiKeys), checkpointer.checkpoints);
    role.replica = replica;
    role.journalSeq = () => replica.follower.appliedRseq;
    surface = replica.engine;
    startCheckpoints(checkpointer, replica.engine);
    // A standby always: it may not become the sequencer before its store holds the history (failover.ts).
    if (role.history !== undefined && (config.cluster.backfill || config.cluster.role === 'standby')) {
      const backfill = role.cluster.startBackfill(o.store, config, o.log, metrics, () => replica.follower.appliedSeq);
      role.backfill = backfill;
      // Registered after the engine, so closed before it: a copy in progress stops between transactions.
      o.closers.add('history backfill', () => backfill.close());
    }
    return replica.engine;
  }
  const publisher = role.sequencer?.publisher;
  if (publisher !== undefined) {
    o.closers.add('publisher', () => publisher.close());
    // The publisher re-reads from the journal what the stream has not confirmed: retention leaves it.
    checkpointer.limit(() => publisher.stats().confirmedSeq);
  }
  if (publisher !== undefined) {
    const shipper = role.cluster!.openShipper(config, o.log, metrics, o.store, (dir, name, of) => checkpointer.snapshot(dir, name, of), () => checkpointer.write(AUTO_NAME), publisher);
    role.shipper = shipper;
    o.closers.add('snapshots', () => shipper.close());
  }
  // Books are read from the committed books (app.ts), never from the shards' own publications: published
  // every 20 ms per changed market, they cost the shard a serialization and hash of the book and this
  // thread the bodies' strings, for no reader (13% of the main thread's allocation per order at 100
  // orders/s). Asked-for ones (refreshSnapshot) still work.
  const shardOpts = { shards: config.engine.shards, snapshotIntervalMs: Infinity };
  const engine = await Engine.open({
    ...shardOpts,
    threads: await o.threads?.shardThreads(threadSpec(shardOpts), o.opts.shardTime),
    store: o.store,
    log: o.log,
    now: () => o.clock.now(),
    onCommit: (s) => metrics.commit(s),
    beforeFlush: () => o.viewWrites.ride(),
    trades: config.sandbox.trades,
    timers: o.opts.timers,
    shardTime: o.opts.shardTime,
    onExpiry: o.opts.onExpiry,
    proof: o.opts.proof,
    onProof: o.opts.onProof,
    replicationLog: role.sequencer?.log,
    checkpoints: checkpointer.checkpoints,
  });
  o.closers.add('engine', () => engine.close());
  role.engine = engine;
  surface = engine;
  startCheckpoints(checkpointer, engine);
  const log = role.sequencer?.log;
  if (log === undefined) role.journalSeq = () => engine.committedSeq;
  else {
    role.journalSeq = () => log.committedRseq;
    role.writeSeq = () => log.lastRseq;
  }
  publisher?.start();
  return engine;
}

/** The policy of `history` (config). */
function checkpointPolicy(config: Readonly<Config>): CheckpointPolicy {
  const h = config.history;
  return { ...h.checkpoints, retention: h.journal.retention, archiveDir: h.journal.archiveDir };
}

/** The first checkpoint of a store proved from the journal's start, then the policy's timer. */
function startCheckpoints(checkpointer: Checkpointer, engine: EngineSurface): void {
  const proof = engine.takeStartupProof();
  if (proof !== undefined) checkpointer.bootstrap(proof);
  checkpointer.start();
}

/** A replica starts applying the stream once every read model listens to its engine; it stops before the store closes. */
export function startFollowing(role: RoleParts, closers: Closers): void {
  const follower = role.replica?.follower;
  if (follower === undefined) return;
  follower.start();
  closers.add('follower', () => follower.close());
}


/**
 * A sequencer's sampler writes (midpoint samples, reward accruals: observations taken on its clock, not
 * derived from the journal) logged for its replicas in the view-writes flush that issues the samples
 * themselves, as one of its sinks: the record and the sample commit in the same turn's transaction, so a
 * crash loses both or neither and a replica never holds a sample the sequencer lost.
 */
export class SampleLog implements ViewSink {
  private held: Array<[db: AuxDb, key: unknown, value: unknown]> = [];

  constructor(
    private readonly log: ReplicationLog,
    writes: ViewWrites,
  ) {
    writes.register(this);
  }

  /** Holds the record of a sample just put into a view store (so held for the same flush). */
  hold(db: AuxDb, key: unknown, value: unknown): void {
    this.held.push([db, key, value]);
  }

  issue(): void {
    const held = this.held;
    this.held = [];
    for (const [db, key, value] of held) this.log.logWrite(db, key, value);
  }
}
