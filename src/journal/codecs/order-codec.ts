/**
 * The stored form of `order` events (OrderAcceptedEvent): a binary record, put in the `journal` table under
 * the event's seq like any other event (the table's msgpack encoding stores it as msgpack bin and returns
 * it as a Buffer). Every reader of the journal table goes through `journalEventOf`, which takes every form:
 * this record, a status record (status-codec.ts), or the plain msgpack object every other event is, and
 * every order event was before it (store versions 4 and 5, and any order event this record cannot
 * represent exactly: see the fallback).
 *
 * Why: msgpack spent ~3-4 µs of the main thread per order event (26 keys, ~860 bytes: hex ids, addresses,
 * a 132-character signature, decimal texts), about 10% of the main thread at 10,000 orders/s. The record is
 * ~375 bytes: numbers as float64, hex as the bytes it spells, decimal texts as packed digits, the owner as
 * UTF-8, no field names. Measured on the 2-core dev machine: encode ~1.0 µs against ~2.9 µs for lmdb-js's
 * msgpack of the object (plus ~0.35 µs for lmdb-js to wrap the record as msgpack bin); decode ~1.3 µs
 * against ~4.2 µs.
 *
 *   offset  size  field
 *        0     1  record kind: 1 = order event, this layout (anything else: decodeOrderEvent throws)
 *        1     1  side (0 BUY, 1 SELL)
 *        2     1  orderType (0 GTC, 1 GTD, 2 FOK, 3 FAK)
 *        3     1  postOnly (0 false, 1 true)
 *        4     1  outcome (0..255)
 *        5     1  signatureType (0..255)
 *        6     2  0
 *        8     8  ts (ms)
 *       16     8  makerAmount
 *       24     8  takerAmount
 *       32     8  expiration
 *       40     8  pricePips
 *       48     8  sizeUnits
 *       56     8  budgetUnits
 *       64     8  makerFeeBps
 *       72     8  takerFeeBps
 *       80    32  orderId      "0x" + 64 lowercase hex, as the bytes it spells
 *      112    20  wallet       "0x" + 40 lowercase hex
 *      132    20  signer       "0x" + 40 lowercase hex
 *      152    32  builder      "0x" + 64 lowercase hex
 *      184    32  conditionId  "0x" + 64 lowercase hex
 *      216    65  signature    "0x" + 130 lowercase hex
 *      281     -  tokenId, salt, timestamp: each u8 digit count n, then the digits packed two per byte
 *                   (ceil(n / 2) bytes, high nibble first; an odd count starts with a 0 nibble), so the
 *                   bytes' hex is the text (with a leading "0" when n is odd)
 *        -     -  owner: u8 byte count n, then n bytes of UTF-8
 *
 * Numbers are little-endian float64: any JS number round-trips exactly, so they need no range check. The
 * seq is not stored: it is the record's key, and decodeOrderEvent takes it. A record is written once and
 * never updated. The decoded event has orderAcceptedEvent's key order (domain/events.ts) and is deep-equal
 * to the event encoded.
 *
 * Fallback: encodeOrderEvent returns undefined when any field is not exactly representable (a hex field
 * that is not "0x" + lowercase hex of its length, uppercase included: decoding would lowercase it; a digit
 * text with anything but 0-9 or over 255 digits; an owner over 255 UTF-8 bytes or with a lone surrogate;
 * an outcome or signatureType that is not an integer 0..255 or is -0; a number that is not a number; an
 * unknown side or order type; a postOnly that is not a boolean; any key missing or extra), and the writer
 * stores the plain object instead: correctness for any event, speed for the canonical one.
 *
 * Buffer ownership: lmdb-js may read a value's bytes up to its transaction's commit, so a record must not
 * be rewritten before then. Records are carved from a module-owned RecordSlab (hex.ts: 64 KB, ~170 records) that is only
 * ever written forward and, once full, replaced by a fresh one, never recycled: a record's bytes stay as
 * written until the record is garbage. This is Buffer.allocUnsafe's pool with a bigger slab, 8-byte aligned
 * records (the float64 fast path) and the size known only after encoding; the writer need not track
 * commits, as it does for its fill slabs (1 MB each, recycled). (With the journal's msgpack encoding,
 * lmdb-js in fact copies a Buffer's bytes into its own write buffer at put(); this does not rely on it.)
 */
