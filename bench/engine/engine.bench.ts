/**
 * Engine throughput and latency through Engine.placeOrder, in process: real shard workers, real LMDB
 * (durable commits, group commit), the production book. Run alone: `npx tsx bench/engine/engine.bench.ts`;
 * or with `npm run bench`. Runs shards = 1 and shards = 2 on fresh stores.
 *
 * Workload (seeded): 100_000 orders over 8 markets (tick 0.01, no fees on 4, maker 10 / taker 20 bps on
 * the others) and 32 wallets, each funded with 1,000,000 USDC and 10,000 token pairs per market before
 * timing. Per order: BUY/SELL of either outcome (so TRANSFER, MINT and MERGE all occur); 62% GTC priced
 * 1-15 ticks away from the market's mid (resting), 25% GTC priced up to 5 ticks through the mid
 * (crossing), 9% FAK, 4% FOK; 1-20 tokens. 512 orders are kept in flight (as many HTTP clients would).
 *
 * Timed: from the first placeOrder call to the last acknowledgement (each acknowledgement comes after its
 * LMDB commit). Also reported: process CPU time per order (all threads; unlike wall time it does not
 * depend on what else the machine runs) and the main thread's event-loop utilization. Latency per order: placeOrder call to acknowledgement, p50 / p99, queueing in the window
 * included. Excluded from timing: building the submissions, opening the store and the engine, funding,
 * the checks.
 *
 * Self-checks (a failure throws): every order is answered; the ledger invariants hold (reservations equal
 * what open orders can spend, nothing negative, USDC conserved: wallets + collateral == deposits); and per
 * market the final book equals the reference book (reference-book.ts) fed the same command stream (every
 * order that reached the shard, in submission order): same resting orders with the same remaining sizes,
 * same depth on both tokens.
 */
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { Side, Tif, type Cancel, type Depth, type EventSink, type Fill } from '../../src/engine/book/api.ts';
import { createReferenceBook } from '../../src/engine/book/reference-book.ts';
import { Engine, type PlaceInput, type PlaceResponse } from '../../src/engine/engine.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { T, fundWallets, invariants, lcg, market, order, tempStore, wallet } from '../../test/fixtures/engine-harness.ts';

const ORDERS = 100_000;
const MARKETS = 8;
const WALLETS = 32;
const WINDOW = 512;

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(`engine bench self-check failed: ${what}`);
}

interface Gen {
  input: PlaceInput;
  market: number;
  walletIdx: number;
}

function workload(): Gen[] {
  const rnd = lcg(20251121);
  const mids = Array.from({ length: MARKETS }, () => 3000 + 100 * rnd(40));
  const out: Gen[] = [];
  for (let i = 0; i < ORDERS; i++) {
    const m = rnd(MARKETS);
    const mk = market(m + 1);
    const w = rnd(WALLETS);
    const outcome = rnd(2);
    const side = rnd(2) === 0 ? 'BUY' : 'SELL';
    const mid = outcome === 0 ? mids[m] : 10_000 - mids[m];
    const roll = rnd(100);
    const away = side === 'BUY' ? -1 : 1;
    const type = roll < 62 ? 'GTC' : roll < 87 ? 'GTC' : roll < 96 ? 'FAK' : 'FOK';
    const ticks = roll < 62 ? away * (1 + rnd(15)) : -away * rnd(6);
    const price = Math.min(9900, Math.max(100, mid + 100 * ticks));
    out.push({
      input: order({ wallet: wallet(w + 1), tokenId: mk.tokenIds[outcome], side, price, size: T * (1 + rnd(20)), type }),
      market: m,
      walletIdx: w + 1,
    });
  }
  return out;
}

interface RunResult {
  shards: number;
  ordersPerSec: number;
  p50: number;
  p99: number;
  fills: number;
  transactions: number;
  rejected: number;
  /** CPU time of the whole process (all threads) per order: insensitive to other load on the machine. */
  cpuUsPerOrder: number;
  /** Main-thread event-loop utilization over the timed run. */
  mainBusy: number;
}

async function once(shards: number, gen: Gen[]): Promise<RunResult> {
  const env = tempStore('pm-engine-bench-');
  const e = await Engine.open({ store: env.store, shards, log: silentLogger });
  try {
    const ms = Array.from({ length: MARKETS }, (_, i) => market(i + 1, i % 2 === 1 ? { makerFeeBps: 10, takerFeeBps: 20 } : {}));
    for (const m of ms) e.registerMarket(m);
    await fundWallets(e, ms, WALLETS, 1_000_000 * T, 10_000 * T);
    const before = e.stats();

    const answers = new Array<PlaceResponse>(gen.length);
    const latency = new Float64Array(gen.length);
    let next = 0;
    const cpu0 = process.cpuUsage();
    const elu0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: WINDOW }, async () => {
        while (next < gen.length) {
          const i = next++;
          const start = performance.now();
          answers[i] = await e.placeOrder(gen[i].input);
          latency[i] = performance.now() - start;
        }
      }),
    );
    const elapsed = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const elu = performance.eventLoopUtilization(elu0);
    const after = e.stats();

    check(answers.every((a) => a !== undefined), 'every order answered');
    const problems = invariants(e);
    check(problems.length === 0, `ledger invariants: ${problems.slice(0, 3).join('; ')}`);
    const rejected = answers.filter((a) => !a.ok && (a.code < 4000 || a.code >= 5000)).length;
    for (const m of ms) await e.refreshSnapshot(m.conditionId);
    checkBooks(e, gen, answers);

    const sorted = Array.from(latency).sort((a, b) => a - b);
    return {
      shards,
      ordersPerSec: (gen.length / elapsed) * 1000,
      p50: sorted[Math.floor(sorted.length * 0.5)],
      p99: sorted[Math.floor(sorted.length * 0.99)],
      fills: after.fills - before.fills,
      transactions: after.transactions - before.transactions,
      rejected,
      cpuUsPerOrder: (cpu.user + cpu.system) / gen.length,
      mainBusy: elu.utilization,
    };
  } finally {
    await e.close();
    await env.cleanup();
  }
}

