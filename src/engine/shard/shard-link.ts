/**
 * Room engine/shard/: the matching threads and the way to them: a shard worker (worker.ts, started by
 * engine/thread.ts), the threads with their rings (shard-threads.ts, ring.ts) and the rings' record layouts
 * (protocol.ts), the books a worker builds (book-factory.ts, book-json.ts), the sequencer's side of each
 * shard (this file), the shard clock (shard-clock.ts) and the published book snapshots (snapshots.ts).
 * Separate because it is the only code that crosses a thread: the worker imports book/ and this room alone,
 * never the ledger, the journal or edge/.
 *
 * The sequencer's side of the shards. Owns, per shard, while it holds the threads: the FIFO of commands sent
 * and not yet answered, the overflow queue, and the FILL/CANCELED records of the group whose RESULT has not
 * arrived. It alone writes the command rings and reads the result rings.
 *
 * Order. A shard's commands enter its ring in call order (none overtakes one waiting in overflow) and the
 * shard answers them in that order, so each RESULT belongs to the oldest command in flight on that shard; a
 * mismatch of op or id halts the engine. A command's group is handed on whole, with its RESULT (`answered`),
 * and a GTD expiry group, which no command caused, as `expired`; every RESULT is first shown to `result`.
 * The group array is reused: a consumer reads it during the call and keeps nothing.
 *
 * Backpressure. The main thread never blocks. When a command ring is full, commands wait in a bounded
 * per-shard queue (in order) while the link awaits Atomics.waitAsync on the ring's head; past the bound
 * place() and cancel() refuse (the caller answers PM_ERR_ENGINE_BUSY; counted in busyRejects). What the
 * engine itself must send (registration, resolution, snapshots, stop, restored orders) is forced past it.
 *
 * Batching. Commands claimed in one turn are published at its end, so a burst reaches the worker as one batch
 * with one wake-up. Results are drained up to MAX_RECORDS_PER_TURN per turn before yielding to the loop.
 *
 * Time (the sandbox's test clock). time() tells shards the exchange's time and has them expire what falls due
 * by a second (OP_TIME). The link keeps, per shard, a bound on its earliest GTD expiry for the driver that
 * moves the clock (edge/sandbox/test-clock.ts): what an OP_TIME answered, lowered by every GTD order placed
 * since (one comparison per GTD placement, nothing otherwise), unknown until the first OP_TIME. A bound may
 * be early (the order filled or was canceled): the OP_TIME that finds nothing due answers the true one.
 * idle() resolves once no command is in flight on any shard.
 *
 * Threads (shard-threads.ts). The link starts its own threads and ends them with itself, or takes over threads
 * that outlive it (EngineOptions.threads, a sandbox revert): it resets their shards first (OP_RESET), and at
 * its end lets go of them instead of stopping them, unless the engine halted (their state is then unknown
 * and they are ended; their owner starts new ones).
 *
 * Failure. A worker's 'fatal' message, error or unexpected exit, an R_SHARD_ERROR record, an unknown record
 * or an unmatched RESULT halts the engine (lifecycle.ts); takeUnanswered() then hands back every command in
 * flight, including the one whose RESULT was being applied, so each gets its ENGINE_DOWN answer.
 */
import type { Logger } from '../../runtime/log.ts';
import { Tif, type CancelReason } from '../book/api.ts';
import type { ShardTime } from '../engine-types.ts';
import { EngineHalt, type Lifecycle } from '../lifecycle.ts';
import type { MarketState } from '../markets/market-table.ts';
import type { OrderState } from '../orders/order-table.ts';
import {
  CMD_WORDS,
  OP_CANCEL,
  OP_CANCEL_ALL_MARKET,
  OP_EXPIRE,
  OP_PLACE,
  OP_REGISTER_MARKET,
  OP_RESET,
  OP_SNAPSHOT,
  OP_STOP,
  OP_TIME,
  R_CANCELED,
  R_FILL,
  R_RESULT,
  R_SHARD_ERROR,
  decodeCanceled,
  decodeFill,
  decodeResult,
  encodeCancel,
  encodeCancelAllMarket,
  encodePlace,
  encodeRegister,
  encodeReset,
  encodeSnapshot,
  encodeStop,
  encodeTime,
  type MarketMeta,
  type ResultRecord,
  type WorkerMessage,
} from './protocol.ts';
import type { Ring } from './ring.ts';
import { Fifo } from './fifo.ts';
import type { CancelBatch, Inflight, RequestOp, ShardEvents, ShardLinkOptions, ShardRecord } from './link-types.ts';
import { ShardThreads, awaitResults, threadSpec, type ShardThread } from './shard-threads.ts';

