/**
 * Trading through real HTTP with real keys and signatures: one market (tick 0.01, minimum 1 token,
 * no fees), two funded wallets, and a scripted session whose balances are worked out by hand.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type App } from '../../src/node/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { TestClient, units } from '../fixtures/trading-client.ts';

const CID = `0x${'c1'.repeat(32)}`;
const ALICE_KEY = `0x${'a1'.repeat(32)}` as const;
const BOB_KEY = `0x${'b2'.repeat(32)}` as const;

async function admin(base: string, method: string, path: string, body?: unknown) {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as any };
}

test('trading session over HTTP: rest, cross, mint, merge, rejections, batches, cancels, retries, split/merge/redeem', async (t) => {
  const app: App = await startApp(
    testConfig({ dataDir: mkdtempSync(join(tmpdir(), 'pm-trade-')), http: { port: 0 }, adminToken: 't', demo: false, rateLimits: { enabled: false }, auth: { signatureThreads: 1 } }),
    { log: silentLogger },
  );
  const base = `http://127.0.0.1:${app.port}`;
  try {
    const imported = await admin(base, 'POST', '/admin/events', [
      {
        title: 'Trading test',
        slug: 'trading-test',
        endDate: '2027-06-30T00:00:00Z',
        markets: [{ question: 'Will the test pass?', conditionId: CID, orderPriceMinTickSize: 0.01, orderMinSize: '1' }],
      },
    ]);
    assert.equal(imported.status, 200, JSON.stringify(imported.body));
    const [YES, NO] = app.ctx.catalog.read.marketByCondition(CID)!.clobTokenIds;
    const info = await TestClient.info(base);
    const alice = new TestClient(base, ALICE_KEY, info);
    const bob = new TestClient(base, BOB_KEY, info);
    for (const c of [alice, bob]) {
      assert.equal((await admin(base, 'POST', `/admin/wallets/${c.address}/deposit`, { amount: '100' })).status, 200);
      await c.createKey();
    }
    const usdc = async (c: TestClient) => Number((await c.call('GET', '/balance-allowance?asset_type=COLLATERAL')).body.balance);
    const tokens = async (c: TestClient, token: string) => Number((await c.call('GET', `/balance-allowance?asset_type=CONDITIONAL&token_id=${token}`)).body.balance);
    const order = async (id: string) => (await fetch(`${base}/data/order/${id}`)).json() as Promise<any>;

    let aliceBid = '';
    await t.test('a BUY that does not cross rests: live, nothing exchanged, USDC reserved', async () => {
      const r = await alice.place({ tokenId: YES, side: 'BUY', makerAmount: units(4), takerAmount: units(10) });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual({ ...r.body, orderID: undefined, tradeIDs: undefined }, { success: true, errorMsg: '', orderID: undefined, status: 'live', makingAmount: '0', takingAmount: '0', tradeIDs: undefined });
      assert.match(r.body.orderID, /^0x[0-9a-f]{64}$/);
      aliceBid = r.body.orderID;
      const o = (await order(aliceBid)).order;
      assert.deepEqual([o.status, o.price, o.originalSize, o.sizeMatched, o.side, o.type, o.assetId, o.market, o.makerAddress, o.outcome], ['LIVE', '0.4', '10', '0', 'BUY', 'GTC', YES, CID, alice.address, 'Yes']);
      assert.equal(await usdc(alice), units(96));
    });

    await t.test('selling tokens one does not hold is refused with the platform message', async () => {
      const r = await bob.place({ tokenId: YES, side: 'SELL', makerAmount: units(4), takerAmount: units(1.6) });
      assert.equal(r.status, 400);
      assert.match(r.body.error, /^not enough balance \/ allowance/);
    });

    await t.test('split turns USDC into one of each outcome', async () => {
      const r = await bob.call('POST', '/split', { conditionId: CID, amount: '20' });
      assert.deepEqual([r.status, r.body], [200, { success: true }]);
      assert.equal(await usdc(bob), units(80));
      assert.equal(await tokens(bob, YES), units(20));
      assert.equal(await tokens(bob, NO), units(20));
    });

    await t.test('a crossing SELL transfers at the resting price and shows on the maker order', async () => {
      const r = await bob.place({ tokenId: YES, side: 'SELL', makerAmount: units(4), takerAmount: units(1.6) });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual([r.body.status, r.body.makingAmount, r.body.takingAmount], ['matched', '4', '1.6']);
      const o = (await order(aliceBid)).order;
      assert.deepEqual([o.status, o.sizeMatched, o.associateTrades.length], ['LIVE', '4', 1]);
    });

    await t.test('BUY NO against a resting BUY YES mints: both pay their side of 1 USDC per pair', async () => {
      const r = await bob.place({ tokenId: NO, side: 'BUY', makerAmount: units(3.6), takerAmount: units(6) });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual([r.body.status, r.body.makingAmount, r.body.takingAmount], ['matched', '3.6', '6']);
      const o = (await order(aliceBid)).order;
      assert.deepEqual([o.status, o.sizeMatched, o.associateTrades.length], ['MATCHED', '10', 2]);
      assert.equal(await tokens(alice, YES), units(10));
    });

    await t.test('SELL NO against a resting SELL YES merges: the pair becomes 1 USDC split at the maker price', async () => {
      const ask = await alice.place({ tokenId: YES, side: 'SELL', makerAmount: units(5), takerAmount: units(2.75) });
      assert.equal(ask.body.status, 'live');
      const r = await bob.place({ tokenId: NO, side: 'SELL', makerAmount: units(5), takerAmount: units(2.25) });
      assert.deepEqual([r.body.status, r.body.makingAmount, r.body.takingAmount], ['matched', '5', '2.25']);
      assert.equal((await order(ask.body.orderID)).order.status, 'MATCHED');
      // Alice: 100 - 1.6 (transfer) - 2.4 (mint) + 2.75 (merge); Bob: 100 - 20 + 1.6 - 3.6 + 2.25.
      assert.equal(await usdc(alice), units(98.75));
      assert.equal(await usdc(bob), units(80.25));
      assert.deepEqual([await tokens(alice, YES), await tokens(bob, YES), await tokens(bob, NO)], [units(5), units(16), units(21)]);
    });

    await t.test('GET /data/trades lists the caller\'s fills from its own side, with filters and a cursor', async () => {
      const a = await alice.call('GET', '/data/trades');
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.deepEqual([a.body.count, a.body.next_cursor], [3, 'LTE=']);
      assert.deepEqual(a.body.data.map((x: any) => x.trader_side), ['MAKER', 'MAKER', 'MAKER']);
      const b = await bob.call('GET', '/data/trades');
      // Bob took all three: sold 4 YES at 0.40, bought 6 NO at 0.60 (mint), sold 5 NO at 0.45 (merge).
      assert.deepEqual(b.body.data.map((x: any) => [x.trader_side, x.side, x.size, x.price, x.asset_id]), [
        ['TAKER', 'SELL', '4', '0.4', YES],
        ['TAKER', 'BUY', '6', '0.6', NO],
        ['TAKER', 'SELL', '5', '0.45', NO],
      ]);
      assert.deepEqual(b.body.data.map((x: any) => x.maker_orders[0].maker_address), [alice.address, alice.address, alice.address]);
      assert.equal((await bob.call('GET', `/data/trades?asset_id=${NO}`)).body.count, 2);
      assert.equal((await bob.call('GET', `/data/trades?id=${b.body.data[0].id}`)).body.data[0].id, b.body.data[0].id);
      assert.equal((await bob.call('GET', `/data/trades?market=${CID}&after=${Math.floor(Date.now() / 1000) + 60}`)).body.count, 0);
      assert.deepEqual((await bob.call('GET', '/data/trades?next_cursor=LTE=')).body.data, []);
      assert.equal((await bob.call('GET', '/data/trades?next_cursor=nope')).status, 400);
    });

    await t.test('merge turns one of each outcome back into USDC', async () => {
      const r = await bob.call('POST', '/merge', { conditionId: CID, amount: '1' });
      assert.deepEqual([r.status, r.body], [200, { success: true }]);
      assert.equal(await usdc(bob), units(81.25));
      assert.deepEqual([await tokens(bob, YES), await tokens(bob, NO)], [units(15), units(20)]);
      const tooMuch = await bob.call('POST', '/merge', { conditionId: CID, amount: '1000' });
      assert.equal(tooMuch.status, 400);
    });

    await t.test('redeem before resolution is refused naming the market', async () => {
      const early = await bob.call('POST', '/redeem', { conditionId: CID });
      assert.deepEqual([early.status, early.body], [400, { error: `market ${CID} is not resolved` }]);
    });

    const bobAsk = await bob.place({ tokenId: YES, side: 'SELL', makerAmount: units(2), takerAmount: units(1) });
    assert.equal(bobAsk.body.status, 'live');

    const rejections: { name: string; run: () => Promise<{ status: number; body: any }>; error: RegExp }[] = [
      { name: 'off-tick price', run: () => alice.place({ tokenId: YES, side: 'BUY', makerAmount: units(4.05), takerAmount: units(10) }), error: /breaks minimum tick size rule: 0\.01/ },
      { name: 'size below the minimum', run: () => alice.place({ tokenId: YES, side: 'BUY', makerAmount: units(0.2), takerAmount: units(0.5) }), error: /lower than the minimum: 1/ },
      { name: 'post-only that crosses', run: () => alice.place({ tokenId: YES, side: 'BUY', makerAmount: units(1), takerAmount: units(2), postOnly: true }), error: /^invalid post-only order: order crosses book$/ },
      { name: 'FOK that cannot fill entirely', run: () => alice.place({ tokenId: YES, side: 'BUY', makerAmount: units(2.5), takerAmount: units(5), orderType: 'FOK' }), error: /FOK orders are fully filled or killed/ },
      { name: 'FAK with nothing to match', run: () => alice.place({ tokenId: YES, side: 'BUY', makerAmount: units(0.9), takerAmount: units(2), orderType: 'FAK' }), error: /^no orders found to match with FAK order/ },
      { name: 'GTD expiring in under a minute', run: () => alice.place({ tokenId: YES, side: 'BUY', makerAmount: units(0.3), takerAmount: units(1), orderType: 'GTD', expiration: Math.floor(Date.now() / 1000) + 30 }), error: /^invalid expiration$/ },
      {
        name: 'owner that is not the calling key',
        run: async () => alice.call('POST', '/order', { ...(await alice.signOrder({ tokenId: YES, side: 'BUY', makerAmount: units(1), takerAmount: units(10) })), owner: bob.creds!.apiKey }),
        error: /owner has to be the owner of the API KEY/,
      },
      {
        name: 'signer that is not the key address',
        run: async () => bob.call('POST', '/order', { ...(await alice.signOrder({ tokenId: YES, side: 'BUY', makerAmount: units(1), takerAmount: units(10) })), owner: bob.creds!.apiKey }),
        error: /signer address has to be the address of the API KEY/,
      },
      {
        name: 'amount changed after signing',
        run: async () => {
          const s = await alice.signOrder({ tokenId: YES, side: 'BUY', makerAmount: units(1), takerAmount: units(10) });
          (s.order as Record<string, unknown>).makerAmount = String(units(2));
          return alice.call('POST', '/order', s);
        },
        error: /^invalid order signature$/,
      },
      { name: 'signature type POLY_1271', run: () => alice.place({ tokenId: YES, side: 'BUY', makerAmount: units(1), takerAmount: units(10), signatureType: 3 }), error: /signature type 3 is not supported/ },
      {
        name: 'proxy order whose maker is the signer itself',
        run: () => alice.place({ tokenId: YES, side: 'BUY', makerAmount: units(1), takerAmount: units(10), signatureType: 1 }),
        error: /^the order maker has to be the signer's proxy wallet 0x[0-9a-f]{40} for signature type 1$/,
      },
      { name: 'unknown token', run: () => alice.place({ tokenId: '12345', side: 'BUY', makerAmount: units(1), takerAmount: units(10) }), error: /market not found for token 12345/ },
      {
        // The route checks the body's shape once; the order checks behind it rely on that.
        name: 'malformed field',
        run: async () => {
          const s = await alice.signOrder({ tokenId: YES, side: 'BUY', makerAmount: units(1), takerAmount: units(10) });
          (s.order as Record<string, unknown>).signature = '0x1234';
          return alice.call('POST', '/order', s);
        },
        error: /^invalid order\.signature$/,
      },
    ];
    for (const r of rejections) {
      await t.test(`rejected with 400 and nothing changed: ${r.name}`, async () => {
        const before = [await usdc(alice), (await alice.call('GET', '/data/orders')).body.count];
        const res = await r.run();
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.match(res.body.error, r.error);
        assert.deepEqual([await usdc(alice), (await alice.call('GET', '/data/orders')).body.count], before);
      });
    }

    const batchIds: string[] = [];
    await t.test('a batch answers per order, in order; a bad order does not fail the others', async () => {
      const good1 = await alice.signOrder({ tokenId: YES, side: 'BUY', makerAmount: units(0.2), takerAmount: units(1) });
      const bad = await alice.signOrder({ tokenId: YES, side: 'BUY', makerAmount: units(0.3), takerAmount: units(1) });
      (bad.order as Record<string, unknown>).takerAmount = String(units(2));
      const good2 = await alice.signOrder({ tokenId: YES, side: 'BUY', makerAmount: units(0.21), takerAmount: units(1) });
      const r = await alice.call('POST', '/orders', [good1, bad, good2, { order: 'junk' }]);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.map((x: any) => [x.success, x.status]), [[true, 'live'], [false, ''], [true, 'live'], [false, '']]);
      assert.equal(r.body[1].errorMsg, 'invalid order signature');
      batchIds.push(r.body[0].orderID, r.body[2].orderID);
      const tooMany = await alice.call('POST', '/orders', Array.from({ length: 16 }, () => good1));
      assert.equal(tooMany.status, 400);
      assert.match(tooMany.body.error, /Too many orders in payload: 16, max allowed: 15/);
    });

    await t.test('cancels never touch another wallet\'s orders', async () => {
      const foreign = await bob.call('DELETE', '/order', { orderID: batchIds[0] });
      assert.deepEqual(foreign.body, { canceled: [], not_canceled: { [batchIds[0]]: 'order not found' } });
      const byMarket = await bob.call('DELETE', '/cancel-market-orders', { market: CID, asset_id: '' });
      assert.deepEqual(byMarket.body, { canceled: [bobAsk.body.orderID], not_canceled: {} });
      assert.equal((await order(batchIds[0])).order.status, 'LIVE');
      assert.equal((await order(bobAsk.body.orderID)).order.status, 'CANCELED');
      const mine = await alice.call('DELETE', '/order', { orderId: batchIds[0] });
      assert.deepEqual(mine.body, { canceled: [batchIds[0]], not_canceled: {} });
      const many = await alice.call('DELETE', '/orders', [batchIds[1], bobAsk.body.orderID]);
      assert.deepEqual(many.body, { canceled: [batchIds[1]], not_canceled: { [bobAsk.body.orderID]: 'order not found' } });
      const rest = await alice.call('DELETE', '/cancel-all');
      assert.deepEqual(rest.body, { canceled: [], not_canceled: {} });
      assert.equal(await usdc(alice), units(98.75), 'reservations released');
      const none = await alice.call('DELETE', '/cancel-market-orders', {});
      assert.equal(none.status, 400);
    });

    await t.test('resubmitting a signed order answers the original result and places nothing twice', async () => {
      const s = await alice.signOrder({ tokenId: YES, side: 'BUY', makerAmount: units(0.1), takerAmount: units(1) });
      const first = await alice.call('POST', '/order', s);
      const again = await alice.call('POST', '/order', s);
      assert.equal(first.status, 200);
      assert.deepEqual(again.body, first.body);
      const open = await alice.call('GET', '/data/orders');
      assert.deepEqual(open.body.data.map((o: any) => o.id), [first.body.orderID]);
      assert.equal(open.body.next_cursor, 'LTE=');
      assert.equal(await usdc(alice), units(98.65));
    });

    await t.test('resolution cancels open orders; redeem pays the winning outcome 1 USDC each', async () => {
      const resolved = await admin(base, 'POST', `/admin/markets/${CID}/resolve`, { winningOutcomeIndex: 0 });
      assert.equal(resolved.status, 200, JSON.stringify(resolved.body));
      assert.equal(await usdc(alice), units(98.75));
      const late = await alice.place({ tokenId: YES, side: 'BUY', makerAmount: units(1), takerAmount: units(2) });
      assert.equal(late.status, 400);
      const split = await bob.call('POST', '/split', { conditionId: CID, amount: '1' });
      assert.deepEqual([split.status, split.body], [400, { error: `market ${CID} is already resolved` }]);
      const merge = await bob.call('POST', '/merge', { conditionId: CID, amount: '1' });
      assert.deepEqual([merge.status, merge.body], [400, { error: `market ${CID} is already resolved` }]);
      for (const c of [alice, bob]) assert.deepEqual((await c.call('POST', '/redeem', { conditionId: CID })).body, { success: true });
      assert.equal(await usdc(alice), units(103.75));
      assert.equal(await usdc(bob), units(96.25));
      assert.deepEqual([await tokens(alice, YES), await tokens(bob, YES), await tokens(bob, NO)], [0, 0, 0]);
    });

    await t.test('unknown and malformed order ids on GET /data/order', async () => {
      const unknown = await fetch(`${base}/data/order/0x${'0'.repeat(64)}`);
      assert.deepEqual([unknown.status, await unknown.json()], [404, { error: 'order not found' }]);
      const bad = await fetch(`${base}/data/order/nope`);
      assert.deepEqual([bad.status, await bad.json()], [400, { error: 'Invalid orderID' }]);
    });
  } finally {
    await app.stop();
  }
});
