/**
 * Journal writer throughput: fills per second durably committed (LMDB commit + fsync) through
 * src/journal/writer.ts. Run alone: `npx tsx bench/journal/journal.bench.ts`; or with `npm run bench`.
 *
 * Workload: 200_000 fills, 16 markets, 64 wallets, seeded. They arrive as the sequencer hands them over
 * after a busy ring drain: batches of 2_000 fills per event-loop turn, each batch followed by flush(). Per
 * fill the writer appends a complete Fill event (stored once, in the fills table under its journal seq, plus
 * ix.fillsByMarket and two ix.fillsByWallet entries; trade id and transaction hash digests). Per batch it also writes what the
 * engine writes alongside: the latest state of each maker order touched (coalesced, one row per order)
 * and every balance touched (coalesced, one row per wallet and asset), plus meta.journalSeq.
 *
 * Timed: from the first append to the resolution of the last batch's commit promise (committed and synced).
 * Also reported: process CPU time per fill (main thread + LMDB's write thread; unlike wall time it does not
 * depend on what else the machine runs) and the main thread's event-loop utilization.
 * Excluded from timing: building the fill objects and order records (pre-generated), opening the store,
 * the checks. Three runs on fresh stores; the median is reported.
 *
 * Self-checks: the journal (readJournal: journal and fills tables merged by seq) holds seq 1..N contiguously, the fills table N rows, ix.fillsByMarket N entries,
 * meta.journalSeq = N, one transaction per batch at most, and every fill read back equals what was written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { fillFromRow, type FillEvent, type FillRow, type OrderRecord } from '../../src/domain/events.ts';
import { openStore } from '../../src/journal/env.ts';
import { ix, metaKeys } from '../../src/journal/keys.ts';
import { readJournal } from '../../src/journal/recovery.ts';
import { JournalWriter } from '../../src/journal/writer.ts';

const FILLS = 200_000;
const BATCH = 2_000;
const MARKETS = 16;
const WALLETS = 64;
const RUNS = 3;

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(`journal bench self-check failed: ${what}`);
}

const hex = (n: number, len: number) => '0x' + n.toString(16).padStart(len, '0');

function workload() {
  let s = 42;
  const rnd = (n: number) => ((s = (s * 48271) % 2147483647) % n);
  const wallets = Array.from({ length: WALLETS }, (_, i) => hex(i + 1, 40));
  const markets = Array.from({ length: MARKETS }, (_, i) => ({ cid: hex(i + 1, 64), tokens: [`${i + 1}1111111111111111111111111111111111111111111111111111111111111111111111`, `${i + 1}2222222222222222222222222222222222222222222222222222222222222222222222`] }));
  const makers: OrderRecord[] = [];
  const fills: FillEvent[] = [];
  for (let i = 0; i < FILLS; i++) {
    const m = markets[rnd(MARKETS)];
    const tw = wallets[rnd(WALLETS)];
    const mw = wallets[rnd(WALLETS)];
    const p = 100 * (1 + rnd(98));
    const size = 10_000 * (1 + rnd(500));
    const makerId = hex(1_000_000 + (i >> 3), 64);
    if ((i & 7) === 0) {
      makers.push({
        orderId: makerId, wallet: mw, tokenId: m.tokens[0], side: 'SELL', orderType: 'GTC', postOnly: false, makerAmount: 8 * size, takerAmount: 8 * size * p / 10_000,
        expiration: 0, builder: hex(0, 64), owner: '00000000-0000-4000-8000-000000000000', signer: mw, salt: String(i), timestamp: '0', signatureType: 0,
        signature: '0x' + '11'.repeat(65), seq: i, conditionId: m.cid, outcome: 0, pricePips: p, sizeUnits: 8 * size, budgetUnits: 0, makerFeeBps: 0, takerFeeBps: 0,
        sizeMatched: 0, status: 'LIVE', tradeIds: [], createdAt: 0, updatedAt: 0, response: { status: 'live', makingAmount: 0, takingAmount: 0, tradeIds: [] },
      });
    }
    fills.push({
      type: 'fill', seq: 0, ts: 0, tradeId: '', txHash: '', conditionId: m.cid, kind: 'TRANSFER', size,
      takerOrderId: hex(i + 1, 64), makerOrderId: makerId, takerWallet: tw, makerWallet: mw, takerOwner: '00000000-0000-4000-8000-000000000001',
      makerOwner: '00000000-0000-4000-8000-000000000002', takerTokenId: m.tokens[0], makerTokenId: m.tokens[0], takerOutcome: 0, makerOutcome: 0,
      takerSide: 'BUY', makerSide: 'SELL', takerPricePips: p, makerPricePips: p, takerUsdc: (size / 10_000) * p, makerUsdc: (size / 10_000) * p,
      takerFee: 0, makerFee: 0, makerRemaining: 0, builder: hex(0, 64),
    });
  }
  return { fills, makers };
}

async function once(w: ReturnType<typeof workload>): Promise<{ fillsPerSec: number; ms: number; transactions: number; cpuUsPerFill: number; mainBusy: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'pm-journal-bench-'));
  const store = openStore({ dataDir: dir, mapSize: 8 * 1024 ** 3 });
  try {
    const writer = new JournalWriter(store, 0, Date.now);
    const fills = w.fills.map((f) => ({ ...f }));
    const cpu0 = process.cpuUsage();
    const elu0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    let last: Promise<unknown> | undefined;
    for (let b = 0; b < FILLS; b += BATCH) {
      const touched = new Set<OrderRecord>();
      const balances = new Map<string, [string, string]>();
      for (let i = b; i < b + BATCH; i++) {
        const f = writer.append(fills[i]);
        const maker = w.makers[i >> 3];
        maker.sizeMatched += f.size;
        maker.tradeIds.push(f.tradeId);
        touched.add(maker);
        balances.set(f.takerWallet + 'U', [f.takerWallet, 'USDC']);
        balances.set(f.takerWallet + f.takerTokenId, [f.takerWallet, f.takerTokenId]);
        balances.set(f.makerWallet + 'U', [f.makerWallet, 'USDC']);
        balances.set(f.makerWallet + f.makerTokenId, [f.makerWallet, f.makerTokenId]);
      }
      for (const o of touched) writer.putOrder(o, false);
      for (const [wallet, asset] of balances.values()) writer.putBalance(wallet, asset, 1);
      last = writer.flush()?.committed;
      await new Promise((r) => setImmediate(r));
    }
    await last;
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const elu = performance.eventLoopUtilization(elu0);

    check(store.meta.get(metaKeys.journalSeq) === FILLS, 'meta.journalSeq');
    let n = 0;
    for (const e of readJournal(store)) check(e.seq === ++n, `journal seq ${n}`);
    check(n === FILLS, 'journal length');
    check(store.fills.getCount() === FILLS, 'fills table length');
    let byMarket = 0;
    for (let m = 1; m <= MARKETS; m++) for (const _ of store.indexes.getKeys(ix.fillsByMarketRange(hex(m, 64)))) byMarket++;
    check(byMarket === FILLS, 'ix.fillsByMarket entries');
    for (const i of [0, 1, FILLS / 2, FILLS - 1]) {
      const got = fillFromRow(store.fills.get(i + 1) as FillRow);
      check(isDeepStrictEqual(got, fills[i]), `fill ${i + 1} read back`);
    }
    check(writer.transactions <= FILLS / BATCH, 'at most one transaction per batch');
    return { fillsPerSec: (FILLS / ms) * 1000, ms, transactions: writer.transactions, cpuUsPerFill: (cpu.user + cpu.system) / FILLS, mainBusy: elu.utilization };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function run(): Promise<void> {
  const w = workload();
  const results = [];
  for (let r = 0; r < RUNS; r++) {
    for (const m of w.makers) {
      m.sizeMatched = 0;
      m.tradeIds = [];
    }
    results.push(await once(w));
  }
  results.sort((a, b) => a.fillsPerSec - b.fillsPerSec);
  const med = results[Math.floor(RUNS / 2)];
  console.log(
    `journal: ${FILLS} fills in batches of ${BATCH}: median ${Math.round(med.fillsPerSec).toLocaleString('en-US')} fills/s durably committed ` +
      `(${med.ms.toFixed(0)} ms, ${med.transactions} transactions, ${med.cpuUsPerFill.toFixed(1)} µs CPU/fill over all threads, main thread ${(med.mainBusy * 100).toFixed(0)}% busy; ` +
      `runs: ${results.map((r) => Math.round(r.fillsPerSec)).join(', ')}; target >= 200,000)`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
