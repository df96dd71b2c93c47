/**
 * Recovery: the tables and the journal replay agree after real trading; a store whose tables and
 * journal disagree (or whose journal has a gap) is refused at start-up with a clear message. From a
 * checkpoint: the same state as from the journal's start, older checkpoints and then the whole journal when
 * one cannot be used, never a state the journal does not prove.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Engine } from '../../src/engine/engine.ts';
import { writeCheckpoint } from '../../src/journal/checkpoints/checkpoint-writer.ts';
import { CheckpointStore, type CheckpointState } from '../../src/journal/checkpoints/checkpoints.ts';
import { balanceKey } from '../../src/journal/keys.ts';
import { journalEventOf } from '../../src/journal/codecs/order-codec.ts';
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

// ---- from a checkpoint (journal/checkpoints/checkpoints.ts, issue 42) -------------------------------------------------

/**
 * A store traded in two parts, a checkpoint written between them (and one at the start of the second part's
 * settling trades): the proof from the checkpoint and the proof from the journal's start meet the same state.
 */
async function checkpointedStore() {
  const { env } = await settlingStore();
  const cs = new CheckpointStore(join(env.dir, 'checkpoints'));
  const first = writeCheckpoint(env.store, cs, 'auto');
  assert.equal(first.replayed, first.seq, 'no checkpoint yet: the first one replays the whole journal');
  // More trading after it: a new market, fills of orders that rested before the checkpoint (settling trades
  // whose rows lie after the checkpoint's seq), a cancel, a deposit.
  const { ManualClock } = await import('../../src/runtime/clock.ts');
  const clock = new ManualClock(Date.UTC(2026, 0, 2));
  const trades = { minedDelayMs: 1_000, confirmedDelayMs: 1_000, retryingShare: 0, retryDelayMs: 0, failedShare: 0, seed: 1 };
  const e = await Engine.open({ store: env.store, shards: 1, log: silentLogger, checkpoints: cs, now: () => clock.now(), timers: clock.timers, trades });
  const m = market(2);
  e.registerMarket(m);
  await e.deposit(wallet(3), 50 * T);
  await e.split(wallet(3), m.conditionId, 20 * T);
  const rest = await e.placeOrder(order({ wallet: wallet(3), tokenId: m.tokenIds[1], side: 'SELL', price: 6000, size: 10 * T }));
  await e.placeOrder(order({ wallet: wallet(2), tokenId: m.tokenIds[1], side: 'BUY', price: 6000, size: 4 * T }));
  const open = e.openOrders(wallet(1));
  assert.ok(open.length > 0, 'an order resting since before the checkpoint');
  await e.placeOrder(order({ wallet: wallet(2), tokenId: open[0]!.tokenId, side: 'BUY', price: open[0]!.pricePips, size: 2 * T }));
  await e.cancelOrders(wallet(3), [rest.orderId]);
  // And one that rests after the checkpoint (its row lies after the checkpoint's seq).
  const resting = await e.placeOrder(order({ wallet: wallet(3), tokenId: m.tokenIds[1], side: 'SELL', price: 7000, size: 3 * T }));
  assert.ok(resting.ok && e.getOrder(resting.orderId)?.status === 'LIVE');
  const hash = e.stateHash();
  await e.close();
  return { env, cs, first, hash };
}

test('start-up from a checkpoint proves the same state as the whole journal, reading only what followed it', async () => {
  const { env, cs, first, hash } = await checkpointedStore();
  try {
    const full = verifyStore(env.store);
    const fromCkpt = verifyStore(env.store, { checkpoints: cs });
    assert.equal(full.from, undefined);
    assert.equal(fromCkpt.from?.seq, first.seq);
    assert.equal(fromCkpt.hash, full.hash, 'one state hash whichever path proves it');
    assert.equal(fromCkpt.hash, hash, 'and it is the engine\'s at its close');
    assert.equal(fromCkpt.events, full.events - first.seq, 'only the events after the checkpoint were replayed');
    assert.deepEqual(fromCkpt.materialized, full.materialized, 'the same tables: open orders, balances, markets, settling trades');
    assert.deepEqual([...fromCkpt.lastTrades].sort(), [...full.lastTrades].sort());
    assert.deepEqual(fromCkpt.proven(), full.proven(), 'and the same state to checkpoint next');
    // The engine started either way holds that state.
    const e = await Engine.open({ store: env.store, shards: 1, log: silentLogger, checkpoints: cs });
    assert.equal(e.stateHash(), hash);
    assert.deepEqual(e.checkLedger(), []);
    await e.close();
  } finally {
    await env.cleanup();
  }
});

