/**
 * The roles beyond one process (docs/decisions/scale-out.md, "Scale-out"): what app.ts adds for ROLE=sequencer and
 * ROLE=replica. Loaded with a dynamic import only for those roles, so ROLE=single never loads the NATS
 * clients.
 *
 *   sequencer  the store's writes the replicas need are logged (journal/replication-log.ts) and a
 *              publisher sends each committed record to the journal stream (replication/publisher.ts)
 *   replica    the engine is the replica's read surface (replication/replica-engine.ts), fed by the
 *              follower (replication/follower.ts) once the read models listen to it
 *   gateway    a replica, and the writes it takes go to the sequencer as commands
 *              (replication/commands.ts: its forwarder here, the sequencer's subscription in
 *              serveCommands), the edge's side in edge/forward.ts
 */
import { Histogram } from 'prom-client';
import type { Store } from '../journal/env.ts';
import { metaKeys } from '../journal/keys.ts';
import type { CheckpointSource } from '../journal/recovery.ts';
import { ReplicationLog } from '../journal/replication-log.ts';
import { CommandForwarder, CommandServer, commandSubject, REPLAY_WINDOW_MS, type CommandAnswer, type CommandKind, type CommandRequest } from '../replication/commands.ts';

export { requestBytes } from '../replication/commands.ts';
import { Follower, type AppliedBatch } from '../replication/follower.ts';
import { Publisher } from '../replication/publisher.ts';
import { ReplicaEngine } from '../replication/replica-engine.ts';
import { checkCredentials, probeNats, type StreamSettings } from '../replication/nats-link.ts';
import { ClusterKeys } from '../replication/seal.ts';
import { loadMasterKey } from '../edge/auth/credentials.ts';
import { prepareFollowerStore, startKindFor } from '../replication/snapshot-install.ts';
import { HistoryBackfill } from '../replication/history-backfill.ts';
import { SnapshotShipper } from '../replication/snapshot-shipper.ts';
import type { SnapshotKind, SnapshotManifest } from '../journal/checkpoints/snapshots.ts';
import type { Metrics } from '../edge/pipeline/metrics.ts';
import type { Config } from '../runtime/config.ts';
import type { Logger } from '../runtime/log.ts';

/**
 * How a node of this configuration reaches the cluster: its NATS connection and the cluster's purpose keys
 * (replication/seal.ts), derived from the master key every node shares (auth.masterKey).
 */
export function settingsOf(config: Readonly<Config>): StreamSettings {
  return {
    natsUrl: config.cluster.natsUrl,
    user: config.cluster.natsUser,
    password: config.cluster.natsPassword,
    insecure: config.cluster.insecure,
    caFile: config.cluster.natsCaFile || undefined,
    stream: config.cluster.stream,
    replicas: config.cluster.replicas,
    keys: ClusterKeys.fromMaster(loadMasterKey(config.auth, config.dataDir)),
  };
}

/**
 * A clustered node's NATS settings before it starts: no credentials is refused unless the configuration says
 * it is a test (cluster.insecure / NATS_INSECURE=1), which is then logged loudly.
 */
export function checkNatsSettings(config: Readonly<Config>, logger: Logger): void {
  checkCredentials(settingsOf(config));
  if (!config.cluster.natsUser) {
    logger.error(
      { natsUrl: config.cluster.natsUrl },
      'INSECURE: connecting to NATS with no credentials (cluster.insecure / NATS_INSECURE=1): anyone who reaches this NATS server can read and disrupt the cluster\'s traffic. For tests only.',
    );
  }
}

/**
 * Before anything of the role opens: a NATS server whose TLS this node cannot trust (a certificate no CA it
 * trusts signed, another host's, none where TLS is required) stops the start with the reason
 * (replication/nats-link.ts probeNats); one not reachable yet does not.
 */
export async function checkNatsTls(config: Readonly<Config>): Promise<void> {
  const settings = settingsOf(config);
  checkCredentials(settings);
  await probeNats(settings);
}

export interface SequencerRole {
  /** The store every service of the sequencer uses: catalog, profile and API-key writes are logged. */
  readonly store: Store;
  readonly log: ReplicationLog;
  readonly publisher: Publisher;
}

/**
 * Opens the replication log (refusing a store whose journal went on without it) and the publisher, not yet
 * started. Under a lease (cluster.failover) the log begins the lease's `term` and a journal batch is
 * acknowledged only once the stream confirmed it.
 */
