/**
 * The trade lifecycle: where each trade stands after its match, and when what it delivers can be spent.
 *
 * The platform settles a match on chain after the fact. A trade is MATCHED when the operator matched it,
 * MINED once its transaction is in a block, CONFIRMED when final; a transaction that fails is RETRYING,
 * then MINED or, for good, FAILED. Balances follow the chain: what a trade delivers (tokens to a buyer, USDC
 * to a seller) can be spent from MINED on, so a bot that sells what it has just bought can meet "not enough
 * balance / allowance". The sandbox reproduces this under its settings (TradeSettlement):
 *
 *   MATCHED ──minedDelayMs──> MINED ──confirmedDelayMs──> CONFIRMED
 *      │
 *      └── (retryingShare of the trades, at the same moment) ──> RETRYING ──retryDelayMs──> MINED ──> ...
 *                                                                   └── (failedShare of those) ──> FAILED
 *
 * With every setting 0 (the default) nothing is deferred: a fill is CONFIRMED at its commit and spendable
 * at once, exactly as without this module, and it journals nothing. Otherwise every fill is deferred
 * (FillEvent.deferred): settlement credits what it delivers as pending (ledger.ts), and this module journals
 * each later move as a `trade` event with its trades-table row (journal/trades.ts), lands the proceeds at
 * MINED (ledger.landProceeds) and undoes the fill at FAILED (ledger.reverseFill: its proceeds were never
 * spendable, so the reversal cannot fail; what each party gave comes back to it).
 *
 * Which trades retry and which of those fail is decided by seededUnit(seed, stream, fill seq): the same seed
 * and the same journal give the same failures, and a restart decides a trade as the process before it would
 * have.
 *
 * Time. A move is due its delay after the trade's previous move (that move's journal time, which the trades
 * table holds too), on the engine's clock. Due moves run when the lifecycle's one timer fires (armed for the
 * earliest due move, through `Timers`: the system's, or a ManualClock's in tests) and at the end of every
 * turn that applied shard results (the demo's replay moves the clock without any timer firing). The moves of
 * a turn leave with the turn's batch (group commit).
 *
 * Invariants: every wallet's pending amounts are exactly what its MATCHED and RETRYING trades delivered
 * (checkLedger); a trade moves only along the arrows above, each move journaled and applied to the ledger in
 * the same turn; nothing moves while the engine is down or closing; after a restart the trades still settling
 * come back from the trades table (proven against the journal, recovery.ts) with their status and the time of
 * their last move, so a crash between two moves recovers to the same state and the next move comes when it
 * would have (at once when overdue).
 */
import { tradeEvent, type FillEvent, type TradeStatusName } from '../../domain/events.ts';
import { seededUnit } from '../../domain/seeded.ts';
import type { JournalWriter } from '../../journal/writer.ts';
import type { Timers } from '../../runtime/clock.ts';
import type { TradeSettlement } from '../engine-types.ts';
import type { GroupCommit } from '../group-commit.ts';
import type { Ledger } from './ledger.ts';
import type { Lifecycle } from '../lifecycle.ts';

/** Settlement without delays or failures: every trade CONFIRMED at its commit. */
export const INSTANT_SETTLEMENT: Readonly<TradeSettlement> = Object.freeze({
  minedDelayMs: 0,
  confirmedDelayMs: 0,
  retryingShare: 0,
  retryDelayMs: 0,
  failedShare: 0,
  seed: 1,
});

/** The seeded draws: whether a MATCHED trade goes through RETRYING, whether a RETRYING one fails. */
const RETRY_STREAM = 1;
const FAIL_STREAM = 2;

type Settling = 'MATCHED' | 'RETRYING' | 'MINED';

interface Trade {
  fill: FillEvent;
  status: Settling;
  /** ms of its last move (the fill's time while MATCHED). */
  since: number;
}

/** Trades waiting for the same move, oldest first: with one delay per move they fall due in this order. */
class Queue {
  private items: Trade[] = [];
  private head = 0;

