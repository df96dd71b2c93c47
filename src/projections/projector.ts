/**
 * Projections: read models derived from the committed journal (market data, wallet data).
 *
 * Decision (STYLE asks for it here): projections TAIL the journal by sequence; they do not run inside the
 * engine's fill transaction. The engine calls `onCommitted(events)` after each group commit, in sequence
 * order; the projector hands every event to every projection whose cursor is below the event's seq, then
 * records each projection's new cursor. Re-applying an event is impossible (seq <= cursor is skipped),
 * which is what makes a replay idempotent. After a crash the views may trail the journal; `catchUp()` at
 * start-up reads the journal from the lowest cursor and applies what each projection is missing.
 *
 * Why tail instead of joining the engine's transaction: the matching hot path stays free of read-model
 * work, a new projection can be added later and built from the whole journal, and a projection bug can
 * never fail or delay an order's commit.
 *
 * Deferred writes. A projection APPLIES an event at once, but its writes reach LMDB later, coalesced: a
 * `ViewWrites` holds the writes of every overlay that shares it (views, prices, the market-data overlays,
 * the midpoint samples) and the projector's cursors, and issues all of them in one synchronous turn, so
 * in one lmdb-js transaction, at most once every `delayMs` (20 ms). A key written again before that turn
 * is issued once, with its last value. Why: issued at once, every engine commit (a transaction every ~3
 * ms at 5,000 orders/s, 15-20 orders each) was followed by a transaction rewriting the same per-wallet
 * and per-market leaf pages of `views` and `prices`; that doubled the bytes written per order (about 5 KB
 * -> 12 KB) and cost LMDB's commit thread 6-15 µs per order.
 * When: the engine's next journal commit takes them along (`ride`, called by the group commit right
 * before it issues a batch, so they join that transaction) once the oldest has been held `rideAfterMs`
 * (20 ms); when no commit comes, a timer issues them `delayMs` (50 ms) after the first was held, in a
 * transaction of their own. Why ride: on this VM a durable transaction costs an fsync and several thread
 * wake-ups, hundreds of µs of CPU; at 100 orders/s every order's view writes were a second transaction,
 * 20 ms after the order's own. Why wait before riding: coalescing, as above (at 1,000 orders/s a commit
 * leaves every 1-2 ms).
 *
 * Crash consistency. A cursor is issued only in a flush, and a flush issues every view write held,
 * cursors last: a cursor never reaches LMDB before the view writes of the events up to it, and both land
 * in one transaction. A flush happens only between events (the timer, the explicit `flush()`, or the
 * projector itself), never inside a projection's `apply`. Memory is bounded: once `bound` writes are held
 * the projector flushes right after the event that reached it, and `catchUp()` flushes after each of its
 * batches. If issuing a write throws (a closed store, a value that cannot be encoded), cursors are no
 * longer issued at all: the views may run ahead of the cursors, which a replay tolerates (every
 * projection is idempotent over its own views), but never behind them.
 *
 * Read-your-writes: a projection's writes reach LMDB a transaction or more after the event, and lmdb-js
 * reads only committed data (its `cache` option would help, but not for array keys). Projections and the
 * queries that serve their views therefore go through a `ViewStore`, an overlay of the writes not yet
 * committed (held or issued): a point read or a prefix range sees them at once, so a client that got its
 * order acknowledged and asks for its positions next sees the fill.
 */
import type { JournalEvent } from '../domain/events.ts';
import type { Store } from '../journal/env.ts';
import { metaKeys, prefixRange, type Key } from '../journal/keys.ts';
import { readJournal } from '../journal/recovery.ts';
import type { Logger } from '../runtime/log.ts';

const DELETED = Symbol('deleted');

// ---- deferred, coalesced issue ----------------------------------------------------------------------------

/** Something holding writes for the next flush: an overlay, or the projector's cursors. */
export interface ViewSink {
  /** Issues every write it holds, synchronously (so they join the flush's transaction), and holds none. */
  issue(): void;
}

