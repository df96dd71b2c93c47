/**
 * Fair shares of the channels' global caps (issue 39, finding 7): no address, and no network (an address's
 * /24), can hold more than its stated share of the sockets and subscriptions, whatever number of sockets
 * it spreads them over; and the market channel's dumps are budgeted per network and, in bytes, in all, so
 * that many addresses each within their own budget cannot send books faster than the service's rate. An
 * address, and a network, follow one asset from a bounded number of sockets (every change of a book is
 * written to each of them). A network's sockets together send a bounded number of bytes a second: past it
 * a message is not read.
 * Client addresses come from X-Forwarded-For (127.0.0.1 is a trusted proxy).
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { App } from '../../../src/node/app.ts';
import { importEvent, metric as readMetric, startStreamApp } from './stream-app.ts';
import { XffClient } from './xff-client.ts';

const LIMITS = {
  maxSockets: 40,
  maxSocketsPerAddress: 3,
  maxSocketsPerNetwork: 5,
  maxSubscriptions: 400,
  maxSubscriptionsPerSocket: 200,
  maxSubscriptionsPerAddress: 6,
  maxSubscriptionsPerNetwork: 10,
  dumpBooksPerAddress: 40,
  dumpBooksPerNetwork: 60,
  dumpBytesPerSecond: 65_536,
  maxAssetSocketsPerAddress: 2,
  maxAssetSocketsPerNetwork: 3,
  maxMessageBytes: 16_384,
  messageBytesPerNetwork: 16_384,
};
const MARKETS = 60;

let app: App;
let dir: string;
let base: string;
let tokens: string[];
const open: XffClient[] = [];

const metric = (series: string): Promise<number> => readMetric(base, series);

async function connect(ip: string): Promise<XffClient> {
  const c = await XffClient.connect(`ws://127.0.0.1:${app.port}/ws/market`, ip);
  open.push(c);
  return c;
}

async function closeAll(): Promise<void> {
  for (const c of open.splice(0)) {
    c.close();
    await c.closed;
  }
  const end = Date.now() + 5000;
  while ((await metric('ws_sockets{channel="market"}')) > 0) {
    if (Date.now() > end) throw new Error('sockets still open');
    await new Promise((r) => setTimeout(r, 10));
  }
}

before(async () => {
  ({ app, dir, base } = await startStreamApp('pm-ws-fair-', LIMITS));
  const cids = Array.from({ length: MARKETS }, (_, i) => `0x${(i + 1).toString(16).padStart(64, 'f')}`);
  await importEvent(base, 'fair', cids.map((conditionId, i) => ({ question: `Fair ${i}?`, conditionId, orderPriceMinTickSize: 0.01, orderMinSize: '1' })));
  tokens = cids.flatMap((c) => app.ctx.catalog.read.marketByCondition(c)!.clobTokenIds);
});

after(async () => {
  for (const c of open) c.close();
  await app.stop();
  rmSync(dir, { recursive: true, force: true });
});

test(`an address holds at most ${LIMITS.maxSubscriptionsPerAddress} subscriptions over all of its sockets, a network at most ${LIMITS.maxSubscriptionsPerNetwork}; another network still subscribes`, async () => {
  const a = [await connect('10.20.1.1'), await connect('10.20.1.1')];
  a[0]!.send({ type: 'market', assets_ids: tokens.slice(0, 4), initial_dump: false });
  await a[0]!.pong();
  // Two more fit the address's six; three more do not, on any of its sockets.
  a[1]!.send({ type: 'market', assets_ids: tokens.slice(4, 7), initial_dump: false });
  await a[1]!.pong();
  assert.deepEqual(a[1]!.errors(), [`too many subscriptions: an address holds at most ${LIMITS.maxSubscriptionsPerAddress} over all of its connections`]);
  a[1]!.send({ type: 'market', assets_ids: tokens.slice(4, 6), initial_dump: false });
  await a[1]!.pong();
  assert.equal(a[1]!.errors().length, 1);
  // Another address of the same /24: the network's ten are six taken, four left.
  const b = await connect('10.20.1.2');
  b.send({ type: 'market', assets_ids: tokens.slice(10, 15), initial_dump: false });
  await b.pong();
  assert.deepEqual(b.errors(), ['too many subscriptions: a network (10.20.1.0/24) holds at most 10 over all of its connections']);
  b.send({ type: 'market', assets_ids: tokens.slice(10, 14), initial_dump: false });
  await b.pong();
  assert.equal(b.errors().length, 1);
  // Another network is untouched by either share.
  const c = await connect('10.20.2.1');
  c.send({ type: 'market', assets_ids: tokens.slice(20, 26), initial_dump: false });
  await c.pong();
  assert.deepEqual(c.errors(), []);
  assert.equal(await metric('ws_refusals_total{channel="market",reason="address_subscriptions"}'), 1);
  assert.equal(await metric('ws_refusals_total{channel="market",reason="network_subscriptions"}'), 1);
  assert.equal(await metric('ws_subscriptions{channel="market"}'), 16);
  // Closing gives the shares back.
  await closeAll();
  const again = await connect('10.20.1.3');
  again.send({ type: 'market', assets_ids: tokens.slice(0, 6), initial_dump: false });
  await again.pong();
  assert.deepEqual(again.errors(), []);
  await closeAll();
});

test(`an address follows an asset from at most ${LIMITS.maxAssetSocketsPerAddress} sockets, a network from at most ${LIMITS.maxAssetSocketsPerNetwork}; leaving frees the place`, async () => {
  const [x, y, z] = [tokens[30]!, tokens[31]!, tokens[32]!];
  const subscribe = async (c: XffClient, ids: string[]) => {
    c.send({ operation: 'subscribe', assets_ids: ids, initial_dump: false });
    await c.pong();
  };
  const a = [await connect('10.60.1.1'), await connect('10.60.1.1'), await connect('10.60.1.1')];
  await subscribe(a[0]!, [x, y]);
  await subscribe(a[1]!, [x]);
  // A third socket of the address on x: refused whole, z with it.
  await subscribe(a[2]!, [z, x]);
  assert.deepEqual(a[2]!.errors(), [`too many subscriptions: an address may follow an asset from at most ${LIMITS.maxAssetSocketsPerAddress} connections, and follows ${x} from that many`]);
  assert.equal(await metric('ws_subscriptions{channel="market"}'), 3);
  // More than the address may still hold, x first among them: the count's cap is the refusal, as it is checked
  // before the followers (a refusal at the first full asset applies only where no count could refuse).
  await subscribe(a[2]!, [x, ...tokens.slice(33, 36)]);
  assert.equal(a[2]!.errors()[1], `too many subscriptions: an address holds at most ${LIMITS.maxSubscriptionsPerAddress} over all of its connections`);
  await subscribe(a[2]!, [z]);
  assert.equal(a[2]!.errors().length, 2);
  // Another address of the same /24: its first socket on x is the network's third, its second would be a fourth.
  const b = [await connect('10.60.1.2'), await connect('10.60.1.2')];
  await subscribe(b[0]!, [x]);
  await subscribe(b[1]!, [x]);
  assert.deepEqual(b[0]!.errors(), []);
  assert.deepEqual(b[1]!.errors(), [`too many subscriptions: a network (10.60.1.0/24) may follow an asset from at most ${LIMITS.maxAssetSocketsPerNetwork} connections, and follows ${x} from that many`]);
  // Another network is untouched.
  const c = await connect('10.60.2.1');
  await subscribe(c, [x]);
  assert.deepEqual(c.errors(), []);
  // An unsubscribe gives the place back, to the address and to its network.
  a[1]!.send({ operation: 'unsubscribe', assets_ids: [x] });
  await subscribe(a[2]!, [x]);
  assert.equal(a[2]!.errors().length, 2);
  assert.equal(await metric('ws_refusals_total{channel="market",reason="address_asset_sockets"}'), 1);
  assert.equal(await metric('ws_refusals_total{channel="market",reason="network_asset_sockets"}'), 1);
  // A close does as well.
  await closeAll();
  const again = [await connect('10.60.1.3'), await connect('10.60.1.3')];
  await subscribe(again[0]!, [x]);
  await subscribe(again[1]!, [x]);
  assert.deepEqual([...again[0]!.errors(), ...again[1]!.errors()], []);
  await closeAll();
});

test(`a network holds at most ${LIMITS.maxSocketsPerNetwork} sockets whatever its addresses; another network still connects`, async () => {
  await connect('10.30.1.1');
  await connect('10.30.1.1');
  await connect('10.30.1.1');
  await assert.rejects(connect('10.30.1.1'), /upgrade refused: 429 \{"error":"too many connections from this address"\}/);
  await connect('10.30.1.2');
  await connect('10.30.1.3');
  await assert.rejects(connect('10.30.1.4'), /upgrade refused: 429 \{"error":"too many connections from this network \(10\.30\.1\.0\/24\)"\}/);
  await connect('10.30.2.1');
  assert.equal(await metric('ws_refusals_total{channel="market",reason="network_sockets"}'), 1);
  await closeAll();
});

test(`a network's addresses together dump at most ${LIMITS.dumpBooksPerNetwork} books per window`, async () => {
  const ids = tokens.slice(0, LIMITS.maxSubscriptionsPerAddress);
  const a = await connect('10.50.1.1');
  const b = await connect('10.50.1.2');
  for (let i = 0; i < 6; i++) a.send({ type: 'market', assets_ids: ids });
  await a.pong();
  assert.deepEqual(a.errors(), [], '36 books, within the address\'s 40');
  // Four assets (the network's subscriptions hold ten): six dumps of four make the network's 60; the seventh would pass it.
  for (let i = 0; i < 7; i++) b.send({ type: 'market', assets_ids: ids.slice(0, 4) });
  await b.pong();
  assert.equal(b.books(), 24);
  assert.equal(b.errors().length, 1);
  assert.match(b.errors()[0]!, /^dump budget exceeded: at most 60 books per 10 s per network \(10\.50\.1\.0\/24\), this dump is 4; retry in \d+ s$/);
  // Another network dumps as before.
  const c = await connect('10.50.2.1');
  c.send({ type: 'market', assets_ids: ids });
  await c.pong();
  assert.equal(c.books(), 6);
  await closeAll();
});

test(`dumps from many networks, each within its own budget, share ${LIMITS.dumpBytesPerSecond} bytes a second in all`, async () => {
  // One socket per network, each asking again and again for the dump of its six books (within its message
  // rate and its own book budgets): what many addresses at their own budgets would send.
  const ids = tokens.slice(0, LIMITS.maxSubscriptionsPerAddress);
  const t0 = performance.now();
  const sockets = await Promise.all(Array.from({ length: 30 }, (_, n) => connect(`10.40.${n}.1`)));
  for (let round = 0; round < 5; round++) {
    for (const c of sockets) c.send({ operation: 'subscribe', assets_ids: ids, initial_dump: true });
    await Promise.all(sockets.map((c) => c.pong()));
  }
  const seconds = (performance.now() - t0) / 1000;
  const errors = sockets.flatMap((c) => c.errors());
  const books = sockets.flatMap((c) => c.events.filter((e) => e.event_type === 'book'));
  const bytes = books.reduce((n, e) => n + JSON.stringify(e).length, 0);
  assert.ok(errors.length > 0, 'some dumps refused');
  for (const e of errors) assert.match(e, /^dump budget exceeded: the service sends at most 0\.1 MiB of books a second to everyone, this dump is 0\.0 MiB; retry in 1 s$/);
  assert.equal(books.length + errors.length * ids.length, 30 * 5 * ids.length, 'each dump sent whole or refused whole');
  // What was sent is within the bucket (two seconds' worth) and what refilled while the test ran (with room
  // for JSON.stringify writing a book as the service did, give or take).
  assert.ok(bytes <= (2 + seconds) * LIMITS.dumpBytesPerSecond * 1.05, `${bytes} bytes of dumps in ${seconds.toFixed(2)} s`);
  assert.equal(await metric('ws_refusals_total{channel="market",reason="global_dumps"}'), errors.length);
  await closeAll();
});

test(`a network's sockets send at most ${LIMITS.messageBytesPerNetwork} bytes a second together (one second's worth at once): past it a message is not read; PING stays free; another network is read`, async () => {
  // A subscribe message of about 12 KB: one real asset and unknown ids that fill it (read, the unknown ones are
  // named in an error frame, the real one subscribed).
  const fill = (token: string) => ({ type: 'market', initial_dump: false, assets_ids: [token, ...Array.from({ length: 150 }, (_, i) => `${i}`.padStart(78, '9'))] });
  const size = JSON.stringify(fill(tokens[40]!)).length;
  assert.ok(size > 11_000 && size < 16_384, `${size} bytes a message`);
  const subscribed = () => metric('ws_subscriptions{channel="market"}');
  const a = await connect('10.70.1.1');
  const b = await connect('10.70.1.2');
  const one = JSON.stringify(fill(tokens[40]!));
  a.send(one);
  // And what leaves 2 bytes of the 16 KB (not JSON: read, and answered "invalid JSON").
  a.send('x'.repeat(LIMITS.messageBytesPerNetwork - one.length - 2));
  await a.pong();
  assert.equal(await subscribed(), 1, 'a message of 12 KB and one of 4 KB fit the 16 KB of one second');
  assert.deepEqual(a.errors().filter((e) => e.startsWith('too many')), []);
  // Another from a second address of the same /24: not read, nothing subscribed; its PING (4 bytes, more than
  // the 2 left) still answered.
  b.send(fill(tokens[41]!));
  await b.pong();
  assert.equal(b.errors().length, 1);
  assert.match(b.errors()[0]!, /^too many message bytes: a network \(10\.70\.1\.0\/24\) may send at most 16 KiB a second over all of its connections; retry in [12] s$/);
  assert.equal(await subscribed(), 1);
  // Another network is read.
  const c = await connect('10.70.2.1');
  c.send(fill(tokens[43]!));
  await c.pong();
  assert.equal(await subscribed(), 2);
  assert.equal(await metric('ws_refusals_total{channel="market",reason="network_bytes"}'), 1);
  // Once the window has passed, the network is read again.
  await new Promise((r) => setTimeout(r, 1_100));
  b.send(fill(tokens[41]!));
  await b.pong();
  assert.equal(await subscribed(), 3);
  assert.equal(b.errors().filter((e) => e.startsWith('too many message bytes')).length, 1);
  await closeAll();
});

test('an asset named twice in one subscribe message is subscribed, counted and dumped once', async () => {
  const [x, y] = [tokens[50]!, tokens[51]!];
  const before = await metric('ws_subscriptions{channel="market"}');
  const a = await connect('10.80.1.1');
  a.send({ type: 'market', assets_ids: [x, x, y, x], initial_dump: true });
  await a.pong();
  assert.deepEqual(a.errors(), []);
  assert.deepEqual(a.events.filter((e) => e.event_type === 'book').map((e) => e.asset_id), [x, y]);
  assert.equal(await metric('ws_subscriptions{channel="market"}'), before + 2);
  // Its address follows x from this one socket: a second socket may still follow it (the cap is 2).
  const b = await connect('10.80.1.1');
  b.send({ operation: 'subscribe', assets_ids: [x, x], initial_dump: false });
  await b.pong();
  assert.deepEqual(b.errors(), []);
  assert.equal(await metric('ws_subscriptions{channel="market"}'), before + 3);
  await closeAll();
});
