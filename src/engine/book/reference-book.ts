/**
 * Reference book: the test oracle for `book.ts`/`match.ts`. Allocates freely; never used in production.
 *
 * It follows `api.ts` as literally as possible so that a disagreement with the typed book points at a
 * bug in one of them, not at an optimisation. Plain Maps and arrays, no cleverness:
 *   - every resting order is keyed by its outcome-0 price ("key"): outcome 0 keeps its price, outcome 1
 *     is mirrored to 10_000 - p; BUY 0 / SELL 1 are bids, SELL 0 / BUY 1 are asks;
 *   - each side is a Map key -> FIFO array plus a list of keys sorted best first; priority is price,
 *     then arrival; there is no modify, so an order keeps its place until it leaves (partial fills too);
 *   - money uses BigInt for the fee so the oracle cannot overflow where the typed book might.
 *
 * Choices where api.ts and DESIGN section 6 are silent (the typed book is expected to make the same ones):
 *   - validation order: price (INVALID_PRICE), size (INVALID_SIZE), duplicate resting handle
 *     (DUPLICATE_HANDLE), post-only (POST_ONLY_CROSSES), then FOK fillability (FOK_NOT_FILLED);
 *   - GTC/GTD prices: on tick within [tick, 10_000 - tick]; FOK/FAK prices: any whole pip in [1, 9_999];
 *     sizes (every TIF): a positive multiple of LOT_UNITS, at least minSizeUnits, at most 2^53 - 1;
 *   - DUPLICATE_HANDLE means "a resting order already has this handle"; handles of orders that left the
 *     book are not remembered (the sequencer guarantees uniqueness for the life of the engine);
 *   - postOnly is honoured for GTC/GTD only (the edge rejects it on FOK/FAK) and counts crossing orders of
 *     the same owner too;
 *   - self-trade prevention: when the taker reaches a crossing resting order of its own owner, that resting
 *     order is canceled (SELF_TRADE) and matching goes on; FOK checks fillability without mutating (own
 *     orders skipped) so a killed FOK leaves the book exactly as it was, STP cancels included; FAK cancels
 *     as it walks, so a FAK that met only its own orders ends FAK_NO_MATCH with those orders canceled;
 *   - a FOK/FAK that ends with unfilled size emits one Cancel for the taker itself (UNFILLED_REMAINDER,
 *     remainingUnits = unfilled), after its fills, whatever its code (FAK_NO_MATCH and FOK_NOT_FILLED too);
 *   - budget (FOK/FAK BUY, budgetUnits > 0): each fill takes the whole lots the remaining budget buys at
 *     the taker's own trade price; matching stops at the first maker it cannot afford a lot from (later
 *     makers are no cheaper). FOK is filled only when the whole sizeUnits fill within price and budget;
 *   - fee per party: floor(bps * min(P, 10_000 - P) * size / 10^8), P the trade price (the result is the
 *     same in either outcome's space);
 *   - expire() and cancelAll() emit in priority order (bids best first, then asks best first).
 */

import { onTick } from '../../domain/market-rules.ts';
import {
  CancelReason,
  FillKind,
  LOT_UNITS,
  MatchCode,
  PIPS_PER_UNIT_PRICE,
  Side,
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
} from './api.ts';

interface RefOrder {
  handle: number;
  owner: number;
  outcome: Outcome;
  side: Side;
  /** Own-outcome price as placed. */
  pricePips: number;
  /** Outcome-0-space price. */
  key: number;
  isBid: boolean;
  remainingUnits: number;
  expiresAt: number;
}

interface RefSide {
  isBid: boolean;
  levels: Map<number, RefOrder[]>;
  /** Keys with a non-empty level, best first (bids descending, asks ascending). */
  keys: number[];
}

const FEE_DENOMINATOR = 100_000_000n;

function isBidOf(outcome: Outcome, side: Side): boolean {
  return (outcome === 0) === (side === Side.BUY);
}

function keyOf(outcome: Outcome, pricePips: number): number {
  return outcome === 0 ? pricePips : PIPS_PER_UNIT_PRICE - pricePips;
}

function feeOf(bps: number, pricePips: number, sizeUnits: number): number {
  const m = Math.min(pricePips, PIPS_PER_UNIT_PRICE - pricePips);
  return Number((BigInt(bps) * BigInt(m) * BigInt(sizeUnits)) / FEE_DENOMINATOR);
}

