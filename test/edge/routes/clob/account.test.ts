/**
 * The account module (src/edge/routes/clob/account.ts) through the real app, signed by a funded demo wallet:
 * notifications (read, drop), the heartbeat and the wallet's refusals answer in their schema and charge their buckets; a bad id or
 * a missing signature answers `{"error": "<message>"}`. What they do: test/e2e/notifications.test.ts,
 * test/e2e/heartbeats.test.ts. Test harness: test/fixtures/route-contract.ts. The handlers alone, on
 * hand-built dependencies: the heartbeat goes to the caller's wallet, and a drop with a bad id, or with
 * nothing to drop, never waits for a flush.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_WALLETS } from '../../../../src/demo/catalog.ts';
import { isApiError } from '../../../../src/domain/errors.ts';
import type { AnyRoute } from '../../../../src/edge/pipeline/route.ts';
import { accountRoutes, dropWalletNotifications, heartbeat } from '../../../../src/edge/routes/clob/account.ts';
import { routeRequest } from '../../../fixtures/route-request.ts';
import { assertAnswers, assertGroupError, assertServes, startRouteApp, type RouteApp, type RouteCase } from '../../../fixtures/route-contract.ts';
import { TestClient, units } from '../../../fixtures/trading-client.ts';

let h: RouteApp;
let routes: AnyRoute[];
let alice: TestClient;
let orderId: string;
before(async () => {
  h = await startRouteApp();
  routes = accountRoutes(h.app.ctx);
  alice = new TestClient(h.base, DEMO_WALLETS[0].privateKey, await TestClient.info(h.base));
  await alice.createKey();
  const market = h.app.ctx.catalog.read.tradingMarkets().find((m) => m.acceptingOrders && !m.negRisk)!;
  const placed = await alice.place({ tokenId: market.tokenIds[0], side: 'BUY', makerAmount: units(0.5), takerAmount: units(5) });
  assert.equal(placed.status, 200, JSON.stringify(placed.body));
  orderId = placed.body.orderID;
  assert.equal((await alice.call('DELETE', '/order', { orderID: orderId })).status, 200);
  // A refusal with alice's key (a stale timestamp), for GET /refusals to list.
  const headers = { ...alice.l2Headers('GET', '/data/orders', undefined), SVC_TIMESTAMP: String(Math.floor(Date.now() / 1000) - 100) };
  assert.equal((await fetch(`${h.base}/data/orders`, { headers })).status, 401);
});
after(() => h.close());

const CASES: RouteCase[] = [
  {
    route: 'GET /notifications',
    group: 'trading',
    ok: async () => {
      const r = await alice.call('GET', '/notifications?signature_type=0');
      assert.deepEqual(
        r.body.map((n: { type: number; payload: { order_id: string } }) => [n.type, n.payload.order_id]),
        [[1, orderId]],
        'the cancel is told',
      );
      return r;
    },
    bad: { send: () => h.send('GET', '/notifications'), status: 401, error: 'Unauthorized/Invalid api key' },
  },
  {
    route: 'DELETE /notifications',
    group: 'trading',
    ok: () => alice.call('DELETE', '/notifications?ids=0'),
    bad: { send: () => alice.call('DELETE', '/notifications?ids=first'), status: 400, error: 'invalid notification id: first' },
  },
  {
    route: 'GET /refusals',
    group: 'trading',
    ok: async () => {
      // The refusal made on purpose in before() is listed, with its reason.
      const r = await alice.call('GET', '/refusals');
      assert.deepEqual(
        r.body.data.map((e: { path: string; class: string }) => [e.path, e.class]),
        [['/data/orders', 'auth_timestamp']],
      );
      return r;
    },
    // Unsigned, it lists what this client address was refused for a wallet it names: the name is required.
    bad: {
      send: () => h.send('GET', '/refusals'),
      status: 400,
      error: 'address is required without L2 headers: GET /refusals?address=0x... lists what requests from this client address naming it were refused for',
    },
  },
  {
    route: 'POST /v1/heartbeats',
    group: 'trading',
    ok: () => alice.call('POST', '/v1/heartbeats', { heartbeat_id: '' }),
    bad: { send: () => alice.call('POST', '/v1/heartbeats', { heartbeat_id: 'not-running' }), status: 400, error: 'invalid heartbeat id: not-running (send "" to start a new heartbeat)' },
  },
];

test('the module serves exactly its four routes, in the trading group', () => {
  assertServes(routes, CASES);
});

for (const c of CASES) {
  test(`${c.route} answers in its schema and charges its buckets`, async () => {
    await assertAnswers(h, routes, c);
  });
}

for (const c of CASES.filter((x) => x.bad)) {
  test(`${c.route}: a bad request answers in the trading form`, async () => {
    const bad = c.bad!;
    assertGroupError(c.group, await bad.send(), bad.status, bad.error);
  });
}

test('the handlers use only the dependencies they are given', async () => {
  const beats: [string, string | null | undefined][] = [];
  const heartbeats = { beat: async (wallet: string, id: string | null | undefined) => (beats.push([wallet, id]), { heartbeat_id: 'hb-1' }) };
  const wallet = '0x' + 'ab'.repeat(20);
  assert.deepEqual(await heartbeat({ heartbeats }, routeRequest({ body: { heartbeat_id: null }, caller: { address: wallet } })), { heartbeat_id: 'hb-1' });
  assert.deepEqual(beats, [[wallet, null]]);

  // A store whose flush must not be awaited: nothing was dropped.
  const store = {
    views: {
      get flushed(): Promise<unknown> {
        throw new Error('flush awaited with nothing dropped');
      },
    },
  };
  const deps = { views: h.app.ctx.views, store, funders: h.app.ctx.auth.funders };
  await assert.rejects(
    dropWalletNotifications(deps, routeRequest({ query: { ids: '0,x' }, caller: { address: wallet } })),
    (e) => isApiError(e) && e.spec.status === 400 && e.message === 'invalid notification id: x',
  );
  assert.equal(await dropWalletNotifications(deps, routeRequest({ query: {}, caller: { address: wallet } })), 'OK');
});
