/**
 * Trading request and response schemas: order submission (POST /order, POST /orders), its result,
 * cancels, and GET /exchange-info. The schemas are the source of the types (DESIGN section 5, spec
 * "Order submission").
 *
 * Submission: every spec order field is required except `conditionId`, `builder` and `metadata` (zero
 * bytes32 when absent). `salt`, `timestamp` and the amounts may be decimal strings or safe JSON integers
 * (the platform client sends `salt` as a number). Unknown properties are ignored, so the platform
 * client's extras (`order.taker`, `order.nonce`, `order.feeRateBps`, top-level `deferExec`) pass.
 * GTD's `expiration` (unix seconds) sits beside the signed fields; the platform client puts it inside
 * the order instead, so `order.expiration` is read when the top-level one is absent.
 *
 * Amounts are only shaped here; order-check.ts turns a bad amount into PM_ERR_ORDER_AMOUNTS with the
 * order id in the message, as the platform words it.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Side } from './common.ts';
import { GTD_MIN_LEAD_SECONDS } from '../../domain/market-rules.ts';

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: '0x + 40 hex, any case' });
const Bytes32 = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$', description: '0x + 64 hex' });
const UintText = Type.String({ pattern: '^[0-9]{1,78}$', description: 'uint256 as a decimal string' });
const SafeUint = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

export const MAX_ORDERS_PER_REQUEST = 15;

export const OrderSide = Side;
export type OrderSide = Static<typeof OrderSide>;

export const OrderType = Type.Union([Type.Literal('GTC'), Type.Literal('GTD'), Type.Literal('FOK'), Type.Literal('FAK')]);
export type OrderType = Static<typeof OrderType>;

export const SignedOrder = Type.Object({
  salt: Type.Union([UintText, SafeUint], { description: 'signed uint256: decimal string or safe JSON integer' }),
  maker: Address,
  signer: Address,
  tokenId: Type.String({ pattern: '^[0-9]{1,78}$', description: 'uint256 decimal string, no leading zeros' }),
  makerAmount: Type.Union([Type.String({ maxLength: 80 }), SafeUint], { description: 'integer units (10^-6): BUY USDC offered, SELL tokens offered' }),
  takerAmount: Type.Union([Type.String({ maxLength: 80 }), SafeUint], { description: 'integer units (10^-6): BUY tokens wanted, SELL USDC wanted' }),
  side: OrderSide,
  signatureType: Type.Integer({ minimum: 0, maximum: 255, description: '0 = EOA (the only type verified without a chain)' }),
  timestamp: Type.Union([UintText, SafeUint], { description: 'signed, opaque (no freshness check); the platform client sends milliseconds' }),
  metadata: Type.Optional(Bytes32),
  builder: Type.Optional(Bytes32),
  signature: Type.String({ pattern: '^0x[0-9a-fA-F]{130}$', description: 'EIP-712 signature, 65 bytes hex (r, s, v)' }),
  conditionId: Type.Optional(Bytes32),
  expiration: Type.Optional(Type.Union([UintText, SafeUint], { description: 'platform client: GTD expiration inside the order (unsigned in V2)' })),
});
export type SignedOrder = Static<typeof SignedOrder>;

export const OrderSubmission = Type.Object({
  order: SignedOrder,
  owner: Type.String({ minLength: 1, maxLength: 100, description: 'the API key the request is signed with' }),
  orderType: OrderType,
  postOnly: Type.Optional(Type.Boolean({ description: 'GTC/GTD only: reject instead of crossing' })),
  deferExec: Type.Optional(Type.Boolean({ description: 'platform client extra, ignored' })),
  expiration: Type.Optional(Type.Union([UintText, SafeUint], { description: `GTD: unix seconds, at least ${GTD_MIN_LEAD_SECONDS} s ahead; 0 or absent otherwise` })),
});
export type OrderSubmission = Static<typeof OrderSubmission>;

/** POST /order. */
export const PostOrderBody = OrderSubmission;

/**
 * POST /orders: elements are validated one by one by order-check.ts, so a malformed element answers
 * its own `{success: false}` entry instead of failing the batch. More than MAX_ORDERS_PER_REQUEST
 * answers 400 PM_ERR_TOO_MANY_ORDERS.
 */
