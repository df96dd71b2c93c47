/**
 * API keys (DESIGN section 5) and GET /exchange-info. Create and derive are L1 (EIP-712 ClobAuth
 * headers); listing and revoking are L2 (signed with the key itself). The edge has already verified the
 * headers when a handler runs, so `caller.address` (and `caller.nonce` on L1, `caller.apiKey` on L2)
 * are proven.
 *
 * Read-only and builder keys (edge/auth/auth.ts, "Key kinds") are managed with a trading key: create, list,
 * delete. A read-only key is valid for the wallet that created it (public check: GET
 * /auth/validate-readonly-api-key). A builder key is revoked by DELETE /auth/builder-api-key signed either
 * with a trading key of its wallet (every builder key of the wallet: the platform's V2 client sends no
 * builder headers, so the call names no key) or with the builder headers of that key (that key alone, as
 * the platform's V1 client revokes it).
 */
import { Type } from '@sinclair/typebox';
import { TICK_SIZES } from '../../../domain/units.ts';
import { authDomainOf } from '../../auth/auth.ts';
import { builderCodeOf } from '../../auth/credentials.ts';
import { type ApiKeyRecord, type ApiKeyService } from '../../auth/api-keys.ts';
import type { AppContext } from '../../context.ts';
import { bindRoutes, routeSpec, type AnyRoute, type Caller, type RequestOf, type RouteSpec } from '../../pipeline/route.ts';
import {
  BuilderKeyCreated,
  BuilderKeysList,
  DeleteReadonlyKeyBody,
  ReadonlyKeyCreated,
  ReadonlyKeysList,
  ValidateReadonlyQuery,
  ValidateReadonlyReply,
} from '../../schemas/keys.ts';
import { ApiCredentials, ApiKeysList, ExchangeInfo } from '../../schemas/orders.ts';

/** Set by the edge on every authenticated route; its absence is a wiring bug, not a client error. */
function proven(c: Caller, field: 'address' | 'nonce' | 'apiKey'): string {
  const v = c[field];
  if (v === undefined) throw new Error(`authenticated route without caller.${field}`);
  return v;
}

/** What the key routes use: the API key service, and the exchange's signing parameters (GET /exchange-info). */
export interface AuthRouteDeps {
  readonly keys: Pick<ApiKeyService, 'create' | 'derive' | 'list' | 'revoke' | 'createKind' | 'records' | 'usable'>;
  readonly info: ExchangeInfo;
}
type Keys = Pick<AuthRouteDeps, 'keys'>;

export function authRouteDeps(ctx: Pick<AppContext, 'auth' | 'config'>): AuthRouteDeps {
  const a = ctx.config.auth;
  const domains = ctx.auth.orderDomains;
  const info = {
    chainId: a.chainId,
    authDomain: authDomainOf(a),
    orderDomain: domains.normal,
    negRiskOrderDomain: domains.negRisk,
    tickSizes: [...TICK_SIZES],
    walletFactories: ctx.auth.funders.factories,
    profile: ctx.config.profile,
  };
  return { keys: ctx.auth.keys, info };
}

/** The usable keys of the caller's wallet of one kind, oldest first. */
const usableKeys = (d: Keys, caller: Caller, kind: 'readonly' | 'builder') =>
  d.keys
    .records(proven(caller, 'address'), kind)
    .filter((r) => !r.revoked)
    .map((r) => r.apiKey);

export function createApiKey(d: Keys, req: RequestOf) {
  return d.keys.create(proven(req.caller, 'address'), proven(req.caller, 'nonce'));
}

export function deriveApiKey(d: Keys, req: RequestOf) {
  return d.keys.derive(proven(req.caller, 'address'), proven(req.caller, 'nonce'));
}

export function listApiKeys(d: Keys, req: RequestOf) {
  return { apiKeys: d.keys.list(proven(req.caller, 'address')) };
}

export async function revokeApiKey(d: Keys, req: RequestOf) {
  await d.keys.revoke(proven(req.caller, 'apiKey'));
  return 'OK';
}

export async function createReadonlyKey(d: Keys, req: RequestOf) {
  const c = await d.keys.createKind(proven(req.caller, 'address'), 'readonly');
  return { apiKey: c.apiKey, secret: c.secret, passphrase: c.passphrase };
}

export function listReadonlyKeys(d: Keys, req: RequestOf) {
  return usableKeys(d, req.caller, 'readonly');
}

export async function deleteReadonlyKey(d: Keys, req: RequestOf<undefined, typeof DeleteReadonlyKeyBody>) {
  const r = d.keys.usable(req.body.key);
  if (r === undefined || r.kind !== 'readonly' || r.address !== proven(req.caller, 'address')) return false;
  await d.keys.revoke(r.apiKey);
  return true;
}

export function validateReadonlyKey(d: Keys, { query }: RequestOf<typeof ValidateReadonlyQuery>) {
  const r = d.keys.usable(query.key);
  return { valid: r !== undefined && r.kind === 'readonly' && r.address === query.address.toLowerCase() };
}

export async function createBuilderKey(d: Keys, req: RequestOf) {
  const address = proven(req.caller, 'address');
  const c = await d.keys.createKind(address, 'builder');
  return { key: c.apiKey, secret: c.secret, passphrase: c.passphrase, builderCode: builderCodeOf(address) };
}

