/**
 * Why an order was refused (refusals/reason.ts): the X-Refusal-Reason text of POST /order and POST /orders.
 * The body keeps the platform's words; this module only ever adds a reason to an ApiError that was already
 * decided, on the refusal path, and never changes the decision. Three kinds:
 *
 *   rules      order-check.ts's synchronous refusals (owner, signature type, signer/maker, token, market,
 *              post-only type, expiration, amounts) and a batch element's shape: derived from the error
 *              code and the submission, no crypto but the signer's funders (funders.ts, cached)
 *              (ruleRefusal, shapeRefusal);
 *   admission  what the sandbox and the engine refuse of a checked order (closed-only, post-only period,
 *              tick, minimum size, market state, balance, matching outcomes): derived from the code, its
 *              vars, the order and the market (admissionRefusal);
 *   signature  an order whose EIP-712 signature does not recover to its signer: the common mistakes are
 *              TRIED, each one digest and one recovery, until one recovers to the signer
 *              (diagnoseSignature).
 *
 * The signature diagnosis, in order (the first candidate that recovers to the signer is the answer):
 *   0. the signature itself: a v byte other than 27/28 (0/1) is tried as both recovery ids; a high s
 *      (the malleated twin) is tried normalized; r or s out of range needs no recovery to say so;
 *   1. this exchange's other domain, same struct: the neg-risk flag read wrong (GET /neg-risk tells it);
 *   2. every domain the platform's clients sign for (known-domains.ts KNOWN_ORDER_DOMAINS: mainnet and
 *      Amoy, V2, V2 neg-risk, V3, V1, V1 neg-risk), V1 with the older struct (taker, expiration, nonce,
 *      feeRateBps as the submission carries them, else 0); a known domain equal to one of ours is skipped;
 *   3. the older V1 struct under this exchange's own domain.
 * Maker and signer swapped needs no recovery: an order reaches the signature check only with signer == the
 * key's address and the maker its type's (rules 4 and 5 of order-check.ts), so a swap is named by the rule
 * refusals instead. v 0/1 against 27/28 is noted, not tried: both recover
 * the same here, but the platform's contract takes 27/28 only.
 *
 * Steps 1 and 2's V2 and V3 domains go first, as one task; the V1 struct's candidates (step 2's V1 domains
 * and step 3) as a second task, made only when the first found nothing.
 *
 * Cost and bounds: at most MAX_DIAGNOSIS_RECOVERIES (12) recoveries per refused order, sent to the
 * signature pool's threads (native secp256k1; the worker stops at the first match, and never runs on this
 * thread); the digests are made here: the V2 struct with eip712.ts (~5 µs each), the V1 struct hashed once
 * with viem's hashStruct (~0.1 ms) and then ~5 µs per V1 domain. The diagnosis budget (budget.ts: its most
 * recoveries taken before it starts, what it did not use given back, per client network, per signer's
 * wallet and in all) caps the work a flood of bad signatures can cause; past it the reason says the
 * signature does not recover to the signer and that further diagnosis was skipped under load. A diagnosis that fails (pool closing) says so and leaves the refusal as it was.
 *
 * A reason names public things only: addresses, domains, chains, contracts, token and condition ids,
 * clocks, amounts, the API key id the request was signed with; never a secret, passphrase or HMAC.
 */
import { hashStruct } from 'viem';
import type { ApiError } from '../../domain/errors.ts';
import type { OrderSubmission as PlacedOrder } from '../../domain/events.ts';
import { GTD_MIN_LEAD_SECONDS, LOT_UNITS } from '../../domain/market-rules.ts';
import { signatureTypeName } from '../../domain/signature-types.ts';
import { PIPS, formatPips, formatUnits } from '../../domain/units.ts';
import { orderDigestBytes, orderDomainSeparator, type OrderDomain, type OrderDomains } from '../auth/eip712.ts';
import type { Funders } from '../auth/funders.ts';
import { keccak256 } from '../auth/keccak.ts';
import type { OrderSubmission } from '../schemas/orders.ts';
import type { OrderToVerify, SigPool } from '../auth/sig-pool.ts';
import { KNOWN_ORDER_DOMAINS, profileAdvice } from './known-domains.ts';
import { DiagnosisBudget, RECOVERY_COST, type DiagnosisParty } from './budget.ts';
import type { Refusal, RefusalClass } from './reason.ts';

