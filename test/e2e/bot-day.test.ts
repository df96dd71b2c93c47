/**
 * A bot developer's day (issue 40): the service started exactly as README's "Point a bot at it" says, as a
 * child process (`PROFILE=clob-v2 npm start`: tools/service-process.ts runs npm start's node flags and
 * src/main.ts, on a fresh store with the living demo; the admin token only for the maintenance window), and the
 * platform's official client (@polymarket/clob-client-v2) with only its host and chain (80002) changed, signing
 * with a demo wallet's test key through a viem WalletClient whose transport throws (no RPC):
 *
 *   - the start-up log names the profile and the console's URL;
 *   - createOrDeriveApiKey, then markets and a book, a resting order posted, listed (getOpenOrders, in the
 *     client's OpenOrder shape), read (getOrder) and canceled, a batch posted (postOrders) and canceled
 *     (cancelOrders);
 *   - a market BUY against the demo makers: its trade reaches the user channel MATCHED, then MINED, then
 *     CONFIRMED (the profile's default delays), and getTrades ends with it CONFIRMED;
 *   - a maintenance window: from the admin's answer until its post-only period ends no trade happens at all,
 *     the demo's traders included (every token of every demo market watched on the market channel), the bot's
 *     orders and cancels get 425, then in the post-only period a plain order 503 with its reason and a
 *     post-only one rests; trading resumes after it.
 *
 *   - a platform account's bot, signing with signatureType 1 (its proxy wallet) and 2 (its Safe) and a
 *     funderAddress: the same key, a resting order and a cancel, and a fill against the demo makers that goes
 *     MATCHED, MINED, CONFIRMED on the signer's user channel, paid by the funder (the admin deposits into the
 *     funder, as the README says: the platform account's funds are there), the signer's own wallet untouched.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError, AssetType, ClobClient, OrderType, Side } from '@polymarket/clob-client-v2';
import { createWalletClient, custom } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEMO_WALLETS } from '../../src/demo/catalog.ts';
import { deriveFunder, type WalletFactories } from '../../src/domain/signature-types.ts';
import type { MarketBook } from '../../src/edge/schemas/catalog.ts';
import type { LastTradePriceEvent, UserTradeEvent } from '../../src/edge/schemas/stream.ts';
import { startService, type ServiceProcess } from '../../tools/service-process.ts';
import { StreamClient, type StreamEvent } from '../../tools/stream-client.ts';
import { tempDir } from '../fixtures/temp-dirs.ts';

const ADMIN_TOKEN = 'bot-day-admin';
type ClientOptions = ConstructorParameters<typeof ClobClient>[0];

let svc: ServiceProcess;
let host: string;
let market: MarketBook;
let token: string;
let tick: string;

/** The official client for a demo wallet, with only host and chain changed (the README's three lines). */
function clientFor(privateKey: `0x${string}`, more: Partial<ClientOptions> = {}): ClobClient {
  const account = privateKeyToAccount(privateKey);
  const signer = createWalletClient({
    account,
    transport: custom({
      request: async ({ method }: { method: string }) => {
        throw new Error(`the client asked for an RPC (${method}); it must sign locally`);
      },
    }),
  });
  return new ClobClient({ host, chain: 80002, signer: signer as unknown as ClientOptions['signer'], ...more });
}

