/**
 * Market-data routes (clob group, `{error}` bodies): books, quotes (prices, midpoints, spreads, one or a
 * batch), last trades, a market's latest trades (live activity), builder fees, and the look-ups the
 * platform's client makes before it posts an order (tick size, neg risk, fee rate, version) or builds a
 * market order (market by token, market by condition id). Price history and builder trades are history.ts's;
 * what both files share, market-data-deps.ts's.
 *
 * Token ids: malformed -> 400 `Invalid token id`; well-formed but no market has it -> 404 `No orderbook
 * exists for the requested token id` (batch routes add the offending `token_id` to the body). Condition
 * ids likewise: 400 `Invalid condition id`, 404 `No orderbook exists for the requested condition id`.
 * GET /book and POST /books pass the shard's pre-serialized snapshot through untouched: no parse, no
 * re-hash.
 */
import { apiError } from '../../../domain/errors.ts';
import { parseConditionId, parseTokenId } from '../../../domain/ids.ts';
import { pipsToNumber } from '../../../domain/units.ts';
import { getProfile } from '../../../queries/catalog.ts';
import { recentMarketFills } from '../../../queries/fills.ts';
import { type MarketDataReader } from '../../../queries/market-data.ts';
import { DEFAULT_OUTCOMES } from '../../../domain/market-rules.ts';
import { formatPips, formatUnits } from '../../../domain/units.ts';
import type { AppContext } from '../../context.ts';
import { Type, type TSchema } from '@sinclair/typebox';
import { bindRoutes, reply, routeSpec, type AnyRoute, type RequestOf, type RouteSpec } from '../../pipeline/route.ts';
import { BuilderCodeParams, BuilderFeesReply, ClobMarketReply, ConditionParams, FeeRateReply, LastTradeReply, LastTradesReply, MarketByTokenReply, BookBatch, MAX_BOOKS_PER_REQUEST, MAX_TOKENS_PER_REQUEST, TOKEN_BATCH_BODY_BYTES, MarketTradeEvent, MidpointMap, MidpointReply, NegRiskReply, OrderBookSummary, PriceQuery, PriceReply, QuoteMap, SpreadMap, SpreadReply, TickSizeReply, TokenBatch, TokenParams, TokenQuery, VersionReply } from '../../schemas/market-data.ts';
import { bad, md, noBook, tokenOf, type Md, type MarketDataDeps } from './market-data-deps.ts';
import { HISTORY_ROUTES, builderTradesRoute } from './history.ts';



const TOKEN_MESSAGES = { token_id: 'Invalid token id', side: 'Invalid side', body: 'Invalid payload' };
const NO_MARKET = 'No orderbook exists for the requested condition id';
/** Fills GET /markets/live-activity/{condition_id} answers: the latest, newest first. */
export const LIVE_ACTIVITY_LIMIT = 100;
const CONDITION_MESSAGES = { condition_id: 'Invalid condition id' };

/** Token ids of a batch body, checked in order: count, shape, side, then that a market has each. */
const tooManyTokens = (count: number, max: number) => bad(`Payload exceeds the limit: ${count} token ids, max allowed: ${max}`);

function batchTokens(md: MarketDataReader, items: TokenBatch, max: number): string[] {
  if (items.length > max) throw tooManyTokens(items.length, max);
  const ids = items.map((it, i) => {
    const t = parseTokenId(it.token_id);
    if (t === undefined) throw bad(`Invalid token id at [${i}]`);
    if (it.side !== undefined && it.side !== 'BUY' && it.side !== 'SELL') throw bad(`Invalid side at [${i}]`);
    return t as string;
  });
  for (const id of ids) if (md.token(id) === undefined) throw noBook(id);
  return ids;
}

/** Runs `fn` once every token has a snapshot with every acknowledged change (at once, in the usual case). */
function withSnapshots<T>(md: MarketDataReader, ids: readonly string[], fn: () => T): T | Promise<T> {
  const wait = md.ensureSnapshots(ids);
  return wait === undefined ? fn() : wait.then(fn);
}

function bookOf(md: MarketDataReader, id: string): string {
  const json = md.bookJson(id);
  // Known token, snapshot requested, none published: only when the engine has stopped.
  if (json === undefined) throw apiError('PM_ERR_UNAVAILABLE');
  return json;
}

/** The token of a single-token route, known to a market. */
function known(d: Md, raw: string): string {
  const id = tokenOf(raw);
  if (md(d).token(id) === undefined) throw noBook();
  return id;
}

function marketOfToken(d: Md, raw: string) {
  const m = md(d).marketOf(known(d, raw));
  if (m === undefined) throw noBook();
  return m;
}

