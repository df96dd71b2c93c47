/**
 * What happened in the markets, as the clob group serves it: price history (GET /prices-history, POST
 * /batch-prices-history: recorded midpoints and trade prices, bucketed) and builder trades (GET
 * /builder/trades: public, or a builder key's own, in the spec's array or the V2 client's cursor envelope).
 * The books and quotes as they stand now are market-data.ts's.
 *
 * GET /builder/trades is public, as the spec lists it and the platform's V2 client calls it (no headers,
 * `builder_code` in the query); a request that carries builder headers (`*_BUILDER_API_KEY`, ... signed with
 * a builder key, as the platform's V1 client sends them) must verify, and then lists that builder's trades.
 * L2 headers (`*_API_KEY`, ...: a trading or read-only key, as a client that signs every call sends them)
 * are not a builder's and are ignored: such a request is the public one, with the public rows.
 * Its answer is the spec's bare array with the cursor in `Next-Cursor`, or the V2 client's cursor envelope
 * of its BuilderTrade in the clob-client-v2 shapes (config compat.shapes).
 */
import { END_CURSOR, decodeCursor } from '../../../domain/cursor.ts';
import { parseTokenId } from '../../../domain/ids.ts';
import { BUILDER_TRADES_PAGE_SIZE, type HistoryParams } from '../../../queries/market-data.ts';
import { Type } from '@sinclair/typebox';
import { reply, routeSpec, type Caller, type RequestOf, type RouteSpec } from '../../pipeline/route.ts';
import { BatchHistoryReply, BuilderTrade, ClientBuilderTradesPage, BuilderTradesQuery, HistoryBatchBody, HistoryQuery, HistoryReply } from '../../schemas/market-data.ts';
import { bad, md, noBook, tokenOf, type MarketDataDeps } from './market-data-deps.ts';

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

export function pricesHistory(d: Pick<MarketDataDeps, 'marketData' | 'clock'>, { query: q }: RequestOf<typeof HistoryQuery>) {
  const r = md(d);
  const id = tokenOf(q.market);
  if (r.token(id) === undefined) throw noBook();
  const params: HistoryParams = { startTs: q.startTs, endTs: q.endTs, interval: q.interval, fidelity: q.fidelity };
  const w = r.historyWindow([id], params, Math.floor(d.clock.now() / 1000));
  return { history: r.history(id, w) };
}

export function batchPricesHistory(d: Pick<MarketDataDeps, 'marketData' | 'clock'>, { body: b }: RequestOf<undefined, typeof HistoryBatchBody>) {
  const r = md(d);
  const ids = b.markets.map((m, i) => {
    const t = parseTokenId(m);
    if (t === undefined) throw bad(`Invalid token id at markets[${i}]`);
    return t as string;
  });
  for (const id of ids) if (r.token(id) === undefined) throw noBook(id);
  const params: HistoryParams = { startTs: b.start_ts, endTs: b.end_ts, interval: b.interval, fidelity: b.fidelity };
  const w = r.historyWindow(ids, params, Math.floor(d.clock.now() / 1000));
  const history: Record<string, { t: number; p: number }[]> = {};
  for (const id of ids) history[id] ??= r.history(id, w);
  return { history };
}

/** The builder trades filter of a query; a builder key's signature fixes the builder code. */
function builderFilter(q: BuilderTradesQuery, caller: Caller) {
  const opt = (s: string | undefined) => (s === undefined || s === '' ? undefined : s.toLowerCase());
  const num = (s: string | undefined) => (s === undefined || s === '' ? undefined : Number(s));
  let builderCode = opt(q.builder_code);
  if (caller.builderCode !== undefined) {
    if (builderCode !== undefined && builderCode !== caller.builderCode) throw bad('builder_code is not the code of the builder key that signed the request');
    builderCode = caller.builderCode;
  }
  return { id: opt(q.id), makerAddress: opt(q.maker_address), market: opt(q.market), assetId: opt(q.asset_id), before: num(q.before), after: num(q.after), builderCode };
}

export function builderTrades(d: Pick<MarketDataDeps, 'marketData' | 'clientShapes'>, { query: q, caller }: RequestOf<typeof BuilderTradesQuery>) {
  const offset = decodeCursor(q.next_cursor);
  if (offset === undefined) throw bad('Invalid next_cursor');
  const filter = builderFilter(q, caller);
  if (d.clientShapes) {
    if (offset === 'end') return { data: [], next_cursor: END_CURSOR, limit: BUILDER_TRADES_PAGE_SIZE, count: 0 };
    const r = md(d);
    const page = r.builderTrades(filter, offset, BUILDER_TRADES_PAGE_SIZE, (f, x) => r.clientBuilderTrade(f, x));
    return { data: page.rows, next_cursor: page.next, limit: BUILDER_TRADES_PAGE_SIZE, count: page.rows.length };
  }
  if (offset === 'end') return reply({ body: [], headers: { 'Next-Cursor': END_CURSOR } });
  const page = md(d).builderTrades(filter, offset);
  return reply({ body: page.rows, headers: { 'Next-Cursor': page.next } });
}

/** The price-history routes, documented after the quotes and look-ups. */
export const HISTORY_ROUTES: readonly RouteSpec<MarketDataDeps>[] = [
  routeSpec({
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
    handler: pricesHistory,
  }),
  routeSpec({
    method: 'POST',
    path: '/batch-prices-history',
    group: 'clob',
    summary: 'Price history of up to 20 tokens over one window, keyed by token id',
    description: 'Same rules as GET /prices-history; the window of interval=max starts at the earliest sample of the listed tokens.',
    body: HistoryBatchBody,
    response: BatchHistoryReply,
    fieldMessages: HISTORY_MESSAGES,
    handler: batchPricesHistory,
  }),
];

/** GET /builder/trades: its summary and answer follow compat.shapes. */
export function builderTradesRoute(clientShapes: boolean): RouteSpec<MarketDataDeps> {
return routeSpec({
  method: 'GET',
  path: '/builder/trades',
  group: 'clob',
  history: true,
  auth: 'l2',
  keys: ['builder'],
  authOptional: true,
  summary: clientShapes
    ? 'Trades whose taker order carried a non-zero builder code, oldest first, in the platform client\'s cursor envelope'
    : 'Trades whose taker order carried a non-zero builder code, oldest first; next cursor in the Next-Cursor header',
  description:
    'One row per fill (its maker order in maker_orders). Filters combine (AND); an empty value means absent. ' +
    `Pages of ${BUILDER_TRADES_PAGE_SIZE} rows; the next cursor is LTE= on the last page. Public; a request signed with ` +
    'builder headers (a builder API key) lists that builder\'s trades, and a different builder_code is refused; ' +
    'L2 headers (a trading or read-only key) are ignored.',
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
  handler: builderTrades,
});
}
