/**
 * Trading end to end: signed, verified, durably committed orders per second through POST /order (one
 * order per request) and POST /orders (BATCH orders per request) over loopback HTTP, measured with the load tool (tools/load.ts) against the service run as `npm start` runs
 * it (child process, RATE_LIMITS=off, one shard, durable LMDB commits), and where the service's time goes.
 * Run alone: `npx tsx --expose-gc bench/trading/orders.bench.ts`; or `npm run bench -- trading` (which passes
 * --expose-gc: the load tool then collects the client's own heap before each window, see settleHeap).
 *
 * Workload (tools/load.ts, seeded): 50 wallets, 8 fresh markets (tick 0.01, no fees), the `mixed` order
 * stream: half GTC BUYs that rest, half complementary GTC BUY pairs that mint (outcome 0 at p, outcome 1
 * at 1 - p), all signed with the V2 order struct before timing.
 *   1. ceiling: bare native secp256k1 recovery (`recoverAddress`: parse + ecdsaRecover + keccak) on one
 *      core in this process for ~1 s, x os.availableParallelism(): no verified-order path can beat it
 *      (bench/edge/signatures.bench.ts measures the same). Measured before the service starts.
 *   2. flat out: FLAT_CONNECTIONS keep-alive connections each with one order in flight, for FLAT_SECONDS;
 *      rate = acknowledged orders / (first send .. last answer); latency from each send.
 *   3. fixed rate: open loop at FIXED_RATE orders/s for FIXED_SECONDS; latency from each order's due
 *      time (no coordinated omission).
 *   2b, 3b. the same two with POST /orders, BATCH orders of one wallet per request (DESIGN section 7): flat
 *      out over BATCH_CONNECTIONS connections, and open loop at FIXED_RATE orders/s (request q is due when
 *      its first order is, so an order waits up to (BATCH - 1) / FIXED_RATE in the client, and that wait is
 *      in the latency). Rates count orders; latency is per request (the time its BATCH orders take, from
 *      the send flat out, from its first order's due time open loop); every order's own result is checked.
 *   4. client cost: 1,000 orders/s for 3 s with each of the tool's transports (minimal HTTP/1.1 client,
 *      node:http keep-alive Agent, undici fetch): the client's CPU per order, which on a two-core machine
 *      is taken from the service.
 * Where a request's time goes at the fixed rate: the service's /metrics scraped before and after each
 * fixed-rate window (src/edge/pipeline/metrics.ts): per request its order checks (signature recovery, the pool's
 * queue included) and its time in the engine (the commit included), each journal transaction's commit,
 * the service's own arrival-to-answer time per request, and the main thread's GC pauses, which stop every
 * request in flight. Quantiles are estimated from the histograms' buckets (tools/metrics-text.ts).
 * Where the CPU time goes, two views:
 *   - per OS thread over the flat-out window, from /proc/<pid>/task/<tid>/schedstat: CPU time and time
 *     spent waiting for a CPU (run queue). Exact, and it shows when the machine, not the service, is the
 *     limit. Threads with write_bytes in /proc/<pid>/task/<tid>/io are LMDB's commits (only they write);
 *     how much reached the disks comes from /proc/diskstats (the io counter overstates it ~8x here);
 *   - a second service, run under `--cpu-prof` (V8's sampling profiler; its sampling threads cost about a
 *     tenth of a core, which is why the rates above come from a service without it), takes the same mix
 *     open loop at PROFILE_RATE for PROFILE_SECONDS; after SIGTERM every JS thread's profile is folded into
 *     stages: edge, HMAC, EIP-712 hashing, secp256k1 recovery, order checks + pool messaging, engine,
 *     journal/commit, projections, GC, runtime. Native threads (LMDB's commits and fsync on the libuv pool,
 *     V8 GC helpers) are invisible to V8 and appear only in the first view.
 *
 * Excluded from timing: service start, market creation, wallet funding, API keys, order signing and
 * serialization, connection set-up (connections are opened before the window), and the checks.
 *
 * Self-checks (a failure throws): zero errors in every run, every answer (every element of a batch's
 * answer) is the order's own digest with the amounts a fill at its price gives, and after each run the service's open orders, filled orders and
 * balances equal what the acknowledgements imply, with USDC conserved (tools/load.ts verifyLoad). Targets
 * (>= 10,000 orders/s flat out, p99 < 10 ms at 5,000/s, end-to-end >= 35% of the recovery ceiling) are
 * reported for both request shapes, not enforced: they depend on the machine and on what else it runs.
 * The per-thread view covers both flat-out windows; the per-stage view is of single-order requests.
 */
