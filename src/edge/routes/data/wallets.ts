/**
 * Wallet data routes (group `data`): GET /trades, /positions, /closed-positions. Answers are bare JSON
 * arrays; errors are `{"error": "..."}` (DESIGN section 4):
 *   400 unknown_field: <name> | missing_field: <name> | invalid_field: <name>   (validate.ts + below)
 *   401 unauthorized: ip_not_allowlisted   when dataApi.ipAllowlist is set and the caller is not on it,
 *       checked before anything else of the request is looked at
 *   500 internal_error: unexpected database failure   when a storage read fails
 *
 * Defaults the schemas cannot carry are applied here; every number comes from queries/wallets/.
 */
import { apiError, isApiError } from '../../../domain/errors.ts';
import type { LivePrices } from '../../../queries/wallets/position-prices.ts';
import type { ClosedParams, PositionsParams } from '../../../queries/wallets/positions.ts';
import { WalletDataReader } from '../../../queries/wallets/reader.ts';
import type { TradesParams } from '../../../queries/wallets/trades.ts';
import type { AppContext } from '../../context.ts';
import { ipInCidrList } from '../../../domain/ip.ts';
import type { Logger } from '../../../runtime/log.ts';
import { bindRoutes, reply, routeSpec, type AnyRoute, type Caller, type RequestOf, type RouteSpec } from '../../pipeline/route.ts';
import { Type } from '@sinclair/typebox';
import { ClosedPosition, ClosedPositionsQuery, Position, PositionsQuery, Trade, TradesQuery } from '../../schemas/wallets.ts';

const lowerAll = (list: string[] | undefined) => list?.map((s) => s.toLowerCase());

/** What the wallet data handlers use: the reader of wallet data, the IP allowlist (empty: anyone), the log of store failures. */
export interface WalletDeps {
  readonly reader: Pick<WalletDataReader, 'tradesJson' | 'positionsJson' | 'closedPositionsJson'>;
  readonly allowlist: readonly string[];
  readonly log: Pick<Logger, 'error'>;
}

/** The reader over the store, told of every price and catalog change so its page caches stay current. */
export function walletDeps(ctx: Pick<AppContext, 'store' | 'views' | 'catalog' | 'livePrices' | 'config' | 'log'>): WalletDeps {
  // The committed books: the state /book and the streams serve (without them, as in some benches' partial
  // contexts, prices fall back to the catalog).
  const live = ctx.livePrices as AppContext['livePrices'] | undefined;
  const prices: LivePrices = {
    bookSnapshot: (tokenId) => live?.bookSnapshot(tokenId),
    lastTradePrice: (tokenId) => live?.lastTradePrice(tokenId),
  };
  const reader = new WalletDataReader({ store: ctx.store, views: ctx.views, catalog: ctx.catalog.read, prices, priceEvents: live !== undefined });
  // Every change of a book or of a last trade, by token, as each commit is applied.
  live?.onChanged((tokenIds) => reader.pricesChanged(tokenIds));
  ctx.catalog.write.onMarketsChanged((markets) => reader.catalogChanged(markets.map((m) => m.conditionId)));
  return { reader, allowlist: ctx.config.dataApi.ipAllowlist, log: ctx.log };
}

export function allowlisted(d: Pick<WalletDeps, 'allowlist'>, caller: Caller) {
  return d.allowlist.length === 0 || ipInCidrList(caller.ip, d.allowlist) ? undefined : apiError('PM_ERR_DATA_IP');
}

/**
 * Runs a read and answers its JSON text as is. Anything but a catalogue error thrown while reading is
 * the store failing: logged, and answered with the wallet data group's 500 body.
 */
function answer(d: Pick<WalletDeps, 'log'>, what: string, read: () => string) {
  try {
    return reply({ raw: read() });
  } catch (e) {
    if (isApiError(e)) throw e;
    d.log.error({ err: e, route: what }, 'wallet data read failed');
    throw apiError('PM_ERR_DATA_DB');
  }
}

