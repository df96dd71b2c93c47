/**
 * Wallet data read side: GET /trades, /positions and /closed-positions, from the views of
 * projections/wallets.ts, the fills table of the journal writer, the catalog and the engine's live
 * prices. Synchronous: every answer is computed in one call, inside one LMDB read snapshot.
 *
 * Numbers (docs/decisions.md, "Wallet data"). Inside everything is an integer: sizes in units (10^-6
 * token), prices in micro-USDC per token, money in micro-USDC. Per position:
 *   initialValue  = round(size * avgPrice)          (half up, to 10^-6)
 *   currentValue  = round(size * curPrice)
 *   cashPnl       = currentValue - initialValue
 *   percentPnl    = trunc(cashPnl / initialValue * 100, 4 decimals); 0 when initialValue is 0
 *   percentRealizedPnl = trunc((currentValue - B) / B * 100, 4 decimals), B = round(totalBought * avgPrice);
 *                   0 when B is 0 (reference/platform-semantics.md section 1.2, a compatibility shape)
 * and only then divided into JSON numbers (x / 10^6, percentages x / 10^4).
 *
 * curPrice: 1 or 0 once the market is resolved; else the token's current price by the rule every reader
 * shares (current-price.ts: the midpoint of its published book when both sides exist and the spread is at
 * most 0.10; else the last trade; else the midpoint of a wider book); else the catalog's imported seed
 * price; else 0. A closed row shows the price of the event that
 * closed it (frozen).
 *
 * Positions are served from a per-wallet view kept in memory: every row with its numbers computed and
 * its answer written as JSON text, and the rows sorted once per (sortBy, direction). A request re-checks
 * what the numbers depend on:
 *   - the wallet's rows and the market facts: the projection's change feed (versions), else rebuilt;
 *   - live prices: the identity of an open row's published book snapshot and last trade (the engine
 *     replaces those objects when they change). With price events (`pricesChanged(tokenIds)`) a request
 *     re-checks the rows of the tokens reported since the view last looked (every row after a change
 *     reported without ids); without, a price sort re-checks every open row and other orders the page's
 *     rows. A row whose price moved is recomputed and merged back into the price sorts (SortedRows), not
 *     re-sorted with the rest;
 *   - catalog metadata, row by row (checkMeta): the rows of markets the catalog announced at once, the
 *     rows a request serves, and a rolling few others per request, each re-read once its entry expired
 *     (META_TTL_MS, jittered: event-level edits such as an event slug are not announced) if the catalog
 *     was written since (its generation moved). An entry re-read unchanged stays the same object, so
 *     nothing written from it is written again. The view is never
 *     rebuilt for age: a rebuild of 5,000 rows blocked the event loop for 100-250 ms every 15 s.
 * So a page costs its own rows (a page with no filter is a slice at its offset, however deep); sorting
 * and writing text happen only when something changed, and a page asked for again while nothing any page
 * shows has changed is the text written the last time (CachedPage, bounded).
 *
 * Trades. A row is one party's side of a fill. The trade views (per wallet, per market, global) answer
 * seq <= C (C = the trades projection's committed cursor, read in the same snapshot as the views); the
 * rows above C are the projection's writes still queued in the ViewStore overlay (the projector applies
 * a fill in the turn the engine acknowledges it), so a trade is listed as soon as its order was
 * acknowledged. What a request reads of a committed range is kept (TradeRun, bounded): committed rows
 * never change, so a run is only brought up to the cursor and extended downwards, and deep offsets and
 * filtered pages walk memory instead of decoding LMDB entries. A page's rows are rendered from their
 * fills (read only through `fill(seq)`: the stored form belongs to journal/fill-codec.ts) and kept
 * (bounded) while the metadata and profile entries they were written from are current; cached texts are
 * flat strings (see `flat`).
 */
import type { FillEvent } from '../domain/events.ts';
import type { ClosedPosition, ClosedSort, Position, PositionSort, Trade } from '../edge/schemas/wallets.ts';
import { formatAsset } from '../domain/ids.ts';
import { DEFAULT_OUTCOMES } from '../domain/market-rules.ts';
import { UNITS, UNITS_PER_PIP, parsePips } from '../domain/units.ts';
import type { Store } from '../journal/env.ts';
import { readFill } from '../journal/fill-codec.ts';
import { MAKER_ROLE, TAKER_ROLE, catalogMetaKeys, metaKeys, walletViewKeys, type Key } from '../journal/keys.ts';
import type { ViewStore } from '../projections/projector.ts';
import {
  SIDE_BUY,
  SIDE_SELL,
  TRADES_PROJECTION,
  walletViewChanges,
  type MarketFacts,
  type PositionState,
  type TradeEntry,
  type WalletViewChanges,
} from '../projections/wallets.ts';
import type { MarketRec } from '../projections/catalog-index.ts';
import { getProfile, type CatalogReader } from './catalog.ts';
import { EMPTY_TOP, NO_PRICE, currentPricePips, parseBookTop, tight, type BookTop } from './current-price.ts';

/** Lifetime of a catalog metadata entry (jittered between half and all of it). */
export const META_TTL_MS = 30_000;
/** Position rows kept in wallet views, over all cached wallets. */
const VIEW_ROWS_LIMIT = 500_000;
const BOOK_CACHE_LIMIT = 200_000;
/** Characters of rendered pages kept, over every wallet: /positions and /closed-positions, and /trades apart. */
const PAGE_CACHE_CHARS = 16_000_000;
/** Wallet profiles (trade rows) are re-read at least this often. */
export const PROFILE_TTL_MS = 5_000;
const PROFILE_CACHE_LIMIT = 100_000;
/** Rendered trade rows kept (about 0.5 KB each). */
const RENDERED_TRADES_LIMIT = 100_000;
const META_CACHE_LIMIT = 200_000;
/** Condition ids interned for runs before they are all dropped. */
const MARKET_IDS_LIMIT = 1_000_000;
/** Changed tokens remembered for views to catch up on (see pricesChanged). */
const CHANGED_TOKENS_LIMIT = 100_000;
/** Markets announced by the catalog remembered for views to catch up on (see catalogChanged). */
const CHANGED_MARKETS_LIMIT = 100_000;
/** Sorts whose order follows catalog metadata. */
const META_SORTS = new Set(['TITLE', 'RESOLVING']);
/** Sorts whose order follows live prices. */
const PRICE_SORTS = new Set(['CURRENT', 'CASHPNL', 'PERCENTPNL', 'PRICE']);

/** What the engine publishes that prices a position. */
export interface LivePrices {
  bookSnapshot(tokenId: string): { version: number; json: string } | undefined;
  lastTradePrice(tokenId: string): { pricePips: number } | undefined;
}

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

export interface WalletDataDeps {
  store: Store;
  views: ViewStore;
  catalog: CatalogReader;
  prices?: LivePrices;
  /** Monotonic ms for cache ages (default performance.now); not business time. */
  now?: () => number;
  /**
   * True when the caller calls `pricesChanged(tokenIds)` on every book publication and every committed
   * fill; then a page re-checks only the rows of the tokens reported since its view last looked.
   */
  priceEvents?: boolean;
  /** Sizes of the trade-row runs (TradeRun), smaller in tests to exercise every path; defaults below. */
  runLimits?: Partial<RunLimits>;
  /** The rolling metadata check of a view (checkMeta), smaller in tests; defaults below. */
  metaChecks?: Partial<MetaChecks>;
  /** Rendered trade rows kept (default RENDERED_TRADES_LIMIT), smaller in tests. */
  renderedLimit?: number;
}

export interface MetaChecks {
  /** Rows of a view whose metadata a request checks, besides the rows it serves. */
  rows: number;
  /** Catalog reads (expired metadata) that check may make per request. */
  reads: number;
}

const META_CHECKS: MetaChecks = { rows: 64, reads: 4 };

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

const RUN_LIMITS: RunLimits = { firstRead: 128, refreshRows: 4_096, rowsCap: 100_000, readAhead: 4_096, rowsLimit: 1_000_000 };

// ---- exact integer helpers --------------------------------------------------------------------------

