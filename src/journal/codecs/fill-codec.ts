/**
 * The stored form of fills: binary records, grouped in blocks of up to BLOCK_FILLS consecutive fills of
 * one journal batch, one LMDB value per block in the `fills` table under the seq of its first fill. This
 * module owns both layouts; readers go through `readFill` / `readFillsFrom` (or `decodeFill` on a record).
 *
 * Why blocks: an LMDB put costs lmdb-js about a microsecond of the main thread plus a B-tree insert on
 * its write thread, a fifth of the journal's budget per fill at 200k fills/s; a block of 16 pays it once.
 * A fill is found by its seq with one reverse key lookup (the greatest block key <= seq) and a scan of
 * at most BLOCK_FILLS slot headers.
 *
 * Block: slots back to back, each
 *   u32 LE  record length n
 *   u32     0
 *   n bytes the record (8-byte aligned, for the float64 fast path of the encoder)
 *   zeros   up to the next multiple of 8
 *
 * Fills are the bulk of the journal, and msgpack spent most of the writer's time on their long hex
 * strings (ids, wallets, digests). The record keeps numbers as float64 (every amount is an integer
 * below 2^53, so float64 is exact) and hex strings as raw bytes:
 *
 *   offset  size  field
 *        0    32  tradeId  the trade id of the fill's seq under the store's trade-id key (trade-ids.ts)
 *       32    32  txHash   a digest of the journal records committed together (sealFills)
 *       64     8  seq
 *       72     8  ts (ms)
 *       80     8  size
 *       88     8  takerPricePips
 *       96     8  makerPricePips
 *      104     8  takerUsdc
 *      112     8  makerUsdc
 *      120     8  takerFee
 *      128     8  makerFee
 *      136     8  makerRemaining
 *      144     1  kind (0 TRANSFER, 1 MINT, 2 MERGE), + 0x80 when `deferred` (the trade settles later,
 *                          store version 7; the flag is clear in every record of older stores)
 *      145     1  takerOutcome
 *      146     1  makerOutcome
 *      147     1  takerSide (0 BUY, 1 SELL)
 *      148     1  makerSide
 *      149     -  strings in STRING_FIELDS order, each: tag u8, length u16, bytes
 *                   tag 1: "0x" + lowercase hex of even length, stored as the bytes it spells
 *                   tag 0: anything else, UTF-8
 *
 * Numbers are little-endian. A record is written once and never updated. Encoding writes into a slab
 * the caller provides (one per journal batch): lmdb-js keeps a pointer to a value until its transaction
 * has run, so a value's bytes must not be reused before the commit.
 *
 * TRADE IDS are trade-ids.ts's: the record holds the 32 bytes it writes (TradeIds.write).
 */
import { createHash } from 'node:crypto';
import type { FillEvent, FillKindName, SideName } from '../../domain/events.ts';
import { RecurringBytes, writeHexBytes } from './hex.ts';
import type { TradeIds } from './trade-ids.ts';

/** Most fills per block. */
export const BLOCK_FILLS = 16;
/** Bytes before each record in a block. */
export const SLOT_HEADER = 8;

const NUMS_AT = 64;
const BYTES_AT = 144;
const STRINGS_AT = 149;

const NUM_FIELDS = [
  'seq', 'ts', 'size', 'takerPricePips', 'makerPricePips', 'takerUsdc', 'makerUsdc', 'takerFee', 'makerFee', 'makerRemaining',
] as const satisfies ReadonlyArray<keyof FillEvent>;

const STRING_FIELDS = [
  'conditionId', 'takerOrderId', 'makerOrderId', 'takerWallet', 'makerWallet', 'takerOwner', 'makerOwner', 'takerTokenId',
  'makerTokenId', 'builder',
] as const satisfies ReadonlyArray<keyof FillEvent>;

const KINDS: readonly FillKindName[] = ['TRANSFER', 'MINT', 'MERGE'];
const SIDES: readonly SideName[] = ['BUY', 'SELL'];
/** Bit of the kind byte set for a deferred fill. */
const DEFERRED = 0x80;
const TAG_UTF8 = 0;
const TAG_HEX = 1;