  constructor(readonly delayMs: () => number) {}

  push(t: Trade): void {
    this.items.push(t);
  }

  /** Due time of the oldest, Infinity when empty. */
  dueAt(): number {
    return this.head < this.items.length ? this.items[this.head].since + this.delayMs() : Infinity;
  }

  shift(): Trade {
    const t = this.items[this.head++];
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return t;
  }

  /** Start-up: restored trades arrive in seq order, not time order. */
  sort(): void {
    this.items.sort((a, b) => a.since - b.since || a.fill.seq - b.fill.seq);
  }
}

export interface TradeLifecycleDeps {
  ledger: Ledger;
  writer: JournalWriter;
  commit: GroupCommit;
  life: Lifecycle;
  now: () => number;
  timers: Timers;
  settings: TradeSettlement;
}

function checkSettings(s: TradeSettlement): void {
  for (const k of ['minedDelayMs', 'confirmedDelayMs', 'retryDelayMs'] as const) {
    if (!Number.isSafeInteger(s[k]) || s[k] < 0) throw new Error(`trade settlement: ${k} must be a non-negative integer, got ${s[k]}`);
  }
  for (const k of ['retryingShare', 'failedShare'] as const) {
    if (!(s[k] >= 0 && s[k] <= 1)) throw new Error(`trade settlement: ${k} must be within [0, 1], got ${s[k]}`);
  }
  if (!Number.isSafeInteger(s.seed)) throw new Error(`trade settlement: seed must be an integer, got ${s.seed}`);
}

export class TradeLifecycle {
  /** Whether fills are deferred (any delay or retrying share set). */
  readonly deferring: boolean;
  readonly settings: Readonly<TradeSettlement>;
  private readonly ledger: Ledger;
  private readonly writer: JournalWriter;
  private readonly commit: GroupCommit;
  private readonly life: Lifecycle;
  private readonly now: () => number;
  private readonly timers: Timers;
  /** Trades still settling, by fill seq. */
  private readonly settling = new Map<number, Trade>();
  private readonly queues: Record<Settling, Queue>;
  private timer: unknown = undefined;
  private armedAt = Infinity;
  /** Moves run only between start() (the engine is open) and stop(). */
  private started = false;
  private stopped = false;

  constructor(deps: TradeLifecycleDeps) {
    checkSettings(deps.settings);
    this.settings = Object.freeze({ ...deps.settings });
    const s = this.settings;
    this.deferring = s.minedDelayMs > 0 || s.confirmedDelayMs > 0 || s.retryingShare > 0;
    this.ledger = deps.ledger;
    this.writer = deps.writer;
    this.commit = deps.commit;
    this.life = deps.life;
    this.now = deps.now;
    this.timers = deps.timers;
    this.queues = {
      MATCHED: new Queue(() => s.minedDelayMs),
      RETRYING: new Queue(() => s.retryDelayMs),
      MINED: new Queue(() => s.confirmedDelayMs),
    };
  }

  /** Settlement journaled a deferred fill (its proceeds are pending): its trade is MATCHED. */
  matched(f: FillEvent): void {
    const t: Trade = { fill: f, status: 'MATCHED', since: f.ts };
    this.settling.set(f.seq, t);
    this.queues.MATCHED.push(t);
    this.writer.putTrade(f.seq, 'MATCHED', f.ts);
  }

  /**
   * Start-up, before the open orders take their reservations: a trade still settling, as the trades table
   * holds it. The proceeds of a MATCHED or RETRYING one, restored as available, are set aside as pending.
   */
  restore(f: FillEvent, status: TradeStatusName, since: number): void {
    if (f.deferred !== true || (status !== 'MATCHED' && status !== 'RETRYING' && status !== 'MINED')) {
      throw new Error(`refusing to start: fill ${f.seq} cannot be a trade settling with status ${status}`);
    }
    if (status !== 'MINED') this.ledger.holdProceeds(f);
    const t: Trade = { fill: f, status, since };
    this.settling.set(f.seq, t);
    this.queues[status].push(t);
  }

