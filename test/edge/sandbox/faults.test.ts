/**
 * Fault injection (src/edge/sandbox/faults.ts) without HTTP: no scenario injects nothing; each fault's
 * share holds over many requests; draws depend only on the seed and the request number (set() starts the
 * count again, another seed draws otherwise); latency draws stay within their distribution; 503 wins over
 * 500, and an unapplied 500 gets no latency; scenarios are validated, files read and refused clearly.
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
