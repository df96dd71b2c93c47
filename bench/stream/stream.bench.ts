/**
 * Streaming under trading load, against the service run as `npm start` runs it (child process, RATE_LIMITS=off,
 * one shard, durable commits; a CONFIG_FILE raises the per-address and global socket caps and the idle time).
 * Run alone: `npx tsx --expose-gc bench/stream/stream.bench.ts`; or `npm run bench -- stream`.
 *
 * Workload: the trading load tool (tools/load.ts, seeded `mixed` stream: resting BUYs and minting pairs over
 * 8 fresh markets, 50 wallets) open loop at RATE orders/s for SECONDS, three windows in one run:
 *   A  no subscribers;
 *   B  SUBSCRIBERS market-channel sockets spread round-robin over the run's 16 tokens: SUBSCRIBERS - PROBES
 *      of them are minimal raw WebSocket readers that discard what they read (so the client's own CPU,
 *      which shares the machine's two cores with the service, stays small), on a worker thread
 *      (readers-worker.ts) so that the load generator's event loop does not serve them; PROBES of them
 *      parse every frame (tools/stream-client.ts) to measure latency;
 *   A2 no subscribers again (the spread between A and A2 is the noise of the machine).
 * Reported:
 *   (a) orders/s and p99 order latency of B against the mean of A and A2 (target: within 10%), as the client
 *       sees it and as the service does (POST /order arrival to answer, http_request_duration_seconds,
 *       estimated from its buckets: without the client's own queue), with the machine's load average;
 *   (b) latency to the frame's arrival at a probe, p50/p99: from the frame's `timestamp` (the journal's
 *       stamp, taken before the commit's fsync, so an upper bound of commit-to-frame) and, from the
 *       service's ws_commit_to_publish_seconds histogram, commit durable -> frame handed to the sockets
 *       (target p99 < 5 ms);
 *   (c) frames/s delivered (ws_frames_sent_total: a publish counts once per socket) and service CPU per
 *       delivered frame ((CPU of B - mean CPU of A, A2) / frames of B);
 *   CPU of the windows: the cores the service and this process (load generator, probes, readers' thread) kept
 *       busy on average, and the readers' own CPU per frame (their thread, over window B and its checks): on this
 *       machine the subscribers' CPU comes out of the same two cores as the service's;
 *   (d) memory per idle subscribed socket: the service's RSS before and after IDLE_SOCKETS raw sockets each
 *       subscribed to one token of a fresh market, on the fresh service before the windows (target <= 8 KiB;
 *       the heap's own movement between two readings is ~1 KiB per socket at this count).
 * Excluded from timing: service start, market creation, funding, keys, order signing, socket set-up.
 * Self-checks (a failure throws): no order errors and the load tool's checks of every window
 * (verifyLoad: balances, open and filled orders agree with the acknowledgements); every probe's local
 * books, built from `book` + `price_change`, equal GET /book (levels and hash) after window B.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startTsWorker } from '../../src/engine/thread.ts';
import { prepareLoad } from '../../tools/load.ts';
import { histogramDelta, histogramOf, quantileOf } from '../../tools/metrics-text.ts';
import { startService, type ServiceProcess } from '../../tools/service-process.ts';
import { StreamClient } from '../../tools/stream-client.ts';
import { ask, checkProbes, timedLoad, type TimedLoad } from './probes.ts';
import { rawSubscriber } from './readers-worker.ts';

const RATE = Number(process.env.STREAM_BENCH_RATE ?? 1000);
const SECONDS = Number(process.env.STREAM_BENCH_SECONDS ?? 8);
const SUBSCRIBERS = 1000;
const PROBES = 16;
const IDLE_SOCKETS = 15_000;
const ADMIN_TOKEN = 'stream-bench';

/** What the readers' worker has read, and its thread's CPU seconds (readers-worker.ts). */
interface ReadersState {
  bytes: number;
  cpuS: number;
}

type Window = TimedLoad;

