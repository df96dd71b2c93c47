/**
 * The committed trade rows that requests have read, kept in memory by view range (TradeRuns): what makes
 * deep offsets and filtered /trades pages walk memory instead of decoding LMDB entries on every request.
 *
 * A range is one prefix of walletViewKeys' trade keys (a wallet's, a market's or every trade, per role),
 * whose entries are `[side, size, usdc, conditionId?, fillSeq?]` by seq (a deferred fill's row is keyed by
 * its MINED move and names its fill: `fill` below is the seq to render, the key's own otherwise). Committed rows never change and new ones
 * only appear above the committed cursor, so a run of a range stays exact: every row with seq in
 * (next, top], none missing. It is brought up to the current cursor (rows above `top` go to `newer`,
 * oldest first) and extended downwards on demand (`older`, newest first), both column by column (RunRows:
 * no object per row, a run may hold tens of thousands). Runs are bounded per run and over all ranges,
 * least recently used first out; a page reaching below what its run may keep streams the rest of its
 * range without keeping it (RunCursor).
 */
import type { Store } from '../../journal/env.ts';
import type { Key } from '../../journal/keys.ts';
import type { TradeEntry } from '../../projections/wallets.ts';

export interface RunLimits {
  /** Rows a run's first read takes (later reads double). */
  firstRead: number;
  /** A run that gained more rows than this since it was read is started over from the cursor. */
  refreshRows: number;
  /** Rows one run keeps; a page reaching further down streams the rest of its range. */
  rowsCap: number;
  /**
   * Most rows a run is read beyond what the request needs: doubling amortizes a client paging down, but
   * one request must not pay for tens of thousands of rows it does not list (a 40k-row run doubling in
   * one go blocked the event loop ~25 ms).
   */
  readAhead: number;
  /** Rows kept in runs over all ranges (about 30 bytes each). */
  rowsLimit: number;
}

export const RUN_LIMITS: RunLimits = { firstRead: 128, refreshRows: 4_096, rowsCap: 100_000, readAhead: 4_096, rowsLimit: 1_000_000 };

/** Condition ids interned for runs before they are all dropped. */
const MARKET_IDS_LIMIT = 1_000_000;

/** Rows of a run, column by column. */
export class RunRows {
  n = 0;
  seq = new Float64Array(0);
  size = new Float64Array(0);
  usdc = new Float64Array(0);
  side = new Uint8Array(0);
  /** Index of the condition id (TradeRuns.marketIndex), -1 when the view entry has none. */
  market = new Int32Array(0);
  /** Seq of the fill the row shows (its key's seq but for a deferred fill). */
  fill = new Float64Array(0);

  push(seq: number, side: number, size: number, usdc: number, market: number, fill = seq): void {
    const i = this.n;
    if (i === this.seq.length) this.grow(Math.max(64, i * 2));
    this.seq[i] = seq;
    this.fill[i] = fill;
    this.side[i] = side;
    this.size[i] = size;
    this.usdc[i] = usdc;
    this.market[i] = market;
    this.n = i + 1;
  }

  copyFrom(o: RunRows, i: number): void {
    this.push(o.seq[i], o.side[i], o.size[i], o.usdc[i], o.market[i], o.fill[i]);
  }

  private grow(cap: number): void {
    const grown = <T extends Float64Array | Uint8Array | Int32Array>(a: T, make: (n: number) => T): T => {
      const b = make(cap);
      b.set(a);
      return b;
    };
    this.seq = grown(this.seq, (n) => new Float64Array(n));
    this.size = grown(this.size, (n) => new Float64Array(n));
    this.usdc = grown(this.usdc, (n) => new Float64Array(n));
    this.side = grown(this.side, (n) => new Uint8Array(n));
    this.market = grown(this.market, (n) => new Int32Array(n));
    this.fill = grown(this.fill, (n) => new Float64Array(n));
  }
}

