/**
 * roles.ts's SampleLog: a sequencer's sampler writes reach the replication log only in the view-writes flush
 * that issues the samples themselves (one transaction), never when the sample is taken. And the engine it
 * opens for the service: its shards publish no book snapshot unasked (the service reads the committed books),
 * and the projections' deferred view writes ride its next journal commit. A store lacking history (a floor)
 * is refused by the roles whose answers must hold all of it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startApp } from '../../src/node/app.ts';
import type { ReplicationLog } from '../../src/journal/replication-log.ts';
import { HistoryFloorError } from '../../src/journal/checkpoints/state-snapshot.ts';
import { openStore } from '../../src/journal/env.ts';
import { metaKeys } from '../../src/journal/keys.ts';
import { ViewWrites } from '../../src/projections/projector.ts';
import { POSITIONS_PROJECTION } from '../../src/projections/wallets.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { SampleLog } from '../../src/node/roles.ts';
import { T, market, order, wallet } from '../fixtures/engine-harness.ts';

test('sampler records are logged in the flush that issues the samples, in the order taken, once', () => {
  const logged: unknown[][] = [];
  const log = { logWrite: (db: string, key: unknown, value: unknown) => void logged.push([db, key, value]) } as unknown as ReplicationLog;
  const writes = new ViewWrites(silentLogger, { delayMs: 60_000 });
  const samples = new SampleLog(log, writes);
  samples.hold('m', ['tok', 1], 500_000);
  samples.hold('v', ['acc', 'w'], { n: 1 });
  writes.add();
  assert.deepEqual(logged, [], 'nothing logged before the flush');
  writes.flush();
  assert.deepEqual(logged, [
    ['m', ['tok', 1], 500_000],
    ['v', ['acc', 'w'], { n: 1 }],
  ]);
  writes.add();
  writes.flush();
  assert.equal(logged.length, 2, 'a record is logged once');
  writes.close();
});

test('the engine of the service publishes no book snapshot unasked; the committed books serve the order at once', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-roles-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const app = await startApp(testConfig({ dataDir, http: { port: 0 }, demo: false, auth: { signatureThreads: 1 }, rateLimits: { enabled: false } }), { log: silentLogger });
  try {
    const e = app.ctx.engine;
    const published: string[] = [];
    e.onSnapshots((ids) => published.push(...ids));
    const m = market(0x71);
    e.registerMarket(m);
    const w = wallet(0x7100);
    assert.deepEqual(await e.deposit(w, 100 * T), { ok: true, code: 0 });
    assert.equal((await e.placeOrder(order({ wallet: w, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 2 * T }))).status, 'live');
    const book = app.ctx.livePrices.bookSnapshot(m.tokenIds[0]);
    assert.deepEqual((JSON.parse(book!.json) as { bids: unknown[] }).bids, [{ price: '0.4', size: '2' }], 'what /book serves holds the order');
    // Ten of the engine's default interval, which would have published the new market at once.
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(published, []);
    assert.equal(e.bookSnapshot(m.tokenIds[0]), undefined);
    await e.refreshSnapshot(m.conditionId);
    assert.ok(e.bookSnapshot(m.tokenIds[0]) !== undefined, 'an asked-for publication still comes');
  } finally {
    await app.stop(5000);
  }
});

test("the projections' held view writes ride the engine's next journal commit, with their cursors", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-roles-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  // No timer within the test: only a journal commit can take the held writes along.
  const app = await startApp(testConfig({ dataDir, http: { port: 0 }, demo: false, auth: { signatureThreads: 1 }, rateLimits: { enabled: false } }), {
    log: silentLogger,
    viewWrites: { delayMs: 600_000, rideAfterMs: 0 },
  });
  try {
    const e = app.ctx.engine;
    const saved = () => (app.ctx.store.meta.get(metaKeys.projectionCursor(POSITIONS_PROJECTION)) as number | undefined) ?? 0;
    const m = market(0x72);
    e.registerMarket(m);
    const w = wallet(0x7200);
    assert.deepEqual(await e.deposit(w, 100 * T), { ok: true, code: 0 });
    assert.equal((await e.placeOrder(order({ wallet: w, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 2 * T }))).status, 'live');
    const placed = e.committedSeq;
    await new Promise((r) => setTimeout(r, 50));
    assert.ok(saved() < placed, `the order's view writes are held (cursor saved at ${saved()}, order at ${placed})`);
    assert.deepEqual(await e.deposit(w, T), { ok: true, code: 0 });
    assert.ok(saved() >= placed, `the next commit carried them (cursor saved at ${saved()}, order at ${placed})`);
  } finally {
    await app.stop(5000);
  }
});

test('a store with a history floor (a state snapshot not yet backfilled) refuses to run as a single node: its answers would lack the history', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-roles-floor-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const store = openStore({ dataDir });
  store.meta.putSync(metaKeys.historyFloor, 7);
  await store.close();
  await assert.rejects(
    startApp(testConfig({ dataDir, http: { port: 0 }, demo: false, auth: { signatureThreads: 1 }, rateLimits: { enabled: false } }), { log: silentLogger }),
    (err: unknown) => err instanceof HistoryFloorError && /after journal seq 7 only.*cannot run as the single/.test(err.message),
  );
});
