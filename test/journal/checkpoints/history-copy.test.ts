/**
 * The history copied back into a store made from a state snapshot (journal/checkpoints/history-copy.ts): from
 * the whole store, its orders, trades, fills, journal and history views become the source's again, the orders closed
 * before the snapshot are found by id (also after a reopen), the floor is gone and the state still proves; a
 * second copy writes nothing; another store's history is refused and a stopped copy leaves the floor.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Engine } from '../../../src/engine/engine.ts';
import { writeCheckpoint } from '../../../src/journal/checkpoints/checkpoint-writer.ts';
import { CheckpointStore } from '../../../src/journal/checkpoints/checkpoints.ts';
import { HistoryCopyError, copyHistory } from '../../../src/journal/checkpoints/history-copy.ts';
import { historyFloorOf, takeStateSnapshot } from '../../../src/journal/checkpoints/state-snapshot.ts';
import { openStore, type Store } from '../../../src/journal/env.ts';
import { HISTORY_VIEW_TAGS, metaKeys, prefixRange, walletViewKeys } from '../../../src/journal/keys.ts';
import { readOrder } from '../../../src/journal/orders.ts';
import { verifyStore } from '../../../src/journal/recovery.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { T, crossedPair, market, tempStore, wallet } from '../../fixtures/engine-harness.ts';

const rows = (s: Store, table: 'orders' | 'trades' | 'fills' | 'journal') => [...s[table].getRange({})].map(({ key, value }) => [key, value]);
const historyViews = (s: Store) => [...HISTORY_VIEW_TAGS].flatMap((tag) => [...s.views.getRange(prefixRange([tag]))].map(({ key, value }) => [key, value]));

test('the history copied from the whole store makes a state snapshot\'s store whole again, once', async (t) => {
  const env = tempStore('pm-history-copy-');
  t.after(() => env.cleanup());
  const m = market(1);
  const cross = async (e: Engine, price: number) => (await crossedPair(e, m, price)).taker;
  // History before the checkpoint (orders filled whole, CONFIRMED trades, a trade row), state after it.
  let e = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  e.registerMarket(m);
  await e.deposit(wallet(1), 1000 * T);
  await e.deposit(wallet(2), 1000 * T);
  await e.split(wallet(1), m.conditionId, 100 * T);
  const closed = [await cross(e, 4000), await cross(e, 4100)];
  await e.close();
  await env.store.views.put(walletViewKeys.tradeAll(0, 1), [0, 1, 2]);
  const cs = new CheckpointStore(join(env.dir, 'checkpoints'));
  writeCheckpoint(env.store, cs, 'auto');
  e = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  await cross(e, 5000);
  const hash = e.stateHash();
  await e.close();

  const dir = `${env.dir}-state`;
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  await takeStateSnapshot(env.store, cs, dir, 'state');
  let snap = openStore({ dataDir: dir });
  try {
    assert.ok(historyFloorOf(snap) > 0);
    assert.equal(readOrder(snap, closed[0]!), undefined);

    // Another store's history is refused; a copy stopped before its end leaves the floor.
    const other = tempStore('pm-history-copy-other-');
    t.after(() => other.cleanup());
    await (await Engine.open({ store: other.store, shards: 1, log: silentLogger })).close();
    await assert.rejects(copyHistory(other.store, snap), (err: unknown) => err instanceof HistoryCopyError && /another store/.test(err.message));
    assert.equal((await copyHistory(env.store, snap, () => true)).complete, false);
    assert.ok(historyFloorOf(snap) > 0, 'a stopped copy leaves the floor');

    const copied = await copyHistory(env.store, snap);
    assert.equal(copied.complete, true);
    assert.equal(copied.orders, 2, 'the two takers filled before the checkpoint (the makers rest: state)');
    assert.equal(historyFloorOf(snap), 0);
    assert.equal(snap.meta.get(metaKeys.journalPrunedTo) ?? 0, env.store.meta.get(metaKeys.journalPrunedTo) ?? 0, 'the retention line the source\'s journal has');
    for (const table of ['orders', 'trades', 'fills', 'journal'] as const) assert.deepEqual(rows(snap, table), rows(env.store, table), `${table}: the source's rows`);
    assert.deepEqual(historyViews(snap), historyViews(env.store), 'the history views: the source\'s');
    for (const id of closed) assert.equal(readOrder(snap, id)?.status, 'MATCHED', 'found by id at once');
    assert.deepEqual(await copyHistory(env.store, snap), { rows: 0, orders: 0, complete: true }, 'nothing more to copy');
    assert.equal(verifyStore(snap, { checkpoints: new CheckpointStore(join(dir, 'checkpoints')) }).hash, hash, 'the state still proves');
  } finally {
    await snap.close();
  }
  // The ids' run is stored: a reopened store finds them too.
  snap = openStore({ dataDir: dir });
  try {
    for (const id of closed) assert.equal(readOrder(snap, id)?.orderId, id);
  } finally {
    await snap.close();
  }

  // The follower's retention moves its line while a copy runs: the copy leaves that line where it is.
  const dir2 = `${env.dir}-state2`;
  t.after(() => rmSync(dir2, { recursive: true, force: true }));
  await takeStateSnapshot(env.store, cs, dir2, 'state');
  const snap2 = openStore({ dataDir: dir2 });
  try {
    const moved = (snap2.meta.get(metaKeys.journalPrunedTo) as number) + 1;
    const copied = await copyHistory(env.store, snap2, () => (snap2.meta.putSync(metaKeys.journalPrunedTo, moved), false));
    assert.equal(copied.complete, true);
    assert.equal(historyFloorOf(snap2), 0);
    assert.equal(snap2.meta.get(metaKeys.journalPrunedTo), moved, 'the line retention moved, not lowered under it');
  } finally {
    await snap2.close();
  }
});
