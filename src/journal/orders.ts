/**
 * Orders in storage. An order is two things that change at different rates:
 *   - what was submitted and derived at acceptance (wallet, token, side, amounts, signature, price, size,
 *     fee rates, ...): immutable, and already in the journal as the order's `order` event at its seq (a
 *     binary record of codecs/order-codec.ts, or a msgpack object: read through journalEventOf);
 *   - its state: status, size matched, trade ids, last update, and the answer it was given when placed.
 *
 * So the `orders` table keeps only the state, keyed by the order's seq (the seq of its `order` event), and
 * an in-memory index (order-index.ts) maps the public order id to that seq. A read by id joins the event
 * and the state by seq (readOrder).
 *
 * Why: every fill rewrites its maker order's row and every placement writes its taker's; with the
 * submission copied into the row that was ~1.2 KB of msgpack per write (the journal bench's main thread
 * spent ~1 µs per fill on it), against ~30 bytes for the state alone, and the copy duplicated the
 * journal's event byte for byte. Keyed by seq, a new order is appended and an update lands where orders of
 * the same moment live; nothing stored takes a random insert per order.
 *
 * State row (msgpack array):
 *   [status, sizeMatched, updatedAt, fills, answer]
 *   status      0 LIVE, 1 MATCHED, 2 CANCELED, 3 CANCELED_MARKET_RESOLVED
 *   fills       journal seqs of the order's fills, oldest first (trade id = tradeIdOf(prefix, seq))
 *   answer      0 until the placement is answered, then [status 0 live | 1 matched, makingAmount,
 *               takingAmount, n]: the answer's trade ids are the order's first n fills (a taker fills
 *               during its placement before it can rest and be anyone's maker)
 */
import type { OrderAcceptedEvent, OrderRecord, OrderSignedParts, OrderStatusName } from '../domain/events.ts';
import type { Store } from './env.ts';
import { tradeIdOf } from './codecs/trade-ids.ts';
import { metaKeys } from './keys.ts';
import { encodeOrderEvent, journalEventOf } from './codecs/order-codec.ts';
import { OrderIndex, hashOrderId } from './order-index.ts';

const STATUS: readonly OrderStatusName[] = ['LIVE', 'MATCHED', 'CANCELED', 'CANCELED_MARKET_RESOLVED'];
const STATUS_CODE: Readonly<Record<OrderStatusName, number>> = { LIVE: 0, MATCHED: 1, CANCELED: 2, CANCELED_MARKET_RESOLVED: 3 };

type Answer = [status: 0 | 1, making: number, taking: number, fills: number];
export type OrderStateRow = [status: number, sizeMatched: number, updatedAt: number, fills: number[], answer: Answer | 0];

export function stateRowOf(rec: OrderRecord): OrderStateRow {
  const r = rec.response as OrderRecord['response'] | undefined;
  const answer: Answer | 0 = r === undefined ? 0 : [r.status === 'live' ? 0 : 1, r.makingAmount, r.takingAmount, r.tradeIds.length];
  return [STATUS_CODE[rec.status], rec.sizeMatched, rec.updatedAt, rec.fillSeqs, answer];
}

/** The order as the engine holds it, from its `order` event and its state row. */
export function orderRecordOf(ev: OrderAcceptedEvent, row: OrderStateRow, tradeIdPrefix: string): OrderRecord {
  const [status, sizeMatched, updatedAt, fills, answer] = row;
  const tradeIds = fills.map((seq) => tradeIdOf(tradeIdPrefix, seq));
  // Field by field, in the order Engine.placeOrder builds a record: object rest/spread copied each event
  // through V8's slow generic path (a second per ~70k open orders at start-up), and the same property
  // order gives restored and new records one hidden class, so the engine's property loads stay monomorphic.
  return {
    orderId: ev.orderId,
    wallet: ev.wallet,
    tokenId: ev.tokenId,
    side: ev.side,
    orderType: ev.orderType,
    postOnly: ev.postOnly,
    makerAmount: ev.makerAmount,
    takerAmount: ev.takerAmount,
    expiration: ev.expiration,
    builder: ev.builder,
    owner: ev.owner,
    signer: ev.signer,
    signatureType: ev.signatureType,
    seq: ev.seq,
    conditionId: ev.conditionId,
    outcome: ev.outcome,
    pricePips: ev.pricePips,
    sizeUnits: ev.sizeUnits,
    budgetUnits: ev.budgetUnits,
    makerFeeBps: ev.makerFeeBps,
    takerFeeBps: ev.takerFeeBps,
    sizeMatched,
    status: STATUS[status]!,
    tradeIds,
    fillSeqs: fills,
    createdAt: ev.ts,
    updatedAt,
    response:
      answer === 0
        ? (undefined as unknown as OrderRecord['response'])
        : { status: answer[0] === 0 ? 'live' : 'matched', makingAmount: answer[1], takingAmount: answer[2], tradeIds: tradeIds.slice(0, answer[3]) },
  };
}

