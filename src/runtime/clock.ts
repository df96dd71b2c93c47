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
  /** Calls `fn` once, `ms` of the clock's time from now; the handle is for clear(). */
  set(fn: () => void, ms: number): unknown;
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
