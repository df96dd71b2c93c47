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
 * time with no traffic, by the shard's clock, and reports them as a CANCELED group closed by an OP_EXPIRE
 * RESULT. A command can only make the earliest expiry earlier (a new GTD order) or later (fills, cancels),
 * so the timer is moved forward on new GTD orders and otherwise may fire early, find nothing due and re-arm.
 * The shard's clock is the system clock until an OP_TIME says otherwise (the sandbox's test clock): running
 * at an offset from it, or frozen, when no timer runs and only an OP_TIME expires orders, second by second
 * up to the second it names, one OP_EXPIRE group per second, so the main thread journals each at its time.
 *
 * Snapshots: a command that may change a market's book marks it dirty. A dirty market is published (the
 * /book bodies of both tokens, serialized with their SHA-1 hash by book-json.ts, and a version that
 * increases per token) at most every `snapshotIntervalMs`, busy or idle: at the end of a drain when its
 * interval has passed, else by a timer armed for the earliest due market. So a market taking hundreds of
 * orders a second costs one serialization per interval, not one per order, and a publication only ever
 * happens between commands, so /book never shows a half-applied one. With an infinite interval a shard
 * publishes only when asked (OP_SNAPSHOT): the service runs so, as it serves books from the committed ones.
 * Each publication carries `resultSeq`, the number of RESULT records written before it was built, so the
 * main thread knows exactly which of the results it has applied a snapshot reflects (snapshots.ts
 * `stale`). OP_SNAPSHOT publishes every dirty market at once and answers even when nothing was dirty:
 * readers that must see their own writes ask for it (queries/market-data.ts `ensureSnapshots`); listeners
 * that sample prices take the coalesced cadence.
 *
 * Books are created with minSizeUnits 0: the sequencer enforces the minimum at acceptance, and a
 * partially filled order below the minimum must still be restorable after a restart.
 *
 * Any unexpected throw stops the shard: it writes R_SHARD_ERROR, posts the error and processes nothing
 * more. The engine then stops accepting orders rather than trading on a book in an unknown state.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { CancelReason, MatchCode, Tif, type Cancel, type EventSink, type Fill, type MarketParams, type MatchingBook, type PlaceCommand } from '../book/api.ts';
