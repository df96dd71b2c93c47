/**
 * Scenarios over HTTP (edge/sandbox/scenario.ts, POST /admin/scenarios): a market, its books, named wallets
 * and a timed script in one document, run against the test clock:
 *   the market is created and its books set at once; a taker sweeps a level at t+5 s and the market resolves
 *   at t+60 s, each when an advance passes it, in order, and the bot sees both;
 *   an event that fails is recorded with its error and the later ones still run; DELETE cancels what waits;
 *   on a running clock the script runs in real time;
 *   a scenario naming an unknown wallet or a bad price changes nothing and lists every problem.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { scenarioWallet } from '../../src/edge/sandbox/scenario.ts';
import { startTradingApp, type TradingApp } from '../fixtures/trading-app.ts';
import { units } from '../fixtures/trading-client.ts';

const BOT = `0x${'bb'.repeat(32)}` as const;
const apps: TradingApp[] = [];
after(async () => {
  for (const h of apps) await h.app.stop(1000);
});

async function start() {
  const h = await startTradingApp({ events: [], wallets: [{ key: BOT, deposit: '1000' }] });
  apps.push(h);
  return { ...h, bot: h.clients[0]! };
}

const ok = async (h: TradingApp, method: string, path: string, body?: unknown) => {
  const r = await h.admin(method, path, body);
  assert.equal(r.status, 200, `${method} ${path}: ${JSON.stringify(r.body)}`);
  return r.body;
};
const get = async (h: TradingApp, path: string) => (await fetch(`${h.base}${path}`)).json() as Promise<any>;

const RAIN = {
  name: 'rain',
  market: { question: 'Will it rain on the test?' },
  wallets: { mm: { usdc: '1000', yes: '500' }, taker: { usdc: '100' } },
  books: [{ token: 'yes', maker: 'mm', bids: [{ price: '0.40', size: '100' }], asks: [{ price: '0.42', size: '50' }, { price: '0.45', size: '50' }] }],
  script: [
    { at: '+5s', do: 'sweep', wallet: 'taker', token: 'yes', side: 'BUY', price: '0.42', size: '50' },
    { at: 60, do: 'resolve', winner: 'yes' },
  ],
};

test('a scenario sets its market up at once and runs its script as the clock passes each event, in order', async () => {
  const h = await start();
  await ok(h, 'PUT', '/admin/clock', { frozen: true });
  const s = await ok(h, 'POST', '/admin/scenarios', RAIN);
  assert.deepEqual(s.wallets, { mm: scenarioWallet('mm'), taker: scenarioWallet('taker') });
  assert.deepEqual(s.events.map((e: any) => [e.do, e.state]), [['sweep', 'pending'], ['resolve', 'pending']]);
  const yes = s.market.yes as string;
  const book = await get(h, `/book?token_id=${yes}`);
  assert.deepEqual([book.bids, book.asks], [[{ price: '0.4', size: '100' }], [{ price: '0.45', size: '50' }, { price: '0.42', size: '50' }]]);
  assert.equal((await get(h, `/markets/${s.market.conditionId}`)).question, 'Will it rain on the test?');

  // The bot buys 10 at 0.42 before the sweep takes the rest of that level.
  const mine = await h.bot.place({ tokenId: yes, side: 'BUY', makerAmount: units(4.2), takerAmount: units(10) });
  assert.equal(mine.body.status, 'matched', JSON.stringify(mine.body));
  await ok(h, 'POST', '/admin/clock/advance', { seconds: 4 });
  assert.equal((await get(h, `/book?token_id=${yes}`)).asks.at(-1).price, '0.42', 'not yet');
  await ok(h, 'POST', '/admin/clock/advance', { seconds: 1 });
  const swept = await get(h, `/book?token_id=${yes}`);
  assert.deepEqual(swept.asks, [{ price: '0.45', size: '50' }], 'the taker took the 40 left at 0.42, its limit, and no further');
  assert.equal((await get(h, `/last-trade-price?token_id=${yes}`)).price, '0.42');
  const taker = await get(h, `/positions?user=${s.wallets.taker}&sizeThreshold=0`);
  assert.deepEqual(taker.map((p: any) => p.size), [40]);

  await ok(h, 'POST', '/admin/clock/advance', { seconds: 3600 });
  const market = await get(h, `/markets/${s.market.conditionId}`);
  assert.deepEqual([market.closed, market.tokens.map((t: any) => t.winner)], [true, [true, false]]);
  const bot = await get(h, `/positions?user=${h.bot.address}&sizeThreshold=0`);
  assert.deepEqual(bot.map((p: any) => [p.size, p.redeemable, p.curPrice]), [[10, true, 1]]);
  const after = (await ok(h, 'GET', '/admin/scenarios'))[0];
  assert.deepEqual(after.events.map((e: any) => e.state), ['done', 'done']);
  assert.deepEqual(h.app.ctx.engine.checkLedger(), []);
});

test('a failed event is recorded and the later ones run; DELETE cancels what waits; a running clock runs the script in real time', async () => {
  const h = await start();
  await ok(h, 'PUT', '/admin/clock', { frozen: true });
  const s = await ok(h, 'POST', '/admin/scenarios', {
    market: { question: 'Will the sweep meet nothing?' },
    wallets: { taker: { usdc: '10' }, mm: {} },
    script: [
      { at: '+1s', do: 'sweep', wallet: 'taker', token: 'yes', side: 'BUY', price: '0.50', size: '5' },
      { at: '+2s', do: 'book', token: 'yes', maker: 'mm', bids: [{ price: '0.30', size: '10' }], asks: [] },
      { at: '+1h', do: 'status', acceptingOrders: false },
    ],
  });
  await ok(h, 'POST', '/admin/clock/advance', { seconds: 2 });
  const mid = (await ok(h, 'GET', '/admin/scenarios'))[0];
  assert.deepEqual(mid.events.map((e: any) => e.state), ['failed', 'done', 'pending']);
  assert.match(mid.events[0].error, /no orders found to match|not enough/);
  assert.deepEqual((await get(h, `/book?token_id=${s.market.yes}`)).bids, [{ price: '0.3', size: '10' }]);
  const canceled = await ok(h, 'DELETE', '/admin/scenarios');
  assert.deepEqual(canceled[0].events.map((e: any) => e.state), ['failed', 'done', 'canceled']);
  await ok(h, 'POST', '/admin/clock/advance', { seconds: 7200 });
  assert.equal((await get(h, `/markets/${s.market.conditionId}`)).accepting_orders, true, 'the canceled event never ran');

  await ok(h, 'PUT', '/admin/clock', { frozen: false });
  const live = await ok(h, 'POST', '/admin/scenarios', { market: { conditionId: s.market.conditionId }, wallets: { mm: {} }, script: [{ at: '+200ms', do: 'book', token: 'yes', maker: 'mm', bids: [{ price: '0.20', size: '10' }], asks: [] }] });
  for (const end = Date.now() + 10_000; (await ok(h, 'GET', '/admin/scenarios')).find((r: any) => r.id === live.id).events[0].state === 'pending'; ) {
    assert.ok(Date.now() < end, 'the event never ran');
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual((await get(h, `/book?token_id=${s.market.yes}`)).bids, [{ price: '0.2', size: '10' }], 'the mm book replaced in real time');
});

test('a scenario that names an unknown wallet or a bad price changes nothing and lists every problem', async () => {
  const h = await start();
  const r = await h.admin('POST', '/admin/scenarios', {
    market: { question: 'Will it be refused?' },
    wallets: { mm: { usdc: 0.1234567 } },
    books: [{ token: 'yes', maker: 'ghost', bids: [{ price: 0.12345, size: '1' }], asks: [] }],
    script: [{ at: '+1s', do: 'sweep', wallet: 'nobody', token: 'yes', side: 'BUY', price: '0.5', size: '5' }],
  });
  assert.equal(r.status, 400);
  assert.equal(r.body.errors.length, 4, JSON.stringify(r.body.errors));
  assert.ok(r.body.errors.some((e: string) => e.includes('ghost')) && r.body.errors.some((e: string) => e.includes('nobody')));
  assert.equal((await get(h, '/markets?limit=5')).data.length, 0, 'no market was created');
  assert.equal((await h.admin('POST', '/admin/scenarios', { market: {} })).status, 400);
  assert.equal((await h.admin('POST', '/admin/scenarios', { market: { question: 'q' }, script: [{ at: 'soon', do: 'resolve', winner: 'yes' }] })).status, 400);
  assert.equal((await h.admin('POST', '/admin/scenarios', { market: { conditionId: `0x${'5'.repeat(64)}` } })).status, 404, 'an unknown market');
});
