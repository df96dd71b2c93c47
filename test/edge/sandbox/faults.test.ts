/**
 * Fault injection (src/edge/sandbox/faults.ts) without HTTP: no scenario injects nothing; each fault's
 * share holds over many requests; draws depend only on the seed and the request number (set() starts the
 * count again, another seed draws otherwise); latency draws stay within their distribution; 503 wins over
 * 500, and an unapplied 500 gets no latency; scenarios are validated, files read and refused clearly.
 * Stream faults: sockets are numbered per channel, each fault's share holds over many sockets and only on
 * its channels, the draws depend only on the seed, the channel and the socket number, repeats of a stall
 * only when asked, and each fault that happens is counted; set() tells the listeners.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { FaultInjector, readScenarioFile, scenarioProblems } from '../../../src/edge/sandbox/faults.ts';
import type { FaultScenario } from '../../../src/edge/schemas/sandbox.ts';
import { ManualClock } from '../../../src/runtime/clock.ts';
import { silentLogger } from '../../../src/runtime/log.ts';

const injector = () => new FaultInjector(silentLogger, new ManualClock(), new Registry());
const draw = (f: FaultInjector, n: number) => Array.from({ length: n }, () => f.forOrder('POST /order'));

test('without a scenario nothing is injected and nothing is counted', () => {
  const f = injector();
  assert.equal(f.active, false);
  for (const d of draw(f, 100)) assert.deepEqual(d, { error503: false, error500: undefined, latencyMs: 0 });
  assert.equal(f.forOther('GET /book'), false);
  assert.equal(f.state().requests, 0);
});

test('shares hold over many requests; the same seed replays, another seed differs', () => {
  const f = injector();
  const scenario: FaultScenario = { seed: 5, error500: { share: 0.2, appliedShare: 0.5 }, error503: { share: 0.1 } };
  f.set(scenario, 'admin');
  const a = draw(f, 5000);
  const share = (p: (d: (typeof a)[number]) => boolean) => a.filter(p).length / a.length;
  assert.ok(Math.abs(share((d) => d.error503) - 0.1) < 0.02);
  // 500s are drawn among the requests not answered 503.
  assert.ok(Math.abs(share((d) => d.error500 !== undefined) - 0.9 * 0.2) < 0.02);
  assert.ok(Math.abs(share((d) => d.error500 === 'applied') - 0.9 * 0.1) < 0.015);
  f.set(scenario, 'admin');
  assert.deepEqual(draw(f, 5000), a, 'set() starts the count again: the same faults');
  f.set({ ...scenario, seed: 6 }, 'admin');
  const b = draw(f, 5000);
  assert.notDeepEqual(b, a);
  const st = f.state();
  assert.equal(st.requests, 5000);
  assert.deepEqual(st.injected, {
    latency: 0,
    error503: b.filter((d) => d.error503).length,
    error500Applied: b.filter((d) => d.error500 === 'applied').length,
    error500NotApplied: b.filter((d) => d.error500 === 'not-applied').length,
    streamDrop: 0,
    streamStall: 0,
  });
});

test('latency: fixed, uniform within [min, max], exponential cut at max; none for an unapplied 500', () => {
  const f = injector();
  f.set({ ackLatency: { distribution: 'fixed', ms: 70 } }, 'file');
  assert.ok(draw(f, 50).every((d) => d.latencyMs === 70));
  f.set({ ackLatency: { distribution: 'uniform', minMs: 10, maxMs: 20 } }, 'admin');
  const u = draw(f, 2000).map((d) => d.latencyMs);
  assert.deepEqual([Math.min(...u), Math.max(...u)], [10, 20]);
  f.set({ ackLatency: { distribution: 'exponential', meanMs: 40, maxMs: 150 } }, 'admin');
  const e = draw(f, 5000).map((d) => d.latencyMs);
  assert.ok(Math.max(...e) === 150 && Math.min(...e) >= 0);
  const mean = e.reduce((x, y) => x + y, 0) / e.length;
  assert.ok(mean > 30 && mean < 40, `mean of a capped exponential of 40: ${mean}`);
  f.set({ ackLatency: { distribution: 'fixed', ms: 70, share: 0.3 }, error500: { share: 1, appliedShare: 0 } }, 'admin');
  assert.ok(draw(f, 100).every((d) => d.latencyMs === 0 && d.error500 === 'not-applied'));
  f.set({ ackLatency: { distribution: 'fixed', ms: 70, share: 0.3 } }, 'admin');
  const shared = draw(f, 4000).filter((d) => d.latencyMs > 0).length / 4000;
  assert.ok(Math.abs(shared - 0.3) < 0.03);
});

test('scenarios are validated; a file is read and refused naming what is wrong', () => {
  assert.deepEqual(scenarioProblems({}), []);
  assert.deepEqual(scenarioProblems({ seed: 1, error503: { share: 0.5 } }), []);
  assert.ok(scenarioProblems({ error503: { share: 1.5 } }).length > 0);
  assert.ok(scenarioProblems({ unknown: 1 }).length > 0);
  assert.deepEqual(scenarioProblems({ ackLatency: { distribution: 'uniform', minMs: 9, maxMs: 8 } }), [{ path: '/ackLatency/minMs', message: 'must not exceed maxMs' }]);
  const dir = mkdtempSync(join(tmpdir(), 'pm-faults-'));
  try {
    const file = join(dir, 'f.json');
    writeFileSync(file, '{"error503": {"share": 0.25}}');
    assert.deepEqual(readScenarioFile(file), { error503: { share: 0.25 } });
    writeFileSync(file, '{"error503": ');
    assert.throws(() => readScenarioFile(file), /sandbox\.faultsFile: cannot read .*f\.json as JSON/);
    writeFileSync(file, '{"error503": {"share": -1}}');
    assert.throws(() => readScenarioFile(file), /sandbox\.faultsFile: .*f\.json: \/error503\/share/);
    assert.throws(() => readScenarioFile(join(dir, 'missing.json')), /cannot read/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('stream faults: sockets numbered per channel, shares per channel, draws fixed by seed and number', () => {
  const f = injector();
  assert.equal(f.forSocket('market'), undefined, 'no scenario: sockets are not numbered');
  f.set({ error503: { share: 0.5 } }, 'admin');
  assert.equal(f.forSocket('market'), undefined, 'a scenario without streams does not number sockets');
  const scenario: FaultScenario = {
    seed: 3,
    streams: {
      drop: { share: 0.25, channels: ['market'], afterMs: { distribution: 'uniform', minMs: 100, maxMs: 900 } },
      stall: { share: 0.5, afterMs: { distribution: 'fixed', ms: 50 }, forMs: { distribution: 'exponential', meanMs: 200, maxMs: 1000 } },
    },
  };
  f.set(scenario, 'admin');
  const plans = () =>
    Array.from({ length: 4000 }, (_, i) => {
      const channel = i % 2 === 0 ? 'market' : 'user';
      const n = f.forSocket(channel)!;
      return { channel, n, drop: f.drop(channel, n), stall: f.stall(channel, n, 0), again: f.stall(channel, n, 1) };
    });
  const a = plans();
  assert.deepEqual(a.slice(0, 4).map((p) => [p.channel, p.n]), [['market', 1], ['user', 1], ['market', 2], ['user', 2]]);
  const market = a.filter((p) => p.channel === 'market');
  const user = a.filter((p) => p.channel === 'user');
  const share = (list: typeof a, p: (x: (typeof a)[number]) => boolean) => list.filter(p).length / list.length;
  assert.ok(Math.abs(share(market, (p) => p.drop !== undefined) - 0.25) < 0.04);
  assert.equal(share(user, (p) => p.drop !== undefined), 0, 'drop applies to market sockets only');
  assert.ok(Math.abs(share(market, (p) => p.stall !== undefined) - 0.5) < 0.05);
  assert.ok(Math.abs(share(user, (p) => p.stall !== undefined) - 0.5) < 0.05);
  const drops = market.flatMap((p) => (p.drop === undefined ? [] : [p.drop.afterMs]));
  assert.ok(Math.min(...drops) >= 100 && Math.max(...drops) <= 900);
  assert.ok(market.every((p) => p.drop === undefined || p.drop.how === 'abrupt'));
  assert.ok(a.every((p) => p.stall === undefined || (p.stall.afterMs === 50 && p.stall.forMs <= 1000)));
  assert.ok(a.every((p) => p.again === undefined), 'no repeat unless asked');
  // The two channels draw on their own: the same numbers do not stall the same way on both.
  assert.notDeepEqual(market.map((p) => p.stall !== undefined), user.map((p) => p.stall !== undefined));
  f.set(scenario, 'admin');
  assert.deepEqual(plans(), a, 'set() numbers sockets from 1 again: the same faults');
  f.set({ ...scenario, seed: 4 }, 'admin');
  assert.notDeepEqual(plans(), a);
  assert.deepEqual(f.state().sockets, { market: 2000, user: 2000 });
});

test('stream faults: repeated stalls draw a new time per stall; faults are counted when they happen', () => {
  const f = injector();
  f.set({ streams: { stall: { share: 1, repeat: true, afterMs: { distribution: 'uniform', minMs: 0, maxMs: 10_000 }, forMs: { distribution: 'uniform', minMs: 1, maxMs: 5000 } }, drop: { share: 1, afterMs: { distribution: 'fixed', ms: 7 }, how: 'going-away' } } }, 'file');
  const n = f.forSocket('user')!;
  const stalls = [0, 1, 2, 3].map((k) => f.stall('user', n, k)!);
  assert.equal(new Set(stalls.map((x) => x.afterMs)).size, 4, 'each stall its own draw');
  assert.deepEqual(f.stall('user', n, 2), stalls[2], 'the same (socket, k): the same draw');
  assert.deepEqual(f.drop('user', n), { afterMs: 7, how: 'going-away' });
  const counted = () => f.state().injected;
  assert.deepEqual([counted().streamDrop, counted().streamStall], [0, 0], 'drawing is not injecting');
  f.socketFault('stall', 'user', n, 30);
  f.socketFault('stall', 'user', n, 40);
  f.socketFault('drop', 'user', n, 7);
  assert.deepEqual([counted().streamDrop, counted().streamStall], [1, 2]);
  let told = 0;
  f.onChange(() => told++);
  f.set(undefined, 'admin');
  assert.equal(told, 1);
  assert.equal(f.forSocket('user'), undefined);
  assert.deepEqual([counted().streamDrop, counted().streamStall], [0, 0]);
});

test('stream fault scenarios are validated', () => {
  assert.deepEqual(scenarioProblems({ streams: { drop: { share: 0.1, afterMs: { distribution: 'fixed', ms: 1000 } } } }), []);
  assert.deepEqual(scenarioProblems({ streams: { stall: { share: 1, afterMs: { distribution: 'uniform', minMs: 5, maxMs: 4 }, forMs: { distribution: 'fixed', ms: 1 } } } }), [
    { path: '/streams/stall/afterMs/minMs', message: 'must not exceed maxMs' },
  ]);
  assert.ok(scenarioProblems({ streams: { drop: { share: 0.1 } } }).length > 0, 'afterMs is required');
  assert.ok(scenarioProblems({ streams: { drop: { share: 0.1, afterMs: { distribution: 'fixed', ms: 1 }, channels: ['trades'] } } }).length > 0);
  assert.ok(scenarioProblems({ streams: { drop: { share: 0.1, afterMs: { distribution: 'fixed', ms: 1 }, how: 'rude' } } }).length > 0);
  assert.ok(scenarioProblems({ streams: { stalls: {} } }).length > 0, 'a misspelt fault is refused');
});
