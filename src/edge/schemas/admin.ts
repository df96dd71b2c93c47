/**
 * Admin API request and response schemas (DESIGN section 9). The catalog upsert takes events in the
 * catalog's own shape (the slug form of GET /events/slug/{slug}, markets nested, plus the trading fields
 * named as the platform's catalog names them), so a GET answer can be posted back unchanged.
 *
 * Leniency, on purpose: unknown properties are ignored and `null` means "absent" for every scalar or
 * object field (nested lists must be lists when present), because the main source of imports is catalog
 * dumps of the platform, which carry dozens of fields this service does not keep (volume, liquidity,
 * ...) and nulls for unset ones. Everything this service does keep is
 * checked here by type and range; the rules that need the store or span fields (identity, uniqueness,
 * exact decimals, neg-risk groups) are checked by projections/catalog.ts, which answers the same
 * `{path, message}` list.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { BPS, DEFAULT_OUTCOMES } from '../../domain/market-rules.ts';
import { TICK_SIZES } from '../../domain/units.ts';
import { EventSlugForm, MarketCatalog, SLUG_PATTERN } from './catalog.ts';

/** Optional, and `null` counts as absent. */
const Opt = <T extends TSchema>(s: T) => Type.Optional(Type.Union([s, Type.Null()]));
/** Optional; `null` and "" count as absent (the catalog answers "" for unset patterned fields). */
const OptOrEmpty = <T extends TSchema>(s: T) => Type.Optional(Type.Union([s, Type.Literal(''), Type.Null()]));
/**
 * Optional nested list, without the `null` alternative: an error inside a union is reported only at the
 * union, so keeping lists out of one lets the error list name the exact nested field.
 */
const OptList = <T extends TSchema>(item: T, maxItems: number) => Type.Optional(Type.Array(item, { maxItems }));

const CatalogId = Type.Union(
  [
    Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'decimal id, at most 2^53 - 1' }),
    Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  ],
  { description: 'catalog id (decimal string or integer); absent = found by slug (markets: by condition id) or assigned' },
);
const Slug = Type.String({ pattern: SLUG_PATTERN, description: 'URL-safe slug, at most 200 characters' });
const IsoDate = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:?\\d{2})?)?$',
  description: 'ISO 8601 date or date-time; stored normalized to YYYY-MM-DDTHH:mm:ss.sssZ',
});
const Text = (maxLength: number) => Type.String({ maxLength });
const Url = Type.String({ maxLength: 2048 });
const Hex32 = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' });
const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
const Creator = Type.String({
  pattern: '^[A-Za-z0-9._:-]{1,100}$',
  description: 'site identifier or creator wallet address (addresses are stored lowercase)',
});
const Metadata = Type.Record(Type.String(), Type.Unknown(), { description: 'free-form JSON object, at most 16 KiB once serialized' });
const Decimal = Type.String({ pattern: '^\\d{1,16}(\\.\\d+)?$' });
const JsonOrList = (item: TSchema, description: string) =>
  Type.Union([Type.String({ maxLength: 4096 }), Type.Array(item, { minItems: 2, maxItems: 2 })], { description });

export const TagInput = Type.Object(
  {
    id: Opt(CatalogId),
    label: Opt(Type.String({ minLength: 1, maxLength: 100 })),
    slug: Opt(Slug),
    requiresTranslation: Opt(Type.Boolean()),
    createdAt: Opt(IsoDate),
    updatedAt: Opt(IsoDate),
  },
  { description: 'A tag. Only id and/or slug = a reference to a tag that exists or is defined elsewhere in the request.' },
);
export type TagInput = Static<typeof TagInput>;

export const SeriesInput = Type.Object(
  {
    id: Opt(CatalogId),
    ticker: Opt(Text(200)),
    slug: Opt(Slug),
    title: Opt(Type.String({ minLength: 1, maxLength: 500 })),
    seriesType: Opt(Text(50)),
    recurrence: Opt(Text(50)),
    image: Opt(Url),
    icon: Opt(Url),
    active: Opt(Type.Boolean()),
    closed: Opt(Type.Boolean()),
    archived: Opt(Type.Boolean()),
    createdAt: Opt(IsoDate),
    updatedAt: Opt(IsoDate),
  },
  { description: 'A series. Only id and/or slug = a reference.' },
);
export type SeriesInput = Static<typeof SeriesInput>;

export const ClobRewardInput = Type.Object({
  assetAddress: Opt(Address),
  rewardsDailyRate: Type.Number({ minimum: 0, maximum: 1e12 }),
});

/** The record dates and state flags markets and events share, at the same place in both. */
const Lifecycle = {
  createdAt: Opt(IsoDate),
  updatedAt: Opt(IsoDate),
  active: Opt(Type.Boolean()),
  closed: Opt(Type.Boolean()),
  archived: Opt(Type.Boolean()),
};