function better(isBid: boolean, a: number, b: number): boolean {
  return isBid ? a > b : a < b;
}

function newSide(isBid: boolean): RefSide {
  return { isBid, levels: new Map(), keys: [] };
}

function addToSide(s: RefSide, o: RefOrder): void {
  let level = s.levels.get(o.key);
  if (level === undefined) {
    level = [];
    s.levels.set(o.key, level);
    let i = 0;
    while (i < s.keys.length && better(s.isBid, s.keys[i], o.key)) i++;
    s.keys.splice(i, 0, o.key);
  }
  level.push(o);
}

function removeFromSide(s: RefSide, o: RefOrder): void {
  const level = s.levels.get(o.key);
  if (level === undefined) throw new Error(`reference book: no level ${o.key} for handle ${o.handle}`);
  const i = level.indexOf(o);
  if (i < 0) throw new Error(`reference book: handle ${o.handle} missing from level ${o.key}`);
  level.splice(i, 1);
  if (level.length === 0) {
    s.levels.delete(o.key);
    s.keys.splice(s.keys.indexOf(o.key), 1);
  }
}

/** Allocates: all of it. Orders of one side in priority order. */
function sideOrders(s: RefSide): RefOrder[] {
  const out: RefOrder[] = [];
  for (const k of s.keys) out.push(...(s.levels.get(k) as RefOrder[]));
  return out;
}

function fillKindOf(takerOutcome: Outcome, takerSide: Side, makerOutcome: Outcome): FillKind {
  if (takerOutcome === makerOutcome) return FillKind.TRANSFER;
  return takerSide === Side.BUY ? FillKind.MINT : FillKind.MERGE;
}

/** Own-outcome price of a party on `outcome` when the outcome-0 trade price is `key`. */
function ownPrice(outcome: Outcome, key: number): number {
  return outcome === 0 ? key : PIPS_PER_UNIT_PRICE - key;
}

/** The oracle: Maps and arrays, no cleverness (see the header). */
class ReferenceBook implements MatchingBook {
  private readonly bids = newSide(true);
  private readonly asks = newSide(false);
  private readonly byHandle = new Map<number, RefOrder>();

  constructor(readonly params: MarketParams) {}

  private validPrice(cmd: PlaceCommand): boolean {
    const p = cmd.pricePips;
    if (!Number.isInteger(p)) return false;
    if (cmd.tif === Tif.GTC || cmd.tif === Tif.GTD) {
      return onTick(p, this.params.tickPips);
    }
    return p >= 1 && p <= PIPS_PER_UNIT_PRICE - 1;
  }

  private validSize(cmd: PlaceCommand): boolean {
    const s = cmd.sizeUnits;
    // Above 2^53 units a number is no longer an exact amount (docs/decisions/architecture.md, "Units").
    return Number.isSafeInteger(s) && s > 0 && s % LOT_UNITS === 0 && s >= this.params.minSizeUnits;
  }

  private crosses(takerIsBid: boolean, takerKey: number, makerKey: number): boolean {
    return takerIsBid ? makerKey <= takerKey : makerKey >= takerKey;
  }

  /**
   * Whole lots the taker takes from `maker` given what it still wants and what budget it has left;
   * 0 means it cannot afford a single lot at this maker's price.
   */
  private lotsFor(cmd: PlaceCommand, remaining: number, budgetLeft: number, maker: RefOrder): number {
    let lots = Math.min(remaining, maker.remainingUnits) / LOT_UNITS;
    if (this.usesBudget(cmd)) {
      const perLot = ownPrice(cmd.outcome, maker.key);
      lots = Math.min(lots, Math.floor(budgetLeft / perLot));
    }
    return lots;
  }

  private usesBudget(cmd: PlaceCommand): boolean {
    return (cmd.tif === Tif.FOK || cmd.tif === Tif.FAK) && cmd.side === Side.BUY && cmd.budgetUnits > 0;
  }

  /** Units a taker would fill right now, without touching the book (own orders skipped, as STP removes them). */
  private fillable(cmd: PlaceCommand, takerIsBid: boolean, takerKey: number): number {
    const opposite = takerIsBid ? this.asks : this.bids;
    let remaining = cmd.sizeUnits;
    let budgetLeft = cmd.budgetUnits;
    for (const k of opposite.keys) {
      if (!this.crosses(takerIsBid, takerKey, k)) break;
      for (const maker of opposite.levels.get(k) as RefOrder[]) {
        if (maker.owner === cmd.owner) continue;
        const lots = this.lotsFor(cmd, remaining, budgetLeft, maker);
        if (lots === 0) return cmd.sizeUnits - remaining;
        remaining -= lots * LOT_UNITS;
        budgetLeft -= lots * ownPrice(cmd.outcome, maker.key);
        if (remaining === 0) return cmd.sizeUnits;
      }
    }
    return cmd.sizeUnits - remaining;
  }

