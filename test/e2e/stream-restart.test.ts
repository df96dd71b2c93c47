/**
 * kill -9 and restart with streams open: the service runs as `npm start` runs it (a child process); two
 * wallets rest and cross signed orders over HTTP while a market socket watches; SIGKILL; a restart on the
 * same store; the client reconnects and its first `book` of each token equals GET /book after the restart,
 * and holds every level the acknowledged orders left (nothing acknowledged is lost, nothing more appears).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BookEvent } from '../../src/edge/schemas/stream.ts';
import { LocalBook, StreamClient } from '../../tools/stream-client.ts';
import { startService, type ServiceProcess } from '../../tools/service-process.ts';
import { TestClient, units } from '../fixtures/trading-client.ts';

const CID = `0x${'4d'.repeat(32)}`;

async function admin(base: string, path: string, body: unknown): Promise<void> {
  const r = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(r.status, 200, await r.text());
}

async function restBook(base: string, token: string) {
  return (await fetch(`${base}/book?token_id=${token}`)).json() as Promise<{ bids: unknown[]; asks: unknown[]; hash: string }>;
}

test('after kill -9 and a restart, a reconnecting client\'s first book equals GET /book and keeps every acknowledged order', { timeout: 120_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-stream-crash-'));
  let svc: ServiceProcess | undefined;
  try {
    svc = await startService({ dataDir, adminToken: 't', env: { RATE_LIMITS: 'off' } });
    let base = svc.url;
    await admin(base, '/admin/events', [{ title: 'Crash', slug: 'crash', endDate: '2030-01-01T00:00:00Z', markets: [{ question: 'Survives?', conditionId: CID, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] }]);
    const [YES, NO] = await tokens(base);
    const info = await TestClient.info(base);
    const a = new TestClient(base, `0x${'a7'.repeat(32)}`, info);
    const b = new TestClient(base, `0x${'b8'.repeat(32)}`, info);
    for (const c of [a, b]) {
      await admin(base, `/admin/wallets/${c.address}/deposit`, { amount: '1000' });
      await c.createKey();
    }
    const ws = await StreamClient.connect(`ws://127.0.0.1:${svc.port}/ws/market`);
    ws.subscribeMarket([YES, NO]);
    await ws.next((e) => e.event_type === 'book' && e.asset_id === NO);
    for (let i = 0; i < 8; i++) assert.equal((await a.place({ tokenId: YES, side: 'BUY', makerAmount: units(0.3 + i * 0.01) * 2, takerAmount: units(2) })).status, 200);
    assert.equal((await b.place({ tokenId: NO, side: 'BUY', makerAmount: units(0.63 * 3), takerAmount: units(3) })).status, 200);
    const live = [new LocalBook(YES), new LocalBook(NO)];
    ws.send('PING');
    while (ws.pongs === 0) await new Promise((r) => setTimeout(r, 10));
    for (const e of ws.events) for (const l of live) l.apply(e);
    const before = await Promise.all([YES, NO].map((t) => restBook(base, t)));
    assert.deepEqual(live.map((l) => l.levels()), before.map((r) => ({ bids: r.bids, asks: r.asks })), 'the stream followed the book');

    await svc.stop('SIGKILL');
    assert.equal((await ws.closed).code, 1006);
    svc = await startService({ dataDir, adminToken: 't', env: { RATE_LIMITS: 'off' } });
    base = svc.url;
    const again = await StreamClient.connect(`ws://127.0.0.1:${svc.port}/ws/market`);
    again.subscribeMarket([YES, NO]);
    for (const [i, token] of [YES, NO].entries()) {
      const first = await again.next<BookEvent>((e) => e.event_type === 'book' && e.asset_id === token);
      const rest = await restBook(base, token);
      assert.deepEqual([first.bids, first.asks, first.hash], [rest.bids, rest.asks, rest.hash], `${token}: first book = GET /book`);
      assert.deepEqual({ bids: first.bids, asks: first.asks }, { bids: before[i].bids, asks: before[i].asks }, `${token}: the recovered levels are the acknowledged ones`);
    }
    again.close();
  } finally {
    await svc?.stop('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

async function tokens(base: string): Promise<[string, string]> {
  const r = (await (await fetch(`${base}/clob-markets/${CID}`)).json()) as { t: { t: string }[] };
  return [r.t[0].t, r.t[1].t];
}
