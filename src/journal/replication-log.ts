/**
 * The replication log (ROLE=sequencer): everything a read replica must write to hold the sequencer's state,
 * in the order it committed, keyed by a replication sequence (rseq) of its own.
 *
 * Why a log beside the journal. The journal's events do not carry all the state the writer puts: the
 * balances, the net deposits, the engine's market rows, the orders' state rows (with the answer each order
 * was given) and the trades' settlement rows are the engine's results, written beside the events
 * (writer.ts). A replica that recomputed them would be a second engine. So the writer logs the rows of each
 * batch in the batch's own transaction, and a replica writes the very rows: its tables equal the
 * sequencer's, state hash included (recovery.ts). The catalog, the catalog indexes, the wallet profiles and
 * the API keys are not journaled at all; their writes are captured here (captureWrites) and logged in the
 * transaction that makes them. Because the log is in LMDB, a publisher can re-read any record by rseq: an
 * outbox that overflowed, or a restart, is refilled from here (replication/publisher.ts).
 *
 * Record (msgpack, table `replication`, key rseq):
 *   { t, T?, j?: [first, last], rows?, a? }
 *   t     ms since the epoch when the record was issued (the replicas' lag in seconds)
 *   T     the term of the sequencer that issued it (its lease's fencing token; absent without a lease). The
 *         first record of a term holds nothing else: it proves, by where it lands in the stream, that its
 *         sequencer applied every record before it (replication/failover.ts)
 *   j     the journal batch [first, last] (first = last + 1 when the batch held rows but no event)
 *   rows  o: [seq, order state row][], b: [wallet, asset, held][], m: MarketRow[], t: [fillSeq, trade row][],
 *         n: net deposits (absent when unchanged)
 *   a     aux writes, in order: [db, key, value] puts and [db, key] removes; db c = catalog, i = indexes,
 *         p = profiles, k = api-keys, m = prices (the midpoint samples only: logWrite; trade prices are
 *         projected from the fills on every node), v = views (the liquidity-reward accruals only: logWrite;
 *         every other view is projected from the journal on every node)
 *
 * Ordering. A journal batch's rseq is drawn when the writer issues it, in journal order (one batch at a
 * time). An aux record's rseq is drawn when its transaction runs. Records therefore commit in rseq order
 * except when an aux transaction and a journal batch share a commit, and those touch disjoint tables; the
 * log's committedRseq is the highest rseq with every lower one committed, the only prefix ever published.
 */
import type { Store } from './env.ts';
import { engineMetaKeys, metaKeys } from './keys.ts';
import type { JournalEvent } from '../domain/events.ts';
import { blockRecords, decodeFill } from './codecs/fill-codec.ts';
import { ORDER_RECORD_KIND, journalEventOf, orderRecordHead } from './codecs/order-codec.ts';
import { idRunOf, type OrderStateRow } from './orders.ts';

export type AuxDb = 'c' | 'i' | 'p' | 'k' | 'm' | 'v';
/** [db, key, value] puts, [db, key] removes. */
export type AuxWrite = [db: AuxDb, key: unknown, value?: unknown];

/** An engine-markets row (writer.ts's MarketRow; named by its key only, which keeps this module below the writer). */
export interface LoggedMarketRow {
  conditionId: string;
}

export interface BatchRows {
  o?: Array<[number, OrderStateRow]>;
  b?: Array<[string, string, number]>;
  m?: LoggedMarketRow[];
  t?: Array<[number, unknown]>;
  n?: number;
}

export interface LogRecord {
  t: number;
  T?: number;
  j?: [first: number, last: number];
  rows?: BatchRows;
  a?: AuxWrite[];
}

/**
 * What is published and applied: a log record with what it names read out of the tables. `e` holds the
 * journal table's values of seqs first..last as stored (order/status records as bytes, other events as
 * objects), `f` the fill blocks keyed in that range, `p` the store's trade-id prefix.
 */
export interface ReplicatedBatch extends LogRecord {
  r: number;
  e?: Array<[number, unknown]>;
  f?: Array<[number, Uint8Array]>;
  p?: string;
}

