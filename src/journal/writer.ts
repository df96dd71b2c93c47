/**
 * The single journal writer: appends the engine's events with consecutive global sequence numbers and
 * keeps the materialized tables (orders, balances, fills, engine markets, meta) in step,
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
 * What the writer does not keep: indexes of fills by wallet or market. They are read models, kept by the
 * wallet projections (projections/wallets.ts) from the committed journal; a fill costs the journal one
 * appended record and nothing else, which is what lets it commit ~200k fills/s (bench/journal).
 *
 * Tables written (see env.ts and keys.ts for the shapes):
 *   journal[seq]           every event except fills, appended: `order` and `status` events as the binary
 *                          records of codecs/order-codec.ts and codecs/status-codec.ts (msgpack bin; the plain object
 *                          when the record cannot hold the event exactly), every other event as its
 *                          msgpack object; read through journalEventOf (codecs/order-codec.ts)
 *   fills[seq]             every fill, as a binary record of codecs/fill-codec.ts, in blocks of up to 16 fills keyed
 *                          by their first seq, appended; the journal is the union of the two tables by seq
 *                          (readJournal in replay.ts merges them)
 *   orders[seq]            the latest state (status, size matched, fills, answer) of each order touched in
 *                          the batch, under the seq of its acceptance, whose `order` event holds the rest;
 *                          a new order's id -> seq goes to the in-memory index (orders.ts, order-index.ts)
 *   orderIds[seq]          the batch's new orders' entries of that index, one run (orders.ts)
 *   balances[wallet,asset] integer units held (available + reserved) of each balance touched
 *   engineMarkets[cid]     MarketRow of each market touched
 *   trades[fillSeq]        the status of each deferred fill's trade that moved in the batch (trades.ts)
 *   meta                   journalSeq (last seq of the batch), engine:netDeposits
 *   replication[rseq]      ROLE=sequencer: the batch's rows as well, for the read replicas (replication-log.ts)
 */
import { randomBytes } from 'node:crypto';
import type { FillEvent, JournalEvent, OrderRecord, TradeStatusName, TradingMarket } from '../domain/events.ts';
import type { Store } from './env.ts';
import { BLOCK_FILLS, SLOT_HEADER, fillRecordBound, sealFills, writeSlot } from './codecs/fill-codec.ts';
import { TradeIds, newTradeIdKey } from './codecs/trade-ids.ts';
import { balanceKey, engineMetaKeys, metaKeys } from './keys.ts';
import { encodeOrderEvent } from './codecs/order-codec.ts';
import { indexOrderIds, putOrderState, stateRowOf } from './orders.ts';
import type { BatchRows, ReplicationLog } from './replication-log.ts';
import { encodeStatusEvent } from './codecs/status-codec.ts';
import { tradeRow } from './trades.ts';

/** What the engine-markets table stores per market. */
export interface MarketRow extends TradingMarket {
  marketId: number;
  /** -1 while trading, else the winning outcome. */
  resolved: -1 | 0 | 1;
}

/** Fill records are encoded into slabs of this size (a fresh one once full: lmdb-js reads values at commit). */
const SLAB_BYTES = 1 << 20;
/** Keys only ever grow in these tables: MDB_APPEND skips the B-tree search and fills pages completely. */
const APPEND = { append: true } as never;

export interface FlushResult {
  /** Resolves once the batch is committed and flushed to disk; rejects if the commit failed. */
  committed: Promise<unknown>;
  events: JournalEvent[];
  lastSeq: number;
}

