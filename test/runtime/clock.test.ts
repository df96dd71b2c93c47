/**
 * ManualClock's timers (src/runtime/clock.ts): they fire only when advance() or set() passes their due
 * time, in due order (ties in the order set), with now() reading each one's due time while it runs; a
 * timer set from a firing one fires in the same advance when due; clear() cancels; the system timers are
 * unref'd and fire.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock, systemTimers } from '../../src/runtime/clock.ts';

test('manual timers fire in due order as the clock passes them, reading their own due time', () => {
  const c = new ManualClock(1_000);
  const fired: Array<[string, number]> = [];
  c.timers.set(() => fired.push(['b', c.now()]), 20);
  c.timers.set(() => fired.push(['a', c.now()]), 10);
  c.timers.set(() => fired.push(['a2', c.now()]), 10);
  const cleared = c.timers.set(() => fired.push(['never', c.now()]), 15);
  c.timers.clear(cleared);
  c.timers.set(() => {
    fired.push(['c', c.now()]);
    c.timers.set(() => fired.push(['chained', c.now()]), 5);
  }, 30);
  c.advance(9);
  assert.equal(fired.length, 0);
  c.advance(31);
  assert.deepEqual([...fired], [['a', 1_010], ['a2', 1_010], ['b', 1_020], ['c', 1_030], ['chained', 1_035]]);
  assert.equal(c.now(), 1_040);
  assert.equal(c.pendingTimers, 0);
  c.timers.set(() => fired.push(['late', c.now()]), 100);
  c.set(5_000);
  assert.deepEqual(fired.at(-1), ['late', 1_140]);
  c.timers.set(() => fired.push(['zero', c.now()]), -5);
  c.advance(0);
  assert.deepEqual(fired.at(-1), ['zero', 5_000], 'a negative delay is due now');
});

test('system timers fire, and clear() cancels', async () => {
  let n = 0;
  const h = systemTimers.set(() => n++, 5);
  systemTimers.clear(systemTimers.set(() => (n += 100), 5));
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(n, 1);
  systemTimers.clear(h);
});