import { createRequire } from 'node:module';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { keccak256 } from 'viem';
import { orderDigestBytes, orderDomainSeparator, recoverAddress, type OrderStruct, type Secp256k1Recover } from '../../src/edge/auth/eip712.ts';
import { driveLoad, prepareLoad, verifyLoad, type LoadOptions, type RunStats, type Transport } from '../../tools/load.ts';
import { countAbove, histogramDelta, histogramOf, quantileOf, type Histogram } from '../../tools/metrics-text.ts';
import { cpuSeconds, startService, threadTimes, type ServiceProcess } from '../../tools/service-process.ts';

const FLAT_SECONDS = 6;
const FLAT_CONNECTIONS = 256;
const FIXED_RATE = 5000;
const FIXED_SECONDS = 6;
/** Orders per POST /orders request in the batch runs (the spec's maximum). */
const BATCH = 15;
/** A batch holds BATCH orders, so fewer connections keep as many orders in flight. */
const BATCH_CONNECTIONS = 32;
const PROFILE_RATE = 2000;
const PROFILE_SECONDS = 5;
const ADMIN_TOKEN = 'bench-trading-admin';

interface Secp extends Secp256k1Recover {
  publicKeyCreate(sk: Uint8Array, compressed: boolean): Uint8Array;
  ecdsaSign(msg32: Uint8Array, sk: Uint8Array): { signature: Uint8Array; recid: number };
}

/** Native recoveries per second on one core, in this thread. */
function recoveryRate(): number {
  const secp = createRequire(import.meta.url)('secp256k1/bindings.js') as Secp;
  const sep = orderDomainSeparator({ name: 'PM Exchange', version: '1', chainId: 31337001, verifyingContract: '0x00000000000000000000000000000000000e7c01' });
  const items = Array.from({ length: 256 }, (_, i) => {
    const sk = Buffer.alloc(32);
    sk.writeUInt32BE(0x2000 + i, 28);
    const addr = '0x' + keccak256(secp.publicKeyCreate(sk, false).subarray(1)).slice(-40);
    const s: OrderStruct = {
      salt: String(i + 1), maker: addr, signer: addr, tokenId: String(1000 + i), makerAmount: '4500000', takerAmount: '10000000',
      side: 0, signatureType: 0, timestamp: '1767225600000', metadata: '0x' + '0'.repeat(64), builder: '0x' + '0'.repeat(64),
    };
    const digest = Uint8Array.from(orderDigestBytes(s, sep));
    const { signature, recid } = secp.ecdsaSign(digest, sk);
    return { digest, sig: '0x' + Buffer.from(signature).toString('hex') + (27 + recid).toString(16), addr };
  });
  let k = 0;
  const round = () => {
    for (let j = 0; j < 64; j++) {
      const it = items[k++ & 255]!;
      if (recoverAddress(secp, it.digest, it.sig) !== it.addr) throw new Error('recovery self-check failed');
    }
  };
  round();
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < 1000) {
    round();
    n += 64;
  }
  return (n / (performance.now() - t0)) * 1000;
}

// ---- profile folding -----------------------------------------------------------------------------------

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