interface Shard {
  index: number;
  thread: ShardThread;
  commands: Ring;
  results: Ring;
  inflight: Fifo<Inflight>;
  /** Encoded commands waiting for ring space, in order. */
  overflow: Fifo<Float64Array>;
  waitingForSpace: boolean;
  publishScheduled: boolean;
  /** Records of the group whose RESULT has not arrived yet. */
  group: ShardRecord[];
  /** Bound on its earliest GTD expiry (unix s): -1 unknown, Infinity none (see "Time"). */
  expiryBound: number;
  /** Earliest expiry of the GTD orders placed since the last OP_TIME was sent (Infinity: none). */
  placedSince: number;
}


const MAX_RECORDS_PER_TURN = 1 << 16;

export class ShardLink {
  readonly counters = { backpressureWaits: 0, busyRejects: 0 };
  private readonly shards: Shard[] = [];
  private nextReq = 1;
  /** Where the last claim() put its slot: the command ring's words or a fresh overflow record. */
  private claimWords: Float64Array = new Float64Array(0);
  /** The command whose RESULT is being applied (handed back by takeUnanswered if applying it fails). */
  private applying: Inflight | undefined;
  /** Resolved by idle() once nothing is in flight. */
  private idleWaiters: Array<() => void> = [];
  private threads: ShardThreads | undefined;
  /** The threads were handed over (EngineOptions.threads): let go of at the end, not ended. */
  private borrowed = false;
  /** Ended or let go of: nothing the threads send is read any more. */
  private released = false;

  constructor(
    private readonly opts: ShardLinkOptions,
    private readonly life: Lifecycle,
    private readonly log: Logger,
    private readonly events: ShardEvents,
  ) {}

  /**
   * Starts one worker per shard, or takes over the threads of the options and resets their shards; resolves
   * when every shard is ready.
   */
  async start(): Promise<void> {
    const spec = threadSpec(this.opts);
    const given = this.opts.threads;
    if (given !== undefined && !(given.usable && given.fits(spec))) throw new Error('the shard threads handed over do not fit this engine (other shards or book, or a thread ended)');
    const threads = given ?? (await ShardThreads.spawn(spec, this.opts.shardTime));
    this.threads = threads;
    this.borrowed = given !== undefined;
    threads.attach((t) => {
      const sh: Shard = {
        index: t.index,
        thread: t,
        commands: t.commands,
        results: t.results,
        inflight: new Fifo(),
        overflow: new Fifo(),
        waitingForSpace: false,
        publishScheduled: false,
        group: [],
        expiryBound: -1,
        placedSince: Infinity,
      };
      this.shards.push(sh);
      return this.listener(sh);
    });
    for (const sh of this.shards) this.drain(sh);
    if (this.borrowed) await Promise.all(this.shards.map((sh) => this.reset(sh, this.opts.shardTime)));
  }

  /** What the shard's thread tells this link; any failure of it halts the engine. */
  private listener(sh: Shard) {
    const i = sh.index;
    return {
      message: (msg: WorkerMessage) => {
        if (msg.type === 'snapshots') this.events.snapshots(i, msg);
        else if (msg.type === 'fatal') {
          const err = new Error(`shard ${msg.shard} failed: ${msg.message}`);
          err.stack = msg.stack;
          this.life.halt(err);
        }
      },
      error: (err: Error) => this.life.halt(err),
      exit: (code: number) => {
        this.drain(sh);
        if (!this.life.closing) this.life.halt(new Error(`shard ${i} exited unexpectedly (code ${code})`));
      },
      results: () => this.drain(sh),
    };
  }