/** round(a * b / 10^6), half up, exactly, for non-negative safe integers (a * b may pass 2^53). */
export function mulMicro(a: number, b: number): number {
  const hi = Math.floor(a / UNITS);
  const lo = a - hi * UNITS;
  // lo * b < 10^12 is exact, and a quotient that is x.5 exactly is representable, so Math.round is exact.
  return hi * b + Math.round((lo * b) / UNITS);
}

/** trunc(num / den * 100) to 4 decimals, as an integer of 10^-4 percent (den > 0). */
export function percent4(num: number, den: number): number {
  const n = num * UNITS;
  // Below 2^53 the correctly rounded quotient of two exact integers cannot cross an integer.
  if (Number.isSafeInteger(n)) return Math.trunc(n / den);
  return Number((BigInt(num) * BigInt(UNITS)) / BigInt(den));
}

const toNum = (micro: number) => micro / UNITS;
const pctNum = (p4: number) => p4 / 10_000;

/** JSON text of every price in pips from 0 to 1 (number to text is the costliest part of a trade row). */
const PRICE_TEXT = Array.from({ length: 10_001 }, (_, pips) => String(pips / 10_000));
const priceText = (pips: number) => PRICE_TEXT[pips] ?? String(pips / 10_000);

/**
 * `s` as one contiguous string. V8 keeps a concatenation as a rope of its pieces and copies a rope piece
 * by piece every time it is joined into an answer: a 100-row page of cached ropes took 170 us to join,
 * of flat rows 8 us. A row's text is written once and joined on every request, so it is flattened once.
 * (Reading a character also flattens, but an optimizing compiler may drop an unused read; a UTF-8 round
 * trip is exact here because JSON.stringify leaves no lone surrogates.)
 */
function flat(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}

/** Every parameter that shapes a positions page (JSON: a title may hold any separator). */
function pageKey(kind: 'o' | 'c', p: PositionsParams | ClosedParams): string {
  const open = kind === 'o' ? (p as PositionsParams) : undefined;
  return JSON.stringify([kind, p.user, p.sortBy, p.descending, p.offset, p.limit, p.title ?? null, p.markets ?? null, open?.sizeThreshold ?? null, open?.redeemable ?? null, open?.mergeable ?? null]);
}

/**
 * `[items joined by commas]` as one flat string (the items are consumed). The brackets go inside the
 * first and last items rather than around the join, which would make a rope that the HTTP layer copies
 * once more to flatten (a 78 KB page: 15-20 us).
 */
function jsonArray(items: string[]): string {
  if (items.length === 0) return '[]';
  items[0] = '[' + items[0];
  items[items.length - 1] += ']';
  return items.join(',');
}

// ---- rows -------------------------------------------------------------------------------------------

interface MarketMeta {
  title: string;
  /** Lowercase title for the case-insensitive filter and sort. */
  titleLower: string;
  slug: string;
  eventSlug: string;
  icon: string;
  endDate: string;
  /** ms of endDate; NaN when none. */
  endMs: number;
  outcomes: readonly [string, string];
  /** Imported seed prices in micro-USDC, -1 when none. */
  seed: [number, number];
  negRisk: boolean;
  expiresAt: number;
  /** The catalog's generation when it was read: while no catalog write has happened since, it is current. */
  generation: number;
  /** The text fields as JSON strings, escaped once (answers are written as text, not stringified). */
  json: {
    title: string;
    slug: string;
    icon: string;
    eventSlug: string;
    endDate: string;
    outcomes: [string, string];
    conditionId: string;
    /** `<conditionId>:<outcome>` of each outcome. */
    assets: [string, string];
  };
}

/**
 * One position of a wallet view, with everything its answer and its sorts need. A class, so that every
 * row shares one hidden class: a view's rows are scanned on every request, and object literals built by
 * spreading decoded records ended up with many shapes (megamorphic reads, measured 20x slower).
 */
class LiveRow {
  /** The price inputs the numbers were computed from (compared by identity). */
  snap: { version: number; json: string } | undefined = undefined;
  last: { pricePips: number } | undefined = undefined;
  /** Priced by a two-sided book with a spread of at most 0.10 (the last trade did not count). */
  tight = false;
  cur = 0;
  iv = 0;
  cv = 0;
  cash = 0;
  pct = 0;
  pctReal = 0;
  /** This row's answer as JSON text, written once per change of its numbers (number formatting is slow). */
  json: string | undefined = undefined;
  /** Index in its view's `open` or `closed` list: (conditionId, outcome) order, every sort's tie-break. */
  ord = 0;
  /** Scratch mark of a sort fix-up (SortedRows). */
  mark = 0;

  /** The position state, copied out of the decoded record: decoded records come in many shapes. */
  readonly size: number;
  readonly avg: number;
  readonly bought: number;
  readonly realized: number;
  /** Seconds of the last activity, or of the close for a closed row. */
  readonly timestamp: number;
  readonly closedAt: number;

  constructor(
    readonly conditionId: string,
    readonly outcome: 0 | 1,
    st: PositionState,
    /** Replaced when the catalog's metadata of the market changes (checkMeta). */
    public meta: MarketMeta,
    readonly facts: MarketFacts | undefined,
    /** Token whose live price moves this row; undefined when nothing live can (resolved, closed, unknown). */
    readonly token: string | undefined,
    readonly redeemable: boolean,
    readonly mergeable: boolean,
  ) {
    this.size = st.size;
    this.avg = st.avg;
    this.bought = st.bought;
    this.realized = st.realized;
    this.closedAt = st.closedAt;
    this.timestamp = Math.floor((st.closedAt > 0 ? st.closedAt : st.last) / 1000);
    if (st.size === 0) this.cur = st.closePrice;
  }
}

interface WalletView {
  version: number;
  factsVersion: number;
  /** Position in the reader's log of catalog-changed markets up to which its rows were re-checked. */
  catalogSeen: number;
  /** The next row (open ones first, then closed) the rolling metadata check looks at. */
  metaNext: number;
  /** Rows by condition id, built at the first catalog change that concerns the view. */
  byMarket: Map<string, LiveRow[]> | undefined;
  /** Position in the reader's log of changed tokens up to which the open rows were re-checked. */
  priceSeen: number;
  /** The reader's count of unnamed price changes at that time (those re-check every row). */
  unnamedSeen: number;
  /** Open rows by the token that prices them, built at the first re-check by token. */
  byToken: Map<string, LiveRow> | undefined;
  /** Rows in (conditionId, outcome) order: the tie-break order of every sort. */
  open: LiveRow[];
  closed: LiveRow[];
  /** The smallest size an open row shows (Infinity when none): a threshold below it drops nothing. */
  minOpenSize: number;
  sorted: Map<string, SortedRows>;
}

/**
 * One order of a view's rows. Rows whose price moved since it was sorted wait in `moved`; the next
 * read takes them out and merges them back in, so a few republished books cost a pass over the rows,
 * not a sort of them.
 */
interface SortedRows {
  rows: LiveRow[];
  cmp: Cmp;
  moved: LiveRow[];
  /** Too many moved rows to be worth merging: sort again. */
  resort: boolean;
}

/**
 * A rendered page, valid while its view is the wallet's view and nothing any page shows has changed since
 * (`rowEpoch`): polling clients ask for the same pages again and again, and a 100-row page is ~80 KB of
 * text joined and then garbage-collected per request.
 */
interface CachedPage {
  view: WalletView;
  epoch: number;
  /** Its rows: a request re-checks their metadata as it would a fresh page's. */
  rows: LiveRow[];
  json: string;
}

/**
 * A rendered /trades page: which rows it lists is valid while no view was written since (`version`, the
 * ViewStore's write count); each row's text is still re-checked as a fresh page's would be (tradeRow).
 */
interface CachedTradePage {
  version: number;
  seqs: number[];
  roles: number[];
  rows: string[];
  json: string;
}

/** Rendered pages by request, bounded by the total length of their texts (oldest dropped first). */
class PageCache<E extends { json: string }> {
  private readonly entries = new Map<string, E>();
  private chars = 0;

  get(key: string): E | undefined {
    return this.entries.get(key);
  }

