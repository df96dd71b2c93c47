/**
 * Matching core: our typed-array book (src/engine/book/book.ts) against nodejs-order-book 10.1.1, then
 * our book alone on the full feature set. Run alone: `npx tsx bench/engine/match.bench.ts`; or with the
 * other benchmarks: `npm run bench`.
 *
 * Workloads: seeded streams from tools/workload.ts, one market, tick 0.01, prices within 16 ticks of the mid.
 *   resting adds    200_000 GTC orders on one outcome that never cross (the book ends with 200_000 orders);
 *   crossing        200_000 GTC limit orders on one outcome, half priced up to 6 ticks through the mid;
 *   mixed+cancels   150_000 commands on one outcome: 60% resting adds, 25% cancels of resting orders,
 *                   15% GTC orders priced through the mid;
 *   full feature    500_000 commands, our book only: both outcomes (TRANSFER, MINT, MERGE), GTC/GTD/FOK/FAK,
 *                   post-only, budgets, 8 owners (self-trade prevention), invalid orders, cancels, expiry;
 *                   maker 20 / taker 50 bps.
 * The comparison streams give every order its own owner and plain BUY/SELL of one token, so both engines do
 * the same work: price-time priority, trade at the maker's price, the remainder rests. Sizes go to
 * nodejs-order-book in lots and prices in pips (integers, so no float drift on either side).
 *
 * Timed (tinybench, one sample = one whole stream replayed on an empty book; ops/s from the median sample):
 * the engine calls, plus for our book the event sink tallying fills (a real driver drains every event too).
 * Samples: ours 10 after 1 warmup replay; nodejs-order-book 3 after 1 warmup replay (mixed+cancels: 2, no
 * warmup, as one replay takes ~10 s).
 * Excluded from timing: stream generation, including the reference-book run that predicts the final state;
 * conversion to nodejs-order-book's option objects; book construction (beforeEach); every check (afterEach);
 * the latency pass.
 * Latency: a separate replay times each command with process.hrtime.bigint and subtracts the timer's own
 * cost (median of empty pairs); p50/p99 are per command.
 *
 * Self-checks after every timed replay (a failed check throws and fails the run):
 *   - resting order count, resting units and depth of both outcomes equal the reference book's for the
 *     same stream (nodejs-order-book: count, volume and per-level depth of its single book);
 *   - our fills match the reference's in number, units, notional, fees and per kind; cancels in number;
 *   - conservation: for TRANSFER the buyers' USDC equals the sellers'; a MINT collects exactly sizeUnits
 *     of USDC per token pair and a MERGE pays out exactly sizeUnits.
 */

import { pathToFileURL } from 'node:url';
import { OrderBook, Side as NobSide, type LimitOrderOptions } from 'nodejs-order-book';
import { Bench } from 'tinybench';
import {
  FillKind,
  LOT_UNITS,
  Side,
  type Cancel,
  type Depth,
  type EventSink,
  type Fill,
  type MarketParams,
  type MatchingBook,
} from '../../src/engine/book/api.ts';
import { createBook } from '../../src/engine/book/book.ts';
import { MIXES, Op, generateWorkload, type BookCommand, type Prediction, type WorkloadMix } from '../../tools/workload.ts';

interface Stream {
  name: string;
  commands: BookCommand[];
  prediction: Prediction;
  finalBook: MatchingBook;
  params: MarketParams;
}

interface Row {
  stream: string;
  engine: string;
  commands: number;
  /** Fills the stream produces (from the reference run): how much matching the commands do. */
  fills: number;
  samples: number;
  opsPerSec: number;
  p50: number;
  p99: number;
  ratio?: number;
}

const NO_FEES: MarketParams = { tickPips: 100, minSizeUnits: LOT_UNITS, makerFeeBps: 0, takerFeeBps: 0 };
const FEES: MarketParams = { tickPips: 100, minSizeUnits: LOT_UNITS, makerFeeBps: 20, takerFeeBps: 50 };

function stream(name: string, mix: WorkloadMix, count: number, params: MarketParams, owners: number, seed: number): Stream {
  const { commands, prediction, finalBook } = generateWorkload({ seed, params, mix, owners }, count);
  return { name, commands, prediction, finalBook, params };
}