/** Feeds the reference book every order that reached a shard, in submission order, and compares. */
function checkBooks(e: Engine, gen: Gen[], answers: PlaceResponse[]): void {
  const sink: EventSink = { fill: (_f: Fill) => undefined, cancel: (_c: Cancel) => undefined };
  for (let m = 0; m < MARKETS; m++) {
    const mk = market(m + 1);
    const ref = createReferenceBook({ tickPips: mk.tickPips, minSizeUnits: 0, makerFeeBps: 0, takerFeeBps: 0 });
    const idOf = new Map<number, string>();
    for (let i = 0; i < gen.length; i++) {
      const g = gen[i];
      if (g.market !== m) continue;
      const a = answers[i];
      const reachedShard = a.ok || (a.code >= 4000 && a.code < 5000);
      if (!reachedShard) continue;
      const rec = e.getOrder(a.orderId);
      const o = g.input;
      const buy = o.side === 'BUY';
      const tif = Tif[o.orderType];
      const rests = tif === Tif.GTC || tif === Tif.GTD;
      const size = buy ? o.takerAmount - (rests ? 0 : o.takerAmount % 10_000) : o.makerAmount;
      const price = rests ? ((buy ? o.makerAmount : o.takerAmount) * 10_000) / size : buy ? Math.floor((o.makerAmount * 10_000) / o.takerAmount) : Math.ceil((o.takerAmount * 10_000) / o.makerAmount);
      if (rec !== undefined) check(rec.pricePips === price && rec.sizeUnits === size, `order ${a.orderId} derived like the reference`);
      idOf.set(i + 1, a.orderId);
      const r = ref.place(
        {
          handle: i + 1,
          owner: g.walletIdx,
          outcome: o.tokenId === mk.tokenIds[0] ? 0 : 1,
          side: buy ? Side.BUY : Side.SELL,
          tif,
          postOnly: o.postOnly,
          pricePips: price,
          sizeUnits: size,
          budgetUnits: rests || !buy ? 0 : o.makerAmount,
          expiresAt: 0,
        },
        sink,
      );
      const expectOk = r.code === 0;
      check(expectOk === a.ok && (expectOk || r.code === a.code), `order ${i}: engine ${a.code}, reference ${r.code}`);
    }
    const refOpen = ref.orders().map((o) => [idOf.get(o.handle), o.remainingUnits]);
    const engineOpen = new Map<string, number>();
    for (let w = 1; w <= WALLETS; w++) {
      for (const rec of e.openOrders(wallet(w), { conditionId: mk.conditionId })) engineOpen.set(rec.orderId, rec.sizeUnits - rec.sizeMatched);
    }
    check(refOpen.length === engineOpen.size, `market ${m}: ${engineOpen.size} open orders, reference ${refOpen.length}`);
    for (const [id, rem] of refOpen) check(engineOpen.get(id as string) === rem, `market ${m}: order ${id} remaining`);
    const depthOf = (tokenId: string): Depth => {
      const snap = JSON.parse(e.bookSnapshot(tokenId)?.json ?? '{"bids":[],"asks":[]}') as { bids: Array<{ price: string; size: string }>; asks: Array<{ price: string; size: string }> };
      const conv = (l: { price: string; size: string }) => ({ pricePips: Math.round(Number(l.price) * 10_000), sizeUnits: Math.round(Number(l.size) * T) });
      return { bids: snap.bids.map(conv), asks: snap.asks.map(conv) };
    };
    for (const outcome of [0, 1] as const) {
      check(isDeepStrictEqual(depthOf(mk.tokenIds[outcome]), ref.depth(outcome)), `market ${m} outcome ${outcome}: depth equals the reference`);
    }
  }
}

export default async function run(): Promise<void> {
  const gen = workload();
  const results: RunResult[] = [];
  for (const shards of [1, 2]) {
    const r = await once(shards, gen);
    results.push(r);
    console.log(
      `engine shards=${r.shards}: ${Math.round(r.ordersPerSec).toLocaleString('en-US')} orders/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ` +
        `${r.cpuUsPerOrder.toFixed(0)} µs CPU/order (all threads), main thread ${(r.mainBusy * 100).toFixed(0)}% busy ` +
        `(${ORDERS} orders, ${r.fills} fills, ${r.transactions} transactions, ${r.rejected} refused before matching, window ${WINDOW}); books equal the reference, ledger conserved`,
    );
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
