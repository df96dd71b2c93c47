/**
 * Counterparties on call (the sandbox's test controls; routes/test-controls.ts): what a bot's test arranges
 * around the bot without holding anyone's private key.
 *
 *   place(spec)            an order as any wallet: built as the official client builds it (maker = signer =
 *                          the wallet, EIP-712 id under the service's own domain), with owner ADMIN_OWNER and
 *                          no signature, and placed through the engine like any order: it matches, rests,
 *                          settles and is journaled exactly as a signed one, and shows `owner: "admin"`
 *                          wherever an order or trade shows its owner;
 *   cancel(...)            any wallet's orders (by id, or all of a wallet's in a market or token);
 *   credit(...)            outcome tokens to a wallet (engine `credit`: complete sets, the other half to the
 *                          house wallet), beside the admin API's USDC deposits;
 *   setBook(token, ...)    a token's book in one call: the named makers' orders on its market are canceled,
 *                          the makers funded with what their levels need, and each level placed post-only;
 *   fill(orderId, ...)     a trade against a resting order: a taker (funded as needed) takes the book up to
 *                          that order's price, FAK, for the size asked;
 *   sweep(...)             a taker's FAK through the book to a price (scenarios).
 *
 * What the admin acts as: the operator, not a client. Admin-made orders skip what the edge asks of clients
 * (signature, API key, rate limits, closed-only mode, maintenance windows, the post-only period) and nothing
 * the engine asks of every order (market open, tick, minimum size, balance, self-trade rules). Amounts are
 * integers (units, pips): the routes parse the decimals.
 */
import { randomInt } from 'node:crypto';
import { keccak256 } from 'ox/Hash';
import { fromString } from 'ox/Hex';
import { privateKeyToAccount } from 'viem/accounts';
import { ADMIN_OWNER, type OrderTypeName, type SideName } from '../../domain/events.ts';
import { apiError, resultError } from '../../domain/errors.ts';
import { PIPS } from '../../domain/units.ts';
import type { CancelResponse, Engine, PlaceResponse } from '../../engine/engine.ts';
import type { Clock } from '../../runtime/clock.ts';
import { orderDigest, orderDomainSeparator, type OrderDomains } from '../auth/eip712.ts';

export type CounterpartyEngine = Pick<
  Engine,
  'placeOrder' | 'cancelOrders' | 'cancelMarketOrders' | 'getOrder' | 'balances' | 'deposit' | 'creditTokens' | 'tokenMarketOf' | 'afterCommit'
>;

export interface CounterpartyDeps {
  engine: CounterpartyEngine;
  domains: OrderDomains;
  clock: Clock;
}

export interface AdminOrderSpec {
  wallet: string;
  tokenId: string;
  side: SideName;
  pricePips: number;
  sizeUnits: number;
  orderType: OrderTypeName;
  /** GTD: unix seconds. */
  expiration?: number;
  postOnly?: boolean;
}

export interface BookLevel {
  pricePips: number;
  sizeUnits: number;
  maker: string;
}

export interface SetBookResult {
  conditionId: string;
  canceled: number;
  orders: Array<{ side: SideName; pricePips: number; sizeUnits: number; maker: string; answer: PlaceResponse }>;
}

const ZERO32 = `0x${'0'.repeat(64)}`;

/** A wallet from a public string (TEST ONLY keys: anyone can derive them), as the demo's are. */
function houseWallet(name: string): { address: string; privateKey: `0x${string}` } {
  const privateKey = keccak256(fromString(`pm-exchange ${name}`));
  return { address: privateKeyToAccount(privateKey).address.toLowerCase(), privateKey };
}

/** The default counterparties of the admin API: the maker of books set without one, the taker of fills. */
export const HOUSE_MAKER = houseWallet('house maker').address;
export const HOUSE_TAKER = houseWallet('house taker').address;
/** A lot: sizes are whole hundredths of a token (domain/units.ts), so a level's notional is whole units. */
const LOT_UNITS = 10_000;

export class Counterparties {
  private readonly separators: { normal: Uint8Array; negRisk: Uint8Array };

  constructor(private readonly d: CounterpartyDeps) {
    this.separators = { normal: orderDomainSeparator(d.domains.normal), negRisk: orderDomainSeparator(d.domains.negRisk) };
  }

