/**
 * Single-producer / single-consumer ring of fixed-size records over a SharedArrayBuffer.
 *
 * Layout. One SharedArrayBuffer holds a header of HEADER_INTS Int32 words and, after it, the slots as one
 * Float64Array (every record field is a JS number; Float64 keeps integers exact up to 2^53):
 *
 *   header: Int32Array[HEADER_INTS]                                  data: Float64Array
 *   +------+--pad--+------+--pad--+-------+-------+-----+-------+     +--------+--------+-----+----------+
 *   | HEAD |       | TAIL |       | C_SLP | P_SLP | CAP | WORDS |     | slot 0 | slot 1 | ... | slot N-1 |
 *   +------+--pad--+------+--pad--+-------+-------+-----+-------+     +--------+--------+-----+----------+
 *    consumer-only  producer-only  consumer  producer  fixed at creation   slot = WORDS Float64 words
 *    writes         writes         sets/clears  sets/clears
 *
 *   HEAD and TAIL sit 64 bytes apart so the two threads never write the same cache line.
 *
 *               head (next to read)            tail (next to write)
 *                  v                              v
 *   | free | free | rec  | rec  | rec  | rec  | free | free |        slot of counter c = c & (N - 1)
 *
 * Counters. HEAD and TAIL are free-running Int32 counters that wrap at 2^32; `used = (tail - head) | 0` is
 * correct across the wrap because N <= 2^30. Capacity N is a power of two, so a slot index is a mask.
 *   - empty: used == 0 (head == tail);  full: used == N.  0 <= used <= N always holds.
 *   - Only the producer writes TAIL, only the consumer writes HEAD.
 *   - The producer fills slots at its private write counter (>= TAIL) and then publishes them all with one
 *     Atomics.store(TAIL). A slot is readable once the consumer's Atomics.load(TAIL) has passed it: atomics
 *     are sequentially consistent, so the plain Float64 writes before the store are visible after the load.
 *   - The consumer reads slots at its private read counter (>= HEAD) and gives them back with one
 *     Atomics.store(HEAD) after it has copied what it needs. The producer writes a slot only when its
 *     Atomics.load(HEAD) shows the slot free: a record is never overwritten before it was read.
 *
 * Waiting (no busy loop). A side with nothing to do sets its *sleeping* flag, re-reads the other side's
 * counter and only then waits on it (Atomics.wait in a worker, Atomics.waitAsync on the main thread, which
 * must never block). The other side notifies only when it sees the flag set, which keeps Atomics.notify off
 * the hot path under load. The catch this ordering avoids: a flag set after the re-read could miss a
 * publish that happened in between and sleep forever; set before, either the re-read sees the new counter
 * or the waker sees the flag (sequential consistency rules out both missing). The wait passes the counter
 * value it saw, so a publish between the re-read and the wait returns 'not-equal' at once.
 *
 * Backpressure. A full ring never drops and never grows: `tryClaim` returns -1 and the producer decides.
 * The worker blocks in `claimBlocking` (Atomics.wait on HEAD); the main thread keeps a bounded queue of
 * its own and awaits `waitForSpace` (see shard-link.ts). Consumers drain everything available per wake-up.
 *
 * Limitations: exactly one producer thread and one consumer thread per ring; records are fixed size.
 */

const HEAD = 0;
const TAIL = 16;
const CONSUMER_SLEEPING = 32;
const PRODUCER_SLEEPING = 33;
const CAPACITY = 34;
const SLOT_WORDS = 35;
/** 64 Int32 = 256 bytes, a multiple of 8 so the Float64 data that follows is aligned. */
export const HEADER_INTS = 64;

