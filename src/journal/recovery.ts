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
 * From a checkpoint (checkpoints.ts: the replay's state at a seq C, itself proven this way when it was
 * written) the replay starts at C + 1, and the tables are read without the history: balances and markets
 * whole, the order and trade rows of what was open or settling at C and every row keyed after C (orders.ts
 * openOrdersOf). verifyStore takes the newest checkpoint that proves the tables, then older ones, then the
 * whole journal while retention has pruned nothing of it; never a state the journal does not prove.
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
import { CheckpointError, type Checkpoint, type CheckpointEntry, type CheckpointState } from './checkpoints/checkpoints.ts';
import type { Store } from './env.ts';
import { readFillsFrom } from './codecs/fill-codec.ts';
import { USDC_ASSET, engineMetaKeys, metaKeys } from './keys.ts';
import { ORDER_RECORD_KIND, decodeOrderEvent, journalEventOf, orderRecordHead } from './codecs/order-codec.ts';
import { openOrdersOf } from './orders.ts';
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

/**
 * Where a proof from a checkpoint needs the tables read (orders.ts openOrdersOf, trades.ts unsettledTrades):
 * the rows that can be open or settling without reading every order and trade ever.
 */
export interface TablesSince {
  seq: number;
  open: readonly number[];
  settling: readonly number[];
}

/** Allocates: reads the engine tables (start-up only); with `since`, the order and trade rows it names. */
export function loadMaterialized(store: Store, orderEvents?: ReadonlyMap<number, OrderAcceptedEvent>, since?: TablesSince): MaterializedState {
  const lastSeq = (store.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
  const netDeposits = (store.meta.get(engineMetaKeys.netDeposits) as number | undefined) ?? 0;
  const markets: MarketRow[] = [];
  for (const { value } of store.engineMarkets.getRange({})) markets.push(value as MarketRow);
  markets.sort((a, b) => a.marketId - b.marketId);
  const balances: MaterializedState['balances'] = [];
  for (const { key, value } of store.balances.getRange({})) {
    balances.push({ wallet: String(key[0]), asset: String(key[1]), held: value as number });
  }
  const openOrders = openOrdersOf(store, orderEvents, since);
  return { lastSeq, netDeposits, markets, balances, openOrders, trades: unsettledTrades(store, since) };
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

export interface VerifiedStore {
  materialized: MaterializedState;
  hash: string;
  /** Journal events replayed (after the checkpoint, when one was used). */
  events: number;
  lastTrades: Map<string, LastTrade>;
  /** The checkpoint the proof started from; undefined: the journal's first event. */
  from?: CheckpointEntry;
  /** The proven state at materialized.lastSeq, as a checkpoint stores it. Allocates. */
  proven(): CheckpointState;
}

/** Where verifyStore finds checkpoints (checkpoints.ts CheckpointStore). */
export interface CheckpointSource {
  list(): CheckpointEntry[];
  load(e: CheckpointEntry): Checkpoint;
}

export interface VerifyOptions {
  checkpoints?: CheckpointSource;
  /** Told of each checkpoint that could not be used, and why (the proof then tries the next older one). */
  skipped?: (e: CheckpointEntry, why: string) => void;
}

/**
 * Loads the tables and proves them against the journal, starting from the newest checkpoint that proves
 * them (checkpoints.ts), else from the journal's first event while the journal still holds it. A
 * checkpoint is passed over when it cannot be read (damaged, another format), was taken from another store,
 * stands beyond the journal's end or before what retention pruned, or does not prove the tables (its
 * replay fails or the state hashes differ): the next older one is tried. Throws RecoveryError with a clear
 * message when no path proves the tables: the engine must not start on such a store.
 */
export function verifyStore(store: Store, opts: VerifyOptions = {}): VerifiedStore {
  const lastSeq = (store.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
  const prunedTo = (store.meta.get(metaKeys.journalPrunedTo) as number | undefined) ?? 0;
  const storeId = (store.meta.get(metaKeys.tradeIdPrefix) as string | undefined) ?? '';
  const failures: string[] = [];
  for (const entry of opts.checkpoints?.list() ?? []) {
    let why: string | undefined;
    try {
      if (entry.seq > lastSeq) why = `it stands at seq ${entry.seq}, beyond the journal's end (${lastSeq})`;
      else if (entry.seq < prunedTo) why = `it stands at seq ${entry.seq}, before what retention pruned (${prunedTo})`;
      else {
        const c = opts.checkpoints!.load(entry);
        if (c.header.store !== storeId) why = `it was taken from another store (${c.header.store.slice(0, 12)}…, this one ${storeId.slice(0, 12)}…)`;
        else return { ...proveFrom(store, { state: c.state, stateHash: c.header.stateHash }), from: entry };
      }
    } catch (e) {
      if (!(e instanceof RecoveryError || e instanceof CheckpointError)) throw e;
      why = e.message;
    }
    failures.push(`checkpoint ${entry.name} at seq ${entry.seq}: ${why}`);
    opts.skipped?.(entry, why);
  }
  if (prunedTo > 0) {
    throw new RecoveryError(`refusing to start: the journal was pruned up to seq ${prunedTo} and no checkpoint proves the tables${failures.length > 0 ? ` (${failures.join('; ')})` : ''}`);
  }
  try {
    return proveFrom(store, undefined);
  } catch (e) {
    if (e instanceof RecoveryError && failures.length > 0) throw new RecoveryError(`${e.message} (and no checkpoint proves the tables: ${failures.join('; ')})`);
    throw e;
  }
}

/** The proof itself: replay from `base` (or the journal's start), tables read as far as the replay needs. */
function proveFrom(store: Store, base: { state: CheckpointState; stateHash: string } | undefined): VerifiedStore {
  // The replay first: the tables' open orders join their state rows with the order events it decoded.
  const replay = replayJournal(store, base);
  const b = base?.state;
  const since = b && { seq: b.seq, open: b.open.map((o) => o[0]), settling: b.settling.map((t) => t[1].seq) };
  const materialized = loadMaterialized(store, replay.openEvents, since);
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
  return { materialized, hash: tablesHash, events: replay.events, lastTrades: replay.lastTrades, proven: replay.checkpoint };
}
