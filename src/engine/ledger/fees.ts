/**
 * Fees and the USDC an order's size stands for, in integer units: the platform's fee formula (`feeOf`), a
 * notional (`notional`) and what a BUY must hold reserved to pay for all its fills and their fees (`buyNeed`).
 * Pure arithmetic, exact beyond 2^53 intermediates; the ledger (ledger.ts), the reservations
 * (reservation.ts) and settlement (settlement.ts) call it.
 *
 * Fee reservation rule: fee = floor(bps * min(P, 1 - P) * size) (the platform's symmetric formula, `feeOf`).
 * min(P, 1 - P) <= min(p, 0.5) for every trade price P at or better than the limit p of a BUY, and a sum of
 * floors is at most the floor of the sum, so `feeOf(bps, min(p, 0.5), size)` bounds all fees the order can
 * pay over all its fills, and after any partial fill the reservation still covers the remaining bound (see
 * `buyNeed`). `bps` is the larger of the maker and taker rates for resting orders (a GTC order can be
 * the taker first and a maker later), the taker rate for FOK/FAK.
 */

import { LOT_UNITS } from '../../domain/market-rules.ts';
import { PIPS } from '../../domain/units.ts';

const LOT = LOT_UNITS;
const HALF = PIPS / 2;

/** floor(a * b / d) for non-negative integers, exact beyond 2^53 intermediates. */
function mulDiv(a: number, b: number, d: number): number {
  const p = a * b;
  if (p <= Number.MAX_SAFE_INTEGER) return Math.floor(p / d);
  return Number((BigInt(a) * BigInt(b)) / BigInt(d));
}

/** Fee in USDC units of one party: floor(bps * min(P, 10_000 - P) * size / 10^8). */
export function feeOf(bps: number, pricePips: number, sizeUnits: number): number {
  if (bps === 0) return 0;
  const m = Math.min(pricePips, PIPS - pricePips);
  return mulDiv(bps * m, sizeUnits, PIPS * PIPS);
}

/** USDC notional of `sizeUnits` tokens at `pricePips` (exact: sizes are whole lots). */
export function notional(pricePips: number, sizeUnits: number): number {
  return (sizeUnits / LOT) * pricePips;
}

/**
 * What a BUY must hold reserved.
 *   resting (GTC/GTD), `remaining` tokens left at limit p: remaining * p + feeOf(bps, min(p, 0.5), remaining)
 *   FOK/FAK with budget B (its makerAmount) and size S:   B + floor(bps * min(B, min(p, 0.5) * S) / 10^4)
 * For FOK/FAK the sum of fills' USDC is at most B and the sum of min(P, 1-P) * size at most both B and
 * min(p, 0.5) * S, which gives the second bound.
 */
export function buyNeed(resting: boolean, pricePips: number, remaining: number, budget: number, feeBps: number): number {
  const capped = Math.min(pricePips, HALF);
  if (resting) return notional(pricePips, remaining) + feeOf(feeBps, capped, remaining);
  if (feeBps === 0) return budget;
  const feeBase = Math.min(budget, notional(capped, remaining));
  return budget + mulDiv(feeBps, feeBase, PIPS);
}
