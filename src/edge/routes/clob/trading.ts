/**
 * Trading: place one or many orders, read them, cancel them, and the wallet operations beyond the spec
 * (split, merge, redeem, balances). Every write route is L2-signed with a trading key; the edge has already
 * checked the HMAC and rate-limited by API key before a handler runs. The reads (open orders, trades,
 * balances, pre-migration orders) take read-only keys too (route.ts READ_KEYS). `GET /data/order/{id}` and
 * `/data/orders` answer the spec's Order, or the platform client's OpenOrder in the clob-client-v2 shapes
 * (config compat.shapes). This file holds the order writes and the group's table; the reads are
 * order-reads.ts's, the wallet operations wallet-ops.ts's, and what all three use of the context
 * trading-deps.ts's.
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
import { apiError, resultError, type ApiError } from '../../../domain/errors.ts';
import { parseConditionId, parseTokenId } from '../../../domain/ids.ts';
import { formatUnits } from '../../../domain/units.ts';
import { nowSeconds } from '../../../runtime/clock.ts';
import type { PlaceResponse } from '../../../engine/engine.ts';
import { errorReply } from '../../pipeline/error-reply.ts';
import { checkOrders, orderHints, type NormalizedOrder, type OrderCaller } from '../../auth/order-check.ts';
import { admissionRefusal, shapeRefusal, withReason } from '../../refusals/order.ts';
import { headerValue, joinReasons, withReasonText, type Refusal } from '../../refusals/reason.ts';
import { bindRoutes, reply, routeSpec, type AnyRoute, type Caller, type RequestOf, type RouteSpec } from '../../pipeline/route.ts';
import { CancelMarketOrdersBody, CancelResult, DeleteOrderBody, MAX_ORDERS_PER_REQUEST, OrderResult, PostOrderBody, PostOrdersBody, PostOrdersResult, ORDER_BODY_BYTES, ORDERS_BODY_BYTES } from '../../schemas/orders.ts';
import { DeleteOrdersBody, MAX_CANCEL_IDS } from '../../schemas/trading.ts';
import { tradingDeps, type Eng, type TradingDeps } from './trading-deps.ts';
import { readRoutes } from './order-reads.ts';
import { WALLET_OP_ROUTES } from './wallet-ops.ts';


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

/** The table, in the order the routes are documented. */
export function tradingTable(clientShapes: boolean): readonly RouteSpec<TradingDeps>[] {
  return [...ORDER_ROUTES, ...readRoutes(clientShapes), ...WALLET_OP_ROUTES];
}

export function tradingRoutes(ctx: Parameters<typeof tradingDeps>[0]): AnyRoute[] {
  const deps = tradingDeps(ctx);
  return bindRoutes(deps, tradingTable(deps.clientShapes));
}