async function window(svc: ServiceProcess, setup?: (tokens: string[]) => Promise<void>): Promise<Window & { tokens: string[] }> {
  const session = await prepareLoad({ url: svc.url, adminToken: ADMIN_TOKEN, wallets: 50, markets: 8, mix: 'mixed', rate: RATE, duration: SECONDS, progress: false, log: () => undefined });
  const tokens = session.markets.flatMap((m) => m.tokenIds);
  await setup?.(tokens);
  return { ...(await timedLoad('stream bench', svc, session)), tokens };
}

/** The service's own POST /order p99 over a window, in ms (from the histogram's buckets). */
function serviceP99(w: Window): number {
  const labels = { method: 'POST', route: '/order' };
  const h = histogramOf(w.metricsAfter, 'http_request_duration_seconds', labels);
  return h === undefined ? NaN : quantileOf(histogramDelta(h, histogramOf(w.metricsBefore, 'http_request_duration_seconds', labels)), 0.99) * 1000;
}

function counter(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? NaN : Number(m[1]);
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/** (d) IDLE_SOCKETS raw sockets, each subscribed to one token of a fresh market, nothing published meanwhile. */
async function idleSockets(svc: ServiceProcess, raw: Socket[]): Promise<{ open: number; rss0: number; rss1: number; perSocket: number }> {
  const conditionId = '0x' + randomBytes(32).toString('hex');
  const r = await fetch(`${svc.url}/admin/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify([{ title: 'Idle', slug: `idle-${conditionId.slice(2, 10)}`, endDate: '2030-01-01T00:00:00Z', markets: [{ question: 'Idle?', conditionId, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] }]),
  });
  if (r.status !== 200) throw new Error(`stream bench: market creation answered ${r.status}`);
  const tokens = ((await (await fetch(`${svc.url}/clob-markets/${conditionId}`)).json()) as { t: { t: string }[] }).t.map((x) => x.t);
  // Warm the paths a socket uses once, so the first sockets do not carry one-time allocations.
  for (let i = 0; i < 200; i++) raw.push(await rawSubscriber(svc.port, [tokens[i % 2]]));
  await new Promise((res) => setTimeout(res, 2000));
  const rss0 = rssKiB(svc.pid);
  for (let i = 0; i < IDLE_SOCKETS; i++) raw.push(await rawSubscriber(svc.port, [tokens[i % 2]]));
  await new Promise((res) => setTimeout(res, 1000));
  const open = counter(await (await fetch(`${svc.url}/metrics`)).text(), 'ws_sockets{channel="market"}');
  const rss1 = rssKiB(svc.pid);
  for (const s of raw.splice(0)) s.destroy();
  await new Promise((res) => setTimeout(res, 500));
  return { open, rss0, rss1, perSocket: ((rss1 - rss0) * 1024) / IDLE_SOCKETS };
}

export default async function run(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-stream-bench-'));
  const configFile = join(dataDir, 'stream-bench.json');
  // The idle-socket measure opens IDLE_SOCKETS from one address, past the default global cap (stream.maxSockets),
  // and the fan-out puts SUBSCRIBERS of that address on 16 tokens, past the followers an address may put on one
  // and the bytes of messages its network may send in a second.
  writeFileSync(configFile, JSON.stringify({ stream: { maxSocketsPerAddress: 20_000, maxSocketsPerNetwork: 20_000, maxSockets: 20_000, maxSubscriptionsPerAddress: 100_000, maxSubscriptionsPerNetwork: 100_000, maxAssetSocketsPerAddress: 20_000, maxAssetSocketsPerNetwork: 20_000, messageBytesPerNetwork: 1 << 30, idleSeconds: 3600 } }));
  const svc = await startService({ dataDir: join(dataDir, 'store'), adminToken: ADMIN_TOKEN, env: { RATE_LIMITS: 'off', CONFIG_FILE: configFile }, startTimeoutMs: 120_000 });
  const raw: Socket[] = [];
  // The window's readers live on a thread of their own (readers-worker.ts): on this thread they would delay
  // the load generator's answers, and its latencies would include the client's own queue.
  const readers = startTsWorker(new URL('./readers-worker.ts', import.meta.url), {});
  const probes: StreamClient[] = [];
  try {
    console.log(`stream bench: ${RATE} orders/s open loop for ${SECONDS} s per window; service pid ${svc.pid}`);
    const idle = await idleSockets(svc, raw);
    const a = await window(svc);
    console.log(`  A  no subscribers: ${a.run.ordersPerSec.toFixed(0)} orders/s, p99 ${a.run.latencyMs.p99.toFixed(2)} ms, service CPU ${a.cpuS.toFixed(2)} s`);

    const lat: number[] = [];
    let probeTokens: string[] = [];
    let readers0: ReadersState = { bytes: 0, cpuS: 0 };
    const b = await window(svc, async (tokens) => {
      probeTokens = tokens;
      await ask(readers, { port: svc.port, assets: Array.from({ length: SUBSCRIBERS - PROBES }, (_, i) => [tokens[i % tokens.length]]) });
      for (let i = 0; i < PROBES; i++) {
        const c = await StreamClient.connect(`ws://127.0.0.1:${svc.port}/ws/market`, {
          pingMs: 0,
          onEvent: (e, at) => {
            if ('timestamp' in e) lat.push(at - Number(e.timestamp));
          },
        });
        c.subscribeMarket([tokens[i % tokens.length]]);
        probes.push(c);
      }
      for (const p of probes) await p.next((e) => e.event_type === 'book');
      lat.length = 0;
      readers0 = await ask<ReadersState>(readers, 'bytes');
    });
    const readers1 = await ask<ReadersState>(readers, 'bytes');
    // Subscriptions were all made before the window: the initial dumps are not in the latencies.
    console.log(`  B  ${SUBSCRIBERS} subscribers: ${b.run.ordersPerSec.toFixed(0)} orders/s, p99 ${b.run.latencyMs.p99.toFixed(2)} ms, service CPU ${b.cpuS.toFixed(2)} s`);
    await checkProbes('stream bench', svc.url, probes, probeTokens);
    await ask(readers, 'close');
    for (const p of probes.splice(0)) p.close();
    await new Promise((r) => setTimeout(r, 500));

    const a2 = await window(svc);
    console.log(`  A2 no subscribers: ${a2.run.ordersPerSec.toFixed(0)} orders/s, p99 ${a2.run.latencyMs.p99.toFixed(2)} ms, service CPU ${a2.cpuS.toFixed(2)} s`);

    const baseRate = (a.run.ordersPerSec + a2.run.ordersPerSec) / 2;
    const baseP99 = (a.run.latencyMs.p99 + a2.run.latencyMs.p99) / 2;
    const rateRatio = b.run.ordersPerSec / baseRate;
    const p99Ratio = b.run.latencyMs.p99 / baseP99;
    const frames = counter(b.metricsAfter, 'ws_frames_sent_total{channel="market"}') - counter(b.metricsBefore, 'ws_frames_sent_total{channel="market"}');
    const bytes = counter(b.metricsAfter, 'ws_bytes_sent_total{channel="market"}') - counter(b.metricsBefore, 'ws_bytes_sent_total{channel="market"}');
    const drops = counter(b.metricsAfter, 'ws_frames_dropped_total{channel="market"}');
    const extraCpu = b.cpuS - (a.cpuS + a2.cpuS) / 2;
    const h = histogramOf(b.metricsAfter, 'ws_commit_to_publish_seconds');
    const pub = h === undefined ? undefined : histogramDelta(h, histogramOf(b.metricsBefore, 'ws_commit_to_publish_seconds'));
    const pubP50 = pub === undefined ? NaN : quantileOf(pub, 0.5) * 1000;
    const pubP99 = pub === undefined ? NaN : quantileOf(pub, 0.99) * 1000;
    const within = (r: number) => Math.abs(r - 1) <= 0.1;

    console.log('\n  (a) trading with 1,000 subscribers vs without (mean of A and A2)');
    console.log(`      orders/s ${b.run.ordersPerSec.toFixed(0)} vs ${baseRate.toFixed(0)} (x${rateRatio.toFixed(3)}), p99 ${b.run.latencyMs.p99.toFixed(2)} vs ${baseP99.toFixed(2)} ms (x${p99Ratio.toFixed(3)}); A vs A2 p99 ${a.run.latencyMs.p99.toFixed(2)} / ${a2.run.latencyMs.p99.toFixed(2)} ms`);
    const sp = [a, b, a2].map(serviceP99);
    const spRatio = sp[1] / ((sp[0] + sp[2]) / 2);
    console.log(`      the service's own POST /order p99: A ${sp[0].toFixed(2)}, B ${sp[1].toFixed(2)}, A2 ${sp[2].toFixed(2)} ms (B x${spRatio.toFixed(3)}); load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${availableParallelism()} cores`);
    console.log(`      target within 10%: orders/s ${within(rateRatio) ? 'met' : 'NOT met'}, p99 ${p99Ratio <= 1.1 ? 'met' : 'NOT met'} (client), ${spRatio <= 1.1 ? 'met' : 'NOT met'} (service)`);
    console.log('  (b) latency to the frame');
    console.log(`      journal stamp -> arrival at a probe (${lat.length} events): p50 ${quantile(lat, 0.5).toFixed(1)} ms, p99 ${quantile(lat, 0.99).toFixed(1)} ms (ms resolution; includes the commit's fsync)`);
    console.log(`      commit durable -> published (${pub?.count ?? 0} batches, histogram buckets): p50 ${pubP50.toFixed(2)} ms, p99 ${pubP99.toFixed(2)} ms; target p99 < 5 ms ${quantile(lat, 0.99) < 5 || pubP99 < 5 ? 'met' : 'NOT met'}`);
    console.log('  (c) delivery');
    console.log(`      ${frames.toLocaleString('en-US')} frames (${(bytes / 1e6).toFixed(1)} MB) in ${b.run.elapsedS.toFixed(1)} s: ${(frames / b.run.elapsedS).toFixed(0)} frames/s; ${drops} dropped`);
    console.log(`      service CPU with subscribers ${b.cpuS.toFixed(2)} s vs ${((a.cpuS + a2.cpuS) / 2).toFixed(2)} s: ${((extraCpu / frames) * 1e6).toFixed(2)} µs per delivered frame`);
    // The machine's two cores, per window: what the service and this process (load generator, probes, readers) took.
    const cores = (w: Window, readersS = 0) =>
      `service ${(w.cpuS / w.run.elapsedS).toFixed(2)} + clients ${(w.clientCpuS / w.run.elapsedS).toFixed(2)}${readersS > 0 ? ` (of which readers ${(readersS / w.run.elapsedS).toFixed(2)})` : ''} = ${((w.cpuS + w.clientCpuS) / w.run.elapsedS).toFixed(2)} of ${availableParallelism()} cores`;
    console.log('  CPU of the windows (cores busy on average)');
    console.log(`      A  ${cores(a)}`);
    console.log(`      B  ${cores(b, readers1.cpuS - readers0.cpuS)}; readers read ${((readers1.bytes - readers0.bytes) / 1e6).toFixed(1)} MB, ${(((readers1.cpuS - readers0.cpuS) / frames) * 1e6).toFixed(2)} µs of reader CPU per frame`);
    console.log(`      A2 ${cores(a2)}`);

    console.log('  (d) memory per idle subscribed socket (measured first, on the fresh service)');
    // The service's heap moves by megabytes between two readings (GC): a figure below ~1 KiB per socket is
    // within that noise; 8 KiB per socket would be IDLE_SOCKETS x 8 KiB of growth, plainly visible.
    console.log(`      ${idle.open} sockets open; service RSS ${(idle.rss0 / 1024).toFixed(1)} -> ${(idle.rss1 / 1024).toFixed(1)} MiB: ${(idle.perSocket / 1024).toFixed(2)} KiB per socket (GC noise ~1 KiB); target <= 8 KiB ${idle.perSocket <= 8192 ? 'met' : 'NOT met'}`);
  } finally {
    for (const s of raw) s.destroy();
    await readers.terminate();
    for (const p of probes) p.close();
    await svc.stop('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