/** Event sink that keeps only running totals: cheap enough to sit inside the timed loop. */
class Tally implements EventSink {
  fills = 0;
  filledUnits = 0;
  notionalUsdc = 0;
  fees = 0;
  cancels = 0;
  transferUnits = 0;
  mintUnits = 0;
  mergeUnits = 0;
  buyersPaid = 0;
  sellersReceived = 0;
  mintCollected = 0;
  mergePaidOut = 0;

  fill(f: Fill): void {
    this.fills++;
    this.filledUnits += f.sizeUnits;
    this.notionalUsdc += f.takerUsdc + f.makerUsdc;
    this.fees += f.takerFee + f.makerFee;
    if (f.kind === FillKind.TRANSFER) {
      this.transferUnits += f.sizeUnits;
      if (f.takerSide === Side.BUY) {
        this.buyersPaid += f.takerUsdc;
        this.sellersReceived += f.makerUsdc;
      } else {
        this.buyersPaid += f.makerUsdc;
        this.sellersReceived += f.takerUsdc;
      }
    } else if (f.kind === FillKind.MINT) {
      this.mintUnits += f.sizeUnits;
      this.mintCollected += f.takerUsdc + f.makerUsdc;
    } else {
      this.mergeUnits += f.sizeUnits;
      this.mergePaidOut += f.takerUsdc + f.makerUsdc;
    }
  }

  cancel(_c: Cancel): void {
    this.cancels++;
  }
}

function replayOurs(book: MatchingBook, cmds: BookCommand[], sink: EventSink): void {
  for (let i = 0; i < cmds.length; i++) {
    const c = cmds[i];
    if (c.op === Op.PLACE) book.place(c.cmd, sink);
    else if (c.op === Op.CANCEL) book.cancel(c.handle, sink);
    else book.expire(c.nowSec, sink);
  }
}

/** nodejs-order-book's form of a one-outcome stream: limit options or an id to cancel. */
type TheirCommand = LimitOrderOptions | string;

function toTheirs(s: Stream): TheirCommand[] {
  return s.commands.map((c) => {
    if (c.op === Op.CANCEL) return String(c.handle);
    if (c.op !== Op.PLACE || c.cmd.outcome !== 0 || c.cmd.tif !== 0 || c.cmd.postOnly) {
      throw new Error(`${s.name}: nodejs-order-book streams must be GTC orders of outcome 0 and cancels`);
    }
    return {
      id: String(c.cmd.handle),
      side: c.cmd.side === Side.BUY ? NobSide.BUY : NobSide.SELL,
      size: c.cmd.sizeUnits / LOT_UNITS,
      price: c.cmd.pricePips,
    };
  });
}

function replayTheirs(ob: OrderBook, cmds: TheirCommand[]): void {
  for (let i = 0; i < cmds.length; i++) {
    const c = cmds[i];
    if (typeof c === 'string') ob.cancel(c);
    else ob.limit(c);
  }
}

