/**
 * Market-data routes (clob group, `{error}` bodies): books, quotes (prices, midpoints, spreads, one or a
 * batch), last trades, a market's latest trades (live activity), price history, builder trades and builder
 * fees, and the look-ups the platform's client makes before it posts an order (tick size, neg risk, fee
 * rate, version) or builds a market order (market by token, market by condition id).
 *
 * GET /builder/trades is public, as the spec lists it and the platform's V2 client calls it (no headers,
 * `builder_code` in the query); a request that carries builder headers (`*_BUILDER_API_KEY`, ... signed with
 * a builder key, as the platform's V1 client sends them) must verify, and then lists that builder's trades.
 * Its answer is the spec's bare array with the cursor in `Next-Cursor`, or the V2 client's cursor envelope
 * of its BuilderTrade in the clob-client-v2 shapes (config compat.shapes).
 *
 * Token ids: malformed -> 400 `Invalid token id`; well-formed but no market has it -> 404 `No orderbook
 * exists for the requested token id` (batch routes add the offending `token_id` to the body). Condition
 * ids likewise: 400 `Invalid condition id`, 404 `No orderbook exists for the requested condition id`.
 * GET /book and POST /books pass the shard's pre-serialized snapshot through untouched: no parse, no
 * re-hash.
 */
import { apiError, type ApiError } from '../../domain/errors.ts';
import { END_CURSOR, decodeCursor } from '../../domain/cursor.ts';
import { parseConditionId, parseTokenId } from '../../domain/ids.ts';
import { pipsToNumber } from '../../domain/units.ts';
import { getProfile } from '../../queries/catalog.ts';
import { recentMarketFills } from '../../queries/fills.ts';
import { BUILDER_TRADES_PAGE_SIZE, type HistoryParams, type MarketDataReader } from '../../queries/market-data.ts';
import { DEFAULT_OUTCOMES } from '../../domain/market-rules.ts';
import { formatPips, formatUnits } from '../../domain/units.ts';
import type { AppContext } from '../context.ts';
import { Type } from '@sinclair/typebox';
import { reply, route, type AnyRoute } from '../route.ts';
import {
  BatchHistoryReply,
  BuilderCodeParams,
  BuilderFeesReply,
  BuilderTrade,
  ClientBuilderTradesPage,
  BuilderTradesQuery,
  ClobMarketReply,
  ConditionParams,
  FeeRateReply,
  HistoryBatchBody,
  HistoryQuery,
  HistoryReply,
  LastTradeReply,
  LastTradesReply,
  MarketByTokenReply,
  BookBatch,
  MAX_BOOKS_PER_REQUEST,
  MAX_TOKENS_PER_REQUEST,
  TOKEN_BATCH_BODY_BYTES,
  MarketTradeEvent,
  MidpointMap,
  MidpointReply,
  NegRiskReply,
  OrderBookSummary,
  PriceQuery,
  PriceReply,
  QuoteMap,
  SpreadMap,
  SpreadReply,
  TickSizeReply,
  TokenBatch,
  TokenParams,
  TokenQuery,
  VersionReply,
} from '../schemas/market-data.ts';

const NO_BOOK = 'No orderbook exists for the requested token id';
const bad = (detail: string): ApiError => apiError('PM_ERR_BAD_REQUEST', { detail });
const noBook = (tokenId?: string): ApiError => apiError('PM_ERR_NOT_FOUND_ENTITY', { detail: NO_BOOK }, tokenId === undefined ? undefined : { token_id: tokenId });

const TOKEN_MESSAGES = { token_id: 'Invalid token id', side: 'Invalid side', body: 'Invalid payload' };
const NO_MARKET = 'No orderbook exists for the requested condition id';
/** Fills GET /markets/live-activity/{condition_id} answers: the latest, newest first. */
export const LIVE_ACTIVITY_LIMIT = 100;
const CONDITION_MESSAGES = { condition_id: 'Invalid condition id' };
const HISTORY_MESSAGES = {
  market: 'Invalid market: expected a token id',
  startTs: 'Invalid startTs: expected unix seconds',
  endTs: 'Invalid endTs: expected unix seconds',
  start_ts: 'Invalid start_ts: expected unix seconds',
  end_ts: 'Invalid end_ts: expected unix seconds',
  interval: 'Invalid interval: expected one of 1m, 1h, 6h, 1d, 1w, max',
  fidelity: 'Invalid fidelity: expected whole minutes from 1 to 525600',
  markets: 'Invalid markets: expected 1 to 20 token ids',
  body: 'Invalid payload',
};

