/**
 * The contract between the matching core and everything that drives it.
 *
 * Two implementations honour it: `book.ts` (book-state.ts joined with match.ts: flat typed arrays, the
 * production book) and `reference-book.ts` (Maps and arrays, the test oracle). The shard worker, the
 * differential test and the benchmarks program against this file only, so either book can be swapped in.
 *
 * Units (no floating point anywhere on this path):
 *   - sizes and USDC amounts are integer *units*: 1 token = 1 USDC = 1_000_000 units (6 decimals);
 *   - prices are integer *pips*: 1.0 = 10_000 pips, so every tick size (0.1 .. 0.0001) is a whole
 *     number of pips and a resting price lies in [tick, 10_000 - tick];
 *   - resting sizes and every fill size are multiples of LOT_UNITS (0.01 token), so the USDC of a
 *     fill at an on-tick price, `size / LOT_UNITS * pricePips`, is an exact integer.
 *
 * One book per market (condition id) holds both outcome tokens. Internally it is a single book in
 * outcome-0 ("YES") price space:
 *   bids = BUY outcome 0 at p   and  SELL outcome 1 at q (seen as a bid at 10_000 - q)
 *   asks = SELL outcome 0 at p  and  BUY outcome 1 at q  (seen as an ask at 10_000 - q)
 * A bid crosses an ask when bidPips >= askPips. What the fill settles as depends on the pair:
 *   BUY 0  x SELL 0 -> TRANSFER (outcome 0 tokens for USDC)
 *   SELL 1 x BUY 1  -> TRANSFER (outcome 1 tokens for USDC)
 *   BUY 0  x BUY 1  -> MINT     (both sides' USDC becomes one token 0 + one token 1 per unit)
 *   SELL 1 x SELL 0 -> MERGE    (one token 0 + one token 1 per unit become USDC for both sides)
 * The trade price is the resting (maker) order's price; improvement goes to the taker. In every kind
 * the party on outcome 0 pays/receives `size * P` and the party on outcome 1 `size * (10_000 - P)`
 * (P = the maker's outcome-0-space price), so one unit of USDC always matches one token pair.
 */

import { Errors } from '../../domain/errors.ts';
import type { FillAmounts } from '../../domain/events.ts';
import { LOT_UNITS } from '../../domain/market-rules.ts';
import { PIPS } from '../../domain/units.ts';

// The book's names for the domain's units (domain/units.ts, domain/market-rules.ts).
export const PIPS_PER_UNIT_PRICE = PIPS;
export { LOT_UNITS };

export const Side = { BUY: 0, SELL: 1 } as const;
export type Side = (typeof Side)[keyof typeof Side];

export type Outcome = 0 | 1;

/** Time in force. GTC and GTD rest; FOK and FAK never rest. */
export const Tif = { GTC: 0, GTD: 1, FOK: 2, FAK: 3 } as const;
export type Tif = (typeof Tif)[keyof typeof Tif];

export const FillKind = { TRANSFER: 0, MINT: 1, MERGE: 2 } as const;
export type FillKind = (typeof FillKind)[keyof typeof FillKind];

/** Per-market trading parameters, set when the book is created and changeable by admin. */
export interface MarketParams {
  /** Tick size in pips (1000, 100, 10 or 1). */
  tickPips: number;
  /** Minimum order size in units. */
  minSizeUnits: number;
  makerFeeBps: number;
  takerFeeBps: number;
}

/**
 * A new order, already authenticated, signature-checked and balance-reserved by the sequencer.
 * `handle` is unique for the life of the engine (the sequencer allocates it; it maps to the public
 * order id outside the engine). `owner` is a wallet index, used for self-trade prevention only.
 */
export interface PlaceCommand {
  handle: number;
  owner: number;
  outcome: Outcome;
  side: Side;
  tif: Tif;
  postOnly: boolean;
  /**
   * Limit price in the order's own outcome space, in pips. GTC/GTD: on tick, within
   * [tick, 10_000 - tick]. FOK/FAK: the worst acceptable price rounded conservatively to a whole pip
   * (BUY: floor(makerAmount * 10_000 / takerAmount), SELL: ceil(takerAmount * 10_000 / makerAmount));
   * it need not be on tick.
   */
  pricePips: number;
  /** Tokens wanted (BUY) or offered (SELL), in units, a multiple of LOT_UNITS. */
  sizeUnits: number;
  /** FOK/FAK BUY only: USDC the order may spend on fills, fees excluded (its makerAmount). 0 otherwise. */
  budgetUnits: number;
  /** GTD only: unix seconds after which the order is expired. 0 otherwise. */
  expiresAt: number;
}

/**
 * Stored outcome of one command: 0 = OK, else the numeric result of a 4xxx (matching) entry of the error
 * catalogue, which is where each code gets its answer (domain/errors.ts). Only the number crosses the ring.
 */
