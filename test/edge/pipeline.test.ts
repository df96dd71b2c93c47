/**
 * The pipeline's own rules (src/edge/pipeline.ts) on hand-mounted routes with a stand-in Authenticator:
 * X-Journal-Seq of a read route is the sequence taken as the request began (a handler may await while
 * batches apply), write answers carry the write sequence only where one is configured (a sequencer) and never
 * on a replica, a refusal past the caps (429) is never diagnosed, and with auth.reasonInBody a refusal's
 * reason follows the body's error text. Through real HTTP and the real auth:
 * test/e2e/refusals.test.ts, test/cluster.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Incoming, Outgoing } from '../../src/edge/http.ts';
import { Metrics } from '../../src/edge/metrics.ts';
import { processorFor, replayKindOf, type Authenticator, type Mounted, type PipelineDeps } from '../../src/edge/pipeline.ts';
import { RateLimiter } from '../../src/edge/rate-limit.ts';
import { RefusalLog } from '../../src/edge/refusals/log.ts';
import { reply, type AnyRoute } from '../../src/edge/route.ts';
import { compileRoute } from '../../src/edge/validate.ts';
import { systemClock } from '../../src/runtime/clock.ts';
import { silentLogger } from '../../src/runtime/log.ts';

const refuseAll: Authenticator = {
  l2: () => undefined,
  builder: () => undefined,
  l2Head: () => 'trading',
  builderHead: () => false,
  presented: () => true,
  knowsKey: () => true,
  l1: async () => undefined,
};

function mounted(route: AnyRoute): Mounted {
  return { route, compiled: compileRoute(route), buckets: ['b'], walletBuckets: [], replay: replayKindOf(route), label: route.path, metrics: new Metrics(false).route(route.method, route.path) };
}

const request = (method: string, path: string, headers: Record<string, string> = {}): Incoming => ({ method, path, query: '', headers, params: [], peer: '10.0.0.7', body: undefined, receivedAt: Date.now() });
const who = (req: Incoming) => ({ ip: req.peer, key: `ip:${req.peer}` });
const deps = (over: Partial<PipelineDeps> = {}): PipelineDeps => ({
  adminToken: '',
  limiter: new RateLimiter({ enabled: false, maxCallers: 16, buckets: {} }),
  metrics: new Metrics(false),
  log: silentLogger,
  clock: systemClock,
  ...over,
});

test("a read route's X-Journal-Seq is the sequence as the request began, however far it moved while the handler awaited", async () => {
  let seq = 41;
  const route: AnyRoute = {
    method: 'GET',
    path: '/time',
    group: 'data',
    summary: '',
    handler: async () => {
      seq = 99;
      await new Promise((r) => setImmediate(r));
      return 1;
    },
  };
  const out = await processorFor(mounted(route), deps({ journalSeq: () => seq }), who)(request('GET', '/time'));
  assert.equal(out.headers?.['X-Journal-Seq'], '41');
});

test('write answers carry the write sequence where one is given (a sequencer), not on a single node, never on a replica', async () => {
  const route: AnyRoute = { method: 'POST', path: '/admin/thing', group: 'admin', summary: '', handler: () => 'OK' };
  const send = (d: PipelineDeps) => processorFor(mounted(route), d, who)(request('POST', '/admin/thing')) as Outgoing;
  assert.equal(send(deps({ journalSeq: () => 5, writeSeq: () => 7 })).headers?.['X-Journal-Seq'], '7');
  assert.equal(send(deps({ journalSeq: () => 5 })).headers?.['X-Journal-Seq'], undefined);
  const onReplica = send(deps({ journalSeq: () => 5, writeSeq: () => 7, replica: { sequencerUrl: () => 'http://s' } }));
  assert.equal(onReplica.status, 421);
  assert.equal(onReplica.headers?.['X-Journal-Seq'], undefined);
});

test('a refusal is explained while the address is within its caps; past them it is a 429, not diagnosed', () => {
  let diagnosed = 0;
  const refusals = {
    auth: {
      l2: () => (diagnosed++, { class: 'auth_hmac' as const, text: 'why' }),
      l1: async () => ({ class: 'auth_l1_signature' as const, text: 'why' }),
      walletOf: () => undefined,
    },
    log: new RefusalLog(() => true),
    count: () => undefined,
  };
  const limiter = new RateLimiter({ enabled: true, maxCallers: 16, buckets: { b: { limit: 1, windowSeconds: 60 } } });
  const route: AnyRoute = { method: 'GET', path: '/data/orders', group: 'trading', auth: 'l2', summary: '', handler: () => 1 };
  const p = processorFor(mounted(route), deps({ limiter, auth: refuseAll, refusals }), who);
  const first = p(request('GET', '/data/orders', { poly_api_key: 'k' })) as Outgoing;
  assert.deepEqual([first.status, first.headers?.['X-Refusal-Reason']], [401, 'why']);
  const second = p(request('GET', '/data/orders', { poly_api_key: 'k' })) as Outgoing;
  assert.deepEqual([second.status, second.headers?.['X-Refusal-Reason']], [429, undefined]);
  assert.equal(diagnosed, 1);
});

test('auth.reasonInBody: the reason also follows the error text of the body, whose status and other fields stay; kept with the client address', () => {
  const kept: Array<{ wallet: string; peer?: string; reason: string }> = [];
  const refusals = (inBody: boolean) => ({
    auth: {
      l2: () => ({ class: 'auth_timestamp' as const, text: 'L2 timestamp 1 is 99 s behind this server' }),
      l1: async () => ({ class: 'auth_l1_signature' as const, text: 'why' }),
      walletOf: () => '0x' + 'ab'.repeat(20),
    },
    log: { record: (wallet: string, e: { peer?: string; reason: string }) => kept.push({ wallet, peer: e.peer, reason: e.reason }) },
    count: () => undefined,
    inBody,
  });
  const route: AnyRoute = { method: 'GET', path: '/data/orders', group: 'trading', auth: 'l2', summary: '', handler: () => 1 };
  const send = (inBody: boolean) => processorFor(mounted(route), deps({ auth: refuseAll, refusals: refusals(inBody) }), who)(request('GET', '/data/orders', { poly_api_key: 'k' })) as Outgoing;
  const plain = send(false);
  assert.deepEqual([plain.status, plain.body, plain.headers?.['X-Refusal-Reason']], [401, '{"error":"Unauthorized/Invalid api key"}', 'L2 timestamp 1 is 99 s behind this server']);
  const told = send(true);
  assert.deepEqual(
    [told.status, JSON.parse(told.body), told.headers?.['X-Refusal-Reason']],
    [401, { error: 'Unauthorized/Invalid api key (reason: L2 timestamp 1 is 99 s behind this server)' }, 'L2 timestamp 1 is 99 s behind this server'],
  );
  assert.deepEqual(kept[0], { wallet: '0x' + 'ab'.repeat(20), peer: '10.0.0.7', reason: 'L2 timestamp 1 is 99 s behind this server' });
  // A body with other fields keeps them, in their order; a body that is not an error object is left alone.
  const posted: AnyRoute = {
    method: 'POST',
    path: '/thing',
    group: 'trading',
    summary: '',
    handler: () => reply({ status: 503, body: { error: 'post-only mode', code: 'post_only_mode', retry_after_seconds: 3 }, refusal: { class: 'order_rule', text: 'a post-only period' } }),
  };
  const listed: AnyRoute = { ...posted, path: '/things', handler: () => reply({ status: 200, body: [{ errorMsg: 'x' }], refusal: { class: 'order_rule', text: 'order 0: a' } }) };
  const run = (r: AnyRoute) => processorFor(mounted(r), deps({ refusals: refusals(true) }), who)(request('POST', r.path)) as Outgoing;
  assert.equal(run(posted).body, '{"error":"post-only mode (reason: a post-only period)","code":"post_only_mode","retry_after_seconds":3}');
  assert.equal(run(listed).body, '[{"errorMsg":"x"}]');
});

test("a deposed sequencer answers writes 503 with Retry-After and still serves reads; a replica's 421 names the sequencer as it is now", () => {
  let why: string | undefined;
  const write: AnyRoute = { method: 'POST', path: '/admin/thing', group: 'admin', summary: '', handler: () => 'OK' };
  const read: AnyRoute = { method: 'GET', path: '/time', group: 'data', summary: '', handler: () => 1 };
  const d = deps({ journalSeq: () => 5, writeSeq: () => 7, deposed: () => why });
  const send = (r: AnyRoute, p: string) => processorFor(mounted(r), d, who)(request(r.method, p)) as Outgoing;
  assert.equal(send(write, '/admin/thing').status, 200);
  why = 'another node holds the lease';
  const refused = send(write, '/admin/thing');
  assert.deepEqual([refused.status, refused.headers?.['Retry-After'], JSON.parse(refused.body)], [503, '1', { error: 'this node is no longer the sequencer: retry' }]);
  assert.equal(send(read, '/time').status, 200);
  let holder = 'http://a.test';
  const onReplica = processorFor(mounted(write), deps({ replica: { sequencerUrl: () => holder } }), who);
  assert.match((onReplica(request('POST', '/admin/thing')) as Outgoing).body, /http:\/\/a\.test/);
  holder = 'http://b.test';
  assert.match((onReplica(request('POST', '/admin/thing')) as Outgoing).body, /http:\/\/b\.test/);
});
