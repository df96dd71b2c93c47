/**
 * Schemas of the sandbox's test controls (edge/sandbox/test-controls.ts, routes/test-controls.ts): the test
 * clock's state and moves. Bodies are strict (an unknown field is an error): a misspelt `seconds` must not
 * advance nothing silently.
 */
import { Type, type Static } from '@sinclair/typebox';

export const ClockState = Type.Object({
  now: Type.String({ description: 'the exchange\'s time, ISO 8601 (what every time rule follows)' }),
  nowMs: Type.Integer({ description: 'the same, ms since the epoch' }),
  time: Type.Integer({ description: 'the same, unix seconds: what GET /time answers' }),
  frozen: Type.Boolean({ description: 'frozen: time moves only when advanced; running: at the machine clock\'s pace' }),
  offsetMs: Type.Integer({ description: 'running: how far the exchange\'s time is ahead of the machine\'s (negative: behind); 0 while frozen' }),
});
export type ClockState = Static<typeof ClockState>;

export const ClockModeBody = Type.Object(
  { frozen: Type.Boolean({ description: 'true: freeze the time where it stands; false: let it run on from there' }) },
  { additionalProperties: false },
);

const YEAR_SECONDS = 366 * 86_400;

export const AdvanceBody = Type.Object(
  {
    seconds: Type.Optional(Type.Number({ minimum: 0, maximum: YEAR_SECONDS, description: 'move the time this far ahead (fractions are milliseconds)' })),
    to: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0, description: 'unix seconds' }), Type.String({ minLength: 1, maxLength: 64, description: 'ISO 8601' })], {
        description: 'move the time to this instant (not before the exchange\'s time); exactly one of seconds and to',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AdvanceBody = Static<typeof AdvanceBody>;

export const AdvanceReply = Type.Object({
  clock: ClockState,
  advanced: Type.Object({
    from: Type.String({ description: 'ISO 8601' }),
    to: Type.String({ description: 'ISO 8601' }),
    timers: Type.Integer({ description: 'timers that fired on the way (trade moves, heartbeats, samples, scenario events)' }),
    tookMs: Type.Integer({ description: 'real milliseconds the advance took' }),
  }),
});

// ---- counterparties (edge/sandbox/counterparties.ts) -------------------------------------------------------

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
const TokenId = Type.String({ pattern: '^[0-9]{1,78}$', description: 'token id (uint256 decimal)' });
const OrderId = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' });
const ConditionId = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' });
const Price = Type.Union([Type.String({ pattern: '^0?\\.[0-9]{1,4}$' }), Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })], {
  description: 'a price of the token, between 0 and 1 (at most 4 decimals), as a decimal string or a number',
});
const Size = Type.Union([Type.String({ pattern: '^[0-9]{1,12}(\\.[0-9]{1,2})?$' }), Type.Number({ exclusiveMinimum: 0, maximum: 1e12 })], {
  description: 'tokens, in hundredths at most, as a decimal string or a number',
});
const Side = Type.Union([Type.Literal('BUY'), Type.Literal('SELL')]);

export const AdminOrderBody = Type.Object(
  {
    wallet: Address,
    tokenId: TokenId,
    side: Side,
    price: Price,
    size: Size,
    orderType: Type.Optional(Type.Union([Type.Literal('GTC'), Type.Literal('GTD'), Type.Literal('FOK'), Type.Literal('FAK')], { description: 'default GTC' })),
    expiration: Type.Optional(Type.Integer({ minimum: 0, description: 'GTD: unix seconds, at least 60 s past the exchange\'s time' })),
    postOnly: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type AdminOrderBody = Static<typeof AdminOrderBody>;

export const AdminOrderReply = Type.Object({
  orderID: Type.String(),
  wallet: Type.String(),
  owner: Type.Literal('admin', { description: 'the owner every admin-made order shows' }),
  status: Type.String({ description: 'live, matched, or canceled (a FAK or FOK remainder)' }),
  makingAmount: Type.String(),
  takingAmount: Type.String(),
  tradeIDs: Type.Array(Type.String()),
});

export const AdminCancelBody = Type.Object(
  {
    orderIds: Type.Optional(Type.Array(OrderId, { minItems: 1, maxItems: 1000, description: 'these orders, whoever\'s they are' })),
    wallet: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'or every open order of this wallet (in `market` and/or `asset_id` when given)' })),
    market: Type.Optional(ConditionId),
    asset_id: Type.Optional(TokenId),
  },
  { additionalProperties: false },
);
export type AdminCancelBody = Static<typeof AdminCancelBody>;

