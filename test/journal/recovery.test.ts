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

/** A store with one deferred trade in each unsettled status and one of each final status. */
async function settlingStore() {
  const env = tempStore('pm-recovery-');
  const { ManualClock } = await import('../../src/runtime/clock.ts');
  const clock = new ManualClock();
  const e = await Engine.open({
    store: env.store,
    shards: 1,
    log: silentLogger,
    now: () => clock.now(),
    timers: clock.timers,
    trades: { minedDelayMs: 1_000, confirmedDelayMs: 1_000, retryingShare: 0, retryDelayMs: 0, failedShare: 0, seed: 1 },
  });
  const m = market(1, { takerFeeBps: 100 });
  e.registerMarket(m);
  await e.deposit(wallet(1), 100 * T);
  await e.split(wallet(1), m.conditionId, 50 * T);
  await e.deposit(wallet(2), 100 * T);
  await e.placeOrder(order({ wallet: wallet(1), tokenId: m.tokenIds[0], side: 'SELL', price: 5000, size: 30 * T }));
  const buy = () => e.placeOrder(order({ wallet: wallet(2), tokenId: m.tokenIds[0], side: 'BUY', price: 5000, size: 1 * T }));
  await buy();
  clock.advance(1_000); // the first MINED
  await buy();
  await e.afterCommit();
  clock.advance(1_000); // the first CONFIRMED, the second MINED
  await buy(); // the third MATCHED
  await e.afterCommit();
  const hash = e.stateHash();
  await e.close();
  return { env, hash };
}

test('trades still settling are in the state hash: the trades table and the replay agree, a row that drifts stops start-up', async () => {
  const { env, hash } = await settlingStore();
  try {
    const replay = replayJournal(env.store);
    const tables = canonicalOfTables(loadMaterialized(env.store));
    assert.deepEqual([...(replay.state.trades ?? new Map()).values()].sort(), ['MATCHED', 'MINED']);
    assert.equal(hashState(replay.state), hashState(tables));
    assert.equal(verifyStore(env.store).hash, hash);
    // A MATCHED trade the table calls MINED: the proceeds would be spendable; the journal says not.
    const [seq] = [...replay.state.trades!].find(([, s]) => s === 'MATCHED')!;
    env.store.trades.putSync(seq, [1, 0]);
    await assert.rejects(Engine.open({ store: env.store, shards: 1, log: silentLogger }), /refusing to start: state hash of the tables .* differs from the journal replay .*; tables have "T 0+\d+ MINED" which the journal does not/);
  } finally {
    await env.cleanup();
  }
});

test('a trade event the journal cannot place stops start-up', async () => {
  const { env } = await settlingStore();
  try {
    const last = env.store.meta.get('journalSeq') as number;
    env.store.journal.putSync(last + 1, { type: 'trade', seq: last + 1, ts: 0, tradeId: '0x', fillSeq: 1, status: 'MINED', conditionId: '', takerWallet: '', makerWallet: '', takerOwner: '', makerOwner: '' });
    env.store.meta.putSync('journalSeq', last + 1);
    await assert.rejects(Engine.open({ store: env.store, shards: 1, log: silentLogger }), /journal seq \d+: trade of fill 1 which is not settling/);
  } finally {
    await env.cleanup();
  }
});
