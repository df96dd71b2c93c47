/**
 * Memory layout of the production book: the only module that indexes its typed arrays.
 *
 * Four stores, each a small class whose methods are the accessors everything else uses:
 *
 *   SlotTable     one 64-byte row ("slot") per resting order. Each chunk is one ArrayBuffer seen through a
 *                 Float64Array and an Int32Array; a field is a column at a fixed offset inside the row:
 *
 *                   byte  field      view     meaning
 *                    0    handle     f64[0]   sequencer handle (exact up to 2^53)
 *                    8    owner      f64[1]   wallet index, for self-trade prevention
 *                   16    remaining  f64[2]   unfilled units
 *                   24    expiresAt  f64[3]   GTD expiry (unix s), 0 = none
 *                   32    seq        f64[4]   arrival number within the book (FIFO order, expiry sorting)
 *                   40    prev       i32[10]  FIFO link within the level
 *                   44    next       i32[11]  FIFO link; also threads the free list
 *                   48    heapPos    i32[12]  index in the expiry heap, -1 when not in it
 *                   52    levelMeta  i32[13]  tick index in outcome-0 space (bits 0-15) | side (16) |
 *                                             outcome (17) | live (18)
 *                   56    spare
 *
 *                 Why rows and not one array per field: a cancel or a fill touches most fields of a slot at
 *                 a random place in memory; with separate arrays that was ~9 cache misses per slot, with a
 *                 row it is one. Measured on a 200k-order book under mixed load: ~3.0-3.6 M ops/s with rows
 *                 against ~2.8-2.9 with separate columns; equal on small books.
 *
 *                 Slot i lives in chunk i >>> CHUNK_SHIFT, row i & CHUNK_MASK. Chunk 0 starts at
 *                 INITIAL_SLOTS rows (1 KiB) and doubles by copy until it reaches CHUNK_SLOTS (a copy of at
 *                 most 512 KiB); after that growth appends a fresh 1 MiB chunk and never copies, so a market
 *                 that grows to millions of orders never stalls its shard on a big memcpy.
 *                 Slots [0, used) have been handed out; the free ones among them form a LIFO list through
 *                 `next` (freeHead, freeCount), and live + freeCount = used always holds.
 *
 *   LevelColumns  one entry per tick index 0..n (n = 10_000 / tick; 0 and n are never used): FIFO
 *                 head/tail slot and total remaining units, plus a bitmap of non-empty levels for the
 *                 next-best search. Allocated on the first resting order, dropped by release(), so an idle
 *                 market costs nothing here even at a 1-pip tick (16 bytes x 10_001 levels).
 *
 *   HandleIndex   open-addressing hash handle -> slot: linear probing, power-of-two capacity, load <= 1/2,
 *                 backward-shift deletion (no tombstones, so probe lengths never degrade), key and slot
 *                 interleaved in one Float64Array (16 bytes per bucket, one cache line per probe). It grows
 *                 incrementally (a few entries move per put) instead of rehashing a million entries at once,
 *                 which measured ~45 ms in one step.
 *
 *   ExpiryHeap    binary min-heap of slots keyed on (expiresAt, handle), with the position kept in the
 *                 slot's heapPos field so a cancel removes a GTD order in O(log n).
 *
 * An idle market (never traded, or after cancelAll) holds ~2 KiB: one 16-row chunk, a 16-bucket index and a
 * 16-entry heap. All capacities are powers of two; indices are masked, never bounds-checked on the hot path.
 */

export const NIL = -1;

/** Book sides in outcome-0 space, as SlotTable.bookSide() returns them. */
export const BID = 0;
export const ASK = 1;

export const CHUNK_SHIFT = 14;
export const CHUNK_SLOTS = 1 << CHUNK_SHIFT;
export const CHUNK_MASK = CHUNK_SLOTS - 1;
export const INITIAL_SLOTS = 16;