// The float64 fast path writes in the host's byte order; the layout is little-endian.
if (new Uint8Array(new Float64Array([1]).buffer)[7] !== 0x3f) throw new Error('fill-codec: big-endian hosts are not supported');
/** Float64 view of the last slab's memory (slabs are 8-byte aligned: allocUnsafeSlow). */
let f64Of: ArrayBufferLike | undefined;
let f64: Float64Array = new Float64Array(0);

/** Upper bound of a fill's record size (strings at most 3 bytes per UTF-16 unit). */
export function fillRecordBound(f: FillEvent): number {
  const chars =
    f.conditionId.length + f.takerOrderId.length + f.makerOrderId.length + f.takerWallet.length + f.makerWallet.length +
    f.takerOwner.length + f.makerOwner.length + f.takerTokenId.length + f.makerTokenId.length + f.builder.length;
  return STRINGS_AT + 3 * STRING_FIELDS.length + 3 * chars;
}

/**
 * Writes `f` into `slab` at `at` (which must have fillRecordBound(f) bytes free), with its trade id and
 * a zero txHash, and returns where the record ends. The trade id's bytes are `ids`' for f.seq when given
 * (the writer, which set f.tradeId = ids.text(f.seq)), else those f.tradeId spells.
 * sealFills gives the records of a batch their txHash before they are stored.
 */
export function encodeFill(f: FillEvent, slab: Buffer, at: number, ids?: TradeIds): number {
  if (ids !== undefined) ids.write(slab, at, f.seq);
  else if (f.tradeId.length !== 66 || writeHexBytes(slab, at, f.tradeId) !== 32) throw new Error(`fill ${f.seq}: trade id ${f.tradeId} is not 0x + 64 hex`);
  if (((slab.byteOffset + at) & 7) === 0) {
    if (slab.buffer !== f64Of) {
      f64Of = slab.buffer;
      f64 = new Float64Array(slab.buffer, 0, slab.buffer.byteLength >>> 3);
    }
    const t = (slab.byteOffset + at + 32) >>> 3; // the txHash, zero until sealFills
    f64[t] = 0;
    f64[t + 1] = 0;
    f64[t + 2] = 0;
    f64[t + 3] = 0;
    // Field by field, not f[NUM_FIELDS[i]]: a keyed load with a different name each time is megamorphic.
    const b = (slab.byteOffset + at + NUMS_AT) >>> 3;
    f64[b] = f.seq;
    f64[b + 1] = f.ts;
    f64[b + 2] = f.size;
    f64[b + 3] = f.takerPricePips;
    f64[b + 4] = f.makerPricePips;
    f64[b + 5] = f.takerUsdc;
    f64[b + 6] = f.makerUsdc;
    f64[b + 7] = f.takerFee;
    f64[b + 8] = f.makerFee;
    f64[b + 9] = f.makerRemaining;
  } else {
    slab.fill(0, at + 32, at + 64);
    for (let i = 0; i < NUM_FIELDS.length; i++) slab.writeDoubleLE(f[NUM_FIELDS[i]], at + NUMS_AT + 8 * i);
  }
  slab[at + BYTES_AT] = (f.kind === 'TRANSFER' ? 0 : f.kind === 'MINT' ? 1 : 2) | (f.deferred === true ? DEFERRED : 0);
  slab[at + BYTES_AT + 1] = f.takerOutcome;
  slab[at + BYTES_AT + 2] = f.makerOutcome;
  slab[at + BYTES_AT + 3] = f.takerSide === 'BUY' ? 0 : 1;
  slab[at + BYTES_AT + 4] = f.makerSide === 'BUY' ? 0 : 1;
  let p = at + STRINGS_AT; // in STRING_FIELDS order; order ids are (nearly) unique, the rest repeat
  p = writeRepeated(slab, p, f.conditionId);
  p = writeOrderId(slab, p, f.takerOrderId, 0);
  p = writeOrderId(slab, p, f.makerOrderId, 1);
  p = writeRepeated(slab, p, f.takerWallet);
  p = writeRepeated(slab, p, f.makerWallet);
  p = writeRepeated(slab, p, f.takerOwner);
  p = writeRepeated(slab, p, f.makerOwner);
  p = writeRepeated(slab, p, f.takerTokenId);
  p = writeRepeated(slab, p, f.makerTokenId);
  return writeRepeated(slab, p, f.builder);
}

