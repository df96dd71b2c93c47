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
import { tempStore, wallet } from '../fixtures/engine-harness.ts';

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
    meta.put = put;
  }
});
