/**
 * Counterparties on call over HTTP (edge/sandbox/counterparties.ts, routes/test-controls.ts), without any
 * private key but the bot's:
 *   an admin-made order rests and matches a signed one, settles through the trade lifecycle like it, and
 *   is marked admin-made (owner "admin", no signature) in the journal, /data/order, /data/trades and the user
 *   channel; admin cancels by id and by wallet;
 *   outcome tokens credited (complete sets, the other half to the house wallet): balances, position, the
 *   ledger's conservation, and a restart that replays them to the same state;
 *   a token's book set in one call from named makers, replaced by the next call, refused when it crosses
 *   itself or is off tick, a level that would cross another wallet's order refused alone;
 *   a trade against the bot's resting order, in part and then whole;
 *   nothing of it without the admin token, none of it with the controls off.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { OrderAcceptedEvent } from '../../src/domain/events.ts';
import { HOUSE_MAKER, HOUSE_TAKER } from '../../src/edge/sandbox/counterparties.ts';
import { readJournal } from '../../src/journal/recovery.ts';
import { StreamClient } from '../../tools/stream-client.ts';
import { startTradingApp, type TradingApp } from '../fixtures/trading-app.ts';
import { units } from '../fixtures/trading-client.ts';

const CID = `0x${'e7'.repeat(32)}`;
const EVENTS = [{ title: 'Counterparties', slug: 'counterparties', endDate: '2031-01-01T00:00:00Z', markets: [{ question: 'Will they come?', conditionId: CID, orderPriceMinTickSize: 0.01, orderMinSize: '5' }] }];
const BOT = `0x${'b0'.repeat(32)}` as const;
const MM1 = `0x${'1'.repeat(40)}`;
const MM2 = `0x${'2'.repeat(40)}`;

const apps: TradingApp[] = [];
after(async () => {
  for (const h of apps) await h.app.stop(1000);
});

async function start(config: Record<string, unknown> = {}, dataDir?: string) {
  const h = await startTradingApp({ events: EVENTS, wallets: [{ key: BOT, deposit: '1000' }], config, dataDir });
  apps.push(h);
  return { ...h, bot: h.clients[0]!, yes: h.tokens(CID)[0], no: h.tokens(CID)[1] };
}

const ok = async (h: TradingApp, method: string, path: string, body?: unknown) => {
  const r = await h.admin(method, path, body);
  assert.equal(r.status, 200, `${method} ${path}: ${JSON.stringify(r.body)}`);
  return r.body;
};
const get = async (h: TradingApp, path: string) => (await fetch(`${h.base}${path}`)).json() as Promise<any>;

test('an admin-made order rests, matches a signed one and settles like it, marked admin-made everywhere it shows', async () => {
  const h = await start({ sandbox: { trades: { minedDelayMs: 5_000, confirmedDelayMs: 5_000, retryingShare: 0, retryDelayMs: 0, failedShare: 0, seed: 1 } } });
  await ok(h, 'PUT', '/admin/clock', { frozen: true });
  await ok(h, 'POST', `/admin/wallets/${MM1}/tokens`, { tokenId: h.yes, amount: '100', price: '0.5' });
  const ask = await ok(h, 'POST', '/admin/orders', { wallet: MM1, tokenId: h.yes, side: 'SELL', price: '0.42', size: '50' });
  assert.deepEqual([ask.status, ask.owner, ask.wallet], ['live', 'admin', MM1]);
  const view = (await get(h, `/data/order/${ask.orderID}`)).order;
  assert.deepEqual([view.owner, view.makerAddress, view.status, view.price, view.originalSize], ['admin', MM1, 'LIVE', '0.42', '50']);
  const ev = [...readJournal(h.app.ctx.store)].find((e): e is OrderAcceptedEvent => e.type === 'order' && e.orderId === ask.orderID)!;
  assert.deepEqual([ev.owner, ev.signature, ev.wallet, ev.signer], ['admin', '', MM1, MM1], 'the journal says who made it: no key, no signature');

  const sock = await StreamClient.connect(`ws://127.0.0.1:${h.app.port}/ws/user`, { pingMs: 0 });
  try {
    sock.subscribeUser(h.bot.creds!);
    await new Promise((r) => setTimeout(r, 200));
    const bid = await h.bot.place({ tokenId: h.yes, side: 'BUY', makerAmount: units(4.2), takerAmount: units(10) });
    assert.deepEqual([bid.status, bid.body.status], [200, 'matched'], JSON.stringify(bid.body));
    const trade = (await h.bot.call('GET', '/data/trades')).body.data[0];
    assert.deepEqual([trade.status, trade.maker_orders[0].owner, trade.maker_orders[0].maker_address, trade.maker_orders[0].order_id], ['MATCHED', 'admin', MM1, ask.orderID]);
    for (const end = Date.now() + 5000; !sock.events.some((e: any) => e.event_type === 'trade'); ) {
      assert.ok(Date.now() < end, 'no trade event');
      await new Promise((r) => setTimeout(r, 10));
    }
    const wsTrade = sock.events.find((e: any) => e.event_type === 'trade') as any;
    assert.equal(wsTrade.maker_orders[0].owner, 'admin', 'the user channel shows the maker order admin-made');
  } finally {
    sock.close();
  }
  assert.equal((await get(h, `/data/order/${ask.orderID}`)).order.sizeMatched, '10');
  // MM1 sold 10 at 0.42: its USDC is pending until MINED, as any seller's.
  assert.equal((await ok(h, 'GET', `/admin/wallets/${MM1}`)).usdc.available, '0');
  await ok(h, 'POST', '/admin/clock/advance', { seconds: 10 });
  assert.equal((await h.bot.call('GET', '/data/trades')).body.data[0].status, 'CONFIRMED');
  const mm1 = await ok(h, 'GET', `/admin/wallets/${MM1}`);
  assert.deepEqual([mm1.usdc.available, mm1.tokens[0].available, mm1.tokens[0].reserved], ['4.2', '50', '40']);
  const positions = await get(h, `/positions?user=${MM1}&sizeThreshold=0`);
  assert.deepEqual(positions.map((p: any) => [p.size, p.avgPrice]), [[90, 0.5]], 'the credited tokens at their price, less the sale');
  assert.deepEqual(h.app.ctx.engine.checkLedger(), []);
});

test('admin cancels: by id, whoever\'s the order, and every order of a wallet in a token', async () => {
  const h = await start();
  await ok(h, 'POST', `/admin/wallets/${MM1}/deposit`, { amount: '100' });
  const a = await ok(h, 'POST', '/admin/orders', { wallet: MM1, tokenId: h.yes, side: 'BUY', price: 0.3, size: 10 });
  const b = await ok(h, 'POST', '/admin/orders', { wallet: MM1, tokenId: h.no, side: 'BUY', price: '0.2', size: '10' });
  const c = await ok(h, 'POST', '/admin/orders', { wallet: MM1, tokenId: h.yes, side: 'BUY', price: '0.25', size: '10' });
  const mine = await h.bot.place({ tokenId: h.yes, side: 'BUY', makerAmount: units(1), takerAmount: units(10) });
  const missing = `0x${'9'.repeat(64)}`;
  const byId = await ok(h, 'DELETE', '/admin/orders', { orderIds: [a.orderID, mine.body.orderID, missing] });
  assert.deepEqual(byId.canceled.sort(), [a.orderID, mine.body.orderID].sort());
  assert.deepEqual(byId.not_canceled, { [missing]: 'order not found' });
  const byWallet = await ok(h, 'DELETE', '/admin/orders', { wallet: MM1, asset_id: h.yes });
  assert.deepEqual(byWallet.canceled, [c.orderID]);
  assert.equal((await get(h, `/data/order/${b.orderID}`)).order.status, 'LIVE', 'the other token\'s order stays');
  for (const body of [{}, { orderIds: [a.orderID], wallet: MM1 }, { orderIds: [a.orderID], market: CID }]) {
    assert.equal((await h.admin('DELETE', '/admin/orders', body)).status, 400, JSON.stringify(body));
  }
  const refused = await h.admin('POST', '/admin/orders', { wallet: MM2, tokenId: h.yes, side: 'BUY', price: '0.3', size: '10' });
  assert.deepEqual([refused.status, refused.body.error], [400, 'not enough balance / allowance'], 'the engine\'s checks apply: MM2 holds nothing');
  const offTick = await h.admin('POST', '/admin/orders', { wallet: MM1, tokenId: h.yes, side: 'BUY', price: '0.305', size: '10' });
  assert.equal(offTick.status, 400);
  assert.match(offTick.body.error, /tick/);
});

test('admin cancels a proxy wallet\'s order its EOA signed: by id, and with the EOA\'s orders', async () => {
  const h = await start();
  // The bot's platform account: its EOA signs, its proxy wallet (signatureType 1) holds the money.
  const proxy = h.app.ctx.auth.funders.makerOf(h.bot.account.address, 1) as `0x${string}`;
  await ok(h, 'POST', `/admin/wallets/${proxy}/deposit`, { amount: '100' });
  const viaProxy = (o: { makerAmount: number; takerAmount: number }) => h.bot.place({ tokenId: h.yes, side: 'BUY', maker: proxy, signatureType: 1, ...o });
  const first = await viaProxy({ makerAmount: units(1), takerAmount: units(10) });
  const second = await viaProxy({ makerAmount: units(2), takerAmount: units(10) });
  assert.deepEqual([first.status, first.body.status, second.body.status], [200, 'live', 'live'], JSON.stringify(first.body));
  const byId = await ok(h, 'DELETE', '/admin/orders', { orderIds: [first.body.orderID] });
  assert.deepEqual([byId.canceled, byId.not_canceled], [[first.body.orderID], {}]);
  const bySigner = await ok(h, 'DELETE', '/admin/orders', { wallet: h.bot.account.address, asset_id: h.yes });
  assert.deepEqual(bySigner.canceled, [second.body.orderID]);
  assert.equal((await get(h, `/data/order/${second.body.orderID}`)).order.status, 'CANCELED');
});

test('credited outcome tokens: balances, conservation, and a restart that replays them to the same state', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-credit-'));
  try {
    const h = await start({}, dataDir);
    const after = await ok(h, 'POST', `/admin/wallets/${MM2}/tokens`, { tokenId: h.no, amount: '25.5' });
    assert.deepEqual(after.tokens.map((t: any) => [t.tokenId, t.available]), [[h.no, '25.5']]);
    assert.deepEqual(after.usdc, { available: '0', reserved: '0' });
    const usdc = h.app.ctx.engine.usdcTotals();
    assert.equal(usdc.wallets + usdc.collateral, usdc.netDeposits, 'the sets are collateralised by a deposit');
    assert.deepEqual(h.app.ctx.engine.checkLedger(), []);
    const house = h.app.ctx.engine.balances('house').tokens.map((t) => [t.tokenId, t.available]);
    assert.deepEqual(house, [[h.yes, units(25.5)]], 'the other half is the house wallet\'s');
    assert.equal((await h.admin('POST', `/admin/wallets/${MM2}/tokens`, { tokenId: '12345', amount: '1' })).status, 400, 'an unknown token');
    assert.equal((await h.admin('POST', `/admin/wallets/${MM2}/tokens`, { tokenId: h.no, amount: '0' })).status, 400);
    const hash = h.app.ctx.engine.stateHash();
    await h.app.stop(1000);
    apps.splice(apps.indexOf(h), 1);
    const again = await startTradingApp({ events: EVENTS, wallets: [], dataDir });
    apps.push(again);
    assert.equal(again.app.ctx.engine.stateHash(), hash, 'the journal replays to the same state');
    assert.equal((await ok(again, 'GET', `/admin/wallets/${MM2}`)).tokens[0].available, '25.5');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a token\'s book set in one call from named makers, replaced by the next; crossing and off-tick levels refused', async () => {
  const h = await start();
  const set = await ok(h, 'PUT', `/admin/books/${h.yes}`, {
    maker: MM1,
    bids: [{ price: '0.40', size: '100' }, { price: '0.39', size: '50', maker: MM2 }],
    asks: [{ price: '0.42', size: '50' }],
  });
  assert.deepEqual(set.orders.map((o: any) => [o.side, o.price, o.size, o.maker, o.status]), [
    ['BUY', '0.4', '100', MM1, 'live'],
    ['BUY', '0.39', '50', MM2, 'live'],
    ['SELL', '0.42', '50', MM1, 'live'],
  ]);
  const book = await get(h, `/book?token_id=${h.yes}`);
  assert.deepEqual(book.bids, [{ price: '0.39', size: '50' }, { price: '0.4', size: '100' }]);
  assert.deepEqual(book.asks, [{ price: '0.42', size: '50' }]);

  // The bot bids 0.41; the next book replaces the makers' levels, and a level that would cross the bot is refused alone.
  await h.bot.place({ tokenId: h.yes, side: 'BUY', makerAmount: units(4.1), takerAmount: units(10) });
  const next = await ok(h, 'PUT', `/admin/books/${h.yes}`, { bids: [{ price: '0.30', size: '20', maker: MM2 }], asks: [{ price: '0.41', size: '10', maker: MM1 }, { price: '0.45', size: '30', maker: MM1 }] });
  assert.equal(next.canceled, 3);
  assert.deepEqual(next.orders.map((o: any) => [o.price, o.status, o.error !== undefined]), [['0.3', 'live', false], ['0.41', '', true], ['0.45', 'live', false]]);
  const book2 = await get(h, `/book?token_id=${h.yes}`);
  assert.deepEqual(book2.bids, [{ price: '0.3', size: '20' }, { price: '0.41', size: '10' }], 'the bot\'s bid stays');
  assert.deepEqual(book2.asks, [{ price: '0.45', size: '30' }]);
  const house = await ok(h, 'PUT', `/admin/books/${h.no}`, { bids: [{ price: '0.10', size: '5' }], asks: [] });
  assert.equal(house.orders[0].maker, HOUSE_MAKER, 'no maker named: the house maker');
  const book3 = await get(h, `/book?token_id=${h.yes}`);
  assert.deepEqual(book3.asks, [{ price: '0.9', size: '5' }, { price: '0.45', size: '30' }], 'a bid on the other outcome is an ask of this one');

  for (const body of [
    { bids: [{ price: '0.45', size: '1', maker: MM1 }], asks: [{ price: '0.44', size: '1', maker: MM1 }] },
    { bids: [{ price: '0.405', size: '1', maker: MM1 }], asks: [] },
    { bids: [{ price: '0.40', size: '1.005', maker: MM1 }], asks: [] },
  ]) {
    const r = await h.admin('PUT', `/admin/books/${h.yes}`, body);
    assert.equal(r.status, 400, JSON.stringify(body));
  }
  assert.deepEqual(await get(h, `/book?token_id=${h.yes}`), book3, 'a refused book changed nothing');
  assert.deepEqual(h.app.ctx.engine.checkLedger(), []);
});

test('a trade against the bot\'s resting order, in part and then whole, from the house taker', async () => {
  const h = await start();
  const bid = await h.bot.place({ tokenId: h.yes, side: 'BUY', makerAmount: units(4), takerAmount: units(10) });
  const part = await ok(h, 'POST', `/admin/orders/${bid.body.orderID}/fill`, { size: '5' });
  assert.deepEqual([part.trade.wallet, part.trade.status, part.order.status, part.order.sizeMatched], [HOUSE_TAKER, 'matched', 'LIVE', '5']);
  const rest = await ok(h, 'POST', `/admin/orders/${bid.body.orderID}/fill`, {});
  assert.deepEqual([rest.order.status, rest.order.sizeMatched], ['MATCHED', '10']);
  const trades = (await h.bot.call('GET', '/data/trades')).body.data;
  assert.equal(trades.length, 2);
  for (const t of trades) {
    assert.deepEqual([t.trader_side, t.price, t.side, t.owner, t.maker_address], ['MAKER', '0.4', 'SELL', 'admin', HOUSE_TAKER], 'the taker order is the admin-made one');
    assert.deepEqual([t.maker_orders[0].order_id, t.maker_orders[0].owner], [bid.body.orderID, h.bot.creds!.apiKey]);
  }
  assert.equal((await h.admin('POST', `/admin/orders/${bid.body.orderID}/fill`, {})).status, 404, 'nothing left to fill');
  const again = await h.bot.place({ tokenId: h.yes, side: 'SELL', makerAmount: units(5), takerAmount: units(3) });
  assert.equal((await h.admin('POST', `/admin/orders/${again.body.orderID}/fill`, { size: '6' })).status, 400, 'more than it has left');
  assert.equal((await h.admin('POST', `/admin/orders/${again.body.orderID}/fill`, { taker: h.bot.address })).status, 400, 'not against itself');
  assert.deepEqual(h.app.ctx.engine.checkLedger(), []);
});

test('nothing without the admin token; nothing with the test controls off', async () => {
  const h = await start();
  const routes: Array<[string, string]> = [
    ['POST', '/admin/orders'],
    ['DELETE', '/admin/orders'],
    ['POST', `/admin/wallets/${MM1}/tokens`],
    ['PUT', `/admin/books/${h.yes}`],
    ['POST', `/admin/orders/0x${'1'.repeat(64)}/fill`],
  ];
  for (const [method, path] of routes) {
    const r = await fetch(`${h.base}${path}`, { method, headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(r.status, 401, `${method} ${path}`);
  }
  const off = await startTradingApp({ events: EVENTS, wallets: [], config: { sandbox: { testControls: 'off' } } });
  apps.push(off);
  for (const [method, path] of routes) assert.equal((await off.admin(method, path, {})).status, 404, `${method} ${path} with the controls off`);
});