export function openSequencer(raw: Store, config: Readonly<Config>, logger: Logger, metrics: Metrics, term?: number): SequencerRole {
  const log = ReplicationLog.open(raw);
  const publisher = new Publisher({ store: raw, log, logger, settings: settingsOf(config), outboxBatches: config.cluster.outboxBatches });
  if (config.cluster.failover.enabled) {
    if (term === undefined) throw new Error('cluster.failover: a sequencer starts under a lease (failover.ts)');
    log.beginTerm(term);
    log.confirmation = (rseq) => publisher.whenConfirmed(rseq);
    void raw.meta.put(metaKeys.acksAfterStream, true);
  }
  metrics.watch('pm_replication', () => publisher.stats(), {
    publishedSeq: 'Journal seq of the last batch sent to the journal stream',
    confirmedSeq: 'Journal seq of the last batch the stream confirmed',
    confirmedRseq: 'Last replication-log record the stream confirmed',
    outboxBatches: 'Records committed and held for the stream (bounded by cluster.outboxBatches)',
    outboxFull: '1 while the outbox is full (records are then re-read from LMDB once NATS takes them)',
    outboxOverflowBatches: 'Records not held because the outbox was full, since start',
  });
  return { store: log.captureWrites(raw), log, publisher };
}

export interface ReplicaRole {
  readonly engine: ReplicaEngine;
  readonly follower: Follower;
}

/**
 * The replica's engine surface and follower (not yet started: start it once the read models listen to
 * `engine.onCommitted`). `keysChanged` hears the API keys each batch wrote.
 */
export function openReplica(store: Store, config: Readonly<Config>, logger: Logger, metrics: Metrics, keysChanged: (apiKeys: string[]) => void, checkpoints?: CheckpointSource): ReplicaRole {
  if (config.cluster.sequencerUrl === '' && !config.cluster.failover.enabled) logger.warn('ROLE=replica without SEQUENCER_URL: refusals of write routes cannot say where to send them');
  const engine = new ReplicaEngine(store, config.cluster.sequencerUrl, checkpoints);
  const onApplied = (applied: AppliedBatch[]) => {
    engine.applied(applied);
    const keys: string[] = [];
    for (const { batch } of applied) for (const w of batch.a ?? []) if (w[0] === 'k' && typeof w[1] === 'string') keys.push(w[1]);
    if (keys.length > 0) keysChanged(keys);
  };
  // Issue to application per record: the replication lag (the sequencer's and the replica's clocks must agree).
  const delay = new Histogram({
    name: 'pm_replica_apply_delay_seconds',
    help: 'Seconds from the sequencer issuing a replication record (after its commit) to this replica having applied it',
    buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30],
    registers: [metrics.registry],
  });
  // A standby keeps the records in its own log, so its store can serve as a sequencer's.
  const follower = new Follower({ store, logger, settings: settingsOf(config), onApplied, applyDelay: (s) => delay.observe(s), keepLog: config.cluster.role === 'standby' });
  metrics.watch('pm_replica', () => follower.stats(), {
    appliedSeq: 'Journal seq of the last batch this replica applied (what its reads reflect)',
    appliedRseq: 'Last replication-log record applied',
    lagBatches: 'Records in the journal stream not yet applied',
    lagSeconds: 'While records wait: seconds since the sequencer issued the last one applied; 0 when caught up',
    refused: '1 once a batch was refused (corrupt, unknown version, out of order): applying stopped',
    forged: 'Stream messages skipped as forgeries (another subject, not authenticated by the nodes\' key), since start',
  });
  return { engine, follower };
}

/**
 * A replica, gateway or standby started from a state snapshot: its history copied back in, in the background
 * (replication/history-backfill.ts), counted on /metrics as pm_history_backfill_*.
 */
export function startBackfill(store: Store, config: Readonly<Config>, logger: Logger, metrics: Metrics, appliedSeq: () => number): HistoryBackfill {
  const backfill = new HistoryBackfill({ store, settings: settingsOf(config), logger, appliedSeq, retryMs: config.cluster.backfillRetrySeconds * 1000 });
  metrics.watch('pm_history_backfill', () => backfill.stats(), {
    done: '1 once this store holds the whole history again (its history floor removed): reads of history are answered here',
    rows: 'Rows of history copied in from the sequencer\'s whole-store snapshot',
    retries: 'Backfill attempts that found no whole-store snapshot at or above the floor yet, or failed (logged)',
    ms: 'ms from the start to the history held whole (0 until then)',
  });
  backfill.start();
  return backfill;
}

/**
 * The way to the sequencer (connecting in the background), its counts on /metrics: ROLE=gateway's for its
 * writes (`commands`), and a node's with a history floor for the reads of history (`reads`, pm_history_forward).
 */
