/**
 * The admin module (src/edge/routes/admin.ts) through the real app and engine: importing events, changing
 * and resolving a market, funding a wallet, reading its balances and setting its profile each answer in
 * their schema and charge their buckets; a payload that fails validation answers `{error, errors}` with
 * every problem's path. The token gate and the engine double: test/e2e/admin.test.ts.
 * Test harness: test/fixtures/route-contract.ts. The wallet handlers alone, on a recording engine double:
 * amounts in units, a bad amount never reaches the engine, a refusal names the wallet, tokens by asset.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { keccak256, toHex } from 'viem';
import { Errors, isApiError } from '../../../src/domain/errors.ts';
import type { EngineAdmin } from '../../../src/edge/context.ts';
import type { AnyRoute } from '../../../src/edge/pipeline/route.ts';
import { adminRoutes, deposit, walletBalances, withdraw } from '../../../src/edge/routes/admin.ts';
import { routeRequest } from '../../fixtures/route-request.ts';
import { assertAnswers, assertGroupError, assertServes, startRouteApp, type RouteApp, type RouteCase } from '../../fixtures/route-contract.ts';

const CID = keccak256(toHex('route test: admin market'));
const WALLET = '0x' + '5a'.repeat(20);

let h: RouteApp;
let routes: AnyRoute[];
before(async () => {
  h = await startRouteApp({ demo: false });
  routes = adminRoutes(h.app.ctx);
});
after(() => h.close());

const event = {
  title: 'Admin route test',
  slug: 'admin-route-test',
  endDate: '2027-06-30T00:00:00Z',
  markets: [{ question: 'Will the admin routes answer?', conditionId: CID, orderPriceMinTickSize: 0.01, orderMinSize: '1' }],
};

// In this order: the market exists before it is changed, and is resolved last.
const CASES: RouteCase[] = [
  {
    route: 'POST /admin/events',
    group: 'admin',
    ok: () => h.admin('POST', '/admin/events', [event]),
    bad: { send: () => h.admin('POST', '/admin/events', [{ slug: 'no-title', endDate: 'tomorrow', markets: [] }]), status: 400, error: 'invalid request' },
  },
  {
    route: 'POST /admin/markets/:conditionId/status',
    group: 'admin',
    ok: () => h.admin('POST', `/admin/markets/${CID}/status`, { acceptingOrders: true }),
    bad: { send: () => h.admin('POST', `/admin/markets/${CID}/status`, { closed: 'yes' }), status: 400, error: 'invalid request' },
  },
  {
    route: 'POST /admin/wallets/:address/deposit',
    group: 'admin',
    ok: () => h.admin('POST', `/admin/wallets/${WALLET}/deposit`, { amount: '25.5' }),
    bad: { send: () => h.admin('POST', `/admin/wallets/${WALLET}/deposit`, { amount: '1.1234567' }), status: 400, error: 'invalid request' },
  },
  {
    route: 'POST /admin/wallets/:address/withdraw',
    group: 'admin',
    ok: () => h.admin('POST', `/admin/wallets/${WALLET}/withdraw`, { amount: '0.5' }),
    bad: { send: () => h.admin('POST', `/admin/wallets/${WALLET}/withdraw`, { amount: 5 }), status: 400, error: 'invalid request' },
  },
  {
    route: 'GET /admin/wallets/:address',
    group: 'admin',
    ok: () => h.admin('GET', `/admin/wallets/${WALLET}`),
    bad: { send: () => h.admin('GET', '/admin/wallets/0x12'), status: 400, error: 'invalid request' },
  },
  {
    route: 'PUT /admin/wallets/:address/profile',
    group: 'admin',
    ok: () => h.admin('PUT', `/admin/wallets/${WALLET}/profile`, { name: 'Route Test', bio: 'answers' }),
    bad: { send: () => h.admin('PUT', `/admin/wallets/${WALLET}/profile`, { name: 'x'.repeat(101), unknown: 1 }), status: 400, error: 'invalid request' },
  },
  {
    route: 'POST /admin/markets/:conditionId/resolve',
    group: 'admin',
    ok: () => h.admin('POST', `/admin/markets/${CID}/resolve`, { winningOutcomeIndex: 1 }),
    bad: { send: () => h.admin('POST', `/admin/markets/${CID}/resolve`, { winningOutcomeIndex: 2 }), status: 400, error: 'invalid request' },
  },
];

test('the module serves exactly its seven routes, in the admin group', () => {
  assertServes(routes, CASES);
});

for (const c of CASES) {
  test(`${c.route} answers in its schema and charges its buckets`, async () => {
    await assertAnswers(h, routes, c);
  });
}

for (const c of CASES.filter((x) => x.bad)) {
  test(`${c.route}: a payload that fails validation answers {error, errors}`, async () => {
    const bad = c.bad!;
    const res = await bad.send();
    assertGroupError(c.group, res, bad.status, bad.error);
    assert.ok(Array.isArray(res.body.errors), `errors lists the problems: ${JSON.stringify(res.body)}`);
  });
}

test('the wallet handlers on a hand-built engine: units, refusals, balances by asset', async () => {
  const calls: string[] = [];
  const ok = { ok: true, code: 0 };
  const engine: EngineAdmin = {
    registerMarket: () => assert.fail('not a wallet operation'),
    resolveMarket: async () => assert.fail('not a wallet operation'),
    deposit: async (w, u) => (calls.push(`deposit ${w} ${u}`), ok),
    withdraw: async (w, u) => (calls.push(`withdraw ${w} ${u}`), { ok: false, code: Errors.PM_ERR_BALANCE.result }),
    balances: () => ({
      usdc: { available: 12_500_000, reserved: 1 },
      tokens: [
        { tokenId: '9', conditionId: '0x' + 'bb'.repeat(32), outcome: 0, available: 2_000_000, reserved: 0 },
        { tokenId: '7', conditionId: '0x' + 'aa'.repeat(32), outcome: 1, available: 0, reserved: 3_000_000 },
      ],
    }),
  };
  const params = { address: '0x' + 'AB'.repeat(20) };
  const wallet = params.address.toLowerCase();
  const after = await deposit({ engine }, routeRequest({ params, body: { amount: '12.5' } }));
  assert.deepEqual(calls, [`deposit ${wallet} 12500000`]);
  assert.deepEqual(after.usdc, { available: '12.5', reserved: '0.000001' });
  assert.deepEqual(after.tokens.map((t) => t.tokenId), ['7', '9'], 'tokens by asset, not by ledger order');

  await assert.rejects(deposit({ engine }, routeRequest({ params, body: { amount: '-1' } })), (e) => isApiError(e) && e.spec.code === 'PM_ERR_AMOUNT');
  assert.equal(calls.length, 1, 'a bad amount never reaches the engine');
  await assert.rejects(withdraw({ engine }, routeRequest({ params, body: { amount: '1' } })), (e) => isApiError(e) && e.spec.code === 'PM_ERR_BALANCE');
  assert.deepEqual(walletBalances({ engine }, routeRequest({ params })), after);
});
