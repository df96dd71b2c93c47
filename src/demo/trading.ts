/**
 * The traders' decisions, shared by the living demo (src/demo/live.ts, in process) and tools/simulate.ts
 * (over HTTP): a seeded random source, the fair-price walk of a market, what a market maker quotes, what
 * a taker sends, and how an intent in "Yes" terms becomes an order the engine takes. Pure functions of
 * their inputs: no clock, no I/O, so the same seed gives the same decisions (test/demo/trading.test.ts).
 *
 * Units: prices in pips of outcome 0 (10_000 = 1 USDC), sizes in units (10^-6 token), whole lots of 0.01
 * token (LOT_UNITS) as the engine requires.
 *
 * Intents are in outcome-0 ("Yes") terms: buy Yes at p, sell Yes at p. The book of a market is one book
 * in outcome-0 space (engine/book/match.ts): BUY 1 at 1 - p rests as an ask at p, SELL 1 at 1 - p as a
 * bid at p. So a trader without tokens can still quote both sides with USDC alone (the fill mints a
 * pair), and one holding tokens sells them instead (the fill transfers or merges them): `legFor` picks,
 * which recycles collateral and keeps a long-running demo from tying all its USDC up in tokens.
 */
import { rng as mulberry32 } from './catalog.ts';
import { LOT_UNITS } from '../domain/market-rules.ts';
import { PIPS, UNITS } from '../domain/units.ts';

// ---- seeded randomness ---------------------------------------------------------------------------------

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [0, n). */
  int(n: number): number;
  chance(p: number): boolean;
  /** Standard normal (Box-Muller). */
  normal(): number;
}

export function createRng(seed: number): Rng {
  const u = mulberry32(seed);
  return {
    next: u,
    int: (n) => Math.floor(u() * n),
    chance: (p) => u() < p,
    normal: () => {
      // 1 - u() is in (0, 1]: the log is finite.
      const r = Math.sqrt(-2 * Math.log(1 - u()));
      return r * Math.cos(2 * Math.PI * u());
    },
  };
}

// ---- fair price --------------------------------------------------------------------------------------------

export interface WalkParams {
  /** Standard deviation of the log-odds move over one hour. */
  volPerSqrtHour: number;
  /** Pull back towards the anchor, per hour (0: a pure random walk). */
  reversionPerHour: number;
  /** Bounds of the fair price in pips. */
  minPips: number;
  maxPips: number;
}

const HOUR_MS = 3_600_000;
const logit = (p: number) => Math.log(p / (1 - p));
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/**
 * A market's fair price: a mean-reverting random walk in log-odds (so moves shrink near 0 and 1, as
 * prediction-market prices do), kept within [minPips, maxPips]. `recent` keeps the last values for
 * momentum takers.
 */
export class FairWalk {
  private x: number;
  private anchor: number;
  private readonly recent: number[] = [];

  constructor(
    initialPips: number,
    private params: WalkParams,
    private readonly rng: Rng,
    private readonly memory = 12,
  ) {
    this.x = logit(this.bound(initialPips) / PIPS);
    this.anchor = this.x;
    this.recent.push(this.pips);
  }

  /** The fair price in pips, not rounded to any tick. */
  get pips(): number {
    return this.bound(sigmoid(this.x) * PIPS);
  }

  /** Moves `dtMs` forward. */
  step(dtMs: number): void {
    if (dtMs <= 0) return;
    const h = dtMs / HOUR_MS;
    const p = this.params;
    this.x += p.reversionPerHour * h * (this.anchor - this.x) + p.volPerSqrtHour * Math.sqrt(h) * this.rng.normal();
    this.x = logit(this.bound(sigmoid(this.x) * PIPS) / PIPS);
    this.recent.push(this.pips);
    if (this.recent.length > this.memory) this.recent.shift();
  }

  /** New parameters, anchored where the walk is now (the live phase starts where the replay ended). */
  retune(params: WalkParams): void {
    this.params = params;
    this.anchor = this.x;
  }

  /** Change of the fair price over the remembered steps, in pips (positive: rising). */
  get trendPips(): number {
    return this.recent[this.recent.length - 1]! - this.recent[0]!;
  }

  private bound(pips: number): number {
    return Math.min(this.params.maxPips, Math.max(this.params.minPips, pips));
  }
}

// ---- market makers -----------------------------------------------------------------------------------------

