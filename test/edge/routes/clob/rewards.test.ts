/**
 * The rewards module (src/edge/routes/clob/rewards.ts) through the real app over the demo catalog (some of its
 * markets have liquidity rewards), signed by a funded demo wallet with a scoring quote: order scoring, the
 * markets' programs and the wallet's earnings answer in their schema and charge their buckets; a bad date,
 * id or cursor answers `{"error": "<message>"}`. The rule and its numbers: test/domain/rewards.test.ts,
 * test/projections/rewards.test.ts, test/e2e/official-client-surface.test.ts. Harness:
 * test/fixtures/route-contract.ts. The handlers alone, on hand-built deps: scoring is measured against the
 * midpoint the deps give (and only for the caller's live orders), a day defaults to the clock's.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_WALLETS } from '../../../../src/demo/catalog.ts';
import { isApiError } from '../../../../src/domain/errors.ts';
import type { AnyRoute } from '../../../../src/edge/pipeline/route.ts';
import { ordersScoring, rewardsRoutes, userTotals, type RewardsDeps } from '../../../../src/edge/routes/clob/rewards.ts';
import { routeRequest } from '../../../fixtures/route-request.ts';
import { assertAnswers, assertGroupError, assertServes, startRouteApp, type RouteApp, type RouteCase } from '../../../fixtures/route-contract.ts';
import { TestClient, units } from '../../../fixtures/trading-client.ts';

let h: RouteApp;
let routes: AnyRoute[];
let alice: TestClient;
let cid: string;
/** Alice's bid and ask around 0.50, 100 tokens each: they score (the demo's programs pay within 3.5 cents, from 50 tokens). */
let bid: string;
let ask: string;
const today = new Date().toISOString().slice(0, 10);

before(async () => {
  h = await startRouteApp();
  routes = rewardsRoutes(h.app.ctx);
  alice = new TestClient(h.base, DEMO_WALLETS[0].privateKey, await TestClient.info(h.base));
  await alice.createKey();
  const m = h.app.ctx.catalog.read.samplingRecords().find((x) => !x.negRisk && x.orderPriceMinTickSize === '0.01')!;
  cid = m.conditionId;
  const [yes, no] = m.clobTokenIds;
  const place = async (tokenId: string) => {
    const r = await alice.place({ tokenId, side: 'BUY', makerAmount: units(49), takerAmount: units(100) });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.orderID as string;
  };
  bid = await place(yes);
  ask = await place(no);
});
after(() => h.close());

const CASES: RouteCase[] = [
  {
    route: 'GET /order-scoring',
    group: 'trading',
    ok: async () => {
      const r = await alice.call('GET', `/order-scoring?order_id=${bid}`);
      assert.deepEqual(r.body, { scoring: true });
      return r;
    },
    bad: { send: () => alice.call('GET', '/order-scoring?order_id=0x12'), status: 400, error: 'Invalid order_id' },
  },
  {
    route: 'POST /orders-scoring',
    group: 'trading',
    ok: async () => {
      const none = `0x${'0'.repeat(64)}`;
      const r = await alice.call('POST', '/orders-scoring', [bid, ask, none]);
      assert.deepEqual(r.body, { [bid]: true, [ask]: true, [none]: false });
      return r;
    },
    bad: { send: () => alice.call('POST', '/orders-scoring', { orderIds: [bid] }), status: 400 },
  },
  {
    route: 'GET /rewards/markets/current',
    group: 'clob',
    ok: () => h.send('GET', '/rewards/markets/current'),
    bad: { send: () => h.send('GET', '/rewards/markets/current?next_cursor=nope'), status: 400, error: 'invalid next_cursor' },
  },
  {
    route: 'GET /rewards/markets/:condition_id',
    group: 'clob',
    ok: async () => {
      const r = await h.send('GET', `/rewards/markets/${cid}`);
      assert.deepEqual(r.body.data.map((x: { condition_id: string }) => x.condition_id), [cid]);
      return r;
    },
    bad: { send: () => h.send('GET', `/rewards/markets/0x${'0'.repeat(64)}`), status: 404, error: 'market not found' },
  },
  {
    route: 'GET /rewards/user',
    group: 'trading',
    ok: () => alice.call('GET', `/rewards/user?date=${today}&signature_type=0&next_cursor=MA==`),
    bad: { send: () => alice.call('GET', '/rewards/user?date=yesterday'), status: 400, error: 'Invalid date: expected YYYY-MM-DD' },
  },
  {
    route: 'GET /rewards/user/total',
    group: 'trading',
    ok: () => alice.call('GET', `/rewards/user/total?date=${today}&signature_type=0`),
    bad: { send: () => alice.call('GET', '/rewards/user/total?date=2026-13-45'), status: 400, error: 'invalid date: 2026-13-45' },
  },
  {
    route: 'GET /rewards/user/percentages',
    group: 'trading',
    ok: async () => {
      const r = await alice.call('GET', '/rewards/user/percentages?signature_type=0');
      assert.deepEqual(r.body, { [cid]: 100 }, 'the only scoring quotes of the market are hers');
      return r;
    },
    bad: { send: () => h.send('GET', '/rewards/user/percentages'), status: 401, error: 'Unauthorized/Invalid api key' },
  },
  {
    route: 'GET /rewards/user/markets',
    group: 'trading',
    ok: () => alice.call('GET', `/rewards/user/markets?date=${today}&order_by=earnings&position=DESC&no_competition=false`),
    bad: {
      send: () => alice.call('GET', `/rewards/user/markets?date=${today}&order_by=volume`),
      status: 400,
      error: 'Invalid order_by: expected earnings, rate_per_day, earning_percentage or market_competitiveness',
    },
  },
];