const STAGES = [
  'edge (uWS, routing, validation, JSON, metrics)',
  'HMAC (L2 auth)',
  'EIP-712 hashing (keccak)',
  'secp256k1 recovery',
  'order checks + worker messaging (signature pool)',
  'engine (sequencer, ledger, rings, matching)',
  'journal / commit (encoding, LMDB calls)',
  'projections',
  'GC',
  'runtime / other',
] as const;
type Stage = (typeof STAGES)[number];
/** Not per-order work: module loading and evaluation at start-up. Reported apart, excluded from the stage table. */
const STARTUP = 'start-up';
/** Not CPU work: the profiler's idle, and piscina's Atomics.wait loop (a blocked thread the sampler still sees in JS). */
const IDLE = 'idle';
type Class = Stage | typeof STARTUP | typeof IDLE;

/** A frame's own stage, or undefined when it belongs to its caller's (builtins, Node internals, other packages). */
function ownStage(fn: string, url: string): Class | undefined {
  if (fn === '(idle)' || fn === 'atomicsWaitLoop') return IDLE;
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(program)' || fn === '(root)') return 'runtime / other';
  if (url.startsWith('node:internal/modules') || url.includes('/tsx/') || url.includes('cjs-module-lexer')) return STARTUP;
  if (/ecdsaRecover/.test(fn) || url.includes('/secp256k1/')) return 'secp256k1 recovery';
  if (url.includes('/src/edge/auth/eip712.ts') || url.includes('/src/edge/auth/keccak.ts') || url.includes('/keccak/')) return 'EIP-712 hashing (keccak)';
  if (url.includes('/src/edge/auth/auth.ts') || url.includes('/src/edge/auth/credentials.ts') || url.includes('/src/edge/auth/api-keys.ts') || url.startsWith('node:internal/crypto')) return 'HMAC (L2 auth)';
  if (url.includes('/src/edge/auth/order-check.ts') || url.includes('/src/edge/auth/sig-') || url.includes('/piscina/') || url.startsWith('node:internal/worker') ||
      /^(MessageChannel|receiveMessageOnPort|postMessage)$/.test(fn)) {
    return 'order checks + worker messaging (signature pool)';
  }
  if (url.includes('/src/edge/') || url.includes('uWebSockets') || url.includes('prom-client') || url.includes('@sinclair/typebox')) return 'edge (uWS, routing, validation, JSON, metrics)';
  if (url.includes('/src/engine/') || url.includes('/src/domain/')) return 'engine (sequencer, ledger, rings, matching)';
  if (url.includes('/src/journal/') || url.includes('/lmdb/') || url.includes('msgpackr') || url.includes('ordered-binary')) return 'journal / commit (encoding, LMDB calls)';
  if (url.includes('/src/projections/') || url.includes('/src/queries/')) return 'projections';
  return undefined;
}

/** Stage of every node: its own, else its caller's; everything under module evaluation is start-up. */
function classify(p: CpuProfile): Map<number, Class> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const isChild = new Set(p.nodes.flatMap((n) => n.children ?? []));
  const out = new Map<number, Class>();
  const stack: Array<[number, Class]> = p.nodes.filter((n) => !isChild.has(n.id)).map((n) => [n.id, 'runtime / other']);
  while (stack.length > 0) {
    const [id, inherited] = stack.pop()!;
    const n = byId.get(id)!;
    const own = ownStage(n.callFrame.functionName, n.callFrame.url);
    const cls: Class = inherited === STARTUP ? STARTUP : (own ?? (inherited === IDLE ? 'runtime / other' : inherited));
    out.set(id, cls);
    for (const c of n.children ?? []) stack.push([c, cls]);
  }
  return out;
}

interface Folded {
  threads: Array<{ file: string; role: string; cpuMs: number; top: string }>;
  byStage: Map<Stage, number>;
  /** Sampled time the profiles saw outside idle, start-up included. */
  cpuMs: number;
  startupMs: number;
}

