/**
 * A sequencer and read replicas over NATS JetStream (DESIGN section 12, docs/decisions/scale-out.md "Scale-out"),
 * in one run on this machine: a real nats-server (tools/nats-server.ts) and every node a child process run as
 * `npm start` runs it (tools/service-process.ts: ROLE, NATS_URL, RATE_LIMITS=off, DEMO=0, durable commits, one
 * shard; one CONFIG_FILE with the master key all nodes share).
 * Run alone: `npx tsx --expose-gc bench/cluster/cluster.bench.ts`; or `npm run bench -- cluster`.
 * Skipped, with a message naming nats-server, when nats-server is not on the PATH (failing under CI).
 *
 * Phases, in this order (the load tool tools/load.ts drives signed orders: seeded `mixed` stream of resting
 * BUYs and minting pairs over 8 fresh markets, 50 wallets, new markets and wallets per window):
 *   1. publication off vs on: a ROLE=single node and a ROLE=sequencer node (publishing to the stream, no
 *      replica attached yet) run side by side; each window loads one of them flat out (TPUT_CONNECTIONS
 *      connections for TPUT_SECONDS) while the other idles, interleaved off/on/off/on. Reported: orders/s
 *      and service CPU per order (/proc) per window, the ratio of the means (target: within 10%), and
 *      nats-server's CPU per published order (it shares the two cores: part of publication's cost here).
 *   2. catch-up: a replica from an empty data directory follows the sequencer's history (phase 1's windows).
 *      Its NATS_URL is a TCP relay in this process that opens only once the replica is listening, so the
 *      catch-up is not hidden inside its start-up: from its "connected to NATS" log line (the line's pino
 *      time) to the first poll (every 5 ms) of its X-Journal-Seq that equals the sequencer's. Rate = journal
 *      events / that time (the consumer's creation included). The two replicas of phases 3 and 4 start with
 *      it, straight on nats-server, and have caught up (idle) before the relay opens; the measured one then stops.
 *   3. replication lag at LAG_RATE orders/s open loop for LAG_SECONDS with both replicas following. Measured
 *      from timestamps on one clock: one WebSocket (market channel) per node subscribed to half the window's
 *      tokens; each price_change / last_trade_price event of the sequencer is matched to the replica's first
 *      event of that type and token with a journal stamp at least as new (a replica applying several records
 *      at once sends one price_change for them), and lag = its arrival from the replica - the sequencer event's
 *      arrival (this process's performance.now()). The sequencer sends an event right after its commit is durable, a
 *      replica right after it applied the batch into its own LMDB, both through the same stream code, so
 *      the difference is sequencer commit -> replica applied (publish, NATS, decode, the replica's LMDB
 *      commit, its projections). Also shown: the journal stamp -> arrival on each node (ms resolution), and the
 *      replicas' own view: the pm_replica_apply_delay_seconds histogram over the window (per record, from the
 *      sequencer's issue stamp to applied; quantiles estimated from its buckets), and the pm_replica_lag_batches
 *      and pm_replica_lag_seconds gauges scraped every METRICS_EVERY_MS, to compare with what the timestamps saw.
 *   4. GET /book requests/s of one token with levels, served by one replica, then by both at once (one
 *      autocannon child process per replica, READ_CONNECTIONS connections each, READ_SECONDS), with CPU per
 *      request of each replica process (/proc): on two cores the figures are CPU-bound; requests/s x CPU per
 *      request says how much of a core each replica used, and so how the rate would scale with cores.
 * Excluded from timing: process starts, market creation, funding, API keys, order signing, socket set-up.
 *
 * Self-checks (a failure throws): every order of every window acknowledged (no error class) and the load
 * tool's checks of the node it loaded (verifyLoad: balances, open and filled orders agree with the
 * acknowledgements); the stream confirms every batch the sequencer committed (pm_replication_confirmed_seq);
 * every market-channel event of the sequencer's socket is reached on each replica's (the same or a later
 * event of its token); after the lag window both replicas reach the sequencer's X-Journal-Seq and answer
 * GET /book of every token the sequencer's windows loaded with the same status 200, X-Journal-Seq and body;
 * every /book answer of phase 4 is 200 with the expected body (autocannon: no non-2xx, error, timeout or
 * mismatch).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { runAutocannonChild, type LoadResult } from '../lib/autocannon.ts';
import { driveLoad, prepareLoad, verifyLoad, type LoadOptions, type LoadSession, type RunStats } from '../../tools/load.ts';
import { freePort, natsServerAvailable, startNatsServer, type NatsServer } from '../../tools/nats-server.ts';
import { countAbove, histogramDelta, histogramOf, quantileOf } from '../../tools/metrics-text.ts';
import { cpuSeconds, startService, type ServiceProcess } from '../../tools/service-process.ts';

const TPUT_SECONDS = Number(process.env.CLUSTER_BENCH_TPUT_SECONDS ?? 4);
const TPUT_CONNECTIONS = 64;
const WARM_SECONDS = 2;
/** Interleaved, so a drift of the shared machine shows in both. */
const WINDOWS = ['off', 'on', 'off', 'on'] as const;
const LAG_RATE = Number(process.env.CLUSTER_BENCH_LAG_RATE ?? 2000);
const LAG_SECONDS = Number(process.env.CLUSTER_BENCH_LAG_SECONDS ?? 8);
/** Enough that a slow answer does not hold back orders that are due (open loop: at most this many in flight). */
const LAG_CONNECTIONS = 128;
const READ_SECONDS = Number(process.env.CLUSTER_BENCH_READ_SECONDS ?? 5);
const READ_CONNECTIONS = 16;
const METRICS_EVERY_MS = 200;
const ADMIN = 'cluster-bench';
const MASTER_KEY = 'cb'.repeat(32);
/** The events timed for the lag (`book` snapshots are throttled per node, on each node's own clock). */
const LAG_EVENTS = new Set(['price_change', 'last_trade_price']);

