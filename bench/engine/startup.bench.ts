/**
 * Start-up after a restart: how long Engine.open takes on a store that already holds a trading history,
 * the time between a crash and the service taking orders again. Run alone:
 * `npx tsx --expose-gc bench/engine/startup.bench.ts`; or with `npm run bench -- startup`.
 *
 * Workload (seeded): a store built through Engine.placeOrder (durable commits, one shard): 8 markets, 32
 * wallets funded with USDC and token pairs, then 100_000 orders: 70% GTC resting 1-15 ticks from the
 * market's mid, 30% GTC up to 5 ticks through it (fills, so the journal holds fills, maker updates and
 * finished orders besides open ones), 1-20 tokens. Then each wallet cancels nine in ten of its open
 * orders, as bots do: a long history holds far more finished orders than open ones, and a restart reads
 * the whole history but restores only the open orders.
 *
 * Timed: Engine.open on that store, which does what a restart does: load the tables, replay the journal
 * from seq 1 and prove the two against each other (verifyStore: the state hash), start the shard, restore
 * every open order into its book, and prove the engine's state hash again. Reported separately:
 * verifyStore alone (the part that grows with the history; the rest grows with the open orders). A
 * warm-up open, then three; medians are reported. Excluded: building the store, closing.
 *
 * Self-checks (a failure throws): after every open the engine's state hash equals the one it had before
 * it was closed, the open orders are the same number, and the ledger invariants hold.
 */
import { pathToFileURL } from 'node:url';
import { Engine, type PlaceInput } from '../../src/engine/engine.ts';
import { verifyStore } from '../../src/journal/recovery.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { T, fundWallets, invariants, lcg, market, order, tempStore, wallet } from '../../test/fixtures/engine-harness.ts';

const ORDERS = 100_000;
const MARKETS = 8;
const WALLETS = 32;
const WINDOW = 512;
const RUNS = 3;

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(`startup bench self-check failed: ${what}`);
}

function workload(): PlaceInput[] {
  const rnd = lcg(20261121);
  const mids = Array.from({ length: MARKETS }, () => 3000 + 100 * rnd(40));
  const out: PlaceInput[] = [];
  for (let i = 0; i < ORDERS; i++) {
    const m = rnd(MARKETS);
    const mk = market(m + 1);
    const outcome = rnd(2);
    const side = rnd(2) === 0 ? 'BUY' : 'SELL';
    const mid = outcome === 0 ? mids[m]! : 10_000 - mids[m]!;
    const away = side === 'BUY' ? -1 : 1;
    const ticks = rnd(100) < 70 ? away * (1 + rnd(15)) : -away * rnd(6);
    const price = Math.min(9900, Math.max(100, mid + 100 * ticks));
    out.push(order({ wallet: wallet(rnd(WALLETS) + 1), tokenId: mk.tokenIds[outcome], side, price, size: T * (1 + rnd(20)) }));
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const gc = () => (globalThis as { gc?: () => void }).gc?.();

export default async function run(): Promise<void> {
  const env = tempStore('pm-startup-bench-');
  try {
    // Build the history.
    let e = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
    const ms = Array.from({ length: MARKETS }, (_, i) => market(i + 1));
    for (const m of ms) e.registerMarket(m);
    await fundWallets(e, ms, WALLETS, 1_000_000 * T, 10_000 * T);
    const gen = workload();
    let next = 0;
    await Promise.all(
      Array.from({ length: WINDOW }, async () => {
        while (next < gen.length) await e.placeOrder(gen[next++]!);
      }),
    );
    for (let w = 1; w <= WALLETS; w++) {
      const open = e.openOrders(wallet(w));
      const cancel = open.filter((_, i) => i % 10 !== 0).map((o) => o.orderId);
      for (let i = 0; i < cancel.length; i += 500) {
        const r = await e.cancelOrders(wallet(w), cancel.slice(i, i + 500));
        check(r.canceled.length === Math.min(500, cancel.length - i), `wallet ${w}: every cancel accepted`);
      }
    }
    const built = e.stats();
    const hash = e.stateHash();
    await e.close();

    const opens: number[] = [];
    const verifies: number[] = [];
    let events = 0;
    for (let r = 0; r <= RUNS; r++) {
      gc();
      const t0 = performance.now();
      const v = verifyStore(env.store);
      const verifyMs = performance.now() - t0;
      events = v.events;
      gc();
      const t1 = performance.now();
      e = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
      const openMs = performance.now() - t1;
      try {
        check(e.stateHash() === hash, `run ${r}: state hash after the restart differs from before it`);
        check(e.stats().openOrders === built.openOrders, `run ${r}: ${e.stats().openOrders} open orders restored, ${built.openOrders} before`);
        const problems = invariants(e);
        check(problems.length === 0, `run ${r}: ledger invariants: ${problems.slice(0, 3).join('; ')}`);
      } finally {
        await e.close();
      }
      if (r === 0) continue; // warm-up
      verifies.push(verifyMs);
      opens.push(openMs);
    }
    const open = median(opens);
    const verify = median(verifies);
    console.log(
      `engine start-up on a store of ${ORDERS.toLocaleString('en-US')} orders (${events.toLocaleString('en-US')} journal events, ${built.fills.toLocaleString('en-US')} fills, ` +
        `${built.openOrders.toLocaleString('en-US')} open): Engine.open median ${(open / 1000).toFixed(2)} s ` +
        `(${opens.map((x) => (x / 1000).toFixed(2)).join(' / ')}), of which verifyStore ${(verify / 1000).toFixed(2)} s ` +
        `(${Math.round(events / (verify / 1000)).toLocaleString('en-US')} events/s); state hash, open orders and ledger checked after every open`,
    );
  } finally {
    await env.cleanup();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
