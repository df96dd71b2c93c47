/**
 * Why an order was refused (refusals/reason.ts): the X-Refusal-Reason text of POST /order and POST /orders.
 * The body keeps the platform's words; this module only ever adds a reason to an ApiError that was already
 * decided, on the refusal path, and never changes the decision. Three kinds (the first two here):
 *
 *   rules      order-check.ts's synchronous refusals (owner, signature type, signer/maker, token, market,
 *              post-only type, expiration, amounts) and a batch element's shape: derived from the error
 *              code and the submission, no crypto but the signer's funders (funders.ts, cached)
 *              (ruleRefusal, shapeRefusal);
 *   admission  what the sandbox and the engine refuse of a checked order (closed-only, post-only period,
 *              tick, minimum size, market state, balance, matching outcomes): derived from the code, its
 *              vars, the order and the market (admissionRefusal);
 *   signature  an order whose EIP-712 signature does not recover to its signer: order-signature.ts
 *              (diagnoseSignature) tries the common mistakes.
 *
 * A reason names public things only: addresses, domains, chains, contracts, token and condition ids,
 * clocks, amounts, the API key id the request was signed with; never a secret, passphrase or HMAC.
 */
import type { ApiError } from '../../domain/errors.ts';
import type { OrderSubmission as PlacedOrder } from '../../domain/events.ts';
import { GTD_MIN_LEAD_SECONDS, LOT_UNITS } from '../../domain/market-rules.ts';
import { signatureTypeName } from '../../domain/signature-types.ts';
import { PIPS, formatPips, formatUnits } from '../../domain/units.ts';
import type { OrderDomain } from '../auth/eip712.ts';
import type { Funders } from '../auth/funders.ts';
import type { OrderSubmission } from '../schemas/orders.ts';
import type { Refusal, RefusalClass } from './reason.ts';

/** Sets a freshly made error's reason (never a shared instance: the reason is per request) and returns it. */
export function withReason<E extends ApiError>(error: E, refusal: Refusal | undefined): E {
  if (refusal !== undefined) error.reason = refusal;
  return error;
}

const refusal = (cls: RefusalClass, text: string): Refusal => ({ class: cls, text });

export const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** `x` for a reason: strings as sent (quoted when not plain), numbers as numbers; long values cut. */
function shown(x: unknown): string {
  if (typeof x === 'number') return String(x);
  if (typeof x !== 'string') return JSON.stringify(x) ?? String(x);
  const t = x.length > 80 ? x.slice(0, 77) + '...' : x;
  return /^[0-9A-Za-z.x_-]+$/.test(t) ? t : JSON.stringify(t);
}

/** A domain for a reason: its chain and exchange contract. */
export function domainText(d: OrderDomain): string {
  return `chain ${d.chainId}, exchange ${d.verifyingContract.toLowerCase()}`;
}

/** How a reason names one of this exchange's own two order domains. */
export function ourLabel(negRisk: boolean): string {
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
