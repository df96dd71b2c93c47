/**
 * The sandbox's test controls (edge/sandbox/test-controls.ts) behind the admin token: the test clock (GET and
 * PUT /admin/clock, POST /admin/clock/advance) and the counterparties (admin-made orders and cancels, token
 * credits, a token's book in one call, a trade against a resting order). Mounted only where the controls run
 * (config `sandbox.testControls`); elsewhere these paths are unknown routes. Prices and sizes arrive as
 * decimals (strings or numbers) and are integers (pips, units) from here on.
 */
import { Type } from '@sinclair/typebox';
import { apiError } from '../../domain/errors.ts';
import { formatPips, formatUnits, parsePips, parseUnits } from '../../domain/units.ts';
import type { PlaceResponse } from '../../engine/engine.ts';
import type { TestClockState } from '../../runtime/clock.ts';
import type { AppContext } from '../context.ts';
import { bindRoutes, routeSpec, type AnyRoute, type RequestOf, type RouteSpec } from '../pipeline/route.ts';
import { HOUSE_MAKER, HOUSE_TAKER } from '../sandbox/counterparties.ts';
import type { TestControls } from '../sandbox/test-controls.ts';
import { AddressParams, WalletBalances } from '../schemas/admin.ts';
import {
  AdminCancelBody,
  AdminCancelReply,
  AdminOrderBody,
  AdminOrderReply,
  AdvanceBody,
  AdvanceReply,
  ClockModeBody,
  ClockState,
  CreditTokensBody,
  FillBody,
  FillReply,
  OrderParams,
  Scenario,
  ScenarioReply,
  SetBookBody,
  SetBookReply,
  TokenParams,
} from '../schemas/test-controls.ts';
import { balancesOf } from './admin.ts';

export interface TestControlDeps {
  readonly controls: TestControls;
  readonly engine: Pick<AppContext['engine'], 'balances' | 'getOrder'>;
}

/** A price of the body in pips, or a 400 naming the field. */
function pipsOf(v: string | number, field: string): number {
  const p = parsePips(typeof v === 'number' ? String(v) : v);
  if (p === undefined || p <= 0 || p >= 10_000) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: [`${field}: a price strictly between 0 and 1, at most 4 decimals`] });
  return p;
}

/** A size of the body in units, or a 400 naming the field. */
function unitsOf(v: string | number, field: string): number {
  const u = parseUnits(typeof v === 'number' ? String(v) : v);
  if (u === undefined || u <= 0) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: [`${field}: a positive number of tokens`] });
  return u;
}

function orderReply(wallet: string, r: PlaceResponse) {
  return {
    orderID: r.orderId,
    wallet,
    owner: 'admin' as const,
    status: r.status,
    makingAmount: formatUnits(r.makingAmount),
    takingAmount: formatUnits(r.takingAmount),
    tradeIDs: r.tradeIds,
  };
}

const MAX_TIME_MS = 8_640_000_000_000_000;

export function clockState(s: TestClockState): ClockState {
  return { now: new Date(s.now).toISOString(), nowMs: s.now, time: Math.floor(s.now / 1000), frozen: s.frozen, offsetMs: s.offsetMs };
}

export function getClock(d: TestControlDeps) {
  return clockState(d.controls.clock.state());
}

export async function setClockMode(d: TestControlDeps, { body }: RequestOf<undefined, typeof ClockModeBody>) {
  return clockState(await d.controls.clock.setFrozen(body.frozen));
}

/** The instant an advance body names, or a 400 listing what is wrong with it. */
export function advanceTarget(body: AdvanceBody, nowMs: number): number {
  const given = (body.seconds !== undefined ? 1 : 0) + (body.to !== undefined ? 1 : 0);
  if (given !== 1) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: ['give exactly one of `seconds` and `to`'] });
  if (body.seconds !== undefined) return nowMs + Math.round(body.seconds * 1000);
  const to = body.to!;
  const ms = typeof to === 'number' ? to * 1000 : Date.parse(to);
  if (!Number.isSafeInteger(ms) || ms > MAX_TIME_MS) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: ['`to` is not unix seconds or an ISO 8601 time'] });
  return ms;
}

export async function advanceClock(d: TestControlDeps, { body }: RequestOf<undefined, typeof AdvanceBody>) {
  const c = d.controls.clock;
  const r = await c.advanceTo(advanceTarget(body, c.state().now));
  return { clock: clockState(c.state()), advanced: { from: new Date(r.fromMs).toISOString(), to: new Date(r.toMs).toISOString(), timers: r.timers, tookMs: r.tookMs } };
}

