/**
 * Schemas of the trading routes beyond order placement (schemas/orders.ts): order reads, bulk cancel,
 * wallet operations and balances. The spec's Order type (camelCase) is the shape of `GET /data/order/{id}`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TraderSide, strings } from './common.ts';
import { BuilderTrade } from './market-data.ts';

const Decimal = Type.String({ pattern: '^[0-9]{1,16}(\\.[0-9]{1,6})?$', description: 'USDC / token amount, up to 6 decimals' });
const ConditionIdText = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' });
const OrderIdText = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' });

export const MAX_CANCEL_IDS = 1000;

export const OrderView = Type.Object({
  id: Type.String(),
  status: Type.String({ description: 'LIVE, MATCHED, CANCELED or CANCELED_MARKET_RESOLVED' }),
  market: Type.String({ description: 'condition id' }),
  originalSize: Type.String({ description: 'tokens, minimal decimal' }),
  outcome: Type.String(),
  makerAddress: Type.String(),
  owner: Type.String({ description: 'API key that placed it' }),
  price: Type.String(),
  sizeMatched: Type.String(),
  assetId: Type.String({ description: 'token id (uint256 decimal)' }),
  side: Type.String(),
  type: Type.String({ description: 'GTC, GTD, FOK or FAK' }),
  expiration: Type.String({ description: 'unix seconds, 0 = none' }),
  associateTrades: Type.Array(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type OrderView = Static<typeof OrderView>;

export const OrderViewResponse = Type.Object({ order: OrderView });

/**
 * The platform V2 client's OpenOrder (snake_case, flat): GET /data/order/{id} and the items of GET /data/orders
 * in the clob-client-v2 shapes (config compat.shapes). The same order as OrderView.
 */
export const ClientOpenOrder = Type.Object({
  id: Type.String(),
  status: Type.String({ description: 'LIVE, MATCHED, CANCELED or CANCELED_MARKET_RESOLVED' }),
  owner: Type.String({ description: 'API key that placed it' }),
  maker_address: Type.String(),
  market: Type.String({ description: 'condition id' }),
  asset_id: Type.String({ description: 'token id (uint256 decimal)' }),
  ...strings('side', 'original_size', 'size_matched', 'price'),
  associate_trades: Type.Array(Type.String()),
  outcome: Type.String(),
  created_at: Type.Integer({ description: 'unix seconds' }),
  expiration: Type.String({ description: 'unix seconds, 0 = none' }),
  order_type: Type.String({ description: 'GTC, GTD, FOK or FAK' }),
});
export type ClientOpenOrder = Static<typeof ClientOpenOrder>;

export const ClientOpenOrdersPage = Type.Object({
  data: Type.Array(ClientOpenOrder),
  next_cursor: Type.String(),
  limit: Type.Integer(),
  count: Type.Integer(),
});

export const OpenOrdersQuery = Type.Object({
  id: Type.Optional(OrderIdText),
  market: Type.Optional(ConditionIdText),
  asset_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,78}$' })),
  next_cursor: Type.Optional(Type.String({ maxLength: 64 })),
});

export const OpenOrdersPage = Type.Object({
  data: Type.Array(OrderView),
  next_cursor: Type.String(),
  limit: Type.Integer(),
  count: Type.Integer(),
});

export const DeleteOrdersBody = Type.Array(OrderIdText, { minItems: 1, maxItems: MAX_CANCEL_IDS });

/**
 * Whose tokens and USDC a wallet operation moves: 0 (absent) the key's wallet, 1 its proxy wallet, 2 its Safe.
 * In the body, which the HMAC covers (a query string is not signed, nor part of what a replay is told apart by).
 */
const OpSignatureType = Type.Optional(Type.Integer({ minimum: 0, maximum: 255, description: "whose: 0 (default) the key's wallet, 1 its proxy wallet, 2 its Safe" }));
export const SplitMergeBody = Type.Object({ conditionId: ConditionIdText, amount: Decimal, signatureType: OpSignatureType });
export const RedeemBody = Type.Object({ conditionId: ConditionIdText, signatureType: OpSignatureType });
export const WalletOpResult = Type.Object({ success: Type.Boolean() });

export const BalanceAllowanceQuery = Type.Object({
  asset_type: Type.Union([Type.Literal('COLLATERAL'), Type.Literal('CONDITIONAL')]),
  token_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,78}$' })),
  signature_type: Type.Optional(Type.Integer({ minimum: 0, maximum: 255, description: "whose balance: 0 (default) the key's wallet, 1 its proxy wallet, 2 its Safe (edge/funders.ts)" })),
});

export const BalanceAllowance = Type.Object({
  balance: Type.String({ description: 'available, integer units (10^-6)' }),
  allowance: Type.String({ description: 'what the exchange may spend: the available balance (no chain, no approvals)' }),
  allowances: Type.Record(Type.String(), Type.String(), {
    description: 'the platform client\'s form of the same: the allowance per exchange contract (the configured order domains)',
  }),
  reserved: Type.String({ description: 'held by open orders, integer units' }),
});

export const TradesQuery = Type.Object({
  id: Type.Optional(OrderIdText),
  market: Type.Optional(ConditionIdText),
  asset_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,78}$' })),
  before: Type.Optional(Type.Integer({ minimum: 0, description: 'unix seconds; trades strictly before' })),
  after: Type.Optional(Type.Integer({ minimum: 0, description: 'unix seconds; trades strictly after' })),
  maker_address: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: "one of the key's wallets (its own, its proxy wallet, its Safe); absent: all of them" })),
  next_cursor: Type.Optional(Type.String({ maxLength: 64 })),
});

/** The platform's Trade: the builder-trade shape plus the caller's role in the fill. */
export const TradeView = Type.Composite([BuilderTrade, Type.Object({ trader_side: TraderSide })]);

export const TradesPage = Type.Object({
  data: Type.Array(TradeView),
  next_cursor: Type.String(),
  limit: Type.Integer(),
  count: Type.Integer(),
});
