/**
 * Market-data read models: the price history of every token and the builder-trades index.
 *
 * Price history (db `prices`, key [tokenId, unixSeconds] -> price in pips) has two writers:
 *   - TradePriceProjection, at every fill: the trade price in each party's own outcome space. It is a
 *     projection (deterministic, rebuilt from the journal like any other) because a fill carries its
 *     price but not the book around it.
 *   - MidpointSampler, live on the main thread: the token's midpoint after its book changed, at most
 *     once per minute per token and at least once in every minute in which the book changed (the first
 *     two-sided state of a minute is sampled at once, later changes at the turn of the next minute;
 *     a book without both sides has no midpoint and records nothing). A book is not journaled, so these
 *     samples cannot be replayed; they are what the service observed. Times are the exchange's clock:
 *     a change is dated by the journal time of the batch that made it (when it happened, not when its
 *     commit landed), a minute's turn by a timer on the clock's Timers (the sandbox's test clock moves it).
 *   A trade sample wins over a midpoint in the same second (the sampler never overwrites a sample).
 *
 * Builder trades (db `views`): every fill whose taker order carried a non-zero `builder` code, indexed
 * by builder code, market, taker token, taker wallet (the row's `maker_address`, as the platform names
 * the taker order's maker) and time, plus a point entry by trade id (keys.ts, builderTradeKeys).
 * `bucket_index` is the fill's position among its taker order's fills, counted from the store so a
 * restart in the middle of an order's fills cannot restart it at 0.
 *
 * Read-your-writes with ranges: a projection's writes commit after the engine's transaction (held up to
 * a flush of ViewWrites, projector.ts, then issued), so a client acknowledged by the engine could ask
 * before they land. ViewStore (projector.ts) covers point reads and whole-prefix ranges; the history and
 * the builder-trade listings need bounded ranges read lazily (30 days of minute samples, or a listing
 * that stops after one page), so RangeOverlay merges the writes not yet committed into a bounded LMDB
 * range without materializing it. The midpoint samples are held and issued with the projections' writes
 * (same ViewWrites); they have no cursor.
 */
import type { JournalEvent } from '../domain/events.ts';
import type { Store } from '../journal/env.ts';
import { builderTradeKeys, priceKey, type Key } from '../journal/keys.ts';
import { readOrder } from '../journal/orders.ts';
import { systemTimers, type Timers } from '../runtime/clock.ts';
import type { Logger } from '../runtime/log.ts';
import { compareKeys, type Projection, type ViewSink, type ViewWrites } from './projector.ts';

// ---- ranged read-your-writes overlay ------------------------------------------------------------------

/** An array-keyed database of the store (journal/env.ts owns the lmdb handles). */
type KeyedDb = Store['prices'];

interface Queued {
  /** The key's JSON text: its entry in `queued`. */
  id: string;
  key: Key;
  value: unknown;
  /** False while held for the next flush: a later put to the key then replaces its value in place. */
  issued: boolean;
}

/**
 * Writes to one array-keyed database, keeping each write readable until its transaction commits.
 * Without a `ViewWrites` a put is issued at once; with one it is held until the next flush, and only a
 * key's last value is issued. Reads: point `get`, and `range(start, end)`, a lazy merge of the committed
 * range with the queued writes inside it (a queued write replaces a committed value under the same key).
 */
export class RangeOverlay implements ViewSink {
  /** Writes not yet committed, held or issued; an entry leaves when its commit settles unless replaced. */
  private readonly queued = new Map<string, Queued>();
  private held: Queued[] = [];

  constructor(
    readonly db: KeyedDb,
    private readonly deferral?: ViewWrites,
  ) {
    deferral?.register(this);
  }

  put(key: Key, value: unknown): void {
    const id = JSON.stringify(key);
    const old = this.queued.get(id);
    if (old !== undefined && !old.issued) {
      old.value = value;
      return;
    }
    const q: Queued = { id, key, value, issued: false };
    this.queued.set(id, q);
    this.held.push(q);
    if (this.deferral === undefined) this.issue();
    else this.deferral.add();
  }

  /** Issues the held writes (ViewWrites.flush calls it; without one, every put does). */
  issue(): void {
    const list = this.held;
    if (list.length === 0) return;
    this.held = [];
    let i = 0;
    let from = 0;
    let committed: Promise<boolean> | undefined;
    try {
      for (; i < list.length; i++) {
        const c = this.db.put(list[i].key, list[i].value);
        list[i].issued = true;
        // One reaction per commit promise (lmdb-js hands out one per transaction).
        if (committed !== undefined && c !== committed) {
          this.forgetWhen(committed, list.slice(from, i));
          from = i;
        }
        committed = c;
      }
    } finally {
      if (committed !== undefined) this.forgetWhen(committed, from === 0 && i === list.length ? list : list.slice(from, i));
      // A put that threw, and those after it, will never commit: they leave the overlay.
      if (i < list.length) this.forget(list.slice(i));
    }
  }

  /** A failed commit is the engine's to report (the journal is the truth); the overlay just forgets it. */
  private forgetWhen(committed: Promise<boolean>, qs: readonly Queued[]): void {
    const settle = () => this.forget(qs);
    committed.then(settle, settle);
  }