/** Most recoveries one refused order's signature diagnosis may cost. */
export const MAX_DIAGNOSIS_RECOVERIES = 12;

/** The process-wide budget the order checks use unless their deps carry another (tests). */
export const SIGNATURE_DIAGNOSES = new DiagnosisBudget();

/** Sets a freshly made error's reason (never a shared instance: the reason is per request) and returns it. */
export function withReason<E extends ApiError>(error: E, refusal: Refusal | undefined): E {
  if (refusal !== undefined) error.reason = refusal;
  return error;
}

const refusal = (cls: RefusalClass, text: string): Refusal => ({ class: cls, text });

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** `x` for a reason: strings as sent (quoted when not plain), numbers as numbers; long values cut. */
function shown(x: unknown): string {
  if (typeof x === 'number') return String(x);
  if (typeof x !== 'string') return JSON.stringify(x) ?? String(x);
  const t = x.length > 80 ? x.slice(0, 77) + '...' : x;
  return /^[0-9A-Za-z.x_-]+$/.test(t) ? t : JSON.stringify(t);
}

function domainText(d: OrderDomain): string {
  return `chain ${d.chainId}, exchange ${d.verifyingContract.toLowerCase()}`;
}

function ourLabel(negRisk: boolean): string {
  return negRisk ? "this exchange's neg-risk domain" : "this exchange's domain";
}

// ---- rule refusals (order-check.ts, synchronous) -----------------------------------------------------------

/** The caller as order-check.ts knows it. */
export interface RefusedCaller {
  apiKey: string;
  /** Lowercase. */
  address: string;
}

/** What a rule reason may look up: the token's market, the signer's funders, and this server's time (unix seconds). */
export interface RuleContext {
  market(tokenId: string): { readonly conditionId: string; readonly negRisk: boolean } | undefined;
  funders: Pick<Funders, 'walletsOf' | 'factories'>;
  now: number;
}

const WALLET_NAMES = ['the signer itself (EOA, signatureType 0)', 'its proxy wallet (POLY_PROXY, signatureType 1)', 'its Safe (POLY_GNOSIS_SAFE, signatureType 2)'] as const;

/**
 * What `maker` is to the key's address, for a reason: which of its wallets it is (then the type that names
 * it), or that it is none of them (then the wallets that are).
 */
function makerIs(maker: string, caller: RefusedCaller, funders: RuleContext['funders']): string {
  const w = funders.walletsOf(caller.address);
  const i = w.indexOf(maker.toLowerCase());
  if (i >= 0) return `order.maker ${maker.toLowerCase()} is ${WALLET_NAMES[i]} of the API key's address ${caller.address}: send signatureType ${i}`;
  return `order.maker ${maker.toLowerCase()} is none of the wallets of the API key's address ${caller.address}: ${w[0]} (signatureType 0), its proxy wallet ${w[1]} (1), its Safe ${w[2]} (2)`;
}

/**
 * The reason of a refusal order-check.ts's `normalize` decided (rules 2-10), from its code and the
 * submission; undefined for a code it has nothing to add to.
 */