  set(key: string, e: E): void {
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.chars -= old.json.length;
      this.entries.delete(key);
    }
    if (e.json.length > PAGE_CACHE_CHARS / 4) return;
    this.entries.set(key, e);
    this.chars += e.json.length;
    // Insertion order is age; only walked when over the limit (see walletView).
    if (this.chars > PAGE_CACHE_CHARS) {
      for (const [k, x] of this.entries) {
        if (this.chars <= PAGE_CACHE_CHARS) break;
        this.entries.delete(k);
        this.chars -= x.json.length;
      }
    }
  }
}

interface ProfileEntry {
  /** The profile fields as a JSON fragment (`"name":...,"profileImageOptimized":...`). */
  json: string;
  expiresAt: number;
}

/** A trade row as written, and the cache entries it was written from (compared by identity). */
interface RenderedTrade {
  conditionId: string;
  wallet: string;
  meta: MarketMeta;
  profile: ProfileEntry;
  json: string;
  /** Served since the eviction scan last passed it. */
  used: boolean;
}

/** A candidate trade row before its fill is loaded. */
interface TradeCand {
  seq: number;
  role: number;
  side: number;
  size: number;
  usdc: number;
  conditionId?: string;
}

function compareCand(a: TradeCand, b: TradeCand): number {
  return b.seq - a.seq || a.role - b.role;
}

/** Same metadata, field by field (`expiresAt` aside). */
function sameMeta(a: MarketMeta, b: MarketMeta): boolean {
  const x = a.json;
  const y = b.json;
  return (
    x.title === y.title && x.slug === y.slug && x.icon === y.icon && x.eventSlug === y.eventSlug && x.endDate === y.endDate &&
    x.outcomes[0] === y.outcomes[0] && x.outcomes[1] === y.outcomes[1] && a.seed[0] === b.seed[0] && a.seed[1] === b.seed[1] && a.negRisk === b.negRisk
  );
}

function compareTitle(a: MarketMeta, b: MarketMeta): number {
  if (a.titleLower !== b.titleLower) return a.titleLower < b.titleLower ? -1 : 1;
  if (a.title !== b.title) return a.title < b.title ? -1 : 1;
  return 0;
}

const sideCode = (side: unknown) => (side === 'BUY' ? SIDE_BUY : SIDE_SELL);

// ---- the reader -------------------------------------------------------------------------------------

export class WalletDataReader {
  private readonly changes: WalletViewChanges;
  private readonly walletViews = new Map<string, WalletView>();
  private viewRows = 0;
  private readonly facts = new Map<string, MarketFacts | null>();
  private factsVersion = -1;
  private readonly meta = new Map<string, MarketMeta>();
  /** Markets the catalog announced changes of, oldest first (trimmed like `changed`). */
  private readonly catalogLog: string[] = [];
  private catalogBase = 0;
  private readonly books = new Map<string, BookTop & { version: number }>();
  private readonly profiles = new Map<string, ProfileEntry>();
  /** Rendered trade rows by seq x 2 + role; `renderedOrder` holds each id once, oldest first (see evictRendered). */
  private readonly rendered = new Map<number, RenderedTrade>();
  private readonly renderedOrder: IdRing;
  private readonly renderedLimit: number;
  private readonly store: Store;
  private readonly views: ViewStore;
  private readonly catalog: CatalogReader;
  private readonly prices: LivePrices | undefined;
  private readonly now: () => number;
  private readonly priceEvents: boolean;
  /**
   * Tokens whose book or last trade changed, as the caller reports them (`pricesChanged`), oldest first;
   * `changedBase` is the position of the first one since the reader started (the log is trimmed).
   */
  private readonly changed: string[] = [];
  private readonly pages = new PageCache<CachedPage>();
  private readonly tradePages = new PageCache<CachedTradePage>();
  /**
   * Bumped whenever a row's text may change (a row recomputed, its metadata replaced), which is also
   * whenever a sorted order may: every cached page written before is stale. One counter for every
   * wallet: in a live market it moves on most requests and the cache simply misses.
   */
  private rowEpoch = 0;
  private changedBase = 0;
  /** Changes reported without token ids. */
  private unnamedChanges = 0;
  private markStamp = 0;
  /** Runs of committed trade rows by range (see TradeRun), least recently used first. */
  private readonly runs = new Map<string, TradeRun>();
  private runRows = 0;
  private readonly runLimits: RunLimits;
  private readonly metaChecks: MetaChecks;
  private readonly marketIds = new Map<string, number>();
  private readonly marketNames: string[] = [];
  private readonly runSource: RunSource = {
    extend: (run, want) => this.extendRun(run, want),
    below: (run) => this.store.views.getRange({ start: [...run.prefix, run.next], end: run.prefix, reverse: true })[Symbol.iterator](),
    marketIndex: (cid) => this.marketIndex(cid),
  };

  constructor(deps: WalletDataDeps) {
    this.store = deps.store;
    this.views = deps.views;
    this.catalog = deps.catalog;
    this.prices = deps.prices;
    this.now = deps.now ?? (() => performance.now());
    this.priceEvents = deps.priceEvents ?? false;
    this.changes = walletViewChanges(deps.views);
    this.runLimits = { ...RUN_LIMITS, ...deps.runLimits };
    this.metaChecks = { ...META_CHECKS, ...deps.metaChecks };
    this.renderedLimit = deps.renderedLimit ?? RENDERED_TRADES_LIMIT;
    this.renderedOrder = new IdRing(this.renderedLimit);
  }

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
   * The catalog changed these markets: their metadata is re-read at its next use, and the wallet views
   * re-check their rows of these markets at their next request.
   */
  catalogChanged(conditionIds: readonly string[]): void {
    for (const raw of conditionIds) {
      const c = raw.toLowerCase();
      const m = this.meta.get(c);
      if (m !== undefined) m.expiresAt = -Infinity;
      this.catalogLog.push(c);
    }
    if (this.catalogLog.length > CHANGED_MARKETS_LIMIT) {
      const drop = this.catalogLog.length >> 1;
      this.catalogLog.splice(0, drop);
      this.catalogBase += drop;
    }
  }

  // ---- market data ----

  private marketFacts(conditionId: string): MarketFacts | undefined {
    if (this.factsVersion !== this.changes.markets) {
      this.facts.clear();
      this.factsVersion = this.changes.markets;
    }
    let f = this.facts.get(conditionId);
    if (f === undefined) {
      f = this.views.get<MarketFacts>(walletViewKeys.market(conditionId)) ?? null;
      this.facts.set(conditionId, f);
    }
    return f ?? undefined;
  }

  private marketMeta(conditionId: string, now = this.now()): MarketMeta {
    const cached = this.meta.get(conditionId);
    if (cached !== undefined && now < cached.expiresAt) return cached;
    // Every catalog write transaction bumps the generation (projections/catalog.ts), in this process or an
    // import beside it: an expired entry read under the current one is current, and re-reading it (an index
    // lookup and two decodes, ~100-200 µs) would only find it unchanged.
    const generation = (this.store.catalog.get(catalogMetaKeys.generation) as number | undefined) ?? 0;
    if (cached !== undefined && cached.generation === generation) {
      cached.expiresAt = now + META_TTL_MS * (0.5 + Math.random() * 0.5);
      return cached;
    }
    const m: MarketRec | undefined = this.catalog.marketByCondition(conditionId);
    const e = m ? this.catalog.event(m.eventId) : undefined;
    const endDate = m?.endDate || e?.endDate || '';
    const seedOf = (i: 0 | 1): number => {
      const text = m?.outcomePrices[i];
      const pips = text === undefined ? undefined : parsePips(text);
      return pips === undefined ? -1 : pips * UNITS_PER_PIP;
    };
    const title = m?.question ?? '';
    const meta: MarketMeta = {
      title,
      titleLower: title.toLowerCase(),
      slug: m?.slug ?? '',
      eventSlug: e?.slug ?? '',
      icon: m?.icon || e?.icon || '',
      endDate,
      endMs: endDate === '' ? NaN : Date.parse(endDate),
      outcomes: m ? [m.outcomes[0], m.outcomes[1]] : DEFAULT_OUTCOMES,
      seed: [seedOf(0), seedOf(1)],
      negRisk: m?.negRisk ?? false,
      expiresAt: now + META_TTL_MS * (0.5 + Math.random() * 0.5),
      generation,
      json: { title: '', slug: '', icon: '', eventSlug: '', endDate: '', outcomes: ['', ''], conditionId: '', assets: ['', ''] },
    };
    const q = JSON.stringify;
    meta.json = {
      title: q(meta.title),
      slug: q(meta.slug),
      icon: q(meta.icon),
      eventSlug: q(meta.eventSlug),
      endDate: q(meta.endDate),
      outcomes: [q(meta.outcomes[0]), q(meta.outcomes[1])],
      conditionId: q(conditionId),
      assets: [q(formatAsset(conditionId, 0)), q(formatAsset(conditionId, 1))],
    };
    if (cached !== undefined && sameMeta(cached, meta)) {
      // Unchanged: the same object, so that nothing written from it is written again.
      cached.expiresAt = meta.expiresAt;
      cached.generation = generation;
      return cached;
    }
    if (this.meta.size >= META_CACHE_LIMIT) this.meta.clear();
    this.meta.set(conditionId, meta);
    return meta;
  }

