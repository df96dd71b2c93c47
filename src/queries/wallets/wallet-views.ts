/**
 * Positions are served from a per-wallet view kept in memory (WalletView): every row with its numbers
 * computed and its answer written as JSON text, and the rows sorted once per (sortBy, direction)
 * (sorting.ts). A request re-checks what the numbers depend on:
 *   - the wallet's rows and the market facts: the projection's change feed (versions), else rebuilt;
 *   - live prices: the identity of an open row's published book snapshot and last trade (the engine
 *     replaces those objects when they change). With price events (`pricesChanged(tokenIds)`) a request
 *     re-checks the rows of the tokens reported since the view last looked (every row after a change
 *     reported without ids); without, a price sort re-checks every open row and other orders the page's
 *     rows. A row whose price moved is recomputed and merged back into the price orders, not re-sorted
 *     with the rest;
 *   - catalog metadata, row by row (checkMeta): the rows of markets the catalog announced at once, the
 *     rows a request serves, and a rolling few others per request, each re-read once its entry expired
 *     if the catalog was written since (market-meta.ts). The view is never rebuilt for age: a rebuild of
 *     5,000 rows blocked the event loop for 100-250 ms every 15 s.
 *
 * `epoch` counts the changes of any row's text (a row recomputed, its metadata replaced), which are also
 * the changes of any order: a page written before it moved is stale (positions.ts).
 */
import type { ViewStore } from '../../projections/projector.ts';
import type { PositionState, WalletViewChanges } from '../../projections/wallets.ts';
import { walletViewKeys } from '../../journal/keys.ts';
import { unitsToNumber } from '../../domain/units.ts';
import { LiveRow } from './live-row.ts';
import type { MarketMetas } from './market-meta.ts';
import type { PositionPrices } from './position-prices.ts';
import { RowOrders } from './sorting.ts';

/** Position rows kept in wallet views, over all cached wallets. */
const VIEW_ROWS_LIMIT = 500_000;
/** Changed tokens remembered for views to catch up on (see pricesChanged). */
const CHANGED_TOKENS_LIMIT = 100_000;

export interface MetaChecks {
  /** Rows of a view whose metadata a request checks, besides the rows it serves. */
  rows: number;
  /** Catalog reads (expired metadata) that check may make per request. */
  reads: number;
}

export const META_CHECKS: MetaChecks = { rows: 64, reads: 4 };

export interface WalletView {
  version: number;
  factsVersion: number;
  /** Position in the log of catalog-announced markets (MarketMetas) up to which its rows were re-checked. */
  catalogSeen: number;
  /** The next row (open ones first, then closed) the rolling metadata check looks at. */
  metaNext: number;
  /** Rows by condition id, built at the first catalog change that concerns the view. */
  byMarket: Map<string, LiveRow[]> | undefined;
  /** Position in the log of changed tokens up to which the open rows were re-checked. */
  priceSeen: number;
  /** The count of unnamed price changes at that time (those re-check every row). */
  unnamedSeen: number;
  /** Open rows by the token that prices them, built at the first re-check by token. */
  byToken: Map<string, LiveRow> | undefined;
  /** Rows in (conditionId, outcome) order: the tie-break order of every sort. */
  open: LiveRow[];
  closed: LiveRow[];
  /** The smallest size an open row shows (Infinity when none): a threshold below it drops nothing. */
  minOpenSize: number;
  orders: RowOrders;
}

export interface WalletViewsDeps {
  views: ViewStore;
  changes: WalletViewChanges;
  metas: MarketMetas;
  prices: PositionPrices;
  /** True when every book publication and committed fill is reported through `pricesChanged(tokenIds)`. */
  priceEvents: boolean;
  metaChecks: MetaChecks;
  now: () => number;
}

export class WalletViews {
  /** Bumped whenever a row's text may change; one counter for every wallet (see the module header). */
  epoch = 0;
  private readonly cache = new Map<string, WalletView>();
  private rows = 0;
  /**
   * Tokens whose book or last trade changed, as the caller reports them (`pricesChanged`), oldest first;
   * `changedBase` is the position of the first one since the reader started (the log is trimmed).
   */
  private readonly changed: string[] = [];
  private changedBase = 0;
  /** Changes reported without token ids. */
  private unnamedChanges = 0;

  constructor(private readonly d: WalletViewsDeps) {}

