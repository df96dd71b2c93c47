/**
 * Deferred view writes: the one clock that issues the writes of every overlay (view-store.ts) and the
 * projector's cursors (projector.ts) together, coalesced, in one synchronous turn. Owns when writes leave
 * and in which order (cursors last); what a write is and how it is read back before its commit is
 * view-store.ts's. Separate because it is the read models' only tie to the journal's transactions (ride),
 * and its timing is its whole job.
 *
 * Deferred writes. A projection APPLIES an event at once, but its writes reach LMDB later, coalesced: a
 * `ViewWrites` holds the writes of every overlay that shares it (views, prices, the market-data overlays,
 * the midpoint samples) and the projector's cursors, and issues all of them in one synchronous turn, so
 * in one lmdb-js transaction, at most once every `delayMs` (20 ms). A key written again before that turn
 * is issued once, with its last value. Why: issued at once, every engine commit (a transaction every ~3
 * ms at 5,000 orders/s, 15-20 orders each) was followed by a transaction rewriting the same per-wallet
 * and per-market leaf pages of `views` and `prices`; that doubled the bytes written per order (about 5 KB
 * -> 12 KB) and cost LMDB's commit thread 6-15 µs per order.
 * When: the engine's next journal commit takes them along (`ride`, called by the group commit right
 * before it issues a batch, so they join that transaction) once the oldest has been held `rideAfterMs`
 * (20 ms); when no commit comes, a timer issues them `delayMs` (50 ms) after the first was held, in a
 * transaction of their own. Why ride: on this VM a durable transaction costs an fsync and several thread
 * wake-ups, hundreds of µs of CPU; at 100 orders/s every order's view writes were a second transaction,
 * 20 ms after the order's own. Why wait before riding: coalescing, as above (at 1,000 orders/s a commit
 * leaves every 1-2 ms).
 *
 * Crash consistency. A cursor is issued only in a flush, and a flush issues every view write held,
 * cursors last: a cursor never reaches LMDB before the view writes of the events up to it, and both land
 * in one transaction. A flush happens only between events (the timer, the explicit `flush()`, or the
 * projector itself), never inside a projection's `apply`. Memory is bounded: once `bound` writes are held
 * the projector flushes right after the event that reached it, and `catchUp()` flushes after each of its
 * batches. If issuing a write throws (a closed store, a value that cannot be encoded), cursors are no
 * longer issued at all: the views may run ahead of the cursors, which a replay tolerates (every
 * projection is idempotent over its own views), but never behind them.
 *
 *
 * Imports runtime/log.ts only.
 */
import type { Logger } from '../runtime/log.ts';

/** Something holding writes for the next flush: an overlay, or the projector's cursors. */
export interface ViewSink {
  /** Issues every write it holds, synchronously (so they join the flush's transaction), and holds none. */
  issue(): void;
}

export interface ViewWritesOptions {
  /** Longest a write is held before it is issued (in a transaction of its own if no journal commit took it). Default 50 ms. */
  delayMs?: number;
  /** How long held writes wait before a journal commit takes them along (`ride`). Default 20 ms. */
  rideAfterMs?: number;
  /** Writes held (one per key) at which the projector flushes at once. Default 20,000. */
  bound?: number;
}

/**
 * The one clock of deferred view writes: overlays and the projector register here, tell it when they hold
 * a write for a key they did not hold yet (`add`), and it issues them all together, cursors last. The
 * timer is unref'd (it never keeps the process up) and `close()` flushes and stops it; a write added after
 * `close()` waits for an explicit `flush()`.
 */
export class ViewWrites {
  readonly delayMs: number;
  readonly rideAfterMs: number;
  readonly bound: number;
  /** When the oldest held write was added (performance.now()). */
  private heldSince = 0;
  private readonly sinks: ViewSink[] = [];
  private readonly cursorSinks: ViewSink[] = [];
  private held = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private failure: unknown = undefined;

  constructor(
    private readonly log: Logger,
    opts: ViewWritesOptions = {},
  ) {
    this.delayMs = opts.delayMs ?? 50;
    this.rideAfterMs = Math.min(opts.rideAfterMs ?? 20, this.delayMs);
    this.bound = opts.bound ?? 20_000;
  }

  /** An overlay: its writes are issued before any cursor of the same flush. */
  register(sink: ViewSink): void {
    this.sinks.push(sink);
  }

  /** The projector's cursors: issued last, and never once an overlay failed to issue its writes. */
  registerCursors(sink: ViewSink): void {
    this.cursorSinks.push(sink);
  }

  /** A sink holds one more write (a key it did not hold): the flush is due within `delayMs`. */
  add(): void {
    this.held++;
    if (this.timer === undefined && !this.closed) {
      this.heldSince = performance.now();
      this.timer = setTimeout(this.onTimer, this.delayMs);
      this.timer.unref();
    }
  }

  /** Writes held for the next flush, one per key and sink (cursors included). */
  get pending(): number {
    return this.held;
  }

  /** Whether the held writes reached the bound (the projector then flushes after the current event). */
  get full(): boolean {
    return this.held >= this.bound;
  }

  /** The first error an overlay threw while issuing, if any (cursors have not been issued since). */
  get failed(): unknown {
    return this.failure;
  }

  /**
   * Issues every held write now, in this turn: one transaction. Must not run inside a projection's
   * `apply` (its event's writes would go out without the cursor that covers them; harmless, but a
   * replay then re-applies it). Never throws: a failure is logged and stops the cursors (header).
   */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.held === 0) return;
    this.held = 0;
    for (const s of this.sinks) this.issue(s);
    if (this.failure !== undefined) return;
    for (const s of this.cursorSinks) this.issue(s);
  }

  /**
   * A journal batch is about to be issued in this turn (group commit's rider): the held writes join its
   * transaction if the oldest has waited `rideAfterMs`. Same rules as flush(): never inside an `apply`.
   */
  ride(): void {
    if (this.held > 0 && performance.now() - this.heldSince >= this.rideAfterMs) this.flush();
  }

  /** Shutdown: issues what is held and stops the timer for good. Call before the store closes. */
  close(): void {
    this.closed = true;
    this.flush();
  }

  private issue(s: ViewSink): void {
    try {
      s.issue();
    } catch (err) {
      if (this.failure !== undefined) return;
      this.failure = err;
      this.log.error({ err }, 'view writes failed to issue; projection cursors are no longer saved, the next start replays from the last saved ones');
    }
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.flush();
  };
}