import type { JournalEvent, OrderAcceptedEvent, OrderTypeName, SideName } from '../../domain/events.ts';
import { RecordSlab, RecurringBytes, asBuffer, copyBytes, hexOf, keyCount, writeHexField, writeRecurringHex } from './hex.ts';
import { STATUS_RECORD_KIND, decodeStatusEvent } from './status-codec.ts';

/** Byte 0 of an order event's record. */
export const ORDER_RECORD_KIND = 1;

const SIDE_AT = 1;
const ORDER_TYPE_AT = 2;
const POST_ONLY_AT = 3;
const OUTCOME_AT = 4;
const SIGNATURE_TYPE_AT = 5;
const NUMS_AT = 8;
const ORDER_ID_AT = 80;
const WALLET_AT = 112;
const SIGNER_AT = 132;
const BUILDER_AT = 152;
const CONDITION_ID_AT = 184;
const SIGNATURE_AT = 216;
const VAR_AT = 281;

/** Largest record: the fixed part, three 255-digit texts, a 255-byte owner. */
const MAX_RECORD = VAR_AT + 3 * (1 + 128) + 1 + 255;
/** Room to encode into: an owner is checked for 255 UTF-16 units before its UTF-8 (up to 3 bytes each) is written. */
const MAX_WRITE = MAX_RECORD - 255 + 3 * 255;

const SIDES: readonly SideName[] = ['BUY', 'SELL'];
const ORDER_TYPES: readonly OrderTypeName[] = ['GTC', 'GTD', 'FOK', 'FAK'];
/** Own enumerable keys of an order event (orderAcceptedEvent's, plus type, seq, ts). */
const EVENT_KEYS = 26;

const slab = new RecordSlab();

/**
 * The event as a record, or undefined when a field is not exactly representable (the caller then stores
 * the object). The Buffer is the caller's to keep: nothing writes to its bytes again.
 */
export function encodeOrderEvent(e: OrderAcceptedEvent): Buffer | undefined {
  if (e.type !== 'order' || typeof e.seq !== 'number') return undefined;
  // With every field below checked present and of its type, 26 keys means no other key.
  if (keyCount(e) !== EVENT_KEYS) return undefined;
  const at = slab.start(MAX_WRITE);
  const b = slab.buf;
  const f64 = slab.f64;

  const side = e.side === 'BUY' ? 0 : e.side === 'SELL' ? 1 : -1;
  const type = e.orderType === 'GTC' ? 0 : e.orderType === 'GTD' ? 1 : e.orderType === 'FOK' ? 2 : e.orderType === 'FAK' ? 3 : -1;
  const postOnly = e.postOnly === true ? 1 : e.postOnly === false ? 0 : -1;
  if ((side | type | postOnly) < 0 || !isU8(e.outcome) || !isU8(e.signatureType)) return undefined;
  b[at] = ORDER_RECORD_KIND;
  b[at + SIDE_AT] = side;
  b[at + ORDER_TYPE_AT] = type;
  b[at + POST_ONLY_AT] = postOnly;
  b[at + OUTCOME_AT] = e.outcome;
  b[at + SIGNATURE_TYPE_AT] = e.signatureType;
  b[at + 6] = 0;
  b[at + 7] = 0;

  // Field by field, not e[NAMES[i]]: a keyed load with a different name each time is megamorphic.
  const ts = e.ts;
  const makerAmount = e.makerAmount;
  const takerAmount = e.takerAmount;
  const expiration = e.expiration;
  const pricePips = e.pricePips;
  const sizeUnits = e.sizeUnits;
  const budgetUnits = e.budgetUnits;
  const makerFeeBps = e.makerFeeBps;
  const takerFeeBps = e.takerFeeBps;
  if (
    typeof ts !== 'number' || typeof makerAmount !== 'number' || typeof takerAmount !== 'number' || typeof expiration !== 'number' ||
    typeof pricePips !== 'number' || typeof sizeUnits !== 'number' || typeof budgetUnits !== 'number' || typeof makerFeeBps !== 'number' ||
    typeof takerFeeBps !== 'number'
  ) {
    return undefined;
  }
  const n = (at + NUMS_AT) >>> 3;
  f64[n] = ts;
  f64[n + 1] = makerAmount;
  f64[n + 2] = takerAmount;
  f64[n + 3] = expiration;
  f64[n + 4] = pricePips;
  f64[n + 5] = sizeUnits;
  f64[n + 6] = budgetUnits;
  f64[n + 7] = makerFeeBps;
  f64[n + 8] = takerFeeBps;

  // Order ids and signatures are unique; addresses, markets and builder codes recur from order to order.
  if (
    !writeHexField(b, at + ORDER_ID_AT, e.orderId, 32) ||
    !writeRecurringHex(hexes, b, at + WALLET_AT, e.wallet, 20) ||
    !writeRecurringHex(hexes, b, at + SIGNER_AT, e.signer, 20) ||
    !writeRecurringHex(hexes, b, at + BUILDER_AT, e.builder, 32) ||
    !writeRecurringHex(hexes, b, at + CONDITION_ID_AT, e.conditionId, 32) ||
    !writeHexField(b, at + SIGNATURE_AT, e.signature, 65)
  ) {
    return undefined;
  }
  let p = writeRepeated(tokenIds, b, at + VAR_AT, e.tokenId, writeDigits);
  if (p >= 0) p = writeDigits(b, p, e.salt);
  if (p >= 0) p = writeDigits(b, p, e.timestamp);
  if (p >= 0) p = writeRepeated(owners, b, p, e.owner, writeOwner);
  if (p < 0) return undefined;
  return slab.finish(at, p);
}