  private emitCancel(sink: EventSink, o: RefOrder, reason: CancelReason): void {
    const c: Cancel = { ...restingOf(o), reason };
    sink.cancel(c);
  }

  private removeOrder(o: RefOrder): void {
    removeFromSide(o.isBid ? this.bids : this.asks, o);
    this.byHandle.delete(o.handle);
  }

  place(cmd: PlaceCommand, sink: EventSink): PlaceResult {
    if (!this.validPrice(cmd)) return { code: MatchCode.INVALID_PRICE, filledUnits: 0, restingUnits: 0 };
    if (!this.validSize(cmd)) return { code: MatchCode.INVALID_SIZE, filledUnits: 0, restingUnits: 0 };
    if (this.byHandle.has(cmd.handle)) return { code: MatchCode.DUPLICATE_HANDLE, filledUnits: 0, restingUnits: 0 };

    const rests = cmd.tif === Tif.GTC || cmd.tif === Tif.GTD;
    const takerIsBid = isBidOf(cmd.outcome, cmd.side);
    const takerKey = keyOf(cmd.outcome, cmd.pricePips);
    const opposite = takerIsBid ? this.asks : this.bids;

    if (rests && cmd.postOnly && opposite.keys.length > 0 && this.crosses(takerIsBid, takerKey, opposite.keys[0])) {
      return { code: MatchCode.POST_ONLY_CROSSES, filledUnits: 0, restingUnits: 0 };
    }

    const unfilledTaker = (remainingUnits: number): void => {
      sink.cancel({
        handle: cmd.handle,
        owner: cmd.owner,
        outcome: cmd.outcome,
        side: cmd.side,
        pricePips: cmd.pricePips,
        remainingUnits,
        reason: CancelReason.UNFILLED_REMAINDER,
      });
    };

    if (cmd.tif === Tif.FOK && this.fillable(cmd, takerIsBid, takerKey) < cmd.sizeUnits) {
      unfilledTaker(cmd.sizeUnits);
      return { code: MatchCode.FOK_NOT_FILLED, filledUnits: 0, restingUnits: 0 };
    }

    let remaining = cmd.sizeUnits;
    let budgetLeft = cmd.budgetUnits;
    while (remaining > 0 && opposite.keys.length > 0) {
      const bestKey = opposite.keys[0];
      if (!this.crosses(takerIsBid, takerKey, bestKey)) break;
      const maker = (opposite.levels.get(bestKey) as RefOrder[])[0];
      if (maker.owner === cmd.owner) {
        this.removeOrder(maker);
        this.emitCancel(sink, maker, CancelReason.SELF_TRADE);
        continue;
      }
      const lots = this.lotsFor(cmd, remaining, budgetLeft, maker);
      if (lots === 0) break;
      const size = lots * LOT_UNITS;
      const P = maker.key;
      const takerPrice = ownPrice(cmd.outcome, P);
      const makerPrice = ownPrice(maker.outcome, P);
      const takerUsdc = lots * takerPrice;
      const makerUsdc = lots * makerPrice;
      remaining -= size;
      budgetLeft -= takerUsdc;
      maker.remainingUnits -= size;
      if (maker.remainingUnits === 0) this.removeOrder(maker);
      const f: Fill = {
        kind: fillKindOf(cmd.outcome, cmd.side, maker.outcome),
        takerHandle: cmd.handle,
        makerHandle: maker.handle,
        takerOwner: cmd.owner,
        makerOwner: maker.owner,
        takerOutcome: cmd.outcome,
        makerOutcome: maker.outcome,
        takerSide: cmd.side,
        makerSide: maker.side,
        sizeUnits: size,
        takerPricePips: takerPrice,
        makerPricePips: makerPrice,
        takerUsdc,
        makerUsdc,
        takerFee: feeOf(this.params.takerFeeBps, P, size),
        makerFee: feeOf(this.params.makerFeeBps, P, size),
        makerRemainingUnits: maker.remainingUnits,
      };
      sink.fill(f);
    }

    const filled = cmd.sizeUnits - remaining;
    if (rests) {
      if (remaining > 0) {
        const o: RefOrder = {
          handle: cmd.handle,
          owner: cmd.owner,
          outcome: cmd.outcome,
          side: cmd.side,
          pricePips: cmd.pricePips,
          key: takerKey,
          isBid: takerIsBid,
          remainingUnits: remaining,
          expiresAt: cmd.tif === Tif.GTD ? cmd.expiresAt : 0,
        };
        addToSide(takerIsBid ? this.bids : this.asks, o);
        this.byHandle.set(o.handle, o);
      }
      return { code: MatchCode.OK, filledUnits: filled, restingUnits: remaining };
    }
    if (remaining > 0) unfilledTaker(remaining);
    if (filled === 0) return { code: MatchCode.FAK_NO_MATCH, filledUnits: 0, restingUnits: 0 };
    return { code: MatchCode.OK, filledUnits: filled, restingUnits: 0 };
  }

