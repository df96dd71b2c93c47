/**
 * The stored form of `status` events (OrderStatusEvent): a binary record, put in the `journal` table under
 * the event's seq as order-codec.ts puts order records (msgpack bin, returned as a Buffer). journalEventOf
 * (order-codec.ts) reads every value of the table, telling the two records apart by their first byte.
 *
 * Why: nearly every order ends with a status event (matched, canceled, expired, killed), so the journal
 * holds about one per order. As a msgpack object one is ~294 bytes and, with shared structures off, a
 * record carrying its own structure definition: ~2.7 µs to encode on the main thread, ~2.8 µs to decode,
 * most of a start-up replay's msgpack time (docs/decisions/engine.md, "Recovery and the state hash").
 *
 *   offset  size  field
 *        0     1  record kind: 2 = status event, this layout (anything else: decodeStatusEvent throws)
 *        1     1  status (0 LIVE, 1 MATCHED, 2 CANCELED, 3 CANCELED_MARKET_RESOLVED)
 *        2     1  reason (0 USER, 1 EXPIRED, 2 SELF_TRADE, 3 MARKET_RESOLVED, 4 UNFILLED, 5 FILLED)
 *        3     5  0
 *        8     8  ts (ms)
 *       16     8  remaining
 *       24     8  matched
 *       32    32  orderId      "0x" + 64 lowercase hex, as the bytes it spells
 *       64    20  wallet       "0x" + 40 lowercase hex
 *       84    32  conditionId  "0x" + 64 lowercase hex
 *      116        end
 *
 * Numbers are little-endian float64 (exact for any JS number); the seq is the record's key. The decoded
 * event has statusEvent's key order (domain/events.ts) and is deep-equal to the event encoded.
 *
 * Fallback, as for order records: encodeStatusEvent returns undefined when a field is not exactly
 * representable (a hex field that is not "0x" + lowercase hex of its length, an unknown status or reason,
 * a number that is not a number, a key missing or extra), and the writer stores the plain object.
 *
 * Buffer ownership: records are carved from a RecordSlab (hex.ts), as order records are.
 */
import type { OrderStatusEvent, OrderStatusName, StatusReason } from '../../domain/events.ts';
import { RecordSlab, RecurringBytes, asBuffer, hexOf, keyCount, writeHexField, writeRecurringHex } from './hex.ts';

/** Byte 0 of a status event's record (order-codec.ts's order records are kind 1). */
export const STATUS_RECORD_KIND = 2;

const STATUS_AT = 1;
const REASON_AT = 2;
const NUMS_AT = 8;
const ORDER_ID_AT = 32;
const WALLET_AT = 64;
const CONDITION_ID_AT = 84;
export const STATUS_RECORD_BYTES = 116;

const STATUSES: readonly OrderStatusName[] = ['LIVE', 'MATCHED', 'CANCELED', 'CANCELED_MARKET_RESOLVED'];
const REASONS: readonly StatusReason[] = ['USER', 'EXPIRED', 'SELF_TRADE', 'MARKET_RESOLVED', 'UNFILLED', 'FILLED'];
/** Own enumerable keys of a status event (statusEvent's). */
const EVENT_KEYS = 10;

const slab = new RecordSlab();

/** Wallets and markets recur from event to event: their encoded bytes are copied, not parsed again. */
const hexes = new RecurringBytes();

/**
 * The event as a record, or undefined when a field is not exactly representable (the caller then stores
 * the object). The Buffer is the caller's to keep: nothing writes to its bytes again.
 */
export function encodeStatusEvent(e: OrderStatusEvent): Buffer | undefined {
  if (e.type !== 'status' || typeof e.seq !== 'number') return undefined;
  // With every field below checked present and of its type, 10 keys means no other key.
  if (keyCount(e) !== EVENT_KEYS) return undefined;
  const status = STATUSES.indexOf(e.status);
  const reason = REASONS.indexOf(e.reason);
  const ts = e.ts;
  const remaining = e.remaining;
  const matched = e.matched;
  if (status < 0 || reason < 0 || typeof ts !== 'number' || typeof remaining !== 'number' || typeof matched !== 'number') return undefined;
  const at = slab.start(STATUS_RECORD_BYTES);
  const b = slab.buf;
  const f64 = slab.f64;
  b[at] = STATUS_RECORD_KIND;
  b[at + STATUS_AT] = status;
  b[at + REASON_AT] = reason;
  b.fill(0, at + 3, at + NUMS_AT);
  const n = (at + NUMS_AT) >>> 3;
  f64[n] = ts;
  f64[n + 1] = remaining;
  f64[n + 2] = matched;
  if (!writeHexField(b, at + ORDER_ID_AT, e.orderId, 32) || !writeRecurringHex(hexes, b, at + WALLET_AT, e.wallet, 20) || !writeRecurringHex(hexes, b, at + CONDITION_ID_AT, e.conditionId, 32)) {
    return undefined;
  }
  return slab.finish(at, at + STATUS_RECORD_BYTES);
}

/** The event a record holds; `seq` is the record's key. */
export function decodeStatusEvent(bytes: Uint8Array, seq: number): OrderStatusEvent {
  const b = asBuffer(bytes);
  const status = STATUSES[b[STATUS_AT]!];
  const reason = REASONS[b[REASON_AT]!];
  if (b.length !== STATUS_RECORD_BYTES || b[0] !== STATUS_RECORD_KIND || status === undefined || reason === undefined) {
    throw new Error(`journal[${seq}]: not a status record (kind ${b[0]}, ${b.length} bytes)`);
  }
  return {
    type: 'status',
    seq,
    ts: b.readDoubleLE(NUMS_AT),
    orderId: hexOf(b, ORDER_ID_AT, 32),
    wallet: hexOf(b, WALLET_AT, 20),
    conditionId: hexOf(b, CONDITION_ID_AT, 32),
    status,
    reason,
    remaining: b.readDoubleLE(NUMS_AT + 8),
    matched: b.readDoubleLE(NUMS_AT + 16),
  };
}