/** One token's answer, read once its snapshot holds what was acknowledged. */
function perOneToken<T>(d: Md, raw: string, of: (r: MarketDataReader, id: string) => T): T | Promise<T> {
  const id = known(d, raw);
  const r = md(d);
  return withSnapshots(r, [id], () => of(r, id));
}

/** Per-token answers of a token batch, read once every token's snapshot holds what was acknowledged. */
function perToken<T>(d: Md, body: TokenBatch, of: (r: MarketDataReader, id: string) => T) {
  const r = md(d);
  const ids = batchTokens(r, body, MAX_TOKENS_PER_REQUEST);
  return withSnapshots(r, ids, () => {
    const out: Record<string, T> = {};
    for (const id of ids) out[id] = of(r, id);
    return out;
  });
}

function conditionOf(d: Pick<MarketDataDeps, 'engine'>, raw: string): string {
  const cid = parseConditionId(raw);
  if (cid === undefined) throw bad('Invalid condition id');
  if (d.engine.market(cid) === undefined) throw apiError('PM_ERR_NOT_FOUND_ENTITY', { detail: NO_MARKET });
  return cid;
}

type TokenRequest = RequestOf<typeof TokenQuery>;
type BatchRequest = RequestOf<undefined, typeof TokenBatch>;

export function book(d: Md, { query }: TokenRequest) {
  const r = md(d);
  const id = tokenOf(query.token_id);
  if (r.token(id) === undefined) throw noBook();
  return withSnapshots(r, [id], () => reply({ raw: bookOf(r, id) }));
}

export function books(d: Md, { body }: RequestOf<undefined, typeof BookBatch>) {
  const r = md(d);
  const ids = batchTokens(r, body, MAX_BOOKS_PER_REQUEST);
  // Read in one synchronous pass: the books of one market then come from one publication.
  return withSnapshots(r, ids, () => reply({ raw: `[${ids.map((id) => bookOf(r, id)).join(',')}]` }));
}

export function price(d: Md, { query }: RequestOf<typeof PriceQuery>) {
  return perOneToken(d, query.token_id, (r, id) => ({ price: r.quote(id)[query.side] }));
}

export function prices(d: Md, { body }: BatchRequest) {
  return perToken(d, body, (r, id) => r.quote(id));
}

export function midpoint(d: Md, { query }: TokenRequest) {
  return perOneToken(d, query.token_id, (r, id) => ({ mid: r.midpoint(id) }));
}

export function midpoints(d: Md, { body }: BatchRequest) {
  return perToken(d, body, (r, id) => r.midpoint(id));
}

export function spread(d: Md, { query }: TokenRequest) {
  return perOneToken(d, query.token_id, (r, id) => ({ spread: r.spread(id) }));
}

export function spreads(d: Md, { body }: BatchRequest) {
  return perToken(d, body, (r, id) => r.spread(id));
}

export function liveActivity(d: MarketDataDeps, { params }: RequestOf<undefined, undefined, typeof ConditionParams>) {
  const cid = conditionOf(d, params.condition_id);
  const m = d.catalog.marketByCondition(cid);
  const labels = m?.outcomes ?? DEFAULT_OUTCOMES;
  const profiles = new Map<string, ReturnType<typeof getProfile>>();
  return recentMarketFills(d.store, d.views, cid, LIVE_ACTIVITY_LIMIT).map((f) => {
    let p = profiles.get(f.takerWallet);
    if (p === undefined) profiles.set(f.takerWallet, (p = getProfile(d.store, f.takerWallet)));
    return {
      event_type: 'trade' as const,
      market: { condition_id: cid, asset_id: f.takerTokenId, question: m?.question ?? '', icon: m?.icon ?? '', slug: m?.slug ?? '' },
      user: {
        address: f.takerWallet,
        username: p.name,
        profile_picture: p.profileImage,
        optimized_profile_picture: p.profileImageOptimized,
        pseudonym: p.pseudonym,
      },
      side: f.takerSide,
      size: formatUnits(f.size),
      fee_rate_bps: String(d.engine.getOrder(f.takerOrderId)?.takerFeeBps ?? 0),
      price: formatPips(f.takerPricePips),
      outcome: labels[f.takerOutcome],
      outcome_index: f.takerOutcome,
      transaction_hash: f.txHash,
      timestamp: String(Math.floor(f.ts / 1000)),
    };
  });
}

export function builderFees() {
  return { builder_maker_fee_rate_bps: 0, builder_taker_fee_rate_bps: 0 };
}

