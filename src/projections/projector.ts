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
type Pending = { value: unknown; gen: number };

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
 */
export class ViewStore {
  private readonly pending = new Map<string, Pending & { key: Key }>();
  private gen = 0;

  constructor(readonly db: Database<unknown, Key>) {}

  get<T>(key: Key): T | undefined {
    const p = this.pending.get(JSON.stringify(key));
    if (p) return p.value === DELETED ? undefined : (p.value as T);
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
    const mine = [...this.pending.values()].filter((p) => compareKeys(p.key, start) >= 0 && compareKeys(p.key, end) < 0);
    if (mine.length === 0) {
      const rows = this.db.getRange(opts.reverse ? { start: end, end: start, reverse: true, limit: opts.limit } : { start, end, limit: opts.limit });
      return [...rows].map(({ key, value }) => ({ key: key as Key, value: value as T }));
    }
    const merged = new Map<string, { key: Key; value: unknown }>();
    for (const { key, value } of this.db.getRange({ start, end })) merged.set(JSON.stringify(key), { key: key as Key, value });
    for (const p of mine) merged.set(JSON.stringify(p.key), { key: p.key, value: p.value });
    const out = [...merged.values()].filter((e) => e.value !== DELETED).sort((a, b) => compareKeys(a.key, b.key)) as Array<{ key: Key; value: T }>;
    if (opts.reverse) out.reverse();
    return opts.limit === undefined ? out : out.slice(0, opts.limit);
  }

  /** Number of writes not yet committed (tests). */
  get queued(): number {
    return this.pending.size;
  }

  private track(key: Key, value: unknown, committed: Promise<boolean>): void {
    const id = JSON.stringify(key);
    const gen = ++this.gen;
    this.pending.set(id, { key, value, gen });
    const settle = () => {
      if (this.pending.get(id)?.gen === gen) this.pending.delete(id);
    };
    committed.then(settle, settle);
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