const AUX_DBS: Readonly<Record<AuxDb, keyof Store>> = { c: 'catalog', i: 'indexes', p: 'profiles', k: 'apiKeys', m: 'prices', v: 'views' };

export class ReplicationLogError extends Error {}

export class ReplicationLog {
  /** The highest rseq with every rseq up to it committed. */
  committedRseq: number;
  private next: number;
  private readonly settled = new Set<number>();
  private readonly listeners: Array<(committedRseq: number) => void> = [];
  /** Journal batches issued and not yet handed out (takeBatch): one or two in flight. */
  private readonly fresh = new Map<number, ReplicatedBatch>();
  private prefix: string | undefined;

  /** The term every record issued from now on carries (0: no lease, records carry none). */
  private term = 0;
  /**
   * cluster.failover: resolves once the stream confirmed a record (the publisher's whenConfirmed). A journal
   * batch's commit, and so its acknowledgement, waits for it (writer.ts); unset, the commit is the end.
   */
  confirmation: ((rseq: number) => Promise<void>) | undefined;

  private constructor(private readonly store: Store, last: number) {
    this.committedRseq = last;
    this.next = last + 1;
  }

  /** ms and term of a record issued now. */
  private stamp(): Pick<LogRecord, 't' | 'T'> {
    return this.term > 0 ? { t: Date.now(), T: this.term } : { t: Date.now() };
  }

  /**
   * Begins a term (a lease just taken): every later record carries it, and the first, issued here, holds
   * nothing else. Returns its rseq.
   */
  beginTerm(term: number): number {
    const seen = Math.max(this.term, (this.store.meta.get(metaKeys.replicationTerm) as number | undefined) ?? 0);
    if (!Number.isSafeInteger(term) || term <= seen) throw new ReplicationLogError(`term ${term} does not follow term ${seen}`);
    this.term = term;
    const rseq = this.next++;
    void this.store.meta.put(metaKeys.replicationTerm, term);
    this.track(rseq, this.store.replication.put(rseq, this.stamp() satisfies LogRecord));
    return rseq;
  }

