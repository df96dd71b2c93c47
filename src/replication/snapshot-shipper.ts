/**
 * The sequencer's snapshots for its followers, and the bound they put on the stream (issue 42;
 * docs/decisions/history.md, "Followers from a snapshot, a bounded stream (issue 42)"). Every `everySeconds`, while the journal moves:
 *
 *   1. the checkpoint thread makes two snapshots of the store as committed, in DATA_DIR's scratch
 *      (snapshots.ts scratchDir): its state alone (state-snapshot.ts; what a replica or gateway installs by
 *      default, in the same time at any age), then the whole store (journal/checkpoints/snapshots.ts; what a
 *      standby and a follower with `cluster.followerStart: store` install, and where a follower started from
 *      the state copies its history from: replication/history-backfill.ts);
 *   2. the shipper waits until the stream has confirmed every record the copy holds (a snapshot must never
 *      hold what a takeover could lose: under cluster.failover a batch commits locally before the stream
 *      confirms it);
 *   3. uploads each to the object store (replication/snapshot-store.ts), manifest last;
 *   4. keeps the newest `keep` snapshots of each kind, and purges the stream below the oldest one kept: records a follower
 *      can never need, since one that is behind them starts from a snapshot (prepareFollowerStore). The
 *      manifests are authenticated (snapshot-store.ts): one no node wrote never counts as kept, so it can never
 *      move the purge point;
 *   5. removes the replication log's records up to the same point (the publisher re-reads only records the
 *      stream has not confirmed).
 * Only the sequencer purges; a shipment that fails is logged and counted, and the next tick tries again.
 * Trading never waits for any of it.
 */
import { rmSync } from 'node:fs';
import type { Store } from '../journal/env.ts';
import { metaKeys } from '../journal/keys.ts';
import { pruneReplicationLog } from '../journal/replication-log.ts';
import { scratchDir, type SnapshotKind, type SnapshotManifest } from '../journal/checkpoints/snapshots.ts';
import type { Logger } from '../runtime/log.ts';
import { openNatsLink, type NatsLink, type StreamSettings } from './nats-link.ts';
import { SnapshotBucket, snapshotNameOf } from './snapshot-store.ts';

export interface SnapshotPolicy {
  everySeconds: number;
  keep: number;
}

export interface ShipperStats {
  /** rseq of the newest snapshot shipped (0: none yet). */
  rseq: number;
  shipped: number;
  failures: number;
  /** ms the last shipment took, copy to manifest. */
  lastMs: number;
  /** Bytes of the last snapshot's files. */
  lastBytes: number;
  /** Bytes of the last state snapshot's files (0: none shipped yet). */
  stateBytes: number;
  /** State snapshots that could not be made or shipped (logged; the whole store's was shipped without one). */
  stateFailures: number;
  /** The stream's first rseq after the last purge (records before it were purged). */
  streamFirst: number;
  /** Manifests in the bucket refused as not authenticated by the nodes' key (deleted by the next prune). */
  forged: number;
}

export interface ShipperOptions {
  store: Store;
  /** Makes a snapshot of either kind on the checkpoint thread (engine/checkpointer.ts). */
  snapshot: (dir: string, name: string, of: SnapshotKind) => Promise<SnapshotManifest>;
  /**
   * Writes an automatic checkpoint now (engine/checkpointer.ts), before each state snapshot: its base, after
   * which it copies every row, history included; so it copies what followed the checkpoint, not up to the
   * policy's `everyEvents` of history.
   */
  checkpoint?: () => Promise<unknown>;
  /** Resolves once the stream confirmed record `rseq` (the publisher's). */
  whenConfirmed: (rseq: number) => Promise<void>;
  settings: StreamSettings;
  policy: SnapshotPolicy;
  logger: Logger;
  /** The connection to use instead of opening one (tests). */
  link?: NatsLink;
}

export class SnapshotShipper {
  private link: NatsLink | undefined;
  private bucket: SnapshotBucket | undefined;
  private timer: NodeJS.Timeout | undefined;
  private busy: Promise<void> | undefined;
  private closed = false;
  private lastAt = 0;
  private lastSeq = -1;
  private readonly counters: ShipperStats = { rseq: 0, shipped: 0, failures: 0, lastMs: 0, lastBytes: 0, stateBytes: 0, stateFailures: 0, streamFirst: 0, forged: 0 };

  constructor(private readonly o: ShipperOptions) {
    this.link = o.link;
  }

  stats(): ShipperStats {
    return { ...this.counters, forged: this.bucket?.forged ?? 0 };
  }

