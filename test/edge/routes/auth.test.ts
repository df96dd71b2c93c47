/**
 * The auth module (src/edge/routes/auth.ts) through the real app: creating, deriving, listing and revoking
 * API keys, read-only keys (create, list, delete, the public validation) and builder keys (create, list,
 * revoke) and GET /exchange-info each answer in their schema and charge their buckets; missing or bad
 * L1/L2 headers and an unknown nonce answer in the trading group's form. Key semantics (nonces, secrets,
 * master key, kinds): test/edge/auth.test.ts, test/e2e/key-kinds.test.ts. Test harness:
 * test/fixtures/route-contract.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
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
/** A read-only key and a builder key of the client's wallet, made by the create cases. */
let readonly: Creds;
let builder: Creds;
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
  {
    route: 'POST /auth/readonly-api-key',
    group: 'trading',
    ok: async () => {
      const r = await client.call('POST', '/auth/readonly-api-key');
      readonly = r.body;
      return r;
    },
    bad: { send: () => h.send('POST', '/auth/readonly-api-key'), status: 401, error: 'Unauthorized/Invalid api key' },
  },
  {
    route: 'GET /auth/readonly-api-keys',
    group: 'trading',
    ok: async () => {
      const r = await client.call('GET', '/auth/readonly-api-keys');
      assert.deepEqual(r.body, [readonly.apiKey]);
      return r;
    },
    bad: { send: () => client.call('GET', '/auth/readonly-api-keys', undefined, readonly), status: 401, error: 'Unauthorized/Invalid api key' },
  },
  {
    route: 'GET /auth/validate-readonly-api-key',
    group: 'clob',
    ok: async () => {
      const r = await h.send('GET', `/auth/validate-readonly-api-key?address=${client.address}&key=${readonly.apiKey}`);
      assert.deepEqual(r.body, { valid: true });
      return r;
    },
    bad: { send: () => h.send('GET', `/auth/validate-readonly-api-key?address=0x12&key=${readonly.apiKey}`), status: 400, error: 'Invalid address' },
  },
  {
    route: 'DELETE /auth/readonly-api-key',
    group: 'trading',
    ok: async () => {
      const r = await client.call('DELETE', '/auth/readonly-api-key', { key: readonly.apiKey });
      assert.equal(r.body, true);
      return r;
    },
    bad: { send: () => client.call('DELETE', '/auth/readonly-api-key', { id: 'x' }), status: 400 },
  },
  {
    route: 'POST /auth/builder-api-key',
    group: 'trading',
    ok: async () => {
      const r = await client.call('POST', '/auth/builder-api-key');
      builder = { apiKey: r.body.key, secret: r.body.secret, passphrase: r.body.passphrase };
      return r;
    },
    bad: { send: () => client.builderCall('POST', '/auth/builder-api-key', builder), status: 401, error: 'Unauthorized/Invalid api key' },
  },
  {
    route: 'GET /auth/builder-api-key',
    group: 'trading',
    ok: () => client.call('GET', '/auth/builder-api-key'),
    bad: { send: () => client.builderCall('GET', '/auth/builder-api-key', builder), status: 401, error: 'Unauthorized/Invalid api key' },
  },
  {
    route: 'DELETE /auth/builder-api-key',
    group: 'trading',
    ok: () => client.builderCall('DELETE', '/auth/builder-api-key', builder),
    bad: { send: () => client.builderCall('DELETE', '/auth/builder-api-key', { ...builder, secret: doomed.secret }), status: 401, error: 'Unauthorized/Invalid api key' },
  },
  { route: 'GET /exchange-info', group: 'clob', ok: () => h.send('GET', '/exchange-info') },
];

test('the module serves exactly its twelve routes: the key routes in the trading group, exchange-info and the read-only key check in clob', () => {
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
