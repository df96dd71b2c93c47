/**
 * Price-time matching of one PlaceCommand against a book's state (MatchTarget). Pure: no I/O, no clock (GTD time arrives in
 * commands and expire() calls), no allocation per order (one reused Fill, Cancel and PlaceResult per book;
 * the sink copies what it keeps, the caller reads the result before its next call on the same book).
 *
 * Layout. One book per market in outcome-0 price space, levels indexed by tick (see layout.ts):
 *   bids = BUY 0 at p and SELL 1 at q (level (10_000 - q) / tick); asks = SELL 0 at p and BUY 1 at q.
 *   A taker on the bid side crosses asks at levels <= its limit level, an ask-side taker bids >= it.
 *
 * Ordering invariant. Price-time priority: the taker sweeps the opposite side best level first and, within
 * a level, oldest order first (FIFO, increasing arrival seq). The trade price is the resting order's price;
 * any improvement goes to the taker. At rest the book is never crossed: bestBid < bestAsk.
 *
 * Validation, in this order (same as reference-book.ts); a failed check returns its code with no event
 * and the book untouched:
 *   INVALID_PRICE    GTC/GTD: on tick within [tick, 10_000 - tick]; FOK/FAK: a bound, any whole pip in
 *                    [1, 9_999] (it need not be on tick);
 *   INVALID_SIZE     every TIF: a positive multiple of LOT_UNITS, >= minSizeUnits, <= 2^53 - 1;
 *   DUPLICATE_HANDLE an order with this handle rests in this book (for takers too). Handles that left the
 *                    book are not remembered: uniqueness over the engine's life is the sequencer's job;
 *   POST_ONLY_CROSSES postOnly GTC/GTD whose price crosses the opposite best (own orders included).
 *                    postOnly on FOK/FAK is ignored (the edge rejects that combination).
 *
 * Time in force:
 *   GTC/GTD  match what crosses, rest the remainder at the tail of its level (GTD enters the expiry heap
 *            when expiresAt > 0; expire(now) removes expiresAt <= now with reason EXPIRED). Until the
 *            driver calls expire(), an order past its expiry can still trade: the core has no clock.
 *   FOK      a dry run over the same path as execution (no mutation, own orders skipped) decides; if the
 *            whole sizeUnits cannot fill, FOK_NOT_FILLED with the book untouched, else it executes.
 *   FAK      fills what crosses; FAK_NO_MATCH when nothing filled.
 *   A FOK/FAK that ends with unfilled size emits one Cancel for itself (reason UNFILLED_REMAINDER,
 *   remainingUnits = unfilled, pricePips = its bound) after its fills, whatever its code — including
 *   FOK_NOT_FILLED and FAK_NO_MATCH — so the sequencer releases every taker reservation the same way.
 *   Budget (FOK/FAK BUY with budgetUnits > 0): fills never spend more than budgetUnits at the taker's own
 *   trade prices (fees excluded); each level takes the whole lots the remaining budget buys there and
 *   matching stops at the first maker it cannot afford a lot from, since later levels are no cheaper.
 *   FOK counts as filled when all sizeUnits fill within price and budget.
 *
 * Cancel and modify. Nothing can be modified: a size or price change is cancel + new order, and the new
 * order joins the back of its level's queue. A partial fill keeps the maker's place. cancel(handle) is O(1)
 * expected (+ O(log g) for a GTD order leaving the heap) and reports the unfilled remainder.
 *
 * Self-trade prevention. When the taker reaches a crossing resting order of the same owner, that resting
 * order is canceled (SELF_TRADE, before any later fill) and matching continues. The FOK dry run skips own
 * orders, so a killed FOK cancels nothing; a FAK cancels as it walks, so a FAK that met only its own
 * orders ends FAK_NO_MATCH with those orders canceled. A GTC/GTD taker rests after its STP cancels.
 *
 * Settlement per fill (P = maker's outcome-0 price, lots = sizeUnits / LOT_UNITS):
 *   kind   same outcome -> TRANSFER; different outcomes -> MINT if both BUY, MERGE if both SELL;
 *   usdc   each party's lots * own price (outcome 0: P, outcome 1: 10_000 - P), exact integers;
 *   fee    floor(bps * min(P, 10_000 - P) * sizeUnits / 10^8) per party with its own bps (maker: makerFeeBps,
 *          taker: takerFeeBps). min(p, 1 - p) is the same in both outcome spaces, so it is the formula of
 *          DESIGN section 6 for each party. Rounded down, so a fee never exceeds the formula; computed by
 *          splitting into quotient and remainder of 10^4 so it stays exact up to 2^53 units of notional.
 *   Fee bps and minSizeUnits are read from params on every command (admin may change them); tickPips is
 *   fixed when the book is built.
 *
 * Known limitations. Handle uniqueness across the book's lifetime is not checked (see above). Amounts
 * beyond 2^53 units are rejected as INVALID_SIZE rather than handled. Growth allocates (a slot chunk, a
 * larger handle index migrated a few entries per put): amortised, never a full copy. A tick change needs
 * a new book built from orders(). expire() sorts the expired batch (allocates a comparator; per timer
 * tick, not per order). Owners are compared as numbers: the sequencer must give one wallet one index.
 *
 * Complexity (k = makers touched, g = resting GTD orders, L = levels crossed or skipped):
 *   place  O(k + L/32 + log g) — L/32 for the bitmap scan when a level empties; FOK walks k twice;
 *   cancel O(1) expected (+ log g); expire O(e log e + e log g) for e expired; nextExpiry, bestBid/Ask O(1);
 *   depth and orders O(levels + orders), allocating.
 */