export function ruleRefusal(error: ApiError, s: OrderSubmission, caller: RefusedCaller, ctx: RuleContext): Refusal | undefined {
  const o = s.order;
  switch (error.spec.code) {
    case 'PM_ERR_OWNER_MISMATCH': {
      // Echoed only when it is an address or a key id: a client that put something else there (its secret,
      // say) does not get it back in a header or the refusal log.
      const what = ADDRESS.test(s.owner)
        ? `owner ${s.owner} is an address`
        : UUID.test(s.owner)
          ? `owner ${s.owner} is another API key than the one this request is signed with`
          : `owner (${s.owner.length} characters, not an API key id) is not the API key this request is signed with`;
      return refusal('order_owner', `${what}: owner must be the API key id the request is signed with (${caller.apiKey})`);
    }
    case 'PM_ERR_SIGNATURE_TYPE': {
      const name = signatureTypeName(o.signatureType);
      const why =
        o.signatureType === 3
          ? "a POLY_1271 order is valid when its contract wallet's isValidSignature (ERC-1271) says so, which needs that contract's code on a chain"
          : 'the platform defines 0 to 3';
      return refusal(
        'order_signature_type',
        `signature type ${o.signatureType}${name ? ` (${name})` : ''} is not supported: this exchange verifies EOA (0), POLY_PROXY (1) and POLY_GNOSIS_SAFE (2) orders, signed by the API key's address ${caller.address}; ${why}`,
      );
    }
    case 'PM_ERR_SIGNER_MISMATCH': {
      const funder = ctx.funders.walletsOf(caller.address).indexOf(o.signer.toLowerCase());
      const swapped =
        funder > 0
          ? ` (it is the key's ${funder === 1 ? 'proxy wallet' : 'Safe'}: a funder is the maker, the key's address signs)`
          : o.maker.toLowerCase() === caller.address
            ? ' (the maker is: maker and signer look swapped)'
            : '';
      return refusal('order_signer', `order.signer ${o.signer.toLowerCase()} is not the address of the API key the request is signed with, ${caller.address}${swapped}: sign with that key's wallet, or use an API key of ${o.signer.toLowerCase()}`);
    }
    case 'PM_ERR_MAKER_SIGNER':
      return refusal('order_signer', `order.maker ${o.maker.toLowerCase()} is not order.signer ${o.signer.toLowerCase()}: an EOA order (signatureType 0) is made by its signer; ${makerIs(o.maker, caller, ctx.funders)}`);
    case 'PM_ERR_MAKER_WALLET': {
      const type = o.signatureType as 1 | 2;
      const f = type === 1 ? ctx.funders.factories.proxy : ctx.funders.factories.safe;
      const kind = type === 1 ? 'proxy' : 'Safe';
      const expected = ctx.funders.walletsOf(caller.address)[type];
      return refusal(
        'order_signer',
        `a ${signatureTypeName(type)} order's maker is the ${kind} wallet its signer controls: the ${kind} factory ${f.factory.toLowerCase()} derives ${expected} from ${caller.address} (CREATE2, as the platform's exchange checks it); ${makerIs(o.maker, caller, ctx.funders)}`,
      );
    }
    case 'PM_ERR_BAD_REQUEST':
      if (error.message === 'invalid order.tokenId') {
        return refusal('order_market', `order.tokenId ${shown(o.tokenId)} is not a canonical token id: a decimal uint256 without leading zeros, as GET /markets lists it`);
      }
      return undefined;
    case 'PM_ERR_MARKET_UNKNOWN':
      return refusal('order_market', `token ${shown(o.tokenId)} names no market on this exchange (GET /markets lists the token ids it trades; the platform's own markets are here only when imported)`);
    case 'PM_ERR_CONDITION_MISMATCH': {
      const m = ctx.market(o.tokenId);
      const of = m ? `; token ${o.tokenId}'s market is ${m.conditionId}` : '';
      return refusal('order_market', `order.conditionId ${shown(o.conditionId)} is not the market of token ${o.tokenId}${of}: send that conditionId or leave it out`);
    }
    case 'PM_ERR_POST_ONLY_TYPE':
      return refusal('order_rule', `postOnly is set on a ${s.orderType} order: a post-only order must rest on the book, so only GTC and GTD take it`);
    case 'PM_ERR_ORDER_EXPIRATION': {
      const top = s.expiration !== undefined;
      return expirationRefusal(s.orderType, top ? s.expiration! : (o.expiration ?? 0), top ? 'expiration' : 'order.expiration', ctx.now);
    }
    case 'PM_ERR_ORDER_AMOUNTS':
      return amountsRefusal(o.makerAmount, o.takerAmount, o.side);
    default:
      return undefined;
  }
}

/** GTD: at least GTD_MIN_LEAD_SECONDS ahead; any other type: 0. `where` names the field it came from. */
function expirationRefusal(orderType: string, value: string | number, where: string, now: number): Refusal {
  const n = typeof value === 'number' ? value : /^\d{1,16}$/.test(value) ? Number(value) : NaN;
  const server = `this server's time is ${now} (GET /time)`;
  if (!Number.isSafeInteger(n)) return refusal('order_expiration', `${where} ${shown(value)} is not a time: expiration is unix seconds, a whole number`);
  if (orderType !== 'GTD') {
    return refusal('order_expiration', `${where} ${n} is set on a ${orderType} order: only GTD orders expire; send 0 or leave it out (or send orderType GTD)`);
  }
  if (n === 0) return refusal('order_expiration', `a GTD order needs an expiration (unix seconds, at least ${GTD_MIN_LEAD_SECONDS} s ahead); ${where} is 0; ${server}`);
  const lead = n - now;
  const ahead = lead >= 0 ? `${lead} s ahead of this server` : `${-lead} s in the past`;
  return refusal('order_expiration', `GTD ${where} ${n} is ${ahead}, ${GTD_MIN_LEAD_SECONDS - lead} s short of the minimum ${GTD_MIN_LEAD_SECONDS} s ahead; ${server}`);
}