/** The committed trade rows of one view range, newest first, as far down as requests have read. */
export class TradeRun {
  /** Highest seq covered (the committed cursor when last refreshed). */
  top: number;
  /** Highest seq not read yet below the rows held. */
  next: number;
  /** True when the range has no rows at or below `next`. */
  done = false;
  newer = new RunRows();
  older = new RunRows();

  constructor(
    readonly prefix: Key,
    top: number,
  ) {
    this.top = top;
    this.next = top;
  }

  get length(): number {
    return this.newer.n + this.older.n;
  }
}

/** What a RunCursor needs from the store of runs. */
export interface RunSource {
  /** Reads more of the run's range (its cap permitting) so that it holds `want` rows if it can. */
  extend(run: TradeRun, want: number): void;
  /** The range below a run's rows, for reading past its cap without keeping what is read. */
  below(run: TradeRun): Iterator<{ key: unknown; value: unknown }>;
  marketIndex(conditionId: string): number;
}

/** Walks one run newest first, reading more of its range as needed; the current row is in the fields. */
export class RunCursor {
  /** Seq of the current row; -1 once the range is exhausted. */
  seq = -1;
  side = 0;
  size = 0;
  usdc = 0;
  market = -1;
  /** Seq of the fill the current row shows. */
  fill = -1;
  private i = 0;
  private it: Iterator<{ key: unknown; value: unknown }> | undefined;

  constructor(
    private readonly src: RunSource,
    private readonly run: TradeRun,
    readonly role: number,
    /** Rows the page needs at most when no filter drops any: the first read's size. */
    private readonly want: number,
  ) {}

  advance(): void {
    const run = this.run;
    if (this.i >= run.length && !run.done) this.src.extend(run, Math.max(this.want, this.i + 1));
    if (this.i < run.length) {
      const i = this.i++;
      const nn = run.newer.n;
      const rows = i < nn ? run.newer : run.older;
      const j = i < nn ? nn - 1 - i : i - nn;
      this.seq = rows.seq[j];
      this.side = rows.side[j];
      this.size = rows.size[j];
      this.usdc = rows.usdc[j];
      this.market = rows.market[j];
      this.fill = rows.fill[j];
      return;
    }
    if (run.done) {
      this.seq = -1;
      return;
    }
    this.it ??= this.src.below(run);
    const n = this.it.next();
    if (n.done) {
      this.seq = -1;
      return;
    }
    const key = n.value.key as Key;
    const v = n.value.value as TradeEntry;
    this.seq = key[key.length - 1] as number;
    this.side = v[0];
    this.size = v[1];
    this.usdc = v[2];
    this.market = v[3] === undefined ? -1 : this.src.marketIndex(v[3]);
    this.fill = v[4] ?? this.seq;
  }

  close(): void {
    this.it?.return?.();
  }
}

/** The runs of every range requests have read, least recently used first, and the interned condition ids. */
export class TradeRuns implements RunSource {
  private readonly runs = new Map<string, TradeRun>();
  private rows = 0;
  private readonly marketIds = new Map<string, number>();
  private readonly marketNames: string[] = [];

  constructor(
    private readonly store: Store,
    private readonly limits: RunLimits,
  ) {}

  /** A cursor over the committed rows of `prefix`'s range at or below `cursor`, newest first. */
  cursor(prefix: Key, cursor: number, role: number, want: number): RunCursor {
    return new RunCursor(this, this.run(prefix, cursor), role, want);
  }

  /** The condition id of an interned index (RunCursor.market); undefined for -1. */
  marketName(index: number): string | undefined {
    return this.marketNames[index];
  }