/** Encoded form (tag, length, bytes) of strings that recur across fills: markets, wallets, API keys, token ids, builder codes. */
const repeated = new RecurringBytes();
const scratch = Buffer.allocUnsafe(3 + 3 * 65_535);

function writeRepeated(b: Buffer, p: number, s: string): number {
  const enc = repeated.get(s) ?? repeated.remember(s, scratch.subarray(0, writeString(scratch, 0, s)));
  b.set(enc, p);
  return p + enc.length;
}

/**
 * Order ids are too many to cache, but the fills of one command share its taker order id and a resting
 * order's fills often come one after another: the last encoded id of each role is kept (copied: slabs
 * are reused) and a repeat is copied from there.
 */
const lastIds = ['', ''];
const lastIdBytes = [new Uint8Array(128), new Uint8Array(128)];
const lastIdLength = [0, 0];

// Byte loops, not set()/copy() of subarrays: each of those allocates a view, for a copy of ~35 bytes.
function writeOrderId(b: Buffer, p: number, s: string, role: 0 | 1): number {
  const n = lastIdLength[role];
  const last = lastIdBytes[role];
  if (n > 0 && s === lastIds[role]) {
    for (let i = 0; i < n; i++) b[p + i] = last[i];
    return p + n;
  }
  const end = writeString(b, p, s);
  const m = end - p;
  if (m <= 128) {
    for (let i = 0; i < m; i++) last[i] = b[p + i];
    lastIds[role] = s;
    lastIdLength[role] = m;
  } else lastIdLength[role] = 0;
  return end;
}

/** Char codes of the lowercase hex digits. */
const HEX_DIGITS = new Uint8Array([...'0123456789abcdef'].map((c) => c.charCodeAt(0)));

/**
 * One string field: tag, u16 length, bytes. Written char by char rather than through Buffer.write: the
 * strings are short (ids, wallets, token ids), and Buffer.write's per-call cost (encoding dispatch, a
 * slice for the 0x prefix, a regex to tell hex apart) was most of the encoder's time.
 */
function writeString(b: Buffer, p: number, s: string): number {
  const len = s.length;
  const n = writeHexBytes(b, p + 3, s);
  if (n >= 0) {
    b[p] = TAG_HEX;
    b[p + 1] = n & 0xff;
    b[p + 2] = n >>> 8;
    return p + 3 + n;
  }
  let ascii = true;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128) {
      ascii = false;
      break;
    }
    b[p + 3 + i] = c;
  }
  const m = ascii ? len : b.write(s, p + 3, 'utf8');
  b[p] = TAG_UTF8;
  b[p + 1] = m & 0xff;
  b[p + 2] = m >>> 8;
  return p + 3 + m;
}


/**
 * Gives the fills of one journal batch their transaction hash: SHAKE128 of SHA-256 over the batch's
 * encoded bytes (`regions`: the slab ranges its records were written to, in order, records back to back with
 * zeroed padding, every txHash slot still zero) with 32 output bytes per fill; the i-th fill gets the i-th
 * 32 bytes, written into its record (at `offsets[i]` of `slabs[i]`) and `fills[i].txHash`. There is no chain: the batch is the
 * "transaction" (its fills commit together), and the hash is a deterministic digest of the journal
 * records, distinct per fill. One hash call per batch instead of one per fill: a native hash call costs
 * ~1.5 µs, a third of the writer's budget per fill.
 */
