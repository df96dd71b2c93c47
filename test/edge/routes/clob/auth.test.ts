/**
 * The auth module (src/edge/routes/clob/auth.ts) through the real app: creating, deriving, listing and revoking
 * API keys, read-only keys (create, list, delete, the public validation) and builder keys (create, list,
 * revoke) and GET /exchange-info each answer in their schema and charge their buckets; missing or bad
 * L1/L2 headers and an unknown nonce answer in the trading group's form. Key semantics (nonces, secrets,
 * master key, kinds): test/edge/auth.test.ts, test/e2e/key-kinds.test.ts. Test harness:
 * test/fixtures/route-contract.ts. The handlers alone, on a hand-built key service: a read-only key is
 * deleted only by its own wallet, validated only for it, and a trading key revokes every builder key.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_WALLETS } from '../../../../src/demo/catalog.ts';
import type { ApiKeyRecord } from '../../../../src/edge/auth/api-keys.ts';
import type { AnyRoute } from '../../../../src/edge/pipeline/route.ts';
import { authRoutes, deleteReadonlyKey, listReadonlyKeys, revokeBuilderKeys, validateReadonlyKey, type AuthRouteDeps } from '../../../../src/edge/routes/clob/auth.ts';
import { routeRequest } from '../../../fixtures/route-request.ts';
import { assertAnswers, assertGroupError, assertServes, resOf, startRouteApp, type RouteApp, type RouteCase } from '../../../fixtures/route-contract.ts';
import { TestClient, type Creds } from '../../../fixtures/trading-client.ts';

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

test('the key handlers on a hand-built key service: whose keys, which kinds', async () => {
  const A = '0x' + 'aa'.repeat(20);
  const B = '0x' + 'bb'.repeat(20);
  const records: ApiKeyRecord[] = [
    { apiKey: 'ro-a', address: A, nonce: '1', createdAt: 1, revoked: false, kind: 'readonly' },
    { apiKey: 'ro-b', address: B, nonce: '2', createdAt: 2, revoked: false, kind: 'readonly' },
    { apiKey: 'bk-a1', address: A, nonce: '3', createdAt: 3, revoked: false, kind: 'builder' },
    { apiKey: 'bk-a2', address: A, nonce: '4', createdAt: 4, revoked: true, revokedAt: 5, kind: 'builder' },
    { apiKey: 'bk-a3', address: A, nonce: '5', createdAt: 6, revoked: false, kind: 'builder' },
  ];
  const revoked: string[] = [];
  const unused = () => assert.fail('not used by these handlers');
  const keys: AuthRouteDeps['keys'] = {
    create: unused,
    derive: unused,
    list: unused,
    createKind: unused,
    records: (address, kind) => records.filter((r) => r.address === address && (r.kind ?? 'trading') === kind),
    usable: (apiKey) => records.find((r) => r.apiKey === apiKey && !r.revoked),
    revoke: async (apiKey) => {
      revoked.push(apiKey);
      records.find((r) => r.apiKey === apiKey)!.revoked = true;
    },
  };
  const asA = { address: A, apiKey: 'trading-a', keyKind: 'trading' as const };
  assert.equal(await deleteReadonlyKey({ keys }, routeRequest({ body: { key: 'ro-b' }, caller: asA })), false, "another wallet's key");
  assert.equal(await deleteReadonlyKey({ keys }, routeRequest({ body: { key: 'bk-a1' }, caller: asA })), false, 'not a read-only key');
  assert.deepEqual(revoked, []);
  assert.deepEqual(validateReadonlyKey({ keys }, routeRequest({ query: { key: 'ro-a', address: A.toUpperCase().replace('0X', '0x') } })), { valid: true });
  assert.deepEqual(validateReadonlyKey({ keys }, routeRequest({ query: { key: 'ro-a', address: B } })), { valid: false });
  assert.equal(await deleteReadonlyKey({ keys }, routeRequest({ body: { key: 'ro-a' }, caller: asA })), true);
  assert.deepEqual(listReadonlyKeys({ keys }, routeRequest({ caller: asA })), []);

  assert.equal(await revokeBuilderKeys({ keys }, routeRequest({ caller: asA })), 'OK');
  assert.deepEqual(revoked, ['ro-a', 'bk-a1', 'bk-a3'], 'a trading key revokes every usable builder key of its wallet');
  await assert.rejects(async () => listReadonlyKeys({ keys }, routeRequest({})), /authenticated route without caller.address/);
});