const META_SIDE = 1;
const META_OUTCOME_SHIFT = 1;
const META_LIVE = 4;

/** Bytes per slot row: one cache line. */
export const ROW_BYTES = 64;
// Float64 fields, as indices within the row's 8 doubles.
const F_HANDLE = 0;
const F_OWNER = 1;
const F_REMAINING = 2;
const F_EXPIRES = 3;
const F_SEQ = 4;
// Int32 fields, as indices within the row's 16 int32s (bytes 40..55; 56..63 spare).
const I_PREV = 10;
const I_NEXT = 11;
const I_HEAPPOS = 12;
/** level (bits 0..15) | meta (bits 16..18). */
const I_LEVELMETA = 13;

export class SlotTable {
  /** Per chunk, two views of one buffer: row r's doubles at r*8, its int32s at r*16. */
  private f64: Float64Array[] = [];
  private i32: Int32Array[] = [];

  /** Rows allocated across all chunks. */
  capacity = 0;
  /** High-water mark: slots [0, used) have been handed out at least once. */
  used = 0;
  freeHead = NIL;
  freeCount = 0;

  constructor() {
    this.reset();
  }

  /** Allocates: drops every chunk and starts over at INITIAL_SLOTS (used after cancelAll). */
  reset(): void {
    const buf = new ArrayBuffer(INITIAL_SLOTS * ROW_BYTES);
    this.f64 = [new Float64Array(buf)];
    this.i32 = [new Int32Array(buf)];
    this.capacity = INITIAL_SLOTS;
    this.used = 0;
    this.freeHead = NIL;
    this.freeCount = 0;
  }

  get live(): number {
    return this.used - this.freeCount;
  }

