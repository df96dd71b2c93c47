/**
 * GET /trades as JSON text (TradePages). Rows newest first (seq descending, taker before maker), from the
 * trade views of projections/wallets.ts: per wallet, per market, or every trade, per role.
 *
 * The views answer seq <= C (C = the trades projection's committed cursor, read in the same snapshot as
 * the views); the rows above C are the projection's writes still queued in the ViewStore overlay (the
 * projector applies a fill in the turn the engine acknowledges it), so a trade is listed as soon as its
 * order was acknowledged. A page takes the rows above C first, then the committed ranges from C down
 * (trade-runs.ts), merged by seq (k-way, k <= 2 x markets); its rows are rendered by trade-rows.ts.
 *
 * Which rows a page lists is kept while no view was written since (the ViewStore's write count); each
 * row's text is still re-checked as a fresh page's would be.
 */
import type { Store } from '../../journal/env.ts';
import { MAKER_ROLE, TAKER_ROLE, metaKeys, walletViewKeys, type Key } from '../../journal/keys.ts';
import type { ViewStore } from '../../projections/projector.ts';
import { SIDE_BUY, SIDE_SELL, TRADES_PROJECTION, type TradeEntry } from '../../projections/wallets.ts';
import { unitsToNumber } from '../../domain/units.ts';
import { PageCache, jsonArray } from './page-cache.ts';
import type { TradeRows } from './trade-rows.ts';
import type { RunCursor, TradeRuns } from './trade-runs.ts';

export interface TradesParams {
  limit: number;
  offset: number;
  takerOnly: boolean;
  filter?: { type: 'CASH' | 'TOKENS'; amount: number };
  /** Lowercase condition ids. */
  markets?: string[];
  /** Lowercase address. */
  user?: string;
  side?: 'BUY' | 'SELL';
}

/** A rendered /trades page: the rows it lists, and each row's text as it was written. */
interface CachedTradePage {
  version: number;
  seqs: number[];
  roles: number[];
  rows: string[];
  json: string;
}

/** A candidate trade row before its fill is loaded. */
interface TradeCand {
  seq: number;
  /** The fill it shows (a deferred fill's row is keyed by its MINED move). */
  fill: number;
  role: number;
  side: number;
  size: number;
  usdc: number;
  conditionId?: string;
}

function compareCand(a: TradeCand, b: TradeCand): number {
  return b.seq - a.seq || a.role - b.role;
}

/** The view ranges a request walks, with the role of their rows: the wallet's, else the markets', else all. */
function rangesOf(p: TradesParams): [prefix: Key, role: number][] {
  const roles = p.takerOnly ? [TAKER_ROLE] : [TAKER_ROLE, MAKER_ROLE];
  const out: [Key, number][] = [];
  if (p.user !== undefined) for (const r of roles) out.push([walletViewKeys.tradesByWalletPrefix(p.user, r), r]);
  else if (p.markets !== undefined) for (const cid of p.markets) for (const r of roles) out.push([walletViewKeys.tradesByMarketPrefix(cid, r), r]);
  else for (const r of roles) out.push([walletViewKeys.tradesAllPrefix(r), r]);
  return out;
}

/**
 * The rows of one page, offered newest first: those that pass the filters are skipped up to the offset,
 * then picked until the page is full. `seqs` are the picked rows' fills.
 */
class PagePicker {
  readonly seqs: number[] = [];
  readonly roles: number[] = [];
  private skipped = 0;
  private readonly side: number;
  private readonly min: number;
  private readonly filtered: boolean;
  private readonly cash: boolean;
  /** A wallet's rows limited to some markets (the ranges of a wallet span every market). */
  private readonly markets: Set<string> | undefined;

  constructor(private readonly p: TradesParams) {
    this.side = p.side === undefined ? -1 : p.side === 'BUY' ? SIDE_BUY : SIDE_SELL;
    this.min = p.filter?.amount ?? 0;
    this.filtered = p.filter !== undefined;
    this.cash = p.filter?.type === 'CASH';
    this.markets = p.user !== undefined && p.markets !== undefined ? new Set(p.markets) : undefined;
  }

