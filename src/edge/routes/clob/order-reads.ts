/**
 * The caller's orders, trades and balances (GET /data/order/{id}, /data/orders, /data/trades,
 * /balance-allowance, /data/pre-migration-orders): read from the engine's memory and the fill journal, and
 * answered once what they show is durable. Orders answer the spec's Order, or the platform client's OpenOrder
 * in the clob-client-v2 shapes (config compat.shapes). Writes are trading.ts's.
 */
import { Type } from '@sinclair/typebox';
import { apiError, resultError } from '../../../domain/errors.ts';
import { END_CURSOR, decodeCursor, encodeCursor, nextCursor } from '../../../domain/cursor.ts';
import { parseOrderId } from '../../../domain/ids.ts';
import { DEFAULT_OUTCOMES } from '../../../domain/market-rules.ts';
import { formatPips, formatUnits } from '../../../domain/units.ts';
import type { FillEvent, OrderRecord } from '../../../domain/events.ts';
import { walletFor } from '../../auth/funders.ts';
import { walletFills } from '../../../queries/fills.ts';
import { READ_KEYS, routeSpec, type RequestOf, type RouteSpec } from '../../pipeline/route.ts';
import { BalanceAllowance, BalanceAllowanceQuery, ClientOpenOrder, ClientOpenOrdersPage, OpenOrdersPage, OpenOrdersQuery, OrderView, OrderViewResponse, TradesPage, TradesQuery } from '../../schemas/trading.ts';
import type { Eng, TradingDeps } from './trading-deps.ts';

const outcomeLabel = (d: Pick<TradingDeps, 'catalog'>, conditionId: string, outcome: 0 | 1): string =>
  d.catalog.marketByCondition(conditionId)?.outcomes[outcome] ?? DEFAULT_OUTCOMES[outcome];

const iso = (ms: number) => new Date(ms).toISOString();

function orderView(d: Pick<TradingDeps, 'catalog'>, r: OrderRecord): OrderView {
  return {
    id: r.orderId,
    status: r.status,
    market: r.conditionId,
    originalSize: formatUnits(r.sizeUnits),
    outcome: outcomeLabel(d, r.conditionId, r.outcome),
    makerAddress: r.wallet,
    owner: r.owner,
    price: formatPips(r.pricePips),
    sizeMatched: formatUnits(r.sizeMatched),
    assetId: r.tokenId,
    side: r.side,
    type: r.orderType,
    expiration: String(r.expiration),
    associateTrades: r.tradeIds,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
  };
}

// Where the spec's Order and the platform client's OpenOrder disagree, compat.shapes picks (docs/decisions/sandbox.md,
// "The platform's V2 client").
function clientOrder(d: Pick<TradingDeps, 'catalog'>, r: OrderRecord): ClientOpenOrder {
  return {
    id: r.orderId,
    status: r.status,
    owner: r.owner,
    maker_address: r.wallet,
    market: r.conditionId,
    asset_id: r.tokenId,
    side: r.side,
    original_size: formatUnits(r.sizeUnits),
    size_matched: formatUnits(r.sizeMatched),
    price: formatPips(r.pricePips),
    associate_trades: r.tradeIds,
    outcome: outcomeLabel(d, r.conditionId, r.outcome),
    created_at: Math.floor(r.createdAt / 1000),
    expiration: String(r.expiration),
    order_type: r.orderType,
  };
}

// Orders and balances are read from the engine's memory, which may be ahead of the journal: a reply is
// copied now and sent once what it shows is durable (never state a crash could still undo).
async function durable<T>(d: Eng, reply: T): Promise<T> {
  const c = await d.engine.afterCommit();
  if (!c.ok) throw resultError(c.code);
  return reply;
}

function pageOffset(cursor: string | undefined): number | 'end' {
  const offset = decodeCursor(cursor);
  if (offset === undefined) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'invalid next_cursor' });
  return offset;
}

export async function getOrder(d: Pick<TradingDeps, 'engine' | 'catalog' | 'clientShapes'>, req: RequestOf<undefined, undefined, typeof OrderIdParams>) {
  const rec = d.engine.getOrder(parseOrderId(req.params.id)!);
  if (!rec) throw apiError('PM_ERR_ORDER_NOT_FOUND');
  return d.clientShapes ? durable(d, clientOrder(d, rec)) : { order: await durable(d, orderView(d, rec)) };
}

export async function openOrders(d: Pick<TradingDeps, 'engine' | 'catalog' | 'clientShapes'>, req: RequestOf<typeof OpenOrdersQuery>) {
  const offset = pageOffset(req.query.next_cursor);
  const all = d.engine.openOrders(req.caller.address!, {
    id: req.query.id?.toLowerCase(),
    conditionId: req.query.market?.toLowerCase(),
    tokenId: req.query.asset_id,
  });
  const limit = 500;
  const from = offset === 'end' ? all.length : offset;
  const page = all.slice(from, from + limit);
  const data = await durable(d, d.clientShapes ? page.map((r) => clientOrder(d, r)) : page.map((r) => orderView(d, r)));
  return { data, next_cursor: nextCursor(from, page.length, all.length), limit, count: page.length };
}

