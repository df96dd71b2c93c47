/**
 * Matching threads that outlive an engine (a sandbox revert): the engine handed them lets go of them at its
 * close instead of ending them, and the next engine on them starts as on new threads (no book of the last
 * one, its own clock); threads that do not fit are refused, and an engine that halted ends them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Errors } from '../../../src/domain/errors.ts';
import { Engine } from '../../../src/engine/engine.ts';
import { ShardThreads, threadSpec } from '../../../src/engine/shard/shard-threads.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { T, market, order, tempStore, until, wallet } from '../../fixtures/engine-harness.ts';

async function funded(e: Engine, cid: string, n: number): Promise<string> {
  const w = wallet(n);
  await e.deposit(w, 1_000 * T);
  await e.split(w, cid, 100 * T);
  return w;
}

test('an engine lets go of the threads it was handed; the next one on them starts with no book of the last and on its own clock', async () => {
  const threads = await ShardThreads.spawn(threadSpec({ shards: 1 }));
  const a = tempStore();
  const b = tempStore();
  try {
    const ids = threads.threads.map((t) => t.worker.threadId);
    const m = market(1);
    const first = await Engine.open({ store: a.store, shards: 1, log: silentLogger, threads });
    first.registerMarket(m);
    const seller = await funded(first, m.conditionId, 1);
    assert.equal((await first.placeOrder(order({ wallet: seller, tokenId: m.tokenIds[0], side: 'SELL', price: 4000, size: 10 * T }))).status, 'live');
    await first.close();
    assert.equal(threads.usable, true, 'the threads still run after the engine closed');

    // The second engine's clock stands an hour behind the wall clock, frozen: a GTD order due in two minutes
    // by it is an hour past due by the system clock, which the shard would follow had the reset not set it.
    const atMs = Date.now() - 3_600_000;
    const second = await Engine.open({ store: b.store, shards: 1, log: silentLogger, threads, now: () => atMs, shardTime: { frozen: true, offsetMs: 0, atMs } });
    try {
      assert.deepEqual(threads.threads.map((t) => t.worker.threadId), ids, 'the same threads');
      second.registerMarket(m);
      const buyer = await funded(second, m.conditionId, 2);
      const cross = await second.placeOrder(order({ wallet: buyer, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 10 * T }));
      assert.equal(cross.status, 'live', 'the last engine\'s SELL at 0.40 is not on the book');
      assert.deepEqual(cross.tradeIds, []);
      const exp = Math.floor(atMs / 1000) + 120;
      const gtd = await second.placeOrder(order({ wallet: buyer, tokenId: m.tokenIds[0], side: 'BUY', price: 3000, size: 10 * T, type: 'GTD', expiration: exp }));
      assert.equal(gtd.status, 'live');
      await second.shardTime({ frozen: true, offsetMs: 0, atMs });
      assert.equal(second.getOrder(gtd.orderId)?.status, 'LIVE', 'the shard follows the frozen clock it was reset to');
      await second.shardTime({ frozen: true, offsetMs: 0, atMs: exp * 1000 }, exp);
      await until(() => second.getOrder(gtd.orderId)?.status === 'CANCELED');
    } finally {
      await second.close();
    }
    assert.equal(threads.usable, true);
  } finally {
    await threads.terminate();
    await a.cleanup();
    await b.cleanup();
  }
});

test('threads that do not fit the engine are refused, and the engine starts nothing', async () => {
  const threads = await ShardThreads.spawn(threadSpec({ shards: 2 }));
  const env = tempStore();
  try {
    await assert.rejects(Engine.open({ store: env.store, shards: 1, log: silentLogger, threads }), /do not fit this engine/);
    assert.equal(threads.usable, true);
  } finally {
    await threads.terminate();
    await env.cleanup();
  }
  assert.equal(threads.usable, false, 'terminated threads are not handed on');
});

test('an engine that halted ends the threads it was handed: their books are in an unknown state', async () => {
  const bookFactory = { module: new URL('../../fixtures/faulty-book.ts', import.meta.url).href, export: 'createFaultyBook' };
  const threads = await ShardThreads.spawn(threadSpec({ shards: 1, bookFactory }));
  const env = tempStore();
  try {
    const e = await Engine.open({ store: env.store, shards: 1, log: silentLogger, threads, bookFactory });
    const m = market(1);
    e.registerMarket(m);
    await e.deposit(wallet(1), 100 * T);
    // 13 units is the size the faulty book throws on (test/fixtures/faulty-book.ts).
    const boom = await e.placeOrder(order({ wallet: wallet(1), tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 13 * T }));
    assert.equal(boom.code, Errors.PM_ERR_ENGINE_DOWN.result);
    await e.close();
    assert.equal(threads.usable, false);
  } finally {
    await threads.terminate();
    await env.cleanup();
  }
});
