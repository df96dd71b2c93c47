/**
 * Room journal/codecs/: the stored binary forms of the journal's hottest records, fills (fill-codec.ts), `order`
 * events (order-codec.ts) and `status` events (status-codec.ts), and what they share (this file). Separate
 * because each is a byte layout with its own version history, read and written by the journal's root files
 * (writer.ts, orders.ts, recovery.ts) and by the readers, and they know nothing of LMDB: bytes in, records out.
 *
 * What the three share: hex text written as the bytes it spells, and a bounded memo of the encoded bytes of
 * texts that recur from record to record.
 */

/** Nibble value of a lowercase hex digit's char code, else -1. */
const NIBBLE = new Int8Array(128).fill(-1);
for (let c = 0; c < 16; c++) NIBBLE['0123456789abcdef'.charCodeAt(c)] = c;

/**
 * Writes the bytes "0x" + lowercase hex of even length spells at `p` and returns their count, else -1
 * (uppercase and any other character included: the bytes would not read back as the same text). Char by
 * char rather than through Buffer.write: the texts are short ids, and Buffer.write's per-call cost
 * (encoding dispatch, a slice for the prefix) was most of an encoder's time.
 */
export function writeHexBytes(b: Uint8Array, p: number, s: string): number {
  const len = s.length;
  if (len < 2 || (len & 1) !== 0 || s.charCodeAt(0) !== 48 || s.charCodeAt(1) !== 120) return -1;
  const n = (len - 2) >> 1;
  for (let i = 0; i < n; i++) {
    const hi = s.charCodeAt(2 + 2 * i);
    const lo = s.charCodeAt(3 + 2 * i);
    const h = hi < 128 ? NIBBLE[hi]! : -1;
    const l = lo < 128 ? NIBBLE[lo]! : -1;
    if ((h | l) < 0) return -1;
    b[p + i] = (h << 4) | l;
  }
  return n;
}

/**
 * Encoded bytes of texts that recur across records (markets, wallets, API keys, token ids, builder codes):
 * copying them costs ~30 ns against ~300 ns to encode a 66-character id again. Bounded: cleared when full
 * (a working set larger than this simply encodes every time).
 */
export class RecurringBytes {
  private readonly map = new Map<string, Uint8Array>();

  constructor(private readonly max = 16_384) {}

  get(text: string): Uint8Array | undefined {
    return this.map.get(text);
  }

  /** Keeps a copy of `bytes` (the caller's buffer is reused) and returns it. */
  remember(text: string, bytes: Uint8Array): Uint8Array {
    if (this.map.size >= this.max) this.map.clear();
    const copy = new Uint8Array(bytes);
    this.map.set(text, copy);
    return copy;
  }
}

/** Copies `bytes` to `b` at `p` with a byte loop (set() of a ~35-byte view allocates the view) and returns the end. */
export function copyBytes(b: Uint8Array, p: number, bytes: Uint8Array): number {
  const n = bytes.length;
  for (let i = 0; i < n; i++) b[p + i] = bytes[i]!;
  return p + n;
}

/** The text "0x" + lowercase hex of the `n` bytes at `at` (the inverse of writeHexField). */
export const hexOf = (b: Buffer, at: number, n: number): string => '0x' + b.toString('hex', at, at + n);

/** A value's bytes as a Buffer without copying (lmdb-js hands msgpack bin values out as Uint8Array). */
export const asBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

/**
 * Own enumerable keys of an event (~20 ns: the enum cache). A codec that has checked each field it stores
 * present and of its type compares this with its layout's field count: equal means no field it would drop.
 */
export function keyCount(e: object): number {
  let keys = 0;
  for (const _ in e) keys++;
  return keys;
}

/** Writes the `n` bytes "0x" + 2n lowercase hex digits spell at `p`; false for any other text. */
export function writeHexField(b: Uint8Array, p: number, s: string, n: number): boolean {
  return typeof s === 'string' && s.length === 2 + 2 * n && writeHexBytes(b, p, s) === n;
}

/** writeHexField through `memo` (the text's length gives its byte count, so one memo serves every length). */
export function writeRecurringHex(memo: RecurringBytes, b: Uint8Array, p: number, s: string, n: number): boolean {
  const enc = memo.get(s);
  if (enc === undefined) {
    if (!writeHexField(b, p, s, n)) return false;
    memo.remember(s, b.subarray(p, p + n));
    return true;
  }
  if (enc.length !== n) return false;
  copyBytes(b, p, enc);
  return true;
}

// RecordSlab's float64 fast path writes in the host's byte order; the records' layouts are little-endian.
if (new Uint8Array(new Float64Array([1]).buffer)[7] !== 0x3f) throw new Error('journal records: big-endian hosts are not supported');

/**
 * Where a binary codec carves its records (order-codec.ts, status-codec.ts): a 64 KB slab written only
 * forward and replaced, never recycled, once a record might not fit, so a record's bytes stay as written
 * until the record is garbage (lmdb-js may read a value's bytes up to its transaction's commit). Records
 * start 8-byte aligned, so their float64 fields can be written through `f64`.
 */
export class RecordSlab {
  buf: Buffer;
  f64: Float64Array;
  private at = 0;

  constructor(private readonly bytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafeSlow(bytes);
    this.f64 = new Float64Array(this.buf.buffer, 0, bytes >>> 3);
  }

  /** Where a record of at most `max` bytes starts (in a fresh slab when it might not fit this one). */
  start(max: number): number {
    if (this.at + max > this.bytes) {
      this.buf = Buffer.allocUnsafeSlow(this.bytes);
      this.f64 = new Float64Array(this.buf.buffer, 0, this.bytes >>> 3);
      this.at = 0;
    }
    return this.at;
  }

  /** The record written from `at` to `end`; the next one starts 8-byte aligned after it. */
  finish(at: number, end: number): Buffer {
    this.at = (end + 7) & ~7;
    return this.buf.subarray(at, end);
  }
}
