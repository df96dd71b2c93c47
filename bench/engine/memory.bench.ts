/**
 * What a resting order costs the main thread's heap. Open orders are most of what the sequencer keeps
 * alive, so this is what a deep book costs in memory, and each new one is copied by two scavenges before it
 * is promoted, on the thread that answers every request (order-table.ts, NO_TRADES). Run alone:
 * `npx tsx --expose-gc bench/engine/memory.bench.ts`; or with `npm run bench -- memory`.
 *
 * Workload (seeded): one engine, one shard, 2 markets whose token ids are 77-78 digits like the platform's,
 * 50 wallets funded with USDC. Orders are shaped as the edge hands them to the engine: parsed from JSON
 * text (so every string is the request's own), a random 32-byte id, salt and 65-byte signature each,
 * the wallet's API key as owner, the zero builder. Every order is a GTC BUY below any ask, so all of them
 * rest. 2,000 orders warm up; then the heap is collected, 40,000 more are placed and committed, and the heap
 * is collected again: the difference per order is the figure.
 *
 * Target: at most 1,024 bytes per resting order. Measured 1,458-1,463 before records shared their strings
 * and empty lists (3d2c1a5), 937-946 after, 703 once records left what the order signed to its event.
 *
 * Self-checks (a failure throws): every order is answered `live`, the wallets' open orders add up to every
 * order placed, and the ledger invariants hold (each open order's reservation is held).
 */
import { pathToFileURL } from 'node:url';
import { Engine, type PlaceInput } from '../../src/engine/engine.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { T, fundWallets, invariants, lcg, market, order, tempStore, wallet } from '../../test/fixtures/engine-harness.ts';

const WARM = 2_000;
const ORDERS = 40_000;
const WALLETS = 50;
const TARGET_BYTES = 1_024;

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(`memory bench self-check failed: ${what}`);
}

const rnd = lcg(20261122);
const hex = (bytes: number) => {
  let s = '0x';
  for (let i = 0; i < bytes; i++) s += rnd(256).toString(16).padStart(2, '0');
  return s;
};
const digits = (n: number) => {
  let s = String(1 + rnd(9));
  while (s.length < n) s += String(rnd(10));
  return s;
};

export default async function run(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('memory bench: run with --expose-gc (npm run bench passes it)');
  const settle = async () => {
    await new Promise((r) => setTimeout(r, 100));
    gc();
    gc();
  };
  const env = tempStore('pm-memory-bench-');
  const e = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  try {
    const ms = [market(1, { tokenIds: [digits(78), digits(77)] }), market(2, { tokenIds: [digits(78), digits(78)] })];
    for (const m of ms) e.registerMarket(m);
    await fundWallets(e, ms, WALLETS, 1_000_000 * T, 0);
    // As the edge hands an order over: JSON text parsed, every string the request's own.
    const text = (i: number): string => {
      const m = ms[i % ms.length]!;
      const w = wallet(1 + (i % WALLETS));
      const o = order({ wallet: w, tokenId: m.tokenIds[i % 2]!, side: 'BUY', price: 100 * (1 + rnd(40)), size: T * (1 + rnd(20)) });
      return JSON.stringify({ ...o, orderId: hex(32), salt: String(rnd(2 ** 31)), signature: hex(65), timestamp: String(1_763_000_000_000 + i) });
    };
    const place = async (from: number, to: number): Promise<void> => {
      const texts = Array.from({ length: to - from }, (_, k) => text(from + k));
      for (let i = 0; i < texts.length; i += 500) {
        const answers = await Promise.all(texts.slice(i, i + 500).map((t) => e.placeOrder(JSON.parse(t) as PlaceInput)));
        for (const a of answers) check(a.ok && a.status === 'live', `order ${a.orderId} answered ${a.status} (code ${a.code})`);
      }
    };
    await place(0, WARM);
    await settle();
    const before = process.memoryUsage().heapUsed;
    await place(WARM, WARM + ORDERS);
    await e.afterCommit();
    await settle();
    const after = process.memoryUsage().heapUsed;

    let open = 0;
    for (let w = 1; w <= WALLETS; w++) open += e.openOrders(wallet(w)).length;
    check(open === WARM + ORDERS, `${open} open orders, expected ${WARM + ORDERS}`);
    const problems = invariants(e);
    check(problems.length === 0, problems.join('; '));

    const perOrder = (after - before) / ORDERS;
    console.log(`resting orders: main-thread heap (Node ${process.versions.node}; ${ORDERS.toLocaleString('en-US')} orders after ${WARM.toLocaleString('en-US')} warm-up, heap collected before and after)`);
    console.table([
      {
        measure: 'heap per resting order',
        value: `${Math.round(perOrder).toLocaleString('en-US')} B`,
        note: `${((after - before) / 1024 ** 2).toFixed(1)} MiB for ${ORDERS.toLocaleString('en-US')} orders; ${(perOrder * 1e6 / 1024 ** 3).toFixed(2)} GiB per million`,
        target: `<= ${TARGET_BYTES.toLocaleString('en-US')} B: ${perOrder <= TARGET_BYTES ? 'MET' : 'NOT met'}`,
      },
    ]);
  } finally {
    await e.close();
    await env.cleanup();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