  /** Best bid and ask of a published book; parsed once per version. */
  private bestOf(tokenId: string, snap: { version: number; json: string } | undefined): BookTop {
    if (snap === undefined) return EMPTY_TOP;
    const cached = this.books.get(tokenId);
    if (cached !== undefined && cached.version === snap.version) return cached;
    const { bid, ask } = parseBookTop(snap.json);
    const entry = { version: snap.version, bid, ask };
    if (this.books.size >= BOOK_CACHE_LIMIT) this.books.clear();
    this.books.set(tokenId, entry);
    return entry;
  }

  /** Current price of an outcome in micro-USDC (module header gives the order of sources). */
  curPrice(conditionId: string, outcome: 0 | 1): number {
    const facts = this.marketFacts(conditionId);
    const token = facts?.tokenIds[outcome];
    const snap = token === undefined ? undefined : this.prices?.bookSnapshot(token);
    const last = token === undefined ? undefined : this.prices?.lastTradePrice(token);
    return this.priceOf(facts, this.marketMeta(conditionId), outcome, snap, last);
  }

  private priceOf(
    facts: MarketFacts | undefined,
    meta: MarketMeta,
    outcome: 0 | 1,
    snap: { version: number; json: string } | undefined,
    last: { pricePips: number } | undefined,
  ): number {
    if (facts !== undefined && facts.winner >= 0) return facts.winner === outcome ? UNITS : 0;
    if (facts !== undefined) {
      const pips = currentPricePips(this.bestOf(facts.tokenIds[outcome], snap), last?.pricePips ?? NO_PRICE);
      if (pips !== NO_PRICE) return pips * UNITS_PER_PIP;
    }
    const seed = meta.seed[outcome];
    return seed >= 0 ? seed : 0;
  }

  // ---- positions ----

  /** Computes a row's numbers from its state and `cur` (mutates). */
  private compute(r: LiveRow): void {
    r.json = undefined;
    this.rowEpoch++;
    r.iv = mulMicro(r.size, r.avg);
    r.cv = mulMicro(r.size, r.cur);
    r.cash = r.cv - r.iv;
    const basis = mulMicro(r.bought, r.avg);
    r.pct = r.iv === 0 ? 0 : percent4(r.cash, r.iv);
    r.pctReal = basis === 0 ? 0 : percent4(r.cv - basis, basis);
  }

  /**
   * The wallet's view, rebuilt when its rows or the market facts changed. Catalog metadata is kept
   * current row by row instead (checkMeta): a rebuild of a 5,000-row view blocks for a hundred ms and more.
   */
  private walletView(wallet: string): WalletView {
    const version = this.changes.walletVersion(wallet);
    const now = this.now();
    const hit = this.walletViews.get(wallet);
    if (hit !== undefined && hit.version === version && hit.factsVersion === this.changes.markets) {
      // Map order is the eviction order: a hit moves to the back.
      this.walletViews.delete(wallet);
      this.walletViews.set(wallet, hit);
      return hit;
    }
    const held: { conditionId: string; outcome: 0 | 1; st: PositionState }[] = [];
    for (const { key, value } of this.views.range<PositionState>(walletViewKeys.positionsOf(wallet))) {
      held.push({ conditionId: key[2] as string, outcome: key[3] as 0 | 1, st: value });
    }
    const openSizes = new Map<string, [number, number]>();
    for (const h of held) {
      if (h.st.size <= 0) continue;
      let pair = openSizes.get(h.conditionId);
      if (pair === undefined) openSizes.set(h.conditionId, (pair = [0, 0]));
      pair[h.outcome] = h.st.size;
    }
    const view: WalletView = {
      version,
      factsVersion: this.changes.markets,
      catalogSeen: this.catalogBase + this.catalogLog.length,
      metaNext: 0,
      byMarket: undefined,
      priceSeen: this.changedBase + this.changed.length,
      unnamedSeen: this.unnamedChanges,
      byToken: undefined,
      open: [],
      closed: [],
      minOpenSize: Infinity,
      sorted: new Map(),
    };
    for (const h of held) {
      const open = h.st.size > 0;
      if (!open && h.st.closedAt === 0) continue;
      const facts = this.marketFacts(h.conditionId);
      const resolved = facts !== undefined && facts.winner >= 0;
      const r = new LiveRow(
        h.conditionId,
        h.outcome,
        h.st,
        this.marketMeta(h.conditionId, now),
        facts,
        open && !resolved ? facts?.tokenIds[h.outcome] : undefined,
        open && resolved,
        // The engine refuses a merge once the market is resolved (redeem pays the pair instead).
        open && !resolved && (openSizes.get(h.conditionId)?.[1 - h.outcome] ?? 0) > 0,
      );
      if (open) {
        const token = r.token;
        this.price(r, token === undefined ? undefined : this.prices?.bookSnapshot(token), token === undefined ? undefined : this.prices?.lastTradePrice(token));
        r.ord = view.open.length;
        view.open.push(r);
        view.minOpenSize = Math.min(view.minOpenSize, toNum(r.size));
      } else {
        r.ord = view.closed.length;
        view.closed.push(r);
      }
      this.compute(r);
    }
    if (hit !== undefined) {
      this.viewRows -= hit.open.length + hit.closed.length;
      this.walletViews.delete(wallet);
    }
    this.walletViews.set(wallet, view);
    this.viewRows += view.open.length + view.closed.length;
    // Only iterate when over the limit: reaching a Map's first entry walks the slots of every entry
    // deleted since its last rehash (here, every move to the back).
    if (this.viewRows > VIEW_ROWS_LIMIT) {
      for (const [w, v] of this.walletViews) {
        if (this.viewRows <= VIEW_ROWS_LIMIT || w === wallet) break;
        this.walletViews.delete(w);
        this.viewRows -= v.open.length + v.closed.length;
      }
    }
    return view;
  }

  /** Recomputes a row whose book or last trade was republished since; true when its price moved. */
  private refreshRow(r: LiveRow): boolean {
    const token = r.token;
    const prices = this.prices;
    if (token === undefined || prices === undefined) return false;
    const snap = prices.bookSnapshot(token);
    // A tight two-sided book prices the row by itself: its last trade cannot matter while the book stands.
    if (snap === r.snap && r.tight) return false;
    const last = prices.lastTradePrice(token);
    if (snap === r.snap && last === r.last) return false;
    return this.price(r, snap, last);
  }

  /** Prices a row from these inputs (remembered for the next check); true when its price moved. */
  private price(r: LiveRow, snap: { version: number; json: string } | undefined, last: { pricePips: number } | undefined): boolean {
    r.snap = snap;
    r.last = last;
    r.tight = r.token !== undefined && tight(this.bestOf(r.token, snap));
    const cur = this.priceOf(r.facts, r.meta, r.outcome, snap, last);
    if (cur === r.cur) return false;
    r.cur = cur;
    this.compute(r);
    return true;
  }