/** An integer 0..255, and not -0 (which a byte would read back as 0). */
const isU8 = (v: unknown): v is number => ((v as number) & 255) === v && (v !== 0 || 1 / v > 0);

/** Encoded bytes of the texts that recur across orders (fixed-length hex fields, token ids, owners). */
const hexes = new RecurringBytes();
const tokenIds = new RecurringBytes();
const owners = new RecurringBytes();


/** A variable-length field through its memo: writes s with `write` once, copies its bytes after. */
function writeRepeated(cache: RecurringBytes, b: Buffer, p: number, s: string, write: (b: Buffer, p: number, s: string) => number): number {
  const enc = cache.get(s);
  if (enc !== undefined) return copyBytes(b, p, enc);
  const end = write(b, p, s);
  if (end >= 0) cache.remember(s, b.subarray(p, end));
  return end;
}

/** Writes a text of 0..255 decimal digits at `p` (count, packed digits) and returns where it ends, else -1. */
function writeDigits(b: Buffer, p: number, s: string): number {
  if (typeof s !== 'string') return -1;
  const len = s.length;
  if (len > 255) return -1;
  b[p++] = len;
  let bad = 0;
  let i = 0;
  if ((len & 1) === 1) {
    const d = s.charCodeAt(0) - 48;
    bad |= d | (9 - d);
    b[p++] = d;
    i = 1;
  }
  for (; i < len; i += 2) {
    const hi = s.charCodeAt(i) - 48;
    const lo = s.charCodeAt(i + 1) - 48;
    bad |= hi | (9 - hi) | lo | (9 - lo);
    b[p++] = (hi << 4) | lo;
  }
  return bad >= 0 ? p : -1;
}

/** Writes the owner at `p` (u8 byte count, UTF-8) and returns where it ends, else -1. */
function writeOwner(b: Buffer, p: number, s: string): number {
  if (typeof s !== 'string' || s.length > 255) return -1;
  const n = b.write(s, p + 1, 'utf8');
  // A lone surrogate is written as U+FFFD: it would not read back.
  if (n > 255 || (n !== s.length && b.toString('utf8', p + 1, p + 1 + n) !== s)) return -1;
  b[p] = n;
  return p + 1 + n;
}

