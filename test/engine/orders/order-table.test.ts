/**
 * The order table: its three indexes move together, finished orders stay readable until the batch holding
 * their final state is durable, wallet indexes are stable, and records share the frozen empty parts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LIVE_UNFILLED, NO_SEQS, NO_TRADES, appended, newPending, rejectResponse, responseOf, restsOnBook } from '../../../src/engine/orders/order-table.ts';
import { Tif } from '../../../src/engine/book/api.ts';
import { T, order, parts, record } from '../engine-parts.ts';

const A = '0x' + 'a'.repeat(40);
const B = '0x' + 'b'.repeat(40);

test('tracking indexes an order by handle, id and signer; untracking removes it from all three', () => {
  const p = parts();
  const o1 = order(p, record({ wallet: A }));
  const o2 = order(p, record({ wallet: A }));
  const o3 = order(p, record({ wallet: B }));
  assert.ok(o1.handle !== o2.handle && o2.handle !== o3.handle, 'handles are unique');
  assert.equal(p.orders.byHandleOf(o2.handle), o2);
  assert.equal(p.orders.get(o3.rec.orderId), o3);
  assert.deepEqual([...p.orders.ofSigner(A)], [o1, o2]);
  assert.deepEqual([...p.orders.all()], [o1, o2, o3]);

  p.orders.untrack(o1);
  assert.equal(p.orders.byHandleOf(o1.handle), undefined);
  assert.equal(p.orders.get(o1.rec.orderId), undefined);
  assert.deepEqual([...p.orders.ofSigner(A)], [o2]);
  p.orders.untrack(o2);
  assert.deepEqual([...p.orders.ofSigner(A)], [], 'a signer with no order left has no set');
  assert.deepEqual([...p.orders.all()], [o3]);
});

test('open orders: resting ones of the wallet only, filtered, oldest seq first; openCount counts resting ones', () => {
  const p = parts();
  const late = order(p, record({ wallet: A, seq: 9 }));
  const early = order(p, record({ wallet: A, seq: 3, outcome: 1 }));
  const pending = order(p, record({ wallet: A, seq: 0 }));
  order(p, record({ wallet: B, seq: 5 })).live = true;
  late.live = true;
  early.live = true;
  assert.equal(pending.live, false);
  assert.deepEqual(p.orders.openOrders(A, {}).map((r) => r.seq), [3, 9]);
  assert.deepEqual(p.orders.openOrders(A, { tokenId: early.rec.tokenId }).map((r) => r.seq), [3]);
  assert.deepEqual(p.orders.openOrders(A, { id: late.rec.orderId, conditionId: late.rec.conditionId }).map((r) => r.seq), [9]);
  assert.deepEqual(p.orders.openOrders(A, { conditionId: '0xother' }), []);
  assert.equal(p.orders.openCount(), 3);
});

test('a proxy or Safe order (signer != wallet) is its signer\'s: found by the signer with its own orders, not by its wallet', () => {
  const p = parts();
  const F = '0x' + 'f'.repeat(40);
  const own = order(p, record({ wallet: A, seq: 1 }));
  const funded = order(p, record({ wallet: F, signer: A, signatureType: 2, seq: 2 }));
  own.live = true;
  funded.live = true;
  assert.deepEqual([...p.orders.ofSigner(A)], [own, funded]);
  assert.deepEqual([...p.orders.ofSigner(F)], []);
  assert.deepEqual(p.orders.openOrders(A, {}).map((r) => r.wallet), [A, F]);
  assert.deepEqual(p.orders.openOrders(F, {}), [], 'the funder address is no API key\'s: nothing is found under it');
  assert.equal(funded.wb.wallet, F, 'its money is the funder\'s');
});

test('a finished order stays in recent until the batch that holds it is durable, unless it finished again since', () => {
  const p = parts();
  const o = order(p, record({ wallet: A }));
  p.orders.untrack(o);
  p.orders.finished(o.rec);
  assert.equal(p.orders.recentOf(o.rec.orderId), o.rec);
  const batch = p.orders.takeFinished();
  assert.deepEqual(batch, [o.rec]);
  assert.deepEqual(p.orders.takeFinished(), [], 'each finished order leaves with one batch');

  // The same id finished again (a newer record) before the first batch was durable: it must stay.
  const again = { ...o.rec, status: 'CANCELED' as const };
  p.orders.finished(again);
  p.orders.forget(batch);
  assert.equal(p.orders.recentOf(o.rec.orderId), again);
  p.orders.forget(p.orders.takeFinished());
  assert.equal(p.orders.recentOf(o.rec.orderId), undefined);
});

test('wallet indexes start at 1 and never change for a wallet', () => {
  const p = parts();
  assert.equal(p.orders.walletIndex(A), 1);
  assert.equal(p.orders.walletIndex(B), 2);
  assert.equal(p.orders.walletIndex(A), 1);
});

test('records share the frozen empty lists and the unfilled answer; appended never writes to a shared list', () => {
  const p = parts();
  const rec = record({ wallet: A, builder: 'b1' });
  const o = order(p, rec);
  assert.equal(o.rec.tradeIds, NO_TRADES);
  assert.equal(o.rec.fillSeqs, NO_SEQS);
  assert.equal(o.rec.response, LIVE_UNFILLED);
  assert.equal(o.rec.tokenId, p.market.tokenIds[0]);
  assert.equal(o.wb, p.ledger.wallet(A), 'the order holds the ledger wallet');
  assert.ok(Object.isFrozen(NO_TRADES) && Object.isFrozen(LIVE_UNFILLED));

  const one = appended(o.rec.tradeIds, 't1');
  assert.deepEqual(one, ['t1']);
  assert.deepEqual(NO_TRADES, [], 'the shared list is untouched');
  assert.equal(appended(one, 't2'), one, 'a list of its own grows in place');
  assert.deepEqual(one, ['t1', 't2']);

  // A record that has an answer of its own keeps it.
  const filled = record({ wallet: A, response: { status: 'live', makingAmount: 1, takingAmount: 2, tradeIds: ['x'] }, tradeIds: ['x'] });
  order(p, filled);
  assert.deepEqual(filled.response, { status: 'live', makingAmount: 1, takingAmount: 2, tradeIds: ['x'] });
  assert.notEqual(filled.tradeIds, NO_TRADES);
});

test('the fee bound of the reservation: the higher rate for resting orders, the taker rate for FOK/FAK', () => {
  const p = parts();
  const gtc = order(p, record({ wallet: A, makerFeeBps: 30, takerFeeBps: 20 }));
  const fak = order(p, record({ wallet: A, orderType: 'FAK', makerFeeBps: 30, takerFeeBps: 20 }));
  assert.equal(gtc.feeBound, 30);
  assert.equal(fak.feeBound, 20);
  assert.deepEqual([Tif.GTC, Tif.GTD, Tif.FOK, Tif.FAK].map(restsOnBook), [true, true, false, false]);
  assert.equal(fak.remaining, 10 * T);
});

test('answers: a retry gets the recorded answer, a refusal carries its code and vars; a pending placement resolves once', async () => {
  const rec = record({ wallet: A, response: { status: 'matched', makingAmount: 5, takingAmount: 6, tradeIds: ['t'] } });
  assert.deepEqual(responseOf(rec), { ok: true, code: 0, orderId: rec.orderId, status: 'matched', makingAmount: 5, takingAmount: 6, tradeIds: ['t'] });
  assert.deepEqual(rejectResponse('0x1', 4001), { ok: false, code: 4001, orderId: '0x1', status: 'canceled', makingAmount: 0, takingAmount: 0, tradeIds: [] });
  assert.deepEqual(rejectResponse('0x1', 1001, { id: '0x1' }).vars, { id: '0x1' });
  const pending = newPending(false, undefined);
  pending.resolve(rejectResponse('0x2', 5003));
  assert.equal((await pending.promise).code, 5003);
  assert.equal(pending.tradeIds, NO_TRADES);
});
