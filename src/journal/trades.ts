/**
 * The `trades` table: where each deferred fill's trade stands, for readers (GET /data/trades,
 * /builder/trades) and for start-up (the trades still settling). One row per deferred fill, under the fill's
 * seq: `[status code, ms of its last move]`, written with the fill (MATCHED) and rewritten by each `trade`
 * event, in the same transaction (journal/writer.ts). A fill that is not deferred has no row: its trade is
 * CONFIRMED at the fill's time.
 *
 * The journal is the truth and this table a materialized view of it: start-up replays the journal and
 * refuses a store whose unsettled trades (MATCHED, RETRYING, MINED) differ from the table's
 * (journal/state-hash.ts, the `T` lines of the state hash).
 */
import type { FillEvent, TradeStatusName } from '../domain/events.ts';
import type { Store } from './env.ts';

const STATUSES: readonly TradeStatusName[] = ['MATCHED', 'MINED', 'CONFIRMED', 'RETRYING', 'FAILED'];
const CODE: Readonly<Record<TradeStatusName, number>> = { MATCHED: 0, MINED: 1, CONFIRMED: 2, RETRYING: 3, FAILED: 4 };

export interface TradeState {
  status: TradeStatusName;
  /** ms since the epoch of its last move (the fill's time while MATCHED). */
  updatedAt: number;
}

/** A trade that has not settled for good: MATCHED, RETRYING or MINED (CONFIRMED and FAILED are final). */
export const unsettled = (status: TradeStatusName): boolean => status !== 'CONFIRMED' && status !== 'FAILED';

/** The stored row of a status. */
export const tradeRow = (status: TradeStatusName, ts: number): [number, number] => [CODE[status], ts];

function stateOf(row: unknown, seq: number): TradeState {
  const r = row as [number, number];
  const status = Array.isArray(r) ? STATUSES[r[0]] : undefined;
  if (status === undefined || !Number.isSafeInteger(r[1])) throw new Error(`trades table: row of fill ${seq} is damaged: ${JSON.stringify(row)}`);
  return { status, updatedAt: r[1] };
}

/** Where the trade of fill `f` stands, as committed: CONFIRMED at its time when not deferred. */
export function tradeStateOf(store: Store, f: FillEvent): TradeState {
  if (f.deferred !== true) return { status: 'CONFIRMED', updatedAt: f.ts };
  const row = store.trades.get(f.seq);
  return row === undefined ? { status: 'MATCHED', updatedAt: f.ts } : stateOf(row, f.seq);
}

/**
 * Allocates (start-up): every trade not settled for good, by fill seq ascending. `since` (a start from a
 * checkpoint): only the rows of the trades settling at its seq and every row keyed after it, as
 * orders.ts openOrdersOf reads the order rows (a settled trade's row is never written again).
 */
export function unsettledTrades(store: Store, since?: { seq: number; settling: readonly number[] }): Array<{ fillSeq: number } & TradeState> {
  const out: Array<{ fillSeq: number } & TradeState> = [];
  const take = (key: number, value: unknown) => {
    const s = stateOf(value, key);
    if (unsettled(s.status)) out.push({ fillSeq: key, ...s });
  };
  if (since === undefined) {
    for (const { key, value } of store.trades.getRange({})) take(key, value);
    return out;
  }
  for (const seq of [...since.settling].sort((a, b) => a - b)) {
    if (seq > since.seq) continue;
    const row = store.trades.get(seq);
    if (row !== undefined) take(seq, row);
  }
  for (const { key, value } of store.trades.getRange({ start: since.seq + 1 })) take(key, value);
  return out;
}
