/**
 * Catalog: import throughput, then GET /events (filtered and ordered), GET /events/slug/{slug} and
 * GET /public-search over loopback HTTP, with 100,000 events and 200,000 markets in the store.
 * Run alone: `npx tsx bench/catalog/catalog.bench.ts`; or with `npm run bench -- catalog`.
 *
 * Workload (seeded, src/demo/catalog.ts syntheticCatalog): 100,000 events with 1-3 markets each
 * (exactly 200,000 markets; groups of two or more are neg-risk), 20 tags (two per event at most), a
 * daily series on ~5% of the events, 20% of the events created by one of three sites, ~30% closed.
 *
 * Timed:
 *   - import: tools/import-catalog.ts's importCatalog on the generated array (what the CLI runs after
 *     parsing the file): schema check, whole-catalog check against the store, then batches of 500 events
 *     in their LMDB transactions (durable commits, two batches in flight). Reported as events/s and
 *     markets/s, check and write phases separately; then the same import again (every record unchanged).
 *   - HTTP: the real edge (edge/server.ts) with the real catalog routes on that store, rate limits off,
 *     no engine (prices fall back to the imported seeds). autocannon on a worker thread, 10 connections:
 *     per endpoint one run at a fixed 1,000 requests/s for 10 s (p50 / p99 with coordinated-omission
 *     correction) and one unthrottled run for 5 s (requests/s, p99).
 *       /events: 40 filtered and ordered pages (tag, tag_id, two tags, series, creator, creator x tag,
 *                status flags, orders by endDate / startDate / title / updatedAt / closed,endDate, offsets
 *                0..500, limits 20..100);
 *       /events/slug/{slug}: 2,000 random slugs (slug form with markets, tags, series);
 *       /public-search: 40 queries (one to three words, prefixes, pages 1-3, creator scope), repeated, so
 *                mostly answered from the reader's per-generation ranking cache; and 3,000 distinct
 *                queries (two vocabulary words, or a prefix), more than the cache holds, so each one ranks
 *                from the postings.
 * Excluded from timing: generating the catalog, opening the server, the self-checks.
 *
 * Self-checks (a failure exits 1): the import summary counts every event, market, tag and series once
 * and the second import reports all unchanged; sampled /events pages hold only matching events in order
 * and as many as the generator's own count allows; slug lookups return the generated event with all its
 * markets; search totals equal a brute-force count over the generated catalog; every timed request
 * answered 200.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { AppContext } from '../../src/edge/context.ts';
import { Metrics } from '../../src/edge/pipeline/metrics.ts';
import { RateLimiter } from '../../src/edge/limits/rate-limit.ts';
import { catalogRoutes } from '../../src/edge/routes/catalog/catalog.ts';
import { startServer } from '../../src/edge/server.ts';
import { openStore } from '../../src/journal/env.ts';
import { CatalogWriter } from '../../src/projections/catalog.ts';
import { queryWords, words } from '../../src/projections/catalog/catalog-index.ts';
import { CatalogReader } from '../../src/queries/catalog.ts';
import { systemClock } from '../../src/runtime/clock.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import type { EventInput } from '../../src/edge/schemas/admin.ts';
import { rng, syntheticCatalog } from '../../src/demo/catalog.ts';
import { importCatalog } from '../../tools/import-catalog.ts';

interface LoadResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: Record<string, unknown>) => Promise<LoadResult>;

/** CATALOG_BENCH_EVENTS (a multiple of 4) shrinks the catalog for a quick try; the figures are for 100,000. */
const EVENTS = Number(process.env.CATALOG_BENCH_EVENTS ?? 100_000);
const MARKETS = 2 * EVENTS;
const RATE = 1_000;
const FIXED_SECONDS = 10;
const MAX_SECONDS = 5;
const CONNECTIONS = 10;

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(`catalog bench self-check failed: ${what}`);
}

const tagOf = (events: EventInput[], slug: string) => events.flatMap((e) => e.tags ?? []).find((t) => t.slug === slug)!;

