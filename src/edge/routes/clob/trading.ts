/**
 * Trading: place one or many orders, read them, cancel them, and the wallet operations beyond the spec
 * (split, merge, redeem, balances). Every write route is L2-signed with a trading key; the edge has already
 * checked the HMAC and rate-limited by API key before a handler runs. The reads (open orders, trades,
 * balances, pre-migration orders) take read-only keys too (route.ts READ_KEYS). `GET /data/order/{id}` and
 * `/data/orders` answer the spec's Order, or the platform client's OpenOrder in the clob-client-v2 shapes
 * (config compat.shapes).
 *
 * One order's journey, in order, with the thread each stage runs on (what crosses to another thread wakes
 * it: on this project's VMs each wake-up costs more CPU than most stages; docs/decisions/engine.md, "The order path's
 * cost"):
 *
 *   stage                                                      module                       thread
 *   bytes off the socket, head and body copied                 edge/http/http.ts                  main (uWS)
 *   sign: L2 headers before the body, the HMAC after it        edge/pipeline/pipeline.ts, auth.ts     main
 *   admit (rate limits), parse (JSON, nesting bounded)         pipeline.ts, rate-limit.ts    main
 *   dispatch: the body against OrderSubmission (TypeBox)       pipeline.ts, validate.ts      main
 *   placeOrder (below): checkOrders' rules, the order id       edge/auth/order-check.ts           main
 *   the EIP-712 signature recovered                            edge/auth/sig-pool.ts              main when the pool
 *                                                              (sig-worker.ts)               is idle, else a pool
 *                                                                                            thread (batched)
 *   the sandbox's order rules (closed-only, post-only period)  edge/sandbox/sandbox.ts       main
 *   Engine.placeOrder: market, tick, size; R1 reserves         engine/orders/admission.ts           main
 *   command ring -> the market's book matches -> result ring   engine/shard/shard-link.ts,         shard worker
 *                                                              worker.ts, book/
 *   drain: R2 settles fills, releases what cannot be spent     engine/ledger/settlement.ts          main
 *   journal records and tables for this turn                   journal/writer.ts             main
 *   group commit: one LMDB transaction per turn, durable       engine/group-commit.ts        libuv (LMDB write
 *                                                                                            and fsync)
 *   the answer, once its commit is durable                     this module, http.ts          main
 *   after the commit: committed books, streams, projections    projections/                  main; view writes
 *                                                                                            ride the next commit
 *
 * Rejections carry the platform's wording (domain/errors.ts). `POST /order` answers a rejection with 400
 * `{error}`; `POST /orders` answers 200 with one `{success:false, errorMsg}` element per rejected order, so one
 * bad order never fails the others.
 *
 * Whose orders and money. The API key belongs to the signer (the L2 address); an order of signatureType 1 or 2
 * is made by the signer's proxy wallet or Safe (its maker, order-check.ts, funders.ts), and reserves and
 * settles on that wallet. So the key's open orders and cancels are the orders its address signed (the
 * engine indexes them by signer), its trades the fills of any of its wallets (or of `maker_address`), and the
 * balances those of the wallet `signature_type` names (0 or absent: its own), as the platform client sends it;
 * split, merge and redeem name theirs in the signed body (`signatureType`).
 *
 * The sandbox (edge/sandbox/sandbox.ts) adds its order rules between the checks and the engine: a BUY of a
 * closed-only wallet is refused (400), and so is an order without postOnly in the post-only period after a
 * maintenance window (503 with `code`, `retry_after_seconds` and Retry-After, as the platform answers);
 * maintenance windows and injected faults wrap these routes from outside (its gate).
 *
 * Refusals explain themselves (config auth.explainRefusals, refusals/order.ts): a refused order's error
 * carries a reason for the X-Refusal-Reason header, the checks' own (order-check.ts) or, for what the
 * sandbox and the engine refuse, one derived from the code, its vars, the order and the market. POST /orders
 * sends the reasons of its refused elements joined in one header (`order <index>: ...`, the index in the
 * answer array). The body never changes, and an accepted order pays for none of it.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { apiError, resultError, type ApiError } from '../../../domain/errors.ts';
import { END_CURSOR, decodeCursor, encodeCursor, nextCursor } from '../../../domain/cursor.ts';
import { parseConditionId, parseOrderId, parseTokenId } from '../../../domain/ids.ts';
import { DEFAULT_OUTCOMES } from '../../../domain/market-rules.ts';
import { formatPips, formatUnits, parseUnits } from '../../../domain/units.ts';
import { nowSeconds } from '../../../runtime/clock.ts';
import type { FillEvent, OrderRecord } from '../../../domain/events.ts';
import type { Engine, PlaceResponse } from '../../../engine/engine.ts';
import type { CatalogReader } from '../../../queries/catalog.ts';
import type { MarketDataReader } from '../../../queries/market-data.ts';
import type { AppContext } from '../../context.ts';
import { errorReply } from '../../pipeline/error-reply.ts';
import { walletFor, type Funders } from '../../auth/funders.ts';
import type { Metrics } from '../../pipeline/metrics.ts';
import { checkOrders, orderCheckDeps, orderHints, type NormalizedOrder, type OrderCaller, type OrderCheckDeps } from '../../auth/order-check.ts';
import { admissionRefusal, shapeRefusal, withReason } from '../../refusals/order.ts';
import { headerValue, joinReasons, withReasonText, type Refusal } from '../../refusals/reason.ts';
import type { Sandbox } from '../../sandbox/sandbox.ts';
import { walletFills } from '../../../queries/fills.ts';
import { READ_KEYS, bindRoutes, reply, routeSpec, type AnyRoute, type Caller, type RequestOf, type RouteSpec } from '../../pipeline/route.ts';
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
} from '../../schemas/orders.ts';
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
} from '../../schemas/trading.ts';

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

/** A refused order's result; with `auth.reasonInBody`, its reason follows the platform's text in errorMsg. */
function rejected(orderId: string, e: ApiError, inBody = false): OrderResult {
  const reason = inBody && e.reason !== undefined ? headerValue((e.reason as Refusal).text) : undefined;
  return { success: false, errorMsg: reason === undefined ? e.message : withReasonText(e.message, reason), orderID: orderId, status: '', makingAmount: '', takingAmount: '' };
}