  /**
   * A book was published or a fill committed: the live prices of these tokens may have moved (of any
   * token when none are named).
   */
  pricesChanged(tokenIds?: readonly string[]): void {
    if (tokenIds === undefined) {
      this.unnamedChanges++;
      return;
    }
    for (const t of tokenIds) this.changed.push(t);
    if (this.changed.length > CHANGED_TOKENS_LIMIT) {
      // A view that has not looked since then re-checks all its rows.
      const drop = this.changed.length >> 1;
      this.changed.splice(0, drop);
      this.changedBase += drop;
    }
  }

  /**
   * The wallet's view, rebuilt when its rows or the market facts changed. Catalog metadata is kept
   * current row by row instead (checkMeta): a rebuild of a 5,000-row view blocks for a hundred ms and more.
   */
  view(wallet: string): WalletView {
    const { changes } = this.d;
    const version = changes.walletVersion(wallet);
    const hit = this.cache.get(wallet);
    if (hit !== undefined && hit.version === version && hit.factsVersion === changes.markets) {
      // Map order is the eviction order: a hit moves to the back.
      this.cache.delete(wallet);
      this.cache.set(wallet, hit);
      return hit;
    }
    const view = this.build(wallet, version);
    if (hit !== undefined) {
      this.rows -= hit.open.length + hit.closed.length;
      this.cache.delete(wallet);
    }
    this.cache.set(wallet, view);
    this.rows += view.open.length + view.closed.length;
    // Only iterate when over the limit: reaching a Map's first entry walks the slots of every entry
    // deleted since its last rehash (here, every move to the back).
    if (this.rows > VIEW_ROWS_LIMIT) {
      for (const [w, v] of this.cache) {
        if (this.rows <= VIEW_ROWS_LIMIT || w === wallet) break;
        this.cache.delete(w);
        this.rows -= v.open.length + v.closed.length;
      }
    }
    return view;
  }

  private build(wallet: string, version: number): WalletView {
    const { views, changes, metas, prices } = this.d;
    const now = this.d.now();
    const held: { conditionId: string; outcome: 0 | 1; st: PositionState }[] = [];
    for (const { key, value } of views.range<PositionState>(walletViewKeys.positionsOf(wallet))) {
      held.push({ conditionId: key[2] as string, outcome: key[3] as 0 | 1, st: value });
    }
    const openSizes = new Map<string, [number, number]>();
    for (const h of held) {
      if (h.st.size <= 0) continue;
      let pair = openSizes.get(h.conditionId);
      if (pair === undefined) openSizes.set(h.conditionId, (pair = [0, 0]));
      pair[h.outcome] = h.st.size;
    }
    const open: LiveRow[] = [];
    const closed: LiveRow[] = [];
    let minOpenSize = Infinity;
    for (const h of held) {
      const isOpen = h.st.size > 0;
      if (!isOpen && h.st.closedAt === 0) continue;
      const facts = prices.marketFacts(h.conditionId);
      const resolved = facts !== undefined && facts.winner >= 0;
      const r = new LiveRow(
        h.conditionId,
        h.outcome,
        h.st,
        metas.get(h.conditionId, now),
        facts,
        isOpen && !resolved ? facts?.tokenIds[h.outcome] : undefined,
        isOpen && resolved,
        // The engine refuses a merge once the market is resolved (redeem pays the pair instead).
        isOpen && !resolved && (openSizes.get(h.conditionId)?.[1 - h.outcome] ?? 0) > 0,
      );
      if (isOpen) {
        prices.priceNew(r);
        r.ord = open.length;
        open.push(r);
        minOpenSize = Math.min(minOpenSize, unitsToNumber(r.size));
      } else {
        r.ord = closed.length;
        closed.push(r);
      }
      r.compute();
      this.epoch++;
    }
    return {
      version,
      factsVersion: changes.markets,
      catalogSeen: metas.announced,
      metaNext: 0,
      byMarket: undefined,
      priceSeen: this.changedBase + this.changed.length,
      unnamedSeen: this.unnamedChanges,
      byToken: undefined,
      open,
      closed,
      minOpenSize,
      orders: new RowOrders(open, closed),
    };
  }

