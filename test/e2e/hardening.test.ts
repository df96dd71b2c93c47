/**
 * The edge against one client that tries to crash, stall or flood it, over real sockets on loopback
 * (issue "Hardening"): each finding is reproduced as it was reported and must no longer hold.
 *   1. made-up HTTP methods on unknown routes must not grow the Prometheus series (they did, one per
 *      method, until the process ran out of heap on a scrape);
 *   2. one client within its caps must not stall everyone with bodies that are costly to validate or to
 *      parse (huge arrays, deep nesting), nor get a body parsed once its caps refused it;
 *   3. a client that pipelines requests and never reads must not make the process buffer every answer;
 *   4. a captured signed request sent again within its window changes nothing (split, cancel-all, an L1
 *      derive from elsewhere), also across a restart where money moves;
 *   5. the trading caps hold per wallet, whatever number of API keys it has, and keys per wallet are capped;
 *   6. conflicting framing (two different Content-Lengths) is refused, so nothing rides in a body.
 * The real app runs in this process, so its heap and RSS are this process's.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startApp, type App } from '../../src/node/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { rawHttp, tempDir } from '../fixtures/edge.ts';
import { TestClient, units, type Creds } from '../fixtures/trading-client.ts';
import { collectGarbage } from '../fixtures/gc.ts';

let app: App;

before(async () => {
  // Loopback is a trusted proxy, so that an attack can come from an address of its own (X-Forwarded-For) and
  // spend only its own byte budget (32 MiB per 10 s an address), not the tests' after it.
  app = await startApp(testConfig({ dataDir: tempDir(), http: { port: 0, trustedProxies: ['127.0.0.1'] }, demo: 'static', adminToken: 'admin' }), { log: silentLogger });
});
after(() => app.stop(1000));

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

// ---- 2. costly bodies ------------------------------------------------------------------------------

async function timeGets(port: number, n: number, gapMs: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fetch(`http://127.0.0.1:${port}/time`);
    out.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, gapMs));
  }
  return out.sort((a, b) => a - b);
}

test('2. two connections posting megabyte arrays of wrong elements to POST /last-trades-prices do not stall others', { timeout: 60_000 }, async () => {
  // ~520k wrong elements in 1 MiB (before: ~300 ms of main thread each, others' GET /time p50 470 ms).
  const big = Buffer.from(`[${Array(520_000).fill('1').join(',')}]`);
  // The same shape under the route's body cap: refused on its length, never element by element.
  const under = Buffer.from(`[${Array(100_000).fill('1').join(',')}]`);
  let stop = false;
  const answers = new Map<number, number>();
  const attacker = async (body: Buffer) => {
    while (!stop) {
      const r = await rawHttp(app.port, [`POST /last-trades-prices HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 10.9.9.9\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`, body], { timeoutMs: 10_000, untilFinal: true });
      const status = r.responses[0]?.status ?? 0;
      answers.set(status, (answers.get(status) ?? 0) + 1);
    }
  };
  const attacks = [attacker(big), attacker(under)];
  await new Promise((r) => setTimeout(r, 300));
  const latencies = await timeGets(app.port, 30, 30);
  stop = true;
  await Promise.all(attacks);
  assert.ok((answers.get(413) ?? 0) > 0 && (answers.get(400) ?? 0) > 0, `attack answers ${JSON.stringify([...answers])}`);
  const p50 = latencies[15]!;
  assert.ok(p50 < 50, `others' GET /time p50 ${p50.toFixed(1)} ms during the attack`);
});

test('2. an array longer than the route takes is refused on its length; deep nesting is refused before it is parsed', async () => {
  const under = JSON.stringify(Array.from({ length: 600 }, () => ({ token_id: '1' })));
  const r = await fetch(`http://127.0.0.1:${app.port}/prices`, { method: 'POST', body: under, headers: { 'content-type': 'application/json' } });
  assert.deepEqual([r.status, await r.json()], [400, { error: 'Payload exceeds the limit: 600 token ids, max allowed: 500' }]);
  // The admin catalog import walked nested input recursively: 10,000 levels overflowed the stack.
  const deep = '[' + '{"title":"x","markets":['.repeat(10_000) + ']}'.repeat(10_000) + ']';
  const a = await fetch(`http://127.0.0.1:${app.port}/admin/events`, { method: 'POST', body: deep, headers: { 'content-type': 'application/json', authorization: 'Bearer admin' } });
  assert.deepEqual([a.status, await a.json()], [400, { error: 'invalid JSON body: nested deeper than 32 levels' }]);
  const nested = await fetch(`http://127.0.0.1:${app.port}/prices`, { method: 'POST', body: '['.repeat(100_000) + ']'.repeat(100_000), headers: { 'content-type': 'application/json' } });
  assert.equal(nested.status, 400);
});

test('2. a body is parsed only once the caller\'s caps admitted the request', async () => {
  const capped = await startApp(
    testConfig({ dataDir: tempDir(), http: { port: 0 }, demo: false, adminToken: 'admin', rateLimits: { buckets: { admin: { limit: 2, windowSeconds: 10 } } } }),
    { log: silentLogger },
  );
  const body = `[${Array(70_000).fill('{"title":"t"}').join(',')}]`;
  const parse = JSON.parse;
  let bigParses = 0;
  JSON.parse = ((text: string, reviver?: (k: string, v: unknown) => unknown) => {
    if (typeof text === 'string' && text.length > 100_000) bigParses++;
    return parse(text, reviver);
  }) as typeof JSON.parse;
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await fetch(`http://127.0.0.1:${capped.port}/admin/events`, { method: 'POST', body, headers: { 'content-type': 'application/json', authorization: 'Bearer admin' } });
      statuses.push(r.status);
      await r.arrayBuffer();
    }
    assert.deepEqual(statuses, [400, 400, 429, 429, 429, 429]);
    assert.equal(bigParses, 2, 'only the two admitted bodies were parsed');
  } finally {
    JSON.parse = parse;
    await capped.stop(1000);
  }
});

test('2. a signed request whose body nests past the bound is refused as too deep and changes nothing, forged or not', async () => {
  // http.ts keeps none of such a body (it is scanned as it arrives), so its HMAC cannot be checked: the
  // refusal is charged to the client address, as a bad signature is.
  const t = await tradingApp();
  try {
    const info = await TestClient.info(t.base);
    const alice = new TestClient(t.base, `0x${'e5'.repeat(32)}`, info);
    await market(t.admin);
    assert.equal((await t.admin('POST', `/admin/wallets/${alice.address}/deposit`, { amount: '100' })).status, 200);
    await alice.createKey();
    const body = '['.repeat(5_000) + ']'.repeat(5_000);
    const tooDeep = { status: 400, body: { error: 'invalid JSON body: nested deeper than 32 levels' } };
    assert.deepEqual(await send(t.base, 'POST', '/split', { ...alice.l2Headers('POST', '/split', body), 'content-type': 'application/json' }, body), tooDeep);
    assert.deepEqual(await send(t.base, 'POST', '/split', { ...alice.l2Headers('POST', '/split', '{}'), 'content-type': 'application/json' }, body), tooDeep);
    assert.equal((await t.admin('GET', `/admin/wallets/${alice.address}`)).body.usdc.available, '100');
    // The same key still trades: a split of a sound body goes through.
    const split = JSON.stringify({ conditionId: CID, amount: '10' });
    assert.equal((await send(t.base, 'POST', '/split', alice.l2Headers('POST', '/split', split), split)).status, 200);
  } finally {
    await t.app.stop(1000);
  }
});

// ---- 4. replays ------------------------------------------------------------------------------------

const CID = `0x${'d4'.repeat(32)}`;

async function tradingApp(extra: Record<string, unknown> = {}, dataDir = tempDir()): Promise<{ app: App; base: string; admin: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }> }> {
  const a = await startApp(testConfig({ dataDir, http: { port: 0, trustedProxies: ['127.0.0.1'] }, demo: false, adminToken: 't', auth: { signatureThreads: 1 }, ...extra }), { log: silentLogger });
  const base = `http://127.0.0.1:${a.port}`;
  const admin = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${base}${path}`, { method, headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: r.status, body: (await r.json()) as any };
  };
  return { app: a, base, admin };
}

async function market(admin: Awaited<ReturnType<typeof tradingApp>>['admin']): Promise<void> {
  const up = await admin('POST', '/admin/events', [{ title: 'Replay test', slug: 'replay-test', endDate: '2027-06-30T00:00:00Z', markets: [{ question: 'Replayed?', conditionId: CID, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] }]);
  assert.equal(up.status, 200, JSON.stringify(up.body));
}

/** Sends a request with exactly these headers, as an attacker who captured them would. */
async function send(base: string, method: string, path: string, headers: Record<string, string>, body?: string) {
  const r = await fetch(`${base}${path}`, { method, headers, body });
  return { status: r.status, body: (await r.json()) as any };
}

