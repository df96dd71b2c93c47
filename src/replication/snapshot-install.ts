/**
 * A follower's start from a snapshot (issue 42): before a replica, gateway or standby opens its store, this
 * decides whether the store can follow the stream from where it stands, or must first be replaced by the
 * newest snapshot the sequencer shipped (replication/snapshot-shipper.ts):
 *
 *   a new follower (an empty store, or a deposed sequencer's store moved aside by failover.ts)
 *                         installs the newest snapshot of the kind it starts from (`prefer`) if there is one,
 *                         then applies the stream after it;
 *                         without one it follows the stream from its first record, as before
 *   a store behind the stream (the record after its last applied one was purged)
 *                         installs the newest snapshot; without one it cannot follow, and the start fails
 *                         naming both positions
 *   otherwise             follows on from its own last applied record
 *
 * The kind (journal/checkpoints/snapshots.ts SnapshotKind, cluster.followerStart, `startKindFor`): a follower
 * that prefers `state` (by default a replica or gateway) installs the newest state snapshot, and the newest
 * whole store when there is no state snapshot it can use; its history then comes back in the background
 * (history-backfill.ts), and a standby may not become the sequencer before it has (node/failover.ts). One
 * that prefers `store` (by default a standby) installs only whole stores.
 *
 * The snapshot is downloaded into DATA_DIR's scratch (snapshots.ts scratchDir), checked
 * (journal/checkpoints/snapshots.ts installSnapshot: every file's digest, then its store proves to the
 * manifest's state hash at the manifest's rseq) and only then put in place; a download or check that fails
 * leaves the store as it was. Only snapshots whose manifest the nodes' key authenticates are considered
 * (snapshot-store.ts); the others are refused, logged and counted (`FollowerStart.forged`,
 * pm_snapshot_forged).
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../journal/env.ts';
import { metaKeys } from '../journal/keys.ts';
import { DATA_FILE, installSnapshot, kindOf, scratchDir, type SnapshotKind } from '../journal/checkpoints/snapshots.ts';
import type { Logger } from '../runtime/log.ts';
import { openNatsLink, type NatsLink, type StreamSettings } from './nats-link.ts';
import { SnapshotBucket } from './snapshot-store.ts';

export class FollowerStoreError extends Error {}

/** How long a start waits for NATS to look for a snapshot. */
const NATS_WAIT_MS = 5000;

/** Where a follower's store stands: the last record it applied and its journal seq (0, 0: a new store). */
async function position(dataDir: string): Promise<{ applied: number; journalSeq: number }> {
  if (!existsSync(join(dataDir, DATA_FILE))) return { applied: 0, journalSeq: 0 };
  const s = openStore({ dataDir });
  try {
    return { applied: (s.meta.get(metaKeys.replicaAppliedRseq) as number | undefined) ?? 0, journalSeq: (s.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0 };
  } finally {
    await s.close();
  }
}

/** What a follower's start did: followed on from its store or installed a snapshot, and what it refused. */
export interface FollowerStart {
  outcome: 'follows' | 'installed';
  /** What was installed (outcome `installed`). */
  kind?: SnapshotKind;
  /** Snapshot manifests refused as not authenticated by the nodes' key. */
  forged: number;
  /** Authentic snapshots that could not be used (a download that failed, a store that does not prove). */
  unusable: number;
}

/**
 * The kind a follower of `role` starts from. `auto`: a replica or gateway the state (serving in seconds at any
 * age); a standby the whole store, because it may not take the lease before its store holds the history, and
 * a backfill after the state (the whole store's download, then a copy of its rows) takes longer than
 * installing the whole store (156 s against 84 s at 1.5 million orders, bench/cluster/history.bench.ts).
 */
export const startKindFor = (role: string, followerStart: SnapshotKind | 'auto'): SnapshotKind =>
  followerStart !== 'auto' ? followerStart : role === 'standby' ? 'store' : 'state';

/** Makes `dataDir` a store that can follow the stream (see the header); returns what it did. */
export async function prepareFollowerStore(dataDir: string, settings: StreamSettings, logger: Logger, prefer: SnapshotKind = 'store', link?: NatsLink): Promise<FollowerStart> {
  const done = (outcome: FollowerStart['outcome'], bucket?: SnapshotBucket, unusable = 0): FollowerStart => ({ outcome, forged: bucket?.forged ?? 0, unusable });
  // A node may start before NATS does: it then serves its store as before and follows once NATS is there
  // (a new store from the stream's first record, or, were that purged, refused by the follower until a restart).
  const deadline = Date.now() + NATS_WAIT_MS;
  const own = link ?? (await openNatsLink(settings, logger, () => Date.now() > deadline, 'pm-follower-start'));
  if (own === undefined) {
    logger.warn({ natsUrl: settings.natsUrl }, 'NATS not reachable at start: following from the store as it is, without looking for a snapshot');
    return done('follows');
  }
  try {
    const { applied, journalSeq } = await position(dataDir);
    let first = 1;
    try {
      first = (await own.jsm.streams.info(settings.stream)).state.first_seq;
    } catch (err) {
      if (/not found/i.test((err as Error).message)) return done('follows');
      throw err;
    }
    const fresh = applied === 0 && journalSeq === 0;
    const behind = applied + 1 < first;
    if (!fresh && !behind) return done('follows');
    const bucket = await SnapshotBucket.open(own, settings.stream, settings.keys, (object, why) =>
      logger.warn({ object, why }, 'a snapshot manifest is not authentic: refused (counted: pm_snapshot_forged)'),
    );
    // Newest first; one that cannot be fetched or does not prove (damaged, another format) gives way to the
    // next older one the stream still continues.
    const failures: string[] = [];
    const listed = (await bucket?.list()) ?? [];
    const stores = listed.filter((m) => kindOf(m) === 'store');
    for (const m of prefer === 'state' ? [...listed.filter((s) => kindOf(s) === 'state'), ...stores] : stores) {
      if (m.rseq + 1 < first) continue;
      const t0 = performance.now();
      const incoming = scratchDir(dataDir, 'install');
      try {
        await bucket!.fetch(m, incoming);
        await installSnapshot(incoming, dataDir, m);
      } catch (err) {
        failures.push(`${m.name}: ${(err as Error).message}`);
        logger.warn({ snapshot: m.name, err: (err as Error).message }, 'snapshot not usable; trying an older one');
        continue;
      } finally {
        rmSync(incoming, { recursive: true, force: true });
      }
      logger.info(
        { snapshot: m.name, kind: kindOf(m), rseq: m.rseq, journalSeq: m.journalSeq, bytes: m.files.reduce((n, f) => n + f.bytes, 0), ms: Math.round(performance.now() - t0), was: { applied, journalSeq }, streamFirst: first },
        'store installed from a snapshot; following the stream after it',
      );
      return { ...done('installed', bucket, failures.length), kind: kindOf(m) };
    }
    if (behind) {
      throw new FollowerStoreError(
        `the store applied up to record ${applied}, the stream starts at ${first}, and no snapshot covers the gap${failures.length > 0 ? ` (${failures.join('; ')})` : ''}${(bucket?.forged ?? 0) > 0 ? ` (${bucket!.forged} forged manifest(s) refused)` : ''}: this node cannot follow`,
      );
    }
    return done('follows', bucket, failures.length);
  } finally {
    if (link === undefined) await own.close().catch(() => undefined);
  }
}
