/**
 * Seeded differential test: the same random command stream through the reference book and the typed
 * book, compared after every command — result code and sizes, the exact sequence of fills and cancels,
 * depth of both outcomes, best prices, size and nextExpiry; orders() every ORDERS_EVERY commands and at
 * the end; checkBook on the typed book every CHECK_EVERY commands. The large-book market compares its
 * O(book) views (depth, orders, checkBook) only every `every` commands, or it would take minutes.
 *
 * On a mismatch the failing prefix is shrunk (greedy chunk removal, time-capped) and the message prints the
 * shortest command sequence found, ready to paste into a unit test.
 * Reproduce one market alone: SEED=<n> COUNT=<n> node --import tsx --test test/engine/book/differential.test.ts
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  FillKind,
  LOT_UNITS,
  Side,
  Tif,
  type Cancel,
  type EventSink,
  type Fill,
  type MarketParams,
  type MatchingBook,
} from '../../../src/engine/book/api.ts';
import { createBook } from '../../../src/engine/book/book.ts';
import { checkBook } from '../../../src/engine/book/invariants.ts';
import { createReferenceBook } from '../../../src/engine/book/reference-book.ts';
import { MIXES, Op, WorkloadGenerator, generateWorkload, type BookCommand, type WorkloadOptions } from '../../../tools/workload.ts';

// The O(book) views cost 70% of this file at every 2nd/4th command. A difference they alone would see persists
// until the order leaves the book, so every 16th still catches it, and the shrinker finds the command that began it.
const ORDERS_EVERY = 16;
const CHECK_EVERY = 16;
const SHRINK_MS = 10_000;

interface Market {
  name: string;
  count: number;
  opts: WorkloadOptions;
  /** Cadence of the O(book) comparisons for books too large to compare every step. */
  every?: number;
}

const T = 1_000_000;
const markets: Market[] = [
  { name: 'tick 0.01, no fees, 8 owners', count: 30_000,
    opts: { seed: 1, params: { tickPips: 100, minSizeUnits: 10_000, makerFeeBps: 0, takerFeeBps: 0 }, mix: MIXES.full } },
  { name: 'tick 0.0001, fees 20/50 bps, min 5 tokens', count: 30_000,
    opts: { seed: 2, params: { tickPips: 1, minSizeUnits: 5 * T, makerFeeBps: 20, takerFeeBps: 50 }, mix: MIXES.full, maxLots: 1500, bandTicks: 40 } },
  { name: 'tick 0.01, taker fee 200 bps, 3 owners (frequent self-trade)', count: 20_000,
    opts: { seed: 3, params: { tickPips: 100, minSizeUnits: 10_000, makerFeeBps: 0, takerFeeBps: 200 }, mix: MIXES.full, owners: 3 } },
  { name: 'tick 0.1, fees 100/100 bps, no self-trade, extreme mid', count: 10_000,
    opts: { seed: 4, params: { tickPips: 1000, minSizeUnits: 10_000, makerFeeBps: 100, takerFeeBps: 100 }, mix: MIXES.full, owners: 0, midPips: 8000, bandTicks: 3, reachTicks: 2 } },
  { name: 'tick 0.001, no fees, deep book', count: 20_000,
    opts: { seed: 5, params: { tickPips: 10, minSizeUnits: 10_000, makerFeeBps: 0, takerFeeBps: 0 }, mix: { ...MIXES.full, cancel: 8 }, bandTicks: 200 } },
  // Past the typed book's first slot chunk (16_384) and several handle-index doublings.
  { name: 'tick 0.01, fees 10/30 bps, book growing to 25k orders', count: 40_000, every: 2_500,
    opts: { seed: 6, params: { tickPips: 100, minSizeUnits: 10_000, makerFeeBps: 10, takerFeeBps: 30 },
      mix: { ...MIXES.full, passive: 85, aggressive: 8, cancel: 6, expire: 0.2, targetResting: 25_000 }, bandTicks: 30 } },
];

type Event = ['F', Fill] | ['C', Cancel];

function recorder(): EventSink & { events: Event[] } {
  const events: Event[] = [];
  return {
    events,
    fill: (f: Fill) => void events.push(['F', { ...f }]),
    cancel: (c: Cancel) => void events.push(['C', { ...c }]),
  };
}

function apply(b: MatchingBook, c: BookCommand, sink: EventSink): unknown {
  if (c.op === Op.PLACE) {
    const r = b.place(c.cmd, sink);
    return { code: r.code, filledUnits: r.filledUnits, restingUnits: r.restingUnits };
  }
  if (c.op === Op.CANCEL) return b.cancel(c.handle, sink);
  return b.expire(c.nowSec, sink);
}