export interface ViewWritesOptions {
  /** Longest a write is held before it is issued (in a transaction of its own if no journal commit took it). Default 50 ms. */
  delayMs?: number;
  /** How long held writes wait before a journal commit takes them along (`ride`). Default 20 ms. */
  rideAfterMs?: number;
  /** Writes held (one per key) at which the projector flushes at once. Default 20,000. */
  bound?: number;
}

/**
 * The one clock of deferred view writes: overlays and the projector register here, tell it when they hold
 * a write for a key they did not hold yet (`add`), and it issues them all together, cursors last. The
 * timer is unref'd (it never keeps the process up) and `close()` flushes and stops it; a write added after
 * `close()` waits for an explicit `flush()`.
 */
export class ViewWrites {
  readonly delayMs: number;
  readonly rideAfterMs: number;
  readonly bound: number;
  /** When the oldest held write was added (performance.now()). */
  private heldSince = 0;
  private readonly sinks: ViewSink[] = [];
  private readonly cursorSinks: ViewSink[] = [];
  private held = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private failure: unknown = undefined;

  constructor(
    private readonly log: Logger,
    opts: ViewWritesOptions = {},
  ) {
    this.delayMs = opts.delayMs ?? 50;
    this.rideAfterMs = Math.min(opts.rideAfterMs ?? 20, this.delayMs);
    this.bound = opts.bound ?? 20_000;
  }

  /** An overlay: its writes are issued before any cursor of the same flush. */
  register(sink: ViewSink): void {
    this.sinks.push(sink);
  }

  /** The projector's cursors: issued last, and never once an overlay failed to issue its writes. */
  registerCursors(sink: ViewSink): void {
    this.cursorSinks.push(sink);
  }

  /** A sink holds one more write (a key it did not hold): the flush is due within `delayMs`. */
  add(): void {
    this.held++;
    if (this.timer === undefined && !this.closed) {
      this.heldSince = performance.now();
      this.timer = setTimeout(this.onTimer, this.delayMs);
      this.timer.unref();
    }
  }

  /** Writes held for the next flush, one per key and sink (cursors included). */
  get pending(): number {
    return this.held;
  }

  /** Whether the held writes reached the bound (the projector then flushes after the current event). */
  get full(): boolean {
    return this.held >= this.bound;
  }

  /** The first error an overlay threw while issuing, if any (cursors have not been issued since). */
  get failed(): unknown {
    return this.failure;
  }

  /**
   * Issues every held write now, in this turn: one transaction. Must not run inside a projection's
   * `apply` (its event's writes would go out without the cursor that covers them; harmless, but a
   * replay then re-applies it). Never throws: a failure is logged and stops the cursors (header).
   */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.held === 0) return;
    this.held = 0;
    for (const s of this.sinks) this.issue(s);
    if (this.failure !== undefined) return;
    for (const s of this.cursorSinks) this.issue(s);
  }

  /**
   * A journal batch is about to be issued in this turn (group commit's rider): the held writes join its
   * transaction if the oldest has waited `rideAfterMs`. Same rules as flush(): never inside an `apply`.
   */
  ride(): void {
    if (this.held > 0 && performance.now() - this.heldSince >= this.rideAfterMs) this.flush();
  }

  /** Shutdown: issues what is held and stops the timer for good. Call before the store closes. */
  close(): void {
    this.closed = true;
    this.flush();
  }

  private issue(s: ViewSink): void {
    try {
      s.issue();
    } catch (err) {
      if (this.failure !== undefined) return;
      this.failure = err;
      this.log.error({ err }, 'view writes failed to issue; projection cursors are no longer saved, the next start replays from the last saved ones');
    }
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.flush();
  };
}

// ---- read-your-writes overlay ---------------------------------------------------------------------------

/** A write not yet committed: held for the next flush, or issued and waiting for its commit. */
interface Pending {
  key: Key;
  value: unknown;
  /** Where it sits in the overlay; it leaves when its batch settles unless a later write replaced it. */
  node: Node;
  /** Undefined while held: a later write to the key then replaces its value in place. */
  batch: Batch | undefined;
}

