/**
 * src/edge/pipeline/route.ts: bindRoutes gives a table of RouteSpecs its dependencies once. Each bound route keeps
 * every field of its spec (in the spec's key order, which the OpenAPI document and the edge read), its
 * handler and guard receive exactly the deps given, and the specs themselves are left as they were, so one
 * table binds to several deps objects.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { apiError } from '../../../src/domain/errors.ts';
import { bindRoutes, isReply, reply, routeSpec, type RequestOf } from '../../../src/edge/pipeline/route.ts';
import { routeRequest } from '../../fixtures/route-request.ts';

interface Deps {
  readonly greeting: string;
  readonly blocked: ReadonlySet<string>;
}
const Params = Type.Object({ name: Type.String() });

function greet(d: Pick<Deps, 'greeting'>, req: RequestOf<undefined, undefined, typeof Params>) {
  return reply({ raw: `${d.greeting}, ${req.params.name}` });
}
const TABLE = [
  routeSpec({
    method: 'GET',
    path: '/hello/:name',
    group: 'ops',
    summary: 'greets',
    params: Params,
    guard: (d: Deps, caller) => (d.blocked.has(caller.ip) ? apiError('PM_ERR_DATA_IP') : undefined),
    handler: greet,
  }),
  routeSpec({ method: 'GET', path: '/plain', group: 'ops', summary: 'no deps', handler: () => 'plain' }),
];

test('bound routes keep their fields in order and call the handler and guard with the deps given', async () => {
  const [hello, plain] = bindRoutes<Deps>({ greeting: 'hi', blocked: new Set(['10.0.0.1']) }, TABLE);
  assert.deepEqual(Object.keys(hello), Object.keys(TABLE[0]));
  assert.equal(hello.params, Params);
  const r = await hello.handler(routeRequest({ params: { name: 'ada' } }));
  assert.ok(isReply(r));
  assert.equal(r.raw, 'hi, ada');
  assert.equal(hello.guard?.({ ip: '10.0.0.1' })?.spec.code, 'PM_ERR_DATA_IP');
  assert.equal(hello.guard?.({ ip: '10.0.0.2' }), undefined);
  assert.equal(plain.guard, undefined, 'no guard where the spec has none');
  assert.equal(await plain.handler(routeRequest({})), 'plain');
});

test('one table binds to several deps; the specs are not changed', async () => {
  const a = bindRoutes<Deps>({ greeting: 'hi', blocked: new Set() }, TABLE);
  const b = bindRoutes<Deps>({ greeting: 'bye', blocked: new Set() }, TABLE);
  const say = async (routes: typeof a) => {
    const r = await routes[0].handler(routeRequest({ params: { name: 'x' } }));
    return isReply(r) ? r.raw : undefined;
  };
  assert.deepEqual([await say(a), await say(b)], ['hi, x', 'bye, x']);
  assert.equal(TABLE[0].handler, greet, 'the spec still names its module-level handler');
});
