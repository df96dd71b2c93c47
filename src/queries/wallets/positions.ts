/**
 * GET /positions and GET /closed-positions as JSON text, from the wallet's view (wallet-views.ts).
 *
 * A page costs its own rows: a page with no filter is a slice of the sorted rows at its offset, however
 * deep; sorting and writing text happen only when something changed; and a page asked for again while
 * nothing any page shows has changed (the views' `epoch`) is the text written the last time (CachedPage,
 * bounded). The rows a page serves have their metadata checked first, and a filter or order that read a
 * title that changed picks its rows again.
 */
import type { ClosedSort, PositionSort } from '../../edge/schemas/wallets.ts';
import { unitsToNumber } from '../../domain/units.ts';
import type { LiveRow } from './live-row.ts';
import { PageCache, jsonArray } from './page-cache.ts';
import { META_SORTS, PRICE_SORTS } from './sorting.ts';
import type { WalletView, WalletViews } from './wallet-views.ts';

export interface PositionsParams {
  user: string;
  markets?: string[];
  sizeThreshold: number;
  redeemable: boolean;
  mergeable: boolean;
  limit: number;
  offset: number;
  sortBy: PositionSort;
  descending: boolean;
  title?: string;
}

export interface ClosedParams {
  user: string;
  markets?: string[];
  title?: string;
  limit: number;
  offset: number;
  sortBy: ClosedSort;
  descending: boolean;
}

/** A rendered page, valid while its view is the wallet's view and the views' epoch has not moved. */
interface CachedPage {
  view: WalletView;
  epoch: number;
  /** Its rows: a request re-checks their metadata as it would a fresh page's. */
  rows: LiveRow[];
  json: string;
}

/** Every parameter that shapes a positions page (JSON: a title may hold any separator). */
function pageKey(kind: 'o' | 'c', p: PositionsParams | ClosedParams): string {
  const open = kind === 'o' ? (p as PositionsParams) : undefined;
  return JSON.stringify([kind, p.user, p.sortBy, p.descending, p.offset, p.limit, p.title ?? null, p.markets ?? null, open?.sizeThreshold ?? null, open?.redeemable ?? null, open?.mergeable ?? null]);
}

export class PositionPages {
  private readonly pages = new PageCache<CachedPage>();

  constructor(
    private readonly views: WalletViews,
    /** See WalletViewsDeps.priceEvents. */
    private readonly priceEvents: boolean,
    private readonly now: () => number,
  ) {}

  /** GET /positions as JSON text (the route answers it as is). */
  open(p: PositionsParams): string {
    if (p.limit === 0) return '[]';
    const views = this.views;
    const view = views.view(p.user);
    // A price sort needs every row's current price; any other order (and every filter) does not depend
    // on prices, so only the rows of the page are re-priced.
    const priceSort = PRICE_SORTS.has(p.sortBy);
    // With price events the rows of the tokens reported since are re-priced, whatever the order; without,
    // a price sort re-checks every row and any other order its page.
    // Every price a page shows is current once the reported rows (or, for a price sort, all rows) are
    // re-checked; otherwise the page's rows are re-priced below, and nothing is cached.
    const cacheable = priceSort || this.priceEvents;
    if (cacheable) views.recheckPrices(view);
    const now = this.now();
    views.checkMeta(view, now);
    const key = cacheable ? pageKey('o', p) : undefined;
    const cached = key === undefined ? undefined : this.cachedPage(key, view, now);
    if (cached !== undefined) return cached;
    let page = openPage(view, p);
    // A title filter or order read the served rows' titles before they were checked: pick again.
    if (views.checkRows(view, page, now) && (p.title !== undefined || META_SORTS.has(p.sortBy))) {
      page = openPage(view, p);
      views.checkRows(view, page, now);
    }
    if (!priceSort && !this.priceEvents) views.refreshRows(view, page);
    const out = new Array<string>(page.length);
    for (let i = 0; i < page.length; i++) out[i] = page[i].text(p.user, true);
    const json = jsonArray(out);
    if (key !== undefined) this.pages.set(key, { view, epoch: views.epoch, rows: page, json });
    return json;
  }

  /** GET /closed-positions as JSON text. */
  closed(p: ClosedParams): string {
    if (p.limit === 0) return '[]';
    const views = this.views;
    const view = views.view(p.user);
    const now = this.now();
    views.checkMeta(view, now);
    // Closed rows have no live price: their text changes only with their metadata.
    const key = pageKey('c', p);
    const cached = this.cachedPage(key, view, now);
    if (cached !== undefined) return cached;
    let page = closedPage(view, p);
    if (views.checkRows(view, page, now) && (p.title !== undefined || META_SORTS.has(p.sortBy))) {
      page = closedPage(view, p);
      views.checkRows(view, page, now);
    }
    const json = jsonArray(page.map((r) => r.text(p.user, false)));
    this.pages.set(key, { view, epoch: views.epoch, rows: page, json });
    return json;
  }

  /** The cached text of page `key`, if still what a fresh read would write (its rows' metadata checked first). */
  private cachedPage(key: string, view: WalletView, now: number): string | undefined {
    const hit = this.pages.get(key);
    if (hit === undefined || hit.view !== view || hit.epoch !== this.views.epoch) return undefined;
    this.views.checkRows(view, hit.rows, now);
    return hit.epoch === this.views.epoch ? hit.json : undefined;
  }
}

/** The open rows of a /positions page, in order. */
function openPage(view: WalletView, p: PositionsParams): LiveRow[] {
  const markets = p.markets ? new Set(p.markets) : undefined;
  const title = p.title?.toLowerCase();
  const rows = view.orders.rows(false, p.sortBy, p.descending);
  // The threshold compares the number the client is shown.
  if (markets === undefined && title === undefined && !p.redeemable && !p.mergeable && p.sizeThreshold <= view.minOpenSize) {
    // No filter drops a row: the page is where the offset says (no walk over the rows before it).
    return rows.slice(p.offset, p.offset + p.limit);
  }
  return pageOf(rows, p, (r) =>
    unitsToNumber(r.size) >= p.sizeThreshold &&
    (markets === undefined || markets.has(r.conditionId)) &&
    (title === undefined || r.meta.titleLower.includes(title)) &&
    (!p.redeemable || r.redeemable) &&
    (!p.mergeable || r.mergeable),
  );
}

/** The closed rows of a /closed-positions page, in order. */
function closedPage(view: WalletView, p: ClosedParams): LiveRow[] {
  const markets = p.markets ? new Set(p.markets) : undefined;
  const title = p.title?.toLowerCase();
  return pageOf(view.orders.rows(true, p.sortBy, p.descending), p, (r) =>
    (markets === undefined || markets.has(r.conditionId)) && (title === undefined || r.meta.titleLower.includes(title)),
  );
}

/** The rows `keep` keeps, the first `offset` of them skipped, at most `limit`. */
function pageOf(rows: readonly LiveRow[], p: { offset: number; limit: number }, keep: (r: LiveRow) => boolean): LiveRow[] {
  const page: LiveRow[] = [];
  let skipped = 0;
  for (const r of rows) {
    if (!keep(r)) continue;
    if (skipped < p.offset) {
      skipped++;
      continue;
    }
    page.push(r);
    if (page.length >= p.limit) break;
  }
  return page;
}
