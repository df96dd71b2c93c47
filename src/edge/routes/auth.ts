/**
 * API keys (DESIGN section 5) and GET /exchange-info. Create and derive are L1 (EIP-712 ClobAuth
 * headers); listing and revoking are L2 (signed with the key itself). The edge has already verified the
 * headers when a handler runs, so `caller.address` (and `caller.nonce` on L1, `caller.apiKey` on L2)
 * are proven.
 *
 * Read-only and builder keys (edge/auth.ts, "Key kinds") are managed with a trading key: create, list,
 * delete. A read-only key is valid for the wallet that created it (public check: GET
 * /auth/validate-readonly-api-key). A builder key is revoked by DELETE /auth/builder-api-key signed either
 * with a trading key of its wallet (every builder key of the wallet: the platform's V2 client sends no
 * builder headers, so the call names no key) or with the builder headers of that key (that key alone, as
 * the platform's V1 client revokes it).
 */
import { Type } from '@sinclair/typebox';
import { TICK_SIZES } from '../../domain/units.ts';
import { authDomainOf, builderCodeOf, type ApiKeyRecord } from '../auth.ts';
import type { AppContext } from '../context.ts';
import { route, type AnyRoute, type Caller } from '../route.ts';
import {
  BuilderKeyCreated,
  BuilderKeysList,
  DeleteReadonlyKeyBody,
  ReadonlyKeyCreated,
  ReadonlyKeysList,
  ValidateReadonlyQuery,
  ValidateReadonlyReply,
} from '../schemas/keys.ts';
import { ApiCredentials, ApiKeysList, ExchangeInfo } from '../schemas/orders.ts';

/** Set by the edge on every authenticated route; its absence is a wiring bug, not a client error. */
function proven(c: Caller, field: 'address' | 'nonce' | 'apiKey'): string {
  const v = c[field];
  if (v === undefined) throw new Error(`authenticated route without caller.${field}`);
  return v;
}

