/**
 * The test clock's advance (edge/sandbox/test-clock.ts): a day in one call, with thousands of GTD orders
 * expiring across it and trades settling through the trade lifecycle, on the service in process.
 *
 * Workload (seeded): 8 markets (tick 0.01, min size 5; in two of the runs, two of them pay liquidity rewards,
 * sampled every 60 s as by default: each sample scores every resting order of those markets), 20 wallets; 5,000 resting GTD orders, BUYs at 0.01-0.30, each expiring at its own second
 * spread over the coming 24 hours; 1,000 trades (a resting SELL at 0.60 and a crossing BUY), settling MATCHED
 * -> MINED after 5 s -> CONFIRMED after 60 s; a heartbeat running for one wallet with resting orders (10 s
 * timeout: its orders are canceled on the way). The clock is frozen before the workload is placed.
 * Timed: one `POST /admin/clock/advance {"seconds": 86400}` over HTTP, from the request to its answer (which
 * comes once everything it caused is committed), and the process's CPU time meanwhile (every thread: what a
 * loaded machine changes least). Excluded: the set-up and the checks. Three runs: one shard with rewards
 * markets, one shard without (what the samples cost), two shards with (the advance then alternates between
 * the shards in time order).
 * Self-checks after the advance: every GTD order is CANCELED with reason EXPIRED, journaled at its
 * expiration second; every trade is CONFIRMED 65 s after its match; the heartbeat's orders are canceled at
 * its timeout; the journal's times never go back; the ledger invariants hold; the rewards markets accrued a
 * day of samples. A failed check stops the run.
 * Run alone: npx tsx bench/sandbox/test-clock.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startApp, type App } from '../../src/node/app.ts';
import type { JournalEvent } from '../../src/domain/events.ts';
import { readJournal } from '../../src/journal/recovery.ts';
import { rewardKeys } from '../../src/journal/keys.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { lcg, order, wallet } from '../../test/fixtures/engine-harness.ts';
import { admin } from '../lib/admin.ts';

const MARKETS = 8;
const WALLETS = 20;
const GTD_ORDERS = 5_000;
const TRADES = 1_000;
const DAY = 86_400;
const TARGET_MS = 1_000;
const T = 1_000_000;

const cid = (m: number) => `0x${(m + 1).toString(16).padStart(2, '0').repeat(32)}`;

interface Result {
  shards: number;
  rewards: boolean;
  advanceMs: number;
  /** CPU time of the whole process (every thread) during the advance: what the machine's load does not change. */
  cpuMs: number;
  events: number;
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`self-check failed: ${what}`);
}

