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
 * Layout: open addressing with linear probing over one typed array, a slot per entry, its three words side
 * by side: two independent 32-bit hashes of the id's text (the first picks the slot) and the seq (0 = empty;
 * seqs start at 1). 12 bytes a slot, at most half full: 24 MB per million orders at worst. Two hashes are not the id: a
 * lookup yields each seq whose hashes match, in probe order, and the caller confirms it against the journal
 * (a second match needs two ids equal in 64 bits of hash, about one pair in 10^19).
 *
 * The index is also stored, as the pairs and seqs themselves (journal/orders.ts, table `order-id-runs`), so a
 * start-up loads 12 bytes per order instead of reading every `order` event (issue 42).
 */
export class OrderIndex {
  /** Slot i is t[3i] (first hash), t[3i + 1] (second hash), t[3i + 2] (seq as int32; 0 = empty): one cache line a probe. */
  private t: Int32Array;
  private mask: number;
  private count = 0;

  constructor(capacity = 1 << 16) {
    let slots = 16;
    while (slots < capacity * 2) slots *= 2;
    this.t = new Int32Array(slots * 3);
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
    const t = this.t;
    const s = seq | 0;
    for (let i = h1 & this.mask; t[3 * i + 2] !== 0; i = (i + 1) & this.mask) {
      if (t[3 * i + 2] === s && t[3 * i] === h1 && t[3 * i + 1] === h2) return;
    }
    if ((this.count + 1) * 2 > this.t.length / 3) this.grow();
    this.insert(h1, h2, s);
    this.count++;
  }

  /**
   * Indexes a stored run's entries (journal/orders.ts `order-id-runs`: 12 bytes each, i32 LE first hash, i32
   * LE second hash, u32 LE seq), as addHashed would one by one. Start-up loads every order ever accepted
   * through here, so the run is read as 32-bit words, not entry by entry through Buffer's readers.
   */
  addRun(run: Uint8Array): void {
    const n = Math.floor(run.byteLength / 12);
    if (n === 0) return;
    const words = run.byteOffset % 4 === 0 ? new Int32Array(run.buffer, run.byteOffset, n * 3) : new Int32Array(new Uint8Array(run.subarray(0, n * 12)).buffer);
    for (let k = 0; k < n * 3; k += 3) this.addHashed(words[k]!, words[k + 1]!, words[k + 2]! >>> 0);
  }

  /**
   * The seq of `orderId`: the first candidate `confirm` accepts (it checks the journal's event at that
   * seq), or undefined.
   */
  find(orderId: string, confirm: (seq: number) => boolean): number | undefined {
    const [h1, h2] = hashes(orderId);
    const t = this.t;
    for (let i = h1 & this.mask; t[3 * i + 2] !== 0; i = (i + 1) & this.mask) {
      if (t[3 * i] === h1 && t[3 * i + 1] === h2 && confirm(t[3 * i + 2]! >>> 0)) return t[3 * i + 2]! >>> 0;
    }
    return undefined;
  }

  private insert(h1: number, h2: number, s: number): void {
    const t = this.t;
    let i = h1 & this.mask;
    while (t[3 * i + 2] !== 0) i = (i + 1) & this.mask;
    t[3 * i] = h1;
    t[3 * i + 1] = h2;
    t[3 * i + 2] = s;
  }

  private grow(): void {
    const old = this.t;
    const slots = (old.length / 3) * 2;
    this.t = new Int32Array(slots * 3);
    this.mask = slots - 1;
    for (let k = 0; k < old.length; k += 3) if (old[k + 2] !== 0) this.insert(old[k]!, old[k + 1]!, old[k + 2]!);
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
