/**
 * State snapshots (issue 42; docs/decisions/history.md, "A follower in seconds at any age"): a store that
 * holds the state of the store it was taken from, at one journal seq, and none of the history before it,
 * so that what a follower installs grows with the open orders, the wallets and the markets, never with the
 * trades ever made. Shipped and installed like the whole store's snapshot (snapshots.ts: the same directory,
 * manifest and proof), with `kind: 'state'`.
 *
 * Written from one read transaction of the store (env.ts readSnapshot), into a fresh environment, with `base`
 * the newest automatic checkpoint at or below the store's journal seq (which gives the open orders and the
 * trades still settling without reading the history). What it holds, table by table:
 *
 *   meta, balances, catalog, indexes, profiles, api-keys, replays, prices, engine-markets
 *                whole (state, or bounded: the catalog's indexes, the replay window, price samples by time)
 *   replication  the sequencer's log from the last record of its gapless prefix on (where the snapshot stands,
 *                snapshots.ts sealCopy), not the records before it: a replica or gateway keeps no log, and a
 *                standby, which does, never installs a state snapshot
 *   views        every tag but the history's (keys.ts HISTORY_VIEW_TAGS: trade rows, builder trades)
 *   orders, journal
 *                the rows and `order` events of the orders open at `base`, and every row after `base` (what
 *                the proof replays)
 *   trades, fills
 *                the rows and fill blocks of the trades settling at `base`, and every one after it
 *   order-id-runs
 *                one run of the orders it holds
 *   meta         `journal:prunedTo` = base (nothing before it may be replayed) and `history:floor` = its
 *                journal seq (keys.ts): the trades, fills and closed orders of that seq and before are not
 *                here, and a node serving it sends the reads that need them to the sequencer
 *
 * Then, as for a whole copy (snapshots.ts sealCopy), its log is cut at the gapless prefix and its checkpoint
 * proved from `base`: its state hash is the source's, or the snapshot is not made.
 */
import { SnapshotError, emptyDir, gaplessEnd, sealCopy, type SnapshotManifest } from './snapshots.ts';
import { AUTO_NAME, type CheckpointStore } from './checkpoints.ts';
import { openStore, readSnapshot, type Store } from '../env.ts';
import { HISTORY_VIEW_TAGS, metaKeys, prefixRange, type Key } from '../keys.ts';
import { idRunOf } from '../orders.ts';
import { journalEventOf } from '../codecs/order-codec.ts';
import type { OrderAcceptedEvent } from '../../domain/events.ts';

/** Tables copied whole (see the header). */
const WHOLE = ['meta', 'balances', 'catalog', 'indexes', 'profiles', 'apiKeys', 'replays', 'prices', 'engineMarkets'] as const;

/** Makes a state snapshot of `store` as committed now in `dir` (created empty), from `checkpoints`' newest automatic one. */
export async function takeStateSnapshot(store: Store, checkpoints: CheckpointStore, dir: string, name: string): Promise<SnapshotManifest> {
  emptyDir(dir);
  const snap = readSnapshot(store);
  const copy = openStore({ dataDir: dir });
  let journalSeq: number;
  let base;
  try {
    const src = snap.store;
    journalSeq = (src.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
    base = checkpoints.list().find((e) => e.name === AUTO_NAME && e.seq <= journalSeq);
    if (base === undefined) throw new SnapshotError(`no automatic checkpoint at or below journal seq ${journalSeq}: a state snapshot starts from one`);
    const { state } = checkpoints.load(base);
    const b = state.seq;
    copy.root.transactionSync(() => {
      for (const t of WHOLE) for (const { key, value } of src[t].getRange({})) (copy[t] as typeof src.meta).putSync(key as string, value);
      copyViews(src, copy);
      // The log's tail: from the end of its gapless run (its keys only are read before it).
      const from = gaplessEnd(src.replication.getKeys({}) as Iterable<number>);
      if (from !== undefined) for (const { key, value } of src.replication.getRange({ start: from })) copy.replication.putSync(key, value);
      // The open orders at the base, then every order after it: rows, `order` events, one run of their ids.
      const held: Array<{ orderId: string; seq: number }> = [];
      const order = (seq: number, row: unknown) => {
        copy.orders.putSync(seq, row);
        const ev = src.journal.get(seq);
        if (ev === undefined) throw new SnapshotError(`orders[${seq}] has no order event at its seq`);
        copy.journal.putSync(seq, ev);
        held.push({ orderId: (journalEventOf(ev, seq) as OrderAcceptedEvent).orderId, seq });
      };
      for (const [seq] of [...state.open].sort((x, y) => x[0] - y[0])) {
        const row = src.orders.get(seq);
        if (row !== undefined) order(seq, row);
      }
      for (const { key, value } of src.orders.getRange({ start: b + 1 })) order(key, value);
      for (const { key, value } of src.journal.getRange({ start: b + 1 })) copy.journal.putSync(key, value);
      if (held.length > 0) copy.orderIds.putSync(held[0]!.seq, idRunOf(held));
      // The trades settling at the base and every trade row after it; the fill blocks that hold their fills
      // (a block is keyed by its first fill's seq) and every block that may hold a fill after the base.
      const blocks = new Set<number>();
      const blockOf = (seq: number) => {
        for (const k of src.fills.getKeys({ start: seq, reverse: true, limit: 1 })) blocks.add(k);
      };
      for (const [, fill] of state.settling) {
        const row = src.trades.get(fill.seq);
        if (row !== undefined) copy.trades.putSync(fill.seq, row);
        blockOf(fill.seq);
      }
      for (const { key, value } of src.trades.getRange({ start: b + 1 })) copy.trades.putSync(key, value);
      blockOf(b);
      for (const k of src.fills.getKeys({ start: b + 1 })) blocks.add(k);
      for (const k of blocks) copy.fills.putSync(k, src.fills.getBinary(k)!);
      copy.meta.putSync(metaKeys.journalPrunedTo, b);
      copy.meta.putSync(metaKeys.historyFloor, journalSeq);
    });
  } catch (e) {
    await copy.close().catch(() => undefined);
    throw e;
  } finally {
    snap.done();
  }
  return sealCopy(copy, dir, base, name, { kind: 'state', floor: journalSeq });
}

/** Every row of `views` but those of the history's tags: a range per tag, each history tag skipped whole. */
function copyViews(src: Store, copy: Store): void {
  let start: Key | undefined;
  for (;;) {
    let tag: string | undefined;
    for (const key of src.views.getKeys(start === undefined ? { limit: 1 } : { start, limit: 1 })) tag = String(key[0]);
    if (tag === undefined) return;
    const range = prefixRange([tag]);
    if (!HISTORY_VIEW_TAGS.has(tag)) for (const { key, value } of src.views.getRange(range)) copy.views.putSync(key, value);
    start = range.end;
  }
}

/** A store's history floor (keys.ts `historyFloor`): 0 when it holds the whole history. */
export const historyFloorOf = (store: Store): number => (store.meta.get(metaKeys.historyFloor) as number | undefined) ?? 0;

/** A store whose history has a floor started in a role that must hold the whole history (node/roles.ts). */
export class HistoryFloorError extends Error {}
