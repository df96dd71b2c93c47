/**
 * Catalog routes (`{type, error}` bodies): GET /events, /events/slug/{slug}, /markets/slug/{slug},
 * /public-search, /tags; and the order-book market lists (`{error}` bodies): GET /markets,
 * /sampling-markets, /simplified-markets and /sampling-simplified-markets with the base64 offset cursor
 * (`LTE=` on the last page, never omitted), and one market by condition id, GET /markets/{condition_id}.
 *
 * `creator` scopes every route to one site's events and markets (DESIGN section 9); an address is
 * compared lowercase. Unknown query parameters are ignored (DESIGN section 7).
 */
import { Type } from '@sinclair/typebox';
import { apiError } from '../../../domain/errors.ts';
import { END_CURSOR, decodeCursor, nextCursor } from '../../../domain/cursor.ts';
import { EVENT_COLUMNS, TAG_COLUMNS, parseOrder } from '../../../projections/catalog/catalog-index.ts';
import { parseConditionId } from '../../../domain/ids.ts';
import { MARKETS_PAGE_SIZE, normalizeCreatorParam, type CatalogReader } from '../../../queries/catalog.ts';
import type { MarketDataReader } from '../../../queries/market-data.ts';
import type { AppContext } from '../../context.ts';
import { bindRoutes, reply, routeSpec, type AnyRoute, type RequestOf, type RouteSpec } from '../../pipeline/route.ts';
import {
  CreatorOnlyQuery,
  EventListItem,
  EventSlugForm,
  EventsQuery,
  MarketWithEvents,
  MarketsPage,
  MarketsQuery,
  SLUG_PATTERN,
  MarketBook,
  SamplingPage,
  SearchQuery,
  SimplifiedPage,
  SearchResult,
  SlugParams,
  Tag,
  TagsQuery,
} from '../../schemas/catalog.ts';
import { ConditionParams } from '../../schemas/market-data.ts';

const SLUG = new RegExp(SLUG_PATTERN);

/**
 * Path parameters arrive percent-encoded. A slug that does not decode, or could never have been stored
 * (charset, length), is simply not found, and never reaches LMDB (whose keys are capped near 2 KB).
 */
function decodeSlug(raw: string): string | undefined {
  let slug: string;
  try {
    slug = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  return SLUG.test(slug) ? slug : undefined;
}

function cursorOffset(cursor: string | undefined): number | 'end' {
  const offset = decodeCursor(cursor);
  if (offset === undefined) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'invalid next_cursor' });
  return offset;
}

/**
 * What the catalog routes use: the catalog's reads, and the books' snapshots (token prices in the market lists
 * are live midpoints; absent in contexts without market data, where the lists are answered as built).
 */
export interface CatalogRouteDeps {
  readonly read: Pick<
    CatalogReader,
    'listEventsJson' | 'eventBySlug' | 'marketBySlug' | 'search' | 'listTags' | 'marketsPage' | 'marketBookByCondition' | 'simplifiedPage' | 'samplingPage'
  >;
  readonly marketData?: Pick<MarketDataReader, 'ensureSnapshots'>;
}

/**
 * Builds a market list page twice when a listed token's book may lag an acknowledged order: tokens[].price
 * is the live midpoint, so like GET /book it waits for snapshots that hold every order acknowledged so far
 * (shards publish at most every 20 ms).
 */
async function live<T>(d: CatalogRouteDeps, build: () => T, tokenIds: (page: T) => string[]): Promise<T> {
  const page = build();
  const wait = d.marketData?.ensureSnapshots(tokenIds(page));
  if (wait === undefined) return page;
  await wait;
  return build();
}

const pageTokens = (p: { data: { tokens: { token_id: string }[] }[] }) => p.data.flatMap((m) => m.tokens.map((t) => t.token_id));
const emptyPage = () => ({ data: [], next_cursor: END_CURSOR, limit: MARKETS_PAGE_SIZE, count: 0 });

/** A page of a market list in the cursor envelope (`LTE=` after the last). */
function marketPage<T>(offset: number, page: { data: T[]; more: boolean }) {
  const count = page.data.length;
  return { data: page.data, next_cursor: page.more ? nextCursor(offset, count, Infinity) : END_CURSOR, limit: MARKETS_PAGE_SIZE, count };
}

