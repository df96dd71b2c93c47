/**
 * The liquidity-rewards sampler: every `rewards.sampleSeconds` it scores the open orders of every market
 * with a rewards program (domain/rewards.ts) and accrues each wallet's share of each market to the day.
 * Like the midpoint samples, these are observations of live books (books are not journaled), so they are
 * not a projection of the journal: what the service did not observe (while it was down) earns nothing.
 *
 * Written through the `views` overlay, whose writes go out with the projections' (ViewWrites):
 *   ['rwd-d', date]               -> seconds sampled that day (each sample counts the interval before it)
 *   ['rwd-m', date, conditionId]  -> {scoreSeconds}: the market's total score x seconds, over the day
 *   ['rwd-u', wallet, date, cid]  -> {shareSeconds, scoreSeconds, earned}: the wallet's share x seconds, score x
 *                                    seconds, and earnings per reward asset at the rates in force at each sample
 * A sample's interval is the configured period (the first sample after a start, too): earnings stay right if
 * the period changes between runs. queries/rewards.ts turns accruals into earnings.
 *
 * Samples fall every period after the start on the exchange's clock (its Timers: the system's, or the
 * sandbox's test clock). When the test clock was moved past several of them (its lazy timer says so), every
 * sample due is taken, each dated its own day and scored on the orders as they stand: nothing changed in
 * between, or an earlier timer would have fired first. A timer late for another reason (a busy loop) takes
 * one sample, as orders may have come and gone meanwhile. The midpoint is read from the same resting orders
 * it scores (domain/rewards.ts bookMidpoint, in production), so a sample sees one state.
 */
import type { OrderRecord } from '../domain/events.ts';
import { earningsOf, orderScore, utcDate, type RewardProgram } from '../domain/rewards.ts';
import { rewardKeys } from '../journal/keys.ts';
import { systemTimers, type Timers } from '../runtime/clock.ts';
import type { Logger } from '../runtime/log.ts';
import type { ViewStore } from './projector.ts';

/** A market with a rewards program, as the sampler needs it. */
export interface RewardMarket {
  conditionId: string;
  /** Outcome 0's token: the midpoint of the market's one book is read from it. */
  token0: string;
  program: RewardProgram;
}

export interface RewardAccrual {
  shareSeconds: number;
  scoreSeconds: number;
  /** Earned so far per reward asset at the rates in force at each sample: dailyRate * share * interval / 86400. */
  earned: Record<string, number>;
}

export interface MarketDay {
  scoreSeconds: number;
}

export interface RewardsSamplerDeps {
  /** Where accruals go (a sequencer passes one that also logs them for its replicas, which sample nothing). */
  views: Pick<ViewStore, 'get' | 'put'>;
  /** The markets with a rewards program now. */
  markets: () => RewardMarket[];
  /** Outcome 0's midpoint in pips, undefined without both sides; given the market's resting orders being scored. */
  midpoint: (token0: string, orders: readonly OrderRecord[]) => number | undefined;
  /** Every wallet's open orders in these markets. */
  orders: (conditionIds: ReadonlySet<string>) => OrderRecord[];
  now: () => number;
  /** Timers on the clock of `now`. Default: the system's. */
  timers?: Timers;
  sampleSeconds: number;
  log: Logger;
}

/** Each wallet's total score in a market, from its open orders against outcome 0's midpoint. */
export function walletScores(orders: readonly OrderRecord[], mid0Pips: number, program: RewardProgram): Map<string, number> {
  const out = new Map<string, number>();
  for (const o of orders) {
    const s = orderScore({ outcome: o.outcome, pricePips: o.pricePips, remainingUnits: o.sizeUnits - o.sizeMatched }, mid0Pips, program);
    if (s > 0) out.set(o.wallet, (out.get(o.wallet) ?? 0) + s);
  }
  return out;
}

const DAY_MS = 86_400_000;

export class RewardsSampler {
  private timer: unknown = undefined;
  private readonly timers: Timers;
  /** Time of the last sample (or of the start): the next is due one period after it. */
  private last = 0;
  /** Samples taken since start (tests, logs). */
  samples = 0;

