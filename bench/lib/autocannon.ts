/**
 * Loopback HTTP load for the benchmarks: autocannon in this process, or in a child process so that the
 * server under test keeps a core of its own (bench/lib/child.ts).
 *
 * Fixed rate (`rate`) is autocannon's overallRate, and two of its properties matter when reading a p99:
 *   - it is not a steady arrival: each connection sends back to back until it has made its share of
 *     the second, then waits for the next second; so during the first part of every second all
 *     connections have a request in flight, and a latency is about `connections` x the time the server
 *     takes per request, whatever the rate;
 *   - its coordinated-omission correction assumes one request per millisecond per connection
 *     (Math.ceil(1 / rate) in lib/run.js, seconds read as ms), so every response of t ms adds
 *     samples at t-1, t-2, ... 1 ms: a rare slow response weighs about t times in `p99`.
 * `raw` therefore also gives the response times as measured, one sample per response.
 */
import { createRequire } from 'node:module';
import { runInChild, serveInChild } from './child.ts';

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
  /** Requests per second over all connections (autocannon's overallRate, see above); unthrottled when absent. */
  rate?: number;
}

/** GET several paths of `url`'s origin in turn on every connection (their bodies differ: none is compared). */
export interface PathsLoadOptions extends Omit<LoadOptions, 'method' | 'body' | 'expectBody'> {
  paths: readonly string[];
}

export type AnyLoadOptions = LoadOptions | PathsLoadOptions;

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
  /** Mean requests per second (autocannon's per-second samples). */
  rps: number;
  /** Response times as measured (ms), one sample per response: no omission correction. */
  raw: { p50: number; p99: number; p999: number; max: number };
}

/** The slice of autocannon's API used here (the package ships no type declarations). */
interface AutocannonResult {
  duration: number;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  requests: { sent: number; average: number };
  latency: { p50: number; p99: number };
  throughput: { average: number };
}
/** The promise autocannon returns is also its event emitter ('response': client, status, bytes, ms). */
type Autocannon = (o: Record<string, unknown>) => Promise<AutocannonResult> & {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
};

const CHILD_FLAG = 'PM_BENCH_AUTOCANNON_CHILD';

export async function runAutocannon(o: AnyLoadOptions): Promise<LoadResult> {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  const what =
    'paths' in o
      ? { requests: o.paths.map((path) => ({ method: 'GET', path })) }
      : {
          method: o.method ?? 'GET',
          body: o.body,
          headers: o.body === undefined ? undefined : { 'content-type': 'application/json' },
          expectBody: o.expectBody,
        };
  const run = autocannon({
    url: o.url,
    connections: o.connections,
    pipelining: o.pipelining,
    duration: o.duration,
    ...what,
    ...(o.rate !== undefined ? { overallRate: o.rate } : {}),
  });
  const times: number[] = [];
  run.on('response', (_client, _status, _bytes, ms) => void times.push(ms));
  const r = await run;
  times.sort((a, b) => a - b);
  const at = (q: number) => (times.length === 0 ? 0 : Math.round(times[Math.min(times.length - 1, Math.floor(times.length * q))] * 100) / 100);
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
    rps: r.requests.average,
    raw: { p50: at(0.5), p99: at(0.99), p999: at(0.999), max: at(1) },
  };
}

/** Runs autocannon in a child process and returns its result. */
export function runAutocannonChild(o: AnyLoadOptions): Promise<LoadResult> {
  return runInChild(import.meta.url, CHILD_FLAG, o);
}

serveInChild(CHILD_FLAG, runAutocannon);