  /** OP_RESET: the shard of threads another engine used, as a new thread's, on this engine's clock. */
  private reset(sh: Shard, t: ShardTime | undefined): Promise<void> {
    return new Promise((resolve) => {
      this.request(sh, OP_RESET, (w, off, reqId) => encodeReset(w, off, { reqId, frozen: t?.frozen ?? false, offsetMs: t?.offsetMs ?? 0, atMs: t?.atMs ?? 0, untilSec: 0 }), () => resolve());
    });
  }

  /**
   * Sends one of the engine's own commands (not an order's): forced past the overflow bound, answered in
   * ring order by the RESULT whose id is the request id returned, which `done` is given.
   */
  private request(sh: Shard, op: RequestOp, encode: (w: Float64Array, off: number, reqId: number) => void, done: (r: ResultRecord) => void): number {
    const reqId = this.nextReq++;
    const off = this.claim(sh, true);
    encode(this.claimWords, off, reqId);
    sh.inflight.push({ op, id: reqId, done });
    this.publish(sh);
    return reqId;
  }

  // ---- commands -------------------------------------------------------------------------------------------

  /** Sends a placement; false when the shard's queue is full and `force` is false (nothing was sent). */
  place(o: OrderState, owner: number, force: boolean, postOnly: boolean): boolean {
    const sh = this.shards[o.market.shard];
    const off = this.claim(sh, force);
    if (off < 0) return false;
    encodePlace(this.claimWords, off, o.market.marketId, {
      handle: o.handle,
      owner,
      outcome: o.rec.outcome,
      side: o.side,
      tif: o.tif,
      postOnly,
      pricePips: o.rec.pricePips,
      sizeUnits: o.remaining,
      budgetUnits: o.rec.budgetUnits,
      expiresAt: o.tif === Tif.GTD ? o.rec.expiration : 0,
    });
    if (o.tif === Tif.GTD && o.rec.expiration < sh.placedSince) {
      sh.placedSince = o.rec.expiration;
      if (o.rec.expiration < sh.expiryBound) sh.expiryBound = o.rec.expiration;
    }
    sh.inflight.push({ op: OP_PLACE, id: o.handle, order: o });
    this.publish(sh);
    return true;
  }

  /** Sends a cancel of one resting order; false when the shard's queue is full (nothing was sent). */
  cancel(o: OrderState, batch: CancelBatch): boolean {
    const sh = this.shards[o.market.shard];
    const off = this.claim(sh, false);
    if (off < 0) return false;
    encodeCancel(this.claimWords, off, o.market.marketId, o.handle);
    sh.inflight.push({ op: OP_CANCEL, id: o.handle, order: o, batch });
    this.publish(sh);
    return true;
  }

  /** Cancels every resting order of the market; `done` runs when its RESULT is applied. */
  cancelAllMarket(m: MarketState, reason: CancelReason, done: (r: ResultRecord) => void): void {
    this.request(this.shards[m.shard], OP_CANCEL_ALL_MARKET, (w, off, reqId) => encodeCancelAllMarket(w, off, m.marketId, reason, reqId), done);
  }

  /** Creates the market's book in its shard, or updates its parameters. */
  register(m: MarketState, meta: MarketMeta): Promise<ResultRecord> {
    const sh = this.shards[m.shard];
    // The meta message goes first: the worker reads it synchronously when it meets the REGISTER record.
    sh.thread.metaPort.postMessage(meta);
    const { marketId, tickPips, minSizeUnits, makerFeeBps, takerFeeBps } = m;
    return new Promise((resolve) => {
      this.request(sh, OP_REGISTER_MARKET, (w, off, reqId) => encodeRegister(w, off, { marketId, tickPips, minSizeUnits, makerFeeBps, takerFeeBps, reqId }), resolve);
    });
  }

