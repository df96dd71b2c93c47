/**
 * Market-data request and response schemas (clob group, `{error}` bodies): GET /book, POST /books,
 * GET /price, POST /prices, GET /midpoint, GET /last-trade-price, POST /last-trades-prices,
 * GET /prices-history, POST /batch-prices-history, GET /builder/trades, and the look-ups the platform's
 * client makes before it posts an order: GET /tick-size, /neg-risk, /fee-rate, /version, and before it
 * builds a market order: GET /markets-by-token/{token_id}, /clob-markets/{condition_id}.
 *
 * Prices and sizes are minimal decimal strings; "" stands for a price that does not exist (an empty
 * book side, no trade yet). Token ids are uint256 decimal strings. Decisions: docs/decisions/market-data.md,
 * "Market data".
 */
import { Type, type Static } from '@sinclair/typebox';
import { Side, Str, strings } from './common.ts';
import { HISTORY_INTERVALS, MAX_FIDELITY, MIN_FIDELITY } from '../../domain/price-history.ts';

/** Shape only; the value is checked by parseTokenId (uint256 bound) in the handler. */
const TokenId = Type.String({ pattern: '^(0|[1-9][0-9]{0,77})$', description: 'uint256 as a decimal string without leading zeros' });
const ConditionId = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$', description: 'condition id: 0x + 64 hex, any case' });
const Price = Type.String({ description: 'minimal decimal string, "" when there is no such price' });
const UnixSeconds = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'unix seconds' });
const Interval = Type.Union(
  HISTORY_INTERVALS.map((i) => Type.Literal(i)),
  { description: 'window ending now: 1h, 6h, 1d, 1w, 1m (one month, 30 days), max (everything; alias all)' },
);
const Fidelity = Type.Integer({ minimum: MIN_FIDELITY, maximum: MAX_FIDELITY, description: 'bucket width in minutes' });

/** Batch bounds (POST /books, POST /prices, POST /last-trades-prices). */
export const MAX_BOOKS_PER_REQUEST = 100;
export const MAX_TOKENS_PER_REQUEST = 500;
/** Token ids per POST /batch-prices-history. */
export const MAX_HISTORY_MARKETS = 20;

// ---- requests -------------------------------------------------------------------------------------------

export const TokenQuery = Type.Object({ token_id: TokenId });
export type TokenQuery = Static<typeof TokenQuery>;

export const TokenParams = Type.Object({ token_id: TokenId });
export type TokenParams = Static<typeof TokenParams>;

export const ConditionParams = Type.Object({ condition_id: ConditionId });
export type ConditionParams = Static<typeof ConditionParams>;

export const BuilderCodeParams = Type.Object({
  builder_code: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$', description: 'bytes32 builder code: 0x + 64 hex, any case' }),
});

export const PriceQuery = Type.Object({ token_id: TokenId, side: Side });
export type PriceQuery = Static<typeof PriceQuery>;

const TokenItem = Type.Object({
  token_id: Type.String({ maxLength: 100, description: 'uint256 decimal string' }),
  side: Type.Optional(Type.String({ maxLength: 10, description: 'BUY or SELL; both sides are answered' })),
});

/** `[{token_id, side?}]`; `side` is accepted (the platform client always sends it) and checked, not used. */
export const TokenBatch = Type.Array(TokenItem, { maxItems: MAX_TOKENS_PER_REQUEST, description: `at most ${MAX_TOKENS_PER_REQUEST} items` });
export type TokenBatch = Static<typeof TokenBatch>;

/** POST /books: the same items, fewer of them (each answer is a whole book). */
export const BookBatch = Type.Array(TokenItem, { maxItems: MAX_BOOKS_PER_REQUEST, description: `at most ${MAX_BOOKS_PER_REQUEST} items` });

/** Bodies of the token batches: the largest batch with generous room per item (whitespace, long ids). */
export const TOKEN_BATCH_BODY_BYTES = 256 * 1024;

/** How a series is bucketed: the same two parameters, by the same names, on the single and the batch route. */
const bucketing = { interval: Type.Optional(Interval), fidelity: Type.Optional(Fidelity) };

export const HistoryQuery = Type.Object({
  market: TokenId,
  startTs: Type.Optional(UnixSeconds),
  endTs: Type.Optional(UnixSeconds),
  ...bucketing,
});
export type HistoryQuery = Static<typeof HistoryQuery>;

export const HistoryBatchBody = Type.Object({
  markets: Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: MAX_HISTORY_MARKETS, description: `1 to ${MAX_HISTORY_MARKETS} token ids` }),
  start_ts: Type.Optional(UnixSeconds),
  end_ts: Type.Optional(UnixSeconds),
  ...bucketing,
});
export type HistoryBatchBody = Static<typeof HistoryBatchBody>;

