/**
 * The sandbox's gate and order rules (src/edge/sandbox/sandbox.ts) without HTTP: the gate leaves admin,
 * operations, catalog and data routes untouched (the same object), wraps the order-book API's routes, and
 * on the order routes answers 425 in a window without calling the handler, 500 before or after it, and
 * the handler's answer after the latency; order rules refuse a closed-only BUY, in a post-only period an
 * order without postOnly, with the seconds left, and during a window every order (one whose request passed
 * the gate as the window began); quiet() waits for the orders the engine took to be answered.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isApiError } from '../../../src/domain/errors.ts';
import { Metrics } from '../../../src/edge/pipeline/metrics.ts';
import type { AnyRoute } from '../../../src/edge/pipeline/route.ts';
import { ORDER_ROUTES, Sandbox } from '../../../src/edge/sandbox/sandbox.ts';
import { ManualClock } from '../../../src/runtime/clock.ts';
import { testConfig } from '../../../src/runtime/config.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { tempStore } from '../../fixtures/engine-harness.ts';

async function sandbox() {
  const env = tempStore('pm-sandbox-');
  const clock = new ManualClock();
  const engine = { tradeSettlement: () => ({ settings: { minedDelayMs: 0, confirmedDelayMs: 0, retryingShare: 0, retryDelayMs: 0, failedShare: 0, seed: 1 }, settling: { MATCHED: 0, RETRYING: 0, MINED: 0 } }) };
  const sb = new Sandbox({ config: testConfig({ dataDir: env.dir }), store: env.store, clock, log: silentLogger, metrics: new Metrics(false), engine });
  return { sb, clock, cleanup: env.cleanup };
}

const routeOf = (method: string, path: string, group: AnyRoute['group'], handler: AnyRoute['handler']): AnyRoute => ({ method: method as AnyRoute['method'], path, group, summary: '', handler });
const req = {} as never;

/** A handler's answer or its error (handlers may throw synchronously, as the server allows). */
async function outcome(call: () => unknown): Promise<string> {
  try {
    return `ok ${JSON.stringify(await call())}`;
  } catch (e) {
    return isApiError(e) ? `${e.spec.status} ${e.message}` : `throws ${String(e)}`;
  }
}

test('the gate: untouched groups keep their route; order routes get windows and faults around their handler', async () => {
  const { sb, clock, cleanup } = await sandbox();
  try {
    for (const g of ['admin', 'ops', 'catalog', 'data'] as const) {
      const r = routeOf('GET', `/x-${g}`, g, () => 1);
      assert.equal(sb.gate(r), r, g);
    }
    let calls = 0;
    const order = sb.gate(routeOf('POST', '/order', 'trading', () => ++calls));
    const book = sb.gate(routeOf('GET', '/book', 'clob', () => 'book'));
    assert.equal(await outcome(() => order.handler(req)), 'ok 1');
    sb.maintenance.start(10, 0);
    assert.equal(await outcome(() => order.handler(req)), '425 service not ready');
    assert.equal(await outcome(() => book.handler(req)), 'ok "book"', 'reads keep working');
    assert.equal(calls, 1, 'the handler is not called during a window');
    clock.advance(10_000);
    sb.faults.set({ error500: { share: 1, appliedShare: 1 } }, 'admin');
    assert.equal(await outcome(() => order.handler(req)), '500 internal error');
    assert.equal(calls, 2, 'applied, then answered 500');
    sb.faults.set({ error500: { share: 1, appliedShare: 0 } }, 'admin');
    assert.equal(await outcome(() => order.handler(req)), '500 internal error');
    assert.equal(calls, 2, 'not applied');
    sb.faults.set({ error503: { share: 1 } }, 'admin');
    assert.equal(await outcome(() => book.handler(req)), '503 service unavailable');
    sb.faults.set({ ackLatency: { distribution: 'fixed', ms: 120 } }, 'admin');
    const t0 = performance.now();
    assert.equal(await outcome(() => order.handler(req)), 'ok 3');
    assert.ok(performance.now() - t0 >= 115);
    assert.equal(ORDER_ROUTES.size, 6);
  } finally {
    await cleanup();
  }
});

