/**
 * Liquidity rewards and order scoring (edge/routes/clob/rewards.ts): the configured programs of the markets, which
 * open orders score, and what wallets earned. Shapes are the platform client's (MarketReward, UserEarning,
 * TotalUserEarning, UserRewardsEarning, RewardsPercentages, OrderScoring); the rule behind the numbers is
 * domain/rewards.ts (docs/decisions/wallet-data.md, "Liquidity rewards").
 */
import { Type, type Static } from '@sinclair/typebox';
import { Str, strings } from './common.ts';

const OrderId = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' });
const DateText = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'UTC day, YYYY-MM-DD' });
const SignatureType = Type.Optional(Type.Integer({ minimum: 0, maximum: 255, description: "whose: 0 (default) the key's wallet, 1 its proxy wallet, 2 its Safe" }));
const Cursor = Type.Optional(Type.String({ maxLength: 64, description: 'base64 offset: MA== first page, LTE= past the last' }));

export const RewardsConfig = Type.Object({
  asset_address: Type.String({ description: 'the reward asset (the zero address: the collateral)' }),
  start_date: Type.String({ description: "YYYY-MM-DD: the market's start (its creation when it has none)" }),
  end_date: Type.String({ description: 'YYYY-MM-DD: the market\'s end date, "" when it has none' }),
  rate_per_day: Type.Number(),
  total_rewards: Type.Number({ description: 'rate_per_day x the days from start_date to end_date (to today when there is no end date), inclusive' }),
});

export const RewardToken = Type.Object({ token_id: Str, outcome: Str, price: Type.Number({ description: 'the display price (as GET /markets)' }) });

export const MarketReward = Type.Object({
  ...strings('condition_id', 'question', 'market_slug', 'event_slug', 'image'),
  rewards_max_spread: Type.Number({ description: 'cents from the midpoint within which an order scores' }),
  rewards_min_size: Type.Number({ description: 'the smallest remaining size, tokens, that scores' }),
  tokens: Type.Array(RewardToken),
  rewards_config: Type.Array(RewardsConfig),
});
export type MarketReward = Static<typeof MarketReward>;

const page = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    next_cursor: Type.String({ description: 'LTE= on the last page' }),
    limit: Type.Integer(),
    count: Type.Integer(),
  });

export const MarketRewardsPage = page(MarketReward);

const AssetRate = Type.Number({ description: 'the reward asset\'s price in USDC: 1 (earnings are amounts of the reward asset, priced at par)' });

export const UserEarning = Type.Object({
  date: DateText,
  ...strings('condition_id', 'asset_address', 'maker_address'),
  earnings: Type.Number({ description: 'rate_per_day x the wallet\'s share x seconds of the day / 86400' }),
  asset_rate: AssetRate,
});
export type UserEarning = Static<typeof UserEarning>;
export const UserEarningsPage = page(UserEarning);

export const TotalUserEarning = Type.Object({
  date: DateText,
  asset_address: Str,
  maker_address: Str,
  earnings: Type.Number({ description: 'the day\'s earnings over every market, of this asset (0 when none)' }),
  asset_rate: AssetRate,
});
export type TotalUserEarning = Static<typeof TotalUserEarning>;

export const Earning = Type.Object({ asset_address: Str, earnings: Type.Number(), asset_rate: AssetRate });

export const UserRewardsEarning = Type.Object({
  ...strings('condition_id', 'question', 'market_slug', 'event_slug', 'image'),
  rewards_max_spread: Type.Number(),
  rewards_min_size: Type.Number(),
  market_competitiveness: Type.Number({ description: 'the market\'s total score over the part of the day sampled, on average (tokens at full weight)' }),
  tokens: Type.Array(RewardToken),
  rewards_config: Type.Array(RewardsConfig),
  maker_address: Str,
  earning_percentage: Type.Number({ description: 'the wallet\'s average share of the market\'s score over the part of the day sampled, percent' }),
  earnings: Type.Array(Earning),
});
export type UserRewardsEarning = Static<typeof UserRewardsEarning>;
export const UserRewardsEarningsPage = page(UserRewardsEarning);

export const RewardsPercentages = Type.Record(Type.String(), Type.Number(), {
  description: 'condition id -> the wallet\'s share of the market\'s score now, percent (markets where it scores)',
});

export const OrderScoring = Type.Object({ scoring: Type.Boolean() });
export const OrdersScoring = Type.Record(Type.String(), Type.Boolean(), { description: 'order id -> whether it scores now' });

// ---- requests ----

export const RewardsMarketsQuery = Type.Object({ next_cursor: Cursor });
export const UserEarningsQuery = Type.Object({ date: DateText, signature_type: SignatureType, next_cursor: Cursor });
export const UserTotalQuery = Type.Object({ date: Type.Optional(DateText), signature_type: SignatureType });
export const ORDER_BY = ['', 'earnings', 'rate_per_day', 'earning_percentage', 'market_competitiveness'] as const;
export const UserMarketsQuery = Type.Object({
  date: DateText,
  signature_type: SignatureType,
  next_cursor: Cursor,
  order_by: Type.Optional(Type.Union(ORDER_BY.map((o) => Type.Literal(o)), { description: 'sort key; "" = by market' })),
  position: Type.Optional(Type.Union([Type.Literal(''), Type.Literal('ASC'), Type.Literal('DESC')], { description: 'sort direction; default DESC' })),
  no_competition: Type.Optional(Type.Boolean({ description: 'true: only markets where no order scored that day' })),
});
export const PercentagesQuery = Type.Object({ signature_type: SignatureType });
export const OrderScoringQuery = Type.Object({ order_id: OrderId });
export const MAX_SCORING_IDS = 1000;
export const OrdersScoringBody = Type.Array(OrderId, { maxItems: MAX_SCORING_IDS, description: `order ids, at most ${MAX_SCORING_IDS}` });
