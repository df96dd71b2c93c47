/**
 * The wallet data module (src/edge/routes/data/wallets.ts) through the real app, after two demo wallets traded
 * once (a mint): trades, positions and closed positions each answer in their schema and charge their
 * buckets; an unknown, missing or bad parameter answers `{"error": "<kind>_field: <name>"}`. The numbers
 * in those answers: test/e2e/wallets.test.ts. Test harness: test/fixtures/route-contract.ts. The handlers
 * alone, on a recording reader: the defaults the schemas cannot carry, lowercased ids, the allowlist, and a
 * store failure logged and answered as the group's 500.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_WALLETS } from '../../../../src/demo/catalog.ts';
import { isApiError } from '../../../../src/domain/errors.ts';
import { isReply, type AnyRoute } from '../../../../src/edge/pipeline/route.ts';
import { allowlisted, closedPositions, positions, trades, walletRoutes, type WalletDeps } from '../../../../src/edge/routes/data/wallets.ts';
import { routeRequest } from '../../../fixtures/route-request.ts';
import { assertAnswers, assertGroupError, assertServes, startRouteApp, type RouteApp, type RouteCase } from '../../../fixtures/route-contract.ts';
import { TestClient, units } from '../../../fixtures/trading-client.ts';

let h: RouteApp;
let routes: AnyRoute[];
let user: string;
before(async () => {
  h = await startRouteApp();
  routes = walletRoutes(h.app.ctx);
  const info = await TestClient.info(h.base);
  const [a, b] = [new TestClient(h.base, DEMO_WALLETS[0].privateKey, info), new TestClient(h.base, DEMO_WALLETS[1].privateKey, info)];
  for (const c of [a, b]) await c.createKey();
  const market = h.app.ctx.catalog.read.tradingMarkets().find((m) => m.acceptingOrders && !m.negRisk)!;
  const [yes, no] = market.tokenIds;
  // Ten of each outcome at 0.50: the two bids cross as a mint.
  assert.equal((await a.place({ tokenId: yes, side: 'BUY', makerAmount: units(5), takerAmount: units(10) })).status, 200);
  const fill = await b.place({ tokenId: no, side: 'BUY', makerAmount: units(5), takerAmount: units(10) });
  assert.equal(fill.body.status, 'matched', JSON.stringify(fill.body));
  user = a.address;
});
after(() => h.close());

const CASES: RouteCase[] = [
  {
    route: 'GET /trades',
    group: 'data',
    ok: async () => {
      const r = await h.send('GET', `/trades?user=${user}&takerOnly=false&limit=5`);
      assert.equal(r.body.length, 1, 'the trade is listed');
      return r;
    },
    bad: { send: () => h.send('GET', '/trades?limit=5&bogus=1'), status: 400, error: 'unknown_field: bogus' },
  },
  {
    route: 'GET /positions',
    group: 'data',
    ok: async () => {
      const r = await h.send('GET', `/positions?user=${user}`);
      assert.equal(r.body.length, 1, 'the position is listed');
      return r;
    },
    bad: { send: () => h.send('GET', '/positions'), status: 400, error: 'missing_field: user' },
  },
  {
    route: 'GET /closed-positions',
    group: 'data',
    ok: () => h.send('GET', `/closed-positions?user=${user}`),
    bad: { send: () => h.send('GET', '/closed-positions?user=0x12'), status: 400, error: 'invalid_field: user' },
  },
];

test('the module serves exactly its three routes, in the data group', () => {
  assertServes(routes, CASES);
});

for (const c of CASES) {
  test(`${c.route} answers in its schema and charges its buckets`, async () => {
    await assertAnswers(h, routes, c);
  });
}

for (const c of CASES.filter((x) => x.bad)) {
  test(`${c.route}: a bad parameter answers in the data form`, async () => {
    const bad = c.bad!;
    assertGroupError(c.group, await bad.send(), bad.status, bad.error);
  });
}

test('the handlers on hand-built deps: defaults, lowercase ids, the allowlist, a failing store', () => {
  const asked: [string, unknown][] = [];
  const errors: unknown[] = [];
  const deps: WalletDeps = {
    reader: {
      tradesJson: (p) => (asked.push(['trades', p]), '[]'),
      positionsJson: (p) => (asked.push(['positions', p]), '[1]'),
      closedPositionsJson: () => {
        throw new Error('disk gone');
      },
    },
    allowlist: ['10.0.0.0/8'],
    log: { error: ((o: unknown) => void errors.push(o)) as never },
  };
  const USER = '0x' + 'AB'.repeat(20);
  const r = positions(deps, routeRequest({ query: { user: USER, market: ['0x' + 'CD'.repeat(32)] } }));
  assert.ok(isReply(r));
  assert.equal(r.raw, '[1]');
  assert.deepEqual(asked.pop(), [
    'positions',
    { user: USER.toLowerCase(), markets: ['0x' + 'cd'.repeat(32)], title: undefined, offset: 0, descending: true, sizeThreshold: 1, redeemable: false, mergeable: false, limit: 100, sortBy: 'TOKENS' },
  ]);
  trades(deps, routeRequest({ query: {} }));
  assert.deepEqual(asked.pop(), ['trades', { limit: 100, offset: 0, takerOnly: true, filter: undefined, markets: undefined, user: undefined, side: undefined }]);
  assert.throws(
    () => trades(deps, routeRequest({ query: { filterType: 'CASH' as const } })),
    (e) => isApiError(e) && e.spec.code === 'PM_ERR_DATA_MISSING_FIELD' && e.vars?.name === 'filterAmount',
  );
  assert.throws(() => closedPositions(deps, routeRequest({ query: { user: USER } })), (e) => isApiError(e) && e.spec.code === 'PM_ERR_DATA_DB');
  assert.equal(errors.length, 1, 'the store failure is logged');

  assert.equal(allowlisted(deps, { ip: '10.1.2.3' }), undefined);
  assert.equal(allowlisted(deps, { ip: '192.168.0.1' })?.spec.code, 'PM_ERR_DATA_IP');
  assert.equal(allowlisted({ allowlist: [] }, { ip: '192.168.0.1' }), undefined, 'no allowlist: anyone');
});