export const MatchCode = {
  OK: 0,
  FOK_NOT_FILLED: Errors.PM_ERR_FOK_NOT_FILLED.result,
  FAK_NO_MATCH: Errors.PM_ERR_FAK_NO_MATCH.result,
  POST_ONLY_CROSSES: Errors.PM_ERR_POST_ONLY_CROSSES.result,
  DUPLICATE_HANDLE: Errors.PM_ERR_DUPLICATE_ORDER.result,
  UNKNOWN_ORDER: Errors.PM_ERR_ORDER_NOT_FOUND.result,
  INVALID_PRICE: Errors.PM_ERR_INVALID_PRICE.result,
  INVALID_SIZE: Errors.PM_ERR_INVALID_SIZE.result,
} as const;
export type MatchCode = (typeof MatchCode)[keyof typeof MatchCode];

/** Why a resting order left the book without being filled. */
export const CancelReason = {
  USER: 0,
  EXPIRED: 1,
  SELF_TRADE: 2,
  MARKET_RESOLVED: 3,
  /** FAK remainder / killed FOK: the taker itself, never rested. */
  UNFILLED_REMAINDER: 4,
} as const;
export type CancelReason = (typeof CancelReason)[keyof typeof CancelReason];

/**
 * One fill. Amounts are exact integers. USDC flows:
 *   BUY side pays `usdc + fee`; SELL side receives `usdc - fee`.
 * makerUsdc/takerUsdc are each party's notional at the trade price in its own outcome space
 * (equal for TRANSFER; summing to `sizeUnits` for MINT and MERGE).
 */
export interface Fill extends FillAmounts {
  kind: FillKind;
  takerHandle: number;
  makerHandle: number;
  takerOwner: number;
  makerOwner: number;
  takerOutcome: Outcome;
  makerOutcome: Outcome;
  takerSide: Side;
  makerSide: Side;
  sizeUnits: number;
  /** Maker's remaining size after this fill (0 = fully filled, left the book). */
  makerRemainingUnits: number;
}

export interface Cancel {
  handle: number;
  owner: number;
  outcome: Outcome;
  side: Side;
  pricePips: number;
  /** Unfilled size that left the book (what the sequencer releases). */
  remainingUnits: number;
  reason: CancelReason;
}

/**
 * Preallocated event sink. The book appends during a command and the driver drains after it
 * (never from inside the match loop). Implementations reuse their storage between commands.
 */
export interface EventSink {
  fill(f: Fill): void;
  cancel(c: Cancel): void;
}

export interface PlaceResult {
  code: MatchCode;
  /** Total filled by this command (units of the order's own token). */
  filledUnits: number;
  /** What rests on the book after the command (0 for FOK/FAK or when fully filled). */
  restingUnits: number;
}

/** One aggregated price level, in a token's own outcome space. */
export interface Level {
  pricePips: number;
  sizeUnits: number;
}

/**
 * Aggregated depth of one outcome token: the token's own orders plus the other outcome's orders
 * mirrored at 10_000 - p. Bids ascending and asks descending (best price last), as the platform's
 * /book lists them.
 */
export interface Depth {
  bids: Level[];
  asks: Level[];
}

export interface MatchingBook {
  readonly params: MarketParams;
  /**
   * Allocates nothing on the hot path. Writes fills/cancels into `sink` before returning. The returned
   * PlaceResult may be one object the book reuses: read it before the next call on the same book.
   */
  place(cmd: PlaceCommand, sink: EventSink): PlaceResult;
  /** Cancels a resting order; emits a Cancel with reason USER. UNKNOWN_ORDER if not resting here. */
  cancel(handle: number, sink: EventSink): MatchCode;
  /** Cancels every resting GTD order with expiresAt <= nowSec (reason EXPIRED). Returns how many. */
  expire(nowSec: number, sink: EventSink): number;
  /** Cancels every resting order (reason given, e.g. MARKET_RESOLVED). Returns how many. */
  cancelAll(reason: CancelReason, sink: EventSink): number;
  /** Earliest expiresAt among resting GTD orders, or 0 when none (lets the driver arm a timer). */
  nextExpiry(): number;
  /** Best bid / best ask of an outcome in its own space, 0 when that side is empty. */
  bestBid(outcome: Outcome): number;
  bestAsk(outcome: Outcome): number;
  /** Allocates: snapshot publication, tests and admin only. */
  depth(outcome: Outcome): Depth;
  /** Number of resting orders. */
  size(): number;
  /** Allocates: tests only. Resting orders in priority order per side, for state hashing and comparison. */
  orders(): Array<{ handle: number; owner: number; outcome: Outcome; side: Side; pricePips: number; remainingUnits: number; expiresAt: number }>;
}
