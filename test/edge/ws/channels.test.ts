/**
 * The channels' bounds over real sockets: sockets per client address and upgrades per window are refused
 * with 429 (counted), a message past the payload bound closes the socket (1009), 20,000 subscribe and
 * unsubscribe cycles leave neither subscriptions nor memory behind, and stopping the app closes sockets
 * with 1001 and a reason.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startApp, type App } from '../../../src/node/app.ts';
import { testConfig } from '../../../src/runtime/config.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import type { BookEvent, PriceChangeEvent } from '../../../src/edge/schemas/stream.ts';
import { StreamClient } from '../../../tools/stream-client.ts';
import { T, order, wallet } from '../../fixtures/engine-harness.ts';
import { collectGarbage } from '../../fixtures/gc.ts';

let app: App;
let dir: string;
let url: string;
let token: string;
const open: StreamClient[] = [];

async function metric(series: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${app.port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

async function pong(c: StreamClient): Promise<void> {
  const want = c.pongs + 1;
  c.send('PING');
  const end = Date.now() + 20_000;
  while (c.pongs < want) {
    if (Date.now() > end) throw new Error('no PONG');
    await new Promise((r) => setTimeout(r, 2));
  }
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pm-ws-limits-'));
  app = await startApp(
    testConfig({
      dataDir: dir,
      http: { port: 0 },
      adminToken: 't',
      demo: 'off',
      auth: { signatureThreads: 1 },
      rateLimits: { enabled: true, buckets: { 'ws-connect': { limit: 8, windowSeconds: 10 } } },
      // 20,000 subscribe/unsubscribe cycles are sent as fast as the loop goes: no message rate here (bounds.test.ts has it).
      stream: { maxSocketsPerAddress: 3, maxMessageBytes: 1024, maxMessagesPerSecond: 1_000_000, messageBytesPerNetwork: 1 << 30 },
    }),
    { log: silentLogger },
  );
  url = `ws://127.0.0.1:${app.port}`;
  const cid = `0x${'3c'.repeat(32)}`;
  const r = await fetch(`http://127.0.0.1:${app.port}/admin/events`, {
    method: 'POST',
    headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
    body: JSON.stringify([{ title: 'Limits', slug: 'limits', endDate: '2030-01-01T00:00:00Z', markets: [{ question: 'Bounded?', conditionId: cid, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] }]),
  });
  assert.equal(r.status, 200);
  token = app.ctx.catalog.read.marketByCondition(cid)!.clobTokenIds[0];
});

after(async () => {
  for (const c of open) c.close();
  await app.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a fourth socket from one address is refused with 429; a closed one frees its place', async () => {
  for (let i = 0; i < 3; i++) open.push(await StreamClient.connect(`${url}/ws/market`));
  await assert.rejects(StreamClient.connect(`${url}/ws/market`), /upgrade refused: 429/);
  const c = open.pop()!;
  c.close();
  await c.closed;
  await new Promise((r) => setTimeout(r, 50));
  open.push(await StreamClient.connect(`${url}/ws/market`));
  assert.equal(await metric('ws_upgrades_refused_total{channel="market",status="429"}'), 1);
});

test('upgrades past the ws-connect window are refused with 429', async () => {
  // 4 upgrades so far (3 + 1 after the close, the refused one was charged too): 8 per 10 s allowed.
  for (const c of open.splice(0)) {
    c.close();
    await c.closed;
  }
  await new Promise((r) => setTimeout(r, 50));
  let refused = 0;
  for (let i = 0; i < 5; i++) {
    try {
      const c = await StreamClient.connect(`${url}/ws/market`);
      c.close();
      await c.closed;
      await new Promise((r) => setTimeout(r, 20));
    } catch (e) {
      assert.match(String(e), /429/);
      refused++;
    }
  }
  assert.equal(refused, 2);
  assert.equal(await metric('ws_upgrades_refused_total{channel="market",status="429"}'), 3);
});

test('a message past maxMessageBytes closes the socket (1009); churn leaves nothing; shutdown says 1001', async () => {
  // The window of this address is spent: wait for the next one.
  await new Promise((r) => setTimeout(r, 10_500));
  const big = await StreamClient.connect(`${url}/ws/market`);
  big.send('x'.repeat(2000));
  assert.deepEqual(await big.closed, { code: 1009, reason: 'message too big: at most 1024 bytes' });
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(await metric('ws_closes_total{channel="market",reason="message_too_large"}'), 1);

  const c = await StreamClient.connect(`${url}/ws/market`, { pingMs: 0 });
  const cycle = async (n: number) => {
    for (let i = 0; i < n; i++) {
      c.send({ operation: 'subscribe', assets_ids: [token], initial_dump: false });
      c.update('unsubscribe', { assets_ids: [token] });
    }
    await pong(c);
  };
  const gc = collectGarbage();
  await cycle(2000);
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  const rss0 = process.memoryUsage().rss;
  await cycle(20_000);
  gc();
  assert.equal(await metric('ws_subscriptions{channel="market"}'), 0);
  const heapGrowth = process.memoryUsage().heapUsed - heap0;
  const rssGrowth = process.memoryUsage().rss - rss0;
  // A leak of one object per cycle would show; 20,000 cycles of nothing kept stay within allocator noise.
  assert.ok(rssGrowth < 48 * 1024 * 1024, `rss grew ${rssGrowth} bytes over 20,000 cycles`);
  assert.ok(heapGrowth < 16 * 1024 * 1024, `heap grew ${heapGrowth} bytes over 20,000 cycles`);
  open.push(c);
});

test('post-trade books: the first at once, the next after bookIntervalMs; price_change carries the trade meanwhile', async () => {
  const e = app.ctx.engine;
  const [maker, taker] = [wallet(0x51), wallet(0x52)];
  const cid = app.ctx.engine.tokenMarketOf(token)!.market.conditionId;
  for (const w of [maker, taker]) {
    await e.deposit(w, 1000 * T);
    await e.split(w, cid, 100 * T);
  }
  const c = open[open.length - 1];
  await pong(c);
  c.send({ operation: 'subscribe', assets_ids: [token], initial_dump: false });
  await pong(c);
  await e.placeOrder(order({ wallet: maker, tokenId: token, side: 'SELL', price: 6000, size: 10 * T }));
  await pong(c);
  const from = c.events.length;
  const trade = async () => {
    await e.placeOrder(order({ wallet: taker, tokenId: token, side: 'BUY', price: 6000, size: T, type: 'FAK' }));
    await pong(c);
  };
  const t0 = Date.now();
  await trade();
  await trade();
  await trade();
  const books = () => c.events.slice(from).filter((x) => x.event_type === 'book');
  assert.equal(books().length, 1, 'the first trade\'s book at once, the next two wait');
  const pc = c.events.slice(from).filter((x) => x.event_type === 'price_change') as PriceChangeEvent[];
  assert.deepEqual(pc.map((x) => x.price_changes[0].size), ['9', '8', '7']);
  await c.next((x) => x.event_type === 'book', 3000, from + c.events.slice(from).indexOf(books()[0]) + 1);
  assert.ok(Date.now() - t0 >= 900, 'after the interval');
  const last = books().at(-1) as BookEvent;
  assert.deepEqual(last.asks, [{ price: '0.6', size: '7' }]);
  assert.equal(last.hash, pc.at(-1)!.price_changes[0].hash);
});

test('stopping the app closes open sockets with 1001 and a reason', async () => {
  const c = open[open.length - 1];
  const closed = c.closed;
  await app.stop();
  assert.deepEqual(await closed, { code: 1001, reason: 'server shutting down' });
});
