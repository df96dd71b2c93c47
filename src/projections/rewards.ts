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
 */
import type { OrderRecord } from '../domain/events.ts';
import { earningsOf, orderScore, utcDate, type RewardProgram } from '../domain/rewards.ts';
import { rewardKeys } from '../journal/keys.ts';
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
  /** Outcome 0's midpoint in pips, undefined without both sides. */
  midpoint: (token0: string) => number | undefined;
  /** Every wallet's open orders in these markets. */
  orders: (conditionIds: ReadonlySet<string>) => OrderRecord[];
  now: () => number;
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

export class RewardsSampler {
  private timer: NodeJS.Timeout | undefined;
  /** Samples taken since start (tests, logs). */
  samples = 0;

  constructor(private readonly deps: RewardsSamplerDeps) {}

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      try {
        this.sample();
      } catch (err) {
        // A failed sample loses that interval's accruals; trading never depends on it.
        this.deps.log.error({ err }, 'rewards sample failed');
      }
    }, this.deps.sampleSeconds * 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One sample at the current time: scores every rewards market and accrues the shares to the day. */
  sample(): void {
    const { views, sampleSeconds: dt } = this.deps;
    const date = utcDate(this.deps.now());
    const markets = this.deps.markets();
    const sampledKey = rewardKeys.samples(date);
    views.put(sampledKey, (views.get<number>(sampledKey) ?? 0) + dt);
    this.samples++;
    if (markets.length === 0) return;
    const byMarket = new Map<string, OrderRecord[]>();
    for (const o of this.deps.orders(new Set(markets.map((m) => m.conditionId)))) {
      const list = byMarket.get(o.conditionId);
      if (list === undefined) byMarket.set(o.conditionId, [o]);
      else list.push(o);
    }
    for (const m of markets) {
      const mid = this.deps.midpoint(m.token0);
      const orders = byMarket.get(m.conditionId);
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
