/**
 * ManualClock's timers (src/runtime/clock.ts): they fire only when advance() or set() passes their due
 * time, in due order (ties in the order set), with now() reading each one's due time while it runs; a
 * timer set from a firing one fires in the same advance when due; clear() cancels; the system timers are
 * unref'd and fire.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock, TestClock, systemTimers } from '../../src/runtime/clock.ts';

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

// ---- TestClock: the exchange's clock under the sandbox's test controls ----------------------------------

test('a running TestClock follows its base clock and fires its timers through the base timers', () => {
  const base = new ManualClock(1_000);
  const c = new TestClock(base, base.timers);
  const fired: Array<[string, number]> = [];
  c.timers.set(() => fired.push(['a', c.now()]), 50);
  c.timers.set(() => fired.push(['b', c.now()]), 20);
  assert.equal(c.now(), 1_000);
  assert.equal(c.frozen, false);
  base.advance(30);
  assert.deepEqual(fired, [['b', 1_020]]);
  assert.equal(c.now(), 1_030);
  base.advance(30);
  assert.deepEqual(fired, [['b', 1_020], ['a', 1_050]]);
  assert.equal(c.pendingTimers, 0);
  assert.equal(base.pendingTimers, 0, 'no base timer is left armed once nothing is pending');
});

test('a frozen TestClock stands still; moveTo fires what falls due, in order, each at its due time, and returns their results', () => {
  const base = new ManualClock(10_000);
  const c = new TestClock(base, base.timers);
  const fired: Array<[string, number]> = [];
  c.timers.set(() => fired.push(['late', c.now()]), 500);
  c.freeze();
  base.advance(1_000);
  assert.equal(c.now(), 10_000, 'frozen: the base clock moving changes nothing');
  assert.equal(fired.length, 0, 'frozen: due timers wait');
  assert.equal(base.pendingTimers, 0, 'frozen: no base timer is armed');
  c.timers.set(() => fired.push(['x', c.now()]), 200);
  const cleared = c.timers.set(() => fired.push(['never', c.now()]), 100);
  c.timers.clear(cleared);
  c.timers.set(() => {
    fired.push(['chain', c.now()]);
    c.timers.set(() => fired.push(['chained', c.now()]), 50);
    return Promise.resolve('async result');
  }, 300);
  assert.equal(c.nextDue(), 10_200);
  const results = c.moveTo(10_400);
  assert.deepEqual(fired, [['x', 10_200], ['chain', 10_300], ['chained', 10_350]]);
  assert.equal(c.now(), 10_400);
  assert.equal(results.length, 3);
  assert.ok(results[1] instanceof Promise);
  c.moveTo(10_600);
  assert.deepEqual(fired.at(-1), ['late', 10_500]);
  assert.throws(() => c.moveTo(10_000), /only moves forward/);
});

test('a TestClock resumed from frozen runs on from where it stood, and a throwing timer does not stop the others', () => {
  const base = new ManualClock(5_000);
  const c = new TestClock(base, base.timers);
  c.freeze();
  c.moveTo(65_000);
  base.advance(100);
  c.run();
  assert.equal(c.now(), 65_000, 'time is continuous across run()');
  assert.equal(c.state().offsetMs, 65_000 - 5_100);
  const fired: number[] = [];
  c.timers.set(() => {
    throw new Error('boom');
  }, 10);
  c.timers.set(() => fired.push(c.now()), 10);
  base.advance(10);
  assert.deepEqual(fired, [65_010]);
  assert.throws(() => c.moveTo(70_000), /running/);
  c.freeze();
  const out = c.moveTo(65_010);
  assert.deepEqual(out, []);
  c.timers.set(() => {
    throw new Error('boom');
  }, 0);
  c.timers.set(() => fired.push(c.now()), 0);
  const r = c.moveTo(65_020);
  assert.ok(r[0] instanceof Error, 'the error is returned in its place');
  assert.deepEqual(fired, [65_010, 65_010]);
});

test('a move fires each lazy timer once, late, right before the next ordinary timer or at its end', () => {
  const base = new ManualClock(0);
  const c = new TestClock(base, base.timers);
  c.freeze();
  const seen: Array<[string, number]> = [];
  // A periodic sampler that catches up: every firing counts the periods passed since its last one.
  let last = 0;
  const sample = () => {
    const n = Math.floor((c.now() - last) / 10);
    last += n * 10;
    seen.push([`sample x${n}`, c.now()]);
    c.timers.set(sample, last + 10 - c.now(), { lazy: true });
  };
  c.timers.set(sample, 10, { lazy: true });
  c.timers.set(() => seen.push(['event', c.now()]), 55);
  assert.equal(c.nextDue(), 55, 'nextDue() names ordinary timers only');
  assert.equal(c.nextLazyDue(), 10);
  c.moveTo(1_000);
  assert.deepEqual(seen, [
    ['sample x5', 55],
    ['event', 55],
    ['sample x95', 1_000],
  ]);
  assert.equal(c.nextLazyDue(), 1_010);
});

test('running, lazy timers fire on time like the others', () => {
  const base = new ManualClock(0);
  const c = new TestClock(base, base.timers);
  const seen: number[] = [];
  c.timers.set(() => seen.push(c.now()), 10, { lazy: true });
  c.timers.set(() => seen.push(-c.now()), 20);
  base.advance(15);
  base.advance(10);
  assert.deepEqual(seen, [10, -20]);
});
