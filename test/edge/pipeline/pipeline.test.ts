/**
 * The pipeline's own rules (src/edge/pipeline/pipeline.ts) on hand-mounted routes with a stand-in Authenticator:
 * X-Journal-Seq of a read route is the sequence taken as the request began (a handler may await while
 * batches apply), write answers carry the write sequence only where one is configured (a sequencer) and never
 * on a replica, a refusal past the caps (429) is never diagnosed, and with auth.reasonInBody a refusal's
 * reason follows the body's error text. Through real HTTP and the real auth:
 * test/e2e/refusals.test.ts, test/node/cluster.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { Incoming } from '../../../src/edge/http/http.ts';
import type { Outgoing } from '../../../src/edge/http/answer.ts';
import { Metrics } from '../../../src/edge/pipeline/metrics.ts';
import { HEAD_DECIDES_ABOVE, processorFor } from '../../../src/edge/pipeline/pipeline.ts';
import { replayKindOf, type Mounted } from '../../../src/edge/pipeline/mounted.ts';
import { type Authenticator, type PipelineDeps } from '../../../src/edge/pipeline/ports.ts';
import { HmacStrikes } from '../../../src/edge/limits/hmac-strikes.ts';
import { RateLimiter } from '../../../src/edge/limits/rate-limit.ts';
import { BodyBudget } from '../../../src/edge/limits/rate-limit-bytes.ts';
import { RefusalLog } from '../../../src/edge/refusals/log.ts';
import { reply, type AnyRoute } from '../../../src/edge/pipeline/route.ts';
import { compileRoute } from '../../../src/edge/pipeline/validate.ts';
import { ManualClock, systemClock } from '../../../src/runtime/clock.ts';
import { silentLogger } from '../../../src/runtime/log.ts';

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

// ---- what the head decides before the body (issue 39, finding 2) ------------------------------------------

/** A stand-in whose headers pass with passphrase `right` and whose HMAC passes with signature `good`. */
const byHeaders: Authenticator = {
  l2: (_m, _p, h) => (h.poly_passphrase === 'right' && h.poly_signature === 'good' ? { apiKey: h.poly_api_key!, address: '0xw', keyKind: 'trading', replayKey: `${h.poly_api_key}|${Math.random()}`, expiresAt: 2e9 } : undefined),
  builder: () => undefined,
  l2Head: (h) => (h.poly_passphrase === 'right' ? 'trading' : undefined),
  builderHead: () => false,
  presented: (h) => h.poly_api_key !== undefined,
  knowsKey: () => true,
  provable: (h) => h.poly_api_key === 'k',
  apiKeyOf: (h) => h.poly_api_key,
  l1: async () => undefined,
};

const order: AnyRoute = { method: 'POST', path: '/order', group: 'trading', auth: 'l2', summary: '', body: Type.Unknown(), handler: () => 'placed' };
const withBody = (req: Incoming, body: string): Incoming => ({ ...req, body: Buffer.from(body), headers: { ...req.headers, 'content-length': String(body.length) } });

test('body bytes are charged before the body is read: to the client address on every route, and to the key the headers name on a signed one; past either, 429', () => {
  const clock = new ManualClock(1_000_000);
  const bodies = new BodyBudget({ enabled: true, maxCallers: 64, perAddress: { limit: 3000, windowSeconds: 10 }, perKey: { limit: 2000, windowSeconds: 10 } });
  const p = processorFor(mounted(order), deps({ clock, auth: byHeaders, bodies }), who);
  const signed = (key: string, peer = '10.0.0.7') => ({ ...request('POST', '/order', { poly_api_key: key, poly_passphrase: 'right', poly_signature: 'good' }), peer });
  assert.equal(p.beforeBody!(signed('k1'), 1500), undefined);
  // The key has 500 left: 1,500 more are refused before a byte is read, with the binding bucket's headers.
  const refused = p.beforeBody!(signed('k1'), 1500)!;
  assert.equal(refused.status, 429);
  assert.deepEqual([refused.headers?.['RateLimit-Limit'], refused.headers?.['RateLimit-Remaining']], ['2000', '500']);
  // Another key from the same address has its own bytes, until the address's are spent.
  assert.equal(p.beforeBody!(signed('k2'), 1500), undefined);
  assert.equal(p.beforeBody!(signed('k3'), 1500)!.headers?.['RateLimit-Limit'], '3000');
  // Another address is not touched; a public route charges the address alone.
  assert.equal(p.beforeBody!(signed('k4', '10.0.0.8'), 1500), undefined);
  const open: AnyRoute = { method: 'POST', path: '/books', group: 'clob', summary: '', body: Type.Unknown(), handler: () => [] };
  const q = processorFor(mounted(open), deps({ clock, auth: byHeaders, bodies }), who);
  assert.equal(q.beforeBody!({ ...request('POST', '/books'), peer: '10.0.0.8' }, 1400), undefined);
  assert.equal(q.beforeBody!({ ...request('POST', '/books'), peer: '10.0.0.8' }, 200)!.status, 429);
  // No body, no charge; and the window passes.
  assert.equal(q.beforeBody!({ ...request('POST', '/books'), peer: '10.0.0.8' }, 0), undefined);
  clock.advance(10_000);
  assert.equal(p.beforeBody!(signed('k1'), 2000), undefined);
});

