import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BENCH_MS, HmacStrikes, STRIKES, WINDOW_MS } from '../../../src/edge/limits/hmac-strikes.ts';

test(`${STRIKES} failures within ${WINDOW_MS} ms bench a key for ${BENCH_MS} ms; slower failures never do`, () => {
  const s = new HmacStrikes();
  let t = 0;
  for (let i = 0; i < STRIKES - 1; i++) s.failed('k', (t += 100));
  assert.equal(s.benched('k', t), 0);
  s.failed('k', (t += 100));
  assert.equal(s.benched('k', t), BENCH_MS);
  assert.equal(s.benched('other', t), 0, 'another key is not');
  assert.equal(s.benched('k', t + BENCH_MS), 0);
  // One failure every WINDOW_MS / (STRIKES - 1) + 1 ms: never STRIKES within a window.
  const slow = new HmacStrikes();
  for (let i = 0; i < 50; i++) {
    slow.failed('k', i * (WINDOW_MS + 1));
    assert.equal(slow.benched('k', i * (WINDOW_MS + 1)), 0);
  }
});

test('bounded: at most maxKeys keys, the least recently struck forgotten', () => {
  const s = new HmacStrikes(STRIKES, WINDOW_MS, BENCH_MS, 100);
  for (let i = 0; i < 10_000; i++) s.failed(`k${i}`, i);
  assert.equal(s.size, 100);
  for (let i = 0; i < STRIKES; i++) s.failed('k9999', 10_000 + i);
  assert.ok(s.benched('k9999', 10_010) > 0, 'the newest kept its strikes');
});
