/**
 * Liquidity rewards: which open orders score, how much, and how scores become earnings. Pure functions on
 * integers (pips, units) where they can be; the rule is written out in docs/decisions/wallet-data.md,
 * "Liquidity rewards".
 *
 * A market has a rewards program when its catalog record has a positive `rewardsDailyRate` (clobRewards) and
 * a positive `rewardsMaxSpread` (cents) and it accepts orders (the sampling markets). Following the platform:
 *
 *   scores    an open order scores when its remaining size is at least `rewardsMinSize` tokens and its
 *             price lies within `rewardsMaxSpread` cents of the midpoint of the market's book (both
 *             outcomes are one book: an order on outcome 1 at p is measured at 1 - p against outcome 0's
 *             midpoint); a book without both sides has no midpoint, and nothing scores
 *   score     S = ((v - s) / v)^2 * size, v the max spread, s the order's distance from the midpoint, size its
 *             remaining tokens: the platform's quadratic scoring, full weight at the midpoint, none at v
 *   share     at each sample, a wallet's share of a market is its orders' S over every order's S there
 *   earnings  a wallet earns, per market and reward asset, dailyRate * (sum over the day's samples of
 *             share * the sample's interval in seconds) / 86,400: all of the scoring liquidity for a whole
 *             day earns the whole daily rate, half of it for an hour 1/48 of it. A sample where no order
 *             scores pays no one; a wallet that never scored earns 0.
 */

/** Pips per cent and per unit of price (prices are pips of 10^-4). */
const PIPS_PER_CENT = 100;
const PIPS_PER_UNIT = 10_000;
const UNITS_PER_TOKEN = 1_000_000;
export const SECONDS_PER_DAY = 86_400;

export interface RewardRate {
  /** Lowercase address of the reward asset. */
  asset: string;
  dailyRate: number;
}

export interface RewardProgram {
  rates: RewardRate[];
  /** Smallest remaining size that scores, units (10^-6 token). */
  minSizeUnits: number;
  /** Farthest distance from the midpoint that scores, pips. */
  maxSpreadPips: number;
}

/** The program configured on a catalog market (its rewards fields); undefined when it pays nothing. */
export function rewardProgram(m: {
  clobRewards: readonly { assetAddress: string; rewardsDailyRate: number }[];
  rewardsMinSize: number;
  rewardsMaxSpread: number;
}): RewardProgram | undefined {
  const rates = m.clobRewards.filter((r) => r.rewardsDailyRate > 0).map((r) => ({ asset: r.assetAddress.toLowerCase(), dailyRate: r.rewardsDailyRate }));
  if (rates.length === 0 || !(m.rewardsMaxSpread > 0)) return undefined;
  return { rates, minSizeUnits: Math.round(m.rewardsMinSize * UNITS_PER_TOKEN), maxSpreadPips: m.rewardsMaxSpread * PIPS_PER_CENT };
}

/**
 * Outcome 0's midpoint (pips, may end in .5) of a market's one book, from its resting orders: bids are BUYs
 * of outcome 0 and SELLs of outcome 1 mirrored at 1 - p, asks SELLs of outcome 0 and BUYs of outcome 1
 * mirrored; undefined without both sides. The same book the committed books serve, from the orders in hand.
 */
export function bookMidpoint(orders: readonly { outcome: 0 | 1; side: 'BUY' | 'SELL'; pricePips: number }[]): number | undefined {
  let bid = -1;
  let ask = Infinity;
  for (const o of orders) {
    const p = o.outcome === 0 ? o.pricePips : PIPS_PER_UNIT - o.pricePips;
    const isBid = (o.outcome === 0) === (o.side === 'BUY');
    if (isBid) {
      if (p > bid) bid = p;
    } else if (p < ask) ask = p;
  }
  return bid < 0 || ask === Infinity ? undefined : (bid + ask) / 2;
}

/** What scoring needs of an open order. */
export interface ScoredOrder {
  outcome: 0 | 1;
  /** Limit price in the order's own outcome, pips. */
  pricePips: number;
  /** Unfilled size, units. */
  remainingUnits: number;
}

/** The order's score S against outcome 0's midpoint (pips, may end in .5); 0 when it does not score. */
export function orderScore(o: ScoredOrder, mid0Pips: number, p: RewardProgram): number {
  if (o.remainingUnits <= 0 || o.remainingUnits < p.minSizeUnits) return 0;
  const price0 = o.outcome === 0 ? o.pricePips : 10_000 - o.pricePips;
  const s = Math.abs(price0 - mid0Pips);
  if (s > p.maxSpreadPips) return 0;
  const w = (p.maxSpreadPips - s) / p.maxSpreadPips;
  return w * w * (o.remainingUnits / UNITS_PER_TOKEN);
}

/** Whether the order scores now. */
export function scores(o: ScoredOrder, mid0Pips: number | undefined, p: RewardProgram | undefined): boolean {
  return p !== undefined && mid0Pips !== undefined && orderScore(o, mid0Pips, p) > 0;
}

/** Earnings of `shareSeconds` (share x seconds accrued in one day) at a daily rate. */
export function earningsOf(dailyRate: number, shareSeconds: number): number {
  return (dailyRate * shareSeconds) / SECONDS_PER_DAY;
}

/** The UTC date (YYYY-MM-DD) of a time in ms: the day a sample accrues to. */
export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