/** Closed at the end of the run (the catch-up relay). */
const closers: Array<() => void> = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

/**
 * The sequence a node's reads reflect (X-Journal-Seq of GET /time): a cluster's replication sequence, which
 * every write moves (the sequencer's samplers too), so a replica has caught up once it reaches a value.
 */
async function journalSeq(url: string): Promise<number> {
  const r = await fetch(`${url}/time`);
  await r.arrayBuffer();
  const h = r.headers.get('x-journal-seq');
  if (h === null) throw new Error(`cluster bench: ${url}/time carries no X-Journal-Seq`);
  return Number(h);
}

/** The warnings and errors among a node's last log lines. */
function warnings(p: ServiceProcess): string[] {
  return p
    .tail()
    .split('\n')
    .flatMap((l) => {
      try {
        const j = JSON.parse(l) as { level?: number; msg?: string; err?: unknown };
        return (j.level ?? 0) >= 40 ? [`${j.msg}${j.err === undefined ? '' : ` (${JSON.stringify(j.err).slice(0, 200)})`}`] : [];
      } catch {
        return [];
      }
    });
}

/** The sequencer's journal seq once it has not moved for 500 ms (orders of a backlog may still be committing). */
async function settledSeq(url: string): Promise<number> {
  let last = await journalSeq(url);
  for (;;) {
    await sleep(500);
    const now = await journalSeq(url);
    if (now === last) return now;
    last = now;
  }
}

function gauge(metrics: string, series: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? NaN : Number(line.split(' ')[1]);
}

async function until(what: string, ok: () => Promise<boolean>, ms: number, every = 20): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`cluster bench: timed out waiting for ${what}`);
    await sleep(every);
  }
}

function loadOptions(svc: ServiceProcess, over: Partial<LoadOptions>): LoadOptions {
  return { url: svc.url, adminToken: ADMIN, wallets: 50, markets: 8, mix: 'mixed', progress: false, verifySample: 300, log: () => undefined, ...over };
}

/** One window's run, checked: every order acknowledged and the node's state agrees with the acknowledgements. */
async function checkedRun(label: string, session: LoadSession, svc: ServiceProcess): Promise<{ run: RunStats; cpuS: number }> {
  const c0 = cpuSeconds(svc.pid) ?? NaN;
  const run = await driveLoad(session);
  const cpuS = (cpuSeconds(svc.pid) ?? NaN) - c0;
  await checkRun(label, session, run);
  return { run, cpuS };
}

