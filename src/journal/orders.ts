/**
 * Orders in storage. An order is two things that change at different rates:
 *   - what was submitted and derived at acceptance (wallet, token, side, amounts, signature, price, size,
 *     fee rates, ...): immutable, and already in the journal as the order's `order` event at its seq (a
 *     binary record of order-codec.ts, or a msgpack object: read through journalEventOf);
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
import { tradeIdOf } from './fill-codec.ts';
import { metaKeys } from './keys.ts';
import { encodeOrderEvent, journalEventOf } from './order-codec.ts';
import { OrderIndex } from './order-index.ts';

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
 * The store's id index. Start-up's replay (recovery.ts) builds it from the events it reads anyway and
 * installs it; a store opened without one (tests, tools reading a store after a crash) gets it from a scan
 * of the journal's order events here. From then on the journal writer adds each new order.
 */
export function orderIndexOf(store: Store): OrderIndex {
  let ix = indexes.get(store);
  if (ix === undefined) {
    ix = new OrderIndex();
    for (const { key, value } of store.journal.getRange({})) {
      const e = journalEventOf(value, key);
      if (e.type === 'order') ix.add(e.orderId, key);
    }
    indexes.set(store, ix);
  }
  return ix;
}

/** Installs the index a replay built, unless the store has one already (it may hold uncommitted orders). */
export function installOrderIndex(store: Store, ix: OrderIndex): void {
  if (!indexes.has(store)) indexes.set(store, ix);
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
 */
export function openOrdersOf(store: Store, events?: ReadonlyMap<number, OrderAcceptedEvent>): OrderRecord[] {
  const out: OrderRecord[] = [];
  const prefix = tradeIdPrefixOf(store);
  for (const { key, value } of store.orders.getRange({})) {
    const row = value as OrderStateRow;
    if (row[0] !== 0) continue;
    // `events`: the order events a journal replay already decoded, by seq (the same bytes, read once).
    const ev = events?.get(key as number);
    out.push(ev !== undefined ? orderRecordOf(ev, row, prefix) : readOrderAt(store, key as number)!);
  }
  return out;
}

/** Issues the put of an order's latest state (same event-loop turn = same transaction). `rec.seq` must be set. */
export function putOrderState(store: Store, rec: OrderRecord): Promise<boolean> {
  return store.orders.put(rec.seq, stateRowOf(rec));
}

/** Indexes a newly accepted order's id at its seq (the writer, when it issues the order's event). */
export function indexOrderId(store: Store, rec: OrderRecord): void {
  orderIndexOf(store).add(rec.orderId, rec.seq);
}

/**
 * Issues the puts of a whole order at once, its `order` event at its seq and its state, and indexes its id
 * (tests and synthetic stores; the engine's writer appends the event with the rest of its journal). The
 * event is stored as the writer stores it: the binary record, or the object when the record cannot hold it
 * (a partial record, say).
 */
export function putOrderRecord(store: Store, rec: OrderRecord & OrderSignedParts): Promise<boolean> {
  const { createdAt, status: _s, sizeMatched: _m, tradeIds: _t, fillSeqs: _f, updatedAt: _u, response: _r, ...accepted } = rec;
  const ev = { type: 'order', ...accepted, ts: createdAt } satisfies OrderAcceptedEvent;
  void store.journal.put(rec.seq, encodeOrderEvent(ev) ?? ev);
  indexOrderId(store, rec);
  return putOrderState(store, rec);
}
