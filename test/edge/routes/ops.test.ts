/**
 * The ops module (src/edge/routes/ops.ts) through the real app: health (GET / and GET /ok), time, the OpenAPI document and
 * the metrics each answer in their schema and charge their buckets; the one error an ops route gives
 * (health before the service is ready) is in the ops form. Test harness: test/fixtures/route-contract.ts.
 * The handlers alone, on hand-built dependencies: health follows `state.ready`, time is the clock's, and
 * the document is serialized once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isApiError } from '../../../src/domain/errors.ts';
import { isReply, type AnyRoute } from '../../../src/edge/pipeline/route.ts';
import { health, openapiDocument, opsDeps, opsRoutes, serverTime } from '../../../src/edge/routes/ops.ts';
import { assertAnswers, assertGroupError, assertServes, startRouteApp, type RouteApp, type RouteCase } from '../../fixtures/route-contract.ts';

let h: RouteApp;
let routes: AnyRoute[];
before(async () => {
  h = await startRouteApp({ demo: false });
  routes = opsRoutes(h.app.ctx);
});
after(() => h.close());

const CASES: RouteCase[] = [
  {
    route: 'GET /',
    group: 'ops',
    ok: () => h.send('GET', '/'),
    bad: {
      // The only error health gives: the service is not ready (starting or stopping).
      send: async () => {
        h.app.ctx.state.ready = false;
        try {
          return await h.send('GET', '/');
        } finally {
          h.app.ctx.state.ready = true;
        }
      },
      status: 503,
      error: 'service unavailable',
    },
  },
  {
    route: 'GET /ok',
    group: 'ops',
    ok: () => h.send('GET', '/ok'),
    bad: {
      send: async () => {
        h.app.ctx.state.ready = false;
        try {
          return await h.send('GET', '/ok');
        } finally {
          h.app.ctx.state.ready = true;
        }
      },
      status: 503,
      error: 'service unavailable',
    },
  },
  { route: 'GET /time', group: 'ops', ok: () => h.send('GET', '/time') },
  { route: 'GET /openapi.json', group: 'ops', ok: () => h.send('GET', '/openapi.json') },
  { route: 'GET /metrics', group: 'ops', ok: () => h.send('GET', '/metrics') },
];

test('the module serves exactly its five routes, in the ops group', () => {
  assertServes(routes, CASES);
});

for (const c of CASES) {
  test(`${c.route} answers in its schema and charges its buckets`, async () => {
    await assertAnswers(h, routes, c);
  });
}

for (const c of CASES.filter((x) => x.bad)) {
  test(`${c.route}: its error is in the ops form`, async () => {
    const bad = c.bad!;
    assertGroupError(c.group, await bad.send(), bad.status, bad.error);
  });
}

test('the handlers answer from their own dependencies, without the app', () => {
  const state = { ready: false };
  assert.throws(() => health({ state }), (e) => isApiError(e) && e.spec.code === 'PM_ERR_UNAVAILABLE' && e.spec.status === 503);
  state.ready = true;
  assert.equal(health({ state }), 'OK');
  assert.equal(serverTime({ clock: { now: () => 1_700_000_000_999 } }), 1_700_000_000);

  let built = 0;
  const deps = opsDeps({ state, clock: { now: () => 0 }, metrics: h.app.ctx.metrics, openapi: () => ({ openapi: '3.1.0', n: ++built }) });
  const first = openapiDocument(deps);
  const second = openapiDocument(deps);
  assert.ok(isReply(first));
  assert.equal(first.raw, '{"openapi":"3.1.0","n":1}');
  assert.equal(second.raw, first.raw, 'serialized once, not per request');
  assert.equal(built, 1);
});
