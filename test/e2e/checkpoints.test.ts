/**
 * Checkpoints and retention through the whole service (issue 42): a store with an hour of live-demo history
 * and a wallet's own orders is restarted twice side by side, once from the checkpoint its orderly stop wrote
 * and once, on a copy without checkpoints, from the whole journal: the two hold one state hash and answer
 * every read the same (books, trades, positions, closed positions, markets, events, price history, order
 * reads, the wallet's orders and trades). Then the first prunes its journal below the checkpoint (archive
 * policy): every read still answers the same, after a further restart too, and the archive reads back as the
 * journal the other copy still holds.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startApp, type App } from '../../src/node/app.ts';
import { DEMO_WALLETS } from '../../src/demo/catalog.ts';
import { metaKeys } from '../../src/journal/keys.ts';
import { readJournal } from '../../src/journal/recovery.ts';
import { listArchives, readArchive } from '../../src/journal/retention.ts';
import { ManualClock } from '../../src/runtime/clock.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { MASTER_KEY, sameReads } from '../fixtures/cluster.ts';
import { TestClient, units, type Creds } from '../fixtures/trading-client.ts';

const ADMIN = 'ckpt-admin';

function config(dataDir: string, over: Record<string, unknown> = {}) {
  return testConfig({
    dataDir,
    http: { port: 0 },
    adminToken: ADMIN,
    rateLimits: { enabled: false },
    // The restarted copies run on a frozen clock (their /book stamps must agree); the signed reads' timestamps
    // are the client's, so the accepted skew covers however long this test takes on a loaded machine.
    auth: { masterKey: MASTER_KEY, signatureThreads: 1, maxClockSkewSeconds: 3600 },
    history: { journal: { retention: 'keep' } },
    ...over,
  });
}

const base = (app: App) => `http://127.0.0.1:${app.port}`;

test('a restart from a checkpoint answers every read as a restart from the whole journal, before and after the journal is pruned', async (t) => {
  const dirA = mkdtempSync(join(tmpdir(), 'pm-ckpt-a-'));
  const dirB = `${dirA}-full`;
  const apps: App[] = [];
  t.after(async () => {
    for (const a of apps) await a.stop().catch(() => undefined);
    rmSync(dirA, { recursive: true, force: true });
    rmSync(dirB, { recursive: true, force: true });
  });

  // An hour of demo history, then a wallet of our own places and cancels.
  const hist = await startApp(config(dirA, { demo: 'live' }), {
    log: silentLogger,
    demo: { replayMs: 3_600_000, replayStepMs: 300_000, replayOrders: 300, ordersPerSecond: 40, tickMs: 100 },
  });
  apps.push(hist);
  const info = await TestClient.info(base(hist));
  const alice = new TestClient(base(hist), DEMO_WALLETS[0].privateKey, info);
  const creds: Creds = await alice.createKey();
  const token = hist.ctx.catalog.read.tradingMarkets().find((m) => !m.negRisk)!.tokenIds[0];
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await alice.call('POST', '/order', await alice.signOrder({ tokenId: token, side: 'BUY', makerAmount: units(0.05 * (i + 1)), takerAmount: units(5) }));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    ids.push(r.body.orderID);
  }
  assert.equal((await alice.call('DELETE', '/order', { orderID: ids[0] })).status, 200);
  await hist.demo!.stop();
  const hash = hist.ctx.engine.stateHash();
  const lastSeq = hist.ctx.engine.committedSeq;
  assert.ok(lastSeq > 500, `history journaled (${lastSeq} events)`);
  await hist.stop();
  apps.pop();
  const ckpt = hist.checkpointer!.checkpoints.list()[0]!;
  assert.equal(ckpt.seq, lastSeq, 'the orderly stop wrote a checkpoint at the last seq');

  // The same store twice: A keeps its checkpoints, B has none and proves itself from the journal's start.
  cpSync(dirA, dirB, { recursive: true });
  rmSync(join(dirB, 'checkpoints'), { recursive: true });
  const clock = new ManualClock(Date.now());
  const start = (dir: string, over: Record<string, unknown> = {}) => startApp(config(dir, { demo: 'static', ...over }), { log: silentLogger, clock, timers: clock.timers });
  let a = await start(dirA, { history: { journal: { retention: 'archive' } } });
  apps.push(a);
  const b = await start(dirB);
  apps.push(b);
  assert.equal(a.checkpointer!.stats().written, 0, 'A started from its checkpoint: nothing to write');
  assert.equal(b.checkpointer!.stats().written, 1, 'B proved the whole journal, and wrote that as its first checkpoint');
  assert.equal(a.ctx.engine.stateHash(), hash);
  assert.equal(b.ctx.engine.stateHash(), hash);

  const wallets = new Set<string>([alice.address]);
  for (const tr of JSON.parse(await (await fetch(`${base(b)}/trades?limit=200`)).text()) as Array<{ proxyWallet: string }>) wallets.add(tr.proxyWallet);
  assert.ok(wallets.size > 2, 'demo traders traded');
  const closed = a.ctx.catalog.read.tradingMarkets()[1]!.conditionId;
  const paths = [
    ...a.ctx.catalog.read.tradingMarkets().flatMap((m) => m.tokenIds).map((tk) => `/book?token_id=${tk}`),
    ...[...wallets].flatMap((w) => [`/trades?user=${w}&limit=500`, `/positions?user=${w}`, `/closed-positions?user=${w}`]),
    '/trades?limit=500',
    '/markets',
    `/markets/${closed}`,
    '/events?limit=50',
    `/prices-history?market=${token}&interval=max`,
    `/last-trade-price?token_id=${token}`,
    '/exchange-info',
  ];
  const signed = [...ids.map((id) => `/data/order/${id}`), '/data/orders', '/data/trades'];
  const compare = async (x: App) => {
    await sameReads([base(x), base(b)], paths);
    await sameReads([base(x), base(b)], signed, { client: alice, creds });
  };
  await compare(a);

  // Retention: A's journal below its checkpoint leaves (archived); what the API reads stays.
  await a.checkpointer!.retain();
  assert.equal(a.ctx.store.meta.get(metaKeys.journalPrunedTo), lastSeq);
  const kept = [...a.ctx.store.journal.getRange({})].length;
  assert.ok(kept < [...b.ctx.store.journal.getRange({})].length, `only order events left in A's journal (${kept})`);
  await compare(a);

  // The archive is the journal B still holds, event for event.
  const archives = listArchives(join(dirA, 'archive'));
  assert.deepEqual(archives.map((x) => [x.from, x.to]), [[1, lastSeq]]);
  assert.deepEqual(readArchive(archives[0]!.file).events, [...readJournal(b.ctx.store)]);

  // And after a restart of the pruned store.
  await a.stop();
  apps.splice(apps.indexOf(a), 1);
  a = await start(dirA, { history: { journal: { retention: 'archive' } } });
  apps.push(a);
  assert.equal(a.ctx.engine.stateHash(), hash);
  await compare(a);
  assert.ok(existsSync(ckpt.file));
});