/** Every parameter is optional text, as the spec lists them; an empty value means absent. */
export const BuilderTradesQuery = Type.Object({
  id: Type.Optional(Type.String({ pattern: '^(0x[0-9a-fA-F]{64})?$', description: 'trade id' })),
  maker_address: Type.Optional(Type.String({ pattern: '^(0x[0-9a-fA-F]{40})?$', description: "the row's maker_address (the taker order's wallet)" })),
  market: Type.Optional(Type.String({ pattern: '^(0x[0-9a-fA-F]{64})?$', description: 'condition id' })),
  asset_id: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,77})?$', description: 'token id' })),
  before: Type.Optional(Type.String({ pattern: '^[0-9]{0,15}$', description: 'unix seconds: trades strictly before' })),
  after: Type.Optional(Type.String({ pattern: '^[0-9]{0,15}$', description: 'unix seconds: trades strictly after' })),
  builder_code: Type.Optional(Type.String({ pattern: '^(0x[0-9a-fA-F]{64})?$', description: 'bytes32 builder code of the taker order' })),
  next_cursor: Type.Optional(Type.String({ maxLength: 64, description: 'base64 offset: MA== first page, LTE= past the last' })),
});
export type BuilderTradesQuery = Static<typeof BuilderTradesQuery>;

// ---- responses ------------------------------------------------------------------------------------------

const Level = Type.Object({ price: Type.String(), size: Type.String() });

export const OrderBookSummary = Type.Object({
  market: Type.String({ description: 'condition id' }),
  asset_id: Type.String({ description: 'token id' }),
  timestamp: Type.String({ description: 'unix seconds at which the shard published this snapshot' }),
  hash: Type.String({ description: 'SHA-1 hex of the compact JSON of this object with hash ""' }),
  bids: Type.Array(Level, { description: 'ascending: best bid last; includes the other outcome\'s asks at 1 - p' }),
  asks: Type.Array(Level, { description: 'descending: best ask last; includes the other outcome\'s bids at 1 - p' }),
  min_order_size: Type.String(),
  tick_size: Type.String(),
  neg_risk: Type.Boolean(),
  last_trade_price: Price,
});
export type OrderBookSummary = Static<typeof OrderBookSummary>;

export const PriceReply = Type.Object({ price: Price });
export const MidpointReply = Type.Object({ mid: Price });
export const MidpointMap = Type.Record(Type.String(), Price, { description: 'token id -> midpoint ("" unless both sides have orders)' });
export const SpreadReply = Type.Object({ spread: Type.String({ description: 'best ask - best bid, "" unless both sides have orders' }) });
export const SpreadMap = Type.Record(Type.String(), Price, { description: 'token id -> best ask - best bid ("" unless both sides have orders)' });
export const Quote = Type.Object({ BUY: Price, SELL: Price });
export type Quote = Static<typeof Quote>;
export const QuoteMap = Type.Record(Type.String(), Quote, { description: 'BUY = best bid, SELL = best ask' });
export const LastTradeReply = Type.Object({ price: Price, side: Type.String({ description: 'BUY, SELL or "" before any trade' }) });
export type LastTradeReply = Static<typeof LastTradeReply>;
export const LastTradesReply = Type.Array(Type.Object({ token_id: Type.String(), price: Price, side: Type.String() }));

export const HistoryPoint = Type.Object({ t: Type.Integer({ description: 'bucket start, unix seconds' }), p: Type.Number({ description: 'last sample in the bucket' }) });
export type HistoryPoint = Static<typeof HistoryPoint>;
export const HistoryReply = Type.Object({ history: Type.Array(HistoryPoint) });
export const BatchHistoryReply = Type.Object({ history: Type.Record(Type.String(), Type.Array(HistoryPoint)) });

export const TickSizeReply = Type.Object({ minimum_tick_size: Type.Number({ description: '0.1, 0.01, 0.001 or 0.0001' }) });
export const NegRiskReply = Type.Object({ neg_risk: Type.Boolean() });
export const FeeRateReply = Type.Object({ base_fee: Type.Integer({ description: 'taker fee rate of the market in basis points' }) });
export const VersionReply = Type.Object({ version: Type.Literal(2) });

export const BuilderFeesReply = Type.Object({
  builder_maker_fee_rate_bps: Type.Integer({ description: 'builder fee charged to makers, basis points: 0 (the service charges no builder fees)' }),
  builder_taker_fee_rate_bps: Type.Integer({ description: 'builder fee charged to takers, basis points: 0 (the service charges no builder fees)' }),
});

/** GET /markets/live-activity/{condition_id} items: the platform client's MarketTradeEvent, one per fill, from its taker. */
export const MarketTradeEvent = Type.Object({
  event_type: Type.Literal('trade'),
  market: Type.Object({
    condition_id: Type.String(),
    asset_id: Type.String({ description: "the taker's token" }),
    ...strings('question', 'icon', 'slug'),
  }),
  user: Type.Object(
    {
      address: Type.String({ description: 'the taker wallet' }),
      ...strings('username', 'profile_picture', 'optimized_profile_picture', 'pseudonym'),
    },
    { description: 'the taker and its admin-set profile ("" where none)' },
  ),
  side: Type.String({ description: "the taker's side" }),
  size: Type.String(),
  fee_rate_bps: Type.String({ description: "the taker order's taker fee rate" }),
  price: Type.String({ description: "in the taker's outcome" }),
  outcome: Type.String(),
  outcome_index: Type.Integer(),
  transaction_hash: Type.String(),
  timestamp: Type.String({ description: 'unix seconds of the match' }),
});
export type MarketTradeEvent = Static<typeof MarketTradeEvent>;

