/**
 * Depth-snapshot serialization: the cost to the shard worker of publishing one changed market (the /book
 * bodies of both its tokens, hash included), the way the worker did it before (kept here as the oracle)
 * against src/engine/shard/book-json.ts. Run alone: `npx tsx bench/engine/snapshot.bench.ts`; or with the other
 * benchmarks: `npm run bench -- snapshot`.
 *
 * Workloads: one production book (src/engine/book/book.ts) per size, built by a seeded stream of resting
 * GTC orders of both outcomes (2-3 orders per level, sizes in whole cents of a token, up to 5,000 tokens):
 *   10 levels     5 bid + 5 ask levels, tick 0.01;
 *   100 levels    50 + 50, tick 0.001 (the figure the worker's CPU per order is dominated by);
 *   1000 levels   500 + 500, tick 0.0001;
 * with a last trade price on outcome 0 only (so both forms of last_trade_price are serialized).
 *
 * Timed: one publication = the depth walk(s) plus both bodies (before: depth(0) and depth(1), levels mapped
 * to objects, every value formatted with formatPips/formatUnits, JSON.stringify twice per token and
 * SHA-1; after: depth(0) once and bookBodies). Book building and every check are excluded.
 * Two figures per row: the tinybench median (wall, 300 ms per task after warmup), and CPU per publication
 * from this thread's /proc schedstat over a separate loop of fixed length (exact CPU, not wall; the
 * machine may be shared). GC done in the loop is included in both (it is part of the real cost).
 *
 * Self-checks (a failed check throws): for every book the new bodies are byte-identical to the oracle's
 * for the same timestamp, each hash equals the SHA-1 of its body with hash "", and outcome 1's levels
 * are outcome 0's mirrored at 1 - p.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { LOT_UNITS, Side, Tif, type EventSink, type MarketParams, type MatchingBook, type PlaceCommand } from '../../src/engine/book/api.ts';
import { createBook } from '../../src/engine/book/book.ts';
import { bookBodies, bookFrame, type BookFrame } from '../../src/engine/shard/book-json.ts';
import { formatPips } from '../../src/domain/units.ts';
import { oracleBookBody } from '../../test/fixtures/book-oracle.ts';

interface Market {
  name: string;
  levels: number;
  book: MatchingBook;
  params: MarketParams;
  conditionId: string;
  tokenIds: [string, string];
  negRisk: boolean;
  lastTradePips: [number, number];
  frame: BookFrame;
}

const NOW_SEC = 1_767_225_600;

function rng(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s % n;
  };
}

const noEvents: EventSink = {
  fill: () => {
    throw new Error('snapshot.bench: the book stream must not cross');
  },
  cancel: () => undefined,
};

/** `perSide` bid levels below the mid and as many ask levels above it; outcome 1 orders rest mirrored. */
function market(name: string, perSide: number, tickPips: number, seed: number): Market {
  const params: MarketParams = { tickPips, minSizeUnits: LOT_UNITS, makerFeeBps: 0, takerFeeBps: 0 };
  const book = createBook(params);
  const rnd = rng(seed);
  const mid = 5000 - (5000 % tickPips);
  let handle = 1;
  const cmd: PlaceCommand = { handle: 0, owner: 1, outcome: 0, side: Side.BUY, tif: Tif.GTC, postOnly: false, pricePips: 0, sizeUnits: 0, budgetUnits: 0, expiresAt: 0 };
  for (let i = 0; i < perSide; i++) {
    for (const [bid, priceOf0] of [
      [true, mid - tickPips * (i + 1)],
      [false, mid + tickPips * i],
    ] as const) {
      for (let k = 0, n = 2 + rnd(2); k < n; k++) {
        // Half the orders come from outcome 1 (a YES bid is a NO ask at 1 - p): the mirror is exercised.
        const viaOther = rnd(2) === 1;
        cmd.handle = handle++;
        cmd.outcome = viaOther ? 1 : 0;
        cmd.side = bid !== viaOther ? Side.BUY : Side.SELL;
        cmd.pricePips = viaOther ? 10_000 - priceOf0 : priceOf0;
        cmd.sizeUnits = (1 + rnd(500_000)) * LOT_UNITS;
        const r = book.place(cmd, noEvents);
        if (r.code !== 0 || r.restingUnits !== cmd.sizeUnits) throw new Error(`snapshot.bench: order ${cmd.handle} did not rest (code ${r.code})`);
      }
    }
  }
  const d = book.depth(0);
  if (d.bids.length !== perSide || d.asks.length !== perSide) throw new Error(`snapshot.bench: ${name}: ${d.bids.length}+${d.asks.length} levels, expected ${perSide}+${perSide}`);
  const conditionId = '0x' + seed.toString(16).padStart(64, 'c');
  const tokenIds: [string, string] = [`${seed}1234567890123456789012345678901234567890`, `${seed}9876543210987654321098765432109876543210`];
  const m = { name, levels: perSide * 2, book, params, conditionId, tokenIds, negRisk: seed % 2 === 0, lastTradePips: [mid, 0] as [number, number] };
  return { ...m, frame: bookFrame({ ...m, minSizeUnits: params.minSizeUnits, tickPips }) };
}

