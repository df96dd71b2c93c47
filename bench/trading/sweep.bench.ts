/**
 * The order path's rate sweep and its floor (issue 32): what one acknowledged order costs the service at
 * 100 orders/s, 1,000/s and flat out, single and batched, against a floor prototype measured in the same
 * run. Run alone: `npx tsx --expose-gc bench/trading/sweep.bench.ts` (about 2.5 minutes); or
 * `npm run bench -- sweep`. Versions mode (SWEEP_BASE, below) compares two checkouts.
 *
 * Services. The service as `npm start` runs it (tools/service-process.ts: npm start's node flags,
 * RATE_LIMITS=off, one shard, durable LMDB commits), twice: journal on the disk (os.tmpdir(), or
 * SWEEP_DISK_DIR; refused when that is a tmpfs) and on /dev/shm (tmpfs: the same work without the disk's
 * fsync; SWEEP_TMPFS=0 leaves it out). Beside them the floor prototype (bench/trading/floor/server.ts, its
 * header says what it does: uWS, JSON.parse, HMAC, EIP-712 digest and one native recovery on the receiving
 * thread, one worker round trip, one LMDB put per order awaited until durable, the answer), journal on
 * the disk, started the same way. All three run for the whole sweep; only the one in its window has traffic.
 *
 * Workload (tools/load.ts, seeded; a fresh session per window): 10 wallets, 2 fresh markets, the `mixed`
 * stream (half GTC BUYs that rest, half complementary pairs that cross and mint), every order signed
 * before its window. Windows, rate by rate; at each, the disk service, the floor and the tmpfs service in
 * turn, the order reversed from one rate to the next:
 *   single orders (POST /order): open loop at 100/s for 6 s (8 connections), 1,000/s for 5 s (32),
 *     5,000/s for 4 s (256; the p99 goal; the floor skips it), flat out for 5 s (256 connections, one
 *     request in flight on each; it pre-signs more orders than this machine sends in the window, and a
 *     window that runs out anyway ends early and says so: its figures per order still hold);
 *   batches of 15 (POST /orders, one wallet's orders per request): open loop at 100 and 1,000 orders/s
 *     (a request is due when its first order is, so an order waits up to 14/rate in the client, and that
 *     wait is in the latency) and flat out (32 connections); the tmpfs service skips these.
 * Open loop, latency runs from each request's due time (no coordinated omission); flat out, from its send.
 * The floor's windows are prepared against the disk service (its wallets, keys and signed orders) and then
 * driven at the floor, which is handed the keys and the order domain first (POST /setup).
 *
 * Measured per window, per process, from /proc (tools/service-process.ts threadCounters), between two
 * snapshots around the load tool's window (driveLoad):
 *   - CPU per acknowledged order above idle: schedstat run time of every thread, less each thread's idle
 *     rate (measured over IDLE_SECONDS on the quiet process after a warm-up) times the window's length,
 *     over the orders acknowledged (orders, not requests, in batch windows). The acknowledged count is cross-checked against the service's own
 *     (engine_orders_accepted, and http_requests_total of the route with status 200 per request).
 *   - per thread role: Node names no thread (every /proc/.../comm reads `node`), so roles are told apart
 *     by what the kernel shows of each thread at rest: main is the thread whose id is the pid; Node's
 *     worker threads have 4 MiB stacks (the mapping that holds the stack pointer, /proc/.../syscall and
 *     maps) and of those piscina's signature threads wait in futex (Atomics.wait) while the shard's (the
 *     floor's echo worker's) event loop waits in epoll; tsx's loader threads are event loops too and sit
 *     idle after start, so they add nothing to the worker row. Other threads waiting in futex are the libuv
 *     pool when they have written (lmdb-js commits and fsyncs there) and V8's platform threads (GC helpers,
 *     compiler) when they have not; the rest (Node's delayed-task loop, signal thread) is `other`. The
 *     sweep refuses to run when the service shows no main, signature, worker or libuv thread this way.
 *   - wake-ups: voluntary context switches per order (a thread that blocks in futex, epoll or fsync and
 *     is woken), and involuntary ones (preempted: a crowded machine), per role, above idle.
 *   - system calls per order, per role, above idle: `perf stat -e raw_syscalls:sys_enter --per-thread -p`
 *     attached for the window (linux-perf; SWEEP_SYSCALLS=0 turns it off). The tracepoint costs the
 *     traced process about 0.5 µs per system call on this VM (measured: a tight fstat loop, 0.77 -> 1.24
 *     µs), i.e. 1-2% of the CPU figures here (5-75 system calls per order); the floor pays the same.
 *     Without perf, the column falls back to /proc's read+write syscall counters (syscr + syscw), marked.
 *   - LMDB commits per order (the service's journal_commit_duration_seconds count; the floor's own count
 *     of distinct transactions) and the commit stalls: commits slower than 20 ms from puts to durable, and
 *     the slowest (the histogram's bucket for the service: STAGE_BUCKETS of src/edge/pipeline/metrics.ts; exact for
 *     the floor).
 *   - client p50/p99 (exact, from the load tool; per request in batch windows), the run-queue wait of the
 *     process's threads per order (schedstat; large when the machine is crowded), and the machine's
 *     1-minute load average at the end of the window.
 * Goals (issue 32; reported, not enforced: they depend on the machine and on what else it runs): CPU per
 * order <= 1.5 ms at 100/s, <= 500 µs at 1,000/s, <= 150 µs flat out, and within 1.25x of the floor's
 * at the same rate (the `x floor` column: the disk service over the floor, batches shown too, unjudged);
 * latency p50 <= 2.5 ms at 100/s and <= 1.5 ms at 1,000/s, p99 <= 10 ms at 1,000/s and <= 25 ms at 5,000/s,
 * single orders, journal on the disk.
 *
 * Excluded from timing and from the CPU figures: process start, the warm-up (1,000/s of single orders for
 * WARM_S, SWEEP_WARM_S, default 10 s, and of batches for 2 s per process; see warmUp), market creation, wallet funding, API keys, order signing and
 * serialization, the checks, /metrics scrapes (taken outside the snapshots), and SETTLE_MS between a
 * window's preparation and its first snapshot (perf attaches meanwhile). Inside them, and small: the load
 * tool's connection warm-up (one GET /time per connection) and its 20 ms lead before the first send.
 *
 * Self-checks (a failure throws): zero errors in every window (every answer is the order's own digest,
 * status and amounts, checked by the load tool); for the service after each window the load tool's
 * verifyLoad (open orders, balances and fills equal what the acknowledgements imply, USDC conserved) and
 * the service's own counts of accepted orders and 200 answers equal the client's; for the floor, the
 * orders it committed durably equal those acknowledged; each process exits 0 on SIGTERM at the end.
 *
 * Versions mode: SWEEP_BASE=/path/to/checkout runs the disk service of that checkout (A) and of this one
 * (B), both started (and warmed up, and their idle measured) before the first window, over the single and
 * batch windows at 100/s, 1,000/s and flat out, SWEEP_ROUNDS rounds (default 3; about 1.5 minutes a round),
 * windows interleaved (each kind alternates which version goes first from round to round); it prints per window kind each version's medians over rounds and
 * the median of the per-round B/A ratios. SWEEP_TMPFS=1 puts both journals on /dev/shm. A base checkout:
 *   git archive <commit> | tar -x -C /tmp/pm-base && ln -s "$PWD/node_modules" /tmp/pm-base/
 *   SWEEP_BASE=/tmp/pm-base npx tsx --expose-gc bench/trading/sweep.bench.ts
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { driveLoad, prepareLoad, verifyLoad, type LoadSession, type RunStats } from '../../tools/load.ts';
import { histogramDelta, histogramOf, sampleOf, type Histogram } from '../../tools/metrics-text.ts';
import { startService, threadCounters, type ServiceProcess, type ThreadCounters } from '../../tools/service-process.ts';

const ADMIN_TOKEN = 'bench-sweep-admin';
const WALLETS = 10;
const MARKETS = 2;
const BATCH = 15;
const IDLE_SECONDS = 3;
/** Seconds of single orders at 1,000/s that warm each process before its idle is measured (warmUp). */
const WARM_S = Number(process.env.SWEEP_WARM_S ?? 10);
/** A commit slower than this, puts to durable, is a stall (a bucket bound of the service's histogram). */
const STALL_S = 0.02;
const FLOOR_GOAL = 1.25;