/** A query token id that passed the schema's shape; the uint256 bound is the last check. */
function tokenOf(raw: string): string {
  const t = parseTokenId(raw);
  if (t === undefined) throw bad('Invalid token id');
  return t;
}

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

export function marketDataRoutes(ctx: AppContext): AnyRoute[] {
  const md = (): MarketDataReader => {
    if (ctx.marketData === undefined) throw apiError('PM_ERR_UNAVAILABLE');
    return ctx.marketData;
  };
  /** The token of a single-token route, known to a market. */
  const known = (raw: string): string => {
    const id = tokenOf(raw);
    if (md().token(id) === undefined) throw noBook();
    return id;
  };
  const market = (raw: string) => {
    const m = md().marketOf(known(raw));
    if (m === undefined) throw noBook();
    return m;
  };

  /** Per-token answers of a token batch, read once every token's snapshot holds what was acknowledged. */
  const perToken = (body: TokenBatch, of: (r: MarketDataReader, id: string) => string) => {
    const r = md();
    const ids = batchTokens(r, body, MAX_TOKENS_PER_REQUEST);
    return withSnapshots(r, ids, () => {
      const out: Record<string, string> = {};
      for (const id of ids) out[id] = of(r, id);
      return out;
    });
  };
  const conditionOf = (raw: string): string => {
    const cid = parseConditionId(raw);
    if (cid === undefined) throw bad('Invalid condition id');
    if (ctx.engine.market(cid) === undefined) throw apiError('PM_ERR_NOT_FOUND_ENTITY', { detail: NO_MARKET });
    return cid;
  };
  const clientShapes = ctx.config.compat.shapes === 'clob-client-v2';

  return [
    route({
      method: 'GET',
      path: '/book',
      group: 'clob',
      summary: "Order book of a token: the shard's latest snapshot (the complementary token's orders mirrored at 1 - p)",
      query: TokenQuery,
      response: OrderBookSummary,
      fieldMessages: TOKEN_MESSAGES,
      handler: ({ query }) => {
        const r = md();
        const id = tokenOf(query.token_id);
        if (r.token(id) === undefined) throw noBook();
        return withSnapshots(r, [id], () => reply({ raw: bookOf(r, id) }));
      },
    }),
    route({
      method: 'POST',
      path: '/books',
      group: 'clob',
      maxBodyBytes: TOKEN_BATCH_BODY_BYTES,
      tooMany: tooManyTokens,
      summary: `Order books of up to ${MAX_BOOKS_PER_REQUEST} tokens, in request order`,
      body: BookBatch,
      response: Type.Array(OrderBookSummary),
      fieldMessages: TOKEN_MESSAGES,
      handler: ({ body }) => {
        const r = md();
        const ids = batchTokens(r, body, MAX_BOOKS_PER_REQUEST);
        // Read in one synchronous pass: the books of one market then come from one publication.
        return withSnapshots(r, ids, () => reply({ raw: `[${ids.map((id) => bookOf(r, id)).join(',')}]` }));
      },
    }),
    route({
      method: 'GET',
      path: '/price',
      group: 'clob',
      summary: 'Best price on one side: BUY = best bid, SELL = best ask ("" when that side is empty)',
      query: PriceQuery,
      response: PriceReply,
      fieldMessages: TOKEN_MESSAGES,
      handler: ({ query }) => {
        const id = known(query.token_id);
        return withSnapshots(md(), [id], () => ({ price: md().quote(id)[query.side] }));
      },
    }),
    route({
      method: 'POST',
      path: '/prices',
      group: 'clob',
      maxBodyBytes: TOKEN_BATCH_BODY_BYTES,
      tooMany: tooManyTokens,
      summary: `Best bid (BUY) and best ask (SELL) of up to ${MAX_TOKENS_PER_REQUEST} tokens`,
      body: TokenBatch,
      response: QuoteMap,
      fieldMessages: TOKEN_MESSAGES,
      handler: ({ body }) => {
        const r = md();
        const ids = batchTokens(r, body, MAX_TOKENS_PER_REQUEST);
        return withSnapshots(r, ids, () => {
          const out: Record<string, { BUY: string; SELL: string }> = {};
          for (const id of ids) out[id] = r.quote(id);
          return out;
        });
      },
    }),
    route({
      method: 'GET',
      path: '/midpoint',
      group: 'clob',
      summary: 'Midpoint of best bid and best ask ("" unless both sides have orders)',
      query: TokenQuery,
      response: MidpointReply,
      fieldMessages: TOKEN_MESSAGES,
      handler: ({ query }) => {
        const id = known(query.token_id);
        return withSnapshots(md(), [id], () => ({ mid: md().midpoint(id) }));
      },
    }),
    route({
      method: 'POST',
      path: '/midpoints',
      group: 'clob',
      maxBodyBytes: TOKEN_BATCH_BODY_BYTES,
      tooMany: tooManyTokens,
      summary: `Midpoints of up to ${MAX_TOKENS_PER_REQUEST} tokens, keyed by token id ("" unless both sides have orders)`,
      body: TokenBatch,
      response: MidpointMap,
      fieldMessages: TOKEN_MESSAGES,
      handler: ({ body }) => perToken(body, (r, id) => r.midpoint(id)),
    }),
    route({
      method: 'GET',
      path: '/spread',
      group: 'clob',
      summary: 'Best ask minus best bid of a token ("" unless both sides have orders)',
      query: TokenQuery,
      response: SpreadReply,
      fieldMessages: TOKEN_MESSAGES,
      handler: ({ query }) => {
        const id = known(query.token_id);
        return withSnapshots(md(), [id], () => ({ spread: md().spread(id) }));
      },
    }),
    route({
      method: 'POST',
      path: '/spreads',
      group: 'clob',
      maxBodyBytes: TOKEN_BATCH_BODY_BYTES,
      tooMany: tooManyTokens,
      summary: `Spreads of up to ${MAX_TOKENS_PER_REQUEST} tokens, keyed by token id ("" unless both sides have orders)`,
      body: TokenBatch,
      response: SpreadMap,
      fieldMessages: TOKEN_MESSAGES,
      handler: ({ body }) => perToken(body, (r, id) => r.spread(id)),
    }),
    route({
      method: 'GET',
      path: '/markets/live-activity/:condition_id',
      group: 'clob',
      summary: `The latest ${LIVE_ACTIVITY_LIMIT} trades of a market, newest first, each from its taker (the platform client's MarketTradeEvent)`,
      description:
        'One event per fill, as the data API lists trades: a fill whose settlement is deferred (sandbox.trades) appears once MINED. ' +
        'user is the taker wallet with its admin-set profile.',
      params: ConditionParams,
      response: Type.Array(MarketTradeEvent),
      fieldMessages: CONDITION_MESSAGES,
      handler: ({ params }) => {
        const cid = conditionOf(params.condition_id);
        const m = ctx.catalog.read.marketByCondition(cid);
        const labels = m?.outcomes ?? DEFAULT_OUTCOMES;
        const profiles = new Map<string, ReturnType<typeof getProfile>>();
        return recentMarketFills(ctx.store, ctx.views, cid, LIVE_ACTIVITY_LIMIT).map((f) => {
          let p = profiles.get(f.takerWallet);
          if (p === undefined) profiles.set(f.takerWallet, (p = getProfile(ctx.store, f.takerWallet)));
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
            fee_rate_bps: String(ctx.engine.getOrder(f.takerOrderId)?.takerFeeBps ?? 0),
            price: formatPips(f.takerPricePips),
            outcome: labels[f.takerOutcome],
            outcome_index: f.takerOutcome,
            transaction_hash: f.txHash,
            timestamp: String(Math.floor(f.ts / 1000)),
          };
        });
      },
    }),
    route({
      method: 'GET',
      path: '/fees/builder-fees/:builder_code',
      group: 'clob',
      summary: 'Builder fee rates of a builder code, in basis points (the platform client\'s getBuilderTakerFeeRate): 0 and 0',
      description: 'The service charges no builder fees: every builder code answers 0 for makers and takers, which is what orders pay.',
      params: BuilderCodeParams,
      response: BuilderFeesReply,
      fieldMessages: { builder_code: 'Invalid builder code' },
      handler: () => ({ builder_maker_fee_rate_bps: 0, builder_taker_fee_rate_bps: 0 }),
    }),
    route({
      method: 'GET',
      path: '/last-trade-price',
      group: 'clob',
      summary: 'Price and taker side of the last trade of a token ("" and "" before any trade)',
      query: TokenQuery,
      response: LastTradeReply,
      fieldMessages: TOKEN_MESSAGES,
      handler: ({ query }) => md().lastTrade(known(query.token_id)),
    }),
    route({
      method: 'POST',
      path: '/last-trades-prices',
      group: 'clob',
      maxBodyBytes: TOKEN_BATCH_BODY_BYTES,
      tooMany: tooManyTokens,
      summary: `Last trade of up to ${MAX_TOKENS_PER_REQUEST} tokens, in request order`,
      body: TokenBatch,
      response: LastTradesReply,
      fieldMessages: TOKEN_MESSAGES,
      handler: ({ body }) => {
        const r = md();
        return batchTokens(r, body, MAX_TOKENS_PER_REQUEST).map((id) => ({ token_id: id, ...r.lastTrade(id) }));
      },
    }),
    route({
      method: 'GET',
      path: '/tick-size',
      group: 'clob',
      summary: "Minimum tick size of the token's market",
      query: TokenQuery,
      response: TickSizeReply,
      fieldMessages: TOKEN_MESSAGES,
      handler: ({ query }) => ({ minimum_tick_size: pipsToNumber(market(query.token_id).tickPips) }),
    }),
    route({
      method: 'GET',
      path: '/neg-risk',
      group: 'clob',
      summary: "Whether the token's market is neg-risk (orders are signed for the neg-risk exchange)",
      query: TokenQuery,
      response: NegRiskReply,
      fieldMessages: TOKEN_MESSAGES,
      handler: ({ query }) => ({ neg_risk: market(query.token_id).negRisk }),
    }),
    route({
      method: 'GET',
      path: '/fee-rate',
      group: 'clob',
      summary: "Taker fee rate of the token's market in basis points",
      query: TokenQuery,
      response: FeeRateReply,
      fieldMessages: TOKEN_MESSAGES,
      handler: ({ query }) => ({ base_fee: market(query.token_id).takerFeeBps }),
    }),
    route({
      method: 'GET',
      path: '/markets-by-token/:token_id',
      group: 'clob',
      summary: "The token's market: its condition id and both of its tokens (outcome 0 is primary)",
      description: 'Not in the spec: the platform client asks it before it builds a market order (docs/decisions.md, "Market data").',
      params: TokenParams,
      response: MarketByTokenReply,
      fieldMessages: TOKEN_MESSAGES,
      handler: ({ params }) => {
        const m = md().marketByToken(tokenOf(params.token_id));
        if (m === undefined) throw noBook();
        return m;
      },
    }),
    route({
      method: 'GET',
      path: '/clob-markets/:condition_id',
      group: 'clob',
      summary: "A market's trading parameters in the platform's compact keys: tokens, tick size, neg risk, minimum size, fees",
      description:
        'Not in the spec: the platform client reads t, mts, nr and fd before it builds a market order. mbf/tbf are the ' +
        'fee rates in basis points; fd expresses the taker fee tbf / 10^4 * min(p, 1-p) per token as the flat bound ' +
        'r = tbf / 2 / 10^4, e = 0 (docs/decisions.md, "Market data").',
      params: ConditionParams,
      response: ClobMarketReply,
      fieldMessages: CONDITION_MESSAGES,
      handler: ({ params }) => {
        const cid = parseConditionId(params.condition_id);
        if (cid === undefined) throw bad('Invalid condition id');
        const m = md().clobMarket(cid);
        if (m === undefined) throw apiError('PM_ERR_NOT_FOUND_ENTITY', { detail: NO_MARKET });
        return m;
      },
    }),
    route({
      method: 'GET',
      path: '/version',
      group: 'clob',
      summary: 'Order version the service signs and verifies (the platform client reads it before posting)',
      response: VersionReply,
      handler: () => ({ version: 2 as const }),
    }),
    route({
      method: 'GET',
      path: '/prices-history',
      group: 'clob',
      summary: 'Recorded prices of a token (midpoints, and trade prices at trades), bucketed by fidelity',
      description:
        'Give `interval` or `startTs`/`endTs` (not both); neither means interval=max. Buckets are `fidelity` minutes wide, ' +
        'aligned to the unix epoch; each bucket that holds a sample gives {t: bucket start, p: its last sample}. Without ' +
        'fidelity the width is 1 minute, or the smallest that keeps the window within 50000 buckets.',
      query: HistoryQuery,
      response: HistoryReply,
      fieldMessages: HISTORY_MESSAGES,
      handler: ({ query: q }) => {
        const r = md();
        const id = tokenOf(q.market);
        if (r.token(id) === undefined) throw noBook();
        const params: HistoryParams = { startTs: q.startTs, endTs: q.endTs, interval: q.interval, fidelity: q.fidelity };
        const w = r.historyWindow([id], params, Math.floor(ctx.clock.now() / 1000));
        return { history: r.history(id, w) };
      },
    }),
    route({
      method: 'POST',
      path: '/batch-prices-history',
      group: 'clob',
      summary: 'Price history of up to 20 tokens over one window, keyed by token id',
      description: 'Same rules as GET /prices-history; the window of interval=max starts at the earliest sample of the listed tokens.',
      body: HistoryBatchBody,
      response: BatchHistoryReply,
      fieldMessages: HISTORY_MESSAGES,
      handler: ({ body: b }) => {
        const r = md();
        const ids = b.markets.map((m, i) => {
          const t = parseTokenId(m);
          if (t === undefined) throw bad(`Invalid token id at markets[${i}]`);
          return t as string;
        });
        for (const id of ids) if (r.token(id) === undefined) throw noBook(id);
        const params: HistoryParams = { startTs: b.start_ts, endTs: b.end_ts, interval: b.interval, fidelity: b.fidelity };
        const w = r.historyWindow(ids, params, Math.floor(ctx.clock.now() / 1000));
        const history: Record<string, { t: number; p: number }[]> = {};
        for (const id of ids) history[id] ??= r.history(id, w);
        return { history };
      },
    }),
    route({
      method: 'GET',
      path: '/builder/trades',
      group: 'clob',
      auth: 'l2',
      keys: ['builder'],
      authOptional: true,
      summary: clientShapes
        ? 'Trades whose taker order carried a non-zero builder code, oldest first, in the platform client\'s cursor envelope'
        : 'Trades whose taker order carried a non-zero builder code, oldest first; next cursor in the Next-Cursor header',
      description:
        'One row per fill (its maker order in maker_orders). Filters combine (AND); an empty value means absent. ' +
        `Pages of ${BUILDER_TRADES_PAGE_SIZE} rows; the next cursor is LTE= on the last page. Public; a request signed with ` +
        'builder headers (a builder API key) lists that builder\'s trades, and a different builder_code is refused.',
      query: BuilderTradesQuery,
      response: clientShapes ? ClientBuilderTradesPage : Type.Array(BuilderTrade),
      fieldMessages: {
        id: 'Invalid id',
        maker_address: 'Invalid maker_address',
        market: 'Invalid market',
        asset_id: 'Invalid asset_id',
        before: 'Invalid before: expected unix seconds',
        after: 'Invalid after: expected unix seconds',
        builder_code: 'Invalid builder_code',
        next_cursor: 'Invalid next_cursor',
      },
      handler: ({ query: q, caller }) => {
        const offset = decodeCursor(q.next_cursor);
        if (offset === undefined) throw bad('Invalid next_cursor');
        const opt = (s: string | undefined) => (s === undefined || s === '' ? undefined : s.toLowerCase());
        const num = (s: string | undefined) => (s === undefined || s === '' ? undefined : Number(s));
        let builderCode = opt(q.builder_code);
        if (caller.builderCode !== undefined) {
          if (builderCode !== undefined && builderCode !== caller.builderCode) throw bad('builder_code is not the code of the builder key that signed the request');
          builderCode = caller.builderCode;
        }
        const filter = {
          id: opt(q.id),
          makerAddress: opt(q.maker_address),
          market: opt(q.market),
          assetId: opt(q.asset_id),
          before: num(q.before),
          after: num(q.after),
          builderCode,
        };
        if (clientShapes) {
          if (offset === 'end') return { data: [], next_cursor: END_CURSOR, limit: BUILDER_TRADES_PAGE_SIZE, count: 0 };
          const r = md();
          const page = r.builderTrades(filter, offset, BUILDER_TRADES_PAGE_SIZE, (f, x) => r.clientBuilderTrade(f, x));
          return { data: page.rows, next_cursor: page.next, limit: BUILDER_TRADES_PAGE_SIZE, count: page.rows.length };
        }
        if (offset === 'end') return reply({ body: [], headers: { 'Next-Cursor': END_CURSOR } });
        const page = md().builderTrades(filter, offset);
        return reply({ body: page.rows, headers: { 'Next-Cursor': page.next } });
      },
    }),
  ];
}
