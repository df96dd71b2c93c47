/**
 * The state of the production order book of one market: price levels, FIFO queues, handle index, best
 * bid/ask, GTD expiry, and every operation on them except matching. Matching lives in `match.ts` (its
 * header is the spec of the rules) and `book.ts` joins the two into the book the shards use; this module
 * and the matcher do not import each other. Memory layout in `layout.ts`. This file turns the layout's
 * stores into a book:
 *
 *   - one level array indexed by tick in outcome-0 space serves both sides: a book that is never crossed
 *     at rest has bids only at levels <= bestBid and asks only at levels >= bestAsk, so no level ever
 *     holds both sides and a level needs no side of its own;
 *   - a level is an intrusive doubly-linked FIFO (slots' prev/next) with its total size kept current;
 *   - bestBid/bestAsk are tick indices with sentinels 0 (no bid) and n (no ask); when the best level
 *     empties, the level bitmap finds the next one (a word scan, 32 levels per step);
 *   - cancel finds the slot through the handle index (O(1) expected) and unlinks it in O(1), plus
 *     O(log g) to leave the expiry heap for a GTD order (g = resting GTD orders);
 *   - expire() pops the expiry heap, then emits the expired orders in priority order (bids best first,
 *     then asks best first, FIFO within a level) — the order reference-book.ts uses, so both books emit
 *     identical event streams;
 *   - cancelAll() emits in the same priority order and then returns the market's memory to its idle size.
 */

import {
  CancelReason,
  MatchCode,
  PIPS_PER_UNIT_PRICE,
  Tif,
  type Cancel,
  type Depth,
  type EventSink,
  type Fill,
  type Level,
  type MarketParams,
  type MatchingBook,
  type Outcome,
  type PlaceCommand,
  type PlaceResult,
  type Side,
} from './api.ts';
import { BPS } from '../../domain/market-rules.ts';
import { BID, ExpiryHeap, HandleIndex, LevelColumns, NIL, SlotTable } from './layout.ts';

type OrderView = ReturnType<MatchingBook['orders']>[number];

/** Everything a book is but `place`, which the matcher provides (book.ts). */
export class BookState implements Omit<MatchingBook, 'place'> {
  readonly params: MarketParams;
  /** Fixed at creation: levels are indexed by it. A tick change means a new book rebuilt from orders(). */
  readonly tick: number;
  /** Level count, 10_000 / tick. */
  readonly n: number;
  readonly slots = new SlotTable();
  readonly levels: LevelColumns;
  readonly index = new HandleIndex();
  readonly heap: ExpiryHeap;
  bestBidL = 0;
  bestAskL: number;
  /** Arrival counter; FIFO order within a level is increasing seq. */
  private nextSeq = 0;

  /** Reused for every event and result: the sink copies, the caller reads before the next call. */
  readonly fillOut: Fill = {
    kind: 0,
    takerHandle: 0,
    makerHandle: 0,
    takerOwner: 0,
    makerOwner: 0,
    takerOutcome: 0,
    makerOutcome: 0,
    takerSide: 0,
    makerSide: 0,
    sizeUnits: 0,
    takerPricePips: 0,
    makerPricePips: 0,
    takerUsdc: 0,
    makerUsdc: 0,
    takerFee: 0,
    makerFee: 0,
    makerRemainingUnits: 0,
  };
  readonly cancelOut: Cancel = { handle: 0, owner: 0, outcome: 0, side: 0, pricePips: 0, remainingUnits: 0, reason: 0 };
  readonly result: PlaceResult = { code: MatchCode.OK, filledUnits: 0, restingUnits: 0 };

  /** Scratch for expire(): expired slots waiting to be emitted in priority order. */
  private expired = new Int32Array(16);

  constructor(params: MarketParams) {
    const t = params.tickPips;
    if (!Number.isInteger(t) || t < 1 || t > PIPS_PER_UNIT_PRICE / 2 || PIPS_PER_UNIT_PRICE % t !== 0) {
      throw new Error(`book: tickPips must divide ${PIPS_PER_UNIT_PRICE} and be at most half of it, got ${t}`);
    }
    for (const k of ['minSizeUnits', 'makerFeeBps', 'takerFeeBps'] as const) {
      const v = params[k];
      if (!Number.isSafeInteger(v) || v < 0) throw new Error(`book: ${k} must be a non-negative integer, got ${v}`);
    }
    if (params.makerFeeBps > BPS || params.takerFeeBps > BPS) throw new Error(`book: fee bps above ${BPS}`);
    this.params = params;
    this.tick = t;
    this.n = PIPS_PER_UNIT_PRICE / t;
    this.levels = new LevelColumns(this.n);
    this.bestAskL = this.n;
    this.heap = new ExpiryHeap(this.slots);
  }