export const AdminCancelReply = Type.Object({ canceled: Type.Array(Type.String()), not_canceled: Type.Record(Type.String(), Type.String()) });

export const CreditTokensBody = Type.Object(
  {
    tokenId: TokenId,
    amount: Type.String({ pattern: '^[0-9]{1,12}(\\.[0-9]{1,6})?$', description: 'tokens, at most 6 decimals, more than 0' }),
    price: Type.Optional(Price),
  },
  { additionalProperties: false },
);
export type CreditTokensBody = Static<typeof CreditTokensBody>;

const Level = Type.Object(
  { price: Price, size: Size, maker: Type.Optional(Address) },
  { additionalProperties: false },
);

export const SetBookBody = Type.Object(
  {
    maker: Type.Optional(Address),
    bids: Type.Array(Level, { maxItems: 100 }),
    asks: Type.Array(Level, { maxItems: 100 }),
  },
  { additionalProperties: false },
);
export type SetBookBody = Static<typeof SetBookBody>;

export const TokenParams = Type.Object({ token_id: TokenId });
export const OrderParams = Type.Object({ orderId: OrderId });

export const SetBookReply = Type.Object({
  tokenId: Type.String(),
  market: Type.String({ description: 'condition id' }),
  canceled: Type.Integer({ description: 'the makers\' orders on the market canceled first' }),
  orders: Type.Array(
    Type.Object({
      side: Side,
      price: Type.String(),
      size: Type.String(),
      maker: Type.String(),
      orderID: Type.String({ description: '"" when refused' }),
      status: Type.String({ description: 'live, or "" when refused' }),
      error: Type.Optional(Type.String({ description: 'why a level was refused (it would cross another wallet\'s order)' })),
    }),
  ),
});

export const FillBody = Type.Object(
  {
    size: Type.Optional(Size),
    taker: Type.Optional(Address),
  },
  { additionalProperties: false },
);
export type FillBody = Static<typeof FillBody>;

export const FillReply = Type.Object({
  trade: AdminOrderReply,
  order: Type.Object({ id: Type.String(), status: Type.String(), sizeMatched: Type.String(), originalSize: Type.String() }),
});

// ---- scenarios (edge/sandbox/scenario.ts) -----------------------------------------------------------------

const Name = Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_-]{0,31}$', description: 'a wallet\'s name in the scenario' });
const Outcome = Type.Union([Type.Literal('yes'), Type.Literal('no')], { description: 'the market\'s outcome 0 (yes) or 1 (no)' });
const Amount6 = Type.Union([Type.String({ pattern: '^[0-9]{1,12}(\\.[0-9]{1,6})?$' }), Type.Number({ exclusiveMinimum: 0, maximum: 1e12 })]);
const At = Type.Union([Type.Number({ minimum: 0, maximum: 366 * 86_400 }), Type.String({ pattern: '^\\+?[0-9]{1,7}(\\.[0-9]{1,3})?(ms|s|m|h|d)$' })], {
  description: 'when, after the scenario starts: seconds, or "+5s", "+2m", "+1h", "+1d", "+250ms"',
});
const ScenarioLevel = Type.Object({ price: Price, size: Size, maker: Type.Optional(Name) }, { additionalProperties: false });
const ScenarioBook = { token: Outcome, maker: Type.Optional(Name), bids: Type.Array(ScenarioLevel, { maxItems: 100 }), asks: Type.Array(ScenarioLevel, { maxItems: 100 }) };

