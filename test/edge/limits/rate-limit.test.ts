import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  RateLimiter,
  SUBWINDOWS,
  type BucketSpec,
  type RateLimitConfig,
} from '../../../src/edge/limits/rate-limit.ts';
import { DEFAULT_BUCKETS, ROUTE_BUCKETS, bucketsFor } from '../../../src/edge/limits/rate-limit-buckets.ts';
import { collectGarbage } from '../../fixtures/gc.ts';

/** A multiple of both 10 s and 600 s, so fixed windows of either length start exactly here. */
const T0 = 1_700_000_400_000;

function limiter(buckets: Record<string, BucketSpec>, extra: Partial<RateLimitConfig> = {}): RateLimiter {
  return new RateLimiter({ enabled: true, maxCallers: 1000, buckets, ...extra });
}

function drain(rl: RateLimiter, caller: string, buckets: readonly string[], n: number, now: number, cost = 1): void {
  for (let i = 0; i < n; i++) {
    const v = rl.take(caller, buckets, cost, now);
    assert.equal(v.ok, true, `take ${i + 1} of ${n} should pass`);
  }
}

const singleBucketCases = [
  // Refused at the start of a sub-window with the window full: capacity returns when that sub-window
  // leaves the window, exactly W later; reset is the time to the next sub-window edge (W / SUBWINDOWS).
  { name: '5 per 10s', limit: 5, windowSeconds: 10, reset: 1, retry: 10, retryMs: 10_000 },
  { name: '50 per 10s (health)', limit: 50, windowSeconds: 10, reset: 1, retry: 10, retryMs: 10_000 },
  { name: '24000 per 600s (sustained)', limit: 24000, windowSeconds: 600, reset: 60, retry: 600, retryMs: 600_000 },
];

for (const c of singleBucketCases) {
  test(`single bucket ${c.name}: exactly limit passes, then refusal with remaining/reset/retry-after`, () => {
    const rl = limiter({ only: { limit: c.limit, windowSeconds: c.windowSeconds } });
    const b = ['only'];
    for (let i = 1; i <= c.limit; i++) {
      const v = rl.take('alice', b, 1, T0);
      assert.equal(v.ok, true);
      assert.equal(v.bucket, 'only');
      assert.equal(v.limit, c.limit);
      assert.equal(v.remaining, c.limit - i);
      assert.equal(v.resetSeconds, c.reset);
      assert.equal(v.retryAfterSeconds, 0);
    }
    const refused = rl.take('alice', b, 1, T0);
    assert.deepEqual(refused, {
      ok: false,
      bucket: 'only',
      limit: c.limit,
      remaining: 0,
      resetSeconds: c.reset,
      retryAfterSeconds: c.retry,
    });
    // The wait behind Retry-After is exact to the millisecond; the header rounds it up to whole seconds.
    assert.equal(rl.take('alice', b, 1, T0 + c.retryMs - 1).ok, false);
    assert.equal(rl.take('alice', b, 1, T0 + c.retryMs).ok, true);
  });
}

test('reset counts down to the next sub-window edge', () => {
  const rl = limiter({ only: { limit: 2, windowSeconds: 10 } });
  drain(rl, 'a', ['only'], 2, T0 + 3_500);
  const v = rl.take('a', ['only'], 1, T0 + 3_500);
  assert.equal(v.ok, false);
  assert.equal(v.resetSeconds, 1);
  // The two units were admitted in the sub-window [3 s, 4 s): they leave the window at +13 s.
  assert.equal(v.retryAfterSeconds, 10);
  assert.equal(rl.take('a', ['only'], 1, T0 + 12_999).ok, false);
  assert.equal(rl.take('a', ['only'], 1, T0 + 13_000).ok, true);
});

test('a fresh window after early traffic admits the whole cap (the two-window estimate refused at 177 of 200)', () => {
  const rl = limiter({ book: { limit: 200, windowSeconds: 10 } });
  // 200 requests in the first second of a window; the trailing window is empty again from +10.001 s on.
  drain(rl, 'a', ['book'], 200, T0 + 500);
  drain(rl, 'a', ['book'], 200, T0 + 11_000);
  assert.equal(rl.take('a', ['book'], 1, T0 + 11_000).ok, false);
});