  cancel(handle: number, sink: EventSink): MatchCode {
    const s = this.index.get(handle);
    if (s === NIL) return MatchCode.UNKNOWN_ORDER;
    this.emitCancel(s, CancelReason.USER, sink);
    this.removeResting(s);
    return MatchCode.OK;
  }

  expire(nowSec: number, sink: EventSink): number {
    const heap = this.heap;
    const slots = this.slots;
    let k = 0;
    for (;;) {
      const s = heap.top();
      if (s === NIL || !(slots.expiresAt(s) <= nowSec)) break;
      heap.remove(s);
      if (k === this.expired.length) {
        const b = new Int32Array(k * 2);
        b.set(this.expired);
        this.expired = b;
      }
      this.expired[k++] = s;
    }
    if (k === 0) return 0;
    const list = this.expired.subarray(0, k);
    if (k > 1) list.sort((a, b) => this.priorityCompare(a, b));
    for (let i = 0; i < k; i++) {
      const s = list[i];
      this.emitCancel(s, CancelReason.EXPIRED, sink);
      this.removeResting(s);
    }
    return k;
  }

  /** Negative when slot a comes before slot b in orders() order. */
  private priorityCompare(a: number, b: number): number {
    const slots = this.slots;
    const sa = slots.bookSide(a);
    const sb = slots.bookSide(b);
    if (sa !== sb) return sa - sb;
    const la = slots.level(a);
    const lb = slots.level(b);
    if (la !== lb) return sa === BID ? lb - la : la - lb;
    return slots.seq(a) - slots.seq(b);
  }

  cancelAll(reason: CancelReason, sink: EventSink): number {
    const count = this.slots.live;
    if (count === 0) return 0;
    const lv = this.levels;
    const slots = this.slots;
    for (let l = this.bestBidL; l > 0; l = lv.prevBelow(l)) {
      for (let s = lv.head(l); s !== NIL; s = slots.next(s)) this.emitCancel(s, reason, sink);
    }
    for (let l = this.bestAskL; l < this.n; l = lv.nextAbove(l)) {
      for (let s = lv.head(l); s !== NIL; s = slots.next(s)) this.emitCancel(s, reason, sink);
    }
    this.releaseMemory();
    return count;
  }

  /** Allocates: a resolved or wiped market goes back to idle size instead of keeping its peak arrays. */
  private releaseMemory(): void {
    this.slots.reset();
    this.levels.release();
    this.index.reset();
    this.heap.reset();
    this.bestBidL = 0;
    this.bestAskL = this.n;
  }

  nextExpiry(): number {
    const s = this.heap.top();
    return s === NIL ? 0 : this.slots.expiresAt(s);
  }

  bestBid(outcome: Outcome): number {
    if (outcome === 0) return this.bestBidL === 0 ? 0 : this.bestBidL * this.tick;
    return this.bestAskL === this.n ? 0 : PIPS_PER_UNIT_PRICE - this.bestAskL * this.tick;
  }

  bestAsk(outcome: Outcome): number {
    if (outcome === 0) return this.bestAskL === this.n ? 0 : this.bestAskL * this.tick;
    return this.bestBidL === 0 ? 0 : PIPS_PER_UNIT_PRICE - this.bestBidL * this.tick;
  }

  /** Allocates: snapshots, tests and admin only. */
  depth(outcome: Outcome): Depth {
    const lv = this.levels;
    const tick = this.tick;
    const bidLevels: Level[] = [];
    const askLevels: Level[] = [];
    if (this.slots.live === 0) return { bids: bidLevels, asks: askLevels };
    if (outcome === 0) {
      for (let l = lv.nextAbove(0); l <= this.bestBidL; l = lv.nextAbove(l)) {
        bidLevels.push({ pricePips: l * tick, sizeUnits: lv.total(l) });
      }
      for (let l = lv.prevBelow(this.n); l >= this.bestAskL; l = lv.prevBelow(l)) {
        askLevels.push({ pricePips: l * tick, sizeUnits: lv.total(l) });
      }
    } else {
      // Outcome 1's bids are outcome 0's asks at 10_000 - P: ascending in outcome-1 price means walking
      // outcome-0 asks from the highest down; its asks are outcome 0's bids walked from the lowest up.
      for (let l = lv.prevBelow(this.n); l >= this.bestAskL; l = lv.prevBelow(l)) {
        bidLevels.push({ pricePips: PIPS_PER_UNIT_PRICE - l * tick, sizeUnits: lv.total(l) });
      }
      for (let l = lv.nextAbove(0); l <= this.bestBidL; l = lv.nextAbove(l)) {
        askLevels.push({ pricePips: PIPS_PER_UNIT_PRICE - l * tick, sizeUnits: lv.total(l) });
      }
    }
    return { bids: bidLevels, asks: askLevels };
  }

