/**
 * Liquidity rewards reads: the configured programs of the markets (from the catalog) and a wallet's
 * earnings of a day (the accruals projections/rewards.ts samples). The rule is domain/rewards.ts's.
 *
 * Earnings are accounted, not paid: no balance changes when a day ends (the platform pays them out
 * on-chain; here they are what a bot reads to check its quoting). A day without a sample in which the
 * wallet scored has no earnings: the per-market rows leave it out, the totals and the markets' list show 0.
 */
import { rewardProgram, SECONDS_PER_DAY, type RewardProgram } from '../domain/rewards.ts';
import type { MarketReward, TotalUserEarning, UserEarning, UserRewardsEarning } from '../edge/schemas/rewards.ts';
import { rewardKeys } from '../journal/keys.ts';
import type { MarketRec } from '../projections/catalog/catalog-index.ts';
import type { ViewStore } from '../projections/projector.ts';
import type { MarketDay, RewardAccrual } from '../projections/rewards.ts';
import type { CatalogReader } from './catalog.ts';

/** The reward asset's price in USDC: earnings are amounts of the reward asset, priced at par. */
const ASSET_RATE = 1;

const dayOf = (iso: string): string => (iso.length >= 10 ? iso.slice(0, 10) : '');
const DAY_MS = SECONDS_PER_DAY * 1000;

export type UserMarketsOrder = '' | 'earnings' | 'rate_per_day' | 'earning_percentage' | 'market_competitiveness';

export class RewardsReader {
  constructor(
    private readonly views: ViewStore,
    private readonly catalog: CatalogReader,
    private readonly now: () => number,
  ) {}

  /** The program of a catalog market, undefined when it pays nothing (no rate, no max spread). */
  programOf(m: MarketRec): RewardProgram | undefined {
    return rewardProgram(m);
  }

  /** A market with its program as the platform client's MarketReward, undefined when it has none. */
  marketReward(m: MarketRec): MarketReward | undefined {
    const program = rewardProgram(m);
    if (program === undefined) return undefined;
    const e = this.catalog.event(m.eventId);
    const start = dayOf(m.startDate) || dayOf(m.createdAt);
    const end = dayOf(m.endDate);
    const until = end || new Date(this.now()).toISOString().slice(0, 10);
    const days = start === '' ? 0 : Math.max(0, Math.floor((Date.parse(until) - Date.parse(start)) / DAY_MS) + 1);
    return {
      condition_id: m.conditionId,
      question: m.question,
      market_slug: m.slug,
      event_slug: e?.slug ?? '',
      image: m.image,
      rewards_max_spread: m.rewardsMaxSpread,
      rewards_min_size: m.rewardsMinSize,
      tokens: ([0, 1] as const).map((i) => ({ token_id: m.clobTokenIds[i], outcome: m.outcomes[i], price: this.catalog.tokenPrice(m, i) })),
      rewards_config: program.rates.map((r) => ({ asset_address: r.asset, start_date: start, end_date: end, rate_per_day: r.dailyRate, total_rewards: r.dailyRate * days })),
    };
  }

  /** The markets whose rewards run now (the sampling markets with a program), by id. */
  current(): MarketReward[] {
    const out: MarketReward[] = [];
    for (const m of this.catalog.samplingRecords()) {
      const r = this.marketReward(m);
      if (r !== undefined) out.push(r);
    }
    return out;
  }

  /** The wallet's accruals of a day by condition id. */
  private accruals(wallet: string, date: string): Map<string, RewardAccrual> {
    const out = new Map<string, RewardAccrual>();
    for (const e of this.views.range<RewardAccrual>(rewardKeys.accrualsOf(wallet, date))) out.set(e.key[3] as string, e.value);
    return out;
  }

  /** Seconds sampled on a day (every market together). */
  private sampled(date: string): number {
    return this.views.get<number>(rewardKeys.samples(date)) ?? 0;
  }

  /** Per market and reward asset, what the wallet earned on a day: markets where it scored at least once. */
  earnings(wallet: string, date: string): UserEarning[] {
    const out: UserEarning[] = [];
    for (const [cid, a] of this.accruals(wallet, date)) {
      for (const [asset, earnings] of Object.entries(a.earned)) {
        out.push({ date, condition_id: cid, asset_address: asset, maker_address: wallet, earnings, asset_rate: ASSET_RATE });
      }
    }
    return out;
  }

  /** Per reward asset, what the wallet earned on a day over every market; 0 for the assets of running programs it earned none of. */
  totals(wallet: string, date: string): TotalUserEarning[] {
    const sums = new Map<string, number>();
    for (const m of this.current()) for (const c of m.rewards_config) if (!sums.has(c.asset_address)) sums.set(c.asset_address, 0);
    for (const e of this.earnings(wallet, date)) sums.set(e.asset_address, (sums.get(e.asset_address) ?? 0) + e.earnings);
    return [...sums].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([asset, earnings]) => ({ date, asset_address: asset, maker_address: wallet, earnings, asset_rate: ASSET_RATE }));
  }

  /**
   * Every market whose rewards run now, and every market the wallet earned in that day, with its program and
   * the wallet's day in it. Ordered by `orderBy` (`position` ASC or DESC, default DESC), else by market.
   */
  userMarkets(wallet: string, date: string, o: { orderBy?: UserMarketsOrder; position?: '' | 'ASC' | 'DESC'; noCompetition?: boolean } = {}): UserRewardsEarning[] {
    const accruals = this.accruals(wallet, date);
    const sampled = this.sampled(date);
    const markets = new Map<string, MarketReward>();
    for (const m of this.current()) markets.set(m.condition_id, m);
    for (const cid of accruals.keys()) {
      if (markets.has(cid)) continue;
      const rec = this.catalog.marketByCondition(cid);
      const r = rec === undefined ? undefined : this.marketReward(rec);
      if (r !== undefined) markets.set(cid, r);
    }
    let rows = [...markets.values()].map((m): UserRewardsEarning => {
      const a = accruals.get(m.condition_id);
      const day = this.views.get<MarketDay>(rewardKeys.marketDay(date, m.condition_id));
      const earned = new Map<string, number>(m.rewards_config.map((c) => [c.asset_address, 0]));
      for (const [asset, x] of Object.entries(a?.earned ?? {})) earned.set(asset, (earned.get(asset) ?? 0) + x);
      return {
        ...m,
        market_competitiveness: sampled > 0 ? (day?.scoreSeconds ?? 0) / sampled : 0,
        maker_address: wallet,
        earning_percentage: sampled > 0 ? (100 * (a?.shareSeconds ?? 0)) / sampled : 0,
        earnings: [...earned].map(([asset, earnings]) => ({ asset_address: asset, earnings, asset_rate: ASSET_RATE })),
      };
    });
    if (o.noCompetition) rows = rows.filter((r) => r.market_competitiveness === 0);
    const key = o.orderBy ?? '';
    if (key !== '') {
      const sign = o.position === 'ASC' ? 1 : -1;
      const value = (r: UserRewardsEarning): number =>
        key === 'earnings'
          ? r.earnings.reduce((s, e) => s + e.earnings, 0)
          : key === 'rate_per_day'
            ? r.rewards_config.reduce((s, c) => s + c.rate_per_day, 0)
            : r[key];
      rows.sort((a, b) => sign * (value(a) - value(b)) || (a.condition_id < b.condition_id ? -1 : 1));
    }
    return rows;
  }
}
