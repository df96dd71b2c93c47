/**
 * The auth module (src/edge/routes/auth.ts) through the real app: creating, deriving, listing and revoking
 * API keys and GET /exchange-info each answer in their schema and charge their buckets; missing or bad
 * L1/L2 headers and an unknown nonce answer in the trading group's form. Key semantics (nonces, secrets,
 * master key): test/edge/auth.test.ts. Test harness: test/fixtures/route-contract.ts.
 */
import { after, before, test } from 'node:test';
import { DEMO_WALLETS } from '../../../src/demo/catalog.ts';
import type { AnyRoute } from '../../../src/edge/route.ts';
import { authRoutes } from '../../../src/edge/routes/auth.ts';
import { assertAnswers, assertGroupError, assertServes, resOf, startRouteApp, type RouteApp, type RouteCase } from '../../fixtures/route-contract.ts';
import { TestClient, type Creds } from '../../fixtures/trading-client.ts';

let h: RouteApp;
let routes: AnyRoute[];
let client: TestClient;
/** A key of its own for the revocation, so the other routes keep theirs. */
let doomed: Creds;
before(async () => {
  h = await startRouteApp({ demo: false });
  routes = authRoutes(h.app.ctx);
  client = new TestClient(h.base, DEMO_WALLETS[0].privateKey, await TestClient.info(h.base));
  doomed = await client.createKey(9);
  await client.createKey(0);
});
after(() => h.close());

const l1 = async (method: string, path: string, nonce: number) => resOf(await fetch(h.base + path, { method, headers: await client.l1Headers(nonce) }));

const CASES: RouteCase[] = [
  {
    route: 'POST /auth/api-key',
    group: 'trading',
    ok: () => l1('POST', '/auth/api-key', 1),
    bad: { send: () => h.send('POST', '/auth/api-key'), status: 401, error: 'Invalid L1 Request headers' },
  },
  {
    route: 'GET /auth/derive-api-key',
    group: 'trading',
    ok: () => l1('GET', '/auth/derive-api-key', 0),
    bad: { send: () => l1('GET', '/auth/derive-api-key', 12345), status: 400, error: 'Could not derive api key!' },
  },
  {
    route: 'GET /auth/api-keys',
    group: 'trading',
    ok: () => client.call('GET', '/auth/api-keys'),
    bad: { send: () => h.send('GET', '/auth/api-keys'), status: 401, error: 'Unauthorized/Invalid api key' },
  },
  {
    route: 'DELETE /auth/api-key',
    group: 'trading',
    ok: () => client.call('DELETE', '/auth/api-key', undefined, doomed),
    bad: { send: () => client.call('DELETE', '/auth/api-key', undefined, { ...client.creds!, secret: doomed.secret }), status: 401, error: 'Unauthorized/Invalid api key' },
  },
  { route: 'GET /exchange-info', group: 'clob', ok: () => h.send('GET', '/exchange-info') },
];

test('the module serves exactly its five routes: the key routes in the trading group, exchange-info in clob', () => {
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
