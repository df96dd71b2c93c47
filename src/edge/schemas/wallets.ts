/**
 * Wallet data request and response schemas: GET /trades, /positions, /closed-positions (group `data`).
 *
 * Query parameters arrive as text; validate.ts converts each by its schema kind (integers, numbers,
 * booleans, comma lists) and the data group answers `unknown_field: <name>` for a parameter not listed
 * here, `missing_field: <name>` for an absent required one and `invalid_field: <name>` for a bad value
 * (type, range, enum, pattern, length). Defaults are applied by the route (queries/wallets/ documents
 * every number). Field decisions are in docs/decisions/wallet-data.md ("Wallet data").
 */
import { Type, type Static } from '@sinclair/typebox';
import { Str, numbers, strings } from './common.ts';

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'wallet address, any case; answered lowercase' });
const ConditionId = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' });
/** At most this many condition ids in one `market` list (each is a range walk). */
export const MAX_MARKETS_PER_QUERY = 100;
const Markets = Type.Array(ConditionId, {
  minItems: 1,
  maxItems: MAX_MARKETS_PER_QUERY,
  description: `comma-separated condition ids (0x + 64 hex), 1 to ${MAX_MARKETS_PER_QUERY}`,
});
const Direction = Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { description: 'default DESC' });
const Title = Type.String({ maxLength: 100, description: 'case-insensitive substring of the market title' });

/** Orders of GET /positions and GET /closed-positions (docs/decisions/wallet-data.md, "Sorting and paging"). */
export const POSITION_SORTS = ['CURRENT', 'INITIAL', 'TOKENS', 'CASHPNL', 'PERCENTPNL', 'TITLE', 'RESOLVING', 'PRICE', 'AVGPRICE'] as const;
export type PositionSort = (typeof POSITION_SORTS)[number];
export const CLOSED_SORTS = ['REALIZEDPNL', 'TITLE', 'PRICE', 'AVGPRICE', 'TIMESTAMP'] as const;
export type ClosedSort = (typeof CLOSED_SORTS)[number];

// ---- queries -------------------------------------------------------------------------------------------

export const TradesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, description: 'default 100' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, description: 'default 0' })),
    takerOnly: Type.Optional(Type.Boolean({ description: 'default true: each fill once, from its taker; false adds the maker rows' })),
    filterType: Type.Optional(Type.Union([Type.Literal('CASH'), Type.Literal('TOKENS')], { description: 'CASH: usdcSize >= filterAmount; TOKENS: size >= filterAmount; needs filterAmount' })),
    filterAmount: Type.Optional(Type.Number({ minimum: 0, description: 'minimum (inclusive) for filterType; needs filterType' })),
    market: Type.Optional(Markets),
    user: Type.Optional(Address),
    side: Type.Optional(Type.Union([Type.Literal('BUY'), Type.Literal('SELL')], { description: 'side from the listed wallet\'s perspective' })),
  },
  { additionalProperties: false },
);
export type TradesQuery = Static<typeof TradesQuery>;

export const PositionsQuery = Type.Object(
  {
    user: Address,
    market: Type.Optional(Markets),
    sizeThreshold: Type.Optional(Type.Number({ minimum: 0, description: 'default 1; rows with size >= sizeThreshold tokens' })),
    redeemable: Type.Optional(Type.Boolean({ description: 'default false; true keeps only redeemable rows' })),
    mergeable: Type.Optional(Type.Boolean({ description: 'default false; true keeps only mergeable rows' })),
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 500, description: 'default 100' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, description: 'default 0' })),
    sortBy: Type.Optional(Type.Union(POSITION_SORTS.map((s) => Type.Literal(s)), { description: 'default TOKENS' })),
    sortDirection: Type.Optional(Direction),
    title: Type.Optional(Title),
  },
  { additionalProperties: false },
);
export type PositionsQuery = Static<typeof PositionsQuery>;

export const ClosedPositionsQuery = Type.Object(
  {
    user: Address,
    market: Type.Optional(Markets),
    title: Type.Optional(Title),
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 50, description: 'default 10' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, description: 'default 0' })),
    sortBy: Type.Optional(Type.Union(CLOSED_SORTS.map((s) => Type.Literal(s)), { description: 'default REALIZEDPNL' })),
    sortDirection: Type.Optional(Direction),
  },
  { additionalProperties: false },
);
export type ClosedPositionsQuery = Static<typeof ClosedPositionsQuery>;

// ---- responses -----------------------------------------------------------------------------------------

const Url = Type.String({ description: 'URL, "" when none' });

/** The market and outcome a trade or position row is about, as the catalog names them. */
const marketFields = {
  title: Str,
  slug: Str,
  icon: Url,
  eventSlug: Str,
  outcome: Str,
  outcomeIndex: Type.Integer(),
};

export const Trade = Type.Object({
  proxyWallet: Type.String({ description: 'the wallet this row is about (lowercase)' }),
  side: Type.Union([Type.Literal('BUY'), Type.Literal('SELL')], { description: 'from proxyWallet\'s perspective' }),
  asset: Type.String({ description: '<conditionId>:<outcomeIndex> of the token proxyWallet traded' }),
  conditionId: Str,
  size: Type.Number({ description: 'tokens' }),
  price: Type.Number({ description: 'USDC per token, in proxyWallet\'s outcome' }),
  timestamp: Type.Integer({ description: 'unix seconds of the fill\'s journal commit' }),
  ...marketFields,
  ...strings('name', 'pseudonym', 'bio'),
  profileImage: Url,
  profileImageOptimized: Url,
  transactionHash: Type.String({ description: '0x + 64 hex digest of the fill record' }),
  usdcSize: Type.Number({ description: 'USDC notional of proxyWallet\'s side, fees excluded' }),
});
export type Trade = Static<typeof Trade>;

const positionFields = {
  ...strings('proxyWallet', 'asset', 'conditionId'),
  ...numbers(
    'size', 'avgPrice', 'initialValue', 'currentValue', 'cashPnl', 'percentPnl', 'totalBought', 'realizedPnl',
    'percentRealizedPnl', 'curPrice',
  ),
  redeemable: Type.Boolean(),
  mergeable: Type.Boolean(),
  ...marketFields,
  oppositeOutcome: Str,
  oppositeAsset: Str,
  endDate: Type.String({ description: 'ISO 8601 as imported into the catalog, "" when none' }),
  timestamp: Type.Integer({ description: 'unix seconds: last activity (closing time for closed rows)' }),
};

export const Position = Type.Object({ ...positionFields, negativeRisk: Type.Boolean() });
export type Position = Static<typeof Position>;

export const ClosedPosition = Type.Object(positionFields);
export type ClosedPosition = Static<typeof ClosedPosition>;
