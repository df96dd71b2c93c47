/**
 * A sequencer and read replicas over a real nats-server (tools/nats-server.ts) on loopback: the
 * replicas end with the sequencer's state (state hash of their tables, journal/recovery.ts) and serve the
 * same reads (books, trades, positions, order reads, catalog) at the same X-Journal-Seq, through a
 * replica's SIGKILL, nats-server's restart, and the sequencer's death; and every kind of write read back from a
 * replica once its X-Journal-Seq reaches the one the write's answer carried (an API key, a catalog edit, a
 * deposit, an order). Skipped, with the reason, where nats-server is missing; failing under CI.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startApp, type App } from '../../src/node/app.ts';
import { DEMO_WALLETS } from '../../src/demo/catalog.ts';
import { openStore } from '../../src/journal/env.ts';
import { USDC_ASSET, balanceKey, metaKeys } from '../../src/journal/keys.ts';
import { verifyStore } from '../../src/journal/recovery.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { createLogger } from '../../src/runtime/log.ts';
import { startNatsServer, type NatsServer } from '../../tools/nats-server.ts';
import { startService, type ServiceProcess } from '../../tools/service-process.ts';
import { StreamClient } from '../../tools/stream-client.ts';
import type { BookEvent, PriceChangeEvent } from '../../src/edge/schemas/stream.ts';
import { connect } from '@nats-io/transport-node';
import { encodeRequests } from '../../src/replication/commands.ts';
import { MASTER_KEY, clusterConfigFile, journalSeqOf, natsSkip, sameReads, until } from '../fixtures/cluster.ts';
import { TestClient, units, type Creds } from '../fixtures/trading-client.ts';

const skip = natsSkip();
const silent = createLogger('silent');
const ADMIN = 'cluster-admin';

function nodeConfig(role: string, nats: NatsServer, over: Record<string, unknown> = {}) {
  return testConfig({
    dataDir: mkdtempSync(join(tmpdir(), `pm-${role}-`)),
    http: { port: 0 },
    adminToken: ADMIN,
    rateLimits: { enabled: false },
    auth: { masterKey: MASTER_KEY, signatureThreads: 1 },
    cluster: { role, natsUrl: nats.url, ...nats.credentials(role), sequencerUrl: 'http://sequencer.test:8080' },
    ...over,
  });
}

/** One sample of a node's /metrics. */
async function metric(base: string, name: string): Promise<number> {
  const line = (await (await fetch(`${base}/metrics`)).text()).split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

/** Every token of the store's markets (both outcomes). */
function tokensOf(app: App): string[] {
  return app.ctx.catalog.read.tradingMarkets().flatMap((m) => m.tokenIds);
}

/** The state hash of a store's tables once its node is stopped, proven against its own journal. */
function storeHash(dataDir: string): { hash: string; seq: number } {
  const store = openStore({ dataDir });
  try {
    const v = verifyStore(store);
    return { hash: v.hash, seq: (store.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0 };
  } finally {
    void store.close();
  }
}

test('replicas follow an hour of live-demo history and its live trading, one joining late from an empty store; state hash and every read equal', { skip }, async () => {
  const nats = await startNatsServer({ secure: true });
  const apps: App[] = [];
  try {
    // An hour of simulated history, then the demo traders keep trading live.
    const seq = await startApp(nodeConfig('sequencer', nats, { demo: 'live', rewards: { sampleSeconds: 1 } }), {
      log: silent,
      demo: { replayMs: 3_600_000, replayStepMs: 300_000, replayOrders: 400, ordersPerSecond: 40, tickMs: 100 },
    });
    apps.push(seq);
    const seqBase = `http://127.0.0.1:${seq.port}`;
    const early = await startApp(nodeConfig('replica', nats), { log: silent });
    apps.push(early);
    // A wallet of our own places and cancels through the sequencer while the demo trades.
    const info = await TestClient.info(seqBase);
    const alice = new TestClient(seqBase, DEMO_WALLETS[0].privateKey, info);
    const creds: Creds = await alice.createKey();
    const token = seq.ctx.catalog.read.tradingMarkets().find((m) => !m.negRisk)!.tokenIds[0];
    // The early replica's market channel follows what it applies.
    const watcher = await StreamClient.connect(`ws://127.0.0.1:${early.port}/ws/market`, { pingMs: 0 });
    watcher.subscribeMarket([token]);
    await watcher.next((e) => (e as { event_type?: string }).event_type === 'book');
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await alice.call('POST', '/order', await alice.signOrder({ tokenId: token, side: 'BUY', makerAmount: units(0.05 * (i + 1)), takerAmount: units(5) }));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      ids.push(r.body.orderID);
    }
    assert.equal((await alice.call('DELETE', '/order', { orderID: ids[0] })).status, 200);
    const change = await watcher.next<PriceChangeEvent>((e) => (e as { event_type?: string }).event_type === 'price_change', 10_000);
    assert.ok(change.price_changes.some((c) => c.asset_id === token), 'a price change of the token arrives on the replica');
    watcher.close();
    // An operator closes a market while the replicas follow: the catalog write and the engine's market row reach them.
    const closed = seq.ctx.catalog.read.tradingMarkets().find((m) => !m.negRisk && m.tokenIds[0] !== token)!;
    const st = await fetch(`${seqBase}/admin/markets/${closed.conditionId}/status`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ closed: true }),
    });
    assert.equal(st.status, 200, await st.text());
    // The late replica starts from an empty store after all that: it catches up from the stream's start.
    const late = await startApp(nodeConfig('replica', nats), { log: silent });
    apps.push(late);
    await seq.demo!.stop();
    assert.ok(await seq.replication.publisher!.settled(10_000), 'the stream confirmed every committed batch');
    const target = seq.ctx.engine.committedSeq;
    assert.ok(target > 500, `history and live trading journaled (${target} events)`);
    for (const r of [early, late]) await until('replica caught up', () => r.replication.follower!.appliedSeq === target);

    assert.equal(early.ctx.engine.market(closed.conditionId)?.acceptingOrders, false);
    const hash = seq.ctx.engine.stateHash();
    assert.equal(early.ctx.engine.stateHash(), hash);
    assert.equal(late.ctx.engine.stateHash(), hash);
    const bases = [seqBase, `http://127.0.0.1:${early.port}`, `http://127.0.0.1:${late.port}`];
    const wallets = new Set<string>([alice.address]);
    for (const t of JSON.parse((await (await fetch(`${seqBase}/trades?limit=200`)).text())) as Array<{ proxyWallet: string }>) wallets.add(t.proxyWallet);
    assert.ok(wallets.size > 2, 'demo traders traded');
    await sameReads(bases, [
      ...tokensOf(seq).map((t) => `/book?token_id=${t}`),
      ...[...wallets].flatMap((w) => [`/trades?user=${w}&limit=500`, `/positions?user=${w}`, `/closed-positions?user=${w}`]),
      '/trades?limit=500',
      '/markets',
      `/markets/${closed.conditionId}`,
      '/events?limit=50',
      `/prices-history?market=${token}&interval=max`,
      '/exchange-info',
    ]);
    await sameReads(bases, [...ids.map((id) => `/data/order/${id}`), '/data/orders', '/data/trades'], { client: alice, creds });
    // A subscriber of the late replica gets the sequencer's /book, hash included.
    const late0 = await StreamClient.connect(`ws://127.0.0.1:${late.port}/ws/market`, { pingMs: 0 });
    late0.subscribeMarket([token]);
    const book = await late0.next<BookEvent>((e) => (e as { event_type?: string }).event_type === 'book');
    late0.close();
    const rest = (await (await fetch(`${seqBase}/book?token_id=${token}`)).json()) as { hash: string; bids: unknown[] };
    assert.deepEqual([book.hash, book.bids], [rest.hash, rest.bids]);
    // The replicas answer writes with the sequencer's address, never forwarding them.
    const refused = await new TestClient(bases[1], DEMO_WALLETS[0].privateKey, info).call('DELETE', '/order', { orderID: ids[1] }, creds);
    assert.deepEqual(refused, { status: 421, body: { error: 'read replica: send this to http://sequencer.test:8080' } });
    assert.equal((await fetch(`${bases[2]}/admin/events`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` }, body: '[]' })).status, 421);
    // Reward accruals are sampled on the sequencer's clock and reach the replicas through its log.
    const rewardRows = (a: App) => JSON.stringify([...a.ctx.store.views.getRange({ start: ['rwd-'], end: ['rwd-\uffff'] })]);
    // Sampled every second of wall time: a quick run may get here before the first accrual of a market.
    await until('the sequencer sampled rewards', () => (JSON.parse(rewardRows(seq)) as unknown[]).length > 1);
    await until('reward accruals replicated', () => rewardRows(late) === rewardRows(seq) && rewardRows(early) === rewardRows(seq));
    const metrics = await (await fetch(`${bases[2]}/metrics`)).text();
    assert.match(metrics, new RegExp(`pm_replica_applied_seq ${target}\\b`));
    assert.match(metrics, /pm_replica_lag_batches 0\b/);
    assert.match(await (await fetch(`${seqBase}/metrics`)).text(), new RegExp(`pm_replication_confirmed_seq ${target}\\b`));
  } finally {
    for (const a of apps.reverse()) await a.stop().catch(() => undefined);
    await nats.stop();
  }
});

test('under a load of signed orders: a replica SIGKILLed and restarted, nats-server killed and restarted, then the sequencer killed; trading never stops, replicas miss nothing and keep serving', { skip }, async () => {
  const nats = await startNatsServer({ secure: true });
  const configFile = clusterConfigFile();
  const node = (role: string, dataDir = mkdtempSync(join(tmpdir(), `pm-${role}-`))) =>
    startService({
      dataDir,
      adminToken: ADMIN,
      env: { ROLE: role, NATS_URL: nats.url, ...nats.env(role), SEQUENCER_URL: 'http://sequencer.test:8080', CONFIG_FILE: configFile, RATE_LIMITS: 'off', DEMO: role === 'sequencer' ? 'static' : '0' },
    });
  const procs: ServiceProcess[] = [];
  const apps: App[] = [];
  const dirs = ['sequencer', 'replica', 'replica'].map((role) => mkdtempSync(join(tmpdir(), `pm-${role}-`)));
  const start = async (role: string, dataDir: string) => {
    const p = await node(role, dataDir);
    procs.push(p);
    return p;
  };
  try {
    // The replica that is never killed runs in this process (one child fewer to start on two cores).
    const inProcess = async (dataDir: string) => {
      const app = await startApp(nodeConfig('replica', nats, { dataDir }), { log: silent });
      apps.push(app);
      return { url: `http://127.0.0.1:${app.port}`, tail: () => '', stop: async (_signal?: string) => (await app.stop(), 0) };
    };
    const [seq, rep1, rep2First] = await Promise.all([start('sequencer', dirs[0]), inProcess(dirs[1]), start('replica', dirs[2])]);
    let rep2 = rep2First;
    const info = await TestClient.info(seq.url);
    const [alice, bob] = [DEMO_WALLETS[1], DEMO_WALLETS[2]].map((w) => new TestClient(seq.url, w.privateKey, info));
    const [aliceCreds, bobCreds] = [await alice.createKey(), await bob.createKey()];
    const markets = (await (await fetch(`${seq.url}/markets`)).json()) as { data: Array<{ condition_id: string; neg_risk: boolean; tokens: Array<{ token_id: string }> }> };
    const market = markets.data.find((m) => !m.neg_risk)!;
    const [t0, t1] = market.tokens.map((t) => t.token_id);

    // The load: Alice buys YES and Bob buys NO at complementary prices (each pair mints), and both leave
    // resting bids; every answer must be 200 however NATS and the replicas fare meanwhile.
    const acked: string[] = [];
    let stop = false;
    let n = 0;
    const worker = async () => {
      while (!stop) {
        const i = n++;
        const [who, token] = i % 2 === 0 ? [alice, t0] : [bob, t1];
        const cents = i % 5 === 4 ? 20 : 50;
        const r = await who.call('POST', '/order', await who.signOrder({ tokenId: token, side: 'BUY', makerAmount: units((cents / 100) * 5), takerAmount: units(5) }));
        assert.equal(r.status, 200, `order ${i}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.success, true, `order ${i}: ${JSON.stringify(r.body)}`);
        acked.push(r.body.orderID);
      }
    };
    const load = Promise.all([worker(), worker(), worker(), worker()]);
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    await sleep(800);
    await rep2.stop('SIGKILL');
    await sleep(300);
    await nats.kill();
    await sleep(500);
    await nats.restart();
    rep2 = await start('replica', dirs[2]);
    await sleep(1000);
    stop = true;
    await load;
    assert.ok(acked.length > 100, `${acked.length} orders acknowledged`);

    const target = await journalSeqOf(seq.url);
    for (const r of [rep1, rep2]) {
      // On failure, say where the replica stands (its metrics) and what it logged.
      await until(`replica ${r.url} at seq ${target}`, async () => (await journalSeqOf(r.url)) >= target, 30_000).catch(async (e: Error) => {
        const m = (await (await fetch(`${r.url}/metrics`)).text()).split('\n').filter((l) => l.startsWith('pm_replica'));
        throw new Error(`${e.message}\n${m.join('\n')}\n${r.tail()}`);
      });
    }
    const reads = [
      `/book?token_id=${t0}`,
      `/book?token_id=${t1}`,
      ...[alice, bob].flatMap((c) => [`/trades?user=${c.address}&limit=500`, `/positions?user=${c.address}`]),
      `/trades?market=${market.condition_id}&limit=500`,
    ];
    await sameReads([seq.url, rep1.url, rep2.url], reads);
    await sameReads([seq.url, rep1.url, rep2.url], ['/data/orders', '/data/trades', ...acked.filter((_, i) => i % 2 === 0).slice(-20).map((id) => `/data/order/${id}`)], { client: alice, creds: aliceCreds });
    // No acknowledged order is missing on a replica.
    const missing = (
      await Promise.all(
        [rep1, rep2].flatMap((rep) =>
          acked.map(async (id, i) => {
            const [c, creds] = i % 2 === 0 ? [alice, aliceCreds] : [bob, bobCreds];
            const path = `/data/order/${id}`;
            const r = await fetch(`${rep.url}${path}`, { headers: c.l2Headers('GET', path, undefined, creds) });
            const body = (await r.json()) as { order?: { id?: string } };
            return r.status === 200 && body.order?.id === id ? [] : [`${id} on ${rep.url}: ${r.status} ${JSON.stringify(body)}`];
          }),
        ),
      )
    ).flat();
    assert.deepEqual(missing, []);

    // The sequencer dies: the replicas keep serving the last committed state, identically.
    await seq.stop('SIGKILL');
    assert.equal((await fetch(`${rep1.url}/`)).status, 200);
    await sameReads([rep1.url, rep2.url], reads);
    assert.ok((await journalSeqOf(rep2.url)) >= target);
    for (const r of [rep1, rep2]) assert.equal(await r.stop('SIGTERM'), 0);
    const hashes = dirs.map(storeHash);
    assert.deepEqual(hashes[1], hashes[0]);
    assert.deepEqual(hashes[2], hashes[0]);
  } finally {
    for (const p of procs) await p.stop('SIGKILL').catch(() => undefined);
    for (const a of apps) await a.stop().catch(() => undefined);
    await nats.stop();
  }
});

test("read-your-writes on a replica for every kind of write: once its X-Journal-Seq reaches the one the write's answer carried, it serves the write", { skip }, async () => {
  const nats = await startNatsServer({ secure: true });
  const apps: App[] = [];
  try {
    const seq = await startApp(nodeConfig('sequencer', nats, { demo: false }), { log: silent });
    apps.push(seq);
    const rep = await startApp(nodeConfig('replica', nats, { demo: false }), { log: silent });
    apps.push(rep);
    const [seqBase, repBase] = [seq, rep].map((a) => `http://127.0.0.1:${a.port}`);
    const admin = async (method: string, path: string, body: unknown) => {
      const r = await fetch(`${seqBase}${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(r.status, 200, `${path}: ${await r.clone().text()}`);
      return { seq: Number(r.headers.get('x-journal-seq')), body: (await r.json()) as unknown };
    };
    const caughtUp = (w: number) => until(`the replica at seq ${w}`, async () => (await journalSeqOf(repBase)) >= w, 15_000);
    const cid = `0x${'7a'.repeat(32)}`;
    const event = (description: string) => [{ title: 'Read your writes', slug: 'read-your-writes', endDate: '2027-06-30T00:00:00Z', markets: [{ question: 'Seen?', conditionId: cid, description, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] }];
    await admin('POST', '/admin/events', event('first'));
    const info = await TestClient.info(seqBase);
    const client = new TestClient(seqBase, DEMO_WALLETS[4].privateKey, info);
    let last = 0;
    const moved = (w: number, what: string) => {
      assert.ok(Number.isSafeInteger(w) && w > last, `${what}: the answer carries X-Journal-Seq past the last write's (${w} after ${last})`);
      last = w;
    };

    // API keys: a key issued on the sequencer signs on the replica as soon as the replica reports its sequence.
    let creds: Creds | undefined;
    for (let nonce = 1; nonce <= 10; nonce++) {
      const r = await fetch(`${seqBase}/auth/api-key`, { method: 'POST', headers: await client.l1Headers(nonce) });
      assert.equal(r.status, 200);
      creds = (await r.json()) as Creds;
      const w = Number(r.headers.get('x-journal-seq'));
      moved(w, `key ${nonce}`);
      await caughtUp(w);
      const path = '/data/orders';
      const read = await fetch(`${repBase}${path}`, { headers: client.l2Headers('GET', path, undefined, creds) });
      assert.equal(read.status, 200, `key ${nonce} on the replica: ${await read.text()}`);
    }

    // Catalog edits: the replica serves the new text.
    for (let i = 1; i <= 5; i++) {
      const { seq: w } = await admin('POST', '/admin/events', event(`edit ${i}`));
      moved(w, `catalog edit ${i}`);
      await caughtUp(w);
      const m = (await (await fetch(`${repBase}/markets/${cid}`)).json()) as { description: string };
      assert.equal(m.description, `edit ${i}`);
    }

    // A deposit: the replica holds the balance.
    const { seq: w } = await admin('POST', `/admin/wallets/${client.address}/deposit`, { amount: '25' });
    moved(w, 'deposit');
    await caughtUp(w);
    assert.equal(rep.ctx.store.balances.get(balanceKey(client.address, USDC_ASSET)), units(25));

    // An order: the replica serves it.
    const token = seq.ctx.catalog.read.marketByCondition(cid)!.clobTokenIds[0]!;
    client.creds = creds;
    const body = await client.signOrder({ tokenId: token, side: 'BUY', makerAmount: units(2), takerAmount: units(5) });
    const text = JSON.stringify(body);
    const placed = await fetch(`${seqBase}/order`, { method: 'POST', headers: client.l2Headers('POST', '/order', text, creds), body: text });
    assert.equal(placed.status, 200, await placed.clone().text());
    const orderId = ((await placed.json()) as { orderID: string }).orderID;
    moved(Number(placed.headers.get('x-journal-seq')), 'order');
    await caughtUp(last);
    const path = `/data/order/${orderId}`;
    const read = await fetch(`${repBase}${path}`, { headers: client.l2Headers('GET', path, undefined, creds) });
    assert.equal(read.status, 200);
    assert.equal(((await read.json()) as { order: { id: string } }).order.id, orderId);
  } finally {
    for (const a of apps.reverse()) await a.stop().catch(() => undefined);
    await nats.stop();
  }
});

test('a gateway: the sequencer answers what it forwards, unchanged; signatures recovered on the gateway; a lagging gateway refuses nothing the sequencer would take; only gateways may send commands; no sequencer, 503', { skip }, async () => {
  const nats = await startNatsServer({ secure: true });
  const apps: App[] = [];
  try {
    const seq = await startApp(nodeConfig('sequencer', nats, { demo: false }), { log: silent });
    apps.push(seq);
    const gw = await startApp(nodeConfig('gateway', nats, { demo: false }), { log: silent });
    apps.push(gw);
    const rep = await startApp(nodeConfig('replica', nats, { demo: false }), { log: silent });
    apps.push(rep);
    const [seqBase, gwBase] = [seq, gw].map((a) => `http://127.0.0.1:${a.port}`);
    const admin = async (path: string, body: unknown) => {
      const r = await fetch(`${seqBase}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(r.status, 200, `${path}: ${await r.clone().text()}`);
      return Number(r.headers.get('x-journal-seq'));
    };
    const caughtUp = (w: number) => until(`the gateway at seq ${w}`, async () => (await journalSeqOf(gwBase)) >= w, 15_000);
    const market = (n: number) => `0x${String(n).padStart(2, '0').repeat(32)}`;
    const event = (cid: string) => [{ title: `Gateway ${cid.slice(2, 6)}`, slug: `gateway-${cid.slice(2, 6)}`, endDate: '2027-06-30T00:00:00Z', markets: [{ question: `Routed ${cid.slice(2, 6)}?`, conditionId: cid, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] }];
    await admin('/admin/events', event(market(11)));
    const info = await TestClient.info(seqBase);
    const viaGw = new TestClient(gwBase, DEMO_WALLETS[3].privateKey, info);
    const direct = new TestClient(seqBase, DEMO_WALLETS[3].privateKey, info);
    await caughtUp(await admin(`/admin/wallets/${viaGw.address}/deposit`, { amount: '100' }));

    // An API key created through the gateway (an L1 route: forwarded as it came) signs on both.
    const creds = await viaGw.createKey(1);
    direct.creds = creds;
    await caughtUp(await journalSeqOf(seqBase));
    const token = seq.ctx.catalog.read.marketByCondition(market(11))!.clobTokenIds[0]!;
    const pool = seq.ctx.auth.pool;
    const before = { inline: pool.inline, orders: pool.orders };

    // The same order twice (two salts), once through each door: the same answer but the id, the sequencer's
    // X-Journal-Seq on both, and the sequencer recovered neither signature of the gateway's.
    const args = { tokenId: token, side: 'BUY' as const, makerAmount: units(2), takerAmount: units(5) };
    const g = await viaGw.place(args);
    assert.equal(g.status, 200, JSON.stringify(g.body));
    assert.deepEqual({ inline: pool.inline, orders: pool.orders }, before, "the gateway's hints spared the sequencer the recovery");
    const d = await direct.place(args);
    assert.equal(d.status, 200, JSON.stringify(d.body));
    assert.deepEqual({ ...g.body, orderID: '' }, { ...d.body, orderID: '' });
    assert.notEqual(g.body.orderID, d.body.orderID);
    for (const id of [g.body.orderID, d.body.orderID]) assert.equal(seq.ctx.engine.getOrder(id)?.wallet, viaGw.address, `order ${id} rests on the sequencer`);
    assert.equal(pool.inline + pool.orders, before.inline + before.orders + 1, 'the direct order was recovered on the sequencer');
    const afterDirect = { inline: pool.inline, orders: pool.orders };
    // A batch through the gateway, one element refused by a rule: element by element what the sequencer says.
    const batch = [await viaGw.signOrder(args), await viaGw.signOrder({ ...args, makerAmount: units(2.005) })];
    const gb = await viaGw.call('POST', '/orders', batch);
    assert.equal(gb.status, 200);
    assert.deepEqual(gb.body.map((r: { success: boolean }) => r.success), [true, false]);
    assert.deepEqual({ inline: pool.inline, orders: pool.orders }, afterDirect, 'nor those of a batch');
    // A refusal's reason is sent by the gateway, which keeps it for the wallet (GET /refusals on the gateway).
    const tick = await fetch(`${gwBase}/order`, { method: 'POST', headers: viaGw.l2Headers('POST', '/order', JSON.stringify(batch[1])), body: JSON.stringify(batch[1]) });
    assert.equal(tick.status, 400);
    assert.match(tick.headers.get('x-refusal-reason') ?? '', /tick/i);
    const listed = await viaGw.call('GET', '/refusals');
    assert.equal(listed.status, 200);
    assert.ok(listed.body.data.some((r: { path: string }) => r.path === "/order"), JSON.stringify(listed.body));
    // Bad credentials of a key the gateway holds are refused there, as the sequencer would.
    const forged = await fetch(`${gwBase}/order`, { method: 'POST', headers: { ...viaGw.l2Headers('POST', '/order', '{}'), SVC_SIGNATURE: 'ab'.repeat(32) }, body: JSON.stringify(batch[0]) });
    assert.equal(forged.status, 401);

    // A replica's user cannot send commands: the server refuses the publish, the sequencer never sees it.
    const commandsBefore = await metric(seqBase, 'pm_commands_requests');
    const intruder = await connect({ servers: nats.url, user: 'replica', pass: nats.users!.replica.password, inboxPrefix: '_INBOX_replica' });
    const violations: string[] = [];
    void (async () => {
      for await (const st of intruder.status()) if (st.type === 'error') violations.push(String((st as { error?: unknown }).error));
    })();
    await assert.rejects(intruder.request('pm_journal.cmd', encodeRequests([{ method: 'DELETE', path: '/cancel-all', query: '', headers: {}, body: undefined, ip: '1.2.3.4', receivedAt: Date.now() }]), { timeout: 500 }));
    await intruder.close();
    assert.ok(violations.some((v) => /Permissions Violation for Publish to "pm_journal.cmd"/.test(v)), violations.join('; '));
    assert.equal(await metric(seqBase, 'pm_commands_requests'), commandsBefore);
    assert.equal(rep.replication.follower!.refusal, undefined, 'the replica follows under its user');

    // The gateway stops following: a key issued now, a market listed now and a key revoked now are all the
    // sequencer's decision. The new key and market pass (forwarded whole), the revoked key is refused.
    await gw.replication.follower!.close();
    const fresh = new TestClient(seqBase, DEMO_WALLETS[2].privateKey, info);
    await admin(`/admin/wallets/${fresh.address}/deposit`, { amount: '100' });
    const freshCreds = await fresh.createKey(1);
    const freshViaGw = new TestClient(gwBase, DEMO_WALLETS[2].privateKey, info);
    freshViaGw.creds = freshCreds;
    const recoveredBefore = pool.inline + pool.orders;
    const r1 = await freshViaGw.place(args);
    assert.equal(r1.status, 200, `a key the gateway has not seen: ${JSON.stringify(r1.body)}`);
    await admin('/admin/events', event(market(12)));
    const newToken = seq.ctx.catalog.read.marketByCondition(market(12))!.clobTokenIds[0]!;
    const r2 = await viaGw.place({ ...args, tokenId: newToken });
    assert.equal(r2.status, 200, `a market the gateway has not seen: ${JSON.stringify(r2.body)}`);
    assert.equal(pool.inline + pool.orders, recoveredBefore + 2, 'what the gateway could not verify, the sequencer recovered');
    const del = await direct.call('DELETE', '/auth/api-key');
    assert.equal(del.status, 200, JSON.stringify(del.body));
    const r3 = await viaGw.place(args);
    assert.equal(r3.status, 401, `a key revoked on the sequencer: ${JSON.stringify(r3.body)}`);

    // No sequencer: 503 with Retry-After, nothing else.
    await seq.stop();
    apps.splice(apps.indexOf(seq), 1);
    const none = await freshViaGw.place(args);
    assert.equal(none.status, 503);
    assert.match(JSON.stringify(none.body), /no sequencer/);
  } finally {
    for (const a of apps.reverse()) await a.stop().catch(() => undefined);
    await nats.stop();
  }
});
