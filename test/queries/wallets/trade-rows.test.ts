/**
 * The ring of rendered trade-row ids (queries/wallets/trade-rows.ts, IdRing): first in, first out across
 * wrap-arounds, ids up to 2^53 kept exactly. TradeRows itself (rows kept while their metadata and profile
 * are unchanged, second-chance eviction) is covered through the reader in trades.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IdRing } from '../../../src/queries/wallets/trade-rows.ts';

test('IdRing is first in, first out across wrap-arounds', () => {
  const ring = new IdRing(4);
  const model: number[] = [];
  let next = 0;
  for (let step = 0; step < 1_000; step++) {
    if (model.length < 4 && (model.length === 0 || step % 3 !== 0)) {
      ring.push(next);
      model.push(next++);
    } else {
      assert.equal(ring.shift(), model.shift(), `step ${step}`);
    }
    assert.equal(ring.count, model.length);
  }
});

test('IdRing keeps ids of trade rows (seq x 2 + role) exactly', () => {
  const ring = new IdRing(2);
  const big = Number.MAX_SAFE_INTEGER;
  ring.push(big);
  ring.push(big - 1);
  assert.deepEqual([ring.shift(), ring.shift(), ring.count], [big, big - 1, 0]);
});
