/**
 * Market-data read throughput through the real app (startApp: engine with its shard worker, LMDB, the
 * uWS edge, validation, metrics), against a bare uWS route in the same process serving the same bytes.
 * Run alone: `npx tsx bench/market-data/market-data.bench.ts`; or `npm run bench -- market-data`.
 *
 * Workloads (loopback only, HTTP/1.1 keep-alive, rate limits OFF as DESIGN section 8 allows for load
 * tests; each target: WARMUP_S s warm-up, discarded, then MEASURE_S s measured):
 *   GET /book, 200 levels     tick 0.001, 100 bid levels (0.300..0.399) + 100 ask levels (0.600..0.699),
 *                             one resting order per level; CONNECTIONS x PIPELINING
 *   GET /book, 400 levels     the same with 200 levels per side (0.200..0.399 / 0.600..0.799)
 *   bare uWS route            GET /book answering the 200-level (resp. 400-level) snapshot JSON, nothing else
 *   POST /prices, 100 tokens  50 markets, 5 bid and 5 ask levels each; body [{token_id, side}] x 100
 *   GET /prices-history       one token, 30 days of minute samples (43,200), startTs..endTs of those 30
 *                             days: fidelity=1 (43,200 points, ~1.3 MB) and fidelity=60 (720 points);
 *                             HISTORY_CONNECTIONS connections, no pipelining
 * Load generator: autocannon 9 in a child process (this machine may have two cores: the server keeps one).
 *
 * Timed (by autocannon): only the measured runs. Excluded from timing: starting the app and the bare
 * server, registering markets and placing the resting orders, writing the 43,200 history samples
 * (directly into the prices table, then awaiting the commit), the child's start-up, the warm-ups, the checks.
 *
 * Self-checks (a failure throws): before timing, each route's answer equals what the workload predicts
 * (books: levels, ordering and a recomputed SHA-1 hash; /prices: the best bid and ask of each generated
 * market; history: every generated sample, bucketed); during timing autocannon compares every response
 * body to that expected text (mismatches, non-2xx, errors and timeouts must all be 0). The /book target
 * (routed >= 60% of bare req/s) is reported, not enforced: it depends on the machine. Each /book pair is
 * measured twice (bare, routed, routed, bare) and merged, so drift in the machine's load cancels; the server
 * CPU per request (this process, all threads) is reported too: it is the ratio that matters when the load
 * generator, not the server, is the bottleneck.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadUws } from '../../src/edge/http/uws.ts';
import { startApp, type App } from '../../src/node/app.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { priceKey } from '../../src/journal/keys.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { runAutocannonChild, type LoadOptions, type LoadResult } from '../lib/autocannon.ts';
import { T, market, order, wallet } from '../../test/fixtures/engine-harness.ts';

const CONNECTIONS = 64;
const PIPELINING = 4;
const HISTORY_CONNECTIONS = 4;
const WARMUP_S = 1;
const MEASURE_S = 5;
const DAY = 86_400;

const load = runAutocannonChild;

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(`market-data bench self-check failed: ${what}`);
}

// ---- workload -----------------------------------------------------------------------------------------------

const fmtPips = (p: number) => String(p / 10_000);

/** Places one resting order per level; returns the expected bids (ascending) and asks (descending). */
async function buildBook(e: Engine, n: number, perSide: number, tickPips: number, bidTop: number, askLow: number) {
  const m = market(n, { tickPips, minSizeUnits: T });
  e.registerMarket(m);
  const buyer = wallet(0xb000 + n);
  const seller = wallet(0xc000 + n);
  check((await e.deposit(buyer, 10_000_000 * T)).ok && (await e.deposit(seller, 10_000_000 * T)).ok, 'funding');
  check((await e.split(seller, m.conditionId, 100_000 * T)).ok, 'split');
  const placed: Promise<{ ok: boolean }>[] = [];
  const bids: { price: string; size: string }[] = [];
  const asks: { price: string; size: string }[] = [];
  for (let i = 0; i < perSide; i++) {
    const bp = bidTop - i * tickPips;
    const ap = askLow + i * tickPips;
    const size = (1 + (i % 7)) * T;
    placed.push(e.placeOrder(order({ wallet: buyer, tokenId: m.tokenIds[0], side: 'BUY', price: bp, size })));
    placed.push(e.placeOrder(order({ wallet: seller, tokenId: m.tokenIds[0], side: 'SELL', price: ap, size })));
    bids.unshift({ price: fmtPips(bp), size: String(size / T) });
    asks.unshift({ price: fmtPips(ap), size: String(size / T) });
  }
  for (const r of await Promise.all(placed)) check(r.ok, 'a resting order was refused');
  return { m, bids, asks };
}

