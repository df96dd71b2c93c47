/**
 * Rate limits through HTTP (DESIGN section 8): the 429 answer and its headers, recovery once the window
 * has passed, both trading windows at once, a combined bucket shared by two routes, per-caller keys
 * (X-Forwarded-For only from a trusted proxy), the off switch, and the metrics that count refusals.
 * Time is a ManualClock: windows move only when the test says so. Routes use the real route -> bucket
 * table (rate-limit-buckets.ts) by registering the table's paths.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { startApp } from '../../../src/node/app.ts';
import { sampleOf as sample } from '../../../tools/metrics-text.ts';
import { route, type AnyRoute } from '../../../src/edge/pipeline/route.ts';
import { ManualClock } from '../../../src/runtime/clock.ts';
import { testConfig } from '../../../src/runtime/config.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { startTestServer, tempDir, type TestServer } from '../../fixtures/edge.ts';

/** Small caps for the buckets under test; every other bucket keeps its (large) default. */
const SMALL = {
  health: { limit: 3, windowSeconds: 10 },
  'catalog-listing': { limit: 4, windowSeconds: 10 },
  'trading-burst': { limit: 3, windowSeconds: 10 },
  'trading-sustained': { limit: 5, windowSeconds: 600 },
  book: { limit: 20, windowSeconds: 10 },
};

const routes: AnyRoute[] = [
  route({ method: 'GET', path: '/', group: 'ops', summary: 'health: clob + health', handler: () => 'OK' }),
  route({ method: 'GET', path: '/book', group: 'clob', summary: 'clob + book', handler: () => ({}) }),
  route({ method: 'GET', path: '/events', group: 'catalog', summary: 'catalog + catalog-events + catalog-listing', handler: () => [] }),
  route({ method: 'GET', path: '/markets', group: 'catalog', summary: 'catalog + catalog-markets + catalog-listing', handler: () => [] }),
  route({
    method: 'POST',
    path: '/order',
    group: 'trading',
    summary: 'clob + trading-burst + trading-sustained',
    body: Type.Object({ n: Type.Integer() }),
    handler: (r) => ({ success: true, n: r.body.n }),
  }),
];

async function server(opts: { enabled?: boolean; trustedProxies?: string[] } = {}): Promise<{ srv: TestServer; clock: ManualClock }> {
  const clock = new ManualClock();
  const cfg = testConfig({ rateLimits: { enabled: opts.enabled ?? true, buckets: SMALL } });
  const srv = await startTestServer(routes, { rateLimits: cfg.rateLimits, clock, trustedProxies: opts.trustedProxies });
  return { srv, clock };
}

interface Hit {
  status: number;
  body: unknown;
  headers: Headers;
}

async function hit(srv: TestServer, path: string, o: { xff?: string; method?: string; body?: string } = {}): Promise<Hit> {
  const headers: Record<string, string> = {};
  if (o.xff) headers['x-forwarded-for'] = o.xff;
  const r = await fetch(srv.base + path, { method: o.method ?? 'GET', headers, body: o.body });
  return { status: r.status, body: await r.json(), headers: r.headers };
}

const order = (srv: TestServer, n: number) => hit(srv, '/order', { method: 'POST', body: JSON.stringify({ n }) });

function assertLimited(h: Hit, limit: number, windowSeconds: number): { retryAfter: number; reset: number } {
  assert.equal(h.status, 429);
  assert.deepEqual(h.body, { error: 'Too Many Requests' });
  const int = (name: string) => {
    const v = h.headers.get(name);
    assert.ok(v !== null && /^\d+$/.test(v), `${name} is a non-negative integer, got ${v}`);
    return Number(v);
  };
  const retryAfter = int('retry-after');
  const reset = int('ratelimit-reset');
  assert.equal(int('ratelimit-limit'), limit);
  assert.equal(int('ratelimit-remaining'), 0);
  assert.ok(retryAfter >= 1 && retryAfter <= 2 * windowSeconds, `Retry-After ${retryAfter} within (0, 2W]`);
  assert.ok(reset >= 1 && reset <= windowSeconds, `RateLimit-Reset ${reset} within (0, W]`);
  return { retryAfter, reset };
}