test('the module serves exactly its eight routes: the programs in clob, the wallet\'s scoring and earnings in trading', () => {
  assertServes(routes, CASES);
});

for (const c of CASES) {
  test(`${c.route} answers in its schema and charges its buckets`, async () => {
    await assertAnswers(h, routes, c);
  });
}

for (const c of CASES.filter((x) => x.bad)) {
  test(`${c.route}: a bad request answers in the ${c.group} form`, async () => {
    const bad = c.bad!;
    assertGroupError(c.group, await bad.send(), bad.status, bad.error);
  });
}

test('the handlers on hand-built deps: the midpoint they are given, the caller\'s orders only, the clock\'s day', async () => {
  const real = h.app.ctx;
  const mine = real.engine.getOrder(bid)!;
  const wallet = mine.wallet;
  const other = { ...mine, orderId: '0x' + '1'.repeat(64), wallet: '0x' + '22'.repeat(20), signer: '0x' + '22'.repeat(20) };
  // An order the caller signed for its Safe is the caller's too.
  const safe = real.auth.funders.makerOf(wallet, 2);
  const forSafe = { ...mine, orderId: '0x' + '3'.repeat(64), wallet: safe, signer: wallet, signatureType: 2 };
  const orders = new Map([mine, other, forSafe].map((o) => [o.orderId, o]));
  let midPips = 5000;
  const waited: string[][] = [];
  const totals: [string, string][] = [];
  const unused = () => assert.fail('not used by these handlers');
  const deps: RewardsDeps = {
    engine: { getOrder: (id) => orders.get(id), openOrders: unused, restingOrders: unused },
    catalog: real.catalog.read,
    marketData: { ensureSnapshots: (ids) => (waited.push([...ids]), undefined), midpointPips: () => midPips },
    rewards: { current: unused, marketReward: unused, earnings: unused, userMarkets: unused, totals: (w, day) => (totals.push([w, day]), []) },
    clock: { now: () => Date.parse('2026-03-04T23:59:59Z') },
    funders: real.auth.funders,
  };
  const ask = (ids: string[]) => ordersScoring(deps, routeRequest({ body: ids, caller: { address: wallet } }));
  assert.deepEqual(await ask([bid, other.orderId, forSafe.orderId]), { [bid]: true, [other.orderId]: false, [forSafe.orderId]: true }, "another wallet's order never scores");
  assert.deepEqual(waited, [[real.catalog.read.marketByCondition(mine.conditionId)!.clobTokenIds[0]]]);
  midPips = 9000;
  assert.deepEqual(await ask([bid]), { [bid]: false }, 'out of the spread of the midpoint given');
  await assert.rejects(ask([bid]).then(() => ordersScoring({ ...deps, marketData: undefined }, routeRequest({ body: [bid], caller: { address: wallet } }))), (e) => isApiError(e) && e.spec.status === 503);

  userTotals(deps, routeRequest({ query: {}, caller: { address: wallet } }));
  userTotals(deps, routeRequest({ query: { signature_type: 2 }, caller: { address: wallet } }));
  assert.deepEqual(totals, [[wallet, '2026-03-04'], [safe, '2026-03-04']], 'signature_type 2: the Safe\'s earnings');
  assert.throws(() => userTotals(deps, routeRequest({ query: { date: '2026-02-31x' }, caller: { address: wallet } })), (e) => isApiError(e) && e.message === 'invalid date: 2026-02-31x');
});