export function listBuilderKeys(d: Keys, req: RequestOf) {
  const address = proven(req.caller, 'address');
  const code = builderCodeOf(address);
  const iso = (sec: number) => new Date(sec * 1000).toISOString();
  return d.keys.records(address, 'builder').map((r: ApiKeyRecord) => ({
    key: r.apiKey,
    builderCode: code,
    createdAt: iso(r.createdAt),
    ...(r.revoked && r.revokedAt !== undefined ? { revokedAt: iso(r.revokedAt) } : {}),
  }));
}

export async function revokeBuilderKeys(d: Keys, req: RequestOf) {
  const doomed = req.caller.keyKind === 'builder' ? [proven(req.caller, 'apiKey')] : usableKeys(d, req.caller, 'builder');
  await Promise.all(doomed.map((k) => d.keys.revoke(k)));
  return 'OK';
}

export function exchangeInfo(d: Pick<AuthRouteDeps, 'info'>) {
  return d.info;
}

export const AUTH_ROUTES: readonly RouteSpec<AuthRouteDeps>[] = [
  routeSpec({
    method: 'POST',
    path: '/auth/api-key',
    group: 'trading',
    auth: 'l1',
    summary: 'Create the API key of (address, nonce); 400 when the nonce was used before',
    response: ApiCredentials,
    handler: createApiKey,
  }),
  routeSpec({
    method: 'GET',
    path: '/auth/derive-api-key',
    group: 'trading',
    auth: 'l1',
    summary: 'The credentials of the created, unrevoked API key of (address, nonce)',
    response: ApiCredentials,
    handler: deriveApiKey,
  }),
  routeSpec({
    method: 'GET',
    path: '/auth/api-keys',
    group: 'trading',
    auth: 'l2',
    summary: "The caller's usable API keys",
    response: ApiKeysList,
    handler: listApiKeys,
  }),
  routeSpec({
    method: 'DELETE',
    path: '/auth/api-key',
    group: 'trading',
    auth: 'l2',
    summary: 'Revoke the API key the request is signed with (its nonce stays used)',
    response: Type.Literal('OK'),
    handler: revokeApiKey,
  }),
  routeSpec({
    method: 'POST',
    path: '/auth/readonly-api-key',
    replay: 'memory',
    group: 'trading',
    auth: 'l2',
    summary: 'Create a read-only API key of the caller\'s wallet: it signs like a trading key and is accepted only by the routes that read',
    response: ReadonlyKeyCreated,
    handler: createReadonlyKey,
  }),
  routeSpec({
    method: 'GET',
    path: '/auth/readonly-api-keys',
    group: 'trading',
    auth: 'l2',
    summary: "The usable read-only API keys of the caller's wallet, oldest first",
    response: ReadonlyKeysList,
    handler: listReadonlyKeys,
  }),
  routeSpec({
    method: 'DELETE',
    path: '/auth/readonly-api-key',
    replay: 'memory',
    group: 'trading',
    auth: 'l2',
    summary: 'Delete one of the caller\'s read-only API keys: true when it was usable and no longer is, false for any other key',
    body: DeleteReadonlyKeyBody,
    response: Type.Boolean(),
    handler: deleteReadonlyKey,
  }),
  routeSpec({
    method: 'GET',
    path: '/auth/validate-readonly-api-key',
    group: 'clob',
    summary: 'Whether `key` is a usable read-only API key of the wallet `address`',
    query: ValidateReadonlyQuery,
    response: ValidateReadonlyReply,
    fieldMessages: { address: 'Invalid address', key: 'Invalid key' },
    handler: validateReadonlyKey,
  }),
  routeSpec({
    method: 'POST',
    path: '/auth/builder-api-key',
    replay: 'memory',
    group: 'trading',
    auth: 'l2',
    summary: 'Create a builder API key of the caller\'s wallet (it signs the builder headers); the answer names the wallet\'s builder code',
    response: BuilderKeyCreated,
    handler: createBuilderKey,
  }),
  routeSpec({
    method: 'GET',
    path: '/auth/builder-api-key',
    group: 'trading',
    auth: 'l2',
    summary: "The builder API keys of the caller's wallet, oldest first, revoked ones with revokedAt",
    response: BuilderKeysList,
    handler: listBuilderKeys,
  }),
  routeSpec({
    method: 'DELETE',
    path: '/auth/builder-api-key',
    replay: 'memory',
    group: 'trading',
    auth: 'l2',
    keys: ['trading', 'builder'],
    summary: 'Revoke builder API keys: the one whose builder headers sign the request, or with a trading key every builder key of the wallet',
    response: Type.Literal('OK'),
    handler: revokeBuilderKeys,
  }),
  routeSpec({
    method: 'GET',
    path: '/exchange-info',
    group: 'clob',
    summary: 'Chain id, EIP-712 domains and tick sizes: what a client signs with',
    response: ExchangeInfo,
    handler: exchangeInfo,
  }),
];

export function authRoutes(ctx: Pick<AppContext, 'auth' | 'config'>): AnyRoute[] {
  return bindRoutes(authRouteDeps(ctx), AUTH_ROUTES);
}