async function one(shards: number, rewards: boolean): Promise<Result> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-clock-bench-'));
  let app: App | undefined;
  try {
    app = await startApp(
      testConfig({
        dataDir,
        http: { port: 0 },
        adminToken: 'bench',
        demo: 'off',
        rateLimits: { enabled: false },
        engine: { shards },
        auth: { signatureThreads: 1 },
        heartbeats: { timeoutSeconds: 10 },
        sandbox: { trades: { minedDelayMs: 5_000, confirmedDelayMs: 60_000, retryingShare: 0, retryDelayMs: 0, failedShare: 0, seed: 1 } },
      }),
      { log: silentLogger },
    );
    const base = `http://127.0.0.1:${app.port}`;
    const engine = app.ctx.engine;
    await admin(base, 'POST', '/admin/events', [
      {
        title: 'Clock bench',
        slug: 'clock-bench',
        endDate: '2035-01-01T00:00:00Z',
        markets: Array.from({ length: MARKETS }, (_, m) => ({
          question: `Clock bench ${m}?`,
          conditionId: cid(m),
          orderPriceMinTickSize: 0.01,
          orderMinSize: '5',
          ...(rewards && m < 2 ? { rewardsMinSize: 5, rewardsMaxSpread: 50, clobRewards: [{ rewardsDailyRate: 10 }] } : {}),
        })),
      },
    ]);
    const tokens = (m: number) => app!.ctx.catalog.read.marketByCondition(cid(m))!.clobTokenIds;
    const state = await admin(base, 'PUT', '/admin/clock', { frozen: true });
    const startSec = state.time as number;
    for (let w = 1; w <= WALLETS; w++) {
      await engine.deposit(wallet(w), 1_000_000 * T);
      for (let m = 0; m < MARKETS; m++) await engine.split(wallet(w), cid(m), 10_000 * T);
    }

    // The workload, from a seeded generator that also says what the advance must do.
    const rnd = lcg(4242);
    const expirations = new Map<string, number>();
    const used = new Set<number>();
    const placed: Promise<unknown>[] = [];
    for (let i = 0; i < GTD_ORDERS; i++) {
      let exp: number;
      do exp = startSec + 61 + rnd(DAY - 61);
      while (used.has(exp));
      used.add(exp);
      const m = rnd(MARKETS);
      const o = order({ wallet: wallet(1 + rnd(WALLETS - 1)), tokenId: tokens(m)[0]!, side: 'BUY', price: 100 * (1 + rnd(30)), size: 5 * T, type: 'GTD', expiration: exp });
      expirations.set(o.orderId, exp);
      placed.push(engine.placeOrder(o));
    }
    const takers: string[] = [];
    for (let i = 0; i < TRADES; i++) {
      const m = rnd(MARKETS);
      const seller = wallet(1 + rnd(WALLETS - 1));
      let buyer = wallet(1 + rnd(WALLETS - 1));
      if (buyer === seller) buyer = wallet(WALLETS);
      placed.push(engine.placeOrder(order({ wallet: seller, tokenId: tokens(m)[0]!, side: 'SELL', price: 6000, size: 5 * T })));
      const taker = order({ wallet: buyer, tokenId: tokens(m)[0]!, side: 'BUY', price: 6000, size: 5 * T });
      takers.push(taker.orderId);
      placed.push(engine.placeOrder(taker));
    }
    const answers = (await Promise.all(placed)) as { ok: boolean }[];
    check(answers.every((a) => a.ok), 'every order of the workload was accepted');
    // The heartbeat's wallet: its resting GTC orders go at its timeout.
    const hbWallet = wallet(WALLETS);
    const hbOrders = await Promise.all(Array.from({ length: 10 }, (_, i) => engine.placeOrder(order({ wallet: hbWallet, tokenId: tokens(i % MARKETS)[1]!, side: 'BUY', price: 100, size: 5 * T }))));
    await app.ctx.heartbeats.beat(hbWallet, '');
    await engine.afterCommit();
    check(engine.tradeSettlement().settling.MATCHED === TRADES, `${TRADES} trades settling`);
    const from = (await admin(base, 'GET', '/admin/clock')).nowMs as number;
    const seqBefore = engine.committedSeq;

    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const r = await admin(base, 'POST', '/admin/clock/advance', { seconds: DAY });
    const advanceMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const cpuMs = (cpu.user + cpu.system) / 1000;

    // Checks.
    check(r.clock.nowMs === from + DAY * 1000, 'the clock stands a day later');
    const events: JournalEvent[] = [...readJournal(app.ctx.store)];
    let lastTs = 0;
    for (const e of events) {
      check(e.ts >= lastTs, `journal times never go back (seq ${e.seq})`);
      lastTs = e.ts;
    }
    const expired = new Map<string, number>();
    const confirmed = new Map<number, number>();
    const fills = new Map<number, number>();
    const hbCanceled: number[] = [];
    const hbIds = new Set(hbOrders.map((o) => o.orderId));
    for (const e of events) {
      if (e.type === 'status' && e.reason === 'EXPIRED') expired.set(e.orderId, e.ts);
      if (e.type === 'status' && hbIds.has(e.orderId)) hbCanceled.push(e.ts);
      if (e.type === 'fill') fills.set(e.seq, e.ts);
      if (e.type === 'trade' && e.status === 'CONFIRMED') confirmed.set(e.fillSeq, e.ts);
    }
    check(expired.size === GTD_ORDERS, `every GTD order expired (${expired.size})`);
    for (const [id, exp] of expirations) check(expired.get(id) === exp * 1000, `order ${id} expired at its second`);
    check(confirmed.size === TRADES, `every trade confirmed (${confirmed.size})`);
    for (const [seq, ts] of confirmed) check(ts === fills.get(seq)! + 65_000, `trade ${seq} confirmed 65 s after its match`);
    check(hbCanceled.length === hbOrders.length && hbCanceled.every((ts) => ts === from + 10_000), 'the silent heartbeat\'s orders canceled at its timeout');
    check(engine.checkLedger().length === 0, 'ledger invariants');
    const day = new Date(from).toISOString().slice(0, 10);
    const nextDay = new Date(from + DAY * 1000).toISOString().slice(0, 10);
    const sampled = (app.ctx.views.get<number>(rewardKeys.samples(day)) ?? 0) + (app.ctx.views.get<number>(rewardKeys.samples(nextDay)) ?? 0);
    check(sampled === DAY, `a day of reward samples counted (${sampled} s)`);
    void takers;
    return { shards, rewards, advanceMs, cpuMs, events: engine.committedSeq - seqBefore };
  } finally {
    await app?.stop(1000);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export default async function run(): Promise<Result[]> {
  const out: Result[] = [];
  for (const [shards, rewards] of [[1, true], [1, false], [2, true]] as const) {
    const r = await one(shards, rewards);
    out.push(r);
    console.log(
      `test clock: advance a day with ${GTD_ORDERS} GTD orders expiring and ${TRADES} trades settling, ${shards} shard(s), ${rewards ? 'two rewards markets' : 'no rewards market'}: ` +
        `${r.advanceMs.toFixed(0)} ms (CPU ${r.cpuMs.toFixed(0)} ms, every thread) for ${r.events} journal events (target < ${TARGET_MS} ms: ${r.advanceMs < TARGET_MS ? 'met' : 'NOT met'}); ` +
        `checks passed; load average ${loadavg()[0]!.toFixed(2)}`,
    );
  }
  return out;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
