/**
 * checkBook(book): integrity checks callable after any operation (tests call it after every step; a debug
 * build may call it after every batch). Returns the list of violations, empty when the book is sound.
 * Allocates and walks everything: never on the hot path.
 *
 * Any MatchingBook gets the public-contract checks (not crossed, depth in both outcomes agrees with
 * orders() and with bestBid/bestAsk, mirroring, nextExpiry, size). The typed-array book (BookState) also
 * gets its internals checked: level queues (links, head/tail, totals, bitmap, FIFO arrival order, one side
 * per level), best pointers, slot liveness and the free list, handle index <-> slot agreement, and the
 * expiry heap against the resting GTD orders.
 */

import { onTick } from '../../domain/market-rules.ts';
import { LOT_UNITS, PIPS_PER_UNIT_PRICE, type Level, type MatchingBook, type Outcome } from './api.ts';
import { BookState } from './book-state.ts';
import { ASK, BID, NIL } from './layout.ts';

const MAX_REPORTED = 50;

export function checkBook(book: MatchingBook): string[] {
  const errors: string[] = [];
  checkContract(book, errors);
  if (book instanceof BookState) checkInternals(book, errors);
  return errors.length > MAX_REPORTED ? errors.slice(0, MAX_REPORTED).concat(`... ${errors.length - MAX_REPORTED} more`) : errors;
}

function checkContract(book: MatchingBook, errors: string[]): void {
  const orders = book.orders();
  if (book.size() !== orders.length) errors.push(`size() ${book.size()} != orders().length ${orders.length}`);

  // Rebuild outcome-0 depth from orders() and compare with depth() in both outcome spaces.
  const bidSizes = new Map<number, number>();
  const askSizes = new Map<number, number>();
  const handles = new Set<number>();
  let minExpiry = 0;
  for (const o of orders) {
    if (handles.has(o.handle)) errors.push(`handle ${o.handle} rests twice`);
    handles.add(o.handle);
    const key = o.outcome === 0 ? o.pricePips : PIPS_PER_UNIT_PRICE - o.pricePips;
    const isBid = (o.outcome === 0) === (o.side === 0);
    const m = isBid ? bidSizes : askSizes;
    m.set(key, (m.get(key) ?? 0) + o.remainingUnits);
    if (!(o.remainingUnits > 0) || o.remainingUnits % LOT_UNITS !== 0) {
      errors.push(`handle ${o.handle}: remaining ${o.remainingUnits} not a positive multiple of LOT_UNITS`);
    }
    if (!onTick(o.pricePips, book.params.tickPips)) {
      errors.push(`handle ${o.handle}: resting price ${o.pricePips} off tick or out of range`);
    }
    if (o.expiresAt > 0 && (minExpiry === 0 || o.expiresAt < minExpiry)) minExpiry = o.expiresAt;
  }
  const bidKeys = [...bidSizes.keys()].sort((a, b) => a - b);
  const askKeys = [...askSizes.keys()].sort((a, b) => b - a);
  const bestBidKey = bidKeys.length > 0 ? bidKeys[bidKeys.length - 1] : 0;
  const bestAskKey = askKeys.length > 0 ? askKeys[askKeys.length - 1] : 0;
  if (bestBidKey !== 0 && bestAskKey !== 0 && bestBidKey >= bestAskKey) {
    errors.push(`crossed book: best bid ${bestBidKey} >= best ask ${bestAskKey}`);
  }
  const expected0 = {
    bids: bidKeys.map((k) => ({ pricePips: k, sizeUnits: bidSizes.get(k) as number })),
    asks: askKeys.map((k) => ({ pricePips: k, sizeUnits: askSizes.get(k) as number })),
  };
  const mirror = (ls: Level[]): Level[] => ls.map((l) => ({ pricePips: PIPS_PER_UNIT_PRICE - l.pricePips, sizeUnits: l.sizeUnits }));
  const expected1 = { bids: mirror(expected0.asks), asks: mirror(expected0.bids) };
  for (const [outcome, expected] of [[0, expected0], [1, expected1]] as const) {
    const d = book.depth(outcome as Outcome);
    compareLevels(`depth(${outcome}).bids`, d.bids, expected.bids, errors);
    compareLevels(`depth(${outcome}).asks`, d.asks, expected.asks, errors);
    const bb = expected.bids.length > 0 ? expected.bids[expected.bids.length - 1].pricePips : 0;
    const ba = expected.asks.length > 0 ? expected.asks[expected.asks.length - 1].pricePips : 0;
    if (book.bestBid(outcome as Outcome) !== bb) errors.push(`bestBid(${outcome}) ${book.bestBid(outcome as Outcome)} != ${bb}`);
    if (book.bestAsk(outcome as Outcome) !== ba) errors.push(`bestAsk(${outcome}) ${book.bestAsk(outcome as Outcome)} != ${ba}`);
  }
  if (book.nextExpiry() !== minExpiry) errors.push(`nextExpiry() ${book.nextExpiry()} != earliest resting expiry ${minExpiry}`);
}