test('capacity comes back sub-window by sub-window as admitted units leave the window', () => {
  const rl = limiter({ only: { limit: 100, windowSeconds: 10 } });
  // 10 units in each second of [0 s, 10 s).
  for (let sec = 0; sec < 10; sec++) drain(rl, 'a', ['only'], 10, T0 + sec * 1_000 + 200);
  const cases = [
    { at: 9_999, remaining: 0 },
    { at: 10_000, remaining: 10 },
    { at: 12_500, remaining: 30 },
    { at: 18_500, remaining: 90 },
    { at: 19_000, remaining: 100 },
  ];
  for (const c of cases) {
    const probe = rl.take('a', ['only'], 0, T0 + c.at);
    assert.equal(probe.ok, true);
    assert.equal(probe.remaining, c.remaining, `at +${c.at} ms`);
  }
});

/** The true number of units in the trailing window (t - W, t] of a log of (time, cost). */
function trailing(log: Array<[number, number]>, t: number, windowMs: number): number {
  let n = 0;
  for (const [at, cost] of log) if (at > t - windowMs && at <= t) n += cost;
  return n;
}

test('a caller paced to the cap is never refused: 60 s at exactly the cap, bursts a window apart, and random pacing', () => {
  const W = 10_000;
  const L = 200;
  // Evenly paced at exactly L per W for 60 s of the limiter's clock.
  const even = limiter({ book: { limit: L, windowSeconds: 10 } });
  for (let k = 0; k < 6 * L; k++) assert.equal(even.take('a', ['book'], 1, T0 + 37 + (k * W) / L).ok, true, `request ${k}`);
  // Whole-cap bursts exactly one window apart (each trailing window holds one burst).
  const bursts = limiter({ book: { limit: L, windowSeconds: 10 } });
  for (let k = 0; k < 6; k++) drain(bursts, 'a', ['book'], L, T0 + 4_321 + k * W);
  // Random times, each request sent only when the exact trailing count says it fits.
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const rl = limiter({ book: { limit: L, windowSeconds: 10 } });
  const log: Array<[number, number]> = [];
  let t = T0;
  let sent = 0;
  let units = 0;
  while (t < T0 + 60_000) {
    t += Math.floor(rand() * (rand() < 0.1 ? 2_000 : 60));
    const cost = 1 + Math.floor(rand() * 3);
    if (trailing(log, t, W) + cost > L) continue;
    assert.equal(rl.take('a', ['book'], cost, t).ok, true, `refused at +${t - T0} ms with ${trailing(log, t, W)} in the window`);
    log.push([t, cost]);
    sent++;
    units += cost;
  }
  assert.ok(sent > 300 && units > 3 * L, `${sent} requests, ${units} units: the caller kept close to the cap`);
});

test('over-admission is bounded: at most one sub-window more than the cap in any window, and 2x the cap at worst', () => {
  const W = 10_000;
  const L = 100;
  const rl = limiter({ only: { limit: L, windowSeconds: 10 } });
  const log: Array<[number, number]> = [];
  // A greedy caller asking every 7 ms for 60 s.
  for (let t = T0; t < T0 + 60_000; t += 7) if (rl.take('a', ['only'], 1, t).ok) log.push([t, 1]);
  let worst = 0;
  for (const [at] of log) worst = Math.max(worst, trailing(log, at, W));
  assert.ok(worst <= L + L / SUBWINDOWS, `worst trailing count ${worst} for steady traffic`);
  // The adversarial pattern: the whole cap at the end of a sub-window, again S sub-windows later.
  const adv = limiter({ only: { limit: L, windowSeconds: 10 } });
  drain(adv, 'a', ['only'], L, T0 + 999);
  drain(adv, 'a', ['only'], L, T0 + W);
  assert.equal(adv.take('a', ['only'], 1, T0 + W).ok, false, '2L within 9.001 s, never more');
});