/** The caller of a signed route: the edge guarantees both fields once the HMAC passed. */
function signer(caller: Caller): OrderCaller {
  return { apiKey: caller.apiKey!, address: caller.address!, ip: caller.ip };
}

/**
 * What the trading handlers use: the engine (orders, balances, wallet operations, commits), the order checks
 * (signature pool, domains, markets, clock), the check and engine timings, the sandbox's order rules, outcome
 * labels from the catalog, trade rows from market data (absent in contexts without it: /data/trades answers
 * 503), the fill journal (store and views), the configured shapes and the exchange contracts balances name.
 */
export interface TradingDeps {
  readonly engine: Pick<
    Engine,
    'placeOrder' | 'cancelOrders' | 'cancelMarketOrders' | 'cancelAll' | 'getOrder' | 'openOrders' | 'balances' | 'unsettled' | 'afterCommit' | 'split' | 'merge' | 'redeem' | 'market'
  >;
  readonly checks: OrderCheckDeps;
  readonly metrics: Pick<Metrics, 'orderChecks' | 'orderEngine'>;
  readonly sandbox: Pick<Sandbox, 'orderRefusal' | 'placing'>;
  /** `auth.reasonInBody` (with explainRefusals): a refused element of POST /orders carries its reason in errorMsg. */
  readonly reasonInBody: boolean;
  readonly catalog: Pick<CatalogReader, 'marketByCondition'>;
  readonly marketData: Pick<MarketDataReader, 'tradeOut'> | undefined;
  readonly store: AppContext['store'];
  readonly views: AppContext['views'];
  /**
   * compat.shapes is clob-client-v2: orders answer the platform client's OpenOrder (docs/decisions/sandbox.md,
   * "The platform's V2 client").
   */
  readonly clientShapes: boolean;
  /** The exchange contracts a wallet's balance is "approved" for: the order domains' verifying contracts, lowercase. */
  readonly exchanges: readonly string[];
  /** The key's wallets: its own, its proxy wallet and its Safe (whose money signature_type names). */
  readonly funders: Pick<Funders, 'makerOf' | 'walletsOf'>;
}
type Eng = Pick<TradingDeps, 'engine'>;