  /**
   * The committed rows of one view range, newest first, from `cursor` down: the cached run, brought up to
   * `cursor` first. A run of a range that gained more than `limits.refreshRows` rows since it was read is
   * started over (the rows read on the way are kept).
   */
  run(prefix: Key, cursor: number): TradeRun {
    const id = prefix.join('\u0000');
    let run = this.runs.get(id);
    if (run !== undefined) {
      // Map order is the eviction order: a hit moves to the back.
      this.runs.delete(id);
      this.runs.set(id, run);
      if (run.top === cursor) return run;
      if (run.top < cursor) {
        const added = new RunRows();
        let last = cursor + 1;
        for (const { key, value } of this.store.views.getRange({ start: [...prefix, cursor], end: [...prefix, run.top], reverse: true, limit: this.limits.refreshRows })) {
          last = (key as Key)[prefix.length] as number;
          this.pushRow(added, last, value as TradeEntry);
        }
        if (added.n < this.limits.refreshRows) {
          for (let i = added.n - 1; i >= 0; i--) run.newer.copyFrom(added, i);
          run.top = cursor;
          this.rows += added.n;
          return run;
        }
        this.rows -= run.length;
        run = new TradeRun(prefix, cursor);
        run.older = added;
        run.next = last - 1;
        this.rows += added.n;
        this.runs.set(id, run);
        return run;
      }
      // The cursor moved back (another store behind the same reader): nothing read before can be trusted.
      this.runs.delete(id);
      this.rows -= run.length;
    }
    run = new TradeRun(prefix, cursor);
    this.runs.set(id, run);
    return run;
  }

  /** Reads more of `run`'s range, so that it holds at least `want` rows if the range has them (up to `rowsCap`). */
  extend(run: TradeRun, want: number): void {
    const room = this.limits.rowsCap - run.length;
    if (run.done || room <= 0) return;
    // Doubling, up to limits.readAhead rows beyond what this request needs.
    const ahead = Math.min(run.length, this.limits.readAhead);
    const limit = Math.min(room, Math.max(want - run.length, ahead, this.limits.firstRead));
    const before = run.older.n;
    let last = run.next + 1;
    for (const { key, value } of this.store.views.getRange({ start: [...run.prefix, run.next], end: run.prefix, reverse: true, limit })) {
      last = (key as Key)[run.prefix.length] as number;
      this.pushRow(run.older, last, value as TradeEntry);
    }
    const read = run.older.n - before;
    run.next = last - 1;
    if (read < limit) run.done = true;
    this.rows += read;
  }

  below(run: TradeRun): Iterator<{ key: unknown; value: unknown }> {
    return this.store.views.getRange({ start: [...run.prefix, run.next], end: run.prefix, reverse: true })[Symbol.iterator]();
  }

  /** A small integer per condition id seen in trade rows (runs store it instead of the string). */
  marketIndex(conditionId: string): number {
    let i = this.marketIds.get(conditionId);
    if (i === undefined) {
      i = this.marketNames.length;
      this.marketIds.set(conditionId, i);
      this.marketNames.push(conditionId);
    }
    return i;
  }

  /** Evicts the least recently used runs beyond `rowsLimit` rows in all. */
  trim(): void {
    // Only iterate when over the limit: reaching a Map's first entry walks the slots of every entry
    // deleted since its last rehash (here, every move to the back).
    if (this.rows > this.limits.rowsLimit) {
      for (const [id, run] of this.runs) {
        if (this.rows <= this.limits.rowsLimit) break;
        this.runs.delete(id);
        this.rows -= run.length;
      }
    }
    if (this.marketIds.size > MARKET_IDS_LIMIT) {
      // Interned ids are only meaningful with the runs that hold them.
      this.marketIds.clear();
      this.marketNames.length = 0;
      this.runs.clear();
      this.rows = 0;
    }
  }

  /** Appends one view entry to `rows`; the condition id (per-wallet entries only) is interned. */
  private pushRow(rows: RunRows, seq: number, v: TradeEntry): void {
    rows.push(seq, v[0], v[1], v[2], v[3] === undefined ? -1 : this.marketIndex(v[3]), v[4] ?? seq);
  }
}
