/**
 * What each kind of API key may sign, over the whole route table: a read-only key is accepted exactly by the
 * routes that list it (reads: orders, trades, balances, notifications, scoring, rewards, closed-only status)
 * and refused 401 everywhere else, in particular on every route that places, cancels, moves money, starts a
 * heartbeat or manages keys; a builder key signs only the builder headers, and those only where a route takes
 * builder keys; a trading key in the builder headers is refused. A public route that looks only at builder
 * headers (`authOptional`, GET /builder/trades) ignores L2 headers, whatever key signed them, and serves the
 * request as a public one; likewise a route that takes L2 keys but also serves the public (`authOptional`,
 * GET /refusals) ignores builder headers. Also: the cap on keys per wallet counts each kind apart, and a revoked read-only
 * key stops working at once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_WALLETS } from '../../src/demo/catalog.ts';
import { buildRoutes } from '../../src/edge/routes.ts';
import type { AnyRoute, KeyKind } from '../../src/edge/pipeline/route.ts';
import { startRouteApp, type RouteApp } from '../fixtures/route-contract.ts';
import { TestClient, type Creds } from '../fixtures/trading-client.ts';

let h: RouteApp;
let alice: TestClient;
let readonly: Creds;
let builder: Creds;
let signed: AnyRoute[];

/** The routes that place, cancel, move money, start a heartbeat or manage keys: never a read-only key's. */
const WRITES = [
  'POST /order',
  'POST /orders',
  'DELETE /order',
  'DELETE /orders',
  'DELETE /cancel-market-orders',
  'DELETE /cancel-all',
  'POST /split',
  'POST /merge',
  'POST /redeem',
  'POST /v1/heartbeats',
  'DELETE /notifications',
  'DELETE /auth/api-key',
  'GET /auth/api-keys',
  'POST /auth/readonly-api-key',
  'GET /auth/readonly-api-keys',
  'DELETE /auth/readonly-api-key',
  'POST /auth/builder-api-key',
  'GET /auth/builder-api-key',
  'DELETE /auth/builder-api-key',
];

const keysOf = (r: AnyRoute): readonly KeyKind[] => r.keys ?? ['trading'];
const path = (r: AnyRoute) => r.path.replace(/:[a-z_]+/gi, '0x' + 'ab'.repeat(32));
const bodyOf = (r: AnyRoute) => (r.method === 'GET' ? undefined : {});
/** A public route signed only through the builder headers: L2 headers are not its kind, and it serves them as public. */
const ignoresL2 = (r: AnyRoute) => r.authOptional === true && keysOf(r).every((k) => k === 'builder');
/** A public route signed only through the L2 headers: builder headers are not its kind, and it serves them as public. */
const ignoresBuilder = (r: AnyRoute) => r.authOptional === true && !keysOf(r).includes('builder');
/** What such a route answers the public request these tests send (GET /refusals without `address`: 400). */
const publicStatus = (r: AnyRoute) => (r.path === '/refusals' ? 400 : 200);

before(async () => {
  h = await startRouteApp({ demo: 'static' });
  alice = new TestClient(h.base, DEMO_WALLETS[0].privateKey, await TestClient.info(h.base));
  await alice.createKey();
  readonly = (await alice.call('POST', '/auth/readonly-api-key')).body;
  const b = (await alice.call('POST', '/auth/builder-api-key')).body;
  builder = { apiKey: b.key, secret: b.secret, passphrase: b.passphrase };
  signed = buildRoutes(h.app.ctx).filter((r) => r.auth === 'l2');
});
after(() => h.close());

test('the routes that place, cancel, move money or manage keys exist and take trading keys only', () => {
  for (const w of WRITES) {
    const r = signed.find((x) => `${x.method} ${x.path}` === w);
    assert.ok(r, `${w} is a signed route`);
    assert.ok(!keysOf(r).includes('readonly'), `${w} must not take a read-only key`);
  }
});

