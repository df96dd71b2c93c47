/**
 * The edge server's `dispatch` (src/edge/server.ts): a request that did not come off a socket (what a gateway
 * forwards, edge/forward.ts) reaches the route uWS would route it to, with its path parameters, through the
 * same processor; no route is a 404; and it counts as in flight, so a drain waits for it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { Incoming } from '../../src/edge/http.ts';
import type { AnyRoute } from '../../src/edge/route.ts';
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
