/**
 * The platform's WebSocket channels (DESIGN section 10, reference/streaming.md): what a client may send on
 * /ws/market and /ws/user, and every event the service sends, in the platform's field names. Prices and
 * sizes are minimal decimal strings, timestamps millisecond strings (the trade's `matchtime`/`match_time`
 * and `last_update` are unix seconds, as the platform's example gives them), a price that does not exist
 * is "". A frame carries one event, or a JSON array of events (an initial dump, or what one commit
 * produced for one topic).
 *
 * Client messages: unknown properties are ignored (clients send extras such as `type` on updates).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Side, Str, TraderSide, strings } from './common.ts';

const TokenId = Type.String({ pattern: '^[0-9]{1,78}$', description: 'token id (uint256 decimal)' });
const ConditionId = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$', description: 'condition id' });

/** Ids one message may name: the per-socket subscription cap is the binding bound (configuration). */
const MAX_IDS = 1000;

export const MarketSubscribe = Type.Object({
  type: Type.Union([Type.Literal('market'), Type.Literal('MARKET'), Type.Literal('Market')]),
  assets_ids: Type.Array(TokenId, { maxItems: MAX_IDS }),
  custom_feature_enabled: Type.Optional(Type.Boolean()),
  initial_dump: Type.Optional(Type.Boolean()),
});
export type MarketSubscribe = Static<typeof MarketSubscribe>;

export const Credentials = Type.Object({
  apiKey: Type.String({ maxLength: 64 }),
  secret: Type.String({ maxLength: 128 }),
  passphrase: Type.String({ maxLength: 128 }),
});

export const UserSubscribe = Type.Object({
  type: Type.Union([Type.Literal('user'), Type.Literal('USER'), Type.Literal('User')]),
  auth: Credentials,
  markets: Type.Optional(Type.Array(ConditionId, { maxItems: MAX_IDS })),
});
export type UserSubscribe = Static<typeof UserSubscribe>;

/** A change of a live subscription: `assets_ids` on the market channel, `markets` on the user channel. */
export const SubscriptionUpdate = Type.Object({
  operation: Type.Union([Type.Literal('subscribe'), Type.Literal('unsubscribe')]),
  assets_ids: Type.Optional(Type.Array(TokenId, { maxItems: MAX_IDS })),
  markets: Type.Optional(Type.Array(ConditionId, { maxItems: MAX_IDS })),
  custom_feature_enabled: Type.Optional(Type.Boolean()),
  initial_dump: Type.Optional(Type.Boolean()),
});
export type SubscriptionUpdate = Static<typeof SubscriptionUpdate>;

// ---- market channel events ----

const Level = Type.Object({ price: Str, size: Str });

/** GET /book's body with `event_type` first and `timestamp` in ms; `hash` is /book's hash of the same state. */
export const BookEvent = Type.Object({
  event_type: Type.Literal('book'),
  ...strings('market', 'asset_id', 'timestamp', 'hash'),
  bids: Type.Array(Level),
  asks: Type.Array(Level),
  min_order_size: Str,
  tick_size: Str,
  neg_risk: Type.Boolean(),
  last_trade_price: Str,
});
export type BookEvent = Static<typeof BookEvent>;

export const PriceChange = Type.Object({
  asset_id: Str,
  price: Str,
  size: Type.String({ description: "the level's new total, \"0\" when it is gone" }),
  side: Side,
  hash: Type.String({ description: "the hash GET /book serves for the token's book after the change" }),
  best_bid: Str,
  best_ask: Str,
});
export type PriceChange = Static<typeof PriceChange>;

export const PriceChangeEvent = Type.Object({
  event_type: Type.Literal('price_change'),
  market: Str,
  timestamp: Str,
  price_changes: Type.Array(PriceChange),
});
export type PriceChangeEvent = Static<typeof PriceChangeEvent>;

export const LastTradePriceEvent = Type.Object({
  event_type: Type.Literal('last_trade_price'),
  ...strings('asset_id', 'market', 'price'),
  side: Side,
  ...strings('size', 'fee_rate_bps', 'timestamp', 'transaction_hash'),
});
export type LastTradePriceEvent = Static<typeof LastTradePriceEvent>;