export function authRoutes(ctx: AppContext): AnyRoute[] {
  const { keys, orderDomains: domains } = ctx.auth;
  const a = ctx.config.auth;
  const info = {
    chainId: a.chainId,
    authDomain: authDomainOf(a),
    orderDomain: domains.normal,
    negRiskOrderDomain: domains.negRisk,
    tickSizes: [...TICK_SIZES],
  };

  return [
    route({
      method: 'POST',
      path: '/auth/api-key',
      group: 'trading',
      auth: 'l1',
      summary: 'Create the API key of (address, nonce); 400 when the nonce was used before',
      response: ApiCredentials,
      handler: (req) => keys.create(proven(req.caller, 'address'), proven(req.caller, 'nonce')),
    }),
    route({
      method: 'GET',
      path: '/auth/derive-api-key',
      group: 'trading',
      auth: 'l1',
      summary: 'The credentials of the created, unrevoked API key of (address, nonce)',
      response: ApiCredentials,
      handler: (req) => keys.derive(proven(req.caller, 'address'), proven(req.caller, 'nonce')),
    }),
    route({
      method: 'GET',
      path: '/auth/api-keys',
      group: 'trading',
      auth: 'l2',
      summary: "The caller's usable API keys",
      response: ApiKeysList,
      handler: (req) => ({ apiKeys: keys.list(proven(req.caller, 'address')) }),
    }),
    route({
      method: 'DELETE',
      path: '/auth/api-key',
      group: 'trading',
      auth: 'l2',
      summary: 'Revoke the API key the request is signed with (its nonce stays used)',
      response: Type.Literal('OK'),
      handler: async (req) => {
        await keys.revoke(proven(req.caller, 'apiKey'));
        return 'OK';
      },
    }),
    route({
      method: 'POST',
      path: '/auth/readonly-api-key',
      replay: 'memory',
      group: 'trading',
      auth: 'l2',
      summary: 'Create a read-only API key of the caller\'s wallet: it signs like a trading key and is accepted only by the routes that read',
      response: ReadonlyKeyCreated,
      handler: async (req) => {
        const c = await keys.createKind(proven(req.caller, 'address'), 'readonly');
        return { apiKey: c.apiKey, secret: c.secret, passphrase: c.passphrase };
      },
    }),
    route({
      method: 'GET',
      path: '/auth/readonly-api-keys',
      group: 'trading',
      auth: 'l2',
      summary: "The usable read-only API keys of the caller's wallet, oldest first",
      response: ReadonlyKeysList,
      handler: (req) =>
        keys
          .records(proven(req.caller, 'address'), 'readonly')
          .filter((r) => !r.revoked)
          .map((r) => r.apiKey),
    }),
    route({
      method: 'DELETE',
      path: '/auth/readonly-api-key',
      replay: 'memory',
      group: 'trading',
      auth: 'l2',
      summary: 'Delete one of the caller\'s read-only API keys: true when it was usable and no longer is, false for any other key',
      body: DeleteReadonlyKeyBody,
      response: Type.Boolean(),
      handler: async (req) => {
        const r = keys.usable(req.body.key);
        if (r === undefined || r.kind !== 'readonly' || r.address !== proven(req.caller, 'address')) return false;
        await keys.revoke(r.apiKey);
        return true;
      },
    }),
    route({
      method: 'GET',
      path: '/auth/validate-readonly-api-key',
      group: 'clob',
      summary: 'Whether `key` is a usable read-only API key of the wallet `address`',
      query: ValidateReadonlyQuery,
      response: ValidateReadonlyReply,
      fieldMessages: { address: 'Invalid address', key: 'Invalid key' },
      handler: ({ query }) => {
        const r = keys.usable(query.key);
        return { valid: r !== undefined && r.kind === 'readonly' && r.address === query.address.toLowerCase() };
      },
    }),
    route({
      method: 'POST',
      path: '/auth/builder-api-key',
      replay: 'memory',
      group: 'trading',
      auth: 'l2',
      summary: 'Create a builder API key of the caller\'s wallet (it signs the builder headers); the answer names the wallet\'s builder code',
      response: BuilderKeyCreated,
      handler: async (req) => {
        const address = proven(req.caller, 'address');
        const c = await keys.createKind(address, 'builder');
        return { key: c.apiKey, secret: c.secret, passphrase: c.passphrase, builderCode: builderCodeOf(address) };
      },
    }),
    route({
      method: 'GET',
      path: '/auth/builder-api-key',
      group: 'trading',
      auth: 'l2',
      summary: "The builder API keys of the caller's wallet, oldest first, revoked ones with revokedAt",
      response: BuilderKeysList,
      handler: (req) => {
        const address = proven(req.caller, 'address');
        const code = builderCodeOf(address);
        const iso = (sec: number) => new Date(sec * 1000).toISOString();
        return keys.records(address, 'builder').map((r: ApiKeyRecord) => ({
          key: r.apiKey,
          builderCode: code,
          createdAt: iso(r.createdAt),
          ...(r.revoked && r.revokedAt !== undefined ? { revokedAt: iso(r.revokedAt) } : {}),
        }));
      },
    }),
    route({
      method: 'DELETE',
      path: '/auth/builder-api-key',
      replay: 'memory',
      group: 'trading',
      auth: 'l2',
      keys: ['trading', 'builder'],
      summary: 'Revoke builder API keys: the one whose builder headers sign the request, or with a trading key every builder key of the wallet',
      response: Type.Literal('OK'),
      handler: async (req) => {
        const doomed =
          req.caller.keyKind === 'builder'
            ? [proven(req.caller, 'apiKey')]
            : keys
                .records(proven(req.caller, 'address'), 'builder')
                .filter((r) => !r.revoked)
                .map((r) => r.apiKey);
        await Promise.all(doomed.map((k) => keys.revoke(k)));
        return 'OK';
      },
    }),
    route({
      method: 'GET',
      path: '/exchange-info',
      group: 'clob',
      summary: 'Chain id, EIP-712 domains and tick sizes: what a client signs with',
      response: ExchangeInfo,
      handler: () => info,
    }),
  ];
}
