/**
 * Shard worker entry: a pure matcher for the markets the router gives it (shard-router.ts).
 *
 * Loop: wait for commands (Atomics.waitAsync, so the GTD timer and nothing else can still run), drain
 * every command available, apply each to its market's book and write the events it caused plus one RESULT
 * into the result ring (protocol.ts), publishing after each command so the sequencer can settle and
 * journal while the shard goes on. Events come out of the book into a sink that encodes them straight into
 * ring slots: nothing is dispatched from inside the match loop and nothing is allocated per event. A full
 * result ring blocks this thread (Atomics.wait) until the main thread drains it: backpressure, never loss.
 *
 * The shard knows no balances and no strings except those it needs for snapshots: the sequencer has
 * already reserved what every order can spend, so matching cannot overspend.
 *
 * GTD expiry: a timer armed at the earliest expiry among the books (book.nextExpiry()) expires orders on
 * time with no traffic, by the wall clock, and reports them as a CANCELED group closed by an OP_EXPIRE
 * RESULT. A command can only make the earliest expiry earlier (a new GTD order) or later (fills, cancels),
 * so the timer is moved forward on new GTD orders and otherwise may fire early, find nothing due and re-arm.
 *
 * Snapshots: after a drain, every market whose book changed gets new depth snapshots per token: the /book
 * body already serialized with its SHA-1 hash and a version that increases per token. They are posted when
 * the command ring is empty, or at most every `snapshotIntervalMs` while it is busy, so /book never shows a
 * half-applied command and a busy shard does not spend its time serializing.
 *
 * Books are created with minSizeUnits 0: the sequencer enforces the minimum at acceptance, and a
 * partially filled order below the minimum must still be restorable after a restart.
 *
 * Any unexpected throw stops the shard: it writes R_SHARD_ERROR, posts the error and processes nothing
 * more. The engine then stops accepting orders rather than trading on a book in an unknown state.
 */
import { createHash } from 'node:crypto';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { formatPips, formatUnits } from '../domain/units.ts';
import { CancelReason, MatchCode, Tif, type Cancel, type EventSink, type Fill, type MarketParams, type MatchingBook, type PlaceCommand } from './book/api.ts';
import { loadBookFactory } from './book-factory.ts';
import {
  F_OP,
  OP_CANCEL,
  OP_CANCEL_ALL_MARKET,
  OP_EXPIRE,
  OP_PLACE,
  OP_REGISTER_MARKET,
  OP_SNAPSHOT,
  OP_STOP,
  decodeCancel,
  decodeCancelAllMarket,
  decodePlace,
  decodeRegister,
  decodeSnapshot,
  decodeStop,
  encodeCanceled,
  encodeFill,
  encodeResult,
  encodeShardError,
  type MarketMeta,
  type ResultRecord,
  type ShardWorkerData,
  type SnapshotItem,
  type WorkerMessage,
} from './protocol.ts';
import { Ring } from './ring.ts';

interface ShardMarket {
  id: number;
  book: MatchingBook;
  params: MarketParams;
  meta: MarketMeta;
  /** Changed since its last snapshot. */
  dirty: boolean;
  versions: [number, number];
  lastTradePips: [number, number];
}

const data = workerData as ShardWorkerData;
if (parentPort === null) throw new Error('worker.ts must run in a worker thread');
const port = parentPort;
const post = (m: WorkerMessage) => port.postMessage(m);

const createBook = await loadBookFactory({ module: data.bookModule, export: data.bookExport });
const commands = Ring.attach(data.commandRing);
const results = Ring.attach(data.resultRing);
const cw = commands.words;
const rw = results.words;

const markets = new Map<number, ShardMarket>();
const dirtyMarkets: ShardMarket[] = [];
let current: ShardMarket | undefined;
let stopped = false;
let lastPublish = 0;

const markDirty = (m: ShardMarket) => {
  if (!m.dirty) {
    m.dirty = true;
    dirtyMarkets.push(m);
  }
};

const sink: EventSink = {
  fill(f: Fill): void {
    const m = current as ShardMarket;
    encodeFill(rw, results.claimBlocking(), m.id, f);
    m.lastTradePips[f.takerOutcome] = f.takerPricePips;
    m.lastTradePips[f.makerOutcome] = f.makerPricePips;
  },
  cancel(c: Cancel): void {
    encodeCanceled(rw, results.claimBlocking(), (current as ShardMarket).id, c);
  },
};

const place: PlaceCommand = { handle: 0, owner: 0, outcome: 0, side: 0, tif: 0, postOnly: false, pricePips: 0, sizeUnits: 0, budgetUnits: 0, expiresAt: 0 };
const result: ResultRecord = { cmdOp: 0, id: 0, code: 0, filledUnits: 0, restingUnits: 0, marketId: 0 };

