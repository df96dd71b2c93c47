/**
 * API keys (DESIGN section 5) and GET /exchange-info. Create and derive are L1 (EIP-712 ClobAuth
 * headers); listing and revoking are L2 (signed with the key itself). The edge has already verified the
 * headers when a handler runs, so `caller.address` (and `caller.nonce` on L1, `caller.apiKey` on L2)
 * are proven.
 */
import { Type } from '@sinclair/typebox';
import { TICK_SIZES } from '../../domain/units.ts';
import { authDomainOf } from '../auth.ts';
import type { AppContext } from '../context.ts';
import { route, type AnyRoute, type Caller } from '../route.ts';
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
      method: 'GET',
      path: '/exchange-info',
      group: 'clob',
      summary: 'Chain id, EIP-712 domains and tick sizes: what a client signs with',
      response: ExchangeInfo,
      handler: () => info,
    }),
  ];
}
