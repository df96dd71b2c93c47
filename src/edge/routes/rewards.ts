/**
 * Liquidity rewards and order scoring (the platform client's isOrderScoring, areOrdersScoring, getCurrentRewards,
 * getRawRewardsForMarket, getEarningsForUserForDay, getTotalEarningsForUserForDay,
 * getUserEarningsAndMarketsConfig, getRewardPercentages). The rule is domain/rewards.ts (docs/decisions.md,
 * "Liquidity rewards"): programs come from the catalog, scores from the open orders against the book's
 * midpoint now, earnings from the sampler's accruals (projections/rewards.ts, queries/rewards.ts).
 *
 * The programs are public; the scoring and earnings of a wallet are L2 reads (trading or read-only key). An
 * order that is not the caller's, or unknown, does not score (never revealed). Scoring reads the book after
 * every acknowledged change (ensureSnapshots), so an order answered a moment ago is measured against the book
 * that holds it.
 */
import { apiError } from '../../domain/errors.ts';
import { END_CURSOR, decodeCursor, nextCursor } from '../../domain/cursor.ts';
import { parseConditionId, parseOrderId } from '../../domain/ids.ts';
import type { OrderRecord } from '../../domain/events.ts';
import { orderScore, rewardProgram, utcDate, type RewardProgram } from '../../domain/rewards.ts';
import { isSampling } from '../../projections/catalog-index.ts';
import { walletScores } from '../../projections/rewards.ts';
import type { AppContext } from '../context.ts';
import { READ_KEYS, route, type AnyRoute } from '../route.ts';
import {
  MarketRewardsPage,
  OrderScoring,
  OrderScoringQuery,
  OrdersScoring,
  OrdersScoringBody,
  PercentagesQuery,
  RewardsMarketsQuery,
  RewardsPercentages,
  TotalUserEarning,
  UserEarningsPage,
  UserEarningsQuery,
  UserMarketsQuery,
  UserRewardsEarningsPage,
  UserTotalQuery,
} from '../schemas/rewards.ts';
import { Type } from '@sinclair/typebox';

const PAGE = 500;
const bad = (detail: string) => apiError('PM_ERR_BAD_REQUEST', { detail });

/** One page of `all` at the cursor, in the cursor envelope (LTE= on the last page). */
function paged<T>(all: readonly T[], cursor: string | undefined) {
  const offset = decodeCursor(cursor);
  if (offset === undefined) throw bad('invalid next_cursor');
  const from = offset === 'end' ? all.length : offset;
  const data = all.slice(from, from + PAGE);
  return { data, next_cursor: offset === 'end' ? END_CURSOR : nextCursor(from, data.length, all.length), limit: PAGE, count: data.length };
}

const dateOf = (text: string): string => {
  if (Number.isNaN(Date.parse(`${text}T00:00:00Z`))) throw bad(`invalid date: ${text}`);
  return text;
};