export const MarketInput = Type.Object({
  id: Opt(CatalogId),
  question: Type.String({ minLength: 1, maxLength: 1000 }),
  conditionId: Opt(Hex32),
  questionID: OptOrEmpty(Hex32),
  slug: Opt(Slug),
  resolutionSource: Opt(Text(2048)),
  image: Opt(Url),
  icon: Opt(Url),
  description: Opt(Text(20000)),
  outcomes: Opt(JsonOrList(Type.String({ minLength: 1, maxLength: 100 }), `two outcome labels, JSON-encoded string or array; default ${JSON.stringify(DEFAULT_OUTCOMES)}`)),
  clobTokenIds: Opt(JsonOrList(Type.String({ maxLength: 78 }), 'two uint256 decimal token ids; absent = derived from the condition id')),
  outcomePrices: Opt(JsonOrList(Type.Union([Type.String({ maxLength: 20 }), Type.Number()]), 'two prices in [0, 1] shown before any trade')),
  startDate: Opt(IsoDate),
  endDate: Opt(IsoDate),
  ...Lifecycle,
  enableOrderBook: Opt(Type.Boolean()),
  acceptingOrders: Opt(Type.Boolean()),
  acceptingOrdersTimestamp: OptOrEmpty(IsoDate),
  orderPriceMinTickSize: Opt(
    Type.Union([...TICK_SIZES.map(Number), ...TICK_SIZES].map((t) => Type.Literal(t)), { description: 'tick size; default 0.01' }),
  ),
  orderMinSize: Opt(Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 1e9 }), Decimal], { description: 'minimum order size in tokens, a multiple of 0.01; default 5' })),
  negRisk: Opt(Type.Boolean()),
  negRiskMarketID: OptOrEmpty(Hex32),
  negRiskRequestID: Opt(Text(200)),
  makerBaseFee: Opt(Type.Integer({ minimum: 0, maximum: BPS, description: 'basis points; default 0' })),
  takerBaseFee: Opt(Type.Integer({ minimum: 0, maximum: BPS, description: 'basis points; default 0' })),
  rewardsMinSize: Opt(Type.Number({ minimum: 0, maximum: 1e12 })),
  rewardsMaxSpread: Opt(Type.Number({ minimum: 0, maximum: 100 })),
  clobRewards: OptList(ClobRewardInput, 10),
  creator: OptOrEmpty(Creator),
  marketMakerAddress: OptOrEmpty(Address),
  gameStartTime: OptOrEmpty(IsoDate),
  notificationsEnabled: Opt(Type.Boolean()),
  groupItemTitle: Opt(Text(200)),
  rawMetadata: Opt(Metadata),
});
export type MarketInput = Static<typeof MarketInput>;

export const EventInput = Type.Object({
  id: Opt(CatalogId),
  ticker: Opt(Text(200)),
  slug: Opt(Slug),
  title: Type.String({ minLength: 1, maxLength: 500 }),
  description: Opt(Text(20000)),
  resolutionSource: Opt(Text(2048)),
  image: Opt(Url),
  icon: Opt(Url),
  startDate: Opt(IsoDate),
  creationDate: Opt(IsoDate),
  endDate: IsoDate,
  ...Lifecycle,
  negRisk: Opt(Type.Boolean()),
  creator: OptOrEmpty(Creator),
  tags: OptList(TagInput, 50),
  series: OptList(SeriesInput, 10),
  eventMetadata: Opt(Metadata),
  markets: OptList(MarketInput, 500),
});
export type EventInput = Static<typeof EventInput>;

export const UpsertEventsBody = Type.Array(EventInput, { minItems: 1, maxItems: 1000 });
export type UpsertEventsBody = Static<typeof UpsertEventsBody>;
export const UpsertEventsReply = Type.Array(EventSlugForm, { description: 'the stored events, slug form, in request order' });

export const ConditionParams = Type.Object({ conditionId: Hex32 });
export type ConditionParams = Static<typeof ConditionParams>;
export const AddressParams = Type.Object({ address: Address });
export type AddressParams = Static<typeof AddressParams>;

export const MarketStatusBody = Type.Object(
  {
    active: Type.Optional(Type.Boolean()),
    closed: Type.Optional(Type.Boolean()),
    archived: Type.Optional(Type.Boolean()),
    acceptingOrders: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type MarketStatusBody = Static<typeof MarketStatusBody>;

export const ResolveBody = Type.Object(
  { winningOutcomeIndex: Type.Union([Type.Literal(0), Type.Literal(1)]) },
  { additionalProperties: false },
);
export type ResolveBody = Static<typeof ResolveBody>;

export const AmountBody = Type.Object(
  { amount: Type.String({ pattern: '^\\d{1,16}(\\.\\d{1,6})?$', description: 'USDC, at most 6 decimals, more than 0' }) },
  { additionalProperties: false },
);
export type AmountBody = Static<typeof AmountBody>;

const Amount = Type.String({ description: 'decimal string, 6 decimals at most' });
export const WalletBalances = Type.Object({
  address: Type.String(),
  usdc: Type.Object({ available: Amount, reserved: Amount }),
  tokens: Type.Array(Type.Object({ tokenId: Type.String(), asset: Type.String(), available: Amount, reserved: Amount })),
});
export type WalletBalances = Static<typeof WalletBalances>;

const ProfileText = Type.String({ maxLength: 500 });
export const ProfileBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 100 })),
    pseudonym: Type.Optional(Type.String({ maxLength: 100 })),
    bio: Type.Optional(ProfileText),
    profileImage: Type.Optional(Type.String({ maxLength: 2048 })),
    profileImageOptimized: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false },
);
export type ProfileBody = Static<typeof ProfileBody>;

export const Profile = Type.Object({
  address: Type.String(),
  name: Type.String(),
  pseudonym: Type.String(),
  bio: Type.String(),
  profileImage: Type.String(),
  profileImageOptimized: Type.String(),
});
export type Profile = Static<typeof Profile>;

export const MarketReply = MarketCatalog;
