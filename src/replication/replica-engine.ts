/**
 * The engine's surface on a read replica (ROLE=replica): every read the routes and read models make of the
 * engine, answered from the replica's own store as the follower (follower.ts) fills it, and the commit
 * listeners told each applied batch's events, so the committed books, the projections and the streams are
 * built by the same code as on the sequencer (app.ts wires them to `onCommitted` on either role).
 *
 * What it keeps in memory: the markets (engine-markets rows, as the batches put them) with their tokens,
 * and the open orders by id (wallet, market, seq). Orders themselves are read from the store (their event
 * and state row), so a read is the committed state by construction.
 *
 * Writes (orders, cancels, wallet operations, market administration) never reach it: the edge answers them
 * with PM_ERR_READ_REPLICA before any handler runs (edge/pipeline.ts). Should one arrive anyway, it throws
 * that error rather than pretend.
 */
import { apiError } from '../domain/errors.ts';
import type { JournalEvent, OrderRecord } from '../domain/events.ts';
import type { BalancesView, EngineStats, EngineSurface, OpenOrdersFilter, TradeSettlement, UnsettledView } from '../engine/engine.ts';
import type { Store } from '../journal/env.ts';
import { orderIndexOf, readOrder, readOrderAt } from '../journal/orders.ts';
import { canonicalOfTables, hashState, lastTradeSide, loadMaterialized, verifyStore, type CheckpointSource, type LastTrade, type VerifiedStore } from '../journal/recovery.ts';
import { unsettledTrades } from '../journal/trades.ts';
import type { MarketRow } from '../journal/writer.ts';
import type { AppliedBatch } from './follower.ts';

interface OpenRef {
  orderId: string;
  /** What an API key's open orders are looked up by, as on the sequencer (engine/order-table.ts). */
  signer: string;
  conditionId: string;
  tokenId: string;
}

export class ReplicaEngine implements EngineSurface {
  private readonly markets = new Map<string, MarketRow>();
  private readonly tokens = new Map<string, { market: MarketRow; outcome: 0 | 1 }>();
  /** Open orders by seq: exactly the state rows with status LIVE. */
  private readonly open = new Map<number, OpenRef>();
  private readonly listeners: Array<(events: JournalEvent[]) => void> = [];
  private readonly lastTrades: Map<string, LastTrade>;
  private appliedSeq: number;

  private proof: VerifiedStore | undefined;

  /**
   * Proves the store (the same check as the sequencer's start-up, from the newest checkpoint that proves it)
   * and loads the markets and open orders.
   */
  constructor(private readonly store: Store, private readonly sequencerUrl: string, checkpoints?: CheckpointSource) {
    orderIndexOf(store);
    const verified = verifyStore(store, { checkpoints });
    this.proof = verified;
    this.appliedSeq = verified.materialized.lastSeq;
    this.lastTrades = verified.lastTrades;
    for (const row of verified.materialized.markets) this.putMarket(row);
    for (const o of verified.materialized.openOrders) this.open.set(o.seq, { orderId: o.orderId, signer: o.signer, conditionId: o.conditionId, tokenId: o.tokenId });
  }

  private putMarket(row: MarketRow): void {
    this.markets.set(row.conditionId, row);
    this.tokens.set(row.tokenIds[0], { market: row, outcome: 0 });
    this.tokens.set(row.tokenIds[1], { market: row, outcome: 1 });
  }

  /** The follower applied (and committed) these batches: memory follows, then the listeners hear their events. */
  applied(batches: readonly AppliedBatch[]): void {
    const ix = orderIndexOf(this.store);
    for (const { batch, events } of batches) {
      for (const row of batch.rows?.m ?? []) this.putMarket(row as MarketRow);
      for (const e of events) {
        if (e.type === 'order') {
          ix.add(e.orderId, e.seq);
          this.open.set(e.seq, { orderId: e.orderId, signer: e.signer, conditionId: e.conditionId, tokenId: e.tokenId });
        } else if (e.type === 'fill') {
          const side = lastTradeSide(e);
          this.lastTrades.set(e.takerTokenId, { pricePips: e.takerPricePips, side });
          this.lastTrades.set(e.makerTokenId, { pricePips: e.makerPricePips, side });
        }
      }
      // Whatever the events, an order is open exactly while its state row says LIVE.
      for (const [seq, row] of batch.rows?.o ?? []) if (row[0] !== 0) this.open.delete(seq);
      if (batch.j !== undefined) this.appliedSeq = batch.j[1];
      if (events.length === 0) continue;
      for (const l of this.listeners) l(events);
    }
  }

  get committedSeq(): number {
    return this.appliedSeq;
  }

  // ---- reads ----------------------------------------------------------------------------------------------

  get failure(): Error | undefined {
    return undefined;
  }

  afterCommit(): Promise<{ ok: boolean; code: number }> {
    return Promise.resolve({ ok: true, code: 0 });
  }

  getOrder(orderId: string): OrderRecord | undefined {
    return readOrder(this.store, orderId);
  }

