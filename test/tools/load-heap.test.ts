/**
 * The load tool collects its own heap before a timed window when the process exposes gc, so its pauses
 * are not timed as the service's latency; without --expose-gc it says so (RunStats.heapSettled).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { settleHeap } from '../../tools/load.ts';

test('settleHeap collects (twice) when gc is exposed, and reports false when it is not', () => {
  const g = globalThis as { gc?: () => void };
  const saved = g.gc;
  try {
    delete g.gc;
    assert.equal(settleHeap(), false);
    let calls = 0;
    g.gc = () => void calls++;
    assert.equal(settleHeap(), true);
    assert.equal(calls, 2);
  } finally {
    if (saved) g.gc = saved;
    else delete g.gc;
  }
});