/** A node of the overlay's key trie: one key part per level. */
interface Node {
  entry: Pending | undefined;
  kids: Map<string | number, Node> | undefined;
  parent: Node | undefined;
  part: string | number;
}

/** The writes that share one lmdb-js commit promise (lmdb-js hands out one per transaction). */
interface Batch {
  committed: Promise<boolean>;
  entries: Pending[];
  settled: boolean;
}

const newNode = (parent: Node | undefined, part: string | number): Node => ({ entry: undefined, kids: undefined, parent, part });

/** Orders keys as ordered-binary does: element by element, numbers before strings, shorter prefix first. */
export function compareKeys(a: Key, b: Key): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    if (typeof x === 'number') return -1;
    if (typeof y === 'number') return 1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/**
 * Writes to one array-keyed database with an overlay of what is queued but not yet committed.
 * Without a `ViewWrites`, every put/remove is issued at once (so it joins this turn's transaction). With
 * one, it is held until the next flush, and a later write to a held key replaces its value in place, so
 * only the key's last value is issued. Either way a write stays in the overlay until its commit settles
 * (resolved or rejected), unless a later write to the same key replaced it.
 *
 * The overlay is a trie over the key parts (Map per level; a Map tells 1 from '1' as ordered-binary
 * does), so a point read is a few Map lookups with no key text built, and a prefix range visits only
 * the queued writes under its prefix. Writes are settled per transaction: one promise reaction per
 * commit, not per write (the wallet projections issue about eight writes per fill on the trading path).
 */
export class ViewStore implements ViewSink {
  private readonly root: Node = newNode(undefined, '');
  private size = 0;
  private batch: Batch | undefined;
  private writes = 0;
  /** Held writes, one per key, in the order their keys were first written since the last flush. */
  private held: Pending[] = [];

  constructor(
    readonly db: Store['views'],
    readonly deferral?: ViewWrites,
  ) {
    deferral?.register(this);
  }

  get<T>(key: Key): T | undefined {
    if (this.size > 0) {
      const p = this.find(key)?.entry;
      if (p !== undefined) return p.value === DELETED ? undefined : (p.value as T);
    }
    return this.db.get(key) as T | undefined;
  }

  put(key: Key, value: unknown): void {
    if (this.deferral !== undefined) return this.hold(this.track(key, value));
    // Issued first: a put that throws leaves nothing in the overlay.
    const committed = this.db.put(key, value);
    this.join(this.track(key, value)!, committed);
  }

  remove(key: Key): void {
    if (this.deferral !== undefined) return this.hold(this.track(key, DELETED));
    const committed = this.db.remove(key);
    this.join(this.track(key, DELETED)!, committed);
  }

  /** Issues the held writes (ViewWrites.flush calls it). */
  issue(): void {
    const list = this.held;
    if (list.length === 0) return;
    this.held = [];
    let i = 0;
    try {
      for (; i < list.length; i++) {
        const p = list[i];
        this.join(p, p.value === DELETED ? this.db.remove(p.key) : this.db.put(p.key, p.value));
      }
    } finally {
      // A write that threw, and those after it, will never commit: they leave the overlay.
      if (i < list.length) this.forget(list.slice(i));
    }
  }

  /** Entries whose key starts with `prefix`, in key order, queued writes included. Allocates. */
  range<T>(prefix: Key, opts: { reverse?: boolean; limit?: number } = {}): Array<{ key: Key; value: T }> {
    const { start, end } = prefixRange(prefix);
    const mine = this.queuedEntries(prefix);
    if (mine.length === 0) {
      const rows = this.db.getRange(opts.reverse ? { start: end, end: start, reverse: true, limit: opts.limit } : { start, end, limit: opts.limit });
      return [...rows].map(({ key, value }) => ({ key: key as Key, value: value as T }));
    }
    // Both sides in key order: merge them, a queued write replacing the committed entry of its key.
    mine.sort((a, b) => compareKeys(a.key, b.key));
    const out: Array<{ key: Key; value: unknown }> = [];
    let i = 0;
    for (const { key, value } of this.db.getRange({ start, end })) {
      const k = key as Key;
      let c = -1;
      while (i < mine.length && (c = compareKeys(mine[i].key, k)) < 0) out.push(mine[i++]);
      if (i < mine.length && c === 0) out.push(mine[i++]);
      else out.push({ key: k, value });
    }
    while (i < mine.length) out.push(mine[i++]);
    const live = out.filter((e) => e.value !== DELETED) as Array<{ key: Key; value: T }>;
    if (opts.reverse) live.reverse();
    return opts.limit === undefined ? live : live.slice(0, opts.limit);
  }