async function waitFor(what: string, cond: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`market-data bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function fetchText(url: string, init?: RequestInit): Promise<string> {
  const r = await fetch(url, init);
  check(r.status === 200, `${url}: status ${r.status}`);
  return r.text();
}

function startBare(body: string): Promise<{ url: string; close: () => void }> {
  const { uws: uWS } = loadUws(16384);
  const app = uWS.App().get('/book', (res) => {
    // A body this size can meet backpressure: end() then leaves the response pending, and uWS aborts the
    // process when a handler returns with a pending response and no abort handler.
    res.onAborted(() => undefined);
    res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(body);
  });
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (socket) => {
      if (!socket) return reject(new Error('bare: cannot listen'));
      resolve({
        url: `http://127.0.0.1:${uWS.us_socket_local_port(socket)}/book`,
        close: () => {
          uWS.us_listen_socket_close(socket);
          app.close();
        },
      });
    });
  });
}

interface Row {
  target: string;
  r: LoadResult;
  bodyBytes: number;
  /** CPU time (user + system, all threads) of this process per answered request during the measured run. */
  cpuUsPerReq: number;
}

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

/** BENCH_MD_ONLY=<substring>: measure only the targets whose name contains it (setup and checks still run). */
const ONLY = process.env.BENCH_MD_ONLY;

async function measure(target: string, o: Omit<LoadOptions, 'duration'>): Promise<Row | undefined> {
  if (ONLY !== undefined && !target.includes(ONLY)) return undefined;
  await load({ ...o, duration: WARMUP_S });
  const cpu0 = process.cpuUsage();
  const r = await load({ ...o, duration: MEASURE_S });
  const cpu = process.cpuUsage(cpu0);
  const bad = Object.entries({ non2xx: r.non2xx, mismatches: r.mismatches, errors: r.errors, timeouts: r.timeouts }).filter(([, v]) => v !== 0);
  check(bad.length === 0, `${target}: ${bad.map(([k, v]) => `${k}=${v}`).join(', ')}`);
  check(r.total2xx > 0, `${target}: nothing completed`);
  return { target, r, bodyBytes: Buffer.byteLength(o.expectBody), cpuUsPerReq: (cpu.user + cpu.system) / r.total2xx };
}

/** Two rounds, bare then routed and routed then bare, merged: drift in the machine's load cancels out. */
async function measurePair(bareName: string, routedName: string, bare: Omit<LoadOptions, 'duration'>, routed: Omit<LoadOptions, 'duration'>): Promise<Row[]> {
  const b1 = await measure(bareName, bare);
  const r1 = await measure(routedName, routed);
  const r2 = await measure(routedName, routed);
  const b2 = await measure(bareName, bare);
  const merge = (a: Row | undefined, b: Row | undefined): Row[] => {
    if (a === undefined || b === undefined) return [];
    const n = a.r.total2xx + b.r.total2xx;
    const r: LoadResult = {
      ...a.r,
      duration: a.r.duration + b.r.duration,
      total2xx: n,
      p50: (a.r.p50 + b.r.p50) / 2,
      p99: Math.max(a.r.p99, b.r.p99),
      bytesPerSec: (a.r.bytesPerSec + b.r.bytesPerSec) / 2,
    };
    return [{ target: a.target, r, bodyBytes: a.bodyBytes, cpuUsPerReq: (a.cpuUsPerReq * a.r.total2xx + b.cpuUsPerReq * b.r.total2xx) / n }];
  };
  return [...merge(b1, b2), ...merge(r1, r2)];
}