  private forget(qs: readonly Queued[]): void {
    for (const q of qs) if (this.queued.get(q.id) === q) this.queued.delete(q.id);
  }

  get<T>(key: Key): T | undefined {
    if (this.queued.size > 0) {
      const q = this.queued.get(JSON.stringify(key));
      if (q !== undefined) return q.value as T;
    }
    return this.db.get(key) as T | undefined;
  }

  /** The queued (not yet committed) writes with start <= key < end, in key order. Allocates. */
  queuedIn(start: Key, end: Key): Array<{ key: Key; value: unknown }> {
    const mine: Queued[] = [];
    if (this.queued.size === 0) return mine;
    for (const q of this.queued.values()) if (compareKeys(q.key, start) >= 0 && compareKeys(q.key, end) < 0) mine.push(q);
    return mine.sort((a, b) => compareKeys(a.key, b.key));
  }

  /** Entries with start <= key < end in key order, queued writes included. Lazy: stop iterating at will. */
  *range<T>(start: Key, end: Key): Generator<{ key: Key; value: T }> {
    const mine = this.queuedIn(start, end);
    const committed = this.db.getRange({ start, end });
    if (mine.length === 0) {
      // lmdb-js entries already have this shape: hand them over as they are (the common case, no copy).
      yield* committed as unknown as Iterable<{ key: Key; value: T }>;
      return;
    }
    let i = 0;
    for (const e of committed) {
      const k = e.key as Key;
      while (i < mine.length && compareKeys(mine[i].key, k) < 0) yield { key: mine[i].key, value: mine[i++].value as T };
      if (i < mine.length && compareKeys(mine[i].key, k) === 0) {
        yield { key: k, value: mine[i++].value as T };
        continue;
      }
      yield { key: k, value: e.value as T };
    }
    while (i < mine.length) yield { key: mine[i].key, value: mine[i++].value as T };
  }

  /** Keys with a write not yet committed, held or issued (tests). */
  get pending(): number {
    return this.queued.size;
  }
}

/**
 * The overlays of the market-data views, shared by the projections, the sampler and the queries.
 * `deferral`: the projector's, so these writes go out with the cursors that cover them.
 */
export class MarketDataStore {
  readonly prices: RangeOverlay;
  readonly views: RangeOverlay;
  constructor(
    readonly store: Store,
    deferral?: ViewWrites,
  ) {
    this.prices = new RangeOverlay(store.prices, deferral);
    this.views = new RangeOverlay(store.views, deferral);
  }
}

// ---- shared helpers ---------------------------------------------------------------------------------------

/** A builder code that attributes nothing: absent, empty or all zeros. */
export function isZeroBuilder(code: string | undefined): boolean {
  return code === undefined || /^(0x)?0*$/i.test(code);
}

// ---- trade samples --------------------------------------------------------------------------------------

/** At every fill, the trade price of each token it touched, at the fill's second. */
export class TradePriceProjection implements Projection {
  readonly name = 'market-data:trade-prices';
  constructor(private readonly md: MarketDataStore) {}

  apply(f: JournalEvent): void {
    if (f.type !== 'fill') return;
    const sec = Math.floor(f.ts / 1000);
    this.md.prices.put(priceKey(f.takerTokenId, sec), f.takerPricePips);
    // TRANSFER: both sides trade the same token at the same (maker's) price.
    if (f.makerTokenId !== f.takerTokenId) this.md.prices.put(priceKey(f.makerTokenId, sec), f.makerPricePips);
  }
}

// ---- builder trades -------------------------------------------------------------------------------------

/** What a builder-trade entry stores beside the fill: bucket index and the two orders' fee rates (bps). */
export interface BuilderTradeFields {
  b: number;
  tf: number;
  mf: number;
}

/** The trade-id entry: the fields plus where the fill is. */
export interface BuilderTradeIdEntry extends BuilderTradeFields {
  t: number;
  s: number;
}

export class BuilderTradesProjection implements Projection {
  readonly name = 'market-data:builder-trades';
  constructor(private readonly md: MarketDataStore) {}

  apply(f: JournalEvent): void {
    if (f.type !== 'fill' || isZeroBuilder(f.builder)) return;
    const views = this.md.views;
    const taker = builderTradeKeys.ofTakerRange(f.takerOrderId);
    let bucket = 0;
    for (const x of views.range(taker.start, taker.end)) if ((x.key[2] as number) < f.seq) bucket++;
    const fields: BuilderTradeFields = { b: bucket, tf: this.feeBps(f.takerOrderId, 'taker'), mf: this.feeBps(f.makerOrderId, 'maker') };
    const builder = f.builder.toLowerCase();
    views.put(builderTradeKeys.ofTaker(f.takerOrderId, f.seq), 1);
    views.put(builderTradeKeys.entry('all', '', f.ts, f.seq), fields);
    views.put(builderTradeKeys.entry('builder', builder, f.ts, f.seq), fields);
    views.put(builderTradeKeys.entry('market', f.conditionId, f.ts, f.seq), fields);
    views.put(builderTradeKeys.entry('asset', f.takerTokenId, f.ts, f.seq), fields);
    views.put(builderTradeKeys.entry('user', f.takerWallet, f.ts, f.seq), fields);
    views.put(builderTradeKeys.byId(f.tradeId), { ...fields, t: f.ts, s: f.seq } satisfies BuilderTradeIdEntry);
  }

