/**
 * The trading module (src/edge/routes/clob/trading.ts) through the real app and engine, signed by a funded demo
 * wallet: placing one order and a batch, reading orders, trades and balances, split, merge, redeem and
 * every cancel answer in their schema and charge their buckets (a batch charges one unit per order); a
 * bad payload, parameter or signature answers `{"error": "<message>"}`. The trading semantics:
 * test/e2e/trading.test.ts. Test harness: test/fixtures/route-contract.ts. The handlers alone, on a
 * recording engine: a bad cancel filter, market or amount never reaches the engine, a refusal names its
 * market, balances name every exchange and wait for the commit.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_WALLETS } from '../../../../src/demo/catalog.ts';
import { Errors, isApiError } from '../../../../src/domain/errors.ts';
import type { AnyRoute } from '../../../../src/edge/pipeline/route.ts';
import { balanceAllowance } from '../../../../src/edge/routes/clob/order-reads.ts';
import { cancelMarketOrders, tradingRoutes } from '../../../../src/edge/routes/clob/trading.ts';
import { redeem, split } from '../../../../src/edge/routes/clob/wallet-ops.ts';
import { type TradingDeps } from '../../../../src/edge/routes/clob/trading-deps.ts';
import { routeRequest } from '../../../fixtures/route-request.ts';
import { assertAnswers, assertGroupError, assertServes, startRouteApp, type RouteApp, type RouteCase } from '../../../fixtures/route-contract.ts';
import { TestClient, units } from '../../../fixtures/trading-client.ts';

let h: RouteApp;
let routes: AnyRoute[];
let alice: TestClient;
let cid: string;
let yes: string;
/** A market resolved before the tests, for redeem. */
let resolvedCid: string;
const placed: string[] = [];

before(async () => {
  h = await startRouteApp();
  routes = tradingRoutes(h.app.ctx);
  alice = new TestClient(h.base, DEMO_WALLETS[0].privateKey, await TestClient.info(h.base));
  await alice.createKey();
  const [market, other] = h.app.ctx.catalog.read.tradingMarkets().filter((m) => m.acceptingOrders && !m.negRisk);
  cid = market.conditionId;
  yes = market.tokenIds[0];
  resolvedCid = other.conditionId;
  assert.equal((await alice.call('POST', '/split', { conditionId: resolvedCid, amount: '1' })).status, 200);
  assert.equal((await h.admin('POST', `/admin/markets/${resolvedCid}/resolve`, { winningOutcomeIndex: 0 })).status, 200);
});
after(() => h.close());

/** A resting bid of 0.10 for 5 tokens. */
const bid = () => alice.signOrder({ tokenId: yes, side: 'BUY', makerAmount: units(0.5), takerAmount: units(5) });
const keep = (ids: string[]) => {
  placed.push(...ids);
};