export function lastTradePrice(d: Md, { query }: TokenRequest) {
  return md(d).lastTrade(known(d, query.token_id));
}

export function lastTradesPrices(d: Md, { body }: BatchRequest) {
  const r = md(d);
  return batchTokens(r, body, MAX_TOKENS_PER_REQUEST).map((id) => ({ token_id: id, ...r.lastTrade(id) }));
}

export function tickSize(d: Md, { query }: TokenRequest) {
  return { minimum_tick_size: pipsToNumber(marketOfToken(d, query.token_id).tickPips) };
}

export function negRisk(d: Md, { query }: TokenRequest) {
  return { neg_risk: marketOfToken(d, query.token_id).negRisk };
}

export function feeRate(d: Md, { query }: TokenRequest) {
  return { base_fee: marketOfToken(d, query.token_id).takerFeeBps };
}

export function marketByToken(d: Md, { params }: RequestOf<undefined, undefined, typeof TokenParams>) {
  const m = md(d).marketByToken(tokenOf(params.token_id));
  if (m === undefined) throw noBook();
  return m;
}

export function clobMarket(d: Md, { params }: RequestOf<undefined, undefined, typeof ConditionParams>) {
  const cid = parseConditionId(params.condition_id);
  if (cid === undefined) throw bad('Invalid condition id');
  const m = md(d).clobMarket(cid);
  if (m === undefined) throw apiError('PM_ERR_NOT_FOUND_ENTITY', { detail: NO_MARKET });
  return m;
}

export function version() {
  return { version: 2 as const };
}

interface TokenRouteFields<R> {
  path: string;
  summary: string;
  response: TSchema;
  handler: (d: MarketDataDeps, req: R) => unknown;
}

/** A GET of one token (`token_id` in the query), its fields in the table's usual order. */
function tokenRoute({ path, summary, response, handler }: TokenRouteFields<TokenRequest>): RouteSpec<MarketDataDeps> {
  return routeSpec({ method: 'GET', path, group: 'clob', summary, query: TokenQuery, response, fieldMessages: TOKEN_MESSAGES, handler });
}

/** A POST of a token batch (`[{token_id, side?}]`), its fields in the table's usual order. */
function tokenBatchRoute({ path, summary, response, handler }: TokenRouteFields<BatchRequest>): RouteSpec<MarketDataDeps> {
  return routeSpec({
    method: 'POST',
    path,
    group: 'clob',
    maxBodyBytes: TOKEN_BATCH_BODY_BYTES,
    tooMany: tooManyTokens,
    summary,
    body: TokenBatch,
    response,
    fieldMessages: TOKEN_MESSAGES,
    handler,
  });
}

