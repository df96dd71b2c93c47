/**
 * The catalog's read side: synchronous LMDB reads through the indexes of projections/catalog-index.ts.
 * No request scans the catalog: every list walks the range of its most selective index and stops as
 * soon as its page is full.
 *
 *   GET /events          the (scope, status, column) ranges of the smallest matching scope, merged
 *                        across status codes (k <= 8), partitioned by leading boolean order fields;
 *                        filters the chosen scope does not imply are checked on the record.
 *   GET /public-search   the postings of each query word (prefix range); the rarest word drives and
 *                        the others are intersected by walking their postings or, when those are much
 *                        larger, by checking each candidate's stored search document.
 *   GET /markets         the id-ordered market list of a scope, read at the cursor's offset.
 *
 * Shapes returned here are the wire forms of edge/schemas/catalog.ts, typed by its schemas
 * (test/queries/catalog.test.ts checks every one against its schema); field decisions are in
 * docs/decisions.md ("Catalog").
 */
import { UNITS } from '../domain/units.ts';
import type { Profile } from '../edge/schemas/admin.ts';
import type {
  EventListItem,
  EventSlugForm,
  EventSummary,
  MarketBook,
  MarketCatalog,
  MarketWithEvents,
  SamplingMarket,
  SimplifiedMarket,
  SearchResult,
  Series,
  Tag,
} from '../edge/schemas/catalog.ts';
import type { Store } from '../journal/env.ts';
import { catalogIx, catalogKey, catalogMetaKeys, catalogRange, profileKey, type CatalogKind, type Key } from '../journal/keys.ts';
import {
  EVENT_COLUMNS,
  STATUS_BITS,
  TAG_COLUMNS,
  compareFull,
  compareIndexValues,
  queryWords,
  scopeAll,
  scopeCreator,
  scopeSeries,
  scopeTag,
  statusCode,
  statusCodesFor,
  type Column,
  type EventRec,
  type MarketRec,
  type OrderTerm,
  type SearchDoc,
  type SeriesRec,
  type StatusFlag,
  type TagRec,
  type TradingMarket,
} from '../projections/catalog-index.ts';
import { firstIndexedId, toTradingMarket } from '../projections/catalog.ts';

/**
 * Current price of a token by the rule of queries/current-price.ts (midpoint, last trade past a 0.10
 * spread, wide midpoint); undefined when the engine knows none.
 */
export type PriceSource = (tokenId: string) => number | undefined;

/** An event's fields shared by every form of it. */
type EventCore = Omit<EventSummary, 'creationDate'>;

// ---- query parameters -----------------------------------------------------------------------------

export interface EventListParams {
  limit: number;
  offset: number;
  status: Partial<Record<StatusFlag, boolean>>;
  /** Tag slugs (from `tag` and `tag_slug`) and numeric tag ids; an event must carry all of them. */
  tagSlugs: string[];
  tagIds: string[];
  seriesSlug?: string;
  slug?: string;
  /** Parsed `order`; empty = by id. */
  order: OrderTerm<EventRec>[];
  ascending?: boolean;
  creator?: string;
}

export interface TagListParams {
  limit: number;
  offset: number;
  order: OrderTerm<TagRec>[];
  ascending?: boolean;
}

export interface SearchParams {
  q: string;
  limitPerType: number;
  page: number;
  searchTags: boolean;
  creator?: string;
}

export interface Page<T> {
  data: T[];
  /** True when rows follow this page. */
  more: boolean;
}

/** Rows per page of GET /markets and GET /sampling-markets. */
export const MARKETS_PAGE_SIZE = 500;

/** Creator parameters compare like stored creators: addresses lowercase, anything else as given. */
export function normalizeCreatorParam(c: string | undefined): string | undefined {
  if (c === undefined || c === '') return undefined;
  return /^0x[0-9a-fA-F]{40}$/.test(c) ? c.toLowerCase() : c;
}

// ---- ordered walks --------------------------------------------------------------------------------

/** An index row: sort value, id, and the range's status code (events; 0 for tags). */
type Entry = [value: string | number, id: number, status: number];

function entryOf(key: Key, status: number): Entry {
  return [key[key.length - 2], key[key.length - 1] as number, status];
}

interface SortRange {
  start: Key;
  end: Key;
  status: number;
}

/**
 * Merges ordered index ranges (each sorted by value then id) into one stream in the given direction.
 * Closes every cursor when the consumer stops early (for-of calls return()).
 */
