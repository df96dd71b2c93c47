/**
 * Liquidity rewards and order scoring (the platform client's isOrderScoring, areOrdersScoring, getCurrentRewards,
 * getRawRewardsForMarket, getEarningsForUserForDay, getTotalEarningsForUserForDay,
 * getUserEarningsAndMarketsConfig, getRewardPercentages). The rule is domain/rewards.ts (docs/decisions/wallet-data.md,
 * "Liquidity rewards"): programs come from the catalog, scores from the open orders against the book's
 * midpoint now, earnings from the sampler's accruals (projections/rewards.ts, queries/rewards.ts).
 *
 * The programs are public; the scoring and earnings of a wallet are L2 reads (trading or read-only key). An
 * order that is not the caller's (one its address signed, edge/auth/funders.ts), or unknown, does not score (never
 * revealed). Earnings accrue to the order's maker: the key's own wallet, or with `signature_type` 1 or 2 its
 * proxy wallet or Safe, as the platform client asks. Scoring reads the book after
 * every acknowledged change (ensureSnapshots), so an order answered a moment ago is measured against the book
 * that holds it.
 */
import { apiError } from '../../../domain/errors.ts';
import { END_CURSOR, decodeCursor, nextCursor } from '../../../domain/cursor.ts';
import { parseConditionId, parseOrderId } from '../../../domain/ids.ts';
import type { OrderRecord } from '../../../domain/events.ts';
import { orderScore, rewardProgram, utcDate, type RewardProgram } from '../../../domain/rewards.ts';
import { isSampling } from '../../../projections/catalog/catalog-index.ts';
import { walletScores } from '../../../projections/rewards.ts';
import type { Engine } from '../../../engine/engine.ts';
import { walletFor, type Funders } from '../../auth/funders.ts';
import type { CatalogReader } from '../../../queries/catalog.ts';
import type { MarketDataReader } from '../../../queries/market-data.ts';
import type { RewardsReader } from '../../../queries/rewards.ts';
import type { Clock } from '../../../runtime/clock.ts';
import type { AppContext } from '../../context.ts';
import { READ_KEYS, bindRoutes, routeSpec, type AnyRoute, type RequestOf, type RouteSpec } from '../../pipeline/route.ts';
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
} from '../../schemas/rewards.ts';
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

/** What the rewards routes use: orders from the engine, programs from the catalog, midpoints, earnings, the clock. */
export interface RewardsDeps {
  readonly engine: Pick<Engine, 'getOrder' | 'openOrders' | 'restingOrders'>;
  readonly catalog: Pick<CatalogReader, 'marketByCondition'>;
  /** Absent in contexts without market data: the scoring routes then answer 503. */
  readonly marketData: Pick<MarketDataReader, 'ensureSnapshots' | 'midpointPips'> | undefined;
  readonly rewards: Pick<RewardsReader, 'current' | 'marketReward' | 'earnings' | 'totals' | 'userMarkets'>;
  readonly clock: Clock;
  /** The key's proxy wallet and Safe, which signature_type names. */
  readonly funders: Pick<Funders, 'makerOf'>;
}

/** The market's program when its rewards run now (a sampling market with a program), and its outcome 0 token. */
function running(d: Pick<RewardsDeps, 'catalog'>, conditionId: string): { program: RewardProgram; token0: string } | undefined {
  const m = d.catalog.marketByCondition(conditionId);
  if (m === undefined || !isSampling(m)) return undefined;
  const program = rewardProgram(m);
  return program === undefined ? undefined : { program, token0: m.clobTokenIds[0] };
}

/** Outcome 0 midpoints of the markets, read once their snapshots hold every acknowledged change. */
async function midpoints(d: Pick<RewardsDeps, 'marketData'>, token0s: readonly string[]): Promise<Map<string, number | undefined>> {
  const r = d.marketData;
  if (r === undefined) throw apiError('PM_ERR_UNAVAILABLE');
  await r.ensureSnapshots(token0s);
  return new Map(token0s.map((t) => [t, r.midpointPips(t)]));
}

/** Which of the orders the caller signed score now. */
async function scoring(d: RewardsDeps, signer: string, orderIds: readonly string[]): Promise<Record<string, boolean>> {
  const out: Record<string, boolean> = {};
  const mine: { id: string; rec: OrderRecord; run: { program: RewardProgram; token0: string } }[] = [];
  for (const id of orderIds) {
    out[id] = false;
    const rec = d.engine.getOrder(id.toLowerCase());
    if (rec === undefined || rec.signer !== signer || rec.status !== 'LIVE') continue;
    const run = running(d, rec.conditionId);
    if (run !== undefined) mine.push({ id, rec, run });
  }
  const mids = await midpoints(d, [...new Set(mine.map((x) => x.run.token0))]);
  for (const { id, rec, run } of mine) {
    const mid = mids.get(run.token0);
    out[id] = mid !== undefined && orderScore({ outcome: rec.outcome, pricePips: rec.pricePips, remainingUnits: rec.sizeUnits - rec.sizeMatched }, mid, run.program) > 0;
  }
  return out;
}

export async function orderScoring(d: RewardsDeps, req: RequestOf<typeof OrderScoringQuery>) {
  const id = parseOrderId(req.query.order_id)!;
  return { scoring: (await scoring(d, req.caller.address!, [id]))[id] === true };
}

export function ordersScoring(d: RewardsDeps, req: RequestOf<undefined, typeof OrdersScoringBody>) {
  return scoring(d, req.caller.address!, [...new Set(req.body)]);
}

