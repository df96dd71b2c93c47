/**
 * Seeded command streams for the matching core: the differential test and the benchmarks replay the same
 * streams, so a failure or a number can always be reproduced from (options, seed, count).
 *
 * The generator drives its own reference book while it generates. That is how a cancel can aim at an order
 * that is really resting (instead of guessing, which would turn most cancels into UNKNOWN_ORDER no-ops)
 * and how a stream carries its predicted final state (`prediction()`), which benchmarks assert against.
 * The catch: the stream depends on the reference book's behaviour, so a semantic change to the reference
 * changes the streams of every seed. Nothing here is timed.
 *
 * Prices are drawn in outcome-0 space around a mid that drifts slowly; "passive" orders sit on their own
 * side of the mid, "aggressive" ones reach through it, so plenty cross. An order on outcome 1 is the same
 * bid/ask mirrored (bid at k = SELL outcome 1 at 10_000 - k; ask at k = BUY outcome 1 at 10_000 - k).
 */

import {
  FillKind,
  LOT_UNITS,
  PIPS_PER_UNIT_PRICE,
  Side,
  Tif,
  type Cancel,
  type EventSink,
  type Fill,
  type MarketParams,
  type MatchingBook,
  type Outcome,
  type PlaceCommand,
} from '../src/engine/book/api.ts';
import { createReferenceBook } from '../src/engine/book/reference-book.ts';

export const Op = { PLACE: 0, CANCEL: 1, EXPIRE: 2 } as const;

export type BookCommand =
  | { op: typeof Op.PLACE; cmd: PlaceCommand }
  | { op: typeof Op.CANCEL; handle: number }
  | { op: typeof Op.EXPIRE; nowSec: number };

/** Relative weights of what the next command is, and how orders are dressed. */
export interface WorkloadMix {
  passive: number;
  aggressive: number;
  cancel: number;
  expire: number;
  /** Share of orders on outcome 1 (mirrored complementary orders). */
  outcome1Share: number;
  /** TIF weights of aggressive orders [GTC, GTD, FOK, FAK]; passive orders are GTC or GTD (gtdShare). */
  aggressiveTif: [number, number, number, number];
  gtdShare: number;
  postOnlyShare: number;
  /** Share of FOK/FAK BUYs whose budget is below their notional (the budget binds). */
  tightBudgetShare: number;
  /** Share of places that are invalid (price or size) and of places that reuse a resting handle. */
  invalidShare: number;
  duplicateShare: number;
  /** Share of cancels aimed at a handle that is not resting. */
  unknownCancelShare: number;
  /** Passive orders sit at least this many ticks away from the mid (>= 1: they never cross each other). */
  passiveGapTicks: number;
  /** Probability per command that the mid moves by one tick. */
  midDrift: number;
  /** Share of orders placed at the extreme prices tick and 10_000 - tick. */
  extremeShare: number;
  /**
   * Above this many resting orders half the commands become cancels, so a long stream reaches a steady
   * state instead of a book that only grows (Infinity: no cap).
   */
  targetResting: number;
}

