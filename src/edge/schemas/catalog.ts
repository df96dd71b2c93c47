/**
 * Catalog request and response schemas: GET /events, /events/slug/{slug}, /markets/slug/{slug},
 * /public-search, /tags (catalog group), and the order-book lists GET /markets and /sampling-markets
 * (clob group). Field decisions the spec leaves open are listed in docs/decisions/catalog.md ("Catalog").
 *
 * Query parameters arrive as text; validate.ts converts each by its schema kind (integers, booleans)
 * and a failure answers `{"type":"bad request","error":"<param> is invalid"}`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Str, Bool, booleans, strings } from './common.ts';

/** What a stored slug looks like (the admin schema enforces it on the way in). */
export const SLUG_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._~-]{0,199}$';

const Iso = Type.String({ description: 'ISO 8601, YYYY-MM-DDTHH:mm:ss.sssZ' });

// ---- resources -------------------------------------------------------------------------------------

export const Tag = Type.Object({
  ...strings('id', 'label', 'slug'),
  requiresTranslation: Type.Boolean({ description: 'imported, default false (labels are served as imported)' }),
  createdAt: Iso,
  updatedAt: Iso,
});
export type Tag = Static<typeof Tag>;

export const Series = Type.Object({
  ...strings('id', 'ticker', 'slug', 'title'),
  seriesType: Type.String({ description: 'imported, default "single"' }),
  recurrence: Type.String({ description: 'imported (daily, weekly, ...), default "none"' }),
  image: Str,
  icon: Str,
  ...booleans('active', 'closed', 'archived'),
  createdAt: Iso,
  updatedAt: Iso,
});
export type Series = Static<typeof Series>;

const eventCore = {
  ...strings('id', 'ticker', 'slug', 'title', 'description', 'resolutionSource'),
  startDate: Iso,
  endDate: Iso,
  image: Str,
  icon: Str,
  ...booleans('active', 'closed', 'archived'),
  negRisk: Type.Boolean({ description: 'the event is a neg-risk group of binary markets' }),
  creator: Type.String({ description: 'site identifier or creator address; "" when none' }),
  createdAt: Iso,
  updatedAt: Iso,
};

/** The event nested in a market's `events` (slug lookup): Event without tags, markets, series, eventMetadata. */
export const EventSummary = Type.Object({ ...eventCore, creationDate: Iso });
export type EventSummary = Static<typeof EventSummary>;

/** GET /events items: no creationDate, markets, series or eventMetadata. */
export const EventListItem = Type.Object({ ...eventCore, tags: Type.Array(Tag) });
export type EventListItem = Static<typeof EventListItem>;

const Reward = Type.Object({
  assetAddress: Type.String({ description: 'lowercase address; default the zero address (the service ledger\'s USDC)' }),
  rewardsDailyRate: Type.Number(),
});

export const MarketCatalog = Type.Object({
  ...strings('id', 'question', 'conditionId'),
  questionID: Type.String({ description: 'imported, else ""' }),
  ...strings('slug', 'resolutionSource', 'image', 'icon', 'description'),
  outcomes: Type.String({ description: 'JSON-encoded array of the two outcome labels' }),
  outcomePrices: Type.String({ description: 'JSON-encoded array of the two current prices as decimal strings' }),
  clobTokenIds: Type.String({ description: 'JSON-encoded array of the two uint256 token ids (decimal)' }),
  startDate: Iso,
  endDate: Iso,
  createdAt: Iso,
  updatedAt: Iso,
  ...booleans('active', 'closed', 'archived', 'enableOrderBook', 'acceptingOrders'),
  acceptingOrdersTimestamp: Type.String({ description: 'when the market first accepted orders; "" if never' }),
  orderPriceMinTickSize: Type.Number(),
  orderMinSize: Type.Number(),
  negRisk: Bool,
  negRiskMarketID: Type.String({ description: 'bytes32 of the neg-risk group; "" for plain binary markets' }),
  negRiskRequestID: Str,
  makerBaseFee: Type.Integer({ description: 'basis points' }),
  takerBaseFee: Type.Integer({ description: 'basis points' }),
  rewardsMinSize: Type.Number(),
  rewardsMaxSpread: Type.Number(),
  clobRewards: Type.Array(Reward),
  creator: Str,
  marketMakerAddress: Str,
  gameStartTime: Type.String({ description: 'imported ISO time, else ""' }),
  notificationsEnabled: Bool,
  groupItemTitle: Str,
  rawMetadata: Type.Record(Type.String(), Type.Unknown()),
});
export type MarketCatalog = Static<typeof MarketCatalog>;