test('order rules: closed-only BUYs (the maker\'s or the signer\'s), and orders without postOnly in a post-only period', async () => {
  const { sb, clock, cleanup } = await sandbox();
  try {
    const w = '0x' + 'C'.repeat(40);
    const d = '0x' + 'd'.repeat(40);
    const safe = '0x' + 'e'.repeat(40);
    await sb.closedOnly.set(w, true);
    assert.equal(sb.orderRefusal({ wallet: w, signer: w, side: 'BUY', postOnly: false })?.error.message, `'${w.toLowerCase()}' address in closed only mode`);
    assert.equal(sb.orderRefusal({ wallet: w, signer: w, side: 'SELL', postOnly: false }), undefined);
    assert.equal(sb.orderRefusal({ wallet: d, signer: d, side: 'BUY', postOnly: false }), undefined);
    // A Safe order of a closed-only EOA, and an EOA's order for its closed-only Safe.
    assert.equal(sb.orderRefusal({ wallet: safe, signer: w.toLowerCase(), side: 'BUY', postOnly: false })?.error.message, `'${w.toLowerCase()}' address in closed only mode`);
    await sb.closedOnly.set(safe, true);
    assert.equal(sb.orderRefusal({ wallet: safe, signer: d, side: 'BUY', postOnly: false })?.error.message, `'${safe}' address in closed only mode`);
    await sb.closedOnly.set(safe, false);
    sb.maintenance.start(5, 60);
    clock.advance(5_000 + 30_500);
    const r = sb.orderRefusal({ wallet: w, signer: w, side: 'SELL', postOnly: false });
    assert.equal(r?.retryAfterSeconds, 30);
    assert.deepEqual([r?.error.spec.status, r?.error.extra], [503, { code: 'post_only_mode', retry_after_seconds: 30 }]);
    assert.equal(sb.orderRefusal({ wallet: w, signer: w, side: 'SELL', postOnly: true }), undefined);
    assert.equal(sb.state().closedOnly.length, 1);
  } finally {
    await cleanup();
  }
});

test('a maintenance window refuses every order the checks let through (a request that passed the gate as it began), post-only ones too', async () => {
  const { sb, cleanup } = await sandbox();
  try {
    const w = '0x' + 'e'.repeat(40);
    assert.equal(sb.orderRefusal({ wallet: w, signer: w, side: 'BUY', postOnly: false }), undefined);
    sb.maintenance.start(10, 5);
    for (const postOnly of [false, true]) {
      const r = sb.orderRefusal({ wallet: w, signer: w, side: 'SELL', postOnly });
      assert.deepEqual([r?.error.spec.status, r?.error.message, r?.retryAfterSeconds], [425, 'service not ready', undefined], `postOnly ${postOnly}`);
    }
  } finally {
    await cleanup();
  }
});

test('quiet(): resolves once every order the engine took is answered, refused ones included', async () => {
  const { sb, cleanup } = await sandbox();
  try {
    await sb.quiet();
    const answers: Array<{ resolve: (v: string) => void; reject: (e: Error) => void }> = [];
    const taken = [0, 1, 2].map(() => sb.placing(new Promise<string>((resolve, reject) => answers.push({ resolve, reject }))));
    let quiet = false;
    const waiting = sb.quiet().then(() => (quiet = true));
    answers[0]!.resolve('matched');
    answers[1]!.reject(new Error('engine down'));
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(quiet, false, 'one order still in flight');
    answers[2]!.resolve('live');
    await waiting;
    assert.deepEqual(await Promise.allSettled(taken).then((s) => s.map((x) => x.status)), ['fulfilled', 'rejected', 'fulfilled'], 'placing() hands back the engine\'s own answer');
  } finally {
    await cleanup();
  }
});
