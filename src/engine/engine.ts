/**
 * The engine facade and sequencer: the only module the trading and admin code calls.
 *
 * Pipeline of an order (docs/decisions/architecture.md, "Threads and who owns what"):
 *
 *   placeOrder ── checks (market, post-only type, expiration, amounts, tick, size)      admission.ts
 *              ── R1: ledger reserves what the order can spend      admission.ts, reservation.ts, ledger.ts
 *              ── PLACE record ──> command ring ──> shard worker: book.place, events into result ring
 *                                                                          shard-link.ts, worker.ts
 *   drain      <── FILL* CANCELED* RESULT (one group per command, in command order per shard)  shard-link.ts
 *              ── R2: settle each fill, release what the order can no longer spend          settlement.ts
 *              ── journal: order, fills, statuses + tables, buffered for this event-loop turn
 *   flush      ── one LMDB transaction per turn (group commit) ── commit ──> acknowledge, onCommitted
 *                                                                                         group-commit.ts
 *
 * A command's effects are applied and journaled only when its RESULT arrives, all in one turn, so a
 * commit never holds half a command: a killed FOK leaves nothing, and the books rebuilt after a crash
 * were never crossed. Nothing is acknowledged before its commit; commits are in sequence order.
 *
 * Time priority. The shard of a market applies its commands in ring order and reports them in that order,
 * and the sequencer journals an order when its RESULT arrives, so within a market journal seq order is
 * book priority order: recovery re-places open orders by seq (startup.ts).
 *
 * Backpressure. The main thread never blocks. When a command ring is full, commands wait in a bounded
 * per-shard queue (in order) while the engine awaits Atomics.waitAsync on the ring's head; past the bound
 * new orders and cancels are refused with PM_ERR_ENGINE_BUSY (counted in stats().busyRejects).
 *
 * Settlement after the match (trade-lifecycle.ts): with the default settings every trade is CONFIRMED at its
 * commit; with delays or failure shares configured, fills are deferred and the trade lifecycle moves each
 * trade to MINED (its proceeds spendable), CONFIRMED, or through RETRYING to FAILED (the fill reversed), each
 * move a journal event, on timers the engine owns.
 *
 * Failure. A shard's unexpected throw, a worker exit, a ledger invariant broken or a failed commit halts
 * the engine (lifecycle.ts): every pending and later request answers PM_ERR_ENGINE_DOWN, nothing more is
 * journaled, and a restart recovers the last committed state.
 *
 * The parts, each owning one concern (its header says what it owns and its invariants), are built and
 * wired in one place, the constructor, in dependency order; the halt sequence is wired there too. The
 * other parts: market-table.ts (markets and tokens), order-table.ts (orders in memory and what their records
 * share), snapshots.ts (published books), market-admin.ts (register, resolve), wallet-ops.ts (deposits,
 * split, merge, redeem, balances), audit.ts (state hash, ledger checks).
 *
 * Rooms. The parts live in folders by concern: book/ (the matching book, below everything), shard/ (the
 * threads and their transport), markets/, orders/ and ledger/; the files here compose them, and no room
 * imports this facade back (tools/check-imports.ts ENGINE_ROOMS holds every room's directions).
 */
import type { JournalEvent, OrderRecord } from '../domain/events.ts';
import type { Store } from '../journal/env.ts';
import { metaKeys } from '../journal/keys.ts';
import { mergeOrderIdRuns, orderIndexOf, readOrder } from '../journal/orders.ts';
import { verifyStore, type VerifiedStore } from '../journal/recovery.ts';
import { JournalWriter, type MarketRow } from '../journal/writer.ts';
import { Admission } from './orders/admission.ts';
import { checkLedger, stateHash } from './audit.ts';
import type { BalancesView, CancelResponse, EngineOptions, EngineStats, MarketInput, OpResult, OpenOrdersFilter, PlaceInput, PlaceResponse, ShardTime, TradeSettlement, UnsettledView } from './engine-types.ts';
import { GroupCommit } from './group-commit.ts';
import { Ledger } from './ledger/ledger.ts';
import { Lifecycle } from './lifecycle.ts';
import { MarketAdmin } from './markets/market-admin.ts';
import { MarketTable, rowOf } from './markets/market-table.ts';
import { OrderTable, ownRecords } from './orders/order-table.ts';
import { Settlement } from './ledger/settlement.ts';
import { ShardClock } from './shard/shard-clock.ts';
import { ShardLink } from './shard/shard-link.ts';
import { Snapshots } from './shard/snapshots.ts';
import { startEngine } from './startup.ts';
import { INSTANT_SETTLEMENT, TradeLifecycle } from './ledger/trade-lifecycle.ts';
import { WalletOps } from './ledger/wallet-ops.ts';
import { systemTimers } from '../runtime/clock.ts';

