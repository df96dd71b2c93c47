/**
 * The trade lifecycle as a client sees it, over HTTP with real keys and signatures, on a ManualClock that
 * drives the engine's timers (config `sandbox.trades`). At each step every read agrees:
 *   MATCHED    the order answer and GET /data/order show the match; GET /data/trades and /builder/trades
 *              say MATCHED; the buyer's tokens are not in /balance-allowance and selling them is refused
 *              with "not enough balance / allowance", its reason naming what the trade still settling holds;
 *              the data API (/positions, /trades) does not show the
 *              trade yet (it shows what is on chain);
 *   MINED      statuses say MINED with the move's time as last_update; the tokens are spendable; /positions
 *              and /trades show the trade;
 *   CONFIRMED  statuses say CONFIRMED;
 *   FAILED     (another run, every trade failing) statuses say FAILED; both wallets hold what they held
 *              before; the data API never shows the trade; the ledger conserves USDC.
 * The user channel agrees: each side's socket gets the trade MATCHED at the match and again at each move
 * (MINED, CONFIRMED; or RETRYING, FAILED) with the move's time as last_update.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startApp, type App } from '../../src/node/app.ts';
import { ManualClock } from '../../src/runtime/clock.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { TestClient, units } from '../fixtures/trading-client.ts';
import { StreamClient } from '../../tools/stream-client.ts';

const CID = `0x${'d4'.repeat(32)}`;
const BUILDER = `0x${'be'.repeat(32)}` as const;

interface Session {
  app: App;
  base: string;
  clock: ManualClock;
  alice: TestClient;
  bob: TestClient;
  yes: string;
  close(): Promise<void>;
}

async function session(trades: Record<string, number>): Promise<Session> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-lifecycle-e2e-'));
  const clock = new ManualClock(Date.now());
  const app = await startApp(
    testConfig({
      dataDir,
      http: { port: 0 },
      adminToken: 't',
      demo: 'off',
      rateLimits: { enabled: false },
      // The manual clock runs ahead of the client's by the delays it is moved through.
      auth: { signatureThreads: 1, maxClockSkewSeconds: 3600 },
      sandbox: { trades: { minedDelayMs: 0, confirmedDelayMs: 0, retryingShare: 0, retryDelayMs: 0, failedShare: 0, seed: 5, ...trades } },
    }),
    { log: silentLogger, clock, timers: clock.timers },
  );
  const base = `http://127.0.0.1:${app.port}`;
  const admin = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(base + path, { method, headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    assert.equal(r.status, 200, await r.clone().text());
    return r.json();
  };
  await admin('POST', '/admin/events', [
    { title: 'Lifecycle', slug: 'lifecycle', endDate: '2027-06-30T00:00:00Z', markets: [{ question: 'Settles?', conditionId: CID, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] },
  ]);
  const info = await TestClient.info(base);
  const alice = new TestClient(base, `0x${'a5'.repeat(32)}`, info);
  const bob = new TestClient(base, `0x${'b6'.repeat(32)}`, info);
  for (const c of [alice, bob]) {
    await admin('POST', `/admin/wallets/${c.address}/deposit`, { amount: '100' });
    await c.createKey();
  }
  assert.equal((await bob.call('POST', '/split', { conditionId: CID, amount: '20' })).status, 200);
  return {
    app,
    base,
    clock,
    alice,
    bob,
    yes: app.ctx.catalog.read.marketByCondition(CID)!.clobTokenIds[0],
    async close() {
      await app.stop(1000);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A user-channel socket of `c`'s wallet, subscribed (the PONG after the subscribe says it was handled). */
async function userSocket(s: Session, c: TestClient): Promise<StreamClient> {
  const sock = await StreamClient.connect(`ws://127.0.0.1:${s.app.port}/ws/user`, { pingMs: 0 });
  sock.subscribeUser(c.creds!);
  const want = sock.pongs + 1;
  sock.send('PING');
  for (const end = Date.now() + 5000; sock.pongs < want; ) {
    assert.ok(Date.now() < end, 'no PONG after subscribing');
    await new Promise((r) => setTimeout(r, 5));
  }
  return sock;
}

