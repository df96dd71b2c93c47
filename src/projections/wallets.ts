/**
 * Wallet data read models (GET /positions, /closed-positions, /trades), projected from the committed
 * journal. Two projections with their own cursors, so a fault in one never stops the other:
 *
 *   wallet-positions  per (wallet, outcome token) position state, and per market what the journal says
 *                     about it (token ids, neg-risk, winner):
 *                       ['wpos', wallet, conditionId, outcome] -> PositionState
 *                       ['wmkt', conditionId]                  -> MarketFacts
 *                     A wallet's positions are one key range, so GET /positions reads a wallet's rows in
 *                     one walk and sorts them in memory (a wallet with 5,000 positions is 5,000 small rows).
 *   wallet-trades     trade rows (one party's side of a fill) per wallet, per market and overall, by seq:
 *                       ['wtr-w', wallet, role, seq]      -> [side, size, usdc, conditionId]
 *                       ['wtr-m', conditionId, role, seq] -> [side, size, usdc]
 *                       ['wtr-a', role, seq]              -> [side, size, usdc]
 *                     role 0 = taker, 1 = maker, so `takerOnly` (the default) walks role 0 alone; the
 *                     values carry what the filters need, so a filtered page reads (at random) only the
 *                     fills it shows, while the entries it skips are walked in key order.
 *                       ['wtr-d', wallet, fillSeq]        -> 0
 *                     every deferred fill of a wallet, whatever its trade's status (GET /data/trades).
 *
 * Deferred fills (the trade lifecycle, engine/ledger/trade-lifecycle.ts). The data API shows what the platform's
 * chain shows: a deferred fill enters positions and /trades when its trade is MINED, never if it FAILED.
 * So a deferred fill adds only its 'wtr-d' rows; its MINED `trade` event applies the fill (read back from
 * the fills table) to both positions, at the move's seq and time, and writes its trade rows under the
 * move's seq with the fill's seq fifth ([side, size, usdc, conditionId, fillSeq] in all three indexes):
 * rows only ever appear above the committed cursor, as the readers of queries/wallets/ rely on.
 *
 * Position arithmetic is the platform's PnL subgraph's (reference/platform-semantics.md section 1.2), on
 * integers: sizes in units (10^-6 token), prices and the average in micro-USDC per token (10^-6), money in
 * micro-USDC. Per party of an event, each at its own price:
 *   BUY  q at p:  avg <- floor((avg * size + p * q) / (size + q)); size += q; bought += q
 *   SELL q at p:  q' = min(q, size); realized += trunc(q' * (p - avg) / 10^6); size -= q'; avg unchanged
 * A fill's BUY party buys `size` of its own outcome at its own price (`pricePips * 100`), a SELL party
 * sells (so a MINT has two buyers, a MERGE two sellers); a split buys both outcomes at 0.5, a merge sells
 * both at 0.5, an admin credit buys its outcome at the price it names, a redeem sells each burned holding at
 * its payout (1 for the winner, 0 for the loser). Fees
 * never enter the average (the platform's avgPrice is fee-exclusive).
 *
 * A position is closed when it was held and its size is back to zero: `closedAt` and `closePrice` record
 * the event that emptied it and the price of that event (the sale's price, 0.5 for a merge, the payout
 * for a redeem). Buying again reopens it (closedAt = 0); realized PnL and lifetime bought carry on.
 *
 * Idempotence. The projector applies each seq once (its cursor commits with the views). On top of that
 * every position records the seq of the last event it applied and skips anything at or below it, market
 * facts likewise, and trade rows are keyed by seq, so applying an event twice changes nothing even
 * without the cursor.
 *
 * Change feed. Queries cache decoded rows in memory (a 5,000-row wallet must not be decoded per request);
 * `walletViewChanges(views)` tells them which wallet's rows and whether any market's facts changed. It is
 * bumped synchronously in the same call that issues the writes, so a cache can never serve a wallet's
 * rows from before a write it could already read through the ViewStore overlay.
 */
import type { FillEvent, JournalEvent, SideName, TradeEvent } from '../domain/events.ts';
import { UNITS, UNITS_PER_PIP } from '../domain/units.ts';
import { MAKER_ROLE, TAKER_ROLE, walletViewKeys, type Key } from '../journal/keys.ts';
import type { Projection } from './projector.ts';

