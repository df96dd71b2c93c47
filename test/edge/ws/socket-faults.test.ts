/**
 * The stream faults' timers (src/edge/ws/socket-faults.ts) on a ManualClock, with the scenario's real draws
 * (FaultInjector) and recording ops: a drop happens at its drawn time, a stall begins and ends at its drawn
 * times and repeats only when asked, a closed socket is forgotten with its timers, a socket that cannot
 * stall (closing) is not counted, and a change of scenario resumes stalled sockets and arms the open ones
 * again from then, in the order they opened; nothing is armed without stream faults.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { FaultInjector } from '../../../src/edge/sandbox/faults.ts';
import type { FaultScenario } from '../../../src/edge/schemas/sandbox.ts';
import { SocketFaults, type SocketChannel } from '../../../src/edge/ws/socket-faults.ts';
import { ManualClock } from '../../../src/runtime/clock.ts';
import { silentLogger } from '../../../src/runtime/log.ts';

function harness(scenario?: FaultScenario) {
  const clock = new ManualClock(0);
  const source = new FaultInjector(silentLogger, clock, new Registry());
  if (scenario !== undefined) source.set(scenario, 'admin');
  const log: string[] = [];
  const stalled = { market: 0, user: 0 };
  const refuse = new Set<string>();
  const faults: SocketFaults<string> = new SocketFaults<string>(source, clock.timers, {
    stall: (s) => {
      if (refuse.has(s)) return false;
      log.push(`${clock.now()} stall ${s}`);
      return true;
    },
    resume: (s) => log.push(`${clock.now()} resume ${s}`),
    drop: (s, how) => {
      log.push(`${clock.now()} drop ${s} ${how}`);
      faults.closed(s);
    },
    stalled: (c, d) => (stalled[c] += d),
    resumed: () => {},
  });
  return { clock, source, faults, log, stalled, refuse };
}

test('a drop happens at its drawn time; a stall ends after its drawn time; both counted', () => {
  const h = harness({ streams: { drop: { share: 1, afterMs: { distribution: 'fixed', ms: 500 }, how: 'going-away' }, stall: { share: 1, afterMs: { distribution: 'fixed', ms: 100 }, forMs: { distribution: 'fixed', ms: 200 } } } });
  h.faults.opened('a', 'market');
  h.clock.advance(99);
  assert.deepEqual(h.log, []);
  h.clock.advance(1);
  assert.deepEqual(h.log, ['100 stall a']);
  assert.equal(h.stalled.market, 1);
  h.clock.advance(250);
  assert.deepEqual(h.log, ['100 stall a', '300 resume a']);
  assert.equal(h.stalled.market, 0);
  h.clock.advance(1000);
  assert.deepEqual(h.log, ['100 stall a', '300 resume a', '500 drop a going-away']);
  assert.equal(h.faults.size, 0);
  assert.equal(h.clock.pendingTimers, 0);
  assert.deepEqual([h.source.state().injected.streamStall, h.source.state().injected.streamDrop], [1, 1]);
});

test('repeat: a new stall after each resume, each with its own draws; a close forgets the socket', () => {
  const h = harness({ seed: 9, streams: { stall: { share: 1, repeat: true, afterMs: { distribution: 'uniform', minMs: 10, maxMs: 100 }, forMs: { distribution: 'uniform', minMs: 5, maxMs: 50 } } } });
  h.faults.opened('a', 'user');
  const expected: string[] = [];
  let at = 0;
  for (let k = 0; k < 5; k++) {
    const d = h.source.stall('user', 1, k)!;
    at += Math.max(k === 0 ? 0 : 1, d.afterMs);
    expected.push(`${at} stall a`);
    at += d.forMs;
    expected.push(`${at} resume a`);
  }
  h.clock.set(at);
  assert.deepEqual(h.log, expected);
  assert.equal(h.faults.size, 1, 'the next stall is armed');
  h.faults.closed('a');
  assert.equal(h.faults.size, 0);
  assert.equal(h.clock.pendingTimers, 0);
  h.clock.advance(10_000);
  assert.equal(h.log.length, expected.length, 'nothing happens to a closed socket');
});

test('a socket that cannot stall (closing) is not counted; closing mid-stall releases the gauge', () => {
  const h = harness({ streams: { stall: { share: 1, afterMs: { distribution: 'fixed', ms: 10 }, forMs: { distribution: 'fixed', ms: 1000 } } } });
  h.refuse.add('a');
  h.faults.opened('a', 'market');
  h.faults.opened('b', 'market');
  h.clock.advance(10);
  assert.deepEqual(h.log, ['10 stall b']);
  assert.equal(h.source.state().injected.streamStall, 1);
  assert.equal(h.stalled.market, 1);
  h.faults.closed('b');
  assert.equal(h.stalled.market, 0);
  h.clock.advance(5000);
  assert.deepEqual(h.log, ['10 stall b'], 'a closed socket is not resumed');
});

test('a new scenario resumes stalled sockets and arms the open ones from then, in the order they opened; none arms nothing', () => {
  const h = harness();
  h.faults.opened('a', 'market');
  assert.equal(h.faults.size, 0, 'no scenario: nothing armed');
  const scenario: FaultScenario = { seed: 2, streams: { stall: { share: 1, afterMs: { distribution: 'uniform', minMs: 1, maxMs: 1000 }, forMs: { distribution: 'fixed', ms: 60_000 } } } };
  const open: Array<[string, SocketChannel]> = [['a', 'market'], ['u', 'user'], ['b', 'market']];
  h.source.onChange(() => h.faults.reset(open));
  h.clock.set(1000);
  h.source.set(scenario, 'admin');
  assert.deepEqual(h.source.state().sockets, { market: 2, user: 1 });
  h.clock.advance(1000);
  const at = (ch: SocketChannel, n: number) => 1000 + h.source.stall(ch, n, 0)!.afterMs;
  const want = [
    [at('market', 1), 'a'],
    [at('user', 1), 'u'],
    [at('market', 2), 'b'],
  ]
    .sort((x, y) => (x[0] as number) - (y[0] as number))
    .map(([t, s]) => `${t} stall ${s}`);
  assert.deepEqual(h.log, want);
  assert.equal(h.stalled.market + h.stalled.user, 3);
  h.source.set(undefined, 'admin');
  assert.deepEqual(h.log.slice(3).sort(), ['2000 resume a', '2000 resume b', '2000 resume u']);
  assert.equal(h.stalled.market + h.stalled.user, 0);
  assert.equal(h.faults.size, 0);
  assert.equal(h.clock.pendingTimers, 0);
});
