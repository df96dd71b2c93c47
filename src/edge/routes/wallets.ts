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
import { apiError, isApiError } from '../../domain/errors.ts';
import type { LivePrices } from '../../queries/wallets/position-prices.ts';
import type { ClosedParams, PositionsParams } from '../../queries/wallets/positions.ts';
import { WalletDataReader } from '../../queries/wallets/reader.ts';
import type { TradesParams } from '../../queries/wallets/trades.ts';
import type { AppContext } from '../context.ts';
import { ipInCidrList } from '../../domain/ip.ts';
import { reply, route, type AnyRoute, type Caller } from '../route.ts';
import { Type } from '@sinclair/typebox';
import { ClosedPosition, ClosedPositionsQuery, Position, PositionsQuery, Trade, TradesQuery } from '../schemas/wallets.ts';

const lowerAll = (list: string[] | undefined) => list?.map((s) => s.toLowerCase());

export function walletRoutes(ctx: AppContext): AnyRoute[] {
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

  const allowlist = ctx.config.dataApi.ipAllowlist;
  const guard = (caller: Caller) => (allowlist.length === 0 || ipInCidrList(caller.ip, allowlist) ? undefined : apiError('PM_ERR_DATA_IP'));

  /**
   * Runs a read and answers its JSON text as is. Anything but a catalogue error thrown while reading is
   * the store failing: logged, and answered with the wallet data group's 500 body.
   */
  const answer = (what: string, read: () => string) => {
    try {
      return reply({ raw: read() });
    } catch (e) {
      if (isApiError(e)) throw e;
      ctx.log.error({ err: e, route: what }, 'wallet data read failed');
      throw apiError('PM_ERR_DATA_DB');
    }
  };

  return [
    route({
      method: 'GET',
      path: '/trades',
      group: 'data',
      summary: 'Trade fills, newest first: each fill once from its taker unless takerOnly=false',
      description:
        '`user` lists the fills the wallet took part in (as taker only, by default); `market` a comma list of condition ids; ' +
        '`side` is from the listed wallet\'s perspective; `filterType` (CASH: usdcSize, TOKENS: size) and `filterAmount` ' +
        '(inclusive minimum) go together.',
      query: TradesQuery,
      response: Type.Array(Trade),
      guard,
      handler: ({ query: q }) => {
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
        return answer('GET /trades', () => reader.tradesJson(params));
      },
    }),
    route({
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
      guard,
      handler: ({ query: q }) => {
        const params: PositionsParams = {
          user: q.user.toLowerCase(),
          markets: lowerAll(q.market),
          sizeThreshold: q.sizeThreshold ?? 1,
          redeemable: q.redeemable ?? false,
          mergeable: q.mergeable ?? false,
          limit: q.limit ?? 100,
          offset: q.offset ?? 0,
          sortBy: q.sortBy ?? 'TOKENS',
          descending: (q.sortDirection ?? 'DESC') === 'DESC',
          title: q.title,
        };
        return answer('GET /positions', () => reader.positionsJson(params));
      },
    }),
    route({
      method: 'GET',
      path: '/closed-positions',
      group: 'data',
      summary: 'Positions the wallet held and exited (sold, merged or redeemed to zero), sorted and paged',
      description: 'curPrice is the price of the event that closed the position; timestamp is the closing time. Ties: conditionId, outcomeIndex ascending.',
      query: ClosedPositionsQuery,
      response: Type.Array(ClosedPosition),
      guard,
      handler: ({ query: q }) => {
        const params: ClosedParams = {
          user: q.user.toLowerCase(),
          markets: lowerAll(q.market),
          title: q.title,
          limit: q.limit ?? 10,
          offset: q.offset ?? 0,
          sortBy: q.sortBy ?? 'REALIZEDPNL',
          descending: (q.sortDirection ?? 'DESC') === 'DESC',
        };
        return answer('GET /closed-positions', () => reader.closedPositionsJson(params));
      },
    }),
  ];
}
