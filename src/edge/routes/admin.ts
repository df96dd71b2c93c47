/**
 * Admin routes (DESIGN section 9), behind `Authorization: Bearer <ADMIN_TOKEN>`: the edge answers 404
 * for all of them when no token is configured and 401 for a wrong one, before anything here runs.
 *
 * Catalog writes go to projections/catalog.ts (one transaction per request, all or nothing; a bad
 * request answers 400 with every problem in `errors`). Deposits, withdrawals and resolutions go
 * through the engine and its journal like every other balance change; without a running engine they
 * answer 503. A resolution the engine accepted is then recorded in the catalog (closed, not accepting
 * orders, winner), and every market change is passed to the engine's market registry. Like an order, each
 * of these writes is answered only after the journal commit of what it caused in the engine (the catalog
 * write resolves once the registration is committed, app.ts): a read sent right after the answer finds
 * the market's book, its tick and its status in the committed state, never a 503 for a token just imported.
 */
import { Errors, apiError, resultError } from '../../domain/errors.ts';
import { formatAsset } from '../../domain/ids.ts';
import { formatUnits, parseUnits } from '../../domain/units.ts';
import { getProfile } from '../../queries/catalog.ts';
import type { AppContext, CatalogServices, EngineAdmin } from '../context.ts';
import { bindRoutes, routeSpec, type AnyRoute, type RequestOf, type RouteSpec } from '../pipeline/route.ts';
import {
  AddressParams,
  AmountBody,
  ConditionParams,
  MarketReply,
  MarketStatusBody,
  Profile,
  ProfileBody,
  ResolveBody,
  UpsertEventsBody,
  UpsertEventsReply,
  WalletBalances,
} from '../schemas/admin.ts';

/** What the admin routes use: the catalog (reads and writes), the engine's admin part, the store (profiles). */
export interface AdminDeps {
  readonly catalog: CatalogServices;
  readonly engine: EngineAdmin;
  readonly store: AppContext['store'];
}

/**
 * Tokens are listed by asset (condition id, then outcome): the ledger's own order follows the wallet's
 * history and the order a restart restored it in, and the same state must give the same bytes.
 */
export function balancesOf(engine: Pick<EngineAdmin, 'balances'>, address: string): WalletBalances {
  const b = engine.balances(address);
  const tokens = b.tokens.map((t) => ({
    tokenId: t.tokenId,
    asset: formatAsset(t.conditionId, t.outcome),
    available: formatUnits(t.available),
    reserved: formatUnits(t.reserved),
  }));
  tokens.sort((x, y) => (x.asset < y.asset ? -1 : x.asset > y.asset ? 1 : 0));
  return { address, usdc: { available: formatUnits(b.usdc.available), reserved: formatUnits(b.usdc.reserved) }, tokens };
}

export async function upsertEvents({ catalog: { read, write } }: Pick<AdminDeps, 'catalog'>, { body }: RequestOf<undefined, typeof UpsertEventsBody>) {
  const outcome = await write.upsertEvents(body);
  if (!outcome.ok) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: outcome.errors });
  return outcome.eventIds.map((id) => read.eventSlugForm(read.event(id)!));
}

export async function setMarketStatus(
  { catalog: { read, write } }: Pick<AdminDeps, 'catalog'>,
  { params, body }: RequestOf<undefined, typeof MarketStatusBody, typeof ConditionParams>,
) {
  const outcome = await write.setMarketStatus(params.conditionId.toLowerCase(), body);
  if (!outcome.ok) throw outcome.error;
  return read.marketCatalog(outcome.market);
}

export function resolveMarket(d: Pick<AdminDeps, 'catalog' | 'engine'>, { params, body }: RequestOf<undefined, typeof ResolveBody, typeof ConditionParams>) {
  return resolveInCatalog(d, params.conditionId.toLowerCase(), body.winningOutcomeIndex);
}

/** A resolution: the engine's (it cancels the market's orders and pays), then the catalog's; answers the market. */
export async function resolveInCatalog({ catalog: { read, write }, engine }: Pick<AdminDeps, 'catalog' | 'engine'>, conditionId: string, winner: 0 | 1) {
  const market = read.marketByCondition(conditionId);
  if (!market) throw apiError('PM_ERR_ADMIN_MARKET_UNKNOWN', { conditionId });
  if (market.winner >= 0) {
    if (market.winner !== winner) throw apiError('PM_ERR_MARKET_RESOLVED', { conditionId });
    return read.marketCatalog(market);
  }
  const r = await engine.resolveMarket(conditionId, winner);
  // "Already resolved" from the engine with an unresolved catalog means a crash fell between the
  // engine's commit and the catalog's: the retry completes the catalog side.
  if (!r.ok && r.code !== Errors.PM_ERR_MARKET_RESOLVED.result) throw resultError(r.code, { conditionId, tokenId: market.clobTokenIds[0] });
  const outcome = await write.markResolved(conditionId, winner);
  if (!outcome.ok) throw outcome.error;
  return read.marketCatalog(outcome.market);
}