/** The event a record holds; `seq` is the record's key. Allocates the event and its strings. */
export function decodeOrderEvent(bytes: Uint8Array, seq: number): OrderAcceptedEvent {
  const b = asBuffer(bytes);
  if (b.length < VAR_AT + 4 || b[0] !== ORDER_RECORD_KIND) throw new Error(`journal[${seq}]: not an order record (kind ${b[0]}, ${b.length} bytes)`);
  let p = VAR_AT;
  const tokenId = readDigits(b, p);
  p += 1 + ((b[p] + 1) >>> 1);
  const salt = readDigits(b, p);
  p += 1 + ((b[p] + 1) >>> 1);
  const timestamp = readDigits(b, p);
  p += 1 + ((b[p] + 1) >>> 1);
  const ownerEnd = p + 1 + b[p];
  if (ownerEnd !== b.length) throw new Error(`journal[${seq}]: order record of ${b.length} bytes, its fields end at ${ownerEnd}`);
  const owner = b.toString('utf8', p + 1, ownerEnd);
  return {
    type: 'order',
    seq,
    ts: b.readDoubleLE(NUMS_AT),
    orderId: hexOf(b, ORDER_ID_AT, 32),
    wallet: hexOf(b, WALLET_AT, 20),
    tokenId,
    side: SIDES[b[SIDE_AT]],
    orderType: ORDER_TYPES[b[ORDER_TYPE_AT]],
    postOnly: b[POST_ONLY_AT] === 1,
    makerAmount: b.readDoubleLE(NUMS_AT + 8),
    takerAmount: b.readDoubleLE(NUMS_AT + 16),
    expiration: b.readDoubleLE(NUMS_AT + 24),
    builder: hexOf(b, BUILDER_AT, 32),
    owner,
    signer: hexOf(b, SIGNER_AT, 20),
    salt,
    timestamp,
    signatureType: b[SIGNATURE_TYPE_AT],
    signature: hexOf(b, SIGNATURE_AT, 65),
    conditionId: hexOf(b, CONDITION_ID_AT, 32),
    outcome: b[OUTCOME_AT] as 0 | 1,
    pricePips: b.readDoubleLE(NUMS_AT + 32),
    sizeUnits: b.readDoubleLE(NUMS_AT + 40),
    budgetUnits: b.readDoubleLE(NUMS_AT + 48),
    makerFeeBps: b.readDoubleLE(NUMS_AT + 56),
    takerFeeBps: b.readDoubleLE(NUMS_AT + 64),
  };
}

/**
 * What a start-up replay needs of an order record, read without decoding the rest (the signature, salt,
 * owner, ... of an order that is long finished are never needed).
 */
export function orderRecordHead(bytes: Uint8Array, seq: number): { orderId: string; wallet: string; conditionId: string; sizeUnits: number } {
  const b = asBuffer(bytes);
  if (b.length < VAR_AT + 4 || b[0] !== ORDER_RECORD_KIND) throw new Error(`journal[${seq}]: not an order record (kind ${b[0]}, ${b.length} bytes)`);
  return { orderId: hexOf(b, ORDER_ID_AT, 32), wallet: hexOf(b, WALLET_AT, 20), conditionId: hexOf(b, CONDITION_ID_AT, 32), sizeUnits: b.readDoubleLE(NUMS_AT + 40) };
}


function readDigits(b: Buffer, p: number): string {
  const n = b[p];
  const hex = b.toString('hex', p + 1, p + 1 + ((n + 1) >>> 1));
  return (n & 1) === 1 ? hex.slice(1) : hex;
}

/**
 * A value of the `journal` table as the event it stores: an order record (this module) or a status record
 * (status-codec.ts) decoded, `seq` being its key; any other value (every other event, and order or status
 * events stored as objects) as it is. Every reader of the table goes through this.
 */
export function journalEventOf(value: unknown, seq: number): JournalEvent {
  if (!(value instanceof Uint8Array)) return value as JournalEvent;
  return value[0] === STATUS_RECORD_KIND ? decodeStatusEvent(value, seq) : decodeOrderEvent(value, seq);
}