// In this order: orders are placed before they are read and cancelled.
const CASES: RouteCase[] = [
  {
    route: 'POST /order',
    group: 'trading',
    ok: async () => {
      const r = await alice.call('POST', '/order', await bid());
      keep([r.body.orderID]);
      return r;
    },
    bad: { send: () => alice.call('POST', '/order', { order: 'junk' }), status: 400 },
  },
  {
    route: 'POST /orders',
    group: 'trading',
    cost: 3,
    ok: async () => {
      const r = await alice.call('POST', '/orders', [await bid(), await bid(), await bid()]);
      keep(r.body.map((x: { orderID: string }) => x.orderID));
      return r;
    },
    bad: { send: async () => alice.call('POST', '/orders', Array.from({ length: 16 }, () => ({ order: 'junk' }))), status: 400, error: /^Too many orders in payload: 16/ },
  },
  {
    route: 'GET /data/order/:id',
    group: 'clob',
    ok: () => h.send('GET', `/data/order/${placed[0]}`),
    bad: { send: () => h.send('GET', `/data/order/0x${'0'.repeat(64)}`), status: 404, error: 'order not found' },
  },
  {
    route: 'GET /data/orders',
    group: 'trading',
    ok: async () => {
      const r = await alice.call('GET', `/data/orders?market=${cid}`);
      assert.equal(r.body.count, 4, 'the four bids are open');
      return r;
    },
    bad: { send: () => alice.call('GET', '/data/orders?next_cursor=nope'), status: 400 },
  },
  {
    route: 'GET /data/trades',
    group: 'trading',
    ok: () => alice.call('GET', '/data/trades'),
    bad: { send: () => alice.call('GET', '/data/trades?next_cursor=nope'), status: 400 },
  },
  {
    route: 'GET /balance-allowance',
    group: 'trading',
    ok: () => alice.call('GET', '/balance-allowance?asset_type=COLLATERAL'),
    bad: { send: () => alice.call('GET', '/balance-allowance?asset_type=GOLD'), status: 400 },
  },
  {
    route: 'GET /balance-allowance/update',
    group: 'trading',
    ok: () => alice.call('GET', `/balance-allowance/update?asset_type=CONDITIONAL&token_id=${yes}`),
    bad: { send: () => alice.call('GET', '/balance-allowance/update?asset_type=CONDITIONAL'), status: 400, error: 'token_id is required for CONDITIONAL' },
  },
  {
    route: 'GET /data/pre-migration-orders',
    group: 'trading',
    ok: async () => {
      const r = await alice.call('GET', '/data/pre-migration-orders');
      assert.deepEqual(r.body, { data: [], next_cursor: 'LTE=', limit: 500, count: 0 });
      return r;
    },
    bad: { send: () => alice.call('GET', '/data/pre-migration-orders?next_cursor=nope'), status: 400, error: 'invalid next_cursor' },
  },
  {
    route: 'POST /split',
    group: 'trading',
    ok: () => alice.call('POST', '/split', { conditionId: cid, amount: '2' }),
    bad: { send: () => alice.call('POST', '/split', { conditionId: '0x12', amount: '1' }), status: 400 },
  },
  {
    route: 'POST /merge',
    group: 'trading',
    ok: () => alice.call('POST', '/merge', { conditionId: cid, amount: '1' }),
    bad: { send: () => alice.call('POST', '/merge', { conditionId: cid, amount: '1000000' }), status: 400 },
  },
  {
    route: 'POST /redeem',
    group: 'trading',
    ok: () => alice.call('POST', '/redeem', { conditionId: resolvedCid }),
    bad: { send: () => alice.call('POST', '/redeem', { conditionId: cid }), status: 400, error: `market ${'{cid}'} is not resolved` },
  },
  {
    route: 'DELETE /order',
    group: 'trading',
    ok: () => alice.call('DELETE', '/order', { orderID: placed[0] }),
    bad: { send: () => alice.call('DELETE', '/order', { orderID: 5 }), status: 400 },
  },
  {
    route: 'DELETE /orders',
    group: 'trading',
    ok: () => alice.call('DELETE', '/orders', [placed[1]]),
    bad: { send: () => alice.call('DELETE', '/orders', 'all'), status: 400 },
  },
  {
    route: 'DELETE /cancel-market-orders',
    group: 'trading',
    ok: () => alice.call('DELETE', '/cancel-market-orders', { market: cid, asset_id: yes }),
    bad: { send: () => alice.call('DELETE', '/cancel-market-orders', {}), status: 400 },
  },
  {
    route: 'DELETE /cancel-all',
    group: 'trading',
    ok: () => alice.call('DELETE', '/cancel-all'),
    bad: { send: () => h.send('DELETE', '/cancel-all'), status: 401, error: 'Unauthorized/Invalid api key' },
  },
];

test('the module serves exactly its fifteen routes: GET /data/order/:id in clob, the signed ones in trading', () => {
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
    const error = typeof bad.error === 'string' ? bad.error.replace('{cid}', cid) : bad.error;
    assertGroupError(c.group, await bad.send(), bad.status, error);
  });
}