export function openGateway(config: Readonly<Config>, logger: Logger, metrics: Metrics, leaseTerm?: () => number | undefined, kind: CommandKind = 'commands'): CommandForwarder {
  const forwarder = new CommandForwarder({ settings: settingsOf(config), logger, timeoutMs: config.cluster.forwardTimeoutMs, term: leaseTerm, kind });
  const what = kind === 'reads' ? 'Reads of history' : 'Requests';
  metrics.watch(kind === 'reads' ? 'pm_history_forward' : 'pm_gateway', () => forwarder.stats, {
    messages: 'Command messages sent to the sequencer',
    requests: `${what} forwarded to the sequencer`,
    unanswered: `${what} forwarded that no sequencer answered in time (answered 503 with Retry-After)`,
    refusedAnswers: 'Answers refused as not sealed by the sequencer for the command they answered (forged, stray)',
  });
  forwarder.start();
  return forwarder;
}

/**
 * ROLE=sequencer: takes the gateways' commands (`commands`) or the followers' reads of history (`reads`,
 * pm_history_reads), subscribing in the background (NATS may come later).
 */
export function serveCommands(config: Readonly<Config>, logger: Logger, metrics: Metrics, handle: (reqs: CommandRequest[]) => Promise<CommandAnswer[]>, term?: number, kind: CommandKind = 'commands'): CommandServer {
  // A command is taken within the replay window of its sending time; a gateway may wait forwardTimeoutMs for it.
  const server = new CommandServer({ settings: settingsOf(config), logger, handle, term, replayWindowMs: Math.max(REPLAY_WINDOW_MS, config.cluster.forwardTimeoutMs), kind });
  metrics.watch(kind === 'reads' ? 'pm_history_reads' : 'pm_commands', () => server.stats, {
    messages: kind === 'reads' ? 'Messages of reads of history answered' : 'Command messages from gateways answered',
    requests: kind === 'reads' ? 'Reads of history forwarded by followers with a history floor' : 'Requests forwarded by gateways',
    malformed: 'Command messages refused as malformed (unanswered)',
    refused: 'Command messages refused unanswered: not sealed by a node for this subject, outside the replay window, or replayed',
  });
  void server.start().then(
    () => logger.info({ subject: commandSubject(config.cluster.stream, term, kind) }, kind === 'reads' ? 'taking followers\' reads of history' : 'taking gateway commands'),
    (err: unknown) => logger.error({ err }, 'cannot take gateway commands'),
  );
  return server;
}

/**
 * ROLE=sequencer: ships snapshots of its store for the followers and bounds the stream by them
 * (replication/snapshot-shipper.ts); started at once, its timer waits `history.snapshots.everySeconds`.
 */
export function openShipper(
  config: Readonly<Config>,
  logger: Logger,
  metrics: Metrics,
  store: Store,
  snapshot: (dir: string, name: string, of: SnapshotKind) => Promise<SnapshotManifest>,
  checkpoint: () => Promise<unknown>,
  publisher: Publisher,
): SnapshotShipper {
  const shipper = new SnapshotShipper({ store, snapshot, checkpoint, whenConfirmed: (rseq) => publisher.whenConfirmed(rseq), settings: settingsOf(config), policy: config.history.snapshots, logger });
  metrics.watch('pm_snapshot', () => shipper.stats(), {
    rseq: 'Replication record the newest snapshot shipped stands at (0: none yet)',
    shipped: 'Snapshots shipped to the object store since start',
    failures: 'Snapshots that could not be shipped since start (logged)',
    lastMs: 'ms the last snapshot took, copy to manifest',
    lastBytes: 'Bytes of the last snapshot of the whole store',
    stateBytes: 'Bytes of the last state snapshot (what a follower with cluster.followerStart=state installs)',
    stateFailures: 'State snapshots that could not be shipped since start (logged; the whole store\'s was)',
    streamFirst: 'First record the journal stream holds after the last purge',
    forged: 'Snapshot manifests in the object store refused as not authenticated by the nodes\' key (removed by the next prune)',
  });
  shipper.start();
  return shipper;
}

/**
 * ROLE=replica, gateway, standby, before the store opens: a new or lagging store starts from a snapshot
 * (replication/snapshot-install.ts). What it refused is counted on /metrics.
 */
export async function prepareFollower(config: Readonly<Config>, logger: Logger, metrics: Metrics): Promise<void> {
  const start = await prepareFollowerStore(config.dataDir, settingsOf(config), logger, startKindFor(config.cluster.role, config.cluster.followerStart));
  metrics.watch('pm_snapshot', () => ({ forged: start.forged, unusable: start.unusable }), {
    forged: 'Snapshot manifests refused at this start as not authenticated by the nodes\' key (forged, altered, another cluster\'s)',
    unusable: 'Authentic snapshots this start could not use (a download that failed, a store that did not prove its state hash)',
  });
}
