/**
 * tools/simulate.ts against an instance started here (admin token set, demo off): a few seconds of makers
 * and takers, then its summary is held against what the service itself reports, read here independently
 * of the tool's own checks: the trades the data API lists for its wallets, their balances from the admin
 * API, and USDC conserved.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp } from '../../src/node/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { formatSummary, runSimulation } from '../../tools/simulate.ts';

const ADMIN = 'simulate-test-token';
const units = (text: string) => Math.round(Number(text) * 1_000_000);

test('simulate trades for a few seconds and its summary agrees with the service', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-simulate-'));
  const app = await startApp(
    testConfig({ dataDir, http: { port: 0 }, adminToken: ADMIN, demo: 'off', auth: { signatureThreads: 1 } }),
    { log: silentLogger },
  );
  const base = `http://127.0.0.1:${app.port}`;
  try {
    const lines: string[] = [];
    const r = await runSimulation({ url: base, adminToken: ADMIN, makers: 2, takers: 3, markets: 3, rate: 40, duration: 4, seed: 12, progress: false, log: (l) => lines.push(l) });
    assert.ok(r.checks.ok, r.checks.problems.join('\n'));
    assert.match(formatSummary(r), /fills, balances and USDC agree with the service/);
    const s = r.stats;
    assert.ok(s.orders >= 100 && s.orders <= 4 * 40 + 60, `${s.orders} orders at 40/s for 4 s (+ the opening quotes)`);
    assert.ok(s.accepted > s.orders * 0.7, `${s.accepted} of ${s.orders} accepted`);
    assert.ok(s.trades > 20, `${s.trades} trades`);
    assert.ok(s.meanSpreadPips > 0 && s.meanSpreadPips < 1_000, `spread ${s.meanSpreadPips}`);

    // Fills: the trades the data API lists for the run's wallets (either side) are the run's count.
    const listed = new Set<string>();
    for (const w of r.wallets) {
      const rows = (await (await fetch(`${base}/trades?user=${w}&takerOnly=false&limit=10000`)).json()) as { transactionHash: string }[];
      for (const t of rows) listed.add(t.transactionHash);
    }
    assert.equal(listed.size, s.trades, 'one transaction hash per fill');
    assert.equal(r.tradeIds.length, s.trades);
    assert.deepEqual(r.serviceTradeIds, r.tradeIds);

    // Balances: the admin API's available + reserved equal the run's own account of each wallet.
    let usdc = 0;
    const outcome0 = new Set(r.markets.map((m) => m.tokenIds[0]));
    const outcome1 = new Set(r.markets.map((m) => m.tokenIds[1]));
    let sets = 0;
    let other = 0;
    for (const h of r.holdings) {
      const b = (await (await fetch(`${base}/admin/wallets/${h.address}`, { headers: { Authorization: `Bearer ${ADMIN}` } })).json()) as {
        usdc: { available: string; reserved: string };
        tokens: { tokenId: string; available: string; reserved: string }[];
      };
      const held = units(b.usdc.available) + units(b.usdc.reserved);
      assert.equal(held, h.usdc, `${h.address} USDC`);
      assert.equal(units(b.usdc.reserved), 0, 'the run canceled its orders at the end');
      usdc += held;
      const tokens: Record<string, number> = {};
      for (const t of b.tokens) {
        const v = units(t.available) + units(t.reserved);
        if (v !== 0) tokens[t.tokenId] = v;
        if (outcome0.has(t.tokenId)) sets += v;
        if (outcome1.has(t.tokenId)) other += v;
      }
      assert.deepEqual(tokens, h.tokens, `${h.address} tokens`);
    }
    // USDC conserved: what the wallets hold plus one per complete set is what was deposited (no fees).
    assert.equal(sets, other, 'outcome tokens come in pairs');
    assert.equal(usdc + sets, r.startUsdc + s.depositedUnits);
    assert.equal(r.startUsdc, 0, 'fresh wallets');
    assert.ok(app.ctx.engine.checkLedger().length === 0, app.ctx.engine.checkLedger().join('\n'));
  } finally {
    await app.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