export const POSITIONS_PROJECTION = 'wallet-positions';
export const TRADES_PROJECTION = 'wallet-trades';

/** Split and merge count as trades at 0.5 (prices and averages inside positions are micro-USDC per token). */
const HALF_MICRO = UNITS / 2;

export interface PositionState {
  /** Journal seq of the last event applied to this position. */
  seq: number;
  /** Tokens held, units. */
  size: number;
  /** Weighted average buy price, micro-USDC per token, truncated at each buy. */
  avg: number;
  /** Lifetime tokens bought, units. */
  bought: number;
  /** Realized PnL, micro-USDC (signed). */
  realized: number;
  /** First and last activity, ms since the epoch (journal time). */
  first: number;
  last: number;
  /** When the size last returned to zero (ms), 0 while open. */
  closedAt: number;
  /** Price of the event that closed it, micro-USDC; 0 while open. */
  closePrice: number;
}

export interface MarketFacts {
  seq: number;
  tokenIds: [string, string];
  negRisk: boolean;
  /** -1 until resolved, then the winning outcome. */
  winner: -1 | 0 | 1;
}

export const SIDE_BUY = 0;
export const SIDE_SELL = 1;
/**
 * A trade row's index value: side code, size units, usdc units (+ condition id on the per-wallet index; on
 * every index for a deferred fill, followed by the fill's seq, the row being keyed by its MINED move).
 */
export type TradeEntry = [side: number, size: number, usdc: number, conditionId?: string, fillSeq?: number];

/** Reads a committed fill by its seq (the fills table): what a deferred fill's MINED move applies. */
export type FillReader = (seq: number) => FillEvent | undefined;

function minedFill(fills: FillReader | undefined, e: TradeEvent): FillEvent {
  const f = fills?.(e.fillSeq);
  if (f === undefined) throw new Error(`journal seq ${e.seq}: MINED trade of fill ${e.fillSeq}, which ${fills === undefined ? 'no fill reader was given to read' : 'the fills table does not hold'}`);
  return f;
}

/** What the projections write through: the ViewStore in the app, a plain map in bulk loaders. */
export interface ViewWriter {
  get<T>(key: Key): T | undefined;
  put(key: Key, value: unknown): void;
}

// ---- change feed ----------------------------------------------------------------------------------

/** Versions of the projected rows, for in-memory caches of the queries (same process, same ViewStore). */
export class WalletViewChanges {
  private readonly wallets = new Map<string, number>();
  private counter = 0;
  /** Bumped whenever any market's facts change. */
  markets = 0;

  /** A number that changes whenever the wallet's positions change (never reused). */
  walletVersion(wallet: string): number {
    return this.wallets.get(wallet) ?? 0;
  }

  touchWallet(wallet: string): void {
    this.wallets.set(wallet, ++this.counter);
  }

  touchMarkets(): void {
    this.markets++;
  }
}

const changeFeeds = new WeakMap<object, WalletViewChanges>();

/** The change feed of the wallet views written through `views` (one per ViewStore). */
export function walletViewChanges(views: object): WalletViewChanges {
  let c = changeFeeds.get(views);
  if (c === undefined) {
    c = new WalletViewChanges();
    changeFeeds.set(views, c);
  }
  return c;
}

// ---- position arithmetic --------------------------------------------------------------------------

export function emptyPosition(ts: number): PositionState {
  return { seq: 0, size: 0, avg: 0, bought: 0, realized: 0, first: ts, last: ts, closedAt: 0, closePrice: 0 };
}

/** floor((avg * size + price * q) / (size + q)) exactly; the products pass 2^53 for large holdings. */
function weightedAverage(avg: number, size: number, price: number, q: number): number {
  const num = avg * size + price * q;
  if (Number.isSafeInteger(avg * size) && Number.isSafeInteger(price * q) && Number.isSafeInteger(num)) {
    // Below 2^53 the quotient of two exact integers is within half an ulp, never across an integer.
    return Math.floor(num / (size + q));
  }
  return Number((BigInt(avg) * BigInt(size) + BigInt(price) * BigInt(q)) / BigInt(size + q));
}

