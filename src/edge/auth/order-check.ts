/**
 * Order checks that belong before the engine (DESIGN sections 2 and 5): shape, ownership, signature
 * type, market, order type options, amounts, and the EIP-712 signature. Everything but the signature is
 * checked on the main thread first, so a request that fails a cheap rule never costs a recovery; the
 * signatures of the survivors go to the signature pool in one batch.
 *
 * Rules, in the order they are checked (the first failure is the order's error):
 *   1. shape (schemas/orders.ts OrderSubmission)           PM_ERR_BAD_REQUEST "invalid order.<field>"
 *   2. owner == the caller's API key                         PM_ERR_OWNER_MISMATCH
 *   3. signatureType 0, 1 or 2 (POLY_1271 needs a chain)     PM_ERR_SIGNATURE_TYPE
 *   4. signer == the API key's address                       PM_ERR_SIGNER_MISMATCH
 *   5. maker: EOA (0) the signer itself                      PM_ERR_MAKER_SIGNER
 *             POLY_PROXY (1), POLY_GNOSIS_SAFE (2) the       PM_ERR_MAKER_WALLET
 *             signer's proxy wallet or Safe (funders.ts)
 *   6. tokenId canonical, salt/timestamp uint256             PM_ERR_BAD_REQUEST
 *   7. the token names a market; conditionId (when given)   PM_ERR_MARKET_UNKNOWN, PM_ERR_CONDITION_MISMATCH
 *   8. postOnly only with GTC/GTD                            PM_ERR_POST_ONLY_TYPE
 *   9. expiration: GTD at least 60 s ahead, others 0         PM_ERR_ORDER_EXPIRATION
 *  10. amounts positive safe integers                        PM_ERR_ORDER_AMOUNTS
 *  11. the signature recovers to signer                      PM_ERR_ORDER_SIGNATURE
 *
 * Tick, minimum size, balance and duplicate checks need market state and belong to the engine.
 * A checked order's `wallet` is its maker (whose balance it reserves and settles on) and its `signer` the
 * API key's address: they differ exactly for types 1 and 2, as on the platform.
 * The order id is the EIP-712 digest under the market's domain (neg-risk markets sign for their own
 * exchange contract).
 *
 * Refusals explain themselves (`explain`, config auth.explainRefusals; refusals/order.ts): once an order is
 * refused, its error gets a reason for the X-Refusal-Reason header: rules 1-10 from the code and the
 * submission, rule 11 by trying the common signing mistakes in the signature pool (bounded per order and
 * process-wide). Nothing of it runs for an order that passes, and none of it changes a decision or a body;
 * without `explain`, none of it runs at all.
 */
import { apiError, type ApiError } from '../../domain/errors.ts';
import { ZERO_BYTES32, parseTokenId } from '../../domain/ids.ts';
import { GTD_MIN_LEAD_SECONDS } from '../../domain/market-rules.ts';
import { parseIntegerUnits } from '../../domain/units.ts';
import { isVerifiedSignatureType } from '../../domain/signature-types.ts';
import { nowSeconds, type Clock } from '../../runtime/clock.ts';
import type { Config } from '../../runtime/config.ts';
import { orderDigest, orderDomainSeparator, type OrderDomain, type OrderDomains, type OrderStruct } from './eip712.ts';
import { problemError } from '../pipeline/error-reply.ts';
import type { Funders } from './funders.ts';
import type { OrderSubmission } from '../../domain/events.ts';
import { MAX_ORDERS_PER_REQUEST, OrderSubmission as SubmissionSchema } from '../schemas/orders.ts';
import { ruleRefusal, shapeRefusal, withReason } from '../refusals/order.ts';
import { SIGNATURE_DIAGNOSES, diagnoseSignature } from '../refusals/order-signature.ts';
import type { DiagnosisBudget } from '../refusals/budget.ts';
import type { OrderToVerify, OrderVerification, SigPool } from './sig-pool.ts';
import { compileRoute } from '../pipeline/validate.ts';

/**
 * A submission that passed every check here: exactly what the engine's placeOrder takes (the journal's
 * OrderSubmission: lowercase addresses and hex, integer units, canonical decimal salt and timestamp), plus
 * the token's market.
 */
export type NormalizedOrder = OrderSubmission & { conditionId?: string };

export type OrderCheckResult = { ok: true; order: NormalizedOrder } | { ok: false; error: ApiError; /** '' when not computable */ orderId: string };

/** The market a token belongs to, as order checks need it. */
export interface TokenMarket {
  readonly conditionId: string;
  readonly negRisk: boolean;
  /**
   * The market's token ids as the engine holds them: an accepted order keeps the engine's copy of its
   * token id instead of the request's (one string per market, not one per resting order).
   */
  readonly tokenIds?: readonly string[];
}