  start(): void {
    this.lastAt = Date.now();
    this.timer = setInterval(() => {
      const seq = (this.o.store.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
      if (this.busy !== undefined || this.closed || seq === this.lastSeq || Date.now() - this.lastAt < this.o.policy.everySeconds * 1000) return;
      void this.ship().catch(() => undefined);
    }, 1000);
    this.timer.unref();
  }

  /** Makes, uploads and keeps one snapshot of each kind now, then bounds the stream and the log. Resolves with the whole store's manifest. */
  ship(): Promise<SnapshotManifest> {
    const run = this.shipNow();
    this.busy = run.then(
      () => undefined,
      () => undefined,
    );
    void this.busy.then(() => (this.busy = undefined));
    return run;
  }

  private async shipNow(): Promise<SnapshotManifest> {
    const t0 = performance.now();
    this.lastAt = Date.now();
    this.lastSeq = (this.o.store.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
    try {
      // The state first, then the whole store: the whole store then stands at or above the state's floor, so a
      // follower started from this state can copy its history from it (history-backfill.ts) at once. Without a
      // state snapshot this time (no checkpoint yet, a failed upload), state followers install an older one,
      // which the purge below keeps the stream for, or the whole store.
      const state = await this.shipState().catch((err: unknown) => {
        this.counters.stateFailures++;
        this.o.logger.warn({ err }, 'state snapshot not shipped (the whole store\'s is)');
        return undefined;
      });
      const m = await this.shipOne('store');
      const bucket = await this.bucketOf();
      const kept = await bucket.prune(this.o.policy.keep);
      const oldest = kept[kept.length - 1]!;
      const link = this.link!;
      await link.jsm.streams.purge(this.o.settings.stream, { seq: oldest.rseq + 1 });
      this.counters.streamFirst = oldest.rseq + 1;
      const removed = await pruneReplicationLog(this.o.store, oldest.rseq);
      this.counters.rseq = m.rseq;
      this.counters.shipped++;
      this.counters.lastMs = performance.now() - t0;
      this.counters.lastBytes = bytesOf(m);
      if (state !== undefined) this.counters.stateBytes = bytesOf(state);
      this.o.logger.info(
        { snapshot: m.name, rseq: m.rseq, journalSeq: m.journalSeq, bytes: this.counters.lastBytes, state: state?.name, stateBytes: state === undefined ? undefined : bytesOf(state), ms: Math.round(this.counters.lastMs), streamFirst: oldest.rseq + 1, logRemoved: removed },
        'snapshot shipped; stream purged below the oldest kept',
      );
      return m;
    } catch (err) {
      this.counters.failures++;
      this.o.logger.error({ err }, 'snapshot not shipped');
      throw err;
    }
  }

  /** A checkpoint now (its base; without one it starts from the newest there is), then the state snapshot. */
  private async shipState(): Promise<SnapshotManifest> {
    await this.o.checkpoint?.().catch((err: unknown) => this.o.logger.warn({ err }, 'no checkpoint before the state snapshot: it starts from the newest one there is'));
    return this.shipOne('state');
  }

  /** Makes one snapshot of kind `of` in DATA_DIR's scratch and uploads it once the stream holds all it holds. */
  private async shipOne(of: SnapshotKind): Promise<SnapshotManifest> {
    const dir = scratchDir(this.o.store.dataDir, 'ship');
    rmSync(dir, { recursive: true });
    try {
      const m = await this.o.snapshot(dir, snapshotNameOf(0, Date.now(), of), of);
      m.name = snapshotNameOf(m.rseq, m.createdAt, of);
      await this.o.whenConfirmed(m.lastRseq);
      if (this.closed) throw new Error('closed before the snapshot could be shipped');
      await (await this.bucketOf()).publish(dir, m);
      return m;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  private async bucketOf(): Promise<SnapshotBucket> {
    this.link ??= await openNatsLink(this.o.settings, this.o.logger, () => this.closed, 'pm-snapshots');
    if (this.link === undefined) throw new Error('closed before NATS was reached');
    this.bucket ??= await SnapshotBucket.create(this.link, this.o.settings.stream, this.o.settings.replicas, this.o.settings.keys, (object, why) =>
      this.o.logger.warn({ object, why }, 'a snapshot manifest in the object store is not authentic: refused, and removed by the next prune (counted: pm_snapshot_forged)'),
    );
    return this.bucket;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.busy;
    if (this.o.link === undefined) await this.link?.close().catch(() => undefined);
  }
}

const bytesOf = (m: SnapshotManifest) => m.files.reduce((n, f) => n + f.bytes, 0);