  /** The queued (not yet committed) writes under `prefix`, in no particular order; removals included. */
  private queuedEntries(prefix: Key): Array<{ key: Key; value: unknown }> {
    const out: Array<{ key: Key; value: unknown }> = [];
    if (this.size === 0) return out;
    const top = this.find(prefix);
    if (top === undefined) return out;
    const stack = [top];
    for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
      if (n.entry !== undefined) out.push({ key: n.entry.key, value: n.entry.value });
      if (n.kids !== undefined) for (const k of n.kids.values()) stack.push(k);
    }
    return out;
  }

  /** Queued writes under `prefix` that are puts (not removals), in no particular order. Allocates. */
  queuedUnder<T>(prefix: Key): Array<{ key: Key; value: T }> {
    return this.queuedEntries(prefix).filter((e) => e.value !== DELETED) as Array<{ key: Key; value: T }>;
  }

  /** Number of keys with a write not yet committed, held or issued (tests). */
  get queued(): number {
    return this.size;
  }

  /**
   * Writes made so far (each put/remove counts when it is made, held or not): while it stands, every read
   * answers as it did (an issue or a commit moves entries, not answers).
   */
  get version(): number {
    return this.writes;
  }

  private find(key: Key): Node | undefined {
    let n: Node | undefined = this.root;
    for (let i = 0; i < key.length && n !== undefined; i++) n = n.kids?.get(key[i]);
    return n;
  }

  /** Enters a write into the overlay; undefined when it replaced the value of a held write in place. */
  private track(key: Key, value: unknown): Pending | undefined {
    this.writes++;
    let n = this.root;
    for (let i = 0; i < key.length; i++) {
      const part = key[i];
      let kids = n.kids;
      if (kids === undefined) kids = n.kids = new Map();
      let next = kids.get(part);
      if (next === undefined) kids.set(part, (next = newNode(n, part)));
      n = next;
    }
    const old = n.entry;
    // Only a deferring store holds writes; issued at once, a write always has its batch.
    if (old !== undefined && old.batch === undefined) {
      old.value = value;
      return undefined;
    }
    if (old === undefined) this.size++;
    const p: Pending = { key, value, node: n, batch: undefined };
    n.entry = p;
    return p;
  }

  private hold(p: Pending | undefined): void {
    if (p === undefined) return;
    this.held.push(p);
    this.deferral!.add();
  }

  /** Puts an issued write into the batch of its commit promise. */
  private join(p: Pending, committed: Promise<boolean>): void {
    let b = this.batch;
    if (b === undefined || b.committed !== committed || b.settled) {
      // A promise seen before may be one that already settled (lmdb-js returns a shared resolved promise
      // inside transactionSync), hence `settled`.
      const batch: Batch = { committed, entries: [], settled: false };
      const settle = () => this.settle(batch);
      committed.then(settle, settle);
      this.batch = b = batch;
    }
    p.batch = b;
    b.entries.push(p);
  }

  private settle(b: Batch): void {
    b.settled = true;
    if (this.batch === b) this.batch = undefined;
    this.forget(b.entries);
  }

  /** Takes writes out of the overlay, each unless a later write to its key replaced it. */
  private forget(entries: readonly Pending[]): void {
    for (const p of entries) {
      let n = p.node;
      if (n.entry !== p) continue;
      n.entry = undefined;
      this.size--;
      // Prune the branch that no longer leads to a queued write.
      while (n.parent !== undefined && n.entry === undefined && (n.kids === undefined || n.kids.size === 0)) {
        n.parent.kids!.delete(n.part);
        n = n.parent;
      }
    }
  }
}

