/**
 * Stream faults (the fault scenario's `streams`) over real sockets on loopback, set through the admin API,
 * with the faults' timers on a ManualClock (the sockets and the engine run in real time):
 *   - off: every socket receives every event and answers PING; the stream shares read 0;
 *   - drop: exactly the sockets the seed draws (an independent FaultInjector with the same scenario is the
 *     oracle: same seed, same sequence of connections, same sockets) close at their drawn time, abruptly
 *     (1006) or with 1001 "going away"; the others keep receiving; a reconnected client resubscribes and
 *     gets a fresh `book`; counted in /metrics and the log;
 *   - stall: the drawn sockets receive nothing (no frames, no PONG) while the connection stays open, the
 *     others are unaffected, then they resume: what was published during the stall is lost, what comes
 *     after arrives; /metrics shows the stalled sockets while it lasts;
 *   - turning the scenario off ends a stall at once, and nothing happens afterwards;
 *   - a scenario file given at start faults sockets from the first one.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { startApp, type App } from '../../src/node/app.ts';
import { FaultInjector } from '../../src/edge/sandbox/faults.ts';
import type { FaultScenario } from '../../src/edge/schemas/sandbox.ts';
import type { PlaceInput } from '../../src/engine/engine.ts';
import { ManualClock } from '../../src/runtime/clock.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { StreamClient, type StreamEvent } from '../../tools/stream-client.ts';
import { T, order, wallet } from '../fixtures/engine-harness.ts';

const CID = `0x${'9d'.repeat(32)}`;

let app: App;
let dir: string;
let base: string;
let wsBase: string;
let clock: ManualClock;
let YES: string;
let alice: string;
let aliceCreds: { apiKey: string; secret: string; passphrase: string };
const open: StreamClient[] = [];
const logLines: Array<Record<string, unknown>> = [];
const log = pino({ level: 'info' }, { write: (s: string) => void logLines.push(JSON.parse(s) as Record<string, unknown>) });

async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(base + path, { method, headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

async function metric(line: RegExp): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = text.split('\n').find((l) => line.test(l));
  return m === undefined ? 0 : Number(m.split(' ').pop());
}

/** A market socket subscribed to YES, once its `book` arrived (the server has it on the topic). */
async function marketSocket(): Promise<StreamClient> {
  const c = await StreamClient.connect(`${wsBase}/ws/market`, { pingMs: 0 });
  open.push(c);
  c.subscribeMarket([YES]);
  await c.next((e) => e.event_type === 'book');
  return c;
}

/** A user socket of alice, once the server answered a PING after its subscription (it is on its topic). */
async function userSocket(): Promise<StreamClient> {
  const c = await StreamClient.connect(`${wsBase}/ws/user`, { pingMs: 0 });
  open.push(c);
  c.subscribeUser(aliceCreds);
  assert.equal(await pong(c, 5000), true);
  return c;
}

/** Whether a PING gets its PONG within `ms`. */
async function pong(c: StreamClient, ms = 300): Promise<boolean> {
  const want = c.pongs + 1;
  c.send('PING');
  const end = Date.now() + ms;
  while (c.pongs < want) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
}

let price = 1000;
/** A resting BUY of alice on YES at a new price: a price_change on YES's topic, an order PLACEMENT on alice's. */
async function rest(): Promise<string> {
  price += 100;
  const o: PlaceInput = order({ wallet: alice, tokenId: YES, side: 'BUY', price, size: 2 * T });
  o.owner = aliceCreds.apiKey;
  const r = (await app.ctx.engine.placeOrder(o)) as { orderId: string };
  return r.orderId;
}

const changeAt = (p: number) => (e: StreamEvent) => e.event_type === 'price_change' && e.price_changes.some((c) => c.asset_id === YES && c.price === (p / 10_000).toFixed(2));
const placement = (id: string) => (e: StreamEvent) => e.event_type === 'order' && e.id === id;