export class JournalWriter {
  private seq: number;
  private events: JournalEvent[] = [];
  /** The batch's fills and their encoded records, in seq order, and the closed blocks holding them. */
  private fills: FillEvent[] = [];
  /** Where each fill's record starts: its slab and offset (numbers, not views: nothing to allocate). */
  private fillSlabs: Buffer[] = [];
  private fillOffsets: number[] = [];
  private blocks: Array<{ key: number; value: Buffer }> = [];
  /** The open block: the seq of its first fill (0 = none), where it starts in the slab, its fills. */
  private blockKey = 0;
  private blockFrom = 0;
  private blockFills = 0;
  private slab: Buffer = Buffer.allocUnsafeSlow(SLAB_BYTES);
  private slabAt = 0;
  /** Where the batch's records start in the current slab, and the slab ranges already closed (sealFills). */
  private batchFrom = 0;
  private regions: Buffer[] = [];
  /** Slabs the current batch filled, and slabs whose batch has committed (reused: no allocation, no GC). */
  private usedSlabs: Buffer[] = [];
  private freeSlabs: Buffer[] = [];
  private readonly tradeIds: TradeIds;
  private orders = new Map<string, OrderRecord>();
  private newOrders: OrderRecord[] = [];
  private balances: Array<[string, string, number]> = [];
  private markets = new Map<string, MarketRow>();
  private trades = new Map<number, [number, number]>();
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
    private readonly log?: ReplicationLog,
  ) {
    this.seq = lastSeq;
    let prefix = store.meta.get(metaKeys.tradeIdPrefix) as string | undefined;
    if (prefix === undefined) {
      // A fresh store's ids are mixed; an older store keeps its sequential ones (codecs/trade-ids.ts).
      prefix = newTradeIdKey(randomBytes(24));
      store.meta.putSync(metaKeys.tradeIdPrefix, prefix);
    }
    this.tradeIds = new TradeIds(prefix);
  }

  /** Last sequence number assigned (committed or not). */
  get lastSeq(): number {
    return this.seq;
  }

  get pending(): boolean {
    return (
      this.events.length > 0 || this.orders.size > 0 || this.balances.length > 0 || this.markets.size > 0 || this.trades.size > 0 || this.netDeposits !== undefined
    );
  }

  /**
   * Assigns the next seq and the time, gives a fill its trade id and encodes it, and buffers the event.
   * A fill's txHash is set by flush() (sealFills: one digest over the batch).
   */
  append<E extends JournalEvent>(e: E): E {
    e.seq = ++this.seq;
    e.ts = this.now();
    if (e.type === 'fill') {
      e.tradeId = this.tradeIds.text(e.seq);
      const bound = SLOT_HEADER + fillRecordBound(e) + 8;
      if (this.slabAt + bound > this.slab.length) this.nextSlab(bound);
      if (this.blockKey === 0) {
        this.blockKey = e.seq;
        this.blockFrom = this.slabAt;
        this.blockFills = 0;
      }
      const at = this.slabAt;
      this.slabAt = writeSlot(e, this.slab, at, this.tradeIds);
      this.fills.push(e);
      this.fillSlabs.push(this.slab);
      this.fillOffsets.push(at + SLOT_HEADER);
      if (++this.blockFills === BLOCK_FILLS) this.closeBlock();
    }
    this.events.push(e);
    return e;
  }

  /** A block never spans two slabs or two batches: it is one contiguous value. */
  private closeBlock(): void {
    if (this.blockKey === 0) return;
    this.blocks.push({ key: this.blockKey, value: this.slab.subarray(this.blockFrom, this.slabAt) });
    this.blockKey = 0;
  }

  private nextSlab(bound: number): void {
    this.closeBlock();
    if (this.slabAt > this.batchFrom) this.regions.push(this.slab.subarray(this.batchFrom, this.slabAt));
    this.batchFrom = 0;
    this.usedSlabs.push(this.slab);
    this.slab = (bound <= SLAB_BYTES ? this.freeSlabs.pop() : undefined) ?? Buffer.allocUnsafeSlow(Math.max(SLAB_BYTES, bound));
    this.slabAt = 0;
  }

  /** Buffers the order's current state; `isNew` indexes its id at its seq when the batch is flushed. */
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

  /** Buffers the status of a deferred fill's trade (the latest one per fill leaves with the batch). */
  putTrade(fillSeq: number, status: TradeStatusName, ts: number): void {
    this.trades.set(fillSeq, tradeRow(status, ts));
  }

  putNetDeposits(units: number): void {
    this.netDeposits = units;
  }

  /** What this batch puts beside its events, as the replication log records it. */
  private batchRows(): BatchRows {
    const rows: BatchRows = {};
    if (this.orders.size > 0) rows.o = [...this.orders.values()].map((rec) => [rec.seq, stateRowOf(rec)]);
    if (this.balances.length > 0) rows.b = this.balances;
    if (this.markets.size > 0) rows.m = [...this.markets.values()];
    if (this.trades.size > 0) rows.t = [...this.trades];
    if (this.netDeposits !== undefined) rows.n = this.netDeposits;
    return rows;
  }

  /** Issues every buffered put now (same event-loop turn = same transaction). Undefined if nothing to do. */
  flush(): FlushResult | undefined {
    if (!this.pending) return undefined;
    const s = this.store;
    let p: Promise<unknown> | undefined;
    const events = this.events;
    this.closeBlock();
    if (this.slabAt > this.batchFrom) this.regions.push(this.slab.subarray(this.batchFrom, this.slabAt));
    sealFills(this.regions, this.fillSlabs, this.fillOffsets, this.fills);
    this.regions = [];
    this.batchFrom = this.slabAt;
    // ROLE=sequencer: the values as put, for the replication log's publisher (no read-back). Fill blocks are
    // copied: their slab is reused once the batch commits.
    const logged = this.log === undefined ? undefined : { e: [] as Array<[number, unknown]>, f: this.blocks.map((b): [number, Uint8Array] => [b.key, Buffer.from(b.value)]) };
    const put = (seq: number, v: unknown) => {
      logged?.e.push([seq, v]);
      return s.journal.put(seq, v, APPEND);
    };
    for (const b of this.blocks) p = s.fills.put(b.key, b.value, APPEND);
    for (let i = 0; i < events.length; i++) {
      const e = events[i];
      // An order record is carved from order-codec's slab, never rewritten: nothing to release at commit.
      if (e.type === 'order') p = put(e.seq, encodeOrderEvent(e) ?? e);
      else if (e.type === 'status') p = put(e.seq, encodeStatusEvent(e) ?? e);
      else if (e.type !== 'fill') p = put(e.seq, e);
    }
    indexOrderIds(s, this.newOrders);
    for (const rec of this.orders.values()) p = putOrderState(s, rec);
    for (const [w, a, held] of this.balances) p = s.balances.put(balanceKey(w, a), held);
    for (const row of this.markets.values()) p = s.engineMarkets.put(row.conditionId, row);
    for (const [seq, row] of this.trades) p = s.trades.put(seq, row);
    if (this.netDeposits !== undefined) p = s.meta.put(engineMetaKeys.netDeposits, this.netDeposits);
    const rseq = logged === undefined ? 0 : this.log!.putJournalBatch(events.length > 0 ? events[0].seq : this.seq + 1, this.seq, this.batchRows(), logged);
    p = s.meta.put(metaKeys.journalSeq, this.seq);
    this.events = [];
    // Kept and emptied, not replaced: regrowing them from empty every batch was a copy per doubling.
    this.fills.length = 0;
    this.fillSlabs.length = 0;
    this.fillOffsets.length = 0;
    this.blocks.length = 0;
    this.orders = new Map();
    this.newOrders = [];
    this.balances = [];
    this.markets = new Map();
    if (this.trades.size > 0) this.trades = new Map();
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
    // The batch's slabs (all but the one still being filled) can be reused once lmdb-js has written them.
    if (this.usedSlabs.length > 0) {
      const done = this.usedSlabs;
      this.usedSlabs = [];
      p.then(
        () => {
          for (const b of done) if (b.length === SLAB_BYTES && this.freeSlabs.length < 8) this.freeSlabs.push(b);
        },
        () => undefined,
      );
    }
    const durable = p.then(() => s.root.flushed);
    if (rseq > 0) this.log!.track(rseq, durable);
    // cluster.failover: acknowledged only once the stream holds the batch, so a takeover loses nothing acknowledged.
    const confirm = rseq > 0 ? this.log!.confirmation : undefined;
    return { committed: confirm === undefined ? durable : durable.then(() => confirm(rseq)), events, lastSeq: this.seq };
  }
}
