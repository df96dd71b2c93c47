/**
 * HTTP edge throughput: what the full pipeline (copy -> rate limit -> query validation -> handler ->
 * serialization -> metrics -> corked answer) costs against a bare uWS route on the same machine in the
 * same run, on two uWS builds: the one the edge runs (`uWebSockets.js`, @btc-vision/uwebsockets.js
 * 20.56.0, as src/edge/http/uws.ts loads it) and the one it ran before (`uwebsockets` 3.0.6, a dev dependency
 * kept for this comparison), so a build change shows as a ratio measured in one run.
 * Run alone: `npx tsx bench/edge/http.bench.ts`; or with the others: `npm run bench -- edge`.
 *
 * Workload, identical bytes for both targets:
 *   GET /price?token_id=<77-digit uint256>&side=BUY&depth=5 on 127.0.0.1 (loopback only), HTTP/1.1
 *   keep-alive, CONNECTIONS connections x PIPELINING pipelined requests, answer `{"ok":true}` as
 *   application/json. Per target: a WARMUP_S s warm-up run (discarded), then a MEASURE_S s measured run.
 *   bare    a uWS App in this process whose GET /price handler writes the answer and nothing else;
 *   routed  startServer() (given that build) with one real route: GET /price (group clob), a TypeBox query schema of three
 *           parameters (pattern string, literal union, bounded integer) coerced and checked per request,
 *           rate limits ON (the route's real buckets `clob` + `price`, each 1e9 per 10 s so they never
 *           refuse; DESIGN section 8 asks benchmarks to say which setting they used), Prometheus metrics
 *           observed per request, silent logger.
 * Load generator: autocannon 9 (programmatic API), by default in a child process so that the server's
 * event loop has a core of its own (this machine may have only two). BENCH_EDGE_INPROCESS=1 adds the
 * same pair of runs with autocannon inside the server's process, for comparison.
 *
 * Timed (by autocannon): only the measured runs. Excluded from timing: server start and route
 * compilation, the child's start-up, the warm-up runs, and every check below.
 *
 * Self-checks (a failure throws, and `npm run bench` stops): every measured response is a 2xx with exactly
 * the expected body (autocannon's non2xx, mismatches, errors and timeouts are all 0); the server-side
 * counts of answered requests are at least the client's count; the routed server refused nothing
 * (no http_rate_limited_total sample) and answered only 200s on its route. The routed/bare ratio
 * (target >= 70%) is reported, not enforced: it depends on the machine and on how much of the bare run
 * the load generator itself is the bottleneck for.
 */
import { pathToFileURL } from 'node:url';
import { runAutocannon, runAutocannonChild, type LoadOptions as AutocannonOptions, type LoadResult } from '../lib/autocannon.ts';
import { Type } from '@sinclair/typebox';
import { createRequire } from 'node:module';
import { Metrics } from '../../src/edge/pipeline/metrics.ts';
import { RateLimiter } from '../../src/edge/limits/rate-limit.ts';
import { route } from '../../src/edge/pipeline/route.ts';
import { startServer } from '../../src/edge/server.ts';
import { loadUws, type Uws, type UwsBuild } from '../../src/edge/http/uws.ts';
import { systemClock } from '../../src/runtime/clock.ts';
import { silentLogger } from '../../src/runtime/log.ts';

const CONNECTIONS = 64;
const PIPELINING = 4;
const WARMUP_S = 1;
const MEASURE_S = 5;
const BODY = '{"ok":true}';
const TOKEN_ID = '71321045679252212594626385532706912750332728571942532289631379312455583992563';
const PATH = `/price?token_id=${TOKEN_ID}&side=BUY&depth=5`;
/** One load run against a target: only its URL and duration vary. */
interface LoadOptions {
  url: string;
  duration: number;
}

const shape = (o: LoadOptions): AutocannonOptions => ({ ...o, connections: CONNECTIONS, pipelining: PIPELINING, expectBody: BODY });
const loadInProcess = (o: LoadOptions) => runAutocannon(shape(o));
const loadInChild = (o: LoadOptions) => runAutocannonChild(shape(o));

interface Target {
  name: string;
  /** Which uWS build serves it (Build.name). */
  build: string;
  url: string;
  /** Requests the server itself counted as answered with 200 on the benchmark route. */
  served(): Promise<number>;
  close(): Promise<void>;
}

interface Build {
  name: string;
  uws: Uws;
  build: UwsBuild;
}