const prefixes = new WeakMap<Store, string>();
function tradeIdPrefixOf(store: Store): string {
  let p = prefixes.get(store);
  if (p === undefined) {
    p = (store.meta.get(metaKeys.tradeIdPrefix) as string | undefined) ?? '';
    if (p !== '') prefixes.set(store, p);
  }
  return p;
}

/** The order accepted at `seq` with its latest committed state, or undefined. */
export function readOrderAt(store: Store, seq: number): OrderRecord | undefined {
  const row = store.orders.get(seq) as OrderStateRow | undefined;
  if (row === undefined) return undefined;
  const value = store.journal.get(seq);
  const ev = value === undefined ? undefined : journalEventOf(value, seq);
  if (ev === undefined || ev.type !== 'order') throw new Error(`orders[${seq}] has no order event at its seq`);
  return orderRecordOf(ev, row, tradeIdPrefixOf(store));
}

const indexes = new WeakMap<Store, OrderIndex>();

/**
 * The `order-id-runs` table: the index's entries in the order they were made, so that a start-up loads them
 * instead of reading every `order` event of the journal. One value per journal batch that accepted orders,
 * under the seq of the batch's first new order, 12 bytes an order:
 *   i32 LE  first hash of the id (order-index.ts hashOrderId)
 *   i32 LE  second hash
 *   u32 LE  the seq of its `order` event
 * Written in the batch's own transaction (writer.ts; on a replica, replication-log.ts), so it covers the
 * journal exactly; a start-up merges runs into larger values (mergeRuns, below), so a value may hold the
 * runs of several batches, in order, under the first one's key. A store created before the table (version 7
 * and older) has meta `orderIds:complete` unset: the first load reads the journal's order events once and
 * stores them as one run under key 0.
 */
const RUN_ENTRY = 12;

/** The run of `orders` (id, seq), in their order. */
export function idRunOf(orders: ReadonlyArray<{ orderId: string; seq: number }>): Buffer {
  const run = Buffer.allocUnsafe(orders.length * RUN_ENTRY);
  for (let i = 0; i < orders.length; i++) {
    const [h1, h2] = hashOrderId(orders[i]!.orderId);
    run.writeInt32LE(h1, i * RUN_ENTRY);
    run.writeInt32LE(h2, i * RUN_ENTRY + 4);
    run.writeUInt32LE(orders[i]!.seq, i * RUN_ENTRY + 8);
  }
  return run;
}

/**
 * Indexes newly accepted orders (the batch being issued, in seq order) and issues the put of their run, in
 * this turn: the same transaction as the batch.
 */
export function indexOrderIds(store: Store, orders: ReadonlyArray<{ orderId: string; seq: number }>): Promise<boolean> | undefined {
  if (orders.length === 0) return undefined;
  const ix = orderIndexOf(store);
  for (const o of orders) ix.add(o.orderId, o.seq);
  return store.orderIds.put(orders[0]!.seq, idRunOf(orders));
}

/**
 * Runs are merged at a load that finds more than MERGE_AT of them: consecutive runs, in key order, become one
 * value of at most MERGED_ENTRIES entries under the first one's key. A run per batch is what the write path
 * can append cheaply, but a start-up that reads tens of thousands of small values pays per value (the
 * store's iterator, and a page fault with its read-ahead for each leaf page); merged, a million orders are
 * sixteen values of 768 KB on contiguous pages. The entries and their order are unchanged (the index is the
 * same whatever the grouping), and the merge is one transaction: a crash leaves the runs as they were.
 */
const MERGE_AT = 64;
const MERGED_ENTRIES = 1 << 16;

function readRuns(store: Store): { keys: number[]; runs: Buffer[]; entries: number } {
  const keys: number[] = [];
  const runs: Buffer[] = [];
  let entries = 0;
  for (const { key, value } of store.orderIds.getRange({})) {
    keys.push(key);
    runs.push(value);
    entries += value.length / RUN_ENTRY;
  }
  return { keys, runs, entries };
}

/**
 * The merge of a load, made by an orderly stop (Engine.close) once its last batch committed: the restart after
 * it then reads a few values, and only a start after a crash merges what was added since.
 */
export function mergeOrderIdRuns(store: Store): void {
  if (store.meta.get(metaKeys.orderIdsComplete) !== true || store.orderIds.getCount() <= MERGE_AT) return;
  const { keys, runs } = readRuns(store);
  mergeRuns(store, keys, runs);
}

function mergeRuns(store: Store, keys: readonly number[], runs: readonly Buffer[]): void {
  store.root.transactionSync(() => {
    for (let i = 0; i < runs.length; ) {
      let j = i;
      let bytes = 0;
      while (j < runs.length && (j === i || bytes + runs[j]!.length <= MERGED_ENTRIES * RUN_ENTRY)) bytes += runs[j++]!.length;
      if (j - i > 1) {
        store.orderIds.putSync(keys[i]!, Buffer.concat(runs.slice(i, j) as Buffer[], bytes));
        for (let k = i + 1; k < j; k++) store.orderIds.removeSync(keys[k]!);
      }
      i = j;
    }
  });
}

