/**
 * Order id -> the journal seq of the order's `order` event, held in memory.
 *
 * Every order ever accepted must stay findable by its id (GET /data/order/{id}, a retried submission
 * answered with its original result, the fee rates of a builder trade), but an order id is a random
 * 32-byte digest. Kept as an LMDB table keyed by id, each new order was one insert at a random key: one
 * dirtied 4 KB page per order, about half of what a commit wrote to disk, and more as the table outgrew the
 * pages a batch shares. So the index lives in memory, kept in step by the journal writer, and what is
 * stored is only its entries in arrival order, appended (below).
 *
 * Layout: open addressing with linear probing over three typed arrays, a slot per entry: two independent
 * 32-bit hashes of the id's text (the first picks the slot) and the seq (0 = empty; seqs start at 1).
 * 12 bytes a slot, at most half full: 24 MB per million orders at worst. Two hashes are not the id: a
 * lookup yields each seq whose hashes match, in probe order, and the caller confirms it against the journal
 * (a second match needs two ids equal in 64 bits of hash, about one pair in 10^19).
 *
 * The index is also stored, as the pairs and seqs themselves (journal/orders.ts, table `order-id-runs`), so a
 * start-up loads 12 bytes per order instead of reading every `order` event (issue 42).
 */
export class OrderIndex {
  private h1s: Int32Array;
  private h2s: Int32Array;
  private seqs: Uint32Array;
  private mask: number;
  private count = 0;

  constructor(capacity = 1 << 16) {
    let slots = 16;
    while (slots < capacity * 2) slots *= 2;
    this.h1s = new Int32Array(slots);
    this.h2s = new Int32Array(slots);
    this.seqs = new Uint32Array(slots);
    this.mask = slots - 1;
  }

  /** Ids indexed. */
  get size(): number {
    return this.count;
  }

  /** Indexes `orderId` at `seq` (1 .. 2^32 - 1); adding the same pair again changes nothing. */
  add(orderId: string, seq: number): void {
    const [h1, h2] = hashes(orderId);
    this.addHashed(h1, h2, seq);
  }

  /** Indexes an id by its two hashes (hashOrderId), as the stored runs hold it (journal/orders.ts). */
  addHashed(h1: number, h2: number, seq: number): void {
    if (!(seq >= 1 && seq <= 0xffffffff && Number.isInteger(seq))) throw new RangeError(`order seq out of range: ${seq}`);
    for (let i = h1 & this.mask; this.seqs[i] !== 0; i = (i + 1) & this.mask) {
      if (this.seqs[i] === seq && this.h1s[i] === h1 && this.h2s[i] === h2) return;
    }
    if ((this.count + 1) * 2 > this.seqs.length) this.grow();
    this.insert(h1, h2, seq);
    this.count++;
  }

  /**
   * The seq of `orderId`: the first candidate `confirm` accepts (it checks the journal's event at that
   * seq), or undefined.
   */
  find(orderId: string, confirm: (seq: number) => boolean): number | undefined {
    const [h1, h2] = hashes(orderId);
    for (let i = h1 & this.mask; this.seqs[i] !== 0; i = (i + 1) & this.mask) {
      if (this.h1s[i] === h1 && this.h2s[i] === h2 && confirm(this.seqs[i]!)) return this.seqs[i];
    }
    return undefined;
  }

  private insert(h1: number, h2: number, seq: number): void {
    let i = h1 & this.mask;
    while (this.seqs[i] !== 0) i = (i + 1) & this.mask;
    this.h1s[i] = h1;
    this.h2s[i] = h2;
    this.seqs[i] = seq;
  }

  private grow(): void {
    const { h1s, h2s, seqs } = this;
    const slots = seqs.length * 2;
    this.h1s = new Int32Array(slots);
    this.h2s = new Int32Array(slots);
    this.seqs = new Uint32Array(slots);
    this.mask = slots - 1;
    for (let i = 0; i < seqs.length; i++) if (seqs[i] !== 0) this.insert(h1s[i]!, h2s[i]!, seqs[i]!);
  }
}

const pair: [number, number] = [0, 0];

/** The two hashes an id is indexed by. The pair returned is reused by the next call: read it at once. */
export function hashOrderId(id: string): readonly [number, number] {
  return hashes(id);
}

/** FNV-1a and a multiply-xor hash over the text's code units (ids are ASCII hex; any text hashes). */
function hashes(id: string): [number, number] {
  let h1 = 0x811c9dc5;
  let h2 = 0x9747b28c;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
  }
  // Mix the tails: FNV's low bits (the slot) are weak on inputs that differ only in their last characters.
  h1 ^= h1 >>> 15;
  h1 = Math.imul(h1, 0x2c1b3c6d);
  h1 ^= h1 >>> 12;
  pair[0] = h1 | 0;
  pair[1] = h2 ^ (h2 >>> 13);
  return pair;
}
