/**
 * Per-caller rate limiting for the HTTP edge (DESIGN section 8). Pure: no uWS, no timers; the caller passes
 * the clock as `nowMs`, so tests and replays are deterministic.
 *
 * Algorithm: sliding-window counter.
 *   Each (caller, bucket) keeps two fixed windows of the bucket's length W: `prev` (window k-1) and `curr`
 *   (window k), plus k itself. At time t, with e = t - k*W elapsed in the current window, the usage estimate is
 *       estimate = prev * (W - e) / W + curr
 *   and a request of `cost` units passes when estimate + cost <= limit. The comparison is done scaled by W on
 *   integers (prev*(W-e) + (curr+cost)*W <= limit*W), so there is no float rounding at the boundary; the
 *   constructor rejects buckets where 3*limit*W would exceed 2^53.
 *   We chose it over an exact sliding log because the log costs O(limit) memory per caller (24,000 entries
 *   for the sustained trading window) and over GCRA because GCRA's "burst then drip" does not read as the
 *   spec's "N requests per window".
 *   Error bound. The estimate assumes the previous window's requests were spread evenly:
 *   - Over-admission: `curr` never exceeds the limit, and any interval of length W overlaps at most two
 *     fixed windows, so no interval of length W ever sees more than 2*limit admitted units; the adversarial
 *     pattern (the previous window's traffic packed at its very end) approaches that bound once, after which
 *     the long-run rate is still at most `limit` per W.
 *   - Under-admission: if the previous window's traffic was packed at its start, the estimate still counts
 *     up to prev*(W-e)/W units that have in fact left the trailing window, so a caller can be refused early
 *     by at most that amount; it is never refused while the true trailing count plus cost fits and prev = 0.
 *   For steady traffic the estimate tracks the true trailing count closely (Cloudflare measured 0.003% wrong
 *   decisions on production traffic with this scheme).
 *
 * Several buckets per request (e.g. catalog + catalog-events + catalog-listing, or both trading windows):
 * every bucket is rolled and checked first, and only if all of them admit is `cost` added to each. A refused
 * request therefore charges nothing anywhere. Names in a request that the configuration does not define are
 * ignored (that cap is simply not enforced), and a name listed twice is charged once.
 *
 * Verdict fields. `bucket` is the binding bucket: on refusal the refusing bucket with the longest wait, on
 * success the bucket with the least remaining capacity (first listed wins ties). `remaining` = floor(limit -
 * estimate), after the charge when ok. `resetSeconds` = ceil(seconds until the binding bucket's current
 * fixed window ends; from then on its count starts to decay), so 1..window. `retryAfterSeconds` is exact for
 * this scheme: the smallest wait after which the same request (same buckets, same cost) would pass if
 * nothing else were charged meanwhile; every estimate is non-increasing in time, so the maximum of the
 * refusing buckets' waits is that wait. A request whose cost exceeds a bucket's limit can never pass; it is
 * refused with retryAfterSeconds = that bucket's window, and the route should reject it as too large.
 *
 * Memory layout (owned here, nothing else indexes these arrays). Callers live in slots 0..capacity-1; bucket
 * b of slot s lives at index s*B + b, B = number of configured buckets:
 *   win[s*B+b]   Float64  fixed-window number k of `curr` (-Infinity = never charged)
 *   prev, curr   Uint32   unit counts (a count never exceeds its limit, which is < 2^32)
 *   expires[s]   Float64  ms at which every window the slot ever charged has expired (slot reclaimable)
 *   keys[s]      caller key, `slots` maps key -> slot; `free` is a stack of reclaimed slots.
 * That is 16*B + 8 bytes of typed arrays per slot (328 bytes with the 20 default buckets) plus the key and
 * its Map entry. Capacity starts small and doubles up to `maxCallers`, so memory follows the live caller count.
 *
 * Caller table bound and eviction policy. The table never holds more than `maxCallers` entries, and a live
 * entry (one with any unexpired window) is never evicted, so a flood of new callers cannot reset a heavy
 * caller's counters. Expired entries are reclaimed by a sweep cursor that visits SWEEP_STEP slots on every
 * take() and up to SWEEP_WHEN_FULL more when a new caller finds the table full. One slot is reserved for a
 * shared overflow caller: when the table is still full after that sweep, the new caller is charged on the
 * overflow entry, so everyone who arrives during a flood is limited together (they may throttle each other,
 * which is the price of not forgetting anyone who was already tracked). When entries expire, newcomers get
 * their own slots again.
 *
 * Complexity: take() is O(k) for k buckets in the request plus O(1) sweep work (SWEEP_STEP, or
 * SWEEP_WHEN_FULL when full); no allocation on the hot path except the returned Verdict.
 *
 * Limitations: state is per process (several instances behind a balancer each enforce the full cap); a
 * clock that steps backwards is treated as "still at the start of the latest window seen" (conservative);
 * IPv6 callers are keyed per address, so one host rotating addresses inside its /64 lands in the overflow
 * entry once the table is full rather than being limited as one caller earlier.
 */
