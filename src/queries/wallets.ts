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
 * curPrice: 1 or 0 once the market is resolved; else the midpoint of the token's published book when
 * both sides exist and the spread is at most 0.10; else the last trade; else the midpoint of a wider
 * book; else the catalog's imported seed price; else 0. A closed row shows the price of the event that
 * closed it (frozen).
 *
 * Positions are served from a per-wallet view kept in memory: every row with its numbers computed, and
 * the rows sorted once per (sortBy, direction). A request re-checks what the numbers depend on, exactly:
 *   - the wallet's rows and the market facts: the projection's change feed (versions), else rebuilt;
 *   - live prices: the identity of each open row's published book snapshot and last trade (the engine
 *     replaces those objects when they change); a changed row is recomputed and the sorts that read
 *     prices are dropped. A price sort re-checks every open row, but only if a book was published or a
 *     fill committed since its last check (`pricesChanged`); other orders re-check the page's rows;
 *   - catalog metadata: rebuilt on a catalog market-change notice, and every VIEW_TTL_MS (event-level
 *     edits such as an event slug are not announced; metadata entries expire after META_TTL_MS, jittered
 *     so a large wallet never reloads them all at once). Wallet profiles (trade rows) likewise, after
 *     PROFILE_TTL_MS.
 * So a page costs one pass over the wallet's open rows plus the page itself; sorting happens only when
 * something changed.
 *
 * Trades. A row is one party's side of a fill. The trade views (per wallet, per market, global) answer
 * seq <= C (C = the trades projection's committed cursor, read in the same snapshot as the views) and
 * the fills above C are read from the writer's own indexes (ix.fillsByWallet / ix.fillsByMarket; for the
 * global feed the fills table), which commit with the fill itself, so a trade is listed as soon as its
 * order was acknowledged. Fill rows are read by column (FILL_FIELDS), not rebuilt into objects: a page
 * of 10,000 rows would otherwise spend most of its time building throwaway objects. Rendered rows are
 * kept (bounded LRU) while the metadata and profile entries they were written from are current.
 */
