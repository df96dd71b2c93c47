/**
 * The single journal writer: appends the engine's events with consecutive global sequence numbers and
 * keeps the materialized tables (orders, balances, fills and their indexes, engine markets, meta) in step,
 * all in the same LMDB transaction, so the store is self-consistent at every commit.
 *
 * Group commit. The engine buffers one batch of effects (everything one event-loop turn produced: a ring
 * drain, a burst of deposits, ...) and calls flush() once, in that same turn. flush() issues every put
 * synchronously; lmdb-js commits all puts of one turn in one transaction (and may fold the next turns in
 * while a commit is in flight) and resolves each put's promise after that transaction is committed and
 * synced. The promise of the batch's last put is the batch's commit: callers are acknowledged only after
 * it. Commits happen in issue order, so an acknowledged effect never survives a crash that loses an
 * earlier one. `transactions` counts distinct commit promises (lmdb-js hands out one per transaction).
 *
 * Nothing is put before flush(): if the engine fails half-way through a batch, no partial effect is queued.
 *
 * Tables written (see env.ts and keys.ts for the shapes):
 *   journal[seq]           every event (JournalEvent); for a fill only a FillStub marker, because
 *   fills[seq]             holds the fill itself (FillRow, domain/events.ts) under its journal seq: a fill is
 *                          stored once, readJournal (recovery.ts) resolves the stubs
 *   indexes                ix.fillsByMarket, ix.fillsByWallet (both parties), ix.ordersByWallet (new orders)
 *   orders[orderId]        OrderRecord, the latest state of each order touched in the batch
 *   balances[wallet,asset] integer units held (available + reserved) of each balance touched
 *   engineMarkets[cid]     MarketRow of each market touched
 *   meta                   journalSeq (last seq of the batch), engine:netDeposits
 */
import { hash } from 'node:crypto';
import { fillToRow, type FillEvent, type FillStub, type JournalEvent, type OrderRecord } from '../domain/events.ts';
import type { Store } from './env.ts';
import { balanceKey, engineMetaKeys, ix, metaKeys } from './keys.ts';

/** What the engine-markets table stores per market. */
export interface MarketRow {
  conditionId: string;
  marketId: number;
  tokenIds: [string, string];
  tickPips: number;
  minSizeUnits: number;
  makerFeeBps: number;
  takerFeeBps: number;
  acceptingOrders: boolean;
  negRisk: boolean;
  /** -1 while trading, else the winning outcome. */
  resolved: -1 | 0 | 1;
}

const EMPTY = Buffer.alloc(0);

/**
 * Trade id and transaction hash of a fill: the two halves of a SHA-512 over the fill's identifying
 * content (seq, time, market, orders, size, prices, amounts), so both are deterministic 0x + 64 hex digests
 * of the journal record and a replay reproduces them.
 */
export function fillDigests(f: FillEvent): { tradeId: string; txHash: string } {
  const h = hash(
    'sha512',
    `${f.seq}|${f.ts}|${f.conditionId}|${f.kind}|${f.takerOrderId}|${f.makerOrderId}|${f.size}|${f.takerPricePips}|${f.makerPricePips}|${f.takerUsdc}|${f.makerUsdc}|${f.takerFee}|${f.makerFee}`,
    'hex',
  );
  return { tradeId: '0x' + h.slice(0, 64), txHash: '0x' + h.slice(64) };
}

export interface FlushResult {
  /** Resolves once the batch is committed and flushed to disk; rejects if the commit failed. */
  committed: Promise<unknown>;
  events: JournalEvent[];
  lastSeq: number;
}

export class JournalWriter {
  private seq: number;
  private events: JournalEvent[] = [];
  private orders = new Map<string, OrderRecord>();
  private newOrders: OrderRecord[] = [];
  private balances: Array<[string, string, number]> = [];
  private markets = new Map<string, MarketRow>();
  private netDeposits: number | undefined;
  private lastPromise: Promise<unknown> | undefined;
  /** Distinct LMDB transactions used so far (group-commit measurement). */
  transactions = 0;
  /** Batches flushed so far. */
  batches = 0;