export function tradingDeps(ctx: Pick<AppContext, 'engine' | 'auth' | 'clock' | 'metrics' | 'sandbox' | 'catalog' | 'marketData' | 'store' | 'views' | 'config'>): TradingDeps {
  const a = ctx.config.auth;
  return {
    engine: ctx.engine,
    checks: orderCheckDeps({ auth: ctx.auth, clock: ctx.clock, engine: ctx.engine, explain: ctx.config.auth.explainRefusals }),
    metrics: ctx.metrics,
    sandbox: ctx.sandbox,
    catalog: ctx.catalog.read,
    marketData: ctx.marketData,
    store: ctx.store,
    views: ctx.views,
    clientShapes: ctx.config.compat.shapes === 'clob-client-v2',
    reasonInBody: a.explainRefusals && a.reasonInBody,
    exchanges: [...new Set([a.orderDomain.verifyingContract, a.negRiskOrderDomain.verifyingContract].map((x) => x.toLowerCase()))],
    funders: ctx.auth.funders,
  };
}

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

// The ledger's refusals name the market (`market {conditionId} is not resolved`): fill it in.
async function walletOp(conditionId: string, p: Promise<{ ok: boolean; code: number }>) {
  const r = await p;
  if (!r.ok) throw resultError(r.code, { conditionId });
  return { success: true };
}

function positiveUnits(text: string): number {
  const u = parseUnits(text);
  if (u === undefined || u <= 0) throw apiError('PM_ERR_AMOUNT');
  return u;
}

function knownMarket(d: Eng, text: string): string {
  const cid = parseConditionId(text);
  if (!cid || !d.engine.market(cid)) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'unknown market' });
  return cid;
}

function pageOffset(cursor: string | undefined): number | 'end' {
  const offset = decodeCursor(cursor);
  if (offset === undefined) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'invalid next_cursor' });
  return offset;
}

const cancelResult = (r: { canceled: string[]; notCanceled: Record<string, string> }) => ({ canceled: r.canceled, not_canceled: r.notCanceled });

/**
 * Refusal path only: the reason of what the sandbox or the engine refused of a checked order, set on the
 * (fresh) error when refusals explain themselves.
 */
function explained(d: Pick<TradingDeps, 'engine' | 'checks'>, error: ApiError, order: NormalizedOrder): ApiError {
  if (d.checks.explain !== true) return error;
  const ctx = { market: (cid: string) => d.engine.market(cid), balances: (w: string) => d.engine.balances(w), unsettled: (w: string) => d.engine.unsettled(w), now: nowSeconds(d.checks.clock) };
  return withReason(error, admissionRefusal(error, order, ctx));
}

export async function placeOrder(d: TradingDeps, req: RequestOf<undefined, typeof PostOrderBody>) {
  const t0 = performance.now();
  const [checked] = await checkOrders([req.body], signer(req.caller), d.checks, true, req.hints);
  const t1 = performance.now();
  d.metrics.orderChecks((t1 - t0) / 1000);
  if (!checked.ok) throw checked.error;
  const refused = d.sandbox.orderRefusal(checked.order);
  if (refused !== undefined) {
    explained(d, refused.error, checked.order);
    if (refused.retryAfterSeconds === undefined) throw refused.error;
    return errorReply(refused.error, { 'Retry-After': String(refused.retryAfterSeconds) });
  }
  const r = await d.sandbox.placing(d.engine.placeOrder(checked.order));
  d.metrics.orderEngine((performance.now() - t1) / 1000);
  if (!r.ok) throw explained(d, resultError(r.code, r.vars), checked.order);
  return orderResult(r);
}

