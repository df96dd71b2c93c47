/**
 * The wallet operations beyond the spec: split USDC into a market's outcome tokens, merge them back, redeem a
 * resolved market. L2-signed with a trading key, replay-protected durably (money moves), in the wallet the
 * request's signatureType names (the key's, its proxy wallet or its Safe).
 */
import type { TSchema } from '@sinclair/typebox';
import { apiError, resultError } from '../../../domain/errors.ts';
import { parseConditionId } from '../../../domain/ids.ts';
import { parseUnits } from '../../../domain/units.ts';
import { walletFor } from '../../auth/funders.ts';
import { routeSpec, type Caller, type RequestOf, type RouteSpec } from '../../pipeline/route.ts';
import { RedeemBody, SplitMergeBody, WalletOpResult } from '../../schemas/trading.ts';
import type { Eng, TradingDeps } from './trading-deps.ts';

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

/** A split, merge or redeem: durable replay protection (money moves), the wallet operation's answer. */
function walletOpRoute<B extends TSchema>(r: { path: string; summary: string; body: B; handler: (d: WalletOpDeps, req: RequestOf<undefined, B>) => unknown }): RouteSpec<TradingDeps> {
  return routeSpec({ method: 'POST', path: r.path, replay: 'durable', group: 'trading', auth: 'l2', summary: r.summary, body: r.body, response: WalletOpResult, handler: r.handler });
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
