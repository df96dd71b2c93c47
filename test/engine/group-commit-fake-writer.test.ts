/**
 * Group commit against a journal writer the test controls (test/engine/group-commit.test.ts drives the
 * same module through the engine and LMDB): answers wait for the batch that holds what was journaled
 * before them, one batch is in flight at a time and what came meanwhile leaves as the next, a failed
 * commit halts with PM_ERR_JOURNAL answers, and a halt answers whatever still waits PM_ERR_ENGINE_DOWN.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Errors } from '../../src/domain/errors.ts';
import type { JournalEvent } from '../../src/domain/events.ts';
import type { FlushResult } from '../../src/journal/writer.ts';
import { USDC_ASSET } from '../../src/journal/keys.ts';
import type { CancelResponse, OpResult, PlaceResponse } from '../../src/engine/engine-types.ts';
import { GroupCommit, type CommitWriter } from '../../src/engine/group-commit.ts';
import { Lifecycle } from '../../src/engine/lifecycle.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { T, order, parts, record, type Parts } from './engine-parts.ts';

/** Batches it was asked to commit, each durable when the test says so. */
class FakeWriter implements CommitWriter {
  readonly rows: string[] = [];
  readonly batches: Array<{ events: JournalEvent[]; rows: string[]; lastSeq: number; commit: () => void; fail: (e: Error) => void }> = [];
  private seq = 0;
  private events: JournalEvent[] = [];
  private batchRows: string[] = [];

  append(type: string): void {
    this.events.push({ type: 'deposit', seq: ++this.seq, ts: 0, wallet: type, amount: 1 } as JournalEvent);
  }
  putBalance(wallet: string, asset: string, held: number): void {
    this.batchRows.push(`balance ${wallet.slice(0, 4)} ${asset === USDC_ASSET ? 'usdc' : asset} ${held}`);
  }
  putNetDeposits(units: number): void {
    this.batchRows.push(`netDeposits ${units}`);
  }
  get pending(): boolean {
    return this.events.length > 0 || this.batchRows.length > 0;
  }
  flush(): FlushResult | undefined {
    if (this.events.length === 0 && this.batchRows.length === 0) return undefined;
    let commit!: () => void;
    let fail!: (e: Error) => void;
    const committed = new Promise<void>((resolve, reject) => ((commit = resolve), (fail = reject)));
    const batch = { events: this.events, rows: this.batchRows, lastSeq: this.seq, commit, fail };
    this.batches.push(batch);
    this.rows.push(...this.batchRows);
    this.events = [];
    this.batchRows = [];
    return { committed, events: batch.events, lastSeq: batch.lastSeq };
  }
}

function setup(): { p: Parts; w: FakeWriter; life: Lifecycle; commit: GroupCommit; durations: number[] } {
  const p = parts();
  const w = new FakeWriter();
  const life = new Lifecycle(silentLogger);
  const durations: number[] = [];
  const commit = new GroupCommit({ writer: w, committedSeq: 0, ledger: p.ledger, orders: p.orders, life, log: silentLogger, onCommit: (s) => durations.push(s) });
  life.onHalt(() => commit.answerDown());
  return { p, w, life, commit, durations };
}

const turn = () => new Promise((r) => setImmediate(r));

function answered<T>(answers: string[], name: string): (v: T) => void {
  return () => answers.push(name);
}

test('answers wait for their batch; a batch in flight makes later turns wait and leave together, in order', async () => {
  const { w, commit, durations } = setup();
  const answers: string[] = [];
  const seen: number[][] = [];
  commit.onCommitted((events) => seen.push(events.map((e) => e.seq)));

  w.append('a');
  commit.ack(answered(answers, 'a'), { ok: true, code: 0 });
  await turn();
  assert.equal(w.batches.length, 1, 'one flush at the end of the turn');
  assert.deepEqual(answers, [], 'not before the commit');

  for (const name of ['b', 'c']) {
    w.append(name);
    commit.ack(answered(answers, name), { ok: true, code: 0 });
    await turn();
  }
  assert.equal(w.batches.length, 1, 'b and c wait in the writer while the first batch is in flight');
  w.batches[0].commit();
  await turn();
  assert.deepEqual(answers, ['a'], 'the first batch answers only its own');
  assert.equal(commit.committedSeq, 1);
  assert.equal(w.batches.length, 2, 'what waited leaves as one batch the moment the first is durable');
  assert.deepEqual(w.batches[1].events.map((e) => e.seq), [2, 3]);
  w.batches[1].commit();
  await commit.drain();
  assert.deepEqual(answers, ['a', 'b', 'c']);
  assert.equal(commit.committedSeq, 3);
  assert.deepEqual(seen, [[1], [2, 3]], 'listeners see each durable batch, in journal order');
  assert.equal(durations.length, 2);
});

