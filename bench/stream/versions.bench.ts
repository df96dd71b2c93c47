/**
 * Two versions of the service side by side under the stream benchmark's load, windows interleaved, so a
 * change to the streaming path is measured against what it replaces on the same machine at the same time
 * (this machine is shared and its load moves by several times between minutes: figures of two separate
 * runs are not comparable). Usage:
 *   git archive <base commit> | tar -x -C /tmp/pm-base && ln -s "$PWD/node_modules" /tmp/pm-base/
 *   STREAM_BENCH_BASE=/tmp/pm-base npx tsx bench/stream/versions.bench.ts
 *
 * Both services run as `npm start` runs them (tools/service-process.ts, RATE_LIMITS=off, one shard, durable
 * commits), both started before the first window; only the one in its window has traffic. Per round, for
 * each service (the order alternates between rounds): window A, the trading load tool (tools/load.ts,
 * seeded `mixed` stream over 8 fresh markets, 50 wallets) open loop at RATE orders/s for SECONDS without
 * subscribers; window B, the same with SUBSCRIBERS market sockets spread over the window's 16 tokens: raw
 * readers on a worker thread (bench/stream/readers-worker.ts, so the load generator's event loop does not
 * serve them) and PROBES parsing clients on the main thread.
 * Reported per window: orders/s and p99 latency as the client sees it, and the service's own POST /order
 * arrival-to-answer p50/p99 (http_request_duration_seconds, estimated from its buckets), which leaves out
 * the client's queue; then per version the medians over rounds and B's ratio to A (target: within 10%).
 * Excluded from timing: service start, market creation, funding, keys, order signing, socket set-up.
 * Self-checks (a failure throws): no order errors and the load tool's checks (verifyLoad) in every window;
 * every probe's book from `book` + `price_change` equals GET /book (levels and hash) after each B window.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { startTsWorker } from '../../src/engine/thread.ts';
import { prepareLoad } from '../../tools/load.ts';
import { histogramDelta, histogramOf, quantileOf } from '../../tools/metrics-text.ts';
import { startService, type ServiceProcess } from '../../tools/service-process.ts';
import { StreamClient } from '../../tools/stream-client.ts';
import { ask, checkProbes, timedLoad } from './probes.ts';

const RATE = Number(process.env.STREAM_BENCH_RATE ?? 1000);
const SECONDS = Number(process.env.STREAM_BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.STREAM_BENCH_ROUNDS ?? 3);
const SUBSCRIBERS = Number(process.env.STREAM_BENCH_SUBSCRIBERS ?? 1000);
const PROBES = 8;
const ADMIN_TOKEN = 'stream-bench';

interface WindowResult {
  rate: number;
  clientP99: number;
  serverP50: number;
  serverP99: number;
  /** order_stage_duration_seconds{stage="engine"}: engine and commit, up to the last answer (finer buckets). */
  engineP99: number;
  cpuS: number;
  /** ws_commit_to_publish_seconds p99 (B only): commit durable to the batch's last frame handed to uWS. */
  publishP99: number;
  /** CPU of the service's main thread (event loop: HTTP, engine facade, commits' listeners, publishing). */
  mainCpuS: number;
  /** CPU of this process (load generator, readers, probes) over the window: taken from the same two cores. */
  clientCpuS: number;
  /** The machine's 1-minute load average at the end of the window. */
  load: number;
}

async function window(svc: ServiceProcess, readers: Worker | undefined): Promise<WindowResult> {
  const session = await prepareLoad({ url: svc.url, adminToken: ADMIN_TOKEN, wallets: 50, markets: 8, mix: 'mixed', rate: RATE, duration: SECONDS, progress: false, log: () => undefined });
  const tokens = session.markets.flatMap((m) => m.tokenIds);
  const probes: StreamClient[] = [];
  if (readers !== undefined) {
    const assets = Array.from({ length: SUBSCRIBERS - PROBES }, (_, i) => [tokens[i % tokens.length]]);
    await ask(readers, { port: svc.port, assets });
    for (let i = 0; i < PROBES; i++) {
      const c = await StreamClient.connect(`ws://127.0.0.1:${svc.port}/ws/market`, { pingMs: 0 });
      c.subscribeMarket([tokens[i % tokens.length]]);
      probes.push(c);
    }
    for (const p of probes) await p.next((e) => e.event_type === 'book');
  }
  const { run, cpuS, mainCpuS, clientCpuS, metricsBefore: before, metricsAfter: after } = await timedLoad('versions bench', svc, session);
  if (readers !== undefined) {
    await checkProbes('versions bench', svc.url, probes, tokens);
    for (const p of probes) p.close();
    await ask(readers, 'close');
    await new Promise((r) => setTimeout(r, 500));
  }
  const labels = { method: 'POST', route: '/order' };
  const h = histogramDelta(histogramOf(after, 'http_request_duration_seconds', labels)!, histogramOf(before, 'http_request_duration_seconds', labels));
  const stage = { stage: 'engine' };
  const e = histogramDelta(histogramOf(after, 'order_stage_duration_seconds', stage)!, histogramOf(before, 'order_stage_duration_seconds', stage));
  return { rate: run.ordersPerSec, clientP99: run.latencyMs.p99, serverP50: quantileOf(h, 0.5) * 1000, serverP99: quantileOf(h, 0.99) * 1000, engineP99: quantileOf(e, 0.99) * 1000, publishP99: publishP99(before, after), cpuS, mainCpuS, clientCpuS, load: loadavg()[0] };
}

