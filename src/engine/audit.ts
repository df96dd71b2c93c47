/**
 * The engine's state, read whole to be checked: the canonical state the store's hash is computed over, and
 * the ledger's invariants against the orders that hold reservations and the trades still settling.
 *
 * Start-up compares both with the store before the engine takes a request (startup.ts), close() records the
 * hash for the next start, tests and benchmarks call them after every step. Both allocate and walk every
 * wallet and order: never on the hot path.
 */
import { USDC_ASSET } from '../journal/keys.ts';
import { balanceMapKey, hashState, type CanonicalState } from '../journal/recovery.ts';
import { Side } from './book/api.ts';
import type { Ledger, ReservationView } from './ledger/ledger.ts';
import type { MarketTable } from './markets/market-table.ts';
import type { OrderTable } from './orders/order-table.ts';
import { needOf } from './ledger/reservation.ts';
import type { TradeLifecycle } from './ledger/trade-lifecycle.ts';

/**
 * Balances (pending proceeds included), open orders, market resolutions, trades still settling and net
 * deposits, as journal/recovery.ts canonicalizes them.
 */
function canonicalState(ledger: Ledger, orders: OrderTable, markets: MarketTable, trades: TradeLifecycle): CanonicalState {
  const balances = new Map<string, number>();
  for (const w of ledger.wallets.values()) {
    balances.set(balanceMapKey(w.wallet, USDC_ASSET), w.usdcAvailable + w.usdcReserved + w.usdcPending);
    for (const [tokenId, t] of w.tokens) balances.set(balanceMapKey(w.wallet, tokenId), t.available + t.reserved + t.pending);
  }
  const openOrders: CanonicalState['openOrders'] = [];
  for (const o of orders.all()) {
    if (o.live) openOrders.push({ conditionId: o.rec.conditionId, seq: o.rec.seq, orderId: o.rec.orderId, remaining: o.remaining });
  }
  const resolutions = new Map<string, number>();
  for (const m of markets.values()) resolutions.set(m.conditionId, m.resolved);
  return { balances, openOrders, markets: resolutions, netDeposits: ledger.netDeposits, trades: trades.statuses() };
}

/** Hash of the canonical state (journal/recovery.ts hashState). */
export function stateHash(ledger: Ledger, orders: OrderTable, markets: MarketTable, trades: TradeLifecycle): string {
  return hashState(canonicalState(ledger, orders, markets, trades));
}

/**
 * Ledger invariants against the orders that hold reservations and the trades whose proceeds are pending
 * (ledger.checkLedger); the problems found.
 */
export function checkLedger(ledger: Ledger, orders: OrderTable, trades: TradeLifecycle): string[] {
  const views: ReservationView[] = [];
  for (const o of orders.all()) {
    views.push({
      orderId: o.rec.orderId,
      wallet: o.rec.wallet,
      tokenId: o.side === Side.SELL ? o.rec.tokenId : undefined,
      usdc: o.side === Side.BUY ? o.reserved : 0,
      tokens: o.side === Side.SELL ? o.reserved : 0,
      need: needOf(o),
    });
  }
  return ledger.checkLedger(views, trades.pendingFills());
}