test('riders are called right before a batch is issued (so their puts join its transaction), never for an empty flush', async () => {
  const { w, commit } = setup();
  const calls: string[] = [];
  commit.beforeFlush(() => calls.push(`ride before batch ${w.batches.length + 1}`));
  commit.beforeFlush(() => {
    throw new Error('a failing rider');
  });
  assert.deepEqual(await commit.afterCommit(), { ok: true, code: 0 });
  assert.deepEqual(calls, [], 'nothing journaled: no batch, no ride');
  w.append('a');
  const answers: string[] = [];
  commit.ack(answered(answers, 'a'), { ok: true, code: 0 });
  await turn();
  assert.deepEqual(calls, ['ride before batch 1'], 'called once, before the batch was issued');
  assert.equal(w.batches.length, 1, 'a failing rider does not stop the batch');
  w.batches[0].commit();
  await commit.drain();
  assert.deepEqual(answers, ['a']);
});

test('with nothing to commit an answer comes in the same flush; afterCommit waits for what was journaled before it', async () => {
  const { w, commit } = setup();
  assert.deepEqual(await commit.afterCommit(), { ok: true, code: 0 });
  assert.equal(w.batches.length, 0);
  w.append('x');
  let done = false;
  const after = commit.afterCommit().then((r) => ((done = true), r));
  await turn();
  assert.equal(done, false);
  w.batches[0].commit();
  assert.deepEqual(await after, { ok: true, code: 0 });
});

test('a batch carries the balance rows its turn changed and the net deposits, once', async () => {
  const { p, w, commit } = setup();
  const A = '0x' + 'a'.repeat(40);
  p.ledger.deposit(A, 5 * T);
  commit.netDepositsChanged();
  commit.scheduleFlush();
  await turn();
  assert.deepEqual(w.batches[0].rows, ['balance 0xaa usdc 5000000', `netDeposits ${5 * T}`]);
  w.batches[0].commit();
  await commit.drain();
  commit.scheduleFlush();
  await turn();
  assert.equal(w.batches.length, 1, 'nothing changed since: nothing to put');
});

test('a finished order stays readable until the batch holding its final state is durable', async () => {
  const { p, w, commit } = setup();
  const o = order(p, record({ wallet: '0x' + 'b'.repeat(40) }));
  p.orders.untrack(o);
  p.orders.finished(o.rec);
  w.append('status');
  commit.scheduleFlush();
  await turn();
  assert.equal(p.orders.recentOf(o.rec.orderId), o.rec);
  w.batches[0].commit();
  await commit.drain();
  assert.equal(p.orders.recentOf(o.rec.orderId), undefined);
});

test('a failed commit halts: its answers become PM_ERR_JOURNAL, later ones PM_ERR_ENGINE_DOWN, nothing more is flushed', async () => {
  const { w, life, commit } = setup();
  const got: unknown[] = [];
  w.append('1');
  commit.ack((v: PlaceResponse) => got.push(v), { ok: true, code: 0, orderId: '0xp', status: 'live', makingAmount: 0, takingAmount: 0, tradeIds: [] } as PlaceResponse);
  commit.ack((v: CancelResponse) => got.push(v), { canceled: ['0xc'], notCanceled: { '0xd': 'order not found' } });
  commit.ack((v: OpResult) => got.push(v), { ok: true, code: 0 });
  await turn();
  w.append('2');
  const later: unknown[] = [];
  commit.ack((v: OpResult) => later.push(v), { ok: true, code: 0 });
  await turn();
  w.batches[0].fail(new Error('disk full'));
  await commit.drain();
  assert.equal(life.halted?.message, 'disk full');
  const journal = Errors.PM_ERR_JOURNAL;
  assert.deepEqual(got, [
    { ok: false, code: journal.result, orderId: '0xp', status: 'canceled', makingAmount: 0, takingAmount: 0, tradeIds: [] },
    { canceled: [], notCanceled: { '0xd': 'order not found', '0xc': journal.message } },
    { ok: false, code: journal.result },
  ]);
  assert.deepEqual(later, [{ ok: false, code: Errors.PM_ERR_ENGINE_DOWN.result }]);
  assert.equal(w.batches.length, 1, 'the batch that waited is never sent');
  assert.deepEqual(await commit.afterCommit(), { ok: false, code: Errors.PM_ERR_ENGINE_DOWN.result });
});