test('the handlers on a hand-built engine: checks before the engine, refusals, durable balances', async () => {
  const CID = '0x' + 'ab'.repeat(32);
  const calls: unknown[] = [];
  let committed = { ok: true, code: 0 };
  const unused = () => assert.fail('not used by these handlers');
  const engine: TradingDeps['engine'] = {
    placeOrder: unused,
    cancelOrders: unused,
    cancelAll: unused,
    getOrder: unused,
    openOrders: unused,
    merge: unused,
    unsettled: unused,
    market: (cid) => (cid === CID ? ({} as never) : undefined),
    cancelMarketOrders: async (wallet, f) => (calls.push(['cancel', wallet, f]), { canceled: ['0x01'], notCanceled: { '0x02': 'order is not live' } }),
    split: async (wallet, cid, u) => (calls.push(['split', wallet, cid, u]), { ok: true, code: 0 }),
    redeem: async () => ({ ok: false, code: Errors.PM_ERR_MARKET_NOT_RESOLVED.result }),
    balances: (w) =>
      w === '0x' + '02'.repeat(20)
        ? { usdc: { available: 9, reserved: 0 }, tokens: [] }
        : { usdc: { available: 7_000_000, reserved: 3 }, tokens: [{ tokenId: '42', conditionId: CID, outcome: 0, available: 5, reserved: 1 }] },
    afterCommit: async () => committed,
  };
  const W = '0x' + 'cd'.repeat(20);
  const as = <B>(body: B) => routeRequest({ body, caller: { address: W } });

  // The key's wallets as a recording stand-in: its proxy wallet and Safe are named by type.
  const PROXY = '0x' + '01'.repeat(20);
  const SAFE = '0x' + '02'.repeat(20);
  const funders: TradingDeps['funders'] = {
    makerOf: (signer, type) => (assert.equal(signer, W), type === 0 ? W : type === 1 ? PROXY : SAFE),
    walletsOf: () => [W, PROXY, SAFE],
  };

  await assert.rejects(cancelMarketOrders({ engine }, as({ market: '', asset_id: '' })), (e) => isApiError(e) && e.message === 'market or asset_id is required');
  await assert.rejects(cancelMarketOrders({ engine }, as({ market: '0x12' })), (e) => isApiError(e) && e.message === 'invalid market');
  assert.deepEqual(calls, []);
  assert.deepEqual(await cancelMarketOrders({ engine }, as({ market: CID.toUpperCase().replace('0X', '0x'), asset_id: '' })), { canceled: ['0x01'], not_canceled: { '0x02': 'order is not live' } });
  assert.deepEqual(calls.pop(), ['cancel', W, { conditionId: CID, tokenId: undefined }]);

  assert.throws(() => split({ engine, funders }, as({ conditionId: '0x' + 'ef'.repeat(32), amount: '1' })), (e) => isApiError(e) && e.message === 'unknown market');
  assert.throws(() => split({ engine, funders }, as({ conditionId: CID, amount: '0' })), (e) => isApiError(e) && e.spec.code === 'PM_ERR_AMOUNT');
  assert.deepEqual(calls, []);
  assert.deepEqual(await split({ engine, funders }, as({ conditionId: CID, amount: '2.5' })), { success: true });
  assert.deepEqual(calls.pop(), ['split', W, CID, 2_500_000]);
  assert.deepEqual(await split({ engine, funders }, as({ conditionId: CID, amount: '1', signatureType: 2 })), { success: true });
  assert.deepEqual(calls.pop(), ['split', SAFE, CID, 1_000_000], 'signature_type 2 splits the Safe\'s USDC');
  assert.throws(() => split({ engine, funders }, as({ conditionId: CID, amount: '1', signatureType: 3 })), (e) => isApiError(e) && /^signatureType 3 is not supported/.test(e.message));
  await assert.rejects(redeem({ engine, funders }, as({ conditionId: CID })), (e) => isApiError(e) && e.message === `market ${CID} is not resolved`);

  const exchanges = ['0x' + '01'.repeat(20), '0x' + '02'.repeat(20)];
  const q = (query: object) => routeRequest({ query: query as never, caller: { address: W } });
  assert.deepEqual(await balanceAllowance({ engine, exchanges, funders }, q({ asset_type: 'COLLATERAL' })), {
    balance: '7000000',
    allowance: '7000000',
    allowances: { [exchanges[0]]: '7000000', [exchanges[1]]: '7000000' },
    reserved: '3',
  });
  assert.equal((await balanceAllowance({ engine, exchanges, funders }, q({ asset_type: 'CONDITIONAL', token_id: '42' }))).balance, '5');
  assert.throws(() => balanceAllowance({ engine, exchanges, funders }, q({ asset_type: 'CONDITIONAL' })), (e) => isApiError(e) && e.message === 'token_id is required for CONDITIONAL');
  assert.equal((await balanceAllowance({ engine, exchanges, funders }, q({ asset_type: 'COLLATERAL', signature_type: 2 }))).balance, '9', 'signature_type 2: the Safe\'s balance');
  assert.equal((await balanceAllowance({ engine, exchanges, funders }, q({ asset_type: 'COLLATERAL', signature_type: 0 }))).balance, '7000000');
  committed = { ok: false, code: Errors.PM_ERR_UNAVAILABLE.result };
  await assert.rejects(balanceAllowance({ engine, exchanges, funders }, q({ asset_type: 'COLLATERAL' })), (e) => isApiError(e) && e.spec.status === 503, 'never answered before it is durable');
});
