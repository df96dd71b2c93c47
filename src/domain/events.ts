/**
 * The journal: every committed effect of the engine, one record per event, each with a global `seq`
 * (consecutive from 1) and `ts` (ms since the epoch, the sequencer's clock). Projections (positions,
 * trades, prices, wallet data) consume these records through Engine.onCommitted and from LMDB, and
 * recovery replays them, so each record is complete on its own: ids as strings, amounts as integer units
 * (10^-6), prices as integer pips (10^-4).
 *
 * Money flows of a fill, per party: a BUY pays `usdc + fee` and receives `size` tokens of its outcome; a
 * SELL gives `size` tokens and receives `usdc - fee`. TRANSFER moves tokens between the two; MINT creates
 * one token of each outcome per unit of size from the two buyers' USDC (their `usdc` sum to `size`); MERGE
 * burns one of each and pays the two sellers (their `usdc` sum to `size`). Fees go to the fee wallet.
 *
 * Order lifecycle: `order` (accepted; LIVE with its full size) -> zero or more `fill`s -> at most one
 * final `status` (MATCHED, CANCELED or CANCELED_MARKET_RESOLVED). An order rejected by matching with
 * nothing filled (killed FOK, FAK without a match, post-only that crosses) is never journaled.
 *
 * Trade lifecycle (engine/ledger/trade-lifecycle.ts). A fill without `deferred` is a CONFIRMED trade from its
 * commit on (the default). A `deferred` fill is a MATCHED trade: what it delivers (tokens to a buyer, USDC
 * to a seller, fees to the fee wallet) is held but not spendable until a `trade` event moves it to MINED;
 * later `trade` events move it to CONFIRMED, or through RETRYING to MINED or FAILED. A FAILED trade is
 * reversed: its proceeds leave their receivers and what each party gave (USDC with its fee, tokens) goes
 * back to it, available.
 */

/** The wallet that collects trading fees: an ordinary ledger wallet, so fees are part of conservation. */
export const FEE_WALLET = 'fees';

/**
 * The wallet that holds the other half of the complete sets an admin credit mints (`credit` events): an
 * ordinary ledger wallet like FEE_WALLET, so every outcome's supply stays whole and conservation holds.
 */
export const HOUSE_WALLET = 'house';

/**
 * The `owner` of an order the admin API placed for a wallet (edge/sandbox/counterparties.ts): no API key
 * made it, and an API key is a UUID, so wherever an order or trade shows its owner (GET /data/order, the
 * user channel, trades' maker_orders) this marks it admin-made. Its journal event also has no signature.
 */
export const ADMIN_OWNER = 'admin';

export type SideName = 'BUY' | 'SELL';
export type OrderTypeName = 'GTC' | 'GTD' | 'FOK' | 'FAK';
export type FillKindName = 'TRANSFER' | 'MINT' | 'MERGE';
export type OrderStatusName = 'LIVE' | 'MATCHED' | 'CANCELED' | 'CANCELED_MARKET_RESOLVED';
/** Why an order stopped: USER, EXPIRED, SELF_TRADE, MARKET_RESOLVED, UNFILLED (FAK/FOK remainder), FILLED. */
export type StatusReason = 'USER' | 'EXPIRED' | 'SELF_TRADE' | 'MARKET_RESOLVED' | 'UNFILLED' | 'FILLED';
/** Where a trade stands after its match (the platform's statuses, engine/ledger/trade-lifecycle.ts). */
export type TradeStatusName = 'MATCHED' | 'MINED' | 'CONFIRMED' | 'RETRYING' | 'FAILED';

interface Base {
  seq: number;
  ts: number;
}

/**
 * A market's trading parameters: what the catalog registers with the engine, and the core of the engine's
 * `market` event and of its stored market row (journal/writer.ts MarketRow).
 */
export interface TradingMarket {
  conditionId: string;
  tokenIds: [string, string];
  tickPips: number;
  minSizeUnits: number;
  makerFeeBps: number;
  takerFeeBps: number;
  acceptingOrders: boolean;
  negRisk: boolean;
}

/** A market entered the engine or changed its trading parameters. */
export interface MarketEvent extends Base, TradingMarket {
  type: 'market';
  /** Engine-internal numeric id (stable across restarts). */
  marketId: number;
}

/** The signed submission as received, plus what the engine derived from it. */
export interface OrderSubmission {
  orderId: string;
  wallet: string;
  tokenId: string;
  side: SideName;
  orderType: OrderTypeName;
  postOnly: boolean;
  makerAmount: number;
  takerAmount: number;
  expiration: number;
  builder: string;
  owner: string;
  signer: string;
  salt: string;
  timestamp: string;
  signatureType: number;
  signature: string;
}