function foldProfiles(dir: string): Folded {
  const byStage = new Map<Stage, number>();
  const threads: Folded['threads'] = [];
  let cpuMs = 0;
  let startupMs = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
    const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const cls = classify(p);
    const mine = new Map<Stage, number>();
    let cpu = 0;
    let startup = 0;
    // A sample's time is the gap to the next sample.
    for (let i = 0; i + 1 < p.samples.length; i++) {
      const st = cls.get(p.samples[i]!) ?? 'runtime / other';
      if (st === IDLE) continue;
      const ms = p.timeDeltas[i + 1]! / 1000;
      cpu += ms;
      if (st === STARTUP) startup += ms;
      else mine.set(st, (mine.get(st) ?? 0) + ms);
    }
    for (const [st, ms] of mine) byStage.set(st, (byStage.get(st) ?? 0) + ms);
    const work = Math.max(1e-9, cpu - startup);
    const ranked = [...mine.entries()].sort((a, b) => b[1] - a[1]);
    const role = /\.0\.\d+\.cpuprofile$/.test(file)
      ? 'main'
      : (mine.get('secp256k1 recovery') ?? 0) > 0.2 * work
        ? 'signature worker'
        : (mine.get('engine (sequencer, ledger, rings, matching)') ?? 0) > 0.2 * work
          ? 'shard worker'
          : 'loader / helper';
    const top = ranked.slice(0, 3).map(([st, ms]) => `${st.split(' (')[0]} ${((ms / work) * 100).toFixed(0)}%`).join(', ');
    threads.push({ file, role, cpuMs: cpu, top: `${top}${startup > 0 ? `; start-up ${startup.toFixed(0)} ms` : ''}` });
    cpuMs += cpu;
    startupMs += startup;
  }
  return { threads, byStage, cpuMs, startupMs };
}

// ---- runs ----------------------------------------------------------------------------------------------

interface ThreadUse {
  tid: number;
  cpuMs: number;
  waitMs: number;
  writeBytes: number;
}

/**
 * Bytes written to block devices so far (/proc/diskstats, whole machine, sectors of 512 bytes). The
 * per-thread write_bytes of /proc/<pid>/task/<tid>/io is no measure of storage traffic here: it counted
 * ~3 GB for a 5 s run in which the disk received 379 MiB and LMDB's own pwrite/writev calls (strace)
 * carried ~2 KB per order.
 */
function deviceBytes(): number {
  try {
    let sectors = 0;
    for (const line of readFileSync('/proc/diskstats', 'utf8').split('\n')) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && /^(sd[a-z]+|vd[a-z]+|xvd[a-z]+|nvme\d+n\d+)$/.test(f[2]!)) sectors += Number(f[9]);
    }
    return sectors * 512;
  } catch {
    return NaN;
  }
}

interface Window {
  run: RunStats;
  /** Bytes the machine wrote to its disks over the window (the service's commits, plus anything else running). */
  deviceBytes: number;
  serviceCpuS: number;
  mainCpuS: number;
  /** Per OS thread over the window. */
  threads: ThreadUse[];
  /** The service's /metrics just before and just after the window. */
  metrics: { before: string; after: string };
}