  /** The rate an order pays, fixed when it was accepted (its record is committed before its fills). */
  private feeBps(orderId: string, role: 'taker' | 'maker'): number {
    const rec = readOrder(this.md.store, orderId);
    if (rec === undefined) throw new Error(`order ${orderId} of a committed fill has no record`);
    return role === 'taker' ? rec.takerFeeBps : rec.makerFeeBps;
  }
}

// ---- midpoint sampler -----------------------------------------------------------------------------------

export interface SnapshotFeed {
  /**
   * Calls `listener` with the token ids of each snapshot publication, once the new snapshots are readable,
   * and the time (ms) of the change when the feed knows it (the journal time of the batch).
   */
  onSnapshots(listener: (tokenIds: readonly string[], atMs?: number) => void): void;
}

export interface SamplerOptions {
  feed: SnapshotFeed;
  md: MarketDataStore;
  /** Midpoint of a token's current book in pips (may end in .5), undefined when a side is empty. */
  midpoint: (tokenId: string) => number | undefined;
  /** Milliseconds since the epoch. */
  now: () => number;
  log: Logger;
  /** Timers on the clock of `now` (the minute's turn for waiting tokens). Default: the system's. */
  timers?: Timers;
  /** Told each sample written (a sequencer logs them for its replicas, which sample nothing themselves). */
  onSample?: (key: (string | number)[], pips: number) => void;
}

const MINUTE_MS = 60_000;

export class MidpointSampler {
  /** Minute (ms / 60000) of each token's last book sample. */
  private readonly lastMinute = new Map<string, number>();
  /** Tokens whose book changed after their sample of the current minute. */
  private readonly waiting = new Set<string>();
  private sweptMinute = -1;
  private readonly timers: Timers;
  /** The timer of the next minute's turn, armed while tokens wait. */
  private timer: unknown = undefined;
  private running = false;
  /** Samples written (tests, metrics). */
  samples = 0;

  constructor(private readonly o: SamplerOptions) {
    this.timers = o.timers ?? systemTimers;
    o.feed.onSnapshots((ids, atMs) => {
      if (this.running) this.onPublished(ids, atMs);
    });
  }

  start(): void {
    this.running = true;
  }

  stop(): void {
    this.running = false;
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
  }

  /**
   * A publication of a change at `atMs` (default now): the first change of a token in a minute is sampled
   * then, later ones wait for the next minute's turn.
   */
  onPublished(tokenIds: readonly string[], atMs?: number): void {
    const now = atMs ?? this.o.now();
    const minute = Math.floor(now / MINUTE_MS);
    for (const id of tokenIds) {
      if (this.lastMinute.get(id) === minute) this.waiting.add(id);
      else {
        this.waiting.delete(id);
        this.sample(id, now, minute);
      }
    }
    if (this.waiting.size > 0 && this.timer === undefined) {
      const nextMinute = (minute + 1) * MINUTE_MS;
      // Lazy: it only observes, so a test clock that jumps may fire it late, once, before anything changes
      // the books again (`moved`): the sample is then the minute's turn's.
      this.timer = this.timers.set(
        (moved) => {
          this.timer = undefined;
          this.tick(moved === true ? nextMinute : undefined);
          if (this.running && this.waiting.size > 0) this.onPublished([]);
        },
        nextMinute - this.o.now(),
        { lazy: true },
      );
    }
  }

  /** Samples every waiting token once the minute has turned, as of `atMs` (default now). */
  tick(atMs?: number): void {
    const now = atMs ?? this.o.now();
    const minute = Math.floor(now / MINUTE_MS);
    if (minute === this.sweptMinute || this.waiting.size === 0) {
      this.sweptMinute = minute;
      return;
    }
    this.sweptMinute = minute;
    for (const id of this.waiting) {
      if (this.lastMinute.get(id) === minute) continue;
      this.waiting.delete(id);
      this.sample(id, now, minute);
    }
  }

  /** A one-sided or empty book has no midpoint: nothing is recorded and the token's next change is tried at once. */
  private sample(tokenId: string, nowMs: number, minute: number): void {
    try {
      const mid = this.o.midpoint(tokenId);
      if (mid === undefined) return;
      this.lastMinute.set(tokenId, minute);
      const key = priceKey(tokenId, Math.floor(nowMs / 1000));
      if (this.o.md.prices.get(key) !== undefined) return;
      this.o.md.prices.put(key, mid);
      this.o.onSample?.(key, mid);
      this.samples++;
    } catch (err) {
      // A sample is an observation: missing one must never disturb the snapshot feed or the timer.
      this.o.log.error({ err, tokenId }, 'midpoint sample failed');
    }
  }
}