/** trunc(q * diff / 10^6) exactly (diff may be negative). */
function realizedOf(q: number, diff: number): number {
  const p = q * diff;
  if (Number.isSafeInteger(p)) return Math.trunc(p / UNITS);
  return Number((BigInt(q) * BigInt(diff)) / BigInt(UNITS));
}

/** Applies a buy of `q` units at `price` micro-USDC to `s` (mutates). */
export function applyBuy(s: PositionState, q: number, price: number, ts: number): void {
  if (q <= 0) return;
  s.avg = weightedAverage(s.avg, s.size, price, q);
  s.size += q;
  s.bought += q;
  s.last = ts;
  s.closedAt = 0;
  s.closePrice = 0;
}

/** Applies a sale of `q` units at `price` micro-USDC to `s` (mutates); only tracked holdings realize PnL. */
export function applySell(s: PositionState, q: number, price: number, ts: number): void {
  const sold = Math.min(q, s.size);
  s.last = ts;
  if (sold <= 0) return;
  s.realized += realizedOf(sold, price - s.avg);
  s.size -= sold;
  if (s.size === 0) {
    s.closedAt = ts;
    s.closePrice = price;
  }
}

// ---- the projections --------------------------------------------------------------------------------

export class WalletPositionsProjection implements Projection {
  readonly name = POSITIONS_PROJECTION;
  private readonly changes: WalletViewChanges;

  constructor(
    private readonly views: ViewWriter,
    changes?: WalletViewChanges,
    private readonly fills?: FillReader,
  ) {
    this.changes = changes ?? walletViewChanges(views);
  }

  apply(e: JournalEvent): void {
    switch (e.type) {
      case 'market': {
        const key = walletViewKeys.market(e.conditionId);
        const old = this.views.get<MarketFacts>(key);
        if (old !== undefined && old.seq >= e.seq) return;
        this.views.put(key, { seq: e.seq, tokenIds: [e.tokenIds[0], e.tokenIds[1]], negRisk: e.negRisk, winner: old?.winner ?? -1 } satisfies MarketFacts);
        this.changes.touchMarkets();
        return;
      }
      case 'resolve': {
        const key = walletViewKeys.market(e.conditionId);
        const old = this.views.get<MarketFacts>(key);
        if (old !== undefined && old.seq >= e.seq) return;
        const facts: MarketFacts = { seq: e.seq, tokenIds: [e.tokenIds[0], e.tokenIds[1]], negRisk: old?.negRisk ?? false, winner: e.winningOutcome };
        this.views.put(key, facts);
        this.changes.touchMarkets();
        return;
      }
      case 'fill':
        if (e.deferred !== true) this.applyFill(e, e.seq, e.ts);
        return;
      case 'trade':
        if (e.status === 'MINED') this.applyFill(minedFill(this.fills, e), e.seq, e.ts);
        return;
      case 'split':
        for (const o of [0, 1] as const) this.update(e.wallet, e.conditionId, o, e.seq, e.ts, (s) => applyBuy(s, e.amount, HALF_MICRO, e.ts));
        return;
      case 'merge':
        for (const o of [0, 1] as const) this.update(e.wallet, e.conditionId, o, e.seq, e.ts, (s) => applySell(s, e.amount, HALF_MICRO, e.ts));
        return;
      case 'credit':
        // An admin credit is a buy of the credited outcome at the price it names; the house's half is no position.
        this.update(e.wallet, e.conditionId, e.outcome, e.seq, e.ts, (s) => applyBuy(s, e.amount, e.pricePips * UNITS_PER_PIP, e.ts));
        return;
      case 'redeem':
        for (const o of [0, 1] as const) {
          const q = e.burned[o];
          if (q > 0) this.update(e.wallet, e.conditionId, o, e.seq, e.ts, (s) => applySell(s, q, o === e.winningOutcome ? UNITS : 0, e.ts));
        }
        return;
      default:
        return;
    }
  }