export const PostOrdersBody = Type.Array(Type.Unknown(), { maxItems: MAX_ORDERS_PER_REQUEST, description: `array of order submissions (POST /order bodies), at most ${MAX_ORDERS_PER_REQUEST}` });

/** Body caps of the order routes: a signed order is under 2 KB; room for whitespace and extras. */
export const ORDER_BODY_BYTES = 16 * 1024;
export const ORDERS_BODY_BYTES = MAX_ORDERS_PER_REQUEST * ORDER_BODY_BYTES;

export const OrderResult = Type.Object({
  success: Type.Boolean(),
  errorMsg: Type.String({ description: '"" on success' }),
  orderID: Type.String({ description: 'EIP-712 digest of the order, "" when it could not be computed' }),
  takingAmount: Type.String({ description: 'decimal amount received at once ("" when nothing matched)' }),
  makingAmount: Type.String({ description: 'decimal amount given at once ("" when nothing matched)' }),
  status: Type.String({ description: 'live | matched ("" when rejected)' }),
  transactionsHashes: Type.Optional(Type.Array(Type.String())),
  tradeIDs: Type.Optional(Type.Array(Type.String())),
});
export type OrderResult = Static<typeof OrderResult>;

export const PostOrdersResult = Type.Array(OrderResult);

const OrderIdText = Type.String({ minLength: 1, maxLength: 200 });

/** DELETE /order: `orderId` (spec) or `orderID` (platform client). */
export const DeleteOrderBody = Type.Union([Type.Object({ orderId: OrderIdText }), Type.Object({ orderID: OrderIdText })]);
export type DeleteOrderBody = Static<typeof DeleteOrderBody>;

/** DELETE /cancel-market-orders: "" means absent; at least one is required; both must match when both given. */
export const CancelMarketOrdersBody = Type.Object({
  market: Type.Optional(Type.String({ maxLength: 100, description: 'condition id' })),
  asset_id: Type.Optional(Type.String({ maxLength: 100, description: 'token id' })),
});
export type CancelMarketOrdersBody = Static<typeof CancelMarketOrdersBody>;

export const CancelResult = Type.Object({
  canceled: Type.Array(Type.String()),
  not_canceled: Type.Record(Type.String(), Type.String(), { description: 'order id -> reason ("order not found", ...)' }),
});
export type CancelResult = Static<typeof CancelResult>;

const DomainInfo = Type.Object({ name: Type.String(), version: Type.String(), chainId: Type.Integer() });
const OrderDomainInfo = Type.Object({ name: Type.String(), version: Type.String(), chainId: Type.Integer(), verifyingContract: Type.String() });

const WalletFactoryInfo = Type.Object({ factory: Type.String(), initCodeHash: Type.String() });

/** GET /exchange-info: what a client needs to sign for this service. */
export const ExchangeInfo = Type.Object({
  chainId: Type.Integer(),
  authDomain: DomainInfo,
  orderDomain: OrderDomainInfo,
  negRiskOrderDomain: OrderDomainInfo,
  tickSizes: Type.Array(Type.String()),
  walletFactories: Type.Object(
    {
      proxy: WalletFactoryInfo,
      safe: WalletFactoryInfo,
    },
    { description: 'what derives the maker of a signatureType 1 (proxy) or 2 (Safe) order from its signer: CREATE2 with the signer in the salt' },
  ),
  profile: Type.String({ description: 'the configuration profile the service runs (spec, clob-v2 or platform: README "Point a bot at it"), which decides the shapes of a few answers and the signing domains' }),
});
export type ExchangeInfo = Static<typeof ExchangeInfo>;

/** GET /auth/api-keys. */
export const ApiKeysList = Type.Object({ apiKeys: Type.Array(Type.String({ description: 'API key (UUID)' })) });

/** POST /auth/api-key, GET /auth/derive-api-key. */
export const ApiCredentials = Type.Object({
  apiKey: Type.String({ description: 'UUID' }),
  secret: Type.String({ description: '32 bytes, base64url with padding' }),
  passphrase: Type.String({ description: '64 hex characters' }),
});