/** A deposit or a withdrawal, journaled by the engine; answers the wallet's balances after it. */
async function moveUsdc(engine: EngineAdmin, op: 'deposit' | 'withdraw', { params, body }: RequestOf<undefined, typeof AmountBody, typeof AddressParams>) {
  const address = params.address.toLowerCase();
  const units = parseUnits(body.amount);
  if (units === undefined || units <= 0) throw apiError('PM_ERR_AMOUNT');
  const r = await engine[op](address, units);
  if (!r.ok) throw resultError(r.code, { wallet: address });
  return balancesOf(engine, address);
}

export function deposit(d: Pick<AdminDeps, 'engine'>, req: RequestOf<undefined, typeof AmountBody, typeof AddressParams>) {
  return moveUsdc(d.engine, 'deposit', req);
}

export function withdraw(d: Pick<AdminDeps, 'engine'>, req: RequestOf<undefined, typeof AmountBody, typeof AddressParams>) {
  return moveUsdc(d.engine, 'withdraw', req);
}

export function walletBalances(d: Pick<AdminDeps, 'engine'>, { params }: RequestOf<undefined, undefined, typeof AddressParams>) {
  return balancesOf(d.engine, params.address.toLowerCase());
}

export async function putProfile(
  { catalog, store }: Pick<AdminDeps, 'catalog' | 'store'>,
  { params, body }: RequestOf<undefined, typeof ProfileBody, typeof AddressParams>,
) {
  const address = params.address.toLowerCase();
  await catalog.write.putProfile(address, body);
  return getProfile(store, address);
}

const walletOp = (op: 'deposit' | 'withdraw') =>
  routeSpec({
    method: 'POST',
    path: `/admin/wallets/:address/${op}`,
    group: 'admin',
    auth: 'admin',
    summary: op === 'deposit' ? 'Credit USDC to a wallet (journaled by the engine)' : 'Debit available USDC from a wallet (journaled by the engine)',
    params: AddressParams,
    body: AmountBody,
    response: WalletBalances,
    handler: op === 'deposit' ? deposit : withdraw,
  });

export const ADMIN_ROUTES: readonly RouteSpec<AdminDeps>[] = [
  routeSpec({
    method: 'POST',
    path: '/admin/events',
    group: 'admin',
    auth: 'admin',
    summary: 'Upsert events with their markets, tags and series (idempotent, all or nothing)',
    description: 'Answers the stored events (slug form) in request order. An invalid request stores nothing and lists every problem in `errors`.',
    body: UpsertEventsBody,
    response: UpsertEventsReply,
    handler: upsertEvents,
  }),
  routeSpec({
    method: 'POST',
    path: '/admin/markets/:conditionId/status',
    group: 'admin',
    auth: 'admin',
    summary: 'Change a market\'s active / closed / archived / acceptingOrders flags',
    description: 'Closing, archiving or deactivating a market also stops order intake unless acceptingOrders is given.',
    params: ConditionParams,
    body: MarketStatusBody,
    response: MarketReply,
    handler: setMarketStatus,
  }),
  routeSpec({
    method: 'POST',
    path: '/admin/markets/:conditionId/resolve',
    group: 'admin',
    auth: 'admin',
    summary: 'Resolve a market: the engine cancels its orders and pays the winning token; the catalog closes it',
    description: 'Repeating the same resolution answers the market again; another winner for a resolved market is refused.',
    params: ConditionParams,
    body: ResolveBody,
    response: MarketReply,
    handler: resolveMarket,
  }),
  walletOp('deposit'),
  walletOp('withdraw'),
  routeSpec({
    method: 'GET',
    path: '/admin/wallets/:address',
    group: 'admin',
    auth: 'admin',
    summary: 'USDC and token balances of a wallet (available and reserved by open orders), tokens by asset',
    params: AddressParams,
    response: WalletBalances,
    handler: walletBalances,
  }),
  routeSpec({
    method: 'PUT',
    path: '/admin/wallets/:address/profile',
    group: 'admin',
    auth: 'admin',
    summary: 'Set a wallet\'s display profile (name, pseudonym, bio, images) shown on trades and positions',
    description: 'Replaces the whole profile: absent fields become "".',
    params: AddressParams,
    body: ProfileBody,
    response: Profile,
    handler: putProfile,
  }),
];

export function adminRoutes(ctx: Pick<AppContext, 'catalog' | 'engine' | 'store'>): AnyRoute[] {
  return bindRoutes<AdminDeps>({ catalog: ctx.catalog, engine: ctx.engine, store: ctx.store }, ADMIN_ROUTES);
}