export const MIXES = {
  /** Every feature: both outcomes, all TIFs, mint/merge, STP, budgets, post-only, invalid input, expiry. */
  full: {
    passive: 50, aggressive: 25, cancel: 20, expire: 2,
    outcome1Share: 0.5, aggressiveTif: [3, 1, 2, 3], gtdShare: 0.25, postOnlyShare: 0.08,
    tightBudgetShare: 0.3, invalidShare: 0.02, duplicateShare: 0.01, unknownCancelShare: 0.1,
    passiveGapTicks: 0, midDrift: 0.02, extremeShare: 0.01, targetResting: 400,
  },
  /** Resting adds only: passive GTC orders on one outcome that never cross. */
  restingAdds: {
    passive: 1, aggressive: 0, cancel: 0, expire: 0,
    outcome1Share: 0, aggressiveTif: [1, 0, 0, 0], gtdShare: 0, postOnlyShare: 0,
    tightBudgetShare: 0, invalidShare: 0, duplicateShare: 0, unknownCancelShare: 0,
    passiveGapTicks: 1, midDrift: 0, extremeShare: 0, targetResting: Infinity,
  },
  /** GTC limit orders on one outcome priced through the mid: most of them trade. */
  crossing: {
    passive: 1, aggressive: 1, cancel: 0, expire: 0,
    outcome1Share: 0, aggressiveTif: [1, 0, 0, 0], gtdShare: 0, postOnlyShare: 0,
    tightBudgetShare: 0, invalidShare: 0, duplicateShare: 0, unknownCancelShare: 0,
    passiveGapTicks: 0, midDrift: 0, extremeShare: 0, targetResting: Infinity,
  },
  /** 60% resting adds, 25% cancels of resting orders, 15% crossing GTC limits; one outcome. */
  mixedCancels: {
    passive: 60, aggressive: 15, cancel: 25, expire: 0,
    outcome1Share: 0, aggressiveTif: [1, 0, 0, 0], gtdShare: 0, postOnlyShare: 0,
    tightBudgetShare: 0, invalidShare: 0, duplicateShare: 0, unknownCancelShare: 0,
    passiveGapTicks: 1, midDrift: 0, extremeShare: 0, targetResting: Infinity,
  },
} satisfies Record<string, WorkloadMix>;

export interface WorkloadOptions {
  seed: number;
  params: MarketParams;
  mix: WorkloadMix;
  /** Mid in outcome-0 pips (default 5_000, snapped to the tick). */
  midPips?: number;
  /** Passive orders spread over this many ticks from the mid (default 16). */
  bandTicks?: number;
  /** Aggressive orders reach up to this many ticks through the mid (default 6). */
  reachTicks?: number;
  /** Order sizes are max(minSize, 1..maxLots lots) (default 20). */
  maxLots?: number;
  /** Number of distinct owners; 0 gives every order its own owner, so no self-trade can happen (default 8). */
  owners?: number;
  /** Clock start in unix seconds (default 1_700_000_000). */
  startSec?: number;
}

/** What the stream does to a book that starts empty, as the reference book computed it. */
export interface Prediction {
  commands: number;
  restingOrders: number;
  restingUnits: number;
  fills: number;
  filledUnits: number;
  /** Sum over fills of takerUsdc + makerUsdc, and of both fees. */
  notionalUsdc: number;
  fees: number;
  transferUnits: number;
  mintUnits: number;
  mergeUnits: number;
  cancels: number;
}

/** sfc32: small, fast, and good enough to shuffle commands; not for anything secret. */
export function createRng(seed: number): { next(): number; int(n: number): number; chance(p: number): boolean } {
  let a = 0x9e3779b9 ^ seed;
  let b = 0x243f6a88 + seed * 0x85ebca6b;
  let c = 0xb7e15162 ^ (seed >>> 16);
  let d = 1;
  const next = (): number => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    const t = (a + b + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 16; i++) next();
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    chance: (p: number) => next() < p,
  };
}

/** Handles that rest right now, with O(1) add, remove and random pick. */
class LiveSet {
  private readonly list: number[] = [];
  private readonly index = new Map<number, number>();
  get length(): number {
    return this.list.length;
  }
  add(h: number): void {
    if (this.index.has(h)) return;
    this.index.set(h, this.list.length);
    this.list.push(h);
  }
  remove(h: number): void {
    const i = this.index.get(h);
    if (i === undefined) return;
    const last = this.list.pop() as number;
    if (last !== h) {
      this.list[i] = last;
      this.index.set(last, i);
    }
    this.index.delete(h);
  }
  at(i: number): number {
    return this.list[i];
  }
}

export class WorkloadGenerator {
  private readonly rng;
  private readonly params: MarketParams;
  private readonly mix: WorkloadMix;
  private readonly band: number;
  private readonly reach: number;
  private readonly maxLots: number;
  private readonly owners: number;
  private readonly totalWeight: number;
  private readonly live = new LiveSet();
  private readonly oracle: MatchingBook;
  private readonly sink: EventSink;
  private readonly stats: Prediction = {
    commands: 0, restingOrders: 0, restingUnits: 0, fills: 0, filledUnits: 0, notionalUsdc: 0, fees: 0,
    transferUnits: 0, mintUnits: 0, mergeUnits: 0, cancels: 0,
  };
  private mid: number;
  private nowSec: number;
  private nextHandle = 1;