export function listEvents(d: CatalogRouteDeps, { query: q }: RequestOf<typeof EventsQuery>) {
  const order = parseOrder(q.order, EVENT_COLUMNS, true);
  if (order === undefined) throw apiError('PM_ERR_CATALOG_PARAM', { param: 'order' });
  const tagSlugs = [q.tag, q.tag_slug].filter((s): s is string => s !== undefined && s !== '');
  const raw = d.read.listEventsJson({
    limit: q.limit ?? 100,
    offset: q.offset ?? 0,
    status: { active: q.active, closed: q.closed, archived: q.archived },
    tagSlugs,
    tagIds: q.tag_id !== undefined ? [String(q.tag_id)] : [],
    seriesSlug: q.series_slug,
    slug: q.slug,
    order,
    ascending: q.ascending,
    creator: normalizeCreatorParam(q.creator),
  });
  return reply({ raw });
}

type SlugRequest = RequestOf<typeof CreatorOnlyQuery, undefined, typeof SlugParams>;

/** The entity of a slug route; a slug that is not valid, or names nothing (of that creator), is not found. */
function bySlug<T>({ params, query }: SlugRequest, find: (slug: string, creator: string | undefined) => T | undefined): T {
  const slug = decodeSlug(params.slug);
  const found = slug === undefined ? undefined : find(slug, normalizeCreatorParam(query.creator));
  if (!found) throw apiError('PM_ERR_CATALOG_SLUG');
  return found;
}

export function eventBySlug(d: CatalogRouteDeps, req: SlugRequest) {
  return bySlug(req, (slug, creator) => d.read.eventBySlug(slug, creator));
}

export function marketBySlug(d: CatalogRouteDeps, req: SlugRequest) {
  return bySlug(req, (slug, creator) => d.read.marketBySlug(slug, creator));
}

export function publicSearch(d: CatalogRouteDeps, { query: q }: RequestOf<typeof SearchQuery>) {
  if (q.q.trim() === '') throw apiError('PM_ERR_CATALOG_REQUIRED', { param: 'q' });
  return d.read.search({
    q: q.q,
    limitPerType: q.limit_per_type ?? 25,
    page: q.page ?? 1,
    searchTags: q.search_tags ?? true,
    creator: normalizeCreatorParam(q.creator),
  });
}

export function listTags(d: CatalogRouteDeps, { query: q }: RequestOf<typeof TagsQuery>) {
  const order = parseOrder(q.order, TAG_COLUMNS, false);
  if (order === undefined) throw apiError('PM_ERR_CATALOG_PARAM', { param: 'order' });
  return d.read.listTags({ limit: q.limit ?? 100, offset: q.offset ?? 0, order, ascending: q.ascending });
}

type ListRequest = RequestOf<typeof MarketsQuery>;

export async function marketsPage(d: CatalogRouteDeps, { query: q }: ListRequest) {
  const offset = cursorOffset(q.next_cursor);
  if (offset === 'end') return emptyPage();
  const creator = normalizeCreatorParam(q.creator);
  return marketPage(offset, await live(d, () => d.read.marketsPage(offset, creator), pageTokens));
}

export async function marketByCondition(d: CatalogRouteDeps, { params }: RequestOf<undefined, undefined, typeof ConditionParams>) {
  const cid = parseConditionId(params.condition_id);
  if (cid === undefined) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'Invalid condition id' });
  const m = await live(
    d,
    () => d.read.marketBookByCondition(cid),
    (b) => b?.tokens.map((t) => t.token_id) ?? [],
  );
  if (m === undefined) throw apiError('PM_ERR_NOT_FOUND_ENTITY', { detail: 'market not found' });
  return m;
}

async function simplified(d: CatalogRouteDeps, { query: q }: ListRequest, sampling: boolean) {
  const offset = cursorOffset(q.next_cursor);
  if (offset === 'end') return emptyPage();
  const creator = normalizeCreatorParam(q.creator);
  return marketPage(offset, await live(d, () => d.read.simplifiedPage(offset, sampling, creator), pageTokens));
}

export function simplifiedMarkets(d: CatalogRouteDeps, req: ListRequest) {
  return simplified(d, req, false);
}

export function samplingSimplifiedMarkets(d: CatalogRouteDeps, req: ListRequest) {
  return simplified(d, req, true);
}