  /**
   * Opens the store's log. Refuses a store whose journal went on without it (a sequencer's store that ran
   * as ROLE=single, or a single node's store with history made a sequencer): the replicas could never get
   * the batches in between.
   */
  static open(store: Store): ReplicationLog {
    const journalSeq = (store.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
    const covered = (store.meta.get(metaKeys.replicationJournalSeq) as number | undefined) ?? 0;
    if (covered !== journalSeq) {
      throw new ReplicationLogError(
        `ROLE=sequencer needs a store whose replication log covers its journal: the journal ends at seq ${journalSeq}, the log at ${covered} ` +
          '(start a sequencer on an empty DATA_DIR, and never run its store as ROLE=single)',
      );
    }
    let last = 0;
    for (const key of store.replication.getKeys({ reverse: true, limit: 1 })) last = key as number;
    return new ReplicationLog(store, last);
  }

  /** The last rseq drawn (committed or not). */
  get lastRseq(): number {
    return this.next - 1;
  }

  /** Told the new committedRseq each time it moves. */
  onCommitted(listener: (committedRseq: number) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Issues the record of a journal batch (writer.ts, inside its flush: the same turn, so the same
   * transaction as the batch). Returns the rseq; pass the batch's commit promise to `track`.
   */
  putJournalBatch(first: number, last: number, rows: BatchRows, values: { e: Array<[number, unknown]>; f: Array<[number, Uint8Array]> }): number {
    const rseq = this.next++;
    const rec: LogRecord = { ...this.stamp(), j: [first, last], rows };
    void this.store.replication.put(rseq, rec);
    void this.store.meta.put(metaKeys.replicationJournalSeq, last);
    this.prefix ??= this.store.meta.get(metaKeys.tradeIdPrefix) as string;
    this.fresh.set(rseq, { r: rseq, ...rec, e: values.e, f: values.f, p: this.prefix });
    return rseq;
  }

  /**
   * The record at `rseq` as published: a journal batch just written is taken from memory (what the writer put,
   * no read-back), anything else read from the tables. Call once per committed record, in order: it forgets
   * what it hands out.
   */
  takeBatch(rseq: number): ReplicatedBatch | undefined {
    const b = this.fresh.get(rseq);
    if (b === undefined) return readReplicatedBatch(this.store, rseq);
    this.fresh.delete(rseq);
    return b;
  }

  /** Marks `rseq` committed once `committed` resolves (a failed commit halts the engine: it never settles). */
  track(rseq: number, committed: Promise<unknown>): void {
    committed.then(
      () => this.settle(rseq),
      () => undefined,
    );
  }

  private settle(rseq: number): void {
    this.settled.add(rseq);
    const before = this.committedRseq;
    while (this.settled.delete(this.committedRseq + 1)) this.committedRseq++;
    if (this.committedRseq !== before) for (const l of this.listeners) l(this.committedRseq);
  }

  /** Aux writes of the child transaction running now (captureWrites). */
  private inTxn: AuxWrite[] | undefined;
  /** Aux writes of this turn outside a transaction, logged as one record at its end, and their promises. */
  private loose: AuxWrite[] | undefined;
  private looseDone: Array<Promise<unknown>> = [];

  /**
   * Logs a write another path makes (midpoint samples, reward accruals: they go out with the deferred view writes): the
   * record commits on its own, so a crash can lose a sample or keep one the sequencer lost; a sample is an
   * observation, not a balance.
   */
  logWrite(db: AuxDb, key: unknown, value: unknown): void {
    this.logLoose([db, key, value], undefined);
  }

  private logLoose(w: AuxWrite, done: Promise<unknown> | undefined): void {
    if (this.loose === undefined) {
      this.loose = [];
      queueMicrotask(() => {
        const writes = this.loose!;
        const done = this.looseDone;
        this.loose = undefined;
        this.looseDone = [];
        // Issued in the writes' turn: committed with them, and known committed when its own put is.
        const rseq = this.next++;
        done.push(this.store.replication.put(rseq, { ...this.stamp(), a: writes } satisfies LogRecord));
        this.track(rseq, Promise.all(done));
      });
    }
    this.loose.push(w);
    if (done !== undefined) this.looseDone.push(done);
  }

  /** Issues an aux record inside the child transaction running now (its promise is the transaction's). */
  private putAux(writes: AuxWrite[]): number {
    const rseq = this.next++;
    void this.store.replication.put(rseq, { ...this.stamp(), a: writes } satisfies LogRecord);
    return rseq;
  }

  /**
   * The store as the sequencer's services must use it: writes to the catalog, indexes, profiles and API
   * keys are logged. Inside `root.childTransaction` (the catalog's writes) the record joins the child
   * transaction, so it commits or aborts with them; other writes (API keys, profiles) are logged once per
   * event-loop turn, which lmdb-js commits as one transaction with the writes.
   */
  captureWrites(store: Store): Store {
    const record = (w: AuxWrite, done: Promise<unknown> | undefined) => {
      if (this.inTxn !== undefined) this.inTxn.push(w);
      else this.logLoose(w, done);
    };
    const wrap = (code: AuxDb) => {
      const db = store[AUX_DBS[code]] as unknown as Record<string, (...a: unknown[]) => unknown>;
      const put = (key: unknown, value: unknown, ...rest: unknown[]) => {
        const p = db.put.call(db, key, value, ...rest) as Promise<unknown>;
        record([code, key, value], p);
        return p;
      };
      const remove = (key: unknown, ...rest: unknown[]) => {
        const p = db.remove.call(db, key, ...rest) as Promise<unknown>;
        record([code, key], p);
        return p;
      };
      return new Proxy(db, { get: forwarding({ put, remove }, ['putSync', 'removeSync'], (prop) => `${AUX_DBS[code]}.${prop}`) });
    };
    const childTransaction = (cb: () => unknown) => {
      let rseq = 0;
      const p = (store.root.childTransaction as (cb: () => unknown) => Promise<unknown>).call(store.root, () => {
        this.inTxn = [];
        try {
          const out = cb();
          if (this.inTxn.length > 0) rseq = this.putAux(this.inTxn);
          return out;
        } finally {
          this.inTxn = undefined;
        }
      });
      // A child transaction that aborted (its callback threw) issued no record: nothing to track.
      p.then(
        () => rseq > 0 && this.settle(rseq),
        () => undefined,
      );
      return p;
    };
    const root = new Proxy(store.root as unknown as Record<string, unknown>, { get: forwarding({ childTransaction }, [], (prop) => `root.${prop}`) });
    return {
      ...store,
      root: root as unknown as Store['root'],
      catalog: wrap('c') as unknown as Store['catalog'],
      indexes: wrap('i') as unknown as Store['indexes'],
      profiles: wrap('p') as unknown as Store['profiles'],
      apiKeys: wrap('k') as unknown as Store['apiKeys'],
      close: store.close,
    };
  }
}

/**
 * A Proxy `get` handler: the given replacements, the `refused` writes (they would commit outside the log), every
 * other member the target's own (methods bound once, not per access: the catalog reads through here).
 */
function forwarding(replace: Record<string, unknown>, refused: readonly string[], name: (prop: string) => string): ProxyHandler<Record<string, unknown>>['get'] {
  const bound = new Map<PropertyKey, unknown>();
  return (target, prop) => {
    if (typeof prop === 'string' && prop in replace) return replace[prop];
    if (typeof prop === 'string' && refused.includes(prop)) throw new ReplicationLogError(`${name(prop)} would commit outside the replication log`);
    const v = Reflect.get(target, prop, target) as unknown;
    if (typeof v !== 'function') return v;
    let b = bound.get(prop);
    if (b === undefined) bound.set(prop, (b = (v as (...a: unknown[]) => unknown).bind(target)));
    return b;
  };
}

/** The record at `rseq` with what it names read out of the tables, or undefined when there is none. */
export function readReplicatedBatch(store: Store, rseq: number): ReplicatedBatch | undefined {
  const rec = store.replication.get(rseq) as LogRecord | undefined;
  if (rec === undefined) return undefined;
  const out: ReplicatedBatch = { r: rseq, ...rec };
  if (rec.j !== undefined) {
    const [first, last] = rec.j;
    out.e = [];
    out.f = [];
    if (last >= first) {
      for (const { key, value } of store.journal.getRange({ start: first, end: last + 1 })) out.e.push([key, value]);
      for (const { key, value } of store.fills.getRange({ start: first, end: last + 1 })) out.f.push([key, Buffer.from(value)]);
    }
    out.p = store.meta.get(metaKeys.tradeIdPrefix) as string;
  }
  return out;
}

/**
 * The journal events a replicated batch holds, in seq order, decoded from its own values (the journal
 * table's and the fill blocks, as the sequencer stored them): what a follower hands its read models once
 * the batch is committed, without reading back what it just wrote. Allocates.
 */
export function eventsOfBatch(b: ReplicatedBatch): JournalEvent[] {
  const events: JournalEvent[] = [];
  for (const [seq, value] of b.e ?? []) events.push(journalEventOf(value, seq));
  const fills = b.f ?? [];
  if (fills.length === 0) return events;
  const merged: JournalEvent[] = [];
  let i = 0;
  for (const [, block] of fills) {
    for (const rec of blockRecords(Buffer.from(block.buffer, block.byteOffset, block.byteLength))) {
      const f = decodeFill(rec);
      while (i < events.length && events[i]!.seq < f.seq) merged.push(events[i++]!);
      merged.push(f);
    }
  }
  while (i < events.length) merged.push(events[i++]!);
  return merged;
}

/** The order id of a journal table value that is an `order` event (record or object), else undefined. */
function orderIdOf(value: unknown, seq: number): string | undefined {
  if (value instanceof Uint8Array) return value[0] === ORDER_RECORD_KIND ? orderRecordHead(value, seq).orderId : undefined;
  const e = value as { type?: unknown; orderId?: unknown };
  return e.type === 'order' && typeof e.orderId === 'string' ? e.orderId : undefined;
}

/**
 * Issues every write of `batches` (consecutive, checked by the caller) in this turn: one transaction. The
 * journal's and fills' values are written as the sequencer stored them (with the order-id run of the batch's
 * new orders, orders.ts), the rows as it put them, then
 * meta: journalSeq, net deposits, the last rseq applied, the highest term. `keepLog` (a standby) also writes
 * each record into the store's own replication log, so the store can serve as a sequencer's
 * (ReplicationLog.open). Resolves when committed.
 */
export function applyReplicatedBatches(store: Store, batches: readonly ReplicatedBatch[], keepLog = false): Promise<unknown> {
  let p: Promise<unknown> | undefined;
  let term = (store.meta.get(metaKeys.replicationTerm) as number | undefined) ?? 0;
  for (const b of batches) {
    if (b.T !== undefined && b.T > term) {
      term = b.T;
      p = store.meta.put(metaKeys.replicationTerm, term);
    }
    if (keepLog) {
      const rec: LogRecord = { t: b.t };
      if (b.T !== undefined) rec.T = b.T;
      if (b.j !== undefined) rec.j = b.j;
      if (b.rows !== undefined) rec.rows = b.rows;
      if (b.a !== undefined) rec.a = b.a;
      p = store.replication.put(b.r, rec);
      if (b.j !== undefined) p = store.meta.put(metaKeys.replicationJournalSeq, b.j[1]);
    }
    if (b.p !== undefined && store.meta.get(metaKeys.tradeIdPrefix) === undefined) void store.meta.put(metaKeys.tradeIdPrefix, b.p);
    const newOrders: Array<{ orderId: string; seq: number }> = [];
    for (const [seq, value] of b.e ?? []) {
      p = store.journal.put(seq, value);
      const id = orderIdOf(value, seq);
      if (id !== undefined) newOrders.push({ orderId: id, seq });
    }
    // The order-id index's run, as the sequencer's writer put it (orders.ts); the replica engine indexes them in memory.
    if (newOrders.length > 0) p = store.orderIds.put(newOrders[0]!.seq, idRunOf(newOrders));
    for (const [key, block] of b.f ?? []) p = store.fills.put(key, Buffer.from(block.buffer, block.byteOffset, block.byteLength));
    const rows = b.rows;
    if (rows !== undefined) {
      for (const [seq, row] of rows.o ?? []) p = store.orders.put(seq, row);
      for (const [w, a, held] of rows.b ?? []) p = store.balances.put([w, a], held);
      for (const row of rows.m ?? []) p = store.engineMarkets.put(row.conditionId, row);
      for (const [seq, row] of rows.t ?? []) p = store.trades.put(seq, row);
      if (rows.n !== undefined) p = store.meta.put(engineMetaKeys.netDeposits, rows.n);
    }
    for (const w of b.a ?? []) {
      const db = store[AUX_DBS[w[0]]] as unknown as { put(k: unknown, v: unknown): Promise<unknown>; remove(k: unknown): Promise<unknown> };
      p = w.length >= 3 ? db.put(w[1], w[2]) : db.remove(w[1]);
    }
    if (b.j !== undefined) p = store.meta.put(metaKeys.journalSeq, b.j[1]);
    p = store.meta.put(metaKeys.replicaAppliedRseq, b.r);
  }
  return p ?? Promise.resolve();
}

/**
 * Removes the log's records with rseq <= `upTo` (retention: what the stream no longer needs to be refilled
 * with, replication/snapshot-shipper.ts), a slice of removes per event-loop turn so that no commit waits
 * behind one long transaction. Resolves with how many went once they are committed.
 */
export async function pruneReplicationLog(store: Store, upTo: number, slice = 1000): Promise<number> {
  let n = 0;
  let last: Promise<unknown> = Promise.resolve();
  for (;;) {
    const keys = [...store.replication.getKeys({ end: upTo + 1, limit: slice })] as number[];
    if (keys.length === 0) break;
    for (const k of keys) last = store.replication.remove(k);
    n += keys.length;
    await last;
  }
  return n;
}