function observe(b: MatchingBook): unknown {
  return {
    d0: b.depth(0),
    d1: b.depth(1),
    best: [b.bestBid(0), b.bestAsk(0), b.bestBid(1), b.bestAsk(1)],
    size: b.size(),
    nextExpiry: b.nextExpiry(),
  };
}

/** Structural equality of plain data (numbers, arrays, objects); far cheaper than deepEqual or JSON. */
function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equal(a[i], b[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!equal((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}

/** deepEqual runs only to explain a difference. */
function same(actual: unknown, expected: unknown, what: string): void {
  if (!equal(actual, expected)) assert.deepEqual(actual, expected, what);
}

/**
 * Rules of api.ts checked on the reference's own events, so agreement cannot hide a shared mistake in
 * these: whole lots, USDC per kind, taker limit respected, FOK all-or-nothing, budget never exceeded.
 */
function contractProblem(c: BookCommand, result: unknown, events: Event[]): string | undefined {
  if (c.op !== Op.PLACE) return undefined;
  const cmd = c.cmd;
  const r = result as { code: number; filledUnits: number; restingUnits: number };
  let filled = 0;
  let spent = 0;
  for (const [t, e] of events) {
    if (t !== 'F') continue;
    const f = e as Fill;
    if (!(f.sizeUnits > 0) || f.sizeUnits % LOT_UNITS !== 0) return `fill size ${f.sizeUnits} not whole lots`;
    const kindOk = f.kind === FillKind.TRANSFER ? f.takerUsdc === f.makerUsdc : f.takerUsdc + f.makerUsdc === f.sizeUnits;
    if (!kindOk) return `fill kind ${f.kind} USDC ${f.takerUsdc} + ${f.makerUsdc} for ${f.sizeUnits}`;
    if (cmd.side === Side.BUY ? f.takerPricePips > cmd.pricePips : f.takerPricePips < cmd.pricePips) {
      return `taker traded at ${f.takerPricePips} beyond its limit ${cmd.pricePips}`;
    }
    filled += f.sizeUnits;
    spent += f.takerUsdc;
  }
  if (filled !== r.filledUnits) return `fills add up to ${filled}, result says ${r.filledUnits}`;
  if (cmd.tif === Tif.FOK && filled !== 0 && filled !== cmd.sizeUnits) return `FOK filled ${filled} of ${cmd.sizeUnits}`;
  if ((cmd.tif === Tif.FOK || cmd.tif === Tif.FAK) && cmd.side === Side.BUY && cmd.budgetUnits > 0 && spent > cmd.budgetUnits) {
    return `spent ${spent} over budget ${cmd.budgetUnits}`;
  }
  return undefined;
}

/** Describes how the two books differ after command i, or returns undefined when they agree. */
function stepDiff(ref: MatchingBook, typed: MatchingBook, c: BookCommand, i: number, views: 0 | 1 | 2, tally?: Map<string, number>): string | undefined {
  const rs = recorder();
  const ts = recorder();
  const rr = apply(ref, c, rs);
  const tr = apply(typed, c, ts);
  if (tally) {
    const bump = (k: string): void => void tally.set(k, (tally.get(k) ?? 0) + 1);
    if (c.op === Op.PLACE) bump(`code ${(rr as { code: number }).code}`);
    else if (c.op === Op.CANCEL) bump(`cancel code ${rr as number}`);
    for (const [t, e] of rs.events) bump(t === 'F' ? `fill kind ${(e as Fill).kind}` : `cancel reason ${(e as Cancel).reason}`);
  }
  const broken = contractProblem(c, rr, rs.events);
  if (broken !== undefined) return `command ${i} ${JSON.stringify(c)}: reference breaks api.ts: ${broken}`;
  try {
    same(tr, rr, 'result');
    same(ts.events, rs.events, 'events');
    if (views > 0) same(observe(typed), observe(ref), 'book state');
    if (views > 1) same(typed.orders(), ref.orders(), 'orders()');
  } catch (e) {
    return `command ${i} ${JSON.stringify(c)}: ${(e as Error).message}`;
  }
  return undefined;
}

/** Index of the first command after which the books differ or the typed book breaks its invariants, or -1. */
function firstMismatch(params: MarketParams, cmds: BookCommand[], every = 1): number {
  const ref = createReferenceBook({ ...params });
  const typed = createBook({ ...params });
  for (let i = 0; i < cmds.length; i++) {
    const views = i % every === 0 || i === cmds.length - 1 ? 2 : 0;
    if (stepDiff(ref, typed, cmds[i], i, views) !== undefined || (views > 0 && checkBook(typed).length > 0)) return i;
  }
  return -1;
}

/** Greedy delta debugging on a failing command list: drop chunks while the books still disagree. */
function shrink(params: MarketParams, failing: BookCommand[], every = 1): BookCommand[] {
  const deadline = Date.now() + SHRINK_MS;
  let cmds = failing;
  for (let chunk = Math.max(1, cmds.length >> 1); chunk >= 1 && Date.now() < deadline; chunk >>= 1) {
    for (let start = cmds.length - 1 - chunk; start >= 0 && Date.now() < deadline; start -= chunk) {
      const candidate = cmds.slice(0, start).concat(cmds.slice(start + chunk));
      const at = firstMismatch(params, candidate, every);
      if (at >= 0) {
        cmds = candidate.slice(0, at + 1);
        start = Math.min(start, cmds.length - 1);
      }
    }
  }
  return cmds;
}

const COVERAGE = [
  'code 0', 'code 4001', 'code 4002', 'code 4004', 'code 4006', 'code 4007',
  'fill kind 0', 'fill kind 1', 'fill kind 2',
  'cancel reason 0', 'cancel reason 1', 'cancel reason 4', 'cancel code 0', 'cancel code 4005',
];
/** Only reachable when owners repeat (self-trade) and when post-only orders can meet a crossing book. */
const COVERAGE_SHARED_OWNERS = ['cancel reason 2', 'code 4003'];

const only = process.env.SEED !== undefined ? Number(process.env.SEED) : undefined;
const countOverride = process.env.COUNT !== undefined ? Number(process.env.COUNT) : undefined;

for (const m of markets) {
  if (only !== undefined && m.opts.seed !== only) continue;
  const count = countOverride ?? m.count;
  test(`differential, seed ${m.opts.seed}: ${m.name} (${count} commands)`, () => {
    const gen = new WorkloadGenerator(m.opts);
    const ref = createReferenceBook({ ...m.opts.params });
    const typed = createBook({ ...m.opts.params });
    const history: BookCommand[] = [];
    const tally = new Map<string, number>();
    for (let i = 0; i < count; i++) {
      const c = gen.next();
      history.push(c);
      const last = i === count - 1;
      const views = m.every !== undefined ? (i % m.every === 0 || last ? 2 : 0) : i % ORDERS_EVERY === 0 || last ? 2 : 1;
      const diff = stepDiff(ref, typed, c, i, views, tally);
      const problems = i % (m.every ?? CHECK_EVERY) === 0 || last ? checkBook(typed) : [];
      if (diff !== undefined || problems.length > 0) {
        const at = firstMismatch(m.opts.params, history, m.every);
        const minimal = at >= 0 ? shrink(m.opts.params, history.slice(0, at + 1), m.every) : history;
        assert.fail(
          `${diff ?? `checkBook after command ${i}: ${problems.join('; ')}`}\nparams ${JSON.stringify(m.opts.params)}; minimal sequence (${minimal.length} commands):\n` +
            minimal.map((x) => JSON.stringify(x)).join('\n'),
        );
      }
    }
    const predicted = gen.prediction();
    assert.equal(typed.size(), predicted.restingOrders, 'typed book ends with the predicted number of orders');
    if (m.every !== undefined) assert.ok(predicted.restingOrders > 16_384, `book only reached ${predicted.restingOrders} orders`);
    // The stream must reach every rule, or agreement would prove little.
    const seen = [...tally.keys()];
    for (const must of m.opts.owners === 0 ? COVERAGE : [...COVERAGE, ...COVERAGE_SHARED_OWNERS]) assert.ok(seen.includes(must), `stream never produced "${must}": ${JSON.stringify(Object.fromEntries(tally))}`);
  });
}

test('workload streams are a function of their options and seed', () => {
  const opts = markets[0].opts;
  const a = generateWorkload(opts, 3_000);
  const b = generateWorkload(opts, 3_000);
  const c = generateWorkload({ ...opts, seed: opts.seed + 100 }, 3_000);
  assert.deepEqual(b.commands, a.commands);
  assert.deepEqual(b.prediction, a.prediction);
  assert.notDeepEqual(c.commands, a.commands);
});
