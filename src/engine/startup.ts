/**
 * Start-up: from a store that journal/recovery.ts has verified (its tables agree with its journal) to an
 * engine that takes requests.
 *
 * In order: the markets, balances, net deposits and resolutions of the tables go into the market table and
 * the ledger; the trades still settling go back to the trade lifecycle (their fills read from the fills
 * table), the proceeds of those not MINED set aside as pending again; the shard workers start (or the
 * threads handed over are reset); each market is registered with its shard, with the last trade prices the
 * journal replay found; every open order is placed again on its book, in seq order (the books' time
 * priority), holding its reservation again (admission.ts restoreAll), and must rest there unchanged; the
 * shards place them while the rest are prepared. Before any shard answer is applied the ledger invariants
 * are checked and the engine's state hash must equal the store's (not again for a proof an earlier start
 * restored and checked, EngineOptions.proof): a GTD order that expired while the engine was down is expired
 * by its shard right after it rests, a legitimate change that must not fail the check.
 *
 * Any disagreement throws ("refusing to start: ..."); Engine.open then stops the workers. Nothing is
 * journaled during start-up.
 */
import type { OrderRecord } from '../domain/events.ts';
import type { Store } from '../journal/env.ts';
import { readFill } from '../journal/codecs/fill-codec.ts';
import type { VerifiedStore } from '../journal/recovery.ts';
import { USDC_ASSET } from '../journal/keys.ts';
import type { Logger } from '../runtime/log.ts';
import type { Admission } from './orders/admission.ts';
import { checkLedger, stateHash } from './audit.ts';
import type { Ledger } from './ledger/ledger.ts';
import type { Lifecycle } from './lifecycle.ts';
import type { MarketAdmin } from './markets/market-admin.ts';
import type { MarketTable } from './markets/market-table.ts';
import type { OrderTable } from './orders/order-table.ts';
import type { ShardLink } from './shard/shard-link.ts';
import type { TradeLifecycle } from './ledger/trade-lifecycle.ts';

export interface StartupParts {
  store: Store;
  ledger: Ledger;
  markets: MarketTable;
  orders: OrderTable;
  link: ShardLink;
  marketAdmin: MarketAdmin;
  admission: Admission;
  trades: TradeLifecycle;
  life: Lifecycle;
  log: Logger;
}

/**
 * Restores the verified state and starts the shards; `t0` (performance.now()) is when verification began.
 * `reused`: a proof an earlier start restored, its state hash checked then (EngineOptions.proof): the same
 * records restore the same state, so the hash is not computed again; the ledger check and each order's
 * resting unchanged still are.
 */
export async function startEngine(p: StartupParts, verified: VerifiedStore, t0: number, reused = false): Promise<void> {
  const m = verified.materialized;
  for (const row of m.markets) p.markets.add(row);
  for (const b of m.balances) p.ledger.setHeld(b.wallet, b.asset, b.held, USDC_ASSET);
  p.ledger.netDeposits = m.netDeposits;
  for (const row of m.markets) if (row.resolved >= 0) p.ledger.resolve(row.conditionId, row.resolved as 0 | 1);
  for (const t of m.trades) {
    const f = readFill(p.store.fills, t.fillSeq);
    if (f === undefined) throw new Error(`refusing to start: the trades table names fill ${t.fillSeq}, which the fills table does not hold`);
    p.trades.restore(f, t.status, t.updatedAt);
  }

  await p.link.start();
  const registered: Promise<unknown>[] = [];
  for (const [tokenId, t] of verified.lastTrades) p.markets.lastTrades.set(tokenId, t);
  for (const mk of p.markets.values()) registered.push(p.marketAdmin.sendToShard(mk));
  await Promise.all(registered);

  await restoreOpenOrders(p, m.openOrders, reused ? undefined : verified.hash);
  p.log.info(
    {
      journalSeq: m.lastSeq,
      checkpoint: verified.from?.seq ?? 0,
      events: verified.events,
      markets: m.markets.length,
      openOrders: m.openOrders.length,
      settlingTrades: m.trades.length,
      ms: Math.round(performance.now() - t0),
    },
    'engine recovered',
  );
}

async function restoreOpenOrders(p: StartupParts, openOrders: OrderRecord[], storeHash: string | undefined): Promise<void> {
  const restored = p.admission.restoreAll(openOrders);
  // Checked now, before any shard result can be applied: a GTD order that expired while the engine was
  // down is expired by its shard right after it rests, a legitimate change that must not fail the check.
  const problems = checkLedger(p.ledger, p.orders, p.trades);
  if (problems.length > 0) throw new Error(`refusing to start: ledger inconsistent after recovery: ${problems.slice(0, 5).join('; ')}`);
  const h = storeHash === undefined ? undefined : stateHash(p.ledger, p.orders, p.markets, p.trades);
  if (h !== storeHash) throw new Error(`refusing to start: recovered engine state hash ${h} differs from the store's ${storeHash}`);
  const answer = await restored;
  if (p.life.halted) throw p.life.halted;
  if (answer !== undefined && !answer.ok) throw new Error(`refusing to start: open order ${answer.orderId} could not be restored (code ${answer.code})`);
}