import {
  CancelReason,
  FillKind,
  LOT_UNITS,
  MatchCode,
  PIPS_PER_UNIT_PRICE,
  Side,
  Tif,
  type Cancel,
  type EventSink,
  type Fill,
  type MarketParams,
  type PlaceCommand,
  type PlaceResult,
} from './api.ts';
import { BPS } from '../../domain/market-rules.ts';
import { BID, NIL, type HandleIndex, type LevelColumns, type SlotTable } from './layout.ts';

/**
 * What the matcher reads and changes of a book: its stores, its best pointers, the reused outputs and the
 * primitive mutations. book-state.ts's BookState provides it; book.ts, which joins the two, is where that
 * is checked, so the state and the matcher never import each other.
 */
export interface MatchTarget {
  readonly params: MarketParams;
  readonly tick: number;
  readonly slots: SlotTable;
  readonly levels: LevelColumns;
  readonly index: HandleIndex;
  readonly bestBidL: number;
  readonly bestAskL: number;
  readonly fillOut: Fill;
  readonly cancelOut: Cancel;
  readonly result: PlaceResult;
  /** Appends a new order at the tail of level l; the caller has checked that it does not cross. */
  rest(cmd: PlaceCommand, l: number, bookSide: number, units: number): void;
  /** Takes `units` (less than what remains) from a resting order, which keeps its place. */
  reduce(s: number, units: number): void;
  /** Removes a resting order from its level, best pointers, handle index, expiry heap and slot table. */
  removeResting(s: number): void;
  emitCancel(s: number, reason: CancelReason, sink: EventSink): void;
}

const FEE_DIV = BPS;

function reject(r: PlaceResult, code: MatchCode): PlaceResult {
  r.code = code;
  r.filledUnits = 0;
  r.restingUnits = 0;
  return r;
}

/** floor(a / b) for non-negative safe integers, without the rounding a float quotient can add near 2^53. */
function floorDiv(a: number, b: number): number {
  return (a - (a % b)) / b;
}

/** floor(lots * m * bps / 10^4), exact while lots * m (at most the notional) is a safe integer. */
export function feeUnits(lots: number, m: number, bps: number): number {
  if (bps === 0) return 0;
  const x = lots * m;
  const r = x % FEE_DIV;
  const rb = r * bps;
  return ((x - r) / FEE_DIV) * bps + (rb - (rb % FEE_DIV)) / FEE_DIV;
}