import { loadBookFactory } from './book-factory.ts';
import { bookBodies, bookFrame, type BookFrame } from './book-json.ts';
import {
  F_OP,
  OP_CANCEL,
  OP_CANCEL_ALL_MARKET,
  OP_EXPIRE,
  OP_PLACE,
  OP_REGISTER_MARKET,
  OP_SNAPSHOT,
  OP_STOP,
  OP_RESET,
  OP_TIME,
  decodeCancel,
  decodeCancelAllMarket,
  decodePlace,
  decodeRegister,
  decodeSnapshot,
  decodeStop,
  decodeTime,
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
  /** The constant parts of its /book bodies (rebuilt on every REGISTER). */
  frame: BookFrame;
  /** Changed since its last snapshot. */
  dirty: boolean;
  /** Date.now() of its last publication; 0 = never published. */
  publishedAt: number;
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
/** RESULT records written so far: tells the main thread which results a publication reflects. */
let resultSeq = 0;

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
  resultSeq++;
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

/** The shard's clock (OP_TIME): frozen at `frozenAtMs`, else the system clock plus `offsetMs`. */
const time = { frozen: data.time?.frozen ?? false, offsetMs: data.time?.offsetMs ?? 0, frozenAtMs: data.time?.atMs ?? 0 };
const shardNow = () => (time.frozen ? time.frozenAtMs : Date.now() + time.offsetMs);

function armAt(sec: number): void {
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  timerAt = sec;
  // Frozen, nothing falls due by itself: the OP_TIME that moves the clock expires what it passes.
  if (sec === 0 || stopped || time.frozen) return;
  const delay = Math.min(Math.max(0, sec * 1000 - shardNow()), 2 ** 31 - 1);
  timer = setTimeout(onExpiryTimer, delay);
}

/** Earliest expiry among the books (unix seconds), 0 = none. */
function nextExpiry(): number {
  let min = 0;
  for (const m of markets.values()) {
    const e = m.book.nextExpiry();
    if (e > 0 && (min === 0 || e < min)) min = e;
  }
  return min;
}

function rearm(): void {
  armAt(nextExpiry());
}

/** Expires every order due by `sec` as one OP_EXPIRE group stamped `sec`; returns how many. */
function expireAt(sec: number): number {
  let n = 0;
  for (const m of markets.values()) {
    const e = m.book.nextExpiry();
    if (e === 0 || e > sec) continue;
    current = m;
    const k = m.book.expire(sec, sink);
    if (k > 0) markDirty(m);
    n += k;
  }
  if (n > 0) {
    writeResult(OP_EXPIRE, sec, MatchCode.OK, n, 0, 0);
    results.publish();
  }
  return n;
}

function onExpiryTimer(): void {
  timer = undefined;
  timerAt = 0;
  guarded(() => {
    expireAt(Math.floor(shardNow() / 1000));
    rearm();
    publishSnapshots(false);
  });
}

/** OP_TIME: the clock the shard follows from now on, after expiring, second by second, what falls due by `untilSec`. */
function setTime(off: number): void {
  const t = decodeTime(cw, off);
  time.frozen = t.frozen;
  time.offsetMs = t.offsetMs;
  time.frozenAtMs = t.atMs;
  for (let s = nextExpiry(); s > 0 && s <= t.untilSec; s = nextExpiry()) expireAt(s);
  writeResult(OP_TIME, t.reqId, MatchCode.OK, 0, nextExpiry(), 0);
  rearm();
}

/** OP_RESET: the shard as its thread started, on the clock the record carries (a sandbox revert, protocol.ts). */
function reset(off: number): void {
  const t = decodeTime(cw, off);
  clearTimers();
  timerAt = 0;
  snapshotTimerAt = 0;
  markets.clear();
  dirtyMarkets.length = 0;
  current = undefined;
  time.frozen = t.frozen;
  time.offsetMs = t.offsetMs;
  time.frozenAtMs = t.atMs;
  // The engine that sent it counts RESULTs from this one on, as from a new thread's first (snapshots.ts `stale`).
  resultSeq = 0;
  writeResult(OP_RESET, t.reqId, MatchCode.OK, 0, 0, 0);
}

// ---- snapshots -----------------------------------------------------------------------------------------

const intervalMs = data.snapshotIntervalMs;
let snapshotTimer: NodeJS.Timeout | undefined;
/** Date.now() the snapshot timer is armed for; 0 = not armed. */
let snapshotTimerAt = 0;

function frameOf(meta: MarketMeta, params: MarketParams): BookFrame {
  return bookFrame({ conditionId: meta.conditionId, tokenIds: meta.tokenIds, negRisk: meta.negRisk, minSizeUnits: params.minSizeUnits, tickPips: params.tickPips });
}

/**
 * Publishes the dirty markets whose interval has passed (every dirty market when `all`) and arms the timer
 * for the others. `reqId` answers an OP_SNAPSHOT: then a message goes out even with nothing to publish, so
 * the requester learns that what it already received is current. Allocates: the bodies (publication only).
 */
function publishSnapshots(all: boolean, reqId?: number): void {
  if (dirtyMarkets.length === 0 && reqId === undefined) return;
  // Only asked-for publications (an infinite interval): a dirty market waits for the next OP_SNAPSHOT.
  if (!all && intervalMs === Infinity) return;
  const now = Date.now();
  const nowSec = Math.floor(now / 1000);
  const items: SnapshotItem[] = [];
  let kept = 0;
  let nextDue = Infinity;
  for (let i = 0; i < dirtyMarkets.length; i++) {
    const m = dirtyMarkets[i];
    const due = m.publishedAt + intervalMs;
    if (!all && due > now) {
      dirtyMarkets[kept++] = m;
      if (due < nextDue) nextDue = due;
      continue;
    }
    m.dirty = false;
    m.publishedAt = now;
    const json = bookBodies(m.frame, m.book.depth(0), m.lastTradePips, nowSec);
    items.push({ tokenId: m.meta.tokenIds[0], version: ++m.versions[0], json: json[0] }, { tokenId: m.meta.tokenIds[1], version: ++m.versions[1], json: json[1] });
  }
  dirtyMarkets.length = kept;
  if (items.length > 0 || reqId !== undefined) post({ type: 'snapshots', items, resultSeq, complete: kept === 0, reqId });
  if (kept > 0) armSnapshotTimer(nextDue);
}

function armSnapshotTimer(at: number): void {
  if (snapshotTimer !== undefined) {
    if (snapshotTimerAt <= at) return;
    clearTimeout(snapshotTimer);
  }
  snapshotTimerAt = at;
  snapshotTimer = setTimeout(onSnapshotTimer, Math.max(0, at - Date.now()));
}

function onSnapshotTimer(): void {
  snapshotTimer = undefined;
  snapshotTimerAt = 0;
  guarded(() => publishSnapshots(false));
}

function clearTimers(): void {
  if (timer !== undefined) clearTimeout(timer);
  if (snapshotTimer !== undefined) clearTimeout(snapshotTimer);
  timer = undefined;
  snapshotTimer = undefined;
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
    const nm: ShardMarket = {
      id: r.marketId,
      book: createBook(bookParams),
      params,
      meta,
      frame: frameOf(meta, params),
      dirty: false,
      publishedAt: 0,
      versions: [0, 0],
      lastTradePips: [...meta.lastTradePips],
    };
    markets.set(nm.id, nm);
    markDirty(nm);
  } else {
    current = m;
    if (m.params.tickPips !== params.tickPips) m.book = rebuild(m, bookParams);
    m.params = params;
    m.meta = { ...meta, lastTradePips: m.lastTradePips };
    m.frame = frameOf(m.meta, params);
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
      publishSnapshots(true, s.reqId);
      writeResult(OP_SNAPSHOT, s.reqId, MatchCode.OK, 0, 0, m.id);
      return;
    }
    case OP_TIME:
      setTime(off);
      return;
    case OP_RESET:
      reset(off);
      return;
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
    clearTimers();
    const off = results.tryClaim();
    if (off >= 0) encodeShardError(rw, off, 5002);
    results.publish();
    const err = e instanceof Error ? e : new Error(String(e));
    post({ type: 'fatal', shard: data.shard, message: err.message, stack: err.stack });
  }
}

/** Commands applied per drain before the worker looks at its timers and snapshots again. */
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
      publishSnapshots(false);
    });
    // A shard that always has work would never return to the event loop and its GTD timer would starve.
    if (Date.now() - lastYield >= YIELD_EVERY_MS) {
      await new Promise((r) => setImmediate(r));
      lastYield = Date.now();
    }
  }
  clearTimers();
  data.metaPort.close();
  port.off('message', keepAlive);
  port.unref();
}

await run();
