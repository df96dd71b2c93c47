/**
 * Gateways (ROLE=gateway; docs/decisions/scale-out.md, "Gateways"): what leaves the sequencer when two gateways verify
 * its orders, in one run on this machine. A real nats-server (tools/nats-server.ts) and every node a child
 * process run as `npm start` runs it (tools/service-process.ts: ROLE, NATS_URL, RATE_LIMITS=off, DEMO=0,
 * durable commits; one CONFIG_FILE with the master key all nodes share, one signature thread per node).
 * Run alone: `npx tsx --expose-gc bench/cluster/gateway.bench.ts`; or `npm run bench -- gateway`.
 * Skipped, with a message naming nats-server, when nats-server is not on the PATH (failing under CI).
 *
 * Windows, interleaved (single, gateways, single, gateways, ...; GW_BENCH_ROUNDS rounds, default 2), each
 * GW_BENCH_RATE single orders a second (default 1,000) open loop for GW_BENCH_SECONDS (default 6), the load
 * tool's seeded `mixed` stream over fresh markets and wallets each window:
 *   single    one ROLE=single node takes every order itself;
 *   gateways  the same rate split over two gateways (two load sessions at half the rate each, their wallets
 *             and markets set up on the sequencer, the gateways caught up before the window), which verify
 *             the orders and forward them to the sequencer over NATS.
 * Reported per window: orders/s, client p50/p99, and CPU per acknowledged order (/proc, all threads) of the
 * single node, or of the sequencer, each gateway and nats-server; the signature recoveries each node made
 * per order (its /metrics signature_pool_orders + signature_pool_inline), which shows where recovery ran.
 * On two cores every process shares the same cores, so throughput cannot grow; what the figures show is
 * the CPU per order each role spends, and so what a machine per role would carry.
 *
 * Self-checks (a failure throws): every order of every window acknowledged; the load tool's checks of each
 * session against the node that holds it (verifyLoad, on the sequencer for the gateway windows: balances,
 * open and filled orders agree with the acknowledgements); in the gateway windows, orders the sequencer
 * recovered itself are at most 1% of them (only what a gateway could not yet verify).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { driveLoad, prepareLoad, verifyLoad, type LoadSession, type RunStats } from '../../tools/load.ts';
import { natsServerAvailable, startNatsServer } from '../../tools/nats-server.ts';
import { sampleOf } from '../../tools/metrics-text.ts';
import { cpuSeconds, startService, type ServiceProcess } from '../../tools/service-process.ts';

const RATE = Number(process.env.GW_BENCH_RATE ?? 1000);
const SECONDS = Number(process.env.GW_BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.GW_BENCH_ROUNDS ?? 2);
const ADMIN = 'gateway-bench';
const MASTER_KEY = 'gb'.repeat(32);

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function journalSeq(url: string): Promise<number> {
  const r = await fetch(`${url}/time`);
  await r.arrayBuffer();
  return Number(r.headers.get('x-journal-seq'));
}

/** Orders whose signature this node recovered (pool tasks' orders and inline ones), from /metrics. */
async function recoveries(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const n = (name: string) => {
    const v = sampleOf(text, name);
    if (!Number.isFinite(v)) throw new Error(`gateway bench: ${url}/metrics has no ${name}`);
    return v;
  };
  return n('signature_pool_orders') + n('signature_pool_inline');
}

async function session(url: string, rate: number): Promise<LoadSession> {
  return prepareLoad({ url, adminToken: ADMIN, wallets: 20, markets: 4, mix: 'mixed', rate, duration: SECONDS, connections: 32, progress: false, verifySample: 300, log: () => undefined });
}

async function checked(label: string, s: LoadSession, run: RunStats, url: string): Promise<void> {
  if (run.errors > 0 || run.acked !== run.sent) throw new Error(`gateway bench self-check: ${label}: ${run.acked} of ${run.sent} orders acknowledged: ${JSON.stringify(run.errorClasses)}`);
  const v = await verifyLoad(s, run, { url });
  if (!v.ok) throw new Error(`gateway bench self-check: ${label}: the sequencer disagrees with the acknowledgements:\n${v.problems.join('\n')}`);
}

interface Window {
  kind: 'single' | 'gateways';
  orders: number;
  rate: number;
  p50: number;
  p99: number;
  /** µs of CPU per acknowledged order, per process. */
  cpu: Record<string, number>;
  /** Recoveries per order, per process. */
  rec: Record<string, number>;
}