test('4. a captured POST /split sent three times splits once, also after a restart; a replayed DELETE /cancel-all cancels nothing placed since', { timeout: 60_000 }, async () => {
  const dataDir = tempDir();
  let t = await tradingApp({}, dataDir);
  const info = await TestClient.info(t.base);
  const alice = new TestClient(t.base, `0x${'a7'.repeat(32)}`, info);
  await market(t.admin);
  assert.equal((await t.admin('POST', `/admin/wallets/${alice.address}/deposit`, { amount: '100' })).status, 200);
  await alice.createKey();
  const usdc = async () => (await t.admin('GET', `/admin/wallets/${alice.address}`)).body.usdc.available;

  const splitBody = JSON.stringify({ conditionId: CID, amount: '10' });
  const captured = alice.l2Headers('POST', '/split', splitBody);
  const first = await send(t.base, 'POST', '/split', captured, splitBody);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  for (let i = 0; i < 2; i++) assert.deepEqual(await send(t.base, 'POST', '/split', captured, splitBody), first);
  assert.equal(await usdc(), '90', 'one split of 10');

  // cancel-all captured before an order is placed, replayed after: the order stays.
  const cancelAll = alice.l2Headers('DELETE', '/cancel-all', undefined);
  const none = await send(t.base, 'DELETE', '/cancel-all', cancelAll);
  assert.deepEqual(none.body, { canceled: [], not_canceled: {} });
  const [YES] = t.app.ctx.catalog.read.marketByCondition(CID)!.clobTokenIds;
  const placed = await alice.place({ tokenId: YES!, side: 'BUY', makerAmount: units(2), takerAmount: units(10) });
  assert.equal(placed.status, 200, JSON.stringify(placed.body));
  assert.deepEqual(await send(t.base, 'DELETE', '/cancel-all', cancelAll), none, 'the replay gets the first answer');
  assert.equal(((await (await fetch(`${t.base}/data/order/${placed.body.orderID}`)).json()) as any).order.status, 'LIVE');

  // Across a restart (inside the window): the split is still remembered.
  await t.app.stop(1000);
  t = await tradingApp({}, dataDir);
  assert.deepEqual(await send(t.base, 'POST', '/split', captured, splitBody), first);
  assert.equal(await usdc(), '88', 'still one split of 10 (the order reserves 2)');
  await t.app.stop(1000);
});