export type { JournalEvent, OrderRecord } from '../domain/events.ts';
export type {
  BalancesView,
  CancelResponse,
  EngineOptions,
  EngineStats,
  MarketInput,
  OpResult,
  OpenOrdersFilter,
  PlaceInput,
  PlaceResponse,
  ShardTime,
  TradeSettlement,
  UnsettledView,
} from './engine-types.ts';

/**
 * The engine's public surface as a structural type: what the routes and read models use, which a read
 * replica provides from its store (replication/replica-engine.ts) without a matching engine behind it.
 * `discard` is the revert host's, on an engine of its own (a replica is never reverted).
 */
export type EngineSurface = { [K in Exclude<keyof Engine, 'discard'>]: Engine[K] };

/** Which market and outcome a token id belongs to, from either engine (a copy: keep it as long as you like). */
export function tokenOutcomeOf(engine: Pick<EngineSurface, 'tokenMarketOf'>, tokenId: string): { conditionId: string; outcome: 0 | 1 } | undefined {
  const tm = engine.tokenMarketOf(tokenId);
  return tm === undefined ? undefined : { conditionId: tm.market.conditionId, outcome: tm.outcome };
}

export class Engine {
  private readonly store: Store;
  private readonly life: Lifecycle;
  private readonly ledger: Ledger;
  private readonly markets: MarketTable;
  private readonly orders: OrderTable;
  private readonly writer: JournalWriter;
  private readonly commit: GroupCommit;
  private readonly link: ShardLink;
  private readonly shardClock: ShardClock;
  private readonly snapshots: Snapshots;
  private readonly trades: TradeLifecycle;
  private readonly settlement: Settlement;
  private readonly admission: Admission;
  private readonly marketAdmin: MarketAdmin;
  private readonly walletOps: WalletOps;

  /** The wiring: every part and who it hears from. `lastSeq` is the store's last durable journal seq. */
  private constructor(opts: EngineOptions, lastSeq: number) {
    const now = opts.now ?? Date.now;
    const log = opts.log;
    this.store = opts.store;
    // 1. State: whether the engine is up, balances and reservations, markets, orders in memory.
    this.life = new Lifecycle(log);
    this.ledger = new Ledger();
    this.markets = new MarketTable(this.ledger, opts.shards);
    this.orders = new OrderTable(this.ledger);
    // 2. Journal: what a turn appends leaves as one transaction; answers wait for it.
    this.writer = new JournalWriter(opts.store, lastSeq, now, opts.replicationLog);
    this.commit = new GroupCommit({ writer: this.writer, committedSeq: lastSeq, ledger: this.ledger, orders: this.orders, life: this.life, log, onCommit: opts.onCommit });
    if (opts.beforeFlush !== undefined) this.commit.beforeFlush(opts.beforeFlush);
    // 3. Shards: what they send goes to the published books (every RESULT, publications) and to
    //    settlement (each command's group, expiries); at the end of a drained turn the trades due move on and
    //    the turn is flushed.
    this.link = new ShardLink(opts, this.life, log, {
      snapshots: (shard, msg) => this.snapshots.arrived(shard, msg),
      result: (shard, r, group) => this.snapshots.noteResult(shard, r, group),
      expired: (group, r) => {
        opts.onExpiry?.(r.id);
        this.settlement.expired(group);
      },
      answered: (inf, r, group) => this.settlement.apply(inf, r, group),
      drained: () => {
        this.trades.poll();
        this.commit.scheduleFlush();
      },
    });
    this.shardClock = new ShardClock(this.link, this.life);
    this.snapshots = new Snapshots(this.markets, this.link, this.life, log);
    // 4. R2: the shards' answers applied to orders, ledger and journal; the trades' moves after the match.
    this.trades = new TradeLifecycle({
      ledger: this.ledger,
      writer: this.writer,
      commit: this.commit,
      life: this.life,
      now,
      timers: opts.timers ?? systemTimers,
      settings: opts.trades ?? INSTANT_SETTLEMENT,
    });
    this.settlement = new Settlement(this.ledger, this.orders, this.markets, this.writer, this.commit, this.trades);
    // 5. Requests: orders and cancels (checks, R1), markets, wallet operations.
    this.admission = new Admission({ store: opts.store, ledger: this.ledger, markets: this.markets, orders: this.orders, link: this.link, commit: this.commit, life: this.life, now });
    this.marketAdmin = new MarketAdmin(this.markets, this.ledger, this.link, this.writer, this.commit, this.life);
    this.walletOps = new WalletOps(this.ledger, this.markets, this.writer, this.commit, this.life);
    // 6. Halt, in this order: trade moves, answers waiting for a commit, snapshot readers, commands in
    //    flight, workers.
    this.life.onHalt(() => this.trades.stop());
    this.life.onHalt(() => this.commit.answerDown());
    this.life.onHalt(() => this.snapshots.releaseWaiters());
    this.life.onHalt(() => this.settlement.answerDown(this.link.takeUnanswered()));
    this.life.onHalt(() => void this.link.terminate());
  }