export function placeOrder(b: MatchTarget, cmd: PlaceCommand, sink: EventSink): PlaceResult {
  const r = b.result;
  const tif = cmd.tif;
  const ioc = tif === Tif.FOK || tif === Tif.FAK;
  const price = cmd.pricePips;
  const tick = b.tick;
  if (ioc) {
    if (!(price >= 1 && price <= PIPS_PER_UNIT_PRICE - 1) || price % 1 !== 0) return reject(r, MatchCode.INVALID_PRICE);
  } else if (!(price >= tick && price <= PIPS_PER_UNIT_PRICE - tick) || price % tick !== 0) {
    return reject(r, MatchCode.INVALID_PRICE);
  }
  const size = cmd.sizeUnits;
  if (!(size > 0 && size >= b.params.minSizeUnits && size <= Number.MAX_SAFE_INTEGER) || size % LOT_UNITS !== 0) {
    return reject(r, MatchCode.INVALID_SIZE);
  }
  if (b.index.get(cmd.handle) !== NIL) return reject(r, MatchCode.DUPLICATE_HANDLE);

  const bookSide = (cmd.side ^ cmd.outcome) & 1;
  const bound = cmd.outcome === 0 ? price : PIPS_PER_UNIT_PRICE - price;
  // The bounds are in [1, 9_999], so limit levels land in [1, n - 1] and the empty-side sentinels
  // (bestBidL = 0, bestAskL = n) never cross.
  let limitL: number;
  let crosses: boolean;
  if (bookSide === BID) {
    limitL = Math.floor(bound / tick);
    crosses = b.bestAskL <= limitL;
  } else {
    limitL = Math.ceil(bound / tick);
    crosses = b.bestBidL >= limitL;
  }

  if (!ioc && cmd.postOnly && crosses) return reject(r, MatchCode.POST_ONLY_CROSSES);

  const budget = ioc && cmd.side === Side.BUY && cmd.budgetUnits > 0 ? cmd.budgetUnits : 0;
  if (tif === Tif.FOK && !(crosses && fokFillable(b, cmd, bookSide, limitL, budget))) {
    emitTakerRemainder(b, cmd, size, sink);
    return reject(r, MatchCode.FOK_NOT_FILLED);
  }

  const filled = crosses ? sweep(b, cmd, bookSide, limitL, budget, sink) : 0;
  const left = size - filled;
  if (ioc) {
    if (left > 0) emitTakerRemainder(b, cmd, left, sink);
    r.code = filled === 0 ? MatchCode.FAK_NO_MATCH : MatchCode.OK;
    r.filledUnits = filled;
    r.restingUnits = 0;
    return r;
  }
  if (left > 0) b.rest(cmd, limitL, bookSide, left);
  r.code = MatchCode.OK;
  r.filledUnits = filled;
  r.restingUnits = left;
  return r;
}

function emitTakerRemainder(b: MatchTarget, cmd: PlaceCommand, units: number, sink: EventSink): void {
  const c = b.cancelOut;
  c.handle = cmd.handle;
  c.owner = cmd.owner;
  c.outcome = cmd.outcome;
  c.side = cmd.side;
  c.pricePips = cmd.pricePips;
  c.remainingUnits = units;
  c.reason = CancelReason.UNFILLED_REMAINDER;
  sink.cancel(c);
}