async function until<T>(what: string, get: () => T | undefined | Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function admin(method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(`${host}${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  assert.equal(r.status, 200, `${method} ${path}: ${r.status}`);
  return r.json();
}

/** What a refused call of the client threw (throwOnError). */
async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const e = await p.then(
    (v) => assert.fail(`not refused: ${JSON.stringify(v)}`),
    (x: unknown) => x,
  );
  assert.ok(e instanceof ApiError, String(e));
  return e;
}

describe("a bot developer's day against PROFILE=clob-v2 npm start", () => {
  before(async () => {
    svc = await startService({ dataDir: tempDir('pm-bot-day-'), adminToken: ADMIN_TOKEN, env: { PROFILE: 'clob-v2', DEMO: 'live' }, startTimeoutMs: 180_000 });
    host = svc.url;
  });
  after(async () => {
    await svc?.stop();
  });

  test('the start-up log names the profile and where the console is', () => {
    const listening = svc
      .tail()
      .split('\n')
      .map((l) => {
        try {
          return JSON.parse(l) as { msg?: string; profile?: string; console?: string };
        } catch {
          return {};
        }
      })
      .find((l) => l.msg === 'listening');
    assert.deepEqual([listening?.profile, listening?.console], ['clob-v2', `${host}/console`]);
  });

  test('the unchanged client creates its key, reads markets, posts, lists, reads and cancels orders, one and in a batch', async () => {
    const creds = await clientFor(DEMO_WALLETS[0].privateKey as `0x${string}`).createOrDeriveApiKey();
    assert.match(creds.key, /^[0-9a-f-]{36}$/);
    const bot = clientFor(DEMO_WALLETS[0].privateKey as `0x${string}`, { creds, throwOnError: true });

    const page = await bot.getMarkets();
    const open = (page.data as MarketBook[]).filter((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.minimum_tick_size === 0.01);
    assert.ok(open.length > 0, 'the demo markets take orders');
    // A market the demo makers quote on both sides (they quote every demo market from the first minute).
    for (const m of open) {
      const book = await bot.getOrderBook(m.tokens[0]!.token_id);
      if (book.asks.length > 0 && book.bids.length > 0) {
        market = m;
        break;
      }
    }
    assert.ok(market, 'a quoted market');
    token = market.tokens[0]!.token_id;
    tick = String(market.minimum_tick_size) as typeof tick;

    const rest = await bot.createAndPostOrder({ tokenID: token, price: 0.02, size: 10, side: Side.BUY }, { tickSize: tick as never }, OrderType.GTC);
    assert.deepEqual([rest.success, rest.status], [true, 'live'], JSON.stringify(rest));
    const listed = await bot.getOpenOrders({ asset_id: token });
    const mine = listed.find((o) => o.id === rest.orderID);
    assert.deepEqual([mine?.original_size, mine?.size_matched, mine?.order_type, mine?.side, mine?.price], ['10', '0', 'GTC', 'BUY', '0.02'], "the client's OpenOrder");
    const read = await bot.getOrder(rest.orderID);
    assert.deepEqual([read.id, read.status, read.asset_id], [rest.orderID, 'LIVE', token]);
    assert.deepEqual(await bot.cancelOrder({ orderID: rest.orderID }), { canceled: [rest.orderID], not_canceled: {} });

    const batch = await bot.postOrders([
      { order: await bot.createOrder({ tokenID: token, price: 0.03, size: 10, side: Side.BUY }, { tickSize: tick as never }), orderType: OrderType.GTC },
      { order: await bot.createOrder({ tokenID: token, price: 0.04, size: 10, side: Side.BUY }, { tickSize: tick as never }), orderType: OrderType.GTC },
    ]);
    assert.deepEqual(batch.map((b) => [b.success, b.status]), [[true, 'live'], [true, 'live']]);
    const ids = batch.map((b) => b.orderID);
    const canceled = (await bot.cancelOrders(ids)) as { canceled: string[] };
    assert.deepEqual([...canceled.canceled].sort(), [...ids].sort());
  });

  test('a fill goes MATCHED, MINED, CONFIRMED on the user channel, as on the platform', async () => {
    const creds = await clientFor(DEMO_WALLETS[1].privateKey as `0x${string}`).createOrDeriveApiKey();
    const bot = clientFor(DEMO_WALLETS[1].privateKey as `0x${string}`, { creds, throwOnError: true });
    const user = await StreamClient.connect(`${host.replace('http', 'ws')}/ws/user`, { pingMs: 5_000 });
    try {
      user.subscribeUser({ apiKey: creds.key, secret: creds.secret, passphrase: creds.passphrase });
      await new Promise((r) => setTimeout(r, 200));
      const bought = await bot.createAndPostMarketOrder({ tokenID: token, amount: 5, side: Side.BUY }, { tickSize: tick as never }, OrderType.FAK);
      assert.deepEqual([bought.success, bought.status], [true, 'matched'], JSON.stringify(bought));
      const tradeId = bought.tradeIDs![0]!;
      const isTrade = (status: string) => (e: StreamEvent) => e.event_type === 'trade' && (e as UserTradeEvent).id === tradeId && (e as UserTradeEvent).status === status;
      const moves: UserTradeEvent[] = [];
      for (const status of ['MATCHED', 'MINED', 'CONFIRMED']) moves.push(await user.next<UserTradeEvent>(isTrade(status), 30_000));
      const seen = user.events.filter((e) => e.event_type === 'trade' && (e as UserTradeEvent).id === tradeId).map((e) => (e as UserTradeEvent).status);
      assert.deepEqual(seen, ['MATCHED', 'MINED', 'CONFIRMED'], 'each status once, in order');
      assert.ok(Number(moves[0]!.last_update) <= Number(moves[1]!.last_update) && Number(moves[1]!.last_update) <= Number(moves[2]!.last_update));
      const trades = await bot.getTrades({ id: tradeId });
      assert.deepEqual(trades.map((t) => [t.id, t.status]), [[tradeId, 'CONFIRMED']]);
    } finally {
      user.close();
    }
  });

  test("a platform account's bot: signatureType 1 (proxy wallet) and 2 (Safe) with its funder address, unchanged", async () => {
    const key = DEMO_WALLETS[3].privateKey as `0x${string}`;
    const signer = privateKeyToAccount(key).address.toLowerCase();
    const info = (await (await fetch(`${host}/exchange-info`)).json()) as { walletFactories: WalletFactories };
    const creds = await clientFor(key).createOrDeriveApiKey();
    const own = clientFor(key, { creds, throwOnError: true });
    const usdc = async (c: ClobClient) => Number((await c.getBalanceAllowance({ asset_type: AssetType.COLLATERAL })).balance);
    const ownBefore = await usdc(own);
    const user = await StreamClient.connect(`${host.replace('http', 'ws')}/ws/user`, { pingMs: 5_000 });
    try {
      user.subscribeUser({ apiKey: creds.key, secret: creds.secret, passphrase: creds.passphrase });
      await new Promise((r) => setTimeout(r, 200));
      for (const type of [1, 2] as const) {
        // The address polymarket.com shows the account (the factory's CREATE2 of the signer); its funds are there.
        const funder = deriveFunder(info.walletFactories, signer, type);
        await admin('POST', `/admin/wallets/${funder}/deposit`, { amount: '50' });
        const bot = clientFor(key, { creds, signatureType: type, funderAddress: funder, throwOnError: true });
        assert.equal(await usdc(bot), 50_000_000, `type ${type}: balance-allowance with the client's signature_type is the funder's`);

        const rest = await bot.createAndPostOrder({ tokenID: token, price: 0.02, size: 10, side: Side.BUY }, { tickSize: tick as never }, OrderType.GTC);
        assert.deepEqual([rest.success, rest.status], [true, 'live'], JSON.stringify(rest));
        const listed = await bot.getOpenOrders({ asset_id: token });
        assert.deepEqual(listed.filter((o) => o.id === rest.orderID).map((o) => o.maker_address.toLowerCase()), [funder.toLowerCase()]);
        assert.deepEqual(await bot.cancelOrder({ orderID: rest.orderID }), { canceled: [rest.orderID], not_canceled: {} });

        const bought = await bot.createAndPostMarketOrder({ tokenID: token, amount: 5, side: Side.BUY }, { tickSize: tick as never }, OrderType.FAK);
        assert.deepEqual([bought.success, bought.status], [true, 'matched'], JSON.stringify(bought));
        const tradeId = bought.tradeIDs![0]!;
        for (const status of ['MATCHED', 'MINED', 'CONFIRMED']) {
          const e = await user.next<UserTradeEvent>((x) => x.event_type === 'trade' && (x as UserTradeEvent).id === tradeId && (x as UserTradeEvent).status === status, 30_000);
          assert.equal(e.maker_address.toLowerCase(), funder.toLowerCase(), `type ${type}: the ${status} trade is the funder's, on the signer's channel`);
        }
        const spent = 50_000_000 - (await usdc(bot));
        assert.ok(spent > 0 && spent <= 5_000_000 + 100_000, `type ${type}: the funder paid (${spent} units)`);
      }
      assert.equal(await usdc(own), ownBefore, "the signer's own wallet is untouched");
    } finally {
      user.close();
    }
  });

  test('a maintenance window: no trade at all from its start to the end of its post-only period, the demo traders included', async () => {
    const creds = await clientFor(DEMO_WALLETS[2].privateKey as `0x${string}`).createOrDeriveApiKey();
    const bot = clientFor(DEMO_WALLETS[2].privateKey as `0x${string}`, { creds, throwOnError: true });
    // Every token of every demo market (the demo trades them all).
    const tokens: string[] = [];
    for (let cursor = ''; cursor !== 'LTE='; ) {
      const p = (await (await fetch(`${host}/markets${cursor ? `?next_cursor=${cursor}` : ''}`)).json()) as { data: MarketBook[]; next_cursor: string };
      for (const m of p.data) if (m.accepting_orders) tokens.push(...m.tokens.map((t) => t.token_id));
      cursor = p.next_cursor;
    }
    const trades: Array<{ at: number; asset: string }> = [];
    const market = await StreamClient.connect(`${host.replace('http', 'ws')}/ws/market`, {
      pingMs: 5_000,
      onEvent: (e) => e.event_type === 'last_trade_price' && trades.push({ at: Number((e as LastTradePriceEvent).timestamp), asset: (e as LastTradePriceEvent).asset_id }),
    });
    try {
      market.subscribeMarket(tokens, { initialDump: false });
      await until('a demo trade before the window', () => (trades.length > 0 ? true : undefined), 60_000);

      const set = await admin('POST', '/admin/sandbox/maintenance', { durationSeconds: 4, postOnlySeconds: 4 });
      const from = Date.now();
      assert.deepEqual([set.phase, set.durationSeconds, set.postOnlySeconds], ['maintenance', 4, 4], 'the answer echoes what was set');
      const postOnlyEnd = Date.parse(set.until) + 4_000;

      const closed = await refusal(bot.createAndPostOrder({ tokenID: token, price: 0.02, size: 10, side: Side.BUY }, { tickSize: tick as never }, OrderType.GTC));
      assert.deepEqual([closed.status, closed.message], [425, 'service not ready']);
      assert.equal((await refusal(bot.cancelAll())).status, 425);

      await until('the post-only period', async () => ((await admin('GET', '/admin/sandbox')).maintenance.phase === 'post-only' ? true : undefined), 10_000);
      const plain = await refusal(bot.createAndPostOrder({ tokenID: token, price: 0.02, size: 10, side: Side.BUY }, { tickSize: tick as never }, OrderType.GTC));
      assert.equal(plain.status, 503);
      assert.match(plain.message, /^post-only mode: only post-only orders and cancels are allowed \(reason: a post-only period after a maintenance window is under way/);
      const maker = await bot.createAndPostOrder({ tokenID: token, price: 0.02, size: 10, side: Side.BUY }, { tickSize: tick as never }, OrderType.GTC, true);
      assert.deepEqual([maker.success, maker.status], [true, 'live'], 'a post-only order rests');
      assert.deepEqual(await bot.cancelOrder({ orderID: maker.orderID }), { canceled: [maker.orderID], not_canceled: {} }, 'cancels are taken');

      await until('the end of the post-only period', () => (Date.now() > postOnlyEnd + 100 ? true : undefined), 15_000);
      const during = trades.filter((t) => t.at >= from && t.at < postOnlyEnd);
      assert.deepEqual(during, [], `no trade from the window's start (${new Date(from).toISOString()}) to the end of its post-only period`);
      await until('a demo trade after the window', () => (trades.some((t) => t.at >= postOnlyEnd) ? true : undefined), 60_000);
    } finally {
      market.close();
    }
  });
});
