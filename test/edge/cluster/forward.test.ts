/**
 * What a gateway decides and what it forwards (src/edge/cluster/forward.ts, the gateway rules of pipeline.ts), on
 * hand-mounted routes with a stand-in Authenticator and a stand-in sequencer: a route a replica serves is
 * served here; any other is checked here as the sequencer would (signed headers before the body, the HMAC,
 * caps, schema) and forwarded only when it passes, with gatewayHints where the route has them; a key this
 * node does not hold is refused once the node has caught up with the stream, and forwarded only when it
 * cannot catch up; the answer is the sequencer's,
 * and its refusal is sent and kept here; no sequencer answers 503 with Retry-After. On the sequencer's side a
 * forwarded request runs its route's processor with the gateway's client address and hints, and its refusal
 * travels back. Over real NATS and HTTP: test/node/cluster.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { ForwardedAnswer, ForwardedRequest } from '../../../src/domain/forwarded.ts';
import { forwardedHandler, gateway } from '../../../src/edge/cluster/forward.ts';
import type { Incoming } from '../../../src/edge/http/http.ts';
import type { Outgoing } from '../../../src/edge/http/answer.ts';
import { Metrics } from '../../../src/edge/pipeline/metrics.ts';
import { processorFor } from '../../../src/edge/pipeline/pipeline.ts';
import { replayKindOf, type Mounted } from '../../../src/edge/pipeline/mounted.ts';
import { type Authenticator, type PipelineDeps } from '../../../src/edge/pipeline/ports.ts';
import { RateLimiter } from '../../../src/edge/limits/rate-limit.ts';
import { BodyBudget } from '../../../src/edge/limits/rate-limit-bytes.ts';
import { RefusalLog } from '../../../src/edge/refusals/log.ts';
import { reply, type AnyRoute, type RouteRequest } from '../../../src/edge/pipeline/route.ts';
import { compileRoute } from '../../../src/edge/pipeline/validate.ts';
import { systemClock } from '../../../src/runtime/clock.ts';
import { silentLogger } from '../../../src/runtime/log.ts';

const mounted = (route: AnyRoute): Mounted => ({ route, compiled: compileRoute(route), buckets: ['b'], walletBuckets: [], replay: replayKindOf(route), label: route.path, metrics: new Metrics(false).route(route.method, route.path) });
const request = (method: string, path: string, headers: Record<string, string> = {}, body?: string): Incoming => ({
  method,
  path,
  query: '',
  headers,
  params: [],
  peer: '10.0.0.7',
  body: body === undefined ? undefined : Buffer.from(body),
  receivedAt: Date.now(),
});
const who = (req: Incoming) => ({ ip: req.peer, key: `ip:${req.peer}` });

/** Signs what carries `poly_api_key: good`; holds the keys `good` and `forged`. */
const auth: Authenticator = {
  l2: (_m, _p, h) => (h.poly_api_key === 'good' ? { address: '0xabc', apiKey: 'good', keyKind: 'trading', replayKey: 'r', expiresAt: 1e12 } : undefined),
  builder: () => undefined,
  l2Head: (h) => (h.poly_api_key === 'good' || h.poly_api_key === 'forged' ? 'trading' : undefined),
  builderHead: () => false,
  presented: (h) => h.poly_api_key !== undefined,
  knowsKey: (h) => h.poly_api_key === 'good' || h.poly_api_key === 'forged',
  l1: async () => undefined,
};

function fakeSequencer(answer: (r: ForwardedRequest) => ForwardedAnswer | undefined = () => ({ status: 200, headers: { 'X-Journal-Seq': '9' }, body: '{"ok":true}' }), caughtUp = true) {
  const sent: ForwardedRequest[] = [];
  const asked = { caughtUp: 0 };
  return { sent, asked, gw: gateway(async (r) => (sent.push(r), answer(r)), (r) => (r.body?.length ?? 0) <= 100, async () => (asked.caughtUp++, caughtUp)) };
}

const deps = (over: Partial<PipelineDeps>): PipelineDeps => ({
  adminToken: '',
  limiter: new RateLimiter({ enabled: false, maxCallers: 16, buckets: {} }),
  metrics: new Metrics(false),
  log: silentLogger,
  clock: systemClock,
  auth,
  replica: { sequencerUrl: () => 'http://s' },
  journalSeq: () => 3,
  ...over,
});

