/**
 * A sequencer and read replicas over a real nats-server (tools/nats-server.ts) on loopback: the
 * replicas end with the sequencer's state (state hash of their tables, journal/recovery.ts) and serve the
 * same reads (books, trades, positions, order reads, catalog) at the same X-Journal-Seq, through a
 * replica's SIGKILL, nats-server's restart, and the sequencer's death. Skipped, with the reason, where
 * nats-server is missing; failing under CI.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startApp, type App } from '../src/app.ts';
import { DEMO_WALLETS } from '../src/demo/catalog.ts';
import { openStore } from '../src/journal/env.ts';
import { metaKeys } from '../src/journal/keys.ts';
import { verifyStore } from '../src/journal/recovery.ts';
import { testConfig } from '../src/runtime/config.ts';
import { createLogger } from '../src/runtime/log.ts';
import { startNatsServer, type NatsServer } from '../tools/nats-server.ts';
import { startService, type ServiceProcess } from '../tools/service-process.ts';
import { MASTER_KEY, clusterConfigFile, journalSeqOf, natsSkip, sameReads, until } from './fixtures/cluster.ts';
import { TestClient, units, type Creds } from './fixtures/trading-client.ts';

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
    cluster: { role, natsUrl: nats.url, sequencerUrl: 'http://sequencer.test:8080' },
    ...over,
  });
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
  const nats = await startNatsServer();
  const apps: App[] = [];
  try {
    // An hour of simulated history, then the demo traders keep trading live.
    const seq = await startApp(nodeConfig('sequencer', nats, { demo: 'live' }), {
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
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await alice.call('POST', '/order', await alice.signOrder({ tokenId: token, side: 'BUY', makerAmount: units(0.05 * (i + 1)), takerAmount: units(5) }));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      ids.push(r.body.orderID);
    }
    assert.equal((await alice.call('DELETE', '/order', { orderID: ids[0] })).status, 200);
    // The late replica starts from an empty store after all that: it catches up from the stream's start.
    const late = await startApp(nodeConfig('replica', nats), { log: silent });
    apps.push(late);
    await seq.demo!.stop();
    assert.ok(await seq.replication.publisher!.settled(10_000), 'the stream confirmed every committed batch');
    const target = seq.ctx.engine.committedSeq;
    assert.ok(target > 500, `history and live trading journaled (${target} events)`);
    for (const r of [early, late]) await until('replica caught up', () => r.replication.follower!.appliedSeq === target);

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
      '/events?limit=50',
      `/prices-history?market=${token}&interval=max`,
      '/exchange-info',
    ]);
    await sameReads(bases, [...ids.map((id) => `/data/order/${id}`), '/data/orders', '/data/trades'], { client: alice, creds });
    // The replicas answer writes with the sequencer's address, never forwarding them.
    const refused = await new TestClient(bases[1], DEMO_WALLETS[0].privateKey, info).call('DELETE', '/order', { orderID: ids[1] }, creds);
    assert.deepEqual(refused, { status: 421, body: { error: 'read replica: send this to http://sequencer.test:8080' } });
    assert.equal((await fetch(`${bases[2]}/admin/events`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` }, body: '[]' })).status, 421);
    const metrics = await (await fetch(`${bases[2]}/metrics`)).text();
    assert.match(metrics, new RegExp(`pm_replica_applied_seq ${target}\\b`));
    assert.match(metrics, /pm_replica_lag_batches 0\b/);
    assert.match(await (await fetch(`${seqBase}/metrics`)).text(), new RegExp(`pm_replication_confirmed_seq ${target}\\b`));
  } finally {
    for (const a of apps.reverse()) await a.stop().catch(() => undefined);
    await nats.stop();
  }
});
