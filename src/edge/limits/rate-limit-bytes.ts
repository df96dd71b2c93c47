/**
 * Bytes priced like requests (issue 39, finding 2): the body bytes a caller may make the edge read per
 * window. The platform's caps (rate-limit-buckets.ts) count requests, and a request may carry up to
 * `http.maxBodyBytes`: 500 requests a second of 1 MB bodies under the order-book cap is 500 MB a second to
 * read, and on a signed route to hash. So every body is charged, in bytes, before a byte of it is read
 * (pipeline.ts `beforeBody`, from the size http.ts says it may reach):
 *   per client address    every request with a body (`body-bytes-address`);
 *   per API key           also, on a signed route whose headers name a usable key with its passphrase
 *                         (`body-bytes-key`): a free key and its address each have their own bytes.
 * Both must admit (all or nothing, as RateLimiter.takeAll), else the request is answered 429 with the
 * binding bucket's RateLimit headers and its body is never read. Admin requests with the admin token are
 * not charged (the operator's imports), and nothing is charged with rate limits off.
 *
 * Counting is RateLimiter's (rate-limit.ts: sub-window counters, over-admission bounded by one
 * sub-window's worth, a bounded caller table) on a table of its own: its counts are bytes, far past the
 * request table's 16-bit counters, and the two tables' callers are the same keys. Two buckets at 32-bit
 * counts cost 112 bytes a caller, at most `rateLimits.maxCallers` callers.
 */
import { DEFAULT_BODY_BYTES, type BucketSpec } from '../../domain/rate-limits.ts';
import { RateLimiter, type Charge, type Verdict } from './rate-limit.ts';

export { DEFAULT_BODY_BYTES };

export interface BodyBytesConfig {
  enabled: boolean;
  maxCallers: number;
  perAddress: BucketSpec;
  perKey: BucketSpec;
}

/** The buckets' names, as the 429's RateLimit headers and the rate-limited metric name them. */
export const BODY_BUCKETS = { address: 'body-bytes-address', key: 'body-bytes-key' } as const;

export class BodyBudget {
  readonly #limiter: RateLimiter;
  readonly #address: readonly string[] = [BODY_BUCKETS.address];
  readonly #key: readonly string[] = [BODY_BUCKETS.key];
  /** Reused per call: the address alone, or the address and the key. */
  readonly #one: { caller: string; buckets: readonly string[] }[] = [{ caller: '', buckets: this.#address }];
  readonly #two: { caller: string; buckets: readonly string[] }[] = [
    { caller: '', buckets: this.#address },
    { caller: '', buckets: this.#key },
  ];

  constructor(cfg: BodyBytesConfig) {
    this.#limiter = new RateLimiter({ enabled: cfg.enabled, maxCallers: cfg.maxCallers, buckets: { [BODY_BUCKETS.address]: cfg.perAddress, [BODY_BUCKETS.key]: cfg.perKey } });
  }

  /**
   * Charges `bytes` to the client (`client`, the pipeline's rate-limit key of its address) and, when the
   * headers named a usable one, to `apiKey`; or nothing when either refuses.
   */
  take(client: string, apiKey: string | undefined, bytes: number, nowMs: number): Verdict {
    let charges: readonly Charge[];
    if (apiKey === undefined) {
      this.#one[0]!.caller = client;
      charges = this.#one;
    } else {
      this.#two[0]!.caller = client;
      this.#two[1]!.caller = `key:${apiKey}`;
      charges = this.#two;
    }
    return this.#limiter.takeAll(charges, Math.max(0, Math.ceil(bytes)), nowMs);
  }

  /** Callers in its table (tests). */
  get size(): number {
    return this.#limiter.size;
  }
}