/** POST /order with a small body schema and the given handler (and hints). */
const orderRoute = (handler: AnyRoute['handler'], gatewayHints?: AnyRoute['gatewayHints']): AnyRoute => ({
  method: 'POST',
  path: '/order',
  group: 'trading',
  auth: 'l2',
  summary: '',
  body: Type.Object({ n: Type.Integer() }),
  handler,
  ...(gatewayHints === undefined ? {} : { gatewayHints }),
});
const hinted = orderRoute(
  () => {
    throw new Error('a gateway never runs the handler');
  },
  async (req: RouteRequest) => ({ saw: (req.body as { n: number }).n, by: req.caller.apiKey }),
);
const raw: AnyRoute = { method: 'DELETE', path: '/cancel-all', group: 'trading', auth: 'l2', summary: '', handler: () => 'local' };
const readRoute: AnyRoute = { method: 'GET', path: '/book', group: 'clob', summary: '', handler: () => 'read here' };

test('a gateway serves reads itself and forwards every other route; the answer is the sequencer\'s, unchanged', async () => {
  const { sent, gw } = fakeSequencer();
  const d = deps({ gateway: gw });
  const read = (await processorFor(mounted(readRoute), d, who)(request('GET', '/book'))) as Outgoing;
  assert.deepEqual([read.status, read.body, read.headers?.['X-Journal-Seq']], [200, '"read here"', '3']);
  const out = await processorFor(mounted(raw), d, who)(request('DELETE', '/cancel-all', { poly_api_key: 'good', 'x-forwarded-for': '1.2.3.4' }));
  assert.deepEqual(out, { status: 200, headers: { 'X-Journal-Seq': '9' }, body: '{"ok":true}' });
  assert.equal(sent.length, 1);
  assert.equal(sent[0]!.ip, '10.0.0.7');
  assert.equal(sent[0]!.headers['x-forwarded-for'], undefined, 'the client address travels as ip, proxy headers stay here');
  assert.equal(sent[0]!.hints, undefined);
});

test('unsigned, badly signed and made-up-key requests are refused at the gateway, before the body where the headers decide: the sequencer is sent none of them', async () => {
  const { sent, asked, gw } = fakeSequencer();
  const p = processorFor(mounted(raw), deps({ gateway: gw }), who);
  // No credentials: refused on the headers, before a byte of body is read.
  const early = p.beforeBody?.(request('DELETE', '/cancel-all', {}), 90);
  assert.equal(early?.status, 401);
  assert.equal((await p(request('DELETE', '/cancel-all', {}, 'x'.repeat(90)))).status, 401);
  // A held key with a bad HMAC: refused once the body is in.
  assert.equal((await p(request('DELETE', '/cancel-all', { poly_api_key: 'forged' }, 'x'.repeat(90)))).status, 401);
  // A key nobody issued: the gateway caught up with the stream and still does not hold it, so it does not exist.
  const madeUp = request('DELETE', '/cancel-all', { poly_api_key: 'made-up' }, 'x'.repeat(90));
  assert.equal(p.beforeBody?.(madeUp, 90), undefined, 'a key not held here waits for the body (the stream may bring it)');
  assert.equal((await p(madeUp)).status, 401);
  assert.equal(asked.caughtUp, 1);
  assert.equal(sent.length, 0, 'nothing reached the sequencer');
  // An admin route: the bearer token is checked here too.
  const admin: AnyRoute = { method: 'POST', path: '/admin/x', group: 'admin', auth: 'admin', summary: '', handler: () => 'local' };
  const ap = processorFor(mounted(admin), deps({ gateway: gw, adminToken: 'tok' }), who);
  assert.equal((await ap(request('POST', '/admin/x', { authorization: 'Bearer nope' }))).status, 401);
  assert.equal((await ap(request('POST', '/admin/x', { authorization: 'Bearer tok' }))).status, 200);
  assert.equal(sent.length, 1);
});

test("a key the gateway does not hold yet: its body is read while the gateway catches up, charged to the client address (429 past it, the body unread)", async () => {
  const { sent, gw } = fakeSequencer();
  const bodies = new BodyBudget({ enabled: true, maxCallers: 64, perAddress: { limit: 150, windowSeconds: 10 }, perKey: { limit: 1000, windowSeconds: 10 } });
  const p = processorFor(mounted(raw), deps({ gateway: gw, bodies }), who);
  const madeUp = () => request('DELETE', '/cancel-all', { poly_api_key: 'made-up' }, 'x'.repeat(90));
  assert.equal(p.beforeBody?.(madeUp(), 90), undefined, 'the first 90 bytes fit the address\'s 150');
  assert.equal(p.beforeBody?.(madeUp(), 90)?.status, 429, 'the next 90 do not: a made-up key is no way around the byte budget');
  assert.equal(sent.length, 0);
});