/** makerAmount/takerAmount: whole units (10^-6) below 2^53, positive. */
function amountsRefusal(maker: string | number, taker: string | number, side: string): Refusal {
  const what = side === 'BUY' ? 'a BUY offers makerAmount USDC for takerAmount tokens' : 'a SELL offers makerAmount tokens for takerAmount USDC';
  for (const [field, v] of [['makerAmount', maker], ['takerAmount', taker]] as const) {
    const text = String(v);
    if (/^\d+\.\d+$/.test(text)) {
      return refusal('order_amounts', `${field} ${text} is a decimal: amounts are whole units of 10^-6 (${text} would be ${formatUnitsText(text)}); ${what}`);
    }
    if (!/^\d+$/.test(text)) return refusal('order_amounts', `${field} ${shown(v)} is not a whole number: amounts are integer units of 10^-6 as decimal text or a JSON integer; ${what}`);
    if (!Number.isSafeInteger(Number(text))) return refusal('order_amounts', `${field} ${text} is above 2^53 - 1 units (${Number.MAX_SAFE_INTEGER}), more than this exchange can hold`);
    if (/^0+$/.test(text)) return refusal('order_amounts', `${field} is 0: both amounts must be positive; ${what}`);
  }
  return refusal('order_amounts', `makerAmount ${maker} and takerAmount ${taker} are not positive whole units of 10^-6; ${what}`);
}

/** "1.5" as units (1500000), for a reason only. */
function formatUnitsText(decimal: string): string {
  const [i, f = ''] = decimal.split('.');
  if (f.length > 6) return `${i}${f.slice(0, 6)}.${f.slice(6)} units: finer than 10^-6`;
  return `${BigInt(i! + f.padEnd(6, '0'))}`;
}

/**
 * A POST /orders element that failed the submission schema: the older V1 order (taker, nonce, feeRateBps,
 * no timestamp) is named; any other shape problem is what the body already says.
 */
export function shapeRefusal(raw: unknown): Refusal | undefined {
  const order = (raw as { order?: unknown } | null)?.order;
  if (typeof order !== 'object' || order === null) return undefined;
  const o = order as Record<string, unknown>;
  if (o.timestamp !== undefined || !('nonce' in o || 'feeRateBps' in o || 'taker' in o)) return undefined;
  return refusal(
    'order_signature',
    'this is the older V1 order struct (taker, expiration, nonce, feeRateBps; no timestamp): this exchange takes the V2 order (timestamp, metadata, builder) signed for its domain (GET /exchange-info), as @polymarket/clob-client-v2 builds it',
  );
}

// ---- admission refusals (sandbox and engine) ----------------------------------------------------------

/** The market as the engine holds it, for a reason. */
export interface AdmissionMarket {
  readonly tickPips: number;
  readonly minSizeUnits: number;
  readonly acceptingOrders: boolean;
  /** -1 while trading, else the winning outcome. */
  readonly resolved: number;
}

export interface AdmissionContext {
  market(conditionId: string): AdmissionMarket | undefined;
  /** The wallet's available USDC and tokens (only read for a balance refusal). */
  balances(wallet: string): { usdc: { available: number }; tokens: ReadonlyArray<{ tokenId: string; available: number }> };
  /** What its trades still settling delivered and it cannot spend yet (sandbox.trades; only read for a balance refusal). */
  unsettled?(wallet: string): { usdc: number; tokens: ReadonlyArray<{ tokenId: string; pending: number }> };
  /** Unix seconds. */
  now: number;
}

/** What a balance reason adds when trades still settling hold some of it (they become spendable when MINED). */
function settling(units: number, what: string): string {
  if (units <= 0) return '';
  return `; ${formatUnits(units)} more ${what} are held by trades still settling (MATCHED or RETRYING: spendable once MINED, as on the platform; GET /data/trades shows their status)`;
}

/**
 * The reason of what the sandbox or the engine refused of an order that passed the checks, from the
 * error's code and vars and the order; undefined for a server fault (engine down or busy, journal) or a
 * code with nothing to add.
 */