function* mergeRanges(store: Store, ranges: SortRange[], descending: boolean): Generator<Entry> {
  const its = ranges.map((r) =>
    store.indexes.getKeys(descending ? { start: r.end, end: r.start, reverse: true } : { start: r.start, end: r.end })[Symbol.iterator](),
  );
  try {
    const heads: (Entry | undefined)[] = its.map((it, i) => {
      const n = it.next();
      return n.done ? undefined : entryOf(n.value as Key, ranges[i].status);
    });
    const sign = descending ? -1 : 1;
    for (;;) {
      let best = -1;
      for (let i = 0; i < heads.length; i++) {
        const h = heads[i];
        if (!h) continue;
        if (best < 0) {
          best = i;
          continue;
        }
        const b = heads[best]!;
        const c = compareIndexValues(h[0], b[0]) || h[1] - b[1];
        if (c * sign < 0) best = i;
      }
      if (best < 0) return;
      yield heads[best]!;
      const n = its[best].next();
      heads[best] = n.done ? undefined : entryOf(n.value as Key, ranges[best].status);
    }
  } finally {
    for (const it of its) it.return?.();
  }
}

/**
 * Reads rows [offset, offset + limit) of an ordered stream made of partitions (already in order).
 * `accept` drops rows the index could not filter; `sortGroup`, when given, orders each run of rows
 * whose index value ties (text prefixes, or later order columns) with the full comparator. A tie run
 * that lies wholly before the offset is skipped without loading a record.
 */
function readPage(
  partitions: Iterable<Iterable<Entry>>,
  offset: number,
  limit: number,
  accept: ((id: number, status: number) => boolean) | undefined,
  sortGroup: ((ids: number[]) => number[]) | undefined,
): number[] {
  const out: number[] = [];
  const end = offset + limit;
  let pos = 0;
  for (const part of partitions) {
    let group: number[] = [];
    let groupValue: string | number | undefined;
    const flush = () => {
      if (group.length === 0) return;
      if (pos + group.length > offset) {
        const sorted = sortGroup!(group);
        for (let i = 0; i < sorted.length; i++) if (pos + i >= offset && pos + i < end) out.push(sorted[i]);
      }
      pos += group.length;
      group = [];
    };
    for (const [value, id, status] of part) {
      if (accept && !accept(id, status)) continue;
      if (sortGroup) {
        if (group.length > 0 && value !== groupValue) {
          flush();
          if (pos >= end) return out;
        }
        groupValue = value;
        group.push(id);
      } else {
        if (pos >= offset) out.push(id);
        pos++;
        if (pos >= end) return out;
      }
    }
    flush();
    if (pos >= end) return out;
  }
  return out;
}

/** Full-record comparator of an order list (ties end on id), in one direction. */
function comparator<R extends { id: string }>(terms: OrderTerm<R>[], descending: boolean, load: (id: number) => R): (a: number, b: number) => number {
  const sign = descending ? -1 : 1;
  return (a, b) => {
    const ra = load(a);
    const rb = load(b);
    for (const t of terms) {
      let c = 0;
      if (t.flag) c = Number((ra as unknown as Record<string, boolean>)[t.flag]) - Number((rb as unknown as Record<string, boolean>)[t.flag]);
      else if (t.column) c = compareFull(t.column.kind, t.column.get(ra), t.column.get(rb));
      if (c !== 0) return c * sign;
    }
    return (a - b) * sign;
  };
}

// ---- the reader -----------------------------------------------------------------------------------

/** Cached list items beyond this many are dropped all at once (a bound, not an LRU). */
const LIST_CACHE_MAX = 50_000;
/** Cached search rankings: at most this many queries, each ranked at least this deep. */
const SEARCH_CACHE_MAX = 512;
const SEARCH_CACHE_DEPTH = 100;

export class CatalogReader {
  /**
   * Serialized list-form events and tag forms, valid for one catalog generation: every catalog write
   * transaction bumps it (projections/catalog.ts), in this process or in an import running beside it,
   * and the first read that sees a new generation drops the caches.
   */
  private generation = -1;
  private readonly listJson = new Map<number, string>();
  private readonly tagForms = new Map<string, Tag | null>();
  /** Ranked search results by creator and query words (see rankedEvents). */
  private readonly searchCache = new Map<string, { ids: number[]; total: number }>();

  constructor(private readonly store: Store, private readonly price: PriceSource = () => undefined) {}

  private fresh(): void {
    const g = (this.store.catalog.get(catalogMetaKeys.generation) as number | undefined) ?? 0;
    if (g !== this.generation) {
      this.generation = g;
      this.listJson.clear();
      this.tagForms.clear();
      this.searchCache.clear();
    }
  }

  private rec<R>(kind: CatalogKind, id: string): R | undefined {
    return this.store.catalog.get(catalogKey(kind, id)) as R | undefined;
  }

  event(id: string): EventRec | undefined {
    return this.rec<EventRec>('event', id);
  }