export function trades(d: WalletDeps, { query: q }: RequestOf<typeof TradesQuery>) {
  if (q.filterType !== undefined && q.filterAmount === undefined) throw apiError('PM_ERR_DATA_MISSING_FIELD', { name: 'filterAmount' });
  if (q.filterAmount !== undefined && q.filterType === undefined) throw apiError('PM_ERR_DATA_MISSING_FIELD', { name: 'filterType' });
  const params: TradesParams = {
    limit: q.limit ?? 100,
    offset: q.offset ?? 0,
    takerOnly: q.takerOnly ?? true,
    filter: q.filterType !== undefined ? { type: q.filterType, amount: q.filterAmount! } : undefined,
    markets: lowerAll(q.market),
    user: q.user?.toLowerCase(),
    side: q.side,
  };
  return answer(d, 'GET /trades', () => d.reader.tradesJson(params));
}

/** What the open and the closed position lists share: the wallet, markets, title, page and direction. */
function positionsCommon(q: { user: string; market?: string[]; title?: string; offset?: number; sortDirection?: 'ASC' | 'DESC' }) {
  return { user: q.user.toLowerCase(), markets: lowerAll(q.market), title: q.title, offset: q.offset ?? 0, descending: (q.sortDirection ?? 'DESC') === 'DESC' };
}

export function positions(d: WalletDeps, { query: q }: RequestOf<typeof PositionsQuery>) {
  const params: PositionsParams = {
    ...positionsCommon(q),
    sizeThreshold: q.sizeThreshold ?? 1,
    redeemable: q.redeemable ?? false,
    mergeable: q.mergeable ?? false,
    limit: q.limit ?? 100,
    sortBy: q.sortBy ?? 'TOKENS',
  };
  return answer(d, 'GET /positions', () => d.reader.positionsJson(params));
}

export function closedPositions(d: WalletDeps, { query: q }: RequestOf<typeof ClosedPositionsQuery>) {
  const params: ClosedParams = { ...positionsCommon(q), limit: q.limit ?? 10, sortBy: q.sortBy ?? 'REALIZEDPNL' };
  return answer(d, 'GET /closed-positions', () => d.reader.closedPositionsJson(params));
}

export const WALLET_ROUTES: readonly RouteSpec<WalletDeps>[] = [
  routeSpec({
    method: 'GET',
    path: '/trades',
    group: 'data',
    history: true,
    summary: 'Trade fills, newest first: each fill once from its taker unless takerOnly=false',
    description:
      '`user` lists the fills the wallet took part in (as taker only, by default); `market` a comma list of condition ids; ' +
      '`side` is from the listed wallet\'s perspective; `filterType` (CASH: usdcSize, TOKENS: size) and `filterAmount` ' +
      '(inclusive minimum) go together.',
    query: TradesQuery,
    response: Type.Array(Trade),
    guard: allowlisted,
    handler: trades,
  }),
  routeSpec({
    method: 'GET',
    path: '/positions',
    group: 'data',
    summary: 'Open positions of a wallet (size >= sizeThreshold), sorted and paged',
    description:
      'Numbers follow the platform: initialValue = size x avgPrice, currentValue = size x curPrice, cashPnl = currentValue - ' +
      'initialValue; curPrice is the book midpoint (last trade when the spread is wider than 0.10; 1 or 0 once resolved). ' +
      'Ties in any sort are broken by conditionId, then outcomeIndex, ascending.',
    query: PositionsQuery,
    response: Type.Array(Position),
    guard: allowlisted,
    handler: positions,
  }),
  routeSpec({
    method: 'GET',
    path: '/closed-positions',
    group: 'data',
    summary: 'Positions the wallet held and exited (sold, merged or redeemed to zero), sorted and paged',
    description: 'curPrice is the price of the event that closed the position; timestamp is the closing time. Ties: conditionId, outcomeIndex ascending.',
    query: ClosedPositionsQuery,
    response: Type.Array(ClosedPosition),
    guard: allowlisted,
    handler: closedPositions,
  }),
];

export function walletRoutes(ctx: Parameters<typeof walletDeps>[0]): AnyRoute[] {
  return bindRoutes(walletDeps(ctx), WALLET_ROUTES);
}