test('after the cap: 429 {"error":"Too Many Requests"} with Retry-After and RateLimit-* headers; Retry-After is the exact whole-second wait', async () => {
  const { srv, clock } = await server();
  try {
    for (let i = 0; i < 3; i++) assert.equal((await hit(srv, '/')).status, 200, `request ${i + 1}`);
    const refused = await hit(srv, '/');
    const { retryAfter } = assertLimited(refused, 3, 10);
    // Refusals charge nothing: asking again changes nothing.
    assertLimited(await hit(srv, '/'), 3, 10);
    // One second short of Retry-After it is still refused; at Retry-After it passes.
    clock.advance((retryAfter - 1) * 1000);
    assert.equal((await hit(srv, '/')).status, 429, `still refused ${retryAfter - 1}s later`);
    clock.advance(1000);
    assert.equal((await hit(srv, '/')).status, 200, `admitted ${retryAfter}s later`);
  } finally {
    await srv.close();
  }
});

test('a caller paced at exactly the cap for 60 s of the limiter\'s clock is never refused; one over the cap is', async () => {
  const { srv, clock } = await server();
  try {
    // 20 per 10 s: one request every 500 ms, 120 requests; every trailing 10 s window holds exactly 20.
    clock.advance(123);
    for (let k = 0; k < 120; k++) {
      const h = await hit(srv, '/book');
      assert.equal(h.status, 200, `request ${k + 1} at +${k * 500} ms`);
      clock.advance(500);
    }
    // The same caller now asks faster than the cap: within one instant at most 20 pass, then 429.
    clock.advance(10_000);
    let admitted = 0;
    for (let k = 0; k < 25; k++) if ((await hit(srv, '/book')).status === 200) admitted++;
    assert.equal(admitted, 20);
    assertLimited(await hit(srv, '/book'), 20, 10);
  } finally {
    await srv.close();
  }
});

test('recovery: once the windows have passed the full cap is available again', async () => {
  const { srv, clock } = await server();
  try {
    for (let i = 0; i < 3; i++) await hit(srv, '/');
    assert.equal((await hit(srv, '/')).status, 429);
    clock.advance(20_000);
    for (let i = 0; i < 3; i++) assert.equal((await hit(srv, '/')).status, 200, `request ${i + 1} after recovery`);
    assert.equal((await hit(srv, '/')).status, 429);
  } finally {
    await srv.close();
  }
});

test('both trading windows apply at once: burst refuses within its window, sustained refuses later although the burst window is fresh', async () => {
  const { srv, clock } = await server();
  try {
    for (let i = 0; i < 3; i++) assert.equal((await order(srv, i)).status, 200);
    const burst = await order(srv, 3);
    assertLimited(burst, 3, 10);
    // Two burst windows later the burst count is gone; the sustained window still holds 3 of 5.
    clock.advance(20_000);
    for (let i = 0; i < 2; i++) assert.equal((await order(srv, 10 + i)).status, 200, `order ${i + 1} in the fresh burst window`);
    const sustained = await order(srv, 12);
    const { retryAfter } = assertLimited(sustained, 5, 600);
    assert.ok(retryAfter > 10, `the sustained window's wait (${retryAfter}s) is longer than a burst window`);
    // Burst windows keep coming and going; the sustained cap still refuses.
    clock.advance(20_000);
    assertLimited(await order(srv, 13), 5, 600);
    const metrics = await srv.metrics.text();
    assert.equal(sample(metrics, 'http_rate_limited_total', { bucket: 'trading-burst' }), 1);
    assert.equal(sample(metrics, 'http_rate_limited_total', { bucket: 'trading-sustained' }), 2);
  } finally {
    await srv.close();
  }
});

test('a combined bucket is shared by the routes that charge it (catalog-listing: /events and /markets)', async () => {
  const { srv } = await server();
  try {
    for (const path of ['/events', '/markets', '/events', '/markets']) assert.equal((await hit(srv, path)).status, 200, path);
    assertLimited(await hit(srv, '/events'), 4, 10);
    assertLimited(await hit(srv, '/markets'), 4, 10);
    // Routes outside the combined bucket are unaffected.
    assert.equal((await hit(srv, '/')).status, 200);
  } finally {
    await srv.close();
  }
});

