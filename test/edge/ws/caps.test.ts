/**
 * What the channels hold across addresses, and what they subscribe to (issue 31, item 2): ids nobody
 * knows are ignored and named in one error frame on both channels (a condition id is known when the
 * catalog has its market), and the global caps on open sockets (an upgrade past it is answered 503 with a
 * JSON error) and on subscriptions (a subscribe past it is refused whole), each refusal counted; and a
 * dump larger than an address's whole dump budget. Client addresses come from X-Forwarded-For (127.0.0.1
 * is a trusted proxy), one per socket, so the per-address caps are not what refuses.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { App } from '../../../src/node/app.ts';
import { T, order, wallet } from '../../fixtures/engine-harness.ts';
import { importEvent, metric as readMetric, startStreamApp } from './stream-app.ts';
import { XffClient } from './xff-client.ts';

const MAX_SOCKETS = 6;
const MAX_SUBSCRIPTIONS = 12;
const CIDS = [`0x${'b1'.repeat(32)}`, `0x${'b2'.repeat(32)}`, `0x${'b3'.repeat(32)}`];
const madeUp = (n: number) => `0x${n.toString(16).padStart(64, 'e')}`;

let app: App;
let dir: string;
let base: string;
let tokens: string[];
let creds: { apiKey: string; secret: string; passphrase: string };
const trader = wallet(0xca95);
const open: XffClient[] = [];
let nextIp = 1;

const metric = (series: string): Promise<number> => readMetric(base, series);

/** A socket from an address of its own. */
async function connect(channel: 'market' | 'user'): Promise<XffClient> {
  const c = await XffClient.connect(`ws://127.0.0.1:${app.port}/ws/${channel}`, `10.9.0.${nextIp++}`);
  open.push(c);
  return c;
}

async function closeAll(): Promise<void> {
  for (const c of open.splice(0)) {
    c.close();
    await c.closed;
  }
  const end = Date.now() + 5000;
  while ((await metric('ws_sockets{channel="market"}')) + (await metric('ws_sockets{channel="user"}')) > 0) {
    if (Date.now() > end) throw new Error('sockets still open');
    await new Promise((r) => setTimeout(r, 10));
  }
}

before(async () => {
  // Each socket here is an address of its own: 5 books per address is room for what these tests dump.
  ({ app, dir, base } = await startStreamApp('pm-ws-caps-', { maxSockets: MAX_SOCKETS, maxSubscriptions: MAX_SUBSCRIPTIONS, dumpBooksPerAddress: 5 }));
  await importEvent(base, 'caps', CIDS.map((conditionId, i) => ({ question: `Capped ${i}?`, conditionId, orderPriceMinTickSize: 0.01, orderMinSize: '1' })));
  tokens = CIDS.flatMap((c) => app.ctx.catalog.read.marketByCondition(c)!.clobTokenIds);
  creds = await app.ctx.auth.keys.create(trader, '0');
  await app.ctx.engine.deposit(trader, 1000 * T);
});