export function rewardsRoutes(ctx: AppContext): AnyRoute[] {
  const engine = ctx.engine;
  const md = () => {
    if (ctx.marketData === undefined) throw apiError('PM_ERR_UNAVAILABLE');
    return ctx.marketData;
  };

  /** The market's program when its rewards run now (a sampling market with a program), and its outcome 0 token. */
  const running = (conditionId: string): { program: RewardProgram; token0: string } | undefined => {
    const m = ctx.catalog.read.marketByCondition(conditionId);
    if (m === undefined || !isSampling(m)) return undefined;
    const program = rewardProgram(m);
    return program === undefined ? undefined : { program, token0: m.clobTokenIds[0] };
  };

  /** Outcome 0 midpoints of the markets, read once their snapshots hold every acknowledged change. */
  const midpoints = async (token0s: readonly string[]): Promise<Map<string, number | undefined>> => {
    const r = md();
    await r.ensureSnapshots(token0s);
    return new Map(token0s.map((t) => [t, r.midpointPips(t)]));
  };

  /** Which of the caller's orders score now. */
  const scoring = async (wallet: string, orderIds: readonly string[]): Promise<Record<string, boolean>> => {
    const out: Record<string, boolean> = {};
    const mine: { id: string; rec: OrderRecord; run: { program: RewardProgram; token0: string } }[] = [];
    for (const id of orderIds) {
      out[id] = false;
      const rec = engine.getOrder(id.toLowerCase());
      if (rec === undefined || rec.wallet !== wallet || rec.status !== 'LIVE') continue;
      const run = running(rec.conditionId);
      if (run !== undefined) mine.push({ id, rec, run });
    }
    const mids = await midpoints([...new Set(mine.map((x) => x.run.token0))]);
    for (const { id, rec, run } of mine) {
      const mid = mids.get(run.token0);
      out[id] = mid !== undefined && orderScore({ outcome: rec.outcome, pricePips: rec.pricePips, remainingUnits: rec.sizeUnits - rec.sizeMatched }, mid, run.program) > 0;
    }
    return out;
  };

  return [
    route({
      method: 'GET',
      path: '/order-scoring',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: 'Whether one of the caller\'s open orders scores for liquidity rewards now',
      description: 'It scores when its market\'s rewards run, its remaining size is at least rewards_min_size and its price lies within rewards_max_spread cents of the midpoint.',
      query: OrderScoringQuery,
      response: OrderScoring,
      fieldMessages: { order_id: 'Invalid order_id' },
      handler: async (req) => {
        const id = parseOrderId(req.query.order_id)!;
        return { scoring: (await scoring(req.caller.address!, [id]))[id] === true };
      },
    }),
    route({
      method: 'POST',
      path: '/orders-scoring',
      // A read: nothing to protect from a replay.
      replay: 'none',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: 'Whether each of the caller\'s orders scores for liquidity rewards now, keyed by the ids as sent',
      body: OrdersScoringBody,
      response: OrdersScoring,
      fieldMessages: { body: 'Invalid payload: expected an array of order ids' },
      handler: (req) => scoring(req.caller.address!, [...new Set(req.body)]),
    }),
    route({
      method: 'GET',
      path: '/rewards/markets/current',
      group: 'clob',
      summary: 'The markets whose liquidity rewards run now, with their programs, paged with next_cursor',
      query: RewardsMarketsQuery,
      response: MarketRewardsPage,
      fieldMessages: { next_cursor: 'invalid next_cursor' },
      handler: ({ query }) => paged(ctx.rewards.current(), query.next_cursor),
    }),
    route({
      method: 'GET',
      path: '/rewards/markets/:condition_id',
      group: 'clob',
      summary: 'The liquidity-rewards program of one market (an empty page when it has none)',
      params: Type.Object({ condition_id: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }) }),
      query: RewardsMarketsQuery,
      response: MarketRewardsPage,
      fieldMessages: { condition_id: 'Invalid condition id', next_cursor: 'invalid next_cursor' },
      handler: ({ params, query }) => {
        const m = ctx.catalog.read.marketByCondition(parseConditionId(params.condition_id)!);
        if (m === undefined) throw apiError('PM_ERR_NOT_FOUND_ENTITY', { detail: 'market not found' });
        const r = ctx.rewards.marketReward(m);
        return paged(r === undefined ? [] : [r], query.next_cursor);
      },
    }),
    route({
      method: 'GET',
      path: '/rewards/user',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: "What the caller's wallet earned on a UTC day, per market and reward asset (markets where it scored), paged",
      query: UserEarningsQuery,
      response: UserEarningsPage,
      fieldMessages: { date: 'Invalid date: expected YYYY-MM-DD', next_cursor: 'invalid next_cursor' },
      handler: ({ query, caller }) => paged(ctx.rewards.earnings(caller.address!, dateOf(query.date)), query.next_cursor),
    }),
    route({
      method: 'GET',
      path: '/rewards/user/total',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: "What the caller's wallet earned on a UTC day (default today) per reward asset, 0 where nothing",
      query: UserTotalQuery,
      response: Type.Array(TotalUserEarning),
      fieldMessages: { date: 'Invalid date: expected YYYY-MM-DD' },
      handler: ({ query, caller }) => ctx.rewards.totals(caller.address!, query.date === undefined ? utcDate(ctx.clock.now()) : dateOf(query.date)),
    }),
    route({
      method: 'GET',
      path: '/rewards/user/percentages',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: "The caller's wallet's share of each rewards market's score now, percent (markets where it scores)",
      query: PercentagesQuery,
      response: RewardsPercentages,
      handler: async ({ caller }) => {
        const wallet = caller.address!;
        const mine = new Set(engine.openOrders(wallet).map((o) => o.conditionId));
        const runs = [...mine].flatMap((cid) => {
          const run = running(cid);
          return run === undefined ? [] : [{ cid, ...run }];
        });
        const mids = await midpoints(runs.map((r) => r.token0));
        const orders = engine.restingOrders(new Set(runs.map((r) => r.cid)));
        const out: Record<string, number> = {};
        for (const r of runs) {
          const mid = mids.get(r.token0);
          if (mid === undefined) continue;
          const scores = walletScores(
            orders.filter((o) => o.conditionId === r.cid),
            mid,
            r.program,
          );
          let total = 0;
          for (const s of scores.values()) total += s;
          const own = scores.get(wallet) ?? 0;
          if (own > 0) out[r.cid] = (100 * own) / total;
        }
        return out;
      },
    }),
    route({
      method: 'GET',
      path: '/rewards/user/markets',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: "Each rewards market with its program and the caller's day in it: earnings (0 where none), share, competitiveness; paged",
      query: UserMarketsQuery,
      response: UserRewardsEarningsPage,
      fieldMessages: {
        date: 'Invalid date: expected YYYY-MM-DD',
        next_cursor: 'invalid next_cursor',
        order_by: 'Invalid order_by: expected earnings, rate_per_day, earning_percentage or market_competitiveness',
        position: 'Invalid position: expected ASC or DESC',
      },
      handler: ({ query: q, caller }) =>
        paged(ctx.rewards.userMarkets(caller.address!, dateOf(q.date), { orderBy: q.order_by, position: q.position, noCompetition: q.no_competition }), q.next_cursor),
    }),
  ];
}