export const MarketWithEvents = Type.Composite([MarketCatalog, Type.Object({ events: Type.Array(EventSummary) })]);
export type MarketWithEvents = Static<typeof MarketWithEvents>;

/** GET /events/slug/{slug}. */
export const EventSlugForm = Type.Object({
  ...eventCore,
  creationDate: Iso,
  tags: Type.Array(Tag),
  series: Type.Array(Series),
  markets: Type.Array(MarketCatalog),
  eventMetadata: Type.Record(Type.String(), Type.Unknown(), { description: 'imported object, default {}' }),
});
export type EventSlugForm = Static<typeof EventSlugForm>;

export const MarketRewards = Type.Object({
  rates: Type.Array(Type.Object({ asset_address: Str, rewards_daily_rate: Type.Number() })),
  min_size: Type.Number({ description: 'rewardsMinSize: the smallest order (tokens) that scores' }),
  max_spread: Type.Number({ description: 'rewardsMaxSpread: how far from the midpoint an order scores, in cents' }),
});

export const MarketToken = Type.Object({
  token_id: Str,
  outcome: Str,
  price: Type.Number({ description: '1/0 once resolved, else last trade, else midpoint, else imported outcomePrices, else 0' }),
  winner: Bool,
});

/** GET /markets items (order-book form). */
export const MarketBook = Type.Object({
  ...booleans('enable_order_book', 'active', 'closed', 'archived', 'accepting_orders'),
  accepting_order_timestamp: Type.String({ description: 'ISO time the market first accepted orders; "" if never' }),
  minimum_order_size: Type.Number(),
  minimum_tick_size: Type.Number(),
  ...strings('condition_id', 'question_id', 'question', 'description', 'market_slug'),
  end_date_iso: Iso,
  game_start_time: Type.String({ description: 'imported gameStartTime, else ""' }),
  seconds_delay: Type.Number({ description: 'always 0: the engine never delays orders' }),
  fpmm: Type.String({ description: 'imported marketMakerAddress, else ""' }),
  maker_base_fee: Type.Number(),
  taker_base_fee: Type.Number(),
  notifications_enabled: Type.Boolean({ description: 'imported notificationsEnabled, default false (the service sends no notifications)' }),
  neg_risk: Bool,
  neg_risk_market_id: Type.String({ description: 'the group\'s bytes32 for neg-risk markets, else ""' }),
  ...strings('neg_risk_request_id', 'icon', 'image'),
  rewards: MarketRewards,
  is_50_50_outcome: Type.Boolean({ description: 'always false: markets resolve to one outcome' }),
  tokens: Type.Array(MarketToken),
  tags: Type.Array(Type.String(), { description: 'labels of the parent event\'s tags' }),
});
export type MarketBook = Static<typeof MarketBook>;

const cursorEnvelope = {
  next_cursor: Type.String({ description: 'base64 offset of the next page; "LTE=" on the last page' }),
  limit: Type.Integer({ description: 'page size' }),
  count: Type.Integer({ description: 'rows in this page' }),
};

export const MarketsPage = Type.Object({ data: Type.Array(MarketBook), ...cursorEnvelope });
export type MarketsPage = Static<typeof MarketsPage>;

/** GET /simplified-markets and /sampling-simplified-markets items: the platform's short form of a market. */
export const SimplifiedMarket = Type.Object({
  condition_id: Str,
  rewards: MarketRewards,
  tokens: Type.Array(MarketToken),
  ...booleans('active', 'closed', 'archived', 'accepting_orders'),
});
export type SimplifiedMarket = Static<typeof SimplifiedMarket>;