/** The trade's statuses the socket received so far, with each one's last_update (unix seconds). */
async function tradeMoves(sock: StreamClient, tradeId: string, count: number): Promise<Array<[string, string, string]>> {
  const moves = () => sock.events.filter((e: any) => e.event_type === 'trade' && e.id === tradeId).map((e: any) => [e.status, e.last_update, e.trader_side] as [string, string, string]);
  for (const end = Date.now() + 5000; moves().length < count && Date.now() < end; ) await new Promise((r) => setTimeout(r, 5));
  return moves();
}

const sec = (ms: number) => String(Math.floor(ms / 1000));

/** Moves the clock; resolves once the moves it caused are durable and projected. */
async function pass(s: Session, ms: number): Promise<void> {
  s.clock.advance(ms);
  assert.deepEqual(await s.app.ctx.engine.afterCommit(), { ok: true, code: 0 });
}

const get = async (s: Session, path: string) => {
  const r = await fetch(s.base + path);
  assert.equal(r.status, 200, path);
  return r.json() as Promise<any>;
};

async function views(s: Session, tradeId: string) {
  const own = (await s.alice.call('GET', '/data/trades')).body.data.find((t: any) => t.id === tradeId);
  const builder = (await get(s, `/builder/trades?builder_code=${BUILDER}`)).find((t: any) => t.id === tradeId);
  return {
    status: own?.status,
    lastUpdate: own?.last_update,
    builderStatus: builder?.status,
    tokens: Number((await s.alice.call('GET', `/balance-allowance?asset_type=CONDITIONAL&token_id=${s.yes}`)).body.balance),
    positions: (await get(s, `/positions?user=${s.alice.address}&sizeThreshold=0`)).map((p: any) => [p.asset, p.size]),
    dataTrades: (await get(s, `/trades?user=${s.alice.address}`)).length,
  };
}