  /**
   * Keeps the metadata of a view's rows current without rebuilding it: the rows of markets the catalog
   * announced since the view last looked, and a rolling few others per request (at most `metaChecks.rows`
   * rows and `metaChecks.reads` catalog reads), so that unannounced edits
   * (event-level fields) reach every row while no request pays for re-reading thousands of entries. The
   * rows a request serves are checked as well (checkRows).
   */
  private checkMeta(view: WalletView, now: number): void {
    const end = this.catalogBase + this.catalogLog.length;
    if (view.catalogSeen < this.catalogBase) {
      this.checkRows(view, view.open, now, true);
      this.checkRows(view, view.closed, now, true);
    } else if (view.catalogSeen < end) {
      let byMarket = view.byMarket;
      if (byMarket === undefined) {
        byMarket = view.byMarket = new Map();
        for (const list of [view.open, view.closed]) {
          for (const r of list) {
            const rows = byMarket.get(r.conditionId);
            if (rows === undefined) byMarket.set(r.conditionId, [r]);
            else rows.push(r);
          }
        }
      }
      for (let i = view.catalogSeen - this.catalogBase; i < this.catalogLog.length; i++) {
        const rows = byMarket.get(this.catalogLog[i]);
        if (rows !== undefined) this.checkRows(view, rows, now, true);
      }
    }
    view.catalogSeen = end;
    const total = view.open.length + view.closed.length;
    const some: LiveRow[] = [];
    let reads = 0;
    for (let k = 0; k < Math.min(total, this.metaChecks.rows) && reads < this.metaChecks.reads; k++) {
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
  private checkRows(view: WalletView, rows: readonly LiveRow[], now: number, announced = false): boolean {
    const moved: LiveRow[] = [];
    let changed = false;
    for (const r of rows) {
      // A row's metadata object is the cached entry (re-read in place while unchanged, expired at once by
      // an announcement), so an unexpired one needs no lookup; an announcement looks anyway, in case the
      // cache dropped the entry since.
      if (!announced && now < r.meta.expiresAt) continue;
      const m = this.marketMeta(r.conditionId, now);
      if (m === r.meta) continue;
      r.meta = m;
      r.json = undefined;
      this.rowEpoch++;
      changed = true;
      if (r.token !== undefined && this.price(r, r.snap, r.last)) moved.push(r);
    }
    if (changed) for (const key of [...view.sorted.keys()]) if (META_SORTS.has(key.slice(2, -2))) view.sorted.delete(key);
    if (moved.length > 0) this.pricesMoved(view, moved);
    return changed;
  }

  /**
   * Re-prices the open rows whose price may have moved: with price events, the rows of the tokens
   * reported since the view last looked (every row after an unnamed change, or when the log no longer
   * reaches back that far, or when more tokens changed than it has rows); without, every row.
   */
  private recheckPrices(view: WalletView): void {
    const end = this.changedBase + this.changed.length;
    const moved: LiveRow[] = [];
    if (!this.priceEvents || view.unnamedSeen !== this.unnamedChanges || view.priceSeen < this.changedBase || end - view.priceSeen > view.open.length) {
      for (const r of view.open) if (this.refreshRow(r)) moved.push(r);
    } else if (view.priceSeen < end) {
      let byToken = view.byToken;
      if (byToken === undefined) {
        byToken = view.byToken = new Map();
        for (const r of view.open) if (r.token !== undefined) byToken.set(r.token, r);
      }
      for (let i = view.priceSeen - this.changedBase; i < this.changed.length; i++) {
        const r = byToken.get(this.changed[i]);
        if (r !== undefined && this.refreshRow(r)) moved.push(r);
      }
    }
    view.priceSeen = end;
    view.unnamedSeen = this.unnamedChanges;
    if (moved.length > 0) this.pricesMoved(view, moved);
  }

  /**
   * The sorts of open rows that read prices hold `moved` out of place (see SortedRows). Closed rows have no
   * live price (their PRICE is the closing price), and a moved open row merged into a closed sort would
   * show there.
   */
  private pricesMoved(view: WalletView, moved: LiveRow[]): void {
    for (const [key, sorted] of view.sorted) {
      if (key[0] !== 'o' || !PRICE_SORTS.has(key.slice(2, -2)) || sorted.resort) continue;
      for (const r of moved) sorted.moved.push(r);
      // Beyond an eighth of the rows, one sort costs less than merging (and the list stays bounded).
      if (sorted.moved.length * 8 > sorted.rows.length) {
        sorted.resort = true;
        sorted.moved = [];
      }
    }
  }

  private sortedRows(view: WalletView, closed: boolean, sortBy: PositionSort | ClosedSort, descending: boolean): LiveRow[] {
    const key = `${closed ? 'c' : 'o'}:${sortBy}:${descending ? 'D' : 'A'}`;
    let sorted = view.sorted.get(key);
    if (sorted === undefined) {
      const cmp = comparator(sortBy, descending);
      sorted = { rows: [...(closed ? view.closed : view.open)].sort(cmp), cmp, moved: [], resort: false };
      view.sorted.set(key, sorted);
    } else if (sorted.resort) {
      sorted.rows.sort(sorted.cmp);
      sorted.resort = false;
    } else if (sorted.moved.length > 0) {
      this.mergeMoved(sorted);
    }
    return sorted.rows;
  }

  /**
   * Takes the moved rows out of `sorted` and puts them back at their places, in place; rows that did not
   * move keep their order. Each moved row finds its place by binary search among the others (k log n
   * comparisons for k moved rows): a merge pass compared every row, ~250 µs per request over 5,000 rows
   * while books moved under every read.
   */
  private mergeMoved(sorted: SortedRows): void {
    const stamp = ++this.markStamp;
    for (const r of sorted.moved) r.mark = stamp;
    const back: LiveRow[] = [];
    for (const r of sorted.moved) {
      if (r.mark !== stamp) continue;
      r.mark = -stamp;
      back.push(r);
    }
    sorted.moved = [];
    const cmp = sorted.cmp;
    back.sort(cmp);
    const rows = sorted.rows;
    // The rows that stay, compacted to the front, still in order.
    let m = 0;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      if (r.mark !== -stamp) rows[m++] = r;
    }
    // Each moved row goes before the first staying row it sorts before (after its equals), as a merge
    // would put it; `back` is sorted, so its places never decrease.
    const at = new Array<number>(back.length);
    let lo = 0;
    for (let j = 0; j < back.length; j++) {
      let a = lo;
      let b = m;
      while (a < b) {
        const mid = (a + b) >>> 1;
        if (cmp(back[j], rows[mid]) < 0) b = mid;
        else a = mid + 1;
      }
      at[j] = lo = a;
    }
    // Spread from the right: a staying row moves up by the number of moved rows placed before it.
    let w = m + back.length;
    let i = m - 1;
    for (let j = back.length - 1; j >= 0; j--) {
      while (i >= at[j]) rows[--w] = rows[i--];
      rows[--w] = back[j];
    }
  }

  /**
   * One position as JSON text, fields in the order of the Position type (`negativeRisk` last, left out
   * for closed rows), kept on the row until its numbers change. Text from storage is escaped once, in the
   * metadata cache; the wallet is a validated lowercase address.
   */
  private positionJson(wallet: string, r: LiveRow, withNegRisk: boolean): string {
    if (r.json !== undefined) return r.json;
    const { meta, outcome } = r;
    const j = meta.json;
    const tail = withNegRisk ? `,"negativeRisk":${r.facts?.negRisk ?? meta.negRisk}}` : '}';
    r.json = flat(
      `{"proxyWallet":"${wallet}","asset":${j.assets[outcome]},"conditionId":${j.conditionId},"size":${toNum(r.size)},` +
      `"avgPrice":${toNum(r.avg)},"initialValue":${toNum(r.iv)},"currentValue":${toNum(r.cv)},"cashPnl":${toNum(r.cash)},` +
      `"percentPnl":${pctNum(r.pct)},"totalBought":${toNum(r.bought)},"realizedPnl":${toNum(r.realized)},` +
      `"percentRealizedPnl":${pctNum(r.pctReal)},"curPrice":${toNum(r.cur)},"redeemable":${r.redeemable},"mergeable":${r.mergeable},` +
      `"title":${j.title},"slug":${j.slug},"icon":${j.icon},"eventSlug":${j.eventSlug},"outcome":${j.outcomes[outcome]},` +
      `"outcomeIndex":${outcome},"oppositeOutcome":${j.outcomes[1 - outcome]},"oppositeAsset":${j.assets[1 - outcome]},` +
      `"endDate":${j.endDate},"timestamp":${r.timestamp}${tail}`,
    );
    return r.json;
  }

  positions(p: PositionsParams): Position[] {
    return JSON.parse(this.positionsJson(p)) as Position[];
  }

  /** GET /positions as JSON text (the route answers it as is). */
  positionsJson(p: PositionsParams): string {
    if (p.limit === 0) return '[]';
    const view = this.walletView(p.user);
    // A price sort needs every row's current price; any other order (and every filter) does not depend
    // on prices, so only the rows of the page are re-priced.
    const priceSort = PRICE_SORTS.has(p.sortBy);
    // With price events the rows of the tokens reported since are re-priced, whatever the order; without,
    // a price sort re-checks every row and any other order its page.
    // Every price a page shows is current once the reported rows (or, for a price sort, all rows) are
    // re-checked; otherwise the page's rows are re-priced below, and nothing is cached.
    const cacheable = priceSort || this.priceEvents;
    if (cacheable) this.recheckPrices(view);
    const now = this.now();
    this.checkMeta(view, now);
    const key = cacheable ? pageKey('o', p) : undefined;
    const cached = key === undefined ? undefined : this.cachedPage(key, view, now);
    if (cached !== undefined) return cached;
    let page = this.openPage(view, p);
    // A title filter or order read the served rows' titles before they were checked: pick again.
    if (this.checkRows(view, page, now) && (p.title !== undefined || META_SORTS.has(p.sortBy))) {
      page = this.openPage(view, p);
      this.checkRows(view, page, now);
    }
    if (!priceSort && !this.priceEvents) {
      const moved: LiveRow[] = [];
      for (const r of page) if (this.refreshRow(r)) moved.push(r);
      if (moved.length > 0) this.pricesMoved(view, moved);
    }
    const out = new Array<string>(page.length);
    for (let i = 0; i < page.length; i++) out[i] = this.positionJson(p.user, page[i], true);
    const json = jsonArray(out);
    if (key !== undefined) this.pages.set(key, { view, epoch: this.rowEpoch, rows: page, json });
    return json;
  }

  /** The cached text of page `key`, if still what a fresh read would write (its rows' metadata checked first). */
  private cachedPage(key: string, view: WalletView, now: number): string | undefined {
    const hit = this.pages.get(key);
    if (hit === undefined || hit.view !== view || hit.epoch !== this.rowEpoch) return undefined;
    this.checkRows(view, hit.rows, now);
    return hit.epoch === this.rowEpoch ? hit.json : undefined;
  }

  /** The open rows of a /positions page, in order. */
  private openPage(view: WalletView, p: PositionsParams): LiveRow[] {
    const markets = p.markets ? new Set(p.markets) : undefined;
    const title = p.title?.toLowerCase();
    const rows = this.sortedRows(view, false, p.sortBy, p.descending);
    // The threshold compares the number the client is shown.
    if (markets === undefined && title === undefined && !p.redeemable && !p.mergeable && p.sizeThreshold <= view.minOpenSize) {
      // No filter drops a row: the page is where the offset says (no walk over the rows before it).
      return rows.slice(p.offset, p.offset + p.limit);
    }
    const page: LiveRow[] = [];
    let skipped = 0;
    for (const r of rows) {
      if (toNum(r.size) < p.sizeThreshold) continue;
      if (markets !== undefined && !markets.has(r.conditionId)) continue;
      if (title !== undefined && !r.meta.titleLower.includes(title)) continue;
      if (p.redeemable && !r.redeemable) continue;
      if (p.mergeable && !r.mergeable) continue;
      if (skipped < p.offset) {
        skipped++;
        continue;
      }
      page.push(r);
      if (page.length >= p.limit) break;
    }
    return page;
  }

  closedPositions(p: ClosedParams): ClosedPosition[] {
    return JSON.parse(this.closedPositionsJson(p)) as ClosedPosition[];
  }

  /** GET /closed-positions as JSON text. */
  closedPositionsJson(p: ClosedParams): string {
    if (p.limit === 0) return '[]';
    const view = this.walletView(p.user);
    const now = this.now();
    this.checkMeta(view, now);
    // Closed rows have no live price: their text changes only with their metadata.
    const key = pageKey('c', p);
    const cached = this.cachedPage(key, view, now);
    if (cached !== undefined) return cached;
    let page = this.closedPage(view, p);
    if (this.checkRows(view, page, now) && (p.title !== undefined || META_SORTS.has(p.sortBy))) {
      page = this.closedPage(view, p);
      this.checkRows(view, page, now);
    }
    const json = jsonArray(page.map((r) => this.positionJson(p.user, r, false)));
    this.pages.set(key, { view, epoch: this.rowEpoch, rows: page, json });
    return json;
  }

  /** The closed rows of a /closed-positions page, in order. */
  private closedPage(view: WalletView, p: ClosedParams): LiveRow[] {
    const markets = p.markets ? new Set(p.markets) : undefined;
    const title = p.title?.toLowerCase();
    const page: LiveRow[] = [];
    let skipped = 0;
    for (const r of this.sortedRows(view, true, p.sortBy, p.descending)) {
      if (markets !== undefined && !markets.has(r.conditionId)) continue;
      if (title !== undefined && !r.meta.titleLower.includes(title)) continue;
      if (skipped < p.offset) {
        skipped++;
        continue;
      }
      page.push(r);
      if (page.length >= p.limit) break;
    }
    return page;
  }

  // ---- trades ----

  /** Last journal seq whose trade rows the committed views hold. */
  private committedTradeCursor(): number {
    const c = this.store.meta.get(metaKeys.projectionCursor(TRADES_PROJECTION));
    return typeof c === 'number' ? c : 0;
  }

  /**
   * The fill stored at `seq`. The only place this module reads the fills table: its storage form belongs
   * to the journal (journal/fill-codec.ts).
   */
  private fill(seq: number): FillEvent | undefined {
    return readFill(this.store.fills, seq);
  }

  /**
   * Rows above the committed cursor, newest first: the trade projection's writes still queued in the
   * ViewStore overlay. The projector applies a fill in the same turn as the engine acknowledges it, and
   * a queued write leaves the overlay only after lmdb-js renewed its read snapshot, so every row above
   * the cursor this snapshot shows is in the overlay.
   */
  private freshRows(p: TradesParams, after: number): TradeCand[] {
    const out: TradeCand[] = [];
    const roles = p.takerOnly ? [TAKER_ROLE] : [TAKER_ROLE, MAKER_ROLE];
    const from = (prefix: Key, role: number) => {
      for (const { key, value: v } of this.views.queuedUnder<TradeEntry>(prefix)) {
        const seq = key[prefix.length] as number;
        if (seq > after) out.push({ seq, role, side: v[0], size: v[1], usdc: v[2], conditionId: v[3] });
      }
    };
    if (p.user !== undefined) for (const r of roles) from(walletViewKeys.tradesByWalletPrefix(p.user, r), r);
    else if (p.markets !== undefined) for (const cid of p.markets) for (const r of roles) from(walletViewKeys.tradesByMarketPrefix(cid, r), r);
    else for (const r of roles) from(walletViewKeys.tradesAllPrefix(r), r);
    return out.sort(compareCand);
  }

  /**
   * The committed rows of one view range (a prefix of walletViewKeys' trade keys), newest first, from
   * `cursor` down: the cached run, brought up to `cursor` first. A run of a range that gained more than
   * `runLimits.refreshRows` rows since it was read is started over (the rows read on the way are kept).
   */
  private tradeRun(prefix: Key, cursor: number): TradeRun {
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
        for (const { key, value } of this.store.views.getRange({ start: [...prefix, cursor], end: [...prefix, run.top], reverse: true, limit: this.runLimits.refreshRows })) {
          last = (key as Key)[prefix.length] as number;
          this.pushRow(added, last, value as TradeEntry);
        }
        if (added.n < this.runLimits.refreshRows) {
          for (let i = added.n - 1; i >= 0; i--) run.newer.copyFrom(added, i);
          run.top = cursor;
          this.runRows += added.n;
          return run;
        }
        this.runRows -= run.length;
        run = new TradeRun(prefix, cursor);
        run.older = added;
        run.next = last - 1;
        this.runRows += added.n;
        this.runs.set(id, run);
        return run;
      }
      // The cursor moved back (another store behind the same reader): nothing read before can be trusted.
      this.runs.delete(id);
      this.runRows -= run.length;
    }
    run = new TradeRun(prefix, cursor);
    this.runs.set(id, run);
    return run;
  }

  /** Reads more of `run`'s range, so that it holds at least `want` rows if the range has them (up to `rowsCap`). */
  private extendRun(run: TradeRun, want: number): void {
    const room = this.runLimits.rowsCap - run.length;
    if (run.done || room <= 0) return;
    // Doubling, up to runLimits.readAhead rows beyond what this request needs.
    const ahead = Math.min(run.length, this.runLimits.readAhead);
    const limit = Math.min(room, Math.max(want - run.length, ahead, this.runLimits.firstRead));
    const before = run.older.n;
    let last = run.next + 1;
    for (const { key, value } of this.store.views.getRange({ start: [...run.prefix, run.next], end: run.prefix, reverse: true, limit })) {
      last = (key as Key)[run.prefix.length] as number;
      this.pushRow(run.older, last, value as TradeEntry);
    }
    const read = run.older.n - before;
    run.next = last - 1;
    if (read < limit) run.done = true;
    this.runRows += read;
  }

  /** Appends one view entry to `rows`; the condition id (per-wallet entries only) is interned. */
  private pushRow(rows: RunRows, seq: number, v: TradeEntry): void {
    rows.push(seq, v[0], v[1], v[2], v[3] === undefined ? -1 : this.marketIndex(v[3]));
  }

  /** A small integer per condition id seen in trade rows (runs store it instead of the string). */
  private marketIndex(conditionId: string): number {
    let i = this.marketIds.get(conditionId);
    if (i === undefined) {
      i = this.marketNames.length;
      this.marketIds.set(conditionId, i);
      this.marketNames.push(conditionId);
    }
    return i;
  }

  /** Evicts the least recently used runs beyond `rowsLimit` rows in all. */
  private trimRuns(): void {
    // Only iterate when over the limit (see walletView).
    if (this.runRows > this.runLimits.rowsLimit) {
      for (const [id, run] of this.runs) {
        if (this.runRows <= this.runLimits.rowsLimit) break;
        this.runs.delete(id);
        this.runRows -= run.length;
      }
    }
    if (this.marketIds.size > MARKET_IDS_LIMIT) {
      // Interned ids are only meaningful with the runs that hold them.
      this.marketIds.clear();
      this.marketNames.length = 0;
      this.runs.clear();
      this.runRows = 0;
    }
  }

  trades(p: TradesParams): Trade[] {
    return JSON.parse(this.tradesJson(p)) as Trade[];
  }

  /**
   * GET /trades as JSON text. Rows newest first (seq descending, taker before maker): the fills above the
   * committed cursor C, then the committed ranges from C down, merged by seq (k-way, k <= 2 x markets).
   */
  tradesJson(p: TradesParams): string {
    if (p.limit === 0) return '[]';
    // Each listed market is a range walked on its own: one listed twice would list its rows twice.
    if (p.markets !== undefined && new Set(p.markets).size < p.markets.length) p = { ...p, markets: [...new Set(p.markets)] };
    const key = JSON.stringify(p);
    const cached = this.tradePages.get(key);
    if (cached !== undefined && cached.version === this.views.version) {
      const now = this.now();
      let same = true;
      for (let i = 0; i < cached.seqs.length && same; i++) same = this.tradeRow(cached.seqs[i], cached.roles[i], now) === cached.rows[i];
      if (same) return cached.json;
    }
    const version = this.views.version;
    const cursor = this.committedTradeCursor();
    this.trimRuns();
    const side = p.side === undefined ? -1 : sideCode(p.side);
    const min = p.filter?.amount ?? 0;
    const filtered = p.filter !== undefined;
    const cash = p.filter?.type === 'CASH';
    const want = p.offset + p.limit;
    const pickedSeq: number[] = [];
    const pickedRole: number[] = [];
    let skipped = 0;
    /** Takes a row that passes the filters: skipped up to the offset, then picked; false once the page is full. */
    const take = (seq: number, role: number): boolean => {
      if (skipped < p.offset) skipped++;
      else {
        pickedSeq.push(seq);
        pickedRole.push(role);
      }
      return pickedSeq.length < p.limit;
    };
    // The filter compares the number the row shows (usdcSize or size).
    const passes = (rowSide: number, size: number, usdc: number) => (side < 0 || rowSide === side) && (!filtered || toNum(cash ? usdc : size) >= min);

    const userMarkets = p.user !== undefined && p.markets !== undefined ? new Set(p.markets) : undefined;
    let full = false;
    for (const c of this.freshRows(p, cursor)) {
      if (userMarkets !== undefined && !userMarkets.has(c.conditionId!)) continue;
      if (passes(c.side, c.size, c.usdc) && !take(c.seq, c.role)) {
        full = true;
        break;
      }
    }
    if (!full) {
      const roles = p.takerOnly ? [TAKER_ROLE] : [TAKER_ROLE, MAKER_ROLE];
      const heads: RunCursor[] = [];
      const add = (prefix: Key, role: number) => heads.push(new RunCursor(this.runSource, this.tradeRun(prefix, cursor), role, want));
      if (p.user !== undefined) for (const r of roles) add(walletViewKeys.tradesByWalletPrefix(p.user, r), r);
      else if (p.markets !== undefined) for (const cid of p.markets) for (const r of roles) add(walletViewKeys.tradesByMarketPrefix(cid, r), r);
      else for (const r of roles) add(walletViewKeys.tradesAllPrefix(r), r);
      const names = this.marketNames;
      try {
        for (const h of heads) h.advance();
        for (;;) {
          let best: RunCursor | undefined;
          for (const h of heads) if (h.seq >= 0 && (best === undefined || h.seq > best.seq || (h.seq === best.seq && h.role < best.role))) best = h;
          if (best === undefined) break;
          const ok = (userMarkets === undefined || userMarkets.has(names[best.market])) && passes(best.side, best.size, best.usdc);
          if (ok && !take(best.seq, best.role)) break;
          best.advance();
        }
      } finally {
        for (const h of heads) h.close();
      }
    }
    const now = this.now();
    const out: string[] = [];
    const seqs: number[] = [];
    const roles: number[] = [];
    for (let i = 0; i < pickedSeq.length; i++) {
      const json = this.tradeRow(pickedSeq[i], pickedRole[i], now);
      if (json === undefined) continue;
      out.push(json);
      seqs.push(pickedSeq[i]);
      roles.push(pickedRole[i]);
    }
    const rows = out.slice();
    const json = jsonArray(out);
    this.tradePages.set(key, { version, seqs, roles, rows, json });
    return json;
  }

  /**
   * A trade row's JSON text. Fills never change, so a rendered row is kept (bounded, least recently used
   * first out) and reused while the metadata and profile it was written with are still the cached ones:
   * the newest trades of a wallet or market are what clients poll, and rendering one costs a random
   * read of its fill plus number formatting.
   */
  private tradeRow(seq: number, role: number, now: number): string | undefined {
    const id = seq * 2 + role;
    const hit = this.rendered.get(id);
    // Unexpired entries are still the cached ones (see checkRows): no lookup needed.
    if (
      hit !== undefined &&
      (now < hit.meta.expiresAt || this.marketMeta(hit.conditionId, now) === hit.meta) &&
      (now < hit.profile.expiresAt || this.profileEntry(hit.wallet, now) === hit.profile)
    ) {
      hit.used = true;
      return hit.json;
    }
    const f = this.fill(seq);
    if (f === undefined) return undefined;
    const r = this.tradeJson(f, role, now);
    if (hit === undefined) {
      if (this.rendered.size >= this.renderedLimit) this.evictRendered();
      this.renderedOrder.push(id);
    }
    this.rendered.set(id, r);
    return r.json;
  }

  /**
   * Drops the oldest rendered row not used since it was last passed over (second chance): about least
   * recently used, without moving an entry on every hit. The order is a ring of ids beside the map:
   * taking a Map's first entry walks the slots of every entry deleted since its last rehash, and with
   * one deletion per insertion that made each eviction cost up to the whole map (measured: 7 ms pages).
   */
  private evictRendered(): void {
    const ring = this.renderedOrder;
    for (let i = 0; i < 64 && ring.count > 1; i++) {
      const id = ring.shift();
      const r = this.rendered.get(id)!;
      if (!r.used) {
        this.rendered.delete(id);
        return;
      }
      r.used = false;
      ring.push(id);
    }
    this.rendered.delete(ring.shift());
  }

  /**
   * The profile fields of a wallet as a JSON fragment. Cached for PROFILE_TTL_MS: a global page names up
   * to `limit` wallets, and profiles change only through the admin API (unannounced).
   */
  private profileEntry(wallet: string, now: number): ProfileEntry {
    const hit = this.profiles.get(wallet);
    if (hit !== undefined && now < hit.expiresAt) return hit;
    const p = getProfile(this.store, wallet);
    const q = JSON.stringify;
    const json = `"name":${q(p.name)},"pseudonym":${q(p.pseudonym)},"bio":${q(p.bio)},"profileImage":${q(p.profileImage)},"profileImageOptimized":${q(p.profileImageOptimized)}`;
    if (hit !== undefined && hit.json === json) {
      // Unchanged: the same entry, so that the rows written with it stay valid.
      hit.expiresAt = now + PROFILE_TTL_MS;
      return hit;
    }
    if (this.profiles.size >= PROFILE_CACHE_LIMIT) this.profiles.clear();
    const entry = { json, expiresAt: now + PROFILE_TTL_MS };
    this.profiles.set(wallet, entry);
    return entry;
  }

  /** One trade row as JSON text, fields in the order of the Trade type, with what it was written from. */
  private tradeJson(f: FillEvent, role: number, now: number): RenderedTrade {
    const taker = role === TAKER_ROLE;
    const wallet = (taker ? f.takerWallet : f.makerWallet).toLowerCase();
    const outcome = taker ? f.takerOutcome : f.makerOutcome;
    const conditionId = f.conditionId;
    const meta = this.marketMeta(conditionId, now);
    const profile = this.profileEntry(wallet, now);
    const j = meta.json;
    const side = (taker ? f.takerSide : f.makerSide) === 'BUY' ? '"BUY"' : '"SELL"';
    const price = priceText(taker ? f.takerPricePips : f.makerPricePips);
    const ts = Math.floor(f.ts / 1000);
    const q = JSON.stringify;
    const json = flat(
      `{"proxyWallet":${q(wallet)},"side":${side},"asset":${j.assets[outcome]},"conditionId":${j.conditionId},` +
      `"size":${toNum(f.size)},"price":${price},"timestamp":${ts},"title":${j.title},"slug":${j.slug},"icon":${j.icon},` +
      `"eventSlug":${j.eventSlug},"outcome":${j.outcomes[outcome]},"outcomeIndex":${outcome},${profile.json},` +
      `"transactionHash":${q(f.txHash)},"usdcSize":${toNum(taker ? f.takerUsdc : f.makerUsdc)}}`,
    );
    return { conditionId, wallet, meta, profile, json, used: false };
  }
}

