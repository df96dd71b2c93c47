/**
 * One order stream, every way the order path can take it: lone orders whose signatures are recovered on
 * the receiving thread (the pool idle: edge/auth/sig-pool.ts), lone orders sent to the signature pool, and the
 * same orders in batches (POST /orders, always the pool). Each path gets a fresh service with the same
 * master key, so the same wallets get the same API keys, and the same pre-signed orders; the answers, the
 * books, the balances and the engine's state hash must be the same on every path.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type App } from '../../src/node/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { sampleOf } from '../../tools/metrics-text.ts';
import { TestClient, units, type OrderArgs } from '../fixtures/trading-client.ts';

const CID = `0x${'d4'.repeat(32)}`;
const KEYS = { alice: `0x${'a7'.repeat(32)}`, bob: `0x${'b8'.repeat(32)}` } as const;
type Who = keyof typeof KEYS;

async function admin(base: string, method: string, path: string, body?: unknown) {
  const r = await fetch(`${base}${path}`, { method, headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as any };
}

async function service(inlineSignatures: number): Promise<{ app: App; base: string; clients: Record<Who, TestClient>; tokens: [string, string] }> {
  const app = await startApp(
    testConfig({
      dataDir: mkdtempSync(join(tmpdir(), 'pm-paths-')),
      http: { port: 0 },
      adminToken: 't',
      demo: false,
      rateLimits: { enabled: false },
      // The test's client shares this process's event loop, so its own work would count against the
      // utilization guard (test/edge/sig-pool.test.ts covers the guard): the inline path takes every lone order.
      auth: { signatureThreads: 1, inlineSignatures: { maxOrders: inlineSignatures, belowUtilization: 1 }, masterKey: 'ef'.repeat(32) },
    }),
    { log: silentLogger },
  );
  const base = `http://127.0.0.1:${app.port}`;
  const imported = await admin(base, 'POST', '/admin/events', [
    { title: 'Paths', slug: 'order-paths', endDate: '2027-06-30T00:00:00Z', markets: [{ question: 'Same on every path?', conditionId: CID, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] },
  ]);
  assert.equal(imported.status, 200, JSON.stringify(imported.body));
  const info = await TestClient.info(base);
  const clients = { alice: new TestClient(base, KEYS.alice, info), bob: new TestClient(base, KEYS.bob, info) };
  for (const c of Object.values(clients)) {
    assert.equal((await admin(base, 'POST', `/admin/wallets/${c.address}/deposit`, { amount: '500' })).status, 200);
    await c.createKey();
  }
  const [yes, no] = app.ctx.catalog.read.marketByCondition(CID)!.clobTokenIds;
  return { app, base, clients, tokens: [yes, no] };
}

/**
 * The stream, as runs of one wallet's orders (a run is one POST /orders on the batch path): bids that rest,
 * asks that cross them (a transfer, a partial fill), bids on the other outcome that mint against resting
 * bids, a FOK that is killed, and a FAK that fills part.
 */
function script(yes: string, no: string): Array<{ who: Who; orders: OrderArgs[] }> {
  const buy = (tokenId: string, price: number, size: number, extra: Partial<OrderArgs> = {}): OrderArgs => ({ tokenId, side: 'BUY', makerAmount: units(price * size), takerAmount: units(size), ...extra });
  return [
    { who: 'alice', orders: [buy(yes, 0.4, 10), buy(yes, 0.42, 5), buy(yes, 0.45, 20)] },
    { who: 'bob', orders: [buy(no, 0.55, 8), buy(no, 0.6, 6), buy(no, 0.3, 4)] },
    { who: 'alice', orders: [buy(yes, 0.35, 10, { orderType: 'FOK' }), buy(yes, 0.7, 30, { orderType: 'FAK' })] },
    { who: 'bob', orders: [buy(no, 0.58, 12), buy(no, 0.5, 3)] },
  ];
}

interface Outcome {
  answers: unknown[];
  stateHash: string;
  books: unknown[];
  wallets: unknown[];
}

