/**
 * Room edge/limits/: what a caller may cost: request caps per bucket (this file, rate-limit-buckets.ts), body
 * bytes (rate-limit-bytes.ts) and keys benched for failing their HMAC (hmac-strikes.ts). Separate because they
 * are pure counters keyed by caller, shared by the pipeline and the channels; they import nothing else of edge/.
 *
 * Per-caller rate limiting for the HTTP edge (DESIGN section 8). Pure: no uWS, no timers; the caller passes
 * the clock as `nowMs`, so tests and replays are deterministic.
 *
 * Algorithm: sub-window counters, counting only what is certainly inside the trailing window.
 *   A bucket's window W is cut into S = SUBWINDOWS equal sub-windows of length g = W/S; sub-window j covers
 *   [j*g, (j+1)*g). Each (caller, bucket) keeps the units admitted in each of the last S sub-windows (a
 *   ring) and their sum. At time t, in sub-window J = floor(t/g), the count is the sum over sub-windows
 *   J-S+1 .. J, and a request of `cost` units passes when count + cost <= limit.
 *   Every unit counted was admitted at a time >= (J-S+1)*g > t - W, i.e. inside the trailing window
 *   (t - W, t]. So the count never exceeds the true trailing count, and the guarantee DESIGN section 8 asks
 *   for holds exactly: a caller whose requests in every trailing window stay within the cap is never
 *   refused (a bot pacing itself to the published caps never sees a 429).
 *   Error bound (over-admission only). What the count leaves out is the part of sub-window J-S still inside
 *   the trailing window, so the units admitted in any interval of length W are at most limit plus those
 *   admitted in one sub-window: at most limit * (1 + 1/S) for traffic spread evenly over the window, and
 *   2 * limit in the worst case (a whole window's budget spent in one sub-window, then again exactly S
 *   sub-windows later). Over any long run the rate is still at most limit per W.
 *   We chose it over the two-window sliding estimate we had (it refused early: seen at 177 of a 200-per-10 s
 *   cap when the previous window's traffic came early), over an exact sliding log (O(limit) memory per
 *   caller: 24,000 entries for the sustained trading window) and over GCRA (its "burst then drip" does not
 *   read as the spec's "N requests per window").
 *
 * Several buckets, and several callers, per request (e.g. catalog + catalog-events + catalog-listing; or a
 * trading request charged to its API key and to its wallet, DESIGN section 8): every (caller, bucket) pair is
 * rolled and checked first, and only if all of them admit is `cost` added to each. A refused request
 * therefore charges nothing anywhere. Names the configuration does not define are ignored (that cap is
 * simply not enforced), and a pair listed twice is charged once.
 *
 * Verdict fields. `bucket` is the binding bucket: on refusal the refusing one with the longest wait, on
 * success the one with the least remaining capacity (first listed wins ties). `remaining` = limit - count,
 * after the charge when ok. `resetSeconds` = ceil(seconds until the oldest counted sub-window leaves the
 * window, when some capacity comes back), so 1..ceil(g). `retryAfterSeconds` is exact for this scheme: the
 * smallest wait after which the same request (same pairs, same cost) would pass if nothing else were charged
 * meanwhile. A request whose cost exceeds a bucket's limit can never pass; it is refused with
 * retryAfterSeconds = that bucket's window, and the route should reject it as too large.
 *
 * Memory layout (owned here, nothing else indexes these arrays). Callers live in slots 0..capacity-1; bucket
 * b of slot s is cell c = s*B + b, B = number of configured buckets:
 *   head[c]          Float64  the latest sub-window index J the cell was rolled to (-Infinity = never charged)
 *   sum[c]           count    units in sub-windows head-S+1 .. head (never above the limit)
 *   counts[c*S + k]  count    units admitted in the sub-window j with j mod S = k
 *   expires[s]       Float64  ms at which every unit the slot ever counted has left its window (reclaimable)
 *   keys[s]          caller key, `slots` maps key -> slot; `free` is a stack of reclaimed slots.
 * Counts are 16-bit when every configured limit fits (the defaults do), else 32-bit, so a slot costs
 * B * (12 + 2S) + 8 bytes (648 with the 20 default buckets) plus its key and Map entry. Capacity starts small
 * and doubles up to `maxCallers`, so memory follows the live caller count.
 *
 * Caller table bound and eviction policy. The table never holds more than `maxCallers` entries, and a live
 * entry (one with any unexpired unit) is never evicted, so a flood of new callers cannot reset a heavy
 * caller's counters. Expired entries are reclaimed by a sweep cursor that visits SWEEP_STEP slots on every
 * take() and up to SWEEP_WHEN_FULL more when a new caller finds the table full. One slot is reserved for a
 * shared overflow caller: when the table is still full after that sweep, the new caller is charged on the
 * overflow entry, so everyone who arrives during a flood is limited together (they may throttle each other,
 * which is the price of not forgetting anyone who was already tracked). When entries expire, newcomers get
 * their own slots again.
 *
 * Complexity: take() is O(k) for k (caller, bucket) pairs plus O(S) per pair when sub-windows roll over
 * (amortized O(1) for steady traffic) plus O(1) sweep work; no allocation on the hot path except the
 * returned Verdict.
 *
 * Limitations: state is per process (several instances behind a balancer each enforce the full cap); a
 * clock that steps backwards is treated as "still in the latest sub-window seen" (conservative); IPv6
 * callers are keyed per address, so one host rotating addresses inside its /64 lands in the overflow
 * entry once the table is full rather than being limited as one caller earlier.
 */
