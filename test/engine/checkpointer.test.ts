/**
 * The checkpointer (engine/checkpointer.ts) with its worker thread, on an engine that keeps trading: the
 * policy writes checkpoints while orders commit (each one a proof of a consistent snapshot), keeps the newest
 * `keep`, and retention then archives the journal below the oldest; what the API reads of old orders stays;
 * a named checkpoint is kept apart; a stop writes one at the last seq; and the engine restarted from the
 * checkpoints holds the state it had, without reading the pruned journal.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Checkpointer, type CheckpointPolicy } from '../../src/engine/checkpointer.ts';
import { AUTO_NAME } from '../../src/journal/checkpoints/checkpoints.ts';
import { Engine } from '../../src/engine/engine.ts';
import { metaKeys } from '../../src/journal/keys.ts';
import { readOrder } from '../../src/journal/orders.ts';
import { verifyStore } from '../../src/journal/recovery.ts';
import { listArchives, readArchive } from '../../src/journal/retention.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { T, invariants, market, order, tempStore, until, wallet } from '../fixtures/engine-harness.ts';

const policy: CheckpointPolicy = { everyEvents: 60, everySeconds: 3600, keep: 2, onShutdown: true, retention: 'archive', archiveDir: '' };

test('checkpoints by policy while trading, retention below the oldest kept, a named one, one at the stop, a restart from them', async (t) => {
  const env = tempStore('pm-checkpointer-');
  t.after(() => env.cleanup());
  let engine = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  const journaled: number[] = [];
  engine.onCommitted((events) => journaled.push(...events.map((e) => e.seq)));
  const cp = new Checkpointer({ store: env.store, policy, log: silentLogger, committedSeq: () => engine.committedSeq });
  cp.start();
  const m = market(1);
  engine.registerMarket(m);
  for (let w = 1; w <= 4; w++) {
    await engine.deposit(wallet(w), 1_000 * T);
    await engine.split(wallet(w), m.conditionId, 200 * T);
  }
  const first = await engine.placeOrder(order({ wallet: wallet(1), tokenId: m.tokenIds[0], side: 'BUY', price: 3000, size: 5 * T }));
  assert.ok(first.ok);
  // Orders keep committing while the worker proves snapshots of the store.
  let i = 0;
  const trade = async () => {
    const r = await engine.placeOrder(order({ wallet: wallet(1 + (i % 4)), tokenId: m.tokenIds[i % 2], side: i % 4 < 2 ? 'SELL' : 'BUY', price: 4900 + 100 * (i % 3), size: T * (1 + (i % 2)) }));
    assert.ok(r.ok, `order ${i}: ${r.code}`);
    i++;
  };
  // Three rounds: orders enough for the policy, then the checkpoint it writes (the worker proves while the
  // next round's first orders commit).
  for (let round = 1; round <= 3; round++) {
    for (let k = 0; k < 40; k++) await trade();
    await until(() => cp.stats().written >= round || cp.stats().failures > 0, 60_000);
  }
  assert.equal(cp.stats().failures, 0);
  const autos = cp.checkpoints.list().filter((e) => e.name === 'auto');
  assert.equal(autos.length, 2, 'the newest `keep` automatic checkpoints');

  // A named checkpoint, apart from the policy's and never pruned by it.
  const named = await cp.write('before-test');
  assert.ok(named.entry !== undefined && named.from !== undefined, 'proved from the newest automatic one');
  assert.ok(named.replayed < named.seq);

  // Retention (after each automatic checkpoint, and once more here: nothing new to do): everything below the
  // oldest kept automatic checkpoint has left the journal but the order events.
  await cp.retain();
  const line = cp.retentionLine();
  assert.equal(cp.stats().prunedTo, line);
  assert.equal(line, autos[1]!.seq);
  assert.equal(env.store.meta.get(metaKeys.journalPrunedTo), line);
  const left = [...env.store.journal.getRange({ end: line + 1 })].map(({ value }) => (value instanceof Uint8Array ? value[0] : -1));
  assert.ok(left.length > 0 && left.every((k) => k === 1), 'only order records are left below the line');
  assert.equal(readOrder(env.store, first.orderId)?.orderId, first.orderId, 'an old order still reads by id');
  const archives = listArchives(join(env.dir, 'archive'));
  assert.equal(archives[0]!.from, 1);
  for (let k = 1; k < archives.length; k++) assert.equal(archives[k]!.from, archives[k - 1]!.to + 1, 'archives follow each other');
  assert.equal(archives[archives.length - 1]!.to, line);
  const archived = archives.flatMap((a) => readArchive(a.file).events.map((e) => e.seq));
  assert.deepEqual(archived, journaled.filter((q) => q <= line), 'the archives hold every event that left, in order');

  // A stop writes a checkpoint at the last seq; the restart replays nothing and holds the same state.
  for (let k = 0; k < 7; k++) await trade();
  const hash = engine.stateHash();
  const lastSeq = engine.committedSeq;
  await engine.close();
  await cp.close();
  assert.equal(cp.checkpoints.list().find((e) => e.name === 'auto')!.seq, lastSeq);
  assert.throws(() => verifyStore(env.store), /journal was pruned up to seq/, 'the whole journal can no longer prove the store');
  engine = await Engine.open({ store: env.store, shards: 1, log: silentLogger, checkpoints: cp.checkpoints });
  const proof = engine.takeStartupProof()!;
  assert.equal(proof.from?.seq, lastSeq);
  assert.equal(proof.events, 0);
  assert.equal(engine.stateHash(), hash);
  assert.deepEqual(invariants(engine), []);
  await engine.close();
});

test('a store about to be replaced (discard, a sandbox revert) gets no checkpoint at the stop', async (t) => {
  const env = tempStore('pm-checkpointer-discard-');
  t.after(() => env.cleanup());
  const engine = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  const cp = new Checkpointer({ store: env.store, policy, log: silentLogger, committedSeq: () => engine.committedSeq });
  const m = market(1);
  engine.registerMarket(m);
  await engine.deposit(wallet(1), 1_000 * T);
  cp.discard();
  await engine.close();
  await cp.close();
  assert.deepEqual(cp.checkpoints.list(), [], 'none at the stop');
});

test('a standby\'s kept replication log is cut at the rseq of the oldest kept checkpoint', async (t) => {
  const env = tempStore('pm-checkpointer-log-');
  t.after(() => env.cleanup());
  const engine = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  const m = market(1);
  engine.registerMarket(m);
  await engine.deposit(wallet(1), 10 * T);
  await engine.close();
  // As a standby's store holds them: the records it applied, and where it stands.
  for (let r = 1; r <= 50; r++) env.store.replication.putSync(r, { t: r });
  const cp = new Checkpointer({ store: env.store, policy: { ...policy, retention: 'keep', keep: 1 }, log: silentLogger, committedSeq: () => engine.committedSeq, pruneLog: true });
  env.store.meta.putSync(metaKeys.replicaAppliedRseq, 30);
  await cp.write('auto');
  assert.equal(cp.checkpoints.header(cp.checkpoints.list()[0]!).rseq, 30, 'the checkpoint names the rseq it stands at');
  await cp.retain();
  assert.deepEqual([...env.store.replication.getKeys({})], Array.from({ length: 20 }, (_, i) => 31 + i), 'records up to it are gone, the rest stay');
  await cp.close();
});

/** The nice value and scheduling policy of each of this process's threads (Linux /proc: fields 19 and 41 of a task's stat). */
function threadPriorities(): Map<number, { nice: number; policy: number }> {
  const out = new Map<number, { nice: number; policy: number }>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(Number(tid), { nice: Number(rest[16]), policy: Number(rest[38]) });
  }
  return out;
}