export interface OrderCheckDeps {
  pool: SigPool;
  domains: OrderDomains;
  /** The token's market, undefined for an unknown token. */
  market: (tokenId: string) => TokenMarket | undefined;
  clock: Clock;
  /** The makers of proxy (1) and Safe (2) orders, derived from their signer (a refusal's reason names them). */
  funders: Pick<Funders, 'makerOf' | 'walletsOf' | 'factories'>;
  /** Refusals carry a reason (config auth.explainRefusals); absent or false, no diagnosis runs. */
  explain?: boolean;
  /** The signature diagnoses' budget; default the process-wide one (refusals/order-signature.ts SIGNATURE_DIAGNOSES). */
  diagnoses?: DiagnosisBudget;
}

export interface OrderCaller {
  apiKey: string;
  /** Lowercase address of the API key. */
  address: string;
  /** The client address, whose network pays for a refused signature's diagnosis (refusals/budget.ts). */
  ip?: string;
}

/**
 * The checks' dependencies as the trading routes build them (the in-process demo traders build theirs
 * here too, so their orders are checked exactly as a client's): the auth services' signature pool, order
 * domains and funders, the clock, the engine's token -> market map, and whether refusals explain themselves
 * (config auth.explainRefusals; the demo traders leave it out: nobody reads their reasons).
 */
export function orderCheckDeps(o: {
  auth: { pool: SigPool; orderDomains: OrderDomains; funders: OrderCheckDeps['funders'] };
  clock: Clock;
  engine: { tokenMarketOf(tokenId: string): { readonly market: TokenMarket } | undefined };
  explain?: boolean;
}): OrderCheckDeps {
  return {
    pool: o.auth.pool,
    domains: o.auth.orderDomains,
    funders: o.auth.funders,
    clock: o.clock,
    market: (tokenId) => o.engine.tokenMarketOf(tokenId)?.market,
    explain: o.explain === true,
  };
}

export function orderDomainsOf(auth: Config['auth']): OrderDomains {
  const d = (x: Config['auth']['orderDomain']): OrderDomain => ({ name: x.name, version: x.version, chainId: auth.chainId, verifyingContract: x.verifyingContract });
  return { normal: d(auth.orderDomain), negRisk: d(auth.negRiskOrderDomain) };
}

// The edge's own body validator, so per-element errors read exactly like a POST /order 400.
const submissionCheck = compileRoute({ method: 'POST', path: '/orders', group: 'trading', summary: '', body: SubmissionSchema, handler: () => undefined });

/** 2^256 - 1 in decimal: 78 digits, so a 78-digit text is in range iff it sorts at or below it. */
const UINT256_MAX_TEXT = ((1n << 256n) - 1n).toString();

/** A uint256 as canonical decimal text (no leading zeros), or undefined. No BigInt: text is compared as text. */
export function canonicalUint(v: string | number): string | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? String(v) : undefined;
  if (!/^\d{1,78}$/.test(v)) return undefined;
  let i = 0;
  while (i < v.length - 1 && v.charCodeAt(i) === 48) i++;
  const t = i === 0 ? v : v.slice(i);
  return t.length < 78 || t <= UINT256_MAX_TEXT ? t : undefined;
}

/** `hex` lowercased, and the shared constant when it is zero bytes32 (most orders carry no metadata or builder). */
function bytes32Of(hex: string | undefined): string {
  if (hex === undefined || hex === ZERO_BYTES32) return ZERO_BYTES32;
  const lower = hex.toLowerCase();
  return lower === ZERO_BYTES32 ? ZERO_BYTES32 : lower;
}

function amount(v: string | number): number | undefined {
  return typeof v === 'number' ? (Number.isSafeInteger(v) ? v : undefined) : parseIntegerUnits(v);
}

const separatorCache = new WeakMap<OrderDomain, Uint8Array>();
function separatorOf(d: OrderDomain): Uint8Array {
  let s = separatorCache.get(d);
  if (!s) {
    s = orderDomainSeparator(d);
    separatorCache.set(d, s);
  }
  return s;
}

const bad = (detail: string): ApiError => apiError('PM_ERR_BAD_REQUEST', { detail });

interface Pending {
  index: number;
  order: NormalizedOrder;
  verify: OrderToVerify;
}

/**
 * Checks a batch of submissions (POST /order passes one). Answers one result per submission, in order;
 * throws PM_ERR_TOO_MANY_ORDERS for more than MAX_ORDERS_PER_REQUEST. Rejects only on a server fault
 * (the signature pool failed). `shaped`: every submission already passed the OrderSubmission schema
 * (POST /order's route checks its body with it), so rule 1 is not run twice.
 */
