/**
 * Start-up recovery and its proof.
 *
 * The engine restarts from the materialized tables, not from the journal: balances from `balances`
 * (integer units held, proceeds of unsettled trades included), markets from `engineMarkets`, trades still
 * settling from `trades` (trades.ts), open orders from `orders` (status LIVE, remaining = size - sizeMatched), re-placed into the books in sequence order (their original time priority) by the
 * engine without re-matching: the sequencer journals a command's effects only once the shard has finished
 * it, so the committed books were never crossed. Reservations are recomputed from the open orders.
 *
 * Before it trusts the tables, start-up checks them against the journal: `replayJournal` recomputes
 * balances, open orders and market resolutions from the events alone (seq 1 .. journalSeq, which must be
 * gapless), and the state hash of the replay must equal the state hash of the tables. A mismatch means the
 * store was damaged or written by a buggy build; start-up refuses with the first difference found.
 *
 * State hash: SHA-256 over sorted lines
 *   B <wallet> <asset> <held>                      every non-zero balance (asset 'USDC' or a token id)
 *   O <conditionId> <seq> <orderId> <remaining>    every open order, per market in priority (seq) order
 *   M <conditionId> <resolved>                      every market (-1 trading, else the winning outcome)
 *   T <fillSeq> <status>                            every trade still settling (MATCHED, RETRYING, MINED)
 *   N <deposits - withdrawals>
 * Engine.stateHash() computes the same lines from memory, so "hash before shutdown == hash after restart"
 * and "tables == journal" are both checkable.
 */
import { createHash } from 'node:crypto';
import { FEE_WALLET, HOUSE_WALLET, type FillEvent, type JournalEvent, type OrderAcceptedEvent, type OrderRecord, type OrderStatusEvent, type TradeEvent, type TradeStatusName } from '../domain/events.ts';
import type { Store } from './env.ts';
import { readFillsFrom } from './fill-codec.ts';
import { USDC_ASSET, engineMetaKeys, metaKeys } from './keys.ts';
import { OrderIndex } from './order-index.ts';
import { ORDER_RECORD_KIND, decodeOrderEvent, journalEventOf, orderRecordHead } from './order-codec.ts';
import { installOrderIndex, openOrdersOf } from './orders.ts';
import { unsettledTrades, type TradeState } from './trades.ts';
import type { MarketRow } from './writer.ts';

export class RecoveryError extends Error {}

export interface OpenOrderView {
  conditionId: string;
  seq: number;
  orderId: string;
  remaining: number;
}

/** The state the hash covers, whoever computed it. */
export interface CanonicalState {
  /** key `${wallet}\u0000${asset}` -> held units. */
  balances: Map<string, number>;
  openOrders: OpenOrderView[];
  /** conditionId -> resolved (-1 | 0 | 1). */
  markets: Map<string, number>;
  netDeposits: number;
  /** fill seq -> status of every trade still settling (MATCHED, RETRYING, MINED); absent = none. */
  trades?: Map<number, TradeStatusName>;
}

export const balanceMapKey = (wallet: string, asset: string) => wallet + '\u0000' + asset;

function canonicalLines(s: CanonicalState): string[] {
  const lines: string[] = [];
  for (const [k, held] of s.balances) {
    if (held === 0) continue;
    const [w, a] = k.split('\u0000');
    lines.push(`B ${w} ${a} ${held}`);
  }
  for (const o of s.openOrders) lines.push(`O ${o.conditionId} ${String(o.seq).padStart(16, '0')} ${o.orderId} ${o.remaining}`);
  for (const [cid, r] of s.markets) lines.push(`M ${cid} ${r}`);
  if (s.trades !== undefined) for (const [seq, status] of s.trades) lines.push(`T ${String(seq).padStart(16, '0')} ${status}`);
  lines.push(`N ${s.netDeposits}`);
  return lines.sort();
}

export function hashState(s: CanonicalState): string {
  const h = createHash('sha256');
  for (const line of canonicalLines(s)) h.update(line + '\n');
  return h.digest('hex');
}

