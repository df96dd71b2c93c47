/**
 * The pipeline's stages (src/edge/pipeline.ts) on one l2 route, with a stand-in Authenticator: a request whose
 * signature passes never reads its client address (reading it costs a system call per request, http.ts
 * Incoming.peer), while a refused one is charged to it, and a read route reports the sequence taken as the
 * request began.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Incoming, Outgoing } from '../../src/edge/http.ts';
import { Metrics } from '../../src/edge/metrics.ts';
import { processorFor, replayKindOf, type Authenticator, type Mounted } from '../../src/edge/pipeline.ts';
import { RateLimiter } from '../../src/edge/rate-limit.ts';
import type { AnyRoute } from '../../src/edge/route.ts';
import { compileRoute } from '../../src/edge/validate.ts';
import { systemClock } from '../../src/runtime/clock.ts';
import { silentLogger } from '../../src/runtime/log.ts';

const GOOD = 'good-signature';

const auth: Authenticator = {
  l2: (_m, _p, h) => (h['poly_signature'] === GOOD ? { apiKey: 'k1', address: '0xabc', keyKind: 'trading', replayKey: 'r', expiresAt: 0 } : undefined),
  builder: () => undefined,
  l2Head: () => 'trading',
  builderHead: () => false,
  presented: (h) => h['poly_api_key'] !== undefined,
  l1: async () => undefined,
};

function mounted(route: AnyRoute): Mounted {
  return { route, compiled: compileRoute(route), buckets: ['clob'], walletBuckets: [], replay: replayKindOf(route), label: route.path, metrics: new Metrics(false).route(route.method, route.path) };
}

function request(signature: string): Incoming & { peerReads: number } {
  const r = {
    peerReads: 0,
    method: 'GET',
    path: '/data/orders',
    query: '',
    headers: { poly_api_key: 'k1', poly_signature: signature },
    params: [],
    body: undefined,
    receivedAt: Date.now(),
    get peer() {
      r.peerReads++;
      return '10.0.0.7';
    },
  };
  return r;
}

test('an l2 request whose signature passes never reads its client address; a refused one is charged to it', () => {
  const limiter = new RateLimiter({ enabled: true, maxCallers: 100, buckets: { clob: { limit: 1000, windowSeconds: 10 } } });
  const charged: string[] = [];
  const take = limiter.take.bind(limiter);
  limiter.take = (caller, ...rest) => (charged.push(caller), take(caller, ...rest));
  let seq = 41;
  const route: AnyRoute = { method: 'GET', path: '/data/orders', group: 'trading', auth: 'l2', summary: '', handler: () => ({ ok: true }) };
  const who = (req: Incoming) => {
    const ip = req.peer;
    return { ip, key: `ip:${ip}` };
  };
  const p = processorFor(mounted(route), { adminToken: '', limiter, metrics: new Metrics(false), log: silentLogger, clock: systemClock, auth, journalSeq: () => seq++ }, who);

  const ok = request(GOOD);
  const a = p(ok) as Outgoing;
  assert.equal(a.status, 200);
  assert.equal(ok.peerReads, 0, 'the accepted request never read its address');
  assert.equal(a.headers?.['X-Journal-Seq'], '41', 'the sequence taken as the request began');

  const bad = request('forged');
  const b = p(bad) as Outgoing;
  assert.equal(b.status, 401);
  assert.equal(bad.peerReads, 1, 'the refusal read it once');
  assert.deepEqual(charged, ['ip:10.0.0.7'], 'and was charged to it');
});