export function currentRewards(d: Pick<RewardsDeps, 'rewards'>, { query }: RequestOf<typeof RewardsMarketsQuery>) {
  return paged(d.rewards.current(), query.next_cursor);
}

const RewardsMarketParams = Type.Object({ condition_id: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }) });

export function marketRewards(d: Pick<RewardsDeps, 'rewards' | 'catalog'>, { params, query }: RequestOf<typeof RewardsMarketsQuery, undefined, typeof RewardsMarketParams>) {
  const m = d.catalog.marketByCondition(parseConditionId(params.condition_id)!);
  if (m === undefined) throw apiError('PM_ERR_NOT_FOUND_ENTITY', { detail: 'market not found' });
  const r = d.rewards.marketReward(m);
  return paged(r === undefined ? [] : [r], query.next_cursor);
}

export function userEarnings(d: Pick<RewardsDeps, 'rewards' | 'funders'>, { query, caller }: RequestOf<typeof UserEarningsQuery>) {
  return paged(d.rewards.earnings(walletFor(d.funders, caller.address!, query.signature_type), dateOf(query.date)), query.next_cursor);
}

export function userTotals(d: Pick<RewardsDeps, 'rewards' | 'clock' | 'funders'>, { query, caller }: RequestOf<typeof UserTotalQuery>) {
  return d.rewards.totals(walletFor(d.funders, caller.address!, query.signature_type), query.date === undefined ? utcDate(d.clock.now()) : dateOf(query.date));
}

export async function userPercentages(d: RewardsDeps, { query, caller }: RequestOf<typeof PercentagesQuery>) {
  const wallet = walletFor(d.funders, caller.address!, query.signature_type);
  const mine = new Set(
    d.engine
      .openOrders(caller.address!)
      .filter((o) => o.wallet === wallet)
      .map((o) => o.conditionId),
  );
  const runs = [...mine].flatMap((cid) => {
    const run = running(d, cid);
    return run === undefined ? [] : [{ cid, ...run }];
  });
  const mids = await midpoints(d, runs.map((r) => r.token0));
  const orders = d.engine.restingOrders(new Set(runs.map((r) => r.cid)));
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
}

export function userMarkets(d: Pick<RewardsDeps, 'rewards' | 'funders'>, { query: q, caller }: RequestOf<typeof UserMarketsQuery>) {
  return paged(d.rewards.userMarkets(walletFor(d.funders, caller.address!, q.signature_type), dateOf(q.date), { orderBy: q.order_by, position: q.position, noCompetition: q.no_competition }), q.next_cursor);
}

export const REWARDS_ROUTES: readonly RouteSpec<RewardsDeps>[] = [
  routeSpec({
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
    handler: orderScoring,
  }),
  routeSpec({
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
    handler: ordersScoring,
  }),
  routeSpec({
    method: 'GET',
    path: '/rewards/markets/current',
    group: 'clob',
    summary: 'The markets whose liquidity rewards run now, with their programs, paged with next_cursor',
    query: RewardsMarketsQuery,
    response: MarketRewardsPage,
    fieldMessages: { next_cursor: 'invalid next_cursor' },
    handler: currentRewards,
  }),
  routeSpec({
    method: 'GET',
    path: '/rewards/markets/:condition_id',
    group: 'clob',
    summary: 'The liquidity-rewards program of one market (an empty page when it has none)',
    params: RewardsMarketParams,
    query: RewardsMarketsQuery,
    response: MarketRewardsPage,
    fieldMessages: { condition_id: 'Invalid condition id', next_cursor: 'invalid next_cursor' },
    handler: marketRewards,
  }),
  routeSpec({
    method: 'GET',
    path: '/rewards/user',
    group: 'trading',
    auth: 'l2',
    keys: READ_KEYS,
    summary: "What the caller's wallet earned on a UTC day, per market and reward asset (markets where it scored), paged",
    query: UserEarningsQuery,
    response: UserEarningsPage,
    fieldMessages: { date: 'Invalid date: expected YYYY-MM-DD', next_cursor: 'invalid next_cursor' },
    handler: userEarnings,
  }),
  routeSpec({
    method: 'GET',
    path: '/rewards/user/total',
    group: 'trading',
    auth: 'l2',
    keys: READ_KEYS,
    summary: "What the caller's wallet earned on a UTC day (default today) per reward asset, 0 where nothing",
    query: UserTotalQuery,
    response: Type.Array(TotalUserEarning),
    fieldMessages: { date: 'Invalid date: expected YYYY-MM-DD' },
    handler: userTotals,
  }),
  routeSpec({
    method: 'GET',
    path: '/rewards/user/percentages',
    group: 'trading',
    auth: 'l2',
    keys: READ_KEYS,
    summary: "The caller's wallet's share of each rewards market's score now, percent (markets where it scores)",
    query: PercentagesQuery,
    response: RewardsPercentages,
    handler: userPercentages,
  }),
  routeSpec({
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
    handler: userMarkets,
  }),
];

export function rewardsRoutes(ctx: Pick<AppContext, 'engine' | 'catalog' | 'marketData' | 'rewards' | 'clock' | 'auth'>): AnyRoute[] {
  const deps: RewardsDeps = { engine: ctx.engine, catalog: ctx.catalog.read, marketData: ctx.marketData, rewards: ctx.rewards, clock: ctx.clock, funders: ctx.auth.funders };
  return bindRoutes(deps, REWARDS_ROUTES);
}
