/**
 * The sandbox module (src/edge/routes/sandbox.ts) through the real app: the admin views and controls of
 * maintenance windows, faults and closed-only wallets, and the wallet's ban-status read (L2), each answer in
 * their schema and charge their buckets; a payload that fails validation answers in its group's error form.
 * What the controls do: test/e2e/sandbox.test.ts. Test harness: test/fixtures/route-contract.ts. The
 * handlers alone, on hand-built dependencies: a window starts and ends and both are logged, a scenario
 * that is not valid changes nothing, and the ban status reads the caller's wallet.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_WALLETS } from '../../../src/demo/catalog.ts';
import { Registry } from 'prom-client';
import { isApiError } from '../../../src/domain/errors.ts';
import type { AnyRoute } from '../../../src/edge/pipeline/route.ts';
import { banStatus, clearFaults, endMaintenance, putFaults, sandboxRoutes, startMaintenance } from '../../../src/edge/routes/sandbox.ts';
import { FaultInjector } from '../../../src/edge/sandbox/faults.ts';
import { MaintenanceWindows } from '../../../src/edge/sandbox/maintenance.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { routeRequest } from '../../fixtures/route-request.ts';
import { assertAnswers, assertGroupError, assertServes, startRouteApp, type RouteApp, type RouteCase } from '../../fixtures/route-contract.ts';
import { TestClient } from '../../fixtures/trading-client.ts';

let h: RouteApp;
let routes: AnyRoute[];
let client: TestClient;
const WALLET = '0x' + '5b'.repeat(20);

before(async () => {
  h = await startRouteApp();
  routes = sandboxRoutes(h.app.ctx);
  client = new TestClient(h.base, DEMO_WALLETS[0].privateKey, await TestClient.info(h.base));
  await client.createKey();
});
after(() => h.close());

const CASES: RouteCase[] = [
  { route: 'GET /admin/sandbox', group: 'admin', ok: () => h.admin('GET', '/admin/sandbox') },
  {
    route: 'POST /admin/sandbox/maintenance',
    group: 'admin',
    ok: () => h.admin('POST', '/admin/sandbox/maintenance', { durationSeconds: 60, postOnlySeconds: 0 }),
    bad: { send: () => h.admin('POST', '/admin/sandbox/maintenance', { durationSeconds: 0 }), status: 400, error: 'invalid request' },
  },
  { route: 'DELETE /admin/sandbox/maintenance', group: 'admin', ok: () => h.admin('DELETE', '/admin/sandbox/maintenance') },
  {
    route: 'PUT /admin/sandbox/faults',
    group: 'admin',
    ok: () => h.admin('PUT', '/admin/sandbox/faults', { seed: 2, ackLatency: { distribution: 'fixed', ms: 0 } }),
    bad: { send: () => h.admin('PUT', '/admin/sandbox/faults', { error503: { share: 'all' } }), status: 400, error: 'invalid request' },
  },
  { route: 'DELETE /admin/sandbox/faults', group: 'admin', ok: () => h.admin('DELETE', '/admin/sandbox/faults') },
  {
    route: 'PUT /admin/wallets/:address/closed-only',
    group: 'admin',
    ok: () => h.admin('PUT', `/admin/wallets/${WALLET}/closed-only`, { closedOnly: true }),
    bad: { send: () => h.admin('PUT', `/admin/wallets/${WALLET}/closed-only`, { closedOnly: 'yes' }), status: 400, error: 'invalid request' },
  },
  {
    route: 'GET /auth/ban-status/closed-only',
    group: 'trading',
    ok: () => client.call('GET', '/auth/ban-status/closed-only'),
    bad: { send: () => client.call('GET', '/auth/ban-status/closed-only', undefined, { ...client.creds!, passphrase: 'wrong' }), status: 401, error: 'Unauthorized/Invalid api key' },
  },
];

test('the module serves exactly its seven routes, six admin and one signed', () => {
  assertServes(routes, CASES);
});

for (const c of CASES) {
  test(`${c.route} answers in its schema and charges its buckets`, async () => {
    await assertAnswers(h, routes, c);
  });
}

for (const c of CASES.filter((x) => x.bad)) {
  test(`${c.route}: a bad request answers in the error form of its group`, async () => {
    const bad = c.bad!;
    assertGroupError(c.group, await bad.send(), bad.status, bad.error);
  });
}

test('the admin routes answer 401 without the token', async () => {
  for (const c of CASES.filter((x) => x.group === 'admin')) {
    const [method, path] = c.route.split(' ');
    const res = await h.send(method, path.replace(':address', WALLET), { body: method === 'GET' || method === 'DELETE' ? undefined : {} });
    assert.equal(res.status, 401, c.route);
  }
});

test('the handlers work on hand-built dependencies: maintenance, faults, ban status', async () => {
  let now = 1_000_000;
  const clock = { now: () => now };
  const logged: string[] = [];
  const log = { info: (...a: unknown[]) => logged.push(String(a.at(-1))), warn: (...a: unknown[]) => logged.push(String(a.at(-1))) } as never;
  const maintenance = new MaintenanceWindows({ weekly: [], durationSeconds: 90, postOnlySeconds: 120 }, clock);
  // The start is answered only once the orders the engine took before it are answered.
  let quietNow: () => void = () => undefined;
  const quiet = () => new Promise<void>((resolve) => (quietNow = resolve));
  let answered = false;
  const starting = startMaintenance({ sandbox: { maintenance, quiet }, log }, routeRequest({ body: { durationSeconds: 60 } })).then((s) => ((answered = true), s));
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(answered, false, 'not answered while orders taken before the window are in flight');
  assert.equal(maintenance.phaseAt().phase, 'maintenance', 'the window is closed to new orders already');
  quietNow();
  const started = await starting;
  assert.deepEqual([started.phase, started.durationSeconds, started.postOnlySeconds], ['maintenance', 60, 120], 'it echoes the length set and the default post-only period');
  const set = await startMaintenance({ sandbox: { maintenance, quiet: async () => undefined }, log }, routeRequest({ body: { durationSeconds: 30, postOnlySeconds: 30 } }));
  assert.deepEqual([set.durationSeconds, set.postOnlySeconds, set.until], [30, 30, new Date(now + 30_000).toISOString()], 'what was set, not the configured 90/120');
  maintenance.start(60);
  now += 60_000;
  assert.equal(maintenance.phaseAt().phase, 'post-only', 'the default post-only period follows');
  assert.equal(endMaintenance({ sandbox: { maintenance }, log }).phase, 'open');
  assert.deepEqual(endMaintenance({ sandbox: { maintenance }, log }).durationSeconds, 90, 'with no admin window the lengths are the schedule\'s');
  assert.deepEqual(logged, ['maintenance window started', 'maintenance window started', 'maintenance window ended', 'maintenance window ended']);

  const faults = new FaultInjector(silentLogger, clock, new Registry());
  const before = faults.state();
  assert.throws(
    () => putFaults({ sandbox: { faults } }, routeRequest({ body: { error503: { share: 2 } } as never })),
    (e) => isApiError(e) && e.spec.code === 'PM_ERR_ADMIN_INVALID' && Array.isArray(e.extra?.errors) && e.extra.errors.length > 0,
  );
  assert.deepEqual(faults.state(), before, 'a refused scenario changes nothing');
  assert.deepEqual(putFaults({ sandbox: { faults } }, routeRequest({ body: { seed: 7, error503: { share: 0.5 } } })).scenario?.error503, { share: 0.5 });
  assert.equal(clearFaults({ sandbox: { faults } }).scenario, null);

  const closed = new Set([WALLET]);
  const closedOnly = { has: (a: string) => closed.has(a) } as never;
  const OTHER = '0x' + '00'.repeat(20);
  const SAFE = '0x' + 'ee'.repeat(20);
  const funders = { walletsOf: (a: string) => [a, '0x' + 'dd'.repeat(20), a === OTHER ? SAFE : '0x' + 'cc'.repeat(20)] as const };
  assert.deepEqual(banStatus({ sandbox: { closedOnly }, funders }, routeRequest({ caller: { address: WALLET } })), { closed_only: true });
  assert.deepEqual(banStatus({ sandbox: { closedOnly }, funders }, routeRequest({ caller: { address: OTHER } })), { closed_only: false });
  closed.add(SAFE);
  assert.deepEqual(banStatus({ sandbox: { closedOnly }, funders }, routeRequest({ caller: { address: OTHER } })), { closed_only: true }, 'its Safe is closed-only');
});