/** A first-in first-out queue of numbers in a fixed ring (never more than `capacity` at once). */
class IdRing {
  private readonly ids: Float64Array;
  private head = 0;
  count = 0;

  constructor(capacity: number) {
    this.ids = new Float64Array(capacity);
  }

  push(id: number): void {
    this.ids[(this.head + this.count) % this.ids.length] = id;
    this.count++;
  }

  shift(): number {
    const id = this.ids[this.head];
    this.head = (this.head + 1) % this.ids.length;
    this.count--;
    return id;
  }
}

// ---- runs of committed trade rows ---------------------------------------------------------------------

/** Rows of a run, column by column (no object per row: a run may hold tens of thousands). */
class RunRows {
  n = 0;
  seq = new Float64Array(0);
  size = new Float64Array(0);
  usdc = new Float64Array(0);
  side = new Uint8Array(0);
  /** Index of the condition id (WalletDataReader.marketIndex), -1 when the view entry has none. */
  market = new Int32Array(0);

  push(seq: number, side: number, size: number, usdc: number, market: number): void {
    const i = this.n;
    if (i === this.seq.length) this.grow(Math.max(64, i * 2));
    this.seq[i] = seq;
    this.side[i] = side;
    this.size[i] = size;
    this.usdc[i] = usdc;
    this.market[i] = market;
    this.n = i + 1;
  }