import { FILL_FIELDS, type FillRow } from '../domain/events.ts';
import { formatAsset } from '../domain/ids.ts';
import { parsePips } from '../domain/units.ts';
import type { Store } from '../journal/env.ts';
import { MAKER_ROLE, TAKER_ROLE, ix, metaKeys, walletViewKeys, type Key } from '../journal/keys.ts';
import type { ViewStore } from '../projections/projector.ts';
import {
  MICRO,
  PIP_TO_MICRO,
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
import { getProfile, type CatalogReader, type ProfileOut } from './catalog.ts';

/** Lifetime of a catalog metadata entry (jittered between half and all of it). */
export const META_TTL_MS = 30_000;
/** A wallet view older than this is rebuilt, picking up refreshed metadata. */
export const VIEW_TTL_MS = 15_000;
/** Spread above which the last trade replaces the midpoint (DESIGN section 7): 0.10 in pips. */
const WIDE_SPREAD_PIPS = 1_000;
/** Position rows kept in wallet views, over all cached wallets. */
const VIEW_ROWS_LIMIT = 500_000;
const BOOK_CACHE_LIMIT = 200_000;
/** Wallet profiles (trade rows) are re-read at least this often. */
export const PROFILE_TTL_MS = 5_000;
const PROFILE_CACHE_LIMIT = 100_000;
/** Rendered trade rows kept (about 0.5 KB each). */
const RENDERED_TRADES_LIMIT = 100_000;
const META_CACHE_LIMIT = 200_000;
/** Outcome labels of a market the catalog does not know (the catalog's own default). */
const DEFAULT_OUTCOMES: [string, string] = ['Yes', 'No'];
/** Sorts whose order follows live prices. */
const PRICE_SORTS = new Set(['CURRENT', 'CASHPNL', 'PERCENTPNL', 'PRICE']);

/** Column of each fill field in a fills-table row. */
const COL = Object.fromEntries(FILL_FIELDS.map((name, i) => [name, i])) as Record<(typeof FILL_FIELDS)[number], number>;

// ---- wire shapes (edge/schemas/wallets.ts holds the matching TypeBox schemas; the e2e test checks them) ----

export const POSITION_SORTS = ['CURRENT', 'INITIAL', 'TOKENS', 'CASHPNL', 'PERCENTPNL', 'TITLE', 'RESOLVING', 'PRICE', 'AVGPRICE'] as const;
export type PositionSort = (typeof POSITION_SORTS)[number];
export const CLOSED_SORTS = ['REALIZEDPNL', 'TITLE', 'PRICE', 'AVGPRICE', 'TIMESTAMP'] as const;
export type ClosedSort = (typeof CLOSED_SORTS)[number];

export interface Trade {
  proxyWallet: string;
  side: 'BUY' | 'SELL';
  asset: string;
  conditionId: string;
  size: number;
  price: number;
  timestamp: number;
  title: string;
  slug: string;
  icon: string;
  eventSlug: string;
  outcome: string;
  outcomeIndex: number;
  name: string;
  pseudonym: string;
  bio: string;
  profileImage: string;
  profileImageOptimized: string;
  transactionHash: string;
  usdcSize: number;
}

export interface ClosedPosition {
  proxyWallet: string;
  asset: string;
  conditionId: string;
  size: number;
  avgPrice: number;
  initialValue: number;
  currentValue: number;
  cashPnl: number;
  percentPnl: number;
  totalBought: number;
  realizedPnl: number;
  percentRealizedPnl: number;
  curPrice: number;
  redeemable: boolean;
  mergeable: boolean;
  title: string;
  slug: string;
  icon: string;
  eventSlug: string;
  outcome: string;
  outcomeIndex: number;
  oppositeOutcome: string;
  oppositeAsset: string;
  endDate: string;
  timestamp: number;
}

export interface Position extends ClosedPosition {
  negativeRisk: boolean;
}

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
   * True when the caller calls `pricesChanged()` on every book publication and every committed fill;
   * then a price-sorted page skips re-checking every row while nothing was published.
   */
  priceEvents?: boolean;
}

// ---- exact integer helpers --------------------------------------------------------------------------

/** round(a * b / 10^6), half up, exactly, for non-negative safe integers (a * b may pass 2^53). */
export function mulMicro(a: number, b: number): number {
  const hi = Math.floor(a / MICRO);
  const lo = a - hi * MICRO;
  // lo * b < 10^12 is exact, and a quotient that is x.5 exactly is representable, so Math.round is exact.
  return hi * b + Math.round((lo * b) / MICRO);
}

/** trunc(num / den * 100) to 4 decimals, as an integer of 10^-4 percent (den > 0). */
export function percent4(num: number, den: number): number {
  const n = num * MICRO;
  // Below 2^53 the correctly rounded quotient of two exact integers cannot cross an integer.
  if (Number.isSafeInteger(n)) return Math.trunc(n / den);
  return Number((BigInt(num) * BigInt(MICRO)) / BigInt(den));
}

const toNum = (micro: number) => micro / MICRO;
const pctNum = (p4: number) => p4 / 10_000;