export const TickSizeChangeEvent = Type.Object({
  event_type: Type.Literal('tick_size_change'),
  ...strings('asset_id', 'market', 'old_tick_size', 'new_tick_size', 'timestamp'),
});
export type TickSizeChangeEvent = Static<typeof TickSizeChangeEvent>;

export const BestBidAskEvent = Type.Object({
  event_type: Type.Literal('best_bid_ask'),
  ...strings('market', 'asset_id', 'best_bid', 'best_ask', 'spread', 'timestamp'),
});
export type BestBidAskEvent = Static<typeof BestBidAskEvent>;

const EventMessage = Type.Object({ id: Str, ticker: Str, slug: Str, title: Str, description: Str });

export const NewMarketEvent = Type.Object({
  event_type: Type.Literal('new_market'),
  ...strings('id', 'question', 'market', 'slug', 'description'),
  assets_ids: Type.Array(Str),
  outcomes: Type.Array(Str),
  event_message: EventMessage,
  timestamp: Str,
});
export type NewMarketEvent = Static<typeof NewMarketEvent>;

export const MarketResolvedEvent = Type.Composite([
  Type.Omit(NewMarketEvent, ['event_type']),
  Type.Object({ event_type: Type.Literal('market_resolved'), winning_asset_id: Str, winning_outcome: Str }),
]);
export type MarketResolvedEvent = Static<typeof MarketResolvedEvent>;

export type MarketChannelEvent = BookEvent | PriceChangeEvent | LastTradePriceEvent | TickSizeChangeEvent | BestBidAskEvent | NewMarketEvent | MarketResolvedEvent;

// ---- user channel events ----

export const UserOrderEvent = Type.Object({
  event_type: Type.Literal('order'),
  id: Str,
  owner: Type.String({ description: "the order's API key" }),
  ...strings('order_owner', 'market', 'asset_id'),
  side: Side,
  ...strings('price', 'original_size', 'size_matched'),
  associate_trades: Type.Array(Str, { description: 'UPDATE: the trade that caused it' }),
  outcome: Str,
  type: Type.Union([Type.Literal('PLACEMENT'), Type.Literal('UPDATE'), Type.Literal('CANCELLATION')]),
  created_at: Type.String({ description: 'unix seconds' }),
  expiration: Type.String({ description: 'unix seconds, "0" unless GTD' }),
  order_type: Str,
  status: Type.String({ description: 'LIVE, MATCHED, CANCELED or CANCELED_MARKET_RESOLVED' }),
  maker_address: Str,
  timestamp: Str,
});
export type UserOrderEvent = Static<typeof UserOrderEvent>;

export const TradeMakerOrder = Type.Object({
  ...strings('asset_id', 'matched_amount', 'order_id', 'outcome', 'owner', 'price', 'fee_rate_bps', 'side', 'maker_address'),
});

export const UserTradeEvent = Type.Object({
  event_type: Type.Literal('trade'),
  type: Type.Literal('TRADE'),
  ...strings('id', 'taker_order_id', 'market'),
  asset_id: Type.String({ description: "the taker's token" }),
  side: Type.String({ description: "the taker's side" }),
  size: Str,
  price: Type.String({ description: "the taker's price" }),
  fee_rate_bps: Str,
  status: Type.String({ description: 'MATCHED, MINED, CONFIRMED, RETRYING or FAILED; CONFIRMED once committed today' }),
  ...strings('matchtime', 'match_time', 'last_update', 'outcome'),
  owner: Type.String({ description: "the receiving wallet's order's API key" }),
  trade_owner: Type.String({ description: "the taker order's API key" }),
  maker_address: Type.String({ description: "the taker order's wallet" }),
  maker_orders: Type.Array(TradeMakerOrder),
  timestamp: Str,
  transaction_hash: Str,
  trader_side: TraderSide,
});
export type UserTradeEvent = Static<typeof UserTradeEvent>;

export type UserChannelEvent = UserOrderEvent | UserTradeEvent;

/** What the service sends when a message is refused (the socket stays open unless it says `closing`). */
export const StreamError = Type.Object({ event_type: Type.Literal('error'), error: Str });
export type StreamError = Static<typeof StreamError>;
