/**
 * The living demo (src/demo/live.ts) through the real app, engine and journal: a fresh store with
 * `demo: "live"` answers with books, a week of price history, trades and positions within the start-up
 * bound and keeps trading while it runs; a restart keeps its history and trades on; the replay is
 * deterministic under its seed; `static` gives the catalog without trading and `off` an empty exchange.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type App } from '../../src/node/app.ts';
import { DEMO_FUNDING_UNITS, DEMO_WALLETS, syntheticCatalog } from '../../src/demo/catalog.ts';
import { DEMO_TRADERS } from '../../src/demo/live.ts';
import { ManualClock } from '../../src/runtime/clock.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';

const DAY = 86_400_000;
/**
 * A sanity bound only: the start-up target (15 s of `npm start` on this machine) is measured by
 * bench/demo/startup.bench.ts, not asserted here, where other test files share the cores.
 */
const START_BOUND_MS = 60_000;

const config = (dataDir: string, demo: 'live' | 'static' | 'off') => testConfig({ dataDir, http: { port: 0 }, demo, rateLimits: { enabled: false }, auth: { signatureThreads: 1 } });
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'pm-demo-'));
  dirs.push(d);
  return d;
};
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function get(app: App, path: string): Promise<any> {
  const r = await fetch(`http://127.0.0.1:${app.port}${path}`);
  assert.equal(r.status, 200, `GET ${path}: ${r.status}`);
  return r.json();
}

/** Every demo market that takes orders. */
const tradedMarkets = (app: App) => app.ctx.catalog.read.tradingMarkets().filter((m) => m.acceptingOrders);

test('a fresh store: books, a week of history, trades and positions within the start-up bound, then live trading', async () => {
  const dataDir = tempDir();
  const t0 = performance.now();
  let app = await startApp(config(dataDir, 'live'), { log: silentLogger });
  const startMs = performance.now() - t0;
  try {
    assert.ok(startMs < START_BOUND_MS, `started in ${Math.round(startMs)} ms`);
    assert.ok(app.demo?.replay, 'the history was replayed');
    const now = Date.now() / 1000;
    const markets = tradedMarkets(app);
    assert.ok(markets.length >= 40, `${markets.length} demo markets`);

    for (const m of markets) {
      for (const tokenId of m.tokenIds) {
        const book = await get(app, `/book?token_id=${tokenId}`);
        assert.ok(book.bids.length > 0 && book.asks.length > 0, `book of ${tokenId} (${m.conditionId}) has both sides`);
      }
      const { history } = await get(app, `/prices-history?market=${m.tokenIds[0]}&interval=1w`);
      const span = (history.at(-1).t - history[0].t) / 86_400;
      assert.ok(span >= 6, `${m.conditionId}: samples span ${span.toFixed(2)} days`);
      assert.ok(history.length >= 20, `${m.conditionId}: ${history.length} points`);
    }

    // Trades are journal data dated over the week: the oldest of a market are about a week old.
    const trades = await get(app, '/trades?limit=100');
    assert.equal(trades.length, 100);
    const ofMarket = await get(app, `/trades?market=${markets[0]!.conditionId}&limit=10000`);
    const times = ofMarket.map((t: { timestamp: number }) => t.timestamp);
    assert.ok(Math.min(...times) < now - 6 * 86_400 && Math.min(...times) > now - 7 * 86_400 - 3_600, 'the first trades date from a week ago');
    assert.ok(Math.max(...times) > now - 86_400, 'and trading went on up to today');

    for (const t of DEMO_TRADERS) {
      const positions = await get(app, `/positions?user=${t.address}&sizeThreshold=0`);
      assert.ok(positions.length > 0, `${t.role} ${t.address} holds positions`);
    }

    // Live: the tape and the books keep changing.
    const snapshot = async () => JSON.stringify([(await get(app, '/trades?limit=1'))[0], ...(await Promise.all(markets.slice(0, 10).map((m) => get(app, `/book?token_id=${m.tokenIds[0]}`)))).map((b) => b.hash)]);
    const first = await snapshot();
    let changed = false;
    for (let i = 0; i < 40 && !changed; i++) {
      await new Promise((r) => setTimeout(r, 250));
      changed = (await snapshot()) !== first;
    }
    assert.ok(changed, 'trades or books changed within 10 s');
    const tradesBefore = app.demo!.desk.stats.trades;
    // A market an admin adds is not a demo market: the demo leaves it alone, after a restart too.
    const added = syntheticCatalog({ events: 1, firstId: 9_000, seed: 4 });
    added[0]!.closed = false;
    added[0]!.markets = added[0]!.markets!.map((m) => ({ ...m, closed: false }));
    assert.ok((await app.ctx.catalog.write.upsertEvents(added)).ok);
    await app.stop();

    // A restart keeps the history, replays nothing, and the traders quote again.
    app = await startApp(config(dataDir, 'live'), { log: silentLogger });
    assert.equal(app.demo?.replay, undefined);
    assert.ok((await get(app, `/trades?market=${markets[0]!.conditionId}&limit=10000`)).length >= ofMarket.length);
    let quoted = false;
    for (let i = 0; i < 40 && !quoted; i++) {
      await new Promise((r) => setTimeout(r, 250));
      const book = await get(app, `/book?token_id=${markets[0]!.tokenIds[0]}`);
      quoted = book.bids.length > 0 && book.asks.length > 0;
    }
    assert.ok(quoted, 'the restarted traders quote again');
    const own = app.ctx.catalog.read.marketByCondition(added[0]!.markets![0]!.conditionId!)!;
    assert.ok(app.ctx.engine.market(own.conditionId), 'the added market trades');
    const ownBook = await get(app, `/book?token_id=${own.clobTokenIds[0]}`);
    assert.deepEqual([ownBook.bids, ownBook.asks], [[], []], 'and the demo does not quote it');
    assert.ok(tradesBefore > 0);
  } finally {
    await app.stop();
  }
});