  /** Both parties of a fill, as an event at `seq` and time `ts` (the fill's own, or its MINED move's). */
  private applyFill(f: FillEvent, seq: number, ts: number): void {
    if (f.takerWallet.toLowerCase() === f.makerWallet.toLowerCase() && f.takerOutcome === f.makerOutcome) {
      // Both sides on one position (a wallet trading with itself): one update, or the seq guard would
      // drop the second side.
      this.update(f.takerWallet, f.conditionId, f.takerOutcome, seq, ts, (s) => {
        this.side(s, f, f.takerSide, f.takerPricePips, ts);
        this.side(s, f, f.makerSide, f.makerPricePips, ts);
      });
      return;
    }
    this.update(f.takerWallet, f.conditionId, f.takerOutcome, seq, ts, (s) => this.side(s, f, f.takerSide, f.takerPricePips, ts));
    this.update(f.makerWallet, f.conditionId, f.makerOutcome, seq, ts, (s) => this.side(s, f, f.makerSide, f.makerPricePips, ts));
  }

  private side(s: PositionState, f: FillEvent, side: SideName, pricePips: number, ts: number): void {
    const price = pricePips * UNITS_PER_PIP;
    if (side === 'BUY') applyBuy(s, f.size, price, ts);
    else applySell(s, f.size, price, ts);
  }

  private update(walletRaw: string, conditionId: string, outcome: number, seq: number, ts: number, fn: (s: PositionState) => void): void {
    const wallet = walletRaw.toLowerCase();
    const key = walletViewKeys.position(wallet, conditionId, outcome);
    const old = this.views.get<PositionState>(key);
    if (old !== undefined && old.seq >= seq) return;
    const s: PositionState = old === undefined ? emptyPosition(ts) : { ...old };
    fn(s);
    // A sale of tokens never tracked here creates no row: there is nothing to show or close.
    if (old === undefined && s.size === 0 && s.bought === 0) return;
    s.seq = seq;
    this.views.put(key, s);
    this.changes.touchWallet(wallet);
  }
}

export class WalletTradesProjection implements Projection {
  readonly name = TRADES_PROJECTION;

  constructor(
    private readonly views: ViewWriter,
    private readonly fills?: FillReader,
  ) {}

  apply(e: JournalEvent): void {
    if (e.type === 'fill') {
      if (e.deferred === true) {
        this.views.put(walletViewKeys.deferredTrade(e.takerWallet.toLowerCase(), e.seq), 0);
        this.views.put(walletViewKeys.deferredTrade(e.makerWallet.toLowerCase(), e.seq), 0);
        return;
      }
      this.row(e, e.seq, TAKER_ROLE, e.takerWallet, e.takerSide, e.takerUsdc);
      this.row(e, e.seq, MAKER_ROLE, e.makerWallet, e.makerSide, e.makerUsdc);
    } else if (e.type === 'trade' && e.status === 'MINED') {
      const f = minedFill(this.fills, e);
      this.row(f, e.seq, TAKER_ROLE, f.takerWallet, f.takerSide, f.takerUsdc);
      this.row(f, e.seq, MAKER_ROLE, f.makerWallet, f.makerSide, f.makerUsdc);
    }
  }

  /** One party's rows under `seq`: the fill's own, or (deferred) its MINED move's, naming the fill. */
  private row(f: FillEvent, seq: number, role: number, wallet: string, side: SideName, usdc: number): void {
    const s = side === 'BUY' ? SIDE_BUY : SIDE_SELL;
    if (seq === f.seq) {
      this.views.put(walletViewKeys.tradeByWallet(wallet.toLowerCase(), role, seq), [s, f.size, usdc, f.conditionId] satisfies TradeEntry);
      this.views.put(walletViewKeys.tradeByMarket(f.conditionId, role, seq), [s, f.size, usdc] satisfies TradeEntry);
      this.views.put(walletViewKeys.tradeAll(role, seq), [s, f.size, usdc] satisfies TradeEntry);
      return;
    }
    const entry: TradeEntry = [s, f.size, usdc, f.conditionId, f.seq];
    this.views.put(walletViewKeys.tradeByWallet(wallet.toLowerCase(), role, seq), entry);
    this.views.put(walletViewKeys.tradeByMarket(f.conditionId, role, seq), entry);
    this.views.put(walletViewKeys.tradeAll(role, seq), entry);
  }
}

/** `fills` reads a committed fill (the fills table): a deferred fill's MINED move needs it. */
export function walletProjections(views: ViewWriter, fills?: FillReader): Projection[] {
  return [new WalletPositionsProjection(views, undefined, fills), new WalletTradesProjection(views, fills)];
}