async function run(path: 'inline' | 'pool' | 'batches', signed: Array<{ who: Who; bodies: Record<string, unknown>[] }> | undefined): Promise<{ outcome: Outcome; signed: Array<{ who: Who; bodies: Record<string, unknown>[] }> }> {
  const s = await service(path === 'inline' ? 1 : 0);
  try {
    const [yes, no] = s.tokens;
    // Signed once, on the first service: every later path posts the very same orders (same ids).
    signed ??= await Promise.all(script(yes, no).map(async (r) => ({ who: r.who, bodies: await Promise.all(r.orders.map((o) => s.clients[r.who].signOrder(o))) })));
    const pool = s.app.ctx.auth.pool;
    const before = { tasks: pool.tasks, inline: pool.inline };
    const answers: unknown[] = [];
    // A refusal is a 400 {error} for a lone order and a {success: false, errorMsg} element of a batch: compared by its message.
    const strip = (r: any) =>
      r.success === true ? { orderID: r.orderID, status: r.status, makingAmount: r.makingAmount, takingAmount: r.takingAmount, trades: (r.tradeIDs ?? []).length } : { refused: r.errorMsg };
    for (const r of signed) {
      const c = s.clients[r.who];
      const bodies = r.bodies.map((b) => ({ ...b, owner: c.creds!.apiKey }));
      if (path === 'batches') {
        const res = await c.call('POST', '/orders', bodies);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        answers.push(...(res.body as any[]).map(strip));
      } else {
        for (const b of bodies) {
          const res = await c.call('POST', '/order', b);
          answers.push(res.status === 200 ? strip(res.body) : { refused: res.status === 400 ? res.body.error : `HTTP ${res.status}` });
        }
      }
    }
    const orders = signed.reduce((n, r) => n + r.bodies.length, 0);
    if (path === 'inline') {
      assert.deepEqual([pool.inline - before.inline, pool.tasks - before.tasks], [orders, 0], 'every lone order was verified on the receiving thread');
      const text = await (await fetch(`${s.base}/metrics`)).text();
      assert.equal(sampleOf(text, 'signature_pool_inline'), pool.inline, '/metrics counts them');
    }
    else assert.equal(pool.inline - before.inline, 0, 'no order was verified outside the pool');
    if (path === 'pool') assert.equal(pool.tasks - before.tasks, orders, 'one task per lone order');
    const level = (l: { price: string; size: string }) => [l.price, l.size];
    const books = await Promise.all(
      s.tokens.map(async (t) => {
        const b = (await (await fetch(`${s.base}/book?token_id=${t}`)).json()) as any;
        return { bids: b.bids.map(level), asks: b.asks.map(level), last: b.last_trade_price };
      }),
    );
    const wallets = await Promise.all(Object.values(s.clients).map(async (c) => (await admin(s.base, 'GET', `/admin/wallets/${c.address}`)).body));
    return { outcome: { answers, stateHash: s.app.ctx.engine.stateHash(), books, wallets }, signed };
  } finally {
    await s.app.stop();
  }
}

test('the same orders give the same answers, books, balances and state hash on every path (inline recovery, pool, batches)', async () => {
  const inline = await run('inline', undefined);
  const pool = await run('pool', inline.signed);
  const batches = await run('batches', inline.signed);
  // The stream did what it was written to do, so the comparison is not of three empty books.
  const answers = inline.outcome.answers as Array<{ status?: string; trades?: number; refused?: string }>;
  const seen = ['live', 'matched'].map((st) => answers.some((a) => a.status === st));
  assert.deepEqual([...seen, answers.some((a) => (a.trades ?? 0) > 0), answers.some((a) => a.refused !== undefined)], [true, true, true, true], JSON.stringify(answers));
  assert.deepEqual(pool.outcome, inline.outcome, 'pool path = inline path');
  assert.deepEqual(batches.outcome, inline.outcome, 'batches = lone orders');
});