export function sealFills(regions: readonly Buffer[], slabs: readonly Buffer[], offsets: readonly number[], fills: readonly FillEvent[]): void {
  if (fills.length === 0) return;
  // SHA-256 (hardware-assisted on x86) digests the batch at several times SHAKE's speed; SHAKE128 then
  // stretches that digest to 32 bytes per fill (cost proportional to the output, not the batch).
  const d = createHash('sha256');
  for (const r of regions) d.update(r);
  const out = createHash('shake128', { outputLength: 32 * fills.length }).update(d.digest()).digest();
  // One text for the batch, "0x" + 64 hex digits per fill, each fill's txHash a slice of it (V8 shares the
  // characters: one small object per fill). Buffer's own hex text has no "0x" to slice with it, which left a
  // concatenation, and a second object, per fill.
  const text = Buffer.allocUnsafe(66 * fills.length);
  for (let i = 0; i < fills.length; i++) {
    const slab = slabs[i];
    const at = offsets[i] + 32;
    const t = 66 * i;
    text[t] = 48; // '0'
    text[t + 1] = 120; // 'x'
    for (let k = 0; k < 32; k++) {
      const b = out[32 * i + k];
      slab[at + k] = b;
      text[t + 2 + 2 * k] = HEX_DIGITS[b >> 4];
      text[t + 3 + 2 * k] = HEX_DIGITS[b & 15];
    }
  }
  const hashes = text.toString('latin1');
  for (let i = 0; i < fills.length; i++) fills[i].txHash = hashes.slice(66 * i, 66 * i + 66);
}

/** Why a record is not laid out as a fill record, for the error. */
const damaged = (b: Buffer, what: string) => new Error(`fill record of ${b.length} bytes is damaged: ${what}`);

/** A fill from its stored record (a damaged record throws). Allocates the event and its strings. */
export function decodeFill(r: Uint8Array): FillEvent {
  const b = Buffer.isBuffer(r) ? r : Buffer.from(r.buffer, r.byteOffset, r.byteLength);
  // Checked as it is read (enum bytes in range, every string inside, nothing after): a damaged record throws
  // rather than decode to another fill.
  if (b.length < STRINGS_AT) throw damaged(b, `shorter than its ${STRINGS_AT}-byte head`);
  const kindByte = b[BYTES_AT] & ~DEFERRED;
  if (kindByte >= KINDS.length || (b[BYTES_AT + 1] | b[BYTES_AT + 2] | b[BYTES_AT + 3] | b[BYTES_AT + 4]) > 1) {
    throw damaged(b, `kind, outcome or side bytes ${b.subarray(BYTES_AT, STRINGS_AT).join(' ')}`);
  }
  const f = {
    type: 'fill',
    seq: b.readDoubleLE(NUMS_AT),
    ts: b.readDoubleLE(NUMS_AT + 8),
    tradeId: '0x' + b.toString('hex', 0, 32),
    txHash: '0x' + b.toString('hex', 32, 64),
    conditionId: '',
    kind: KINDS[kindByte],
    size: b.readDoubleLE(NUMS_AT + 16),
    takerOrderId: '',
    makerOrderId: '',
    takerWallet: '',
    makerWallet: '',
    takerOwner: '',
    makerOwner: '',
    takerTokenId: '',
    makerTokenId: '',
    takerOutcome: b[BYTES_AT + 1] as 0 | 1,
    makerOutcome: b[BYTES_AT + 2] as 0 | 1,
    takerSide: SIDES[b[BYTES_AT + 3]],
    makerSide: SIDES[b[BYTES_AT + 4]],
    takerPricePips: b.readDoubleLE(NUMS_AT + 24),
    makerPricePips: b.readDoubleLE(NUMS_AT + 32),
    takerUsdc: b.readDoubleLE(NUMS_AT + 40),
    makerUsdc: b.readDoubleLE(NUMS_AT + 48),
    takerFee: b.readDoubleLE(NUMS_AT + 56),
    makerFee: b.readDoubleLE(NUMS_AT + 64),
    makerRemaining: b.readDoubleLE(NUMS_AT + 72),
    builder: '',
  } as FillEvent;
  let p = STRINGS_AT;
  for (let i = 0; i < STRING_FIELDS.length; i++) {
    const tag = b[p];
    const n = b[p + 1] | (b[p + 2] << 8);
    if (p + 3 + n > b.length || tag > TAG_HEX) throw damaged(b, `${STRING_FIELDS[i]} at ${p}`);
    (f as unknown as Record<string, string>)[STRING_FIELDS[i]] = tag === TAG_HEX ? '0x' + b.toString('hex', p + 3, p + 3 + n) : b.toString('utf8', p + 3, p + 3 + n);
    p += 3 + n;
  }
  if (p !== b.length) throw damaged(b, `its fields end at ${p}`);
  if ((b[BYTES_AT] & DEFERRED) !== 0) f.deferred = true;
  return f;
}

