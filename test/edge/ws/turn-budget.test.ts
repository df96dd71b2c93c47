/**
 * The sockets' messages within a share of each turn (src/edge/ws/turn-budget.ts), on a clock the test moves:
 * a message runs at once while the turn has budget left, then waits for a later turn, and each later turn
 * runs waiting messages up to the budget; a key's messages keep their order, so one with a message waiting
 * waits even when the rest run at once; what waits is bounded in bytes (a message that would pass the bound
 * first has the oldest run, in order), under a flood too; what a waiting message throws goes to `failed`, and
 * the rest still run.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TurnBudget } from '../../../src/edge/ws/turn-budget.ts';

const turn = () => new Promise<void>((r) => setImmediate(r));

/** A budget of 2 ms on a clock each message moves by `cost` ms; messages of 100 bytes; what ran, in order. */
function harness(maxWaitingBytes = 10_000) {
  let clock = 0;
  const ran: string[] = [];
  const failures: unknown[] = [];
  const budget = new TurnBudget<string>(2, maxWaitingBytes, (e) => failures.push(e), () => clock);
  const submit = (key: string, label: string, cost = 1) =>
    budget.submit(key, 100, () => {
      clock += cost;
      ran.push(label);
    });
  return { budget, ran, failures, submit, fail: (key: string) => budget.submit(key, 100, () => { clock += 1; throw new Error(`boom ${key}`); }) };
}

test('within the turn\'s budget at once; past it, in later turns, each up to the budget, in order', async () => {
  const h = harness();
  for (let i = 0; i < 7; i++) h.submit(`s${i}`, `m${i}`);
  assert.deepEqual(h.ran, ['m0', 'm1'], 'two 1 ms messages spend the 2 ms');
  assert.deepEqual(h.budget.waiting, { messages: 5, bytes: 500 });
  await turn();
  assert.deepEqual(h.ran, ['m0', 'm1', 'm2', 'm3']);
  await turn();
  await turn();
  assert.deepEqual(h.ran, ['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6']);
  assert.deepEqual(h.budget.waiting, { messages: 0, bytes: 0 });
  await turn();
  h.submit('s9', 'fresh');
  assert.deepEqual(h.ran.at(-1), 'fresh', 'a new turn has its budget back');
});

test('waiting messages run in the order they came, over as many turns as their cost takes', async () => {
  const h = harness();
  h.submit('a', 'a1', 3);
  h.submit('b', 'b1');
  assert.deepEqual(h.ran, ['a1']);
  await turn();
  assert.deepEqual(h.ran, ['a1', 'b1']);
  await turn();
  h.submit('c', 'c1', 3);
  h.submit('b', 'b2');
  h.submit('b', 'b3');
  h.submit('d', 'd1');
  assert.deepEqual(h.ran, ['a1', 'b1', 'c1']);
  await turn();
  // The next turn's 2 ms: b2 and b3; d1 in the one after.
  assert.deepEqual(h.ran, ['a1', 'b1', 'c1', 'b2', 'b3']);
  await turn();
  assert.deepEqual(h.ran, ['a1', 'b1', 'c1', 'b2', 'b3', 'd1']);
});

test('a key with a message waiting waits behind it; past the bytes bound the oldest run at once, in order', async () => {
  const h = harness(200);
  h.submit('a', 'a1', 5);
  h.submit('b', 'b1');
  h.submit('c', 'c1');
  assert.deepEqual(h.ran, ['a1'], 'b1 and c1 wait: 200 bytes, the bound');
  h.submit('d', 'd1');
  assert.deepEqual(h.ran, ['a1', 'b1'], 'd1 would pass the bound: b1, the oldest, runs first, and d1 waits');
  h.submit('c', 'c2');
  assert.deepEqual(h.ran, ['a1', 'b1', 'c1'], 'c2 behind c1, which runs to make room');
  assert.deepEqual(h.budget.waiting, { messages: 2, bytes: 200 });
  await turn();
  await turn();
  assert.deepEqual(h.ran, ['a1', 'b1', 'c1', 'd1', 'c2']);
});

test('a flood of messages past the budget: the waiting bytes never pass the bound, and every message runs once, in order', async () => {
  let clock = 0;
  const ran: number[] = [];
  let most = 0;
  const budget = new TurnBudget<number>(2, 64 * 1024, () => undefined, () => clock);
  for (let i = 0; i < 20_000; i++) {
    budget.submit(i % 50, 1024, () => {
      clock += 0.5;
      ran.push(i);
    });
    most = Math.max(most, budget.waiting.bytes);
  }
  assert.ok(most <= 64 * 1024, `at most ${most} bytes waited`);
  for (let t = 0; t < 200 && budget.waiting.messages > 0; t++) await turn();
  assert.equal(ran.length, 20_000);
  assert.deepEqual(ran, [...ran].sort((x, y) => x - y), 'in the order they came');
});

test('what a waiting message throws goes to failed, and the rest still run; close() drops what waits', async () => {
  const h = harness();
  h.submit('a', 'a1', 3);
  h.fail('b');
  h.submit('c', 'c1');
  await turn();
  assert.deepEqual(h.ran, ['a1', 'c1']);
  assert.match(String(h.failures[0]), /boom b/);
  await turn();
  h.submit('x', 'x1', 3);
  h.submit('y', 'y1');
  h.budget.close();
  await turn();
  await turn();
  assert.deepEqual(h.ran, ['a1', 'c1', 'x1'], 'y1 dropped with the close');
});
