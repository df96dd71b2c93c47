/**
 * What an order holds in the ledger: R1 reserves, at admission, what the order can spend (USDC with its fee
 * bound for a BUY, tokens for a SELL); R2, as it fills and when it finishes, releases what it no longer can.
 *
 * Invariant: an order's `reserved` is exactly what the ledger holds reserved for it, and never less than
 * needOf(order) while it is in flight or resting (ledger.checkLedger verifies both against the open orders).
 */
import { Side } from '../book/api.ts';
import { buyNeed } from './fees.ts';
import { LedgerError, type Ledger } from './ledger.ts';
import { restsOnBook, type OrderState } from '../orders/order-table.ts';

/** What the order can still spend: the reservation it must hold. */
export function needOf(o: OrderState): number {
  if (o.side === Side.SELL) return o.remaining;
  return buyNeed(restsOnBook(o.tif), o.rec.pricePips, o.remaining, o.rec.budgetUnits, o.feeBound);
}

/** R1: reserves `need` for the order; false (nothing reserved) when the wallet cannot cover it. */
export function reserve(ledger: Ledger, o: OrderState, need: number): boolean {
  const ok = o.side === Side.BUY ? ledger.reserveUsdc(o.wb, need) : ledger.reserveTokens(o.wb, o.rec.tokenId, need);
  if (ok) o.reserved = need;
  return ok;
}

export function release(ledger: Ledger, o: OrderState, n: number): void {
  if (n === 0) return;
  if (o.side === Side.BUY) ledger.releaseUsdc(o.wb, n);
  else ledger.releaseTokens(o.wb, o.rec.tokenId, n);
  o.reserved -= n;
}

export function releaseAll(ledger: Ledger, o: OrderState): void {
  release(ledger, o, o.reserved);
}

/** Releases whatever the order holds beyond what it can still spend (price improvement, fee rounding). */
export function settleReservation(ledger: Ledger, o: OrderState): void {
  const need = needOf(o);
  if (o.reserved < need) throw new LedgerError(`order ${o.rec.orderId} holds ${o.reserved} but may still spend ${need}`);
  release(ledger, o, o.reserved - need);
}
