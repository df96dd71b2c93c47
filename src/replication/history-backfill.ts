/**
 * A follower started from a state snapshot takes its history back (issue 42; docs/decisions/history.md, "A
 * simpler backfill"): in the background, once it has applied the stream past the newest whole-store snapshot
 * at or above its history floor, it downloads that snapshot into DATA_DIR's scratch, checks its files against
 * the authenticated manifest (snapshots.ts checkFiles: each one's size and digest), and copies in the history
 * it lacks (journal/checkpoints/history-copy.ts), which removes the floor last. From then on it answers the
 * reads of history from its own store (`held`), and sends none to the sequencer.
 *
 * No whole store at or above the floor yet (the first shipment after the state snapshot has not come, or
 * NATS is away), a download or check that fails: logged and counted, tried again every `retryMs`. A stop
 * between transactions leaves the floor, and the next start copies again (the copy is idempotent).
 * `cluster.backfill: false` turns it off on a replica or gateway: the node keeps its floor and sends its
 * history reads on. A standby always runs it: it may not take the sequencer's lease before it is done.
 */
import { rmSync } from 'node:fs';
import { copyHistory } from '../journal/checkpoints/history-copy.ts';
import { checkFiles, kindOf, scratchDir, type SnapshotManifest } from '../journal/checkpoints/snapshots.ts';
import { historyFloorOf } from '../journal/checkpoints/state-snapshot.ts';
import { openStore, type Store } from '../journal/env.ts';
import type { Logger } from '../runtime/log.ts';
import { openNatsLink, type NatsLink, type StreamSettings } from './nats-link.ts';
import { SnapshotBucket } from './snapshot-store.ts';

export interface BackfillStats {
  /** 1 once the store holds the whole history (its floor removed). */
  done: number;
  /** Rows copied in, all tables. */
  rows: number;
  /** Attempts that found no usable whole store, or failed (logged). */
  retries: number;
  /** ms from the first attempt to the floor's removal (0 until then). */
  ms: number;
}

export interface BackfillOptions {
  store: Store;
  settings: StreamSettings;
  logger: Logger;
  /** The journal seq this follower has applied: the copy waits until it reaches the snapshot's. */
  appliedSeq: () => number;
  retryMs?: number;
}

export class HistoryBackfill {
  private readonly counters: BackfillStats = { done: 0, rows: 0, retries: 0, ms: 0 };
  private closed = false;
  private link: NatsLink | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private heldNow: boolean;
  private readonly t0 = performance.now();

  constructor(private readonly o: BackfillOptions) {
    this.heldNow = historyFloorOf(o.store) === 0;
  }

  /** Whether this store holds the whole history (no floor, or the backfill done). */
  held(): boolean {
    return this.heldNow;
  }

  stats(): BackfillStats {
    return { ...this.counters };
  }

  start(): void {
    if (this.heldNow || this.closed) return;
    this.running = this.attempt().then((done) => {
      this.running = undefined;
      if (!done && !this.closed) {
        this.counters.retries++;
        this.timer = setTimeout(() => this.start(), this.o.retryMs ?? 30_000);
        this.timer.unref();
      }
    });
  }

  /** One try: true once the history is in. */
  private async attempt(): Promise<boolean> {
    const { store, logger } = this.o;
    const floor = historyFloorOf(store);
    let incoming: string | undefined;
    try {
      this.link ??= await openNatsLink(this.o.settings, logger, () => this.closed, 'pm-backfill');
      if (this.link === undefined) return false;
      const bucket = await SnapshotBucket.open(this.link, this.o.settings.stream, this.o.settings.keys);
      const m = (await bucket?.list())?.find((s: SnapshotManifest) => kindOf(s) === 'store' && s.journalSeq >= floor);
      if (m === undefined) {
        logger.info({ floor }, 'no whole-store snapshot at or above the history floor yet: the backfill waits for the next shipment');
        return false;
      }
      // Past the snapshot's seq first: every row it holds above the floor is then one this store holds too.
      while (this.o.appliedSeq() < m.journalSeq) {
        if (this.closed) return false;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      incoming = scratchDir(store.dataDir, 'backfill');
      await bucket!.fetch(m, incoming, () => this.closed);
      await checkFiles(incoming, m);
      const from = openStore({ dataDir: incoming });
      try {
        const copied = await copyHistory(from, store, () => this.closed);
        this.counters.rows += copied.rows;
        if (!copied.complete) return false;
        this.heldNow = true;
        this.counters.done = 1;
        this.counters.ms = Math.round(performance.now() - this.t0);
        logger.info({ snapshot: m.name, rows: copied.rows, orders: copied.orders, ms: this.counters.ms }, 'history backfilled: reads of history are answered here from now on');
        return true;
      } finally {
        await from.close();
      }
    } catch (err) {
      if (!this.closed) logger.warn({ err: (err as Error).message, floor }, 'history backfill failed; trying again later');
      return false;
    } finally {
      if (incoming !== undefined) rmSync(incoming, { recursive: true, force: true });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
    await this.link?.close().catch(() => undefined);
  }
}
