/**
 * The read-your-writes overlay of an array-keyed view database (ViewStore), and the order of its keys
 * (compareKeys, ordered-binary's). Owns what a write not yet committed looks like and how reads see it;
 * when held writes leave is view-writes.ts's. Separate because every projection and every query of its views
 * reads through it, while only the projector and the node deal with the clock.
 *
 * Read-your-writes: a projection's writes reach LMDB a transaction or more after the event, and lmdb-js
 * reads only committed data (its `cache` option would help, but not for array keys). Projections and the
 * queries that serve their views therefore go through a `ViewStore`, an overlay of the writes not yet
 * committed (held or issued): a point read or a prefix range sees them at once, so a client that got its
 * order acknowledged and asks for its positions next sees the fill.
 *
 * Imports journal/env.ts (the database's type), journal/keys.ts and view-writes.ts (types).
 */
import type { Store } from '../journal/env.ts';
import { prefixRange, type Key } from '../journal/keys.ts';
import type { ViewSink, ViewWrites } from './view-writes.ts';

const DELETED = Symbol('deleted');

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