  /** The journal seq of the last durable batch: what a read of committed state reflects (X-Journal-Seq). */
  get committedSeq(): number {
    return this.commit.committedSeq;
  }

  /**
   * How start-up proved the store (journal/recovery.ts): from which checkpoint, and the state it proved,
   * for the checkpointer's first checkpoint (engine/checkpointer.ts). Released once taken.
   */
  private proof: VerifiedStore | undefined;
  private discarded = false;

  /** Recovers the state from the store (refusing a store whose tables and journal disagree) and starts the shards. */
  static async open(opts: EngineOptions): Promise<Engine> {
    if (!Number.isInteger(opts.shards) || opts.shards < 1) throw new Error(`shards must be a positive integer, got ${opts.shards}`);
    const t0 = performance.now();
    // Loaded now, before any order is placed: the first order's latency does not pay for it (orders.ts).
    orderIndexOf(opts.store);
    const proven =
      opts.proof ??
      verifyStore(opts.store, {
        checkpoints: opts.checkpoints,
        skipped: (c, why) => opts.log.warn({ checkpoint: c.file, why }, 'checkpoint not used; trying an older one'),
      });
    if (opts.proof === undefined) opts.onProof?.(proven);
    // A proof given or kept by the caller stays as it is: start-up restores from copies of the records it changes.
    const shared = opts.proof !== undefined || opts.onProof !== undefined;
    const verified: VerifiedStore = shared ? { ...proven, materialized: { ...proven.materialized, openOrders: ownRecords(proven.materialized.openOrders) } } : proven;
    const e = new Engine(opts, verified.materialized.lastSeq);
    e.proof = verified;
    try {
      await startEngine(
        { store: opts.store, ledger: e.ledger, markets: e.markets, orders: e.orders, link: e.link, marketAdmin: e.marketAdmin, admission: e.admission, trades: e.trades, life: e.life, log: opts.log },
        verified,
        t0,
        opts.proof !== undefined,
      );
    } catch (err) {
      await e.link.terminate();
      throw err;
    }
    e.trades.start();
    return e;
  }

  /** How start-up proved the store; the first call takes it, later ones get undefined (it may hold much). */
  takeStartupProof(): VerifiedStore | undefined {
    const p = this.proof;
    this.proof = undefined;
    return p;
  }

  /** The store is about to be replaced (a sandbox revert, src/node/revert.ts): close() records no shutdown state hash in it. */
  discard(): void {
    this.discarded = true;
  }

  /** Stops accepting, lets in-flight commands finish and commit, stops the workers. The store stays open. */
  async close(): Promise<void> {
    if (this.life.closing) {
      await this.commit.drain();
      return;
    }
    if (this.life.halted) {
      await this.link.terminate();
      await this.commit.drain();
      return;
    }
    this.trades.stop();
    const stops = this.link.stop();
    this.life.closing = true;
    await Promise.all(stops);
    this.commit.flush();
    await this.commit.drain();
    if (!this.life.halted && !this.discarded) {
      await this.store.meta.put(metaKeys.stateHash, this.stateHash());
      mergeOrderIdRuns(this.store);
    }
    await this.link.terminate();
  }

  /** Why the engine stopped, if it did. */
  get failure(): Error | undefined {
    return this.life.halted;
  }

  /**
   * Resolves once everything journaled so far is durable: `{ ok: true }`, else the failure (journal, engine
   * down) that kept it from becoming durable. Readers of in-memory state (an order, open orders, balances)
   * take their copy first and answer after this, so no reply shows what a crash could still undo. With
   * nothing in flight it resolves in a microtask; otherwise within the commit in flight and the next.
   */
  afterCommit(): Promise<OpResult> {
    return this.commit.afterCommit();
  }

  // ---- markets --------------------------------------------------------------------------------------------

