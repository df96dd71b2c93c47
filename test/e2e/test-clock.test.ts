/**
 * The sandbox's test clock over HTTP (edge/sandbox/test-clock.ts): the admin API freezes the exchange's time
 * and advances it, and every time rule follows it, one test per rule:
 *   GET /time and the clock's state; refusals (backwards, bad bodies, no token; off when the setting says so);
 *   GTD expiry (in the shard workers) at its second, judged by the exchange's time at admission too;
 *   the trade lifecycle's delays (MATCHED -> MINED -> CONFIRMED) with the moves' times;
 *   heartbeats: a silent wallet's orders canceled once the clock passes its timeout;
 *   a maintenance window and its post-only period, opened and closed by the clock;
 *   liquidity rewards accrued for the advanced time, dated by the exchange's day;
 *   midpoint samples and the price history stamped in the exchange's time, a minute's turn included;
 *   signed headers fresh by the client's own clock or by GET /time's, refused by neither;
 *   the clock's state kept across a restart.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { OrderStatusEvent } from '../../src/domain/events.ts';
import { readJournal } from '../../src/journal/recovery.ts';
import { ADMIN_TOKEN, startTradingApp, type TradingApp } from '../fixtures/trading-app.ts';
import { units, type TestClient } from '../fixtures/trading-client.ts';

const CID = `0x${'c1'.repeat(32)}`;
const DAILY_RATE = 86.4;
const EVENTS = [
  {
    title: 'Clock',
    slug: 'clock',
    endDate: '2031-01-01T00:00:00Z',
    markets: [{ question: 'Does time fly?', conditionId: CID, orderPriceMinTickSize: 0.01, orderMinSize: '5', rewardsMinSize: 10, rewardsMaxSpread: 5, clobRewards: [{ rewardsDailyRate: DAILY_RATE }] }],
  },
];
const ALICE = `0x${'a1'.repeat(32)}` as const;
const BOB = `0x${'b2'.repeat(32)}` as const;

const apps: TradingApp[] = [];
after(async () => {
  for (const h of apps) await h.app.stop(1000);
});

async function frozenApp(config: Record<string, unknown> = {}, dataDir?: string): Promise<TradingApp & { alice: TestClient; bob: TestClient; yes: string }> {
  const h = await startTradingApp({ events: EVENTS, wallets: [{ key: ALICE, deposit: '1000' }, { key: BOB, deposit: '1000' }], config, dataDir });
  apps.push(h);
  const frozen = await h.admin('PUT', '/admin/clock', { frozen: true });
  assert.equal(frozen.status, 200, JSON.stringify(frozen.body));
  return { ...h, alice: h.clients[0]!, bob: h.clients[1]!, yes: h.tokens(CID)[0] };
}

async function advance(h: TradingApp, body: Record<string, unknown>) {
  const r = await h.admin('POST', '/admin/clock/advance', body);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

const serverTime = async (h: TradingApp) => (await (await fetch(`${h.base}/time`)).json()) as number;
const orderOf = async (h: TradingApp, id: string) => ((await (await fetch(`${h.base}/data/order/${id}`)).json()) as any).order;

test('GET /time follows the clock; an advance moves it, never backwards; bodies are checked; the token is required', async () => {
  const h = await frozenApp();
  const s0 = (await h.admin('GET', '/admin/clock')).body;
  assert.equal(s0.frozen, true);
  assert.equal(await serverTime(h), s0.time);
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal(await serverTime(h), s0.time, 'frozen: a real second later, the same time');

  const a = await advance(h, { seconds: 86_400 });
  assert.equal(a.clock.nowMs, s0.nowMs + 86_400_000);
  assert.deepEqual([a.advanced.from, a.advanced.to], [s0.now, new Date(s0.nowMs + 86_400_000).toISOString()]);
  assert.equal(await serverTime(h), s0.time + 86_400);
  const to = await advance(h, { to: s0.time + 2 * 86_400 });
  assert.equal(to.clock.time, s0.time + 2 * 86_400);
  const iso = await advance(h, { to: new Date((s0.time + 3 * 86_400) * 1000).toISOString() });
  assert.equal(iso.clock.time, s0.time + 3 * 86_400);

  const back = await h.admin('POST', '/admin/clock/advance', { to: s0.time });
  assert.equal(back.status, 400);
  assert.match(back.body.error, /only moves forward/);
  for (const body of [{}, { seconds: 1, to: s0.time + 4 * 86_400 }, { secs: 1 }, { seconds: -1 }, { to: 'tomorrow' }]) {
    const r = await h.admin('POST', '/admin/clock/advance', body);
    assert.equal(r.status, 400, JSON.stringify(body));
  }
  assert.equal(await serverTime(h), s0.time + 3 * 86_400, 'refused bodies moved nothing');

  const running = await h.admin('PUT', '/admin/clock', { frozen: false });
  assert.equal(running.body.frozen, false);
  assert.ok(Math.abs(running.body.offsetMs - (running.body.nowMs - Date.now())) < 1000);
  assert.ok(running.body.nowMs >= (s0.time + 3 * 86_400) * 1000, 'running on from where it stood');

  assert.equal((await fetch(`${h.base}/admin/clock`)).status, 401, 'no token');
  assert.equal((await fetch(`${h.base}/admin/clock`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
});

test('with sandbox.testControls off the clock routes do not exist and the exchange keeps the machine\'s time', async () => {
  const h = await startTradingApp({ events: EVENTS, wallets: [], config: { sandbox: { testControls: 'off' } } });
  apps.push(h);
  assert.equal((await h.admin('GET', '/admin/clock')).status, 404);
  assert.equal((await h.admin('POST', '/admin/clock/advance', { seconds: 60 })).status, 404);
  assert.ok(Math.abs((await serverTime(h)) - Date.now() / 1000) < 2);
  const doc = (await (await fetch(`${h.base}/openapi.json`)).json()) as any;
  assert.equal(doc.paths['/admin/clock'], undefined);
});

test('GTD orders expire in the shards when the clock passes their expiration, journaled at that second', async () => {
  const h = await frozenApp();
  await advance(h, { seconds: 7 * 86_400 });
  const now = await serverTime(h);
  const byOwnClock = await h.alice.place({ tokenId: h.yes, side: 'BUY', makerAmount: units(4), takerAmount: units(10), orderType: 'GTD', expiration: Math.floor(Date.now() / 1000) + 3600 });
  assert.deepEqual([byOwnClock.status, byOwnClock.body.error], [400, 'invalid expiration'], 'an expiration is judged against the exchange\'s time');
  const gtd = await h.alice.place({ tokenId: h.yes, side: 'BUY', makerAmount: units(4), takerAmount: units(10), orderType: 'GTD', expiration: now + 120 });
  assert.equal(gtd.body.status, 'live', JSON.stringify(gtd.body));
  const gtc = await h.alice.place({ tokenId: h.yes, side: 'BUY', makerAmount: units(3), takerAmount: units(10) });
  assert.equal(gtc.body.status, 'live');

  await advance(h, { seconds: 119 });
  assert.equal((await orderOf(h, gtd.body.orderID)).status, 'LIVE');
  await advance(h, { seconds: 1 });
  assert.equal((await orderOf(h, gtd.body.orderID)).status, 'CANCELED');
  assert.equal((await orderOf(h, gtc.body.orderID)).status, 'LIVE');
  const expired = [...readJournal(h.app.ctx.store)].find((e): e is OrderStatusEvent => e.type === 'status' && e.orderId === gtd.body.orderID)!;
  assert.deepEqual([expired.reason, expired.ts], ['EXPIRED', (now + 120) * 1000]);
  const open = (await h.alice.call('GET', '/data/orders')).body.data.map((o: any) => o.id);
  assert.deepEqual(open, [gtc.body.orderID]);
  assert.deepEqual(h.app.ctx.engine.checkLedger(), []);
});

test('the trade lifecycle moves a trade MINED and CONFIRMED as the clock passes its delays', async () => {
  const h = await frozenApp({ sandbox: { trades: { minedDelayMs: 5_000, confirmedDelayMs: 10_000, retryingShare: 0, retryDelayMs: 0, failedShare: 0, seed: 1 } } });
  assert.equal((await h.bob.call('POST', '/split', { conditionId: CID, amount: '20' })).status, 200);
  const ask = await h.bob.place({ tokenId: h.yes, side: 'SELL', makerAmount: units(10), takerAmount: units(4) });
  assert.equal(ask.body.status, 'live');
  const bid = await h.alice.place({ tokenId: h.yes, side: 'BUY', makerAmount: units(4), takerAmount: units(10) });
  assert.equal(bid.body.status, 'matched');
  const matchedAt = (await h.admin('GET', '/admin/clock')).body.nowMs as number;
  const status = async () => {
    const t = (await h.alice.call('GET', '/data/trades')).body.data[0];
    return [t.status, t.last_update];
  };
  assert.deepEqual(await status(), ['MATCHED', new Date(matchedAt).toISOString()]);
  await advance(h, { seconds: 4.999 });
  assert.deepEqual(await status(), ['MATCHED', new Date(matchedAt).toISOString()]);
  const mined = await advance(h, { seconds: 0.001 });
  assert.equal(mined.advanced.timers, 1, 'the lifecycle\'s timer fired once');
  assert.deepEqual(await status(), ['MINED', new Date(matchedAt + 5_000).toISOString()]);
  await advance(h, { seconds: 3600 });
  assert.deepEqual(await status(), ['CONFIRMED', new Date(matchedAt + 15_000).toISOString()], 'a longer advance moves it at its own time');
  assert.deepEqual(h.app.ctx.engine.checkLedger(), []);
});

test('a wallet whose heartbeat falls silent has its orders canceled when the clock passes the timeout', async () => {
  const h = await frozenApp({ heartbeats: { timeoutSeconds: 10 } });
  const id = (await h.alice.call('POST', '/v1/heartbeats', { heartbeat_id: '' })).body.heartbeat_id as string;
  const o = await h.alice.place({ tokenId: h.yes, side: 'BUY', makerAmount: units(4), takerAmount: units(10) });
  await advance(h, { seconds: 9 });
  assert.equal((await orderOf(h, o.body.orderID)).status, 'LIVE');
  assert.deepEqual((await h.alice.call('POST', '/v1/heartbeats', { heartbeat_id: id })).body, { heartbeat_id: id }, 'a heartbeat in time continues it');
  await advance(h, { seconds: 9 });
  assert.equal((await orderOf(h, o.body.orderID)).status, 'LIVE');
  const t0 = (await h.admin('GET', '/admin/clock')).body.nowMs as number;
  await advance(h, { seconds: 60 });
  assert.equal((await orderOf(h, o.body.orderID)).status, 'CANCELED');
  const canceled = [...readJournal(h.app.ctx.store)].find((e): e is OrderStatusEvent => e.type === 'status' && e.orderId === o.body.orderID)!;
  assert.equal(canceled.ts, t0 + 1_000, 'canceled when its timeout fell due (10 s after the last heartbeat), not at the advance\'s end');
  assert.equal((await h.alice.call('POST', '/v1/heartbeats', { heartbeat_id: id })).status, 400, 'the lapsed heartbeat is over');
});

test('a maintenance window and its post-only period open and close with the clock', async () => {
  const h = await frozenApp();
  assert.equal((await h.admin('POST', '/admin/sandbox/maintenance', { durationSeconds: 90, postOnlySeconds: 120 })).status, 200);
  const plain = () => h.alice.place({ tokenId: h.yes, side: 'BUY', makerAmount: units(1), takerAmount: units(10) });
  assert.equal((await plain()).status, 425);
  await advance(h, { seconds: 89 });
  assert.equal((await plain()).status, 425);
  await advance(h, { seconds: 1 });
  const during = await plain();
  assert.deepEqual([during.status, during.body.code, during.body.retry_after_seconds], [503, 'post_only_mode', 120]);
  const postOnly = await h.alice.place({ tokenId: h.yes, side: 'BUY', makerAmount: units(1), takerAmount: units(10), postOnly: true });
  assert.equal(postOnly.status, 200);
  await advance(h, { seconds: 120 });
  assert.equal((await plain()).status, 200);
  assert.equal((await h.admin('GET', '/admin/sandbox')).body.maintenance.phase, 'open');
});

test('liquidity rewards accrue for the time the clock passes, on the exchange\'s day', async () => {
  const h = await frozenApp({ rewards: { sampleSeconds: 60 } });
  // Start at a UTC midnight, so the hour's samples all fall on one day.
  const now = await serverTime(h);
  await advance(h, { to: (Math.floor(now / 86_400) + 1) * 86_400 });
  assert.equal((await h.bob.call('POST', '/split', { conditionId: CID, amount: '100' })).status, 200);
  // Bob alone quotes both sides within the spread: every sample gives him the whole market.
  assert.equal((await h.bob.place({ tokenId: h.yes, side: 'BUY', makerAmount: units(4.9), takerAmount: units(10) })).status, 200);
  assert.equal((await h.bob.place({ tokenId: h.yes, side: 'SELL', makerAmount: units(20), takerAmount: units(10.2) })).status, 200);
  await advance(h, { seconds: 3600 });
  const total = (await h.bob.call('GET', '/rewards/user/total')).body;
  assert.equal(total.length, 1, JSON.stringify(total));
  assert.ok(Math.abs(total[0].earnings - DAILY_RATE / 24) < 1e-9, `an hour of the whole market earns a 24th of the daily rate, got ${total[0].earnings}`);
  assert.equal(total[0].date, new Date((await serverTime(h)) * 1000).toISOString().slice(0, 10), 'dated by the exchange\'s day');
  const day = total[0].date as string;
  await advance(h, { seconds: 86_400 });
  const whole = (await h.bob.call('GET', `/rewards/user/total?date=${day}`)).body;
  assert.ok(Math.abs(whole[0].earnings - DAILY_RATE) < 1e-9, `the whole day earned the whole daily rate, got ${whole[0].earnings}`);
  const today = (await h.bob.call('GET', '/rewards/user/total')).body;
  assert.ok(today[0].date > day && Math.abs(today[0].earnings - DAILY_RATE / 24) < 1e-9, `the next day's first hour, got ${JSON.stringify(today)}`);
});

test('midpoint samples and the price history are stamped in the exchange\'s time, a minute\'s turn included', async () => {
  const h = await frozenApp();
  const now = await serverTime(h);
  // A minute's start, 30 days ahead.
  const t0 = (Math.floor(now / 60) + 30 * 1440) * 60;
  await advance(h, { to: t0 });
  assert.equal((await h.bob.call('POST', '/split', { conditionId: CID, amount: '100' })).status, 200);
  await h.alice.place({ tokenId: h.yes, side: 'BUY', makerAmount: units(4), takerAmount: units(10) });
  await h.bob.place({ tokenId: h.yes, side: 'SELL', makerAmount: units(10), takerAmount: units(6) });
  await h.app.ctx.engine.afterCommit();
  // Mid 0.50, sampled at t0. A second change in the same minute waits for its turn.
  await advance(h, { seconds: 10 });
  await h.bob.place({ tokenId: h.yes, side: 'SELL', makerAmount: units(10), takerAmount: units(5) });
  await advance(h, { seconds: 3 * 60 });
  const history = (await (await fetch(`${h.base}/prices-history?market=${h.yes}&startTs=${t0 - 60}&endTs=${t0 + 600}&fidelity=1`)).json()) as any;
  assert.deepEqual(history.history, [
    { t: t0, p: 0.5 },
    { t: t0 + 60, p: 0.45 },
  ]);
});

test('signed requests are fresh by the client\'s own clock or by the exchange\'s (GET /time), and by neither refused', async () => {
  const h = await frozenApp();
  await advance(h, { seconds: 86_400 });
  const own = await h.alice.call('GET', '/data/orders');
  assert.equal(own.status, 200, 'signed with the machine\'s time');
  const signedAt = async (ts: number) => {
    const creds = h.alice.creds!;
    const key = Buffer.from(creds.secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    const sig = createHmac('sha256', key).update(`${ts}GET/data/orders`).digest('hex');
    const headers = { SVC_ADDRESS: h.alice.address, SVC_API_KEY: creds.apiKey, SVC_PASSPHRASE: creds.passphrase, SVC_TIMESTAMP: String(ts), SVC_SIGNATURE: sig };
    return (await fetch(`${h.base}/data/orders`, { headers })).status;
  };
  assert.equal(await signedAt(await serverTime(h)), 200, 'signed with GET /time (useServerTime)');
  assert.equal(await signedAt((await serverTime(h)) - 12 * 3600), 401, 'half a day from both');
});

test('the clock stands where it stood across a restart', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-clock-restart-'));
  try {
    const h = await frozenApp({}, dataDir);
    const a = await advance(h, { seconds: 5 * 86_400 });
    await h.app.stop(1000);
    apps.splice(apps.indexOf(h), 1);
    const again = await startTradingApp({ events: EVENTS, wallets: [], dataDir });
    apps.push(again);
    const s = (await again.admin('GET', '/admin/clock')).body;
    assert.deepEqual([s.frozen, s.nowMs], [true, a.clock.nowMs]);
    assert.equal(await serverTime(again), a.clock.time);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

void ADMIN_TOKEN;