async function checkRun(label: string, session: LoadSession, run: RunStats): Promise<void> {
  if (run.errors > 0 || run.acked !== run.sent) {
    // 401s here are L2 headers stamped when due that waited in the load tool's queue past auth.maxClockSkewSeconds:
    // the node could not keep up with the rate.
    throw new Error(`cluster bench self-check: ${label}: ${run.acked} of ${run.sent} orders acknowledged (${run.ordersPerSec.toFixed(0)}/s of ${run.targetRate}/s): ${JSON.stringify(run.errorClasses)}`);
  }
  const check = await verifyLoad(session, run);
  if (!check.ok) throw new Error(`cluster bench self-check: ${label}: the node disagrees with its acknowledgements:\n${check.problems.join('\n')}`);
}

/** A TCP relay to nats-server that accepts connections only once opened (phase 2; bench/cluster/history.bench.ts). */
export async function natsRelay(natsPort: number): Promise<{ url: string; open: () => Promise<void>; close: () => void }> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  return {
    url: `nats://127.0.0.1:${port}`,
    open: () =>
      new Promise((resolve, reject) => {
        server = createServer((down) => {
          const up = tcpConnect(natsPort, '127.0.0.1');
          for (const s of [down, up]) {
            sockets.add(s);
            s.on('error', () => (down.destroy(), up.destroy()));
            s.on('close', () => (sockets.delete(s), down.destroy(), up.destroy()));
          }
          down.pipe(up);
          up.pipe(down);
        });
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      }),
    close: () => {
      for (const s of sockets) s.destroy();
      server?.close();
    },
  };
}

/**
 * The market channel of one node: per token and event type, each event's journal stamp and arrival time
 * (performance.now()), in arrival order.
 */
class Arrivals {
  readonly byToken = new Map<string, Array<{ ts: number; at: number }>>();
  /** Journal stamp -> arrival (ms, Date.now()). */
  readonly fromStamp: number[] = [];
  count = 0;
  private constructor(private readonly ws: WebSocket) {}

  static async open(url: string, tokens: string[]): Promise<Arrivals> {
    const ws = new WebSocket(url.replace(/^http/, 'ws') + '/ws/market', { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
    const a = new Arrivals(ws);
    ws.on('message', (data) => a.received(data.toString()));
    ws.send(JSON.stringify({ type: 'market', assets_ids: tokens, initial_dump: false }));
    return a;
  }

  private received(text: string): void {
    const now = performance.now();
    const wall = Date.now();
    if (text === 'PONG') return;
    const parsed = JSON.parse(text) as LagEvent | LagEvent[];
    for (const e of Array.isArray(parsed) ? parsed : [parsed]) {
      if (!LAG_EVENTS.has(e.event_type)) continue;
      const tokens = e.event_type === 'price_change' ? new Set((e.price_changes ?? []).map((c) => c.asset_id)) : [e.asset_id];
      for (const t of tokens) {
        const key = `${e.event_type} ${t}`;
        const list = this.byToken.get(key);
        if (list === undefined) this.byToken.set(key, [{ ts: Number(e.timestamp), at: now }]);
        else list.push({ ts: Number(e.timestamp), at: now });
      }
      this.fromStamp.push(wall - Number(e.timestamp));
      this.count++;
    }
  }

  close(): void {
    this.ws.close();
  }
}

interface LagEvent {
  event_type: string;
  timestamp: string;
  asset_id?: string;
  price_changes?: Array<{ asset_id: string }>;
}

/** The replicas' own lag gauges, scraped every METRICS_EVERY_MS until stopped (a cross-check of the timestamps). */
function sampleLagMetrics(replicas: ServiceProcess[], into: Array<{ batches: number[]; seconds: number[] }>): { stop: () => void; done: Promise<void> } {
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      await Promise.all(
        replicas.map(async (r, i) => {
          const text = await (await fetch(`${r.url}/metrics`)).text();
          into[i].batches.push(gauge(text, 'pm_replica_lag_batches'));
          into[i].seconds.push(gauge(text, 'pm_replica_lag_seconds'));
        }),
      );
      await sleep(METRICS_EVERY_MS);
    }
  })();
  return { stop: () => (stopped = true), done };
}

/**
 * For each event of the sequencer, the first event of the same type and token from the replica whose journal
 * stamp is not older: when the replica showed that state or a later one (a replica that applies several
 * records at once sends one price_change for them, with the last one's stamp). Lag = replica arrival -
 * sequencer arrival (ms). `unmatched`: sequencer events the replica never caught up with.
 */