/** The worker's serialization before book-json.ts (test/fixtures/book-oracle.ts): the oracle and the "before". */
function oracleBodies(m: Market, nowSec: number): [string, string] {
  const input = { conditionId: m.conditionId, tokenIds: m.tokenIds, negRisk: m.negRisk, minSizeUnits: m.params.minSizeUnits, tickPips: m.params.tickPips };
  return [0, 1].map((o) => oracleBookBody(input, m.book.depth(o as 0 | 1), m.lastTradePips[o]!, o as 0 | 1, nowSec)) as [string, string];
}

function newBodies(m: Market, nowSec: number): [string, string] {
  return bookBodies(m.frame, m.book.depth(0), m.lastTradePips, nowSec);
}

function check(m: Market): void {
  const want = oracleBodies(m, NOW_SEC);
  const got = newBodies(m, NOW_SEC);
  for (const o of [0, 1] as const) {
    if (got[o] !== want[o]) throw new Error(`snapshot.bench self-check: ${m.name} outcome ${o}: bodies differ\n got  ${got[o].slice(0, 300)}\n want ${want[o].slice(0, 300)}`);
    const b = JSON.parse(got[o]) as { hash: string };
    const rehash = createHash('sha1').update(JSON.stringify({ ...b, hash: '' })).digest('hex');
    if (b.hash !== rehash) throw new Error(`snapshot.bench self-check: ${m.name} outcome ${o}: hash ${b.hash} is not the body's ${rehash}`);
  }
  type L = { price: string; size: string };
  const [y, n] = got.map((j) => JSON.parse(j) as { bids: L[]; asks: L[] });
  const mirror = (ls: L[]) => ls.map((l) => ({ price: formatPips(10_000 - Math.round(Number(l.price) * 10_000)), size: l.size }));
  if (JSON.stringify(mirror(n.asks)) !== JSON.stringify(y.bids) || JSON.stringify(mirror(n.bids)) !== JSON.stringify(y.asks)) {
    throw new Error(`snapshot.bench self-check: ${m.name}: outcome 1 is not outcome 0 mirrored`);
  }
}

/** CPU ms this thread has run, from the scheduler (Linux); NaN elsewhere. */
function threadCpuMs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return NaN;
  }
}

/** CPU µs per call of `fn` over `n` calls (after `n / 10` warmup calls). */
function cpuPerCall(fn: () => unknown, n: number): number {
  let sink = 0;
  for (let i = 0; i < n / 10; i++) sink += (fn() as string[])[0].length;
  const t0 = threadCpuMs();
  for (let i = 0; i < n; i++) sink += (fn() as string[])[0].length;
  const us = ((threadCpuMs() - t0) * 1000) / n;
  if (sink === 0) throw new Error('unreachable: empty bodies');
  return us;
}

export default async function run(): Promise<void> {
  const markets = [market('10 levels', 5, 100, 7), market('100 levels', 50, 10, 8), market('1000 levels', 500, 1, 9)];
  for (const m of markets) check(m);

  const bench = new Bench({ time: 300, warmupTime: 100 });
  for (const m of markets) {
    bench.add(`${m.name} before`, () => oracleBodies(m, NOW_SEC));
    bench.add(`${m.name} after`, () => newBodies(m, NOW_SEC));
  }
  await bench.run();
  const wall = new Map(bench.tasks.map((t) => [t.name, t.result.state === 'completed' ? t.result.latency.p50 * 1000 : NaN]));

  const rows = markets.map((m) => {
    const n = Math.max(200, Math.round(200_000 / m.levels));
    const before = cpuPerCall(() => oracleBodies(m, NOW_SEC), n);
    const after = cpuPerCall(() => newBodies(m, NOW_SEC), n);
    return {
      book: m.name,
      'bytes (both tokens)': newBodies(m, NOW_SEC).reduce((a, j) => a + j.length, 0),
      'before CPU µs': before.toFixed(1),
      'after CPU µs': after.toFixed(1),
      speed: `${(before / after).toFixed(1)}x`,
      'before wall p50 µs': (wall.get(`${m.name} before`) ?? NaN).toFixed(1),
      'after wall p50 µs': (wall.get(`${m.name} after`) ?? NaN).toFixed(1),
    };
  });
  console.log(`snapshot.bench: one market publication (both tokens' /book bodies), node ${process.version}; self-checks passed`);
  console.table(rows);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
