/**
 * Orders in storage (journal/orders.ts): the `order` event holds what was submitted, the orders table only
 * the state under the same seq, an in-memory id -> seq index kept by the writer and stored as runs,
 * and reads by id that join the two into the record the engine held.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { orderAcceptedEvent, type FillEvent, type OrderRecord, type OrderSignedParts } from '../../src/domain/events.ts';
import { openOrdersOf, orderIndexOf, readOrder } from '../../src/journal/orders.ts';
import { openStore } from '../../src/journal/env.ts';
import { replayJournal } from '../../src/journal/recovery.ts';
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
const WALLET = '0x' + 'a'.repeat(40);
const CID = '0x' + 'c'.repeat(64);

function record(n: number): OrderRecord & OrderSignedParts {
  return {
    orderId: id(n), wallet: WALLET, tokenId: '123456789', side: 'BUY', orderType: 'GTC', postOnly: false, makerAmount: 5_000_000, takerAmount: 10_000_000,
    expiration: 0, builder: '0x' + '0'.repeat(64), owner: '00000000-0000-4000-8000-00000000000a', signer: WALLET, salt: String(1000 + n), timestamp: '1700000000000',
    signatureType: 0, signature: '0x' + '5'.repeat(130), seq: 0, conditionId: CID, outcome: 0, pricePips: 5000, sizeUnits: 10_000_000, budgetUnits: 0,
    makerFeeBps: 0, takerFeeBps: 25, sizeMatched: 0, status: 'LIVE', tradeIds: [], fillSeqs: [], createdAt: 0, updatedAt: 0,
    response: undefined as unknown as OrderRecord['response'],
  };
}

/**
 * Journals an acceptance the way the engine does: the event gives the seq and keeps what the order signed,
 * the state goes with it, and the record held (returned) has no signed parts.
 */
function accept(w: JournalWriter, signed: OrderRecord & OrderSignedParts): OrderRecord {
  const ev = w.append(orderAcceptedEvent(signed, signed));
  const { salt: _salt, timestamp: _timestamp, signature: _signature, ...rec } = signed;
  rec.seq = ev.seq;
  rec.createdAt = ev.ts;
  rec.updatedAt = ev.ts;
  w.putOrder(rec, true);
  return rec;
}

function fill(taker: OrderRecord, maker: OrderRecord, size: number): FillEvent {
  return {
    type: 'fill', seq: 0, ts: 0, tradeId: '', txHash: '', conditionId: CID, kind: 'TRANSFER', size, takerOrderId: taker.orderId, makerOrderId: maker.orderId,
    takerWallet: taker.wallet, makerWallet: maker.wallet, takerOwner: taker.owner, makerOwner: maker.owner, takerTokenId: taker.tokenId, makerTokenId: maker.tokenId,
    takerOutcome: 0, makerOutcome: 0, takerSide: 'SELL', makerSide: 'BUY', takerPricePips: 5000, makerPricePips: 5000, takerUsdc: size / 2, makerUsdc: size / 2,
    takerFee: 0, makerFee: 0, makerRemaining: 0, builder: taker.builder,
  };
}

test('an order reads back as the engine held it: submission from its event, state from its row, trade ids from its fills', async () => {
  let now = 1_700_000_000_000;
  const w = new JournalWriter(env.store, 0, () => now);
  // Ids in descending order, seqs ascending: the table must follow the seqs.
  const [a, b, c] = [3, 2, 1].map((n) => accept(w, record(n)));
  for (const r of [a, b, c]) r.response = { status: 'live', makingAmount: 0, takingAmount: 0, tradeIds: [] };
  await w.flush()!.committed;
  assert.deepEqual([...env.store.orders.getKeys({})], [a.seq, b.seq, c.seq]);
  assert.deepEqual(readOrder(env.store, id(2)), b);
  assert.equal(readOrder(env.store, id(9)), undefined);

  // b rests; a taker d fills against it twice in its placement and is answered with both fills.
  now += 1000;
  const d = accept(w, { ...record(4), side: 'SELL' });
  const fills = [fill(d, b, 2_000_000), fill(d, b, 3_000_000)].map((f) => w.append(f));
  for (const f of fills) {
    for (const o of [d, b]) {
      o.sizeMatched += f.size;
      o.tradeIds.push(f.tradeId);
      o.fillSeqs.push(f.seq);
      o.updatedAt = f.ts;
    }
  }
  d.status = 'MATCHED';
  d.response = { status: 'matched', makingAmount: 5_000_000, takingAmount: 2_500_000, tradeIds: fills.map((f) => f.tradeId) };
  w.putOrder(d, false);
  w.putOrder(b, false);
  // c is cancelled: its later state replaces the earlier one, still without a second id entry.
  c.status = 'CANCELED';
  c.updatedAt = now;
  w.putOrder(c, false);
  await w.flush()!.committed;

  assert.deepEqual(readOrder(env.store, d.orderId), d);
  assert.deepEqual(readOrder(env.store, b.orderId), b);
  assert.deepEqual(readOrder(env.store, b.orderId)!.tradeIds, fills.map((f) => f.tradeId), 'trade ids are the fills\' ids');
  assert.equal(readOrder(env.store, c.orderId)!.status, 'CANCELED');
  assert.equal(orderIndexOf(env.store).size, 4, 'one id entry per order, however often its state is rewritten');
  assert.equal(env.store.orders.getCount(), 4);
  // The row is the state alone: the signature and the rest of the submission live in the journal only.
  const row = env.store.orders.getBinary(b.seq)!;
  assert.ok(row.length < 64, `state row of ${row.length} bytes`);
  assert.deepEqual(openOrdersOf(env.store).map((o) => o.orderId), [a.orderId, b.orderId], 'open orders, in seq order');
});