test('several callers at once (a key and its wallet): all admit or none is charged', () => {
  const rl = limiter({ burst: { limit: 5, windowSeconds: 10 } });
  const key1 = [{ caller: 'key:1', buckets: ['burst'] }, { caller: 'wallet:w', buckets: ['burst'] }];
  const key2 = [{ caller: 'key:2', buckets: ['burst'] }, { caller: 'wallet:w', buckets: ['burst'] }];
  for (let i = 0; i < 3; i++) assert.equal(rl.takeAll(key1, 1, T0).ok, true);
  assert.equal(rl.takeAll(key2, 1, T0).ok, true);
  assert.equal(rl.takeAll(key2, 1, T0).ok, true);
  const refused = rl.takeAll(key2, 1, T0);
  assert.equal(refused.ok, false, 'the wallet has spent its 5 across both keys');
  assert.equal(rl.take('key:2', ['burst'], 0, T0).remaining, 3, 'the refused request charged key 2 nothing');
  assert.equal(rl.take('key:3', ['burst'], 1, T0).ok, true, 'another wallet is not affected');
});

const TRADING = ['clob', 'trading-burst', 'trading-sustained'] as const;
const tradingBuckets = {
  clob: DEFAULT_BUCKETS.clob!,
  'trading-burst': DEFAULT_BUCKETS['trading-burst']!,
  'trading-sustained': DEFAULT_BUCKETS['trading-sustained']!,
};

test('two windows at once: the burst window refuses first', () => {
  const rl = limiter(tradingBuckets);
  drain(rl, 'k', TRADING, 2400, T0);
  const v = rl.take('k', TRADING, 1, T0);
  assert.equal(v.ok, false);
  assert.equal(v.bucket, 'trading-burst');
  assert.equal(v.limit, 2400);
});

test('two windows at once: a burst-sized budget repeated is stopped by the sustained window after 10 bursts', () => {
  const rl = limiter(tradingBuckets);
  // 2400 units every 10 s: each trailing 10 s window holds one burst.
  for (let burst = 0; burst < 10; burst++) {
    const v = rl.take('k', TRADING, 2400, T0 + burst * 10_000);
    assert.equal(v.ok, true, `burst ${burst + 1}`);
  }
  const at = T0 + 10 * 10_000;
  const v = rl.take('k', TRADING, 2400, at);
  assert.equal(v.ok, false);
  assert.equal(v.bucket, 'trading-sustained');
  assert.equal(v.limit, 24000);
  assert.equal(v.remaining, 0);
  // Sustained sub-windows are 60 s: the next edge is at +120 s, 20 s away.
  assert.equal(v.resetSeconds, 20);
  // The first 60 s sub-window (6 bursts, 14400 units) leaves the window at +600 s.
  assert.equal(v.retryAfterSeconds, 500);
  // The refused request charged neither clob nor burst: both still have room at the same instant.
  assert.equal(rl.take('k', ['clob', 'trading-burst'], 2400, at).ok, true);
  assert.equal(rl.take('k', ['clob'], 1, at).ok, true);
  assert.equal(rl.take('k', TRADING, 2400, at + 500_000 - 1).ok, false);
  assert.equal(rl.take('k', TRADING, 2400, at + 500_000).ok, true);
});

test('multi-bucket atomicity: a request refused by one bucket charges none', () => {
  const rl = limiter({ wide: { limit: 10, windowSeconds: 10 }, narrow: { limit: 3, windowSeconds: 10 } });
  const both = ['wide', 'narrow'];
  drain(rl, 'a', both, 3, T0);
  for (let i = 0; i < 5; i++) {
    const v = rl.take('a', both, 1, T0);
    assert.equal(v.ok, false);
    assert.equal(v.bucket, 'narrow');
  }
  const wide = rl.take('a', ['wide'], 1, T0);
  assert.equal(wide.ok, true);
  assert.equal(wide.remaining, 6, 'only the 3 admitted requests and this one are on the wide bucket');
  // The wide bucket alone would take 5 more; the narrow one refuses, so wide must stay untouched.
  const refused = rl.take('a', both, 5, T0);
  assert.equal(refused.ok, false);
  assert.equal(refused.bucket, 'narrow');
  assert.equal(rl.take('a', ['wide'], 0, T0).remaining, 6);
});