function writeResult(cmdOp: number, id: number, code: number, filled: number, resting: number, marketId: number): void {
  result.cmdOp = cmdOp;
  result.id = id;
  result.code = code;
  result.filledUnits = filled;
  result.restingUnits = resting;
  result.marketId = marketId;
  encodeResult(rw, results.claimBlocking(), result);
}

function marketOf(id: number): ShardMarket {
  const m = markets.get(id);
  if (m === undefined) throw new Error(`shard ${data.shard}: command for unknown market ${id}`);
  current = m;
  return m;
}

// ---- GTD expiry ----------------------------------------------------------------------------------------

let timer: NodeJS.Timeout | undefined;
/** Unix second the timer is armed for; 0 = not armed. */
let timerAt = 0;

function armAt(sec: number): void {
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  timerAt = sec;
  if (sec === 0 || stopped) return;
  const delay = Math.min(Math.max(0, sec * 1000 - Date.now()), 2 ** 31 - 1);
  timer = setTimeout(onExpiryTimer, delay);
}

function rearm(): void {
  let min = 0;
  for (const m of markets.values()) {
    const e = m.book.nextExpiry();
    if (e > 0 && (min === 0 || e < min)) min = e;
  }
  armAt(min);
}

function onExpiryTimer(): void {
  timer = undefined;
  timerAt = 0;
  guarded(() => {
    const nowSec = Math.floor(Date.now() / 1000);
    let n = 0;
    for (const m of markets.values()) {
      const e = m.book.nextExpiry();
      if (e === 0 || e > nowSec) continue;
      current = m;
      const k = m.book.expire(nowSec, sink);
      if (k > 0) markDirty(m);
      n += k;
    }
    if (n > 0) {
      writeResult(OP_EXPIRE, 0, MatchCode.OK, n, 0, 0);
      results.publish();
    }
    rearm();
    publishSnapshots();
  });
}

// ---- snapshots -----------------------------------------------------------------------------------------

/** Allocates: the depth and its JSON (publication only, never inside matching). */
function snapshotOf(m: ShardMarket, outcome: 0 | 1, nowSec: number): SnapshotItem {
  const depth = m.book.depth(outcome);
  const last = m.lastTradePips[outcome];
  const body = {
    market: m.meta.conditionId,
    asset_id: m.meta.tokenIds[outcome],
    timestamp: String(nowSec),
    hash: '',
    bids: depth.bids.map((l) => ({ price: formatPips(l.pricePips), size: formatUnits(l.sizeUnits) })),
    asks: depth.asks.map((l) => ({ price: formatPips(l.pricePips), size: formatUnits(l.sizeUnits) })),
    min_order_size: formatUnits(m.params.minSizeUnits),
    tick_size: formatPips(m.params.tickPips),
    neg_risk: m.meta.negRisk,
    last_trade_price: last > 0 ? formatPips(last) : '',
  };
  body.hash = createHash('sha1').update(JSON.stringify(body)).digest('hex');
  m.versions[outcome]++;
  return { tokenId: m.meta.tokenIds[outcome], version: m.versions[outcome], json: JSON.stringify(body) };
}

function publishSnapshots(reqId?: number): void {
  if (dirtyMarkets.length === 0) return;
  const nowSec = Math.floor(Date.now() / 1000);
  const items: SnapshotItem[] = [];
  for (const m of dirtyMarkets) {
    m.dirty = false;
    items.push(snapshotOf(m, 0, nowSec), snapshotOf(m, 1, nowSec));
  }
  dirtyMarkets.length = 0;
  lastPublish = Date.now();
  post(reqId === undefined ? { type: 'snapshots', items } : { type: 'snapshots', items, reqId });
}

// ---- commands ------------------------------------------------------------------------------------------

function register(off: number): void {
  const r = decodeRegister(cw, off);
  const received = receiveMessageOnPort(data.metaPort);
  const meta = received?.message as MarketMeta | undefined;
  if (meta === undefined || meta.marketId !== r.marketId) throw new Error(`shard ${data.shard}: REGISTER ${r.marketId} without its meta message`);
  const params: MarketParams = { tickPips: r.tickPips, minSizeUnits: r.minSizeUnits, makerFeeBps: r.makerFeeBps, takerFeeBps: r.takerFeeBps };
  const bookParams: MarketParams = { ...params, minSizeUnits: 0 };
  const m = markets.get(r.marketId);
  if (m === undefined) {
    const nm: ShardMarket = { id: r.marketId, book: createBook(bookParams), params, meta, dirty: false, versions: [0, 0], lastTradePips: [...meta.lastTradePips] };
    markets.set(nm.id, nm);
    markDirty(nm);
  } else {
    current = m;
    if (m.params.tickPips !== params.tickPips) m.book = rebuild(m, bookParams);
    m.params = params;
    m.meta = { ...meta, lastTradePips: m.lastTradePips };
    markDirty(m);
  }
  writeResult(OP_REGISTER_MARKET, r.reqId, MatchCode.OK, 0, 0, r.marketId);
}

