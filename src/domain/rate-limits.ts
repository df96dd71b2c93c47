/**
 * The spec's rate-limit caps (its "Limits" table, DESIGN section 8): the default of `rateLimits.buckets`,
 * which configuration may raise per bucket. Which routes charge which buckets is the edge's business
 * (edge/limits/rate-limit-buckets.ts); how they are counted is edge/limits/rate-limit.ts.
 */

export interface BucketSpec {
  limit: number;
  windowSeconds: number;
}

/** A bucket's limit must fit the limiter's 32-bit counters. */
export const MAX_BUCKET_LIMIT = 0xffff_ffff;

const tenSeconds = (limit: number): BucketSpec => ({ limit, windowSeconds: 10 });

export const DEFAULT_BUCKETS: Record<string, BucketSpec> = {
  catalog: tenSeconds(4000),
  'catalog-events': tenSeconds(500),
  'catalog-markets': tenSeconds(300),
  'catalog-listing': tenSeconds(900),
  'catalog-tags': tenSeconds(200),
  'catalog-search': tenSeconds(350),
  clob: tenSeconds(5000),
  health: tenSeconds(50),
  book: tenSeconds(200),
  books: tenSeconds(80),
  price: tenSeconds(200),
  prices: tenSeconds(80),
  midpoint: tenSeconds(200),
  'prices-history': tenSeconds(100),
  'batch-prices-history': tenSeconds(80),
  // The spec's table gives no general cap for the wallet data API; the platform documents 1000 / 10s for
  // its Data API (reference/platform-semantics.md section 5), so that is the default.
  data: tenSeconds(1000),
  'data-trades': tenSeconds(150),
  'trading-burst': tenSeconds(2400),
  'trading-sustained': { limit: 24000, windowSeconds: 600 },
  // Not in the spec: WebSocket upgrades per client address (a bot reconnects a few sockets; a loop that
  // reconnects without pause is stopped), beside the order-book API's general cap.
  'ws-connect': tenSeconds(100),
  // Not in the spec: admin calls are operator tooling (bulk imports, funding scripts), so the cap only
  // stops a runaway loop.
  admin: tenSeconds(10000),
  // Not in the spec: the web console's files (GET /console, /console/{file}) per client address, beside the
  // order-book API's general cap. A page load is three of them; a loop reloading the page is stopped.
  console: tenSeconds(300),
  // Not in the spec: API keys created per client address (POST /auth/api-key, L1). A key is state the service
  // keeps in memory for good (about 1 KB: its record, its derived secret and passphrase), and one L1 request
  // makes one for any wallet, so the order-book cap alone let one address add 500 a second (3,000 in 7 s, the
  // wallets a refusal-log flood then named). A bot creates a handful; a test fixture hundreds an hour.
  'api-keys': { limit: 1000, windowSeconds: 600 },
};

/**
 * Not in the spec: the body bytes a caller may make the edge read per window (edge/limits/rate-limit-bytes.ts),
 * beside the request caps above, which count requests whatever their size. Per client address, every
 * request with a body; per API key as well on signed routes. A bot at its trading caps sending the largest
 * batches (15 orders, about 12 KB) reads 2 MB per 10 s; a 1 MiB body is the most one request carries.
 */
export const DEFAULT_BODY_BYTES: { perAddress: BucketSpec; perKey: BucketSpec } = {
  perAddress: { limit: 32 * 1024 * 1024, windowSeconds: 10 },
  perKey: { limit: 16 * 1024 * 1024, windowSeconds: 10 },
};