  /** Places an admin-made order; a refusal of the engine throws its error (400 with the platform's text). */
  async place(s: AdminOrderSpec): Promise<PlaceResponse> {
    const tm = this.market(s.tokenId);
    if (s.sizeUnits <= 0 || s.sizeUnits % LOT_UNITS !== 0) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: ['size must be a positive whole number of hundredths of a token'] });
    if (s.pricePips <= 0 || s.pricePips >= PIPS) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: ['price must lie strictly between 0 and 1'] });
    // Whole lots at a whole number of pips: the notional is whole units, as the official client computes it.
    const usdc = (s.sizeUnits * s.pricePips) / PIPS;
    const buy = s.side === 'BUY';
    const makerAmount = buy ? usdc : s.sizeUnits;
    const takerAmount = buy ? s.sizeUnits : usdc;
    const salt = String(randomInt(2 ** 47));
    const timestamp = String(this.d.clock.now());
    const struct = {
      salt,
      maker: s.wallet,
      signer: s.wallet,
      tokenId: s.tokenId,
      makerAmount: String(makerAmount),
      takerAmount: String(takerAmount),
      side: (buy ? 0 : 1) as 0 | 1,
      signatureType: 0,
      timestamp,
      metadata: ZERO32,
      builder: ZERO32,
    };
    const orderId = orderDigest(struct, tm.market.negRisk ? this.separators.negRisk : this.separators.normal);
    const r = await this.d.engine.placeOrder({
      orderId,
      wallet: s.wallet,
      tokenId: s.tokenId,
      side: s.side,
      orderType: s.orderType,
      postOnly: s.postOnly === true,
      makerAmount,
      takerAmount,
      expiration: s.orderType === 'GTD' ? (s.expiration ?? 0) : 0,
      builder: ZERO32,
      owner: ADMIN_OWNER,
      signer: s.wallet,
      salt,
      timestamp,
      signatureType: 0,
      signature: '',
    });
    if (!r.ok) throw resultError(r.code, { ...r.vars, id: orderId, tokenId: s.tokenId });
    return r;
  }

  /**
   * Cancels orders by id, whoever's they are; an unknown id is listed as not found. The engine cancels an order
   * for its signer (a proxy wallet's or Safe's order is its EOA's to cancel), so the ids go by signer.
   */
  async cancelIds(orderIds: readonly string[]): Promise<CancelResponse> {
    const bySigner = new Map<string, string[]>();
    const out: CancelResponse = { canceled: [], notCanceled: {} };
    for (const raw of orderIds) {
      const id = raw.toLowerCase();
      const o = this.d.engine.getOrder(id);
      if (o === undefined) {
        out.notCanceled[id] = 'order not found';
        continue;
      }
      const list = bySigner.get(o.signer);
      if (list === undefined) bySigner.set(o.signer, [id]);
      else list.push(id);
    }
    for (const r of await Promise.all([...bySigner].map(([signer, ids]) => this.d.engine.cancelOrders(signer, ids)))) {
      out.canceled.push(...r.canceled);
      Object.assign(out.notCanceled, r.notCanceled);
    }
    return out;
  }

  /**
   * Cancels the open orders `wallet` signed (its own, and its proxy wallet's and Safe's when it is their EOA),
   * in a market and/or a token when given: what DELETE /cancel-market-orders cancels for that address's key.
   */
  cancelWallet(wallet: string, f: { conditionId?: string; tokenId?: string }): Promise<CancelResponse> {
    return this.d.engine.cancelMarketOrders(wallet, f);
  }

  /** Credits outcome tokens; `pricePips` is their cost in the wallet's position. */
  async credit(wallet: string, tokenId: string, units: number, pricePips: number): Promise<void> {
    const tm = this.market(tokenId);
    const r = await this.d.engine.creditTokens(wallet, tm.market.conditionId, tm.outcome, units, pricePips);
    if (!r.ok) throw resultError(r.code, { wallet, tokenId, conditionId: tm.market.conditionId });
  }

  /**
   * Sets a token's book to the given levels (prices of this token): every open order the levels' makers have
   * on its market is canceled, each maker is funded with what its levels need (USDC for bids, this token for
   * asks), and each level is placed as a post-only GTC order (one that would cross another wallet's order is
   * refused, and listed so). Bids must lie below asks. Other wallets' orders stay where they are.
   */
  async setBook(tokenId: string, bids: readonly BookLevel[], asks: readonly BookLevel[]): Promise<SetBookResult> {
    const tm = this.market(tokenId);
    const problems: string[] = [];
    for (const l of [...bids, ...asks]) {
      if (l.sizeUnits <= 0 || l.sizeUnits % LOT_UNITS !== 0) problems.push(`size ${l.sizeUnits / 1e6} is not a whole number of hundredths of a token`);
      if (l.pricePips <= 0 || l.pricePips >= PIPS || l.pricePips % tm.market.tickPips !== 0) problems.push(`price ${l.pricePips / PIPS} is not on the market's tick ${tm.market.tickPips / PIPS}`);
    }
    const bestBid = Math.max(-1, ...bids.map((l) => l.pricePips));
    const bestAsk = Math.min(Infinity, ...asks.map((l) => l.pricePips));
    if (bestBid >= bestAsk) problems.push(`the bids (best ${bestBid / PIPS}) cross the asks (best ${bestAsk / PIPS})`);
    if (problems.length > 0) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: problems });

    const conditionId = tm.market.conditionId;
    const makers = [...new Set([...bids, ...asks].map((l) => l.maker))];
    let canceled = 0;
    for (const r of await Promise.all(makers.map((m) => this.d.engine.cancelMarketOrders(m, { conditionId })))) canceled += r.canceled.length;
    const feeBps = Math.max(tm.market.makerFeeBps, tm.market.takerFeeBps);
    for (const m of makers) {
      const mine = bids.filter((l) => l.maker === m);
      await this.ensureUsdc(m, mine.reduce((sum, l) => sum + buyBound(l.pricePips, l.sizeUnits, feeBps), 0));
      const selling = asks.filter((l) => l.maker === m);
      const tokens = selling.reduce((sum, l) => sum + l.sizeUnits, 0);
      await this.ensureTokens(m, tokenId, tokens, selling[0]?.pricePips ?? PIPS / 2);
    }
    const orders: SetBookResult['orders'] = [];
    for (const [side, levels] of [['BUY', bids], ['SELL', asks]] as const) {
      for (const l of levels) {
        const answer = await this.place({ wallet: l.maker, tokenId, side, pricePips: l.pricePips, sizeUnits: l.sizeUnits, orderType: 'GTC', postOnly: true }).catch(refusedAnswer);
        orders.push({ side, pricePips: l.pricePips, sizeUnits: l.sizeUnits, maker: l.maker, answer });
      }
    }
    return { conditionId, canceled, orders };
  }

  /**
   * A trade against the resting order `orderId`: the taker (funded as needed) takes the book of the order's
   * token, on the other side, up to the order's price, FAK, for `sizeUnits` (default: what the order has left).
   * The order trades as it would against a real taker: first if nothing better or older stands before it.
   */
  async fill(orderId: string, taker: string, sizeUnits?: number): Promise<{ answer: PlaceResponse; orderId: string }> {
    const o = this.d.engine.getOrder(orderId.toLowerCase());
    if (o === undefined || o.status !== 'LIVE') throw apiError('PM_ERR_NOT_FOUND_ENTITY', { detail: `no open order ${orderId}` });
    const left = o.sizeUnits - o.sizeMatched;
    const size = sizeUnits ?? left;
    if (size <= 0 || size > left || size % LOT_UNITS !== 0) {
      throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: [`size must be a whole number of hundredths of a token, at most the ${left / 1e6} the order has left`] });
    }
    if (taker === o.wallet) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: ['the taker is the order\'s own wallet: a wallet does not trade with itself'] });
    const answer = await this.sweep(taker, o.tokenId, o.side === 'BUY' ? 'SELL' : 'BUY', o.pricePips, size);
    return { answer, orderId: o.orderId };
  }

  /** A taker's FAK on `tokenId` up to `pricePips` for `sizeUnits`, the taker funded with what it needs first. */
  async sweep(taker: string, tokenId: string, side: SideName, pricePips: number, sizeUnits: number): Promise<PlaceResponse> {
    const tm = this.market(tokenId);
    if (side === 'BUY') await this.ensureUsdc(taker, buyBound(pricePips, sizeUnits, Math.max(tm.market.makerFeeBps, tm.market.takerFeeBps)));
    else await this.ensureTokens(taker, tokenId, sizeUnits, pricePips);
    return this.place({ wallet: taker, tokenId, side, pricePips, sizeUnits, orderType: 'FAK' });
  }

  /** Deposits what the wallet lacks of `units` available USDC. */
  async ensureUsdc(wallet: string, units: number): Promise<void> {
    const lack = units - this.d.engine.balances(wallet).usdc.available;
    if (lack <= 0) return;
    const r = await this.d.engine.deposit(wallet, lack);
    if (!r.ok) throw resultError(r.code, { wallet });
  }

  /** Credits what the wallet lacks of `units` available tokens of `tokenId`. */
  async ensureTokens(wallet: string, tokenId: string, units: number, pricePips: number): Promise<void> {
    const have = this.d.engine.balances(wallet).tokens.find((t) => t.tokenId === tokenId)?.available ?? 0;
    if (units - have > 0) await this.credit(wallet, tokenId, units - have, pricePips);
  }

  private market(tokenId: string) {
    const tm = this.d.engine.tokenMarketOf(tokenId);
    if (tm === undefined) throw apiError('PM_ERR_MARKET_UNKNOWN', { tokenId });
    return tm;
  }
}

/** The most a resting or taking BUY of `sizeUnits` at `pricePips` can hold: its notional and the largest fee. */
function buyBound(pricePips: number, sizeUnits: number, feeBps: number): number {
  const notional = Math.ceil((sizeUnits * pricePips) / PIPS);
  return notional + Math.ceil((feeBps * Math.min(pricePips, PIPS - pricePips) * sizeUnits) / (PIPS * PIPS)) + 1;
}

/** A refused level's answer: what the engine said, in the answer's shape. */
function refusedAnswer(err: unknown): PlaceResponse {
  const message = err instanceof Error ? err.message : String(err);
  return { ok: false, code: 0, orderId: '', status: 'canceled', makingAmount: 0, takingAmount: 0, tradeIds: [], vars: { error: message } };
}
