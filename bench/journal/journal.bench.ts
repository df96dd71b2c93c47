/**
 * Journal writer throughput: fills per second durably committed (LMDB commit + fsync) through
 * src/journal/writer.ts. Run alone: `npx tsx bench/journal/journal.bench.ts`; or with `npm run bench`.
 *
 * Workload: 200_000 fills, 16 markets, 64 wallets, seeded. They arrive as the sequencer hands them over
 * after a busy ring drain: batches of 2_000 fills per event-loop turn, each batch followed by flush(). Per
 * fill the writer appends a complete Fill event: one binary record (fill-codec.ts) appended to the fills table
 * under its journal seq, with its trade id, and a transaction hash from one digest over the batch. Per batch it also writes what the
 * engine writes alongside: the latest state of each maker order touched (coalesced, one row per order)
 * and every balance touched (coalesced, one row per wallet and asset), plus meta.journalSeq.
 *
 * Timed: from the first append to the resolution of the last batch's commit promise (committed and synced).
 * Also reported: process CPU time per fill (main thread + LMDB's write thread; unlike wall time it does not
 * depend on what else the machine runs) and the main thread's event-loop utilization.
 * Excluded from timing: building the fill objects and order records (pre-generated) and the collection of
 * what building them allocated (a full GC before each run, so the run's collector sees only the writer's
 * garbage), opening the store, the checks. A warm-up run, then three runs on fresh stores; the median of the three is reported.
 *
 * Self-checks: the journal (readJournal: journal and fills tables merged by seq) holds seq 1..N contiguously, the fills table N rows with N
 * distinct transaction hashes, meta.journalSeq = N, one transaction per batch at most, and fills read back equal what was written.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { FillEvent, OrderRecord } from '../../src/domain/events.ts';
import { readFill, readFillsFrom } from '../../src/journal/codecs/fill-codec.ts';
import { tradeIdOf } from '../../src/journal/codecs/trade-ids.ts';
import type { OrderStateRow } from '../../src/journal/orders.ts';
import { openStore } from '../../src/journal/env.ts';
import { metaKeys } from '../../src/journal/keys.ts';
import { readJournal } from '../../src/journal/recovery.ts';
import { JournalWriter } from '../../src/journal/writer.ts';
import { threadTimes } from '../../tools/service-process.ts';

const FILLS = 200_000;
const BATCH = 2_000;
const MARKETS = 16;
const WALLETS = 64;
const RUNS = 3;

const prefixOf = (store: ReturnType<typeof openStore>) => store.meta.get(metaKeys.tradeIdPrefix) as string;

/** JOURNAL_PROFILE=<file>: V8's sampling profile of the main thread over the last run's timed window. */
async function startProfile(): Promise<Session> {
  const s = new Session();
  s.connect();
  await s.post('Profiler.enable');
  await s.post('Profiler.start');
  return s;
}

async function stopProfile(s: Session, file: string): Promise<void> {
  const { profile } = await s.post('Profiler.stop');
  writeFileSync(file, JSON.stringify(profile));
  s.disconnect();
}