export function admissionRefusal(error: ApiError, order: PlacedOrder & { conditionId?: string }, ctx: AdmissionContext): Refusal | undefined {
  const m = order.conditionId === undefined ? undefined : ctx.market(order.conditionId);
  const buy = order.side === 'BUY';
  const rests = order.orderType === 'GTC' || order.orderType === 'GTD';
  const size = buy ? order.takerAmount : order.makerAmount;
  const usdc = buy ? order.makerAmount : order.takerAmount;
  switch (error.spec.code) {
    case 'PM_ERR_CLOSED_ONLY':
      return refusal('order_rule', `wallet ${String(error.vars?.address ?? order.wallet)} is in closed-only mode (set by the exchange's admin): only SELL orders, which reduce a position, and cancels are accepted`);
    case 'PM_ERR_POST_ONLY_MODE': {
      const secs = error.extra?.retry_after_seconds;
      return refusal('order_rule', `a post-only period after a maintenance window is under way${typeof secs === 'number' ? ` for ${secs} s more` : ''}: only orders with postOnly true (GTC/GTD) are accepted until it ends`);
    }
    case 'PM_ERR_ORDER_TICK': {
      const tick = m?.tickPips;
      const tickText = tick === undefined ? String(error.vars?.tick ?? '?') : formatPips(tick);
      if (!rests) {
        return refusal('order_tick', `${order.orderType} ${order.side} worst price ${usdc}/${size} = ${String(error.vars?.price ?? usdc / size)} is outside the whole pips 0.0001..0.9999`);
      }
      const scaled = usdc * PIPS;
      if (!Number.isSafeInteger(scaled) || scaled % size !== 0) {
        return refusal('order_tick', `price ${usdc / size} (${buy ? 'makerAmount/takerAmount' : 'takerAmount/makerAmount'} ${usdc}/${size}) is not a whole number of pips, so not a multiple of the market's tick ${tickText}`);
      }
      const pips = scaled / size;
      if (tick !== undefined && pips % tick === 0) {
        return refusal('order_tick', `price ${formatPips(pips)} is outside the market's range [${formatPips(tick)}, ${formatPips(PIPS - tick)}] (tick ${tickText})`);
      }
      return refusal('order_tick', `price ${formatPips(pips)} is not a multiple of the market's tick ${tickText} (GET /tick-size)`);
    }
    case 'PM_ERR_ORDER_MIN_SIZE':
      return refusal('order_size', `size ${String(error.vars?.size ?? formatUnits(size))} tokens is under the market's minimum order size ${String(error.vars?.min ?? (m ? formatUnits(m.minSizeUnits) : '?'))} (GET /book min_order_size)`);
    case 'PM_ERR_ORDER_AMOUNTS': {
      const field = buy ? 'takerAmount' : 'makerAmount';
      if (size % LOT_UNITS !== 0) return refusal('order_amounts', `size ${formatUnits(size)} tokens (${order.side} ${field} ${size}) is not a whole number of 0.01 tokens (${LOT_UNITS} units)`);
      return refusal('order_amounts', `${String(error.vars?.detail ?? error.message)} (makerAmount ${order.makerAmount}, takerAmount ${order.takerAmount})`);
    }
    case 'PM_ERR_MARKET_NOT_READY': {
      const state =
        m === undefined ? 'is not known to the engine' : m.resolved >= 0 ? `is resolved (outcome ${m.resolved} won)` : !m.acceptingOrders ? 'is not accepting orders (accepting_orders false)' : 'is being resolved';
      return refusal('order_rule', `market ${order.conditionId ?? '?'} ${state}: it takes no new orders`);
    }
    case 'PM_ERR_MARKET_UNKNOWN':
      return refusal('order_market', `token ${order.tokenId} names no market in the engine (it may have been removed since the check)`);
    case 'PM_ERR_MARKET_RESOLVED':
      return refusal('order_rule', `market ${order.conditionId ?? '?'} is resolved: it takes no new orders (redeem instead)`);
    case 'PM_ERR_BALANCE': {
      const b = ctx.balances(order.wallet);
      const funder = order.wallet === order.signer ? '' : ` (the order's maker: a signatureType ${order.signatureType} order spends its funder's balance, not its signer's)`;
      const u = ctx.unsettled?.(order.wallet);
      if (buy) {
        return refusal(
          'order_rule',
          `a BUY reserves its USDC: ${formatUnits(order.makerAmount)} (makerAmount) plus the taker fee it may pay, and wallet ${order.wallet}${funder} has ${formatUnits(b.usdc.available)} USDC available (GET /balance-allowance${order.wallet === order.signer ? '' : `?signature_type=${order.signatureType}`})${settling(u?.usdc ?? 0, 'USDC')}`,
        );
      }
      const t = b.tokens.find((x) => x.tokenId === order.tokenId)?.available ?? 0;
      const held = u?.tokens.find((x) => x.tokenId === order.tokenId)?.pending ?? 0;
      return refusal(
        'order_rule',
        `a SELL reserves the tokens it offers: ${formatUnits(order.makerAmount)} (makerAmount) of token ${order.tokenId}, and wallet ${order.wallet}${funder} has ${formatUnits(t)} available (GET /balance-allowance?asset_type=CONDITIONAL${order.wallet === order.signer ? '' : `&signature_type=${order.signatureType}`})${settling(held, 'of them')}`,
      );
    }
    case 'PM_ERR_POST_ONLY_TYPE':
      return refusal('order_rule', `postOnly is set on a ${order.orderType} order: a post-only order must rest on the book, so only GTC and GTD take it`);
    case 'PM_ERR_ORDER_EXPIRATION':
      return expirationRefusal(order.orderType, order.expiration, 'expiration', ctx.now);
    case 'PM_ERR_POST_ONLY_CROSSES':
      return refusal('order_rule', `the post-only ${order.side} at ${rests && Number.isSafeInteger((usdc * PIPS) / size) ? formatPips((usdc * PIPS) / size) : usdc / size} would match the resting orders on the other side (GET /book): a post-only order only rests`);
    case 'PM_ERR_FOK_NOT_FILLED':
      return refusal('order_rule', `the book could not fill all ${formatUnits(size)} tokens of this FOK ${order.side} within its worst price at once (GET /book); nothing was filled`);
    case 'PM_ERR_FAK_NO_MATCH':
      return refusal('order_rule', `no resting order on the other side of the book was within this FAK ${order.side}'s worst price (GET /book); nothing was filled`);
    case 'PM_ERR_DUPLICATE_ORDER':
      return refusal('order_rule', `an order with this id (the same signed fields, salt included) is already known: use a fresh salt for a new order`);
    default:
      return undefined;
  }
}