  /** Returns a slot marked live; its other fields hold stale values the caller must overwrite (init). */
  alloc(): number {
    let s = this.freeHead;
    if (s !== NIL) {
      this.freeHead = this.i32[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 4) + I_NEXT];
      this.freeCount--;
    } else {
      if (this.used === this.capacity) this.grow();
      s = this.used++;
    }
    this.i32[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 4) + I_LEVELMETA] = META_LIVE << 16;
    return s;
  }

  release(s: number): void {
    const a = this.i32[s >>> CHUNK_SHIFT];
    const o = (s & CHUNK_MASK) << 4;
    a[o + I_LEVELMETA] = 0;
    a[o + I_NEXT] = this.freeHead;
    this.freeHead = s;
    this.freeCount++;
  }

  /** Allocates: a chunk-0 copy (bounded by CHUNK_SLOTS rows) or one fresh chunk. */
  private grow(): void {
    if (this.capacity < CHUNK_SLOTS) {
      const buf = new ArrayBuffer(this.capacity * 2 * ROW_BYTES);
      new Uint8Array(buf).set(new Uint8Array(this.f64[0].buffer));
      this.f64[0] = new Float64Array(buf);
      this.i32[0] = new Int32Array(buf);
      this.capacity *= 2;
      return;
    }
    const buf = new ArrayBuffer(CHUNK_SLOTS * ROW_BYTES);
    this.f64.push(new Float64Array(buf));
    this.i32.push(new Int32Array(buf));
    this.capacity += CHUNK_SLOTS;
  }

  get chunkCount(): number {
    return this.f64.length;
  }

  /** Writes a new order's whole row (the resting-add hot path). */
  init(s: number, handle: number, owner: number, side: number, outcome: number, level: number, remaining: number, expiresAt: number, seq: number, prev: number): void {
    const c = s >>> CHUNK_SHIFT;
    const f = this.f64[c];
    const a = this.i32[c];
    const fo = (s & CHUNK_MASK) << 3;
    const io = fo << 1;
    f[fo + F_HANDLE] = handle;
    f[fo + F_OWNER] = owner;
    f[fo + F_REMAINING] = remaining;
    f[fo + F_EXPIRES] = expiresAt;
    f[fo + F_SEQ] = seq;
    a[io + I_PREV] = prev;
    a[io + I_NEXT] = NIL;
    a[io + I_HEAPPOS] = NIL;
    a[io + I_LEVELMETA] = (level & 0xffff) | ((META_LIVE | (side & META_SIDE) | ((outcome & 1) << META_OUTCOME_SHIFT)) << 16);
  }

  handle(s: number): number {
    return this.f64[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 3) + F_HANDLE];
  }
  owner(s: number): number {
    return this.f64[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 3) + F_OWNER];
  }
  remaining(s: number): number {
    return this.f64[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 3) + F_REMAINING];
  }
  setRemaining(s: number, v: number): void {
    this.f64[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 3) + F_REMAINING] = v;
  }
  expiresAt(s: number): number {
    return this.f64[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 3) + F_EXPIRES];
  }
  seq(s: number): number {
    return this.f64[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 3) + F_SEQ];
  }
  private levelMeta(s: number): number {
    return this.i32[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 4) + I_LEVELMETA];
  }
  isLive(s: number): boolean {
    return (this.levelMeta(s) & (META_LIVE << 16)) !== 0;
  }
  side(s: number): 0 | 1 {
    return ((this.levelMeta(s) >>> 16) & META_SIDE) as 0 | 1;
  }
  outcome(s: number): 0 | 1 {
    return ((this.levelMeta(s) >>> (16 + META_OUTCOME_SHIFT)) & 1) as 0 | 1;
  }
  /** Book side in outcome-0 space: 0 = bid (BUY 0, SELL 1), 1 = ask (SELL 0, BUY 1). */
  bookSide(s: number): 0 | 1 {
    const m = this.levelMeta(s) >>> 16;
    return ((m ^ (m >>> 1)) & 1) as 0 | 1;
  }
  /** Tick index in outcome-0 space. */
  level(s: number): number {
    return this.levelMeta(s) & 0xffff;
  }
  prev(s: number): number {
    return this.i32[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 4) + I_PREV];
  }
  setPrev(s: number, v: number): void {
    this.i32[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 4) + I_PREV] = v;
  }
  /** Next slot in the level's FIFO for a live slot; next free slot for a free one. */
  next(s: number): number {
    return this.i32[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 4) + I_NEXT];
  }
  setNext(s: number, v: number): void {
    this.i32[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 4) + I_NEXT] = v;
  }
  heapPos(s: number): number {
    return this.i32[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 4) + I_HEAPPOS];
  }
  setHeapPos(s: number, v: number): void {
    this.i32[s >>> CHUNK_SHIFT][((s & CHUNK_MASK) << 4) + I_HEAPPOS] = v;
  }
}

const EMPTY_I32 = new Int32Array(0);
const EMPTY_F64 = new Float64Array(0);
const EMPTY_U32 = new Uint32Array(0);

export class LevelColumns {
  /** Level count n = 10_000 / tick; valid indices are 1..n-1, 0 and n serve as "none" sentinels. */
  readonly n: number;
  private headA: Int32Array = EMPTY_I32;
  private tailA: Int32Array = EMPTY_I32;
  private totalA: Float64Array = EMPTY_F64;
  private bits: Uint32Array = EMPTY_U32;

  constructor(n: number) {
    this.n = n;
  }

  get allocated(): boolean {
    return this.headA.length !== 0;
  }

  /** Allocates: once per market, on its first resting order. */
  ensure(): void {
    if (this.headA.length !== 0) return;
    this.headA = new Int32Array(this.n + 1).fill(NIL);
    this.tailA = new Int32Array(this.n + 1).fill(NIL);
    this.totalA = new Float64Array(this.n + 1);
    this.bits = new Uint32Array((this.n + 32) >>> 5);
  }

  /** Frees the arrays; the next ensure() starts empty. Callers guarantee no order rests. */
  release(): void {
    this.headA = EMPTY_I32;
    this.tailA = EMPTY_I32;
    this.totalA = EMPTY_F64;
    this.bits = EMPTY_U32;
  }

