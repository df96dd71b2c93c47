/**
 * The orders table (journal/orders.ts): records under the seq of their acceptance, an id -> seq index
 * written once per order, and reads by id that see the latest state the writer put.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { depositEvent, type OrderRecord } from '../../src/domain/events.ts';
import { orderIdsOf, readOrder } from '../../src/journal/orders.ts';
import { JournalWriter } from '../../src/journal/writer.ts';
import { tempStore } from '../fixtures/engine-harness.ts';

let env: ReturnType<typeof tempStore>;
before(() => {
  env = tempStore('pm-orders-');
});
after(async () => {
  await env.cleanup();
});

const id = (n: number) => '0x' + n.toString(16).padStart(64, '0');

function record(n: number, seq: number): OrderRecord {
  return { orderId: id(n), wallet: '0x' + 'a'.repeat(40), seq, status: 'LIVE', sizeMatched: 0, tradeIds: [] } as unknown as OrderRecord;
}

test('orders are stored by seq, found by id, and an update replaces the state without a second id entry', async () => {
  const w = new JournalWriter(env.store, 0, () => 1_700_000_000_000);
  // Ids in descending order, seqs ascending: the table must follow the seqs.
  const recs = [3, 2, 1].map((n) => {
    const e = w.append(depositEvent('deposit', '0xa', 1)); // any event gives a seq
    const r = record(n, e.seq);
    w.putOrder(r, true);
    return r;
  });
  await w.flush()!.committed;
  assert.deepEqual([...env.store.orders.getKeys({})], recs.map((r) => r.seq));
  assert.deepEqual([...orderIdsOf(env.store)].sort(), [id(1), id(2), id(3)]);
  assert.equal(readOrder(env.store, id(2))?.seq, recs[1]!.seq);
  assert.equal(readOrder(env.store, id(9)), undefined);

  w.putOrder({ ...recs[1]!, status: 'MATCHED', sizeMatched: 5 }, false);
  w.append(depositEvent('deposit', '0xa', 1));
  await w.flush()!.committed;
  const r = readOrder(env.store, id(2));
  assert.equal(r?.status, 'MATCHED');
  assert.equal(r?.sizeMatched, 5);
  assert.equal(env.store.orderIds.getCount(), 3);
  assert.equal(env.store.orders.getCount(), 3);
});
