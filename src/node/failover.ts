/**
 * A node under the sequencer's lease (cluster.failover; docs/decisions/scale-out.md, "A standby sequencer"): which app
 * it runs, and when that changes. main.ts runs every role through here when failover is on; ROLE=single and
 * a cluster without failover never load it.
 *
 *   sequencer  takes the lease if it is free (term: one past the highest the stream holds) and runs the
 *              sequencer under it (app.ts `term`): its records carry the term, a batch is acknowledged once
 *              the stream confirmed it, the lease is renewed (replication/lease.ts). If another node holds
 *              the lease, or its store lacks history (a floor), it starts as a standby instead. Losing the
 *              lease fences it at once (app.fence: writes 503, nothing more published, no gateway
 *              command), then it stops and follows as a standby.
 *   standby    follows the stream into its own store, keeping the replication log (follower keepLog),
 *              serves reads, and reads the lease every pollMs. When it finds the lease vacant, and its
 *              store holds the whole history (one started from a state snapshot once its backfill is done:
 *              replication/history-backfill.ts), it takes it with `create` (one node wins), holds it,
 *              waits until it has applied the whole stream and the stream has stopped moving, then stops
 *              the standby and starts the sequencer on the same store.
 *              The sequencer's first record, its term's, is published with the stream's expected last
 *              sequence at what the standby applied: it lands only if nothing came in between, and from then
 *              on a deposed sequencer's late publish fails at the server.
 *   replica,   the app as it is, with the lease read every pollMs so a replica's 421 names the holder's URL.
 *   gateway
 *
 * A store that becomes a standby's after it was a sequencer's (a deposed or restarted sequencer) may hold
 * records the stream never confirmed. If its log is a prefix of the stream it follows on from its end.
 * Otherwise its tail was never acknowledged when it ran under the lease (acknowledgements waited for the
 * stream), so the store is moved aside whole (`<dataDir>.deposed-<time>`, kept for the operator) and the node
 * follows the stream from an empty one; a store that acknowledged without waiting (a sequencer that ran
 * without failover) is not moved: the node refuses to start and names the records the stream lacks.
 */
import { renameSync } from 'node:fs';
import { hostname } from 'node:os';
import { startApp, type App, type AppOptions } from './app.ts';
import { historyFloorOf } from '../journal/checkpoints/state-snapshot.ts';
import { openStore } from '../journal/env.ts';
import { metaKeys } from '../journal/keys.ts';
import { readReplicatedBatch } from '../journal/replication-log.ts';
import { LeaseHolder, LeaseStore, LeaseWatcher, type LeaseValue } from '../replication/lease.ts';
import { openNatsLink, streamLastRseq, streamRecord, subjectOf, type NatsLink } from '../replication/nats-link.ts';
import type { ClusterKeys } from '../replication/seal.ts';
import { decodeBatch } from '../replication/wire.ts';
import { checkNatsTls, settingsOf } from './cluster.ts';
import type { Config } from '../runtime/config.ts';
import type { Logger } from '../runtime/log.ts';

export class FailoverError extends Error {}