export function trades(d: Pick<TradingDeps, 'engine' | 'marketData' | 'store' | 'views' | 'funders'>, req: RequestOf<typeof TradesQuery>) {
  const offset = pageOffset(req.query.next_cursor);
  const marketData = d.marketData;
  if (!marketData) throw apiError('PM_ERR_UNAVAILABLE');
  const q = req.query;
  // The key's wallets, or the one of them maker_address names (another address is none of the key's: no trades).
  const own = d.funders.walletsOf(req.caller.address!);
  const maker = q.maker_address?.toLowerCase();
  const wallets = maker === undefined ? own : own.includes(maker) ? [maker] : [];
  const id = q.id?.toLowerCase();
  const market = q.market?.toLowerCase();
  const matches = (f: FillEvent) =>
    (id === undefined || f.tradeId === id) &&
    (market === undefined || f.conditionId === market) &&
    (q.asset_id === undefined || f.takerTokenId === q.asset_id || f.makerTokenId === q.asset_id) &&
    (q.after === undefined || f.ts > q.after * 1000) &&
    (q.before === undefined || f.ts < q.before * 1000);
  const limit = 500;
  const from = offset === 'end' ? Number.MAX_SAFE_INTEGER : offset;
  const page: FillEvent[] = [];
  let seen = 0;
  let more = false;
  // Walks the wallet's fills from the start (filters need each fill): cost grows with the offset.
  for (const f of walletFills(d.store, d.views, wallets)) {
    if (!matches(f)) continue;
    if (seen++ < from) continue;
    if (page.length === limit) {
      more = true;
      break;
    }
    page.push(f);
  }
  const data = page.map((f) => {
    const taker = d.engine.getOrder(f.takerOrderId);
    const maker = d.engine.getOrder(f.makerOrderId);
    const fields = { b: Math.max(0, taker?.tradeIds.indexOf(f.tradeId) ?? 0), tf: taker?.takerFeeBps ?? 0, mf: maker?.makerFeeBps ?? 0 };
    return { ...marketData.tradeOut(f, fields), trader_side: wallets.includes(f.takerWallet) ? ('TAKER' as const) : ('MAKER' as const) };
  });
  return { data, next_cursor: more ? encodeCursor(from + page.length) : END_CURSOR, limit, count: data.length };
}

/** The available balance of USDC or of one token of the caller's wallet signature_type names, copied now and sent once durable. */
export function balanceAllowance(d: Pick<TradingDeps, 'engine' | 'exchanges' | 'funders'>, req: RequestOf<typeof BalanceAllowanceQuery>) {
  const q = req.query;
  const b = d.engine.balances(walletFor(d.funders, req.caller.address!, q.signature_type));
  let available = b.usdc.available;
  let reserved = b.usdc.reserved;
  if (q.asset_type === 'CONDITIONAL') {
    if (!q.token_id) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'token_id is required for CONDITIONAL' });
    const t = b.tokens.find((x) => x.tokenId === q.token_id);
    available = t?.available ?? 0;
    reserved = t?.reserved ?? 0;
  }
  const text = String(available);
  return durable(d, { balance: text, allowance: text, allowances: Object.fromEntries(d.exchanges.map((a) => [a, text])), reserved: String(reserved) });
}

export function preMigrationOrders(_d: unknown, req: RequestOf<typeof PreMigrationQuery>) {
  pageOffset(req.query.next_cursor);
  return { data: [], next_cursor: END_CURSOR, limit: 500, count: 0 };
}

const OrderIdParams = Type.Object({ id: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }) });
const PreMigrationQuery = Type.Object({ next_cursor: Type.Optional(Type.String({ maxLength: 64 })) });

/** The caller's orders, trades and balances; order responses follow compat.shapes. */
export function readRoutes(clientShapes: boolean): readonly RouteSpec<TradingDeps>[] {
  return [
    routeSpec({
      method: 'GET',
      path: '/data/order/:id',
      group: 'clob',
      history: true,
      // The order's row carries everything its answer shows (its trade ids included): a node that holds the
      // row answers, and only an order it lacks (closed before its history floor, or none) goes to the sequencer.
      heldHere: (d, req) => d.engine.getOrder(parseOrderId(req.params.id)!) !== undefined,
      summary: 'One order by id (public, as the spec lists it)',
      params: OrderIdParams,
      fieldMessages: { id: 'Invalid orderID' },
      response: clientShapes ? ClientOpenOrder : OrderViewResponse,
      handler: getOrder,
    }),
    routeSpec({
      method: 'GET',
      path: '/data/orders',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: 'The caller\'s open orders, oldest first (cursor paging)',
      query: OpenOrdersQuery,
      response: clientShapes ? ClientOpenOrdersPage : OpenOrdersPage,
      handler: openOrders,
    }),
    routeSpec({
      method: 'GET',
      path: '/data/trades',
      group: 'trading',
      history: true,
      auth: 'l2',
      keys: READ_KEYS,
      summary: 'The caller\'s trades (as taker or maker), oldest first, cursor paging',
      query: TradesQuery,
      response: TradesPage,
      handler: trades,
    }),
    routeSpec({
      method: 'GET',
      path: '/balance-allowance',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: 'The caller\'s available balance of USDC or of one token, in integer units (as the platform client reads it)',
      query: BalanceAllowanceQuery,
      response: BalanceAllowance,
      handler: balanceAllowance,
    }),
    routeSpec({
      method: 'GET',
      path: '/balance-allowance/update',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: 'The platform client\'s updateBalanceAllowance: nothing to refresh here (no chain), so it answers what GET /balance-allowance does',
      description: 'On the platform this re-reads on-chain balances and approvals into its cache; the ledger here is the balance itself, always current.',
      query: BalanceAllowanceQuery,
      response: BalanceAllowance,
      handler: balanceAllowance,
    }),
    routeSpec({
      method: 'GET',
      path: '/data/pre-migration-orders',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: 'Orders placed before the platform\'s exchange migration: none here (there was no migration), an empty last page',
      query: PreMigrationQuery,
      response: clientShapes ? ClientOpenOrdersPage : OpenOrdersPage,
      handler: preMigrationOrders,
    }),
  ];
}