export async function checkOrders(submissions: readonly unknown[], caller: OrderCaller, deps: OrderCheckDeps, shaped = false, hints?: unknown): Promise<OrderCheckResult[]> {
  if (submissions.length > MAX_ORDERS_PER_REQUEST) {
    throw apiError('PM_ERR_TOO_MANY_ORDERS', { count: submissions.length, max: MAX_ORDERS_PER_REQUEST });
  }
  const results: OrderCheckResult[] = new Array(submissions.length);
  const pending: Pending[] = [];
  const now = nowSeconds(deps.clock);

  for (let i = 0; i < submissions.length; i++) {
    let submission = submissions[i] as SubmissionSchema;
    if (!shaped) {
      const checked = submissionCheck.checkBody(submission);
      if (!checked.ok) {
        const error = problemError('trading', checked.problem);
        results[i] = { ok: false, error: deps.explain === true ? withReason(error, shapeRefusal(submission)) : error, orderId: '' };
        continue;
      }
      submission = checked.value as SubmissionSchema;
    }
    const r = normalize(submission, caller, deps, now);
    if ('error' in r) {
      if (deps.explain === true) withReason(r.error, ruleRefusal(r.error, submission, caller, { market: deps.market, funders: deps.funders, now }));
      results[i] = { ok: false, error: r.error, orderId: r.orderId };
    } else pending.push({ index: i, order: r.order, verify: r.verify });
  }

  if (pending.length > 0) {
    const verified = await verifyPending(pending, deps, hints);
    let diagnoses: Promise<void>[] | undefined;
    for (let k = 0; k < pending.length; k++) {
      const { index, order } = pending[k]!;
      const v = verified[k]!;
      if (v.orderId === '' || v.recovered !== order.signer) {
        const error = apiError('PM_ERR_ORDER_SIGNATURE');
        results[index] = { ok: false, error, orderId: v.orderId };
        if (deps.explain === true && v.orderId !== '') {
          (diagnoses ??= []).push(explainSignature(error, pending[k]!.verify, submissions[index], v.recovered, deps, caller.ip));
        }
      } else {
        order.orderId = v.orderId;
        results[index] = { ok: true, order };
      }
    }
    if (diagnoses !== undefined) await Promise.all(diagnoses);
  }
  return results;
}

/**
 * A gateway's verification of one submission (ROLE=gateway, edge/cluster/forward.ts): the order's id (its EIP-712
 * digest) and the address its signature recovers to (null: none), bound by `k` to exactly the signed fields,
 * signature and domain they were computed from. The sequencer uses a hint only when its own normalized
 * order gives the same `k`, so a gateway whose market view lags (an unknown token, another neg-risk flag)
 * or whose domains differ can only leave an order to be recovered here, never make it pass as another.
 * The order's id is never taken from the hint: the sequencer hashes what was signed itself (one EIP-712
 * digest, no recovery) and uses the hint only when its `id` is that digest, so a hint cannot give an order
 * another order's id (the idempotency key: an attacker's order answered with a victim's earlier answer).
 * Hints are believed at all only because the command that carries them is sealed by a gateway
 * (replication/commands.ts).
 */
export interface OrderHint {
  k: string;
  id: string;
  r: string | null;
}

function hintKey(v: OrderToVerify, domains: OrderDomains): string {
  const d = v.negRisk ? domains.negRisk : domains.normal;
  return `${d.chainId}|${d.verifyingContract.toLowerCase()}|${d.name}|${d.version}|${v.salt}|${v.maker}|${v.signer}|${v.tokenId}|${v.makerAmount}|${v.takerAmount}|${v.side}|${v.signatureType}|${v.timestamp}|${v.metadata}|${v.builder}|${v.signature}`;
}

const isHint = (h: unknown): h is OrderHint =>
  typeof h === 'object' && h !== null && typeof (h as OrderHint).k === 'string' && typeof (h as OrderHint).id === 'string' && ((h as OrderHint).r === null || typeof (h as OrderHint).r === 'string');

