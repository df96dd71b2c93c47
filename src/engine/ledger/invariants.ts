/**
 * The ledger's integrity check (checkLedger), callable after any operation, as engine/book/invariants.ts is
 * for the book: nothing negative or fractional, each open order reserves exactly what it can still spend,
 * each wallet's reserved amounts are the sum of its orders' reservations, each pending amount is what the
 * deferred fills not MINED yet delivered, token supplies match holdings, every complete set is backed by one
 * USDC, and USDC is conserved (the collateral identity, ledger.ts's header). Separate because it reads the
 * whole ledger against the engine's orders, and runs only in tests, benchmarks and debug builds.
 *
 * Reads; never changes a balance. Imports domain/ and balances.ts.
 */
import type { FillEvent } from '../../domain/events.ts';
import { proceedsOf, type MarketSupply, type WalletBalance } from './balances.ts';

export interface ReservationView {
  orderId: string;
  wallet: string;
  /** Set for SELL orders: the token reserved. */
  tokenId: string | undefined;
  usdc: number;
  tokens: number;
  /** What the order can still spend (buyNeed / remaining tokens). */
  need: number;
}

/** What the check reads of the ledger (ledger.ts Ledger has it). */
export interface LedgerState {
  readonly wallets: ReadonlyMap<string, WalletBalance>;
  readonly markets: ReadonlyMap<string, MarketSupply>;
  /** USDC held by wallets, locked as collateral, and deposited net. */
  totalUsdc(): { wallets: number; collateral: number; netDeposits: number };
}

/**
 * Allocates: tests, benchmarks and debug only. Every invariant of the ledger against the engine's open
 * orders: nothing negative, each order reserves exactly what it can still spend, each wallet's reserved
 * amounts are the sum of its orders' reservations, each pending amount is what the deferred fills not
 * MINED yet (`settling`) delivered, token supplies match holdings, every complete set is backed by one
 * USDC, and USDC is conserved. Returns the problems found (empty = consistent).
 */
export function checkLedger(ledger: LedgerState, open: Iterable<ReservationView>, settling: Iterable<FillEvent> = []): string[] {
  const problems: string[] = [];
  const pending = new Map<string, number>();
  for (const f of settling) {
    for (const p of proceedsOf(f)) {
      const k = p.wallet + '\u0000' + (p.tokenId ?? '');
      pending.set(k, (pending.get(k) ?? 0) + p.units);
    }
  }
  const usdcRes = new Map<string, number>();
  const tokRes = new Map<string, number>();
  for (const r of open) {
    const spend = r.tokenId === undefined ? r.usdc : r.tokens;
    if (spend !== r.need) problems.push(`order ${r.orderId} reserves ${spend} but can spend ${r.need}`);
    if (r.tokenId === undefined) usdcRes.set(r.wallet, (usdcRes.get(r.wallet) ?? 0) + r.usdc);
    else tokRes.set(r.wallet + '\u0000' + r.tokenId, (tokRes.get(r.wallet + '\u0000' + r.tokenId) ?? 0) + r.tokens);
  }
  const held = new Map<string, number>();
  for (const w of ledger.wallets.values()) {
    if (w.usdcAvailable < 0 || w.usdcReserved < 0 || w.usdcPending < 0) problems.push(`${w.wallet} has negative USDC ${w.usdcAvailable}/${w.usdcReserved}/${w.usdcPending}`);
    if (!Number.isSafeInteger(w.usdcAvailable) || !Number.isSafeInteger(w.usdcReserved) || !Number.isSafeInteger(w.usdcPending)) problems.push(`${w.wallet} USDC is not an integer`);
    if (w.usdcReserved !== (usdcRes.get(w.wallet) ?? 0)) problems.push(`${w.wallet} reserves ${w.usdcReserved} USDC but its orders need ${usdcRes.get(w.wallet) ?? 0}`);
    const usdcPending = pending.get(w.wallet + '\u0000') ?? 0;
    pending.delete(w.wallet + '\u0000');
    if (w.usdcPending !== usdcPending) problems.push(`${w.wallet} has ${w.usdcPending} USDC pending but its unsettled trades delivered ${usdcPending}`);
    for (const [tokenId, t] of w.tokens) {
      if (t.available < 0 || t.reserved < 0 || t.pending < 0) problems.push(`${w.wallet} has negative ${tokenId}`);
      if (!Number.isSafeInteger(t.available) || !Number.isSafeInteger(t.reserved) || !Number.isSafeInteger(t.pending)) problems.push(`${w.wallet} ${tokenId} is not an integer`);
      const want = tokRes.get(w.wallet + '\u0000' + tokenId) ?? 0;
      if (t.reserved !== want) problems.push(`${w.wallet} reserves ${t.reserved} of ${tokenId} but its orders need ${want}`);
      const tokPending = pending.get(w.wallet + '\u0000' + tokenId) ?? 0;
      pending.delete(w.wallet + '\u0000' + tokenId);
      if (t.pending !== tokPending) problems.push(`${w.wallet} has ${t.pending} of ${tokenId} pending but its unsettled trades delivered ${tokPending}`);
      held.set(tokenId, (held.get(tokenId) ?? 0) + t.available + t.reserved + t.pending);
    }
  }
  for (const [k, units] of pending) problems.push(`unsettled trades delivered ${units} of ${k.split('\u0000')[1] || 'USDC'} to ${k.split('\u0000')[0]}, which holds none pending`);
  for (const m of ledger.markets.values()) {
    for (const o of [0, 1] as const) {
      const h = held.get(m.tokenIds[o]) ?? 0;
      if (h !== m.supply[o]) problems.push(`${m.conditionId} outcome ${o}: holdings ${h} != supply ${m.supply[o]}`);
    }
    if (m.resolved < 0 && m.supply[0] !== m.supply[1]) problems.push(`${m.conditionId}: supplies ${m.supply[0]} / ${m.supply[1]} are not complete sets`);
  }
  const t = ledger.totalUsdc();
  if (t.wallets + t.collateral !== t.netDeposits) {
    problems.push(`USDC not conserved: wallets ${t.wallets} + collateral ${t.collateral} != deposits - withdrawals ${t.netDeposits}`);
  }
  return problems;
}
