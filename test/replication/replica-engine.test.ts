/**
 * The engine's surface on a read replica (src/replication/replica-engine.ts), on a store a real engine wrote:
 * an API key's open orders are the orders its address signed, as on the sequencer, whether the replica found
 * them in the store it opened or in a batch it applied later; a proxy or Safe order is its signer's, never its
 * funder address's.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { JournalEvent } from '../../src/domain/events.ts';
import { Engine } from '../../src/engine/engine.ts';
import { ReplicaEngine } from '../../src/replication/replica-engine.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { T, market, order, tempStore, wallet } from '../fixtures/engine-harness.ts';

let engine: Engine;
let env: ReturnType<typeof tempStore>;
const committed: JournalEvent[] = [];

before(async () => {
  env = tempStore('pm-replica-engine-');
  engine = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  engine.onCommitted((evs) => committed.push(...evs));
});

after(async () => {
  await engine.close();
  await env.cleanup();
});

test("open orders by signer: an EOA's own and its Safe's, from the opened store and from applied batches", async () => {
  const m = market(1);
  engine.registerMarket(m);
  const signer = wallet(1);
  const safe = wallet(2);
  assert.deepEqual(await engine.deposit(signer, 10 * T), { ok: true, code: 0 });
  assert.deepEqual(await engine.deposit(safe, 10 * T), { ok: true, code: 0 });
  const own = await engine.placeOrder(order({ wallet: signer, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 5 * T }));
  const funded = await engine.placeOrder({ ...order({ wallet: safe, tokenId: m.tokenIds[0], side: 'BUY', price: 3000, size: 5 * T }), signer, signatureType: 2 });
  assert.equal(own.status, 'live');
  assert.equal(funded.status, 'live');

  const replica = new ReplicaEngine(env.store, 'http://sequencer.invalid');
  assert.deepEqual(replica.openOrders(signer).map((o) => [o.orderId, o.wallet]), [[own.orderId, signer], [funded.orderId, safe]]);
  assert.deepEqual(replica.openOrders(safe), [], 'the funder address signs nothing');

  // A later Safe order reaches the replica as an applied batch.
  committed.length = 0;
  const later = await engine.placeOrder({ ...order({ wallet: safe, tokenId: m.tokenIds[1], side: 'BUY', price: 2000, size: 5 * T }), signer, signatureType: 2 });
  await engine.afterCommit();
  replica.applied([{ batch: {} as never, events: committed.filter((e) => e.type === 'order') }]);
  assert.deepEqual(replica.openOrders(signer).map((o) => o.orderId), [own.orderId, funded.orderId, later.orderId]);
  assert.deepEqual(replica.openOrders(signer, { tokenId: m.tokenIds[1] }).map((o) => [o.orderId, o.signer, o.signatureType]), [[later.orderId, signer, 2]]);
  assert.deepEqual(replica.openOrders(safe), []);
});