function eventPaths(events: EventInput[]): string[] {
  const r = rng(21);
  const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)];
  const tags = ['topic-crypto', 'topic-politics', 'topic-sports', 'topic-economy', 'topic-ai', 'topic-soccer'];
  const out: string[] = [];
  for (let i = 0; i < 40; i++) {
    const tag = pick(tags);
    const limit = pick([20, 50, 100]);
    const offset = pick([0, 0, 20, 100, 500]);
    const variants = [
      `/events?tag_slug=${tag}&closed=false&order=endDate&ascending=true&limit=${limit}&offset=${offset}`,
      `/events?tag_id=${tagOf(events, tag).id}&active=true&order=startDate&limit=${limit}&offset=${offset}`,
      `/events?creator=${pick(['site-a', 'site-b', 'site-c'])}&order=title&ascending=true&limit=${limit}`,
      `/events?series_slug=synthetic-daily&order=endDate,title&limit=${limit}`,
      `/events?closed=false&archived=false&order=updatedAt&limit=${limit}&offset=${offset}`,
      `/events?tag=${tag}&tag_slug=${pick(tags)}&limit=${limit}`,
      `/events?creator=site-b&tag=${tag}&order=closed,endDate&limit=${limit}`,
      `/events?active=true&closed=false&order=title&limit=${limit}&offset=${offset}`,
    ];
    out.push(variants[i % variants.length]);
  }
  return out;
}

function slugPaths(events: EventInput[]): string[] {
  const r = rng(22);
  return Array.from({ length: 2000 }, () => `/events/slug/${events[Math.floor(r() * events.length)].slug}`);
}

const QUERIES = ['bitcoin', 'tesla record', 'nvidia ipo', 'the fed cut interest', 'real madrid', 'bitc', 'championship 2027', 'soccer', 'taylor swift', 'merge', 'option b', 'ceasefire', 'norway oil', 'ai', 'launch product'];

/** Distinct queries (more than the reader's search cache holds): every request ranks from the postings. */
function coldSearchPaths(events: EventInput[]): string[] {
  const r = rng(23);
  const vocabulary = [...new Set(events.slice(0, 2000).flatMap((e) => words(e.title)))];
  const out = new Set<string>();
  while (out.size < 3000) {
    const a = vocabulary[Math.floor(r() * vocabulary.length)];
    const b = vocabulary[Math.floor(r() * vocabulary.length)];
    const q = r() < 0.3 ? a.slice(0, 2 + Math.floor(r() * Math.max(1, a.length - 2))) : `${a} ${b}`;
    out.add(`/public-search?q=${encodeURIComponent(q)}&limit_per_type=${10 + (out.size % 3) * 10}`);
  }
  return [...out];
}

function searchPaths(): string[] {
  const out: string[] = [];
  QUERIES.forEach((q, i) => {
    out.push(`/public-search?q=${encodeURIComponent(q)}`);
    out.push(`/public-search?q=${encodeURIComponent(q)}&limit_per_type=10&page=${1 + (i % 3)}`);
    if (i % 2 === 0) out.push(`/public-search?q=${encodeURIComponent(q)}&creator=site-a`);
  });
  return out.slice(0, 40);
}

/** Brute-force search total over the generated catalog (event matches every word as a word prefix). */
function bruteSearchTotal(events: EventInput[], q: string): number {
  const ws = queryWords(q);
  let n = 0;
  for (const e of events) {
    const terms = [...words(e.title), ...(e.tags ?? []).flatMap((t) => words(t.label ?? '')), ...(e.markets ?? []).flatMap((m) => words(m.question))];
    if (ws.every((w) => terms.some((t) => t.startsWith(w)))) n++;
  }
  return n;
}

async function load(base: string, paths: string[], rate: number | undefined, seconds: number): Promise<LoadResult> {
  return autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: seconds,
    workers: 1,
    ...(rate !== undefined ? { overallRate: rate } : {}),
    requests: paths.map((path) => ({ method: 'GET', path })),
  });
}

async function selfCheck(base: string, events: EventInput[]): Promise<void> {
  const get = async (path: string) => {
    const r = await fetch(base + path);
    check(r.status === 200, `${path} answered ${r.status}`);
    return r.json() as Promise<any>;
  };
  // Filtered and ordered: every row matches, rows are in order, and the page is as full as it can be.
  const crypto = tagOf(events, 'topic-crypto');
  const open = events.filter((e) => !e.closed && (e.tags ?? []).some((t) => t.id === crypto.id));
  const page = await get(`/events?tag_slug=topic-crypto&closed=false&order=endDate&ascending=true&limit=100&offset=200`);
  check(page.length === Math.min(100, Math.max(0, open.length - 200)), `tag page size ${page.length}`);
  for (let i = 0; i < page.length; i++) {
    const e = page[i];
    check(!e.closed && e.tags.some((t: { id: string }) => t.id === crypto.id), 'tag page rows match the filter');
    if (i > 0) check(page[i - 1].endDate <= e.endDate, 'tag page ordered by endDate');
  }
  const expectedEnds = open.map((e) => new Date(e.endDate).toISOString()).sort();
  check(page[0].endDate === expectedEnds[200], 'tag page starts at the 201st endDate');
  const site = await get('/events?creator=site-b&tag=topic-politics&order=closed,endDate&limit=500');
  const politics = tagOf(events, 'topic-politics');
  check(site.length === Math.min(500, events.filter((e) => e.creator === 'site-b' && (e.tags ?? []).some((t) => t.id === politics.id)).length), 'creator x tag count');
  // Slug lookups.
  for (const e of [events[0], events[EVENTS / 2], events[EVENTS - 1]]) {
    const got = await get(`/events/slug/${e.slug}`);
    check(got.id === e.id && got.markets.length === (e.markets ?? []).length, `slug ${e.slug}`);
  }
  // Search totals.
  for (const q of ['tesla record', 'bitc', 'option b']) {
    const got = await get(`/public-search?q=${encodeURIComponent(q)}&search_tags=false`);
    const want = bruteSearchTotal(events, q);
    check(got.pagination.totalResults === want, `search "${q}" total ${got.pagination.totalResults} vs ${want}`);
  }
}

