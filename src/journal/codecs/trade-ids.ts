/**
 * Trade ids: what a fill's tradeId is, as a pure function of the store's trade-id key and the fill's journal
 * seq, and back (tradeIdSeq). Owns the key's two spellings, the keyed mix, and the writer's fast path
 * (TradeIds), whose 32 bytes fill-codec.ts stores at the head of each fill record. Separate because ids are a
 * promise to clients (they keep them, and every node must spell them alike), while the record layout around
 * them is the journal's own business.
 *
 * A trade's id is a pure function of the store's trade-id key (meta `tradeIdPrefix`, drawn
 * when the store was created, carried to replicas with the journal) and the fill's journal seq, so the
 * orders table names an order's trades by seq alone (journal/orders.ts) and every node spells them alike.
 * Two forms, told apart by the key's spelling:
 *   "2:" + 48 hex   (stores created from issue 40 on) the seq's 8 bytes mixed by a keyed 4-round Feistel
 *                   network (a bijection: unique, and reversible by tradeIdSeq), then the key's 24 bytes:
 *                   consecutive trades differ from their first characters on, so ids cut short in a log
 *                   stay apart;
 *   48 hex          (older stores, kept as they are: their ids are in clients' hands) the 24 bytes, then
 *                   the seq as 8 big-endian bytes, so ids differed only in their last characters.
 * A build that predates the mixed form refuses to start on a store that has it (its writer rejects the key).
 *
 * Imports nothing.
 */
/** The spelling of a store's trade-id key in the mixed form (header). */
const MIXED = /^2:([0-9a-f]{48})$/;
const SEQUENTIAL = /^[0-9a-f]{48}$/;

/** Whether `v` is a store's trade-id key in either form (what a replica takes from the stream). */
export const isTradeIdKey = (v: unknown): v is string => typeof v === 'string' && (MIXED.test(v) || SEQUENTIAL.test(v));

/** A fresh store's trade-id key: the mixed form, 24 random bytes. */
export const newTradeIdKey = (random24: Uint8Array): string => '2:' + Buffer.from(random24).toString('hex');