  /** Asks the shard to publish every change it has not published yet; returns the request id its answer carries. */
  snapshot(shard: number, marketId: number): number {
    return this.request(this.shards[shard], OP_SNAPSHOT, (w, off, reqId) => encodeSnapshot(w, off, marketId, reqId), () => undefined);
  }

  /**
   * Tells the shard the exchange's time, after it expired every GTD order due by `untilSec` (0: none), one
   * expiry group per second, each applied before the next (ShardEvents.expired); resolves when it answered,
   * with its earliest expiry left (unix s, Infinity: none), which is its new expiry bound.
   */
  time(shard: number, t: ShardTime, untilSec: number): Promise<number> {
    const sh = this.shards[shard];
    sh.placedSince = Infinity;
    return new Promise((resolve) => {
      const encode = (w: Float64Array, off: number, reqId: number) => encodeTime(w, off, { reqId, frozen: t.frozen, offsetMs: t.offsetMs, atMs: t.atMs, untilSec });
      this.request(sh, OP_TIME, encode, (r) => {
        // An answer on a halted engine carries no expiry.
        if (r.code !== 0) return resolve(Infinity);
        const next = r.restingUnits > 0 ? r.restingUnits : Infinity;
        // `next` covers every order placed before the OP_TIME; those placed since lowered placedSince.
        sh.expiryBound = Math.min(next, sh.placedSince);
        sh.placedSince = Infinity;
        resolve(next);
      });
    });
  }

  /** Each shard's bound on its earliest GTD expiry (unix s): -1 unknown, Infinity none. */
  expiryBounds(): number[] {
    return this.shards.map((sh) => sh.expiryBound);
  }

  get shardCount(): number {
    return this.shards.length;
  }