function lagsOf(seq: Arrivals, rep: Arrivals): { lags: number[]; unmatched: number; exact: number } {
  const lags: number[] = [];
  let unmatched = 0;
  let exact = 0;
  for (const [key, events] of seq.byToken) {
    const other = rep.byToken.get(key) ?? [];
    let j = 0;
    for (const e of events) {
      while (j < other.length && other[j].ts < e.ts) j++;
      if (j === other.length) unmatched++;
      else {
        lags.push(other[j].at - e.at);
        if (other[j].ts === e.ts) exact++;
      }
    }
  }
  return { lags, unmatched, exact };
}

const ms = (x: number) => x.toFixed(2);
const fmt = (x: number) => x.toLocaleString('en-US', { maximumFractionDigits: 0 });

interface Tput {
  label: 'off' | 'on';
  rate: number;
  cpuUsPerOrder: number;
  natsUsPerOrder: number;
}

/** Phase 1: ROLE=single and ROLE=sequencer side by side, loaded in turn, flat out. */
async function publicationCost(single: ServiceProcess, seq: ServiceProcess, nats: NatsServer): Promise<{ windows: Tput[]; tokens: string[] }> {
  const windows: Tput[] = [];
  const tokens: string[] = [];
  // Warm-up, not counted: the first seconds of a fresh process run code V8 has not compiled yet.
  for (const svc of [single, seq]) {
    const warm = await prepareLoad(loadOptions(svc, { flatOut: true, duration: WARM_SECONDS, connections: TPUT_CONNECTIONS, maxOrders: WARM_SECONDS * 6000, wallets: 20, markets: 4, verify: false }));
    if (svc === seq) tokens.push(...warm.markets.flatMap((m) => m.tokenIds));
    const run = await driveLoad(warm);
    if (run.errors > 0) throw new Error(`cluster bench self-check: warm-up: ${JSON.stringify(run.errorClasses)}`);
  }
  for (const label of WINDOWS) {
    const svc = label === 'on' ? seq : single;
    const session = await prepareLoad(loadOptions(svc, { flatOut: true, duration: TPUT_SECONDS, connections: TPUT_CONNECTIONS, maxOrders: TPUT_SECONDS * 6000, wallets: 20, markets: 4, verifySample: 100 }));
    if (label === 'on') tokens.push(...session.markets.flatMap((m) => m.tokenIds));
    const n0 = cpuSeconds(nats.pid!) ?? NaN;
    const { run, cpuS } = await checkedRun(`publication ${label}`, session, svc);
    const natsS = (cpuSeconds(nats.pid!) ?? NaN) - n0;
    windows.push({ label, rate: run.ordersPerSec, cpuUsPerOrder: (cpuS / run.acked) * 1e6, natsUsPerOrder: (natsS / run.acked) * 1e6 });
    const w = windows.at(-1)!;
    console.log(`  ${label === 'on' ? 'on ' : 'off'} ${label === 'on' ? 'ROLE=sequencer' : 'ROLE=single   '}: ${fmt(w.rate)} orders/s (${fmt(run.acked)} in ${run.elapsedS.toFixed(1)} s), service CPU ${w.cpuUsPerOrder.toFixed(0)} µs/order, nats-server CPU ${w.natsUsPerOrder.toFixed(1)} µs/order${run.ranOut ? ' (every pre-signed order sent before the window ended: a shorter window, same rate)' : ''}`);
  }
  return { windows, tokens };
}

/**
 * Phase 2: a replica from an empty store (started with the other two, its NATS connection held back by the
 * relay): once the others have caught up and it listens, the relay opens and its catch-up is timed alone.
 */
async function catchUp(replica: ServiceProcess, relay: Awaited<ReturnType<typeof natsRelay>>, target: number, events: number): Promise<{ events: number; seconds: number }> {
  if ((await journalSeq(replica.url)) !== 0) throw new Error('cluster bench: the catch-up replica applied batches before its NATS link opened');
  await relay.open();
  let reached = 0;
  await until(`the new replica at journal seq ${target}`, async () => (await journalSeq(replica.url)) >= target && (reached = Date.now()) > 0, 120_000, 5);
  const connected = replica
    .tail()
    .split('\n')
    .map((l) => {
      try {
        return JSON.parse(l) as { msg?: string; time?: number };
      } catch {
        return {};
      }
    })
    .find((j) => j.msg === 'connected to NATS');
  if (connected?.time === undefined) throw new Error(`cluster bench: no "connected to NATS" line in the replica's log:\n${replica.tail()}`);
  return { events, seconds: (reached - connected.time) / 1000 };
}

