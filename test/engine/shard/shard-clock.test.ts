/**
 * The shards' time under the sandbox's test clock (engine/shard/shard-clock.ts, OP_TIME in worker.ts): a frozen
 * shard expires nothing by itself; expireThrough expires, second by second and in time order across shards,
 * every GTD order due by the second it names, each group announced (onExpiry) before it is journaled; a
 * running shard with an offset expires on its own timer by the shifted time; the expiry bound follows new
 * GTD orders; idle() waits for every command in flight.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { JournalEvent, OrderStatusEvent } from '../../../src/domain/events.ts';
import { Engine } from '../../../src/engine/engine.ts';
import { shardOf } from '../../../src/engine/shard-router.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { T, market, order, tempStore, until, wallet } from '../../fixtures/engine-harness.ts';

/** A day ago: every expiry below is long past by the system clock, so only the frozen time keeps them. */
const START = Date.now() - 86_400_000;
let nowMs = START;
let engine: Engine;
let env: ReturnType<typeof tempStore>;
const events: JournalEvent[] = [];
const announced: number[] = [];
/** One market on each of the two shards. */
const markets = [1, 2, 3, 4, 5, 6].map((n) => market(n + 900));
const onShard = (s: number) => markets.find((m) => shardOf(m.conditionId, 2) === s)!;

before(async () => {
  env = tempStore();
  engine = await Engine.open({
    store: env.store,
    shards: 2,
    log: silentLogger,
    now: () => nowMs,
    shardTime: { frozen: true, offsetMs: 0, atMs: START },
    onExpiry: (sec) => {
      announced.push(sec);
      nowMs = Math.max(nowMs, sec * 1000);
    },
  });
  engine.onCommitted((evs) => events.push(...evs));
  for (const s of [0, 1]) engine.registerMarket(onShard(s));
  await engine.deposit(wallet(1), 1_000 * T);
});

after(async () => {
  await engine.close();
  await env.cleanup();
});

const startSec = Math.floor(START / 1000);

async function gtd(s: number, expiresIn: number): Promise<string> {
  const r = await engine.placeOrder(order({ wallet: wallet(1), tokenId: onShard(s).tokenIds[0], side: 'BUY', price: 1000, size: T, type: 'GTD', expiration: startSec + expiresIn }));
  assert.equal(r.ok, true, JSON.stringify(r));
  return r.orderId;
}

test('frozen shards expire nothing by themselves; expireThrough expires in time order across shards, each at its second', async () => {
  const a100 = await gtd(0, 100);
  const b150 = await gtd(1, 150);
  const a200 = await gtd(0, 200);
  const b300 = await gtd(1, 300);
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(engine.openOrders(wallet(1)).length, 4, 'frozen a day ago: orders due by the system clock still rest');

  await engine.shardTime({ frozen: true, offsetMs: 0, atMs: START }, startSec + 250);
  await engine.afterCommit();
  assert.deepEqual(announced, [startSec + 100, startSec + 150, startSec + 200]);
  const expired = events.filter((e): e is OrderStatusEvent => e.type === 'status' && e.reason === 'EXPIRED');
  assert.deepEqual(
    expired.map((e) => [e.orderId, e.ts]),
    [
      [a100, (startSec + 100) * 1000],
      [b150, (startSec + 150) * 1000],
      [a200, (startSec + 200) * 1000],
    ],
    'journaled in time order, each at the second it expired',
  );
  assert.deepEqual(engine.openOrders(wallet(1)).map((o) => o.orderId), [b300]);
  assert.equal(engine.nextExpirySec(), startSec + 300);
});

test('a GTD order placed since lowers the expiry bound; idle() waits for what is in flight', async () => {
  nowMs = (startSec + 260) * 1000;
  const early = engine.placeOrder(order({ wallet: wallet(1), tokenId: onShard(0).tokenIds[0], side: 'BUY', price: 1000, size: T, type: 'GTD', expiration: startSec + 400 }));
  const late = engine.placeOrder(order({ wallet: wallet(1), tokenId: onShard(1).tokenIds[0], side: 'BUY', price: 1000, size: T, type: 'GTD', expiration: startSec + 320 }));
  assert.equal(engine.nextExpirySec(), startSec + 300);
  let answered = 0;
  void early.then(() => answered++);
  void late.then(() => answered++);
  await engine.idle();
  await engine.afterCommit();
  await Promise.resolve();
  assert.equal(answered, 2, 'idle() resolves once both placements were answered by their shards');
  assert.equal(engine.nextExpirySec(), startSec + 300);
});

test('a running shard with an offset expires on its own timer by the shifted time', async () => {
  const before = events.length;
  // The system clock plus this offset is a second past the latest expiry above.
  await engine.shardTime({ frozen: false, offsetMs: (startSec + 401) * 1000 - Date.now(), atMs: 0 });
  await until(() => engine.openOrders(wallet(1)).length === 0);
  await engine.afterCommit();
  const expired = events.slice(before).filter((e): e is OrderStatusEvent => e.type === 'status' && e.reason === 'EXPIRED');
  assert.equal(expired.length, 3);
  assert.deepEqual(engine.checkLedger(), []);
});