// ---- windows ---------------------------------------------------------------------------------------------

interface Spec {
  key: string;
  batch: number;
  /** Orders per second; undefined: flat out. */
  rate: number | undefined;
  seconds: number;
  connections: number;
  /** 100/s, 1,000/s or flat out: the floor runs it too, and versions mode runs only these. */
  core: boolean;
  /** Goals of a single-order window with the journal on the disk. */
  cpuGoalUs?: number;
  latencyGoals?: Array<{ q: 'p50' | 'p99'; ms: number }>;
}

const SPECS: Spec[] = [
  { key: '1 order · 100/s', batch: 1, rate: 100, seconds: 6, connections: 8, core: true, cpuGoalUs: 1500, latencyGoals: [{ q: 'p50', ms: 2.5 }] },
  { key: '1 order · 1,000/s', batch: 1, rate: 1000, seconds: 5, connections: 32, core: true, cpuGoalUs: 500, latencyGoals: [{ q: 'p50', ms: 1.5 }, { q: 'p99', ms: 10 }] },
  { key: '1 order · 5,000/s', batch: 1, rate: 5000, seconds: 4, connections: 256, core: false, latencyGoals: [{ q: 'p99', ms: 25 }] },
  { key: '1 order · flat out', batch: 1, rate: undefined, seconds: 5, connections: 256, core: true, cpuGoalUs: 150 },
  { key: `${BATCH} orders · 100/s`, batch: BATCH, rate: 100, seconds: 6, connections: 8, core: true },
  { key: `${BATCH} orders · 1,000/s`, batch: BATCH, rate: 1000, seconds: 5, connections: 16, core: true },
  { key: `${BATCH} orders · flat out`, batch: BATCH, rate: undefined, seconds: 5, connections: 32, core: true },
];
/**
 * Orders pre-signed per second of a flat-out window, by process kind and single/batch: above what this
 * machine reaches. A window that runs out ends early and says so; its figures per order still hold.
 */