/** The pending orders' verifications: a matching gateway hint where one came, the pool for the rest. */
async function verifyPending(pending: readonly Pending[], deps: OrderCheckDeps, hints: unknown): Promise<OrderVerification[]> {
  if (!Array.isArray(hints)) return deps.pool.verifyOrders(pending.map((p) => p.verify), deps.domains);
  const out: OrderVerification[] = new Array(pending.length);
  const rest: number[] = [];
  for (let k = 0; k < pending.length; k++) {
    const h: unknown = hints[pending[k]!.index];
    const v = pending[k]!.verify;
    if (isHint(h) && h.k === hintKey(v, deps.domains)) {
      // The id is the digest of what was signed, computed here; a hint naming another id is not used.
      const id = orderDigest(v, separatorOf(v.negRisk ? deps.domains.negRisk : deps.domains.normal));
      if (h.id === id) {
        out[k] = { orderId: id, recovered: h.r ?? undefined };
        continue;
      }
    }
    rest.push(k);
  }
  if (rest.length > 0) {
    const verified = await deps.pool.verifyOrders(rest.map((k) => pending[k]!.verify), deps.domains);
    for (let j = 0; j < rest.length; j++) out[rest[j]!] = verified[j]!;
  }
  return out;
}

/**
 * ROLE=gateway: the signatures of the submissions this node can normalize (its market view may lag: an
 * order it cannot normalize gets null and is checked whole by the sequencer), one entry per submission.
 * Refuses nothing: the answer, refusals included, is the sequencer's.
 */
export async function orderHints(submissions: readonly unknown[], caller: OrderCaller, deps: OrderCheckDeps, shaped: boolean): Promise<Array<OrderHint | null>> {
  const hints: Array<OrderHint | null> = new Array(submissions.length).fill(null);
  if (submissions.length > MAX_ORDERS_PER_REQUEST) return hints;
  const now = nowSeconds(deps.clock);
  const pending: Pending[] = [];
  for (let i = 0; i < submissions.length; i++) {
    let submission = submissions[i] as SubmissionSchema;
    if (!shaped) {
      const checked = submissionCheck.checkBody(submission);
      if (!checked.ok) continue;
      submission = checked.value as SubmissionSchema;
    }
    const r = normalize(submission, caller, deps, now);
    if (!('error' in r)) pending.push({ index: i, order: r.order, verify: r.verify });
  }
  if (pending.length === 0) return hints;
  const verified = await deps.pool.verifyOrders(pending.map((p) => p.verify), deps.domains);
  for (let k = 0; k < pending.length; k++) {
    const v = verified[k]!;
    if (v.orderId !== '') hints[pending[k]!.index] = { k: hintKey(pending[k]!.verify, deps.domains), id: v.orderId, r: v.recovered ?? null };
  }
  return hints;
}

/** Refusal path only: tries the common signing mistakes (refusals/order-signature.ts) and sets the error's reason. */
async function explainSignature(error: ApiError, verify: OrderToVerify, submission: unknown, recovered: string | undefined, deps: OrderCheckDeps, ip: string | undefined): Promise<void> {
  error.reason = await diagnoseSignature({ verify, submission, recovered }, { pool: deps.pool, domains: deps.domains, budget: deps.diagnoses ?? SIGNATURE_DIAGNOSES, by: { ip } });
}

type Normalized = { order: NormalizedOrder; verify: OrderToVerify } | { error: ApiError; orderId: string };

// Module-level helpers, not closures in normalize: the TypeScript loader keeps function names, which
// costs a defineProperty per closure created, three per order.
const failed = (error: ApiError, orderId = ''): Normalized => ({ error, orderId });

/** The signed struct as submitted (amounts as sent): what an error message that names the order digests. */
function submittedStruct(o: SubmissionSchema['order'], salt: string, timestamp: string, tokenId: string, maker: string, signer: string): OrderStruct {
  return {
    salt,
    maker,
    signer,
    tokenId,
    makerAmount: typeof o.makerAmount === 'number' ? String(o.makerAmount) : o.makerAmount,
    takerAmount: typeof o.takerAmount === 'number' ? String(o.takerAmount) : o.takerAmount,
    side: o.side === 'BUY' ? 0 : 1,
    signatureType: o.signatureType,
    timestamp,
    metadata: bytes32Of(o.metadata),
    builder: bytes32Of(o.builder),
  };
}

/**
 * A refusal whose message names the order. Only these need the id before the pool computes it; an order
 * whose amounts are not even integers has no digest, so its message names the salt instead.
 */
function namedFailure(
  code: 'PM_ERR_CONDITION_MISMATCH' | 'PM_ERR_ORDER_AMOUNTS',
  struct: OrderStruct,
  domain: OrderDomain,
  detail?: string,
): Normalized {
  let id = '';
  try {
    id = orderDigest(struct, separatorOf(domain));
  } catch {
    /* amounts that are not integers: no digest */
  }
  return failed(apiError(code, { id: id || `with salt ${struct.salt}`, ...(detail === undefined ? {} : { detail }) }), id);
}