export interface MakerParams {
  /** Distance of each quote from the (skewed) fair price. */
  halfSpreadPips: number;
  /** Size of each quote (rounded down to whole lots, at least the market's minimum). */
  sizeUnits: number;
  /** Net Yes position (Yes tokens minus No tokens) at which the side that would grow it stops quoting. */
  maxInventoryUnits: number;
  /** How far the quotes lean against the inventory at the limit (leaning sells what it holds). */
  skewPips: number;
  /** A resting quote this far from the wanted price (or more) is replaced. */
  requotePips: number;
}

export interface MarketRules {
  tickPips: number;
  minSizeUnits: number;
}

/** A maker's wanted quotes in outcome-0 pips, on tick; a missing side is not quoted. */
export interface Quote {
  bid?: number;
  ask?: number;
  sizeUnits: number;
}

const lots = (units: number) => Math.floor(units / LOT_UNITS) * LOT_UNITS;

/** A size in whole lots, at least the market's minimum. */
export function sizeFor(units: number, m: MarketRules): number {
  return Math.max(lots(units), Math.ceil(m.minSizeUnits / LOT_UNITS) * LOT_UNITS);
}

/**
 * What a maker quotes around `fairPips` holding `inventoryUnits` net Yes: bid and ask on tick, inside
 * [tick, 1 - tick], at least one tick apart, centred on the fair price leaned against the inventory; at
 * the inventory limit the side that would grow it is dropped.
 */
export function makerQuote(fairPips: number, inventoryUnits: number, p: MakerParams, m: MarketRules): Quote {
  const tick = m.tickPips;
  const lean = Math.max(-1, Math.min(1, inventoryUnits / p.maxInventoryUnits));
  const centre = fairPips - p.skewPips * lean;
  let bid = Math.floor((centre - p.halfSpreadPips) / tick) * tick;
  let ask = Math.ceil((centre + p.halfSpreadPips) / tick) * tick;
  bid = Math.min(PIPS - 2 * tick, Math.max(tick, bid));
  ask = Math.max(2 * tick, Math.min(PIPS - tick, ask));
  if (ask <= bid) {
    if (bid + tick <= PIPS - tick) ask = bid + tick;
    else bid = ask - tick;
  }
  const q: Quote = { sizeUnits: sizeFor(p.sizeUnits, m) };
  if (inventoryUnits < p.maxInventoryUnits) q.bid = bid;
  if (inventoryUnits > -p.maxInventoryUnits) q.ask = ask;
  return q;
}

/** A resting quote at `restingPips` should be replaced by one at `wantedPips`. */
export function needsRequote(restingPips: number, wantedPips: number, p: MakerParams, m: MarketRules): boolean {
  return Math.abs(restingPips - wantedPips) >= Math.max(m.tickPips, p.requotePips);
}

// ---- takers ------------------------------------------------------------------------------------------------

export interface TakerParams {
  /** random: buys or sells at even odds; momentum: follows the fair price's recent trend. */
  style: 'random' | 'momentum';
  /** The limit is this far through the fair price: a taker crosses quotes up to it. */
  edgePips: number;
  minSizeUnits: number;
  maxSizeUnits: number;
  /** Net Yes position beyond which the taker only trades back towards zero. */
  maxInventoryUnits: number;
  /** Momentum: the smallest trend (pips over the remembered steps) it acts on. */
  trendPips: number;
}

/** Cross the book: buy (or sell) Yes up to (down to) `limitPips`, `sizeUnits` at most. */
export interface TakeIntent {
  buy: boolean;
  limitPips: number;
  sizeUnits: number;
}

/**
 * What a taker sends now, or undefined (a momentum taker without a trend). The limit is fair +- edge (at
 * least two ticks), any whole pip in [1, 9_999] (a FAK bound need not be on tick).
 */
export function takerIntent(p: TakerParams, rng: Rng, fairPips: number, trendPips: number, inventoryUnits: number, m: MarketRules): TakeIntent | undefined {
  let buy: boolean;
  if (inventoryUnits >= p.maxInventoryUnits) buy = false;
  else if (inventoryUnits <= -p.maxInventoryUnits) buy = true;
  else if (p.style === 'momentum') {
    if (Math.abs(trendPips) < p.trendPips) return undefined;
    buy = trendPips > 0;
  } else buy = rng.chance(0.5);
  const span = Math.max(0, Math.floor((p.maxSizeUnits - p.minSizeUnits) / LOT_UNITS));
  const sizeUnits = sizeFor(p.minSizeUnits + rng.int(span + 1) * LOT_UNITS, m);
  // At least two ticks through: on a coarse tick the nearest quotes sit up to a tick beyond fair +- spread.
  const edge = Math.max(p.edgePips, 2 * m.tickPips);
  const limitPips = buy ? Math.min(PIPS - 1, Math.round(fairPips + edge)) : Math.max(1, Math.round(fairPips - edge));
  return { buy, limitPips, sizeUnits };
}

