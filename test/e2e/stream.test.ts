/**
 * The streaming channels over real sockets on loopback, against one app (rate limits off, a 2 s idle
 * time, 64 KiB send buffers, a `book` after every commit with a trade): the `book` on subscribe equals GET /book; a resting order, a cancel, a
 * transfer, a mint and a merge give the documented events on both tokens (and to the two wallets on the
 * user channel); a client replaying deltas over 2,000 seeded random orders holds the REST book and hash of
 * every token; subscribe, unsubscribe and operation updates; PING/PONG and the idle close; user isolation
 * and refused credentials; a slow reader closed while another socket's latency stays bounded; 1,000
 * sockets on one market all receive a trade. Orders go to the engine in process (the HTTP order path has
 * its own tests): what is tested here is what the journal commits and what the sockets receive.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type App } from '../../src/node/app.ts';
import type { BookEvent, LastTradePriceEvent, PriceChangeEvent, UserOrderEvent, UserTradeEvent } from '../../src/edge/schemas/stream.ts';
import type { PlaceInput } from '../../src/engine/engine.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { LocalBook, StreamClient, type StreamEvent } from '../../tools/stream-client.ts';
import { T, lcg, order, wallet } from '../fixtures/engine-harness.ts';

const CID = `0x${'5e'.repeat(32)}`;
const CID2 = `0x${'6f'.repeat(32)}`;
const CID3 = `0x${'7a'.repeat(32)}`;

let app: App;
let dir: string;
let base: string;
let wsBase: string;
let YES: string;
let NO: string;
const creds = new Map<string, { apiKey: string; secret: string; passphrase: string }>();
const clients: StreamClient[] = [];

async function connect(path: '/ws/market' | '/ws/user', pingMs = 500): Promise<StreamClient> {
  const c = await StreamClient.connect(`${wsBase}${path}`, { pingMs });
  clients.push(c);
  return c;
}

async function restBook(token: string): Promise<{ bids: { price: string; size: string }[]; asks: { price: string; size: string }[]; hash: string; timestamp: string }> {
  return (await fetch(`${base}/book?token_id=${token}`)).json() as Promise<any>;
}

async function funded(n: number): Promise<string> {
  const w = wallet(0xabc000 + n);
  const e = app.ctx.engine;
  assert.equal((await e.deposit(w, 100_000 * T)).ok, true);
  for (const c of [CID, CID2, CID3]) assert.equal((await e.split(w, c, 10_000 * T)).ok, true);
  creds.set(w, await app.ctx.auth.keys.create(w, '0'));
  return w;
}

function place(spec: Parameters<typeof order>[0]): Promise<{ orderId: string; status: string }> {
  const o: PlaceInput = order(spec);
  o.owner = creds.get(spec.wallet)?.apiKey ?? o.owner;
  return app.ctx.engine.placeOrder(o) as Promise<any>;
}

const isType = <T extends StreamEvent>(type: T['event_type'], asset?: string) => (e: StreamEvent): boolean =>
  e.event_type === type && (asset === undefined || (e as { asset_id?: string }).asset_id === asset);

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pm-stream-'));
  app = await startApp(
    testConfig({
      dataDir: dir,
      http: { port: 0 },
      adminToken: 't',
      demo: 'off',
      rateLimits: { enabled: false },
      auth: { signatureThreads: 1 },
      stream: { idleSeconds: 2, maxBackpressureBytes: 65536, maxSocketsPerAddress: 1200, maxAssetSocketsPerAddress: 1200, maxAssetSocketsPerNetwork: 1200, messageBytesPerNetwork: 1 << 30, maxSubscriptionsPerSocket: 4, bookIntervalMs: 0 },
    }),
    { log: silentLogger },
  );
  base = `http://127.0.0.1:${app.port}`;
  wsBase = `ws://127.0.0.1:${app.port}`;
  const r = await fetch(`${base}/admin/events`, {
    method: 'POST',
    headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
    body: JSON.stringify([
      {
        title: 'Streams',
        slug: 'streams',
        endDate: '2030-01-01T00:00:00Z',
        markets: [
          { question: 'Will it stream?', conditionId: CID, orderPriceMinTickSize: 0.01, orderMinSize: '1', outcomes: ['Up', 'Down'] },
          { question: 'Second?', conditionId: CID2, orderPriceMinTickSize: 0.001, orderMinSize: '1' },
          { question: 'Third?', conditionId: CID3, orderPriceMinTickSize: 0.01, orderMinSize: '1' },
        ],
      },
    ]),
  });
  assert.equal(r.status, 200, await r.text());
  [YES, NO] = app.ctx.catalog.read.marketByCondition(CID)!.clobTokenIds;
});

after(async () => {
  for (const c of clients) c.close();
  await app.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('market channel', () => {
  let alice: string;
  let bob: string;

  before(async () => {
    alice = await funded(1);
    bob = await funded(2);
  });

  test('the book on subscribe equals GET /book, for both tokens, hash included', async () => {
    await place({ wallet: alice, tokenId: YES, side: 'BUY', price: 3000, size: 5 * T });
    const c = await connect('/ws/market');
    c.subscribeMarket([YES, NO]);
    for (const token of [YES, NO]) {
      const book = await c.next<BookEvent>(isType('book', token));
      const rest = await restBook(token);
      assert.deepEqual([book.bids, book.asks, book.hash, book.market], [rest.bids, rest.asks, rest.hash, CID]);
      assert.equal(Math.floor(Number(book.timestamp) / 1000), Number(rest.timestamp));
    }
    assert.equal(c.frames, 1, 'the initial dump is one frame');
  });

  test('a resting order and its cancel: price_change on both tokens, each at its own price, with /book\'s hash', async () => {
    const c = await connect('/ws/market');
    c.subscribeMarket([YES, NO]);
    await c.next(isType('book', NO));
    const from = c.events.length;
    const r = await place({ wallet: alice, tokenId: YES, side: 'BUY', price: 4000, size: 10 * T });
    const yes = await c.next<PriceChangeEvent>((e) => e.event_type === 'price_change' && e.price_changes[0].asset_id === YES, 5000, from);
    const no = await c.next<PriceChangeEvent>((e) => e.event_type === 'price_change' && e.price_changes[0].asset_id === NO, 5000, from);
    const [ry, rn] = [await restBook(YES), await restBook(NO)];
    assert.deepEqual(yes.price_changes, [{ asset_id: YES, price: '0.4', size: '10', side: 'BUY', hash: ry.hash, best_bid: '0.4', best_ask: '' }]);
    assert.deepEqual(no.price_changes, [{ asset_id: NO, price: '0.6', size: '10', side: 'SELL', hash: rn.hash, best_bid: '', best_ask: '0.6' }]);
    assert.equal(yes.market, CID);
    const at = c.events.length;
    await app.ctx.engine.cancelOrders(alice, [r.orderId]);
    const yc = await c.next<PriceChangeEvent>(isType('price_change'), 5000, at);
    const changes = [yc, await c.next<PriceChangeEvent>((e) => e !== yc && e.event_type === 'price_change', 5000, at)].flatMap((e) => e.price_changes);
    assert.deepEqual(changes.map((p) => [p.asset_id, p.price, p.size, p.side]).sort(), [[NO, '0.6', '0', 'SELL'], [YES, '0.4', '0', 'BUY']].sort());
  });

  test('a transfer: last_trade_price on the token traded, then the book of both tokens', async () => {
    const c = await connect('/ws/market');
    c.subscribeMarket([YES, NO]);
    await c.next(isType('book', NO));
    const from = c.events.length;
    await place({ wallet: bob, tokenId: YES, side: 'SELL', price: 5500, size: 4 * T });
    await place({ wallet: alice, tokenId: YES, side: 'BUY', price: 5600, size: 3 * T });
    const ltp = await c.next<LastTradePriceEvent>(isType('last_trade_price'), 5000, from);
    assert.deepEqual([ltp.asset_id, ltp.price, ltp.side, ltp.size, ltp.market], [YES, '0.55', 'BUY', '3', CID]);
    assert.match(ltp.transaction_hash, /^0x[0-9a-f]{64}$/);
    for (const token of [YES, NO]) {
      const book = await c.next<BookEvent>(isType('book', token), 5000, from);
      const rest = await restBook(token);
      assert.deepEqual([book.bids, book.asks, book.hash, book.last_trade_price], [rest.bids, rest.asks, rest.hash, token === YES ? '0.55' : '']);
    }
    assert.equal(c.events.slice(from).filter(isType('last_trade_price', NO)).length, 0, 'no trade of No');
  });

  test('a mint and a merge fill both tokens, each at its own price', async () => {
    await app.ctx.engine.cancelAll(alice);
    await app.ctx.engine.cancelAll(bob);
    const c = await connect('/ws/market');
    c.subscribeMarket([YES, NO]);
    await c.next(isType('book', NO));
    let from = c.events.length;
    // Mint: BUY Yes at 0.7 rests; BUY No at 0.3 crosses it (0.7 + 0.3 >= 1).
    await place({ wallet: alice, tokenId: YES, side: 'BUY', price: 7000, size: 2 * T });
    await place({ wallet: bob, tokenId: NO, side: 'BUY', price: 3000, size: 2 * T });
    let y = await c.next<LastTradePriceEvent>(isType('last_trade_price', YES), 5000, from);
    let n = await c.next<LastTradePriceEvent>(isType('last_trade_price', NO), 5000, from);
    assert.deepEqual([y.price, y.side, n.price, n.side, y.size, n.size], ['0.7', 'BUY', '0.3', 'BUY', '2', '2']);
    from = c.events.length;
    // Merge: SELL Yes at 0.2 rests; SELL No at 0.75 crosses it (0.2 + 0.75 <= 1): the No seller gets 0.8.
    await place({ wallet: alice, tokenId: YES, side: 'SELL', price: 2000, size: T });
    await place({ wallet: bob, tokenId: NO, side: 'SELL', price: 7500, size: T });
    y = await c.next<LastTradePriceEvent>(isType('last_trade_price', YES), 5000, from);
    n = await c.next<LastTradePriceEvent>(isType('last_trade_price', NO), 5000, from);
    assert.deepEqual([y.price, y.side, n.price, n.side], ['0.2', 'SELL', '0.8', 'SELL']);
    for (const token of [YES, NO]) {
      const book = await c.next<BookEvent>(isType('book', token), 5000, from);
      assert.equal(book.hash, (await restBook(token)).hash);
    }
  });

  test('custom features: best_bid_ask when the top moves', async () => {
    const c = await connect('/ws/market');
    c.subscribeMarket([YES], { custom: true });
    await c.next(isType('book', YES));
    const from = c.events.length;
    await place({ wallet: alice, tokenId: YES, side: 'BUY', price: 5000, size: T });
    const bba = await c.next(isType('best_bid_ask', YES), 5000, from);
    const rest = await restBook(YES);
    assert.deepEqual(bba, { ...bba, best_bid: rest.bids.at(-1)!.price, best_ask: rest.asks.at(-1)?.price ?? '', market: CID });
  });

  test('subscribe, unsubscribe and operation updates; unknown assets are skipped and named; the cap refuses a whole message', async () => {
    const c = await connect('/ws/market');
    c.subscribeMarket([YES]);
    await c.next(isType('book', YES));
    c.update('subscribe', { assets_ids: [NO, '999999'] });
    await c.next(isType('book', NO));
    assert.equal(((await c.next(isType('error'))) as { error: string }).error, 'unknown assets ignored: 999999');
    c.update('unsubscribe', { assets_ids: [YES] });
    c.send('PING');
    await waitPong(c);
    const from = c.events.length;
    await place({ wallet: alice, tokenId: YES, side: 'BUY', price: 1000, size: T });
    await c.next(isType('price_change'), 5000, from);
    await sleep(100);
    assert.deepEqual(c.events.slice(from).flatMap((e) => (e as PriceChangeEvent).price_changes.map((p) => p.asset_id)), [NO]);
    const before = c.events.length;
    c.update('subscribe', { assets_ids: [CID, CID2, CID3].flatMap((m) => app.ctx.catalog.read.marketByCondition(m)!.clobTokenIds) });
    const err = await c.next(isType('error'), 5000, before);
    assert.match((err as { error: string }).error, /too many subscriptions/);
    const at = c.events.length;
    c.send('{not json');
    assert.equal(((await c.next(isType('error'), 5000, at)) as { error: string }).error, 'invalid JSON');
  });

  test('PING is answered PONG; a silent socket is closed after the idle time with a reason', async () => {
    const c = await connect('/ws/market', 0);
    c.send('PING');
    await waitPong(c);
    const t0 = Date.now();
    const closed = await c.closed;
    assert.deepEqual(closed, { code: 4002, reason: 'idle timeout' });
    assert.ok(Date.now() - t0 >= 1500 && Date.now() - t0 < 5000, `closed after ${Date.now() - t0} ms`);
  });

  test('a client replaying deltas over 2,000 seeded random orders holds the REST book and hash of every token', async () => {
    const tokens = [CID, CID2, CID3].flatMap((c) => app.ctx.catalog.read.marketByCondition(c)!.clobTokenIds);
    const sockets = await Promise.all([0, 1, 2].map(() => connect('/ws/market')));
    sockets.forEach((s, i) => s.subscribeMarket(tokens.slice(2 * i, 2 * i + 2)));
    const books = tokens.map((t) => new LocalBook(t));
    const rnd = lcg(42);
    const wallets = [alice, bob, await funded(3), await funded(4)];
    const live: Array<{ w: string; id: string }> = [];
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < 2000; i++) {
      const m = rnd(3);
      const token = tokens[m * 2 + rnd(2)];
      const tick = m === 1 ? 10 : 100;
      const w = wallets[rnd(4)];
      const kind = rnd(10);
      if (kind === 0 && live.length > 0) {
        const o = live.splice(rnd(live.length), 1)[0];
        pending.push(app.ctx.engine.cancelOrders(o.w, [o.id]));
        continue;
      }
      const price = tick * (1 + rnd(Math.floor(10_000 / tick) - 1));
      const type = kind < 8 ? 'GTC' : 'FAK';
      const p = place({ wallet: w, tokenId: token, side: rnd(2) === 0 ? 'BUY' : 'SELL', price: type === 'GTC' ? price : Math.max(100, price - (price % 100)), size: (1 + rnd(5)) * T, type }).then((r) => {
        if (r.status === 'live') live.push({ w, id: r.orderId });
      });
      pending.push(p);
      if (i % 20 === 0) await Promise.all(pending.splice(0));
    }
    await Promise.all(pending);
    await app.ctx.engine.afterCommit();
    // Everything committed has been published; a PONG after it means the frames before it have arrived.
    for (const s of sockets) s.send('PING');
    await Promise.all(sockets.map((s) => waitPong(s)));
    const events = sockets.flatMap((s) => s.events);
    for (const e of events) for (const b of books) b.apply(e);
    let trades = 0;
    for (const e of events) if (e.event_type === 'last_trade_price') trades++;
    assert.ok(trades > 100, `only ${trades} trades`);
    for (const b of books) {
      const rest = await restBook(b.assetId);
      assert.deepEqual(b.levels(), { bids: rest.bids, asks: rest.asks }, `levels of ${b.assetId}`);
      assert.equal(b.hash, rest.hash, `hash of ${b.assetId}`);
    }
  });

  test('1,000 sockets on one market all receive a trade', async () => {
    const many = await Promise.all(Array.from({ length: 1000 }, () => connect('/ws/market', 1000)));
    for (const c of many) c.subscribeMarket([YES], { initialDump: false });
    // Subscriptions are processed in arrival order: a PONG on each says its subscribe was handled.
    for (const c of many) c.send('PING');
    await Promise.all(many.map((c) => waitPong(c)));
    await place({ wallet: bob, tokenId: YES, side: 'SELL', price: 9000, size: T });
    await place({ wallet: alice, tokenId: YES, side: 'BUY', price: 9000, size: T });
    const got = await Promise.all(many.map((c) => c.next<LastTradePriceEvent>(isType('last_trade_price', YES), 10_000)));
    assert.equal(got.filter((e) => e.transaction_hash === got[0].transaction_hash).length, 1000);
    for (const c of many) c.close();
  });

  test('a slow reader is closed (4003) while another socket keeps receiving in time', async () => {
    // A deep book makes every `book` frame large: 250 levels of asks.
    const [seller, buyer] = [await funded(20), await funded(21)];
    for (let i = 0; i < 250; i++) assert.equal((await place({ wallet: seller, tokenId: CID2Token(1), side: 'SELL', price: 5000 + i * 10, size: 20 * T })).status, 'live');
    const slow = await connect('/ws/market');
    void slow.closed.then(() => (slowClosed = true));
    slow.subscribeMarket([CID2Token(0), CID2Token(1)], { initialDump: false });
    const fast = await connect('/ws/market');
    const lat: number[] = [];
    let sent = 0;
    fast.subscribeMarket([CID2Token(0)], { initialDump: false });
    slow.send('PING');
    fast.send('PING');
    await Promise.all([waitPong(slow), waitPong(fast)]);
    // The slow reader stops reading: its kernel buffers fill, then uWS's send buffer, then it is closed.
    (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const dropsBefore = await metric('ws_frames_dropped_total{channel="market"}');
    for (let i = 0; i < 3000 && !slowClosed; i++) {
      const at = fast.events.length;
      sent = Date.now();
      const r = await place({ wallet: buyer, tokenId: CID2Token(1), side: 'BUY', price: 7490, size: T, type: 'FAK' });
      assert.equal(r.status, 'matched', JSON.stringify(r));
      await fast.next(isType('book', CID2Token(0)), 5000, at);
      lat.push(Date.now() - sent);
    }
    assert.ok(slowClosed, 'the slow reader was closed');
    // It reads no more, so it never reads the close frame (4003, "slow consumer"): the server counts it.
    assert.ok((await metric('ws_closes_total{channel="market",reason="slow_consumer"}')) >= 1);
    assert.ok((await metric('ws_frames_dropped_total{channel="market"}')) > dropsBefore);
    lat.sort((a, b) => a - b);
    assert.ok(lat[Math.floor(lat.length * 0.99)] < 250, `fast reader p99 ${lat[Math.floor(lat.length * 0.99)]} ms over ${lat.length} trades`);
  });
});

let slowClosed = false;
function CID2Token(o: 0 | 1): string {
  return app.ctx.catalog.read.marketByCondition(CID2)!.clobTokenIds[o];
}

async function metric(series: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

describe('user channel', () => {
  let carol: string;
  let dave: string;

  before(async () => {
    carol = await funded(10);
    dave = await funded(11);
  });

  test('bad credentials close the socket with a reason and deliver nothing but what was wrong', async () => {
    const good = creds.get(carol)!;
    const cases = [
      [{ ...good, secret: good.secret.slice(0, -4) + 'AAA=' }, /secret/],
      [{ ...good, passphrase: 'x'.repeat(64) }, /passphrase/],
      [{ ...good, apiKey: '00000000-0000-4000-8000-000000000000' }, /API key/],
    ] as const;
    for (const [auth, why] of cases) {
      const c = await connect('/ws/user');
      c.subscribeUser(auth);
      assert.deepEqual(await c.closed, { code: 4001, reason: 'Unauthorized/Invalid api key' });
      // One error frame saying why (refusals explain themselves), no event of the wallet's.
      assert.deepEqual(c.events.map((e) => e.event_type), ['error']);
      assert.match(String((c.events[0] as { error?: string }).error), why);
    }
    const c = await connect('/ws/user');
    c.send({ type: 'market', assets_ids: [] });
    assert.equal((await c.closed).code, 4001);
  });

  test('revoking the API key closes the user sockets it opened (4001) and no other', async () => {
    const sameWallet = await connect('/ws/user');
    sameWallet.subscribeUser(creds.get(dave)!);
    const other = await connect('/ws/user');
    other.subscribeUser(creds.get(carol)!);
    for (const c of [sameWallet, other]) {
      c.send('PING');
      await waitPong(c);
    }
    // A second key of Dave's: its socket closes when it is revoked; his first key's socket stays.
    const second = await app.ctx.auth.keys.create(dave, '99');
    const kept = await connect('/ws/user');
    kept.subscribeUser(second);
    kept.send('PING');
    await waitPong(kept);
    await app.ctx.auth.keys.revoke(second.apiKey);
    assert.deepEqual(await kept.closed, { code: 4001, reason: 'API key revoked' });
    sameWallet.send('PING');
    await waitPong(sameWallet);
    other.send('PING');
    await waitPong(other);
  });

  test('a read-only key opens the user channel; a builder key of the same wallet does not', async () => {
    const readonly = await app.ctx.auth.keys.createKind(carol, 'readonly');
    const reader = await connect('/ws/user');
    reader.subscribeUser(readonly);
    reader.send('PING');
    await waitPong(reader);
    const builder = await app.ctx.auth.keys.createKind(carol, 'builder');
    const refused = await connect('/ws/user');
    refused.subscribeUser(builder);
    assert.deepEqual(await refused.closed, { code: 4001, reason: 'Unauthorized/Invalid api key' });
  });

  test('each wallet sees its own orders and trades, and only those', async () => {
    const cc = await connect('/ws/user');
    cc.subscribeUser(creds.get(carol)!);
    const dc = await connect('/ws/user');
    dc.subscribeUser(creds.get(dave)!, [CID]);
    for (const c of [cc, dc]) {
      c.send('PING');
      await waitPong(c);
    }
    const maker = await place({ wallet: carol, tokenId: YES, side: 'SELL', price: 6100, size: 3 * T });
    const taker = await place({ wallet: dave, tokenId: YES, side: 'BUY', price: 6100, size: 2 * T });
    const placement = await cc.next<UserOrderEvent>((e) => e.event_type === 'order' && e.type === 'PLACEMENT');
    assert.deepEqual([placement.id, placement.side, placement.price, placement.original_size, placement.size_matched, placement.outcome, placement.maker_address, placement.status], [maker.orderId, 'SELL', '0.61', '3', '0', 'Up', carol, 'LIVE']);
    const ct = await cc.next<UserTradeEvent>(isType('trade'));
    const dt = await dc.next<UserTradeEvent>(isType('trade'));
    assert.deepEqual([ct.trader_side, dt.trader_side, ct.id, ct.taker_order_id, ct.price, ct.size, ct.status], ['MAKER', 'TAKER', dt.id, taker.orderId, '0.61', '2', 'CONFIRMED']);
    assert.deepEqual(ct.maker_orders.map((m) => [m.order_id, m.matched_amount, m.price, m.owner]), [[maker.orderId, '2', '0.61', creds.get(carol)!.apiKey]]);
    const update = await cc.next<UserOrderEvent>((e) => e.event_type === 'order' && e.type === 'UPDATE');
    assert.deepEqual([update.size_matched, update.status, update.associate_trades], ['2', 'LIVE', [ct.id]]);
    const dUpdate = await dc.next<UserOrderEvent>((e) => e.event_type === 'order' && e.type === 'UPDATE');
    assert.deepEqual([dUpdate.id, dUpdate.status], [taker.orderId, 'MATCHED']);
    await app.ctx.engine.cancelOrders(carol, [maker.orderId]);
    const cancel = await cc.next<UserOrderEvent>((e) => e.event_type === 'order' && e.type === 'CANCELLATION');
    assert.deepEqual([cancel.id, cancel.size_matched, cancel.status], [maker.orderId, '2', 'CANCELED']);
    // Isolation: nobody saw an event of the other wallet's orders other than the shared trade.
    const own = (c: StreamClient, w: string) => c.events.every((e) => e.event_type === 'trade' || (e as UserOrderEvent).maker_address === w);
    assert.ok(own(cc, carol) && own(dc, dave));
    assert.ok(dc.events.every((e) => e.event_type !== 'order' || (e as UserOrderEvent).id !== maker.orderId));
    // Dave listens to CID only: an order of his in another market does not reach him.
    const at = dc.events.length;
    await place({ wallet: dave, tokenId: app.ctx.catalog.read.marketByCondition(CID3)!.clobTokenIds[0], side: 'BUY', price: 1000, size: T });
    await place({ wallet: dave, tokenId: YES, side: 'BUY', price: 1000, size: T });
    const next = await dc.next<UserOrderEvent>(isType('order'), 5000, at);
    assert.equal(next.market, CID);
  });
});

test('closes by reason, sockets and bytes are on /metrics', async () => {
  const text = await (await fetch(`${base}/metrics`)).text();
  for (const series of ['ws_sockets{channel="market"}', 'ws_frames_sent_total{channel="market"}', 'ws_bytes_sent_total{channel="user"}', 'ws_closes_total{channel="market",reason="idle"}', 'ws_closes_total{channel="user",reason="unauthorized"}', 'ws_subscriptions{channel="market"}']) {
    assert.ok(text.includes(series), series);
  }
});

async function waitPong(c: StreamClient): Promise<void> {
  const want = c.pongs + 1;
  const end = Date.now() + 5000;
  while (c.pongs < want) {
    if (Date.now() > end) throw new Error('no PONG');
    await sleep(5);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