/**
 * A tick change: the level array of the production book is sized by the tick, so the book is rebuilt
 * from its resting orders in priority order (bids then asks, FIFO kept). An order that is not on the new
 * tick cannot rest there and is canceled (reason USER): the sequencer releases it like any cancel.
 */
function rebuild(m: ShardMarket, params: MarketParams): MatchingBook {
  const book = createBook(params);
  for (const o of m.book.orders()) {
    place.handle = o.handle;
    place.owner = o.owner;
    place.outcome = o.outcome;
    place.side = o.side;
    place.tif = o.expiresAt > 0 ? Tif.GTD : Tif.GTC;
    place.postOnly = false;
    place.pricePips = o.pricePips;
    place.sizeUnits = o.remainingUnits;
    place.budgetUnits = 0;
    place.expiresAt = o.expiresAt;
    const r = book.place(place, sink);
    if (r.code !== MatchCode.OK || r.filledUnits !== 0) {
      if (r.filledUnits !== 0) throw new Error(`shard ${data.shard}: rebuilding market ${m.id} crossed at handle ${o.handle}`);
      sink.cancel({ handle: o.handle, owner: o.owner, outcome: o.outcome, side: o.side, pricePips: o.pricePips, remainingUnits: o.remainingUnits, reason: CancelReason.USER });
    }
  }
  return book;
}

function apply(off: number): void {
  const op = cw[off + F_OP];
  switch (op) {
    case OP_PLACE: {
      const m = marketOf(decodePlace(cw, off, place));
      const r = m.book.place(place, sink);
      writeResult(OP_PLACE, place.handle, r.code, r.filledUnits, r.restingUnits, m.id);
      markDirty(m);
      if (place.tif === Tif.GTD && r.restingUnits > 0 && (timerAt === 0 || place.expiresAt < timerAt)) armAt(place.expiresAt);
      return;
    }
    case OP_CANCEL: {
      const c = decodeCancel(cw, off);
      const m = marketOf(c.marketId);
      const code = m.book.cancel(c.handle, sink);
      if (code === MatchCode.OK) markDirty(m);
      writeResult(OP_CANCEL, c.handle, code, 0, 0, m.id);
      return;
    }
    case OP_CANCEL_ALL_MARKET: {
      const c = decodeCancelAllMarket(cw, off);
      const m = marketOf(c.marketId);
      const n = m.book.cancelAll(c.reason, sink);
      markDirty(m);
      writeResult(OP_CANCEL_ALL_MARKET, c.reqId, MatchCode.OK, n, 0, m.id);
      return;
    }
    case OP_REGISTER_MARKET:
      register(off);
      return;
    case OP_SNAPSHOT: {
      const s = decodeSnapshot(cw, off);
      const m = marketOf(s.marketId);
      markDirty(m);
      publishSnapshots(s.reqId);
      writeResult(OP_SNAPSHOT, s.reqId, MatchCode.OK, 0, 0, m.id);
      return;
    }
    case OP_STOP: {
      const s = decodeStop(cw, off);
      stopped = true;
      writeResult(OP_STOP, s.reqId, MatchCode.OK, 0, 0, 0);
      return;
    }
    default:
      throw new Error(`shard ${data.shard}: unknown opcode ${op}`);
  }
}

function guarded(fn: () => void): void {
  if (stopped) return;
  try {
    fn();
  } catch (e) {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
    const off = results.tryClaim();
    if (off >= 0) encodeShardError(rw, off, 5002);
    results.publish();
    const err = e instanceof Error ? e : new Error(String(e));
    post({ type: 'fatal', shard: data.shard, message: err.message, stack: err.stack });
  }
}

/** Commands applied per drain before the worker looks at its timer and snapshots again. */
const MAX_BATCH = 1024;
const YIELD_EVERY_MS = 10;
let lastYield = Date.now();

/**
 * A pending Atomics.waitAsync does not keep a thread's event loop alive; an idle shard would simply end.
 * A message listener on the parent port (nothing is ever sent on it) holds the thread until STOP.
 */
const keepAlive = () => undefined;

async function run(): Promise<void> {
  port.on('message', keepAlive);
  post({ type: 'ready', shard: data.shard });
  while (!stopped) {
    const n = commands.available();
    if (n === 0) {
      await commands.waitForDataAsync();
      continue;
    }
    guarded(() => {
      const k = Math.min(n, MAX_BATCH);
      for (let i = 0; i < k && !stopped; i++) {
        apply(commands.consume());
        results.publish();
      }
      commands.release();
      if (commands.available() === 0 || Date.now() - lastPublish >= data.snapshotIntervalMs) publishSnapshots();
    });
    // A shard that always has work would never return to the event loop and its GTD timer would starve.
    if (Date.now() - lastYield >= YIELD_EVERY_MS) {
      await new Promise((r) => setImmediate(r));
      lastYield = Date.now();
    }
  }
  if (timer !== undefined) clearTimeout(timer);
  data.metaPort.close();
  port.off('message', keepAlive);
  port.unref();
}

await run();
