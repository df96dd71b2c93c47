/**
 * Heartbeats through the app (POST /v1/heartbeats): a wallet's running heartbeat keeps its orders; across a
 * restart it is restored with a full timeout from the start, and a wallet that stays silent then has every
 * open order canceled (the orders, restored from the journal, rested again meanwhile).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { DEMO_WALLETS } from '../../src/demo/catalog.ts';
import { startApp, type App } from '../../src/node/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { sleep, tempDir } from '../fixtures/edge.ts';
import { TestClient, units } from '../fixtures/trading-client.ts';

test('a heartbeat running at a stop is restored; silent after the restart, the wallet\'s orders are canceled', { timeout: 60_000 }, async () => {
  const dataDir = tempDir();
  const config = testConfig({ dataDir, demo: 'static', http: { port: 0 }, auth: { signatureThreads: 1 }, heartbeats: { timeoutSeconds: 2 } });
  let app: App = await startApp(config, { log: silentLogger });
  try {
    const base = () => `http://127.0.0.1:${app.port}`;
    const alice = new TestClient(base(), DEMO_WALLETS[0].privateKey, await TestClient.info(base()));
    await alice.createKey();
    const m = app.ctx.catalog.read.tradingMarkets().find((x) => x.acceptingOrders && !x.negRisk)!;
    const placed = await alice.place({ tokenId: m.tokenIds[0], side: 'BUY', makerAmount: units(1), takerAmount: units(10) });
    assert.equal(placed.body.status, 'live');
    const id = (await alice.call('POST', '/v1/heartbeats', { heartbeat_id: null })).body.heartbeat_id as string;
    await app.stop(1000);

    app = await startApp(config, { log: silentLogger });
    const again = new TestClient(base(), DEMO_WALLETS[0].privateKey, alice.info);
    again.creds = alice.creds;
    assert.equal(app.ctx.heartbeats.size, 1, 'restored');
    await sleep(1000);
    assert.deepEqual((await again.call('POST', '/v1/heartbeats', { heartbeat_id: id })).body, { heartbeat_id: id }, 'continued with its id after the restart');
    const open = async () => (await again.call('GET', '/data/orders')).body.data.map((o: { id: string }) => o.id);
    assert.deepEqual(await open(), [placed.body.orderID]);
    await sleep(2600);
    assert.deepEqual(await open(), [], 'silent for 2 s: canceled');
    assert.equal((await again.call('POST', '/v1/heartbeats', { heartbeat_id: id })).status, 400);
  } finally {
    await app.stop(1000);
    rmSync(dataDir, { recursive: true, force: true });
  }
});
