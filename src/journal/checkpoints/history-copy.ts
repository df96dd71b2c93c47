/**
 * The history a state snapshot leaves out, copied back in (issue 42; docs/decisions/history.md, "A simpler
 * backfill"): from a whole store of the same cluster standing at or above a follower's history floor
 * (`from`, the sequencer's whole-store snapshot) into the follower's live store (`to`), row by row, only
 * the rows `to` lacks, table by table the complement of state-snapshot.ts:
 *
 *   orders, journal  the rows and `order` events at or below `to`'s base (its `journal:prunedTo`: the
 *                    checkpoint its state snapshot started from) that it lacks: the orders closed by then;
 *                    and every other event `from` still holds at or below the base (those above its own
 *                    retention line), so that `to`'s journal is the whole store's
 *   trades, fills    the trade rows and fill blocks at or below the base that it lacks
 *   views            the rows of the history's tags (keys.ts HISTORY_VIEW_TAGS) that it lacks
 *   order-id-runs    one run of the orders copied, under the first one's seq (no run has that key: runs are
 *                    keyed by an order's seq, and those orders were not here), and the in-memory index
 *   meta             `history:floor` removed, and `journal:prunedTo` lowered to `from`'s (if the follower's
 *                    retention has not moved it since the copy began), in the last transaction: `to`'s retention then archives that range as the whole store's would have
 *                    (engine/checkpointer.ts retain gives way to a line lowered under it), so a standby
 *                    that becomes the sequencer leaves no gap in the archive
 *
 * Only rows it lacks, because a row of history never changes and one `to` holds is as new or newer: an order
 * closed at the base, a trade confirmed by it and a fill block are final, a trade row is keyed by the seq
 * that wrote it (the projections only append), and any row rewritten since (an order or trade still open or
 * settling at the base) came to `to` whole with the stream. So the copy is idempotent: a crash before the
 * floor is removed leaves it to be run again, and a node whose floor is gone holds the whole history.
 *
 * Written in transactions of CHUNK rows, each its own event-loop turn, so the follower's own applies and
 * reads go on between them.
 */
import { journalEventOf } from '../codecs/order-codec.ts';
import type { Store } from '../env.ts';
import { HISTORY_VIEW_TAGS, metaKeys, prefixRange, type Key } from '../keys.ts';
import { idRunOf, orderIndexOf } from '../orders.ts';
import type { OrderAcceptedEvent } from '../../domain/events.ts';

/** Rows written per transaction. */
const CHUNK = 2000;

export interface HistoryCopy {
  /** Rows written, all tables. */
  rows: number;
  orders: number;
  /** The floor removed (false: stopped before the end; another store's history throws). */
  complete: boolean;
}

export class HistoryCopyError extends Error {}

type Put = () => void;

/**
 * Copies into `to` the history it lacks from `from` (see the header), then removes its floor. `stopped` is
 * asked between transactions: true leaves the floor in place, to be copied again later.
 */
export async function copyHistory(from: Store, to: Store, stopped: () => boolean = () => false): Promise<HistoryCopy> {
  const floor = (to.meta.get(metaKeys.historyFloor) as number | undefined) ?? 0;
  const out: HistoryCopy = { rows: 0, orders: 0, complete: false };
  if (floor === 0) return { ...out, complete: true };
  const base = (to.meta.get(metaKeys.journalPrunedTo) as number | undefined) ?? 0;
  const idOf = (s: Store) => (s.meta.get(metaKeys.tradeIdPrefix) as string | undefined) ?? '';
  if (idOf(from) !== idOf(to)) throw new HistoryCopyError(`the history comes from another store (${idOf(from).slice(0, 12)}…, this one ${idOf(to).slice(0, 12)}…)`);
  const fromPrunedTo = Math.min(base, (from.meta.get(metaKeys.journalPrunedTo) as number | undefined) ?? 0);
  const at = (from.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
  if (at < floor) throw new HistoryCopyError(`the history's store stands at journal seq ${at}, below this store's floor (${floor})`);

  let puts: Put[] = [];
  let ids: Array<{ orderId: string; seq: number }> = [];
  const flush = async (last: boolean) => {
    const batch = puts;
    const run = ids;
    puts = [];
    ids = [];
    const runBuf = run.length > 0 ? idRunOf(run) : undefined;
    to.root.transactionSync(() => {
      for (const put of batch) put();
      if (runBuf !== undefined) to.orderIds.putSync(run[0]!.seq, runBuf);
      if (last) {
        to.meta.removeSync(metaKeys.historyFloor);
        // Only under the line the copy started from: if the follower's retention moved it meanwhile (archived
        // and removed what lay above the base), lowering it would send that range to the archive twice,
        // the second time without its events. The events copied below it then stay in the journal unarchived
        // here (the sequencer archives them).
        if (((to.meta.get(metaKeys.journalPrunedTo) as number | undefined) ?? 0) === base) to.meta.putSync(metaKeys.journalPrunedTo, fromPrunedTo);
      }
    });
    if (runBuf !== undefined) orderIndexOf(to).addRun(runBuf);
    out.rows += batch.length;
    out.orders += run.length;
    // The next chunk in a later turn: the node's applies and reads run between.
    await new Promise((resolve) => setImmediate(resolve));
  };
  const add = async (put: Put) => {
    puts.push(put);
    if (puts.length >= CHUNK) {
      await flush(false);
      if (stopped()) return false;
    }
    return true;
  };

  // What `to` holds at or below the base: the state's rows (open then) and what an earlier copy wrote. Held
  // in memory (state-sized, unless a copy was cut short), so the scan asks LMDB nothing per row: nothing else
  // adds a key there while this runs (the stream's applies add keys above the base, and rewrite rows already
  // here).
  const held = (db: Store['orders'] | Store['fills']) => new Set<number>(db.getKeys({ end: base + 1 }));
  const [hasOrder, hasEvent, hasTrade, hasFill] = [held(to.orders), held(to.journal), held(to.trades), held(to.fills)];
  for (const { key, value } of from.orders.getRange({ end: base + 1 })) {
    if (hasOrder.has(key)) continue;
    hasEvent.add(key);
    const ev = from.journal.get(key);
    if (ev === undefined) throw new HistoryCopyError(`orders[${key}] of the history has no order event at its seq`);
    ids.push({ orderId: (journalEventOf(ev, key) as OrderAcceptedEvent).orderId, seq: key });
    if (!(await add(() => (to.orders.putSync(key, value), to.journal.putSync(key, ev))))) return out;
  }
  // Below `from`'s own line its journal holds only order events, copied above with their orders.
  for (const { key, value } of from.journal.getRange({ start: fromPrunedTo + 1, end: base + 1 })) {
    if (!hasEvent.has(key) && !(await add(() => to.journal.putSync(key, value)))) return out;
  }
  for (const { key, value } of from.trades.getRange({ end: base + 1 })) {
    if (!hasTrade.has(key) && !(await add(() => to.trades.putSync(key, value)))) return out;
  }
  for (const key of from.fills.getKeys({ end: base + 1 })) {
    if (hasFill.has(key)) continue;
    const block = from.fills.getBinary(key)!;
    if (!(await add(() => to.fills.putSync(key, block)))) return out;
  }
  for (const tag of HISTORY_VIEW_TAGS) {
    for (const { key, value } of from.views.getRange(prefixRange([tag]))) {
      if (to.views.get(key as Key) === undefined && !(await add(() => to.views.putSync(key as Key, value)))) return out;
    }
  }
  if (stopped()) return out;
  await flush(true);
  out.complete = true;
  return out;
}
