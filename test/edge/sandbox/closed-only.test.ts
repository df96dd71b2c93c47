/**
 * Closed-only wallets (src/edge/sandbox/closed-only.ts): set and cleared by address in any case, listed
 * sorted, and kept across a reopening of the store.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClosedOnlyWallets } from '../../../src/edge/sandbox/closed-only.ts';
import { openStore } from '../../../src/journal/env.ts';
import { tempStore } from '../../fixtures/engine-harness.ts';

test('set, cleared, case-insensitive, kept across a reopening', async () => {
  const env = tempStore('pm-closed-only-');
  const a = '0x' + 'A'.repeat(40);
  const b = '0x' + 'b'.repeat(40);
  const w = new ClosedOnlyWallets(env.store);
  assert.equal(w.has(a), false);
  await w.set(b, true);
  await w.set(a, true);
  await w.set(a, true);
  assert.equal(w.has(a.toLowerCase()), true);
  assert.deepEqual(w.list(), [a.toLowerCase(), b]);
  await w.set(b, false);
  assert.deepEqual(w.list(), [a.toLowerCase()]);
  await env.store.close();
  const again = openStore({ dataDir: env.dir, mapSize: 2 ** 26 });
  try {
    assert.deepEqual(new ClosedOnlyWallets(again).list(), [a.toLowerCase()]);
  } finally {
    await again.close();
    const { rmSync } = await import('node:fs');
    rmSync(env.dir, { recursive: true, force: true });
  }
});
