/**
 * The sandbox's controls over HTTP (edge/sandbox/, routes/sandbox.ts), with real keys and signatures, on a
 * ManualClock:
 *   - a maintenance window (admin or scheduled) answers 425 {"error":"service not ready"} on every order
 *     route and on nothing else; open orders stay and reads keep working; the post-only period after it
 *     refuses orders without postOnly (503 post_only_mode with Retry-After) and takes cancels and post-only
 *     orders; then trading is open again; DELETE ends a window at once;
 *   - closed-only: reported by GET /auth/ban-status/closed-only, BUYs refused with the platform's message,
 *     SELLs and cancels accepted, kept across a restart;
 *   - each fault does what it says, draws from its seed (the same seed and requests: the same faults), is
 *     logged and counted in /metrics, and nothing happens when faults are off; a scenario file given at
 *     start is active from the first request, a bad one stops the start.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { startApp, type App } from '../../src/node/app.ts';
import { seededUnit } from '../../src/domain/seeded.ts';
import { ManualClock } from '../../src/runtime/clock.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { TestClient, units } from '../fixtures/trading-client.ts';

const CID = `0x${'e7'.repeat(32)}`;
const MINUTE = 60_000;
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

let dataDir: string;
let app: App;
let base: string;
let clock: ManualClock;
let alice: TestClient;
let bob: TestClient;
let yes: string;
let scheduledAt: number;
const logLines: Array<Record<string, unknown>> = [];

function config(extra: Record<string, unknown> = {}) {
  // A weekly window 30 minutes from now: the test moves the manual clock there.
  const at = new Date(scheduledAt);
  const hhmm = `${String(at.getUTCHours()).padStart(2, '0')}:${String(at.getUTCMinutes()).padStart(2, '0')}`;
  return testConfig({
    dataDir,
    http: { port: 0 },
    adminToken: 't',
    demo: 'off',
    rateLimits: { enabled: false },
    auth: { signatureThreads: 1, maxClockSkewSeconds: 3600 },
    sandbox: { maintenance: { weekly: [{ day: WEEKDAYS[at.getUTCDay()], at: hhmm }], durationSeconds: 90, postOnlySeconds: 120 } },
    ...extra,
  });
}

const log = pino({ level: 'info' }, { write: (s: string) => void logLines.push(JSON.parse(s) as Record<string, unknown>) });

async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(base + path, { method, headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

async function metric(line: RegExp): Promise<number | undefined> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = text.split('\n').find((l) => line.test(l));
  return m === undefined ? undefined : Number(m.split(' ').pop());
}

const openOrders = async (c: TestClient) => (await c.call('GET', '/data/orders')).body.data.map((o: any) => o.id) as string[];
const bid = (c: TestClient, price: number, extra: Record<string, unknown> = {}) => c.place({ tokenId: yes, side: 'BUY', makerAmount: units(price), takerAmount: units(1), ...extra });
const unknownId = (i: number) => '0x' + i.toString(16).padStart(64, '0');

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pm-sandbox-e2e-'));
  clock = new ManualClock(Date.now());
  scheduledAt = Math.ceil((clock.now() + 30 * MINUTE) / MINUTE) * MINUTE;
  app = await startApp(config(), { log, clock, timers: clock.timers });
  base = `http://127.0.0.1:${app.port}`;
  assert.equal(
    (await admin('POST', '/admin/events', [{ title: 'Sandbox', slug: 'sandbox', endDate: '2027-06-30T00:00:00Z', markets: [{ question: 'Up?', conditionId: CID, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] }])).status,
    200,
  );
  yes = app.ctx.catalog.read.marketByCondition(CID)!.clobTokenIds[0];
  const info = await TestClient.info(base);
  alice = new TestClient(base, `0x${'a7'.repeat(32)}`, info);
  bob = new TestClient(base, `0x${'b8'.repeat(32)}`, info);
  for (const c of [alice, bob]) {
    assert.equal((await admin('POST', `/admin/wallets/${c.address}/deposit`, { amount: '100' })).status, 200);
    await c.createKey();
    assert.equal((await c.call('POST', '/split', { conditionId: CID, amount: '20' })).status, 200);
  }
});

after(async () => {
  await app.stop(1000);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('maintenance windows', () => {
  test('an admin window: 425 on every order route and nothing else, then post-only, then open', async () => {
    const resting = await bid(alice, 0.3);
    assert.equal(resting.body.status, 'live');
    const started = await admin('POST', '/admin/sandbox/maintenance', { durationSeconds: 90, postOnlySeconds: 120 });
    assert.deepEqual([started.status, started.body.phase, started.body.until], [200, 'maintenance', new Date(clock.now() + 90_000).toISOString()]);

    const signed = await alice.signOrder({ tokenId: yes, side: 'BUY', makerAmount: units(0.2), takerAmount: units(1) });
    const orderRoutes = [
      () => alice.call('POST', '/order', signed),
      () => alice.call('POST', '/orders', [signed]),
      () => alice.call('DELETE', '/order', { orderID: resting.body.orderID }),
      () => alice.call('DELETE', '/orders', [resting.body.orderID]),
      () => alice.call('DELETE', '/cancel-market-orders', { market: CID, asset_id: '' }),
      () => alice.call('DELETE', '/cancel-all'),
    ];
    for (const [i, call] of orderRoutes.entries()) assert.deepEqual(await call(), { status: 425, body: { error: 'service not ready' } }, `order route ${i}`);
    // Open orders stay; reads, wallet operations and the admin API keep working.
    assert.deepEqual(await openOrders(alice), [resting.body.orderID]);
    assert.equal((await fetch(`${base}/data/order/${resting.body.orderID}`)).status, 200);
    const book = (await (await fetch(`${base}/book?token_id=${yes}`)).json()) as any;
    assert.deepEqual(book.bids.map((l: any) => l.price), ['0.3']);
    assert.equal((await alice.call('GET', '/balance-allowance?asset_type=COLLATERAL')).status, 200);
    assert.equal((await alice.call('GET', '/auth/ban-status/closed-only')).status, 200);
    assert.equal((await alice.call('POST', '/split', { conditionId: CID, amount: '1' })).status, 200);
    assert.equal(await metric(/^sandbox_maintenance_phase\{phase="maintenance"\}/), 1);

    clock.advance(90_000);
    const state = await admin('GET', '/admin/sandbox');
    assert.deepEqual([state.body.maintenance.phase, state.body.maintenance.until], ['post-only', new Date(clock.now() + 120_000).toISOString()]);
    const refused = await fetch(`${base}/order`, { method: 'POST', headers: alice.l2Headers('POST', '/order', JSON.stringify(signed)), body: JSON.stringify(signed) });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '120');
    assert.deepEqual(await refused.json(), { error: 'post-only mode: only post-only orders and cancels are allowed', code: 'post_only_mode', retry_after_seconds: 120 });
    const batch = await alice.call('POST', '/orders', [signed]);
    assert.deepEqual([batch.status, batch.body[0].success, batch.body[0].errorMsg], [200, false, 'post-only mode: only post-only orders and cancels are allowed']);
    const postOnly = await bid(alice, 0.25, { postOnly: true });
    assert.deepEqual([postOnly.status, postOnly.body.status], [200, 'live']);
    const crossing = await alice.place({ tokenId: yes, side: 'SELL', makerAmount: units(1), takerAmount: units(0.25), postOnly: true });
    assert.deepEqual([crossing.status, crossing.body.error], [400, 'invalid post-only order: order crosses book']);
    const canceled = await alice.call('DELETE', '/order', { orderID: postOnly.body.orderID });
    assert.deepEqual(canceled.body.canceled, [postOnly.body.orderID]);
    assert.equal(await metric(/^sandbox_maintenance_phase\{phase="post-only"\}/), 1);

    clock.advance(120_000);
    const after = await bid(alice, 0.2);
    assert.deepEqual([after.status, after.body.status], [200, 'live']);
    assert.equal(await metric(/^sandbox_refusals_total\{reason="maintenance"\}/), 6);
    assert.equal(await metric(/^sandbox_refusals_total\{reason="post_only"\}/), 2);
    assert.equal((await alice.call('DELETE', '/cancel-all')).status, 200);
  });

  test('DELETE ends a window and its post-only period at once', async () => {
    await admin('POST', '/admin/sandbox/maintenance', { durationSeconds: 600 });
    assert.equal((await bid(alice, 0.2)).status, 425);
    const ended = await admin('DELETE', '/admin/sandbox/maintenance');
    assert.deepEqual([ended.status, ended.body.phase, ended.body.until], [200, 'open', null]);
    const r = await bid(alice, 0.2);
    assert.deepEqual([r.status, r.body.status], [200, 'live']);
    assert.equal((await alice.call('DELETE', '/cancel-all')).status, 200);
  });

  test('the configured weekly window closes order routes at its time, for its length, then post-only', async () => {
    const state = (await admin('GET', '/admin/sandbox')).body.maintenance;
    assert.deepEqual([state.phase, state.nextScheduled], ['open', new Date(scheduledAt).toISOString()]);
    clock.set(scheduledAt - 1);
    assert.equal((await bid(alice, 0.2)).body.status, 'live');
    clock.set(scheduledAt);
    assert.equal((await bid(alice, 0.2)).status, 425);
    clock.set(scheduledAt + 90_000);
    assert.equal((await bid(alice, 0.2)).status, 503);
    assert.equal((await bid(alice, 0.2, { postOnly: true })).body.status, 'live');
    clock.set(scheduledAt + 210_000);
    assert.equal((await bid(alice, 0.2)).body.status, 'live');
    assert.equal((await admin('GET', '/admin/sandbox')).body.maintenance.nextScheduled, new Date(scheduledAt + 7 * 24 * 60 * MINUTE).toISOString());
    assert.equal((await alice.call('DELETE', '/cancel-all')).status, 200);
  });
});

describe('closed-only', () => {
  test('BUYs refused, SELLs and cancels accepted, reported by the ban-status route', async () => {
    assert.deepEqual((await alice.call('GET', '/auth/ban-status/closed-only')).body, { closed_only: false });
    const resting = await bid(alice, 0.1);
    const set = await admin('PUT', `/admin/wallets/${alice.address}/closed-only`, { closedOnly: true });
    assert.deepEqual(set, { status: 200, body: { address: alice.address, closedOnly: true } });
    assert.deepEqual((await alice.call('GET', '/auth/ban-status/closed-only')).body, { closed_only: true });
    assert.deepEqual((await bob.call('GET', '/auth/ban-status/closed-only')).body, { closed_only: false });

    const refused = await bid(alice, 0.1);
    assert.deepEqual(refused, { status: 400, body: { error: `'${alice.address}' address in closed only mode` } });
    const buy = await alice.signOrder({ tokenId: yes, side: 'BUY', makerAmount: units(0.1), takerAmount: units(1) });
    const sell = await alice.signOrder({ tokenId: yes, side: 'SELL', makerAmount: units(1), takerAmount: units(0.9) });
    const batch = await alice.call('POST', '/orders', [buy, sell]);
    assert.deepEqual(batch.body.map((r: any) => [r.success, r.errorMsg, r.status]), [[false, `'${alice.address}' address in closed only mode`, ''], [true, '', 'live']]);
    assert.deepEqual((await alice.call('DELETE', '/cancel-all')).body.canceled.sort(), [resting.body.orderID, batch.body[1].orderID].sort());
    assert.equal((await bid(bob, 0.1)).body.status, 'live', 'other wallets trade as before');
    assert.deepEqual((await admin('GET', '/admin/sandbox')).body.closedOnly, [alice.address]);
    assert.equal(await metric(/^sandbox_closed_only_wallets /), 1);

    await admin('PUT', `/admin/wallets/${alice.address}/closed-only`, { closedOnly: false });
    assert.equal((await bid(alice, 0.1)).body.status, 'live');
    await admin('PUT', `/admin/wallets/${alice.address}/closed-only`, { closedOnly: true });
    for (const c of [alice, bob]) assert.equal((await c.call('DELETE', '/cancel-all')).status, 200);
  });
});

describe('fault injection', () => {
  const setFaults = (scenario: unknown) => admin('PUT', '/admin/sandbox/faults', scenario);

  test('503 answers a share of the order-book API without applying anything; other APIs are untouched', async () => {
    const before = await openOrders(bob);
    assert.equal((await setFaults({ seed: 3, error503: { share: 1 } })).status, 200);
    assert.deepEqual(await bid(bob, 0.1), { status: 503, body: { error: 'service unavailable' } });
    assert.equal((await fetch(`${base}/book?token_id=${yes}`)).status, 503);
    assert.equal((await fetch(`${base}/positions?user=${bob.address}`)).status, 200, 'data API');
    assert.equal((await fetch(`${base}/events?limit=1`)).status, 200, 'catalog');
    assert.equal((await fetch(`${base}/`)).status, 200, 'health');
    assert.equal((await admin('GET', '/admin/sandbox')).status, 200, 'admin');
    await admin('DELETE', '/admin/sandbox/faults');
    assert.deepEqual(await openOrders(bob), before, 'nothing was placed');
    assert.ok((await metric(/^sandbox_faults_injected_total\{fault="error_503"\}/))! >= 2);
  });

  test('500 without applying: the order is not placed; 500 after applying: it is, and a retry gets its answer', async () => {
    await setFaults({ error500: { share: 1, appliedShare: 0 } });
    assert.deepEqual(await bob.call('POST', '/order', await bob.signOrder({ tokenId: yes, side: 'SELL', makerAmount: units(1), takerAmount: units(0.9) })), { status: 500, body: { error: 'internal error' } });
    assert.deepEqual(await openOrders(bob), []);

    await setFaults({ error500: { share: 1, appliedShare: 1 } });
    const signed = await bob.signOrder({ tokenId: yes, side: 'SELL', makerAmount: units(1), takerAmount: units(0.9) });
    assert.deepEqual(await bob.call('POST', '/order', signed), { status: 500, body: { error: 'internal error' } });
    const [placed] = await openOrders(bob);
    assert.ok(placed !== undefined, 'applied despite the 500');
    await admin('DELETE', '/admin/sandbox/faults');
    const retry = await bob.call('POST', '/order', signed);
    assert.deepEqual([retry.status, retry.body.orderID, retry.body.status], [200, placed, 'live']);
    assert.deepEqual(await openOrders(bob), [placed], 'placed once');
    assert.equal((await bob.call('DELETE', '/cancel-all')).status, 200);
    assert.equal(await metric(/^sandbox_faults_injected_total\{fault="error_500_applied"\}/), 1);
    assert.equal(await metric(/^sandbox_faults_injected_total\{fault="error_500_not_applied"\}/), 1);
  });

  test('ack latency delays the answer of order routes after the order was applied', async () => {
    await setFaults({ ackLatency: { distribution: 'fixed', ms: 300 } });
    const t0 = performance.now();
    const r = await bid(bob, 0.1);
    assert.ok(performance.now() - t0 >= 300, 'answered after the latency');
    assert.equal(r.body.status, 'live');
    await fetch(`${base}/book?token_id=${yes}`);
    assert.equal((await admin('GET', '/admin/sandbox')).body.faults.injected.latency, 1, 'reads are not delayed');
    await admin('DELETE', '/admin/sandbox/faults');
    assert.equal((await bob.call('DELETE', '/cancel-all')).status, 200);
  });

  test('each fault is drawn from the seed: the same scenario and requests meet the same faults, logged one by one', async () => {
    const scenario = { seed: 42, error500: { share: 0.5, appliedShare: 0 }, ackLatency: { distribution: 'uniform', minMs: 1, maxMs: 20, share: 0.5 } };
    const run = async () => {
      await setFaults(scenario);
      const out: number[] = [];
      for (let i = 1; i <= 16; i++) out.push((await bob.call('DELETE', '/order', { orderID: unknownId(i) })).status);
      return out;
    };
    logLines.length = 0;
    const first = await run();
    const latencies = logLines.filter((l) => l.msg === 'injected fault' && l.fault === 'ack_latency').map((l) => [l.n, l.ms]);
    const failures = logLines.filter((l) => l.msg === 'injected fault' && l.fault === 'error_500_not_applied').map((l) => l.n);
    assert.deepEqual(await run(), first, 'replayed');
    const expected = first.map((_, i) => (seededUnit(42, 2, i + 1) < 0.5 ? 500 : 200));
    assert.deepEqual(first, expected);
    assert.ok(first.includes(500) && first.includes(200));
    assert.deepEqual(failures, expected.flatMap((s, i) => (s === 500 ? [i + 1] : [])), 'each 500 is logged with its request number');
    const expectedLatencies = expected.flatMap((s, i) => {
      const n = i + 1;
      if (s === 500 || seededUnit(42, 4, n) >= 0.5) return [];
      return [[n, 1 + Math.floor(seededUnit(42, 5, n) * 20)]];
    });
    assert.deepEqual(latencies, expectedLatencies);
    const state = (await admin('GET', '/admin/sandbox')).body.faults;
    assert.deepEqual([state.source, state.requests, state.injected.error500NotApplied], ['admin', 16, failures.length]);
    assert.equal(await metric(/^sandbox_fault_share\{fault="error_500"\}/), 0.5);
  });

  test('off: nothing is injected, nothing is logged, the shares read 0', async () => {
    const off = await admin('DELETE', '/admin/sandbox/faults');
    assert.deepEqual([off.body.scenario, off.body.source, off.body.requests], [null, null, 0]);
    logLines.length = 0;
    for (let i = 0; i < 20; i++) assert.equal((await bob.call('DELETE', '/order', { orderID: unknownId(100 + i) })).status, 200);
    assert.deepEqual(logLines.filter((l) => l.msg === 'injected fault'), []);
    for (const f of ['ack_latency', 'error_500', 'error_503']) assert.equal(await metric(new RegExp(`^sandbox_fault_share\\{fault="${f}"\\}`)), 0);
    assert.equal((await setFaults({})).body.scenario, null, '{} turns faults off too');
  });

  test('a scenario that does not validate is refused with every problem, and changes nothing', async () => {
    const bad = await setFaults({ error500: { share: 2, appliedShare: 0 }, stall: true });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'invalid request');
    assert.ok(bad.body.errors.length >= 2, JSON.stringify(bad.body));
    const inverted = await setFaults({ ackLatency: { distribution: 'uniform', minMs: 50, maxMs: 10 } });
    assert.deepEqual([inverted.status, inverted.body.errors], [400, [{ path: '/ackLatency/minMs', message: 'must not exceed maxMs' }]]);
    assert.equal((await admin('GET', '/admin/sandbox')).body.faults.scenario, null);
  });
});

describe('restart', () => {
  test('closed-only survives a restart; a scenario file is active from the start; a bad file stops the start', async () => {
    const file = join(dataDir, 'faults.json');
    writeFileSync(file, JSON.stringify({ seed: 9, error503: { share: 1 } }));
    await app.stop(1000);
    app = await startApp(config({ sandbox: { faultsFile: file } }), { log, clock, timers: clock.timers });
    base = `http://127.0.0.1:${app.port}`;
    const state = (await admin('GET', '/admin/sandbox')).body;
    assert.deepEqual(state.closedOnly, [alice.address]);
    assert.deepEqual([state.faults.source, state.faults.scenario], ['file', { seed: 9, error503: { share: 1 } }]);
    assert.equal((await fetch(`${base}/book?token_id=${yes}`)).status, 503);
    await admin('DELETE', '/admin/sandbox/faults');
    alice = new TestClient(base, `0x${'a7'.repeat(32)}`, await TestClient.info(base));
    await alice.createKey(1);
    assert.deepEqual((await alice.call('GET', '/auth/ban-status/closed-only')).body, { closed_only: true });

    writeFileSync(file, JSON.stringify({ error500: { share: 'half' } }));
    const other = mkdtempSync(join(tmpdir(), 'pm-sandbox-bad-'));
    try {
      await assert.rejects(startApp(testConfig({ dataDir: other, http: { port: 0 }, demo: 'off', sandbox: { faultsFile: file } }), { log }), /sandbox\.faultsFile: .*faults\.json: \/error500/);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