  /** Offers one row (`fill`: the seq of the fill it shows); false once the page is full. */
  offer(fill: number, role: number, side: number, size: number, usdc: number, conditionId: string | undefined): boolean {
    if (this.markets !== undefined && !this.markets.has(conditionId!)) return true;
    // The filter compares the number the row shows (usdcSize or size).
    if ((this.side >= 0 && side !== this.side) || (this.filtered && unitsToNumber(this.cash ? usdc : size) < this.min)) return true;
    if (this.skipped < this.p.offset) this.skipped++;
    else {
      this.seqs.push(fill);
      this.roles.push(role);
    }
    return this.seqs.length < this.p.limit;
  }
}

export class TradePages {
  private readonly pages = new PageCache<CachedTradePage>();

  constructor(
    private readonly store: Store,
    private readonly views: ViewStore,
    private readonly runs: TradeRuns,
    private readonly rows: TradeRows,
    private readonly now: () => number,
  ) {}

  /** GET /trades as JSON text. */
  page(p: TradesParams): string {
    if (p.limit === 0) return '[]';
    // Each listed market is a range walked on its own: one listed twice would list its rows twice.
    if (p.markets !== undefined && new Set(p.markets).size < p.markets.length) p = { ...p, markets: [...new Set(p.markets)] };
    const key = JSON.stringify(p);
    const cached = this.pages.get(key);
    if (cached !== undefined && cached.version === this.views.version) {
      const now = this.now();
      let same = true;
      for (let i = 0; i < cached.seqs.length && same; i++) same = this.rows.row(cached.seqs[i], cached.roles[i], now) === cached.rows[i];
      if (same) return cached.json;
    }
    const version = this.views.version;
    const cursor = this.committedCursor();
    this.runs.trim();
    const picker = new PagePicker(p);
    let full = false;
    for (const c of this.freshRows(p, cursor)) {
      if (!picker.offer(c.fill, c.role, c.side, c.size, c.usdc, c.conditionId)) {
        full = true;
        break;
      }
    }
    if (!full) this.pickCommitted(p, cursor, picker);
    const now = this.now();
    const out: string[] = [];
    const seqs: number[] = [];
    const roles: number[] = [];
    for (let i = 0; i < picker.seqs.length; i++) {
      const json = this.rows.row(picker.seqs[i], picker.roles[i], now);
      if (json === undefined) continue;
      out.push(json);
      seqs.push(picker.seqs[i]);
      roles.push(picker.roles[i]);
    }
    const rows = out.slice();
    const json = jsonArray(out);
    this.pages.set(key, { version, seqs, roles, rows, json });
    return json;
  }

  /** Last journal seq whose trade rows the committed views hold. */
  private committedCursor(): number {
    const c = this.store.meta.get(metaKeys.projectionCursor(TRADES_PROJECTION));
    return typeof c === 'number' ? c : 0;
  }

  /**
   * Rows above the committed cursor, newest first: the trade projection's writes still queued in the
   * ViewStore overlay. The projector applies a fill in the same turn as the engine acknowledges it, and
   * a queued write leaves the overlay only after lmdb-js renewed its read snapshot, so every row above
   * the cursor this snapshot shows is in the overlay.
   */
  private freshRows(p: TradesParams, after: number): TradeCand[] {
    const out: TradeCand[] = [];
    for (const [prefix, role] of rangesOf(p)) {
      for (const { key, value: v } of this.views.queuedUnder<TradeEntry>(prefix)) {
        const seq = key[prefix.length] as number;
        if (seq > after) out.push({ seq, fill: v[4] ?? seq, role, side: v[0], size: v[1], usdc: v[2], conditionId: v[3] });
      }
    }
    return out.sort(compareCand);
  }

  /** Offers the committed rows of the request's ranges, from `cursor` down, merged newest first. */
  private pickCommitted(p: TradesParams, cursor: number, picker: PagePicker): void {
    const want = p.offset + p.limit;
    const heads: RunCursor[] = rangesOf(p).map(([prefix, role]) => this.runs.cursor(prefix, cursor, role, want));
    try {
      for (const h of heads) h.advance();
      for (;;) {
        let best: RunCursor | undefined;
        for (const h of heads) if (h.seq >= 0 && (best === undefined || h.seq > best.seq || (h.seq === best.seq && h.role < best.role))) best = h;
        if (best === undefined) break;
        if (!picker.offer(best.fill, best.role, best.side, best.size, best.usdc, this.runs.marketName(best.market))) break;
        best.advance();
      }
    } finally {
      for (const h of heads) h.close();
    }
  }
}