  /** Idempotent; creates the market or updates its parameters and flags. Throws on invalid input. */
  registerMarket(m: MarketInput): void {
    this.marketAdmin.register(m);
  }

  /**
   * Asks the market's shard to publish every change it has not published yet (OP_SNAPSHOT); resolves once
   * the snapshots of all its markets reflect at least every command answered before the call.
   */
  refreshSnapshot(conditionId: string): Promise<void> {
    return this.snapshots.refresh(conditionId);
  }

  // ---- time (the sandbox's test clock, edge/sandbox/test-clock.ts) ------------------------------------------

  /**
   * Without `untilSec`: every shard follows `t` from now on. With it: every GTD order due by `untilSec`
   * expires, in time order across shards, each second's orders journaled at that second
   * (EngineOptions.onExpiry); only the shards that had some take `t` on the way (an advance tells all of
   * them its frozen time first, and the time it ends at last).
   */
  async shardTime(t: ShardTime, untilSec = 0): Promise<void> {
    if (untilSec > 0) await this.shardClock.expireThrough(t, untilSec);
    else await this.shardClock.follow(t);
  }

  /** A bound on the earliest second a GTD order may be due in any shard: -1 unknown, Infinity none. */
  nextExpirySec(): number {
    return this.shardClock.nextExpirySec();
  }

  /** Resolves once every command sent to the shards so far has been answered (at once when none is in flight). */
  idle(): Promise<void> {
    return this.link.idle();
  }

  // ---- orders ---------------------------------------------------------------------------------------------

  placeOrder(o: PlaceInput): Promise<PlaceResponse> {
    return this.admission.place(o);
  }

  /**
   * Cancels the orders among `orderIds` that `signer` signed; any other id is 'order not found'. An API key's
   * cancels pass its address: an EOA's orders are signed by their wallet, a proxy's or Safe's by the EOA
   * that controls it (edge/auth/funders.ts), so the key reaches both.
   */
  cancelOrders(signer: string, orderIds: string[]): Promise<CancelResponse> {
    return this.admission.cancelOrders(signer, orderIds);
  }

  /** Cancels the open orders `signer` signed in a market and/or token (both given: both must match; none: all). */
  cancelMarketOrders(signer: string, f: { conditionId?: string; tokenId?: string }): Promise<CancelResponse> {
    return this.admission.cancelMarketOrders(signer, f);
  }

  /** Cancels every open order `signer` signed. */
  cancelAll(signer: string): Promise<CancelResponse> {
    return this.admission.cancelMarketOrders(signer, {});
  }

  // ---- wallet operations ----------------------------------------------------------------------------------

  deposit(wallet: string, units: number): Promise<OpResult> {
    return this.walletOps.deposit(wallet, units);
  }

  withdraw(wallet: string, units: number): Promise<OpResult> {
    return this.walletOps.withdraw(wallet, units);
  }

  split(wallet: string, conditionId: string, units: number): Promise<OpResult> {
    return this.walletOps.split(wallet, conditionId, units);
  }

  merge(wallet: string, conditionId: string, units: number): Promise<OpResult> {
    return this.walletOps.merge(wallet, conditionId, units);
  }

  redeem(wallet: string, conditionId: string): Promise<OpResult> {
    return this.walletOps.redeem(wallet, conditionId);
  }

  /**
   * Admin (the sandbox's test controls): `units` of the market's outcome `outcome` to the wallet, minted as
   * complete sets whose other half goes to the house wallet; `pricePips` is their cost in the wallet's position.
   */
  creditTokens(wallet: string, conditionId: string, outcome: 0 | 1, units: number, pricePips: number): Promise<OpResult> {
    return this.walletOps.credit(wallet, conditionId, outcome, units, pricePips);
  }

  /** Cancels the market's open orders (CANCELED_MARKET_RESOLVED), then records the winner. */
  resolveMarket(conditionId: string, winningOutcome: 0 | 1): Promise<OpResult> {
    return this.marketAdmin.resolve(conditionId, winningOutcome);
  }

  // ---- reads ----------------------------------------------------------------------------------------------

  balances(wallet: string): BalancesView {
    return this.walletOps.balances(wallet);
  }

  /** What the wallet's MATCHED and RETRYING trades delivered and it cannot spend yet (not in balances()). */
  unsettled(wallet: string): UnsettledView {
    return this.walletOps.unsettled(wallet);
  }

  /** How trades settle (the engine's settings) and how many are still settling, by status. */
  tradeSettlement(): { settings: Readonly<TradeSettlement>; settling: { MATCHED: number; RETRYING: number; MINED: number } } {
    return { settings: this.trades.settings, settling: this.trades.counts() };
  }