test('a key that fails its HMAC 5 times within 10 s is refused on its headers before a large body, for 10 s; failures behind a wrong passphrase do not count', async () => {
  const clock = new ManualClock(1_000_000);
  const strikes = new HmacStrikes();
  const log = new RefusalLog(() => true);
  const refusals = { auth: { l2: () => ({ class: 'auth_hmac' as const, text: 'why' }), l1: async () => ({ class: 'auth_l1_signature' as const, text: 'why' }), walletOf: () => '0xw' }, log, count: () => undefined };
  const p = processorFor(mounted(order), deps({ clock, auth: byHeaders, strikes, refusals }), who);
  const h = (passphrase: string, signature: string) => request('POST', '/order', { poly_api_key: 'k', poly_passphrase: passphrase, poly_signature: signature });
  const LARGE = HEAD_DECIDES_ABOVE + 1;
  // Wrong passphrases: refused before a large body; a small one is read and judged whole. Never a strike.
  for (let i = 0; i < 10; i++) {
    assert.equal(p.beforeBody!(h('wrong', 'bad'), LARGE)!.status, 401);
    assert.equal(p.beforeBody!(h('wrong', 'bad'), 100), undefined);
    assert.equal((await p(withBody(h('wrong', 'bad'), '{}'))).status, 401);
  }
  assert.equal(p.beforeBody!(h('right', 'bad'), LARGE), undefined);
  // Right passphrase, wrong HMAC: read, refused, struck.
  for (let i = 0; i < 5; i++) assert.equal((await p(withBody(h('right', 'bad'), '{}'))).status, 401);
  const benched = p.beforeBody!(h('right', 'good'), LARGE)!;
  assert.equal(benched.status, 401, 'even a good signature is not read while the key is benched');
  assert.match(benched.headers!['X-Refusal-Reason']!, /^API key k is refused on its headers, before its body, for 10 s more: 5 of its requests failed their credential checks within 10 s/);
  assert.equal(log.list('0xw')[0]!.class, 'auth_credentials');
  // A small body is still read and judged: a bot that fixed its signing is not refused for it.
  assert.equal(p.beforeBody!(h('right', 'good'), 100), undefined);
  assert.equal((await p(withBody(h('right', 'good'), '{}'))).status, 200);
  clock.advance(9_000);
  assert.match(p.beforeBody!(h('right', 'good'), LARGE)!.headers!['X-Refusal-Reason']!, /for 1 s more/);
  clock.advance(1_001);
  assert.equal(p.beforeBody!(h('right', 'good'), LARGE), undefined);
});

test('admin routes refuse a missing or wrong token before the body; with it, the body is not charged', () => {
  const bodies = new BodyBudget({ enabled: true, maxCallers: 64, perAddress: { limit: 100, windowSeconds: 10 }, perKey: { limit: 100, windowSeconds: 10 } });
  const route: AnyRoute = { method: 'POST', path: '/admin/events', group: 'admin', auth: 'admin', summary: '', body: Type.Unknown(), handler: () => 'OK' };
  const p = processorFor(mounted(route), deps({ adminToken: 'tok', bodies }), who);
  assert.equal(p.beforeBody!(request('POST', '/admin/events'), 1000)!.status, 401);
  assert.equal(p.beforeBody!(request('POST', '/admin/events', { authorization: 'Bearer nope' }), 1000)!.status, 401);
  assert.equal(p.beforeBody!(request('POST', '/admin/events', { authorization: 'Bearer tok' }), 1_000_000), undefined);
  const off = processorFor(mounted(route), deps({ adminToken: '' }), who);
  assert.equal(off.beforeBody!(request('POST', '/admin/events', { authorization: 'Bearer tok' }), 10)!.status, 404);
});

test("the header says what the caller may know; the key's wallet keeps the full reason (Refusal.owner)", () => {
  const log = new RefusalLog(() => true);
  const refusals = {
    auth: {
      l2: () => ({ class: 'auth_credentials' as const, text: 'do not check together', owner: { class: 'auth_passphrase' as const, text: 'the passphrase is not the key\'s' } }),
      l1: async () => ({ class: 'auth_l1_signature' as const, text: 'why' }),
      walletOf: () => '0xw',
    },
    log,
    count: () => undefined,
  };
  const route: AnyRoute = { method: 'GET', path: '/data/orders', group: 'trading', auth: 'l2', summary: '', handler: () => 1 };
  const out = processorFor(mounted(route), deps({ auth: refuseAll, refusals }), who)(request('GET', '/data/orders', { poly_api_key: 'k' })) as Outgoing;
  assert.equal(out.headers?.['X-Refusal-Reason'], 'do not check together');
  assert.deepEqual([log.list('0xw')[0]!.class, log.list('0xw')[0]!.reason], ['auth_passphrase', "the passphrase is not the key's"]);
});