test('per caller: with 127.0.0.1 as trusted proxy, two X-Forwarded-For clients are limited separately', async () => {
  const { srv } = await server({ trustedProxies: ['127.0.0.1'] });
  try {
    for (let i = 0; i < 3; i++) assert.equal((await hit(srv, '/', { xff: '203.0.113.1' })).status, 200);
    assert.equal((await hit(srv, '/', { xff: '203.0.113.1' })).status, 429);
    for (let i = 0; i < 3; i++) assert.equal((await hit(srv, '/', { xff: '203.0.113.2' })).status, 200, 'second client has its own window');
    assert.equal((await hit(srv, '/', { xff: '203.0.113.2' })).status, 429);
    // A client-supplied entry left of the proxy-written one changes nothing: the right-most untrusted hop is the key.
    assert.equal((await hit(srv, '/', { xff: '198.51.100.9, 203.0.113.1' })).status, 429);
    // No header: the proxy itself is the caller, with a window of its own.
    assert.equal((await hit(srv, '/')).status, 200);
  } finally {
    await srv.close();
  }
});

test('per caller: without a trusted proxy, X-Forwarded-For is ignored and the peer address is the key', async () => {
  const { srv } = await server();
  try {
    for (let i = 0; i < 3; i++) assert.equal((await hit(srv, '/', { xff: `203.0.113.${i + 1}` })).status, 200);
    assert.equal((await hit(srv, '/', { xff: '203.0.113.99' })).status, 429, 'a fresh X-Forwarded-For does not dodge the cap');
    assert.equal((await hit(srv, '/')).status, 429);
  } finally {
    await srv.close();
  }
});

test('rate limits off (rateLimits.enabled: false): never 429', async () => {
  const { srv } = await server({ enabled: false });
  try {
    for (let i = 0; i < 30; i++) assert.equal((await hit(srv, '/')).status, 200);
    for (let i = 0; i < 10; i++) assert.equal((await order(srv, i)).status, 200);
    for (let i = 0; i < 10; i++) assert.equal((await hit(srv, i % 2 ? '/events' : '/markets')).status, 200);
  } finally {
    await srv.close();
  }
});

test('/metrics (real app) counts 429s by bucket, requests by route and status, and a latency histogram per route', async () => {
  const clock = new ManualClock();
  const config = testConfig({ dataDir: tempDir(), http: { port: 0 }, rateLimits: { enabled: true, buckets: { health: { limit: 2, windowSeconds: 10 } } } });
  const app = await startApp(config, { clock, log: silentLogger });
  try {
    const base = `http://127.0.0.1:${app.port}`;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await fetch(`${base}/`)).status);
    assert.deepEqual(statuses, [200, 200, 429, 429, 429]);
    await fetch(`${base}/time`);
    await fetch(`${base}/nope`);
    const r = await fetch(`${base}/metrics`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /text\/plain/);
    const text = await r.text();
    assert.equal(sample(text, 'http_rate_limited_total', { bucket: 'health' }), 3);
    assert.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/', status: '200' }), 2);
    assert.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/', status: '429' }), 3);
    assert.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/time', status: '200' }), 1);
    assert.equal(sample(text, 'http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' }), 1);
    assert.equal(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/' }), 5);
    assert.equal(sample(text, 'http_request_duration_seconds_bucket', { method: 'GET', route: '/', le: '+Inf' }), 5);
    const sum = sample(text, 'http_request_duration_seconds_sum', { method: 'GET', route: '/' });
    assert.ok(sum >= 0 && sum < 5, `latency sum ${sum}`);
    // Buckets are cumulative and non-decreasing.
    const les = [...text.matchAll(/^http_request_duration_seconds_bucket\{([^}]*)\} (\S+)$/gm)]
      .filter((m) => m[1].includes('route="/"') && m[1].includes('method="GET"'))
      .map((m) => Number(m[2]));
    assert.ok(les.length >= 10, 'histogram has its buckets');
    for (let i = 1; i < les.length; i++) assert.ok(les[i] >= les[i - 1], 'cumulative buckets');
    // The engine's counters are read at scrape time: a deposit is one more journal batch and transaction.
    const stats = app.ctx.engine.stats();
    assert.equal(sample(text, 'engine_transactions', {}), stats.transactions);
    assert.equal(sample(text, 'engine_journal_seq', {}), stats.journalSeq);
    assert.equal(sample(text, 'signature_pool_tasks', {}), app.ctx.auth.pool.tasks);
    assert.equal(sample(text, 'signature_pool_orders', {}), app.ctx.auth.pool.orders);
    assert.ok((await app.ctx.engine.deposit('0x' + '7'.repeat(40), 5_000_000)).ok);
    const after = await (await fetch(`${base}/metrics`)).text();
    assert.equal(sample(after, 'engine_transactions', {}), stats.transactions + 1);
    assert.equal(sample(after, 'engine_journal_seq', {}), stats.journalSeq + 1);
  } finally {
    await app.stop();
  }
});