export const MARKET_DATA_ROUTES: readonly RouteSpec<MarketDataDeps>[] = [
  tokenRoute({
    path: '/book',
    summary: "Order book of a token: the shard's latest snapshot (the complementary token's orders mirrored at 1 - p)",
    response: OrderBookSummary,
    handler: book,
  }),
  routeSpec({
    method: 'POST',
    path: '/books',
    group: 'clob',
    maxBodyBytes: TOKEN_BATCH_BODY_BYTES,
    tooMany: tooManyTokens,
    summary: `Order books of up to ${MAX_BOOKS_PER_REQUEST} tokens, in request order`,
    body: BookBatch,
    response: Type.Array(OrderBookSummary),
    fieldMessages: TOKEN_MESSAGES,
    handler: books,
  }),
  routeSpec({
    method: 'GET',
    path: '/price',
    group: 'clob',
    summary: 'Best price on one side: BUY = best bid, SELL = best ask ("" when that side is empty)',
    query: PriceQuery,
    response: PriceReply,
    fieldMessages: TOKEN_MESSAGES,
    handler: price,
  }),
  tokenBatchRoute({
    path: '/prices',
    summary: `Best bid (BUY) and best ask (SELL) of up to ${MAX_TOKENS_PER_REQUEST} tokens`,
    response: QuoteMap,
    handler: prices,
  }),
  tokenRoute({
    path: '/midpoint',
    summary: 'Midpoint of best bid and best ask ("" unless both sides have orders)',
    response: MidpointReply,
    handler: midpoint,
  }),
  tokenBatchRoute({
    path: '/midpoints',
    summary: `Midpoints of up to ${MAX_TOKENS_PER_REQUEST} tokens, keyed by token id ("" unless both sides have orders)`,
    response: MidpointMap,
    handler: midpoints,
  }),
  tokenRoute({
    path: '/spread',
    summary: 'Best ask minus best bid of a token ("" unless both sides have orders)',
    response: SpreadReply,
    handler: spread,
  }),
  tokenBatchRoute({
    path: '/spreads',
    summary: `Spreads of up to ${MAX_TOKENS_PER_REQUEST} tokens, keyed by token id ("" unless both sides have orders)`,
    response: SpreadMap,
    handler: spreads,
  }),
  routeSpec({
    method: 'GET',
    path: '/markets/live-activity/:condition_id',
    group: 'clob',
    history: true,
    summary: `The latest ${LIVE_ACTIVITY_LIMIT} trades of a market, newest first, each from its taker (the platform client's MarketTradeEvent)`,
    description:
      'One event per fill, as the data API lists trades: a fill whose settlement is deferred (sandbox.trades) appears once MINED. ' +
      'user is the taker wallet with its admin-set profile.',
    params: ConditionParams,
    response: Type.Array(MarketTradeEvent),
    fieldMessages: CONDITION_MESSAGES,
    handler: liveActivity,
  }),
  routeSpec({
    method: 'GET',
    path: '/fees/builder-fees/:builder_code',
    group: 'clob',
    summary: 'Builder fee rates of a builder code, in basis points (the platform client\'s getBuilderTakerFeeRate): 0 and 0',
    description: 'The service charges no builder fees: every builder code answers 0 for makers and takers, which is what orders pay.',
    params: BuilderCodeParams,
    response: BuilderFeesReply,
    fieldMessages: { builder_code: 'Invalid builder code' },
    handler: builderFees,
  }),
  tokenRoute({
    path: '/last-trade-price',
    summary: 'Price and taker side of the last trade of a token ("" and "" before any trade)',
    response: LastTradeReply,
    handler: lastTradePrice,
  }),
  tokenBatchRoute({
    path: '/last-trades-prices',
    summary: `Last trade of up to ${MAX_TOKENS_PER_REQUEST} tokens, in request order`,
    response: LastTradesReply,
    handler: lastTradesPrices,
  }),
  tokenRoute({
    path: '/tick-size',
    summary: "Minimum tick size of the token's market",
    response: TickSizeReply,
    handler: tickSize,
  }),
  tokenRoute({
    path: '/neg-risk',
    summary: "Whether the token's market is neg-risk (orders are signed for the neg-risk exchange)",
    response: NegRiskReply,
    handler: negRisk,
  }),
  tokenRoute({
    path: '/fee-rate',
    summary: "Taker fee rate of the token's market in basis points",
    response: FeeRateReply,
    handler: feeRate,
  }),
  routeSpec({
    method: 'GET',
    path: '/markets-by-token/:token_id',
    group: 'clob',
    summary: "The token's market: its condition id and both of its tokens (outcome 0 is primary)",
    description: 'Not in the spec: the platform client asks it before it builds a market order (docs/decisions/market-data.md, "Market data").',
    params: TokenParams,
    response: MarketByTokenReply,
    fieldMessages: TOKEN_MESSAGES,
    handler: marketByToken,
  }),
  routeSpec({
    method: 'GET',
    path: '/clob-markets/:condition_id',
    group: 'clob',
    summary: "A market's trading parameters in the platform's compact keys: tokens, tick size, neg risk, minimum size, fees",
    description:
      'Not in the spec: the platform client reads t, mts, nr and fd before it builds a market order. mbf/tbf are the ' +
      'fee rates in basis points; fd expresses the taker fee tbf / 10^4 * min(p, 1-p) per token as the flat bound ' +
      'r = tbf / 2 / 10^4, e = 0 (docs/decisions/market-data.md, "Market data").',
    params: ConditionParams,
    response: ClobMarketReply,
    fieldMessages: CONDITION_MESSAGES,
    handler: clobMarket,
  }),
  routeSpec({
    method: 'GET',
    path: '/version',
    group: 'clob',
    summary: 'Order version the service signs and verifies (the platform client reads it before posting)',
    response: VersionReply,
    handler: version,
  }),
];

export function marketDataRoutes(ctx: Pick<AppContext, 'marketData' | 'engine' | 'catalog' | 'store' | 'views' | 'clock' | 'config'>): AnyRoute[] {
  const clientShapes = ctx.config.compat.shapes === 'clob-client-v2';
  const deps: MarketDataDeps = {
    marketData: ctx.marketData,
    engine: ctx.engine,
    catalog: ctx.catalog.read,
    store: ctx.store,
    views: ctx.views,
    clock: ctx.clock,
    clientShapes,
  };
  return bindRoutes(deps, [...MARKET_DATA_ROUTES, ...HISTORY_ROUTES, builderTradesRoute(clientShapes)]);
}