/** Dry run of sweep(): same path, same caps, own orders skipped, nothing written. */
function fokFillable(b: MatchTarget, cmd: PlaceCommand, bookSide: number, limitL: number, budget: number): boolean {
  const slots = b.slots;
  const lv = b.levels;
  const tick = b.tick;
  const owner = cmd.owner;
  let want = cmd.sizeUnits;
  let budgetLeft = budget;
  let l = bookSide === BID ? b.bestAskL : b.bestBidL;
  while (bookSide === BID ? l <= limitL : l >= limitL) {
    const P = l * tick;
    const takerPrice = cmd.outcome === 0 ? P : PIPS_PER_UNIT_PRICE - P;
    for (let s = lv.head(l); s !== NIL; s = slots.next(s)) {
      if (slots.owner(s) === owner) continue;
      let cap = want;
      if (budget > 0) {
        const affordable = floorDiv(budgetLeft, takerPrice) * LOT_UNITS;
        if (affordable === 0) return false;
        if (affordable < cap) cap = affordable;
      }
      const rem = slots.remaining(s);
      const q = rem < cap ? rem : cap;
      want -= q;
      if (want === 0) return true;
      if (budget > 0) budgetLeft -= (q / LOT_UNITS) * takerPrice;
    }
    l = bookSide === BID ? lv.nextAbove(l) : lv.prevBelow(l);
  }
  return false;
}

/** Executes the match; returns the units filled. Levels are re-read from the best pointers after each. */
function sweep(b: MatchTarget, cmd: PlaceCommand, bookSide: number, limitL: number, budget: number, sink: EventSink): number {
  const slots = b.slots;
  const lv = b.levels;
  const tick = b.tick;
  const owner = cmd.owner;
  const takerOutcome = cmd.outcome;
  const takerSide = cmd.side;
  const makerBps = b.params.makerFeeBps;
  const takerBps = b.params.takerFeeBps;
  const f = b.fillOut;
  f.takerHandle = cmd.handle;
  f.takerOwner = owner;
  f.takerOutcome = takerOutcome;
  f.takerSide = takerSide;
  const sameKindSide = takerSide === Side.BUY ? FillKind.MINT : FillKind.MERGE;
  let want = cmd.sizeUnits;
  let budgetLeft = budget;
  while (want > 0) {
    const l = bookSide === BID ? b.bestAskL : b.bestBidL;
    if (bookSide === BID ? l > limitL : l < limitL) break;
    const P = l * tick;
    const Q = PIPS_PER_UNIT_PRICE - P;
    const takerPrice = takerOutcome === 0 ? P : Q;
    const m = P < Q ? P : Q;
    let s = lv.head(l);
    let starved = false;
    while (s !== NIL && want > 0) {
      const nx = slots.next(s);
      if (slots.owner(s) === owner) {
        b.emitCancel(s, CancelReason.SELF_TRADE, sink);
        b.removeResting(s);
        s = nx;
        continue;
      }
      let cap = want;
      if (budget > 0) {
        const affordable = floorDiv(budgetLeft, takerPrice) * LOT_UNITS;
        if (affordable === 0) {
          starved = true;
          break;
        }
        if (affordable < cap) cap = affordable;
      }
      const rem = slots.remaining(s);
      const q = rem < cap ? rem : cap;
      const lots = q / LOT_UNITS;
      const makerOutcome = slots.outcome(s);
      const makerPrice = makerOutcome === 0 ? P : Q;
      f.kind = makerOutcome === takerOutcome ? FillKind.TRANSFER : sameKindSide;
      f.makerHandle = slots.handle(s);
      f.makerOwner = slots.owner(s);
      f.makerOutcome = makerOutcome;
      f.makerSide = slots.side(s);
      f.sizeUnits = q;
      f.takerPricePips = takerPrice;
      f.makerPricePips = makerPrice;
      f.takerUsdc = lots * takerPrice;
      f.makerUsdc = lots * makerPrice;
      f.takerFee = feeUnits(lots, m, takerBps);
      f.makerFee = feeUnits(lots, m, makerBps);
      f.makerRemainingUnits = rem - q;
      want -= q;
      if (budget > 0) budgetLeft -= lots * takerPrice;
      if (q === rem) {
        b.removeResting(s);
        sink.fill(f);
        s = nx;
        continue;
      }
      // A maker left partly filled means the taker is done or out of budget; either way the sweep ends
      // here, before any later own order would be canceled for a trade that cannot happen.
      b.reduce(s, q);
      sink.fill(f);
      starved = true;
      break;
    }
    if (starved) break;
  }
  return cmd.sizeUnits - want;
}