/** The edge's build as the service loads it, and the previous one (dev dependency `uwebsockets` 3.0.6). */
function builds(): Build[] {
  const current = loadUws(16384);
  const previous = createRequire(import.meta.url)('uwebsockets') as Uws;
  return [
    { name: '20.56.0', ...current },
    { name: '3.0.6 (before)', uws: previous, build: { package: 'uwebsockets@3.0.6', binary: '', source: 'given', path: '', glibc: undefined, reason: 'comparison' } },
  ];
}

function startBare(b: Build): Promise<Target> {
  const uWS = b.uws;
  let served = 0;
  const app = uWS.App().get('/price', (res) => {
    served++;
    res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(BODY);
  });
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (socket) => {
      if (!socket) return reject(new Error('bare: cannot listen'));
      resolve({
        build: b.name,
        name: `bare uWS route, ${b.name}`,
        url: `http://127.0.0.1:${uWS.us_socket_local_port(socket)}${PATH}`,
        served: async () => served,
        close: async () => {
          uWS.us_listen_socket_close(socket);
          app.close();
        },
      });
    });
  });
}

/** Value of the first sample of `name` whose label text contains every fragment; 0 when absent. */
function sample(text: string, name: string, ...fragments: string[]): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (fragments.every((f) => line.includes(f))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

async function startRouted(b: Build): Promise<Target & { metrics: Metrics }> {
  const metrics = new Metrics(false);
  const limiter = new RateLimiter({
    enabled: true,
    maxCallers: 1024,
    buckets: { clob: { limit: 1e9, windowSeconds: 10 }, price: { limit: 1e9, windowSeconds: 10 } },
  });
  const server = await startServer({
    routes: [
      route({
        method: 'GET',
        path: '/price',
        group: 'clob',
        summary: 'benchmark route',
        query: Type.Object({
          token_id: Type.String({ pattern: '^\\d{1,78}$' }),
          side: Type.Union([Type.Literal('BUY'), Type.Literal('SELL')]),
          depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
        }),
        fieldMessages: { token_id: 'Invalid token id' },
        handler: (r) => {
          // Uses the validated values so the work cannot be skipped; always true for the workload.
          return { ok: r.query.side === 'BUY' && r.query.token_id === TOKEN_ID && r.query.depth === 5 };
        },
      }),
    ],
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: 1024 * 1024,
    maxHeaderBytes: 16384,
    trustedProxies: [],
    adminToken: '',
    limiter,
    metrics,
    log: silentLogger,
    clock: systemClock,
    uws: { uws: b.uws, build: b.build },
  });
  return {
    build: b.name,
    name: `routed + validated + rate-limited, ${b.name}`,
    url: `http://127.0.0.1:${server.port}${PATH}`,
    metrics,
    served: async () => sample(await metrics.text(), 'http_requests_total', 'route="/price"', 'status="200"'),
    close: async () => {
      await server.close(1000);
    },
  };
}

interface Row {
  setup: string;
  build: string;
  target: string;
  result: LoadResult;
  reqPerSec: number;
  /**
   * CPU time (user + system, all threads) of this process per request it served during the measured run.
   * With autocannon in a child this is the server's own cost per request, whoever the bottleneck was.
   */
  cpuUsPerReq: number;
}

function check(row: Row, servedDuringRun: number): void {
  const r = row.result;
  const where = `${row.setup} / ${row.target}`;
  const bad = Object.entries({ non2xx: r.non2xx, mismatches: r.mismatches, errors: r.errors, timeouts: r.timeouts }).filter(([, n]) => n !== 0);
  if (bad.length > 0) throw new Error(`${where}: ${bad.map(([k, n]) => `${k}=${n}`).join(', ')} (every response must be 200 ${BODY})`);
  if (r.total2xx <= 0) throw new Error(`${where}: no request completed`);
  if (servedDuringRun < r.total2xx) throw new Error(`${where}: server answered ${servedDuringRun} but the client counted ${r.total2xx}`);
}

async function measure(setup: string, load: (o: LoadOptions) => Promise<LoadResult>, targets: Target[]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const t of targets) {
    await load({ url: t.url, duration: WARMUP_S });
    const before = await t.served();
    const cpu0 = process.cpuUsage();
    const result = await load({ url: t.url, duration: MEASURE_S });
    const cpu = process.cpuUsage(cpu0);
    const served = (await t.served()) - before;
    const row = { setup, build: t.build, target: t.name, result, reqPerSec: result.total2xx / result.duration, cpuUsPerReq: (cpu.user + cpu.system) / served };
    check(row, served);
    rows.push(row);
  }
  return rows;
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function printTable(rows: Row[]): void {
  const header = ['setup', 'target', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'errors', 'routed/bare', 'CPU us/req', 'CPU bare/routed'];
  const lines = rows.map((r) => {
    const bare = rows.find((x) => x.setup === r.setup && x.build === r.build && x.target.startsWith('bare'));
    const isBare = r.target.startsWith('bare') || !bare;
    const ratio = isBare ? '' : `${fmt((100 * r.reqPerSec) / bare.reqPerSec, 1)}%`;
    const cpuRatio = isBare ? '' : `${fmt((100 * bare.cpuUsPerReq) / r.cpuUsPerReq, 1)}%`;
    return [r.setup, r.target, fmt(r.reqPerSec), fmt(r.result.p50, 2), fmt(r.result.p99, 2), fmt(r.result.total2xx), String(r.result.non2xx), String(r.result.errors), ratio, fmt(r.cpuUsPerReq, 2), cpuRatio];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const row = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(row(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(row(l));
}

export default async function run(): Promise<Row[]> {
  const inProcess = process.env.BENCH_EDGE_INPROCESS === '1';
  console.log(
    `http.bench: GET ${PATH.slice(0, 30)}... x ${CONNECTIONS} connections x ${PIPELINING} pipelined, ${WARMUP_S} s warm-up + ${MEASURE_S} s per target, ` +
      `loopback, rate limits ON (1e9/10 s), autocannon in a child process${inProcess ? ' (and in process)' : ''}; node ${process.version}`,
  );
  const [current, previous] = builds() as [Build, Build];
  console.log(`builds: ${current.name} (${current.build.package}, ${current.build.source}: ${current.build.path}); ${previous.name} (${previous.build.package})`);
  const bareNew = await startBare(current);
  const bareOld = await startBare(previous);
  const routedNew = await startRouted(current);
  const routedOld = await startRouted(previous);
  // Interleaved, so drift of the machine during the run falls on both builds alike.
  const order = [bareNew, bareOld, routedNew, routedOld];
  const rows: Row[] = [];
  try {
    rows.push(...(await measure('child', loadInChild, order)));
    if (inProcess) rows.push(...(await measure('in-process', loadInProcess, order)));
    for (const routed of [routedNew, routedOld]) {
      const text = await routed.metrics.text();
      const refused = text.split('\n').filter((l) => l.startsWith('http_rate_limited_total{'));
      if (refused.length > 0) throw new Error(`${routed.name}: the rate limiter refused requests: ${refused.join('; ')}`);
      const non200 = text.split('\n').filter((l) => l.startsWith('http_requests_total{') && !l.includes('status="200"'));
      if (non200.length > 0) throw new Error(`${routed.name}: answers other than 200: ${non200.join('; ')}`);
    }
  } finally {
    for (const t of order) await t.close();
  }
  printTable(rows);
  for (const setup of new Set(rows.map((r) => r.setup))) {
    const pick = (build: string, bare: boolean) => rows.find((r) => r.setup === setup && r.build === build && r.target.startsWith('bare') === bare)!;
    for (const b of [current.name, previous.name]) {
      const bare = pick(b, true);
      const routed = pick(b, false);
      const ratio = routed.reqPerSec / bare.reqPerSec;
      console.log(
        `${setup}, ${b}: routed/bare = ${fmt(100 * ratio, 1)}% of req/s (target >= 70%: ${ratio >= 0.7 ? 'met' : 'NOT met'}); ` +
          `this process's CPU per request: bare ${fmt(bare.cpuUsPerReq, 2)} us, routed ${fmt(routed.cpuUsPerReq, 2)} us ` +
          `(routed/bare when the server is the bottleneck ~ ${fmt((100 * bare.cpuUsPerReq) / routed.cpuUsPerReq, 1)}%)`,
      );
    }
    const ratio = (x: Row, y: Row) => `${fmt((100 * x.reqPerSec) / y.reqPerSec, 1)}% of req/s, CPU/req ${fmt((100 * x.cpuUsPerReq) / y.cpuUsPerReq, 1)}%`;
    console.log(
      `${setup}: ${current.name} against ${previous.name}: bare ${ratio(pick(current.name, true), pick(previous.name, true))}; ` +
        `routed ${ratio(pick(current.name, false), pick(previous.name, false))}; all responses 200 ${BODY}, self-checks passed`,
    );
  }
  return rows;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