  /** Resolves once no command is in flight on any shard (at once when none is). */
  idle(): Promise<void> {
    if (this.quiet()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private quiet(): boolean {
    for (const sh of this.shards) if (sh.inflight.length > 0 || sh.overflow.length > 0) return false;
    return true;
  }

  /**
   * Sends STOP to every shard (after whatever is queued); each promise resolves when its shard answered it.
   * Threads handed over are not stopped: the promise resolves once everything sent to them is answered.
   */
  stop(): Promise<void>[] {
    if (this.borrowed) return [this.idle()];
    return this.shards.map(
      (sh) =>
        new Promise<void>((resolve) => {
          this.request(sh, OP_STOP, encodeStop, () => resolve());
        }),
    );
  }

  /**
   * Ends the workers now (halt, failed start, close) and closes their ports; nothing is taken after it.
   * Threads handed over are let go of instead, for their owner to hand on, unless the engine halted.
   */
  async terminate(): Promise<void> {
    this.life.closing = true;
    this.released = true;
    const threads = this.threads;
    if (threads === undefined) return;
    if (this.borrowed && this.life.halted === undefined) threads.detach();
    else await threads.terminate();
  }

  /** Every command not answered yet, the one being applied first; the link forgets them (halt). */
  takeUnanswered(): Inflight[] {
    const unanswered = this.applying === undefined ? [] : [this.applying];
    this.applying = undefined;
    for (const sh of this.shards) unanswered.push(...sh.inflight.drain());
    return unanswered;
  }

  // ---- command ring ---------------------------------------------------------------------------------------

  /**
   * Claims a command slot: in the ring when it has room and nothing waits before it, else a fresh record in
   * the shard's overflow queue (allocates; backpressure only). Returns the word offset in `this.claimWords`,
   * or -1 when the overflow queue is at its bound and `force` is false (the caller answers ENGINE_BUSY).
   */
  private claim(sh: Shard, force: boolean): number {
    if (sh.overflow.length === 0) {
      const off = sh.commands.tryClaim();
      if (off >= 0) {
        this.claimWords = sh.commands.words;
        return off;
      }
    }
    if (!force && sh.overflow.length >= (this.opts.overflowLimit ?? 65_536)) {
      this.counters.busyRejects++;
      return -1;
    }
    const rec = new Float64Array(CMD_WORDS);
    sh.overflow.push(rec);
    this.claimWords = rec;
    this.waitForSpace(sh);
    return 0;
  }

  /**
   * Publishes the shard's new commands at the end of the current turn: a burst of requests handled in one
   * turn reaches the worker as one batch, with one wake-up instead of one per command.
   */
  /**
   * Publishes every shard's claimed commands now: a long synchronous run of commands (start-up's restore of
   * the open orders) lets the shards work while it goes on, instead of after it, and keeps the rings from
   * filling into the overflow queues.
   */
  flush(): void {
    for (const sh of this.shards) if (sh.overflow.length === 0) sh.commands.publish();
  }

  private publish(sh: Shard): void {
    if (sh.publishScheduled) return;
    sh.publishScheduled = true;
    queueMicrotask(() => {
      sh.publishScheduled = false;
      sh.commands.publish();
    });
  }

  private waitForSpace(sh: Shard): void {
    if (sh.waitingForSpace) return;
    sh.waitingForSpace = true;
    this.counters.backpressureWaits++;
    if (this.counters.backpressureWaits % 1000 === 1) this.log.warn({ shard: sh.index, queued: sh.overflow.length }, 'command ring full: backpressure');
    void sh.commands.waitForSpace(1000).then(() => {
      sh.waitingForSpace = false;
      if (this.life.halted) return;
      const ring = sh.commands;
      while (sh.overflow.length > 0) {
        const off = ring.tryClaim();
        if (off < 0) break;
        ring.words.set(sh.overflow.shift() as Float64Array, off);
      }
      ring.publish();
      if (sh.overflow.length > 0) this.waitForSpace(sh);
    });
  }

  // ---- result ring ----------------------------------------------------------------------------------------

  private drain(sh: Shard): void {
    if (this.life.halted || this.released) return;
    const ring = sh.results;
    const w = ring.words;
    let budget = MAX_RECORDS_PER_TURN;
    try {
      for (;;) {
        const n = ring.available();
        if (n === 0) break;
        for (let i = 0; i < n; i++) {
          const off = ring.consume();
          const op = w[off];
          if (op === R_FILL) sh.group.push(decodeFill(w, off));
          else if (op === R_CANCELED) sh.group.push(decodeCanceled(w, off));
          else if (op === R_RESULT) {
            const r = decodeResult(w, off);
            this.onResult(sh, r, sh.group);
            sh.group.length = 0;
          } else if (op === R_SHARD_ERROR) {
            // The details follow by postMessage ('fatal') and halt the engine with them; this is the fallback.
            ring.release();
            setTimeout(() => this.life.halt(new Error(`shard ${sh.index} reported an error`)), 1000).unref();
            return;
          } else {
            throw new EngineHalt(`shard ${sh.index}: unknown result record ${op}`);
          }
        }
        ring.release();
        budget -= n;
        if (budget <= 0) {
          this.events.drained();
          setImmediate(() => this.drain(sh));
          return;
        }
      }
    } catch (err) {
      this.life.halt(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.events.drained();
    if (this.idleWaiters.length > 0 && this.quiet()) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
    // A worker that ended (STOP) may have published its last records just before: they were read above.
    awaitResults(sh.thread);
  }

  private onResult(sh: Shard, r: ResultRecord, group: ShardRecord[]): void {
    this.events.result(sh.index, r, group);
    if (r.cmdOp === OP_EXPIRE) {
      this.events.expired(group, r);
      return;
    }
    const inf = sh.inflight.shift();
    if (inf === undefined || inf.op !== r.cmdOp || inf.id !== r.id) {
      throw new EngineHalt(`shard ${sh.index}: result ${r.cmdOp}/${r.id} does not match the oldest command ${inf?.op}/${inf?.id}`);
    }
    this.applying = inf;
    this.events.answered(inf, r, group);
    this.applying = undefined;
  }
}