const FLAT_ORDERS_PER_S = { service: [10_000, 14_000], floor: [16_000, 18_000] } as const;
/** Between a window's preparation and its first snapshot: perf attaches, the setup's commits settle. */
const SETTLE_MS = 300;

// ---- thread roles --------------------------------------------------------------------------------------

const ROLES = ['main', 'sig', 'worker', 'lmdb', 'v8', 'other'] as const;
type Role = (typeof ROLES)[number];
const ROLE_NAMES: Record<Role, string> = {
  main: 'main thread',
  sig: 'signature pool (piscina)',
  worker: 'worker event loops (the shard; the floor: its echo worker)',
  lmdb: 'libuv pool (LMDB commits and fsync)',
  v8: "V8 platform (GC helpers, compiler)",
  other: "other (Node's helper loops)",
};

/** System call numbers a thread at rest waits in, per architecture. */
const WAITS: Record<string, { futex: number[]; epoll: number[] }> = {
  x64: { futex: [202], epoll: [232, 281, 441] },
  arm64: { futex: [98], epoll: [22, 441] },
};
/** Node gives each worker thread a 4 MiB stack (Worker::kStackSize); nothing else in the process has one. */
const WORKER_STACK = 4 * 1024 * 1024;

/** What a thread does at rest: the system call it waits in and the size of the mapping its stack is in. */
interface Rest {
  wait: 'futex' | 'epoll' | 'other';
  stackBytes: number;
}

/** Each thread's rest, read while the process is quiet (a thread caught running is read again). */
async function restOf(pid: number): Promise<Map<number, Rest>> {
  const waits = WAITS[process.arch];
  const out = new Map<number, Rest>();
  const maps = readFileSync(`/proc/${pid}/maps`, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [a, b] = l.slice(0, l.indexOf(' ')).split('-').map((x) => BigInt('0x' + x));
      return { a: a!, b: b! };
    });
  for (const t of readdirSync(`/proc/${pid}/task`).map(Number)) {
    for (let attempt = 0; attempt < 40; attempt++) {
      let fields: string[];
      try {
        fields = readFileSync(`/proc/${pid}/task/${t}/syscall`, 'utf8').trim().split(' ');
      } catch {
        break;
      }
      if (fields[0] === 'running' || fields.length < 3) {
        await new Promise((r) => setTimeout(r, 5));
        continue;
      }
      const nr = Number(fields[0]);
      const sp = BigInt(fields[fields.length - 2]!);
      const m = maps.find((x) => x.a <= sp && sp < x.b);
      const wait = waits === undefined ? 'other' : waits.futex.includes(nr) ? 'futex' : waits.epoll.includes(nr) ? 'epoll' : 'other';
      out.set(t, { wait, stackBytes: m === undefined ? 0 : Number(m.b - m.a) });
      break;
    }
  }
  return out;
}

/** The role of thread `tid` (module header); `c` its counters so far (a libuv thread has written). */
function roleOf(pid: number, tid: number, rest: Rest | undefined, c: ThreadCounters | undefined): Role {
  if (tid === pid) return 'main';
  if (rest === undefined) return 'other';
  if (Math.abs(rest.stackBytes - WORKER_STACK) < 256 * 1024) return rest.wait === 'futex' ? 'sig' : rest.wait === 'epoll' ? 'worker' : 'other';
  if (rest.wait === 'futex' && rest.stackBytes > 64 * 1024) return (c?.syscw ?? 0) >= 10 ? 'lmdb' : 'v8';
  return 'other';
}

// ---- system calls (perf) -------------------------------------------------------------------------------

/** Why perf cannot count system calls here, or undefined when it can. */
function perfUnusable(): string | undefined {
  if (process.env.SWEEP_SYSCALLS === '0') return 'SWEEP_SYSCALLS=0';
  const r = spawnSync('perf', ['stat', '-x,', '-e', 'raw_syscalls:sys_enter', '--', 'true'], { encoding: 'utf8' });
  if (r.error !== undefined) return `perf: ${(r.error as NodeJS.ErrnoException).code ?? r.error.message} (Debian: apt-get install linux-perf)`;
  const line = r.stderr.split('\n').find((l) => l.includes('raw_syscalls:sys_enter'));
  const n = Number(line?.split(',')[0]);
  return Number.isFinite(n) && n > 0 ? undefined : `perf stat cannot count raw_syscalls:sys_enter: ${r.stderr.trim().split('\n').slice(-2).join(' ')}`;
}

interface SyscallCount {
  byTid: Map<number, number>;
  /** From perf's start to the signal that stopped it. */
  wallS: number;
}

