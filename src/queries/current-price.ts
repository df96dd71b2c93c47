/**
 * The current price of a token (DESIGN section 7, `curPrice`), one rule for every reader: the market
 * lists' display price (queries/market-data.ts displayPrice, shown by GET /markets and the catalog's
 * outcomePrices), the midpoint samples of the price history, and the wallets' positions (queries/wallets/,
 * which add resolution and the catalog's seed price around it):
 *
 *   1. the midpoint of the token's published book, when both sides have orders and the spread is at most
 *      0.10 (WIDE_SPREAD_PIPS);
 *   2. else the last trade;
 *   3. else the midpoint of a wider book;
 *   4. else no price.
 *
 * The published book is the shard's GET /book body (engine/shard/book-json.ts): bids ascending and asks
 * descending, so the best price of each side is its last level. Only the top of each side is read.
 *
 * Pure functions over pips. NO_PRICE (0) stands for a price that does not exist: an empty book side, a
 * token that never traded (the engine's own sentinel for its last trade), a book without both sides for
 * a midpoint. No real price is 0: a resting price is at least one tick and a trade happens at a resting
 * price. A midpoint may end in half a pip.
 */
import { PIPS, parsePips } from '../domain/units.ts';

/** "No such price": an empty side, no trade yet, no midpoint. */
export const NO_PRICE = 0;

/** Spread above which the last trade replaces the midpoint: 0.10 in pips. */
export const WIDE_SPREAD_PIPS = PIPS / 10;

/** Best bid and best ask of a published book, in pips; NO_PRICE for an empty side. */
export interface BookTop {
  readonly bid: number;
  readonly ask: number;
}

export const EMPTY_TOP: BookTop = Object.freeze({ bid: NO_PRICE, ask: NO_PRICE });

type Levels = readonly { price: string }[];

const best = (levels: Levels): number => (levels.length === 0 ? NO_PRICE : (parsePips(levels[levels.length - 1].price) ?? NO_PRICE));

/** The top of a published /book body. Allocates (a JSON parse): callers keep it per snapshot version. */
export function parseBookTop(bookJson: string): BookTop {
  const book = JSON.parse(bookJson) as { bids: Levels; asks: Levels };
  return { bid: best(book.bids), ask: best(book.asks) };
}

/** Both sides have orders. */
export function twoSided(top: BookTop): boolean {
  return top.bid !== NO_PRICE && top.ask !== NO_PRICE;
}

/** Both sides have orders, at most 0.10 apart: the midpoint alone is the price, whatever the last trade. */
export function tight(top: BookTop): boolean {
  return twoSided(top) && top.ask - top.bid <= WIDE_SPREAD_PIPS;
}

/** The midpoint in pips (may end in .5); NO_PRICE unless both sides have orders. */
export function midpointPips(top: BookTop): number {
  return twoSided(top) ? (top.bid + top.ask) / 2 : NO_PRICE;
}

/** The current price in pips by the rule above (may end in .5); NO_PRICE when there is none. */
export function currentPricePips(top: BookTop, lastTradePips: number): number {
  if (tight(top)) return midpointPips(top);
  if (lastTradePips !== NO_PRICE) return lastTradePips;
  return midpointPips(top);
}