export const ScenarioEvent = Type.Union(
  [
    Type.Object({ at: At, do: Type.Literal('sweep'), wallet: Name, token: Outcome, side: Side, price: Price, size: Size }, { additionalProperties: false, description: 'a taker\'s FAK through the book up to `price`' }),
    Type.Object(
      { at: At, do: Type.Literal('place'), wallet: Name, token: Outcome, side: Side, price: Price, size: Size, orderType: Type.Optional(Type.Union([Type.Literal('GTC'), Type.Literal('FOK'), Type.Literal('FAK')])) },
      { additionalProperties: false, description: 'an admin-made order' },
    ),
    Type.Object({ at: At, do: Type.Literal('cancel'), wallet: Name }, { additionalProperties: false, description: 'every open order of the wallet in the market' }),
    Type.Object({ at: At, do: Type.Literal('book'), ...ScenarioBook }, { additionalProperties: false, description: 'the token\'s book set anew (PUT /admin/books)' }),
    Type.Object({ at: At, do: Type.Literal('deposit'), wallet: Name, usdc: Amount6 }, { additionalProperties: false }),
    Type.Object({ at: At, do: Type.Literal('credit'), wallet: Name, token: Outcome, amount: Amount6 }, { additionalProperties: false }),
    Type.Object({ at: At, do: Type.Literal('status'), acceptingOrders: Type.Optional(Type.Boolean()), closed: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
    Type.Object({ at: At, do: Type.Literal('resolve'), winner: Outcome }, { additionalProperties: false }),
  ],
  { description: 'one timed event of the script' },
);
export type ScenarioEvent = Static<typeof ScenarioEvent>;

export const Scenario = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 100 })),
    market: Type.Object(
      {
        conditionId: Type.Optional(ConditionId),
        question: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
        tick: Type.Optional(Type.Union([Type.Literal('0.1'), Type.Literal('0.01'), Type.Literal('0.001'), Type.Literal('0.0001')], { description: 'default 0.01' })),
        minSize: Type.Optional(Type.Number({ minimum: 0, maximum: 1e6, description: 'minimum order size, default 5' })),
        makerFeeBps: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
        takerFeeBps: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
      },
      {
        additionalProperties: false,
        description: 'the market: an existing one (`conditionId` only), or a new one (`question`; its condition id is given or derived from the question)',
      },
    ),
    wallets: Type.Optional(
      Type.Record(Name, Type.Object({ address: Type.Optional(Address), usdc: Type.Optional(Amount6), yes: Type.Optional(Amount6), no: Type.Optional(Amount6) }, { additionalProperties: false }), {
        description: 'named wallets, funded at the start: an address, or one derived from the name (keccak256 of "pm-exchange scenario <name>")',
      }),
    ),
    books: Type.Optional(Type.Array(Type.Object(ScenarioBook, { additionalProperties: false }), { maxItems: 2, description: 'the books set at the start' })),
    script: Type.Optional(Type.Array(ScenarioEvent, { maxItems: 1000, description: 'timed events, run on the test clock' })),
  },
  { additionalProperties: false },
);
export type Scenario = Static<typeof Scenario>;

export const ScenarioReply = Type.Object({
  id: Type.Integer({ description: 'the scenario\'s number since start' }),
  name: Type.String(),
  market: Type.Object({ conditionId: Type.String(), yes: Type.String({ description: 'token id' }), no: Type.String({ description: 'token id' }) }),
  wallets: Type.Record(Type.String(), Type.String(), { description: 'name -> address' }),
  startedAt: Type.String({ description: 'ISO 8601, the exchange\'s time the script counts from' }),
  events: Type.Array(
    Type.Object({
      at: Type.String({ description: 'ISO 8601, the exchange\'s time it is due' }),
      do: Type.String(),
      state: Type.Union([Type.Literal('pending'), Type.Literal('done'), Type.Literal('failed'), Type.Literal('canceled')]),
      error: Type.Optional(Type.String()),
    }),
  ),
});
export type ScenarioReply = Static<typeof ScenarioReply>;
