/**
 * The sandbox's test clock, driven: freeze the exchange's time, let it run, and advance it ("advance to a
 * time; everything due in between happens, in order, then the clock is ready", as Stripe's test clocks do).
 * The time itself and its timers are runtime/clock.ts's TestClock; this module moves it together with what
 * it does not own: the GTD expiry in the shard workers (Engine.shardTime) and the commits of what moved.
 *
 * What follows the clock: everything timed on its timers (the trade lifecycle's delays, heartbeats, the
 * midpoint sampler's minute turns, the rewards sampler, the scenarios' events), everything that reads its
 * now() (order checks, GTD expirations, journal times, maintenance windows and post-only periods, GET /time,
 * catalog and key dates), and the shards' GTD expiry. What does not: rate limits, socket idle times and
 * every other measure of how fast clients talk (the base clock: time they really spend), and the signed
 * headers' freshness, judged against either clock (edge/auth/auth.ts).
 *
 * An advance. The clock is frozen for it (running again after it when it ran before), then moved step by
 * step to the earliest thing due until the target:
 *   - GTD orders due before the next timer: the engine expires them through that second, shard by shard in
 *     time order, each second's orders journaled at that second (the engine's onExpiry holds the clock);
 *   - a timer due (or several due at once): the clock moves to it and fires it; what it sent to the shards
 *     (a heartbeat's cancels, a scenario's orders) is answered, and what it returned awaited, before the
 *     next step, so its effects are journaled at its time.
 * Then the clock stands at the target and the advance resolves once everything it caused is committed. No
 * step waits for a commit: LMDB commits cost milliseconds each (an fsync) and a day holds thousands of
 * steps; the journal's times come from the clock, not from when the commit lands. What reads committed state
 * at a step (the midpoint sampler at a minute's turn) may therefore not see the last few steps' effects yet;
 * the rewards sampler scores the engine's resting orders, which it does see.
 *
 * Time only moves forward (an advance to a past time is refused), never across a restart either: the state
 * is one meta record, written at each change, from which start-up restores the clock (running: at its
 * offset from the system clock; frozen: where it stood) before the engine opens. One change at a time:
 * calls queue behind each other.
 */
import { apiError } from '../../domain/errors.ts';
import type { Engine } from '../../engine/engine.ts';
import type { Store } from '../../journal/env.ts';
import { metaKeys } from '../../journal/keys.ts';
import type { TestClock, TestClockState } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/log.ts';

export type ClockEngine = Pick<Engine, 'shardTime' | 'nextExpirySec' | 'idle' | 'afterCommit' | 'failure'>;

/** The stored form: enough to restore the clock where it stood. */
interface StoredClock {
  frozen: boolean;
  atMs: number;
  offsetMs: number;
}

/** What an advance did, for its answer and the log. */
export interface AdvanceReport {
  fromMs: number;
  toMs: number;
  /** Timers fired on the way (trade moves, heartbeats, samples, scenario events). */
  timers: number;
  /** Real milliseconds the advance took. */
  tookMs: number;
}

/** Restores the clock from the store (start-up, before the engine opens); a store never moved keeps it as it is. */
export function restoreTestClock(store: Store, clock: TestClock): void {
  const s = store.meta.get(metaKeys.testClock) as StoredClock | undefined;
  if (s === undefined || typeof s !== 'object') return;
  clock.restore(s);
}

export class TestClockControl {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly clock: TestClock,
    private readonly engine: ClockEngine,
    private readonly store: Store,
    private readonly log: Pick<Logger, 'info' | 'warn'>,
  ) {}

  state(): TestClockState {
    return this.clock.state();
  }

  /** Freezes the clock where it stands, or lets it run from there. */
  setFrozen(frozen: boolean): Promise<TestClockState> {
    return this.serial(async () => {
      if (frozen) this.clock.freeze();
      else this.clock.run();
      await this.settle();
      this.log.info({ clock: this.clock.state() }, frozen ? 'test clock frozen' : 'test clock running');
      return this.clock.state();
    });
  }

  /** Moves the clock to `toMs` (not before now), everything due on the way happening in order; resolves once it is committed. */
  advanceTo(toMs: number): Promise<AdvanceReport> {
    return this.serial(async () => {
      const t0 = performance.now();
      const fromMs = this.clock.now();
      if (!Number.isSafeInteger(toMs) || toMs < fromMs) throw apiError('PM_ERR_CLOCK_BACKWARDS', { to: new Date(Number.isFinite(toMs) ? toMs : 0).toISOString(), now: new Date(fromMs).toISOString() });
      const wasRunning = !this.clock.frozen;
      this.clock.freeze();
      let timers = 0;
      try {
        // The shards stand still with the clock: none expires anything on its own timer meanwhile.
        if (wasRunning) await this.engine.shardTime(this.shardTime());
        timers = await this.walk(toMs);
      } finally {
        if (wasRunning) this.clock.run();
        await this.settle();
      }
      const report = { fromMs, toMs, timers, tookMs: Math.round(performance.now() - t0) };
      this.log.info(report, 'test clock advanced');
      return report;
    });
  }

  /** Steps the frozen clock to `toMs`; returns the timers fired. */
  private async walk(toMs: number): Promise<number> {
    const { clock, engine } = this;
    let fired = 0;
    const fire = async (atMs: number) => {
      const results = clock.moveTo(Math.max(atMs, clock.now()));
      fired += results.length;
      for (const r of results) {
        if (r instanceof Error) this.log.warn({ err: r }, 'a timer failed while the test clock advanced');
        else if (r instanceof Promise) await r.catch((err: unknown) => this.log.warn({ err }, 'a timer failed while the test clock advanced'));
      }
      await engine.idle();
    };
    for (;;) {
      // A halted engine answers nothing more: the time moves on, nothing expires.
      if (engine.failure !== undefined) break;
      const nextTimer = clock.nextDue();
      const bound = engine.nextExpirySec();
      // An unknown bound: the shards are asked (expiring only what is already due) before anything moves.
      const nextExpiry = bound === -1 ? clock.now() : bound * 1000;
      if (Math.min(nextTimer, nextExpiry) > toMs) break;
      if (nextExpiry <= nextTimer) {
        // The shards expire up to the next timer in one go; the engine holds the clock at each second's
        // expiries as it applies them (onExpiry), which fires the samplers (lazy timers) due before them.
        await fire(nextExpiry);
        await engine.shardTime(this.shardTime(), Math.floor(Math.min(toMs, nextTimer) / 1000));
        continue;
      }
      await fire(nextTimer);
    }
    await fire(toMs);
    return fired;
  }

  /** The shards follow the clock as it now stands; everything so far is committed; the state is recorded. */
  private async settle(): Promise<void> {
    await this.engine.shardTime(this.shardTime());
    await this.engine.afterCommit();
    const s = this.clock.state();
    await this.store.meta.put(metaKeys.testClock, { frozen: s.frozen, atMs: s.now, offsetMs: s.offsetMs } satisfies StoredClock);
  }

  private shardTime() {
    const s = this.clock.state();
    return { frozen: s.frozen, offsetMs: s.offsetMs, atMs: s.now };
  }

  private serial<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(op, op);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