test('a damaged newest checkpoint: the older one is used; every one damaged: the whole journal; a pruned journal without one: refused', async () => {
  const { env, cs, hash } = await checkpointedStore();
  try {
    const second = writeCheckpoint(env.store, cs, 'auto');
    assert.ok(second.from !== undefined && second.replayed > 0);
    const [newest, older] = cs.list();
    const flip = (file: string) => {
      const b = readFileSync(file);
      b[Math.floor(b.length / 2)]! ^= 0x04;
      writeFileSync(file, b);
    };
    flip(newest!.file);
    const skipped: string[] = [];
    const v = verifyStore(env.store, { checkpoints: cs, skipped: (e, why) => skipped.push(`${e.seq}: ${why}`) });
    assert.equal(v.from?.seq, older!.seq, 'the older checkpoint');
    assert.equal(v.hash, hash);
    assert.equal(skipped.length, 1);
    assert.match(skipped[0]!, /digest mismatch/);

    flip(older!.file);
    const w = verifyStore(env.store, { checkpoints: cs });
    assert.equal(w.from, undefined, 'the whole journal');
    assert.equal(w.hash, hash);

    env.store.meta.putSync('journal:prunedTo', 3);
    assert.throws(() => verifyStore(env.store, { checkpoints: cs }), /refusing to start: the journal was pruned up to seq 3 and no checkpoint proves the tables \(checkpoint auto at seq \d+: .*digest mismatch/);
  } finally {
    await env.cleanup();
  }
});

test('a checkpoint that does not prove the tables is passed over: another store\'s, a state that is not its hash\'s, a state the tables disagree with', async () => {
  const { env, cs, first, hash } = await checkpointedStore();
  try {
    const good = cs.load(cs.list()[0]!);
    const { v: _v, ...h } = good.header;
    // Taken from another store.
    const foreign = new CheckpointStore(join(env.dir, 'foreign'));
    foreign.write({ ...h, store: 'ff'.repeat(24) }, good.state);
    // A balance changed and the header's hash kept.
    const richer = structuredClone(good.state);
    richer.balances[0]![2] += 1;
    const unhashed = new CheckpointStore(join(env.dir, 'unhashed'));
    unhashed.write(h, richer);
    // A balance changed and its hash recomputed: only the tables can tell.
    const wrong = new CheckpointStore(join(env.dir, 'wrong'));
    wrong.write({ ...h, stateHash: hashOfCheckpoint(richer) }, richer);
    for (const [what, store, why] of [
      ['another store', foreign, /taken from another store/],
      ['not its hash', unhashed, /does not reproduce its state hash/],
      ['tables disagree', wrong, /state hash of the tables .* differs/],
    ] as const) {
      const skipped: string[] = [];
      const v = verifyStore(env.store, { checkpoints: store, skipped: (_e, w) => skipped.push(w) });
      assert.equal(v.from, undefined, `${what}: the whole journal instead`);
      assert.equal(v.hash, hash, what);
      assert.equal(skipped.length, 1, what);
      assert.match(skipped[0]!, why, what);
    }
    assert.equal(first.seq, good.header.seq);
    // And damage in the tables is found from a checkpoint as from the journal's start.
    const k = balanceKey(wallet(2), 'USDC');
    env.store.balances.putSync(k, (env.store.balances.get(k) as number) + 1);
    assert.throws(() => verifyStore(env.store, { checkpoints: cs }), /refusing to start: state hash of the tables .* differs from the journal replay .*\(and no checkpoint proves the tables: checkpoint auto at seq \d+: refusing to start: state hash of the tables/);
  } finally {
    await env.cleanup();
  }
});

/** The state hash a checkpoint's state stands for (what its header must carry). */
function hashOfCheckpoint(s: CheckpointState): string {
  const balances = new Map(s.balances.map(([w, a, held]) => [`${w}\u0000${a}`, held]));
  return hashState({
    balances,
    openOrders: s.open.map(([seq, remaining, ev]) => {
      const e = journalEventOf(ev, seq) as { conditionId: string; orderId: string };
      return { conditionId: e.conditionId, seq, orderId: e.orderId, remaining };
    }),
    markets: new Map(s.markets),
    netDeposits: s.netDeposits,
    trades: new Map(s.settling.map(([status, f]) => [f.seq, status])),
  });
}