test('ok verdict names the bucket with least remaining', () => {
  const rl = limiter({ general: { limit: 100, windowSeconds: 10 }, named: { limit: 5, windowSeconds: 10 } });
  const v = rl.take('a', ['general', 'named'], 1, T0);
  assert.equal(v.bucket, 'named');
  assert.equal(v.remaining, 4);
  const w = rl.take('a', ['general'], 1, T0);
  assert.equal(w.bucket, 'general');
  assert.equal(w.remaining, 98);
});

test('cost > 1 debits that many units', () => {
  const rl = limiter({ orders: { limit: 10, windowSeconds: 10 } });
  const b = ['orders'];
  const steps = [
    { cost: 4, ok: true, remaining: 6 },
    { cost: 4, ok: true, remaining: 2 },
    { cost: 4, ok: false, remaining: 2 },
    { cost: 2, ok: true, remaining: 0 },
    { cost: 1, ok: false, remaining: 0 },
    { cost: 0, ok: true, remaining: 0 },
  ];
  for (const s of steps) {
    const v = rl.take('a', b, s.cost, T0);
    assert.equal(v.ok, s.ok, `cost ${s.cost}`);
    assert.equal(v.remaining, s.remaining, `cost ${s.cost}`);
  }
  const impossible = rl.take('fresh', b, 11, T0);
  assert.equal(impossible.ok, false);
  assert.equal(impossible.remaining, 10);
  assert.equal(impossible.retryAfterSeconds, 10);
});

test('invalid cost and configuration are rejected loudly', () => {
  const rl = limiter({ a: { limit: 1, windowSeconds: 1 } });
  for (const cost of [-1, 1.5, Number.NaN, Infinity]) {
    assert.throws(() => rl.take('x', ['a'], cost, T0), RangeError);
  }
  const bad: Record<string, BucketSpec>[] = [
    { z: { limit: 0, windowSeconds: 10 } },
    { z: { limit: 1.5, windowSeconds: 10 } },
    { z: { limit: 10, windowSeconds: 0 } },
    { z: { limit: 10, windowSeconds: Number.NaN } },
  ];
  for (const buckets of bad) {
    assert.throws(() => limiter(buckets), /rateLimits\.buckets\.z/);
  }
  assert.throws(() => limiter({}, { maxCallers: 0 }), /maxCallers/);
  assert.throws(() => limiter({ z: { limit: 70_000, windowSeconds: 0.001 } }), /rateLimits\.buckets\.z\.windowSeconds/);
});

test('per-caller isolation', () => {
  const rl = limiter({ only: { limit: 3, windowSeconds: 10 } });
  drain(rl, 'alice', ['only'], 3, T0);
  assert.equal(rl.take('alice', ['only'], 1, T0).ok, false);
  const bob = rl.take('bob', ['only'], 1, T0);
  assert.equal(bob.ok, true);
  assert.equal(bob.remaining, 2);
  assert.equal(rl.size, 2);
});

test('unknown bucket names are not enforced; duplicates are charged once', () => {
  const rl = limiter({ only: { limit: 2, windowSeconds: 10 } });
  const none = rl.take('a', ['nope'], 1, T0);
  assert.equal(none.ok, true);
  assert.equal(none.bucket, '');
  assert.equal(rl.take('a', ['only', 'only', 'nope'], 1, T0).remaining, 1);
});

test('disabled mode always allows and keeps no state', () => {
  const rl = new RateLimiter({ enabled: false, maxCallers: 10, buckets: { only: { limit: 1, windowSeconds: 10 } } });
  for (let i = 0; i < 10_000; i++) {
    const v = rl.take(`caller-${i % 100}`, ['only'], 5, T0);
    assert.equal(v.ok, true);
    assert.equal(v.retryAfterSeconds, 0);
  }
  assert.equal(rl.size, 0);
});