  market(id: string): MarketRec | undefined {
    return this.rec<MarketRec>('market', id);
  }

  marketByCondition(conditionId: string): MarketRec | undefined {
    const id = firstIndexedId(this.store, catalogIx.marketConditionRange(conditionId.toLowerCase()));
    return id === undefined ? undefined : this.market(id);
  }

  marketByToken(tokenId: string): MarketRec | undefined {
    const id = firstIndexedId(this.store, catalogIx.marketTokenRange(tokenId));
    return id === undefined ? undefined : this.market(id);
  }

  /** True when no event was ever stored (the demo catalog loads only then). */
  isEmpty(): boolean {
    for (const _ of this.store.catalog.getKeys({ ...catalogRange('event'), limit: 1 })) return false;
    return true;
  }

  /** Every market in the engine's shape (start-up registration; scans, so never on a request). */
  tradingMarkets(): TradingMarket[] {
    const out: TradingMarket[] = [];
    for (const { value } of this.store.catalog.getRange(catalogRange('market'))) out.push(toTradingMarket(value as MarketRec));
    return out;
  }

  private count(scope: string, status: number): number {
    return (this.store.catalog.get(catalogMetaKeys.count(scope, status)) as number | undefined) ?? 0;
  }

  // ---- forms ----

  tagOut(t: TagRec): Tag {
    return { id: t.id, label: t.label, slug: t.slug, requiresTranslation: t.requiresTranslation, createdAt: t.createdAt, updatedAt: t.updatedAt };
  }

  private tagsOf(e: EventRec): Tag[] {
    const out: Tag[] = [];
    for (const id of e.tagIds) {
      let t = this.tagForms.get(id);
      if (t === undefined) {
        const rec = this.rec<TagRec>('tag', id);
        t = rec ? this.tagOut(rec) : null;
        this.tagForms.set(id, t);
      }
      if (t) out.push(t);
    }
    return out;
  }

  private eventCore(e: EventRec): EventCore {
    return {
      id: e.id,
      ticker: e.ticker,
      slug: e.slug,
      title: e.title,
      description: e.description,
      resolutionSource: e.resolutionSource,
      startDate: e.startDate,
      endDate: e.endDate,
      image: e.image,
      icon: e.icon,
      active: e.active,
      closed: e.closed,
      archived: e.archived,
      negRisk: e.negRisk,
      creator: e.creator,
      createdAt: e.createdAt,
      updatedAt: e.updatedAt,
    };
  }

  eventSummary(e: EventRec): EventSummary {
    return { ...this.eventCore(e), creationDate: e.creationDate };
  }

  eventListItem(e: EventRec): EventListItem {
    return { ...this.eventCore(e), tags: this.tagsOf(e) };
  }

  eventSlugForm(e: EventRec): EventSlugForm {
    const series: Series[] = [];
    for (const id of e.seriesIds) {
      const s = this.rec<SeriesRec>('series', id);
      if (s) series.push(s);
    }
    const markets: MarketCatalog[] = [];
    for (const id of e.marketIds) {
      const m = this.market(id);
      if (m) markets.push(this.marketCatalog(m));
    }
    return { ...this.eventSummary(e), tags: this.tagsOf(e), series, markets, eventMetadata: e.eventMetadata };
  }

  /** Price of outcome `i`: 1/0 once resolved, else the engine's price, else the imported seed, else 0. */
  tokenPrice(m: MarketRec, i: 0 | 1): number {
    if (m.winner >= 0) return m.winner === i ? 1 : 0;
    const live = this.price(m.clobTokenIds[i]);
    if (live !== undefined) return live;
    const seed = m.outcomePrices[i];
    return seed === undefined ? 0 : Number(seed);
  }

  marketCatalog(m: MarketRec): MarketCatalog {
    return {
      id: m.id,
      question: m.question,
      conditionId: m.conditionId,
      questionID: m.questionID,
      slug: m.slug,
      resolutionSource: m.resolutionSource,
      image: m.image,
      icon: m.icon,
      description: m.description,
      outcomes: JSON.stringify(m.outcomes),
      outcomePrices: JSON.stringify([String(this.tokenPrice(m, 0)), String(this.tokenPrice(m, 1))]),
      clobTokenIds: JSON.stringify(m.clobTokenIds),
      startDate: m.startDate,
      endDate: m.endDate,
      createdAt: m.createdAt,
      updatedAt: m.updatedAt,
      active: m.active,
      closed: m.closed,
      archived: m.archived,
      enableOrderBook: m.enableOrderBook,
      acceptingOrders: m.acceptingOrders,
      acceptingOrdersTimestamp: m.acceptingOrdersTimestamp,
      orderPriceMinTickSize: Number(m.orderPriceMinTickSize),
      orderMinSize: m.orderMinSize / UNITS,
      negRisk: m.negRisk,
      negRiskMarketID: m.negRiskMarketID,
      negRiskRequestID: m.negRiskRequestID,
      makerBaseFee: m.makerBaseFee,
      takerBaseFee: m.takerBaseFee,
      rewardsMinSize: m.rewardsMinSize,
      rewardsMaxSpread: m.rewardsMaxSpread,
      clobRewards: m.clobRewards.map((r) => ({ assetAddress: r.assetAddress, rewardsDailyRate: r.rewardsDailyRate })),
      creator: m.creator,
      marketMakerAddress: m.marketMakerAddress,
      gameStartTime: m.gameStartTime,
      notificationsEnabled: m.notificationsEnabled,
      groupItemTitle: m.groupItemTitle,
      rawMetadata: m.rawMetadata,
    };
  }

