/**
 * Runs the service as a child process exactly as `npm start` does (`node <flags> --import tsx src/main.ts`,
 * the flags read from package.json's start script; configured through environment variables), for the load
 * gate and the benchmarks. A child rather than `startApp` in process: the load generator then has an event
 * loop of its own, the service can be killed like a real process (SIGKILL for the crash check, SIGTERM for
 * an orderly stop that writes `--cpu-prof` profiles), and its CPU time can be read from /proc apart from the
 * client's.
 *
 * The port is chosen by the kernel (PORT=0) and read from the `listening` log line, so concurrent
 * tests never collide on a port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface ServiceOptions {
  dataDir: string;
  adminToken: string;
  /** Extra environment (RATE_LIMITS, CONFIG_FILE, SHARDS, ...). */
  env?: Record<string, string>;
  /** Extra node flags after npm start's own and before `--import tsx` (e.g. --cpu-prof). */
  nodeFlags?: string[];
  /** How long start-up may take. Default 60 s. */
  startTimeoutMs?: number;
  /** The checkout to run (default this one): a benchmark can compare two versions side by side. */
  root?: string;
  /**
   * The module to run instead of src/main.ts, relative to `root` (a benchmark's prototype server started
   * the same way, with the same flags; it must print the `listening` log line with its port).
   */
  entry?: string;
}

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  /** The last lines the service wrote to stderr/stdout (for failure messages). */
  tail(): string;
  /** Sends a signal and waits for the exit (SIGKILL after `ms` if it has not exited). */
  stop(signal?: NodeJS.Signals, ms?: number): Promise<number | null>;
}

/**
 * The node flags `npm start` gives the service: what package.json's start script puts before `--import tsx
 * src/main.ts` in the checkout at `dir`. Read from there, not repeated here, so a service started by a test
 * or a benchmark runs as a deployment does (docs/decisions/hardening.md, "The GC's marking threads").
 */
export function startFlags(dir: string = root): string[] {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts?: { start?: string } };
  const start = pkg.scripts?.start ?? '';
  // `tsx src/main.ts` is what a checkout older than the flags says (a benchmark's `root` may be one).
  const m = /^(?:tsx|node((?: --[^\s]+)*) --import tsx) src\/main\.ts$/.exec(start);
  if (m === null) throw new Error(`package.json's start script is not "node [--flag ...] --import tsx src/main.ts": ${JSON.stringify(start)}`);
  return (m[1] ?? '').split(' ').filter((f) => f !== '');
}

