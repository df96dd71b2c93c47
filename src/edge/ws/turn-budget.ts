/**
 * Sockets' messages handled within a share of each event-loop turn (issue 39, the subscription grab).
 *
 * uWS hands over every message that arrived since the last poll in one go, and a message can be costly (a
 * subscription of hundreds of assets: a topic each, and the shares' bookkeeping). 27 networks granted their
 * shares at once were ~31,000 subscriptions handled back to back: 10-23 ms stretches within 150 ms during
 * which no HTTP request was served (docs/decisions/streaming.md, "Fair shares of the global caps"). So a
 * message is handled at once while this turn has spent less than `budgetMs` on messages; past it, it waits
 * for a later turn (a setImmediate, after the next poll has served what else arrived), and each later turn
 * handles waiting messages up to the same budget. A socket's messages keep their order: once one of its
 * messages waits, its next ones wait behind it, PING included, so a PONG still means everything before it
 * was handled. What waits is what clients sent, so it is bounded in bytes: a message that would take the
 * waiting past `maxWaitingBytes` first has the oldest waiting ones handled at once, in order, until it fits
 * (the work is then done as it was before this budget existed, all in this turn).
 *
 * Imports nothing.
 */
export class TurnBudget<K> {
  /** Milliseconds this turn has spent on messages. */
  private spent = 0;
  private resetting: NodeJS.Immediate | undefined;
  private draining: NodeJS.Immediate | undefined;
  private queue: Array<{ key: K; bytes: number; run: () => void }> = [];
  private head = 0;
  /** Bytes of the messages waiting. */
  private waitingBytes = 0;
  /** Per key, its messages waiting. */
  private readonly waitingOf = new Map<K, number>();

  /** `failed`: what a message that waited threw (a later turn has no caller to throw to). */
  constructor(
    private readonly budgetMs: number,
    private readonly maxWaitingBytes: number,
    private readonly failed: (err: unknown) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Messages waiting for a later turn, and their bytes. */
  get waiting(): { messages: number; bytes: number } {
    return { messages: this.queue.length - this.head, bytes: this.waitingBytes };
  }

  /**
   * Runs `run` (a message of `bytes`) now, or after what `key` already has waiting, or in a later turn once
   * this one's budget is spent.
   */
  submit(key: K, bytes: number, run: () => void): void {
    if ((this.waitingOf.get(key) ?? 0) === 0 && this.spent < this.budgetMs) return this.timed(run);
    while (this.head < this.queue.length && this.waitingBytes + bytes > this.maxWaitingBytes) this.runNext();
    const mine = this.waitingOf.get(key) ?? 0;
    if (mine === 0 && this.waitingBytes + bytes > this.maxWaitingBytes) return this.timed(run);
    this.waitingOf.set(key, mine + 1);
    this.waitingBytes += bytes;
    this.queue.push({ key, bytes, run });
    this.draining ??= setImmediate(this.drain);
  }

  /** Stops the turns' timers; what still waits is dropped (the sockets are closing). */
  close(): void {
    if (this.draining !== undefined) clearImmediate(this.draining);
    if (this.resetting !== undefined) clearImmediate(this.resetting);
    this.draining = this.resetting = undefined;
    this.queue = [];
    this.head = 0;
    this.waitingBytes = 0;
    this.waitingOf.clear();
  }

  private timed(run: () => void): void {
    const t0 = this.now();
    try {
      run();
    } finally {
      this.spent += this.now() - t0;
      this.resetting ??= setImmediate(this.reset);
    }
  }

  /** The oldest waiting message, run now; what it throws goes to `failed` (its caller is gone). */
  private runNext(): void {
    const item = this.queue[this.head++]!;
    this.waitingBytes -= item.bytes;
    const left = this.waitingOf.get(item.key)! - 1;
    if (left === 0) this.waitingOf.delete(item.key);
    else this.waitingOf.set(item.key, left);
    try {
      this.timed(item.run);
    } catch (err) {
      this.failed(err);
    }
  }

  private readonly reset = (): void => {
    this.resetting = undefined;
    this.spent = 0;
  };

  /** A later turn: waiting messages, in order, up to the budget; the rest wait for the next. */
  private readonly drain = (): void => {
    this.draining = undefined;
    this.spent = 0;
    while (this.head < this.queue.length && this.spent < this.budgetMs) this.runNext();
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else {
      if (this.head > 1024) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      this.draining = setImmediate(this.drain);
    }
  };
}