export async function placeOrders(d: TradingDeps, req: RequestOf<undefined, typeof PostOrdersBody>) {
  const t0 = performance.now();
  const checked = await checkOrders(req.body, signer(req.caller), d.checks, false, req.hints);
  const t1 = performance.now();
  d.metrics.orderChecks((t1 - t0) / 1000);
  const refusals = checked.map((c) => (c.ok ? d.sandbox.orderRefusal(c.order) : undefined));
  // Issued in submission order within one turn: the sequencer sees them in that order.
  const placed = checked.map((c, i) => (c.ok && refusals[i] === undefined ? d.sandbox.placing(d.engine.placeOrder(c.order)) : undefined));
  const out: OrderResult[] = [];
  let reasons: Array<{ index: number; refusal: Refusal }> | undefined;
  for (let i = 0; i < checked.length; i++) {
    const c = checked[i];
    let error: ApiError;
    let orderId: string;
    if (!c.ok) {
      error = c.error;
      orderId = c.orderId;
    } else if (refusals[i] !== undefined) {
      error = explained(d, refusals[i]!.error, c.order);
      orderId = c.order.orderId;
    } else {
      const r = await placed[i]!;
      if (r.ok) {
        out.push(orderResult(r));
        continue;
      }
      error = explained(d, resultError(r.code, r.vars), c.order);
      orderId = r.orderId;
    }
    out.push(rejected(orderId, error, d.reasonInBody));
    if (error.reason !== undefined) (reasons ??= []).push({ index: i, refusal: error.reason as Refusal });
  }
  if (placed.some((p) => p !== undefined)) d.metrics.orderEngine((performance.now() - t1) / 1000);
  return reasons === undefined ? out : reply({ status: 200, body: out, refusal: joinReasons(reasons) });
}

export async function cancelOrder(d: Eng, req: RequestOf<undefined, typeof DeleteOrderBody>) {
  const id = 'orderId' in req.body ? req.body.orderId : req.body.orderID;
  return cancelResult(await d.engine.cancelOrders(req.caller.address!, [id.toLowerCase()]));
}

export async function cancelOrders(d: Eng, req: RequestOf<undefined, typeof DeleteOrdersBody>) {
  const ids = [...new Set(req.body.map((id) => id.toLowerCase()))];
  return cancelResult(await d.engine.cancelOrders(req.caller.address!, ids));
}

export async function cancelMarketOrders(d: Eng, req: RequestOf<undefined, typeof CancelMarketOrdersBody>) {
  // An empty string means absent: the platform's Python client always sends both keys.
  const marketText = req.body.market ?? '';
  const assetText = req.body.asset_id ?? '';
  if (marketText === '' && assetText === '') throw apiError('PM_ERR_BAD_REQUEST', { detail: 'market or asset_id is required' });
  const conditionId = marketText === '' ? undefined : parseConditionId(marketText);
  if (marketText !== '' && !conditionId) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'invalid market' });
  const tokenId = assetText === '' ? undefined : parseTokenId(assetText);
  if (assetText !== '' && !tokenId) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'invalid asset_id' });
  return cancelResult(await d.engine.cancelMarketOrders(req.caller.address!, { conditionId, tokenId }));
}

export async function cancelAll(d: Eng, req: RequestOf) {
  return cancelResult(await d.engine.cancelAll(req.caller.address!));
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

type WalletOpDeps = Pick<TradingDeps, 'engine' | 'funders'>;
const opWallet = (d: WalletOpDeps, req: { caller: Caller; body: { signatureType?: number } }) => walletFor(d.funders, req.caller.address!, req.body.signatureType, 'signatureType');

export function split(d: WalletOpDeps, req: RequestOf<undefined, typeof SplitMergeBody>) {
  const cid = knownMarket(d, req.body.conditionId);
  return walletOp(cid, d.engine.split(opWallet(d, req), cid, positiveUnits(req.body.amount)));
}

export function merge(d: WalletOpDeps, req: RequestOf<undefined, typeof SplitMergeBody>) {
  const cid = knownMarket(d, req.body.conditionId);
  return walletOp(cid, d.engine.merge(opWallet(d, req), cid, positiveUnits(req.body.amount)));
}

export function redeem(d: WalletOpDeps, req: RequestOf<undefined, typeof RedeemBody>) {
  const cid = knownMarket(d, req.body.conditionId);
  return walletOp(cid, d.engine.redeem(opWallet(d, req), cid));
}

const OrderIdParams = Type.Object({ id: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }) });
const PreMigrationQuery = Type.Object({ next_cursor: Type.Optional(Type.String({ maxLength: 64 })) });