// ---- signature diagnosis ----------------------------------------------------------------------------

/** A refused signature: what was verified, the submission as sent, and what it recovered to. */
export interface SignatureCase {
  /** The order's signed fields as verified (signer == the key's address, maker its type's), signature and neg-risk flag. */
  verify: OrderToVerify;
  /** The submission as sent: the older struct's taker, expiration, nonce and feeRateBps are read from it. */
  submission: unknown;
  /** What the signature recovered to under this exchange's domain for the market (undefined: nothing). */
  recovered: string | undefined;
}

export interface SignatureDiagnosisDeps {
  pool: Pick<SigPool, 'recoverDigests'>;
  domains: OrderDomains;
  budget: DiagnosisBudget;
  /** Who pays for it (budget.ts): the caller's client address and the order's signer. */
  by?: DiagnosisParty;
}

interface Candidate {
  digest: Uint8Array;
  signature: string;
  /** What the reason says when this candidate recovers to the signer. */
  says: string;
}

const V1_TYPES = {
  Order: [
    { name: 'salt', type: 'uint256' },
    { name: 'maker', type: 'address' },
    { name: 'signer', type: 'address' },
    { name: 'taker', type: 'address' },
    { name: 'tokenId', type: 'uint256' },
    { name: 'makerAmount', type: 'uint256' },
    { name: 'takerAmount', type: 'uint256' },
    { name: 'expiration', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'feeRateBps', type: 'uint256' },
    { name: 'side', type: 'uint8' },
    { name: 'signatureType', type: 'uint8' },
  ],
} as const;

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** A uint256 field of the submission as a BigInt: as carried, else 0 (what the V1 client sends by default). */
function uintOf(v: unknown): bigint {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'string' && /^\d{1,78}$/.test(v)) return BigInt(v);
  return 0n;
}

/**
 * The V1 struct's hashStruct of the order (viem: refusal path only). It is the same under every domain, so
 * one diagnosis hashes it once and each V1 candidate adds only its domain (v1Digest).
 */
