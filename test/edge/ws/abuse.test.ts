/**
 * What one socket, and one client address, may ask of the channels per unit of time (issue 31, item 1): a
 * message rate per socket (refused with an error frame past it, closed with 4008 when it keeps going), dumps
 * charged per address in books per window (a subscribe past the budget is refused whole), each refusal
 * counted; and under a dump flood of reconnecting sockets, a second socket's PING and an HTTP client's
 * GET /time keep their latency. Client addresses come from X-Forwarded-For (127.0.0.1 is a trusted proxy).
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import type { App } from '../../../src/node/app.ts';
import { T, order, wallet } from '../../fixtures/engine-harness.ts';
import { importEvent, metric as readMetric, startStreamApp } from './stream-app.ts';
import { XffClient } from './xff-client.ts';

const RATE = 10;
const BUDGET = 40;
const CIDS = [`0x${'a1'.repeat(32)}`, `0x${'a2'.repeat(32)}`, `0x${'a3'.repeat(32)}`];

let app: App;
let dir: string;
let base: string;
let tokens: string[];
const open: XffClient[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const metric = (series: string): Promise<number> => readMetric(base, series);

async function clientFrom(ip: string): Promise<XffClient> {
  const c = await XffClient.connect(`ws://127.0.0.1:${app.port}/ws/market`, ip);
  open.push(c);
  return c;
}

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`waited for ${what}`);
    await sleep(5);
  }
}

before(async () => {
  ({ app, dir, base } = await startStreamApp('pm-ws-abuse-', { maxMessagesPerSecond: RATE, dumpBooksPerAddress: BUDGET, dumpWindowSeconds: 10 }));
  await importEvent(base, 'abuse', CIDS.map((conditionId, i) => ({ question: `Flooded ${i}?`, conditionId, orderPriceMinTickSize: 0.01, orderMinSize: '1' })));
  tokens = CIDS.flatMap((c) => app.ctx.catalog.read.marketByCondition(c)!.clobTokenIds);
  // A deep first market: 99 bid levels (its NO token has them as asks), so a dump is kilobytes of books.
  const w = wallet(0xab1);
  await app.ctx.engine.deposit(w, 10_000 * T);
  for (let p = 100; p < 10_000; p += 100) assert.equal((await app.ctx.engine.placeOrder(order({ wallet: w, tokenId: tokens[0], side: 'BUY', price: p, size: T }))).status, 'live');
});

after(async () => {
  for (const c of open) c.close();
  await app.stop();
  rmSync(dir, { recursive: true, force: true });
});

test(`messages past ${RATE} a second are refused with an error frame and not acted on; PING counts; the bucket refills`, async () => {
  const c = await clientFrom('10.1.0.1');
  const refused0 = await metric('ws_refusals_total{channel="market",reason="rate"}');
  const subs0 = await metric('ws_subscriptions{channel="market"}');
  // 24 PINGs and a subscription with a dump, at once: they arrive within a few ms, so the bucket (10)
  // refills by a fraction of a token meanwhile, and the subscription is past the rate.
  for (let i = 0; i < 2 * RATE + 4; i++) c.send('PING');
  c.send({ operation: 'subscribe', assets_ids: [tokens[2]], initial_dump: true });
  await until('an answer to each message', () => c.pongs + c.events.length === 2 * RATE + 5);
  assert.ok(c.pongs >= RATE && c.pongs <= RATE + 2, `${c.pongs} PONGs`);
  assert.deepEqual(new Set(c.errors()), new Set([`too many messages: at most ${RATE} per second`]));
  assert.equal(c.books(), 0);
  assert.equal(await metric('ws_subscriptions{channel="market"}'), subs0);
  assert.equal((await metric('ws_refusals_total{channel="market",reason="rate"}')) - refused0, c.errors().length);
  // A second later the bucket has its tokens again.
  await sleep(1100);
  const at = c.events.length;
  c.send({ operation: 'subscribe', assets_ids: [tokens[2]], initial_dump: true });
  await c.pong();
  assert.equal(c.books(at), 1);
  assert.equal(await metric('ws_subscriptions{channel="market"}'), subs0 + 1);
  c.close();
});

test(`a socket with more than ${2 * RATE} messages refused within 5 s is closed (4008), counted as rate_limited`, async () => {
  const closes0 = await metric('ws_closes_total{channel="market",reason="rate_limited"}');
  const c = await clientFrom('10.1.0.2');
  for (let i = 0; i < 5 * RATE; i++) c.send('PING');
  assert.deepEqual(await c.closed, { code: 4008, reason: `too many messages: more than ${2 * RATE} refused within 5 s` });
  assert.ok(c.pongs >= RATE && c.pongs <= RATE + 2, `${c.pongs} PONGs`);
  // 2N refusals get their frame; the one past them closes the socket; the rest are not read.
  assert.equal(c.errors().length, 2 * RATE);
  await sleep(50);
  assert.equal((await metric('ws_closes_total{channel="market",reason="rate_limited"}')) - closes0, 1);
});

test(`dumps are charged per address, ${BUDGET} books per 10 s: past it a subscription is refused whole; without a dump it is free`, async () => {
  const refused0 = await metric('ws_refusals_total{channel="market",reason="dump_budget"}');
  const [a1, a2, b] = [await clientFrom('10.2.0.1'), await clientFrom('10.2.0.1'), await clientFrom('10.2.0.2')];
  const subs0 = await metric('ws_subscriptions{channel="market"}');
  // Two sockets of one address, 6 books a dump, 36 books in all.
  for (let i = 0; i < 6; i++) {
    const c = i % 2 === 0 ? a1 : a2;
    const at = c.events.length;
    c.send({ operation: 'subscribe', assets_ids: tokens, initial_dump: true });
    await c.pong();
    assert.equal(c.books(at), tokens.length);
  }
  // 6 more would pass the address's 40: refused whole, whichever socket asks.
  const at = a2.events.length;
  a2.send({ operation: 'subscribe', assets_ids: [...tokens].reverse(), initial_dump: true });
  await a2.pong();
  assert.equal(a2.books(at), 0);
  assert.equal(a2.errors(at).length, 1);
  assert.match(a2.errors(at)[0], /^dump budget exceeded: at most 40 books per 10 s per address, this dump is 6; retry in \d+ s$/);
  assert.equal((await metric('ws_refusals_total{channel="market",reason="dump_budget"}')) - refused0, 1);
  const a3 = await clientFrom('10.2.0.1');
  a3.send({ operation: 'subscribe', assets_ids: tokens.slice(0, 5), initial_dump: true });
  await a3.pong();
  assert.equal(a3.books(), 0);
  assert.match(a3.errors()[0], /^dump budget exceeded/);
  assert.equal(await metric('ws_subscriptions{channel="market"}'), subs0 + 12, 'the refused subscription subscribed nothing');
  // Four books still fit; then the budget is spent.
  a3.send({ operation: 'subscribe', assets_ids: tokens.slice(0, 4), initial_dump: true });
  await a3.pong();
  assert.equal(a3.books(), 4);
  assert.equal(await metric('ws_subscriptions{channel="market"}'), subs0 + 16);
  // Without a dump a subscription costs nothing of it, and is made.
  a3.send({ operation: 'subscribe', assets_ids: tokens.slice(4), initial_dump: false });
  await a3.pong();
  assert.equal(await metric('ws_subscriptions{channel="market"}'), subs0 + 18);
  assert.equal(a3.errors().length, 1);
  // Another address has its own budget.
  b.send({ operation: 'subscribe', assets_ids: tokens, initial_dump: true });
  await b.pong();
  assert.equal(b.books(), 6);
  assert.equal((await metric('ws_refusals_total{channel="market",reason="dump_budget"}')) - refused0, 2);
  for (const c of [a1, a2, a3, b]) c.close();
});

test('a dump flood of reconnecting sockets is refused and closed at its bounds while a second socket and an HTTP client keep their latency', { timeout: 60_000 }, async (t) => {
  const victim = await clientFrom('10.3.0.1');
  victim.send({ operation: 'subscribe', assets_ids: tokens, initial_dump: false });
  await victim.pong();
  const timed = async (f: () => Promise<void>) => {
    const t0 = performance.now();
    await f();
    return performance.now() - t0;
  };
  const getTime = async () => {
    const r = await fetch(`${base}/time`);
    await r.text();
    assert.equal(r.status, 200);
  };
  // The victim's p90 PING round trip and GET /time, one of each every 10 ms or so (its rate is 10/s:
  // the pings are spread over the window so they stay within it).
  const measure = async (ms: number) => {
    const pings: number[] = [];
    const gets: number[] = [];
    const end = Date.now() + ms;
    let lastPing = 0;
    while (Date.now() < end) {
      if (Date.now() - lastPing >= 150) {
        lastPing = Date.now();
        pings.push(await timed(() => victim.pong()));
      }
      gets.push(await timed(getTime));
      await sleep(10);
    }
    const p90 = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length * 0.9)];
    return { ping: p90(pings), get: p90(gets) };
  };
  await measure(300);
  const baseline = await measure(2000);

  // 5 slots from one address, each a socket asking for a dump of every token every 5 ms (200 messages a
  // second), reopened as soon as the service closes it. It counts what it gets without parsing books.
  const first = JSON.stringify({ type: 'market', assets_ids: tokens });
  const again = JSON.stringify({ operation: 'subscribe', assets_ids: tokens, initial_dump: true });
  const tally = { sockets: 0, closes: new Map<number, number>(), dumps: 0, bytes: 0, errors: new Map<string, number>() };
  let running = true;
  const slot = async () => {
    while (running) {
      const ws = new WebSocket(`ws://127.0.0.1:${app.port}/ws/market`, { perMessageDeflate: false, headers: { 'x-forwarded-for': '10.6.6.6' } });
      const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
      ws.on('error', () => undefined);
      ws.on('message', (data: Buffer) => {
        tally.bytes += data.length;
        if (data[0] === 0x5b) tally.dumps++;
        else if (data.includes('"event_type":"error"')) {
          const kind = String((JSON.parse(data.toString()) as { error: string }).error).split(':')[0];
          tally.errors.set(kind, (tally.errors.get(kind) ?? 0) + 1);
        }
      });
      const opened = await new Promise<boolean>((r) => {
        ws.once('open', () => r(true));
        ws.once('unexpected-response', () => r(false));
        ws.once('error', () => r(false));
      });
      if (!opened) continue;
      tally.sockets++;
      let k = 0;
      const timer = setInterval(() => {
        if (!running) ws.close();
        else if (ws.readyState === WebSocket.OPEN) ws.send(k++ === 0 ? first : again);
      }, 5);
      const code = await closed;
      clearInterval(timer);
      tally.closes.set(code, (tally.closes.get(code) ?? 0) + 1);
    }
  };
  const slots = Array.from({ length: 5 }, slot);
  await sleep(200);
  const attacked = await measure(2500);
  running = false;
  await Promise.all(slots);

  t.diagnostic(
    `flood: ${tally.sockets} sockets, closes ${JSON.stringify([...tally.closes])}, ${tally.dumps} dumps, ${tally.bytes} bytes, errors ${JSON.stringify([...tally.errors])}; ` +
      `p90 ping ${baseline.ping.toFixed(1)} -> ${attacked.ping.toFixed(1)} ms, GET /time ${baseline.get.toFixed(1)} -> ${attacked.get.toFixed(1)} ms`,
  );
  // The bounds answered: sockets closed for their rate (and reopened), dumps within the address's budget
  // (the sliding window admits at most one sub-window's worth more), both refusals said.
  assert.ok((tally.closes.get(4008) ?? 0) >= 10, `closes ${JSON.stringify([...tally.closes])} of ${tally.sockets} sockets`);
  assert.ok((tally.errors.get('too many messages') ?? 0) > 0 && (tally.errors.get('dump budget exceeded') ?? 0) > 0, JSON.stringify([...tally.errors]));
  assert.ok(tally.dumps * tokens.length <= BUDGET * 1.1, `${tally.dumps} dumps of ${tokens.length} books to the flooding address`);
  assert.ok(tally.bytes < 1024 * 1024, `${tally.bytes} bytes sent to the flooding address`);
  // The others' latency: within 3x of the baseline's p90, or 15 ms of it (a 2-core machine's noise).
  for (const k of ['ping', 'get'] as const) {
    const bound = Math.max(3 * baseline[k], baseline[k] + 15);
    assert.ok(attacked[k] <= bound, `${k} p90 ${attacked[k].toFixed(1)} ms under the flood, ${baseline[k].toFixed(1)} ms before (bound ${bound.toFixed(1)})`);
  }
  victim.close();
});
