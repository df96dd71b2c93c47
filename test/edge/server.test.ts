/**
 * The edge server's `dispatch` (src/edge/server.ts): a request that did not come off a socket (what a gateway
 * forwards, edge/cluster/forward.ts) reaches the route uWS would route it to, with its path parameters, through the
 * same processor; no route is a 404; and it counts as in flight, so a drain waits for it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { Incoming } from '../../src/edge/http/http.ts';
import type { AnyRoute } from '../../src/edge/pipeline/route.ts';
import { CallerCache } from '../../src/edge/server.ts';
import { startTestServer } from '../fixtures/edge.ts';

const request = (method: string, path: string): Incoming => ({ method, path, query: '', headers: {}, params: [], peer: '192.0.2.1', body: undefined, receivedAt: Date.now() });

test('dispatch routes as uWS does: method, static segments, parameters; else 404; in flight meanwhile', async () => {
  let release: () => void = () => undefined;
  const routes: AnyRoute[] = [
    { method: 'GET', path: '/data/order/:id', group: 'trading', summary: '', params: Type.Object({ id: Type.String() }), handler: (r) => ({ id: (r.params as { id: string }).id }) },
    { method: 'GET', path: '/data/orders', group: 'trading', summary: '', handler: () => 'list' },
    { method: 'POST', path: '/data/orders', group: 'trading', summary: '', handler: () => new Promise((r) => (release = () => r('posted'))) },
  ];
  const t = await startTestServer(routes);
  try {
    assert.deepEqual(await t.server.dispatch(request('GET', '/data/order/0xab')), { status: 200, body: '{"id":"0xab"}' });
    assert.equal((await t.server.dispatch(request('GET', '/data/orders'))).body, '"list"');
    assert.equal((await t.server.dispatch(request('GET', '/data/order/'))).status, 404);
    assert.equal((await t.server.dispatch(request('PUT', '/data/orders'))).status, 404);
    const pending = t.server.dispatch(request('POST', '/data/orders'));
    await new Promise((r) => setImmediate(r));
    assert.equal(t.server.inFlight.size, 1);
    release();
    assert.equal((await pending).body, '"posted"');
    assert.equal(t.server.inFlight.size, 0);
  } finally {
    await t.close();
  }
});

test('the caller cache keeps X-Forwarded-For only when a proxy is trusted, and never a long one', () => {
  const untrusting = new CallerCache([]);
  const trusting = new CallerCache(['127.0.0.1']);
  for (let i = 0; i < 2000; i++) {
    // A made-up chain per request, 8 KB long, as a signed route copies it whether or not it is believed.
    const xff = `10.${i >> 8}.${i & 255}.1,` + '1.2.3.4,'.repeat(1000);
    assert.equal(untrusting.get('127.0.0.1', xff).ip, '127.0.0.1');
    assert.equal(trusting.get('127.0.0.1', xff).ip, '1.2.3.4');
    assert.equal(trusting.get('127.0.0.1', `10.0.${i & 255}.9`).ip, `10.0.${i & 255}.9`);
  }
  assert.equal(untrusting.chars, '127.0.0.1'.length);
  assert.ok(trusting.chars < 256 * 300, `${trusting.chars} characters held`);
});
