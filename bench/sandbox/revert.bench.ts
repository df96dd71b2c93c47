/**
 * The sandbox's snapshot and revert (src/node/revert.ts) on the service in process, over HTTP: what a test suite
 * pays to reset the exchange between its tests.
 *
 * Workload (seeded): 8 markets (tick 0.01, min size 5), 20 funded wallets; 10,000 resting GTC orders (BUYs at
 * 0.01-0.30 and SELLs at 0.70-0.99, so none cross) and 1,000 trades (a resting SELL at 0.60 and a crossing
 * BUY), placed through the engine; the test clock frozen first (as a test suite does).
 * Timed, over HTTP from the request to its answer: `POST /admin/snapshots` (the store copy and its
 * checkpoint, on the checkpoint thread), then REVERT_RUNS times: 200 orders placed and 100 canceled (what a
 * test does), then `POST /admin/snapshots/base/revert` (hold, drain, stop, copy, start, rebind). The first
 * revert proves the snapshot's store; the later ones reuse that proof and the threads (src/node/revert.ts).
 * The median is of all of them; the first is also printed.
 * Self-checks after each revert: the state hash equals the snapshot's, every token's GET /book body equals
 * the one read before the snapshot byte for byte, and a socket opened before the revert was closed with
 * 1012. A failed check stops the run.
 * Run alone: npx tsx bench/sandbox/revert.bench.ts (REVERT_RUNS, default 5)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startApp, type App } from '../../src/node/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { StreamClient } from '../../tools/stream-client.ts';
import { lcg, order, wallet } from '../../test/fixtures/engine-harness.ts';
import { admin } from '../lib/admin.ts';

const MARKETS = 8;
const WALLETS = 20;
const RESTING = 10_000;
const TRADES = 1_000;
const TARGET_MS = 200;
const T = 1_000_000;

const cid = (m: number) => `0x${(m + 1).toString(16).padStart(2, '0').repeat(32)}`;

export interface Result {
  snapshotMs: number;
  snapshotBytes: number;
  revertMs: number[];
  /** What the revert's own answer says it took (hold to reopened), per run. */
  revertTookMs: number[];
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`self-check failed: ${what}`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export default async function run(): Promise<Result> {
  const runs = Number(process.env.REVERT_RUNS ?? 5);
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-revert-bench-'));
  let app: App | undefined;
  try {
    app = await startApp(
      testConfig({ dataDir, http: { port: 0 }, adminToken: 'bench', demo: false, rateLimits: { enabled: false }, auth: { signatureThreads: 1, masterKey: 'ab'.repeat(32) }, sandbox: { testControls: 'on' } }),
      { log: silentLogger },
    );
    const base = `http://127.0.0.1:${app.port}`;
    await admin(base, 'POST', '/admin/events', [
      {
        title: 'Revert bench',
        slug: 'revert-bench',
        endDate: '2035-01-01T00:00:00Z',
        markets: Array.from({ length: MARKETS }, (_, m) => ({ question: `Revert bench ${m}?`, conditionId: cid(m), orderPriceMinTickSize: 0.01, orderMinSize: '5' })),
      },
    ]);
    const tokens = (m: number) => app!.ctx.catalog.read.marketByCondition(cid(m))!.clobTokenIds;
    await admin(base, 'PUT', '/admin/clock', { frozen: true });
    // The engine of the app running now: a revert replaces it.
    const engine = () => app!.ctx.engine;
    for (let w = 1; w <= WALLETS; w++) {
      await engine().deposit(wallet(w), 1_000_000 * T);
      for (let m = 0; m < MARKETS; m++) await engine().split(wallet(w), cid(m), 10_000 * T);
    }
    const rnd = lcg(4343);
    const resting = () => {
      const m = rnd(MARKETS);
      const buy = rnd(2) === 0;
      return order({ wallet: wallet(1 + rnd(WALLETS)), tokenId: tokens(m)[0]!, side: buy ? 'BUY' : 'SELL', price: buy ? 100 * (1 + rnd(30)) : 100 * (70 + rnd(30)), size: 5 * T });
    };
    const placed: Promise<{ ok: boolean }>[] = [];
    for (let i = 0; i < RESTING; i++) placed.push(engine().placeOrder(resting()));
    for (let i = 0; i < TRADES; i++) {
      const m = rnd(MARKETS);
      const seller = wallet(1 + rnd(WALLETS - 1));
      let buyer = wallet(1 + rnd(WALLETS - 1));
      if (buyer === seller) buyer = wallet(WALLETS);
      placed.push(engine().placeOrder(order({ wallet: seller, tokenId: tokens(m)[0]!, side: 'SELL', price: 6000, size: 5 * T })));
      placed.push(engine().placeOrder(order({ wallet: buyer, tokenId: tokens(m)[0]!, side: 'BUY', price: 6000, size: 5 * T })));
    }
    check((await Promise.all(placed)).every((a) => a.ok), 'every order of the workload was accepted');
    const allTokens = Array.from({ length: MARKETS }, (_, m) => tokens(m)).flat();
    const books = async () => Promise.all(allTokens.map(async (t) => (await fetch(`${base}/book?token_id=${t}`)).text()));
    const before = await books();

    let t0 = performance.now();
    const snap = await admin(base, 'POST', '/admin/snapshots', { name: 'base' });
    const snapshotMs = performance.now() - t0;
    check(snap.stateHash === (await admin(base, 'GET', '/admin/state-hash')).stateHash, 'the snapshot stands at the state it was taken in');
    const result: Result = { snapshotMs, snapshotBytes: snap.bytes, revertMs: [], revertTookMs: [] };

    for (let r = 0; r < runs; r++) {
      // What a test does between two reverts: orders placed, some canceled.
      const mine = Array.from({ length: 200 }, resting);
      check((await Promise.all(mine.map((o) => engine().placeOrder(o)))).every((a) => a.ok), 'the test\'s orders were accepted');
      await Promise.all(mine.slice(0, 100).map((o) => engine().cancelOrders(o.wallet, [o.orderId])));
      check((await admin(base, 'GET', '/admin/state-hash')).stateHash !== snap.stateHash, 'the state moved before the revert');
      const socket = await StreamClient.connect(`ws://127.0.0.1:${app.port}/ws/market`, { pingMs: 0 });
      socket.subscribeMarket([allTokens[0]!]);
      await socket.next((e) => e.event_type === 'book');

      t0 = performance.now();
      const reverted = await admin(base, 'POST', '/admin/snapshots/base/revert');
      result.revertMs.push(performance.now() - t0);
      result.revertTookMs.push(reverted.tookMs);
      if (process.env.REVERT_PHASES === '1') console.log('revert phases', JSON.stringify(reverted.phases));
      check((await admin(base, 'GET', '/admin/state-hash')).stateHash === snap.stateHash, 'the state hash after the revert is the snapshot\'s');
      const after = await books();
      check(after.every((b, i) => b === before[i]), 'every book after the revert is the snapshot\'s, byte for byte');
      check((await socket.closed).code === 1012, 'the socket open before the revert was closed with 1012');
    }
    const load = loadavg()[0]!.toFixed(2);
    console.log(
      `sandbox revert: ${RESTING} resting orders, ${TRADES} trades, ${MARKETS} markets: snapshot ${snapshotMs.toFixed(0)} ms (${(snap.bytes / 2 ** 20).toFixed(1)} MiB); ` +
        `revert over HTTP median ${median(result.revertMs).toFixed(0)} ms (min ${Math.min(...result.revertMs).toFixed(0)}, max ${Math.max(...result.revertMs).toFixed(0)}, ${runs} runs; ` +
        `the first, which proves the snapshot's store, ${result.revertMs[0]!.toFixed(0)} ms; ` +
        `the service's own account median ${median(result.revertTookMs).toFixed(0)} ms) (target < ${TARGET_MS} ms: ${median(result.revertMs) < TARGET_MS ? 'met' : 'NOT met'}); checks passed; load average ${load}`,
    );
    return result;
  } finally {
    await app?.stop(1000);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