  /**
   * Re-prices the open rows whose price may have moved: with price events, the rows of the tokens
   * reported since the view last looked (every row after an unnamed change, or when the log no longer
   * reaches back that far, or when more tokens changed than it has rows); without, every row.
   */
  recheckPrices(view: WalletView): void {
    const end = this.changedBase + this.changed.length;
    if (!this.d.priceEvents || view.unnamedSeen !== this.unnamedChanges || view.priceSeen < this.changedBase || end - view.priceSeen > view.open.length) {
      this.refreshRows(view, view.open);
    } else if (view.priceSeen < end) {
      let byToken = view.byToken;
      if (byToken === undefined) {
        byToken = view.byToken = new Map();
        for (const r of view.open) if (r.token !== undefined) byToken.set(r.token, r);
      }
      const rows: LiveRow[] = [];
      for (let i = view.priceSeen - this.changedBase; i < this.changed.length; i++) {
        const r = byToken.get(this.changed[i]);
        if (r !== undefined) rows.push(r);
      }
      this.refreshRows(view, rows);
    }
    view.priceSeen = end;
    view.unnamedSeen = this.unnamedChanges;
  }

  /** Re-prices these open rows of the view (see PositionPrices.refresh); the moved ones are put back in order. */
  refreshRows(view: WalletView, rows: readonly LiveRow[]): void {
    const moved: LiveRow[] = [];
    for (const r of rows) if (this.d.prices.refresh(r)) moved.push(r);
    if (moved.length === 0) return;
    this.epoch++;
    view.orders.pricesMoved(moved);
  }

  /**
   * Keeps the metadata of a view's rows current without rebuilding it: the rows of markets the catalog
   * announced since the view last looked, and a rolling few others per request (at most `metaChecks.rows`
   * rows and `metaChecks.reads` catalog reads), so that unannounced edits (event-level fields) reach every
   * row while no request pays for re-reading thousands of entries. The rows a request serves are checked
   * as well (checkRows).
   */
  checkMeta(view: WalletView, now: number): void {
    const { metas, metaChecks } = this.d;
    const end = metas.announced;
    if (view.catalogSeen < metas.oldestAnnounced) {
      this.checkRows(view, view.open, now, true);
      this.checkRows(view, view.closed, now, true);
    } else if (view.catalogSeen < end) {
      const byMarket = (view.byMarket ??= rowsByMarket(view));
      for (let i = view.catalogSeen; i < end; i++) {
        const rows = byMarket.get(metas.announcedAt(i));
        if (rows !== undefined) this.checkRows(view, rows, now, true);
      }
    }
    view.catalogSeen = end;
    const total = view.open.length + view.closed.length;
    const some: LiveRow[] = [];
    let reads = 0;
    for (let k = 0; k < Math.min(total, metaChecks.rows) && reads < metaChecks.reads; k++) {
      const i = view.metaNext;
      view.metaNext = i + 1 >= total ? 0 : i + 1;
      const r = i < view.open.length ? view.open[i] : view.closed[i - view.open.length];
      if (now >= r.meta.expiresAt) reads++;
      some.push(r);
    }
    this.checkRows(view, some, now);
  }

  /**
   * Brings the metadata of `rows` up to date. A row whose metadata changed is written again (and
   * re-priced: the catalog's seed price is the last source of a live price); the orders by title and
   * end date are dropped, to be sorted again. True when any row changed.
   */
  checkRows(view: WalletView, rows: readonly LiveRow[], now: number, announced = false): boolean {
    const moved: LiveRow[] = [];
    let changed = false;
    for (const r of rows) {
      // A row's metadata object is the cached entry (re-read in place while unchanged, expired at once by
      // an announcement), so an unexpired one needs no lookup; an announcement looks anyway, in case the
      // cache dropped the entry since.
      if (!announced && now < r.meta.expiresAt) continue;
      const m = this.d.metas.get(r.conditionId, now);
      if (m === r.meta) continue;
      r.meta = m;
      r.json = undefined;
      this.epoch++;
      changed = true;
      if (r.token !== undefined && this.d.prices.price(r, r.snap, r.last)) moved.push(r);
    }
    if (changed) view.orders.metaChanged();
    if (moved.length > 0) view.orders.pricesMoved(moved);
    return changed;
  }
}

/** Every row of a view by its market. */
function rowsByMarket(view: WalletView): Map<string, LiveRow[]> {
  const byMarket = new Map<string, LiveRow[]>();
  for (const list of [view.open, view.closed]) {
    for (const r of list) {
      const rows = byMarket.get(r.conditionId);
      if (rows === undefined) byMarket.set(r.conditionId, [r]);
      else rows.push(r);
    }
  }
  return byMarket;
}