test('4. a replayed L1 derive from another client address is refused; the client\'s own retry gets its answer', async () => {
  const t = await tradingApp();
  try {
    const info = await TestClient.info(t.base);
    const bob = new TestClient(t.base, `0x${'b8'.repeat(32)}`, info);
    const creds = await bob.createKey(3);
    const h = await bob.l1Headers(3);
    const mine = await send(t.base, 'GET', '/auth/derive-api-key', { ...h, 'x-forwarded-for': '10.0.0.1' });
    assert.deepEqual(mine, { status: 200, body: creds });
    assert.deepEqual(await send(t.base, 'GET', '/auth/derive-api-key', { ...h, 'x-forwarded-for': '10.0.0.1' }), mine);
    assert.deepEqual(await send(t.base, 'GET', '/auth/derive-api-key', { ...h, 'x-forwarded-for': '10.6.6.6' }), { status: 401, body: { error: 'Invalid L1 Request headers' } });
  } finally {
    await t.app.stop(1000);
  }
});

// ---- 5. caps per wallet ----------------------------------------------------------------------------

test('5. three API keys of one wallet share its trading caps; an eleventh key is refused', { timeout: 60_000 }, async () => {
  const t = await tradingApp({ rateLimits: { buckets: { 'trading-burst': { limit: 20, windowSeconds: 10 } } } });
  try {
    const info = await TestClient.info(t.base);
    const carol = new TestClient(t.base, `0x${'c9'.repeat(32)}`, info);
    await market(t.admin);
    assert.equal((await t.admin('POST', `/admin/wallets/${carol.address}/deposit`, { amount: '1000' })).status, 200);
    const keys: Creds[] = [];
    for (let n = 0; n < 3; n++) keys.push(await carol.createKey(n));
    const [YES] = t.app.ctx.catalog.read.marketByCondition(CID)!.clobTokenIds;
    const signed = await Promise.all(Array.from({ length: 45 }, () => carol.signOrder({ tokenId: YES!, side: 'BUY', makerAmount: units(0.1), takerAmount: units(1) })));
    const statuses = await Promise.all(signed.map((o, i) => carol.call('POST', '/order', { ...o, owner: keys[i % 3]!.apiKey }, keys[i % 3]).then((r) => r.status)));
    const admitted = statuses.filter((s) => s !== 429).length;
    // Per key alone 3 x 20 = 60 would pass; the wallet's window holds 20 (one sub-window more at most).
    assert.ok(admitted >= 20 && admitted <= 22, `${admitted} admitted of 45 (statuses ${statuses.join(',')})`);

    for (let n = 3; n < 10; n++) await carol.createKey(n);
    const eleventh = await fetch(`${t.base}/auth/api-key`, { method: 'POST', headers: await carol.l1Headers(10) });
    assert.deepEqual([eleventh.status, await eleventh.json()], [400, { error: 'too many API keys for this wallet: at most 10; revoke one first' }]);
    const revoke = await carol.call('DELETE', '/auth/api-key', undefined, keys[0]);
    assert.equal(revoke.status, 200);
    await carol.createKey(11);
  } finally {
    await t.app.stop(1000);
  }
});