/**
 * The same status 200, X-Journal-Seq and body of every path on every node (read again, up to 40 times 50 ms
 * apart, while a sampler's record of the sequencer is on its way to the replicas).
 */
async function sameBooks(urls: string[], tokens: string[]): Promise<void> {
  for (const t of tokens) {
    const once = () =>
      Promise.all(
        urls.map(async (u) => {
          const r = await fetch(`${u}/book?token_id=${t}`);
          return { u, status: r.status, seq: r.headers.get('x-journal-seq'), body: await r.text() };
        }),
      );
    let reads = await once();
    for (let tries = 0; tries < 40 && reads.some((r) => r.seq !== reads[0].seq); tries++) {
      await sleep(50);
      reads = await once();
    }
    for (const r of reads) {
      if (r.status !== 200 || r.seq !== reads[0].seq || r.body !== reads[0].body) {
        throw new Error(`cluster bench self-check: GET /book?token_id=${t}: ${r.u} answered ${r.status} at seq ${r.seq}, ${reads[0].u} ${reads[0].status} at seq ${reads[0].seq}${r.body !== reads[0].body ? ' (bodies differ)' : ''}`);
      }
    }
  }
}

async function bookLoad(replicas: ServiceProcess[], token: string, body: string): Promise<Array<{ r: LoadResult; cpuUs: number }>> {
  const c0 = replicas.map((p) => cpuSeconds(p.pid) ?? NaN);
  const results = await Promise.all(
    replicas.map((p) => runAutocannonChild({ url: `${p.url}/book?token_id=${token}`, connections: READ_CONNECTIONS, pipelining: 1, duration: READ_SECONDS, expectBody: body })),
  );
  return results.map((r, i) => {
    if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0 || r.mismatches > 0 || r.total2xx === 0) {
      throw new Error(`cluster bench self-check: GET /book on ${replicas[i].url}: ${r.total2xx} 200s, ${r.non2xx} other statuses, ${r.errors} errors, ${r.timeouts} timeouts, ${r.mismatches} bodies not the expected one`);
    }
    return { r, cpuUs: (((cpuSeconds(replicas[i].pid) ?? NaN) - c0[i]) / r.total2xx) * 1e6 };
  });
}

