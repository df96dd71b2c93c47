import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BODY_BUCKETS, BodyBudget } from '../../../src/edge/limits/rate-limit-bytes.ts';

const budget = (enabled = true) => new BodyBudget({ enabled, maxCallers: 64, perAddress: { limit: 1000, windowSeconds: 10 }, perKey: { limit: 600, windowSeconds: 10 } });

test("the address's bytes and the key's: all or nothing, the binding bucket named", () => {
  const b = budget();
  assert.ok(b.take('ip:a', 'k1', 500, 0).ok);
  const refused = b.take('ip:a', 'k1', 200, 0);
  assert.deepEqual([refused.ok, refused.bucket, refused.remaining], [false, BODY_BUCKETS.key, 100]);
  // The refusal charged nothing: the address still has 500, which another key may take.
  assert.ok(b.take('ip:a', 'k2', 500, 0).ok);
  const full = b.take('ip:a', undefined, 1, 0);
  assert.deepEqual([full.ok, full.bucket, full.limit], [false, BODY_BUCKETS.address, 1000]);
  assert.ok(b.take('ip:b', undefined, 1000, 0).ok, 'another address');
  // The window passes.
  assert.ok(b.take('ip:a', 'k1', 600, 10_000).ok);
});

test('with rate limits off nothing is refused', () => {
  const b = budget(false);
  for (let i = 0; i < 100; i++) assert.ok(b.take('ip:a', 'k', 1_000_000, 0).ok);
});