/** What the engine fixed of an order at acceptance: its `order` event and its stored record carry it. */
export interface OrderTerms {
  conditionId: string;
  outcome: 0 | 1;
  /** Limit price in the order's own outcome space (for FOK/FAK the conservative worst price). */
  pricePips: number;
  /** Tokens wanted (BUY) or offered (SELL), whole lots. */
  sizeUnits: number;
  /** FOK/FAK BUY: USDC the fills may spend (fees excluded); 0 otherwise. */
  budgetUnits: number;
  /** Fee rates fixed at acceptance (the order pays these for its whole life). */
  makerFeeBps: number;
  takerFeeBps: number;
}

export interface OrderAcceptedEvent extends Base, OrderSubmission, OrderTerms {
  type: 'order';
}

/** A fill's money, per party: the engine's fill (engine/book/api.ts Fill) and the journal's carry it. */
export interface FillAmounts {
  /** Trade price in each party's own outcome space (the maker's price; improvement goes to the taker). */
  takerPricePips: number;
  makerPricePips: number;
  takerUsdc: number;
  makerUsdc: number;
  takerFee: number;
  makerFee: number;
}

export interface FillEvent extends Base, FillAmounts {
  type: 'fill';
  /** 0x + 64 hex, a digest of this record's content. */
  tradeId: string;
  /** 0x + 64 hex, a second digest of the record (there is no chain). */
  txHash: string;
  conditionId: string;
  kind: FillKindName;
  size: number;
  takerOrderId: string;
  makerOrderId: string;
  takerWallet: string;
  makerWallet: string;
  /** API keys (owners) of the two orders. */
  takerOwner: string;
  makerOwner: string;
  takerTokenId: string;
  makerTokenId: string;
  takerOutcome: 0 | 1;
  makerOutcome: 0 | 1;
  takerSide: SideName;
  makerSide: SideName;
  /** Size of the maker order still resting after this fill. */
  makerRemaining: number;
  /** Builder code (bytes32 hex) of the taker order. */
  builder: string;
  /**
   * Set (true) when the trade settles later: it is MATCHED, and what it delivers becomes spendable with its
   * MINED `trade` event. Absent: CONFIRMED at its commit, spendable at once.
   */
  deferred?: true;
}

export interface OrderStatusEvent extends Base {
  type: 'status';
  orderId: string;
  wallet: string;
  conditionId: string;
  status: OrderStatusName;
  reason: StatusReason;
  /** Size that left the book unfilled (0 for MATCHED). */
  remaining: number;
  /** Total filled over the order's life. */
  matched: number;
}

/**
 * A deferred fill's trade moved on (MATCHED is the fill itself). Carries what a client-facing `trade`
 * message routes by (market, wallets, API keys); the rest of the trade is the fill at `fillSeq`.
 */
export interface TradeEvent extends Base {
  type: 'trade';
  tradeId: string;
  /** Journal seq of the fill. */
  fillSeq: number;
  status: Exclude<TradeStatusName, 'MATCHED'>;
  conditionId: string;
  takerWallet: string;
  makerWallet: string;
  takerOwner: string;
  makerOwner: string;
}

export interface BalanceMoveEvent extends Base {
  type: 'deposit' | 'withdraw';
  wallet: string;
  amount: number;
}

export interface SplitEvent extends Base {
  type: 'split';
  wallet: string;
  conditionId: string;
  tokenIds: [string, string];
  amount: number;
}

export interface MergeEvent extends Base {
  type: 'merge';
  wallet: string;
  conditionId: string;
  tokenIds: [string, string];
  amount: number;
}

/**
 * The admin API credited `amount` outcome tokens to a wallet (the sandbox's test controls): `amount`
 * complete sets minted against a deposit of as much USDC, outcome `outcome` to `wallet`, the other to
 * HOUSE_WALLET. Net deposits grow by `amount`. Positions count it as a buy at `pricePips` (the house's half
 * is not a position).
 */
export interface CreditEvent extends Base {
  type: 'credit';
  wallet: string;
  conditionId: string;
  tokenIds: [string, string];
  outcome: 0 | 1;
  amount: number;
  pricePips: number;
}

export interface ResolveEvent extends Base {
  type: 'resolve';
  conditionId: string;
  winningOutcome: 0 | 1;
  tokenIds: [string, string];
}

export interface RedeemEvent extends Base {
  type: 'redeem';
  wallet: string;
  conditionId: string;
  tokenIds: [string, string];
  winningOutcome: 0 | 1;
  /** Tokens burned per outcome. */
  burned: [number, number];
  /** USDC paid: the winning outcome's tokens, 1 each. */
  payout: number;
}

export type JournalEvent =
  | MarketEvent
  | OrderAcceptedEvent
  | FillEvent
  | OrderStatusEvent
  | TradeEvent
  | BalanceMoveEvent
  | SplitEvent
  | MergeEvent
  | CreditEvent
  | ResolveEvent
  | RedeemEvent;