async function measured(svc: ServiceProcess, opts: Omit<LoadOptions, 'url' | 'adminToken'>): Promise<Window> {
  const session = await prepareLoad({ url: svc.url, adminToken: ADMIN_TOKEN, wallets: 50, markets: 8, mix: 'mixed', progress: false, log: () => undefined, ...opts });
  const c0 = cpuSeconds(svc.pid) ?? NaN;
  const m0 = cpuSeconds(svc.pid, svc.pid) ?? NaN;
  const t0 = threadTimes(svc.pid);
  const d0 = deviceBytes();
  const scrape = async () => (await fetch(`${svc.url}/metrics`)).text();
  const before = await scrape();
  const run = await driveLoad(session);
  const after = await scrape();
  const t1 = threadTimes(svc.pid);
  const written = deviceBytes() - d0;
  const serviceCpuS = (cpuSeconds(svc.pid) ?? NaN) - c0;
  const mainCpuS = (cpuSeconds(svc.pid, svc.pid) ?? NaN) - m0;
  const threads = [...t1].map(([tid, b]) => {
    const a = t0.get(tid) ?? { cpuMs: 0, waitMs: 0, writeBytes: 0 };
    return { tid, cpuMs: b.cpuMs - a.cpuMs, waitMs: b.waitMs - a.waitMs, writeBytes: b.writeBytes - a.writeBytes };
  });
  if (run.errors > 0) throw new Error(`trading bench self-check: ${run.errors} errors: ${JSON.stringify(run.errorClasses)}`);
  const check = await verifyLoad(session, run);
  if (!check.ok) throw new Error(`trading bench self-check: the service disagrees with its acknowledgements:\n${check.problems.join('\n')}`);
  return { run, serviceCpuS, mainCpuS, threads, deviceBytes: written, metrics: { before, after } };
}

/** Where a fixed-rate window's requests spent their time, from the service's histograms. */
function stageRows(w: Window, route: string): Array<Record<string, string>> {
  const over = (name: string, labels: Record<string, string> = {}): Histogram | undefined => {
    const a = histogramOf(w.metrics.after, name, labels);
    return a === undefined ? undefined : histogramDelta(a, histogramOf(w.metrics.before, name, labels));
  };
  const ms = (s: number) => (Number.isNaN(s) ? 'n/a' : `${(s * 1000).toFixed(2)} ms`);
  const row = (stage: string, h: Histogram | undefined, what: string) =>
    h === undefined || h.count === 0
      ? { stage, count: '0', p50: 'n/a', p99: 'n/a', mean: 'n/a', note: what }
      : { stage, count: h.count.toLocaleString('en-US'), p50: ms(quantileOf(h, 0.5)), p99: ms(quantileOf(h, 0.99)), mean: ms(h.sum / h.count), note: what };
  const minor = over('nodejs_gc_duration_seconds', { kind: 'minor' });
  const major = over('nodejs_gc_duration_seconds', { kind: 'major' });
  const gcNote = (h: Histogram | undefined) =>
    h === undefined ? 'none' : `${(h.count / w.run.elapsedS).toFixed(1)}/s, ${countAbove(h, 0.004)} longer than 4 ms, ${(h.sum * 1000).toFixed(0)} ms in all`;
  return [
    { stage: 'client: request, from its due time', count: w.run.requests.toLocaleString('en-US'), p50: ms(w.run.latencyMs.p50 / 1000), p99: ms(w.run.latencyMs.p99 / 1000), mean: 'n/a', note: 'what the targets are about (exact, not from buckets)' },
    row(`service: POST ${route}, arrival to answer`, over('http_request_duration_seconds', { method: 'POST', route }), 'the edge timer; its buckets are coarse (5, 10, 25 ms)'),
    row('  order checks', over('order_stage_duration_seconds', { stage: 'checks' }), 'HMAC done; schema, EIP-712, secp256k1 in the signature pool, its queue included'),
    row('  engine', over('order_stage_duration_seconds', { stage: 'engine' }), 'sequencer, shard, journal; waits for the commit'),
    row('journal commit (per transaction)', over('journal_commit_duration_seconds'), 'group commit: puts to durable on disk'),
    row('main-thread GC: scavenges', minor, gcNote(minor)),
    row('main-thread GC: mark-compact', major, gcNote(major)),
  ];
}

function pressure(): string {
  try {
    return readFileSync('/proc/pressure/cpu', 'utf8').split('\n')[0]!.replace('some ', '');
  } catch {
    return 'n/a';
  }
}

