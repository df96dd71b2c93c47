/**
 * What a market is and what an order on it may be (DESIGN section 6), written once for every module that
 * checks or shows it: the catalog import, the edge's order checks, the engine, and the readers.
 *
 *   outcomes   a binary market's two labels; ["Yes", "No"] when the catalog gives none
 *   lot        every order size is a whole number of 0.01 token, so a fill's USDC at an on-tick price
 *              is exact; a market's minimum size is a whole number of lots
 *   ticks      0.1, 0.01, 0.001 or 0.0001 (units.ts TICK_SIZES, the decimal forms a client sends)
 *   prices     a resting (GTC/GTD) price is a multiple of the tick within [tick, 1 - tick]; a FOK/FAK
 *              price is a worst acceptable price, any whole pip within [1, PIPS - 1]
 *   fees       integer basis points, at most BPS (100 %)
 *   GTD        its expiration is at least GTD_MIN_LEAD_SECONDS ahead when it is placed
 */
import { PIPS, TICK_SIZES, UNITS, tickToPips } from './units.ts';

/** Labels of a binary market the catalog does not describe (the catalog's own import default). */
export const DEFAULT_OUTCOMES: readonly [string, string] = Object.freeze(['Yes', 'No'] as [string, string]);

/** One lot, 0.01 token in units: the grain of every order size. */
export const LOT_UNITS = UNITS / 100;

/** The tick sizes a market may use, in pips (1000 = 0.1 down to 1 = 0.0001). */
export const TICK_PIPS: readonly number[] = Object.freeze(TICK_SIZES.map(tickToPips));

/** Basis points in a whole: the divisor of a fee rate and its largest value. */
export const BPS = 10_000;

/** GTD expirations closer than this are refused (the platform's one-minute security threshold). */
export const GTD_MIN_LEAD_SECONDS = 60;

/** A resting order's price: a whole multiple of the tick within [tick, 1 - tick]. */
export function onTick(pricePips: number, tickPips: number): boolean {
  return pricePips % tickPips === 0 && pricePips >= tickPips && pricePips <= PIPS - tickPips;
}