export default async function run(): Promise<void> {
  if (!natsServerAvailable()) {
    if (process.env.CI !== undefined) throw new Error("cluster bench: nats-server not on PATH (Debian's nats-server package)");
    console.log("cluster bench: skipped: nats-server not on PATH (Debian's nats-server package)");
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'pm-cluster-bench-'));
  const configFile = join(dir, 'config.json');
  writeFileSync(configFile, JSON.stringify({ auth: { masterKey: MASTER_KEY } }));
  // The per-role users and permissions of tools/nats-config.ts, as a deployment runs.
  const nats = await startNatsServer({ dir: join(dir, 'nats'), secure: true });
  const procs: ServiceProcess[] = [];
  const sockets: Arrivals[] = [];
  const node = async (role: string, name: string, natsUrl = nats.url) => {
    const p = await startService({
      dataDir: join(dir, name),
      adminToken: ADMIN,
      env: { ROLE: role, NATS_URL: natsUrl, ...nats.env(role), SEQUENCER_URL: 'http://127.0.0.1:8080', CONFIG_FILE: configFile, RATE_LIMITS: 'off' },
      startTimeoutMs: 120_000,
    });
    procs.push(p);
    return p;
  };
  const began = performance.now();
  const since = () => `${((performance.now() - began) / 1000).toFixed(0)} s into the run`;
  try {
    const [single, seq] = await Promise.all([node('single', 'single'), node('sequencer', 'sequencer')]);
    console.log(`cluster bench: nats-server ${nats.url} (pid ${nats.pid}), sequencer pid ${seq.pid}, single pid ${single.pid}; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);

    console.log(`\n  (1) publication off (ROLE=single) vs on (ROLE=sequencer, no replica attached): flat out, ${TPUT_CONNECTIONS} connections, ${TPUT_SECONDS} s per window [${since()}]`);
    const tput = await publicationCost(single, seq, nats);
    await single.stop('SIGTERM');
    const mean = (label: string, f: (w: Tput) => number) => {
      const ws = tput.windows.filter((w) => w.label === label);
      return ws.reduce((s, w) => s + f(w), 0) / ws.length;
    };
    const ratio = mean('on', (w) => w.rate) / mean('off', (w) => w.rate);
    console.log(`      on / off: orders/s x${ratio.toFixed(3)} (${fmt(mean('on', (w) => w.rate))} vs ${fmt(mean('off', (w) => w.rate))}), service CPU per order x${(mean('on', (w) => w.cpuUsPerOrder) / mean('off', (w) => w.cpuUsPerOrder)).toFixed(3)}; target within 10% ${Math.abs(ratio - 1) <= 0.1 ? 'met' : 'NOT met'}`);
    const seqAfterTput = await journalSeq(seq.url);
    await until('the stream to confirm every committed batch', async () => gauge(await (await fetch(`${seq.url}/metrics`)).text(), 'pm_replication_confirmed_rseq') >= seqAfterTput, 30_000);
    const eventsAfterTput = gauge(await (await fetch(`${seq.url}/metrics`)).text(), 'engine_committed_seq');

    console.log(`\n  (2) catch-up from an empty data directory (sequencer history: ${fmt(eventsAfterTput)} journal events) [${since()}]`);
    const relay = await natsRelay(nats.port);
    closers.push(() => relay.close());
    const [fresh, ...replicas] = await Promise.all([node('replica', 'replica-0', relay.url), node('replica', 'replica-1'), node('replica', 'replica-2')]);
    for (const r of replicas) await until(`replica ${r.url} at seq ${seqAfterTput}`, async () => (await journalSeq(r.url)) >= seqAfterTput, 120_000);
    const caught = await catchUp(fresh, relay, seqAfterTput, eventsAfterTput);
    console.log(`      ${fmt(caught.events)} events in ${caught.seconds.toFixed(2)} s: ${fmt(caught.events / caught.seconds)} events/s (from its "connected to NATS" to its X-Journal-Seq = the sequencer's; the other two replicas idle)`);
    await fresh.stop('SIGTERM');
    relay.close();

    console.log(`\n  (3) replication lag at ${fmt(LAG_RATE)} orders/s open loop for ${LAG_SECONDS} s, two replicas following [${since()}]`);
    const session = await prepareLoad(loadOptions(seq, { rate: LAG_RATE, duration: LAG_SECONDS, connections: LAG_CONNECTIONS }));
    const lagTokens = session.markets.flatMap((m) => m.tokenIds);
    const watched = lagTokens.filter((_, i) => i % 2 === 0);
    for (const p of [seq, ...replicas]) sockets.push(await Arrivals.open(p.url, watched));
    await sleep(300);
    const sampled = replicas.map(() => ({ batches: [] as number[], seconds: [] as number[] }));
    const delayBefore = await Promise.all(replicas.map(async (r) => histogramOf(await (await fetch(`${r.url}/metrics`)).text(), 'pm_replica_apply_delay_seconds')));
    const sampler = sampleLagMetrics(replicas, sampled);
    const lagRun = await driveLoad(session).finally(() => sampler.stop());
    await sampler.done;
    console.log(`      load: offered ${fmt(LAG_RATE)} orders/s, answered ${fmt(lagRun.ordersPerSec)}/s (first due to last answer), order p50 ${ms(lagRun.latencyMs.p50)} ms p99 ${ms(lagRun.latencyMs.p99)} ms; ${fmt(sockets[0].count)} events on the sequencer's socket (${watched.length} tokens)`);
    // The figures first, then the checks: a machine too busy for the rate still shows what it did.
    const target = await settledSeq(seq.url);
    for (const r of replicas) await until(`replica ${r.url} at seq ${target}`, async () => (await journalSeq(r.url)) >= target, 30_000);
    // Frames of the last batches may still be on their way: until no socket has received anything for 500 ms.
    for (let counts = ''; counts !== sockets.map((x) => x.count).join(); ) {
      counts = sockets.map((x) => x.count).join();
      await sleep(500);
    }
    for (const [i, s] of sockets.slice(1).entries()) {
      const { lags, unmatched, exact } = lagsOf(sockets[0], s);
      console.log(`      replica ${i + 1}: sequencer commit -> replica applied p50 ${ms(quantile(lags, 0.5))} ms, p99 ${ms(quantile(lags, 0.99))} ms, max ${ms(quantile(lags, 1))} ms (${fmt(lags.length)} events, ${fmt(lags.length - exact)} of them shown by the replica in a later event of the token; ${unmatched} never)`);
      if (unmatched > 0) throw new Error(`cluster bench self-check: replica ${i + 1} never sent the state of ${unmatched} of the sequencer's market-channel events`);
    }
    for (const [i, m] of sampled.entries()) {
      const after = histogramOf(await (await fetch(`${replicas[i].url}/metrics`)).text(), 'pm_replica_apply_delay_seconds');
      if (after === undefined) throw new Error(`cluster bench: replica ${i + 1} has no pm_replica_apply_delay_seconds histogram`);
      const h = histogramDelta(after, delayBefore[i]);
      console.log(
        `      replica ${i + 1} /metrics: pm_replica_apply_delay_seconds (${fmt(h.count)} records, bucket estimates) p50 ${(quantileOf(h, 0.5) * 1000).toFixed(1)} ms, p99 ${(quantileOf(h, 0.99) * 1000).toFixed(1)} ms, ${countAbove(h, 1)} over 1 s; ` +
          `every ${METRICS_EVERY_MS} ms: pm_replica_lag_batches max ${quantile(m.batches, 1)}, pm_replica_lag_seconds max ${quantile(m.seconds, 1).toFixed(2)}`,
      );
    }
    for (const [i, s] of sockets.entries()) {
      console.log(`      journal stamp -> arrival from ${i === 0 ? 'the sequencer' : `replica ${i}  `}: p50 ${quantile(s.fromStamp, 0.5)} ms, p99 ${quantile(s.fromStamp, 0.99)} ms (ms resolution; includes the commit's fsync)`);
    }
    for (const s of sockets.splice(0)) s.close();
    for (const [i, r] of replicas.entries()) for (const w of warnings(r)) console.log(`      replica ${i + 1} logged: ${w}`);
    await checkRun('lag window', session, lagRun);
    await sameBooks([seq.url, ...replicas.map((r) => r.url)], [...tput.tokens, ...lagTokens]);
    console.log(`      converged: both replicas at X-Journal-Seq ${fmt(target)}, GET /book of all ${tput.tokens.length + lagTokens.length} loaded tokens equal to the sequencer's`);

    // Outcome 0 of the first market: its resting BUYs give the book levels.
    const token = lagTokens[0];
    const body = await (await fetch(`${replicas[0].url}/book?token_id=${token}`)).text();
    console.log(`\n  (4) GET /book of one token (${body.length} bytes), autocannon in a child process per replica, ${READ_CONNECTIONS} connections each, ${READ_SECONDS} s [${since()}]`);
    const one = await bookLoad([replicas[0]], token, body);
    console.log(`      one replica: ${fmt(one[0].r.rps)} requests/s, p99 ${one[0].r.raw.p99} ms, replica CPU ${one[0].cpuUs.toFixed(1)} µs/request`);
    const two = await bookLoad(replicas, token, body);
    const total = two.reduce((s, x) => s + x.r.rps, 0);
    console.log(`      two replicas: ${fmt(total)} requests/s (${two.map((x) => fmt(x.r.rps)).join(' + ')}), p99 ${two.map((x) => x.r.raw.p99).join(' / ')} ms, replica CPU ${two.map((x) => x.cpuUs.toFixed(1)).join(' / ')} µs/request`);
    console.log(`      scaling x${(total / one[0].r.rps).toFixed(2)}; one replica uses ${((one[0].r.rps * one[0].cpuUs) / 1e6).toFixed(2)} core, two ${two.map((x) => ((x.r.rps * x.cpuUs) / 1e6).toFixed(2)).join(' + ')} cores`);
    console.log(`\n  done [${since()}]`);
  } finally {
    for (const s of sockets) s.close();
    for (const p of procs) await p.stop('SIGTERM').catch(() => undefined);
    for (const c of closers.splice(0)) c();
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