test('MATCHED, MINED, CONFIRMED: every read follows the trade, tokens spendable from MINED on', async () => {
  const s = await session({ minedDelayMs: 4_000, confirmedDelayMs: 6_000 });
  const [aliceSock, bobSock] = [await userSocket(s, s.alice), await userSocket(s, s.bob)];
  try {
    const ask = await s.bob.place({ tokenId: s.yes, side: 'SELL', makerAmount: units(10), takerAmount: units(4) });
    assert.equal(ask.body.status, 'live');
    const bid = await s.alice.place({ tokenId: s.yes, side: 'BUY', makerAmount: units(4), takerAmount: units(10), builder: BUILDER });
    assert.equal(bid.status, 200, JSON.stringify(bid.body));
    assert.deepEqual([bid.body.status, bid.body.makingAmount, bid.body.takingAmount], ['matched', '4', '10']);
    const [tradeId] = bid.body.tradeIDs;
    const matchedAt = s.clock.now();
    const order = (await get(s, `/data/order/${bid.body.orderID}`)).order;
    assert.deepEqual([order.status, order.sizeMatched, order.associateTrades], ['MATCHED', '10', [tradeId]]);

    assert.deepEqual(await views(s, tradeId), {
      status: 'MATCHED',
      lastUpdate: new Date(matchedAt).toISOString(),
      builderStatus: 'MATCHED',
      tokens: 0,
      positions: [],
      dataTrades: 0,
    });
    assert.deepEqual(await tradeMoves(aliceSock, tradeId, 1), [['MATCHED', sec(matchedAt), 'TAKER']]);
    assert.deepEqual(await tradeMoves(bobSock, tradeId, 1), [['MATCHED', sec(matchedAt), 'MAKER']]);
    const early = await s.alice.place({ tokenId: s.yes, side: 'SELL', makerAmount: units(10), takerAmount: units(6) });
    assert.deepEqual([early.status, early.body.error], [400, 'not enough balance / allowance']);
    // Its reason says where the tokens are: held by the trade still settling (not just "0 available").
    const why = (await s.alice.call('GET', '/refusals')).body.data[0] as { path: string; reason: string };
    assert.equal(why.path, '/order');
    assert.match(why.reason, /has 0 available \(GET \/balance-allowance\?asset_type=CONDITIONAL\); 10 more of them are held by trades still settling \(MATCHED or RETRYING: spendable once MINED/);

    await pass(s, 4_000);
    assert.deepEqual(await views(s, tradeId), {
      status: 'MINED',
      lastUpdate: new Date(matchedAt + 4_000).toISOString(),
      builderStatus: 'MINED',
      tokens: units(10),
      positions: [[`${CID}:0`, 10]],
      dataTrades: 1,
    });
    const late = await s.alice.place({ tokenId: s.yes, side: 'SELL', makerAmount: units(10), takerAmount: units(6) });
    assert.deepEqual([late.status, late.body.status], [200, 'live']);

    await pass(s, 6_000);
    const v = await views(s, tradeId);
    assert.deepEqual([v.status, v.lastUpdate, v.builderStatus, v.dataTrades], ['CONFIRMED', new Date(matchedAt + 10_000).toISOString(), 'CONFIRMED', 1]);
    for (const [sock, side] of [[aliceSock, 'TAKER'], [bobSock, 'MAKER']] as const) {
      assert.deepEqual(await tradeMoves(sock, tradeId, 3), [
        ['MATCHED', sec(matchedAt), side],
        ['MINED', sec(matchedAt + 4_000), side],
        ['CONFIRMED', sec(matchedAt + 10_000), side],
      ]);
    }
    const sandbox = (await (await fetch(`${s.base}/admin/sandbox`, { headers: { authorization: 'Bearer t' } })).json()) as any;
    assert.deepEqual(sandbox.trades.settling, { MATCHED: 0, RETRYING: 0, MINED: 0 });
    assert.equal(sandbox.trades.minedDelayMs, 4_000);
    assert.deepEqual(s.app.ctx.engine.checkLedger(), []);
  } finally {
    aliceSock.close();
    bobSock.close();
    await s.close();
  }
});

test('RETRYING then FAILED: both wallets as before, the data API never shows the trade', async () => {
  const s = await session({ minedDelayMs: 1_000, retryingShare: 1, retryDelayMs: 2_000, failedShare: 1 });
  const bobSock = await userSocket(s, s.bob);
  try {
    const usdc = async (c: TestClient) => Number((await c.call('GET', '/balance-allowance?asset_type=COLLATERAL')).body.balance);
    const before = { alice: await usdc(s.alice), bob: await usdc(s.bob) };
    await s.bob.place({ tokenId: s.yes, side: 'SELL', makerAmount: units(10), takerAmount: units(4) });
    const bid = await s.alice.place({ tokenId: s.yes, side: 'BUY', makerAmount: units(4), takerAmount: units(10), builder: BUILDER, orderType: 'FOK' });
    assert.equal(bid.body.status, 'matched');
    const [tradeId] = bid.body.tradeIDs;
    const matchedAt = s.clock.now();
    await pass(s, 1_000);
    assert.equal((await views(s, tradeId)).status, 'RETRYING');
    await pass(s, 2_000);
    assert.deepEqual(await views(s, tradeId), {
      status: 'FAILED',
      lastUpdate: new Date(s.clock.now()).toISOString(),
      builderStatus: 'FAILED',
      tokens: 0,
      positions: [],
      dataTrades: 0,
    });
    // Bob's ask was filled: its tokens came back to him, available; Alice's USDC to her.
    assert.deepEqual({ alice: await usdc(s.alice), bob: await usdc(s.bob) }, before);
    const bobTokens = Number((await s.bob.call('GET', `/balance-allowance?asset_type=CONDITIONAL&token_id=${s.yes}`)).body.balance);
    assert.equal(bobTokens, units(20));
    assert.deepEqual(await tradeMoves(bobSock, tradeId, 3), [
      ['MATCHED', sec(matchedAt), 'MAKER'],
      ['RETRYING', sec(matchedAt + 1_000), 'MAKER'],
      ['FAILED', sec(matchedAt + 3_000), 'MAKER'],
    ]);
    const t = s.app.ctx.engine.usdcTotals();
    assert.equal(t.wallets + t.collateral, t.netDeposits);
    assert.deepEqual(s.app.ctx.engine.checkLedger(), []);
  } finally {
    bobSock.close();
    await s.close();
  }
});