/** perf stat attached to every thread of `pid` until stop(); resolves once it has had time to attach. */
async function countSyscalls(pid: number): Promise<{ stop(): Promise<SyscallCount> }> {
  const t0 = performance.now();
  const perf = spawn('perf', ['stat', '-x,', '--per-thread', '-e', 'raw_syscalls:sys_enter', '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  perf.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<void>((r) => perf.once('exit', () => r()));
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  if (perf.exitCode !== null) throw new Error(`perf stat exited at once: ${err.trim()}`);
  return {
    async stop() {
      const wallS = (performance.now() - t0) / 1000;
      perf.kill('SIGINT');
      await exited;
      const byTid = new Map<number, number>();
      for (const line of err.split('\n')) {
        const f = line.split(',');
        if (f[3] !== 'raw_syscalls:sys_enter') continue;
        const tid = Number(f[0]!.slice(f[0]!.lastIndexOf('-') + 1));
        // `<not counted>`: the thread did not run while perf watched.
        byTid.set(tid, Number(f[1]) || 0);
      }
      if (byTid.size === 0) throw new Error(`perf stat printed no counts: ${err.trim().slice(0, 300)}`);
      return { byTid, wallS };
    },
  };
}

// ---- processes -----------------------------------------------------------------------------------------

interface Usage {
  cpuMs: number;
  waitMs: number;
  voluntary: number;
  involuntary: number;
  /** read+write system calls (/proc io). */
  rw: number;
  /** All system calls (perf); NaN without perf. */
  syscalls: number;
}
const ZERO: Usage = { cpuMs: 0, waitMs: 0, voluntary: 0, involuntary: 0, rw: 0, syscalls: 0 };
const add = (a: Usage, b: Usage): Usage => ({
  cpuMs: a.cpuMs + b.cpuMs,
  waitMs: a.waitMs + b.waitMs,
  voluntary: a.voluntary + b.voluntary,
  involuntary: a.involuntary + b.involuntary,
  rw: a.rw + b.rw,
  syscalls: a.syscalls + b.syscalls,
});
const scale = (a: Usage, k: number): Usage => ({
  cpuMs: a.cpuMs * k,
  waitMs: a.waitMs * k,
  voluntary: a.voluntary * k,
  involuntary: a.involuntary * k,
  rw: a.rw * k,
  syscalls: a.syscalls * k,
});
const counted = (c: ThreadCounters | undefined, syscalls: number): Usage =>
  c === undefined ? { ...ZERO, syscalls } : { cpuMs: c.cpuMs, waitMs: c.waitMs, voluntary: c.voluntary, involuntary: c.involuntary, rw: c.syscr + c.syscw, syscalls };
const minus = (a: Usage, b: Usage): Usage => add(a, scale(b, -1));

interface Proc {
  name: string;
  kind: 'service' | 'floor';
  svc: ServiceProcess;
  dataDir: string;
  /** Where the journal is: the file system type of dataDir. */
  fs: string;
  rest: Map<number, Rest>;
  /** Per thread, per second at rest. */
  idle: Map<number, Usage>;
  idleCpuMsPerS: number;
}

/** The file system type of the mount that holds `path` (/proc/self/mounts, longest mount point). */
function fsType(path: string): string {
  let best = { at: '', type: 'unknown' };
  for (const line of readFileSync('/proc/self/mounts', 'utf8').split('\n')) {
    const [, at, type] = line.split(' ');
    if (at === undefined || type === undefined) continue;
    if ((path === at || path.startsWith(at.endsWith('/') ? at : at + '/')) && at.length >= best.at.length) best = { at, type };
  }
  return best.type;
}

const MEMORY_FS = ['tmpfs', 'ramfs'];

async function start(name: string, kind: Proc['kind'], parent: string, root?: string): Promise<Proc> {
  const dataDir = mkdtempSync(join(parent, `pm-sweep-${name}-`));
  try {
    const svc = await startService({
      dataDir,
      adminToken: ADMIN_TOKEN,
      env: { RATE_LIMITS: 'off' },
      startTimeoutMs: 120_000,
      ...(root === undefined ? {} : { root }),
      ...(kind === 'floor' ? { entry: 'bench/trading/floor/server.ts' } : {}),
    });
    return { name, kind, svc, dataDir, fs: fsType(resolve(dataDir)), rest: new Map(), idle: new Map(), idleCpuMsPerS: 0 };
  } catch (e) {
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
}

async function stopAll(procs: readonly Proc[], check: boolean): Promise<void> {
  const problems: string[] = [];
  for (const p of procs) {
    const code = await p.svc.stop('SIGTERM', 60_000);
    if (code !== 0) problems.push(`${p.name} exited with ${code} on SIGTERM:\n${p.svc.tail()}`);
    await p.svc.stop('SIGKILL');
    rmSync(p.dataDir, { recursive: true, force: true });
  }
  if (check && problems.length > 0) throw new Error(`sweep bench self-check: ${problems.join('\n')}`);
}

const scrape = async (p: Proc) => (await fetch(`${p.svc.url}/metrics`)).text();

interface FloorStats {
  orders: number;
  commits: number;
  over20ms: number;
  longestMs: number;
}
const floorStats = async (p: Proc) => (await (await fetch(`${p.svc.url}/stats`)).json()) as FloorStats;

/** Per-thread usage of the quiet process over IDLE_SECONDS, per second. */
/**
 * The idle rate: the quietest of IDLE_SECONDS one-second slices, per thread. A quiet service still runs timers
 * (a minute's midpoint samples, reward accruals, the view writes' flush), and one of them landing in a single
 * 3 s measurement took a process's idle from ~4 to 18-68 ms of CPU a second, which was then subtracted from
 * every window (at 100/s, up to ~300 µs per order).
 */
async function measureIdle(p: Proc, perf: boolean): Promise<void> {
  const sys = perf ? await countSyscalls(p.svc.pid) : undefined;
  let best: { c0: Map<number, ThreadCounters>; c1: Map<number, ThreadCounters>; wallS: number; cpuMs: number } | undefined;
  for (let i = 0; i < IDLE_SECONDS; i++) {
    const c0 = threadCounters(p.svc.pid);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, 1000));
    const c1 = threadCounters(p.svc.pid);
    const wallS = (performance.now() - t0) / 1000;
    let cpuMs = 0;
    for (const [tid, b] of c1) cpuMs += minus(counted(b, 0), counted(c0.get(tid), 0)).cpuMs;
    if (best === undefined || cpuMs / wallS < best.cpuMs / best.wallS) best = { c0, c1, wallS, cpuMs };
  }
  const s = await sys?.stop();
  const { c0, c1, wallS, cpuMs } = best!;
  for (const [tid, b] of c1) {
    const d = minus(counted(b, 0), counted(c0.get(tid), 0));
    const u = { ...scale(d, 1 / wallS), syscalls: s === undefined ? NaN : (s.byTid.get(tid) ?? 0) / s.wallS };
    p.idle.set(tid, u);
  }
  p.idleCpuMsPerS = cpuMs / wallS;
}

// ---- one window ------------------------------------------------------------------------------------------

interface Result {
  proc: Proc;
  spec: Spec;
  run: RunStats;
  orders: number;
  /** Above idle, over the window, per role and in all. */
  byRole: Record<Role, Usage>;
  total: Usage;
  commits: number;
  stalls: number;
  /** The slowest commit: a bucket's range for the service, exact for the floor. */
  longest: string;
  load: number;
}

function sessionOptions(spec: Spec, url: string, flatPerS: number) {
  return {
    url,
    adminToken: ADMIN_TOKEN,
    wallets: WALLETS,
    markets: MARKETS,
    mix: 'mixed' as const,
    batch: spec.batch,
    connections: spec.connections,
    duration: spec.seconds,
    verifySample: 1000,
    progress: false,
    log: () => undefined,
    ...(spec.rate === undefined ? { flatOut: true, maxOrders: flatPerS * spec.seconds } : { rate: spec.rate }),
  };
}

/** The slowest observation's bucket: "(lower, upper] ms". */
function slowest(h: Histogram): string {
  let lower = 0;
  let below = 0;
  let range = 'none';
  for (const b of h.buckets) {
    if (b.count > below) range = b.le === Infinity ? `> ${lower * 1000} ms` : `${lower * 1000}-${b.le * 1000} ms`;
    lower = b.le;
    below = b.count;
  }
  return range;
}

async function window(p: Proc, spec: Spec, preparer: Proc, perf: boolean): Promise<Result> {
  const fail = (why: string) => new Error(`sweep bench self-check, ${p.name} ${spec.key}: ${why}`);
  const prepared = await prepareLoad(sessionOptions(spec, preparer.svc.url, FLAT_ORDERS_PER_S[p.kind][spec.batch > 1 ? 1 : 0]));
  let session: LoadSession = prepared;
  if (p.kind === 'floor') {
    session = { ...prepared, opts: { ...prepared.opts, url: p.svc.url } };
    const setup = {
      orderDomain: prepared.orderDomain,
      keys: prepared.wallets.map((w) => ({ apiKey: w.apiKey, secret: w.secret, passphrase: w.passphrase, address: w.address })),
    };
    const r = await fetch(`${p.svc.url}/setup`, { method: 'POST', body: JSON.stringify(setup) });
    if (r.status !== 200) throw fail(`POST /setup answered ${r.status} ${await r.text()}`);
  }
  const metricsBefore = p.kind === 'service' ? await scrape(p) : undefined;
  const floorBefore = p.kind === 'floor' ? await floorStats(p) : undefined;
  const sys = perf ? await countSyscalls(p.svc.pid) : await new Promise<undefined>((r) => setTimeout(() => r(undefined), SETTLE_MS));
  const c0 = threadCounters(p.svc.pid);
  const t0 = performance.now();
  let run: RunStats;
  let c1: Map<number, ThreadCounters>;
  let wallS: number;
  let s: SyscallCount | undefined;
  try {
    run = await driveLoad(session);
    c1 = threadCounters(p.svc.pid);
    wallS = (performance.now() - t0) / 1000;
  } finally {
    // perf is stopped whatever happened, so a failed window leaves no process behind.
    s = await sys?.stop();
  }
  const load = loadavg()[0]!;
  if (run.errors > 0) throw fail(`${run.errors} errors: ${JSON.stringify(run.errorClasses)}`);

  let commits: number;
  let stalls: number;
  let longest: string;
  if (p.kind === 'service') {
    const after = await scrape(p);
    const check = await verifyLoad(session, run);
    if (!check.ok) throw fail(`the service disagrees with its acknowledgements:\n${check.problems.join('\n')}`);
    const accepted = sampleOf(after, 'engine_orders_accepted') - sampleOf(metricsBefore!, 'engine_orders_accepted');
    if (accepted !== run.acked) throw fail(`the engine accepted ${accepted} orders, the client saw ${run.acked} acknowledged`);
    const route = { method: 'POST', route: spec.batch > 1 ? '/orders' : '/order', status: '200' };
    const answered = sampleOf(after, 'http_requests_total', route) - (sampleOf(metricsBefore!, 'http_requests_total', route) || 0);
    if (answered !== run.requests) throw fail(`the service counted ${answered} answers 200 to POST ${route.route}, the client sent ${run.requests} requests`);
    const h = histogramDelta(histogramOf(after, 'journal_commit_duration_seconds')!, histogramOf(metricsBefore!, 'journal_commit_duration_seconds'));
    commits = h.count;
    const within = h.buckets.find((b) => b.le === STALL_S);
    if (within === undefined) throw fail(`journal_commit_duration_seconds has no ${STALL_S * 1000} ms bucket`);
    stalls = h.count - within.count;
    longest = slowest(h);
  } else {
    const after = await floorStats(p);
    if (after.orders - floorBefore!.orders !== run.acked) throw fail(`the floor committed ${after.orders - floorBefore!.orders} orders, ${run.acked} were acknowledged`);
    commits = after.commits - floorBefore!.commits;
    stalls = after.over20ms - floorBefore!.over20ms;
    longest = `${after.longestMs.toFixed(1)} ms`;
  }

  const byRole = Object.fromEntries(ROLES.map((r) => [r, ZERO])) as Record<Role, Usage>;
  for (const [tid, b] of c1) {
    const window = minus(counted(b, s === undefined ? NaN : (s.byTid.get(tid) ?? 0)), counted(c0.get(tid), 0));
    const idle = p.idle.get(tid) ?? ZERO;
    const above = { ...minus(window, scale(idle, wallS)), syscalls: window.syscalls - idle.syscalls * (s?.wallS ?? 0) };
    const role = roleOf(p.svc.pid, tid, p.rest.get(tid), b);
    byRole[role] = add(byRole[role], above);
  }
  const total = ROLES.reduce((a, r) => add(a, byRole[r]), ZERO);
  return { proc: p, spec, run, orders: run.acked, byRole, total, commits, stalls, longest, load };
}

/**
 * Single orders at 1,000/s for WARM_S and batches for 2 s: JIT, pools, caches and the store's first pages warm
 * before idle is measured. A service run at 100/s right after 2,000 warm-up orders cost ~2,170 µs per order
 * in its first 10 s and ~1,400 in its sixth (process CPU per 10 s window, 60 s at 100/s): V8 was still
 * optimizing the path's code and the journal still growing its file. Ten seconds at 1,000/s settle both.
 */
async function warmUp(p: Proc, preparer: Proc): Promise<void> {
  for (const spec of [
    { ...SPECS[1]!, seconds: WARM_S },
    { ...SPECS[5]!, seconds: 2 },
  ]) {
    await window(p, spec, preparer, false);
  }
}

/** Static roles of p's threads, read at rest; refuses a service whose threads cannot be told apart. */
async function readRoles(p: Proc): Promise<void> {
  p.rest = await restOf(p.svc.pid);
  const c = threadCounters(p.svc.pid);
  const seen = new Set([...p.rest.keys()].map((tid) => roleOf(p.svc.pid, tid, p.rest.get(tid), c.get(tid))));
  const need: Role[] = p.kind === 'service' ? ['main', 'sig', 'worker', 'lmdb'] : ['main', 'worker', 'lmdb'];
  const missing = need.filter((r) => !seen.has(r));
  if (missing.length > 0) {
    throw new Error(
      `sweep bench self-check: ${p.name}: no thread looks like ${missing.map((r) => ROLE_NAMES[r]).join(', ')} ` +
        `(arch ${process.arch}; stacks and waits: ${JSON.stringify([...p.rest])}); the role rules of the header no longer hold`,
    );
  }
}

// ---- printing ------------------------------------------------------------------------------------------

/** `d` decimals; a value that rounds to zero prints as 0 (idle subtraction leaves -0.0001 on a quiet thread). */
const fmt = (n: number, d = 0) =>
  Number.isFinite(n) ? (Math.abs(n) < 0.5 * 10 ** -d ? 0 : n).toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : 'n/a';
const perOrder = (r: Result, f: (u: Usage) => number, k = 1) => (f(r.total) * k) / r.orders;
const roles = (r: Result, f: (u: Usage) => number, k: number, d: number) => ROLES.map((x) => fmt((f(r.byRole[x]) * k) / r.orders, d)).join('/');
const cpuUs = (r: Result) => perOrder(r, (u) => u.cpuMs, 1000);
const met = (ok: boolean) => (ok ? 'met' : 'NOT met');

function row(r: Result, floor: Result | undefined, perf: boolean): Record<string, string> {
  const sys = perf ? (u: Usage) => u.syscalls : (u: Usage) => u.rw;
  const goals: string[] = [];
  const disk = r.proc.kind === 'service' && !MEMORY_FS.includes(r.proc.fs);
  if (disk && r.spec.cpuGoalUs !== undefined) goals.push(`CPU <= ${fmt(r.spec.cpuGoalUs)}: ${met(cpuUs(r) <= r.spec.cpuGoalUs)}`);
  if (disk) for (const g of r.spec.latencyGoals ?? []) goals.push(`${g.q} <= ${g.ms}: ${met(r.run.latencyMs[g.q] <= g.ms)}`);
  // The floor commits to the disk: only the disk service is held against it.
  const ratio = floor === undefined || !disk ? NaN : cpuUs(r) / cpuUs(floor);
  if (!Number.isNaN(ratio) && r.spec.batch === 1) goals.push(`<= ${FLOOR_GOAL}x floor: ${met(ratio <= FLOOR_GOAL)}`);
  return {
    window: `${r.proc.name} · ${r.spec.key}`,
    'orders/s': `${fmt(r.run.ordersPerSec)}${r.run.ranOut ? ' (ran out)' : ''}`,
    'CPU µs/order': fmt(cpuUs(r)),
    'µs m/sig/wk/lmdb/v8/oth': roles(r, (u) => u.cpuMs, 1000, 0),
    'x floor': Number.isNaN(ratio) ? '' : `${ratio.toFixed(2)}x`,
    'wake-ups/order m/sig/wk/lmdb/v8/oth': `${fmt(perOrder(r, (u) => u.voluntary), 1)}: ${roles(r, (u) => u.voluntary, 1, 1)}`,
    'preempted/order m/sig/wk/lmdb/v8/oth': `${fmt(perOrder(r, (u) => u.involuntary), 1)}: ${roles(r, (u) => u.involuntary, 1, 1)}`,
    [`${perf ? 'syscalls' : 'read+write syscalls'}/order m/sig/wk/lmdb/v8/oth`]: `${fmt(perOrder(r, sys), 1)}: ${roles(r, sys, 1, 1)}`,
    'commits/order': fmt(r.commits / r.orders, 2),
    'stalls > 20 ms': `${r.stalls}, slowest ${r.longest}`,
    'p50 ms': fmt(r.run.latencyMs.p50, 2),
    'p99 ms': fmt(r.run.latencyMs.p99, 2),
    'CPU wait µs/order': fmt(perOrder(r, (u) => u.waitMs, 1000)),
    load: fmt(r.load, 1),
    goals: goals.join('; '),
  };
}

function progress(r: Result): void {
  console.log(
    `  ${r.proc.name} · ${r.spec.key}: ${fmt(r.orders)} orders, ${fmt(r.run.ordersPerSec)}/s, CPU ${fmt(cpuUs(r))} µs/order above idle ` +
      `(${roles(r, (u) => u.cpuMs, 1000, 0)}), p50/p99 ${fmt(r.run.latencyMs.p50, 2)}/${fmt(r.run.latencyMs.p99, 2)} ms, client ${fmt(r.run.clientCpuUsPerOrder)} µs/order, load ${fmt(r.load, 1)}`,
  );
}

function pressure(): string {
  try {
    return readFileSync('/proc/pressure/cpu', 'utf8').split('\n')[0]!.replace('some ', '');
  } catch {
    return 'n/a';
  }
}

function header(procs: readonly Proc[], perfWhy: string | undefined): void {
  const machine = `${availableParallelism()} cores, Node ${process.versions.node}, load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}, CPU pressure ${pressure()}`;
  console.log(`order path sweep (${machine})`);
  for (const p of procs) {
    const c = threadCounters(p.svc.pid);
    const count = new Map<Role, number>();
    for (const tid of c.keys()) {
      const r = roleOf(p.svc.pid, tid, p.rest.get(tid), c.get(tid));
      count.set(r, (count.get(r) ?? 0) + 1);
    }
    console.log(
      `  ${p.name}: journal on ${p.fs} (${p.dataDir}), idle ${fmt(p.idleCpuMsPerS, 1)} ms CPU/s; ` +
        `threads ${ROLES.map((r) => `${r} ${count.get(r) ?? 0}`).join(', ')}`,
    );
  }
  console.log(`  system calls: ${perfWhy === undefined ? 'perf stat raw_syscalls:sys_enter, per thread' : `read+write only (/proc io): ${perfWhy}`}`);
  console.log(`  thread roles (m/sig/wk/lmdb/v8/oth): ${ROLES.map((r) => `${r} = ${ROLE_NAMES[r]}`).join('; ')}`);
}

const median = (xs: number[]) => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

// ---- the two modes --------------------------------------------------------------------------------------

function diskParent(): string {
  const dir = resolve(process.env.SWEEP_DISK_DIR ?? tmpdir());
  const type = fsType(dir);
  if (MEMORY_FS.includes(type)) throw new Error(`sweep bench: ${dir} is on ${type}, not a disk: set SWEEP_DISK_DIR to a directory on one`);
  return dir;
}

function shmParent(): string {
  if (fsType('/dev/shm') !== 'tmpfs') throw new Error(`sweep bench: /dev/shm is not a tmpfs here (${fsType('/dev/shm')})`);
  return '/dev/shm';
}

async function sweep(): Promise<void> {
  const perfWhy = perfUnusable();
  const perf = perfWhy === undefined;
  const withTmpfs = process.env.SWEEP_TMPFS !== '0';
  const procs: Proc[] = [];
  let ok = false;
  try {
    const disk = await start('service disk', 'service', diskParent());
    procs.push(disk);
    const floor = await start('floor disk', 'floor', diskParent());
    procs.push(floor);
    const shm = withTmpfs ? await start('service tmpfs', 'service', shmParent()) : undefined;
    if (shm !== undefined) procs.push(shm);
    for (const p of procs) await warmUp(p, p.kind === 'floor' ? disk : p);
    for (const p of procs) await readRoles(p);
    await Promise.all(procs.map((p) => measureIdle(p, perf)));
    header(procs, perfWhy);

    const results: Result[] = [];
    for (const [i, spec] of SPECS.entries()) {
      const order = [disk, ...(spec.core ? [floor] : []), ...(shm !== undefined && spec.batch === 1 ? [shm] : [])];
      for (const p of i % 2 === 0 ? order : order.reverse()) {
        const r = await window(p, spec, p.kind === 'floor' ? disk : p, perf);
        progress(r);
        results.push(r);
      }
    }

    console.log(
      `\norder path sweep: per acknowledged order, above each process's idle, all its threads (/proc); ` +
        `10 wallets, 2 markets, mixed resting and crossing; load average now ${loadavg().map((x) => x.toFixed(1)).join(' ')}`,
    );
    const floorOf = (r: Result) => (r.proc.kind === 'service' ? results.find((f) => f.proc.kind === 'floor' && f.spec === r.spec) : undefined);
    const ranked = SPECS.flatMap((spec) => [disk, floor, ...(shm ? [shm] : [])].flatMap((p) => results.filter((r) => r.spec === spec && r.proc === p)));
    console.table(ranked.map((r) => row(r, floorOf(r), perf)));
    ok = true;
  } finally {
    await stopAll(procs, ok);
  }
}

async function versions(base: string): Promise<void> {
  const perfWhy = perfUnusable();
  const perf = perfWhy === undefined;
  const rounds = Number(process.env.SWEEP_ROUNDS ?? 3);
  const parent = process.env.SWEEP_TMPFS === '1' ? shmParent() : diskParent();
  const specs = SPECS.filter((s) => s.core);
  const procs: Proc[] = [];
  let ok = false;
  try {
    const a = await start('A (base)', 'service', parent, resolve(base));
    procs.push(a);
    const b = await start('B (this)', 'service', parent);
    procs.push(b);
    for (const p of procs) await warmUp(p, p);
    for (const p of procs) await readRoles(p);
    await Promise.all(procs.map((p) => measureIdle(p, perf)));
    header(procs, perfWhy);
    console.log(`  versions: A = ${resolve(base)}, B = this checkout; ${rounds} round${rounds === 1 ? '' : 's'}, each window kind alternating which version goes first`);

    const results = new Map<Spec, { a: Result[]; b: Result[] }>(specs.map((s) => [s, { a: [], b: [] }]));
    // Each window kind alternates which version goes first from round to round (and neighbouring kinds start
    // differently): whichever runs second meets what the first left running (a flush, a collection), and with
    // an even number of kinds a single step counter gave every kind the same order in every round.
    for (let round = 0; round < rounds; round++) {
      for (const [k, spec] of specs.entries()) {
        for (const p of (round + k) % 2 === 0 ? [a, b] : [b, a]) {
          const r = await window(p, spec, p, perf);
          progress(r);
          results.get(spec)![p === a ? 'a' : 'b'].push(r);
        }
      }
    }

    const sys = perf ? (u: Usage) => u.syscalls : (u: Usage) => u.rw;
    const measures: Array<[string, (r: Result) => number, number]> = [
      ['orders/s', (r) => r.run.ordersPerSec, 0],
      ['CPU µs/order', cpuUs, 0],
      ['main µs/order', (r) => (r.byRole.main.cpuMs * 1000) / r.orders, 0],
      ['wake-ups/order', (r) => perOrder(r, (u) => u.voluntary), 1],
      [perf ? 'syscalls/order' : 'read+write syscalls/order', (r) => perOrder(r, sys), 1],
      ['commits/order', (r) => r.commits / r.orders, 2],
      ['p50 ms', (r) => r.run.latencyMs.p50, 2],
      ['p99 ms', (r) => r.run.latencyMs.p99, 2],
    ];
    console.log(`\norder path versions: medians over ${rounds} round${rounds === 1 ? '' : 's'} per version; B/A is the median of the per-round ratios; load average now ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
    const rows: Array<Record<string, string>> = [];
    for (const spec of specs) {
      const { a: ra, b: rb } = results.get(spec)!;
      for (const [name, rs] of [['A', ra], ['B', rb]] as const) {
        rows.push({ window: `${spec.key} · ${name}`, ...Object.fromEntries(measures.map(([m, f, d]) => [m, fmt(median(rs.map(f)), d)])) });
      }
      rows.push({ window: `${spec.key} · B/A`, ...Object.fromEntries(measures.map(([m, f]) => [m, `${fmt(median(rb.map((r, i) => f(r) / f(ra[i]!))), 2)}x`])) });
    }
    console.table(rows);
    ok = true;
  } finally {
    await stopAll(procs, ok);
  }
}

export default async function run(): Promise<void> {
  const base = process.env.SWEEP_BASE;
  if (base !== undefined && base !== '') await versions(base);
  else await sweep();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