  constructor(opts: WorkloadOptions) {
    this.rng = createRng(opts.seed);
    this.params = opts.params;
    this.mix = opts.mix;
    this.band = opts.bandTicks ?? 16;
    this.reach = opts.reachTicks ?? 6;
    this.maxLots = opts.maxLots ?? 20;
    this.owners = opts.owners ?? 8;
    this.nowSec = opts.startSec ?? 1_700_000_000;
    const tick = this.params.tickPips;
    this.mid = Math.round((opts.midPips ?? 5_000) / tick) * tick;
    const m = this.mix;
    this.totalWeight = m.passive + m.aggressive + m.cancel + m.expire;
    this.oracle = createReferenceBook({ ...opts.params });
    const stats = this.stats;
    const live = this.live;
    this.sink = {
      fill(f: Fill): void {
        stats.fills++;
        stats.filledUnits += f.sizeUnits;
        stats.notionalUsdc += f.takerUsdc + f.makerUsdc;
        stats.fees += f.takerFee + f.makerFee;
        if (f.kind === FillKind.TRANSFER) stats.transferUnits += f.sizeUnits;
        else if (f.kind === FillKind.MINT) stats.mintUnits += f.sizeUnits;
        else stats.mergeUnits += f.sizeUnits;
        if (f.makerRemainingUnits === 0) live.remove(f.makerHandle);
      },
      cancel(c: Cancel): void {
        stats.cancels++;
        live.remove(c.handle);
      },
    };
  }

  /** The next command; the generator's own reference book has already applied it. */
  next(): BookCommand {
    const c = this.draw();
    this.stats.commands++;
    if (c.op === Op.PLACE) {
      const r = this.oracle.place(c.cmd, this.sink);
      if (r.restingUnits > 0) this.live.add(c.cmd.handle);
    } else if (c.op === Op.CANCEL) {
      this.oracle.cancel(c.handle, this.sink);
    } else {
      this.oracle.expire(c.nowSec, this.sink);
    }
    return c;
  }

  /** The generator's reference book, holding the predicted final state (read it, don't drive it). */
  book(): MatchingBook {
    return this.oracle;
  }

  /** Final state and totals of everything generated so far. */
  prediction(): Prediction {
    let units = 0;
    for (const o of this.oracle.orders()) units += o.remainingUnits;
    return { ...this.stats, restingOrders: this.oracle.size(), restingUnits: units };
  }

  private draw(): BookCommand {
    const m = this.mix;
    const rng = this.rng;
    const tick = this.params.tickPips;
    if (m.midDrift > 0 && rng.chance(m.midDrift)) {
      const lo = tick * (this.band + 1);
      const hi = PIPS_PER_UNIT_PRICE - lo;
      const moved = this.mid + (rng.chance(0.5) ? tick : -tick);
      if (moved >= lo && moved <= hi) this.mid = moved;
    }
    if (this.live.length > m.targetResting && rng.chance(0.5)) return this.cancel();
    let r = rng.next() * this.totalWeight;
    if ((r -= m.passive) < 0) return this.place(false);
    if ((r -= m.aggressive) < 0) return this.place(true);
    if ((r -= m.cancel) < 0) return this.cancel();
    this.nowSec += 1 + rng.int(120);
    return { op: Op.EXPIRE, nowSec: this.nowSec };
  }

  private cancel(): BookCommand {
    const rng = this.rng;
    if (this.live.length === 0 || rng.chance(this.mix.unknownCancelShare)) {
      // A used handle that may have left the book, or one never issued.
      const h = rng.chance(0.5) && this.nextHandle > 1 ? 1 + rng.int(this.nextHandle - 1) : this.nextHandle + 1_000_000 + rng.int(1000);
      return { op: Op.CANCEL, handle: h };
    }
    return { op: Op.CANCEL, handle: this.live.at(rng.int(this.live.length)) };
  }