  head(l: number): number {
    return this.headA[l];
  }
  setHead(l: number, s: number): void {
    this.headA[l] = s;
  }
  tail(l: number): number {
    return this.tailA[l];
  }
  setTail(l: number, s: number): void {
    this.tailA[l] = s;
  }
  total(l: number): number {
    return this.totalA[l];
  }
  setTotal(l: number, v: number): void {
    this.totalA[l] = v;
  }

  isMarked(l: number): boolean {
    return (this.bits[l >>> 5] & (1 << (l & 31))) !== 0;
  }
  mark(l: number): void {
    this.bits[l >>> 5] |= 1 << (l & 31);
  }
  unmark(l: number): void {
    this.bits[l >>> 5] &= ~(1 << (l & 31));
  }

  /** Lowest non-empty level above l, or n when there is none. */
  nextAbove(l: number): number {
    const start = l + 1;
    const bits = this.bits;
    const words = bits.length;
    let w = start >>> 5;
    if (w >= words) return this.n;
    let word = bits[w] & (-1 << (start & 31));
    for (;;) {
      if (word !== 0) {
        const r = (w << 5) + 31 - Math.clz32(word & -word);
        return r < this.n ? r : this.n;
      }
      if (++w >= words) return this.n;
      word = bits[w];
    }
  }

  /** Highest non-empty level below l, or 0 when there is none. */
  prevBelow(l: number): number {
    const start = l - 1;
    if (start <= 0) return 0;
    const bits = this.bits;
    let w = start >>> 5;
    if (w >= bits.length) return 0;
    let word = bits[w] & (-1 >>> (31 - (start & 31)));
    for (;;) {
      if (word !== 0) return (w << 5) + 31 - Math.clz32(word);
      if (--w < 0) return 0;
      word = bits[w];
    }
  }
}

const INITIAL_INDEX = 16;
const TWO_POW_M32 = 1 / 4294967296;
/** Entries moved from the old table per put while a resize is under way. */
const MIGRATE_ENTRIES = 8;
/** Buckets scanned per put while a resize is under way (bounds the work when the old table is sparse). */
const MIGRATE_SCAN = 64;
const EMPTY_BUCKETS = new Float64Array(0);

/**
 * Buckets are interleaved (key at 2i, slot + 1 at 2i + 1, 0 = empty) so a probe touches one cache line and
 * a fresh table needs no fill pass: a zeroed buffer is already empty.
 *
 * Resizing is incremental. When the load would pass 1/2 the table becomes `old` and an empty table of twice
 * the size takes its place; every later put moves up to MIGRATE_ENTRIES entries across (scanning old from
 * bucket 0, removing each with backward shift so old stays probe-consistent). Until old is empty, get and
 * remove look in both tables. The migration is done long before the next resize can be due: that needs the
 * entry count to double, i.e. at least old-capacity / 2 more puts, while moving old's entries takes at most
 * old-capacity / 2 / MIGRATE_ENTRIES puts (a safety net finishes it synchronously anyway).
 */
export class HandleIndex {
  private buf: Float64Array = new Float64Array(2 * INITIAL_INDEX);
  private mask = INITIAL_INDEX - 1;
  private shift = 32 - Math.log2(INITIAL_INDEX);
  /** Entries in buf. */
  private curCount = 0;
  private old: Float64Array = EMPTY_BUCKETS;
  private oldMask = 0;
  private oldShift = 0;
  /** Entries still in old. */
  private oldCount = 0;
  private migratePos = 0;

  /** Allocates: back to the initial capacity. */
  reset(): void {
    this.buf = new Float64Array(2 * INITIAL_INDEX);
    this.mask = INITIAL_INDEX - 1;
    this.shift = 32 - Math.log2(INITIAL_INDEX);
    this.curCount = 0;
    this.old = EMPTY_BUCKETS;
    this.oldCount = 0;
    this.migratePos = 0;
  }