  marketWithEvents(m: MarketRec): MarketWithEvents {
    const e = this.event(m.eventId);
    return { ...this.marketCatalog(m), events: e ? [this.eventSummary(e)] : [] };
  }

  marketBook(m: MarketRec, tagLabels: (eventId: string) => string[]): MarketBook {
    return {
      enable_order_book: m.enableOrderBook,
      active: m.active,
      closed: m.closed,
      archived: m.archived,
      accepting_orders: m.acceptingOrders,
      accepting_order_timestamp: m.acceptingOrdersTimestamp,
      minimum_order_size: m.orderMinSize / UNITS,
      minimum_tick_size: Number(m.orderPriceMinTickSize),
      condition_id: m.conditionId,
      question_id: m.questionID,
      question: m.question,
      description: m.description,
      market_slug: m.slug,
      end_date_iso: m.endDate,
      game_start_time: m.gameStartTime,
      seconds_delay: 0,
      fpmm: m.marketMakerAddress,
      maker_base_fee: m.makerBaseFee,
      taker_base_fee: m.takerBaseFee,
      notifications_enabled: m.notificationsEnabled,
      neg_risk: m.negRisk,
      neg_risk_market_id: m.negRiskMarketID,
      neg_risk_request_id: m.negRiskRequestID,
      icon: m.icon,
      image: m.image,
      rewards: {
        rates: m.clobRewards.map((r) => ({ asset_address: r.assetAddress, rewards_daily_rate: r.rewardsDailyRate })),
        min_size: m.rewardsMinSize,
        max_spread: m.rewardsMaxSpread,
      },
      is_50_50_outcome: false,
      tokens: ([0, 1] as const).map((i) => ({
        token_id: m.clobTokenIds[i],
        outcome: m.outcomes[i],
        price: this.tokenPrice(m, i),
        winner: m.winner === i,
      })),
      tags: tagLabels(m.eventId),
    };
  }

  /** The platform's short form: condition id, rewards, tokens with their prices, status flags. */
  simplifiedMarket(m: MarketRec): SimplifiedMarket {
    const b = this.marketBook(m, () => []);
    return {
      condition_id: b.condition_id,
      rewards: b.rewards,
      tokens: b.tokens,
      active: b.active,
      closed: b.closed,
      archived: b.archived,
      accepting_orders: b.accepting_orders,
    };
  }

  /** One market in the order-book form (GET /markets/{condition_id}), undefined for an unknown condition id. */
  marketBookByCondition(conditionId: string): MarketBook | undefined {
    this.fresh();
    const m = this.marketByCondition(conditionId);
    if (m === undefined) return undefined;
    const e = this.event(m.eventId);
    const labels = e ? this.tagsOf(e).map((t) => t.label) : [];
    return this.marketBook(m, () => labels);
  }

  samplingStatus(m: MarketRec): SamplingMarket['status'] {
    if (m.winner >= 0) return 'resolved';
    if (m.closed) return 'closed';
    return m.acceptingOrders ? 'active' : 'paused';
  }

  samplingMarket(m: MarketRec): SamplingMarket {
    const e = this.event(m.eventId);
    return {
      condition_id: m.conditionId,
      status: this.samplingStatus(m),
      question: m.question,
      slug: m.slug,
      description: m.description,
      neg_risk: m.negRisk,
      market_id: Number(m.id),
      assets_ids: [...m.clobTokenIds],
      outcomes: [...m.outcomes],
      event: { id: e?.id ?? '', slug: e?.slug ?? '', title: e?.title ?? '', ticker: e?.ticker ?? '', description: e?.description ?? '' },
      raw_metadata: m.rawMetadata,
    };
  }

  // ---- slug lookups ----