export async function startService(o: ServiceOptions): Promise<ServiceProcess> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  // Settings of the caller's own environment must not leak into the child's configuration.
  for (const k of ['CONFIG_FILE', 'HOST', 'PORT', 'DATA_DIR', 'ADMIN_TOKEN', 'DEMO', 'LOG_LEVEL', 'SHARDS', 'RATE_LIMITS', 'MAX_BODY_BYTES', 'NODE_OPTIONS', 'ROLE', 'NATS_URL', 'NATS_USER', 'NATS_PASSWORD', 'NATS_CA_FILE', 'NATS_INSECURE', 'SEQUENCER_URL', 'FAILOVER', 'PUBLIC_URL']) delete env[k];
  Object.assign(env, { HOST: '127.0.0.1', PORT: '0', DATA_DIR: o.dataDir, ADMIN_TOKEN: o.adminToken, DEMO: '0', LOG_LEVEL: 'info' }, o.env ?? {});
  const child = spawn(process.execPath, [...startFlags(o.root ?? root), ...(o.nodeFlags ?? []), '--import', 'tsx', o.entry ?? 'src/main.ts'], { cwd: o.root ?? root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const keep = (l: string) => {
    lines.push(l);
    if (lines.length > 40) lines.shift();
  };
  createInterface({ input: child.stderr! }).on('line', keep);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const port = await new Promise<number>((resolvePort, reject) => {
    // A service that did not start is killed: left running, it would keep its caller (a test file) alive.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`service did not start within ${o.startTimeoutMs ?? 60_000} ms:\n${lines.join('\n')}`));
    }, o.startTimeoutMs ?? 60_000);
    createInterface({ input: child.stdout! }).on('line', (l) => {
      keep(l);
      try {
        const j = JSON.parse(l) as { msg?: string; port?: number };
        if (j.msg === 'listening' && typeof j.port === 'number') {
          clearTimeout(timer);
          resolvePort(j.port);
        }
      } catch {
        /* not a log line */
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before listening:\n${lines.join('\n')}`));
    });
  });
  return {
    child,
    pid: child.pid!,
    port,
    url: `http://127.0.0.1:${port}`,
    tail: () => lines.join('\n'),
    async stop(signal: NodeJS.Signals = 'SIGTERM', ms = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), ms);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** CPU seconds (user + system) of a process, all threads, or of one thread. Linux /proc; undefined elsewhere. */
export function cpuSeconds(pid: number, tid?: number): number | undefined {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Per thread of a process: CPU time, time spent runnable but waiting for a CPU (the scheduler's run queue),
 * both in ms, from /proc/<pid>/task/<tid>/schedstat, and bytes the thread wrote to storage (`write_bytes`
 * of .../io). The wait is how a crowded machine shows: a thread that waits for a core as long as it runs
 * gets half the throughput it could. Node names none of its threads, so storage writes are how LMDB's
 * commit threads (libuv pool, which runs lmdb-js's async writes) can be told apart. Empty where /proc is
 * absent.
 */
export function threadTimes(pid: number): Map<number, { cpuMs: number; waitMs: number; writeBytes: number }> {
  const out = new Map<number, { cpuMs: number; waitMs: number; writeBytes: number }>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tids) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').trim().split(' ').map(Number);
      let writeBytes = 0;
      try {
        writeBytes = Number(/^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${t}/io`, 'utf8'))?.[1] ?? 0);
      } catch {
        /* io accounting unavailable */
      }
      out.set(Number(t), { cpuMs: run! / 1e6, waitMs: wait! / 1e6, writeBytes });
    } catch {
      /* the thread ended */
    }
  }
  return out;
}

/** Counters of one thread since it started (/proc/<pid>/task/<tid>/{schedstat,status,io}). */
export interface ThreadCounters {
  /** On a CPU, and runnable but waiting for one (ms, schedstat). */
  cpuMs: number;
  waitMs: number;
  /**
   * Context switches: voluntary ones are the thread blocking (futex, epoll, I/O), so each is followed by
   * a wake-up; involuntary ones are the scheduler taking the CPU away (a crowded machine).
   */
  voluntary: number;
  involuntary: number;
  /** read-family and write-family system calls (io: syscr, syscw), and bytes sent to storage. */
  syscr: number;
  syscw: number;
  writeBytes: number;
}

/**
 * Per thread of a process, the counters of ThreadCounters; empty where /proc is absent. A thread that ends
 * between the directory listing and its reads is left out.
 */
export function threadCounters(pid: number): Map<number, ThreadCounters> {
  const out = new Map<number, ThreadCounters>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  const field = (text: string, name: string) => Number(new RegExp(`^${name}:\\s*(\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  for (const t of tids) {
    try {
      const dir = `/proc/${pid}/task/${t}`;
      const [run, wait] = readFileSync(`${dir}/schedstat`, 'utf8').trim().split(' ').map(Number);
      const status = readFileSync(`${dir}/status`, 'utf8');
      let io = '';
      try {
        io = readFileSync(`${dir}/io`, 'utf8');
      } catch {
        /* io accounting unavailable: its counters read NaN */
      }
      out.set(Number(t), {
        cpuMs: run! / 1e6,
        waitMs: wait! / 1e6,
        voluntary: field(status, 'voluntary_ctxt_switches'),
        involuntary: field(status, 'nonvoluntary_ctxt_switches'),
        syscr: field(io, 'syscr'),
        syscw: field(io, 'syscw'),
        writeBytes: field(io, 'write_bytes'),
      });
    } catch {
      /* the thread ended */
    }
  }
  return out;
}