  openOrders(signer: string, filter: OpenOrdersFilter = {}): OrderRecord[] {
    const out: OrderRecord[] = [];
    for (const [seq, o] of this.open) {
      if (o.signer !== signer) continue;
      if (filter.id !== undefined && filter.id !== o.orderId) continue;
      if (filter.conditionId !== undefined && filter.conditionId !== o.conditionId) continue;
      if (filter.tokenId !== undefined && filter.tokenId !== o.tokenId) continue;
      const rec = readOrderAt(this.store, seq);
      if (rec !== undefined && rec.status === 'LIVE') out.push(rec);
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** The committed books as this store holds them: the open orders it keeps in memory, read from the store. */
  bookSeed(): { markets: MarketRow[]; resting: OrderRecord[]; lastTrades: Array<[string, { pricePips: number; side: 'BUY' | 'SELL' }]> } {
    const resting: OrderRecord[] = [];
    for (const seq of [...this.open.keys()].sort((a, b) => a - b)) {
      const rec = readOrderAt(this.store, seq);
      if (rec !== undefined && rec.status === 'LIVE') resting.push(rec);
    }
    return { markets: [...this.markets.values()], resting, lastTrades: [...this.lastTrades] };
  }

  takeStartupProof(): VerifiedStore | undefined {
    const p = this.proof;
    this.proof = undefined;
    return p;
  }

  restingOrders(conditionIds: ReadonlySet<string>): OrderRecord[] {
    const out: OrderRecord[] = [];
    for (const [seq, o] of this.open) {
      if (!conditionIds.has(o.conditionId)) continue;
      const rec = readOrderAt(this.store, seq);
      if (rec !== undefined && rec.status === 'LIVE') out.push(rec);
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  bookSnapshot(): { version: number; json: string } | undefined {
    return undefined;
  }

  snapshotStale(): boolean {
    return false;
  }

  lastTradePrice(tokenId: string): { pricePips: number; side: 'BUY' | 'SELL' } | undefined {
    return this.lastTrades.get(tokenId);
  }

  tokenMarketOf(tokenId: string): { readonly market: Readonly<MarketRow>; readonly outcome: 0 | 1 } | undefined {
    return this.tokens.get(tokenId);
  }

  market(conditionId: string): (MarketRow & { shard: number }) | undefined {
    const m = this.markets.get(conditionId);
    return m === undefined ? undefined : { ...m, shard: 0 };
  }

  onCommitted(listener: (events: JournalEvent[]) => void): void {
    this.listeners.push(listener);
  }

  onSnapshots(): void {}

  /** No shards, no expiry of its own: a replica applies the sequencer's (and never runs the test controls). */
  async shardTime(): Promise<void> {}

  nextExpirySec(): number {
    return Infinity;
  }

  async idle(): Promise<void> {}

  /** The state hash of the replica's tables (journal/recovery.ts): equal to the sequencer's at the same seq. */
  stateHash(): string {
    return hashState(canonicalOfTables(loadMaterialized(this.store)));
  }

  stats(): EngineStats {
    return { journalSeq: this.appliedSeq, committedSeq: this.appliedSeq, transactions: 0, batches: 0, ordersAccepted: 0, fills: 0, backpressureWaits: 0, busyRejects: 0, openOrders: this.open.size };
  }

  async close(): Promise<void> {}

  // ---- what only the sequencer does -------------------------------------------------------------------------

  private refuse(): never {
    throw apiError('PM_ERR_READ_REPLICA', { sequencer: this.sequencerUrl });
  }

  registerMarket(): void {
    this.refuse();
  }
  refreshSnapshot(): Promise<void> {
    return Promise.resolve();
  }
  placeOrder(): never {
    return this.refuse();
  }
  cancelOrders(): never {
    return this.refuse();
  }
  cancelMarketOrders(): never {
    return this.refuse();
  }
  cancelAll(): never {
    return this.refuse();
  }
  deposit(): never {
    return this.refuse();
  }
  withdraw(): never {
    return this.refuse();
  }
  split(): never {
    return this.refuse();
  }
  merge(): never {
    return this.refuse();
  }
  redeem(): never {
    return this.refuse();
  }
  creditTokens(): never {
    return this.refuse();
  }
  resolveMarket(): never {
    return this.refuse();
  }
  /** The ledger's available and reserved amounts exist only in the sequencer's engine. */
  balances(): BalancesView {
    return this.refuse();
  }
  unsettled(): UnsettledView {
    return this.refuse();
  }
  /** The replica's settling trades as its tables hold them; the settings are the sequencer's, unknown here (zero). */
  tradeSettlement(): { settings: Readonly<TradeSettlement>; settling: { MATCHED: number; RETRYING: number; MINED: number } } {
    const settling = { MATCHED: 0, RETRYING: 0, MINED: 0 };
    for (const t of unsettledTrades(this.store)) if (t.status in settling) settling[t.status as keyof typeof settling]++;
    return { settings: { minedDelayMs: 0, confirmedDelayMs: 0, retryingShare: 0, retryDelayMs: 0, failedShare: 0, seed: 0 }, settling };
  }
  checkLedger(): string[] {
    return [];
  }
  usdcTotals(): never {
    return this.refuse();
  }
}