  eventBySlug(slug: string, creator?: string): EventSlugForm | undefined {
    this.fresh();
    const id = firstIndexedId(this.store, catalogIx.eventSlugRange(slug));
    const e = id === undefined ? undefined : this.event(id);
    if (!e || (creator !== undefined && e.creator !== creator)) return undefined;
    return this.eventSlugForm(e);
  }

  marketBySlug(slug: string, creator?: string): MarketWithEvents | undefined {
    this.fresh();
    const id = firstIndexedId(this.store, catalogIx.marketSlugRange(slug));
    const m = id === undefined ? undefined : this.market(id);
    if (!m || (creator !== undefined && m.creator !== creator)) return undefined;
    return this.marketWithEvents(m);
  }

  // ---- GET /events ----

  /** GET /events rows as objects. */
  listEvents(p: EventListParams): EventListItem[] {
    this.fresh();
    const { ids, load } = this.listEventIds(p);
    return ids.map((id) => this.eventListItem(load(id)));
  }

  /** GET /events as the serialized JSON array, from the per-generation cache of list items. */
  listEventsJson(p: EventListParams): string {
    this.fresh();
    const { ids, load } = this.listEventIds(p);
    const parts: string[] = [];
    for (const id of ids) {
      let json = this.listJson.get(id);
      if (json === undefined) {
        json = JSON.stringify(this.eventListItem(load(id)));
        if (this.listJson.size >= LIST_CACHE_MAX) this.listJson.clear();
        this.listJson.set(id, json);
      }
      parts.push(json);
    }
    return `[${parts.join(',')}]`;
  }

  private listEventIds(p: EventListParams): { ids: number[]; load: (id: number) => EventRec } {
    const cache = new Map<number, EventRec>();
    const load = (id: number): EventRec => {
      let e = cache.get(id);
      if (!e) {
        e = this.event(String(id))!;
        cache.set(id, e);
      }
      return e;
    };

    const tagIds = new Set(p.tagIds);
    const none = { ids: [] as number[], load };
    for (const slug of p.tagSlugs) {
      const id = firstIndexedId(this.store, catalogIx.tagSlugRange(slug));
      if (id === undefined) return none;
      tagIds.add(id);
    }
    let seriesId: string | undefined;
    if (p.seriesSlug !== undefined) {
      seriesId = firstIndexedId(this.store, catalogIx.seriesSlugRange(p.seriesSlug));
      if (seriesId === undefined) return none;
    }
    const creator = p.creator;
    const codes = statusCodesFor(p.status);
    const matches = (e: EventRec): boolean =>
      (creator === undefined || e.creator === creator) &&
      codes.includes(statusCode(e)) &&
      [...tagIds].every((t) => e.tagIds.includes(t)) &&
      (seriesId === undefined || e.seriesIds.includes(seriesId));

    if (p.slug !== undefined) {
      const id = firstIndexedId(this.store, catalogIx.eventSlugRange(p.slug));
      const e = id === undefined ? undefined : this.event(id);
      return { ids: e && matches(e) && p.offset === 0 ? [Number(e.id)] : [], load };
    }

    // The most selective scope drives; the filters it does not imply are checked per row.
    const candidates: { scope: string; tag?: string; series?: boolean }[] = [];
    for (const t of tagIds) candidates.push({ scope: scopeTag(t, creator), tag: t });
    if (seriesId !== undefined) candidates.push({ scope: scopeSeries(seriesId, creator), series: true });
    if (candidates.length === 0) candidates.push({ scope: creator !== undefined ? scopeCreator(creator) : scopeAll });
    let best = candidates[0];
    let bestCount = Infinity;
    for (const c of candidates) {
      const n = codes.reduce((sum, code) => sum + this.count(c.scope, code), 0);
      if (n < bestCount) {
        best = c;
        bestCount = n;
      }
    }
    if (bestCount === 0) return none;
    // Filters the driving scope does not imply: membership in their own scope's id range, same status
    // (an index probe, no record decoding).
    const residual: string[] = [];
    for (const t of tagIds) if (t !== best.tag) residual.push(scopeTag(t, creator));
    if (seriesId !== undefined && !best.series) residual.push(scopeSeries(seriesId, creator));
    const idCode = EVENT_COLUMNS.id.code;
    const accept =
      residual.length > 0
        ? (id: number, status: number) => residual.every((scope) => this.store.indexes.doesExist(catalogIx.eventSort(scope, status, idCode, id, id)))
        : undefined;

    const explicit = p.order.length > 0;
    const descending = !(p.ascending ?? !explicit);
    const terms: OrderTerm<EventRec>[] = explicit ? p.order : [{ field: 'id', column: EVENT_COLUMNS.id }];
    const lead: StatusFlag[] = [];
    let i = 0;
    while (i < terms.length && terms[i].flag) lead.push(terms[i++].flag!);
    const primary: Column<EventRec> = terms[i]?.column ?? EVENT_COLUMNS.id;
    const rest = terms.slice(i + 1);

    const live = codes.filter((code) => this.count(best.scope, code) > 0);
    const partitions = partitionByFlags(live, lead, descending).map((part) =>
      part.map((code): SortRange => ({ ...catalogIx.eventSortRange(best.scope, code, primary.code), status: code })),
    );
    const tieGroups = primary.kind === 'text' || rest.length > 0;
    const sortGroup = tieGroups ? (ids: number[]) => ids.sort(comparator([{ field: 'p', column: primary }, ...rest], descending, load)) : undefined;

    let ids: number[];
    if (partitions.length === 1 && partitions[0].length === 1 && !accept && !sortGroup) {
      const r = partitions[0][0];
      const keys = this.store.indexes.getKeys(
        descending ? { start: r.end, end: r.start, reverse: true, offset: p.offset, limit: p.limit } : { ...r, offset: p.offset, limit: p.limit },
      );
      ids = Array.from(keys, (k) => (k as Key)[(k as Key).length - 1] as number);
    } else {
      ids = readPage(
        partitions.map((ranges) => ({ [Symbol.iterator]: () => mergeRanges(this.store, ranges, descending) })),
        p.offset,
        p.limit,
        accept,
        sortGroup,
      );
    }
    return { ids, load };
  }