  /**
   * Current state of an order: in memory while open or not yet committed, else from LMDB. The in-memory
   * state may hold effects not yet durable: a reply built from it waits for afterCommit().
   */
  getOrder(orderId: string): OrderRecord | undefined {
    const o = this.orders.get(orderId);
    if (o !== undefined) return o.accepted ? o.rec : undefined;
    return this.orders.recentOf(orderId) ?? readOrder(this.store, orderId);
  }

  /** Allocates: the open (accepted, resting) orders `signer` signed (its wallet's and its funders'), oldest first. */
  openOrders(signer: string, filter: OpenOrdersFilter = {}): OrderRecord[] {
    return this.orders.openOrders(signer, filter);
  }

  /**
   * The books' committed state right after open(), for projections that follow the journal from there
   * (projections/committed-books.ts): every market, every resting order, each token's last trade.
   * Allocates. Only then is memory all committed (later it runs ahead of the journal by the batch in
   * flight), so call it before anything is placed.
   */
  bookSeed(): { markets: MarketRow[]; resting: OrderRecord[]; lastTrades: Array<[string, { pricePips: number; side: 'BUY' | 'SELL' }]> } {
    const resting: OrderRecord[] = [];
    for (const o of this.orders.all()) if (o.live && o.accepted) resting.push(o.rec);
    return { markets: [...this.markets.values()].map(rowOf), resting, lastTrades: [...this.markets.lastTrades] };
  }

  /**
   * Allocates: every wallet's open (resting) orders in the given markets, oldest first (liquidity rewards).
   * One pass over the orders in memory. The in-memory state may hold effects not yet durable.
   */
  restingOrders(conditionIds: ReadonlySet<string>): OrderRecord[] {
    return this.orders.restingIn(conditionIds);
  }

  bookSnapshot(tokenId: string): { version: number; json: string } | undefined {
    return this.snapshots.get(tokenId);
  }

  /**
   * True when the token's market may have changed after its published snapshot was built: a RESULT that may
   * have changed the book was applied here and no publication reflecting it has arrived yet. A reader that
   * must see its own acknowledged writes then asks refreshSnapshot. False for an unknown token.
   */
  snapshotStale(tokenId: string): boolean {
    return this.snapshots.stale(tokenId);
  }

  lastTradePrice(tokenId: string): { pricePips: number; side: 'BUY' | 'SELL' } | undefined {
    return this.markets.lastTrades.get(tokenId);
  }

  /**
   * A token's market and outcome as the engine holds them, not a copy (order checks ask once per order):
   * read them at once, keep nothing.
   */
  tokenMarketOf(tokenId: string): { readonly market: Readonly<MarketRow>; readonly outcome: 0 | 1 } | undefined {
    return this.markets.token(tokenId);
  }

  /** Market parameters and state as the engine holds them. */
  market(conditionId: string): (MarketRow & { shard: number }) | undefined {
    const m = this.markets.get(conditionId);
    return m === undefined ? undefined : { ...rowOf(m), shard: m.shard };
  }

  onCommitted(listener: (events: JournalEvent[]) => void): void {
    this.commit.onCommitted(listener);
  }

  /** Calls `listener` with the token ids of each snapshot publication, once the new snapshots are readable. */
  onSnapshots(listener: (tokenIds: readonly string[]) => void): void {
    this.snapshots.onSnapshots(listener);
  }

  /** Hash of balances, open orders, market resolutions, trades still settling and net deposits (journal/recovery.ts). */
  stateHash(): string {
    return stateHash(this.ledger, this.orders, this.markets, this.trades);
  }

  /** Allocates: tests and benchmarks. Ledger invariants against the open orders (ledger.checkLedger). */
  checkLedger(): string[] {
    return checkLedger(this.ledger, this.orders, this.trades);
  }

  /** USDC totals of the collateral identity: wallets + collateral == netDeposits. */
  usdcTotals(): { wallets: number; collateral: number; netDeposits: number } {
    return this.ledger.totalUsdc();
  }

  stats(): EngineStats {
    return {
      journalSeq: this.writer.lastSeq,
      committedSeq: this.commit.committedSeq,
      transactions: this.writer.transactions,
      batches: this.writer.batches,
      ordersAccepted: this.settlement.counters.ordersAccepted,
      fills: this.settlement.counters.fills,
      backpressureWaits: this.link.counters.backpressureWaits,
      busyRejects: this.link.counters.busyRejects,
      openOrders: this.orders.openCount(),
    };
  }
}
