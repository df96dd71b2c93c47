/**
 * One socket's message rate (configuration `stream.maxMessagesPerSecond`, N; the refusal in bounds.ts's
 * header): a token bucket of N refilled continuously, so a burst of N passes and a steady N per second does;
 * a message past it is refused with an error frame, and a socket with more than 2N messages refused within
 * STRIKE_WINDOW_MS of the first of them is closed (4008). Owns the bucket and the strikes; what a refusal
 * sends and how a socket closes are the channels' (channels.ts). Separate because it is arithmetic over one
 * socket's clock readings, testable without a socket.
 *
 * Times are performance.now() milliseconds, passed in: the rate must not move with the wall clock (the
 * sandbox's test clock moves it). Imports nothing.
 */

/** Refusals that close a socket for its message rate are counted over this long from the first. */
export const STRIKE_WINDOW_MS = 5000;

export class MessageRate {
  /** Tokens left, and when they were last refilled. */
  private tokens: number;
  private refilledAt: number;
  /** Messages refused since `strikesFrom`, the first of them. */
  private strikes = 0;
  private strikesFrom: number;

  constructor(
    /** Messages per second (N). */
    readonly rate: number,
    now: number,
  ) {
    this.tokens = rate;
    this.refilledAt = now;
    this.strikesFrom = now;
  }

  /** Takes one token; false when none is left (the message is refused: call strike). */
  admit(now: number): boolean {
    const rate = this.rate;
    this.tokens = Math.min(rate, this.tokens + ((now - this.refilledAt) * rate) / 1000);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Counts a refused message; true when the socket is past 2N refusals within STRIKE_WINDOW_MS and must close. */
  strike(now: number): boolean {
    if (this.strikes === 0 || now - this.strikesFrom > STRIKE_WINDOW_MS) {
      this.strikes = 0;
      this.strikesFrom = now;
    }
    this.strikes++;
    return this.strikes > 2 * this.rate;
  }
}