/** A full collection: what the untimed setup allocated is old before the timed window starts. */
function fullGc(): void {
  v8.setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

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
  // The balances a fill moves, as slots of a (wallet, asset) table: the engine tracks dirty balances per
  // wallet object, not in string-keyed maps, and the bench should not time string hashing of its own.
  const balanceSlots: Array<[string, string]> = [];
  const slotOf = new Map<string, number>();
  const slot = (wallet: string, asset: string) => {
    const k = `${wallet}|${asset}`;
    let n = slotOf.get(k);
    if (n === undefined) {
      n = balanceSlots.push([wallet, asset]) - 1;
      slotOf.set(k, n);
    }
    return n;
  };
  const fillSlots = new Uint32Array(4 * FILLS);
  for (let i = 0; i < FILLS; i++) {
    const m = markets[rnd(MARKETS)];
    const tw = wallets[rnd(WALLETS)];
    const mw = wallets[rnd(WALLETS)];
    fillSlots[4 * i] = slot(tw, 'USDC');
    fillSlots[4 * i + 1] = slot(tw, m.tokens[0]);
    fillSlots[4 * i + 2] = slot(mw, 'USDC');
    fillSlots[4 * i + 3] = slot(mw, m.tokens[0]);
    const p = 100 * (1 + rnd(98));
    const size = 10_000 * (1 + rnd(500));
    const makerId = hex(1_000_000 + (i >> 3), 64);
    if ((i & 7) === 0) {
      makers.push({
        orderId: makerId, wallet: mw, tokenId: m.tokens[0], side: 'SELL', orderType: 'GTC', postOnly: false, makerAmount: 8 * size, takerAmount: 8 * size * p / 10_000,
        expiration: 0, builder: hex(0, 64), owner: '00000000-0000-4000-8000-000000000000', signer: mw, signatureType: 0,
        seq: i, conditionId: m.cid, outcome: 0, pricePips: p, sizeUnits: 8 * size, budgetUnits: 0, makerFeeBps: 0, takerFeeBps: 0,
        sizeMatched: 0, status: 'LIVE', tradeIds: [], fillSeqs: [], createdAt: 0, updatedAt: 0, response: { status: 'live', makingAmount: 0, takingAmount: 0, tradeIds: [] },
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
  return { fills, makers, balanceSlots, fillSlots };
}

interface Once {
  fillsPerSec: number;
  ms: number;
  transactions: number;
  cpuUsPerFill: number;
  mainBusy: number;
  /** CPU µs per fill on the main thread (appends, encoding, puts) and on every other thread (LMDB's commits and syncs on the libuv pool, V8's GC helpers), from /proc. */
  mainUsPerFill: number;
  otherUsPerFill: number;
  /** Bytes the process wrote to storage per fill. */
  bytesPerFill: number;
}

async function once(w: ReturnType<typeof workload>, profile?: string): Promise<Once> {
  const dir = mkdtempSync(join(tmpdir(), 'pm-journal-bench-'));
  const store = openStore({ dataDir: dir, mapSize: 8 * 1024 ** 3 });
  try {
    const writer = new JournalWriter(store, 0, Date.now);
    const fills = w.fills.map((f) => ({ ...f }));
    // Each run starts from resting makers with no fills (the records are mutated as fills land).
    const makers = w.makers.map((m) => ({ ...m, tradeIds: [] as string[], fillSeqs: [] as number[] }));
    fullGc();
    const th0 = threadTimes(process.pid);
    const cpu0 = process.cpuUsage();
    const elu0 = performance.eventLoopUtilization();
    const session = profile === undefined ? undefined : await startProfile();
    const t0 = performance.now();
    let last: Promise<unknown> | undefined;
    const dirty = new Uint8Array(w.balanceSlots.length);
    for (let b = 0; b < FILLS; b += BATCH) {
      const touched = new Set<OrderRecord>();
      const balances: number[] = [];
      for (let i = b; i < b + BATCH; i++) {
        const f = writer.append(fills[i]);
        const maker = makers[i >> 3];
        maker.sizeMatched += f.size;
        maker.tradeIds.push(f.tradeId);
        maker.fillSeqs.push(f.seq);
        touched.add(maker);
        for (let k = 4 * i; k < 4 * i + 4; k++) {
          const sl = w.fillSlots[k];
          if (dirty[sl] === 0) {
            dirty[sl] = 1;
            balances.push(sl);
          }
        }
      }
      for (const o of touched) writer.putOrder(o, false);
      for (const sl of balances) {
        dirty[sl] = 0;
        writer.putBalance(w.balanceSlots[sl][0], w.balanceSlots[sl][1], 1);
      }
      last = writer.flush()?.committed;
      await new Promise((r) => setImmediate(r));
    }
    await last;
    if (session !== undefined) await stopProfile(session, profile!);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const elu = performance.eventLoopUtilization(elu0);
    const th1 = threadTimes(process.pid);
    let mainMs = 0;
    let otherMs = 0;
    let written = 0;
    for (const [tid, b] of th1) {
      const a = th0.get(tid) ?? { cpuMs: 0, writeBytes: 0 };
      if (tid === process.pid) mainMs += b.cpuMs - a.cpuMs;
      else otherMs += b.cpuMs - a.cpuMs;
      written += b.writeBytes - a.writeBytes;
    }

    check(store.meta.get(metaKeys.journalSeq) === FILLS, 'meta.journalSeq');
    let n = 0;
    for (const e of readJournal(store)) check(e.seq === ++n, `journal seq ${n}`);
    check(n === FILLS, 'journal length');
    const txHashes = new Set<string>();
    for (const f of readFillsFrom(store.fills)) txHashes.add(f.txHash);
    check(txHashes.size === FILLS, 'every fill has its own transaction hash');
    for (const i of [0, 1, FILLS / 2, FILLS - 1]) {
      const got = readFill(store.fills, i + 1);
      check(isDeepStrictEqual(got, fills[i]), `fill ${i + 1} read back`);
    }
    check(writer.transactions <= FILLS / BATCH, 'at most one transaction per batch');
    for (const m of [makers[0], makers[makers.length >> 1], makers[makers.length - 1]]) {
      const row = store.orders.get(m.seq) as OrderStateRow;
      check(row[1] === m.sizeMatched && row[3].length === m.tradeIds.length && row[3].every((seq, k) => tradeIdOf(prefixOf(store), seq) === m.tradeIds[k]), `maker ${m.orderId}: its state row`);
    }
    return {
      fillsPerSec: (FILLS / ms) * 1000, ms, transactions: writer.transactions, cpuUsPerFill: (cpu.user + cpu.system) / FILLS, mainBusy: elu.utilization,
      mainUsPerFill: (mainMs * 1000) / FILLS, otherUsPerFill: (otherMs * 1000) / FILLS, bytesPerFill: written / FILLS,
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function run(): Promise<void> {
  const w = workload();
  const results = [];
  // One warm-up run first (not counted): the steady state is what a running service sees, not the first
  // seconds of a process while V8 is still compiling the writer.
  for (let r = 0; r <= RUNS; r++) {
    for (const m of w.makers) {
      m.sizeMatched = 0;
      m.tradeIds = [];
      m.fillSeqs = [];
    }
    const res = await once(w, r === RUNS ? process.env.JOURNAL_PROFILE : undefined);
    if (r > 0) results.push(res);
  }
  results.sort((a, b) => a.fillsPerSec - b.fillsPerSec);
  const med = results[Math.floor(RUNS / 2)];
  console.log(
    `journal: ${FILLS} fills in batches of ${BATCH}: median ${Math.round(med.fillsPerSec).toLocaleString('en-US')} fills/s durably committed ` +
      `(${med.ms.toFixed(0)} ms, ${med.transactions} transactions, ${med.cpuUsPerFill.toFixed(1)} µs CPU/fill over all threads: main ${med.mainUsPerFill.toFixed(1)}, ` +
      `others (LMDB commits and syncs, GC helpers) ${med.otherUsPerFill.toFixed(1)}; main thread ${(med.mainBusy * 100).toFixed(0)}% busy; ${Math.round(med.bytesPerFill)} bytes written per fill; ` +
      `runs: ${results.map((r) => Math.round(r.fillsPerSec)).join(', ')}; target >= 200,000)`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