export interface FailoverNode {
  /** The app running now; replaced when the node changes role. */
  readonly app: App;
  /** The role it runs now. */
  readonly role: Config['cluster']['role'];
  /** The lease's term while this node holds it, else 0. */
  readonly term: number;
  /** Resolves the next time the node has changed role (tests, logs). */
  changed(): Promise<void>;
  stop(graceMs?: number): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The highest term the stream's last record carries (0: none, or an empty stream); its authenticator checked. */
async function streamTerm(link: NatsLink, stream: string, keys: ClusterKeys): Promise<number> {
  const last = await streamLastRseq(link.jsm, stream);
  const bytes = await streamRecord(link.jsm, stream, last);
  return bytes === undefined ? 0 : (decodeBatch(bytes, keys, subjectOf(stream)).T ?? 0);
}

/** Whether `dataDir`'s store holds the whole history (no floor: journal/checkpoints/state-snapshot.ts). */
async function holdsHistory(dataDir: string): Promise<boolean> {
  const store = openStore({ dataDir });
  try {
    return historyFloorOf(store) === 0;
  } finally {
    await store.close();
  }
}

/**
 * Makes `dataDir` a store a standby can follow on from (see the header); returns what it did. Opens and
 * closes the store itself, before any app opens it.
 */
export async function prepareStandbyStore(dataDir: string, link: NatsLink, stream: string, keys: ClusterKeys, log: Logger): Promise<'follows' | 'moved aside'> {
  const store = openStore({ dataDir });
  let tail: { from: number; to: number; acksWaited: boolean } | undefined;
  try {
    let last = 0;
    for (const key of store.replication.getKeys({ reverse: true, limit: 1 })) last = key as number;
    const applied = (store.meta.get(metaKeys.replicaAppliedRseq) as number | undefined) ?? 0;
    if (last <= applied) return 'follows';
    // A sequencer's records beyond what it applied as a standby: are they the stream's?
    const streamLast = await streamLastRseq(link.jsm, stream);
    let common = Math.min(last, streamLast);
    // The stream's records up to `common` are ours if the one at `common` is (a record names its term and rseq).
    while (common > applied) {
      const theirs = await streamRecord(link.jsm, stream, common);
      const ours = readReplicatedBatch(store, common);
      if (theirs !== undefined && ours !== undefined && decodeBatch(theirs, keys, subjectOf(stream)).T === ours.T) break;
      common--;
    }
    if (common === last) {
      await store.meta.put(metaKeys.replicaAppliedRseq, last);
      return 'follows';
    }
    tail = { from: common + 1, to: last, acksWaited: store.meta.get(metaKeys.acksAfterStream) === true };
  } finally {
    await store.close();
  }
  if (!tail.acksWaited) {
    throw new FailoverError(
      `refusing to start as a standby: records ${tail.from}..${tail.to} of ${dataDir} are not in the stream, and this store acknowledged ` +
        'without waiting for the stream (it ran without cluster.failover): they may have been acknowledged. Move the store aside to follow the stream.',
    );
  }
  const aside = `${dataDir}.deposed-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  renameSync(dataDir, aside);
  log.warn({ from: tail.from, to: tail.to, movedTo: aside }, 'records the stream never confirmed (never acknowledged): store moved aside; following the stream from the start');
  return 'moved aside';
}

export async function startFailoverNode(config: Readonly<Config>, opts: AppOptions & { log: Logger }): Promise<FailoverNode> {
  const log = opts.log;
  const c = config.cluster;
  const times = { ttlMs: c.failover.leaseMs, renewMs: c.failover.renewMs, pollMs: c.failover.pollMs };
  if (times.renewMs * 2 >= times.ttlMs) throw new FailoverError(`cluster.failover: renewMs (${times.renewMs}) must be under half of leaseMs (${times.ttlMs})`);
  let closed = false;
  const settings = settingsOf(config);
  const keys = settings.keys;
  await checkNatsTls(config);
  const link = await openNatsLink(settings, log, () => closed, 'pm-lease');
  if (link === undefined) throw new FailoverError('closed before NATS was reached');
  const leases = await LeaseStore.open(link, c.stream, c.replicas, times.ttlMs, keys, log, c.role === 'sequencer' || c.role === 'standby');
  const node = c.failover.nodeUrl || `${hostname()}:${process.pid}`;
  const watcher = new LeaseWatcher(leases, times.pollMs);
  watcher.start();
  const url = () => watcher.holder?.url;
  const leaseForged = () => leases.forged;
  const withRole = (role: Config['cluster']['role']): Readonly<Config> => ({ ...config, cluster: { ...c, role } });

  let app: App;
  let role = c.role;
  let term = 0;
  let holder: LeaseHolder | undefined;
  let waiters: Array<() => void> = [];
  let transition: Promise<void> = Promise.resolve();
  const changedNow = () => {
    const w = waiters;
    waiters = [];
    for (const r of w) r();
  };

  /** Runs the sequencer under `held` (started, renewing), the lease's term its own. */
  const runSequencer = async (held: LeaseHolder) => {
    term = held.value.term;
    role = 'sequencer';
    holder = held;
    let lostEarly: string | undefined;
    held.onLost = (why) => (lostEarly = why);
    app = await startApp(withRole('sequencer'), { ...opts, term, leaseHolderUrl: url, leaseForged });
    held.onLost = (why) => deposed(why);
    if (lostEarly !== undefined || held.lostBecause !== undefined) return deposed(lostEarly ?? held.lostBecause!);
    log.info({ term, node }, 'holding the sequencer lease: taking orders');
  };

  const runStandby = async () => {
    term = 0;
    role = 'standby';
    await prepareStandbyStore(config.dataDir, link, c.stream, keys, log);
    app = await startApp(withRole('standby'), { ...opts, leaseHolderUrl: url, leaseForged });
    log.info({ holder: watcher.holder }, 'following the stream as a standby');
    void watchForVacancy(app);
  };

  // The lease lost: fenced at once, then stopped and started again as a standby (one transition at a time).
  const deposed = (why: string) => {
    const was = app;
    was.fence(why);
    holder?.stop();
    holder = undefined;
    transition = transition.then(async () => {
      if (closed || app !== was) return;
      await was.stop();
      if (closed) return;
      await runStandby();
      changedNow();
    });
  };

  // A standby's watch: take the lease once it is vacant and the stream is applied, then become the sequencer.
  // Not while its store lacks the history (started from the state, its backfill not done): the sequencer's
  // answers and its snapshots must hold all of it.
  const watchForVacancy = async (standby: App) => {
    const follower = standby.replication.follower!;
    const backfill = standby.replication.backfill;
    let told = false;
    while (!closed && app === standby) {
      await sleep(times.pollMs);
      if (closed || app !== standby || watcher.vacant !== true || follower.refusal !== undefined) continue;
      if (backfill !== undefined && !backfill.held()) {
        if (!told) log.warn({ backfill: backfill.stats() }, 'the sequencer lease is vacant, and this standby may not take it before its history is backfilled');
        told = true;
        continue;
      }
      let next: number;
      try {
        next = Math.max(watcher.highestTerm, follower.appliedTerm, await streamTerm(link, c.stream, keys)) + 1;
      } catch {
        continue;
      }
      const value: LeaseValue = { node, url: c.failover.nodeUrl, term: next };
      const revision = await leases.create(value).catch(() => undefined);
      if (revision === undefined) continue;
      // Held from now on (renewed while the stream settles and the sequencer starts).
      let lost: string | undefined;
      holder = new LeaseHolder(leases, value, revision, times, (why) => (lost = why), log);
      holder.start();
      log.info({ term: next }, 'took the sequencer lease: applying the rest of the stream');
      // The deposed holder stopped writing before its lease ran out; what it had in flight lands within a
      // renewal: wait until the whole stream is applied and stays so for one renewal.
      let stable = 0;
      while (lost === undefined && !closed && stable < 2) {
        await sleep(times.renewMs / 2);
        const last = await streamLastRseq(link.jsm, c.stream).catch(() => Number.POSITIVE_INFINITY);
        stable = follower.appliedRseq >= last ? stable + 1 : 0;
      }
      if (lost !== undefined || closed) {
        holder.stop();
        holder = undefined;
        continue;
      }
      const held = holder;
      transition = transition.then(async () => {
        if (closed) return;
        await standby.stop();
        if (held.lostBecause !== undefined) {
          log.warn({ term: next, why: held.lostBecause }, 'the lease was lost while this standby took over: following again');
          holder = undefined;
          await runStandby();
        } else await runSequencer(held);
        changedNow();
      });
      return;
    }
  };

  // A start that fails (a store refused, NATS gone) leaves nothing running: no renewal, no watch, no link.
  try {
    if (c.role === 'sequencer' && !(await holdsHistory(config.dataDir))) {
      log.warn('this store lacks the history below its floor (installed from a state snapshot, its backfill not done): starting as a standby, which backfills it');
      await runStandby();
    } else if (c.role === 'sequencer') {
      const next = Math.max(await streamTerm(link, c.stream, keys), 0) + 1;
      const value: LeaseValue = { node, url: c.failover.nodeUrl, term: next };
      const revision = await leases.take(value, times.renewMs);
      if (revision !== undefined) {
        const held = new LeaseHolder(leases, value, revision, times, () => undefined, log);
        held.start();
        await runSequencer(held);
      } else {
        log.warn({ holder: (await leases.read())?.value }, 'another node holds the sequencer lease: starting as a standby');
        await runStandby();
      }
    } else if (c.role === 'standby') await runStandby();
    else app = await startApp(config, { ...opts, leaseHolderUrl: url, leaseTerm: () => watcher.holder?.term, leaseForged });
  } catch (err) {
    closed = true;
    holder?.stop();
    watcher.stop();
    await link.close().catch(() => undefined);
    throw err;
  }

  return {
    get app() {
      return app;
    },
    get role() {
      return role;
    },
    get term() {
      return term;
    },
    changed: () => new Promise((r) => waiters.push(r)),
    async stop(graceMs?: number) {
      closed = true;
      await transition.catch(() => undefined);
      holder?.stop();
      watcher.stop();
      await app.stop(graceMs);
      await link.close().catch(() => undefined);
    },
  };
}