export interface Projection {
  /** Stable name: the cursor key. Renaming it rebuilds the projection from the journal. */
  readonly name: string;
  /**
   * Applies one committed event. Must be deterministic and write synchronously, only through overlays
   * that share the projector's `ViewWrites` (or, without one, issue at once), so its writes go out with
   * the cursor that covers them and never after it.
   */
  apply(e: JournalEvent): void;
}

export class Projector {
  private readonly cursors = new Map<string, number>();
  /** Projections whose cursor moved since the last flush (deferred mode). */
  private readonly unsaved = new Set<string>();

  /**
   * `deferral` must be the one the projections' overlays share: the cursors then wait for the flush that
   * issues the view writes they cover. Without one, cursors are issued at the end of each apply.
   */
  constructor(
    private readonly store: Store,
    private readonly projections: readonly Projection[],
    private readonly log: Logger,
    private readonly deferral?: ViewWrites,
  ) {
    for (const p of projections) {
      if (this.cursors.has(p.name)) throw new Error(`two projections named ${p.name}`);
      const c = store.meta.get(metaKeys.projectionCursor(p.name));
      this.cursors.set(p.name, typeof c === 'number' ? c : 0);
    }
    deferral?.registerCursors({ issue: () => this.issueCursors() });
  }

  cursor(name: string): number {
    return this.cursors.get(name) ?? 0;
  }

  /**
   * Applies everything the journal holds beyond each projection's cursor, issuing the held writes after
   * each batch (a long replay holds one batch at most, or the bound). Returns the events applied.
   */
  catchUp(batchSize = 10_000): number {
    if (this.projections.length === 0) return 0;
    const from = Math.min(...this.cursors.values()) + 1;
    let applied = 0;
    // Fills live in their own table, so the journal is read as the merge of both (recovery.readJournal).
    let batch: JournalEvent[] = [];
    for (const e of readJournal(this.store, from)) {
      batch.push(e);
      if (batch.length < batchSize) continue;
      applied += this.apply(batch);
      this.deferral?.flush();
      batch = [];
    }
    if (batch.length > 0) applied += this.apply(batch);
    this.deferral?.flush();
    if (applied > 0) this.log.info({ applied }, 'projections caught up with the journal');
    return applied;
  }

  /** The engine's commit listener: events in sequence order, already durable. */
  onCommitted = (events: readonly JournalEvent[]): void => {
    this.apply(events);
  };

  private apply(events: readonly JournalEvent[]): number {
    const w = this.deferral;
    let applied = 0;
    for (const p of this.projections) {
      let cursor = this.cursors.get(p.name)!;
      for (const e of events) {
        if (e.seq <= cursor) continue;
        try {
          p.apply(e);
        } catch (err) {
          // A read model that cannot apply an event stops where it is: the journal keeps the truth and the
          // next start retries from this cursor. Trading is unaffected.
          this.log.error({ err, projection: p.name, seq: e.seq }, 'projection failed; it stops at its cursor');
          break;
        }
        cursor = e.seq;
        applied++;
        if (w !== undefined && w.full) {
          // Between two events the writes held and the cursors are consistent: issue them now, not later.
          this.advance(p.name, cursor);
          w.flush();
        }
      }
      if (cursor !== this.cursors.get(p.name)) this.advance(p.name, cursor);
    }
    return applied;
  }

  private advance(name: string, cursor: number): void {
    this.cursors.set(name, cursor);
    if (this.deferral === undefined) void this.store.meta.put(metaKeys.projectionCursor(name), cursor);
    else if (!this.unsaved.has(name)) {
      this.unsaved.add(name);
      this.deferral.add();
    }
  }

  private issueCursors(): void {
    for (const name of this.unsaved) void this.store.meta.put(metaKeys.projectionCursor(name), this.cursors.get(name)!);
    this.unsaved.clear();
  }
}