test('a read-only key is accepted exactly by the routes that list it, and refused 401 by every other', async () => {
  const reads: string[] = [];
  for (const r of signed) {
    const res = await alice.call(r.method as 'GET' | 'POST' | 'DELETE', path(r), bodyOf(r), readonly);
    const name = `${r.method} ${r.path}`;
    if (keysOf(r).includes('readonly')) {
      assert.notEqual(res.status, 401, `${name}: ${JSON.stringify(res.body)}`);
      reads.push(name);
    } else if (ignoresL2(r)) assert.equal(res.status, 200, `${name}: L2 headers are ignored, the request is public: ${JSON.stringify(res.body)}`);
    else assert.equal(res.status, 401, `${name} took a read-only key: ${JSON.stringify(res.body)}`);
  }
  assert.deepEqual(reads.sort(), [
    'GET /auth/ban-status/closed-only',
    'GET /balance-allowance',
    'GET /balance-allowance/update',
    'GET /data/orders',
    'GET /data/pre-migration-orders',
    'GET /data/trades',
    'GET /notifications',
    'GET /order-scoring',
    'GET /refusals',
    'GET /rewards/user',
    'GET /rewards/user/markets',
    'GET /rewards/user/percentages',
    'GET /rewards/user/total',
    'POST /orders-scoring',
  ]);
});

test('a builder key signs the builder headers of the routes that take builder keys, nothing else; a trading key never signs them', async () => {
  for (const r of signed) {
    const name = `${r.method} ${r.path}`;
    const m = r.method as 'GET' | 'POST' | 'DELETE';
    assert.equal((await alice.call(m, path(r), bodyOf(r), builder)).status, ignoresL2(r) ? 200 : 401, `${name}: a builder key in the L2 headers`);
    const trading: Creds = alice.creds!;
    assert.equal((await alice.builderCall(m, path(r), trading, bodyOf(r))).status, ignoresBuilder(r) ? publicStatus(r) : 401, `${name}: a trading key in the builder headers`);
    // Revoking with the builder headers spends the key: that route is checked last, below.
    if (name === 'DELETE /auth/builder-api-key') continue;
    const res = await alice.builderCall(m, path(r), builder, bodyOf(r));
    if (keysOf(r).includes('builder')) assert.notEqual(res.status, 401, `${name}: ${JSON.stringify(res.body)}`);
    else if (ignoresBuilder(r)) assert.equal(res.status, publicStatus(r), `${name}: builder headers are ignored, the request is public: ${JSON.stringify(res.body)}`);
    else assert.equal(res.status, 401, `${name} took a builder key`);
  }
  assert.equal((await alice.builderCall('DELETE', '/auth/builder-api-key', builder)).status, 200);
  assert.equal((await alice.builderCall('GET', '/builder/trades', builder)).status, 401, 'revoked');
});

test('keys per wallet are capped per kind; a deleted read-only key stops working at once', async () => {
  const max = h.app.ctx.config.auth.maxKeysPerWallet;
  const bob = new TestClient(h.base, DEMO_WALLETS[1].privateKey, alice.info);
  await bob.createKey();
  const made: Creds[] = [];
  for (let i = 0; i < max; i++) {
    const r = await bob.call('POST', '/auth/readonly-api-key');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    made.push(r.body);
  }
  const over = await bob.call('POST', '/auth/readonly-api-key');
  assert.equal(over.status, 400);
  assert.match(over.body.error, /too many API keys/);
  assert.equal((await bob.call('POST', '/auth/builder-api-key')).status, 200, 'builder keys have their own cap');
  assert.equal((await bob.createKey(1)).apiKey.length, 36, 'and trading keys theirs');

  assert.equal((await bob.call('GET', '/data/orders', undefined, made[0])).status, 200);
  assert.equal((await bob.call('DELETE', '/auth/readonly-api-key', { key: made[0].apiKey })).body, true);
  assert.equal((await bob.call('GET', '/data/orders', undefined, made[0])).status, 401);
  assert.equal((await bob.call('DELETE', '/auth/readonly-api-key', { key: alice.creds!.apiKey })).body, false, "another wallet's key, or a trading key, is not deleted");
  assert.equal((await bob.call('POST', '/auth/readonly-api-key')).status, 200, 'the deleted key freed a place');
});