  private place(aggressive: boolean): BookCommand {
    const m = this.mix;
    const rng = this.rng;
    const tick = this.params.tickPips;
    const isBid = rng.chance(0.5);
    let tif: Tif = Tif.GTC;
    if (aggressive) {
      const w = m.aggressiveTif;
      let t = rng.next() * (w[0] + w[1] + w[2] + w[3]);
      tif = (t -= w[0]) < 0 ? Tif.GTC : (t -= w[1]) < 0 ? Tif.GTD : (t -= w[2]) < 0 ? Tif.FOK : Tif.FAK;
    } else if (rng.chance(m.gtdShare)) {
      tif = Tif.GTD;
    }
    const rests = tif === Tif.GTC || tif === Tif.GTD;

    // Offset from the mid in ticks, positive = towards the other side of the book.
    const offset = aggressive ? rng.int(this.reach + 1) : -(m.passiveGapTicks + rng.int(this.band));
    let key = this.mid + (isBid ? offset : -offset) * tick;
    if (m.extremeShare > 0 && rng.chance(m.extremeShare)) key = rng.chance(0.5) ? tick : PIPS_PER_UNIT_PRICE - tick;
    key = Math.min(Math.max(key, tick), PIPS_PER_UNIT_PRICE - tick);
    if (!rests && tick > 1 && rng.chance(0.3)) {
      // Off-tick worst-acceptable price, always more generous than the tick it rounds from.
      key += (isBid ? 1 : -1) * (1 + rng.int(tick - 1));
      key = Math.min(Math.max(key, 1), PIPS_PER_UNIT_PRICE - 1);
    }

    const outcome: Outcome = rng.chance(m.outcome1Share) ? 1 : 0;
    const side: Side = (outcome === 0) === isBid ? Side.BUY : Side.SELL;
    let pricePips = outcome === 0 ? key : PIPS_PER_UNIT_PRICE - key;

    const minLots = Math.max(1, Math.ceil(this.params.minSizeUnits / LOT_UNITS));
    let sizeUnits = Math.max(minLots, 1 + rng.int(this.maxLots)) * LOT_UNITS;

    let handle = this.nextHandle++;
    if (m.duplicateShare > 0 && this.live.length > 0 && rng.chance(m.duplicateShare)) {
      handle = this.live.at(rng.int(this.live.length));
    } else if (m.invalidShare > 0 && rng.chance(m.invalidShare)) {
      switch (rng.int(4)) {
        case 0: pricePips = rests && tick > 1 ? pricePips + 1 : 0; break;
        case 1: pricePips = rng.chance(0.5) ? 0 : PIPS_PER_UNIT_PRICE; break;
        case 2: sizeUnits += 1 + rng.int(LOT_UNITS - 1); break;
        default: sizeUnits = this.params.minSizeUnits > LOT_UNITS ? this.params.minSizeUnits - LOT_UNITS : 0;
      }
    }

    let budgetUnits = 0;
    if (!rests && side === Side.BUY) {
      // The sequencer passes the order's makerAmount: what its limit price allows for its size.
      budgetUnits = Math.floor((sizeUnits * Math.min(pricePips, PIPS_PER_UNIT_PRICE)) / PIPS_PER_UNIT_PRICE);
      if (rng.chance(m.tightBudgetShare)) budgetUnits = Math.max(1, Math.floor(budgetUnits * (0.2 + 0.7 * rng.next())));
    }

    return {
      op: Op.PLACE,
      cmd: {
        handle,
        owner: this.owners === 0 ? handle : rng.int(this.owners),
        outcome,
        side,
        tif,
        postOnly: rests && rng.chance(m.postOnlyShare),
        pricePips,
        sizeUnits,
        budgetUnits,
        expiresAt: tif === Tif.GTD ? this.nowSec + 1 + rng.int(300) : 0,
      },
    };
  }
}

/** Allocates the whole stream: benchmarks generate before timing starts. */
export function generateWorkload(
  opts: WorkloadOptions,
  count: number,
): { commands: BookCommand[]; prediction: Prediction; finalBook: MatchingBook } {
  const g = new WorkloadGenerator(opts);
  const commands: BookCommand[] = new Array(count);
  for (let i = 0; i < count; i++) commands[i] = g.next();
  return { commands, prediction: g.prediction(), finalBook: g.book() };
}