function publishP99(before: string, after: string): number {
  const h = histogramOf(after, 'ws_commit_to_publish_seconds');
  if (h === undefined) return NaN;
  const d = histogramDelta(h, histogramOf(before, 'ws_commit_to_publish_seconds'));
  return d.count > 0 ? quantileOf(d, 0.99) * 1000 : NaN;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export default async function run(): Promise<void> {
  const base = process.env.STREAM_BENCH_BASE;
  if (base === undefined) {
    // `npm run bench` runs every bench: this one needs a second checkout, so it says why it does nothing.
    console.log('versions bench: skipped, STREAM_BENCH_BASE names no checkout to compare with (see the file header)');
    return;
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-versions-bench-'));
  // SUBSCRIBERS sockets from one address on 16 tokens: past the followers an address may put on one token, a
  // bound an older checkout may not know (its configuration refuses unknown settings), so each version is
  // given only the settings its own defaults name.
  const configOf = (root: string, name: string): string => {
    const known = (JSON.parse(readFileSync(join(root, 'config', 'default.json'), 'utf8')) as { stream: Record<string, unknown> }).stream;
    const wanted: Record<string, number> = { maxSocketsPerAddress: 20_000, maxAssetSocketsPerAddress: 20_000, maxAssetSocketsPerNetwork: 20_000, messageBytesPerNetwork: 1 << 30, idleSeconds: 3600 };
    const file = join(dataDir, `${name}.json`);
    writeFileSync(file, JSON.stringify({ stream: Object.fromEntries(Object.entries(wanted).filter(([k]) => k in known)) }));
    return file;
  };
  // STREAM_BENCH_PROFILE=<dir>: both services under --cpu-prof (profiles written at the end; fold-profile.ts reads them).
  const prof = process.env.STREAM_BENCH_PROFILE;
  const start = (root: string | undefined, name: string) =>
    startService({
      dataDir: join(dataDir, name),
      adminToken: ADMIN_TOKEN,
      env: { RATE_LIMITS: 'off', CONFIG_FILE: configOf(root ?? fileURLToPath(new URL('../..', import.meta.url)), name) },
      startTimeoutMs: 120_000,
      ...(root === undefined ? {} : { root }),
      ...(prof === undefined ? {} : { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${join(prof, name)}`] }),
    });
  const versions = [
    { name: 'base', svc: await start(base, 'base'), a: [] as WindowResult[], b: [] as WindowResult[] },
    { name: 'this', svc: await start(undefined, 'this'), a: [] as WindowResult[], b: [] as WindowResult[] },
  ];
  const readers = startTsWorker(new URL('./readers-worker.ts', import.meta.url), {});
  const fmt = (w: WindowResult) =>
    `${w.rate.toFixed(0)} orders/s, client p99 ${w.clientP99.toFixed(1)} ms, service p50/p99 ${w.serverP50.toFixed(2)}/${w.serverP99.toFixed(2)} ms, engine stage p99 ${w.engineP99.toFixed(2)} ms, ${Number.isNaN(w.publishP99) ? '' : `commit->published p99 ${w.publishP99.toFixed(2)} ms, `}CPU service ${w.cpuS.toFixed(2)} s (main thread ${w.mainCpuS.toFixed(2)} s), client ${w.clientCpuS.toFixed(2)} s, load ${w.load.toFixed(1)}`;
  try {
    console.log(`versions bench: ${base} (base) vs this checkout; ${RATE} orders/s for ${SECONDS} s per window, ${SUBSCRIBERS} subscribers in B, ${ROUNDS} rounds`);
    for (let r = 0; r < ROUNDS; r++) {
      for (const v of r % 2 === 0 ? versions : [...versions].reverse()) {
        const a = await window(v.svc, undefined);
        console.log(`  round ${r + 1} ${v.name} A: ${fmt(a)}`);
        const b = await window(v.svc, readers);
        console.log(`  round ${r + 1} ${v.name} B: ${fmt(b)}`);
        v.a.push(a);
        v.b.push(b);
      }
    }
    console.log('\n  medians over rounds (B/A ratio per round, then the median; target <= 1.10)');
    for (const v of versions) {
      const ratio = (k: keyof WindowResult) => median(v.b.map((b, i) => b[k] / v.a[i][k]));
      console.log(
        `    ${v.name}: A client p99 ${median(v.a.map((w) => w.clientP99)).toFixed(1)} ms, B ${median(v.b.map((w) => w.clientP99)).toFixed(1)} ms (x${ratio('clientP99').toFixed(2)}); ` +
          `service p99 A ${median(v.a.map((w) => w.serverP99)).toFixed(2)} ms, B ${median(v.b.map((w) => w.serverP99)).toFixed(2)} ms (x${ratio('serverP99').toFixed(2)}); ` +
          `engine stage p99 A ${median(v.a.map((w) => w.engineP99)).toFixed(2)} ms, B ${median(v.b.map((w) => w.engineP99)).toFixed(2)} ms (x${ratio('engineP99').toFixed(2)}); ` +
          `orders/s B/A x${ratio('rate').toFixed(3)}; commit->published p99 ${median(v.b.map((w) => w.publishP99)).toFixed(2)} ms`,
      );
    }
  } finally {
    await readers.terminate();
    for (const v of versions) await v.svc.stop('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
