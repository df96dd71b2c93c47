/**
 * Loopback HTTP load for the benchmarks: autocannon in this process, or in a child process so that the
 * server under test keeps a core of its own (this machine may have only two). The child is this very
 * module, forked with CHILD_FLAG set; options and results cross the IPC channel as plain data.
 */
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface LoadOptions {
  url: string;
  connections: number;
  pipelining: number;
  /** Seconds. */
  duration: number;
  method?: string;
  body?: string;
  /** Every response body must equal this (autocannon counts mismatches). */
  expectBody: string;
}

/** What the benchmarks keep of an autocannon result. */
export interface LoadResult {
  duration: number;
  total2xx: number;
  sent: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  p50: number;
  p99: number;
  bytesPerSec: number;
}

/** The slice of autocannon's API used here (the package ships no type declarations). */
interface AutocannonResult {
  duration: number;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  requests: { sent: number };
  latency: { p50: number; p99: number };
  throughput: { average: number };
}
type Autocannon = (o: Record<string, unknown>) => Promise<AutocannonResult>;

const CHILD_FLAG = 'PM_BENCH_AUTOCANNON_CHILD';

export async function runAutocannon(o: LoadOptions): Promise<LoadResult> {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  const r = await autocannon({
    url: o.url,
    connections: o.connections,
    pipelining: o.pipelining,
    duration: o.duration,
    method: o.method ?? 'GET',
    body: o.body,
    headers: o.body === undefined ? undefined : { 'content-type': 'application/json' },
    expectBody: o.expectBody,
  });
  return {
    duration: r.duration,
    total2xx: r['2xx'],
    sent: r.requests.sent,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    mismatches: r.mismatches,
    p50: r.latency.p50,
    p99: r.latency.p99,
    bytesPerSec: r.throughput.average,
  };
}

/** Runs autocannon in a child process and returns its result. */
export function runAutocannonChild(o: LoadOptions): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, [CHILD_FLAG]: '1' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: LoadResult | undefined;
    child.on('message', (m: { ready?: true; result?: LoadResult; error?: string }) => {
      if (m.ready) child.send(o);
      else if (m.result) result = m.result;
      else if (m.error) reject(new Error(`autocannon child: ${m.error}`));
    });
    child.on('error', reject);
    child.on('exit', (code) => (result && code === 0 ? resolve(result) : reject(new Error(`autocannon child exited with ${code}`))));
  });
}

if (process.env[CHILD_FLAG] === '1') {
  process.once('message', (o: LoadOptions) => {
    runAutocannon(o).then(
      (result) => process.send!({ result }, () => process.exit(0)),
      (e: unknown) => process.send!({ error: String(e) }, () => process.exit(1)),
    );
  });
  process.send!({ ready: true });
}
