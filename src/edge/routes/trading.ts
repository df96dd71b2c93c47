/**
 * Trading: place one or many orders, read them, cancel them, and the wallet operations beyond the spec
 * (split, merge, redeem, balances). Every write route is L2-signed with a trading key; the edge has already
 * checked the HMAC and rate-limited by API key before a handler runs. The reads (open orders, trades,
 * balances, pre-migration orders) take read-only keys too (route.ts READ_KEYS). `GET /data/order/{id}` and
 * `/data/orders` answer the spec's Order, or the platform client's OpenOrder in the clob-client-v2 shapes
 * (config compat.shapes).
 *
 * Flow of an order: schema (edge) -> checkOrders (owner, signer, EIP-712 signature in the signature
 * pool, market, amounts, expiration) -> Engine.placeOrder (tick, size, balance, matching) -> answered
 * only after the engine's journal commit. Rejections carry the platform's wording (domain/errors.ts).
 * `POST /order` answers a rejection with 400 `{error}`; `POST /orders` answers 200 with one
 * `{success:false, errorMsg}` element per rejected order, so one bad order never fails the others.
 *
 * The sandbox (edge/sandbox/sandbox.ts) adds its order rules between the checks and the engine: a BUY of a
 * closed-only wallet is refused (400), and so is an order without postOnly in the post-only period after a
 * maintenance window (503 with `code`, `retry_after_seconds` and Retry-After, as the platform answers);
 * maintenance windows and injected faults wrap these routes from outside (its gate).
 */
import { Type } from '@sinclair/typebox';
import { apiError, resultError, type ApiError } from '../../domain/errors.ts';
import { END_CURSOR, decodeCursor, encodeCursor, nextCursor } from '../../domain/cursor.ts';
import { parseConditionId, parseOrderId, parseTokenId } from '../../domain/ids.ts';
import { DEFAULT_OUTCOMES } from '../../domain/market-rules.ts';
import { formatPips, formatUnits, parseUnits } from '../../domain/units.ts';
import type { FillEvent, OrderRecord } from '../../domain/events.ts';
import type { PlaceResponse } from '../../engine/engine.ts';
import type { AppContext } from '../context.ts';
import { errorReply } from '../error-reply.ts';
import { checkOrders, orderCheckDeps, type NormalizedOrder, type OrderCaller } from '../order-check.ts';
import { walletFills } from '../../queries/fills.ts';
import { READ_KEYS, route, type AnyRoute, type Caller } from '../route.ts';
import {
  CancelMarketOrdersBody,
  CancelResult,
  DeleteOrderBody,
  MAX_ORDERS_PER_REQUEST,
  OrderResult,
  PostOrderBody,
  PostOrdersBody,
  PostOrdersResult,
  ORDER_BODY_BYTES,
  ORDERS_BODY_BYTES,
} from '../schemas/orders.ts';
import {
  BalanceAllowance,
  BalanceAllowanceQuery,
  ClientOpenOrder,
  ClientOpenOrdersPage,
  DeleteOrdersBody,
  MAX_CANCEL_IDS,
  OpenOrdersPage,
  OpenOrdersQuery,
  OrderView,
  OrderViewResponse,
  RedeemBody,
  SplitMergeBody,
  TradesPage,
  TradesQuery,
  WalletOpResult,
} from '../schemas/trading.ts';

/** The engine's answer as the POST /order result (DESIGN section 7: decimal strings). */
function orderResult(r: PlaceResponse): OrderResult {
  return {
    success: true,
    errorMsg: '',
    orderID: r.orderId,
    status: r.status,
    makingAmount: formatUnits(r.makingAmount),
    takingAmount: formatUnits(r.takingAmount),
    tradeIDs: r.tradeIds,
  };
}

function rejected(orderId: string, e: ApiError): OrderResult {
  return { success: false, errorMsg: e.message, orderID: orderId, status: '', makingAmount: '', takingAmount: '' };
}


/** The caller of a signed route: the edge guarantees both fields once the HMAC passed. */
function signer(caller: Caller): OrderCaller {
  return { apiKey: caller.apiKey!, address: caller.address! };
}