  // ---- GET /tags ----

  listTags(p: TagListParams): Tag[] {
    this.fresh();
    const explicit = p.order.length > 0;
    const descending = !(p.ascending ?? !explicit);
    const terms = explicit ? p.order : [{ field: 'id', column: TAG_COLUMNS.id }];
    const primary = terms[0].column!;
    const rest = terms.slice(1);
    const cache = new Map<number, TagRec>();
    const load = (id: number) => {
      let t = cache.get(id);
      if (!t) {
        t = this.rec<TagRec>('tag', String(id))!;
        cache.set(id, t);
      }
      return t;
    };
    const range: SortRange = { ...catalogIx.tagSortRange(primary.code), status: 0 };
    const sortGroup = primary.kind === 'text' || rest.length > 0 ? (ids: number[]) => ids.sort(comparator([{ field: 'p', column: primary }, ...rest], descending, load)) : undefined;
    const ids = readPage([{ [Symbol.iterator]: () => mergeRanges(this.store, [range], descending) }], p.offset, p.limit, undefined, sortGroup);
    return ids.map((id) => this.tagOut(load(id)));
  }

  // ---- GET /markets, GET /sampling-markets ----

  private marketPage(range: { start: Key; end: Key }, offset: number): Page<MarketRec> {
    const keys = Array.from(this.store.indexes.getKeys({ ...range, offset, limit: MARKETS_PAGE_SIZE + 1 }));
    const data: MarketRec[] = [];
    for (const k of keys.slice(0, MARKETS_PAGE_SIZE)) {
      const m = this.market(String((k as Key)[(k as Key).length - 1]));
      if (m) data.push(m);
    }
    return { data, more: keys.length > MARKETS_PAGE_SIZE };
  }

  marketsPage(offset: number, creator?: string): Page<MarketBook> {
    this.fresh();
    const page = this.marketPage(catalogIx.marketListRange(creator !== undefined ? scopeCreator(creator) : scopeAll), offset);
    const labels = new Map<string, string[]>();
    const tagLabels = (eventId: string) => {
      let l = labels.get(eventId);
      if (!l) {
        const e = this.event(eventId);
        l = e ? this.tagsOf(e).map((t) => t.label) : [];
        labels.set(eventId, l);
      }
      return l;
    };
    return { data: page.data.map((m) => this.marketBook(m, tagLabels)), more: page.more };
  }

  samplingPage(offset: number, creator?: string): Page<SamplingMarket> {
    const page = this.marketPage(catalogIx.marketSamplingRange(creator !== undefined ? scopeCreator(creator) : scopeAll), offset);
    return { data: page.data.map((m) => this.samplingMarket(m)), more: page.more };
  }

  /** GET /simplified-markets (every market) and /sampling-simplified-markets (the sampling ones), by id. */
  simplifiedPage(offset: number, sampling: boolean, creator?: string): Page<SimplifiedMarket> {
    const scope = creator !== undefined ? scopeCreator(creator) : scopeAll;
    const page = this.marketPage(sampling ? catalogIx.marketSamplingRange(scope) : catalogIx.marketListRange(scope), offset);
    return { data: page.data.map((m) => this.simplifiedMarket(m)), more: page.more };
  }