  get count(): number {
    return this.curCount + this.oldCount;
  }

  get capacity(): number {
    return this.mask + 1;
  }

  get resizing(): boolean {
    return this.oldCount > 0;
  }

  /** Fibonacci hashing over both 32-bit halves, so sequential and strided handles spread evenly. */
  private static home(h: number, shift: number): number {
    return Math.imul((h >>> 0) ^ Math.imul((h * TWO_POW_M32) >>> 0, 0x85ebca6b), 0x9e3779b1) >>> shift;
  }

  /** Slot of h, or NIL. */
  get(h: number): number {
    const buf = this.buf;
    const mask = this.mask;
    let i = HandleIndex.home(h, this.shift);
    for (;;) {
      const v = buf[2 * i + 1];
      if (v === 0) break;
      if (buf[2 * i] === h) return v - 1;
      i = (i + 1) & mask;
    }
    return this.oldCount === 0 ? NIL : this.getOld(h);
  }

  private getOld(h: number): number {
    const old = this.old;
    const mask = this.oldMask;
    let i = HandleIndex.home(h, this.oldShift);
    for (;;) {
      const v = old[2 * i + 1];
      if (v === 0) return NIL;
      if (old[2 * i] === h) return v - 1;
      i = (i + 1) & mask;
    }
  }

  /** The handle must be absent. */
  put(h: number, slot: number): void {
    if (this.oldCount > 0) this.migrate();
    if ((this.curCount + this.oldCount + 1) * 2 > this.mask + 1) this.startResize();
    insert(this.buf, this.mask, HandleIndex.home(h, this.shift), h, slot + 1);
    this.curCount++;
  }

  remove(h: number): boolean {
    const buf = this.buf;
    const mask = this.mask;
    let i = HandleIndex.home(h, this.shift);
    for (;;) {
      const v = buf[2 * i + 1];
      if (v === 0) break;
      if (buf[2 * i] === h) {
        removeAt(buf, mask, this.shift, i);
        this.curCount--;
        return true;
      }
      i = (i + 1) & mask;
    }
    if (this.oldCount === 0) return false;
    const old = this.old;
    const oldMask = this.oldMask;
    i = HandleIndex.home(h, this.oldShift);
    for (;;) {
      const v = old[2 * i + 1];
      if (v === 0) return false;
      if (old[2 * i] === h) {
        removeAt(old, oldMask, this.oldShift, i);
        this.oldCount--;
        if (this.oldCount === 0) this.old = EMPTY_BUCKETS;
        return true;
      }
      i = (i + 1) & oldMask;
    }
  }

  /** Allocates: a zeroed table of twice the capacity; entries move over in later puts. */
  private startResize(): void {
    if (this.oldCount > 0) this.migrate(Infinity);
    this.old = this.buf;
    this.oldMask = this.mask;
    this.oldShift = this.shift;
    this.oldCount = this.curCount;
    this.migratePos = 0;
    const cap = (this.mask + 1) * 2;
    this.buf = new Float64Array(2 * cap);
    this.mask = cap - 1;
    this.shift = 32 - Math.log2(cap);
    this.curCount = 0;
  }

  private migrate(budget = MIGRATE_ENTRIES): void {
    const old = this.old;
    const oldMask = this.oldMask;
    let scan = budget === Infinity ? Infinity : MIGRATE_SCAN;
    let moved = 0;
    let j = this.migratePos;
    while (moved < budget && scan-- > 0 && this.oldCount > 0) {
      const v = old[2 * j + 1];
      if (v === 0) {
        j = (j + 1) & oldMask;
        continue;
      }
      const h = old[2 * j];
      // Backward shift may pull a later entry into j, so j is examined again rather than advanced.
      removeAt(old, oldMask, this.oldShift, j);
      this.oldCount--;
      insert(this.buf, this.mask, HandleIndex.home(h, this.shift), h, v);
      this.curCount++;
      moved++;
    }
    this.migratePos = j;
    if (this.oldCount === 0) this.old = EMPTY_BUCKETS;
  }

