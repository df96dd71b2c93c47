/**
 * /metrics says where a placement request's time went: its order checks (signature recovery) and its time
 * in the engine (the commit included) per request, each journal transaction's commit, and the main
 * thread's GC pauses at a resolution fine enough for a 10 ms budget.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp } from '../../src/node/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { histogramOf } from '../../tools/metrics-text.ts';
import { TestClient, units } from '../fixtures/trading-client.ts';

const CID = `0x${'c3'.repeat(32)}`;

test('stage histograms: checks per placement request, engine per request that reached it, one commit per journal batch', async () => {
  const app = await startApp(
    testConfig({ dataDir: mkdtempSync(join(tmpdir(), 'pm-stages-')), http: { port: 0 }, adminToken: 't', demo: false, rateLimits: { enabled: false }, auth: { signatureThreads: 1 } }),
    { log: silentLogger },
  );
  const base = `http://127.0.0.1:${app.port}`;
  const admin = (path: string, body: unknown) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: JSON.stringify(body) });
  try {
    const imported = await admin('/admin/events', [
      { title: 'Stages', slug: 'stages', endDate: '2027-06-30T00:00:00Z', markets: [{ question: 'Stages?', conditionId: CID, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] },
    ]);
    assert.equal(imported.status, 200);
    const [YES] = app.ctx.catalog.read.marketByCondition(CID)!.clobTokenIds;
    const alice = new TestClient(base, `0x${'a7'.repeat(32)}`, await TestClient.info(base));
    assert.equal((await admin(`/admin/wallets/${alice.address}/deposit`, { amount: '100' })).status, 200);
    await alice.createKey();
    const scrape = async () => (await fetch(`${base}/metrics`)).text();
    const before = await scrape();
    assert.equal(histogramOf(before, 'order_stage_duration_seconds', { stage: 'checks' })?.count ?? 0, 0);

    const good = () => alice.signOrder({ tokenId: YES, side: 'BUY', makerAmount: units(0.2), takerAmount: units(1) });
    const tampered = async () => {
      const s = await good();
      (s.order as Record<string, unknown>).takerAmount = String(units(2));
      return s;
    };
    assert.equal((await alice.call('POST', '/order', await good())).body.success, true);
    assert.equal((await alice.call('POST', '/order', await tampered())).status, 400);
    const batch = await alice.call('POST', '/orders', [await good(), await tampered()]);
    assert.deepEqual(batch.body.map((r: { success: boolean }) => r.success), [true, false]);
    const failed = await alice.call('POST', '/orders', [await tampered(), await tampered()]);
    assert.deepEqual(failed.body.map((r: { success: boolean }) => r.success), [false, false]);
    assert.deepEqual(await app.ctx.engine.afterCommit(), { ok: true, code: 0 });

    // Short-lived garbage past the young generation's size: at least one scavenge is on record.
    let junk: number[][] = [];
    for (let i = 0; i < 400_000; i++) junk = i % 1000 === 0 ? [] : (junk.push([i]), junk);
    const text = await scrape();
    const checks = histogramOf(text, 'order_stage_duration_seconds', { stage: 'checks' })!;
    const engine = histogramOf(text, 'order_stage_duration_seconds', { stage: 'engine' })!;
    assert.equal(checks.count, 4, 'every placement request is checked');
    assert.equal(engine.count, 2, 'requests whose orders all failed their checks never reached the engine');
    assert.ok(checks.sum > 0 && engine.sum > 0);
    assert.ok(checks.buckets.some((b) => b.le === 0.002) && checks.buckets.length >= 12, 'buckets fine enough for a 10 ms budget');
    const commits = histogramOf(text, 'journal_commit_duration_seconds')!;
    assert.equal(commits.count, app.ctx.engine.stats().batches, 'one observation per journal batch committed');
    assert.ok(commits.count >= 3 && commits.sum > 0);
    const gc = histogramOf(text, 'nodejs_gc_duration_seconds', { kind: 'minor' });
    assert.ok(gc !== undefined && gc.buckets.some((b) => b.le === 0.002), 'GC pauses at millisecond resolution');
  } finally {
    await app.stop();
  }
});
