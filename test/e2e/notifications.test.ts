/**
 * Notifications through the app: a fill told to both parties and a cancel to its wallet, as the projection
 * builds them from the journal; a drop is durable when answered (out of LMDB itself, with the cursor that
 * covers it), so the dropped ones stay gone after a restart while the others stay.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { DEMO_WALLETS } from '../../src/demo/catalog.ts';
import { startApp, type App } from '../../src/node/app.ts';
import { notificationKeys } from '../../src/journal/keys.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { tempDir } from '../fixtures/edge.ts';
import { TestClient, units } from '../fixtures/trading-client.ts';

test('fills and cancels are told; a drop survives a restart, the rest stay', { timeout: 60_000 }, async () => {
  const dataDir = tempDir();
  const config = testConfig({ dataDir, demo: 'static', http: { port: 0 }, auth: { signatureThreads: 1 } });
  let app: App = await startApp(config, { log: silentLogger });
  try {
    const base = () => `http://127.0.0.1:${app.port}`;
    const info = await TestClient.info(base());
    const alice = new TestClient(base(), DEMO_WALLETS[0].privateKey, info);
    const bob = new TestClient(base(), DEMO_WALLETS[1].privateKey, info);
    for (const c of [alice, bob]) await c.createKey();
    const m = app.ctx.catalog.read.tradingMarkets().find((x) => x.acceptingOrders && !x.negRisk)!;
    const [yes, no] = m.tokenIds;
    // Alice rests 10 YES at 0.40; Bob buys 6 NO at 0.60 (a mint): both are told. Then Alice cancels the rest.
    const rest = await alice.place({ tokenId: yes, side: 'BUY', makerAmount: units(4), takerAmount: units(10) });
    const take = await bob.place({ tokenId: no, side: 'BUY', makerAmount: units(3.6), takerAmount: units(6), orderType: 'FOK' });
    assert.equal(take.body.status, 'matched', JSON.stringify(take.body));
    assert.equal((await alice.call('DELETE', '/order', { orderID: rest.body.orderID })).status, 200);

    const list = async (c: TestClient) => (await c.call('GET', '/notifications')).body as { id: string; type: number; payload: Record<string, unknown> }[];
    const told = await list(alice);
    assert.deepEqual(
      told.map((n) => [n.type, n.payload.order_id, n.payload.size ?? n.payload.size_canceled]),
      [[2, rest.body.orderID, '6'], [1, rest.body.orderID, '4']],
    );
    assert.deepEqual((await list(bob)).map((n) => [n.type, n.payload.trader_side, n.payload.side, n.payload.price]), [[2, 'TAKER', 'BUY', '0.6']]);

    const dropped = await alice.call('DELETE', `/notifications?ids=${told[0].id}`);
    assert.equal(dropped.status, 200);
    // Durable when answered: gone from LMDB itself (not only from the overlay of writes still held), so not
    // even a crash right after the answer brings it back.
    assert.equal(app.ctx.store.views.get(notificationKeys.entry(alice.address, Number(told[0].id))), undefined);
    assert.notEqual(app.ctx.store.views.get(notificationKeys.entry(alice.address, Number(told[1].id))), undefined);

    await app.stop(1000);
    app = await startApp(config, { log: silentLogger });
    const again = new TestClient(base(), DEMO_WALLETS[0].privateKey, info);
    again.creds = alice.creds;
    assert.deepEqual((await list(again)).map((n) => [n.id, n.type]), [[told[1].id, 1]], 'the dropped fill stays gone after the restart');
    const bobAgain = new TestClient(base(), DEMO_WALLETS[1].privateKey, info);
    bobAgain.creds = bob.creds;
    assert.equal((await list(bobAgain)).length, 1);
  } finally {
    await app.stop(1000);
    rmSync(dataDir, { recursive: true, force: true });
  }
});