export function tradingRoutes(ctx: AppContext): AnyRoute[] {
  const engine = ctx.engine;
  const deps = orderCheckDeps(ctx);

  const place = (o: NormalizedOrder) => engine.placeOrder(o);

  const outcomeLabel = (conditionId: string, outcome: 0 | 1): string =>
    ctx.catalog.read.marketByCondition(conditionId)?.outcomes[outcome] ?? DEFAULT_OUTCOMES[outcome];

  const iso = (ms: number) => new Date(ms).toISOString();

  const orderView = (r: OrderRecord): OrderView => ({
    id: r.orderId,
    status: r.status,
    market: r.conditionId,
    originalSize: formatUnits(r.sizeUnits),
    outcome: outcomeLabel(r.conditionId, r.outcome),
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
  });

  // Where the spec's Order and the platform client's OpenOrder disagree, compat.shapes picks (docs/decisions.md).
  const clientShapes = ctx.config.compat.shapes === 'clob-client-v2';
  const clientOrder = (r: OrderRecord): ClientOpenOrder => ({
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
    outcome: outcomeLabel(r.conditionId, r.outcome),
    created_at: Math.floor(r.createdAt / 1000),
    expiration: String(r.expiration),
    order_type: r.orderType,
  });

  // The exchange contracts a wallet's balance is "approved" for: the order domains' verifying contracts.
  const exchanges = [...new Set([ctx.config.auth.orderDomain.verifyingContract, ctx.config.auth.negRiskOrderDomain.verifyingContract].map((a) => a.toLowerCase()))];
  /** The caller's available balance of USDC or of one token, copied now and sent once durable. */
  const balanceOf = (wallet: string, q: { asset_type: 'COLLATERAL' | 'CONDITIONAL'; token_id?: string }) => {
    const b = engine.balances(wallet);
    let available = b.usdc.available;
    let reserved = b.usdc.reserved;
    if (q.asset_type === 'CONDITIONAL') {
      if (!q.token_id) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'token_id is required for CONDITIONAL' });
      const t = b.tokens.find((x) => x.tokenId === q.token_id);
      available = t?.available ?? 0;
      reserved = t?.reserved ?? 0;
    }
    const text = String(available);
    return durable({ balance: text, allowance: text, allowances: Object.fromEntries(exchanges.map((a) => [a, text])), reserved: String(reserved) });
  };

  // Orders and balances are read from the engine's memory, which may be ahead of the journal: a reply is
  // copied now and sent once what it shows is durable (never state a crash could still undo).
  const durable = async <T>(reply: T): Promise<T> => {
    const c = await engine.afterCommit();
    if (!c.ok) throw resultError(c.code);
    return reply;
  };

  // The ledger's refusals name the market (`market {conditionId} is not resolved`): fill it in.
  const walletOp = async (conditionId: string, p: Promise<{ ok: boolean; code: number }>) => {
    const r = await p;
    if (!r.ok) throw resultError(r.code, { conditionId });
    return { success: true };
  };

  const units = (text: string): number => {
    const u = parseUnits(text);
    if (u === undefined || u <= 0) throw apiError('PM_ERR_AMOUNT');
    return u;
  };

  const market = (text: string): string => {
    const cid = parseConditionId(text);
    if (!cid || !engine.market(cid)) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'unknown market' });
    return cid;
  };

  return [
    route({
      method: 'POST',
      path: '/order',
      replay: 'none',
      maxBodyBytes: ORDER_BODY_BYTES,
      group: 'trading',
      auth: 'l2',
      summary: 'Place one signed order; answered after the journal commit',
      body: PostOrderBody,
      response: OrderResult,
      handler: async (req) => {
        const t0 = performance.now();
        const [checked] = await checkOrders([req.body], signer(req.caller), deps, true);
        const t1 = performance.now();
        ctx.metrics.orderChecks((t1 - t0) / 1000);
        if (!checked.ok) throw checked.error;
        const refused = ctx.sandbox.orderRefusal(checked.order);
        if (refused !== undefined) {
          if (refused.retryAfterSeconds === undefined) throw refused.error;
          return errorReply(refused.error, { 'Retry-After': String(refused.retryAfterSeconds) });
        }
        const r = await place(checked.order);
        ctx.metrics.orderEngine((performance.now() - t1) / 1000);
        if (!r.ok) throw resultError(r.code, r.vars);
        return orderResult(r);
      },
    }),
    route({
      method: 'POST',
      path: '/orders',
      replay: 'none',
      maxBodyBytes: ORDERS_BODY_BYTES,
      tooMany: (count, max) => apiError('PM_ERR_TOO_MANY_ORDERS', { count, max }),
      group: 'trading',
      auth: 'l2',
      summary: `Place up to ${MAX_ORDERS_PER_REQUEST} signed orders; one result per order, in order`,
      body: PostOrdersBody,
      response: PostOrdersResult,
      limitCost: (body) => (Array.isArray(body) ? body.length : 1),
      handler: async (req) => {
        const t0 = performance.now();
        const checked = await checkOrders(req.body, signer(req.caller), deps);
        const t1 = performance.now();
        ctx.metrics.orderChecks((t1 - t0) / 1000);
        const refusals = checked.map((c) => (c.ok ? ctx.sandbox.orderRefusal(c.order) : undefined));
        // Issued in submission order within one turn: the sequencer sees them in that order.
        const placed = checked.map((c, i) => (c.ok && refusals[i] === undefined ? place(c.order) : undefined));
        const out: OrderResult[] = [];
        for (let i = 0; i < checked.length; i++) {
          const c = checked[i];
          if (!c.ok) {
            out.push(rejected(c.orderId, c.error));
            continue;
          }
          const refused = refusals[i];
          if (refused !== undefined) {
            out.push(rejected(c.order.orderId, refused.error));
            continue;
          }
          const r = await placed[i]!;
          out.push(r.ok ? orderResult(r) : rejected(r.orderId, resultError(r.code, r.vars)));
        }
        if (placed.some((p) => p !== undefined)) ctx.metrics.orderEngine((performance.now() - t1) / 1000);
        return out;
      },
    }),
    route({
      method: 'DELETE',
      path: '/order',
      replay: 'durable',
      group: 'trading',
      auth: 'l2',
      summary: 'Cancel one of the caller\'s orders (`orderId` or `orderID`)',
      body: DeleteOrderBody,
      response: CancelResult,
      handler: async (req) => {
        const id = 'orderId' in req.body ? req.body.orderId : req.body.orderID;
        const r = await engine.cancelOrders(req.caller.address!, [id.toLowerCase()]);
        return { canceled: r.canceled, not_canceled: r.notCanceled };
      },
    }),
    route({
      method: 'DELETE',
      path: '/orders',
      replay: 'durable',
      group: 'trading',
      auth: 'l2',
      summary: `Cancel up to ${MAX_CANCEL_IDS} of the caller's orders by id`,
      body: DeleteOrdersBody,
      response: CancelResult,
      handler: async (req) => {
        const ids = [...new Set(req.body.map((id) => id.toLowerCase()))];
        const r = await engine.cancelOrders(req.caller.address!, ids);
        return { canceled: r.canceled, not_canceled: r.notCanceled };
      },
    }),
    route({
      method: 'DELETE',
      path: '/cancel-market-orders',
      replay: 'durable',
      group: 'trading',
      auth: 'l2',
      summary: 'Cancel the caller\'s open orders of a market and/or token (at least one; both must match)',
      body: CancelMarketOrdersBody,
      response: CancelResult,
      handler: async (req) => {
        // An empty string means absent: the platform's Python client always sends both keys.
        const marketText = req.body.market ?? '';
        const assetText = req.body.asset_id ?? '';
        if (marketText === '' && assetText === '') throw apiError('PM_ERR_BAD_REQUEST', { detail: 'market or asset_id is required' });
        const conditionId = marketText === '' ? undefined : parseConditionId(marketText);
        if (marketText !== '' && !conditionId) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'invalid market' });
        const tokenId = assetText === '' ? undefined : parseTokenId(assetText);
        if (assetText !== '' && !tokenId) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'invalid asset_id' });
        const r = await engine.cancelMarketOrders(req.caller.address!, { conditionId, tokenId });
        return { canceled: r.canceled, not_canceled: r.notCanceled };
      },
    }),
    route({
      method: 'DELETE',
      path: '/cancel-all',
      replay: 'durable',
      group: 'trading',
      auth: 'l2',
      summary: 'Cancel every open order of the caller',
      response: CancelResult,
      handler: async (req) => {
        const r = await engine.cancelAll(req.caller.address!);
        return { canceled: r.canceled, not_canceled: r.notCanceled };
      },
    }),
    route({
      method: 'GET',
      path: '/data/order/:id',
      group: 'clob',
      summary: 'One order by id (public, as the spec lists it)',
      params: Type.Object({ id: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }) }),
      fieldMessages: { id: 'Invalid orderID' },
      response: clientShapes ? ClientOpenOrder : OrderViewResponse,
      handler: async (req) => {
        const rec = engine.getOrder(parseOrderId(req.params.id)!);
        if (!rec) throw apiError('PM_ERR_ORDER_NOT_FOUND');
        return clientShapes ? durable(clientOrder(rec)) : { order: await durable(orderView(rec)) };
      },
    }),
    route({
      method: 'GET',
      path: '/data/orders',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: 'The caller\'s open orders, oldest first (cursor paging)',
      query: OpenOrdersQuery,
      response: clientShapes ? ClientOpenOrdersPage : OpenOrdersPage,
      handler: async (req) => {
        const offset = decodeCursor(req.query.next_cursor);
        if (offset === undefined) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'invalid next_cursor' });
        const all = engine.openOrders(req.caller.address!, {
          id: req.query.id?.toLowerCase(),
          conditionId: req.query.market?.toLowerCase(),
          tokenId: req.query.asset_id,
        });
        const limit = 500;
        const from = offset === 'end' ? all.length : offset;
        const page = all.slice(from, from + limit);
        const data = await durable(clientShapes ? page.map(clientOrder) : page.map(orderView));
        return { data, next_cursor: nextCursor(from, page.length, all.length), limit, count: page.length };
      },
    }),
    route({
      method: 'GET',
      path: '/data/trades',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: 'The caller\'s trades (as taker or maker), oldest first, cursor paging',
      query: TradesQuery,
      response: TradesPage,
      handler: (req) => {
        const offset = decodeCursor(req.query.next_cursor);
        if (offset === undefined) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'invalid next_cursor' });
        const marketData = ctx.marketData;
        if (!marketData) throw apiError('PM_ERR_UNAVAILABLE');
        const wallet = req.caller.address!;
        const q = req.query;
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
        for (const f of walletFills(ctx.store, ctx.views, wallet)) {
          if (!matches(f)) continue;
          if (seen++ < from) continue;
          if (page.length === limit) {
            more = true;
            break;
          }
          page.push(f);
        }
        const data = page.map((f) => {
          const taker = engine.getOrder(f.takerOrderId);
          const maker = engine.getOrder(f.makerOrderId);
          const fields = { b: Math.max(0, taker?.tradeIds.indexOf(f.tradeId) ?? 0), tf: taker?.takerFeeBps ?? 0, mf: maker?.makerFeeBps ?? 0 };
          return { ...marketData.tradeOut(f, fields), trader_side: f.takerWallet === wallet ? ('TAKER' as const) : ('MAKER' as const) };
        });
        return { data, next_cursor: more ? encodeCursor(from + page.length) : END_CURSOR, limit, count: data.length };
      },
    }),
    route({
      method: 'GET',
      path: '/balance-allowance',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: 'The caller\'s available balance of USDC or of one token, in integer units (as the platform client reads it)',
      query: BalanceAllowanceQuery,
      response: BalanceAllowance,
      handler: (req) => balanceOf(req.caller.address!, req.query),
    }),
    route({
      method: 'GET',
      path: '/balance-allowance/update',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: 'The platform client\'s updateBalanceAllowance: nothing to refresh here (no chain), so it answers what GET /balance-allowance does',
      description: 'On the platform this re-reads on-chain balances and approvals into its cache; the ledger here is the balance itself, always current.',
      query: BalanceAllowanceQuery,
      response: BalanceAllowance,
      handler: (req) => balanceOf(req.caller.address!, req.query),
    }),
    route({
      method: 'GET',
      path: '/data/pre-migration-orders',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: 'Orders placed before the platform\'s exchange migration: none here (there was no migration), an empty last page',
      query: Type.Object({ next_cursor: Type.Optional(Type.String({ maxLength: 64 })) }),
      response: clientShapes ? ClientOpenOrdersPage : OpenOrdersPage,
      handler: (req) => {
        if (decodeCursor(req.query.next_cursor) === undefined) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'invalid next_cursor' });
        return { data: [], next_cursor: END_CURSOR, limit: 500, count: 0 };
      },
    }),
    route({
      method: 'POST',
      path: '/split',
      replay: 'durable',
      group: 'trading',
      auth: 'l2',
      summary: 'Split USDC into one of each outcome token of a market',
      body: SplitMergeBody,
      response: WalletOpResult,
      handler: (req) => {
        const cid = market(req.body.conditionId);
        return walletOp(cid, engine.split(req.caller.address!, cid, units(req.body.amount)));
      },
    }),
    route({
      method: 'POST',
      path: '/merge',
      replay: 'durable',
      group: 'trading',
      auth: 'l2',
      summary: 'Merge one of each outcome token of a market back into USDC',
      body: SplitMergeBody,
      response: WalletOpResult,
      handler: (req) => {
        const cid = market(req.body.conditionId);
        return walletOp(cid, engine.merge(req.caller.address!, cid, units(req.body.amount)));
      },
    }),
    route({
      method: 'POST',
      path: '/redeem',
      replay: 'durable',
      group: 'trading',
      auth: 'l2',
      summary: 'Redeem every token of a resolved market: the winning outcome pays 1 USDC each',
      body: RedeemBody,
      response: WalletOpResult,
      handler: (req) => {
        const cid = market(req.body.conditionId);
        return walletOp(cid, engine.redeem(req.caller.address!, cid));
      },
    }),
  ];
}
