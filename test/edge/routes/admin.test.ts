/**
 * The admin module (src/edge/routes/admin.ts) through the real app and engine: importing events, changing
 * and resolving a market, funding a wallet, reading its balances and setting its profile each answer in
 * their schema and charge their buckets; a payload that fails validation answers `{error, errors}` with
 * every problem's path. The token gate and the engine double: test/e2e/admin.test.ts.
 * Test harness: test/fixtures/route-contract.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { keccak256, toHex } from 'viem';
import type { AnyRoute } from '../../../src/edge/route.ts';
import { adminRoutes } from '../../../src/edge/routes/admin.ts';
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
