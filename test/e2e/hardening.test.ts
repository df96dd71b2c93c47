/**
 * The edge against one client that tries to crash, stall or flood it, over real sockets on loopback
 * (issue "Hardening"): each finding is reproduced as it was reported and must no longer hold.
 *   1. made-up HTTP methods on unknown routes must not grow the Prometheus series (they did, one per
 *      method, until the process ran out of heap on a scrape);
 *   3. a client that pipelines requests and never reads must not make the process buffer every answer.
 * The real app runs in this process, so its heap and RSS are this process's.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { startApp, type App } from '../../src/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { rawHttp, tempDir } from '../fixtures/edge.ts';

let app: App;

before(async () => {
  app = await startApp(testConfig({ dataDir: tempDir(), http: { port: 0 }, demo: true, adminToken: 'admin' }), { log: silentLogger });
});
after(() => app.stop(1000));

function collectGarbage(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

const seriesOf = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`${name}{`)).length;

test('1. thousands of made-up methods on unknown routes: 404s, a closed set of metric series, flat memory', { timeout: 60_000 }, async () => {
  const gc = collectGarbage();
  const scrape = async () => (await fetch(`http://127.0.0.1:${app.port}/metrics`)).text();
  const before = await scrape();
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  const N = 3000;
  let next = 0;
  const statuses = new Map<number, number>();
  const worker = async () => {
    while (next < N) {
      const i = next++;
      // A distinct method token per request, up to 2 KB long: every one was a new series before.
      const method = `M${i.toString(36).toUpperCase()}${'X'.repeat(i % 2000)}`;
      const r = await rawHttp(app.port, `${method} /no/such/route HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, { timeoutMs: 5000, untilFinal: true });
      const status = r.responses[0]?.status ?? 0;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  assert.deepEqual([...statuses], [[404, N]], 'every one answered 404');
  const afterText = await scrape();
  const added = seriesOf(afterText, 'http_requests_total') - seriesOf(before, 'http_requests_total');
  assert.ok(added <= 2, `${added} new request-count series for ${N} distinct methods`);
  assert.match(afterText, /http_requests_total\{method="OTHER",route="\(unmatched\)",status="404"\} 3000/);
  gc();
  const grown = process.memoryUsage().heapUsed - heap0;
  assert.ok(grown < 16 * 1024 * 1024, `heap grew by ${(grown / 1e6).toFixed(1)} MB`);
});

test('1. unmatched requests are rate-limited per client like any other request', async () => {
  const limited = await startApp(
    testConfig({ dataDir: tempDir(), http: { port: 0 }, demo: false, rateLimits: { buckets: { clob: { limit: 20, windowSeconds: 10 } } } }),
    { log: silentLogger },
  );
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await fetch(`http://127.0.0.1:${limited.port}/nothing/${i}`)).status);
    assert.deepEqual(statuses.slice(0, 20), Array(20).fill(404));
    assert.deepEqual(statuses.slice(20), Array(5).fill(429));
  } finally {
    await limited.stop(1000);
  }
});

test('3. a client pipelining 5,000 GET /openapi.json and never reading: memory stays bounded and others are served', { timeout: 60_000 }, async () => {
  const rss0 = process.memoryUsage().rss;
  const sock = net.connect(app.port, '127.0.0.1');
  sock.pause();
  await new Promise((r) => sock.once('connect', r));
  sock.on('error', () => undefined);
  sock.write('GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(5000));
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const latencies: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    assert.equal((await fetch(`http://127.0.0.1:${app.port}/time`)).status, 200);
    latencies.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 50));
  }
  clearInterval(sampler);
  sock.destroy();
  const grown = (peak - rss0) / 1e6;
  // Before: one such socket grew the process by ~450 MB and stalled everyone for seconds.
  assert.ok(grown < 150, `RSS grew by ${grown.toFixed(0)} MB`);
  assert.ok(Math.max(...latencies) < 1000, `another client's GET /time took up to ${Math.max(...latencies).toFixed(0)} ms`);
});
