/**
 * API keys that keep failing their HMAC (issue 39, finding 2): a key whose requests pass every header check
 * (known, usable, its address and passphrase) and then fail the HMAC STRIKES times within WINDOW_MS is
 * refused on its headers, before its body is read, for BENCH_MS, on requests whose body may pass
 * pipeline.ts HEAD_DECIDES_ABOVE (64 KiB; smaller ones cost what refusing them costs, and are still read
 * and judged, so a bot that fixes its signing is not refused for it). Reading and hashing 1 MB bodies to
 * refuse them is what such a flood costs; a key that cannot sign is told at the head.
 *
 * Only failures behind a right passphrase count, so knowing a key's id (which its orders show) is not
 * enough to have it refused; whoever holds its passphrase can, and is its owner or has its credentials.
 * A refusal before the body says the key is benched (it cannot say more without the secret: refusals/auth.ts).
 *
 * Bounded: at most MAX_KEYS entries (a Map in recency order, about 150 bytes each); past it the least
 * recently struck is forgotten (it only loses its strikes). An entry leaves once its window and bench are
 * over and it is struck again or looked at. The clock is the caller's (`nowMs`), so tests drive it.
 */

/** HMAC failures within WINDOW_MS that bench a key. */
export const STRIKES = 5;
export const WINDOW_MS = 10_000;
/** How long a benched key is refused on its headers. */
export const BENCH_MS = 10_000;
export const MAX_KEYS = 10_000;

interface Strikes {
  count: number;
  /** When the window of `count` began. */
  from: number;
  /** Benched until then (0: not benched). */
  until: number;
}

export class HmacStrikes {
  private readonly byKey = new Map<string, Strikes>();

  constructor(
    readonly strikes = STRIKES,
    readonly windowMs = WINDOW_MS,
    readonly benchMs = BENCH_MS,
    private readonly maxKeys = MAX_KEYS,
  ) {}

  /** A request signed with `apiKey` passed its header checks and failed its HMAC. */
  failed(apiKey: string, nowMs: number): void {
    let s = this.byKey.get(apiKey);
    if (s === undefined) {
      s = { count: 0, from: nowMs, until: 0 };
      if (this.byKey.size >= this.maxKeys) this.byKey.delete(this.byKey.keys().next().value!);
    } else {
      this.byKey.delete(apiKey);
    }
    this.byKey.set(apiKey, s);
    if (nowMs - s.from > this.windowMs) {
      s.count = 0;
      s.from = nowMs;
    }
    s.count++;
    if (s.count >= this.strikes) s.until = nowMs + this.benchMs;
  }

  /** How long `apiKey` stays benched, in ms (0: it is not). */
  benched(apiKey: string, nowMs: number): number {
    const s = this.byKey.get(apiKey);
    if (s === undefined) return 0;
    if (s.until > nowMs) return s.until - nowMs;
    if (nowMs - s.from > this.windowMs) this.byKey.delete(apiKey);
    return 0;
  }

  /** Keys with strikes (tests). */
  get size(): number {
    return this.byKey.size;
  }
}