function compareLevels(what: string, got: Level[], want: Level[], errors: string[]): void {
  if (got.length !== want.length) {
    errors.push(`${what}: ${got.length} levels, orders() imply ${want.length}`);
    return;
  }
  for (let i = 0; i < got.length; i++) {
    if (got[i].pricePips !== want[i].pricePips || got[i].sizeUnits !== want[i].sizeUnits) {
      errors.push(`${what}[${i}]: ${got[i].sizeUnits}@${got[i].pricePips}, orders() imply ${want[i].sizeUnits}@${want[i].pricePips}`);
    }
  }
}

/** Slot states while walking the stores: 0 = never seen, 1 = live via a level, 2 = on the free list. */
type Seen = Uint8Array;

function checkInternals(b: BookState, errors: string[]): void {
  const slots = b.slots;
  const n = b.n;
  const used = slots.used;
  if (!(b.bestBidL >= 0 && b.bestBidL < n)) errors.push(`bestBidL ${b.bestBidL} out of [0, ${n})`);
  if (!(b.bestAskL > 0 && b.bestAskL <= n)) errors.push(`bestAskL ${b.bestAskL} out of (0, ${n}]`);
  if (b.bestBidL >= b.bestAskL) errors.push(`crossed: bestBidL ${b.bestBidL} >= bestAskL ${b.bestAskL}`);
  if (used > slots.capacity) errors.push(`used ${used} > capacity ${slots.capacity}`);
  const seen: Seen = new Uint8Array(used);
  const liveSeen = checkLevels(b, seen, errors);
  checkFreeList(b, seen, liveSeen, errors);
  checkIndex(b, seen, errors);
  checkHeap(b, seen, errors);
}

/** Level queues, bitmap, totals and best pointers; marks the live slots. Returns how many it reached. */
function checkLevels(b: BookState, seen: Seen, errors: string[]): number {
  const slots = b.slots;
  const lv = b.levels;
  const n = b.n;
  const used = slots.used;
  const live = slots.live;
  let liveSeen = 0;
  let maxBid = 0;
  let minAsk = n;

  if (!lv.allocated) {
    if (live !== 0) errors.push(`${live} live orders but levels not allocated`);
  } else {
    for (let l = 0; l <= n; l++) {
      const head = lv.head(l);
      const marked = lv.isMarked(l);
      if (head === NIL) {
        if (lv.tail(l) !== NIL) errors.push(`level ${l}: empty head but tail ${lv.tail(l)}`);
        if (lv.total(l) !== 0) errors.push(`level ${l}: empty but total ${lv.total(l)}`);
        if (marked) errors.push(`level ${l}: empty but marked in the bitmap`);
        continue;
      }
      if (l === 0 || l === n) errors.push(`sentinel level ${l} holds orders`);
      if (!marked) errors.push(`level ${l}: non-empty but not marked in the bitmap`);
      let prev = NIL;
      let sum = 0;
      let steps = 0;
      let lastSeq = -1;
      const side = l <= b.bestBidL ? BID : l >= b.bestAskL ? ASK : -1;
      if (side === -1) errors.push(`level ${l} holds orders between bestBidL ${b.bestBidL} and bestAskL ${b.bestAskL}`);
      let s = head;
      for (; s !== NIL; s = slots.next(s)) {
        if (++steps > live + 1) {
          errors.push(`level ${l}: cycle in FIFO links`);
          break;
        }
        if (s < 0 || s >= used) {
          errors.push(`level ${l}: link to slot ${s} outside [0, ${used})`);
          break;
        }
        if (seen[s] !== 0) errors.push(`slot ${s} reached twice`);
        seen[s] = 1;
        liveSeen++;
        if (!slots.isLive(s)) errors.push(`slot ${s} in level ${l} not marked live`);
        if (slots.level(s) !== l) errors.push(`slot ${s} in level ${l} records level ${slots.level(s)}`);
        if (slots.prev(s) !== prev) errors.push(`slot ${s}: prev ${slots.prev(s)} != ${prev}`);
        if (slots.seq(s) <= lastSeq) errors.push(`level ${l}: FIFO out of arrival order at slot ${s}`);
        lastSeq = slots.seq(s);
        const bs = slots.bookSide(s);
        if (side !== -1 && bs !== side) errors.push(`slot ${s}: book side ${bs} on a level of side ${side}`);
        if (bs === BID && l > maxBid) maxBid = l;
        if (bs === ASK && l < minAsk) minAsk = l;
        const rem = slots.remaining(s);
        if (!(rem > 0) || rem % LOT_UNITS !== 0) errors.push(`slot ${s}: remaining ${rem}`);
        sum += rem;
        prev = s;
      }
      if (lv.tail(l) !== prev) errors.push(`level ${l}: tail ${lv.tail(l)} != last in queue ${prev}`);
      if (sum !== lv.total(l)) errors.push(`level ${l}: total ${lv.total(l)} != sum of orders ${sum}`);
    }
  }
  if (liveSeen !== live) errors.push(`${liveSeen} orders reachable from levels, ${live} live slots`);
  if (maxBid !== b.bestBidL) errors.push(`bestBidL ${b.bestBidL} != highest bid level ${maxBid}`);
  if (minAsk !== b.bestAskL) errors.push(`bestAskL ${b.bestAskL} != lowest ask level ${minAsk}`);

  return liveSeen;
}

