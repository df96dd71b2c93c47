/**
 * Recovery: the tables and the journal replay agree after real trading; a store whose tables and
 * journal disagree (or whose journal has a gap) is refused at start-up with a clear message.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../../src/engine/engine.ts';
import { balanceKey } from '../../src/journal/keys.ts';
import { canonicalOfTables, hashState, loadMaterialized, replayJournal, verifyStore } from '../../src/journal/recovery.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { T, market, order, tempStore, wallet } from '../fixtures/engine-harness.ts';

async function tradedStore() {
  const env = tempStore('pm-recovery-');
  const e = await Engine.open({ store: env.store, shards: 2, log: silentLogger });
  const ms = [market(1, { takerFeeBps: 150 }), market(2)];
  for (const m of ms) e.registerMarket(m);
  for (let w = 1; w <= 3; w++) {
    await e.deposit(wallet(w), 500 * T);
    await e.split(wallet(w), ms[0].conditionId, 50 * T);
  }
  const rs = [];
  for (let i = 0; i < 120; i++) {
    const m = ms[i % 2];
    rs.push(e.placeOrder(order({ wallet: wallet(1 + (i % 3)), tokenId: m.tokenIds[(i >> 1) % 2], side: i % 5 < 2 ? 'SELL' : 'BUY', price: 4000 + 100 * (i % 20), size: T * (1 + (i % 4)) })));
  }
  await Promise.all(rs);
  await e.resolveMarket(ms[1].conditionId, 1);
  await e.redeem(wallet(2), ms[1].conditionId);
  await e.withdraw(wallet(3), 10 * T);
  const hash = e.stateHash();
  await e.close();
  return { env, hash };
}

test('replayJournal reproduces the tables and the engine state hash', async () => {
  const { env, hash } = await tradedStore();
  try {
    const replay = replayJournal(env.store);
    const tables = canonicalOfTables(loadMaterialized(env.store));
    assert.equal(hashState(replay.state), hashState(tables));
    assert.equal(hashState(tables), hash);
    assert.equal(verifyStore(env.store).hash, hash);
    assert.ok(replay.events > 200);
  } finally {
    await env.cleanup();
  }
});

test('a balance table that disagrees with the journal stops start-up', async () => {
  const { env } = await tradedStore();
  try {
    const k = balanceKey(wallet(1), 'USDC');
    env.store.balances.putSync(k, (env.store.balances.get(k) as number) + 1);
    await assert.rejects(Engine.open({ store: env.store, shards: 1, log: silentLogger }), /refusing to start: state hash of the tables .* differs from the journal replay/);
  } finally {
    await env.cleanup();
  }
});

test('a gap in the journal stops start-up', async () => {
  const { env } = await tradedStore();
  try {
    env.store.journal.removeSync(5);
    await assert.rejects(Engine.open({ store: env.store, shards: 1, log: silentLogger }), /journal gap: seq 6 follows 4/);
  } finally {
    await env.cleanup();
  }
});