/** Allocates: the index from the stored runs (start-up), or from the journal once for a store without them. */
function loadOrderIndex(store: Store): OrderIndex {
  if (store.meta.get(metaKeys.orderIdsComplete) === true) {
    // Read once (every order ever accepted passes here at start-up), then sized once and filled.
    const { keys, runs, entries } = readRuns(store);
    const ix = new OrderIndex(entries);
    for (const run of runs) ix.addRun(run);
    if (runs.length > MERGE_AT) mergeRuns(store, keys, runs);
    return ix;
  }
  const ix = new OrderIndex();
  const found: Array<{ orderId: string; seq: number }> = [];
  for (const { key, value } of store.journal.getRange({})) {
    const e = journalEventOf(value, key);
    if (e.type !== 'order') continue;
    ix.add(e.orderId, key);
    found.push({ orderId: e.orderId, seq: key });
  }
  store.root.transactionSync(() => {
    store.orderIds.putSync(0, idRunOf(found));
    store.meta.putSync(metaKeys.orderIdsComplete, true);
  });
  return ix;
}

/**
 * The store's id index: loaded on first use (start-up calls it, recovery.ts) and from then on kept by the
 * journal writer, which adds each new order.
 */
export function orderIndexOf(store: Store): OrderIndex {
  let ix = indexes.get(store);
  if (ix === undefined) {
    ix = loadOrderIndex(store);
    indexes.set(store, ix);
  }
  return ix;
}

/** The order's latest committed state, or undefined for an id never accepted (or not yet committed). */
export function readOrder(store: Store, orderId: string): OrderRecord | undefined {
  let found: OrderRecord | undefined;
  orderIndexOf(store).find(orderId, (seq) => {
    const rec = readOrderAt(store, seq);
    if (rec?.orderId !== orderId) return false;
    found = rec;
    return true;
  });
  return found;
}

/**
 * Every order still LIVE in the committed tables, in seq (time priority) order (start-up). Each is its state
 * row joined with its `order` event, taken from `events` (what a replay already decoded) when there.
 *
 * `since` (a start from a checkpoint, recovery.ts): only the rows that can be LIVE without reading every
 * order ever: those of the orders open at the checkpoint's seq and every row keyed after it. A row keyed at
 * or before that seq is only ever written again while its order is open, so no other one can be LIVE.
 */
export function openOrdersOf(store: Store, events?: ReadonlyMap<number, OrderAcceptedEvent>, since?: { seq: number; open: readonly number[] }): OrderRecord[] {
  const out: OrderRecord[] = [];
  const prefix = tradeIdPrefixOf(store);
  const take = (key: number, row: OrderStateRow) => {
    if (row[0] !== 0) return;
    // `events`: the order events a journal replay already decoded, by seq (the same bytes, read once).
    const ev = events?.get(key);
    out.push(ev !== undefined ? orderRecordOf(ev, row, prefix) : readOrderAt(store, key)!);
  };
  if (since === undefined) {
    for (const { key, value } of store.orders.getRange({})) take(key, value as OrderStateRow);
    return out;
  }
  for (const seq of [...since.open].sort((a, b) => a - b)) {
    if (seq > since.seq) continue;
    const row = store.orders.get(seq) as OrderStateRow | undefined;
    if (row !== undefined) take(seq, row);
  }
  for (const { key, value } of store.orders.getRange({ start: since.seq + 1 })) take(key, value as OrderStateRow);
  return out;
}

/** Issues the put of an order's latest state (same event-loop turn = same transaction). `rec.seq` must be set. */
export function putOrderState(store: Store, rec: OrderRecord): Promise<boolean> {
  return store.orders.put(rec.seq, stateRowOf(rec));
}

/**
 * Issues the puts of a whole order at once, its `order` event at its seq and its state, and indexes its id
 * with a run of its own (tests and synthetic stores; the engine's writer appends the event with the rest of its journal). The
 * event is stored as the writer stores it: the binary record, or the object when the record cannot hold it
 * (a partial record, say).
 */
export function putOrderRecord(store: Store, rec: OrderRecord & OrderSignedParts): Promise<boolean> {
  const { createdAt, status: _s, sizeMatched: _m, tradeIds: _t, fillSeqs: _f, updatedAt: _u, response: _r, ...accepted } = rec;
  const ev = { type: 'order', ...accepted, ts: createdAt } satisfies OrderAcceptedEvent;
  void store.journal.put(rec.seq, encodeOrderEvent(ev) ?? ev);
  void store.orderIds.put(rec.seq, idRunOf([rec]));
  orderIndexOf(store).add(rec.orderId, rec.seq);
  return putOrderState(store, rec);
}
