/**
 * What a revertible node keeps from one opening to the next: the same matching threads while they serve,
 * new ones when they ended or do not fit, the same signature pool, and nothing running after close.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { threadSpec } from '../../src/engine/shard/shard-threads.ts';
import { KeptThreads } from '../../src/node/kept-threads.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';

test('the kept matching threads are handed on while they serve, and replaced when they ended or do not fit', async () => {
  const kept = new KeptThreads();
  try {
    const one = threadSpec({ shards: 1, snapshotIntervalMs: Infinity });
    const a = await kept.shardThreads(one, undefined);
    assert.equal(await kept.shardThreads(one, undefined), a, 'the same threads for the same spec');
    const two = await kept.shardThreads(threadSpec({ shards: 2, snapshotIntervalMs: Infinity }), undefined);
    assert.notEqual(two, a);
    assert.equal(a.usable, false, 'threads that no longer fit are ended');
    assert.equal(two.threads.length, 2);
    await two.terminate();
    const again = await kept.shardThreads(threadSpec({ shards: 2, snapshotIntervalMs: Infinity }), undefined);
    assert.notEqual(again, two, 'ended threads are replaced');
    assert.equal(again.usable, true);
  } finally {
    await kept.close();
  }
});

test('the signature pool is kept until close, and close ends every kept thread', async () => {
  const kept = new KeptThreads();
  const config = testConfig({ auth: { signatureThreads: 1 } });
  const pool = kept.signatures(config, silentLogger);
  assert.equal(kept.signatures(config, silentLogger), pool);
  await pool.ready;
  const shards = await kept.shardThreads(threadSpec({ shards: 1 }), undefined);
  await kept.close();
  assert.equal(shards.usable, false);
  const next = kept.signatures(config, silentLogger);
  assert.notEqual(next, pool, 'a closed pool is not handed on');
  await next.close();
});
