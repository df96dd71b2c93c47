/**
 * The journal's replay: the events of the journal in order (readJournal: the `journal` table and the `fills`
 * table merged by seq), and the state they add up to (replayJournal, replayEvents): balances, open orders,
 * market resolutions, net deposits and trades still settling, recomputed from the events alone, from the
 * first event or from a checkpoint's state. Start-up's proof compares it with the tables (recovery.ts);
 * projections catching up and the tools read the journal through readJournal.
 *
 * Every check throws RecoveryError naming the seq: a gap in the sequence (the first event must follow the
 * checkpoint), a negative balance, an event about an unknown order or market. Each means the journal, or
 * the checkpoint with it, is damaged. Separate from recovery.ts because it reads the journal and nothing
 * else, and it is used beyond start-up (archives, projections, tests).
 *
 * Imports domain/, the codecs, keys.ts, the checkpoint state's type and state-hash.ts; never the tables.
 */
import { FEE_WALLET, HOUSE_WALLET, type FillEvent, type JournalEvent, type OrderAcceptedEvent, type OrderStatusEvent, type TradeEvent, type TradeStatusName } from '../domain/events.ts';
import type { CheckpointState } from './checkpoints/checkpoints.ts';
import type { Store } from './env.ts';
import { readFillsFrom } from './codecs/fill-codec.ts';
import { USDC_ASSET } from './keys.ts';
import { ORDER_RECORD_KIND, decodeOrderEvent, journalEventOf, orderRecordHead } from './codecs/order-codec.ts';
import { balanceMapKey, hashState, type CanonicalState, type OpenOrderView } from './state-hash.ts';

export class RecoveryError extends Error {}

/**
 * Events of the journal from `fromSeq` on, in order, complete: the `journal` table (every event but
 * fills; order and status events as codecs/order-codec.ts / codecs/status-codec.ts records or, from older stores and
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
  /** The replay's state at lastSeq, as a checkpoint stores it (checkpoints.ts). Allocates. */
  checkpoint(): CheckpointState;
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
  netDeposits = 0;

  /** A replay that goes on from a checkpoint's state (empty: from the journal's start). */
  constructor(base?: CheckpointState) {
    if (base === undefined) return;
    this.netDeposits = base.netDeposits;
    for (const [w, a, held] of base.balances) this.balances.set(balanceMapKey(w, a), held);
    for (const [cid, resolved] of base.markets) this.markets.set(cid, resolved);
    for (const [tokenId, pricePips, side] of base.lastTrades) this.lastTrades.set(tokenId, { pricePips, side });
    for (const [status, fill] of base.settling) this.settling.set(fill.seq, { fill, status });
    for (const [seq, remaining, stored] of base.open) {
      if (stored instanceof Uint8Array && stored[0] === ORDER_RECORD_KIND) {
        const h = orderRecordHead(stored, seq);
        this.accept({ conditionId: h.conditionId, seq, orderId: h.orderId, remaining, wallet: h.wallet, event: stored });
        continue;
      }
      const e = journalEventOf(stored, seq);
      if (e.type !== 'order') throw new RecoveryError(`checkpoint: open order at seq ${seq} is a ${e.type} event`);
      this.accept({ conditionId: e.conditionId, seq, orderId: e.orderId, remaining, wallet: e.wallet, event: e });
    }
  }

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
  }

  /** The state the hash covers, as it stands. */
  canonical(): CanonicalState {
    const trades = new Map<number, TradeStatusName>();
    for (const [seq, t] of this.settling) trades.set(seq, t.status);
    const openOrders = [...this.open.values()].map(({ conditionId, seq, orderId, remaining }) => ({ conditionId, seq, orderId, remaining }));
    return { balances: this.balances, openOrders, markets: this.markets, netDeposits: this.netDeposits, trades };
  }

  result(lastSeq: number, events: number): ReplayResult {
    const openEvents = new Map<number, OrderAcceptedEvent>();
    for (const o of this.open.values()) openEvents.set(o.seq, o.event instanceof Uint8Array ? decodeOrderEvent(o.event, o.seq) : o.event);
    return { lastSeq, events, state: this.canonical(), lastTrades: this.lastTrades, openEvents, checkpoint: () => this.checkpoint(lastSeq) };
  }

  private checkpoint(seq: number): CheckpointState {
    const balances: CheckpointState['balances'] = [];
    for (const [k, held] of this.balances) {
      if (held === 0) continue;
      const at = k.indexOf('\u0000');
      balances.push([k.slice(0, at), k.slice(at + 1), held]);
    }
    const open: CheckpointState['open'] = [];
    // The event as the journal stores it: the record's bytes, or the object (encoded as msgpack either way).
    for (const o of this.open.values()) open.push([o.seq, o.remaining, o.event]);
    open.sort((a, b) => a[0] - b[0]);
    return {
      seq,
      netDeposits: this.netDeposits,
      balances,
      markets: [...this.markets],
      open,
      settling: [...this.settling.values()].map((t): [TradeStatusName, FillEvent] => [t.status, t.fill]),
      lastTrades: [...this.lastTrades].map(([tokenId, t]): [string, number, 'BUY' | 'SELL'] => [tokenId, t.pricePips, t.side]),
    };
  }
}


/**
 * Recomputes balances, open orders, market resolutions and net deposits from the journal alone: from its
 * first event, or from a checkpoint's state and the events after it. Throws RecoveryError on a gap in the
 * sequence (the first event must follow the checkpoint), a negative balance, or an event about an unknown
 * order or market: each means the journal, or the checkpoint with it, is damaged.
 */
export function replayJournal(store: Store, base?: { state: CheckpointState; stateHash: string }): ReplayResult {
  // Order records are read for the four fields the replay needs; only the orders left open are decoded whole.
  return replayEvents(journalEntries(store, (base?.state.seq ?? 0) + 1, true), base);
}

/**
 * The replay of `events` (consecutive seqs, from the checkpoint's seq + 1 or from 1): replayJournal's, for
 * events read elsewhere (journal archives, tools/journal-archive.ts). The same checks and errors.
 */
export function replayEvents(events: Iterable<JournalEvent | UndecodedOrder>, base?: { state: CheckpointState; stateHash: string }): ReplayResult {
  const replay = new Replay(base?.state);
  if (base !== undefined && hashState(replay.canonical()) !== base.stateHash) throw new RecoveryError(`checkpoint at seq ${base.state.seq}: its state does not reproduce its state hash`);
  let seq = base?.state.seq ?? 0;
  let count = 0;
  for (const e of events) {
    if (e.seq !== seq + 1) throw new RecoveryError(`journal gap: seq ${e.seq} follows ${seq}`);
    seq = e.seq;
    count++;
    replay.apply(e);
  }
  return replay.result(seq, count);
}