import { MAX_BUCKET_LIMIT, type BucketSpec } from '../../domain/rate-limits.ts';

export type { BucketSpec } from '../../domain/rate-limits.ts';

export interface RateLimitConfig {
  enabled: boolean;
  maxCallers: number;
  buckets: Record<string, BucketSpec>;
}

export interface Verdict {
  ok: boolean;
  /** The binding bucket: the one that refused, or the one with least remaining. '' when no configured bucket applies. */
  bucket: string;
  limit: number;
  remaining: number;
  resetSeconds: number;
  /** 0 when ok. */
  retryAfterSeconds: number;
}

/** One caller and the buckets to charge it (RateLimiter.takeAll). */
export interface Charge {
  readonly caller: string;
  readonly buckets: readonly string[];
}

/** Sub-windows per window: the over-admission bound is one sub-window's worth (see the header). */
export const SUBWINDOWS = 10;
const S = SUBWINDOWS;
const SWEEP_STEP = 2;
const SWEEP_WHEN_FULL = 32;
const INITIAL_CAPACITY = 1024;
/** Cannot collide with a real key: client addresses and API keys never contain NUL. */
const OVERFLOW_KEY = '\u0000overflow';

/** Returned when none of the requested bucket names is configured: nothing to enforce, nothing to advertise. */
const UNLIMITED: Verdict = Object.freeze({
  ok: true,
  bucket: '',
  limit: 0,
  remaining: 0,
  resetSeconds: 0,
  retryAfterSeconds: 0,
});

type Counts = Uint16Array | Uint32Array;

export class RateLimiter {
  readonly #enabled: boolean;
  readonly #maxCallers: number;
  readonly #names: readonly string[];
  readonly #index: ReadonlyMap<string, number>;
  readonly #limits: Float64Array;
  readonly #windowMs: Float64Array;
  readonly #stride: number;
  readonly #wide: boolean;

  readonly #slots = new Map<string, number>();
  #keys: (string | undefined)[] = [];
  #head = new Float64Array(0);
  #sum: Counts = new Uint16Array(0);
  #counts: Counts = new Uint16Array(0);
  #expires = new Float64Array(0);
  #capacity = 0;
  /** Slots below this index have been handed out at least once; the sweep cursor only visits those. */
  #highWater = 0;
  readonly #free: number[] = [];
  #cursor = 0;
  #overflowSlot = -1;

  /** Scratch for takeAll(), grown to the largest request seen (so steady traffic never allocates): the
   * cells of the request (slot*B + bucket, deduplicated, unknown names dropped) and each one's bucket. */
  #cells = new Int32Array(16);
  #cellBucket = new Int32Array(16);
  readonly #one: Charge[] = [{ caller: '', buckets: [] }];