function v1StructHash(v: OrderToVerify, submission: unknown): Uint8Array {
  const s = (submission ?? {}) as { expiration?: unknown; order?: Record<string, unknown> };
  const o = s.order ?? {};
  const taker = typeof o.taker === 'string' && ADDRESS.test(o.taker) ? o.taker : ZERO_ADDRESS;
  const hex = hashStruct({
    types: V1_TYPES,
    primaryType: 'Order',
    data: {
      salt: BigInt(v.salt),
      maker: v.maker as `0x${string}`,
      signer: v.signer as `0x${string}`,
      taker: taker as `0x${string}`,
      tokenId: BigInt(v.tokenId),
      makerAmount: BigInt(v.makerAmount),
      takerAmount: BigInt(v.takerAmount),
      expiration: uintOf(o.expiration ?? s.expiration),
      nonce: uintOf(o.nonce),
      feeRateBps: uintOf(o.feeRateBps),
      side: v.side,
      signatureType: v.signatureType,
    },
  });
  return Buffer.from(hex.slice(2), 'hex');
}

/** EIP-712's digest, keccak256(0x1901 ‖ domain separator ‖ struct hash), of a V1 struct hash under `d`. */
function v1Digest(structHash: Uint8Array, d: OrderDomain): Uint8Array {
  return keccak256(Buffer.concat([EIP712_PREFIX, separatorOf(d), structHash]));
}

const EIP712_PREFIX = Buffer.from([0x19, 0x01]);

// A domain's separator costs three keccak calls: each domain object (ours, the known ones) is encoded once.
const separators = new WeakMap<OrderDomain, Uint8Array>();
function separatorOf(d: OrderDomain): Uint8Array {
  let sep = separators.get(d);
  if (sep === undefined) {
    sep = orderDomainSeparator(d);
    separators.set(d, sep);
  }
  return sep;
}

const sameDomain = (a: OrderDomain, b: OrderDomain) =>
  a.chainId === b.chainId && a.name === b.name && a.version === b.version && a.verifyingContract.toLowerCase() === b.verifyingContract.toLowerCase();

/**
 * The candidates of steps 1-3 of the header, in order, as two rounds: the V2 struct first (this exchange's
 * other domain, the platform's V2 and V3 exchanges: what current clients send, a few µs a digest), then the
 * older V1 struct (hashed once with viem, ~0.1 ms), made only when the first round found nothing.
 */
function candidates(c: SignatureCase, domains: OrderDomains, signature: string, round: 'v2' | 'v1'): Candidate[] {
  const v = c.verify;
  const ours = v.negRisk ? domains.negRisk : domains.normal;
  const other = v.negRisk ? domains.normal : domains.negRisk;
  const out: Candidate[] = [];
  const structHash = round === 'v1' ? v1StructHash(v, c.submission) : undefined;
  const neg = `token ${v.tokenId}'s market has neg_risk ${v.negRisk} (GET /neg-risk?token_id=${v.tokenId} tells it)`;
  if (round === 'v2' && !sameDomain(ours, other)) {
    out.push({
      digest: orderDigestBytes(v, separatorOf(other)),
      signature,
      says: `it recovers to the signer under ${ourLabel(!v.negRisk)} (${domainText(other)}), but ${neg}: sign its orders for ${ourLabel(v.negRisk)}`,
    });
  }
  for (const k of KNOWN_ORDER_DOMAINS) {
    if (k.struct !== round || sameDomain(k.domain, domains.normal) || sameDomain(k.domain, domains.negRisk)) continue;
    const flag = k.negRisk === v.negRisk ? '' : ` (and ${neg})`;
    let digest: Uint8Array;
    let advice: string;
    if (k.struct === 'v1') {
      digest = v1Digest(structHash!, k.domain);
      advice = `this exchange verifies the V2 order struct (timestamp, metadata, builder) under its own domain: sign that for ${ourLabel(v.negRisk)} (GET /exchange-info)${flag}`;
    } else {
      digest = orderDigestBytes(v, separatorOf(k.domain));
      advice = `sign for ${ourLabel(v.negRisk)} (GET /exchange-info)${profileAdvice(k.profile)}${flag}`;
    }
    out.push({ digest, signature, says: `it recovers to the signer under ${k.label} (chain ${k.domain.chainId}): ${advice}` });
  }
  if (round === 'v1') {
    out.push({
      digest: v1Digest(structHash!, ours),
      signature,
      says: `it recovers to the signer when read as the older V1 order struct (taker, expiration, nonce, feeRateBps) under ${ourLabel(v.negRisk)}: sign the V2 struct (timestamp, metadata, builder) instead`,
    });
  }
  return out;
}