  constructor(private readonly deps: RewardsSamplerDeps) {
    this.timers = deps.timers ?? systemTimers;
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.last = this.deps.now();
    this.arm();
  }

  stop(): void {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    const periodMs = this.deps.sampleSeconds * 1000;
    this.timer = this.timers.set((moved) => {
      try {
        this.catchUp(moved === true);
      } catch (err) {
        // A failed sample loses that interval's accruals; trading never depends on it.
        this.deps.log.error({ err }, 'rewards sample failed');
        this.last = this.deps.now();
      }
      this.arm();
      // Lazy: catchUp() takes every sample due, so a clock that jumps fires it once, not once a period.
    }, this.last + periodMs - this.deps.now(), { lazy: true });
  }

  /**
   * The samples due since the last one. `moved` (the test clock was moved past them while nothing else
   * happened): every one, each dated its own day, on the orders as they stand. Otherwise (time passed, the
   * timer ran late): one, now, as orders may have come and gone meanwhile.
   */
  catchUp(moved: boolean): void {
    const periodMs = this.deps.sampleSeconds * 1000;
    const due = Math.floor((this.deps.now() - this.last) / periodMs);
    if (!moved) {
      if (due > 0) {
        this.last += due * periodMs;
        this.sample();
      }
      return;
    }
    // The due samples' times, counted per UTC day a day at a time (a month at one second is 2.6M samples).
    const byDate = new Map<string, number>();
    const end = this.last + due * periodMs;
    for (let t = this.last + periodMs; t <= end; ) {
      const dayEnd = (Math.floor(t / DAY_MS) + 1) * DAY_MS;
      const k = Math.floor((Math.min(end, dayEnd - 1) - t) / periodMs) + 1;
      byDate.set(utcDate(t), k);
      t += k * periodMs;
    }
    this.last = end;
    for (const [date, n] of byDate) this.accrue(date, n);
  }

  /** One sample at the current time: scores every rewards market and accrues the shares to the day. */
  sample(): void {
    this.accrue(utcDate(this.deps.now()), 1);
  }

  /** `n` samples dated `date` on the orders as they stand (n > 1: a late timer catching up). */
  private accrue(date: string, n: number): void {
    const { views } = this.deps;
    const dt = this.deps.sampleSeconds * n;
    const markets = this.deps.markets();
    const sampledKey = rewardKeys.samples(date);
    views.put(sampledKey, (views.get<number>(sampledKey) ?? 0) + dt);
    this.samples += n;
    if (markets.length === 0) return;
    const byMarket = new Map<string, OrderRecord[]>();
    for (const o of this.deps.orders(new Set(markets.map((m) => m.conditionId)))) {
      const list = byMarket.get(o.conditionId);
      if (list === undefined) byMarket.set(o.conditionId, [o]);
      else list.push(o);
    }
    for (const m of markets) {
      const orders = byMarket.get(m.conditionId);
      const mid = orders === undefined ? undefined : this.deps.midpoint(m.token0, orders);
      if (mid === undefined || orders === undefined) continue;
      const scores = walletScores(orders, mid, m.program);
      let total = 0;
      for (const s of scores.values()) total += s;
      if (total <= 0) continue;
      const dayKey = rewardKeys.marketDay(date, m.conditionId);
      const day = views.get<MarketDay>(dayKey) ?? { scoreSeconds: 0 };
      views.put(dayKey, { scoreSeconds: day.scoreSeconds + total * dt } satisfies MarketDay);
      for (const [wallet, s] of scores) {
        const key = rewardKeys.accrual(wallet, date, m.conditionId);
        const a = views.get<RewardAccrual>(key) ?? { shareSeconds: 0, scoreSeconds: 0, earned: {} };
        const share = s / total;
        const earned = { ...a.earned };
        for (const r of m.program.rates) earned[r.asset] = (earned[r.asset] ?? 0) + earningsOf(r.dailyRate, share * dt);
        views.put(key, { shareSeconds: a.shareSeconds + share * dt, scoreSeconds: a.scoreSeconds + s * dt, earned } satisfies RewardAccrual);
      }
    }
  }
}