function fail(what: string, actual: unknown, expected: unknown): never {
  throw new Error(`match.bench self-check failed: ${what}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
}

function expectEqual(what: string, actual: unknown, expected: unknown): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) fail(what, actual, expected);
}

function checkOurs(s: Stream, book: MatchingBook, t: Tally): void {
  const p = s.prediction;
  expectEqual(`${s.name}: resting orders`, book.size(), p.restingOrders);
  let units = 0;
  for (const o of book.orders()) units += o.remainingUnits;
  expectEqual(`${s.name}: resting units`, units, p.restingUnits);
  expectEqual(`${s.name}: depth(0)`, book.depth(0), s.finalBook.depth(0));
  expectEqual(`${s.name}: depth(1)`, book.depth(1), s.finalBook.depth(1));
  const got = [t.fills, t.filledUnits, t.notionalUsdc, t.fees, t.transferUnits, t.mintUnits, t.mergeUnits, t.cancels];
  const want = [p.fills, p.filledUnits, p.notionalUsdc, p.fees, p.transferUnits, p.mintUnits, p.mergeUnits, p.cancels];
  expectEqual(`${s.name}: fills, units, notional, fees, transfer/mint/merge units, cancels`, got, want);
  expectEqual(`${s.name}: TRANSFER buyers paid = sellers received`, t.buyersPaid, t.sellersReceived);
  expectEqual(`${s.name}: MINT collects sizeUnits`, t.mintCollected, t.mintUnits);
  expectEqual(`${s.name}: MERGE pays out sizeUnits`, t.mergePaidOut, t.mergeUnits);
}

/** Outcome-0 depth as price -> units, the common form of both engines' books. */
function levelMap(d: Depth): Array<[string, number, number]> {
  const out: Array<[string, number, number]> = [];
  for (const l of d.bids) out.push(['bid', l.pricePips, l.sizeUnits]);
  for (const l of d.asks) out.push(['ask', l.pricePips, l.sizeUnits]);
  return out.sort((a, b) => (a[0] === b[0] ? a[1] - b[1] : a[0] < b[0] ? -1 : 1));
}

function checkTheirs(s: Stream, ob: OrderBook): void {
  const [asks, bids] = ob.depth();
  const theirs: Array<[string, number, number]> = [];
  for (const [price, lots] of bids) theirs.push(['bid', price, lots * LOT_UNITS]);
  for (const [price, lots] of asks) theirs.push(['ask', price, lots * LOT_UNITS]);
  theirs.sort((a, b) => (a[0] === b[0] ? a[1] - b[1] : a[0] < b[0] ? -1 : 1));
  expectEqual(`${s.name}: nodejs-order-book depth`, theirs, levelMap(s.finalBook.depth(0)));
  // Its order map is private; counting it is the only way to see the resting order count.
  const count = Object.keys((ob as unknown as { orders: Record<string, unknown> }).orders).length;
  expectEqual(`${s.name}: nodejs-order-book resting orders`, count, s.prediction.restingOrders);
}

function timerOverheadNs(): number {
  const n = 20_001;
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    d[i] = Number(process.hrtime.bigint() - t0);
  }
  return d.sort()[n >> 1];
}

function percentiles(d: Float64Array, overhead: number): { p50: number; p99: number } {
  d.sort();
  const at = (q: number): number => Math.max(0, d[Math.min(d.length - 1, Math.floor(q * d.length))] - overhead);
  return { p50: at(0.5), p99: at(0.99) };
}

function latencyOurs(s: Stream, overhead: number): { p50: number; p99: number } {
  const book = createBook({ ...s.params });
  const sink = new Tally();
  const d = new Float64Array(s.commands.length);
  for (let i = 0; i < s.commands.length; i++) {
    const c = s.commands[i];
    const t0 = process.hrtime.bigint();
    if (c.op === Op.PLACE) book.place(c.cmd, sink);
    else if (c.op === Op.CANCEL) book.cancel(c.handle, sink);
    else book.expire(c.nowSec, sink);
    d[i] = Number(process.hrtime.bigint() - t0);
  }
  checkOurs(s, book, sink);
  return percentiles(d, overhead);
}

function latencyTheirs(s: Stream, cmds: TheirCommand[], overhead: number): { p50: number; p99: number } {
  const ob = new OrderBook();
  const d = new Float64Array(cmds.length);
  for (let i = 0; i < cmds.length; i++) {
    const c = cmds[i];
    const t0 = process.hrtime.bigint();
    if (typeof c === 'string') ob.cancel(c);
    else ob.limit(c);
    d[i] = Number(process.hrtime.bigint() - t0);
  }
  checkTheirs(s, ob);
  return percentiles(d, overhead);
}

function throughput(
  name: string,
  n: number,
  iterations: number,
  warmup: boolean,
  task: () => void,
  before: () => void,
  after: () => void,
): { opsPerSec: number; samples: number } {
  const bench = new Bench({ name, iterations, time: 0, warmup, warmupIterations: 1, warmupTime: 0, throws: true });
  bench.add(name, task, { beforeEach: before, afterEach: after });
  bench.runSync();
  const r = bench.tasks[0].result;
  if (r.state !== 'completed') throw new Error(`${name}: tinybench task ${r.state}`);
  // One sample is one whole stream; the median sample is robust to a GC pause in one replay.
  return { opsPerSec: (n * 1000) / r.latency.p50, samples: r.latency.samplesCount };
}

function benchOurs(s: Stream, overhead: number, iterations: number): Row {
  let book = createBook({ ...s.params });
  let sink = new Tally();
  const t = throughput(
    `ours ${s.name}`,
    s.commands.length,
    iterations,
    true,
    () => replayOurs(book, s.commands, sink),
    () => {
      book = createBook({ ...s.params });
      sink = new Tally();
    },
    () => checkOurs(s, book, sink),
  );
  const l = latencyOurs(s, overhead);
  return { stream: s.name, engine: 'ours', commands: s.commands.length, fills: s.prediction.fills, samples: t.samples, opsPerSec: t.opsPerSec, ...l };
}

function benchTheirs(s: Stream, overhead: number, iterations: number, warmup: boolean): Row {
  const cmds = toTheirs(s);
  let ob = new OrderBook();
  const t = throughput(
    `nodejs-order-book ${s.name}`,
    cmds.length,
    iterations,
    warmup,
    () => replayTheirs(ob, cmds),
    () => {
      ob = new OrderBook();
    },
    () => checkTheirs(s, ob),
  );
  const l = latencyTheirs(s, cmds, overhead);
  return { stream: s.name, engine: 'nodejs-order-book', commands: cmds.length, fills: s.prediction.fills, samples: t.samples, opsPerSec: t.opsPerSec, ...l };
}

function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function printTable(rows: Row[]): void {
  const head = ['stream', 'engine', 'commands', 'fills', 'samples', 'ops/s', 'p50 ns', 'p99 ns', 'ours/theirs'];
  const body = rows.map((r) => [
    r.stream,
    r.engine,
    fmtInt(r.commands),
    fmtInt(r.fills),
    String(r.samples),
    fmtInt(r.opsPerSec),
    fmtInt(r.p50),
    fmtInt(r.p99),
    r.ratio === undefined ? '' : `${r.ratio.toFixed(1)}x`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const b of body) console.log(line(b));
}

export default async function run(): Promise<void> {
  const t0 = Date.now();
  const streams = [
    stream('resting adds', MIXES.restingAdds, 200_000, NO_FEES, 0, 11),
    stream('crossing', MIXES.crossing, 200_000, NO_FEES, 0, 12),
    stream('mixed+cancels', MIXES.mixedCancels, 150_000, NO_FEES, 0, 13),
  ];
  const full = stream('full feature', MIXES.full, 500_000, FEES, 8, 14);
  const overhead = timerOverheadNs();
  console.log(
    `match.bench: streams generated and predicted in ${((Date.now() - t0) / 1000).toFixed(1)} s (not timed); ` +
      `hrtime overhead ${overhead} ns subtracted from latencies; node ${process.version}`,
  );

  const rows: Row[] = [];
  for (const s of streams) {
    const ours = benchOurs(s, overhead, 10);
    // A mixed+cancels replay of theirs runs ~10 s and warms its own code up; a warmup replay would only cost time.
    const slow = s.name === 'mixed+cancels';
    const theirs = benchTheirs(s, overhead, slow ? 2 : 3, !slow);
    ours.ratio = ours.opsPerSec / theirs.opsPerSec;
    rows.push(ours, theirs);
  }
  rows.push(benchOurs(full, overhead, 10));
  printTable(rows);
  const p = full.prediction;
  console.log(
    `full feature stream: ${fmtInt(p.fills)} fills (transfer ${fmtInt(p.transferUnits / LOT_UNITS)}, mint ${fmtInt(p.mintUnits / LOT_UNITS)}, ` +
      `merge ${fmtInt(p.mergeUnits / LOT_UNITS)} lots), ${fmtInt(p.cancels)} cancels, ${fmtInt(p.restingOrders)} resting at the end; ` +
      `all self-checks passed (${((Date.now() - t0) / 1000).toFixed(1)} s total)`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