test('expired callers are reclaimed so newcomers get their own slots again', () => {
  const rl = limiter({ only: { limit: 2, windowSeconds: 10 } }, { maxCallers: 4 });
  for (const c of ['a', 'b', 'c']) drain(rl, c, ['only'], 2, T0);
  // Table full (3 callers + the reserved overflow entry): newcomers share the overflow entry.
  assert.equal(rl.take('d', ['only'], 1, T0).ok, true);
  assert.equal(rl.take('e', ['only'], 1, T0).ok, true);
  assert.equal(rl.take('f', ['only'], 1, T0).ok, false, 'd, e and f are limited together');
  assert.equal(rl.size, 4);
  // Once the window has passed every old entry is reclaimable, so each newcomer is tracked alone
  // (drain would fail on the second caller if they still shared the 2-unit overflow entry).
  const later = T0 + 30_000;
  for (const c of ['g', 'h', 'i']) drain(rl, c, ['only'], 2, later);
  assert.ok(rl.size <= 4);
});

test('bounded caller table under a flood of 1,000,000 distinct callers', () => {
  const gc = collectGarbage();
  const maxCallers = 10_000;
  const rl = limiter(
    { clob: DEFAULT_BUCKETS.clob!, book: DEFAULT_BUCKETS.book!, health: DEFAULT_BUCKETS.health! },
    { maxCallers },
  );
  const route = ['clob', 'book'];
  drain(rl, 'heavy', route, 200, T0);
  assert.equal(rl.take('heavy', route, 1, T0).ok, false);

  const memory = (): number => {
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  let maxSize = 0;
  let mark = 0;
  let filled = 0;
  for (let i = 0; i < 1_000_000; i++) {
    const now = T0 + Math.floor(i / 200);
    rl.take(`10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`, route, 1, now);
    if (rl.size > maxSize) maxSize = rl.size;
    if (i === 50_000) {
      filled = rl.size;
      mark = memory();
    }
  }
  const after = memory();
  assert.ok(maxSize <= maxCallers, `size peaked at ${maxSize}`);
  assert.equal(filled, maxCallers);
  const growth = after - mark;
  assert.ok(growth < 8 * 1024 * 1024, `memory grew by ${growth} bytes after the table was full`);

  const heavy = rl.take('heavy', route, 1, T0 + 5_000);
  assert.equal(heavy.ok, false, 'the heavy caller is still limited after the flood');
  assert.equal(heavy.bucket, 'book');
});

test('ROUTE_BUCKETS covers the spec and DESIGN routes, and every bucket exists', () => {
  const specRoutes = [
    'GET /', 'GET /events', 'GET /markets', 'GET /tags', 'GET /public-search', 'GET /events/slug/:slug',
    'GET /markets/slug/:slug', 'GET /book', 'POST /books', 'GET /price', 'POST /prices', 'GET /midpoint',
    'GET /prices-history', 'POST /batch-prices-history', 'GET /sampling-markets', 'GET /builder/trades',
    'POST /last-trades-prices', 'GET /data/order/:id', 'POST /order', 'POST /orders', 'DELETE /order',
    'DELETE /cancel-market-orders', 'GET /trades', 'GET /positions', 'GET /closed-positions',
  ];
  const designRoutes = [
    'POST /auth/api-key', 'GET /auth/derive-api-key', 'DELETE /auth/api-key', 'GET /version', 'GET /tick-size',
    'GET /neg-risk', 'GET /fee-rate', 'GET /time', 'GET /exchange-info', 'GET /data/orders', 'GET /data/trades',
    'DELETE /orders', 'DELETE /cancel-all', 'GET /balance-allowance', 'POST /split', 'POST /merge', 'POST /redeem',
    'POST /admin/events', 'POST /admin/markets/:conditionId/status', 'POST /admin/markets/:conditionId/resolve',
    'POST /admin/wallets/:address/deposit', 'POST /admin/wallets/:address/withdraw', 'GET /admin/wallets/:address',
    'PUT /admin/wallets/:address/profile',
  ];
  for (const route of [...specRoutes, ...designRoutes]) {
    assert.ok(Object.hasOwn(ROUTE_BUCKETS, route), `${route} has buckets`);
  }
  for (const [route, buckets] of Object.entries(ROUTE_BUCKETS)) {
    assert.ok(buckets.length > 0, route);
    for (const b of buckets) assert.ok(Object.hasOwn(DEFAULT_BUCKETS, b), `${route}: bucket ${b} is defined`);
    const general = buckets.filter((b) => ['catalog', 'clob', 'data', 'admin'].includes(b));
    assert.equal(general.length, 1, `${route} charges exactly one general bucket`);
  }
  const expected = [
    { route: 'GET /events', buckets: ['catalog', 'catalog-events', 'catalog-listing'] },
    { route: 'GET /markets', buckets: ['catalog', 'catalog-markets', 'catalog-listing'] },
    { route: 'GET /', buckets: ['clob', 'health'] },
    { route: 'POST /orders', buckets: ['clob', 'trading-burst', 'trading-sustained'] },
    { route: 'GET /trades', buckets: ['data', 'data-trades'] },
    { route: 'GET /admin/wallets/:address', buckets: ['admin'] },
  ];
  for (const e of expected) assert.deepEqual([...ROUTE_BUCKETS[e.route]!], e.buckets, e.route);
  assert.deepEqual([...bucketsFor('get', '/book')], ['clob', 'book']);
  assert.deepEqual([...bucketsFor('GET', '/no/such/route')], ['clob']);
  assert.ok(Object.isFrozen(bucketsFor('POST', '/order')), 'route lists are shared, so they must not be mutable');
});

test('DEFAULT_BUCKETS carries the spec caps', () => {
  const caps: [string, number, number][] = [
    ['catalog', 4000, 10], ['catalog-events', 500, 10], ['catalog-markets', 300, 10], ['catalog-listing', 900, 10],
    ['catalog-tags', 200, 10], ['catalog-search', 350, 10], ['clob', 5000, 10], ['health', 50, 10], ['book', 200, 10],
    ['books', 80, 10], ['price', 200, 10], ['prices', 80, 10], ['midpoint', 200, 10], ['prices-history', 100, 10],
    ['batch-prices-history', 80, 10], ['data', 1000, 10], ['data-trades', 150, 10], ['trading-burst', 2400, 10],
    ['trading-sustained', 24000, 600], ['admin', 10000, 10],
    // Ours, not the spec's: WebSocket upgrades per client address (DESIGN section 10), the web console's files,
    // API keys created per client address.
    ['ws-connect', 100, 10],
    ['console', 300, 10],
    ['api-keys', 1000, 600],
  ];
  for (const [name, limit, windowSeconds] of caps) assert.deepEqual(DEFAULT_BUCKETS[name], { limit, windowSeconds }, name);
  assert.equal(Object.keys(DEFAULT_BUCKETS).length, caps.length);
  assert.doesNotThrow(() => limiter(DEFAULT_BUCKETS));
});

test('POST /auth/api-key charges the api-keys cap: one address creates at most 1,000 keys per 10 min, whatever the wallets', () => {
  const limiter = new RateLimiter({ enabled: true, maxCallers: 16, buckets: DEFAULT_BUCKETS });
  const buckets = bucketsFor('POST', '/auth/api-key');
  assert.deepEqual(buckets, ['clob', 'api-keys']);
  let t = 0;
  // Paced within the order-book cap (500 a second), as the refusal-log flood's key creation was.
  for (let i = 0; i < 1000; i++) assert.ok(limiter.take('ip:10.6.6.6', buckets, 1, (t += 3)).ok, `key ${i}`);
  const v = limiter.take('ip:10.6.6.6', buckets, 1, (t += 3));
  assert.deepEqual([v.ok, v.bucket], [false, 'api-keys']);
  assert.ok(limiter.take('ip:10.6.6.7', buckets, 1, t).ok, 'another address');
});
