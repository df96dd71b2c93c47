/**
 * The trading desk's own account of each wallet (desk.ts): its USDC and tokens, available + reserved, kept
 * from what the venue answers, and the orders it tracks while they rest. Owns the bookkeeping: the immediate
 * fills of an order from its acknowledgement, its later fills as read back, the reservations of resting
 * orders, and what an account can still afford or sell. Which orders to send is desk.ts's and trading.ts's.
 *
 * The desk keeps each wallet's USDC and tokens (available + reserved) from what the venue
 * answers: the immediate fills of an order from its acknowledgement (making / taking amounts, the
 * taker's fee included), its later fills from its matched size as read back, at its own price (a
 * resting order trades at its price), less the maker fee computed per read. With a zero maker fee this
 * is exact, so tools/simulate.ts checks it against the service's balances. Trades are counted by id
 * (every fill's id appears in both of its orders' trade lists), so a fill between two of the desk's own
 * wallets counts once.
 *
 * Imports domain/units.ts, trading.ts and the venue's types.
 */
import { PIPS } from '../domain/units.ts';
import type { SigningWallet } from './order-signer.ts';
import { usdcOf, type FreeTokens, type Leg } from './trading.ts';
import type { DeskMarket } from './venue.ts';

/** How a wallet is funded (desk.ts topUp). */
export interface Funding {
  /** USDC a wallet is brought up to when it starts or falls below `floorUnits`. */
  targetUnits: number;
  floorUnits: number;
}

export interface Account {
  wallet: SigningWallet;
  funding: Funding;
  usdc: number;
  tokens: Map<string, number>;
  /** USDC and tokens promised to the account's resting orders. */
  reservedUsdc: number;
  reservedTokens: Map<string, number>;
}

export interface Tracked {
  id: string;
  acct: Account;
  market: DeskMarket;
  tokenId: string;
  leg: Leg;
  /** Size matched as last seen (the acknowledgement's fills at first). */
  matched: number;
  /** Set on a maker's quote: which side and at what outcome-0 price. */
  quote?: { maker: number; market: number; side: 'bid' | 'ask'; yesPips: number };
}

// A BUY's reservation covers its fee too: keep this much headroom so the engine does not refuse it.
const FEE_HEADROOM = 1.02;

/** Fills of a resting order since the last read: at its own price, less the maker fee. */
export function restingFill(t: Tracked, size: number): void {
  const a = t.acct;
  const usdc = usdcOf(size, t.leg.pricePips);
  const p = t.leg.pricePips;
  const fee = Math.floor((t.market.makerFeeBps * Math.min(p, PIPS - p) * size) / 1e8);
  release(t);
  t.matched += size;
  if (t.leg.side === 'BUY') {
    a.usdc -= usdc + fee;
    add(a.tokens, t.tokenId, size);
  } else {
    a.usdc += usdc - fee;
    add(a.tokens, t.tokenId, -size);
  }
  reserve(t);
}

/**
 * The immediate fills of an accepted order, from its acknowledgement's amounts (as taker, fees included):
 * booked to the account; returns the tokens filled and the USDC they moved.
 */
export function acknowledgedFill(a: Account, tokenId: string, side: Leg['side'], makingAmount: number, takingAmount: number): { units: number; usdc: number } {
  if (side === 'BUY') {
    a.usdc -= makingAmount;
    add(a.tokens, tokenId, takingAmount);
    return { units: takingAmount, usdc: makingAmount };
  }
  add(a.tokens, tokenId, -makingAmount);
  a.usdc += takingAmount;
  return { units: makingAmount, usdc: takingAmount };
}

/** Books what a resting order can still spend as promised to it. */
export function reserve(t: Tracked): void {
  const rest = t.leg.sizeUnits - t.matched;
  if (t.leg.side === 'BUY') t.acct.reservedUsdc += usdcOf(rest, t.leg.pricePips);
  else add(t.acct.reservedTokens, t.tokenId, rest);
}

/** Frees what a resting order could still spend (before its fill is booked, or when it leaves the book). */
export function release(t: Tracked): void {
  const rest = t.leg.sizeUnits - t.matched;
  if (t.leg.side === 'BUY') t.acct.reservedUsdc -= usdcOf(rest, t.leg.pricePips);
  else add(t.acct.reservedTokens, t.tokenId, -rest);
}

/** Net Yes of the account in the market: Yes tokens minus No tokens. */
export function inventory(a: Account, m: DeskMarket): number {
  return (a.tokens.get(m.tokenIds[0]) ?? 0) - (a.tokens.get(m.tokenIds[1]) ?? 0);
}

export function freeTokens(a: Account, m: DeskMarket, promised?: FreeTokens): FreeTokens {
  const freeOf = (tokenId: string) => (a.tokens.get(tokenId) ?? 0) - (a.reservedTokens.get(tokenId) ?? 0);
  return { yes: freeOf(m.tokenIds[0]) - (promised?.yes ?? 0), no: freeOf(m.tokenIds[1]) - (promised?.no ?? 0) };
}

/** A BUY the account's free USDC covers (with fee headroom), counting what this round already spends. */
export function affordable(a: Account, leg: Leg, spent: Map<Account, number>): boolean {
  if (leg.side === 'SELL') return true;
  const cost = Math.ceil(usdcOf(leg.sizeUnits, leg.pricePips) * FEE_HEADROOM);
  const used = spent.get(a) ?? 0;
  if (a.usdc - a.reservedUsdc - used < cost) return false;
  spent.set(a, used + cost);
  return true;
}

function add(m: Map<string, number>, key: string, v: number): void {
  const next = (m.get(key) ?? 0) + v;
  if (next === 0) m.delete(key);
  else m.set(key, next);
}