// The stored form of a fill is the journal's (journal/codecs/fill-codec.ts).

/** What an order signed that nothing reads after its `order` event is written: that event keeps them. */
export type SignedOnly = 'salt' | 'timestamp' | 'signature';
export type OrderSignedParts = Pick<OrderSubmission, SignedOnly>;

/**
 * Current state of an order as the orders table stores it and Engine.getOrder returns it. Without its
 * salt, timestamp and signature: the engine holds a record for every open order, and those three strings
 * were ~220 of the ~1,150 bytes of heap one cost (bench/engine/memory.bench.ts); its `order` event in the
 * journal keeps them (journal/codecs/order-codec.ts), and no answer shows them.
 */
export interface OrderRecord extends Omit<OrderSubmission, SignedOnly>, OrderTerms {
  /** Journal sequence of its `order` event: its time priority. */
  seq: number;
  sizeMatched: number;
  status: OrderStatusName;
  tradeIds: string[];
  /** The journal seqs of its fills, oldest first: tradeIds[i] is the trade id of fillSeqs[i] (what the orders table stores). */
  fillSeqs: number[];
  /** ms since the epoch. */
  createdAt: number;
  updatedAt: number;
  /** The answer given when it was placed, repeated verbatim to a retry with the same order id. */
  response: { status: 'live' | 'matched'; makingAmount: number; takingAmount: number; tradeIds: string[] };
}

// ---- constructors (seq and ts are assigned by the journal writer) ------------------------------------

export function depositEvent(type: 'deposit' | 'withdraw', wallet: string, amount: number): BalanceMoveEvent {
  return { type, seq: 0, ts: 0, wallet, amount };
}

export function splitEvent(type: 'split' | 'merge', wallet: string, conditionId: string, tokenIds: [string, string], amount: number): SplitEvent | MergeEvent {
  return { type, seq: 0, ts: 0, wallet, conditionId, tokenIds, amount } as SplitEvent | MergeEvent;
}

export function creditEvent(wallet: string, conditionId: string, tokenIds: [string, string], outcome: 0 | 1, amount: number, pricePips: number): CreditEvent {
  return { type: 'credit', seq: 0, ts: 0, wallet, conditionId, tokenIds, outcome, amount, pricePips };
}

export function resolveEvent(conditionId: string, winningOutcome: 0 | 1, tokenIds: [string, string]): ResolveEvent {
  return { type: 'resolve', seq: 0, ts: 0, conditionId, winningOutcome, tokenIds };
}

export function redeemEvent(wallet: string, conditionId: string, tokenIds: [string, string], winningOutcome: 0 | 1, burned: [number, number], payout: number): RedeemEvent {
  return { type: 'redeem', seq: 0, ts: 0, wallet, conditionId, tokenIds, winningOutcome, burned, payout };
}

export function statusEvent(rec: OrderRecord, status: OrderStatusName, reason: StatusReason, remaining: number): OrderStatusEvent {
  return { type: 'status', seq: 0, ts: 0, orderId: rec.orderId, wallet: rec.wallet, conditionId: rec.conditionId, status, reason, remaining, matched: rec.sizeMatched };
}

export function tradeEvent(f: FillEvent, status: TradeEvent['status']): TradeEvent {
  return {
    type: 'trade',
    seq: 0,
    ts: 0,
    tradeId: f.tradeId,
    fillSeq: f.seq,
    status,
    conditionId: f.conditionId,
    takerWallet: f.takerWallet,
    makerWallet: f.makerWallet,
    takerOwner: f.takerOwner,
    makerOwner: f.makerOwner,
  };
}

/** The `order` event of a record at acceptance (before any fill), with what the order signed. */
export function orderAcceptedEvent(rec: OrderRecord, signed: OrderSignedParts): OrderAcceptedEvent {
  return {
    type: 'order',
    seq: 0,
    ts: 0,
    orderId: rec.orderId,
    wallet: rec.wallet,
    tokenId: rec.tokenId,
    side: rec.side,
    orderType: rec.orderType,
    postOnly: rec.postOnly,
    makerAmount: rec.makerAmount,
    takerAmount: rec.takerAmount,
    expiration: rec.expiration,
    builder: rec.builder,
    owner: rec.owner,
    signer: rec.signer,
    salt: signed.salt,
    timestamp: signed.timestamp,
    signatureType: rec.signatureType,
    signature: signed.signature,
    conditionId: rec.conditionId,
    outcome: rec.outcome,
    pricePips: rec.pricePips,
    sizeUnits: rec.sizeUnits,
    budgetUnits: rec.budgetUnits,
    makerFeeBps: rec.makerFeeBps,
    takerFeeBps: rec.takerFeeBps,
  };
}