function normalize(s: SubmissionSchema, caller: OrderCaller, deps: OrderCheckDeps, now: number): Normalized {
  const o = s.order;
  if (s.owner !== caller.apiKey) return failed(apiError('PM_ERR_OWNER_MISMATCH'));
  const type = o.signatureType;
  if (!isVerifiedSignatureType(type)) return failed(apiError('PM_ERR_SIGNATURE_TYPE', { type }));
  // The caller's lowercase address is the one shared string every accepted order keeps as signer (and as
  // wallet for EOA orders); a funder's is the derivation cache's.
  const address = caller.address;
  if (o.signer !== address && o.signer.toLowerCase() !== address) return failed(apiError('PM_ERR_SIGNER_MISMATCH'));
  let maker = address;
  if (type === 0) {
    if (o.maker !== address && o.maker.toLowerCase() !== address) return failed(apiError('PM_ERR_MAKER_SIGNER'));
  } else {
    maker = deps.funders.makerOf(address, type);
    if (o.maker.toLowerCase() !== maker) return failed(apiError('PM_ERR_MAKER_WALLET', { wallet: type === 1 ? 'proxy wallet' : 'Safe', expected: maker, type }));
  }

  const tokenText = parseTokenId(o.tokenId);
  if (!tokenText) return failed(bad('invalid order.tokenId'));
  const salt = canonicalUint(o.salt);
  if (salt === undefined) return failed(bad('invalid order.salt'));
  const timestamp = canonicalUint(o.timestamp);
  if (timestamp === undefined) return failed(bad('invalid order.timestamp'));

  const market = deps.market(tokenText);
  if (!market) return failed(apiError('PM_ERR_MARKET_UNKNOWN', { tokenId: tokenText }));
  const tokenId = market.tokenIds?.[0] === tokenText ? market.tokenIds[0] : market.tokenIds?.[1] === tokenText ? market.tokenIds[1] : tokenText;
  const domain = market.negRisk ? deps.domains.negRisk : deps.domains.normal;

  if (o.conditionId !== undefined && o.conditionId.toLowerCase() !== market.conditionId.toLowerCase()) {
    return namedFailure('PM_ERR_CONDITION_MISMATCH', submittedStruct(o, salt, timestamp, tokenId, maker, address), domain);
  }

  const postOnly = s.postOnly === true;
  if (postOnly && (s.orderType === 'FOK' || s.orderType === 'FAK')) return failed(apiError('PM_ERR_POST_ONLY_TYPE'));

  const expText = s.expiration ?? o.expiration ?? 0;
  const exp = canonicalUint(expText);
  const expiration = exp === undefined ? NaN : Number(exp);
  if (!Number.isSafeInteger(expiration)) return failed(apiError('PM_ERR_ORDER_EXPIRATION'));
  if (s.orderType === 'GTD' ? expiration < now + GTD_MIN_LEAD_SECONDS : expiration !== 0) return failed(apiError('PM_ERR_ORDER_EXPIRATION'));

  const makerAmount = amount(o.makerAmount);
  const takerAmount = amount(o.takerAmount);
  if (makerAmount === undefined || takerAmount === undefined) {
    const field = makerAmount === undefined ? 'makerAmount' : 'takerAmount';
    return namedFailure('PM_ERR_ORDER_AMOUNTS', submittedStruct(o, salt, timestamp, tokenId, maker, address), domain, `${field} must be a whole number of units (10^-6) below 2^53`);
  }
  if (makerAmount === 0 || takerAmount === 0) {
    return namedFailure('PM_ERR_ORDER_AMOUNTS', submittedStruct(o, salt, timestamp, tokenId, maker, address), domain, `${makerAmount === 0 ? 'makerAmount' : 'takerAmount'} must be positive`);
  }

  const signature = o.signature.toLowerCase();
  const builder = bytes32Of(o.builder);
  const order: NormalizedOrder = {
    orderId: '',
    wallet: maker,
    tokenId,
    side: o.side,
    orderType: s.orderType,
    postOnly,
    makerAmount,
    takerAmount,
    expiration,
    builder,
    owner: caller.apiKey,
    signer: address,
    salt,
    timestamp,
    signatureType: o.signatureType,
    signature,
    conditionId: market.conditionId,
  };
  const verify: OrderToVerify = {
    salt,
    maker,
    signer: address,
    tokenId,
    makerAmount: String(makerAmount),
    takerAmount: String(takerAmount),
    side: o.side === 'BUY' ? 0 : 1,
    signatureType: o.signatureType,
    timestamp,
    metadata: bytes32Of(o.metadata),
    builder,
    signature,
    negRisk: market.negRisk,
  };
  return { order, verify };
}