/** The free list: inside the used slots, disjoint from the live ones, counted right. */
function checkFreeList(b: BookState, seen: Seen, liveSeen: number, errors: string[]): void {
  const slots = b.slots;
  const used = slots.used;
  let freeSeen = 0;
  for (let s = slots.freeHead; s !== NIL; s = slots.next(s)) {
    if (s < 0 || s >= used) {
      errors.push(`free list links to slot ${s} outside [0, ${used})`);
      break;
    }
    if (seen[s] === 1) errors.push(`slot ${s} is both live and free`);
    else if (seen[s] === 2) {
      errors.push(`free list cycles at slot ${s}`);
      break;
    }
    seen[s] = 2;
    if (slots.isLive(s)) errors.push(`free slot ${s} marked live`);
    freeSeen++;
  }
  if (freeSeen !== slots.freeCount) errors.push(`free list holds ${freeSeen}, freeCount ${slots.freeCount}`);
  if (liveSeen + freeSeen !== used) errors.push(`live ${liveSeen} + free ${freeSeen} != used ${used}`);
}

/** Handle index <-> live slots, both ways, and its load. */
function checkIndex(b: BookState, seen: Seen, errors: string[]): void {
  const slots = b.slots;
  const used = slots.used;
  const live = slots.live;
  const index = b.index;
  if (index.count !== live) errors.push(`handle index count ${index.count} != live ${live}`);
  const entries = index.entries();
  if (entries.length !== index.count) errors.push(`handle index holds ${entries.length} entries, count ${index.count}`);
  for (const [h, s] of entries) {
    if (s < 0 || s >= used || seen[s] !== 1) {
      errors.push(`index: handle ${h} -> slot ${s} which is not a live order`);
      continue;
    }
    if (slots.handle(s) !== h) errors.push(`index: handle ${h} -> slot ${s} holding handle ${slots.handle(s)}`);
    if (index.get(h) !== s) errors.push(`index: handle ${h} stored but not reachable by probing`);
  }
  for (let s = 0; s < used; s++) {
    if (seen[s] === 1 && index.get(slots.handle(s)) !== s) errors.push(`slot ${s}: handle ${slots.handle(s)} not found in the index`);
  }
  if (index.count * 2 > index.capacity) errors.push(`index load above 1/2: ${index.count}/${index.capacity}`);
}

/** The expiry heap holds exactly the resting GTD orders, each pointing back, in heap order. */
function checkHeap(b: BookState, seen: Seen, errors: string[]): void {
  const slots = b.slots;
  const used = slots.used;
  const heap = b.heap;
  let gtd = 0;
  for (let s = 0; s < used; s++) {
    if (seen[s] !== 1) continue;
    if (slots.expiresAt(s) > 0) {
      gtd++;
      const p = slots.heapPos(s);
      if (p < 0 || p >= heap.size || heap.at(p) !== s) errors.push(`GTD slot ${s}: heapPos ${p} does not point back`);
    } else if (slots.heapPos(s) !== NIL) errors.push(`slot ${s} without expiry has heapPos ${slots.heapPos(s)}`);
  }
  if (gtd !== heap.size) errors.push(`expiry heap holds ${heap.size}, resting GTD orders ${gtd}`);
  for (let i = 0; i < heap.size; i++) {
    const s = heap.at(i);
    if (s < 0 || s >= used || seen[s] !== 1) {
      errors.push(`heap[${i}] = slot ${s}, not a live order`);
      continue;
    }
    if (i > 0) {
      const p = heap.at((i - 1) >>> 1);
      const ep = slots.expiresAt(p);
      const es = slots.expiresAt(s);
      if (ep > es || (ep === es && slots.handle(p) > slots.handle(s))) errors.push(`heap order broken at ${i}`);
    }
  }
}
