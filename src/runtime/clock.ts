/** Injectable time source: tests and replay move time by hand; production reads the system clock. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export const nowSeconds = (clock: Clock) => Math.floor(clock.now() / 1000);

/**
 * One-shot timers on a clock's time: the system's by default, a ManualClock's in tests, so whoever owns
 * timers (the engine's trade lifecycle) can be driven through every state without waiting.
 */
export interface Timers {
  /**
   * Calls `fn` once, `ms` of the clock's time from now; the handle is for clear(). `lazy`: `fn` catches up on
   * its own with whatever time has passed (a periodic sampler), so a clock that jumps may fire it late, once,
   * instead of at each period on the way (TestClock; the others fire it on time anyway), and then calls it
   * with `moved` true: the time was moved past its due time while nothing else happened, so every period it
   * missed saw the state it sees now. A timer fired late for any other reason (a busy loop) is not told so.
   */
  set(fn: (moved?: boolean) => void, ms: number, opts?: { lazy?: boolean }): unknown;
  clear(handle: unknown): void;
}

/** Node's timers, unref'd: a pending timer never keeps a process up on its own. */
export const systemTimers: Timers = {
  set(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return t;
  },
  clear(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

interface ManualTimer {
  at: number;
  order: number;
  fn: () => void;
}

/**
 * A clock that only moves when told to (tests). Its `timers` fire as advance() or set() moves the time past
 * them, in the order they fall due, with now() reading each one's due time while it runs.
 */
export class ManualClock implements Clock {
  private readonly due: ManualTimer[] = [];
  private order = 0;

  readonly timers: Timers = {
    set: (fn, ms) => {
      const t: ManualTimer = { at: this.ms + Math.max(0, ms), order: this.order++, fn };
      this.due.push(t);
      return t;
    },
    clear: (handle) => {
      const i = this.due.indexOf(handle as ManualTimer);
      if (i >= 0) this.due.splice(i, 1);
    },
  };

  constructor(private ms = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.ms;
  }

  advance(ms: number): void {
    this.set(this.ms + ms);
  }

  set(ms: number): void {
    for (;;) {
      let next: ManualTimer | undefined;
      for (const t of this.due) if (t.at <= ms && (next === undefined || t.at < next.at || (t.at === next.at && t.order < next.order))) next = t;
      if (next === undefined) break;
      this.due.splice(this.due.indexOf(next), 1);
      if (next.at > this.ms) this.ms = next.at;
      next.fn();
    }
    this.ms = ms;
  }

  /** Timers not fired yet. */
  get pendingTimers(): number {
    return this.due.length;
  }
}

/** Where a TestClock stands: running (its base clock plus an offset) or frozen at a time. */
export interface TestClockState {
  frozen: boolean;
  /** ms since the epoch, now. */
  now: number;
  /** Running: now - base.now(). Frozen: 0. */
  offsetMs: number;
}

interface TestTimer {
  at: number;
  order: number;
  fn: (moved?: boolean) => unknown;
  lazy: boolean;
  cleared: boolean;
}

/** Pending timers, earliest `at` first (then the order they were set in); cleared ones drop when they reach the top. */
class TimerHeap {
  private readonly h: TestTimer[] = [];

  top(): TestTimer | undefined {
    while (this.h.length > 0 && this.h[0].cleared) this.pop();
    return this.h[0];
  }

  push(t: TestTimer): void {
    const h = this.h;
    h.push(t);
    for (let i = h.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (!less(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  pop(): TestTimer | undefined {
    const h = this.h;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last !== undefined) {
      h[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && less(h[l], h[m])) m = l;
        if (r < h.length && less(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}

const less = (a: TestTimer, b: TestTimer) => a.at < b.at || (a.at === b.at && a.order < b.order);

/**
 * The exchange's time when the sandbox's test controls are on (config `sandbox.testControls`; the driver that
 * moves it with the shard workers and the engine is edge/sandbox/test-clock.ts). Two states:
 *
 *   running   base.now() + offsetMs: wall time (offset 0) until an admin moves it, then wall time shifted;
 *   frozen    a fixed time that only moveTo() changes (Stripe's test clocks: nothing happens by itself).
 *
 * Its `timers` are the exchange's: whoever times a rule (trade lifecycle, heartbeats, samplers, scenarios)
 * sets them here. Running, they fire through the base timers as system timers do, with now() reading the
 * running time; frozen, they wait for moveTo(), which fires every timer due by the time it moves to, in due
 * order (ties in the order set), with now() reading each one's due time while it runs, so what a timer
 * journals carries its due time. A timer set while one fires is fired in the same move when due. Lazy
 * timers (samplers that observe and catch up by themselves) are the exception: a move fires each one once,
 * right before the next ordinary timer due after it (reading that timer's time), or before what hold()
 * moves the time to, or at the move's end; not at every period on the way: a year's advance is not half a
 * million sampler steps. A lazy callback must act on nothing (no engine command): hold() runs it wherever
 * the time is moved from, the engine's result loop included.
 *
 * Time only moves forward: moveTo() refuses a time before now(), and run() resumes from now() (the offset is
 * whatever keeps the time continuous). The journal's times therefore never go back.
 *
 * Cost: now() is one branch and an addition over the base clock; pending timers live in two binary heaps
 * (ordinary, lazy), one base timer armed for the earliest while running.
 */
export class TestClock implements Clock {
  private frozenAt: number | undefined;
  private offset = 0;
  private readonly heap = new TimerHeap();
  private readonly lazyHeap = new TimerHeap();
  private order = 0;
  private live = 0;
  private baseTimer: unknown = undefined;
  private baseTimerAt = Infinity;
  private firing = false;

  readonly timers: Timers = {
    set: (fn, ms, opts) => {
      const lazy = opts?.lazy === true;
      const t: TestTimer = { at: this.now() + Math.max(0, ms), order: this.order++, fn, lazy, cleared: false };
      (lazy ? this.lazyHeap : this.heap).push(t);
      this.live++;
      this.arm();
      return t;
    },
    clear: (handle) => {
      const t = handle as TestTimer | undefined;
      if (t === undefined || t.cleared) return;
      t.cleared = true;
      this.live--;
    },
  };

  constructor(
    private readonly base: Clock,
    private readonly baseTimers: Timers,
  ) {}

  now(): number {
    return this.frozenAt ?? this.base.now() + this.offset;
  }

  get frozen(): boolean {
    return this.frozenAt !== undefined;
  }

  state(): TestClockState {
    return { frozen: this.frozen, now: this.now(), offsetMs: this.frozen ? 0 : this.offset };
  }

  /**
   * Start-up: the state a previous process left (edge/sandbox/test-clock.ts stores it): frozen where it stood,
   * or running at the same offset from the base clock (time went on while the process was down).
   */
  restore(s: { frozen: boolean; atMs: number; offsetMs: number }): void {
    this.disarm();
    if (s.frozen) this.frozenAt = s.atMs;
    else {
      this.frozenAt = undefined;
      this.offset = s.offsetMs;
      this.arm();
    }
  }

  /** Stops time where it is; pending timers wait for moveTo(). */
  freeze(): void {
    if (this.frozenAt !== undefined) return;
    this.frozenAt = this.now();
    this.disarm();
  }

  /** Time runs again from now(), at the base clock's pace; due timers fire through the base timers. */
  run(): void {
    if (this.frozenAt === undefined) return;
    this.offset = this.frozenAt - this.base.now();
    this.frozenAt = undefined;
    this.arm();
  }

  /** Due time of the earliest pending ordinary timer; Infinity when none. */
  nextDue(): number {
    return this.heap.top()?.at ?? Infinity;
  }

  /** Due time of the earliest pending lazy timer; Infinity when none. */
  nextLazyDue(): number {
    return this.lazyHeap.top()?.at ?? Infinity;
  }

  /** Timers set and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.live;
  }

  /**
   * Frozen only: moves the time to `ms`, firing every ordinary timer due by then in due order, each reading
   * its due time, and each lazy one due by then once (see the class header). Returns what the callbacks
   * returned (an async callback's promise, for a driver that waits for it). A callback that throws does not
   * stop the others; its error is returned in its place.
   */
  moveTo(ms: number): unknown[] {
    if (this.frozenAt === undefined) throw new Error('TestClock.moveTo: the clock is running (freeze it first)');
    if (!(ms >= this.frozenAt)) throw new Error(`TestClock.moveTo: ${ms} is before now (${this.frozenAt}); time only moves forward`);
    const out: unknown[] = [];
    for (;;) {
      const t = this.heap.top();
      if (t === undefined || t.at > ms) break;
      if (t.at > this.frozenAt) this.frozenAt = t.at;
      this.fireLazy(this.frozenAt, out);
      // A lazy callback may have set an ordinary timer due before this one: the loop takes it first.
      if (this.heap.top() !== t) continue;
      this.heap.pop();
      this.fire(t, out);
    }
    this.frozenAt = ms;
    this.fireLazy(ms, out);
    return out;
  }

  /**
   * Frozen only: moves the time forward to `ms` firing no ordinary timer (they wait for the next moveTo),
   * only the lazy ones due by then, which observe and act on nothing (samplers): the engine calls it, through
   * the driver, while it applies what the shards expired at `ms`, so those observe the state before it.
   */
  hold(ms: number): void {
    if (this.frozenAt === undefined || !(ms > this.frozenAt)) return;
    this.frozenAt = ms;
    this.fireLazy(ms, []);
  }

  /** Every lazy timer due by `ms`, once each (those they set again fall after `ms`, or wait for the next move). */
  private fireLazy(ms: number, out: unknown[]): void {
    const due: TestTimer[] = [];
    for (let t = this.lazyHeap.top(); t !== undefined && t.at <= ms; t = this.lazyHeap.top()) due.push(this.lazyHeap.pop()!);
    for (const t of due) if (!t.cleared) this.fire(t, out, true);
  }

  private fire(t: TestTimer, out: unknown[], moved = false): void {
    this.live--;
    t.cleared = true;
    try {
      out.push(moved ? t.fn(true) : t.fn());
    } catch (err) {
      out.push(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Running: the base timer fired; every timer due by now() fires, in due order, reading the running time. */
  private fireDue(): void {
    this.baseTimer = undefined;
    this.baseTimerAt = Infinity;
    if (this.firing || this.frozenAt !== undefined) return;
    this.firing = true;
    const ignored: unknown[] = [];
    try {
      for (;;) {
        if (this.frozenAt !== undefined) break;
        const a = this.heap.top();
        const b = this.lazyHeap.top();
        const t = a === undefined ? b : b === undefined ? a : less(a, b) ? a : b;
        if (t === undefined || t.at > this.now()) break;
        (t.lazy ? this.lazyHeap : this.heap).pop();
        this.fire(t, ignored);
        ignored.length = 0;
      }
    } finally {
      this.firing = false;
    }
    this.arm();
  }

  private arm(): void {
    if (this.frozenAt !== undefined || this.firing) return;
    const next = Math.min(this.nextDue(), this.nextLazyDue());
    if (next === this.baseTimerAt) return;
    this.disarm();
    if (next === Infinity) return;
    this.baseTimerAt = next;
    this.baseTimer = this.baseTimers.set(() => this.fireDue(), next - this.now());
  }

  private disarm(): void {
    if (this.baseTimer !== undefined) this.baseTimers.clear(this.baseTimer);
    this.baseTimer = undefined;
    this.baseTimerAt = Infinity;
  }
}