/** The sockets an independent injector with `scenario` drops or stalls, in connection order. */
function oracle(scenario: FaultScenario, channels: Array<'market' | 'user'>) {
  const f = new FaultInjector(silentLogger, new ManualClock(), new Registry());
  f.set(scenario, 'admin');
  return channels.map((ch) => {
    const n = f.forSocket(ch)!;
    return { drop: f.drop(ch, n), stall: f.stall(ch, n, 0) };
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pm-stream-faults-'));
  clock = new ManualClock(Date.now());
  app = await startApp(
    testConfig({ dataDir: dir, http: { port: 0 }, adminToken: 't', demo: 'off', rateLimits: { enabled: false }, auth: { signatureThreads: 1 }, stream: { idleSeconds: 60 } }),
    { log, clock, timers: clock.timers },
  );
  base = `http://127.0.0.1:${app.port}`;
  wsBase = `ws://127.0.0.1:${app.port}`;
  const r = await admin('POST', '/admin/events', [
    { title: 'Faults', slug: 'stream-faults', endDate: '2030-01-01T00:00:00Z', markets: [{ question: 'Stalls?', conditionId: CID, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] },
  ]);
  assert.equal(r.status, 200);
  YES = app.ctx.catalog.read.marketByCondition(CID)!.clobTokenIds[0];
  alice = wallet(0xfa017);
  assert.equal((await app.ctx.engine.deposit(alice, 100_000 * T)).ok, true);
  aliceCreds = await app.ctx.auth.keys.create(alice, '0');
});

after(async () => {
  for (const c of open) c.close();
  await app.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('off: every socket receives every event and answers PING; nothing is injected', async () => {
  const sockets = [await marketSocket(), await marketSocket(), await userSocket()];
  clock.advance(3_600_000);
  const id = await rest();
  for (const c of sockets.slice(0, 2)) await c.next(changeAt(price));
  await sockets[2].next(placement(id));
  for (const c of sockets) assert.equal(await pong(c, 5000), true);
  assert.equal(await metric(/^sandbox_fault_share\{fault="stream_drop"\}/), 0);
  assert.equal(await metric(/^sandbox_fault_share\{fault="stream_stall"\}/), 0);
  assert.equal(await metric(/^ws_stalled_sockets\{channel="market"\}/), 0);
  assert.deepEqual(logLines.filter((l) => l.msg === 'injected fault'), []);
  for (const c of sockets) c.close();
});

test('drop: the sockets the seed draws close at their time (1006), the others keep receiving; a reconnect resubscribes', async () => {
  const scenario: FaultScenario = { seed: 11, streams: { drop: { share: 0.5, channels: ['market'], afterMs: { distribution: 'uniform', minMs: 1000, maxMs: 5000 } } } };
  assert.equal((await admin('PUT', '/admin/sandbox/faults', scenario)).status, 200);
  const kinds: Array<'market' | 'user'> = ['market', 'market', 'user', 'market', 'market', 'market', 'market', 'user', 'market'];
  const sockets: StreamClient[] = [];
  for (const k of kinds) sockets.push(k === 'market' ? await marketSocket() : await userSocket());
  const plan = oracle(scenario, kinds);
  const dropped = plan.map((p) => p.drop !== undefined);
  assert.ok(dropped.some(Boolean) && !dropped.every(Boolean), `the seed drops some market sockets: ${dropped}`);
  assert.ok(kinds.every((k, i) => k === 'market' || !dropped[i]), 'user sockets are not in the scenario');
  assert.equal(await metric(/^sandbox_fault_share\{fault="stream_drop"\}/), 0.5);
  const first = Math.min(...plan.flatMap((p) => (p.drop ? [p.drop.afterMs] : [])));
  clock.advance(first - 1);
  for (const c of sockets) assert.equal(await pong(c, 5000), true, 'nothing closes before its time');
  clock.advance(5000);
  const codes = await Promise.all(sockets.map((c, i) => (dropped[i] ? c.closed.then((x) => x.code) : Promise.resolve(undefined))));
  assert.deepEqual(codes, dropped.map((d) => (d ? 1006 : undefined)));
  const id = await rest();
  for (const [i, c] of sockets.entries()) {
    if (dropped[i]) continue;
    if (kinds[i] === 'market') await c.next(changeAt(price));
    else await c.next(placement(id));
    assert.equal(c.ws.readyState, c.ws.OPEN);
  }
  const n = dropped.filter(Boolean).length;
  assert.equal(await metric(/^ws_closes_total\{channel="market",reason="fault_drop"\}/), n);
  assert.equal(await metric(/^sandbox_faults_injected_total\{fault="stream_drop"\}/), n);
  assert.equal((await admin('GET', '/admin/sandbox')).body.faults.injected.streamDrop, n);
  const lines = logLines.filter((l) => l.msg === 'injected fault' && l.fault === 'stream_drop');
  assert.deepEqual(lines.map((l) => [l.channel, l.socket]), plan.flatMap((p, i) => (p.drop ? [['market', kinds.slice(0, i + 1).filter((k) => k === 'market').length]] : [])));
  // What a bot does: reconnect and subscribe again, and start from a fresh book.
  const again = await marketSocket();
  assert.equal(again.events[0].event_type, 'book');
  // going-away: the same draw, with a close frame.
  assert.equal((await admin('PUT', '/admin/sandbox/faults', { seed: 1, streams: { drop: { share: 1, afterMs: { distribution: 'fixed', ms: 10 }, how: 'going-away' } } })).status, 200);
  clock.advance(10);
  assert.deepEqual(await again.closed, { code: 1001, reason: 'going away' });
  for (const c of sockets) if (c.ws.readyState === c.ws.OPEN) assert.equal((await c.closed).code, 1001, 'open sockets are numbered and drawn when a scenario is set');
  assert.equal((await admin('DELETE', '/admin/sandbox/faults')).status, 200);
});

test('stall: the drawn sockets get nothing, not even PONG, while open; others unaffected; after it, later frames arrive and the stall\'s are lost', async () => {
  const scenario: FaultScenario = { seed: 5, streams: { stall: { share: 0.5, afterMs: { distribution: 'fixed', ms: 100 }, forMs: { distribution: 'fixed', ms: 30_000 } } } };
  const kinds: Array<'market' | 'user'> = ['market', 'market', 'market', 'market', 'market', 'market', 'user', 'user'];
  const sockets: StreamClient[] = [];
  for (const k of kinds) sockets.push(k === 'market' ? await marketSocket() : await userSocket());
  // Set after the sockets opened: they are numbered in the order they opened, as the oracle numbers them.
  assert.equal((await admin('PUT', '/admin/sandbox/faults', scenario)).status, 200);
  const stalled = oracle(scenario, kinds).map((p) => p.stall !== undefined);
  assert.ok(stalled.some(Boolean) && !stalled.every(Boolean), `the seed stalls some sockets: ${stalled}`);
  clock.advance(100);
  const count = (ch: string) => kinds.filter((k, i) => k === ch && stalled[i]).length;
  assert.equal(await metric(/^ws_stalled_sockets\{channel="market"\}/), count('market'));
  assert.equal(await metric(/^ws_stalled_sockets\{channel="user"\}/), count('user'));
  const marks = sockets.map((c) => c.events.length);
  const during = price + 100;
  const lostId = await rest();
  for (const [i, c] of sockets.entries()) {
    if (stalled[i]) continue;
    await c.next(kinds[i] === 'market' ? changeAt(during) : placement(lostId), 5000, marks[i]);
    assert.equal(await pong(c, 5000), true);
  }
  for (const [i, c] of sockets.entries()) {
    if (!stalled[i]) continue;
    assert.equal(await pong(c), false, 'a stalled socket answers no PING');
    assert.equal(c.ws.readyState, c.ws.OPEN, 'and stays open');
    assert.equal(c.events.length, marks[i], 'and receives nothing');
  }
  assert.equal(await metric(/^sandbox_faults_injected_total\{fault="stream_stall"\}/), stalled.filter(Boolean).length);
  clock.advance(30_000);
  assert.equal(await metric(/^ws_stalled_sockets\{channel="market"\}/), 0);
  const afterId = await rest();
  for (const [i, c] of sockets.entries()) {
    await c.next(kinds[i] === 'market' ? changeAt(price) : placement(afterId), 5000, marks[i]);
    assert.equal(await pong(c, 5000), true);
    const lost = c.events.slice(marks[i]).some(kinds[i] === 'market' ? changeAt(during) : placement(lostId));
    assert.equal(lost, !stalled[i], stalled[i] ? 'what was published during the stall is lost' : 'an unstalled socket got everything');
  }
  assert.equal(logLines.filter((l) => l.msg === 'stream stall ended').length, stalled.filter(Boolean).length);
  assert.equal((await admin('DELETE', '/admin/sandbox/faults')).status, 200);
  for (const c of sockets) c.close();
});

test('turning the scenario off ends a stall at once; nothing happens afterwards', async () => {
  const sockets = [await marketSocket(), await userSocket()];
  assert.equal((await admin('PUT', '/admin/sandbox/faults', { streams: { stall: { share: 1, repeat: true, afterMs: { distribution: 'fixed', ms: 50 }, forMs: { distribution: 'fixed', ms: 600_000 } } } })).status, 200);
  clock.advance(50);
  for (const c of sockets) assert.equal(await pong(c), false);
  assert.equal(await metric(/^ws_stalled_sockets\{channel="user"\}/), 1);
  const st = (await admin('DELETE', '/admin/sandbox/faults')).body;
  assert.equal(st.scenario, null);
  for (const c of sockets) assert.equal(await pong(c, 5000), true, 'resumed when the scenario is turned off');
  assert.equal(await metric(/^ws_stalled_sockets\{channel="user"\}/), 0);
  assert.equal(await metric(/^sandbox_fault_share\{fault="stream_stall"\}/), 0);
  clock.advance(3_600_000);
  const id = await rest();
  await sockets[0].next(changeAt(price));
  await sockets[1].next(placement(id));
  for (const c of sockets) assert.equal(await pong(c, 5000), true);
  for (const c of sockets) c.close();
});

test('a scenario file given at start faults sockets from the first one', async () => {
  const other = mkdtempSync(join(tmpdir(), 'pm-stream-faults-file-'));
  const file = join(other, 'faults.json');
  writeFileSync(file, JSON.stringify({ streams: { drop: { share: 1, channels: ['market'], afterMs: { distribution: 'fixed', ms: 250 } } } }));
  const c2 = new ManualClock(Date.now());
  const app2 = await startApp(testConfig({ dataDir: join(other, 'store'), http: { port: 0 }, demo: 'off', rateLimits: { enabled: false }, sandbox: { faultsFile: file } }), { log: silentLogger, clock: c2, timers: c2.timers });
  try {
    const m = await StreamClient.connect(`ws://127.0.0.1:${app2.port}/ws/market`, { pingMs: 0 });
    const u = await StreamClient.connect(`ws://127.0.0.1:${app2.port}/ws/user`, { pingMs: 0 });
    open.push(m, u);
    assert.equal(await pong(m, 5000), true);
    c2.advance(249);
    assert.equal(await pong(m, 5000), true);
    c2.advance(1);
    assert.equal((await m.closed).code, 1006);
    assert.equal(u.ws.readyState, u.ws.OPEN, 'the user channel is not in the scenario');
    assert.deepEqual(app2.ctx.sandbox.faults.state().sockets, { market: 1, user: 1 });
  } finally {
    await app2.stop();
    rmSync(other, { recursive: true, force: true });
  }
});