// ---- 6. framing ------------------------------------------------------------------------------------

test('6. two different Content-Lengths, doubled or unknown transfer codings: 400 and closed; nothing rides in the body', async () => {
  const victim = `0x${'66'.repeat(20)}`;
  const deposit = JSON.stringify({ amount: '5' });
  // What a proxy reading the other length would see as a second request: a deposit by the admin.
  const smuggled = `POST /admin/wallets/${victim}/deposit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin\r\nContent-Type: application/json\r\nContent-Length: ${deposit.length}\r\n\r\n${deposit}`;
  // Each case as (what the second length or coding promises, what is actually sent after the first body).
  const heads = [
    (tail: string, sent: string) => `POST /prices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: ${2 + tail.length}\r\n\r\n[]${sent}`,
    (_tail: string, sent: string) => `POST /prices HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n0\r\n\r\n${sent}`,
    (_tail: string, sent: string) => `POST /prices HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n[]\r\n0\r\n\r\n${sent}`,
    (tail: string, sent: string) => `GET /time HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: ${tail.length}\r\n\r\n${sent}`,
  ];
  for (const head of heads) {
    // Alone: the refusal, then the close.
    const alone = await rawHttp(app.port, head(smuggled, ''), { timeoutMs: 2000 });
    assert.equal(alone.responses.length, 1, alone.bytes.toString('latin1').slice(0, 200));
    assert.deepEqual([alone.responses[0]!.status, JSON.parse(alone.responses[0]!.body.toString())], [400, { error: 'conflicting request framing' }]);
    assert.equal(alone.closedByServer, true);
    // With a request riding behind it: closed, and that request never runs (uWS may close before the 400 leaves).
    const ridden = await rawHttp(app.port, head(smuggled, smuggled), { timeoutMs: 2000 });
    assert.ok(ridden.responses.length <= 1 && ridden.responses.every((r) => r.status === 400), ridden.bytes.toString('latin1').slice(0, 300));
    assert.equal(ridden.closedByServer, true);
  }
  const balances = await (await fetch(`http://127.0.0.1:${app.port}/admin/wallets/${victim}`, { headers: { authorization: 'Bearer admin' } })).json();
  assert.equal((balances as { usdc: { available: string } }).usdc.available, '0', 'no smuggled deposit ran');
  // The same Content-Length twice is one length.
  const same = await rawHttp(app.port, 'POST /prices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]', { timeoutMs: 2000, untilFinal: true });
  assert.equal(same.responses[0]?.status, 200);
});