import { BlockList, SocketAddress, isIP } from 'node:net';

export interface BucketSpec {
  limit: number;
  windowSeconds: number;
}

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

const SWEEP_STEP = 2;
const SWEEP_WHEN_FULL = 32;
const INITIAL_CAPACITY = 1024;
const MAX_LIMIT = 0xffff_ffff;
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

export class RateLimiter {
  readonly #enabled: boolean;
  readonly #maxCallers: number;
  readonly #names: readonly string[];
  readonly #index: ReadonlyMap<string, number>;
  readonly #limits: Float64Array;
  readonly #windowMs: Float64Array;
  readonly #stride: number;

  readonly #slots = new Map<string, number>();
  #keys: (string | undefined)[] = [];
  #win = new Float64Array(0);
  #prev = new Uint32Array(0);
  #curr = new Uint32Array(0);
  #expires = new Float64Array(0);
  #capacity = 0;
  /** Slots below this index have been handed out at least once; the sweep cursor only visits those. */
  #highWater = 0;
  readonly #free: number[] = [];
  #cursor = 0;
  #overflowSlot = -1;

  /** Scratch for take(), sized to the bucket count so take() never allocates: bucket indices of the request
   * (deduplicated, unknown names dropped) and the elapsed ms in each one's current window. */
  readonly #plan: Int32Array;
  readonly #elapsed: Float64Array;

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
    this.#plan = new Int32Array(B);
    this.#elapsed = new Float64Array(B);
    const index = new Map<string, number>();
    names.forEach((name, b) => {
      const spec = cfg.buckets[name]!;
      const { limit, windowSeconds } = spec;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
        throw new RangeError(`rateLimits.buckets.${name}.limit must be an integer in 1..${MAX_LIMIT}, got ${String(limit)}`);
      }
      const windowMs = Math.round(windowSeconds * 1000);
      if (!Number.isFinite(windowSeconds) || windowMs < 1) {
        throw new RangeError(`rateLimits.buckets.${name}.windowSeconds must be a positive number, got ${String(windowSeconds)}`);
      }
      if (3 * limit * windowMs > Number.MAX_SAFE_INTEGER) {
        throw new RangeError(`rateLimits.buckets.${name}: limit * windowSeconds too large for exact arithmetic`);
      }
      this.#limits[b] = limit;
      this.#windowMs[b] = windowMs;
      index.set(name, b);
    });
    this.#index = index;
  }

  get size(): number {
    return this.#slots.size;
  }

  take(caller: string, buckets: readonly string[], cost: number, nowMs: number): Verdict {
    if (!Number.isInteger(cost) || cost < 0) {
      throw new RangeError(`rate limit cost must be a non-negative integer, got ${String(cost)}`);
    }
    const n = this.#resolve(buckets);
    if (n === 0) return UNLIMITED;
    const plan = this.#plan;
    if (!this.#enabled) return this.#idleVerdict(plan[0]!);

    const t = Math.floor(nowMs);
    if (this.#highWater > 0) this.#sweep(SWEEP_STEP, t);
    const base = this.#acquire(caller, t) * this.#stride;
    const win = this.#win;
    const prev = this.#prev;
    const curr = this.#curr;
    const elapsed = this.#elapsed;

    let refused = false;
    for (let j = 0; j < n; j++) {
      const b = plan[j]!;
      const W = this.#windowMs[b]!;
      const i = base + b;
      const k = Math.floor(t / W);
      const w = win[i]!;
      let e: number;
      if (k > w) {
        if (k === w + 1) {
          prev[i] = curr[i]!;
        } else {
          prev[i] = 0;
        }
        curr[i] = 0;
        win[i] = k;
        e = t - k * W;
      } else if (k === w) {
        e = t - k * W;
      } else {
        e = 0;
      }
      elapsed[j] = e;
      if (prev[i]! * (W - e) + (curr[i]! + cost) * W > this.#limits[b]! * W) refused = true;
    }

    if (refused) return this.#refusal(base, n, cost);

    const slot = base / this.#stride;
    let bestJ = 0;
    let bestRemaining = Infinity;
    for (let j = 0; j < n; j++) {
      const b = plan[j]!;
      const W = this.#windowMs[b]!;
      const i = base + b;
      curr[i] = curr[i]! + cost;
      const until = (win[i]! + 2) * W;
      if (until > this.#expires[slot]!) this.#expires[slot] = until;
      const remaining = Math.floor((this.#limits[b]! * W - prev[i]! * (W - elapsed[j]!) - curr[i]! * W) / W);
      if (remaining < bestRemaining) {
        bestRemaining = remaining;
        bestJ = j;
      }
    }
    const b = plan[bestJ]!;
    return {
      ok: true,
      bucket: this.#names[b]!,
      limit: this.#limits[b]!,
      remaining: bestRemaining,
      resetSeconds: Math.ceil((this.#windowMs[b]! - elapsed[bestJ]!) / 1000),
      retryAfterSeconds: 0,
    };
  }

  /** Builds the refusal verdict; state was only rolled, nothing charged. */
  #refusal(base: number, n: number, cost: number): Verdict {
    const plan = this.#plan;
    let bestJ = -1;
    let bestWait = -1;
    for (let j = 0; j < n; j++) {
      const b = plan[j]!;
      const W = this.#windowMs[b]!;
      const L = this.#limits[b]!;
      const i = base + b;
      const p = this.#prev[i]!;
      const c = this.#curr[i]!;
      const e = this.#elapsed[j]!;
      if (p * (W - e) + (c + cost) * W <= L * W) continue;
      let wait: number;
      if (cost > L) {
        wait = W;
      } else if (c + cost <= L) {
        // Fits once prev has decayed enough within the current window: p*(W-x) <= (L-c-cost)*W.
        wait = W - Math.floor(((L - c - cost) * W) / p) - e;
      } else {
        // Needs the next window, where curr becomes prev: c*(W-x) <= (L-cost)*W; x = W means the window after.
        wait = W - e + (W - Math.floor(((L - cost) * W) / c));
      }
      if (wait > bestWait) {
        bestWait = wait;
        bestJ = j;
      }
    }
    const b = plan[bestJ]!;
    const W = this.#windowMs[b]!;
    const i = base + b;
    const e = this.#elapsed[bestJ]!;
    const used = this.#prev[i]! * (W - e) + this.#curr[i]! * W;
    return {
      ok: false,
      bucket: this.#names[b]!,
      limit: this.#limits[b]!,
      remaining: Math.max(0, Math.floor((this.#limits[b]! * W - used) / W)),
      resetSeconds: Math.max(1, Math.ceil((W - e) / 1000)),
      retryAfterSeconds: Math.max(1, Math.ceil(bestWait / 1000)),
    };
  }

  #idleVerdict(b: number): Verdict {
    const limit = this.#limits[b]!;
    return { ok: true, bucket: this.#names[b]!, limit, remaining: limit, resetSeconds: 0, retryAfterSeconds: 0 };
  }

  /**
   * Resolves names to bucket indices in the scratch plan and returns how many. Done per call rather than
   * cached per array: a Map lookup per name costs about what an identity-cache hit does, and a route that
   * builds its list afresh each time would otherwise churn a WeakMap.
   */
  #resolve(buckets: readonly string[]): number {
    const plan = this.#plan;
    let n = 0;
    outer: for (let j = 0; j < buckets.length; j++) {
      const b = this.#index.get(buckets[j]!);
      if (b === undefined) continue;
      for (let q = 0; q < n; q++) if (plan[q] === b) continue outer;
      plan[n++] = b;
    }
    return n;
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
    const base = s * this.#stride;
    this.#win.fill(-Infinity, base, base + this.#stride);
    this.#prev.fill(0, base, base + this.#stride);
    this.#curr.fill(0, base, base + this.#stride);
    this.#expires[s] = 0;
    this.#keys[s] = key;
    this.#slots.set(key, s);
    return s;
  }

  /** allocates: doubles the slot arrays, at most log2(maxCallers / INITIAL_CAPACITY) times. */
  #grow(): void {
    const cap = Math.min(this.#maxCallers, Math.max(INITIAL_CAPACITY, this.#capacity * 2));
    const B = this.#stride;
    const win = new Float64Array(cap * B);
    win.set(this.#win);
    const prev = new Uint32Array(cap * B);
    prev.set(this.#prev);
    const curr = new Uint32Array(cap * B);
    curr.set(this.#curr);
    const expires = new Float64Array(cap);
    expires.set(this.#expires);
    this.#win = win;
    this.#prev = prev;
    this.#curr = curr;
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

/**
 * Canonical form of one address token: trims, drops `[v6]:port`, `v4:port` and zone ids, lower-cases and
 * compresses IPv6, and unwraps IPv4-mapped IPv6 (uWS reports IPv4 peers on a dual-stack socket as
 * `0000:...:ffff:7f00:0001`), so one client is one rate-limit key. Returns '' for anything that is not an IP.
 */
export function normalizeIp(raw: string): string {
  let s = raw.trim();
  if (s.startsWith('[')) {
    const close = s.indexOf(']');
    if (close < 0) return '';
    s = s.slice(1, close);
  }
  const kind = isIP(s);
  if (kind === 4) return s;
  if (kind === 6) {
    const canonical = new SocketAddress({ address: s, family: 'ipv6' }).address;
    if (canonical.startsWith('::ffff:')) {
      const v4 = canonical.slice(7);
      if (isIP(v4) === 4) return v4;
    }
    return canonical;
  }
  const colon = s.lastIndexOf(':');
  if (colon > 0 && s.indexOf(':') === colon && isIP(s.slice(0, colon)) === 4) return s.slice(0, colon);
  return '';
}

/**
 * Compiles an allowlist of IPs and CIDRs (v4 and v6) into a BlockList; throws a RangeError naming the bad
 * entry, so configuration loading can reject it at start-up. allocates: once per list.
 */
export function compileIpList(list: readonly string[]): BlockList {
  const block = new BlockList();
  for (const entry of list) {
    const slash = entry.indexOf('/');
    const addr = normalizeIp(slash < 0 ? entry : entry.slice(0, slash));
    const family = isIP(addr) === 4 ? 'ipv4' : 'ipv6';
    try {
      if (addr === '') throw new RangeError('not an IP address');
      if (slash < 0) {
        block.addAddress(addr, family);
      } else {
        const prefixText = entry.slice(slash + 1).trim();
        if (!/^\d{1,3}$/.test(prefixText)) throw new RangeError('bad prefix length');
        let prefix = Number(prefixText);
        // A mapped-IPv4 CIDR (::ffff:10.0.0.0/104) was unwrapped to its IPv4 address above.
        if (family === 'ipv4' && entry.includes(':')) prefix -= 96;
        block.addSubnet(addr, prefix, family);
      }
    } catch (err) {
      throw new RangeError(`invalid IP or CIDR ${JSON.stringify(entry)}: ${(err as Error).message}`);
    }
  }
  return block;
}

const compiledLists = new WeakMap<readonly string[], BlockList>();

/** True when `ip` is one of the list's addresses or inside one of its CIDRs. IPv4-mapped IPv6 equals its IPv4. */
export function ipInCidrList(ip: string, list: readonly string[]): boolean {
  if (list.length === 0) return false;
  let block = compiledLists.get(list);
  if (block === undefined) {
    block = compileIpList(list);
    compiledLists.set(list, block);
  }
  const addr = normalizeIp(ip);
  if (addr === '') return false;
  return block.check(addr, isIP(addr) === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The address a request is keyed and allowlisted by. X-Forwarded-For is believed only when the direct peer
 * is a trusted proxy, and then only from the right: each hop appends the address it saw, so the right-most
 * entry that is not itself a trusted proxy was written by a proxy we trust; anything left of it is
 * client-supplied and spoofable. If every entry is a trusted proxy, the left-most is the furthest client we
 * know of. An entry that is not an IP stops the walk at the last trusted hop, so a misconfigured proxy
 * cannot make garbage (or an empty string) a shared key for everyone.
 */
export function clientAddress(remoteIp: string, forwardedFor: string | undefined, trustedProxies: readonly string[]): string {
  const peer = normalizeIp(remoteIp) || remoteIp;
  if (forwardedFor === undefined || forwardedFor === '' || trustedProxies.length === 0) return peer;
  if (!ipInCidrList(peer, trustedProxies)) return peer;
  const hops = forwardedFor.split(',');
  let last = peer;
  for (let h = hops.length - 1; h >= 0; h--) {
    const token = hops[h]!;
    if (token.trim() === '') continue;
    const addr = normalizeIp(token);
    if (addr === '') return last;
    if (!ipInCidrList(addr, trustedProxies)) return addr;
    last = addr;
  }
  return last;
}
