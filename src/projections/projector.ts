/**
 * Projections: read models derived from the committed journal (market data, wallet data).
 *
 * Decision (STYLE asks for it here): projections TAIL the journal by sequence; they do not run inside the
 * engine's fill transaction. The engine calls `onCommitted(events)` after each group commit, in sequence
 * order; the projector hands every event to every projection whose cursor is below the event's seq, then
 * records each projection's new cursor. All of that is issued synchronously in one event-loop turn, and
 * lmdb-js commits the puts of one turn in one transaction, so a projection's view updates and its cursor
 * land together: re-applying an event is impossible (seq <= cursor is skipped), which is what makes a
 * replay idempotent. After a crash the views may trail the journal by the last transaction; `catchUp()`
 * at start-up reads the journal from the lowest cursor and applies what each projection is missing.
 *
 * Why tail instead of joining the engine's transaction: the matching hot path stays free of read-model
 * work, a new projection can be added later and built from the whole journal, and a projection bug can
 * never fail or delay an order's commit.
 *
 * Read-your-writes: a projection writes ahead of its commit (the next transaction), and lmdb-js reads
 * only committed data (its `cache` option would help, but not for array keys). Projections and the
 * queries that serve their views therefore go through a `ViewStore`, an overlay of the writes still
 * queued: a point read or a prefix range sees them at once, so a client that got its order acknowledged
 * and asks for its positions next sees the fill.
 */
import type { JournalEvent } from '../domain/events.ts';
import type { Database } from 'lmdb';
import type { Store } from '../journal/env.ts';
import { metaKeys, prefixRange, type Key } from '../journal/keys.ts';
import { readJournal } from '../journal/recovery.ts';
import type { Logger } from '../runtime/log.ts';

const DELETED = Symbol('deleted');

/** A write queued but not yet committed. */
interface Pending {
  key: Key;
  value: unknown;
  /** Where it sits in the overlay; it leaves when its batch settles unless a later write replaced it. */
  node: Node;
  batch: Batch;
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
 * Every put/remove is issued at once (so it joins this turn's transaction) and stays in the overlay
 * until its commit resolves, unless a later write to the same key replaced it.
 *
 * The overlay is a trie over the key parts (Map per level; a Map tells 1 from '1' as ordered-binary
 * does), so a point read is a few Map lookups with no key text built, and a prefix range visits only
 * the queued writes under its prefix. Writes are settled per transaction: one promise reaction per
 * commit, not per write (the wallet projections issue about eight writes per fill on the trading path).
 */
export class ViewStore {
  private readonly root: Node = newNode(undefined, '');
  private size = 0;
  private batch: Batch | undefined;
  private writes = 0;

  constructor(readonly db: Database<unknown, Key>) {}

  get<T>(key: Key): T | undefined {
    if (this.size > 0) {
      const p = this.find(key)?.entry;
      if (p !== undefined) return p.value === DELETED ? undefined : (p.value as T);
    }
    return this.db.get(key) as T | undefined;
  }

  put(key: Key, value: unknown): void {
    this.track(key, value, this.db.put(key, value));
  }

  remove(key: Key): void {
    this.track(key, DELETED, this.db.remove(key));
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

  /** Number of writes not yet committed (tests). */
  get queued(): number {
    return this.size;
  }

  /** Writes issued so far: while it stands, every read answers as it did (a commit moves entries, not answers). */
  get version(): number {
    return this.writes;
  }

  private find(key: Key): Node | undefined {
    let n: Node | undefined = this.root;
    for (let i = 0; i < key.length && n !== undefined; i++) n = n.kids?.get(key[i]);
    return n;
  }

  private track(key: Key, value: unknown, committed: Promise<boolean>): void {
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
    let b = this.batch;
    if (b === undefined || b.committed !== committed || b.settled) {
      // A promise seen before may be one that already settled (lmdb-js returns a shared resolved promise
      // inside transactionSync), hence `settled`.
      const batch: Batch = { committed, entries: [], settled: false };
      const settle = () => this.settle(batch);
      committed.then(settle, settle);
      this.batch = b = batch;
    }
    if (n.entry === undefined) this.size++;
    const p: Pending = { key, value, node: n, batch: b };
    n.entry = p;
    b.entries.push(p);
  }

  private settle(b: Batch): void {
    b.settled = true;
    if (this.batch === b) this.batch = undefined;
    for (const p of b.entries) {
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
   * Applies one committed event. Must be deterministic and write only through the store (synchronously
   * issued puts/removes), so the writes share the transaction of the cursor.
   */
  apply(e: JournalEvent): void;
}

export class Projector {
  private readonly cursors = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly projections: readonly Projection[],
    private readonly log: Logger,
  ) {
    for (const p of projections) {
      if (this.cursors.has(p.name)) throw new Error(`two projections named ${p.name}`);
      const c = store.meta.get(metaKeys.projectionCursor(p.name));
      this.cursors.set(p.name, typeof c === 'number' ? c : 0);
    }
  }

  cursor(name: string): number {
    return this.cursors.get(name) ?? 0;
  }

  /** Applies everything the journal holds beyond each projection's cursor. Returns the events applied. */
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
      batch = [];
    }
    if (batch.length > 0) applied += this.apply(batch);
    if (applied > 0) this.log.info({ applied }, 'projections caught up with the journal');
    return applied;
  }

  /** The engine's commit listener: events in sequence order, already durable. */
  onCommitted = (events: readonly JournalEvent[]): void => {
    this.apply(events);
  };

  private apply(events: readonly JournalEvent[]): number {
    let applied = 0;
    for (const p of this.projections) {
      let cursor = this.cursors.get(p.name)!;
      const before = cursor;
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
      }
      if (cursor !== before) {
        this.cursors.set(p.name, cursor);
        void this.store.meta.put(metaKeys.projectionCursor(p.name), cursor);
      }
    }
    return applied;
  }
}