  /**
   * Once the engine is open: the timer is armed for the first move due, which is at once (the timer's next
   * turn) when the trade fell due while the engine was down. Nothing moves before (the shards' answers
   * during start-up included) nor here: Engine.open answers with the state the store was proven to hold.
   */
  start(): void {
    for (const q of Object.values(this.queues)) q.sort();
    this.started = true;
    this.arm();
  }

  /** Runs every move due by the engine's clock, then arms the timer for the next one. */
  poll(): void {
    if (!this.started || this.stopped || this.life.down || this.settling.size === 0) return;
    try {
      const now = this.now();
      let moved = false;
      for (;;) {
        const q = this.earliest();
        if (q === undefined || q.dueAt() > now) break;
        this.step(q.shift());
        moved = true;
      }
      if (moved) this.commit.scheduleFlush();
      this.arm();
    } catch (err) {
      this.life.halt(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Close or halt: no more moves; the timer is cleared. */
  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  /** Allocates: the deferred fills whose proceeds are pending (MATCHED, RETRYING), for checkLedger. */
  pendingFills(): FillEvent[] {
    const out: FillEvent[] = [];
    for (const t of this.settling.values()) if (t.status !== 'MINED') out.push(t.fill);
    return out;
  }

  /** Allocates: fill seq -> status of every trade still settling (the state hash's `T` lines). */
  statuses(): Map<number, TradeStatusName> {
    const out = new Map<number, TradeStatusName>();
    for (const [seq, t] of this.settling) out.set(seq, t.status);
    return out;
  }

  /** Trades still settling, by status. */
  counts(): Record<Settling, number> {
    const c = { MATCHED: 0, RETRYING: 0, MINED: 0 };
    for (const t of this.settling.values()) c[t.status]++;
    return c;
  }

  private earliest(): Queue | undefined {
    let best: Queue | undefined;
    for (const q of [this.queues.MATCHED, this.queues.RETRYING, this.queues.MINED]) if (q.dueAt() < (best?.dueAt() ?? Infinity)) best = q;
    return best;
  }

  private step(t: Trade): void {
    const seq = t.fill.seq;
    const s = this.settings;
    switch (t.status) {
      case 'MATCHED':
        if (seededUnit(s.seed, RETRY_STREAM, seq) < s.retryingShare) this.move(t, 'RETRYING');
        else this.mine(t);
        return;
      case 'RETRYING':
        if (seededUnit(s.seed, FAIL_STREAM, seq) < s.failedShare) {
          this.ledger.reverseFill(t.fill);
          this.move(t, 'FAILED');
        } else this.mine(t);
        return;
      case 'MINED':
        this.move(t, 'CONFIRMED');
        return;
    }
  }

  private mine(t: Trade): void {
    this.ledger.landProceeds(t.fill);
    this.move(t, 'MINED');
  }

  /** Journals the move (event and trades-table row); a trade that settled for good is forgotten. */
  private move(t: Trade, status: Exclude<TradeStatusName, 'MATCHED'>): void {
    const ev = this.writer.append(tradeEvent(t.fill, status));
    this.writer.putTrade(t.fill.seq, status, ev.ts);
    if (status === 'CONFIRMED' || status === 'FAILED') {
      this.settling.delete(t.fill.seq);
      return;
    }
    t.status = status;
    t.since = ev.ts;
    this.queues[status].push(t);
  }

  private arm(): void {
    const next = this.earliest()?.dueAt() ?? Infinity;
    if (next === this.armedAt) return;
    this.disarm();
    if (next === Infinity) return;
    this.armedAt = next;
    this.timer = this.timers.set(() => {
      this.timer = undefined;
      this.armedAt = Infinity;
      this.poll();
    }, next - this.now());
  }

  private disarm(): void {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    this.armedAt = Infinity;
  }
}