  cancel(handle: number, sink: EventSink): MatchCode {
    const o = this.byHandle.get(handle);
    if (o === undefined) return MatchCode.UNKNOWN_ORDER;
    this.removeOrder(o);
    this.emitCancel(sink, o, CancelReason.USER);
    return MatchCode.OK;
  }

  private allInPriorityOrder(): RefOrder[] {
    return [...sideOrders(this.bids), ...sideOrders(this.asks)];
  }

  expire(nowSec: number, sink: EventSink): number {
    let n = 0;
    for (const o of this.allInPriorityOrder()) {
      if (o.expiresAt > 0 && o.expiresAt <= nowSec) {
        this.removeOrder(o);
        this.emitCancel(sink, o, CancelReason.EXPIRED);
        n++;
      }
    }
    return n;
  }

  cancelAll(reason: CancelReason, sink: EventSink): number {
    const all = this.allInPriorityOrder();
    for (const o of all) {
      this.removeOrder(o);
      this.emitCancel(sink, o, reason);
    }
    return all.length;
  }

  nextExpiry(): number {
    let min = 0;
    for (const o of this.byHandle.values()) {
      if (o.expiresAt > 0 && (min === 0 || o.expiresAt < min)) min = o.expiresAt;
    }
    return min;
  }

  bestBid(outcome: Outcome): number {
    if (outcome === 0) return this.bids.keys.length > 0 ? this.bids.keys[0] : 0;
    return this.asks.keys.length > 0 ? PIPS_PER_UNIT_PRICE - this.asks.keys[0] : 0;
  }

  bestAsk(outcome: Outcome): number {
    if (outcome === 0) return this.asks.keys.length > 0 ? this.asks.keys[0] : 0;
    return this.bids.keys.length > 0 ? PIPS_PER_UNIT_PRICE - this.bids.keys[0] : 0;
  }

  private levelsOf(s: RefSide, mirror: boolean): Level[] {
    const out: Level[] = [];
    for (const k of s.keys) {
      let size = 0;
      for (const o of s.levels.get(k) as RefOrder[]) size += o.remainingUnits;
      out.push({ pricePips: mirror ? PIPS_PER_UNIT_PRICE - k : k, sizeUnits: size });
    }
    return out;
  }

  depth(outcome: Outcome): Depth {
    const mirror = outcome === 1;
    const ownBids = this.levelsOf(mirror ? this.asks : this.bids, mirror);
    const ownAsks = this.levelsOf(mirror ? this.bids : this.asks, mirror);
    ownBids.sort((a, b) => a.pricePips - b.pricePips);
    ownAsks.sort((a, b) => b.pricePips - a.pricePips);
    return { bids: ownBids, asks: ownAsks };
  }

  orders(): ReturnType<MatchingBook['orders']> {
    return this.allInPriorityOrder().map((o) => ({ ...restingOf(o), expiresAt: o.expiresAt }));
  }

  size(): number {
    return this.byHandle.size;
  }
}

/** What a cancel and the order list say of a resting order, in their field order. */
function restingOf(o: RefOrder): Omit<Cancel, 'reason'> {
  return { handle: o.handle, owner: o.owner, outcome: o.outcome, side: o.side, pricePips: o.pricePips, remainingUnits: o.remainingUnits };
}

export function createReferenceBook(params: MarketParams): MatchingBook {
  return new ReferenceBook(params);
}
