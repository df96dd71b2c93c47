/**
 * What the committed books add to the order path: the main-thread CPU of CommittedBooks.apply per order,
 * and of building a /book body, measured on the journal batches of a real engine run.
 * Run alone: `npx tsx bench/stream/committed-books.bench.ts`; or `npm run bench -- committed-books`.
 *
 * Workload (seeded): 8 markets (tick 0.01), 20 funded wallets, ORDERS GTC orders in the load tool's `mixed`
 * shape (half resting BUYs, half BUY pairs at p and 1 - p that mint), placed through an in-process Engine;
 * every committed batch is recorded as onCommitted delivers it. Timed: replaying all recorded batches into
 * a fresh CommittedBooks, REPEAT times (best and median reported, per order); then building both /book
 * bodies of every market once per version change, per body. Excluded: the engine run that records the
 * batches. Self-check: after a replay, every token's body equals the shards' published book (levels, last
 * trade, frame).
 */
import { pathToFileURL } from 'node:url';
import type { JournalEvent } from '../../src/domain/events.ts';
import { Engine } from '../../src/engine/engine.ts';
import { CommittedBooks } from '../../src/projections/committed-books.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { T, lcg, market, order, tempStore, wallet } from '../../test/fixtures/engine-harness.ts';

const ORDERS = 20_000;
const REPEAT = 15;

export default async function run(): Promise<void> {
  const env = tempStore('pm-books-bench-');
  const batches: JournalEvent[][] = [];
  const markets = Array.from({ length: 8 }, (_, i) => market(0x81 + i));
  try {
    const e = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
    e.onCommitted((events) => batches.push(events));
    for (const m of markets) e.registerMarket(m);
    const wallets = Array.from({ length: 20 }, (_, i) => wallet(0x7000 + i));
    for (const w of wallets) await e.deposit(w, 10_000_000 * T);
    const rnd = lcg(7);
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < ORDERS; i += 2) {
      const m = markets[rnd(markets.length)];
      const p = 100 * (10 + rnd(80));
      if (rnd(2) === 0) {
        pending.push(e.placeOrder(order({ wallet: wallets[rnd(20)], tokenId: m.tokenIds[0], side: 'BUY', price: p, size: (1 + rnd(10)) * T })));
        pending.push(e.placeOrder(order({ wallet: wallets[rnd(20)], tokenId: m.tokenIds[1], side: 'BUY', price: 9000 - p, size: (1 + rnd(10)) * T })));
      } else {
        pending.push(e.placeOrder(order({ wallet: wallets[rnd(20)], tokenId: m.tokenIds[0], side: 'BUY', price: p, size: (1 + rnd(10)) * T })));
        pending.push(e.placeOrder(order({ wallet: wallets[rnd(20)], tokenId: m.tokenIds[1], side: 'BUY', price: 10_000 - p, size: (1 + rnd(10)) * T })));
      }
      if (pending.length >= 400) await Promise.all(pending.splice(0));
    }
    await Promise.all(pending);
    await e.afterCommit();
    for (const m of markets) await e.refreshSnapshot(m.conditionId);
    const shardBodies = markets.flatMap((m) => m.tokenIds.map((t) => strip(e.bookSnapshot(t)!.json)));
    await e.close();

    let events = 0;
    let fills = 0;
    for (const b of batches) for (const ev of b) {
      events++;
      if (ev.type === 'fill') fills++;
    }
    const times: number[] = [];
    let books = new CommittedBooks();
    for (let r = 0; r < REPEAT; r++) {
      books = new CommittedBooks();
      books.seed({ markets: [], resting: [], lastTrades: [], ts: 0 });
      const t0 = process.cpuUsage();
      for (const b of batches) books.apply(b);
      const d = process.cpuUsage(t0);
      times.push((d.user + d.system) / ORDERS);
    }
    const mine = markets.flatMap((m) => m.tokenIds.map((t) => strip(books.book(t)!.json)));
    if (JSON.stringify(mine) !== JSON.stringify(shardBodies)) throw new Error('committed-books bench self-check: the replayed books differ from the shards\' books');
    times.sort((a, b) => a - b);

    // Body builds: one per version (what /book, the `book` event and price_change hashes share).
    const bodies = new CommittedBooks();
    bodies.seed({ markets: [], resting: [], lastTrades: [], ts: 0 });
    let built = 0;
    let buildUs = 0;
    for (const b of batches) {
      const changes = bodies.apply(b);
      const t0 = process.cpuUsage();
      for (const c of changes) for (const t of c.tokenIds) if (bodies.book(t) !== undefined) built++;
      const d = process.cpuUsage(t0);
      buildUs += d.user + d.system;
    }
    console.log(`committed books: ${ORDERS.toLocaleString('en-US')} orders, ${events.toLocaleString('en-US')} journal events (${fills.toLocaleString('en-US')} fills) in ${batches.length.toLocaleString('en-US')} batches`);
    console.log(`  apply(): best ${times[0].toFixed(2)} µs, median ${times[times.length >> 1].toFixed(2)} µs of main-thread CPU per order (${REPEAT} replays)`);
    console.log(`  /book body (both tokens, ~${Math.round(mine.reduce((s, x) => s + x.length, 0) / mine.length)} bytes each at the end): ${(buildUs / built).toFixed(2)} µs per body over ${built.toLocaleString('en-US')} builds`);
  } finally {
    await env.cleanup();
  }
}

/** A body without its timestamp and hash (the shards stamp publication time, the committed books commit time). */
function strip(json: string): string {
  const b = JSON.parse(json) as Record<string, unknown>;
  delete b.timestamp;
  delete b.hash;
  return JSON.stringify(b);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