export function samplingMarkets(d: CatalogRouteDeps, { query: q }: ListRequest) {
  const offset = cursorOffset(q.next_cursor);
  if (offset === 'end') return emptyPage();
  return marketPage(offset, d.read.samplingPage(offset, normalizeCreatorParam(q.creator)));
}

export const CATALOG_ROUTES: readonly RouteSpec<CatalogRouteDeps>[] = [
  routeSpec({
    method: 'GET',
    path: '/events',
    group: 'catalog',
    summary: 'List events (list form), filtered, ordered and paged by limit/offset',
    description:
      'Filters combine (AND). `order` is a comma-separated list of id, ticker, slug, title, startDate, endDate, creationDate, ' +
      'createdAt, updatedAt (snake_case aliases accepted), active, closed, archived; `ascending` defaults to false with `order` ' +
      'and the default order is id ascending.',
    query: EventsQuery,
    response: Type.Array(EventListItem),
    handler: listEvents,
  }),
  routeSpec({
    method: 'GET',
    path: '/events/slug/:slug',
    group: 'catalog',
    summary: 'One event by slug (slug form: tags, series, markets, eventMetadata)',
    params: SlugParams,
    query: CreatorOnlyQuery,
    response: EventSlugForm,
    handler: eventBySlug,
  }),
  routeSpec({
    method: 'GET',
    path: '/markets/slug/:slug',
    group: 'catalog',
    summary: 'One market by slug (catalog form with its event summaries in `events`)',
    params: SlugParams,
    query: CreatorOnlyQuery,
    response: MarketWithEvents,
    handler: marketBySlug,
  }),
  routeSpec({
    method: 'GET',
    path: '/public-search',
    group: 'catalog',
    summary: 'Search events (title, market questions, tag labels) and tags, ranked by relevance',
    description:
      'Every query word must match (as a word prefix). Score: title 3, tag label 2, market question 1 per word (+0.5 for a whole ' +
      'word); ties: open events first, then newest. Profiles are never returned.',
    query: SearchQuery,
    response: SearchResult,
    handler: publicSearch,
  }),
  routeSpec({
    method: 'GET',
    path: '/tags',
    group: 'catalog',
    summary: 'List tags',
    description: '`order`: id, label, slug, createdAt, updatedAt (comma-separated); default id ascending.',
    query: TagsQuery,
    response: Type.Array(Tag),
    handler: listTags,
  }),
  routeSpec({
    method: 'GET',
    path: '/markets',
    group: 'clob',
    summary: 'Every market in the order-book form, by id, paged with next_cursor',
    query: MarketsQuery,
    response: MarketsPage,
    fieldMessages: { next_cursor: 'invalid next_cursor' },
    handler: marketsPage,
  }),
  routeSpec({
    method: 'GET',
    path: '/markets/:condition_id',
    group: 'clob',
    summary: 'One market in the order-book form (as the items of GET /markets), by condition id',
    params: ConditionParams,
    response: MarketBook,
    fieldMessages: { condition_id: 'Invalid condition id' },
    handler: marketByCondition,
  }),
  routeSpec({
    method: 'GET',
    path: '/simplified-markets',
    group: 'clob',
    summary: 'Every market in the short form (condition id, rewards, tokens and prices, status), by id, paged with next_cursor',
    query: MarketsQuery,
    response: SimplifiedPage,
    fieldMessages: { next_cursor: 'invalid next_cursor' },
    handler: simplifiedMarkets,
  }),
  routeSpec({
    method: 'GET',
    path: '/sampling-simplified-markets',
    group: 'clob',
    summary: 'Markets with liquidity rewards that accept orders, in the short form, paged with next_cursor',
    query: MarketsQuery,
    response: SimplifiedPage,
    fieldMessages: { next_cursor: 'invalid next_cursor' },
    handler: samplingSimplifiedMarkets,
  }),
  routeSpec({
    method: 'GET',
    path: '/sampling-markets',
    group: 'clob',
    summary: 'Markets with liquidity rewards that accept orders, paged with next_cursor',
    query: MarketsQuery,
    response: SamplingPage,
    fieldMessages: { next_cursor: 'invalid next_cursor' },
    handler: samplingMarkets,
  }),
];

export function catalogRoutes(ctx: Pick<AppContext, 'catalog' | 'marketData'>): AnyRoute[] {
  return bindRoutes<CatalogRouteDeps>({ read: ctx.catalog.read, marketData: ctx.marketData }, CATALOG_ROUTES);
}