async function withService<T>(nodeFlags: string[], fn: (svc: ServiceProcess) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-bench-trading-'));
  const svc = await startService({ dataDir, adminToken: ADMIN_TOKEN, env: { RATE_LIMITS: 'off' }, nodeFlags });
  try {
    const out = await fn(svc);
    const code = await svc.stop('SIGTERM', 60_000);
    if (code !== 0) throw new Error(`service exited with ${code} on SIGTERM:\n${svc.tail()}`);
    return out;
  } finally {
    await svc.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export default async function run(): Promise<void> {
  const cores = availableParallelism();
  const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  const machine = `${cores} cores, Node ${process.versions.node}, load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}, CPU pressure ${pressure()}`;

  const perCore = recoveryRate();
  const ceiling = perCore * cores;

  // Rates and latency on a service without the profiler (its sampling threads cost about a tenth of a core).
  const { flat, fixed, flatBatch, fixedBatch, clients, servicePid } = await withService([], async (svc) => {
    const flat = await measured(svc, { flatOut: true, duration: FLAT_SECONDS, connections: FLAT_CONNECTIONS, maxOrders: 14_000 * FLAT_SECONDS });
    const fixed = await measured(svc, { rate: FIXED_RATE, duration: FIXED_SECONDS, connections: 256 });
    const flatBatch = await measured(svc, { flatOut: true, duration: FLAT_SECONDS, connections: BATCH_CONNECTIONS, batch: BATCH, maxOrders: 14_000 * FLAT_SECONDS });
    const fixedBatch = await measured(svc, { rate: FIXED_RATE, duration: FIXED_SECONDS, connections: BATCH_CONNECTIONS, batch: BATCH });
    const clients: Array<{ transport: Transport; cpu: number; rate: number }> = [];
    for (const transport of ['raw', 'http', 'fetch'] as const) {
      const w = await measured(svc, { rate: 1000, duration: 3, connections: 32, transport, wallets: 10, markets: 2 });
      clients.push({ transport, cpu: w.run.clientCpuUsPerOrder, rate: w.run.ordersPerSec });
    }
    return { flat, fixed, flatBatch, fixedBatch, clients, servicePid: svc.pid };
  });

  // The stage breakdown, from a second service under --cpu-prof running the same mix at a steady rate.
  const profDir = mkdtempSync(join(tmpdir(), 'pm-bench-trading-prof-'));
  let folded: Folded;
  let profiled: Window;
  try {
    profiled = await withService(['--cpu-prof', `--cpu-prof-dir=${profDir}`], (svc) => measured(svc, { rate: PROFILE_RATE, duration: PROFILE_SECONDS, connections: 256 }));
    folded = foldProfiles(profDir);
  } finally {
    rmSync(profDir, { recursive: true, force: true });
  }

  const share = (flat.run.ordersPerSec / ceiling) * 100;
  const shareBatch = (flatBatch.run.ordersPerSec / ceiling) * 100;
  const mainWait = flat.threads.find((t) => t.tid === servicePid)?.waitMs ?? NaN;
  const settled = fixedBatch.run.heapSettled ? 'client heap collected before each window' : 'client heap NOT collected before the windows (run with --expose-gc): its GC pauses count as latency';
  console.log(`trading end to end (${machine}; ${settled})`);
  console.table([
    { measure: `native recovery x ${cores} cores (ceiling)`, value: `${fmt(ceiling)}/s`, note: `${fmt(perCore)}/s on one core`, target: '' },
    {
      measure: `single orders: flat out, ${FLAT_CONNECTIONS} connections, ${FLAT_SECONDS} s`,
      value: `${fmt(flat.run.ordersPerSec)}/s`,
      note: `${fmt(flat.run.acked)} orders; p50 ${flat.run.latencyMs.p50.toFixed(1)} ms, p99 ${flat.run.latencyMs.p99.toFixed(1)} ms from send${flat.run.ranOut ? '; ran out of orders' : ''}`,
      target: `>= 10,000/s: ${flat.run.ordersPerSec >= 10_000 ? 'met' : 'NOT met'}`,
    },
    { measure: 'single orders: flat out as a share of the ceiling', value: `${share.toFixed(0)}%`, note: '', target: `>= 35%: ${share >= 35 ? 'met' : 'NOT met'}` },
    {
      measure: `single orders: open loop at ${fmt(FIXED_RATE)}/s, ${FIXED_SECONDS} s`,
      value: `p50 ${fixed.run.latencyMs.p50.toFixed(2)} ms, p99 ${fixed.run.latencyMs.p99.toFixed(2)} ms`,
      note: `achieved ${fmt(fixed.run.ordersPerSec)}/s; p99.9 ${fixed.run.latencyMs.p999.toFixed(1)} ms, max ${fixed.run.latencyMs.max.toFixed(1)} ms`,
      target: `p99 < 10 ms: ${fixed.run.latencyMs.p99 < 10 ? 'met' : 'NOT met'}`,
    },
    {
      measure: 'service CPU per order, flat out, single orders',
      value: `${fmt((flat.serviceCpuS / flat.run.acked) * 1e6)} µs`,
      note: `all threads; main thread ${fmt((flat.mainCpuS / flat.run.acked) * 1e6)} µs, busy ${((flat.mainCpuS / flat.run.elapsedS) * 100).toFixed(0)}% of the window, waiting for a CPU ${((mainWait / 1000 / flat.run.elapsedS) * 100).toFixed(0)}%`,
      target: '',
    },
    {
      measure: `batches of ${BATCH}: flat out, ${BATCH_CONNECTIONS} connections, ${FLAT_SECONDS} s`,
      value: `${fmt(flatBatch.run.ordersPerSec)}/s`,
      note:
        `${fmt(flatBatch.run.acked)} orders in ${fmt(flatBatch.run.requests)} requests; per request p50 ${flatBatch.run.latencyMs.p50.toFixed(1)} ms, ` +
        `p99 ${flatBatch.run.latencyMs.p99.toFixed(1)} ms from send; ${shareBatch.toFixed(0)}% of the ceiling${flatBatch.run.ranOut ? '; ran out of orders' : ''}`,
      target: `>= 10,000/s: ${flatBatch.run.ordersPerSec >= 10_000 ? 'met' : 'NOT met'}`,
    },
    {
      measure: `batches of ${BATCH}: open loop at ${fmt(FIXED_RATE)} orders/s, ${FIXED_SECONDS} s`,
      value: `p50 ${fixedBatch.run.latencyMs.p50.toFixed(2)} ms, p99 ${fixedBatch.run.latencyMs.p99.toFixed(2)} ms`,
      note: `per request, from its first order's due time; achieved ${fmt(fixedBatch.run.ordersPerSec)}/s; p99.9 ${fixedBatch.run.latencyMs.p999.toFixed(1)} ms, max ${fixedBatch.run.latencyMs.max.toFixed(1)} ms`,
      target: `p99 < 10 ms: ${fixedBatch.run.latencyMs.p99 < 10 ? 'met' : 'NOT met'}`,
    },
    {
      measure: `service CPU per order, flat out, batches of ${BATCH}`,
      value: `${fmt((flatBatch.serviceCpuS / flatBatch.run.acked) * 1e6)} µs`,
      note: `all threads; main thread ${fmt((flatBatch.mainCpuS / flatBatch.run.acked) * 1e6)} µs; client ${flatBatch.run.clientCpuUsPerOrder.toFixed(1)} µs per order (single orders: ${flat.run.clientCpuUsPerOrder.toFixed(1)} µs)`,
      target: '',
    },
    ...clients.map((c) => ({ measure: `client CPU per order, transport ${c.transport}`, value: `${c.cpu.toFixed(1)} µs`, note: `open loop at ${fmt(c.rate)}/s`, target: '' })),
  ]);

  for (const [name, w, route] of [['single orders', fixed, '/order'], [`batches of ${BATCH}`, fixedBatch, '/orders']] as const) {
    console.log(`where a request's time goes, ${name}, open loop at ${fmt(FIXED_RATE)} orders/s (the service's /metrics over the window; p50/p99 estimated from histogram buckets)`);
    console.table(stageRows(w, route));
  }

  // Exact CPU per OS thread over each flat-out window (/proc). Node names no thread; the main thread is the
  // process id, LMDB's commits run on libuv pool threads (the only ones that write to storage), and the V8
  // profiles below say what the JS threads (signature workers, shard) do.
  const label = (t: ThreadUse) =>
    t.tid === servicePid ? 'main: edge, HMAC, order checks, sequencer, journal encoding' : t.writeBytes > 0 ? `tid ${t.tid}: LMDB commit (libuv pool)` : `tid ${t.tid}`;
  for (const [name, w] of [['single orders', flat], [`batches of ${BATCH}`, flatBatch]] as const) {
    const big = w.threads.filter((t) => t.cpuMs >= 0.02 * w.serviceCpuS * 1000).sort((a, b) => b.cpuMs - a.cpuMs);
    const rest = w.threads.filter((t) => !big.includes(t));
    console.log(
      `service threads over the flat-out window, ${name} (${fmt(w.run.elapsedS, 2)} s, ${fmt(w.run.acked)} orders; /proc schedstat and io); ` +
        `disks written over the window: ${fmt(w.deviceBytes / 2 ** 20, 1)} MiB, ${fmt(w.deviceBytes / w.run.acked / 1024, 1)} KB per order (/proc/diskstats, whole machine)`,
    );
    console.table([
      ...big.map((t) => ({ thread: label(t), 'CPU ms': fmt(t.cpuMs), 'µs per order': ((t.cpuMs * 1000) / w.run.acked).toFixed(1), 'waited for a CPU, ms': fmt(t.waitMs) })),
      {
        thread: `${rest.length} other threads`,
        'CPU ms': fmt(rest.reduce((a, t) => a + t.cpuMs, 0)),
        'µs per order': ((rest.reduce((a, t) => a + t.cpuMs, 0) * 1000) / w.run.acked).toFixed(1),
        'waited for a CPU, ms': fmt(rest.reduce((a, t) => a + t.waitMs, 0)),
      },
    ]);
  }

  // V8 sampling profiles of every JS thread of the profiled service, start-up and idle excluded. Sampled time
  // is time running or runnable in that code (on a crowded machine, waiting for a CPU counts where it
  // happened), so the shares are what to read; native threads (LMDB commits, V8 GC helpers) appear only above.
  const rows = STAGES.map((st) => ({ stage: st, ms: folded.byStage.get(st) ?? 0 })).filter((r) => r.ms > 0);
  const totalMs = rows.reduce((a, r) => a + r.ms, 0);
  const orders = profiled.run.acked;
  console.log(
    `where the JS threads spend their time (profiled service, open loop at ${fmt(PROFILE_RATE)}/s for ${PROFILE_SECONDS} s, achieved ${fmt(profiled.run.ordersPerSec)}/s; ` +
      `${fmt(totalMs / 1000, 1)} s sampled, ${fmt(folded.startupMs / 1000, 1)} s of start-up excluded)`,
  );
  console.table(rows.sort((a, b) => b.ms - a.ms).map((r) => ({ stage: r.stage, share: `${((r.ms / totalMs) * 100).toFixed(1)}%`, 'sampled µs per order': ((r.ms * 1000) / orders).toFixed(1) })));
  console.table(folded.threads.map((t) => ({ 'JS thread': t.file.replace(/^CPU\.\d+\.\d+\./, '').replace('.cpuprofile', ''), role: t.role, 'sampled ms': fmt(t.cpuMs), where: t.top })));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