export async function placeAdminOrder(d: TestControlDeps, { body }: RequestOf<undefined, typeof AdminOrderBody>) {
  const wallet = body.wallet.toLowerCase();
  const r = await d.controls.counterparties.place({
    wallet,
    tokenId: body.tokenId,
    side: body.side,
    pricePips: pipsOf(body.price, 'price'),
    sizeUnits: unitsOf(body.size, 'size'),
    orderType: body.orderType ?? 'GTC',
    expiration: body.expiration,
    postOnly: body.postOnly,
  });
  return orderReply(wallet, r);
}

export async function cancelAdminOrders(d: TestControlDeps, { body }: RequestOf<undefined, typeof AdminCancelBody>) {
  const byIds = body.orderIds !== undefined;
  if (byIds === (body.wallet !== undefined) || (byIds && (body.market !== undefined || body.asset_id !== undefined))) {
    throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: ['give `orderIds`, or `wallet` (with `market` and/or `asset_id` to narrow it)'] });
  }
  const c = d.controls.counterparties;
  const r = byIds ? await c.cancelIds(body.orderIds!) : await c.cancelWallet(body.wallet!.toLowerCase(), { conditionId: body.market?.toLowerCase(), tokenId: body.asset_id });
  return { canceled: r.canceled, not_canceled: r.notCanceled };
}

export async function creditTokens(d: TestControlDeps, { params, body }: RequestOf<undefined, typeof CreditTokensBody, typeof AddressParams>) {
  const address = params.address.toLowerCase();
  const units = parseUnits(body.amount);
  if (units === undefined || units <= 0) throw apiError('PM_ERR_AMOUNT');
  await d.controls.counterparties.credit(address, body.tokenId, units, body.price === undefined ? 5_000 : pipsOf(body.price, 'price'));
  return balancesOf(d.engine, address);
}

export async function setBook(d: TestControlDeps, { params, body }: RequestOf<undefined, typeof SetBookBody, typeof TokenParams>) {
  const level = (side: string) => (l: SetBookBody['bids'][number], i: number) => {
    const maker = (l.maker ?? body.maker ?? HOUSE_MAKER).toLowerCase();
    return { pricePips: pipsOf(l.price, `${side}[${i}].price`), sizeUnits: unitsOf(l.size, `${side}[${i}].size`), maker };
  };
  const r = await d.controls.counterparties.setBook(params.token_id, body.bids.map(level('bids')), body.asks.map(level('asks')));
  return {
    tokenId: params.token_id,
    market: r.conditionId,
    canceled: r.canceled,
    orders: r.orders.map((o) => ({
      side: o.side,
      price: formatPips(o.pricePips),
      size: formatUnits(o.sizeUnits),
      maker: o.maker,
      orderID: o.answer.orderId,
      status: o.answer.ok ? o.answer.status : '',
      ...(o.answer.ok ? {} : { error: String(o.answer.vars?.error ?? 'refused') }),
    })),
  };
}

export async function fillOrder(d: TestControlDeps, { params, body }: RequestOf<undefined, typeof FillBody, typeof OrderParams>) {
  const taker = (body.taker ?? HOUSE_TAKER).toLowerCase();
  const r = await d.controls.counterparties.fill(params.orderId, taker, body.size === undefined ? undefined : unitsOf(body.size, 'size'));
  const o = d.engine.getOrder(r.orderId)!;
  return {
    trade: orderReply(taker, r.answer),
    order: { id: o.orderId, status: o.status, sizeMatched: formatUnits(o.sizeMatched), originalSize: formatUnits(o.sizeUnits) },
  };
}

export function startScenario(d: TestControlDeps, { body }: RequestOf<undefined, typeof Scenario>) {
  return d.controls.scenarios.start(body);
}

export function listScenarios(d: TestControlDeps) {
  return d.controls.scenarios.list();
}

export function cancelScenarios(d: TestControlDeps) {
  return d.controls.scenarios.cancel();
}