after(async () => {
  for (const c of open) c.close();
  await app.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('user channel: condition ids the catalog does not know are ignored and named; the known ones are subscribed and delivered', async () => {
  const c = await connect('user');
  c.send({ type: 'user', auth: creds, markets: [CIDS[0], madeUp(1), CIDS[1].toUpperCase().replace('0X', '0x'), madeUp(2)] });
  await c.pong();
  assert.deepEqual(c.errors(), [`unknown markets ignored: ${madeUp(1)},${madeUp(2)}`]);
  assert.equal(await metric('ws_subscriptions{channel="user"}'), 2);
  // Many unknown ids: the first ten are named, the rest counted.
  const at = c.events.length;
  c.send({ operation: 'subscribe', markets: [CIDS[2], ...Array.from({ length: 15 }, (_, i) => madeUp(100 + i))] });
  await c.pong();
  assert.deepEqual(c.errors(at), [`unknown markets ignored: ${Array.from({ length: 10 }, (_, i) => madeUp(100 + i)).join(',')} (and 5 more)`]);
  assert.equal(await metric('ws_subscriptions{channel="user"}'), 3);
  // Only unknown ids: nothing subscribed (not "all markets", which an empty list means).
  const only = await connect('user');
  only.send({ type: 'user', auth: creds, markets: [madeUp(7)] });
  await only.pong();
  assert.deepEqual(only.errors(), [`unknown markets ignored: ${madeUp(7)}`]);
  assert.equal(await metric('ws_subscriptions{channel="user"}'), 3);
  // Delivery on the known market's topic reaches c, not `only`.
  const from = c.events.length;
  await app.ctx.engine.placeOrder(order({ wallet: trader, tokenId: tokens[0], side: 'BUY', price: 4000, size: T }));
  const end = Date.now() + 5000;
  while (!c.events.slice(from).some((e) => e.event_type === 'order')) {
    if (Date.now() > end) throw new Error('no order event');
    await new Promise((r) => setTimeout(r, 5));
  }
  await only.pong();
  assert.equal(only.events.filter((e) => e.event_type === 'order').length, 0);
  await closeAll();
  assert.equal(await metric('ws_subscriptions{channel="user"}'), 0);
});

test('market channel: unknown asset ids are ignored and named the same way', async () => {
  const c = await connect('market');
  c.send({ type: 'market', assets_ids: [tokens[0], '12345', tokens[1], '67890'] });
  await c.pong();
  assert.equal(c.books(), 2);
  assert.deepEqual(c.errors(), ['unknown assets ignored: 12345,67890']);
  assert.equal(await metric('ws_subscriptions{channel="market"}'), 2);
  await closeAll();
});

test('a dump larger than an address\'s whole budget is refused whole, saying it can never pass', async () => {
  const c = await connect('market');
  c.send({ type: 'market', assets_ids: tokens });
  await c.pong();
  assert.equal(c.books(), 0);
  assert.deepEqual(c.errors(), ['dump budget exceeded: this dump is 6 books, an address may receive at most 5 per 10 s']);
  assert.equal(await metric('ws_subscriptions{channel="market"}'), 0);
  await closeAll();
});

test(`past ${MAX_SOCKETS} open sockets in all, both channels, an upgrade is answered 503 with a JSON error; a closed socket frees a place`, async () => {
  const refused0 = await metric('ws_refusals_total{channel="user",reason="global_sockets"}');
  for (let i = 0; i < MAX_SOCKETS / 2; i++) await connect('market');
  for (let i = 0; i < MAX_SOCKETS / 2; i++) await connect('user');
  await assert.rejects(connect('user'), (e: Error) => {
    assert.equal(e.message, `upgrade refused: 503 {"error":"too many connections: the service holds at most ${MAX_SOCKETS}"}`);
    return true;
  });
  await assert.rejects(connect('market'), /upgrade refused: 503/);
  assert.equal((await metric('ws_refusals_total{channel="user",reason="global_sockets"}')) - refused0, 1);
  assert.equal(await metric('ws_refusals_total{channel="market",reason="global_sockets"}'), 1);
  const c = open.shift()!;
  c.close();
  await c.closed;
  await new Promise((r) => setTimeout(r, 50));
  await connect('user');
  await closeAll();
});

test(`past ${MAX_SUBSCRIPTIONS} subscriptions in all, both channels, a subscribe is refused whole; unsubscribing frees them`, async () => {
  const m = await connect('market');
  const u = await connect('user');
  // 6 assets and 3 markets: 9 of 12.
  m.send({ type: 'market', assets_ids: tokens, initial_dump: false });
  u.send({ type: 'user', auth: creds, markets: CIDS });
  await m.pong();
  await u.pong();
  assert.equal((await metric('ws_subscriptions{channel="market"}')) + (await metric('ws_subscriptions{channel="user"}')), 9);
  // A second market socket asking for 4 would make 13: refused whole, nothing subscribed, nothing dumped.
  const m2 = await connect('market');
  m2.send({ type: 'market', assets_ids: tokens.slice(0, 4) });
  await m2.pong();
  assert.deepEqual(m2.errors(), [`too many subscriptions: the service holds at most ${MAX_SUBSCRIPTIONS} in all`]);
  assert.equal(m2.books(), 0);
  assert.equal(await metric('ws_subscriptions{channel="market"}'), 6);
  assert.equal(await metric('ws_refusals_total{channel="market",reason="global_subscriptions"}'), 1);
  // Three fit.
  m2.send({ type: 'market', assets_ids: tokens.slice(0, 3) });
  await m2.pong();
  assert.equal(m2.books(), 3);
  // Full: a user socket asking for all of its markets (one subscription) is refused too.
  const u2 = await connect('user');
  u2.send({ type: 'user', auth: creds, markets: [] });
  await u2.pong();
  assert.deepEqual(u2.errors(), [`too many subscriptions: the service holds at most ${MAX_SUBSCRIPTIONS} in all`]);
  assert.equal(await metric('ws_refusals_total{channel="user",reason="global_subscriptions"}'), 1);
  // u unsubscribes from one market: u2's place.
  u.send({ operation: 'unsubscribe', markets: [CIDS[0]] });
  await u.pong();
  u2.send({ operation: 'subscribe', markets: [] });
  await u2.pong();
  assert.equal(u2.errors().length, 1);
  assert.equal(await metric('ws_subscriptions{channel="user"}'), 3);
  await closeAll();
  assert.equal((await metric('ws_subscriptions{channel="market"}')) + (await metric('ws_subscriptions{channel="user"}')), 0);
  // Nothing held once they closed: the whole allowance is there again.
  const m3 = await connect('market');
  m3.send({ type: 'market', assets_ids: tokens, initial_dump: false });
  await m3.pong();
  assert.equal(m3.errors().length, 0);
  await closeAll();
});
