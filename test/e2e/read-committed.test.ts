/**
 * Replies built from the engine's memory (an order, the caller's open orders, a balance) are sent only
 * once what they show is durable: while the journal commit holding a new order is held open, neither the
 * order's own POST nor a GET that would show it (or the USDC it reserves) is answered.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type App } from '../../src/node/app.ts';
import { metaKeys } from '../../src/journal/keys.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { TestClient, units } from '../fixtures/trading-client.ts';
import { sleep } from '../fixtures/edge.ts';

const CID = `0x${'c3'.repeat(32)}`;
const KEY = `0x${'a7'.repeat(32)}` as const;

test('an order and the USDC it reserves are shown only once the order is committed', async () => {
  const app: App = await startApp(
    testConfig({ dataDir: mkdtempSync(join(tmpdir(), 'pm-read-committed-')), http: { port: 0 }, adminToken: 't', demo: false, rateLimits: { enabled: false }, auth: { signatureThreads: 1 } }),
    { log: silentLogger },
  );
  const base = `http://127.0.0.1:${app.port}`;
  const admin = (path: string, body: unknown) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: JSON.stringify(body) });
  // The journal writer's last put of a batch is meta.journalSeq: holding it holds the batch's commit.
  const meta = app.ctx.store.meta;
  const put = meta.put.bind(meta);
  let release = () => {};
  try {
    const imported = await admin('/admin/events', [
      { title: 'Read committed', slug: 'read-committed', endDate: '2027-06-30T00:00:00Z', markets: [{ question: 'Held?', conditionId: CID, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] },
    ]);
    assert.equal(imported.status, 200);
    const [YES] = app.ctx.catalog.read.marketByCondition(CID)!.clobTokenIds;
    const alice = new TestClient(base, KEY, await TestClient.info(base));
    assert.equal((await admin(`/admin/wallets/${alice.address}/deposit`, { amount: '100' })).status, 200);
    await alice.createKey();
    const signed = await alice.signOrder({ tokenId: YES, side: 'BUY', makerAmount: units(4), takerAmount: units(10) });

    const held = new Promise<void>((r) => (release = r));
    meta.put = ((k: string, v: unknown) => {
      const p = put(k, v);
      return k === metaKeys.journalSeq ? p.then(async (x) => (await held, x)) : p;
    }) as typeof meta.put;

    const answered: string[] = [];
    const posted = alice.call('POST', '/order', signed).then((r) => (answered.push('POST /order'), r));
    // Wait until the engine has applied the order (it is in memory, reserving USDC) but not committed it.
    const id = await (async () => {
      for (let i = 0; i < 500; i++) {
        const open = app.ctx.engine.openOrders(alice.address);
        if (open.length === 1) return open[0]!.orderId;
        await sleep(10);
      }
      throw new Error('the order was never applied');
    })();
    assert.equal(app.ctx.engine.balances(alice.address).usdc.reserved, units(4), 'applied in memory');
    const reads = {
      order: fetch(`${base}/data/order/${id}`).then(async (r) => (answered.push('GET /data/order'), (await r.json()) as any)),
      open: alice.call('GET', '/data/orders').then((r) => (answered.push('GET /data/orders'), r)),
      balance: alice.call('GET', '/balance-allowance?asset_type=COLLATERAL').then((r) => (answered.push('GET /balance-allowance'), r)),
    };
    await sleep(150);
    assert.deepEqual(answered, [], 'nothing that shows the order is answered while its commit is held');

    release();
    const [post, order, open, balance] = await Promise.all([posted, reads.order, reads.open, reads.balance]);
    assert.equal(post.status, 200);
    assert.equal(post.body.orderID, id);
    assert.equal(order.order.id, id);
    assert.equal(order.order.status, 'LIVE');
    assert.deepEqual(open.body.data.map((o: { id: string }) => o.id), [id]);
    assert.equal(Number(balance.body.balance), units(96));
    assert.equal(Number(balance.body.reserved), units(4));

    // Nothing in flight: reads answer at once, as before.
    const again = (await (await fetch(`${base}/data/order/${id}`)).json()) as any;
    assert.equal(again.order.status, 'LIVE');
  } finally {
    release();
    meta.put = put;
    await app.stop();
  }
});