export const SimplifiedPage = Type.Object({ data: Type.Array(SimplifiedMarket), ...cursorEnvelope });
export type SimplifiedPage = Static<typeof SimplifiedPage>;

export const SamplingMarket = Type.Object({
  condition_id: Str,
  status: Type.Union((['active', 'paused', 'closed', 'resolved'] as const).map((s) => Type.Literal(s)), {
    description: 'resolved > closed > paused (not accepting orders) > active; the list holds only active markets',
  }),
  ...strings('question', 'slug', 'description'),
  neg_risk: Bool,
  market_id: Type.Integer({ description: 'the catalog id as a number' }),
  assets_ids: Type.Array(Str),
  outcomes: Type.Array(Str),
  event: Type.Object({ id: Str, slug: Str, title: Str, ticker: Str, description: Str }),
  raw_metadata: Type.Record(Type.String(), Type.Unknown(), { description: 'imported rawMetadata, default {}' }),
});
export type SamplingMarket = Static<typeof SamplingMarket>;

export const SamplingPage = Type.Object({ data: Type.Array(SamplingMarket), ...cursorEnvelope });
export type SamplingPage = Static<typeof SamplingPage>;

export const SearchResult = Type.Object({
  events: Type.Array(Type.Object({ id: Str, ticker: Str, slug: Str, title: Str })),
  tags: Type.Array(
    Type.Object({
      ...strings('id', 'label', 'slug'),
      event_count: Type.Integer({ description: 'events carrying the tag, any status (of the creator when `creator` is given)' }),
    }),
  ),
  pagination: Type.Object({
    hasMore: Type.Boolean({ description: 'a later page has events or tags' }),
    totalResults: Type.Integer({ description: 'matching events plus matching tags' }),
  }),
});
export type SearchResult = Static<typeof SearchResult>;

// ---- queries ---------------------------------------------------------------------------------------

const SlugText = Type.String({ maxLength: 200 });
const CreatorQuery = Type.String({ maxLength: 100, description: 'keep only what this site / creator address created' });
const OrderList = Type.String({ maxLength: 200, description: 'comma-separated field names' });

export const EventsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  active: Type.Optional(Type.Boolean()),
  closed: Type.Optional(Type.Boolean()),
  archived: Type.Optional(Type.Boolean()),
  tag: Type.Optional(Type.String({ maxLength: 200, description: 'tag slug (alias of tag_slug)' })),
  tag_id: Type.Optional(Type.Integer({ minimum: 0 })),
  tag_slug: Type.Optional(SlugText),
  series_slug: Type.Optional(SlugText),
  slug: Type.Optional(SlugText),
  order: Type.Optional(OrderList),
  ascending: Type.Optional(Type.Boolean()),
  creator: Type.Optional(CreatorQuery),
});
export type EventsQuery = Static<typeof EventsQuery>;

export const SlugParams = Type.Object({ slug: Type.String() });
export type SlugParams = Static<typeof SlugParams>;
export const CreatorOnlyQuery = Type.Object({ creator: Type.Optional(CreatorQuery) });
export type CreatorOnlyQuery = Static<typeof CreatorOnlyQuery>;

export const SearchQuery = Type.Object({
  q: Type.String({ maxLength: 300 }),
  limit_per_type: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 25 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000, default: 1 })),
  search_tags: Type.Optional(Type.Boolean({ default: true })),
  search_profiles: Type.Optional(Type.Boolean({ default: false, description: 'accepted; profiles are never returned' })),
  creator: Type.Optional(CreatorQuery),
});
export type SearchQuery = Static<typeof SearchQuery>;

export const TagsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  order: Type.Optional(OrderList),
  ascending: Type.Optional(Type.Boolean()),
});
export type TagsQuery = Static<typeof TagsQuery>;

export const MarketsQuery = Type.Object({
  next_cursor: Type.Optional(Type.String({ maxLength: 40 })),
  creator: Type.Optional(CreatorQuery),
});
export type MarketsQuery = Static<typeof MarketsQuery>;