type WaitAsyncResult = { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
/** Atomics.waitAsync exists in Node 20 but not in the ES2023 lib typings this project compiles against. */
const waitAsync = (Atomics as unknown as { waitAsync: (a: Int32Array, i: number, v: number, t?: number) => WaitAsyncResult }).waitAsync;

const RESOLVED = Promise.resolve();

export class Ring {
  readonly sab: SharedArrayBuffer;
  readonly header: Int32Array;
  /** Slot words; record i (counter c) starts at word (c & mask) * slotWords. */
  readonly words: Float64Array;
  readonly capacity: number;
  readonly mask: number;
  readonly slotWords: number;
  /** Producer side: next counter to write; TAIL lags it until publish(). */
  private writeAt: number;
  /** Producer side: HEAD as last seen, so a non-full ring needs no atomic load per claim. */
  private headSeen: number;
  /** Consumer side: next counter to read; HEAD lags it until release(). */
  private readAt: number;
  /** Consumer side: TAIL as last seen. */
  private tailSeen: number;

  /** Allocates: a new SharedArrayBuffer. `capacity` must be a power of two in [2, 2^30]. */
  static create(capacity: number, slotWords: number): Ring {
    if (!Number.isInteger(capacity) || capacity < 2 || capacity > 2 ** 30 || (capacity & (capacity - 1)) !== 0) {
      throw new Error(`ring capacity must be a power of two in [2, 2^30], got ${capacity}`);
    }
    if (!Number.isInteger(slotWords) || slotWords < 1) throw new Error(`ring slot size must be a positive integer, got ${slotWords}`);
    const sab = new SharedArrayBuffer(HEADER_INTS * 4 + capacity * slotWords * 8);
    const header = new Int32Array(sab, 0, HEADER_INTS);
    header[CAPACITY] = capacity;
    header[SLOT_WORDS] = slotWords;
    return new Ring(sab);
  }

  /** Opens a ring created elsewhere (the other thread's end). */
  static attach(sab: SharedArrayBuffer): Ring {
    return new Ring(sab);
  }

  private constructor(sab: SharedArrayBuffer) {
    this.sab = sab;
    this.header = new Int32Array(sab, 0, HEADER_INTS);
    this.capacity = this.header[CAPACITY];
    this.slotWords = this.header[SLOT_WORDS];
    this.mask = this.capacity - 1;
    this.words = new Float64Array(sab, HEADER_INTS * 4, this.capacity * this.slotWords);
    this.writeAt = Atomics.load(this.header, TAIL);
    this.headSeen = Atomics.load(this.header, HEAD);
    this.readAt = Atomics.load(this.header, HEAD);
    this.tailSeen = Atomics.load(this.header, TAIL);
  }

  // ---- producer ------------------------------------------------------------------------------------

  /** Slots the producer can still claim (published or not). */
  freeSlots(): number {
    this.headSeen = Atomics.load(this.header, HEAD);
    return this.capacity - ((this.writeAt - this.headSeen) | 0);
  }

  /**
   * Claims the next slot and returns the word offset to write the record at, or -1 when the ring is full.
   * The record becomes visible to the consumer at the next publish().
   */
  tryClaim(): number {
    if (((this.writeAt - this.headSeen) | 0) >= this.capacity) {
      this.headSeen = Atomics.load(this.header, HEAD);
      if (((this.writeAt - this.headSeen) | 0) >= this.capacity) return -1;
    }
    const off = (this.writeAt & this.mask) * this.slotWords;
    this.writeAt = (this.writeAt + 1) | 0;
    return off;
  }

  /**
   * Worker side: claims a slot, blocking the thread while the ring is full. Publishes what was written so
   * far before it waits, or the consumer could never free a slot (it only sees published records).
   */
  claimBlocking(): number {
    let off = this.tryClaim();
    while (off < 0) {
      this.publish();
      const h = this.header;
      Atomics.store(h, PRODUCER_SLEEPING, 1);
      const head = Atomics.load(h, HEAD);
      if (((this.writeAt - head) | 0) >= this.capacity) Atomics.wait(h, HEAD, head, 1000);
      Atomics.store(h, PRODUCER_SLEEPING, 0);
      off = this.tryClaim();
    }
    return off;
  }

  /** Claimed but not yet published records. */
  unpublished(): number {
    return (this.writeAt - Atomics.load(this.header, TAIL)) | 0;
  }

  /** Makes every claimed record visible and wakes the consumer if it sleeps. */
  publish(): void {
    const h = this.header;
    if (Atomics.load(h, TAIL) === this.writeAt) return;
    Atomics.store(h, TAIL, this.writeAt);
    if (Atomics.load(h, CONSUMER_SLEEPING) !== 0) Atomics.notify(h, TAIL);
  }

  /** Main-thread side: resolves when at least one slot is free (never blocks the event loop). */
  waitForSpace(timeoutMs?: number): Promise<unknown> {
    return sleepUntil(this.header, PRODUCER_SLEEPING, HEAD, (head) => ((this.writeAt - head) | 0) < this.capacity, timeoutMs);
  }

  // ---- consumer ------------------------------------------------------------------------------------

  /** Published records not yet consumed. */
  available(): number {
    this.tailSeen = Atomics.load(this.header, TAIL);
    return (this.tailSeen - this.readAt) | 0;
  }

  /**
   * Word offset of the next record, advancing the read counter. Call only while `available()` said a
   * record is there; the slot stays reserved for the consumer until release().
   */
  consume(): number {
    const off = (this.readAt & this.mask) * this.slotWords;
    this.readAt = (this.readAt + 1) | 0;
    return off;
  }

  /** Word offset of the record `i` places after the next one, without consuming (i < available()). */
  peek(i: number): number {
    return (((this.readAt + i) | 0) & this.mask) * this.slotWords;
  }

  /** Gives consumed slots back to the producer and wakes it if it waits for space. */
  release(): void {
    const h = this.header;
    if (Atomics.load(h, HEAD) === this.readAt) return;
    Atomics.store(h, HEAD, this.readAt);
    if (Atomics.load(h, PRODUCER_SLEEPING) !== 0) Atomics.notify(h, HEAD);
  }

  /** Worker side: blocks until a record is published or the timeout passes. */
  waitForData(timeoutMs?: number): void {
    const h = this.header;
    Atomics.store(h, CONSUMER_SLEEPING, 1);
    const tail = Atomics.load(h, TAIL);
    if (tail === this.readAt) Atomics.wait(h, TAIL, tail, timeoutMs);
    Atomics.store(h, CONSUMER_SLEEPING, 0);
  }

  /**
   * Resolves when a record is published (or after `timeoutMs`) without blocking the thread, so timers and
   * messages keep running: the main thread uses it always, the worker too (its GTD timer must fire).
   */
  waitForDataAsync(timeoutMs?: number): Promise<unknown> {
    return sleepUntil(this.header, CONSUMER_SLEEPING, TAIL, (tail) => tail !== this.readAt, timeoutMs);
  }

  /** Wakes a consumer blocked in waitForData/waitForDataAsync without publishing (shutdown). */
  wakeConsumer(): void {
    Atomics.notify(this.header, TAIL);
  }
}

/**
 * The async wait of either side: raises its sleeping flag (so the other side knows to notify), then
 * resolves at once if `ready` holds for the header word it waits on, else when that word moves or the
 * timeout passes; the flag is lowered in every case. The flag goes up before the word is read, so a move
 * between the read and the wait still notifies.
 */
function sleepUntil(h: Int32Array, flag: number, word: number, ready: (seen: number) => boolean, timeoutMs: number | undefined): Promise<unknown> {
  Atomics.store(h, flag, 1);
  const seen = Atomics.load(h, word);
  if (ready(seen)) {
    Atomics.store(h, flag, 0);
    return RESOLVED;
  }
  const r = waitAsync(h, word, seen, timeoutMs);
  if (!r.async) {
    Atomics.store(h, flag, 0);
    return RESOLVED;
  }
  return r.value.then(() => Atomics.store(h, flag, 0));
}