  copyFrom(o: RunRows, i: number): void {
    this.push(o.seq[i], o.side[i], o.size[i], o.usdc[i], o.market[i]);
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
  }
}

/**
 * The committed trade rows of one view range, newest first, as far down as requests have read: every row
 * with seq in (next, top], none missing. Committed rows never change and new ones only appear above the
 * cursor, so a run stays exact: it is brought up to the current cursor (rows above `top` go to `newer`,
 * oldest first) and extended downwards on demand (`older`, newest first). Deep offsets and filtered pages
 * then walk memory instead of decoding LMDB entries on every request.
 */
class TradeRun {
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

/** What a RunCursor needs from the reader. */
interface RunSource {
  /** Reads more of the run's range (its cap permitting) so that it holds `want` rows if it can. */
  extend(run: TradeRun, want: number): void;
  /** The range below a run's rows, for reading past its cap without keeping what is read. */
  below(run: TradeRun): Iterator<{ key: unknown; value: unknown }>;
  marketIndex(conditionId: string): number;
}

/** Walks one run newest first, reading more of its range as needed; the current row is in the fields. */
class RunCursor {
  /** Seq of the current row; -1 once the range is exhausted. */
  seq = -1;
  side = 0;
  size = 0;
  usdc = 0;
  market = -1;
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
  }