test('a route with gatewayHints: checked here (HMAC of a held key, schema), forwarded with the hints; a key not held here is forwarded whole only by a gateway that cannot catch up', async () => {
  const { sent, gw } = fakeSequencer();
  const p = processorFor(mounted(hinted), deps({ gateway: gw }), who);
  assert.equal(p.beforeBody?.(request('POST', '/order', { poly_api_key: 'forged' }), 7), undefined, 'a held key: the HMAC waits for the body');
  const ok = await p(request('POST', '/order', { poly_api_key: 'good' }, '{"n":7}'));
  assert.equal(ok.status, 200);
  assert.deepEqual(sent.at(-1)!.hints, { saw: 7, by: 'good' });
  // A held key whose HMAC fails is refused here, as the sequencer would.
  const forged = await p(request('POST', '/order', { poly_api_key: 'forged' }, '{"n":7}'));
  assert.equal(forged.status, 401);
  // The schema is checked here.
  const bad = await p(request('POST', '/order', { poly_api_key: 'good' }, '{"n":"x"}'));
  assert.equal(bad.status, 400);
  assert.equal(sent.length, 1);
  // A key this gateway does not hold and cannot catch up on (the stream lags): no refusal before or after the
  // body; forwarded as it came, the sequencer decides.
  const lagging = fakeSequencer(undefined, false);
  const lp = processorFor(mounted(hinted), deps({ gateway: lagging.gw }), who);
  const fresh = request('POST', '/order', { poly_api_key: 'fresh' }, '{"n":1}');
  assert.equal(lp.beforeBody?.(fresh, 7), undefined);
  assert.equal((await lp(fresh)).status, 200);
  assert.equal(lagging.sent.length, 1);
  assert.equal(lagging.sent[0]!.hints, undefined);
});

test("the sequencer's refusal is sent and kept by the gateway; a request too heavy to travel is 413; no sequencer answers 503 with Retry-After", async () => {
  const kept: string[] = [];
  const refusals = { log: new RefusalLog(() => true), count: (c: string) => kept.push(c), auth: { l2: () => ({ class: 'auth_hmac' as const, text: '' }), l1: async () => ({ class: 'auth_l1_signature' as const, text: '' }), walletOf: () => '0xabc' } };
  const { gw } = fakeSequencer(() => ({ status: 400, body: '{"error":"tick"}', refusal: { class: 'order_tick', text: 'not on the tick' } }));
  const out = await processorFor(mounted(hinted), deps({ gateway: gw, refusals }), who)(request('POST', '/order', { poly_api_key: 'good' }, '{"n":1}'));
  assert.equal(out.status, 400);
  assert.equal(out.headers?.['X-Refusal-Reason'], 'not on the tick');
  assert.deepEqual(kept, ['order_tick']);
  assert.equal(refusals.log.list('0xabc')[0]?.reason, 'not on the tick');
  // Heavier than the transport carries: 413 here, nothing sent.
  const big = fakeSequencer();
  const heavy = await processorFor(mounted(raw), deps({ gateway: big.gw }), who)(request('DELETE', '/cancel-all', { poly_api_key: 'good' }, 'x'.repeat(101)));
  assert.equal(heavy.status, 413);
  assert.equal(big.sent.length, 0);
  const down = fakeSequencer(() => undefined);
  const none = await processorFor(mounted(raw), deps({ gateway: down.gw }), who)(request('DELETE', '/cancel-all', { poly_api_key: 'good' }));
  assert.equal(none.status, 503);
  assert.equal(none.headers?.['Retry-After'], '1');
  assert.match(none.body, /no sequencer answered/);
});

test("the sequencer runs a forwarded request through its route's processor, with the gateway's client address and hints; the refusal travels back", async () => {
  let saw: { ip: string; hints: unknown; key: string | undefined } | undefined;
  const route = orderRoute((req: RouteRequest) => {
    saw = { ip: req.caller.ip, hints: req.hints, key: req.caller.apiKey };
    return reply({ status: 400, body: { error: 'no' }, refusal: { class: 'order_tick', text: 'why' } });
  });
  const counted: string[] = [];
  const refusals = { log: new RefusalLog(() => true), count: (c: string) => counted.push(c) };
  const p = processorFor(mounted(route), deps({ replica: undefined, writeSeq: () => 12, refusals }), who);
  const handle = forwardedHandler((req) => p(req));
  const [a] = await handle([{ method: 'POST', path: '/order', query: '', headers: { poly_api_key: 'good' }, body: Buffer.from('{"n":2}'), ip: '198.51.100.4', receivedAt: Date.now(), hints: [1] }]);
  assert.deepEqual(saw, { ip: '198.51.100.4', hints: [1], key: 'good' });
  assert.deepEqual(a, { status: 400, headers: { 'X-Journal-Seq': '12' }, body: '{"error":"no"}', refusal: { class: 'order_tick', text: 'why' } });
  assert.deepEqual(counted, [], 'the gateway that answers counts and keeps it, not the sequencer');
  const [failed] = await forwardedHandler(() => {
    throw new Error('boom');
  })([{ method: 'GET', path: '/x', query: '', headers: {}, body: undefined, ip: '', receivedAt: 0 }]);
  assert.equal(failed!.status, 500);
});