export default async function run(): Promise<void> {
  if (!natsServerAvailable()) {
    if (process.env.CI !== undefined) throw new Error("gateway bench: nats-server not on PATH (Debian's nats-server package)");
    console.log("gateway bench: skipped: nats-server not on PATH (Debian's nats-server package)");
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'pm-gateway-bench-'));
  const configFile = join(dir, 'config.json');
  writeFileSync(configFile, JSON.stringify({ auth: { masterKey: MASTER_KEY, signatureThreads: 1 } }));
  // The per-role users and permissions of tools/nats-config.ts, as a deployment runs.
  const nats = await startNatsServer({ dir: join(dir, 'nats'), secure: true });
  const procs: ServiceProcess[] = [];
  const node = async (role: string, name: string) => {
    const p = await startService({
      dataDir: join(dir, name),
      adminToken: ADMIN,
      env: { ROLE: role, NATS_URL: nats.url, ...nats.env(role), SEQUENCER_URL: 'http://127.0.0.1:8080', CONFIG_FILE: configFile, RATE_LIMITS: 'off' },
      startTimeoutMs: 120_000,
    });
    procs.push(p);
    return p;
  };
  try {
    const [single, seq] = await Promise.all([node('single', 'single'), node('sequencer', 'sequencer')]);
    const gws = await Promise.all([node('gateway', 'gateway-1'), node('gateway', 'gateway-2')]);
    console.log(
      `gateway bench: ${RATE} orders/s for ${SECONDS} s per window, ${ROUNDS} rounds interleaved; nats-server pid ${nats.pid}, single ${single.pid}, sequencer ${seq.pid}, gateways ${gws.map((g) => g.pid).join(', ')}; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`,
    );
    const windows: Window[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of round % 2 === 0 ? (['single', 'gateways'] as const) : (['gateways', 'single'] as const)) {
        if (kind === 'single') {
          const s = await session(single.url, RATE);
          const r0 = await recoveries(single.url);
          const c0 = cpuSeconds(single.pid) ?? NaN;
          const run = await driveLoad(s);
          const cpu = (cpuSeconds(single.pid) ?? NaN) - c0;
          const rec = (await recoveries(single.url)) - r0;
          await checked('single', s, run, single.url);
          windows.push({ kind, orders: run.acked, rate: run.ordersPerSec, p50: run.latencyMs.p50, p99: run.latencyMs.p99, cpu: { single: (cpu / run.acked) * 1e6 }, rec: { single: rec / run.acked } });
        } else {
          // Set up on the sequencer, then driven through the gateways once they hold the keys and markets.
          const sessions = await Promise.all(gws.map(() => session(seq.url, RATE / 2)));
          const target = await journalSeq(seq.url);
          for (const g of gws) {
            const end = Date.now() + 30_000;
            while ((await journalSeq(g.url)) < target) {
              if (Date.now() > end) throw new Error('gateway bench: a gateway did not catch up');
              await sleep(20);
            }
          }
          const all = [seq, ...gws];
          const r0 = await Promise.all(all.map((p) => recoveries(p.url)));
          const c0 = [...all.map((p) => cpuSeconds(p.pid) ?? NaN), cpuSeconds(nats.pid!) ?? NaN];
          const runs = await Promise.all(sessions.map((s, i) => driveLoad({ ...s, opts: { ...s.opts, url: gws[i]!.url } })));
          const c1 = [...all.map((p) => cpuSeconds(p.pid) ?? NaN), cpuSeconds(nats.pid!) ?? NaN];
          const r1 = await Promise.all(all.map((p) => recoveries(p.url)));
          for (const [i, s] of sessions.entries()) await checked(`gateway ${i + 1}`, s, runs[i]!, seq.url);
          const acked = runs.reduce((n, r) => n + r.acked, 0);
          const names = ['sequencer', 'gateway 1', 'gateway 2', 'nats-server'];
          const cpu: Record<string, number> = {};
          for (const [i, n] of names.entries()) cpu[n] = ((c1[i]! - c0[i]!) / acked) * 1e6;
          const rec: Record<string, number> = {};
          for (const [i, n] of names.slice(0, 3).entries()) rec[n] = (r1[i]! - r0[i]!) / acked;
          if (rec.sequencer! > 0.01) throw new Error(`gateway bench self-check: the sequencer recovered ${fmt(rec.sequencer! * 100, 1)}% of the gateways' orders itself`);
          const lat = runs.map((r) => r.latencyMs);
          windows.push({ kind, orders: acked, rate: runs.reduce((n, r) => n + r.ordersPerSec, 0), p50: Math.max(...lat.map((l) => l.p50)), p99: Math.max(...lat.map((l) => l.p99)), cpu, rec });
        }
        const w = windows.at(-1)!;
        console.log(
          `  ${w.kind.padEnd(8)} ${fmt(w.orders)} orders, ${fmt(w.rate)}/s, p50/p99 ${fmt(w.p50, 2)}/${fmt(w.p99, 2)} ms; CPU µs/order ${Object.entries(w.cpu).map(([k, v]) => `${k} ${fmt(v)}`).join(', ')}; recoveries/order ${Object.entries(w.rec).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(', ')}; load ${loadavg()[0]!.toFixed(1)}`,
        );
      }
    }
    const mean = (kind: Window['kind'], key: string) => {
      const ws = windows.filter((w) => w.kind === kind);
      return ws.reduce((n, w) => n + (w.cpu[key] ?? 0), 0) / ws.length;
    };
    const single1 = mean('single', 'single');
    const seqCpu = mean('gateways', 'sequencer');
    // Each gateway carried half the orders; its figure is per order of all of them, so the two add up.
    const gwCpu = mean('gateways', 'gateway 1') + mean('gateways', 'gateway 2');
    console.log(
      `\n  means over ${ROUNDS} rounds, CPU per order: single node ${fmt(single1)} µs; with two gateways the sequencer ${fmt(seqCpu)} (x${(seqCpu / single1).toFixed(2)} of the single node), ` +
        `the gateways together ${fmt(gwCpu)}, nats-server ${fmt(mean('gateways', 'nats-server'))}; all roles ${fmt(seqCpu + gwCpu + mean('gateways', 'nats-server'))} µs`,
    );
  } finally {
    for (const p of procs) await p.stop('SIGTERM').catch(() => undefined);
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
