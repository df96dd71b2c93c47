/**
 * CatalogReader: synchronous LMDB reads of the catalog through the indexes of projections/catalog/catalog-index.ts,
 * with per-generation caches of list items, tag forms and search rankings. No request scans the catalog:
 * every list walks the range of its most selective index and stops as soon as its page is full.
 */
import type {
  EventListItem,
  EventSlugForm,
  MarketBook,
  MarketCatalog,
  MarketWithEvents,
  SamplingMarket,
  SimplifiedMarket,
  SearchResult,
  Series,
  Tag,
} from '../../edge/schemas/catalog.ts';
import type { Store } from '../../journal/env.ts';
import { catalogIx, catalogKey, catalogMetaKeys, catalogRange, type CatalogKind, type Key } from '../../journal/keys.ts';
import { TAG_COLUMNS, queryWords, scopeAll, scopeCreator, type EventRec, type MarketRec, type SeriesRec, type TagRec, type TradingMarket } from '../../projections/catalog/catalog-index.ts';
import { firstIndexedId, toTradingMarket } from '../../projections/catalog.ts';
import { eventListIds } from './event-list.ts';
import { eventListItem, eventSummary, marketBook, marketCatalog, samplingMarket, simplifiedMarket, tagForm, tokenPrice, type PriceSource } from './forms.ts';
import { MARKETS_PAGE_SIZE, type EventListParams, type Page, type SearchParams, type TagListParams } from './params.ts';
import { searchEvents, searchTags } from './search.ts';
import { comparator, mergeRanges, readPage, type SortRange } from './walks.ts';

/** Cached list items beyond this many are dropped all at once (a bound, not an LRU). */
const LIST_CACHE_MAX = 50_000;
/** Cached search rankings: at most this many queries, each ranked at least this deep. */
const SEARCH_CACHE_MAX = 512;
const SEARCH_CACHE_DEPTH = 100;

/** A loader of records by numeric id that reads each at most once (one request's sorting reads them often). */
function memoLoader<R>(read: (id: string) => R | undefined): (id: number) => R {
  const cache = new Map<number, R>();
  return (id) => {
    let r = cache.get(id);
    if (!r) {
      r = read(String(id))!;
      cache.set(id, r);
    }
    return r;
  };
}

export class CatalogReader {
  /**
   * Serialized list-form events and tag forms, valid for one catalog generation: every catalog write
   * transaction bumps it (projections/catalog/apply.ts), in this process or in an import running beside
   * it, and the first read that sees a new generation drops the caches.
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

  // ---- forms ----

  private tagsOf(e: EventRec): Tag[] {
    const out: Tag[] = [];
    for (const id of e.tagIds) {
      let t = this.tagForms.get(id);
      if (t === undefined) {
        const rec = this.rec<TagRec>('tag', id);
        t = rec ? tagForm(rec) : null;
        this.tagForms.set(id, t);
      }
      if (t) out.push(t);
    }
    return out;
  }

  private tagLabelsOf(eventId: string): string[] {
    const e = this.event(eventId);
    return e ? this.tagsOf(e).map((t) => t.label) : [];
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
    return { ...eventSummary(e), tags: this.tagsOf(e), series, markets, eventMetadata: e.eventMetadata };
  }

  /** Price of outcome `i`: 1/0 once resolved, else the engine's price, else the imported seed, else 0. */
  tokenPrice(m: MarketRec, i: 0 | 1): number {
    return tokenPrice(m, i, this.price);
  }

  marketCatalog(m: MarketRec): MarketCatalog {
    return marketCatalog(m, this.price);
  }

  /** One market in the order-book form (GET /markets/{condition_id}), undefined for an unknown condition id. */
  marketBookByCondition(conditionId: string): MarketBook | undefined {
    this.fresh();
    const m = this.marketByCondition(conditionId);
    return m === undefined ? undefined : marketBook(m, this.price, this.tagLabelsOf(m.eventId));
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
    const e = this.event(m.eventId);
    return { ...this.marketCatalog(m), events: e ? [eventSummary(e)] : [] };
  }

  // ---- GET /events, GET /tags ----

  /** GET /events rows as objects. */
  listEvents(p: EventListParams): EventListItem[] {
    this.fresh();
    const load = memoLoader((id) => this.event(id));
    return eventListIds(this.store, p, load).map((id) => eventListItem(load(id), this.tagsOf(load(id))));
  }

  /** GET /events as the serialized JSON array, from the per-generation cache of list items. */
  listEventsJson(p: EventListParams): string {
    this.fresh();
    const load = memoLoader((id) => this.event(id));
    const parts: string[] = [];
    for (const id of eventListIds(this.store, p, load)) {
      let json = this.listJson.get(id);
      if (json === undefined) {
        json = JSON.stringify(eventListItem(load(id), this.tagsOf(load(id))));
        if (this.listJson.size >= LIST_CACHE_MAX) this.listJson.clear();
        this.listJson.set(id, json);
      }
      parts.push(json);
    }
    return `[${parts.join(',')}]`;
  }

  listTags(p: TagListParams): Tag[] {
    this.fresh();
    const explicit = p.order.length > 0;
    const descending = !(p.ascending ?? !explicit);
    const terms = explicit ? p.order : [{ field: 'id', column: TAG_COLUMNS.id }];
    const primary = terms[0].column!;
    const rest = terms.slice(1);
    const load = memoLoader((id) => this.rec<TagRec>('tag', id));
    const range: SortRange = { ...catalogIx.tagSortRange(primary.code), status: 0 };
    const sortGroup = primary.kind === 'text' || rest.length > 0 ? (ids: number[]) => ids.sort(comparator([{ field: 'p', column: primary }, ...rest], descending, load)) : undefined;
    const ids = readPage([{ [Symbol.iterator]: () => mergeRanges(this.store, [range], descending) }], p.offset, p.limit, undefined, sortGroup);
    return ids.map((id) => tagForm(load(id)));
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
        l = this.tagLabelsOf(eventId);
        labels.set(eventId, l);
      }
      return l;
    };
    return { data: page.data.map((m) => marketBook(m, this.price, tagLabels(m.eventId))), more: page.more };
  }

  samplingPage(offset: number, creator?: string): Page<SamplingMarket> {
    const page = this.marketPage(catalogIx.marketSamplingRange(creator !== undefined ? scopeCreator(creator) : scopeAll), offset);
    return { data: page.data.map((m) => samplingMarket(m, this.event(m.eventId))), more: page.more };
  }

  /** GET /simplified-markets (every market) and /sampling-simplified-markets (the sampling ones), by id. */
  simplifiedPage(offset: number, sampling: boolean, creator?: string): Page<SimplifiedMarket> {
    const scope = creator !== undefined ? scopeCreator(creator) : scopeAll;
    const page = this.marketPage(sampling ? catalogIx.marketSamplingRange(scope) : catalogIx.marketListRange(scope), offset);
    return { data: page.data.map((m) => simplifiedMarket(m, this.price)), more: page.more };
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

    const tagHits = p.searchTags && words.length > 0 ? searchTags(this.store, words, p.q, p.creator) : [];
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
    const found = searchEvents(this.store, words, creator, Math.max(need, SEARCH_CACHE_DEPTH));
    if (this.searchCache.size >= SEARCH_CACHE_MAX) this.searchCache.clear();
    this.searchCache.set(key, found);
    return found;
  }
}