/** The journal seq stored in a record (without decoding the rest). */
export const fillSeqOf = (r: Buffer): number => r.readDoubleLE(NUMS_AT);

/**
 * A block holding `f` alone, sealed alone (tests, synthetic stores: `fills.put(f.seq, encodeFillRecord(f))`
 * is a valid fills table): keeps f.tradeId (which must be 0x + 64 hex) and sets f.txHash.
 */
export function encodeFillRecord(f: FillEvent): Buffer {
  const slab = Buffer.alloc(SLOT_HEADER + fillRecordBound(f) + 8);
  const end = writeSlot(f, slab, 0);
  const block = slab.subarray(0, end);
  sealFills([block], [block], [SLOT_HEADER], [f]);
  return Buffer.from(block);
}

/**
 * Writes `f` as one block slot at `at` (8-aligned, with SLOT_HEADER + fillRecordBound(f) + 7 bytes free)
 * and returns where the next slot starts. `ids`: as for encodeFill.
 */
export function writeSlot(f: FillEvent, slab: Buffer, at: number, ids?: TradeIds): number {
  const n = encodeFill(f, slab, at + SLOT_HEADER, ids) - at - SLOT_HEADER;
  slab.writeUInt32LE(n, at);
  slab.writeUInt32LE(0, at + 4);
  const end = at + SLOT_HEADER + ((n + 7) & ~7);
  for (let q = at + SLOT_HEADER + n; q < end; q++) slab[q] = 0;
  return end;
}

/** The records of a block, in seq order (views of the block). */
export function* blockRecords(block: Buffer): Generator<Buffer> {
  for (let q = 0; q + SLOT_HEADER <= block.length; ) {
    const n = block.readUInt32LE(q);
    yield block.subarray(q + SLOT_HEADER, q + SLOT_HEADER + n);
    q += SLOT_HEADER + ((n + 7) & ~7);
  }
}

/** The record of journal seq `seq` in `block`, or undefined. */
export function recordIn(block: Buffer, seq: number): Buffer | undefined {
  for (let q = 0; q + SLOT_HEADER <= block.length; ) {
    const n = block.readUInt32LE(q);
    const s = block.readDoubleLE(q + SLOT_HEADER + NUMS_AT);
    if (s === seq) return block.subarray(q + SLOT_HEADER, q + SLOT_HEADER + n);
    if (s > seq) return undefined;
    q += SLOT_HEADER + ((n + 7) & ~7);
  }
  return undefined;
}

/** What the readers below need of the fills table (a Database<Buffer, number> of env.ts). */
export interface FillsTable {
  get(key: number): Buffer | undefined;
  getKeys(opts: { start?: number; end?: number; reverse?: boolean; limit?: number }): Iterable<number>;
  getRange(opts: { start?: number; end?: number; reverse?: boolean; limit?: number }): Iterable<{ key: number; value: Buffer }>;
}

/** The fill journaled at `seq`, or undefined when that seq is not a fill. */
export function readFill(fills: FillsTable, seq: number): FillEvent | undefined {
  for (const key of fills.getKeys({ start: seq, reverse: true, limit: 1 })) {
    const block = fills.get(key);
    const rec = block === undefined ? undefined : recordIn(block, seq);
    return rec === undefined ? undefined : decodeFill(rec);
  }
  return undefined;
}

/** Every fill with seq >= fromSeq, in seq order. */
export function* readFillsFrom(fills: FillsTable, fromSeq = 1): Generator<FillEvent> {
  let start = fromSeq;
  for (const key of fills.getKeys({ start: fromSeq, reverse: true, limit: 1 })) start = key;
  for (const { value } of fills.getRange({ start })) {
    for (const rec of blockRecords(value)) {
      const f = decodeFill(rec);
      if (f.seq >= fromSeq) yield f;
    }
  }
}