export default async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pm-bench-catalog-'));
  const events = syntheticCatalog({ events: EVENTS, marketsPerEvent: 2, seed: 2026 });
  check(EVENTS % 4 === 0 && events.reduce((n, e) => n + (e.markets?.length ?? 0), 0) === MARKETS, 'two markets per event generated');
  try {
    const first = await importCatalog(events, { dataDir: dir });
    check(first.ok, `import: ${JSON.stringify(!first.ok && first.errors.slice(0, 3))}`);
    if (!first.ok) return;
    check(first.summary.events.created === EVENTS && first.summary.markets.created === MARKETS, 'every event and market created');
    check(first.summary.tags.created === 20 && first.summary.series.created === 1, 'tags and series counted once');
    const again = await importCatalog(events, { dataDir: dir });
    check(again.ok && again.summary.events.unchanged === EVENTS && again.summary.markets.unchanged === MARKETS, 'the second import changes nothing');
    if (!again.ok) return;
    const rate = (n: number, ms: number) => Math.round(n / (ms / 1000)).toLocaleString('en');
    console.log(`| import | events | markets | check s | write s | events/s | markets/s |`);
    console.log(`|---|---|---|---|---|---|---|`);
    for (const [name, r] of [['new catalog', first], ['same catalog again (unchanged)', again]] as const) {
      const ms = r.checkMs + r.writeMs;
      console.log(`| ${name} | ${EVENTS.toLocaleString('en')} | ${MARKETS.toLocaleString('en')} | ${(r.checkMs / 1000).toFixed(1)} | ${(r.writeMs / 1000).toFixed(1)} | ${rate(EVENTS, ms)} | ${rate(MARKETS, ms)} |`);
    }

    const store = openStore({ dataDir: dir });
    const config = testConfig({ dataDir: dir, rateLimits: { enabled: false }, demo: false });
    // catalogRoutes reads ctx.catalog only.
    const ctx = { config, store, catalog: { read: new CatalogReader(store), write: new CatalogWriter(store, systemClock) } } as unknown as AppContext;
    const server = await startServer({
      routes: catalogRoutes(ctx),
      host: '127.0.0.1',
      port: 0,
      maxBodyBytes: 1024 * 1024,
      maxHeaderBytes: 16384,
      trustedProxies: [],
      adminToken: '',
      limiter: new RateLimiter({ enabled: false, maxCallers: 1000, buckets: {} }),
      metrics: new Metrics(false),
      log: silentLogger,
      clock: systemClock,
    });
    const base = `http://127.0.0.1:${server.port}`;
    try {
      await selfCheck(base, events);
      const rows: string[] = [];
      for (const [name, paths] of [
        ['GET /events filtered + ordered', eventPaths(events)],
        ['GET /events/slug/{slug}', slugPaths(events)],
        ['GET /public-search (40 repeated queries)', searchPaths()],
        ['GET /public-search (3,000 distinct queries)', coldSearchPaths(events)],
      ] as const) {
        const fixed = await load(base, paths, RATE, FIXED_SECONDS);
        const max = await load(base, paths, undefined, MAX_SECONDS);
        check(fixed.non2xx === 0 && max.non2xx === 0 && fixed.errors === 0 && max.errors === 0, `${name}: every request answered 200`);
        rows.push(`| ${name} | ${Math.round(fixed.requests.average)} | ${fixed.latency.p50} | ${fixed.latency.p99} | ${Math.round(max.requests.average)} | ${max.latency.p99} |`);
      }
      console.log(`\n| workload (${EVENTS.toLocaleString('en')} events, ${MARKETS.toLocaleString('en')} markets) | req/s at fixed rate | p50 ms | p99 ms | max req/s (unthrottled) | p99 ms (unthrottled) |`);
      console.log(`|---|---|---|---|---|---|`);
      for (const r of rows) console.log(r);
    } finally {
      await server.close(1000);
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
