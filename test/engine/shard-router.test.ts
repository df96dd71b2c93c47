/**
 * Shard placement must be stable (same shard for the same condition id in every process, version and
 * restart) and spread markets evenly.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fnv1a32, shardOf } from '../../src/engine/shard-router.ts';

test('FNV-1a 32 matches the published test vectors', () => {
  assert.equal(fnv1a32(''), 0x811c9dc5);
  assert.equal(fnv1a32('a'), 0xe40c292c);
  assert.equal(fnv1a32('foobar'), 0xbf9cf968);
});

test('placement of fixed condition ids never changes', () => {
  // Literal values pin the function: a changed hash would move every market after an upgrade.
  const ids = ['0x' + 'ab'.repeat(32), '0x' + '01'.repeat(32), '0x5eed'];
  assert.deepEqual(ids.map(fnv1a32), [0x70767bb5, 0x8e87b7f5, 0xbc7e5a7e]);
  assert.deepEqual(
    ids.map((id) => [shardOf(id, 1), shardOf(id, 2), shardOf(id, 4), shardOf(id, 7)]),
    [
      [0, 1, 1, 6],
      [0, 1, 1, 3],
      [0, 0, 2, 2],
    ],
  );
});

test('markets spread evenly over shards', () => {
  for (const shards of [2, 3, 4]) {
    const counts = new Array<number>(shards).fill(0);
    for (let i = 0; i < 10_000; i++) counts[shardOf('0x' + i.toString(16).padStart(64, '0'), shards)]++;
    for (const c of counts) assert.ok(Math.abs(c - 10_000 / shards) < 10_000 / shards / 10, `shards=${shards}: ${counts}`);
  }
});

test('a shard count must be a positive integer', () => {
  assert.throws(() => shardOf('x', 0));
  assert.throws(() => shardOf('x', 1.5));
});
