/**
 * Group commit: one journal batch is committed at a time. Commands handled while a batch is being
 * committed wait in the writer and leave together as the next batch once it is durable, and nobody is
 * answered before the batch holding their effects is committed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Engine } from '../../src/engine/engine.ts';
import { metaKeys } from '../../src/journal/keys.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { T, market, order, tempStore, wallet } from '../fixtures/engine-harness.ts';

let env: ReturnType<typeof tempStore>;
let engine: Engine;
before(async () => {
  env = tempStore('pm-group-commit-');
  engine = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
});
after(async () => {
  await engine.close();
  await env.cleanup();
});

test('commands of later turns wait for the batch in flight and commit together, answered only after it', async () => {
  // Hold the first batch's commit open: the writer's last put of a batch is meta.journalSeq.
  const meta = env.store.meta;
  const put = meta.put.bind(meta);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let first = true;
  meta.put = ((k: string, v: unknown) => {
    const p = put(k, v);
    if (k !== metaKeys.journalSeq || !first) return p;
    first = false;
    return p.then(async (x) => {
      await held;
      return x;
    });
  }) as typeof meta.put;
  try {
    const tx0 = engine.stats().transactions;
    const answered: number[] = [];
    const a = engine.deposit(wallet(1), 1_000_000).then((r) => (answered.push(0), r));
    const later: Promise<unknown>[] = [];
    for (let i = 1; i <= 10; i++) {
      await new Promise((r) => setImmediate(r)); // each deposit in an event-loop turn of its own
      later.push(engine.deposit(wallet(1 + i), 1_000_000).then((r) => (answered.push(i), r)));
    }
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(answered, [], 'nothing is answered while the first batch is not durable');
    assert.equal(engine.stats().transactions - tx0, 1, 'the ten later deposits wait in the writer');
    release();
    const results = await Promise.all([a, ...later]);
    assert.ok(results.every((r) => (r as { ok: boolean }).ok));
    assert.equal(answered[0], 0, 'the first batch is answered first');
    assert.equal(engine.stats().transactions - tx0, 2, 'the ten later deposits committed as one batch');
    assert.equal(engine.stats().committedSeq, engine.stats().journalSeq);
  } finally {
    release(); // an assertion that failed before it must not leave the commit held (close would wait forever)
    meta.put = put;
  }
});

test('afterCommit answers once everything journaled before it is durable, at once when nothing is in flight', async () => {
  assert.deepEqual(await engine.afterCommit(), { ok: true, code: 0 }, 'nothing in flight');
  const meta = env.store.meta;
  const put = meta.put.bind(meta);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  meta.put = ((k: string, v: unknown) => {
    const p = put(k, v);
    return k === metaKeys.journalSeq ? p.then(async (x) => (await held, x)) : p;
  }) as typeof meta.put;
  try {
    const seq0 = engine.stats().journalSeq;
    const deposit = engine.deposit(wallet(40), 1_000_000);
    let done = false;
    const after = engine.afterCommit().then((r) => ((done = true), r));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(done, false, 'the deposit journaled before it is not durable yet');
    assert.ok(engine.stats().journalSeq > seq0 && engine.stats().committedSeq < engine.stats().journalSeq);
    release();
    assert.deepEqual(await after, { ok: true, code: 0 });
    assert.ok((await deposit).ok);
    assert.equal(engine.stats().committedSeq, engine.stats().journalSeq);
  } finally {
    release();
    meta.put = put;
  }
});

test('last trade prices survive a restart: the start-up replay finds each token\'s newest fill', async () => {
  const env2 = tempStore('pm-last-trade-');
  let e: Engine | undefined;
  try {
    const m = market(7);
    const [a, b] = [wallet(71), wallet(72)];
    e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger });
    e.registerMarket(m);
    assert.ok((await e.deposit(a, 100 * T)).ok && (await e.deposit(b, 100 * T)).ok);
    // A mint (YES 0.40 + NO 0.60), then a later YES mint at 0.45: the newest fill per token wins.
    for (const [yes, no] of [[4000, 6000], [4500, 5500]]) {
      assert.ok((await e.placeOrder(order({ wallet: a, tokenId: m.tokenIds[0], side: 'BUY', price: yes, size: 2 * T }))).ok);
      assert.ok((await e.placeOrder(order({ wallet: b, tokenId: m.tokenIds[1], side: 'BUY', price: no, size: 2 * T }))).ok);
    }
    const before = [e.lastTradePrice(m.tokenIds[0]), e.lastTradePrice(m.tokenIds[1])];
    assert.deepEqual(before.map((t) => t?.pricePips), [4500, 5500]);
    await e.close();
    e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger });
    assert.deepEqual([e.lastTradePrice(m.tokenIds[0]), e.lastTradePrice(m.tokenIds[1])], before);
    assert.equal(e.lastTradePrice('999'), undefined);
  } finally {
    await e?.close(); // also when an assertion failed: live shard workers would keep the test process up
    await env2.cleanup();
  }
});

test('an open order restored at start-up has the fields of a placed one, in the same order (one hidden class)', async () => {
  const env2 = tempStore('pm-restored-shape-');
  let e: Engine | undefined;
  try {
    const m = market(8);
    e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger });
    e.registerMarket(m);
    assert.ok((await e.deposit(wallet(81), 100 * T)).ok);
    const placed = order({ wallet: wallet(81), tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 5 * T });
    assert.ok((await e.placeOrder(placed)).ok);
    const before = e.getOrder(placed.orderId)!;
    const keys = Object.keys(before);
    await e.close();
    e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger });
    const after = e.getOrder(placed.orderId)!;
    assert.deepEqual(Object.keys(after), keys);
    assert.deepEqual(after, before);
  } finally {
    await e?.close();
    await env2.cleanup();
  }
});