  close(): void {
    this.it?.return?.();
  }
}

// ---- sorting ----------------------------------------------------------------------------------------
// Rows whose keys tie are ordered by `ord`, their (conditionId, outcome) order, ascending whatever the
// direction: the documented tie-break. A total order, so moved rows can be merged back (mergeMoved).

type Cmp = (a: LiveRow, b: LiveRow) => number;

function byNumber(get: (r: LiveRow) => number, descending: boolean): Cmp {
  return descending ? (a, b) => get(b) - get(a) : (a, b) => get(a) - get(b);
}

function byTitle(descending: boolean): Cmp {
  return descending ? (a, b) => compareTitle(b.meta, a.meta) : (a, b) => compareTitle(a.meta, b.meta);
}

/** End date in the requested direction; rows without one come last either way. */
function byEndDate(descending: boolean): Cmp {
  return (a, b) => {
    const x = a.meta.endMs;
    const y = b.meta.endMs;
    const nx = Number.isNaN(x);
    const ny = Number.isNaN(y);
    if (nx || ny) return nx === ny ? 0 : nx ? 1 : -1;
    return descending ? y - x : x - y;
  };
}

export function comparator(sortBy: PositionSort | ClosedSort, descending: boolean): Cmp {
  const byKey = keyComparator(sortBy, descending);
  return (a, b) => byKey(a, b) || a.ord - b.ord;
}

function keyComparator(sortBy: PositionSort | ClosedSort, descending: boolean): Cmp {
  switch (sortBy) {
    case 'CURRENT':
      return byNumber((r) => r.cv, descending);
    case 'INITIAL':
      return byNumber((r) => r.iv, descending);
    case 'TOKENS':
      return byNumber((r) => r.size, descending);
    case 'CASHPNL':
      return byNumber((r) => r.cash, descending);
    case 'PERCENTPNL':
      return byNumber((r) => r.pct, descending);
    case 'TITLE':
      return byTitle(descending);
    case 'RESOLVING':
      return byEndDate(descending);
    case 'PRICE':
      return byNumber((r) => r.cur, descending);
    case 'AVGPRICE':
      return byNumber((r) => r.avg, descending);
    case 'REALIZEDPNL':
      return byNumber((r) => r.realized, descending);
    case 'TIMESTAMP':
      // The seconds shown, not the ms of the close: rows closed within one second tie, and ties break as documented.
      return byNumber((r) => r.timestamp, descending);
  }
}