/** First differing line of two states (for the refusal message); undefined when equal. */
export function diffStates(a: CanonicalState, b: CanonicalState): string | undefined {
  const la = new Set(canonicalLines(a));
  const lb = new Set(canonicalLines(b));
  for (const l of la) if (!lb.has(l)) return `tables have "${l}" which the journal does not`;
  for (const l of lb) if (!la.has(l)) return `journal has "${l}" which the tables do not`;
  return undefined;
}

// ---- the tables -----------------------------------------------------------------------------------------

export interface MaterializedState {
  lastSeq: number;
  netDeposits: number;
  markets: MarketRow[];
  balances: Array<{ wallet: string; asset: string; held: number }>;
  /** LIVE orders, oldest first. */
  openOrders: OrderRecord[];
  /** Trades still settling (trades.ts), by fill seq. */
  trades: Array<{ fillSeq: number } & TradeState>;
}

/** Allocates: reads every engine table (start-up only). */
export function loadMaterialized(store: Store, orderEvents?: ReadonlyMap<number, OrderAcceptedEvent>): MaterializedState {
  const lastSeq = (store.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
  const netDeposits = (store.meta.get(engineMetaKeys.netDeposits) as number | undefined) ?? 0;
  const markets: MarketRow[] = [];
  for (const { value } of store.engineMarkets.getRange({})) markets.push(value as MarketRow);
  markets.sort((a, b) => a.marketId - b.marketId);
  const balances: MaterializedState['balances'] = [];
  for (const { key, value } of store.balances.getRange({})) {
    balances.push({ wallet: String(key[0]), asset: String(key[1]), held: value as number });
  }
  const openOrders = openOrdersOf(store, orderEvents);
  return { lastSeq, netDeposits, markets, balances, openOrders, trades: unsettledTrades(store) };
}

export function canonicalOfTables(m: MaterializedState): CanonicalState {
  const balances = new Map<string, number>();
  for (const b of m.balances) balances.set(balanceMapKey(b.wallet, b.asset), b.held);
  return {
    balances,
    openOrders: m.openOrders.map((o) => ({ conditionId: o.conditionId, seq: o.seq, orderId: o.orderId, remaining: o.sizeUnits - o.sizeMatched })),
    markets: new Map(m.markets.map((r) => [r.conditionId, r.resolved])),
    netDeposits: m.netDeposits,
    trades: new Map(m.trades.map((t) => [t.fillSeq, t.status])),
  };
}

// ---- the journal ----------------------------------------------------------------------------------------

/**
 * Events of the journal from `fromSeq` on, in order, complete: the `journal` table (every event but
 * fills; order and status events as order-codec.ts / status-codec.ts records or, from older stores and
 * for events a record cannot hold, objects: journalEventOf) and the `fills` table merged by seq.
 * Start-up replay, projections catching up, tests.
 */
export function readJournal(store: Store, fromSeq = 1): Generator<JournalEvent> {
  return journalEntries(store, fromSeq, false) as Generator<JournalEvent>;
}

/**
 * An order record left undecoded (the replay's reading). Its bytes may be kept past the iteration:
 * lmdb-js decodes values with msgpackr's `copyBuffers`, so a msgpack bin comes out as a fresh copy, not a
 * view of a read buffer that the next read reuses. (If that changed, the restored open orders would
 * differ from the tables, and start-up's state hash check would refuse the store.)
 */
interface UndecodedOrder {
  type: 'order-record';
  seq: number;
  bytes: Uint8Array;
}

/** readJournal, with order records left undecoded when `lazyOrders`. */
function* journalEntries(store: Store, fromSeq: number, lazyOrders: boolean): Generator<JournalEvent | UndecodedOrder> {
  const events = store.journal.getRange({ start: fromSeq })[Symbol.iterator]();
  const fills = readFillsFrom(store.fills, fromSeq);
  let e = events.next();
  let f = fills.next();
  while (!e.done || !f.done) {
    if (f.done || (!e.done && e.value.key < f.value.seq)) {
      const v = e.value.value;
      yield lazyOrders && v instanceof Uint8Array && v[0] === ORDER_RECORD_KIND ? { type: 'order-record', seq: e.value.key, bytes: v } : journalEventOf(v, e.value.key);
      e = events.next();
    } else {
      yield f.value;
      f = fills.next();
    }
  }
}

export interface LastTrade {
  pricePips: number;
  side: 'BUY' | 'SELL';
}

export interface ReplayResult {
  lastSeq: number;
  events: number;
  state: CanonicalState;
  /** Price and aggressor side of each token's newest fill (GET /last-trade-price after a restart). */
  lastTrades: Map<string, LastTrade>;
  /** The `order` events of the orders the journal leaves open, by seq (loadMaterialized reuses them). */
  openEvents: Map<number, OrderAcceptedEvent>;
}

/** The side a fill's trade is reported with: MINT is a buy of both outcomes, MERGE a sale, else the taker's. */
export function lastTradeSide(f: { kind: string; takerSide: string }): 'BUY' | 'SELL' {
  if (f.kind === 'MINT') return 'BUY';
  if (f.kind === 'MERGE') return 'SELL';
  return f.takerSide as 'BUY' | 'SELL';
}

/** The moves a trade may make from each status (the platform's lifecycle; MATCHED is the fill). */
export const TRADE_MOVES: Readonly<Record<TradeStatusName, readonly TradeStatusName[]>> = {
  MATCHED: ['MINED', 'RETRYING'],
  RETRYING: ['MINED', 'FAILED'],
  MINED: ['CONFIRMED'],
  CONFIRMED: [],
  FAILED: [],
};

interface ReplayOrder extends OpenOrderView {
  wallet: string;
  /** The order's event: decoded (an object-form event), or its record's bytes, decoded if it stays open. */
  event: OrderAcceptedEvent | Uint8Array;
}

/**
 * The replay's state and one method per kind of event. Every check throws RecoveryError naming the seq:
 * a failed check means the journal itself is damaged.
 */
class Replay {
  readonly balances = new Map<string, number>();
  readonly open = new Map<string, ReplayOrder>();
  readonly markets = new Map<string, number>();
  readonly lastTrades = new Map<string, LastTrade>();
  /** Deferred fills whose trade is still settling, and where it stands. */
  readonly settling = new Map<number, { fill: FillEvent; status: TradeStatusName }>();
  /** Every order id at its seq: the store's id index (orders.ts), built here because the replay reads every event. */
  readonly ids = new OrderIndex();
  netDeposits = 0;

  apply(e: JournalEvent | UndecodedOrder): void {
    switch (e.type) {
      case 'market':
        if (!this.markets.has(e.conditionId)) this.markets.set(e.conditionId, -1);
        break;
      case 'order-record': {
        const h = orderRecordHead(e.bytes, e.seq);
        this.accept({ conditionId: h.conditionId, seq: e.seq, orderId: h.orderId, remaining: h.sizeUnits, wallet: h.wallet, event: e.bytes });
        break;
      }
      case 'order':
        this.accept({ conditionId: e.conditionId, seq: e.seq, orderId: e.orderId, remaining: e.sizeUnits, wallet: e.wallet, event: e });
        break;
      case 'fill':
        return this.fill(e);
      case 'trade':
        return this.trade(e);
      case 'status':
        return this.status(e);
      default:
        return this.move(e);
    }
  }

  private status(e: OrderStatusEvent): void {
    if (!this.open.has(e.orderId)) throw new RecoveryError(`journal seq ${e.seq}: status of order ${e.orderId} which is not open`);
    if (e.status !== 'LIVE') this.open.delete(e.orderId);
  }

  /** The events that only move balances (and the resolution, which moves none until redeemed). */
  private move(e: Exclude<JournalEvent, { type: 'market' | 'order' | 'fill' | 'trade' | 'status' }>): void {
    switch (e.type) {
      case 'deposit':
        this.add(e.wallet, USDC_ASSET, e.amount, e.seq);
        this.netDeposits += e.amount;
        break;
      case 'withdraw':
        this.add(e.wallet, USDC_ASSET, -e.amount, e.seq);
        this.netDeposits -= e.amount;
        break;
      case 'split':
        this.add(e.wallet, USDC_ASSET, -e.amount, e.seq);
        this.add(e.wallet, e.tokenIds[0], e.amount, e.seq);
        this.add(e.wallet, e.tokenIds[1], e.amount, e.seq);
        break;
      case 'merge':
        this.add(e.wallet, e.tokenIds[0], -e.amount, e.seq);
        this.add(e.wallet, e.tokenIds[1], -e.amount, e.seq);
        this.add(e.wallet, USDC_ASSET, e.amount, e.seq);
        break;
      case 'credit':
        this.add(e.wallet, e.tokenIds[e.outcome], e.amount, e.seq);
        this.add(HOUSE_WALLET, e.tokenIds[1 - e.outcome], e.amount, e.seq);
        this.netDeposits += e.amount;
        break;
      case 'resolve':
        if (!this.markets.has(e.conditionId)) throw new RecoveryError(`journal seq ${e.seq}: resolution of unknown market ${e.conditionId}`);
        this.markets.set(e.conditionId, e.winningOutcome);
        break;
      case 'redeem':
        this.add(e.wallet, e.tokenIds[0], -e.burned[0], e.seq);
        this.add(e.wallet, e.tokenIds[1], -e.burned[1], e.seq);
        this.add(e.wallet, USDC_ASSET, e.payout, e.seq);
        break;
      default:
        throw new RecoveryError(`journal seq ${(e as JournalEvent).seq}: unknown event type ${(e as { type: string }).type}`);
    }
  }

  private fill(e: FillEvent): void {
    this.fillMoves(e, 1, e.seq);
    this.reduce(e.takerOrderId, e.size, e.seq);
    this.reduce(e.makerOrderId, e.size, e.seq);
    const side = lastTradeSide(e);
    this.lastTrades.set(e.takerTokenId, { pricePips: e.takerPricePips, side });
    this.lastTrades.set(e.makerTokenId, { pricePips: e.makerPricePips, side });
    if (e.deferred === true) this.settling.set(e.seq, { fill: e, status: 'MATCHED' });
  }

  private trade(e: TradeEvent): void {
    const t = this.settling.get(e.fillSeq);
    if (t === undefined) throw new RecoveryError(`journal seq ${e.seq}: trade of fill ${e.fillSeq} which is not settling`);
    if (!TRADE_MOVES[t.status].includes(e.status)) throw new RecoveryError(`journal seq ${e.seq}: trade of fill ${e.fillSeq} moves from ${t.status} to ${e.status}`);
    t.status = e.status;
    // The reversal: each party gets back what it gave and loses what it received; the fee wallet its fees.
    if (e.status === 'FAILED') this.fillMoves(t.fill, -1, e.seq);
    if (e.status === 'CONFIRMED' || e.status === 'FAILED') this.settling.delete(e.fillSeq);
  }

  /** A fill's balance moves (sign 1), or their reversal (sign -1) when its trade fails. */
  private fillMoves(f: FillEvent, sign: 1 | -1, at: number): void {
    this.partyMoves(f, f.takerSide, f.takerWallet, f.takerTokenId, f.takerUsdc, f.takerFee, sign, at);
    this.partyMoves(f, f.makerSide, f.makerWallet, f.makerTokenId, f.makerUsdc, f.makerFee, sign, at);
    const fees = f.takerFee + f.makerFee;
    if (fees > 0) this.add(FEE_WALLET, USDC_ASSET, sign * fees, at);
  }

  // The credit before the debit on a reversal, the debit first on a fill: either order throws on the same
  // negative balance, and a throw ends the replay.
  private partyMoves(f: FillEvent, side: 'BUY' | 'SELL', wallet: string, tokenId: string, usdc: number, fee: number, sign: 1 | -1, at: number): void {
    if (side === 'BUY') {
      this.add(wallet, USDC_ASSET, -sign * (usdc + fee), at);
      this.add(wallet, tokenId, sign * f.size, at);
    } else {
      this.add(wallet, tokenId, -sign * f.size, at);
      this.add(wallet, USDC_ASSET, sign * (usdc - fee), at);
    }
  }

  private add(wallet: string, asset: string, delta: number, at: number): void {
    const k = balanceMapKey(wallet, asset);
    const v = (this.balances.get(k) ?? 0) + delta;
    if (v < 0) throw new RecoveryError(`journal seq ${at}: ${wallet} ${asset} would go negative (${v})`);
    this.balances.set(k, v);
  }

  private reduce(orderId: string, size: number, at: number): void {
    const o = this.open.get(orderId);
    if (o === undefined) throw new RecoveryError(`journal seq ${at}: fill of order ${orderId} which is not open`);
    o.remaining -= size;
    if (o.remaining < 0) throw new RecoveryError(`journal seq ${at}: order ${orderId} overfilled`);
  }

  private accept(o: ReplayOrder): void {
    if (this.open.has(o.orderId)) throw new RecoveryError(`journal seq ${o.seq}: order ${o.orderId} accepted twice`);
    this.open.set(o.orderId, o);
    this.ids.add(o.orderId, o.seq);
  }

  result(lastSeq: number, events: number): ReplayResult {
    const trades = new Map<number, TradeStatusName>();
    for (const [seq, t] of this.settling) trades.set(seq, t.status);
    const openOrders = [...this.open.values()].map(({ conditionId, seq, orderId, remaining }) => ({ conditionId, seq, orderId, remaining }));
    const openEvents = new Map<number, OrderAcceptedEvent>();
    for (const o of this.open.values()) openEvents.set(o.seq, o.event instanceof Uint8Array ? decodeOrderEvent(o.event, o.seq) : o.event);
    const state = { balances: this.balances, openOrders, markets: this.markets, netDeposits: this.netDeposits, trades };
    return { lastSeq, events, state, lastTrades: this.lastTrades, openEvents };
  }
}

/**
 * Recomputes balances, open orders, market resolutions and net deposits from the journal alone, and installs
 * the store's order-id index (orders.ts) from the order events it reads, unless the store has one.
 * Throws RecoveryError on a gap in the sequence, a negative balance, or an event about an unknown order or
 * market: each means the journal itself is damaged.
 */
export function replayJournal(store: Store): ReplayResult {
  const replay = new Replay();
  let seq = 0;
  let events = 0;
  // Order records are read for the four fields the replay needs; only the orders left open are decoded whole.
  for (const e of journalEntries(store, 1, true)) {
    if (e.seq !== seq + 1) throw new RecoveryError(`journal gap: seq ${e.seq} follows ${seq}`);
    seq = e.seq;
    events++;
    replay.apply(e);
  }
  installOrderIndex(store, replay.ids);
  return replay.result(seq, events);
}

export interface VerifiedStore {
  materialized: MaterializedState;
  hash: string;
  events: number;
  lastTrades: Map<string, LastTrade>;
}

/**
 * Loads the tables and proves them against the journal. Throws RecoveryError with a clear message when
 * they disagree: the engine must not start on such a store.
 */
export function verifyStore(store: Store): VerifiedStore {
  // The replay first: the tables' open orders join their state rows with the order events it decoded.
  const replay = replayJournal(store);
  const materialized = loadMaterialized(store, replay.openEvents);
  if (replay.lastSeq !== materialized.lastSeq) {
    throw new RecoveryError(`refusing to start: the journal ends at seq ${replay.lastSeq} but meta.journalSeq is ${materialized.lastSeq}`);
  }
  const tables = canonicalOfTables(materialized);
  const tablesHash = hashState(tables);
  const journalHash = hashState(replay.state);
  if (tablesHash !== journalHash) {
    throw new RecoveryError(
      `refusing to start: state hash of the tables (${tablesHash}) differs from the journal replay (${journalHash}); ${diffStates(tables, replay.state) ?? ''}`,
    );
  }
  return { materialized, hash: tablesHash, events: replay.events, lastTrades: replay.lastTrades };
}