  size(): number {
    return this.slots.live;
  }

  /** Allocates: tests and state hashing only. Bids best first, then asks best first, FIFO within a level. */
  orders(): OrderView[] {
    const out: OrderView[] = [];
    if (this.slots.live === 0) return out;
    const lv = this.levels;
    for (let l = this.bestBidL; l > 0; l = lv.prevBelow(l)) {
      for (let s = lv.head(l); s !== NIL; s = this.slots.next(s)) out.push(this.view(s));
    }
    for (let l = this.bestAskL; l < this.n; l = lv.nextAbove(l)) {
      for (let s = lv.head(l); s !== NIL; s = this.slots.next(s)) out.push(this.view(s));
    }
    return out;
  }

  private view(s: number): OrderView {
    const slots = this.slots;
    return {
      handle: slots.handle(s),
      owner: slots.owner(s),
      outcome: slots.outcome(s),
      side: slots.side(s),
      pricePips: this.ownPrice(s),
      remainingUnits: slots.remaining(s),
      expiresAt: slots.expiresAt(s),
    };
  }

  /** A resting order's limit price in its own outcome space. */
  ownPrice(s: number): number {
    const p = this.slots.level(s) * this.tick;
    return this.slots.outcome(s) === 0 ? p : PIPS_PER_UNIT_PRICE - p;
  }

  /**
   * Appends a new order at the tail of level l (the caller has checked that it does not cross).
   * GTD orders with expiresAt > 0 enter the expiry heap; any other expiresAt is stored as given (GTD) or
   * as 0 (GTC), so orders() reports what the command carried.
   */
  rest(cmd: PlaceCommand, l: number, bookSide: number, units: number): void {
    const slots = this.slots;
    const lv = this.levels;
    lv.ensure();
    const s = slots.alloc();
    const tail = lv.tail(l);
    const exp = cmd.tif === Tif.GTD ? cmd.expiresAt : 0;
    slots.init(s, cmd.handle, cmd.owner, cmd.side, cmd.outcome, l, units, exp, this.nextSeq++, tail);
    if (tail === NIL) {
      lv.setHead(l, s);
      lv.setTotal(l, units);
      lv.mark(l);
      if (bookSide === BID) {
        if (l > this.bestBidL) this.bestBidL = l;
      } else if (l < this.bestAskL) this.bestAskL = l;
    } else {
      slots.setNext(tail, s);
      lv.setTotal(l, lv.total(l) + units);
    }
    lv.setTail(l, s);
    this.index.put(cmd.handle, s);
    if (exp > 0) this.heap.push(s);
  }

  /** Takes `units` (less than what remains) from a resting order; it keeps its place in the queue. */
  reduce(s: number, units: number): void {
    this.slots.setRemaining(s, this.slots.remaining(s) - units);
    const l = this.slots.level(s);
    this.levels.setTotal(l, this.levels.total(l) - units);
  }

  /** Removes a resting order entirely: level queue, best pointers, handle index, expiry heap, slot. */
  removeResting(s: number): void {
    const slots = this.slots;
    const lv = this.levels;
    const l = slots.level(s);
    const p = slots.prev(s);
    const nx = slots.next(s);
    if (p === NIL) lv.setHead(l, nx);
    else slots.setNext(p, nx);
    if (nx === NIL) lv.setTail(l, p);
    else slots.setPrev(nx, p);
    if (p === NIL && nx === NIL) {
      lv.setTotal(l, 0);
      lv.unmark(l);
      if (l === this.bestBidL) this.bestBidL = lv.prevBelow(l);
      else if (l === this.bestAskL) this.bestAskL = lv.nextAbove(l);
    } else {
      lv.setTotal(l, lv.total(l) - slots.remaining(s));
    }
    this.index.remove(slots.handle(s));
    if (slots.heapPos(s) !== NIL) this.heap.remove(s);
    slots.release(s);
  }

  emitCancel(s: number, reason: CancelReason, sink: EventSink): void {
    const c = this.cancelOut;
    const slots = this.slots;
    c.handle = slots.handle(s);
    c.owner = slots.owner(s);
    c.outcome = slots.outcome(s);
    c.side = slots.side(s) as Side;
    c.pricePips = this.ownPrice(s);
    c.remainingUnits = slots.remaining(s);
    c.reason = reason;
    sink.cancel(c);
  }
}