test('ids are found after a restart, from the stored runs, and not before their commit', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pm-orders-restart-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let store = openStore({ dataDir: dir, mapSize: 2 ** 28 });
  const w = new JournalWriter(store, 0, () => 1_700_000_000_000);
  const recs = [11, 12, 13].map((n) => accept(w, record(n)));
  for (const r of recs) r.response = { status: 'live', makingAmount: 0, takingAmount: 0, tradeIds: [] };
  const { committed } = w.flush()!;
  assert.equal(readOrder(store, recs[0]!.orderId), undefined, 'issued but not committed: not readable yet');
  await committed;
  assert.deepEqual(readOrder(store, recs[0]!.orderId), recs[0]);
  assert.equal(store.orderIds.getCount(), 1, 'one run for the batch');
  await store.close();

  // A reader of the closed store (no engine, no replay): the index comes from the runs, not the journal.
  store = openStore({ dataDir: dir, mapSize: 2 ** 28 });
  const scans: unknown[] = [];
  const getRange = store.journal.getRange.bind(store.journal);
  store.journal.getRange = ((o: unknown) => (scans.push(o), getRange(o as never))) as typeof getRange;
  for (const r of recs) assert.deepEqual(readOrder(store, r.orderId), r);
  assert.equal(orderIndexOf(store).size, 3);
  assert.deepEqual(scans, [], 'no scan of the journal');
  assert.equal(replayJournal(store).state.openOrders.length, 3);
  await store.close();
});

test('a store without runs (version 7) reads its journal\'s order events once and stores them as a run', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pm-orders-legacy-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let store = openStore({ dataDir: dir, mapSize: 2 ** 28 });
  const w = new JournalWriter(store, 0, () => 1_700_000_000_000);
  const recs = [21, 22].map((n) => accept(w, record(n)));
  for (const r of recs) r.response = { status: 'live', makingAmount: 0, takingAmount: 0, tradeIds: [] };
  await w.flush()!.committed;
  // As a version-7 build left it: no runs, and nothing says the index is complete.
  await store.orderIds.clearAsync();
  await store.meta.remove('orderIds:complete');
  await store.close();

  store = openStore({ dataDir: dir, mapSize: 2 ** 28 });
  for (const r of recs) assert.deepEqual(readOrder(store, r.orderId), r, 'found through the journal');
  assert.equal(store.meta.get('orderIds:complete'), true);
  assert.equal(store.orderIds.getCount(), 1, 'what the scan found, stored as one run');
  await store.close();
  store = openStore({ dataDir: dir, mapSize: 2 ** 28 });
  const scans: unknown[] = [];
  const getRange = store.journal.getRange.bind(store.journal);
  store.journal.getRange = ((o: unknown) => (scans.push(o), getRange(o as never))) as typeof getRange;
  for (const r of recs) assert.deepEqual(readOrder(store, r.orderId), r);
  assert.deepEqual(scans, [], 'read once: from then on the runs hold them');
  await store.close();
});

test('a load that finds many runs merges them into a few values, and every id is found from them after the next restart', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pm-orders-merge-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let store = openStore({ dataDir: dir, mapSize: 2 ** 28 });
  const w = new JournalWriter(store, 0, () => 1_700_000_000_000);
  const recs: OrderRecord[] = [];
  // 100 batches, each its own run, as group commits leave them.
  for (let b = 0; b < 100; b++) {
    const batch = [0, 1, 2].map((k) => accept(w, record(1000 + 3 * b + k)));
    for (const r of batch) r.response = { status: 'live', makingAmount: 0, takingAmount: 0, tradeIds: [] };
    recs.push(...batch);
    await w.flush()!.committed;
  }
  assert.equal(store.orderIds.getCount(), 100);
  await store.close();

  store = openStore({ dataDir: dir, mapSize: 2 ** 28 });
  assert.equal(orderIndexOf(store).size, 300, 'the load reads the runs as they were');
  assert.equal(store.orderIds.getCount(), 1, 'then merges them: 300 entries fit in one value');
  // A batch after the merge adds its own run, as always.
  const w2 = new JournalWriter(store, 300, () => 1_700_000_000_000);
  const late = accept(w2, record(5000));
  late.response = { status: 'live', makingAmount: 0, takingAmount: 0, tradeIds: [] };
  await w2.flush()!.committed;
  await store.close();

  store = openStore({ dataDir: dir, mapSize: 2 ** 28 });
  for (const r of [...recs, late]) assert.deepEqual(readOrder(store, r.orderId), r);
  assert.equal(orderIndexOf(store).size, 301);
  assert.equal(store.orderIds.getCount(), 2, 'the merged value and the late run (two are not merged again)');
  await store.close();
});