/** A split, merge or redeem: durable replay protection (money moves), the wallet operation's answer. */
function walletOpRoute<B extends TSchema>(r: { path: string; summary: string; body: B; handler: (d: WalletOpDeps, req: RequestOf<undefined, B>) => unknown }): RouteSpec<TradingDeps> {
  return routeSpec({ method: 'POST', path: r.path, replay: 'durable', group: 'trading', auth: 'l2', summary: r.summary, body: r.body, response: WalletOpResult, handler: r.handler });
}

/** Placing and canceling orders. */
export const ORDER_ROUTES: readonly RouteSpec<TradingDeps>[] = [
  routeSpec({
    method: 'POST',
    path: '/order',
    replay: 'none',
    maxBodyBytes: ORDER_BODY_BYTES,
    group: 'trading',
    auth: 'l2',
    summary: 'Place one signed order; answered after the journal commit',
    body: PostOrderBody,
    // The platform's older clients send the V1 struct: the 400 names the field, the reason names the struct.
    explainBody: shapeRefusal,
    response: OrderResult,
    handler: placeOrder,
    gatewayHints: (d, req) => orderHints([req.body], signer(req.caller), d.checks, true),
  }),
  routeSpec({
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
    handler: placeOrders,
    gatewayHints: (d, req) => orderHints(req.body, signer(req.caller), d.checks, false),
  }),
  routeSpec({
    method: 'DELETE',
    path: '/order',
    replay: 'durable',
    group: 'trading',
    auth: 'l2',
    summary: 'Cancel one of the caller\'s orders (`orderId` or `orderID`)',
    body: DeleteOrderBody,
    response: CancelResult,
    handler: cancelOrder,
  }),
  routeSpec({
    method: 'DELETE',
    path: '/orders',
    replay: 'durable',
    group: 'trading',
    auth: 'l2',
    summary: `Cancel up to ${MAX_CANCEL_IDS} of the caller's orders by id`,
    body: DeleteOrdersBody,
    response: CancelResult,
    handler: cancelOrders,
  }),
  routeSpec({
    method: 'DELETE',
    path: '/cancel-market-orders',
    replay: 'durable',
    group: 'trading',
    auth: 'l2',
    summary: 'Cancel the caller\'s open orders of a market and/or token (at least one; both must match)',
    body: CancelMarketOrdersBody,
    response: CancelResult,
    handler: cancelMarketOrders,
  }),
  routeSpec({
    method: 'DELETE',
    path: '/cancel-all',
    replay: 'durable',
    group: 'trading',
    auth: 'l2',
    summary: 'Cancel every open order of the caller',
    response: CancelResult,
    handler: cancelAll,
  }),
];

/** The caller's orders, trades and balances; order responses follow compat.shapes. */
export function readRoutes(clientShapes: boolean): readonly RouteSpec<TradingDeps>[] {
  return [
    routeSpec({
      method: 'GET',
      path: '/data/order/:id',
      group: 'clob',
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

/** Split, merge, redeem. */
export const WALLET_OP_ROUTES: readonly RouteSpec<TradingDeps>[] = [
  walletOpRoute({
    path: '/split',
    summary: 'Split USDC into one of each outcome token of a market',
    body: SplitMergeBody,
    handler: split,
  }),
  walletOpRoute({
    path: '/merge',
    summary: 'Merge one of each outcome token of a market back into USDC',
    body: SplitMergeBody,
    handler: merge,
  }),
  walletOpRoute({
    path: '/redeem',
    summary: 'Redeem every token of a resolved market: the winning outcome pays 1 USDC each',
    body: RedeemBody,
    handler: redeem,
  }),
];

/** The table, in the order the routes are documented. */
export function tradingTable(clientShapes: boolean): readonly RouteSpec<TradingDeps>[] {
  return [...ORDER_ROUTES, ...readRoutes(clientShapes), ...WALLET_OP_ROUTES];
}

export function tradingRoutes(ctx: Parameters<typeof tradingDeps>[0]): AnyRoute[] {
  const deps = tradingDeps(ctx);
  return bindRoutes(deps, tradingTable(deps.clientShapes));
}