export const TEST_CONTROL_ROUTES: readonly RouteSpec<TestControlDeps>[] = [
  routeSpec({
    method: 'GET',
    path: '/admin/clock',
    group: 'admin',
    auth: 'admin',
    summary: 'The test clock: the exchange\'s time, and whether it is frozen or running',
    response: ClockState,
    handler: getClock,
  }),
  routeSpec({
    method: 'PUT',
    path: '/admin/clock',
    group: 'admin',
    auth: 'admin',
    summary: 'Freeze the exchange\'s time where it stands, or let it run on from there',
    description: 'Frozen, nothing happens by itself: GTD orders do not expire, trades do not settle, heartbeats do not lapse, until the clock is advanced.',
    body: ClockModeBody,
    response: ClockState,
    handler: setClockMode,
  }),
  routeSpec({
    method: 'POST',
    path: '/admin/clock/advance',
    group: 'admin',
    auth: 'admin',
    summary: 'Move the exchange\'s time forward: everything due on the way happens, in order, each at its time; answered once it is committed',
    description:
      'GTD expiries, trade settlement moves, heartbeat lapses, maintenance windows, reward and midpoint samples and scenario events due before the target happen in time order. ' +
      'A running clock runs on from the target; a frozen one stays there. Time never goes back: a target before the exchange\'s time is refused.',
    body: AdvanceBody,
    response: AdvanceReply,
    handler: advanceClock,
  }),
  routeSpec({
    method: 'POST',
    path: '/admin/orders',
    group: 'admin',
    auth: 'admin',
    summary: 'Place an order as any wallet, without its key: admin-made (owner "admin" wherever it shows), matched and settled like a signed one',
    description:
      'Built as the official client builds an order (its id is the EIP-712 digest under the service\'s domain) and placed through the engine: market open, tick, minimum size, balance and ' +
      'self-trade rules apply; the edge\'s checks of clients (signature, API key, closed-only, maintenance, post-only period) do not. A refusal answers 400 with the platform\'s text.',
    body: AdminOrderBody,
    response: AdminOrderReply,
    handler: placeAdminOrder,
  }),
  routeSpec({
    method: 'DELETE',
    path: '/admin/orders',
    group: 'admin',
    auth: 'admin',
    summary: 'Cancel orders as their wallets: by id (anyone\'s), or every open order of a wallet, in a market and/or token when given',
    body: AdminCancelBody,
    response: AdminCancelReply,
    handler: cancelAdminOrders,
  }),
  routeSpec({
    method: 'POST',
    path: '/admin/wallets/:address/tokens',
    group: 'admin',
    auth: 'admin',
    summary: 'Credit outcome tokens to a wallet (journaled): complete sets minted against a deposit, this outcome to the wallet, the other to the house wallet',
    description: '`price` (default 0.5) is their cost in the wallet\'s position. Answers the wallet\'s balances.',
    params: AddressParams,
    body: CreditTokensBody,
    response: WalletBalances,
    handler: creditTokens,
  }),
  routeSpec({
    method: 'PUT',
    path: '/admin/books/:token_id',
    group: 'admin',
    auth: 'admin',
    summary: 'Set a token\'s book to the given levels in one call, from named maker wallets (funded as needed; default the house maker); other wallets\' orders stay',
    description:
      'The makers\' open orders on the token\'s market are canceled first; each maker gets the USDC its bids and the tokens its asks need; each level is placed as an admin-made post-only GTC order ' +
      '(a level that would cross another wallet\'s order is refused and listed with its error). Bids must lie below asks, on the market\'s tick.',
    params: TokenParams,
    body: SetBookBody,
    response: SetBookReply,
    handler: setBook,
  }),
  routeSpec({
    method: 'POST',
    path: '/admin/orders/:orderId/fill',
    group: 'admin',
    auth: 'admin',
    summary: 'Trade against a resting order: a taker (funded as needed; default the house taker) takes the book up to its price, FAK, for `size` (default all it has left)',
    description: 'The order trades as against a real taker: first when nothing better priced or older stands before it. Answers the taker\'s order and the resting order after.',
    params: OrderParams,
    body: FillBody,
    response: FillReply,
    handler: fillOrder,
  }),
  routeSpec({
    method: 'POST',
    path: '/admin/scenarios',
    group: 'admin',
    auth: 'admin',
    summary: 'Start a scenario: its market created or found, its named wallets funded, its books set, then its script of timed events run on the test clock',
    description:
      'Events (`sweep`, `place`, `cancel`, `book`, `deposit`, `credit`, `status`, `resolve`) run at their time after the start: as the clock runs, or in order within an advance. ' +
      'An event that fails is recorded with its error; the others still run. A scenario that names an unknown wallet, or a bad price or amount, changes nothing.',
    body: Scenario,
    response: ScenarioReply,
    handler: startScenario,
  }),
  routeSpec({
    method: 'GET',
    path: '/admin/scenarios',
    group: 'admin',
    auth: 'admin',
    summary: 'The scenarios started (the last 16), each event pending, done, failed (with its error) or canceled',
    response: Type.Array(ScenarioReply),
    handler: listScenarios,
  }),
  routeSpec({
    method: 'DELETE',
    path: '/admin/scenarios',
    group: 'admin',
    auth: 'admin',
    summary: 'Cancel every pending scenario event',
    response: Type.Array(ScenarioReply),
    handler: cancelScenarios,
  }),
];

export function testControlRoutes(ctx: Pick<AppContext, 'controls' | 'engine'>): AnyRoute[] {
  if (ctx.controls === undefined) return [];
  return bindRoutes<TestControlDeps>({ controls: ctx.controls, engine: ctx.engine }, TEST_CONTROL_ROUTES);
}