  constructor(cfg: RateLimitConfig) {
    this.#enabled = cfg.enabled;
    if (!Number.isInteger(cfg.maxCallers) || cfg.maxCallers < 1) {
      throw new RangeError(`rateLimits.maxCallers must be a positive integer, got ${String(cfg.maxCallers)}`);
    }
    this.#maxCallers = cfg.maxCallers;
    const names = Object.keys(cfg.buckets);
    const B = names.length;
    this.#names = names;
    this.#stride = B;
    this.#limits = new Float64Array(B);
    this.#windowMs = new Float64Array(B);
    const index = new Map<string, number>();
    let wide = false;
    names.forEach((name, b) => {
      const spec = cfg.buckets[name]!;
      const { limit, windowSeconds } = spec;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_BUCKET_LIMIT) {
        throw new RangeError(`rateLimits.buckets.${name}.limit must be an integer in 1..${MAX_BUCKET_LIMIT}, got ${String(limit)}`);
      }
      const windowMs = Math.round(windowSeconds * 1000);
      if (!Number.isFinite(windowSeconds) || windowMs < S) {
        throw new RangeError(`rateLimits.buckets.${name}.windowSeconds must be at least ${S / 1000} s, got ${String(windowSeconds)}`);
      }
      if (limit > 0xffff) wide = true;
      this.#limits[b] = limit;
      this.#windowMs[b] = windowMs;
      index.set(name, b);
    });
    this.#wide = wide;
    this.#index = index;
  }

  get size(): number {
    return this.#slots.size;
  }

  /** Charges `cost` units to one caller in each of `buckets`, or nothing if any of them refuses. */
  take(caller: string, buckets: readonly string[], cost: number, nowMs: number): Verdict {
    const one = this.#one[0] as { caller: string; buckets: readonly string[] };
    one.caller = caller;
    one.buckets = buckets;
    return this.takeAll(this.#one, cost, nowMs);
  }

  /** Charges `cost` units to every (caller, bucket) pair of `charges`, or to none if any of them refuses. */
  takeAll(charges: readonly Charge[], cost: number, nowMs: number): Verdict {
    return this.#take(charges, cost, nowMs, true);
  }

  /** Whether takeAll would admit, without charging anything (the edge asks before it parses a body). */
  admits(charges: readonly Charge[], cost: number, nowMs: number): Verdict {
    return this.#take(charges, cost, nowMs, false);
  }

  #take(charges: readonly Charge[], cost: number, nowMs: number, charge: boolean): Verdict {
    if (!Number.isInteger(cost) || cost < 0) {
      throw new RangeError(`rate limit cost must be a non-negative integer, got ${String(cost)}`);
    }
    const t = Math.floor(nowMs);
    if (!this.#enabled) {
      for (const c of charges) {
        for (const name of c.buckets) {
          const b = this.#index.get(name);
          if (b !== undefined) return this.#idleVerdict(b);
        }
      }
      return UNLIMITED;
    }
    if (this.#highWater > 0) this.#sweep(SWEEP_STEP, t);
    const n = this.#plan(charges, t);
    if (n === 0) return UNLIMITED;

    const cells = this.#cells;
    const cellBucket = this.#cellBucket;
    let refused = false;
    for (let j = 0; j < n; j++) {
      const b = cellBucket[j]!;
      this.#roll(cells[j]!, b, t);
      if (this.#sum[cells[j]!]! + cost > this.#limits[b]!) refused = true;
    }
    if (refused) return this.#refusal(n, cost, t);
    if (!charge) return this.#probe(n, cost, t);

    let bestJ = 0;
    let bestRemaining = Infinity;
    for (let j = 0; j < n; j++) {
      const c = cells[j]!;
      const b = cellBucket[j]!;
      const head = this.#head[c]!;
      this.#counts[c * S + (head % S)] += cost;
      this.#sum[c] += cost;
      const slot = (c - b) / this.#stride;
      // Units admitted in sub-window `head` are counted until sub-window head + S begins.
      const until = ((head + S) * this.#windowMs[b]!) / S;
      if (until > this.#expires[slot]!) this.#expires[slot] = until;
      const remaining = this.#limits[b]! - this.#sum[c]!;
      if (remaining < bestRemaining) {
        bestRemaining = remaining;
        bestJ = j;
      }
    }
    const b = cellBucket[bestJ]!;
    return {
      ok: true,
      bucket: this.#names[b]!,
      limit: this.#limits[b]!,
      remaining: bestRemaining,
      resetSeconds: this.#resetSeconds(cells[bestJ]!, b, t),
      retryAfterSeconds: 0,
    };
  }

  /**
   * Resolves the request into its cells (acquiring each caller's slot) in the scratch arrays and returns how
   * many. Done per call rather than cached: a Map lookup per name costs about what a cache hit does.
   */
  #plan(charges: readonly Charge[], t: number): number {
    const B = this.#stride;
    let n = 0;
    for (const charge of charges) {
      let slot = -1;
      outer: for (let q = 0; q < charge.buckets.length; q++) {
        const b = this.#index.get(charge.buckets[q]!);
        if (b === undefined) continue;
        if (slot < 0) {
          slot = this.#acquire(charge.caller, t);
          // Not reclaimable by a sweep later in this call (it would hand the slot to another caller).
          if (this.#expires[slot]! <= t) this.#expires[slot] = t + 1;
        }
        const c = slot * B + b;
        for (let k = 0; k < n; k++) if (this.#cells[k] === c) continue outer;
        if (n === this.#cells.length) this.#growScratch();
        this.#cells[n] = c;
        this.#cellBucket[n] = b;
        n++;
      }
    }
    return n;
  }

  /** allocates: doubles the scratch arrays when a request names more cells than any before. */
  #growScratch(): void {
    const cells = new Int32Array(this.#cells.length * 2);
    cells.set(this.#cells);
    const buckets = new Int32Array(this.#cellBucket.length * 2);
    buckets.set(this.#cellBucket);
    this.#cells = cells;
    this.#cellBucket = buckets;
  }

  /** Brings cell c to time t: sub-windows that left the window are emptied and their units dropped from the sum. */
  #roll(c: number, b: number, t: number): void {
    const J = Math.floor((t * S) / this.#windowMs[b]!);
    const head = this.#head[c]!;
    if (J <= head) return;
    const base = c * S;
    if (head === -Infinity || J - head >= S) {
      this.#counts.fill(0, base, base + S);
      this.#sum[c] = 0;
    } else {
      for (let j = head + 1; j <= J; j++) {
        const k = base + (j % S);
        this.#sum[c] -= this.#counts[k]!;
        this.#counts[k] = 0;
      }
    }
    this.#head[c] = J;
  }

  /** Seconds until the oldest counted sub-window of cell c leaves the window (some capacity returns). */
  #resetSeconds(c: number, b: number, t: number): number {
    const nextEdge = ((this.#head[c]! + 1) * this.#windowMs[b]!) / S;
    return Math.max(1, Math.ceil((nextEdge - t) / 1000));
  }

  /** The verdict of an admitting probe: as takeAll's, as if `cost` had been charged, nothing changed. */
  #probe(n: number, cost: number, t: number): Verdict {
    let bestJ = 0;
    let bestRemaining = Infinity;
    for (let j = 0; j < n; j++) {
      const remaining = this.#limits[this.#cellBucket[j]!]! - this.#sum[this.#cells[j]!]! - cost;
      if (remaining < bestRemaining) {
        bestRemaining = remaining;
        bestJ = j;
      }
    }
    const b = this.#cellBucket[bestJ]!;
    return { ok: true, bucket: this.#names[b]!, limit: this.#limits[b]!, remaining: bestRemaining, resetSeconds: this.#resetSeconds(this.#cells[bestJ]!, b, t), retryAfterSeconds: 0 };
  }

  /** Builds the refusal verdict; cells were only rolled, nothing charged. */
  #refusal(n: number, cost: number, t: number): Verdict {
    let bestJ = -1;
    let bestWait = -1;
    for (let j = 0; j < n; j++) {
      const c = this.#cells[j]!;
      const b = this.#cellBucket[j]!;
      const L = this.#limits[b]!;
      const sum = this.#sum[c]!;
      if (sum + cost <= L) continue;
      const W = this.#windowMs[b]!;
      const head = this.#head[c]!;
      let wait = W;
      if (cost <= L) {
        // Sub-windows head-S+1, head-S+2, ... leave the window at the start of head+1, head+2, ...
        let left = sum;
        for (let d = 1; d <= S; d++) {
          left -= this.#counts[c * S + ((head - S + d) % S)]!;
          if (left + cost <= L) {
            wait = ((head + d) * W) / S - t;
            break;
          }
        }
      }
      if (wait > bestWait) {
        bestWait = wait;
        bestJ = j;
      }
    }
    const c = this.#cells[bestJ]!;
    const b = this.#cellBucket[bestJ]!;
    return {
      ok: false,
      bucket: this.#names[b]!,
      limit: this.#limits[b]!,
      remaining: Math.max(0, this.#limits[b]! - this.#sum[c]!),
      resetSeconds: this.#resetSeconds(c, b, t),
      retryAfterSeconds: Math.max(1, Math.ceil(bestWait / 1000)),
    };
  }

  #idleVerdict(b: number): Verdict {
    const limit = this.#limits[b]!;
    return { ok: true, bucket: this.#names[b]!, limit, remaining: limit, resetSeconds: 0, retryAfterSeconds: 0 };
  }

  #acquire(caller: string, t: number): number {
    const known = this.#slots.get(caller);
    if (known !== undefined) return known;
    const realLimit = this.#maxCallers - 1;
    if (this.#realCount() >= realLimit) {
      this.#sweep(SWEEP_WHEN_FULL, t);
      if (this.#realCount() >= realLimit) {
        if (this.#overflowSlot < 0) this.#overflowSlot = this.#allocate(OVERFLOW_KEY);
        return this.#overflowSlot;
      }
    }
    return this.#allocate(caller);
  }

  #realCount(): number {
    return this.#slots.size - (this.#overflowSlot >= 0 ? 1 : 0);
  }

  #allocate(key: string): number {
    let s = this.#free.pop();
    if (s === undefined) {
      if (this.#highWater === this.#capacity) this.#grow();
      s = this.#highWater++;
    }
    const B = this.#stride;
    this.#head.fill(-Infinity, s * B, (s + 1) * B);
    this.#sum.fill(0, s * B, (s + 1) * B);
    this.#counts.fill(0, s * B * S, (s + 1) * B * S);
    this.#expires[s] = 0;
    this.#keys[s] = key;
    this.#slots.set(key, s);
    return s;
  }

  /** allocates: doubles the slot arrays, at most log2(maxCallers / INITIAL_CAPACITY) times. */
  #grow(): void {
    const cap = Math.min(this.#maxCallers, Math.max(INITIAL_CAPACITY, this.#capacity * 2));
    const B = this.#stride;
    const Counts = this.#wide ? Uint32Array : Uint16Array;
    const head = new Float64Array(cap * B);
    head.set(this.#head);
    const sum = new Counts(cap * B);
    sum.set(this.#sum);
    const counts = new Counts(cap * B * S);
    counts.set(this.#counts);
    const expires = new Float64Array(cap);
    expires.set(this.#expires);
    this.#head = head;
    this.#sum = sum;
    this.#counts = counts;
    this.#expires = expires;
    this.#capacity = cap;
  }

  #sweep(steps: number, t: number): void {
    const n = Math.min(steps, this.#highWater);
    for (let k = 0; k < n; k++) {
      if (this.#cursor >= this.#highWater) this.#cursor = 0;
      const s = this.#cursor++;
      const key = this.#keys[s];
      if (key !== undefined && this.#expires[s]! <= t) {
        this.#slots.delete(key);
        this.#keys[s] = undefined;
        if (s === this.#overflowSlot) this.#overflowSlot = -1;
        this.#free.push(s);
      }
    }
  }
}