  constructor(
    private readonly store: Store,
    lastSeq: number,
    private readonly now: () => number,
  ) {
    this.seq = lastSeq;
  }

  /** Last sequence number assigned (committed or not). */
  get lastSeq(): number {
    return this.seq;
  }

  get pending(): boolean {
    return this.events.length > 0 || this.orders.size > 0 || this.balances.length > 0 || this.markets.size > 0 || this.netDeposits !== undefined;
  }

  /** Assigns the next seq and the time, computes a fill's digests, and buffers the event. */
  append<E extends JournalEvent>(e: E): E {
    e.seq = ++this.seq;
    e.ts = this.now();
    if (e.type === 'fill') {
      const d = fillDigests(e);
      e.tradeId = d.tradeId;
      e.txHash = d.txHash;
    }
    this.events.push(e);
    return e;
  }

  /** Buffers the order's current state; `isNew` adds its ordersByWallet index entry. */
  putOrder(rec: OrderRecord, isNew: boolean): void {
    this.orders.set(rec.orderId, rec);
    if (isNew) this.newOrders.push(rec);
  }

  putBalance(wallet: string, asset: string, held: number): void {
    this.balances.push([wallet, asset, held]);
  }

  putMarket(row: MarketRow): void {
    this.markets.set(row.conditionId, row);
  }

  putNetDeposits(units: number): void {
    this.netDeposits = units;
  }

  /** Issues every buffered put now (same event-loop turn = same transaction). Undefined if nothing to do. */
  flush(): FlushResult | undefined {
    if (!this.pending) return undefined;
    const s = this.store;
    let p: Promise<unknown> | undefined;
    const events = this.events;
    for (let i = 0; i < events.length; i++) {
      const e = events[i];
      if (e.type === 'fill') {
        const stub: FillStub = { type: 'fill', seq: e.seq, stub: true };
        p = s.journal.put(e.seq, stub);
        s.fills.put(e.seq, fillToRow(e));
        s.indexes.put(ix.fillsByMarket(e.conditionId, e.seq), EMPTY);
        s.indexes.put(ix.fillsByWallet(e.takerWallet, e.seq), EMPTY);
        if (e.makerWallet !== e.takerWallet) s.indexes.put(ix.fillsByWallet(e.makerWallet, e.seq), EMPTY);
      } else {
        p = s.journal.put(e.seq, e);
      }
    }
    for (const rec of this.newOrders) s.indexes.put(ix.ordersByWallet(rec.wallet, rec.seq, rec.orderId), EMPTY);
    for (const rec of this.orders.values()) p = s.orders.put(rec.orderId, rec);
    for (const [w, a, held] of this.balances) p = s.balances.put(balanceKey(w, a), held);
    for (const row of this.markets.values()) p = s.engineMarkets.put(row.conditionId, row);
    if (this.netDeposits !== undefined) p = s.meta.put(engineMetaKeys.netDeposits, this.netDeposits);
    p = s.meta.put(metaKeys.journalSeq, this.seq);
    this.events = [];
    this.orders = new Map();
    this.newOrders = [];
    this.balances = [];
    this.markets = new Map();
    this.netDeposits = undefined;
    this.batches++;
    if (p !== this.lastPromise) {
      this.transactions++;
      this.lastPromise = p;
    }
    // lmdb-js resolves a put when its transaction is committed; with overlappingSync (its default on
    // Linux) the fsync happens after that. A commit survives a process crash, but only a flushed one
    // survives a power loss, and nothing acknowledged may be lost: wait for the flush. The fsync runs
    // outside the write lock, so later batches keep committing meanwhile (group commit is unaffected).
    const durable = p.then(() => s.root.flushed);
    return { committed: durable, events, lastSeq: this.seq };
  }
}
