/**
 * The engine end to end in process: real shard workers, real LMDB in a temp dir. Each case uses its own
 * market and wallets on one shared engine (2 shards), and ends by checking the ledger invariants
 * (reservations equal what open orders can spend, nothing negative, USDC conserved).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Errors } from '../../src/domain/errors.ts';
import type { FillEvent, JournalEvent, OrderStatusEvent } from '../../src/domain/events.ts';
import { Engine } from '../../src/engine/engine.ts';
import { readOrder } from '../../src/journal/orders.ts';
import type { VerifiedStore } from '../../src/journal/recovery.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { T, invariants, market, order, tempStore, until, wallet } from '../fixtures/engine-harness.ts';

let engine: Engine;
let env: ReturnType<typeof tempStore>;
const events: JournalEvent[] = [];
let marketNo = 0;
let walletNo = 0;

function newMarket(over = {}) {
  const m = market(++marketNo, over);
  engine.registerMarket(m);
  return { cid: m.conditionId, yes: m.tokenIds[0], no: m.tokenIds[1] };
}

async function funded(usdc: number, pairs = 0, cid?: string): Promise<string> {
  const w = wallet(++walletNo);
  assert.deepEqual(await engine.deposit(w, usdc + pairs), { ok: true, code: 0 });
  if (pairs > 0) assert.deepEqual(await engine.split(w, cid as string, pairs), { ok: true, code: 0 });
  return w;
}

function usdc(w: string) {
  return engine.balances(w).usdc;
}

function token(w: string, tokenId: string) {
  const t = engine.balances(w).tokens.find((x) => x.tokenId === tokenId);
  return t === undefined ? { available: 0, reserved: 0 } : { available: t.available, reserved: t.reserved };
}

function ok() {
  assert.deepEqual(invariants(engine), []);
}

before(async () => {
  env = tempStore();
  engine = await Engine.open({ store: env.store, shards: 2, log: silentLogger });
  engine.onCommitted((evs) => events.push(...evs));
});

after(async () => {
  await engine.close();
  await env.cleanup();
});

describe('orders', () => {
  test('a resting BUY reserves its USDC and shows as open', async () => {
    const m = newMarket();
    const a = await funded(10 * T);
    const r = await engine.placeOrder(order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 4000, size: 10 * T }));
    assert.equal(r.ok, true);
    assert.equal(r.status, 'live');
    assert.deepEqual([r.makingAmount, r.takingAmount, r.tradeIds], [0, 0, []]);
    assert.deepEqual(usdc(a), { available: 6 * T, reserved: 4 * T });
    const open = engine.openOrders(a);
    assert.equal(open.length, 1);
    assert.equal(open[0].orderId, r.orderId);
    const rec = engine.getOrder(r.orderId);
    assert.equal(rec?.status, 'LIVE');
    assert.equal(rec?.pricePips, 4000);
    // What the order signed is in its committed `order` event; the record the engine holds does not keep it.
    assert.equal(rec !== undefined && ('signature' in rec || 'salt' in rec || 'timestamp' in rec), false);
    const placed = events.find((e) => e.type === 'order' && e.orderId === r.orderId);
    assert.equal(placed?.type === 'order' ? placed.signature : undefined, '0x' + '11'.repeat(65));
    ok();
  });

  test('TRANSFER with price improvement: the taker pays the maker price, the rest is released', async () => {
    const m = newMarket();
    const seller = await funded(0, 10 * T, m.cid);
    const buyer = await funded(10 * T);
    const ask = await engine.placeOrder(order({ wallet: seller, tokenId: m.yes, side: 'SELL', price: 4000, size: 10 * T }));
    assert.equal(ask.status, 'live');
    assert.deepEqual(token(seller, m.yes), { available: 0, reserved: 10 * T });
    const bid = await engine.placeOrder(order({ wallet: buyer, tokenId: m.yes, side: 'BUY', price: 5000, size: 10 * T }));
    assert.equal(bid.status, 'matched');
    assert.equal(bid.makingAmount, 4 * T);
    assert.equal(bid.takingAmount, 10 * T);
    assert.equal(bid.tradeIds.length, 1);
    assert.match(bid.tradeIds[0], /^0x[0-9a-f]{64}$/);
    assert.deepEqual(usdc(buyer), { available: 6 * T, reserved: 0 });
    assert.deepEqual(token(buyer, m.yes), { available: 10 * T, reserved: 0 });
    assert.deepEqual(usdc(seller), { available: 4 * T, reserved: 0 });
    assert.deepEqual(token(seller, m.yes), { available: 0, reserved: 0 });
    assert.equal(engine.getOrder(ask.orderId)?.status, 'MATCHED');
    assert.deepEqual(engine.getOrder(ask.orderId)?.tradeIds, bid.tradeIds);
    assert.deepEqual(engine.lastTradePrice(m.yes), { pricePips: 4000, side: 'BUY' });
    ok();
  });

  test('MINT: BUY YES and BUY NO summing to 1 create token pairs', async () => {
    const m = newMarket();
    const a = await funded(10 * T);
    const b = await funded(10 * T);
    await engine.placeOrder(order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 4000, size: 10 * T }));
    const r = await engine.placeOrder(order({ wallet: b, tokenId: m.no, side: 'BUY', price: 6000, size: 10 * T }));
    assert.equal(r.status, 'matched');
    assert.deepEqual(usdc(a), { available: 6 * T, reserved: 0 });
    assert.deepEqual(usdc(b), { available: 4 * T, reserved: 0 });
    assert.deepEqual(token(a, m.yes), { available: 10 * T, reserved: 0 });
    assert.deepEqual(token(b, m.no), { available: 10 * T, reserved: 0 });
    const fill = events.find((e) => e.type === 'fill' && e.takerOrderId === r.orderId);
    assert.equal(fill?.type === 'fill' && fill.kind, 'MINT');
    ok();
  });

  test('MERGE: SELL YES and SELL NO summing to 1 burn pairs into USDC', async () => {
    const m = newMarket();
    const a = await funded(0, 10 * T, m.cid);
    const b = await funded(0, 10 * T, m.cid);
    await engine.placeOrder(order({ wallet: a, tokenId: m.yes, side: 'SELL', price: 4500, size: 10 * T }));
    const r = await engine.placeOrder(order({ wallet: b, tokenId: m.no, side: 'SELL', price: 5500, size: 10 * T }));
    assert.equal(r.status, 'matched');
    assert.equal(r.takingAmount, 5_500_000);
    assert.deepEqual(usdc(a), { available: 4_500_000, reserved: 0 });
    assert.deepEqual(usdc(b), { available: 5_500_000, reserved: 0 });
    assert.deepEqual(token(a, m.yes), { available: 0, reserved: 0 });
    assert.deepEqual(token(a, m.no), { available: 10 * T, reserved: 0 });
    assert.deepEqual(token(b, m.yes), { available: 10 * T, reserved: 0 });
    ok();
  });

  test('fees: the taker BUY pays on top, the maker SELL from its proceeds, the fee wallet collects', async () => {
    const m = newMarket({ makerFeeBps: 100, takerFeeBps: 200 });
    const seller = await funded(0, 10 * T, m.cid);
    const buyer = await funded(10 * T);
    await engine.placeOrder(order({ wallet: seller, tokenId: m.yes, side: 'SELL', price: 4000, size: 10 * T }));
    const before = usdc('fees').available;
    const r = await engine.placeOrder(order({ wallet: buyer, tokenId: m.yes, side: 'BUY', price: 4000, size: 10 * T }));
    assert.equal(r.makingAmount, 4 * T + 80_000);
    assert.deepEqual(usdc(buyer), { available: 6 * T - 80_000, reserved: 0 });
    assert.deepEqual(usdc(seller), { available: 4 * T - 40_000, reserved: 0 });
    assert.equal(usdc('fees').available - before, 120_000);
    ok();
  });

  test('a killed FOK leaves books and balances exactly as they were', async () => {
    const m = newMarket();
    const seller = await funded(0, 5 * T, m.cid);
    const buyer = await funded(10 * T);
    await engine.placeOrder(order({ wallet: seller, tokenId: m.yes, side: 'SELL', price: 4000, size: 5 * T }));
    await engine.refreshSnapshot(m.cid);
    const hash = engine.stateHash();
    const book = engine.bookSnapshot(m.yes)?.json;
    const r = await engine.placeOrder(order({ wallet: buyer, tokenId: m.yes, side: 'BUY', price: 5000, size: 10 * T, type: 'FOK' }));
    assert.equal(r.ok, false);
    assert.equal(r.code, Errors.PM_ERR_FOK_NOT_FILLED.result);
    assert.equal(engine.stateHash(), hash);
    assert.deepEqual(usdc(buyer), { available: 10 * T, reserved: 0 });
    await engine.refreshSnapshot(m.cid);
    assert.equal(JSON.parse(engine.bookSnapshot(m.yes)?.json as string).asks.length, 1);
    assert.deepEqual(JSON.parse(engine.bookSnapshot(m.yes)?.json as string).asks, JSON.parse(book as string).asks);
    assert.equal(engine.getOrder(r.orderId), undefined);
    ok();
  });

  test('a FOK that fits fills entirely', async () => {
    const m = newMarket();
    const seller = await funded(0, 10 * T, m.cid);
    const buyer = await funded(10 * T);
    await engine.placeOrder(order({ wallet: seller, tokenId: m.yes, side: 'SELL', price: 4000, size: 10 * T }));
    const r = await engine.placeOrder(order({ wallet: buyer, tokenId: m.yes, side: 'BUY', price: 5000, size: 10 * T, type: 'FOK', budget: 5 * T }));
    assert.equal(r.status, 'matched');
    assert.equal(r.takingAmount, 10 * T);
    assert.equal(engine.getOrder(r.orderId)?.status, 'MATCHED');
    assert.deepEqual(usdc(buyer), { available: 6 * T, reserved: 0 });
    ok();
  });

  test('FAK partial: fills what it can, the rest is canceled', async () => {
    const m = newMarket();
    const seller = await funded(0, 4 * T, m.cid);
    const buyer = await funded(10 * T);
    await engine.placeOrder(order({ wallet: seller, tokenId: m.yes, side: 'SELL', price: 4000, size: 4 * T }));
    const r = await engine.placeOrder(order({ wallet: buyer, tokenId: m.yes, side: 'BUY', price: 5000, size: 10 * T, type: 'FAK' }));
    assert.equal(r.ok, true);
    assert.equal(r.status, 'matched');
    assert.equal(r.takingAmount, 4 * T);
    assert.equal(r.makingAmount, 1_600_000);
    const rec = engine.getOrder(r.orderId);
    assert.equal(rec?.status, 'CANCELED');
    assert.equal(rec?.sizeMatched, 4 * T);
    assert.deepEqual(usdc(buyer), { available: 10 * T - 1_600_000, reserved: 0 });
    const st = events.find((e) => e.type === 'status' && e.orderId === r.orderId) as OrderStatusEvent | undefined;
    assert.deepEqual([st?.status, st?.reason, st?.remaining, st?.matched], ['CANCELED', 'UNFILLED', 6 * T, 4 * T]);
    ok();
  });

  test('FAK with nothing to match is refused', async () => {
    const m = newMarket();
    const buyer = await funded(10 * T);
    const r = await engine.placeOrder(order({ wallet: buyer, tokenId: m.yes, side: 'BUY', price: 5000, size: 10 * T, type: 'FAK' }));
    assert.equal(r.code, Errors.PM_ERR_FAK_NO_MATCH.result);
    assert.deepEqual(usdc(buyer), { available: 10 * T, reserved: 0 });
    ok();
  });

  test('FOK/FAK BUY: takerAmount rounds down to the lot, makerAmount bounds the spend', async () => {
    const m = newMarket();
    const seller = await funded(0, 20 * T, m.cid);
    const buyer = await funded(10 * T);
    await engine.placeOrder(order({ wallet: seller, tokenId: m.yes, side: 'SELL', price: 4000, size: 20 * T }));
    const o = order({ wallet: buyer, tokenId: m.yes, side: 'BUY', price: 4500, size: 10 * T, type: 'FAK' });
    o.makerAmount = 3 * T;
    o.takerAmount = 6_666_666;
    const r = await engine.placeOrder(o);
    assert.equal(r.ok, true);
    assert.equal(engine.getOrder(r.orderId)?.sizeUnits, 6_660_000);
    assert.equal(engine.getOrder(r.orderId)?.pricePips, 4500);
    assert.equal(r.takingAmount, 6_660_000);
    assert.equal(r.makingAmount, 2_664_000);
    assert.deepEqual(usdc(buyer), { available: 10 * T - 2_664_000, reserved: 0 });
    assert.equal(engine.getOrder(r.orderId)?.status, 'MATCHED');
    ok();
  });

  test('post-only: refused when it would cross, refused on FOK/FAK, rests otherwise', async () => {
    const m = newMarket();
    const seller = await funded(0, 5 * T, m.cid);
    const buyer = await funded(10 * T);
    await engine.placeOrder(order({ wallet: seller, tokenId: m.yes, side: 'SELL', price: 4000, size: 5 * T }));
    const crossing = await engine.placeOrder(order({ wallet: buyer, tokenId: m.yes, side: 'BUY', price: 4000, size: 5 * T, postOnly: true }));
    assert.equal(crossing.code, Errors.PM_ERR_POST_ONLY_CROSSES.result);
    const fok = await engine.placeOrder(order({ wallet: buyer, tokenId: m.yes, side: 'BUY', price: 4000, size: 5 * T, postOnly: true, type: 'FOK' }));
    assert.equal(fok.code, Errors.PM_ERR_POST_ONLY_TYPE.result);
    const resting = await engine.placeOrder(order({ wallet: buyer, tokenId: m.yes, side: 'BUY', price: 3900, size: 5 * T, postOnly: true }));
    assert.equal(resting.status, 'live');
    assert.deepEqual(usdc(buyer), { available: 10 * T - 1_950_000, reserved: 1_950_000 });
    ok();
  });

  test('rejections: tick, min size, lots, balance, expiration, unknown and closed markets', async () => {
    const m = newMarket();
    const closed = newMarket({ acceptingOrders: false });
    const a = await funded(10 * T);
    const cases: Array<[string, ReturnType<typeof order>, number]> = [
      ['off tick', order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 4050, size: 10 * T }), Errors.PM_ERR_ORDER_TICK.result],
      ['price 0', { ...order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 100, size: 10 * T }), makerAmount: 1 }, Errors.PM_ERR_ORDER_TICK.result],
      ['price 1.0', order({ wallet: a, tokenId: m.yes, side: 'SELL', price: 10_000, size: 10 * T }), Errors.PM_ERR_ORDER_TICK.result],
      ['below min size', order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 4000, size: 990_000 }), Errors.PM_ERR_ORDER_MIN_SIZE.result],
      ['not whole lots', order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 4000, size: 10 * T + 5 }), Errors.PM_ERR_ORDER_AMOUNTS.result],
      ['zero amount', { ...order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 4000, size: 10 * T }), makerAmount: 0 }, Errors.PM_ERR_ORDER_AMOUNTS.result],
      ['balance', order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 5000, size: 30 * T }), Errors.PM_ERR_BALANCE.result],
      ['tokens it does not hold', order({ wallet: a, tokenId: m.yes, side: 'SELL', price: 5000, size: 2 * T }), Errors.PM_ERR_BALANCE.result],
      ['GTD under 60 s', order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 4000, size: 2 * T, type: 'GTD', expiration: Math.floor(Date.now() / 1000) + 30 }), Errors.PM_ERR_ORDER_EXPIRATION.result],
      ['expiration on GTC', order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 4000, size: 2 * T, expiration: Math.floor(Date.now() / 1000) + 3600 }), Errors.PM_ERR_ORDER_EXPIRATION.result],
      ['unknown token', order({ wallet: a, tokenId: '999', side: 'BUY', price: 4000, size: 2 * T }), Errors.PM_ERR_MARKET_UNKNOWN.result],
      ['market not accepting', order({ wallet: a, tokenId: closed.yes, side: 'BUY', price: 4000, size: 2 * T }), Errors.PM_ERR_MARKET_NOT_READY.result],
    ];
    for (const [name, o, code] of cases) {
      const r = await engine.placeOrder(o);
      assert.equal(r.ok, false, name);
      assert.equal(r.code, code, name);
    }
    const tick = await engine.placeOrder(cases[0][1]);
    assert.deepEqual(tick.vars, { id: cases[0][1].orderId, price: '0.405', tick: '0.01' });
    assert.deepEqual(usdc(a), { available: 10 * T, reserved: 0 });
    assert.equal(engine.openOrders(a).length, 0);
    ok();
  });

  test('a duplicate order id returns the original outcome and never places a second order', async () => {
    const m = newMarket();
    const a = await funded(10 * T);
    const o = order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 4000, size: 10 * T });
    const [r1, r2] = await Promise.all([engine.placeOrder(o), engine.placeOrder(o)]);
    const r3 = await engine.placeOrder({ ...o, makerAmount: 1 * T });
    assert.deepEqual(r2, r1);
    assert.deepEqual(r3, r1);
    assert.equal(engine.openOrders(a).length, 1);
    assert.deepEqual(usdc(a), { available: 6 * T, reserved: 4 * T });
    ok();
  });

  test('a duplicate that arrives before the original is committed is answered only after that commit', async () => {
    const m = newMarket();
    const seller = await funded(0, 10 * T, m.cid);
    const buyer = await funded(10 * T);
    await engine.placeOrder(order({ wallet: seller, tokenId: m.yes, side: 'SELL', price: 4000, size: 4 * T }));
    // A resting order (stays in memory) and a fully matched FOK (finished, kept until its commit).
    for (const o of [
      order({ wallet: buyer, tokenId: m.yes, side: 'BUY', price: 3000, size: 2 * T }),
      order({ wallet: buyer, tokenId: m.yes, side: 'BUY', price: 4000, size: 4 * T, type: 'FOK' }),
    ]) {
      const first = engine.placeOrder(o);
      // Applied by the sequencer (journaled), not necessarily committed yet.
      while (engine.getOrder(o.orderId) === undefined) await new Promise((r) => setImmediate(r));
      const again = await engine.placeOrder(o);
      const seq = engine.getOrder(o.orderId)!.seq;
      assert.ok(engine.stats().committedSeq >= seq, `duplicate answered before the original's commit (${engine.stats().committedSeq} < ${seq})`);
      assert.deepEqual(again, await first);
    }
    ok();
  });

  test('cancel: own orders only; others and unknown ids are "order not found"', async () => {
    const m = newMarket();
    const a = await funded(10 * T);
    const b = await funded(10 * T);
    const oa = await engine.placeOrder(order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 4000, size: 5 * T }));
    const oa2 = await engine.placeOrder(order({ wallet: a, tokenId: m.no, side: 'BUY', price: 3000, size: 5 * T }));
    const ob = await engine.placeOrder(order({ wallet: b, tokenId: m.yes, side: 'BUY', price: 3000, size: 5 * T }));
    const r = await engine.cancelOrders(a, [oa.orderId, ob.orderId, '0x' + 'f'.repeat(64)]);
    assert.deepEqual(r.canceled, [oa.orderId]);
    assert.deepEqual(r.notCanceled, { [ob.orderId]: 'order not found', ['0x' + 'f'.repeat(64)]: 'order not found' });
    assert.equal(engine.getOrder(oa.orderId)?.status, 'CANCELED');
    assert.equal(engine.getOrder(ob.orderId)?.status, 'LIVE');
    const again = await engine.cancelOrders(a, [oa.orderId]);
    assert.deepEqual(again.notCanceled, { [oa.orderId]: 'order already canceled' });
    const byToken = await engine.cancelMarketOrders(a, { tokenId: m.yes });
    assert.deepEqual(byToken.canceled, []);
    const all = await engine.cancelAll(a);
    assert.deepEqual(all.canceled, [oa2.orderId]);
    assert.deepEqual(usdc(a), { available: 10 * T, reserved: 0 });
    const bm = await engine.cancelMarketOrders(b, { conditionId: m.cid });
    assert.deepEqual(bm.canceled, [ob.orderId]);
    ok();
  });

  test('a proxy or Safe order reserves and settles on its maker (the funder) and is its signer\'s to list and cancel', async () => {
    const m = newMarket();
    const signer = wallet(++walletNo);
    const safe = await funded(10 * T);
    const seller = await funded(0, 5 * T, m.cid);
    const funder = (o: ReturnType<typeof order>) => ({ ...o, signer, signatureType: 2 });
    const bid = await engine.placeOrder(funder(order({ wallet: safe, tokenId: m.yes, side: 'BUY', price: 4000, size: 10 * T })));
    assert.equal(bid.status, 'live');
    assert.deepEqual(usdc(safe), { available: 6 * T, reserved: 4 * T });
    assert.deepEqual(usdc(signer), { available: 0, reserved: 0 }, 'the signer\'s own wallet is untouched');
    assert.deepEqual(engine.openOrders(signer).map((o) => [o.orderId, o.wallet, o.signer]), [[bid.orderId, safe, signer]]);
    assert.deepEqual(engine.openOrders(safe), [], 'listed under the key\'s wallet, the signer, not the funder');

    const ask = await engine.placeOrder(order({ wallet: seller, tokenId: m.yes, side: 'SELL', price: 4000, size: 5 * T }));
    assert.equal(ask.status, 'matched');
    assert.deepEqual(token(safe, m.yes), { available: 5 * T, reserved: 0 }, 'the tokens land on the funder');
    assert.deepEqual(usdc(safe), { available: 6 * T, reserved: 2 * T });

    const byFunder = await engine.cancelOrders(safe, [bid.orderId]);
    assert.deepEqual(byFunder.notCanceled, { [bid.orderId]: 'order not found' }, 'a funder address holds no key: it cancels nothing');
    assert.deepEqual((await engine.cancelAll(signer)).canceled, [bid.orderId]);
    assert.deepEqual(usdc(safe), { available: 8 * T, reserved: 0 });
    assert.deepEqual((await engine.cancelOrders(signer, [bid.orderId])).notCanceled, { [bid.orderId]: 'order already canceled' });
    ok();
  });

  test('self-trade: the taker cancels its own resting order instead of trading with it', async () => {
    const m = newMarket();
    const a = await funded(10 * T, 5 * T, m.cid);
    const ask = await engine.placeOrder(order({ wallet: a, tokenId: m.yes, side: 'SELL', price: 4000, size: 5 * T }));
    const bid = await engine.placeOrder(order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 4000, size: 5 * T }));
    assert.equal(bid.status, 'live');
    assert.deepEqual(bid.tradeIds, []);
    assert.equal(engine.getOrder(ask.orderId)?.status, 'CANCELED');
    const st = events.find((e) => e.type === 'status' && e.orderId === ask.orderId) as OrderStatusEvent | undefined;
    assert.equal(st?.reason, 'SELF_TRADE');
    ok();
  });

  test('resolution cancels open orders and redeem pays 1 per winning token', async () => {
    const m = newMarket();
    const a = await funded(10 * T, 10 * T, m.cid);
    const b = await funded(10 * T);
    await engine.placeOrder(order({ wallet: a, tokenId: m.no, side: 'SELL', price: 3000, size: 4 * T }));
    const bid = await engine.placeOrder(order({ wallet: b, tokenId: m.yes, side: 'BUY', price: 2000, size: 5 * T }));
    const fill = await engine.placeOrder(order({ wallet: b, tokenId: m.no, side: 'BUY', price: 3000, size: 4 * T }));
    assert.equal(fill.status, 'matched');
    assert.deepEqual(await engine.redeem(a, m.cid), { ok: false, code: Errors.PM_ERR_MARKET_NOT_RESOLVED.result });
    assert.deepEqual(await engine.resolveMarket(m.cid, 0), { ok: true, code: 0 });
    assert.equal(engine.getOrder(bid.orderId)?.status, 'CANCELED_MARKET_RESOLVED');
    assert.deepEqual(await engine.resolveMarket(m.cid, 1), { ok: false, code: Errors.PM_ERR_MARKET_RESOLVED.result });
    const late = await engine.placeOrder(order({ wallet: b, tokenId: m.yes, side: 'BUY', price: 2000, size: 5 * T }));
    assert.equal(late.code, Errors.PM_ERR_MARKET_NOT_READY.result);
    assert.deepEqual(await engine.redeem(a, m.cid), { ok: true, code: 0 });
    assert.deepEqual(usdc(a), { available: 10 * T + 1_200_000 + 10 * T, reserved: 0 });
    assert.deepEqual(await engine.redeem(b, m.cid), { ok: true, code: 0 });
    assert.deepEqual(usdc(b), { available: 10 * T - 1_200_000, reserved: 0 });
    assert.deepEqual(engine.balances(b).tokens, []);
    assert.equal(engine.usdcTotals().collateral >= 0, true);
    ok();
  });

  test('deposit, withdraw, split and merge validate amounts and balances', async () => {
    const m = newMarket();
    const a = wallet(++walletNo);
    assert.deepEqual(await engine.deposit(a, -5), { ok: false, code: Errors.PM_ERR_AMOUNT.result });
    assert.deepEqual(await engine.withdraw(a, T), { ok: false, code: Errors.PM_ERR_BALANCE.result });
    assert.deepEqual(await engine.deposit(a, 5 * T), { ok: true, code: 0 });
    assert.deepEqual(await engine.split(a, m.cid, 6 * T), { ok: false, code: Errors.PM_ERR_BALANCE.result });
    assert.deepEqual(await engine.split(a, m.cid, 3 * T), { ok: true, code: 0 });
    assert.deepEqual(await engine.merge(a, m.cid, T), { ok: true, code: 0 });
    assert.deepEqual(await engine.withdraw(a, 3 * T), { ok: true, code: 0 });
    assert.deepEqual(usdc(a), { available: 0, reserved: 0 });
    assert.deepEqual(token(a, m.yes), { available: 2 * T, reserved: 0 });
    ok();
  });

  test('concurrent orders of one wallet on markets of different shards never overspend', async () => {
    const ms = [newMarket(), newMarket(), newMarket(), newMarket()];
    const shards = new Set(ms.map((m) => engine.market(m.cid)?.shard));
    assert.equal(shards.size, 2, 'markets cover both shards');
    const a = await funded(100 * T);
    const all = [];
    for (let i = 0; i < 400; i++) {
      const m = ms[i % ms.length];
      all.push(engine.placeOrder(order({ wallet: a, tokenId: i % 2 ? m.yes : m.no, side: 'BUY', price: 1000 + 100 * (i % 3), size: 10 * T })));
    }
    const rs = await Promise.all(all);
    const accepted = rs.filter((r) => r.ok);
    const spent = accepted.reduce((s, r) => s + (engine.getOrder(r.orderId)?.makerAmount ?? 0), 0);
    assert.ok(spent <= 100 * T);
    assert.ok(rs.filter((r) => !r.ok).every((r) => r.code === Errors.PM_ERR_BALANCE.result));
    const u = usdc(a);
    assert.ok(u.available >= 0 && u.available < 1 * T, `nearly everything is reserved: ${u.available}`);
    assert.equal(u.reserved, spent);
    ok();
  });

  test('group commit: many concurrent orders share few transactions', async () => {
    const m = newMarket();
    const a = await funded(1000 * T);
    const before = engine.stats().transactions;
    const n = 300;
    const rs = await Promise.all(Array.from({ length: n }, (_, i) => engine.placeOrder(order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 100 + 100 * (i % 50), size: T }))));
    assert.ok(rs.every((r) => r.ok));
    const used = engine.stats().transactions - before;
    assert.ok(used < n / 3, `${used} transactions for ${n} orders`);
    ok();
  });

  test('committed events carry consecutive sequence numbers', () => {
    for (let i = 1; i < events.length; i++) assert.equal(events[i].seq, events[i - 1].seq + 1);
  });

  test('a crossing order journals one fill per maker level, in price-time order', async () => {
    const m = newMarket();
    const seller = await funded(0, 10 * T, m.cid);
    const buyer = await funded(10 * T);
    for (let i = 0; i < 3; i++) {
      await engine.placeOrder(order({ wallet: seller, tokenId: m.yes, side: 'SELL', price: 4000 + 100 * i, size: T }));
    }
    await engine.placeOrder(order({ wallet: buyer, tokenId: m.yes, side: 'BUY', price: 5000, size: 3 * T }));
    const mine = events.filter((e): e is FillEvent => e.type === 'fill' && e.takerWallet === buyer);
    assert.deepEqual(mine.map((t) => t.makerPricePips), [4000, 4100, 4200]);
    assert.ok(mine.every((t, i) => i === 0 || t.seq > mine[i - 1].seq));
  });

  test('book snapshots: both tokens mirrored, hash over the body with an empty hash', async () => {
    const m = newMarket();
    const a = await funded(10 * T);
    await engine.placeOrder(order({ wallet: a, tokenId: m.yes, side: 'BUY', price: 4000, size: 10 * T }));
    await engine.refreshSnapshot(m.cid);
    const yes = JSON.parse(engine.bookSnapshot(m.yes)?.json as string);
    const no = JSON.parse(engine.bookSnapshot(m.no)?.json as string);
    assert.deepEqual(yes.bids, [{ price: '0.4', size: '10' }]);
    assert.deepEqual(no.asks, [{ price: '0.6', size: '10' }]);
    assert.equal(yes.market, m.cid);
    assert.equal(yes.tick_size, '0.01');
    const { createHash } = await import('node:crypto');
    const body = { ...yes, hash: '' };
    assert.equal(yes.hash, createHash('sha1').update(JSON.stringify(body)).digest('hex'));
    assert.ok((engine.bookSnapshot(m.yes)?.version ?? 0) >= 1);
  });
});

describe('GTD expiry', () => {
  test('a GTD order expires on time with no traffic, releasing its reservation', async () => {
    const env2 = tempStore();
    // The engine's clock runs 58 s behind the wall clock, so an expiration 2 s ahead passes the 60 s rule
    // while the shards (wall clock) expire it 2 s from now.
    const e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger, now: () => Date.now() - 58_000 });
    const seen: JournalEvent[] = [];
    e.onCommitted((evs) => seen.push(...evs));
    try {
      const m = market(1);
      e.registerMarket(m);
      const a = wallet(1);
      await e.deposit(a, 10 * T);
      const exp = Math.floor(Date.now() / 1000) + 2;
      const r = await e.placeOrder(order({ wallet: a, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 10 * T, type: 'GTD', expiration: exp }));
      assert.equal(r.status, 'live');
      assert.deepEqual(e.balances(a).usdc, { available: 6 * T, reserved: 4 * T });
      await until(() => e.getOrder(r.orderId)?.status === 'CANCELED', 6000);
      assert.ok(Date.now() >= exp * 1000, 'not before its expiration');
      assert.ok(Date.now() < exp * 1000 + 1500, 'promptly after it');
      await until(() => seen.some((x) => x.type === 'status' && x.orderId === r.orderId));
      const st = seen.find((x) => x.type === 'status' && x.orderId === r.orderId) as OrderStatusEvent;
      assert.equal(st.reason, 'EXPIRED');
      assert.deepEqual(e.balances(a).usdc, { available: 10 * T, reserved: 0 });
      assert.deepEqual(invariants(e), []);
    } finally {
      await e.close();
      await env2.cleanup();
    }
  });
});

describe('GTD expiry across a restart', () => {
  test('an order that expired while the engine was down is expired right after recovery', async () => {
    const env2 = tempStore();
    const now = () => Date.now() - 58_000;
    try {
      let e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger, now });
      const m = market(1);
      e.registerMarket(m);
      const a = wallet(1);
      await e.deposit(a, 10 * T);
      const exp = Math.floor(Date.now() / 1000) + 2;
      const r = await e.placeOrder(order({ wallet: a, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 10 * T, type: 'GTD', expiration: exp }));
      assert.equal(r.status, 'live');
      await e.close();
      await until(() => Date.now() > exp * 1000 + 200, 5000);
      e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger, now });
      try {
        await until(() => e.getOrder(r.orderId)?.status === 'CANCELED', 3000);
        assert.deepEqual(e.balances(a).usdc, { available: 10 * T, reserved: 0 });
        assert.deepEqual(invariants(e), []);
      } finally {
        await e.close();
      }
    } finally {
      await env2.cleanup();
    }
  });
});

describe('restart', () => {
  test('the proof a start reports (EngineOptions.onProof) is left as it was while the engine trades on what it restored', async () => {
    const env2 = tempStore();
    try {
      let e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger });
      const m = market(1);
      e.registerMarket(m);
      const [a, b] = [wallet(1), wallet(2)];
      await e.deposit(a, 100 * T);
      await e.deposit(b, 100 * T);
      await e.split(b, m.conditionId, 50 * T);
      const bid = await e.placeOrder(order({ wallet: a, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 20 * T }));
      assert.equal((await e.placeOrder(order({ wallet: b, tokenId: m.tokenIds[0], side: 'SELL', price: 4000, size: 5 * T }))).status, 'matched');
      await e.close();

      let proof: VerifiedStore | undefined;
      let asReported: unknown;
      e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger, onProof: (v) => ((proof = v), (asReported = structuredClone(v.materialized))) });
      try {
        assert.equal(proof?.materialized.openOrders.length, 1);
        // A fill of the restored bid changes its record in the engine (size matched, trades, status).
        assert.equal((await e.placeOrder(order({ wallet: b, tokenId: m.tokenIds[0], side: 'SELL', price: 4000, size: 15 * T }))).status, 'matched');
        assert.equal(e.getOrder(bid.orderId)?.status, 'MATCHED');
        assert.deepEqual(proof!.materialized, asReported, 'the proof is as it was reported');
      } finally {
        await e.close();
      }
    } finally {
      await env2.cleanup();
    }
  });

  test('a restart recovers the identical state hash, open orders and books', async () => {
    const env2 = tempStore();
    try {
      let e = await Engine.open({ store: env2.store, shards: 2, log: silentLogger });
      const ms = [market(1, { makerFeeBps: 50, takerFeeBps: 100 }), market(2), market(3)];
      for (const m of ms) e.registerMarket(m);
      const ws = [wallet(1), wallet(2), wallet(3)];
      for (const w of ws) {
        await e.deposit(w, 1000 * T);
        for (const m of ms) await e.split(w, m.conditionId, 100 * T);
      }
      let seed = 7;
      const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
      const placed = [];
      for (let i = 0; i < 300; i++) {
        const m = ms[rnd(3)];
        placed.push(
          e.placeOrder(
            order({ wallet: ws[rnd(3)], tokenId: m.tokenIds[rnd(2)], side: rnd(2) ? 'BUY' : 'SELL', price: 3000 + 100 * rnd(40), size: T * (1 + rnd(5)), type: rnd(10) === 0 ? 'FAK' : 'GTC' }),
          ),
        );
      }
      await Promise.all(placed);
      assert.deepEqual(invariants(e), []);
      const hash = e.stateHash();
      const open = e.openOrders(ws[0]).map((o) => o.orderId);
      await e.refreshSnapshot(ms[0].conditionId);
      const book = JSON.parse(e.bookSnapshot(ms[0].tokenIds[0])?.json as string);
      await e.close();

      e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger });
      assert.equal(e.stateHash(), hash);
      assert.deepEqual(e.openOrders(ws[0]).map((o) => o.orderId), open);
      await e.refreshSnapshot(ms[0].conditionId);
      const book2 = JSON.parse(e.bookSnapshot(ms[0].tokenIds[0])?.json as string);
      assert.deepEqual([book2.bids, book2.asks, book2.last_trade_price], [book.bids, book.asks, book.last_trade_price]);
      assert.deepEqual(invariants(e), []);
      // Trading continues on the recovered books.
      const r = await e.placeOrder(order({ wallet: ws[0], tokenId: ms[1].tokenIds[0], side: 'BUY', price: 9900, size: T, type: 'FAK' }));
      assert.ok(r.ok || r.code === Errors.PM_ERR_FAK_NO_MATCH.result);
      assert.deepEqual(invariants(e), []);
      await e.close();
    } finally {
      await env2.cleanup();
    }
  });
});

describe('resting records', () => {
  // Unfilled resting orders share one empty trade list and one unfilled answer (engine.ts, NO_TRADES):
  // a fill must give the order it touches its own list and leave every other record as it was.
  test('a fill lands on the records it touches only, before and after a restart', async () => {
    const env2 = tempStore();
    const m = market(1);
    const [maker1, maker2, maker3, taker] = [wallet(1), wallet(2), wallet(3), wallet(4)];
    const ask = (w: string, price: number) => order({ wallet: w, tokenId: m.tokenIds[0], side: 'SELL', price, size: 10 * T });
    const trades = (e: Engine, id: string) => {
      const rec = e.getOrder(id)!;
      return { tradeIds: rec.tradeIds, fills: rec.fillSeqs.length, matched: rec.sizeMatched, answer: rec.response.tradeIds };
    };
    const unfilled = { tradeIds: [], fills: 0, matched: 0, answer: [] };
    let e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger });
    try {
      e.registerMarket(m);
      for (const w of [maker1, maker2, maker3]) {
        await e.deposit(w, 10 * T);
        await e.split(w, m.conditionId, 10 * T);
      }
      await e.deposit(taker, 100 * T);
      const [a, b, c] = [await e.placeOrder(ask(maker1, 4000)), await e.placeOrder(ask(maker2, 4100)), await e.placeOrder(ask(maker3, 4200))];
      for (const r of [a, b, c]) assert.deepEqual([r.status, r.tradeIds], ['live', []]);

      const buy1 = await e.placeOrder(order({ wallet: taker, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 4 * T }));
      assert.equal(buy1.tradeIds.length, 1);
      assert.deepEqual(trades(e, a.orderId), { tradeIds: buy1.tradeIds, fills: 1, matched: 4 * T, answer: [] });
      assert.deepEqual(trades(e, b.orderId), unfilled);
      assert.deepEqual(trades(e, c.orderId), unfilled);
      // A retry of a resting order still gets its original answer.
      assert.deepEqual(await e.placeOrder({ ...ask(maker2, 4100), orderId: b.orderId }), b);
      // A resting BUY that never filled answers with no trades.
      const rest = await e.placeOrder(order({ wallet: taker, tokenId: m.tokenIds[0], side: 'BUY', price: 3000, size: 1 * T }));
      assert.deepEqual([rest.status, rest.tradeIds], ['live', []]);
      // A taker that fills in part and rests answers with its trades, and so does a retry of it.
      const part0 = await e.placeOrder(order({ wallet: taker, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 8 * T }));
      assert.deepEqual([part0.status, part0.tradeIds.length, part0.takingAmount], ['live', 1, 6 * T]);
      assert.deepEqual(trades(e, part0.orderId), { tradeIds: part0.tradeIds, fills: 1, matched: 6 * T, answer: part0.tradeIds });
      await e.close();

      e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger });
      assert.deepEqual(await e.placeOrder({ ...ask(taker, 4000), orderId: part0.orderId }), part0);
      assert.deepEqual(await e.placeOrder({ ...ask(maker2, 4100), orderId: b.orderId }), b);
      assert.deepEqual(trades(e, a.orderId), { tradeIds: [...buy1.tradeIds, ...part0.tradeIds], fills: 2, matched: 10 * T, answer: [] });
      const buy2 = await e.placeOrder(order({ wallet: taker, tokenId: m.tokenIds[0], side: 'BUY', price: 4100, size: 8 * T }));
      assert.deepEqual([buy2.status, buy2.tradeIds.length], ['matched', 1]);
      assert.deepEqual(trades(e, b.orderId), { tradeIds: buy2.tradeIds, fills: 1, matched: 8 * T, answer: [] });
      assert.deepEqual(trades(e, c.orderId), unfilled);
      assert.deepEqual(trades(e, rest.orderId), unfilled);
      const part = await e.placeOrder(order({ wallet: taker, tokenId: m.tokenIds[0], side: 'BUY', price: 4100, size: 10 * T }));
      assert.deepEqual([part.status, part.tradeIds.length, part.takingAmount], ['live', 1, 2 * T]);
      assert.deepEqual(trades(e, part.orderId), { tradeIds: part.tradeIds, fills: 1, matched: 2 * T, answer: part.tradeIds });
      assert.deepEqual(await e.placeOrder({ ...ask(taker, 4100), orderId: part.orderId }), part);
      assert.deepEqual(trades(e, b.orderId), { tradeIds: [...buy2.tradeIds, ...part.tradeIds], fills: 2, matched: 10 * T, answer: [] });
      assert.deepEqual(trades(e, c.orderId), unfilled);
      assert.deepEqual(trades(e, part0.orderId), { tradeIds: part0.tradeIds, fills: 1, matched: 6 * T, answer: part0.tradeIds });
      assert.deepEqual(invariants(e), []);
    } finally {
      await e.close();
      await env2.cleanup();
    }
  });
});

describe('shard failure', () => {
  test('an unexpected throw in a shard stops the engine: no further orders are accepted', async () => {
    const env2 = tempStore();
    const e = await Engine.open({
      store: env2.store,
      shards: 1,
      log: silentLogger,
      bookFactory: { module: new URL('../fixtures/faulty-book.ts', import.meta.url).href, export: 'createFaultyBook' },
    });
    try {
      const m = market(1);
      e.registerMarket(m);
      const a = wallet(1);
      await e.deposit(a, 100 * T);
      const fine = await e.placeOrder(order({ wallet: a, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 10 * T }));
      assert.equal(fine.ok, true);
      const boom = await e.placeOrder(order({ wallet: a, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 13 * T }));
      assert.equal(boom.code, Errors.PM_ERR_ENGINE_DOWN.result);
      assert.match(e.failure?.message ?? '', /shard 0 failed: injected book fault/);
      const after = await e.placeOrder(order({ wallet: a, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 10 * T }));
      assert.equal(after.code, Errors.PM_ERR_ENGINE_DOWN.result);
      assert.deepEqual(await e.deposit(a, T), { ok: false, code: Errors.PM_ERR_ENGINE_DOWN.result });
      assert.deepEqual(await e.afterCommit(), { ok: false, code: Errors.PM_ERR_ENGINE_DOWN.result }, 'memory a halted engine holds is never vouched for');
    } finally {
      await e.close();
    }
    // What was committed before the failure is intact and recovers.
    const again = await Engine.open({ store: env2.store, shards: 1, log: silentLogger });
    try {
      assert.equal(again.openOrders(wallet(1)).length, 1);
      assert.deepEqual(invariants(again), []);
    } finally {
      await again.close();
      await env2.cleanup();
    }
  });
});

describe('backpressure', () => {
  test('tiny rings: full rings queue (bounded), refuse with ENGINE_BUSY past the bound, lose nothing', async () => {
    const env2 = tempStore();
    const e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger, commandRingSlots: 4, resultRingSlots: 8, overflowLimit: 32 });
    try {
      const m = market(1);
      e.registerMarket(m);
      const seller = wallet(1);
      const buyer = wallet(2);
      await e.deposit(seller, 1000 * T);
      await e.split(seller, m.conditionId, 100 * T);
      await e.deposit(buyer, 1000 * T);
      // 30 resting asks, then one bid that sweeps them all: a 31-record group through an 8-slot result ring.
      const asks = await Promise.all(
        Array.from({ length: 30 }, (_, i) => e.placeOrder(order({ wallet: seller, tokenId: m.tokenIds[0], side: 'SELL', price: 3000 + 100 * i, size: T }))),
      );
      assert.ok(asks.every((r) => r.ok));
      const sweep = await e.placeOrder(order({ wallet: buyer, tokenId: m.tokenIds[0], side: 'BUY', price: 9000, size: 30 * T }));
      assert.equal(sweep.status, 'matched');
      assert.equal(sweep.tradeIds.length, 30);
      // A burst far beyond ring + queue: every request is answered, some with ENGINE_BUSY, none dropped.
      const burst = await Promise.all(
        Array.from({ length: 200 }, (_, i) => e.placeOrder(order({ wallet: buyer, tokenId: m.tokenIds[i % 2], side: 'BUY', price: 1000, size: T }))),
      );
      const busy = burst.filter((r) => r.code === Errors.PM_ERR_ENGINE_BUSY.result).length;
      const placed = burst.filter((r) => r.ok).length;
      assert.equal(busy + placed, 200);
      assert.ok(busy > 0, 'past the bound requests are refused');
      assert.ok(placed >= 32, 'the bounded queue was used');
      const st = e.stats();
      assert.ok(st.backpressureWaits > 0);
      assert.equal(st.busyRejects, busy);
      assert.equal(e.openOrders(buyer).length, placed);
      assert.deepEqual(invariants(e), []);
    } finally {
      await e.close();
      await env2.cleanup();
    }
  });
});

test('an orderly close merges the order-id runs its batches left, and the next open finds every order from them', async () => {
  const env2 = tempStore('pm-engine-runs-');
  let e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger });
  try {
    const m = market(900);
    e.registerMarket(m);
    const w = wallet(900);
    await e.deposit(w, 1000 * T);
    // One batch each: every placement is answered (committed) before the next is sent.
    const ids: string[] = [];
    for (let i = 0; i < 80; i++) {
      const r = await e.placeOrder(order({ wallet: w, tokenId: m.tokenIds[0], side: 'BUY', price: 1000, size: T }));
      assert.ok(r.ok);
      ids.push(r.orderId);
    }
    assert.equal(env2.store.orderIds.getCount(), 80);
    await e.close();
    assert.equal(env2.store.orderIds.getCount(), 1, 'merged by the close');
    e = await Engine.open({ store: env2.store, shards: 1, log: silentLogger });
    // Through the id index the open loaded from the merged runs (no engine memory in between).
    for (const id of ids) assert.equal(readOrder(env2.store, id)?.status, 'LIVE', id);
    assert.equal(e.openOrders(w).length, 80);
  } finally {
    await e.close();
    await env2.cleanup();
  }
});