/** JSON text of every price in pips from 0 to 1 (number to text is the costliest part of a trade row). */
const PRICE_TEXT = Array.from({ length: 10_001 }, (_, pips) => String(pips / 10_000));
const priceText = (pips: number) => PRICE_TEXT[pips] ?? String(pips / 10_000);

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
  outcomes: [string, string];
  /** Imported seed prices in micro-USDC, -1 when none. */
  seed: [number, number];
  negRisk: boolean;
  expiresAt: number;
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
    readonly meta: MarketMeta,
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
  catalogEpoch: number;
  builtAt: number;
  /** Price epoch of the last time every open row was re-checked. */
  priceEpoch: number;
  /** Rows in (conditionId, outcome) order: the tie-break order every stable sort keeps. */
  open: LiveRow[];
  closed: LiveRow[];
  sorted: Map<string, LiveRow[]>;
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
  private catalogEpoch = 0;
  private readonly books = new Map<string, { version: number; bid: number; ask: number }>();
  private readonly profiles = new Map<string, ProfileEntry>();
  /** Rendered trade rows by seq x 2 + role, least recently used first. */
  private readonly rendered = new Map<number, RenderedTrade>();
  private readonly store: Store;
  private readonly views: ViewStore;
  private readonly catalog: CatalogReader;
  private readonly prices: LivePrices | undefined;
  private readonly now: () => number;
  private readonly priceEvents: boolean;
  /** Bumped by every book publication and committed fill (when the caller reports them). */
  private priceEpoch = 0;

  constructor(deps: WalletDataDeps) {
    this.store = deps.store;
    this.views = deps.views;
    this.catalog = deps.catalog;
    this.prices = deps.prices;
    this.now = deps.now ?? (() => performance.now());
    this.priceEvents = deps.priceEvents ?? false;
    this.changes = walletViewChanges(deps.views);
  }

  /** A book was published or a fill committed: live prices may have moved. */
  pricesChanged(): void {
    this.priceEpoch++;
  }

  /** The catalog changed these markets: their metadata is re-read and wallet views rebuilt. */
  catalogChanged(conditionIds: readonly string[]): void {
    for (const c of conditionIds) this.meta.delete(c.toLowerCase());
    this.catalogEpoch++;
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

  private marketMeta(conditionId: string): MarketMeta {
    const now = this.now();
    const cached = this.meta.get(conditionId);
    if (cached !== undefined && now < cached.expiresAt) return cached;
    const m: MarketRec | undefined = this.catalog.marketByCondition(conditionId);
    const e = m ? this.catalog.event(m.eventId) : undefined;
    const endDate = m?.endDate || e?.endDate || '';
    const seedOf = (i: 0 | 1): number => {
      const text = m?.outcomePrices[i];
      const pips = text === undefined ? undefined : parsePips(text);
      return pips === undefined ? -1 : pips * PIP_TO_MICRO;
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
    if (this.meta.size >= META_CACHE_LIMIT) this.meta.clear();
    this.meta.set(conditionId, meta);
    return meta;
  }

  /** Best bid and ask (pips, -1 when empty) of a published book; parsed once per version. */
  private bestOf(tokenId: string, snap: { version: number; json: string } | undefined): { bid: number; ask: number } {
    if (snap === undefined) return { bid: -1, ask: -1 };
    const cached = this.books.get(tokenId);
    if (cached !== undefined && cached.version === snap.version) return cached;
    const book = JSON.parse(snap.json) as { bids: { price: string }[]; asks: { price: string }[] };
    // Bids ascend and asks descend: the best price of each side is its last level.
    const top = (levels: { price: string }[]) => (levels.length === 0 ? -1 : (parsePips(levels[levels.length - 1].price) ?? -1));
    const entry = { version: snap.version, bid: top(book.bids), ask: top(book.asks) };
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
    if (facts !== undefined && facts.winner >= 0) return facts.winner === outcome ? MICRO : 0;
    if (facts !== undefined) {
      const { bid, ask } = this.bestOf(facts.tokenIds[outcome], snap);
      const twoSided = bid >= 0 && ask >= 0;
      if (twoSided && ask - bid <= WIDE_SPREAD_PIPS) return (bid + ask) * (PIP_TO_MICRO / 2);
      if (last !== undefined && last.pricePips > 0) return last.pricePips * PIP_TO_MICRO;
      if (twoSided) return (bid + ask) * (PIP_TO_MICRO / 2);
    }
    const seed = meta.seed[outcome];
    return seed >= 0 ? seed : 0;
  }

  // ---- positions ----

  /** Computes a row's numbers from its state and `cur` (mutates). */
  private compute(r: LiveRow): void {
    r.json = undefined;
    r.iv = mulMicro(r.size, r.avg);
    r.cv = mulMicro(r.size, r.cur);
    r.cash = r.cv - r.iv;
    const basis = mulMicro(r.bought, r.avg);
    r.pct = r.iv === 0 ? 0 : percent4(r.cash, r.iv);
    r.pctReal = basis === 0 ? 0 : percent4(r.cv - basis, basis);
  }

  /** The wallet's view, rebuilt when its rows, the market facts or the catalog changed, or it aged out. */
  private walletView(wallet: string): WalletView {
    const version = this.changes.walletVersion(wallet);
    const now = this.now();
    const hit = this.walletViews.get(wallet);
    if (
      hit !== undefined &&
      hit.version === version &&
      hit.factsVersion === this.changes.markets &&
      hit.catalogEpoch === this.catalogEpoch &&
      now - hit.builtAt < VIEW_TTL_MS
    ) {
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
      catalogEpoch: this.catalogEpoch,
      builtAt: now,
      priceEpoch: this.priceEpoch,
      open: [],
      closed: [],
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
        this.marketMeta(h.conditionId),
        facts,
        open && !resolved ? facts?.tokenIds[h.outcome] : undefined,
        open && resolved,
        // The engine refuses a merge once the market is resolved (redeem pays the pair instead).
        open && !resolved && (openSizes.get(h.conditionId)?.[1 - h.outcome] ?? 0) > 0,
      );
      if (open) {
        const token = r.token;
        this.price(r, token === undefined ? undefined : this.prices?.bookSnapshot(token), token === undefined ? undefined : this.prices?.lastTradePrice(token));
        view.open.push(r);
      } else {
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
    for (const [w, v] of this.walletViews) {
      if (this.viewRows <= VIEW_ROWS_LIMIT || w === wallet) break;
      this.walletViews.delete(w);
      this.viewRows -= v.open.length + v.closed.length;
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
    const b = r.token === undefined ? undefined : this.bestOf(r.token, snap);
    r.tight = b !== undefined && b.bid >= 0 && b.ask >= 0 && b.ask - b.bid <= WIDE_SPREAD_PIPS;
    const cur = this.priceOf(r.facts, r.meta, r.outcome, snap, last);
    if (cur === r.cur) return false;
    r.cur = cur;
    this.compute(r);
    return true;
  }

  /** The sorts that read prices are stale once any row's price moved. */
  private pricesMoved(view: WalletView): void {
    for (const key of view.sorted.keys()) if (PRICE_SORTS.has(key.slice(2, -2))) view.sorted.delete(key);
  }

  private sortedRows(view: WalletView, closed: boolean, sortBy: PositionSort | ClosedSort, descending: boolean): LiveRow[] {
    const key = `${closed ? 'c' : 'o'}:${sortBy}:${descending ? 'D' : 'A'}`;
    let rows = view.sorted.get(key);
    if (rows === undefined) {
      rows = [...(closed ? view.closed : view.open)].sort(comparator(sortBy, descending));
      view.sorted.set(key, rows);
    }
    return rows;
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
    r.json =
      `{"proxyWallet":"${wallet}","asset":${j.assets[outcome]},"conditionId":${j.conditionId},"size":${toNum(r.size)},` +
      `"avgPrice":${toNum(r.avg)},"initialValue":${toNum(r.iv)},"currentValue":${toNum(r.cv)},"cashPnl":${toNum(r.cash)},` +
      `"percentPnl":${pctNum(r.pct)},"totalBought":${toNum(r.bought)},"realizedPnl":${toNum(r.realized)},` +
      `"percentRealizedPnl":${pctNum(r.pctReal)},"curPrice":${toNum(r.cur)},"redeemable":${r.redeemable},"mergeable":${r.mergeable},` +
      `"title":${j.title},"slug":${j.slug},"icon":${j.icon},"eventSlug":${j.eventSlug},"outcome":${j.outcomes[outcome]},` +
      `"outcomeIndex":${outcome},"oppositeOutcome":${j.outcomes[1 - outcome]},"oppositeAsset":${j.assets[1 - outcome]},` +
      `"endDate":${j.endDate},"timestamp":${r.timestamp}${tail}`;
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
    if (priceSort && (!this.priceEvents || view.priceEpoch !== this.priceEpoch)) {
      view.priceEpoch = this.priceEpoch;
      let moved = false;
      for (const r of view.open) if (this.refreshRow(r)) moved = true;
      if (moved) this.pricesMoved(view);
    }
    const markets = p.markets ? new Set(p.markets) : undefined;
    const title = p.title?.toLowerCase();
    const page: LiveRow[] = [];
    let skipped = 0;
    for (const r of this.sortedRows(view, false, p.sortBy, p.descending)) {
      // The threshold compares the number the client is shown.
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
    if (!priceSort) {
      let moved = false;
      for (const r of page) if (this.refreshRow(r)) moved = true;
      if (moved) this.pricesMoved(view);
    }
    return `[${page.map((r) => this.positionJson(p.user, r, true)).join(',')}]`;
  }

  closedPositions(p: ClosedParams): ClosedPosition[] {
    return JSON.parse(this.closedPositionsJson(p)) as ClosedPosition[];
  }

  /** GET /closed-positions as JSON text. */
  closedPositionsJson(p: ClosedParams): string {
    if (p.limit === 0) return '[]';
    const view = this.walletView(p.user);
    const markets = p.markets ? new Set(p.markets) : undefined;
    const title = p.title?.toLowerCase();
    const out: string[] = [];
    let skipped = 0;
    for (const r of this.sortedRows(view, true, p.sortBy, p.descending)) {
      if (markets !== undefined && !markets.has(r.conditionId)) continue;
      if (title !== undefined && !r.meta.titleLower.includes(title)) continue;
      if (skipped < p.offset) {
        skipped++;
        continue;
      }
      out.push(this.positionJson(p.user, r, false));
      if (out.length >= p.limit) break;
    }
    return `[${out.join(',')}]`;
  }

  // ---- trades ----

  /** Last journal seq whose trade rows the committed views hold. */
  private committedTradeCursor(): number {
    const c = this.store.meta.get(metaKeys.projectionCursor(TRADES_PROJECTION));
    return typeof c === 'number' ? c : 0;
  }

  private fillRow(seq: number): FillRow | undefined {
    return this.store.fills.get(seq) as FillRow | undefined;
  }

  /** The candidate rows of one fill row for `wallet` (any wallet when undefined). */
  private rowsOf(row: FillRow, takerOnly: boolean, wallet: string | undefined, out: TradeCand[]): void {
    for (let role = TAKER_ROLE; role <= (takerOnly ? TAKER_ROLE : MAKER_ROLE); role++) {
      const taker = role === TAKER_ROLE;
      if (wallet !== undefined && String(row[taker ? COL.takerWallet : COL.makerWallet]).toLowerCase() !== wallet) continue;
      out.push({
        seq: row[COL.seq] as number,
        role,
        side: sideCode(row[taker ? COL.takerSide : COL.makerSide]),
        size: row[COL.size] as number,
        usdc: row[taker ? COL.takerUsdc : COL.makerUsdc] as number,
        conditionId: row[COL.conditionId] as string,
      });
    }
  }

  /** Rows of the fills above the committed cursor, from the writer's indexes, newest first. */
  private freshRows(p: TradesParams, after: number): TradeCand[] {
    const out: TradeCand[] = [];
    const fromIndex = (range: { start: Key; end: Key }, lowest: Key, wallet: string | undefined) => {
      for (const key of this.store.indexes.getKeys({ start: range.end, end: lowest, reverse: true })) {
        const row = this.fillRow((key as Key)[2] as number);
        if (row !== undefined) this.rowsOf(row, p.takerOnly, wallet, out);
      }
    };
    if (p.user !== undefined) fromIndex(ix.fillsByWalletRange(p.user), ix.fillsByWallet(p.user, after), p.user);
    else if (p.markets !== undefined) for (const cid of p.markets) fromIndex(ix.fillsByMarketRange(cid), ix.fillsByMarket(cid, after), undefined);
    else {
      const last = this.store.meta.get(metaKeys.journalSeq);
      const top = typeof last === 'number' ? last : 0;
      if (top > after) for (const { value } of this.store.fills.getRange({ start: top, end: after, reverse: true })) this.rowsOf(value as FillRow, p.takerOnly, undefined, out);
    }
    return out.sort(compareCand);
  }

  /** Candidate rows, newest first (seq descending, taker before maker). */
  private *candidates(p: TradesParams): Generator<TradeCand> {
    const cursor = this.committedTradeCursor();
    yield* this.freshRows(p, cursor);
    const roles = p.takerOnly ? [TAKER_ROLE] : [TAKER_ROLE, MAKER_ROLE];
    const prefixes: Key[] = [];
    if (p.user !== undefined) for (const r of roles) prefixes.push(walletViewKeys.tradesByWalletPrefix(p.user, r));
    else if (p.markets !== undefined) for (const cid of p.markets) for (const r of roles) prefixes.push(walletViewKeys.tradesByMarketPrefix(cid, r));
    else for (const r of roles) prefixes.push(walletViewKeys.tradesAllPrefix(r));
    // Each range runs from seq C down; the ranges merge by seq (k-way, k <= 2 x markets).
    const its = prefixes.map((prefix) => {
      const role = prefix[prefix.length - 1] as number;
      const it = this.store.views.getRange({ start: [...prefix, cursor], end: prefix, reverse: true })[Symbol.iterator]();
      return { role, it };
    });
    try {
      const heads: (TradeCand | undefined)[] = its.map(({ role, it }) => next(it, role));
      for (;;) {
        let best = -1;
        for (let i = 0; i < heads.length; i++) {
          const h = heads[i];
          if (h !== undefined && (best < 0 || compareCand(h, heads[best]!) < 0)) best = i;
        }
        if (best < 0) return;
        yield heads[best]!;
        heads[best] = next(its[best].it, its[best].role);
      }
    } finally {
      for (const { it } of its) it.return?.();
    }
  }

  trades(p: TradesParams): Trade[] {
    return JSON.parse(this.tradesJson(p)) as Trade[];
  }

  /** GET /trades as JSON text. */
  tradesJson(p: TradesParams): string {
    if (p.limit === 0) return '[]';
    const markets = p.user !== undefined && p.markets !== undefined ? new Set(p.markets) : undefined;
    const side = p.side === undefined ? -1 : sideCode(p.side);
    const min = p.filter?.amount ?? 0;
    const cash = p.filter?.type === 'CASH';
    const picked: TradeCand[] = [];
    let skipped = 0;
    for (const c of this.candidates(p)) {
      if (markets !== undefined && !markets.has(c.conditionId!)) continue;
      if (side >= 0 && c.side !== side) continue;
      // The filter compares the number the row shows (usdcSize or size).
      if (p.filter !== undefined && toNum(cash ? c.usdc : c.size) < min) continue;
      if (skipped < p.offset) {
        skipped++;
        continue;
      }
      picked.push(c);
      if (picked.length >= p.limit) break;
    }
    const now = this.now();
    const out: string[] = [];
    for (const c of picked) {
      const json = this.tradeRow(c.seq, c.role, now);
      if (json !== undefined) out.push(json);
    }
    return `[${out.join(',')}]`;
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
    if (hit !== undefined && this.marketMeta(hit.conditionId) === hit.meta && this.profileEntry(hit.wallet, now) === hit.profile) {
      this.rendered.delete(id);
      this.rendered.set(id, hit);
      return hit.json;
    }
    const row = this.fillRow(seq);
    if (row === undefined) return undefined;
    const r = this.tradeJson(row, role, now);
    if (hit !== undefined) this.rendered.delete(id);
    else if (this.rendered.size >= RENDERED_TRADES_LIMIT) this.rendered.delete(this.rendered.keys().next().value!);
    this.rendered.set(id, r);
    return r.json;
  }

  /**
   * The profile fields of a wallet as a JSON fragment. Cached for PROFILE_TTL_MS: a global page names up
   * to `limit` wallets, and profiles change only through the admin API (unannounced).
   */
  private profileEntry(wallet: string, now: number): ProfileEntry {
    const hit = this.profiles.get(wallet);
    if (hit !== undefined && now < hit.expiresAt) return hit;
    const p: ProfileOut = getProfile(this.store, wallet);
    const q = JSON.stringify;
    const json = `"name":${q(p.name)},"pseudonym":${q(p.pseudonym)},"bio":${q(p.bio)},"profileImage":${q(p.profileImage)},"profileImageOptimized":${q(p.profileImageOptimized)}`;
    if (this.profiles.size >= PROFILE_CACHE_LIMIT) this.profiles.clear();
    const entry = { json, expiresAt: now + PROFILE_TTL_MS };
    this.profiles.set(wallet, entry);
    return entry;
  }

  /** One trade row as JSON text, fields in the order of the Trade type, with what it was written from. */
  private tradeJson(row: FillRow, role: number, now: number): RenderedTrade {
    const taker = role === TAKER_ROLE;
    const wallet = String(row[taker ? COL.takerWallet : COL.makerWallet]).toLowerCase();
    const outcome = row[taker ? COL.takerOutcome : COL.makerOutcome] as 0 | 1;
    const conditionId = row[COL.conditionId] as string;
    const meta = this.marketMeta(conditionId);
    const profile = this.profileEntry(wallet, now);
    const j = meta.json;
    const side = sideCode(row[taker ? COL.takerSide : COL.makerSide]) === SIDE_BUY ? '"BUY"' : '"SELL"';
    const price = priceText(row[taker ? COL.takerPricePips : COL.makerPricePips] as number);
    const ts = Math.floor((row[COL.ts] as number) / 1000);
    const q = JSON.stringify;
    const json =
      `{"proxyWallet":${q(wallet)},"side":${side},"asset":${j.assets[outcome]},"conditionId":${j.conditionId},` +
      `"size":${toNum(row[COL.size] as number)},"price":${price},"timestamp":${ts},"title":${j.title},"slug":${j.slug},"icon":${j.icon},` +
      `"eventSlug":${j.eventSlug},"outcome":${j.outcomes[outcome]},"outcomeIndex":${outcome},${profile.json},` +
      `"transactionHash":${q(row[COL.txHash])},"usdcSize":${toNum(row[taker ? COL.takerUsdc : COL.makerUsdc] as number)}}`;
    return { conditionId, wallet, meta, profile, json };
  }
}

function next(it: Iterator<{ key: unknown; value: unknown }>, role: number): TradeCand | undefined {
  const n = it.next();
  if (n.done) return undefined;
  const key = n.value.key as Key;
  const v = n.value.value as TradeEntry;
  return { seq: key[key.length - 1] as number, role, side: v[0], size: v[1], usdc: v[2], conditionId: v[3] };
}

// ---- sorting ----------------------------------------------------------------------------------------
// Rows enter every sort in (conditionId, outcome) order and Array.prototype.sort is stable, so rows
// whose keys tie keep that ascending order whatever the direction: the documented tie-break.

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
      return byNumber((r) => r.closedAt, descending);
  }
}