/** murmur3's 32-bit finalizer: the Feistel rounds' function. */
function fmix(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** The round keys of a mixed-form key: its first 16 bytes as four big-endian u32s (the last key's kept: one store per process). */
let keysOf = { hex: '', keys: new Uint32Array(4) };
function roundKeys(hex48: string): Uint32Array {
  if (keysOf.hex !== hex48) {
    const b = Buffer.from(hex48.slice(0, 32), 'hex');
    keysOf = { hex: hex48, keys: Uint32Array.of(b.readUInt32BE(0), b.readUInt32BE(4), b.readUInt32BE(8), b.readUInt32BE(12)) };
  }
  return keysOf.keys;
}

/** The seq's 8 bytes (hi, lo: 21 and 32 bits) through 4 Feistel rounds: a bijection of 64-bit values. */
function mix(seq: number, k: Uint32Array, out: Uint32Array): void {
  let l = Math.floor(seq / 0x1_0000_0000) >>> 0;
  let r = seq >>> 0;
  for (let i = 0; i < 4; i++) {
    const t = (l ^ fmix((r ^ k[i]!) >>> 0)) >>> 0;
    l = r;
    r = t;
  }
  out[0] = l;
  out[1] = r;
}

/** mix's inverse. */
function unmix(l: number, r: number, k: Uint32Array): number {
  for (let i = 3; i >= 0; i--) {
    const t = (r ^ fmix((l ^ k[i]!) >>> 0)) >>> 0;
    r = l;
    l = t;
  }
  return l * 0x1_0000_0000 + r;
}

const HEX2 = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const hex8 = (v: number) => HEX2[v >>> 24]! + HEX2[(v >>> 16) & 0xff]! + HEX2[(v >>> 8) & 0xff]! + HEX2[v & 0xff]!;

/** The trade id of journal seq `seq` under a store's trade-id key (either form). */
export function tradeIdOf(key: string, seq: number): string {
  const m = MIXED.exec(key);
  if (m === null) return '0x' + key + seq.toString(16).padStart(16, '0');
  const out = new Uint32Array(2);
  mix(seq, roundKeys(m[1]!), out);
  return '0x' + hex8(out[0]!) + hex8(out[1]!) + m[1];
}

/** The journal seq of a trade id under the store's key, or undefined when the id is not one of its. */
export function tradeIdSeq(key: string, tradeId: string): number | undefined {
  if (!/^0x[0-9a-f]{64}$/.test(tradeId)) return undefined;
  const m = MIXED.exec(key);
  if (m === null) {
    if (tradeId.slice(2, 50) !== key) return undefined;
    const seq = Number.parseInt(tradeId.slice(50), 16);
    return Number.isSafeInteger(seq) ? seq : undefined;
  }
  if (tradeId.slice(18) !== m[1]) return undefined;
  const seq = unmix(Number.parseInt(tradeId.slice(2, 10), 16), Number.parseInt(tradeId.slice(10, 18), 16), roundKeys(m[1]!));
  return Number.isSafeInteger(seq) ? seq : undefined;
}

/** The last three hex digits of a seq, as texts (the sequential ids' changing tail). */
const LOW3 = Array.from({ length: 4096 }, (_, i) => i.toString(16).padStart(3, '0'));

/**
 * The journal writer's trade ids: the same texts and bytes as tradeIdOf, made without parsing the key or
 * padding per fill. Mixed form: "0x", the eight mixed bytes from a table of 256 texts and the key's 48 hex
 * digits joined (the seq is mixed once for text() and write()). Sequential form: a cached head (key and seq /
 * 4096, which changes once per 4096 fills) joined to one of 4096 tails. The record's bytes come from the key
 * and the seq, never from the text (reading a joined text's characters flattens it into another
 * allocation).
 */
export class TradeIds {
  private readonly suffix: Uint8Array;
  /** Mixed form: the round keys, the mixed halves, and the text's buffer ("0x" + 16 hex + 48 hex). */
  private readonly keys: Uint32Array | undefined;
  private readonly halves = new Uint32Array(2);
  /** The seq `halves` holds the mix of (the writer asks text() then write() of one seq). */
  private mixed = -1;
  private readonly suffixHex: string = '';
  private headOf = -1;
  private head = '';

  constructor(private readonly key: string) {
    const m = MIXED.exec(key);
    if (m !== null) {
      this.keys = roundKeys(m[1]!);
      this.suffix = Buffer.from(m[1]!, 'hex');
      this.suffixHex = m[1]!;
    } else if (SEQUENTIAL.test(key)) {
      this.suffix = Buffer.from(key, 'hex');
    } else {
      throw new Error(`trade-id key ${key} is neither "2:" + 48 lowercase hex digits nor 48 lowercase hex digits`);
    }
  }

  text(seq: number): string {
    const keys = this.keys;
    if (keys !== undefined) {
      const h = this.halves;
      if (this.mixed !== seq) {
        mix(seq, keys, h);
        this.mixed = seq;
      }
      // Joined from cached pieces (a rope V8 flattens once, if ever): a tenth of a Buffer's latin1 slice.
      return '0x' + hex8(h[0]!) + hex8(h[1]!) + this.suffixHex;
    }
    const hi = Math.floor(seq / 4096);
    if (hi !== this.headOf) {
      this.headOf = hi;
      this.head = '0x' + this.key + hi.toString(16).padStart(13, '0');
    }
    return this.head + LOW3[seq & 0xfff];
  }

  /** Writes the 32 bytes of seq's trade id at `p`. */
  write(b: Uint8Array, p: number, seq: number): void {
    const keys = this.keys;
    let hi: number;
    let lo: number;
    let at: number;
    if (keys !== undefined) {
      if (this.mixed !== seq) {
        mix(seq, keys, this.halves);
        this.mixed = seq;
      }
      hi = this.halves[0]!;
      lo = this.halves[1]!;
      at = p;
      const suf = this.suffix;
      for (let i = 0; i < 24; i++) b[p + 8 + i] = suf[i]!;
    } else {
      const pre = this.suffix;
      for (let i = 0; i < 24; i++) b[p + i] = pre[i]!;
      hi = Math.floor(seq / 0x1_0000_0000);
      lo = seq >>> 0;
      at = p + 24;
    }
    b[at] = hi >>> 24;
    b[at + 1] = (hi >>> 16) & 0xff;
    b[at + 2] = (hi >>> 8) & 0xff;
    b[at + 3] = hi & 0xff;
    b[at + 4] = lo >>> 24;
    b[at + 5] = (lo >>> 16) & 0xff;
    b[at + 6] = (lo >>> 8) & 0xff;
    b[at + 7] = lo & 0xff;
  }
}