export default async function run(): Promise<Row[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-md-bench-'));
  const app: App = await startApp(testConfig({ dataDir, http: { port: 0 }, demo: false, rateLimits: { enabled: false } }), { log: silentLogger });
  const base = `http://127.0.0.1:${app.port}`;
  const engine = app.ctx.engine as unknown as Engine;
  const rows: Row[] = [];
  const push = (r: Row | undefined) => {
    if (r !== undefined) rows.push(r);
  };
  const bares: { close: () => void }[] = [];
  try {
    // Books: 200 levels (100 per side) and 400 levels (200 per side), tick 0.001.
    const b200 = await buildBook(engine, 201, 100, 10, 3990, 6000);
    const b400 = await buildBook(engine, 202, 200, 10, 3990, 6000);
    for (const b of [b200, b400]) {
      const token = b.m.tokenIds[0];
      await waitFor('book snapshots', () => {
        const s = engine.bookSnapshot(token);
        return s !== undefined && (JSON.parse(s.json) as { asks: unknown[] }).asks.length === b.asks.length;
      });
      const text = await fetchText(`${base}/book?token_id=${token}`);
      const book = JSON.parse(text) as Record<string, unknown>;
      check(JSON.stringify(book.bids) === JSON.stringify(b.bids) && JSON.stringify(book.asks) === JSON.stringify(b.asks), 'book levels and ordering');
      check(book.hash === createHash('sha1').update(JSON.stringify({ ...book, hash: '' })).digest('hex'), 'book hash');
    }

    // /prices: 50 markets x 2 tokens, 5 levels per side each, best bid 0.40 + i/1000 and best ask 0.60 - i/1000.
    const quoteBody: { token_id: string; side: string }[] = [];
    const expectedQuotes: Record<string, { BUY: string; SELL: string }> = {};
    for (let i = 0; i < 50; i++) {
      const m = market(300 + i, { tickPips: 10, minSizeUnits: T });
      engine.registerMarket(m);
      const buyer = wallet(0xd000 + i);
      const seller = wallet(0xe000 + i);
      check((await engine.deposit(buyer, 100_000 * T)).ok && (await engine.deposit(seller, 100_000 * T)).ok, 'funding');
      check((await engine.split(seller, m.conditionId, 1000 * T)).ok, 'split');
      const bid = 4000 + i * 10;
      const ask = 6000 - i * 10;
      const placed = [];
      for (let k = 0; k < 5; k++) {
        placed.push(engine.placeOrder(order({ wallet: buyer, tokenId: m.tokenIds[0], side: 'BUY', price: bid - k * 10, size: 2 * T })));
        placed.push(engine.placeOrder(order({ wallet: seller, tokenId: m.tokenIds[0], side: 'SELL', price: ask + k * 10, size: 2 * T })));
      }
      for (const r of await Promise.all(placed)) check(r.ok, 'quote order refused');
      quoteBody.push({ token_id: m.tokenIds[0], side: 'BUY' }, { token_id: m.tokenIds[1], side: 'SELL' });
      expectedQuotes[m.tokenIds[0]] = { BUY: fmtPips(bid), SELL: fmtPips(ask) };
      expectedQuotes[m.tokenIds[1]] = { BUY: fmtPips(10_000 - ask), SELL: fmtPips(10_000 - bid) };
    }
    const quotesText = JSON.stringify(quoteBody);
    const expectedQuotesText = JSON.stringify(expectedQuotes);
    await waitFor('quote snapshots', () => {
      const last = engine.bookSnapshot(quoteBody[quoteBody.length - 1].token_id);
      return last !== undefined && (JSON.parse(last.json) as { bids: unknown[] }).bids.length === 5;
    });
    check((await fetchText(`${base}/prices`, { method: 'POST', body: quotesText })) === expectedQuotesText, '/prices answers the generated best bid and ask');

    // History: 30 days of minute samples of one token (second 7 of each minute).
    const hm = market(400);
    engine.registerMarket(hm);
    const htoken = hm.tokenIds[0];
    const start = Math.floor(Date.now() / 1000 / 60) * 60 - 30 * DAY;
    const end = start + 30 * DAY - 1;
    const samples = 30 * 24 * 60;
    const priceAt = (i: number) => 2000 + ((i * 37) % 6000);
    let last: Promise<boolean> | undefined;
    for (let i = 0; i < samples; i++) last = app.ctx.store.prices.put(priceKey(htoken, start + i * 60 + 7), priceAt(i));
    await last;
    const expectHistory = (fidelity: number) => {
      const w = fidelity * 60;
      const out: { t: number; p: number }[] = [];
      for (let i = 0; i < samples; i++) {
        const s = start + i * 60 + 7;
        const b = s - (s % w);
        if (out.length > 0 && out[out.length - 1].t === b) out[out.length - 1].p = priceAt(i) / 10_000;
        else out.push({ t: b, p: priceAt(i) / 10_000 });
      }
      return JSON.stringify({ history: out });
    };
    const h1 = expectHistory(1);
    const h60 = expectHistory(60);
    const hUrl = (f: number) => `${base}/prices-history?market=${htoken}&startTs=${start}&endTs=${end}&fidelity=${f}`;
    check((await fetchText(hUrl(1))) === h1, 'history at fidelity 1 is every sample');
    check((await fetchText(hUrl(60))) === h60, 'history at fidelity 60 is the last sample of each hour');
    check((JSON.parse(h1) as { history: unknown[] }).history.length === samples, '43,200 points');

    console.log(
      `market-data.bench: ${CONNECTIONS} connections x ${PIPELINING} pipelined (history: ${HISTORY_CONNECTIONS} x 1), ` +
        `${WARMUP_S} s warm-up + ${MEASURE_S} s per target, loopback, rate limits OFF, autocannon in a child process; node ${process.version}`,
    );
    for (const [name, b] of [['200 levels', b200], ['400 levels', b400]] as const) {
      const body = engine.bookSnapshot(b.m.tokenIds[0])!.json;
      const bare = await startBare(body);
      bares.push(bare);
      const opts = { connections: CONNECTIONS, pipelining: PIPELINING, expectBody: body };
      rows.push(...(await measurePair(`bare uWS GET /book (${name})`, `GET /book (${name})`, { ...opts, url: bare.url }, { ...opts, url: `${base}/book?token_id=${b.m.tokenIds[0]}` })));
    }
    push(await measure('POST /prices (100 tokens)', { url: `${base}/prices`, method: 'POST', body: quotesText, connections: CONNECTIONS, pipelining: PIPELINING, expectBody: expectedQuotesText }));
    push(await measure('GET /prices-history (30 d, fidelity 1)', { url: hUrl(1), connections: HISTORY_CONNECTIONS, pipelining: 1, expectBody: h1 }));
    push(await measure('GET /prices-history (30 d, fidelity 60)', { url: hUrl(60), connections: HISTORY_CONNECTIONS, pipelining: 1, expectBody: h60 }));
  } finally {
    for (const b of bares) b.close();
    await app.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }

  const header = ['target', 'req/s', 'p50 ms', 'p99 ms', 'body bytes', 'MB/s', 'vs bare', 'server CPU us/req', 'CPU bare/routed'];
  const lines = rows.map((x) => {
    const bare = x.target.startsWith('GET /book') ? rows.find((b) => b.target === `bare uWS ${x.target}`) : undefined;
    const rps = x.r.total2xx / x.r.duration;
    const ratio = bare ? `${fmt((100 * rps) / (bare.r.total2xx / bare.r.duration), 1)}%` : '';
    const cpuRatio = bare ? `${fmt((100 * bare.cpuUsPerReq) / x.cpuUsPerReq, 1)}%` : '';
    return [x.target, fmt(rps), fmt(x.r.p50, 2), fmt(x.r.p99, 2), fmt(x.bodyBytes), fmt(x.r.bytesPerSec / 1e6, 1), ratio, fmt(x.cpuUsPerReq, 1), cpuRatio];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(line(l));
  const r200 = rows.find((x) => x.target === 'GET /book (200 levels)');
  const b200 = rows.find((x) => x.target === 'bare uWS GET /book (200 levels)');
  if (r200 && b200) {
    const ratio = r200.r.total2xx / r200.r.duration / (b200.r.total2xx / b200.r.duration);
    console.log(
      `GET /book (200 levels) / bare = ${fmt(100 * ratio, 1)}% of req/s (target >= 60%: ${ratio >= 0.6 ? 'met' : 'NOT met'}); ` +
        `server CPU per request bare/routed = ${fmt((100 * b200.cpuUsPerReq) / r200.cpuUsPerReq, 1)}% (the ratio when the server, not the load generator, is the bottleneck)`,
    );
  }
  console.log('every response matched its expected body; self-checks passed');
  return rows;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
