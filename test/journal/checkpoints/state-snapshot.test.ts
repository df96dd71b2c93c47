/**
 * A state snapshot (journal/checkpoints/state-snapshot.ts) holds the state of its store and not the history
 * before it: taken from a store with trades settled and settling, orders filled and resting, and a history
 * view, before and after its newest checkpoint, it proves to the source's state hash at the same seq, an
 * engine opened on it holds the same open orders and balances, and the closed orders and the history rows
 * from before the checkpoint are not in it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { Engine } from '../../../src/engine/engine.ts';
import { writeCheckpoint } from '../../../src/journal/checkpoints/checkpoint-writer.ts';
import { CheckpointStore } from '../../../src/journal/checkpoints/checkpoints.ts';
import { takeStateSnapshot, historyFloorOf } from '../../../src/journal/checkpoints/state-snapshot.ts';
import { openStore } from '../../../src/journal/env.ts';
import { installSnapshot } from '../../../src/journal/checkpoints/snapshots.ts';
import { metaKeys, walletViewKeys } from '../../../src/journal/keys.ts';
import { readOrder } from '../../../src/journal/orders.ts';
import { verifyStore } from '../../../src/journal/recovery.ts';
import { unsettledTrades } from '../../../src/journal/trades.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { T, crossedPair, market, tempStore, wallet } from '../../fixtures/engine-harness.ts';

// Trades stay MATCHED for the test's length: settling at the checkpoint and at the snapshot.
const SETTLE = { minedDelayMs: 3_600_000, confirmedDelayMs: 3_600_000, retryingShare: 0, retryDelayMs: 1000, failedShare: 0, seed: 1 };

test('a state snapshot proves to its store\'s state hash without the history before its checkpoint', async (t) => {
  const env = tempStore('pm-state-snap-');
  t.after(() => env.cleanup());
  const m = market(1);
  // A crossed pair: one order filled whole (closed), the other resting with what is left.
  const cross = (e: Engine, price: number) => crossedPair(e, m, price);

  // Before the checkpoint: CONFIRMED trades (the default settlement) and orders closed by them.
  let e = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  e.registerMarket(m);
  await e.deposit(wallet(1), 1000 * T);
  await e.deposit(wallet(2), 1000 * T);
  await e.split(wallet(1), m.conditionId, 100 * T);
  const old = await cross(e, 4000);
  await e.close();
  // A history row as the wallet projection writes it: below the checkpoint, it is history.
  await env.store.views.put(walletViewKeys.tradeAll(0, 1), { old: true });
  await env.store.views.put(walletViewKeys.position(wallet(2), m.conditionId, 0), { size: 4 });
  const cs = new CheckpointStore(join(env.dir, 'checkpoints'));
  const base = writeCheckpoint(env.store, cs, 'auto');

  // After it: trades still settling, and orders that rest and close.
  e = await Engine.open({ store: env.store, shards: 1, log: silentLogger, trades: SETTLE });
  const late = await cross(e, 5000);
  const hash = e.stateHash();
  await e.close();
  const journalSeq = env.store.meta.get(metaKeys.journalSeq) as number;
  assert.ok(journalSeq > base.seq);
  assert.ok(unsettledTrades(env.store).length > 0, 'the store has trades still settling');

  const dir = join(env.dir, '..', `${env.dir.split('/').pop()}-state`);
  t.after(async () => (await import('node:fs')).rmSync(dir, { recursive: true, force: true }));
  const manifest = await takeStateSnapshot(env.store, cs, dir, 'state-1');
  assert.equal(manifest.kind, 'state');
  assert.equal(manifest.floor, journalSeq);
  assert.equal(manifest.journalSeq, journalSeq);
  assert.equal(manifest.stateHash, verifyStore(env.store).hash, 'the snapshot proves to the full replay\'s state hash');
  assert.equal(manifest.stateHash, hash);

  const snap = openStore({ dataDir: dir });
  try {
    assert.equal(historyFloorOf(snap), journalSeq);
    assert.equal(snap.meta.get(metaKeys.journalPrunedTo), base.seq);
    assert.equal(verifyStore(snap, { checkpoints: new CheckpointStore(join(dir, 'checkpoints')) }).hash, hash);
    // The history before the checkpoint is not there: the filled order, the trade row; the state is.
    assert.equal(readOrder(snap, old.taker), undefined, 'an order closed before the checkpoint is history');
    assert.equal(readOrder(snap, old.maker)?.status, 'LIVE', 'an order open at the checkpoint is state');
    assert.equal(readOrder(snap, late.taker)?.status, 'MATCHED', 'an order after the checkpoint is kept whole');
    assert.equal(snap.views.get(walletViewKeys.tradeAll(0, 1)), undefined);
    assert.deepEqual(snap.views.get(walletViewKeys.position(wallet(2), m.conditionId, 0)), { size: 4 });
    assert.deepEqual(unsettledTrades(snap), unsettledTrades(env.store), 'the trades still settling are there');
    // An engine opened on it holds what the source's holds.
    await snap.close();
    const again = openStore({ dataDir: dir });
    const e2 = await Engine.open({ store: again, shards: 1, log: silentLogger, trades: SETTLE, checkpoints: new CheckpointStore(join(dir, 'checkpoints')) });
    try {
      assert.equal(e2.stateHash(), hash);
    } finally {
      await e2.close();
      await again.close();
    }
  } finally {
    await snap.close().catch(() => undefined);
  }
  // Installed only with the floor its manifest names (a second snapshot: the first was opened above).
  const fresh = `${dir}-2`;
  const target = `${dir}-installed`;
  t.after(async () => {
    for (const d of [fresh, target]) (await import('node:fs')).rmSync(d, { recursive: true, force: true });
  });
  const m2 = await takeStateSnapshot(env.store, cs, fresh, 'state-2');
  await assert.rejects(installSnapshot(fresh, target, { ...m2, floor: journalSeq - 1 }), /history floor is \d+, the manifest says/);
  await installSnapshot(fresh, target, m2);
  const installed = openStore({ dataDir: target });
  try {
    assert.equal(historyFloorOf(installed), journalSeq);
  } finally {
    await installed.close();
  }
});