/** Linux's SCHED_IDLE policy number. */
const SCHED_IDLE = 5;
const hasChrt = spawnSync('chrt', ['--version']).status === 0;

test('the checkpoint thread runs at the lowest CPU priority (SCHED_IDLE, nice 19), the rest of the process at its own', {
  skip: !existsSync('/proc/thread-self') ? 'needs Linux /proc' : !hasChrt ? 'needs chrt (Debian package util-linux)' : false,
}, async (t) => {
  const env = tempStore('pm-checkpointer-nice-');
  const engine = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  const before = threadPriorities();
  const cp = new Checkpointer({ store: env.store, policy, log: silentLogger, committedSeq: () => engine.committedSeq });
  t.after(async () => {
    await cp.close();
    await engine.close();
    await env.cleanup();
  });
  await engine.deposit(wallet(1), 10 * T);
  await cp.write('nice');
  const after = threadPriorities();
  const lowered = [...after].filter(([tid, p]) => !before.has(tid) && (p.nice === 19 || p.policy === SCHED_IDLE));
  assert.equal(lowered.length, 1, `one new thread lowered: ${JSON.stringify([...after])}`);
  assert.deepEqual(lowered[0]![1], { nice: 19, policy: SCHED_IDLE }, 'that thread is at nice 19 under SCHED_IDLE');
  assert.deepEqual(after.get(process.pid), before.get(process.pid), 'the main thread keeps its priority');
  assert.ok([...before].every(([tid, p]) => !after.has(tid) || JSON.stringify(after.get(tid)) === JSON.stringify(p)), 'no other thread changed');
});

test('a retention round whose line a backfill lowered under it removes nothing, keeps no file, and leaves the lower line', async (t) => {
  const env = tempStore('pm-checkpointer-lowered-');
  const engine = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  const cp = new Checkpointer({ store: env.store, policy, log: silentLogger, committedSeq: () => engine.committedSeq });
  t.after(async () => {
    await cp.close();
    await engine.close();
    await env.cleanup();
  });
  const step = async () => {
    for (let k = 0; k < 5; k++) await engine.deposit(wallet(1), T);
    await cp.write(AUTO_NAME);
  };
  await step();
  await step();
  await cp.retain();
  const from = env.store.meta.get(metaKeys.journalPrunedTo) as number;
  assert.ok(from > 0);
  await step();
  await step();
  const line = cp.retentionLine();
  assert.ok(line > from);
  const round = cp.retain();
  // What history-copy.ts's last transaction does while the round archives (from, line].
  env.store.meta.putSync(metaKeys.journalPrunedTo, from - 1);
  await round;
  assert.equal(env.store.meta.get(metaKeys.journalPrunedTo), from - 1, 'the lowered line stands');
  assert.deepEqual(listArchives(join(env.dir, 'archive')).map((a) => a.to), [from], 'no file for the round given up');
  for (let seq = from + 1; seq <= line; seq++) assert.notEqual(env.store.journal.get(seq), undefined, `event ${seq} still in the journal`);
});