/**
 * Why the order's signature does not recover to its signer, tried as the header describes. Never throws:
 * a diagnosis that cannot finish says so.
 */
export async function diagnoseSignature(c: SignatureCase, deps: SignatureDiagnosisDeps): Promise<Refusal> {
  const v = c.verify;
  const signer = v.signer.toLowerCase();
  const ours = v.negRisk ? deps.domains.negRisk : deps.domains.normal;
  const under = `under ${ourLabel(v.negRisk)} (${domainText(ours)})`;
  const sig = v.signature.toLowerCase();
  const vByte = parseInt(sig.slice(130, 132), 16);
  const s = BigInt('0x' + sig.slice(66, 130));
  const r = BigInt('0x' + sig.slice(2, 66));
  const head = c.recovered === undefined ? `order signature does not recover ${under}` : `order signature recovers to ${c.recovered} ${under}, not to the signer ${signer}`;

  if (r === 0n || r >= N || s === 0n || s >= N) return refusal('order_signature', `order signature does not recover to any address: r or s is zero or not below the curve order`);
  // Priced by its recoveries (budget.ts), for the caller's network and the signer's wallet; what it did not use goes back.
  const by: DiagnosisParty = { ...deps.by, wallet: signer };
  const reserved = MAX_DIAGNOSIS_RECOVERIES * RECOVERY_COST;
  if (!deps.budget.take(by, reserved)) return refusal('order_signature', `order signature does not recover to the signer ${signer} ${under}; further diagnosis skipped under load`);
  let recoveries = 0;
  const recover = (tries: Array<{ digest: Uint8Array; signature: string }>) => {
    recoveries += tries.length;
    return deps.pool.recoverDigests(tries, signer);
  };

  try {
    if (![0, 1, 27, 28].includes(vByte)) {
      const digest = orderDigestBytes(v, separatorOf(ours));
      const tries = ['1b', '1c'].map((vv) => ({ digest, signature: sig.slice(0, 130) + vv }));
      const got = await recover(tries);
      const hit = got.findIndex((a) => a === signer);
      const fix = hit >= 0 ? `; with v ${27 + hit} it recovers to the signer ${under}: send v as 27/28 (v with a chain id, EIP-155 style, is for transactions, not EIP-712 signatures)` : '';
      return refusal('order_signature', `order signature's v byte is ${vByte}: expected 27 or 28 (0/1 also taken)${fix}`);
    }
    if (s > N / 2n) {
      const low = sig.slice(0, 66) + (N - s).toString(16).padStart(64, '0') + (vByte >= 27 ? 55 - vByte : 1 - vByte).toString(16).padStart(2, '0');
      const [got] = await recover([{ digest: orderDigestBytes(v, separatorOf(ours)), signature: low }]);
      const then = got === signer ? 'the signer' : got ?? 'no address';
      return refusal(
        'order_signature',
        `order signature has a high s (above n/2, the malleated twin of a low-s signature), refused as the platform's exchange contract refuses it; normalized (s -> n - s, v flipped) it recovers to ${then} ${under}: normalize s before sending`,
      );
    }
    const vNote = vByte < 27 ? ` (v is ${vByte}: taken here, but the platform's contract takes only 27/28)` : '';
    let left = MAX_DIAGNOSIS_RECOVERIES;
    for (const round of ['v2', 'v1'] as const) {
      const list = candidates(c, deps.domains, sig, round).slice(0, left);
      left -= list.length;
      const got = await recover(list.map((x) => ({ digest: x.digest, signature: x.signature })));
      const hit = got.findIndex((a) => a === signer);
      if (hit >= 0) return refusal('order_signature', `${head}; ${list[hit]!.says}${vNote}`);
    }
    return refusal(
      'order_signature',
      `${head}; nor under ${ourLabel(!v.negRisk)}, the platform's V2, V3 or V1 exchanges (chains 137 and 80002) or as the V1 struct: a signed field differs from what was signed (amounts, side, token, salt, timestamp, metadata, builder) or another key signed it${vNote}`,
    );
  } catch {
    return refusal('order_signature', `order signature does not recover to the signer ${signer} ${under}; further diagnosis failed`);
  } finally {
    deps.budget.refund(by, reserved - recoveries * RECOVERY_COST);
  }
}