  /** Records of the sampling markets (liquidity rewards configured, accepting orders), by id. Allocates. */
  samplingRecords(): MarketRec[] {
    const out: MarketRec[] = [];
    for (let offset = 0; ; offset += MARKETS_PAGE_SIZE) {
      const page = this.marketPage(catalogIx.marketSamplingRange(scopeAll), offset);
      out.push(...page.data);
      if (!page.more) return out;
    }
  }

  // ---- GET /public-search ----

  search(p: SearchParams): SearchResult {
    this.fresh();
    const words = queryWords(p.q);
    const from = (p.page - 1) * p.limitPerType;
    const to = from + p.limitPerType;

    const ranked = words.length > 0 ? this.rankedEvents(words, p.creator, to) : { ids: [], total: 0 };
    const events = ranked.ids.slice(from, to).map((id) => {
      const e = this.event(String(id))!;
      return { id: e.id, ticker: e.ticker, slug: e.slug, title: e.title };
    });

    const tagHits = p.searchTags && words.length > 0 ? this.searchTags(words, p.q, p.creator) : [];
    const tags = tagHits.slice(from, to);
    return {
      events,
      tags,
      pagination: { hasMore: ranked.total > to || tagHits.length > to, totalResults: ranked.total + tagHits.length },
    };
  }

  /**
   * The best `need` matching events (or more) and how many match, from the per-generation cache when it
   * holds that many: repeated and paged queries do not walk the postings again.
   */
  private rankedEvents(words: string[], creator: string | undefined, need: number): { ids: number[]; total: number } {
    const key = `${creator ?? ''}\u0000${words.join(' ')}`;
    const hit = this.searchCache.get(key);
    if (hit && (hit.ids.length >= need || hit.ids.length === hit.total)) return hit;
    const found = this.searchEvents(words, creator, Math.max(need, SEARCH_CACHE_DEPTH));
    if (this.searchCache.size >= SEARCH_CACHE_MAX) this.searchCache.clear();
    this.searchCache.set(key, found);
    return found;
  }

  /**
   * Events matching every word. Each candidate carries one integer: 2 x (sum over words of 2 x best
   * weight, +1 for a whole-word match) + open, so ordering is by score, then open, then newest id.
   * Returns the best `need` in order (a top-k heap, not a full sort) and the number of matches.
   */
  private searchEvents(words: string[], creator: string | undefined, need: number): { ids: number[]; total: number } {
    const scope = creator !== undefined ? scopeCreator(creator) : scopeAll;
    const plans = words
      .map((word) => {
        const range = catalogIx.eventTermPrefixRange(scope, word);
        // lmdb-js annotates the options object it is given: each call gets its own copy.
        return { word, range, size: this.store.indexes.getKeysCount({ start: range.start, end: range.end }) };
      })
      .sort((a, b) => a.size - b.size);
    if (plans[0].size === 0) return { ids: [], total: 0 };

    const walk = (word: string, range: { start: Key; end: Key }) => {
      const best = new Map<number, number>();
      for (const key of this.store.indexes.getKeys({ start: range.start, end: range.end })) {
        const k = key as Key;
        const id = k[3] as number;
        const rank = ((k[4] as number) * 2 + (k[2] === word ? 1 : 0)) * 2 + (k[5] as number);
        const seen = best.get(id);
        if (seen === undefined || seen < rank) best.set(id, rank);
      }
      return best;
    };

    const candidates = walk(plans[0].word, plans[0].range);
    for (const plan of plans.slice(1)) {
      if (candidates.size === 0) break;
      // Walking a posting costs ~0.5 us, decoding a search document ~15 us: walk unless the word is
      // far more common than the candidate set.
      if (plan.size <= candidates.size * 25) {
        const other = walk(plan.word, plan.range);
        for (const [id, c] of candidates) {
          const o = other.get(id);
          if (o === undefined) candidates.delete(id);
          else candidates.set(id, c + o - (o & 1));
        }
      } else {
        for (const [id, c] of candidates) {
          const doc = this.store.catalog.get(catalogMetaKeys.searchDoc(String(id))) as SearchDoc | undefined;
          let s2 = 0;
          for (const [term, weight] of doc?.terms ?? []) {
            if (term.startsWith(plan.word)) s2 = Math.max(s2, weight * 2 + (term === plan.word ? 1 : 0));
          }
          if (s2 > 0) candidates.set(id, c + s2 * 2);
          else candidates.delete(id);
        }
      }
    }
    return { ids: topRanked(candidates, need), total: candidates.size };
  }