// ---- orders ------------------------------------------------------------------------------------------------

/** One order as the engine takes it: an outcome, a side, a price in that outcome's own space. */
export interface Leg {
  outcome: 0 | 1;
  side: 'BUY' | 'SELL';
  pricePips: number;
  sizeUnits: number;
}

/** Tokens a trader can sell now (held and not promised to its own resting sells). */
export interface FreeTokens {
  yes: number;
  no: number;
}

/**
 * The order that buys (or sells) `sizeUnits` Yes at `pricePips`: selling the opposite token when enough of
 * it is free, else buying with USDC (buying No at 1 - p sells Yes at p).
 */
export function legFor(buyYes: boolean, pricePips: number, sizeUnits: number, free: FreeTokens): Leg {
  if (buyYes) {
    return free.no >= sizeUnits ? { outcome: 1, side: 'SELL', pricePips: PIPS - pricePips, sizeUnits } : { outcome: 0, side: 'BUY', pricePips, sizeUnits };
  }
  return free.yes >= sizeUnits ? { outcome: 0, side: 'SELL', pricePips, sizeUnits } : { outcome: 1, side: 'BUY', pricePips: PIPS - pricePips, sizeUnits };
}

/** The USDC side of `sizeUnits` at `pricePips`: exact, since a size is whole lots of 10^4 units. */
export const usdcOf = (sizeUnits: number, pricePips: number) => (sizeUnits / LOT_UNITS) * pricePips;

/**
 * The signed amounts of a leg (V2 order struct): BUY offers USDC for tokens, SELL offers tokens for USDC.
 * The engine reads the price back as USDC x 10_000 / size, so it is the leg's price exactly.
 */
export function orderAmounts(leg: Leg): { makerAmount: number; takerAmount: number } {
  const usdc = usdcOf(leg.sizeUnits, leg.pricePips);
  return leg.side === 'BUY' ? { makerAmount: usdc, takerAmount: leg.sizeUnits } : { makerAmount: leg.sizeUnits, takerAmount: usdc };
}

// ---- presets (the living demo's traders; tools/simulate.ts's defaults) ---------------------------------------

/** A tight, a middle and a deep maker: three levels a side in every book. */
export const MAKER_PRESETS: readonly MakerParams[] = [
  { halfSpreadPips: 100, sizeUnits: 60 * UNITS, maxInventoryUnits: 600 * UNITS, skewPips: 100, requotePips: 100 },
  { halfSpreadPips: 250, sizeUnits: 150 * UNITS, maxInventoryUnits: 1_500 * UNITS, skewPips: 150, requotePips: 150 },
  { halfSpreadPips: 500, sizeUnits: 400 * UNITS, maxInventoryUnits: 4_000 * UNITS, skewPips: 200, requotePips: 250 },
];

export const TAKER_PRESETS: readonly TakerParams[] = [
  { style: 'random', edgePips: 300, minSizeUnits: 5 * UNITS, maxSizeUnits: 60 * UNITS, maxInventoryUnits: 400 * UNITS, trendPips: 0 },
  { style: 'random', edgePips: 400, minSizeUnits: 10 * UNITS, maxSizeUnits: 120 * UNITS, maxInventoryUnits: 800 * UNITS, trendPips: 0 },
  { style: 'momentum', edgePips: 350, minSizeUnits: 10 * UNITS, maxSizeUnits: 80 * UNITS, maxInventoryUnits: 600 * UNITS, trendPips: 60 },
];

/** The demo's replayed week: a few cents a day, so the week's chart has a shape. */
export const HISTORY_WALK: WalkParams = { volPerSqrtHour: 0.06, reversionPerHour: 0.02, minPips: 150, maxPips: 9_850 };
/** Live: visibly moving within seconds, pulled back within the hour. */
export const LIVE_WALK: WalkParams = { volPerSqrtHour: 0.35, reversionPerHour: 1, minPips: 150, maxPips: 9_850 };