test('the replay is deterministic under its seed', async () => {
  const base = Date.UTC(2026, 10, 20, 12);
  const demo = { seed: 9, replayMs: DAY, replayStepMs: 3_600_000, replayOrders: 300 };
  const run = async () => {
    const app = await startApp(config(tempDir(), 'live'), { log: silentLogger, clock: new ManualClock(base), demo });
    try {
      const trades: any[] = await get(app, '/trades?limit=10000&takerOnly=false');
      return trades.map((t) => [t.timestamp, t.proxyWallet, t.side, t.asset, t.size, t.price]);
    } finally {
      await app.stop();
    }
  };
  const a = await run();
  assert.ok(a.length > 50, `${a.length} trade rows`);
  for (const [ts] of a) assert.ok(ts >= (base - DAY) / 1000 && ts <= base / 1000, 'dated within the replayed day');
  assert.deepEqual(await run(), a);
});

test('static: the catalog and funded demo wallets, no trading; off: an empty exchange', async () => {
  const app = await startApp(config(tempDir(), 'static'), { log: silentLogger });
  try {
    assert.equal(app.demo, undefined);
    assert.ok((await get(app, '/events?limit=100')).length > 20);
    assert.equal(app.ctx.engine.balances(DEMO_WALLETS[0]!.address).usdc.available, DEMO_FUNDING_UNITS);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.deepEqual(await get(app, '/trades'), []);
    assert.equal(app.ctx.engine.openOrders(DEMO_TRADERS[0]!.address).length, 0);
  } finally {
    await app.stop();
  }
  const off = await startApp(config(tempDir(), 'off'), { log: silentLogger });
  try {
    assert.equal(off.demo, undefined);
    assert.deepEqual(await get(off, '/events'), []);
    assert.deepEqual(await get(off, '/trades'), []);
    assert.equal(off.ctx.engine.balances(DEMO_WALLETS[0]!.address).usdc.available, 0);
  } finally {
    await off.stop();
  }
});

test('with settlement lag the demo keeps trading: traders whose proceeds are pending are refused like any client', async () => {
  const lagging = testConfig({
    dataDir: tempDir(),
    http: { port: 0 },
    demo: 'live',
    rateLimits: { enabled: false },
    auth: { signatureThreads: 1 },
    sandbox: { trades: { minedDelayMs: 1_500, confirmedDelayMs: 1_000, retryingShare: 0.2, retryDelayMs: 1_000, failedShare: 0.3, seed: 4 } },
  });
  const app = await startApp(lagging, { log: silentLogger, demo: { seed: 3, replayMs: DAY, replayStepMs: 3_600_000, replayOrders: 300, ordersPerSecond: 40 } });
  try {
    const desk = app.demo!.desk;
    const replayed = desk.stats.trades;
    assert.ok(replayed > 50, `${replayed} trades replayed`);
    await new Promise((r) => setTimeout(r, 3_000));
    const s = desk.stats;
    assert.ok(s.trades > replayed, 'live rounds keep trading');
    assert.ok((s.errors['not enough balance / allowance'] ?? 0) > 0, `some orders met unsettled proceeds: ${JSON.stringify(s.errors)}`);
    const unexpected = Object.keys(s.errors).filter((e) => e !== 'not enough balance / allowance' && !e.startsWith('no orders found to match with FAK order'));
    assert.deepEqual(unexpected, [], 'no other refusal');
    assert.deepEqual(app.ctx.engine.checkLedger(), []);
    const settled: any[] = await get(app, '/trades?limit=10000&takerOnly=false');
    assert.ok(settled.length > 0, 'settled trades reach the data API');
  } finally {
    await app.stop();
  }
});