export const MarketByTokenReply = Type.Object({
  condition_id: Type.String({ description: "the token's market" }),
  primary_token_id: Type.String({ description: "outcome 0's token" }),
  secondary_token_id: Type.String({ description: "outcome 1's token" }),
});
export type MarketByTokenReply = Static<typeof MarketByTokenReply>;

/**
 * The platform's fee curve, `fee = r * (p * (1 - p))^e` USDC per token at price p; `to` = only takers pay.
 * The platform client reads it only to hold back a BUY's fee when it sizes an order to a balance.
 */
export const FeeCurve = Type.Object(
  {
    r: Type.Number({ description: 'rate: tbf / 2 / 10^4 USDC per token' }),
    e: Type.Number({ description: 'exponent: 0' }),
    to: Type.Boolean({ description: 'only takers pay (mbf is 0)' }),
  },
  { description: 'fee curve r * (p(1-p))^e per token: the flat bound of our fee tbf / 10^4 * min(p, 1-p), its value at p = 0.5' },
);
export type FeeCurve = Static<typeof FeeCurve>;

/** The platform's abbreviated keys, as its client's MarketDetails type names them. */
export const ClobMarketReply = Type.Object({
  c: Type.String({ description: 'condition id' }),
  t: Type.Array(Type.Object({ t: Type.String({ description: 'token id' }), o: Type.String({ description: 'outcome label' }) }), {
    minItems: 2,
    maxItems: 2,
    description: 'tokens in outcome order',
  }),
  mts: Type.Number({ description: 'minimum tick size: 0.1, 0.01, 0.001 or 0.0001' }),
  nr: Type.Boolean({ description: 'neg risk' }),
  mos: Type.Number({ description: 'minimum order size in tokens' }),
  mbf: Type.Integer({ description: 'maker base fee in basis points' }),
  tbf: Type.Integer({ description: 'taker base fee in basis points' }),
  fd: FeeCurve,
  ao: Type.Boolean({ description: 'accepting orders (and not resolved)' }),
});
export type ClobMarketReply = Static<typeof ClobMarketReply>;

export const MakerOrder = Type.Object({
  ...strings('order_id', 'maker_address', 'owner', 'matched_amount', 'fee_rate_bps', 'price', 'asset_id', 'outcome', 'side'),
});
export type MakerOrder = Static<typeof MakerOrder>;

export const BuilderTrade = Type.Object({
  ...strings('id', 'taker_order_id', 'market', 'asset_id', 'side', 'size', 'fee_rate_bps', 'price'),
  status: Type.String({
    description: 'MATCHED, MINED, CONFIRMED, RETRYING or FAILED (the trade lifecycle; CONFIRMED from the match unless settlement delays are configured)',
  }),
  outcome: Str,
  maker_address: Type.String({ description: "the taker order's wallet" }),
  owner: Type.String({ description: "the taker order's API key" }),
  transaction_hash: Str,
  match_time: Type.String({ description: 'ISO 8601' }),
  last_update: Type.String({ description: 'ISO 8601: the last status change' }),
  bucket_index: Type.Integer({ description: "position of this fill among its taker order's fills, from 0" }),
  type: Type.Literal('TAKER'),
  maker_orders: Type.Array(MakerOrder),
});
export type BuilderTrade = Static<typeof BuilderTrade>;

/**
 * The platform V2 client's BuilderTrade (camelCase): GET /builder/trades in the clob-client-v2 shapes
 * (config compat.shapes), the same fills as the spec's BuilderTrade.
 */
export const ClientBuilderTrade = Type.Object({
  id: Str,
  tradeType: Type.Literal('TAKER'),
  takerOrderHash: Str,
  builder: Type.String({ description: "the taker order's builder code" }),
  ...strings('market', 'assetId', 'side', 'size'),
  sizeUsdc: Type.String({ description: 'USDC the taker paid (BUY) or received (SELL) before fees' }),
  ...strings('price', 'status', 'outcome'),
  outcomeIndex: Type.Integer(),
  owner: Type.String({ description: "the taker order's API key" }),
  maker: Type.String({ description: "the taker order's wallet" }),
  transactionHash: Str,
  matchTime: Type.String({ description: 'ISO 8601' }),
  bucketIndex: Type.Integer(),
  fee: Type.String({ description: "the taker order's fee rate, basis points" }),
  feeUsdc: Type.String({ description: 'the taker fee paid, USDC' }),
  builderFee: Type.String({ description: 'USDC: 0 (no builder fees)' }),
  builderCode: Str,
  createdAt: Type.String({ description: 'ISO 8601: the match' }),
  updatedAt: Type.String({ description: 'ISO 8601: the last status change' }),
});
export type ClientBuilderTrade = Static<typeof ClientBuilderTrade>;

export const ClientBuilderTradesPage = Type.Object({
  data: Type.Array(ClientBuilderTrade),
  next_cursor: Type.String({ description: 'LTE= on the last page' }),
  limit: Type.Integer(),
  count: Type.Integer(),
});