  /** Allocates: every (handle, slot) in both tables; checkBook only. */
  entries(): Array<[handle: number, slot: number]> {
    const out: Array<[number, number]> = [];
    for (const t of [this.buf, this.old]) {
      for (let i = 1; i < t.length; i += 2) if (t[i] !== 0) out.push([t[i - 1], t[i] - 1]);
    }
    return out;
  }
}

function insert(buf: Float64Array, mask: number, home: number, h: number, stored: number): void {
  let i = home;
  while (buf[2 * i + 1] !== 0) i = (i + 1) & mask;
  buf[2 * i] = h;
  buf[2 * i + 1] = stored;
}

/**
 * Empties bucket i by backward shift: later entries of the cluster move into the hole unless that would put
 * one in front of its home bucket, so every key stays reachable from its home without tombstones.
 */
function removeAt(buf: Float64Array, mask: number, shift: number, i: number): void {
  let j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (buf[2 * j + 1] === 0) break;
    const k = Math.imul((buf[2 * j] >>> 0) ^ Math.imul((buf[2 * j] * TWO_POW_M32) >>> 0, 0x85ebca6b), 0x9e3779b1) >>> shift;
    const stays = i <= j ? i < k && k <= j : i < k || k <= j;
    if (!stays) {
      buf[2 * i] = buf[2 * j];
      buf[2 * i + 1] = buf[2 * j + 1];
      i = j;
    }
  }
  buf[2 * i + 1] = 0;
}

const INITIAL_HEAP = 16;

export class ExpiryHeap {
  private a = new Int32Array(INITIAL_HEAP);
  size = 0;

  constructor(private readonly slots: SlotTable) {}

  /** Allocates: back to the initial capacity. */
  reset(): void {
    this.a = new Int32Array(INITIAL_HEAP);
    this.size = 0;
  }

  at(i: number): number {
    return this.a[i];
  }

  top(): number {
    return this.size === 0 ? NIL : this.a[0];
  }

  /** Earlier expiry first; equal expiries by handle, so the order never depends on slot reuse. */
  private less(x: number, y: number): boolean {
    const ex = this.slots.expiresAt(x);
    const ey = this.slots.expiresAt(y);
    return ex < ey || (ex === ey && this.slots.handle(x) < this.slots.handle(y));
  }

  push(s: number): void {
    if (this.size === this.a.length) {
      const b = new Int32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.size] = s;
    this.slots.setHeapPos(s, this.size);
    this.size++;
    this.up(this.size - 1);
  }

  remove(s: number): void {
    const i = this.slots.heapPos(s);
    this.slots.setHeapPos(s, NIL);
    const last = --this.size;
    if (i === last) return;
    const m = this.a[last];
    this.a[i] = m;
    this.slots.setHeapPos(m, i);
    if (i > 0 && this.less(m, this.a[(i - 1) >>> 1])) this.up(i);
    else this.down(i);
  }

  private up(i: number): void {
    const a = this.a;
    const s = a[i];
    while (i > 0) {
      const p = (i - 1) >>> 1;
      const ps = a[p];
      if (!this.less(s, ps)) break;
      a[i] = ps;
      this.slots.setHeapPos(ps, i);
      i = p;
    }
    a[i] = s;
    this.slots.setHeapPos(s, i);
  }

  private down(i: number): void {
    const a = this.a;
    const n = this.size;
    const s = a[i];
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && this.less(a[c + 1], a[c])) c++;
      const cs = a[c];
      if (!this.less(cs, s)) break;
      a[i] = cs;
      this.slots.setHeapPos(cs, i);
      i = c;
    }
    a[i] = s;
    this.slots.setHeapPos(s, i);
  }
}