  /** Tags whose label matches every word: exact label first, then more exact words, then more events. */
  private searchTags(words: string[], q: string, creator: string | undefined): { id: string; label: string; slug: string; event_count: number }[] {
    let hits: Map<number, number> | undefined;
    for (const word of words) {
      const found = new Map<number, number>();
      for (const key of this.store.indexes.getKeys(catalogIx.tagTermPrefixRange(word))) {
        const k = key as Key;
        const id = k[2] as number;
        found.set(id, Math.max(found.get(id) ?? 0, k[1] === word ? 1 : 0));
      }
      if (hits === undefined) hits = found;
      else for (const [id, exact] of hits) {
        const f = found.get(id);
        if (f === undefined) hits.delete(id);
        else hits.set(id, exact + f);
      }
      if (hits.size === 0) return [];
    }
    const wanted = q.trim().toLowerCase();
    const rows: { id: string; label: string; slug: string; event_count: number; exact: number; label1: number }[] = [];
    for (const [id, exact] of hits ?? []) {
      const t = this.rec<TagRec>('tag', String(id));
      if (!t) continue;
      const scope = scopeTag(t.id, creator);
      let n = 0;
      for (let code = 0; code < 8; code++) n += this.count(scope, code);
      if (creator !== undefined && n === 0) continue;
      rows.push({ id: t.id, label: t.label, slug: t.slug, event_count: n, exact, label1: t.label.toLowerCase() === wanted ? 1 : 0 });
    }
    rows.sort((a, b) => b.label1 - a.label1 || b.exact - a.exact || b.event_count - a.event_count || Number(a.id) - Number(b.id));
    return rows.map(({ id, label, slug, event_count }) => ({ id, label, slug, event_count }));
  }
}

/** True when (rank a, id a) orders before (rank b, id b): higher rank, then higher id. */
const before = (ra: number, ia: number, rb: number, ib: number) => ra > rb || (ra === rb && ia > ib);

/** The best `k` candidates (id -> rank), best first: a size-k min-heap over the candidates, then a sort of k. */
function topRanked(candidates: Map<number, number>, k: number): number[] {
  const n = Math.min(k, candidates.size);
  if (n === 0) return [];
  const ids: number[] = [];
  const ranks: number[] = [];
  const swap = (i: number, j: number) => {
    [ids[i], ids[j]] = [ids[j], ids[i]];
    [ranks[i], ranks[j]] = [ranks[j], ranks[i]];
  };
  // Heap root = the worst kept candidate.
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < ids.length && before(ranks[w], ids[w], ranks[l], ids[l])) w = l;
      if (r < ids.length && before(ranks[w], ids[w], ranks[r], ids[r])) w = r;
      if (w === i) return;
      swap(i, w);
      i = w;
    }
  };
  for (const [id, rank] of candidates) {
    if (ids.length < n) {
      ids.push(id);
      ranks.push(rank);
      for (let i = ids.length - 1; i > 0; ) {
        const parent = (i - 1) >> 1;
        if (!before(ranks[parent], ids[parent], ranks[i], ids[i])) break;
        swap(i, parent);
        i = parent;
      }
    } else if (before(rank, id, ranks[0], ids[0])) {
      ids[0] = id;
      ranks[0] = rank;
      down(0);
    }
  }
  const order = ids.map((_, i) => i).sort((a, b) => (before(ranks[a], ids[a], ranks[b], ids[b]) ? -1 : 1));
  return order.map((i) => ids[i]);
}

/** Splits status codes into ordered partitions by the leading boolean order fields. */
function partitionByFlags(codes: number[], flags: StatusFlag[], descending: boolean): number[][] {
  if (flags.length === 0) return codes.length > 0 ? [codes] : [];
  const tuple = (code: number) => flags.map((f) => ((code & STATUS_BITS[f]) !== 0 ? 1 : 0));
  const sign = descending ? -1 : 1;
  const sorted = [...codes].sort((a, b) => {
    const ta = tuple(a);
    const tb = tuple(b);
    for (let i = 0; i < ta.length; i++) if (ta[i] !== tb[i]) return (ta[i] - tb[i]) * sign;
    return 0;
  });
  const out: number[][] = [];
  let lastKey = '';
  for (const code of sorted) {
    const key = tuple(code).join('');
    if (out.length === 0 || key !== lastKey) out.push([code]);
    else out[out.length - 1].push(code);
    lastKey = key;
  }
  return out;
}

/** A wallet's admin-set display profile; every field "" when none was set. */
export function getProfile(store: Store, address: string): Profile {
  const a = address.toLowerCase();
  const p = store.profiles.get(profileKey(a)) as Partial<Profile> | undefined;
  return {
    address: a,
    name: p?.name ?? '',
    pseudonym: p?.pseudonym ?? '',
    bio: p?.bio ?? '',
    profileImage: p?.profileImage ?? '',
    profileImageOptimized: p?.profileImageOptimized ?? '',
  };
}
