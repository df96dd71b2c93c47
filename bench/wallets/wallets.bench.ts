/**
 * Wallet data endpoints over loopback HTTP: GET /positions sorted pages for a wallet with 5,000 positions
 * and GET /trades filtered pages over a store of 1,000,000 trades.
 * Run alone: `npx tsx bench/wallets/wallets.bench.ts`; or with `npm run bench -- wallets`.
 *
 * Workload (seeded, built once into a fresh LMDB store before anything is timed):
 *   - 5,000 markets in the catalog (50 events x 100 markets; titles from a small vocabulary, end dates
 *     spread over a year), each with its journal `market` event; 500 of them resolved.
 *   - 1,000,000 fills. Every 20th fill belongs to the subject wallet S: ten per market, S buying one
 *     outcome as taker or maker and selling back at most a third of what it holds, so S ends with 5,000
 *     open positions of varied size, average and realized PnL. The other 950,000 are among 2,000 wallets,
 *     four traders per market, transfers and mints, both sides random.
 *   - Stored as the running service stores them: the fill records (fill-codec.ts, by seq), the trade views
 *     under the key builders of journal/keys.ts with WalletTradesProjection's value layout (a sample of
 *     fills is replayed through the projection and compared), the positions and market facts computed by
 *     WalletPositionsProjection over every event, and the projection cursors and journal seq set to the
 *     last event. Each range is written in key order in a few big synchronous transactions (LMDB takes
 *     sorted inserts far faster; about 45 s on the 2-vCPU machine of the report). Not written: the journal
 *     records themselves (the queries never read them). Nothing is above the committed cursors, so no
 *     trade is read from the overlay of queued writes (test/queries/wallets/reader.test.ts covers that path).
 *   - Live prices: every token has a published book snapshot (five levels a side, best last, as the
 *     shards publish it) and a last trade; a few books are wider than 0.10 so the last trade is used.
 * The server is the real HTTP edge (edge/server.ts) with the real wallet routes on that store (rate
 * limits off); there is no engine (its recovery would replay the synthetic journal), so prices come from
 * a stand-in with the committed books' surface the wallet routes read (ctx.livePrices: bookSnapshot,
 * lastTradePrice, onChanged).
 *
 * Timed: HTTP requests only, from client child processes (the server keeps a core of its own; 10
 * connections). For each endpoint:
 *   - steady, the target's measure: one request due every millisecond for 10 s (bench/lib/open-loop.ts),
 *     latency from each request's due time to its last byte, so a request queued behind a slow one
 *     carries its wait; one sample per response. Meanwhile, what the server process did: CPU per
 *     request, garbage-collection pauses (longest / total), the longest event-loop delay. Targets and
 *     baselines run three such windows; the one with the median p99 is reported and held to the target
 *     (STEADY_WINDOWS), every window's p99 printed beside it;
 *   - autocannon at its overallRate of 1,000/s for 10 s, for comparison with earlier reports: it sends
 *     each connection's share of a second back to back at the start of the second, so its latencies are
 *     those of 10 concurrent requests at full speed, and its p99 weighs a slow response by its length in
 *     ms (bench/lib/autocannon.ts); its raw p99 is one sample per response;
 *   - autocannon unthrottled for 5 s: requests/s.
 * Excluded from timing: building the store, the catalog import, starting the server, the self-checks.
 * Paths:
 *   /positions pages: user=S, every sortBy in both directions, offsets 0 / 100 / 1,000 / 4,000, limit 100
 *   /trades pages: user=S (taker rows), user=S&takerOnly=false&side=BUY (offsets 0..875), market=<one>,
 *   three markets with filterType=CASH&filterAmount=5, the global feed with side=SELL&filterType=TOKENS&
 *   filterAmount=20, the global feed at offset 1,000, another wallet with takerOnly=false; limit 100.
 *   Pages repeat, as polling clients' do: after the warm-up, position pages and trade rows come from their
 *   caches (see queries/wallets/). Two variants are reported beside the target, not held to it:
 *   /positions while 50 random books are republished every 10 ms (a live market: the price sorts must
 *   re-check and re-sort), and /trades over 2,000 distinct pages, twice the rendered-row cache, so every
 *   row is rendered cold (a random fill read and its formatting).
 *
 * Baselines: the same bytes as a real 100-row page, precomputed and answered by a route of the same edge
 * that reads nothing: the floor the machine, the edge and the load generator set for a page that size.
 *
 * Also measured first (applyCost): what applying a fill costs the wallet projections on the trading path,
 * in microseconds per fill. BENCH_WALLETS_ONLY=<substring>,... times only the matching workloads (`apply`:
 * only that).
 *
 * Self-checks (a failure throws): S has exactly 5,000 positions and their sizes and lifetime buys equal the
 * generator's own bookkeeping; the newest /trades page of S equals the generator's list; the trade views
 * equal what the projection writes; every timed request answered 200; applyCost's views settled and add up. The p99 target (< 5 ms at 1,000
 * requests/s, steady) is checked and printed as TARGET MET / TARGET MISSED beside the baselines: on a shared
 * machine the floor itself can miss it, and a verdict should not stop the other benchmarks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { runAutocannonChild, type LoadResult } from '../lib/autocannon.ts';
import type { FillEvent, JournalEvent } from '../../src/domain/events.ts';
import type { AppContext } from '../../src/edge/context.ts';
import { Metrics } from '../../src/edge/pipeline/metrics.ts';
import { RateLimiter } from '../../src/edge/limits/rate-limit.ts';
import { walletRoutes } from '../../src/edge/routes/data/wallets.ts';
import { reply, route } from '../../src/edge/pipeline/route.ts';
import { startServer } from '../../src/edge/server.ts';
import { runOpenLoopChild, type OpenLoopResult } from '../lib/open-loop.ts';
import { openStore, type Store } from '../../src/journal/env.ts';
import { encodeFillRecord, readFill } from '../../src/journal/codecs/fill-codec.ts';
import { tradeIdOf } from '../../src/journal/codecs/trade-ids.ts';
import { MAKER_ROLE, TAKER_ROLE, metaKeys, prefixRange, walletViewKeys, type Key } from '../../src/journal/keys.ts';
import { CatalogWriter } from '../../src/projections/catalog.ts';
import { Projector, ViewStore, compareKeys } from '../../src/projections/projector.ts';
import {
  POSITIONS_PROJECTION,
  SIDE_BUY,
  SIDE_SELL,
  TRADES_PROJECTION,
  WalletPositionsProjection,
  WalletTradesProjection,
  walletProjections,
  type PositionState,
  type TradeEntry,
  type ViewWriter,
} from '../../src/projections/wallets.ts';
import { CatalogReader } from '../../src/queries/catalog.ts';
import { POSITION_SORTS } from '../../src/edge/schemas/wallets.ts';
import type { LivePrices } from '../../src/queries/wallets/position-prices.ts';
import { WalletDataReader } from '../../src/queries/wallets/reader.ts';
import { systemClock } from '../../src/runtime/clock.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { rng } from '../../src/demo/catalog.ts';

const MARKETS = 5_000;
const FILLS = 1_000_000;
const S_EVERY = 20;
const OTHER_WALLETS = 2_000;
const RESOLVED_EVERY = 10;
const U = 1_000_000;
const T0 = Date.UTC(2026, 0, 1);
const RATE = 1_000;
const FIXED_SECONDS = 10;
const MAX_SECONDS = 5;
const CONNECTIONS = 10;
const P99_TARGET_MS = 5;
/**
 * Steady windows per target and baseline workload; the window with the median p99 is reported and held to
 * the target, every window's p99 printed beside it. One window is hostage to the VM: a process on it can
 * lose the CPU for 5-40 ms with the machine otherwise idle (an idle sibling process sees the same gaps).
 */
const STEADY_WINDOWS = 3;
/** The live-market variant: books republished (mid moved one tick) while /positions is timed. */
const CHURN_BOOKS = 50;
const CHURN_MS = 10;

const S = '0x' + '5'.repeat(40);
/** The store's trade-id prefix (48 hex digits), as the journal writer draws one per store. */
const TRADE_ID_PREFIX = 'be'.repeat(24);
const cidOf = (m: number) => '0x' + 'c1'.repeat(28) + m.toString(16).padStart(8, '0');
const tokenOf = (m: number, o: number) => String(7_000_000 + m * 2 + o);
const walletOf = (i: number) => '0x' + 'ab'.repeat(16) + i.toString(16).padStart(8, '0');
const WORDS = ['election', 'bitcoin', 'rain', 'final', 'rate', 'cut', 'launch', 'record', 'title', 'merger', 'Senate', 'Oscar'];

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(`wallets bench self-check failed: ${what}`);
}

export interface Dataset {
  dir: string;
  store: Store;
  /** Generator's bookkeeping of S per market: outcome held, size, bought (units). */
  sHeld: { outcome: 0 | 1; size: number; bought: number }[];
  /** Seqs of S's taker fills, newest last; of every fill per market (sampled markets). */
  sTakerSeqs: number[];
  buildMs: number;
}

/** A writer into a plain map (positions are read-modify-write), dumped into LMDB at the end. */
class MapWriter implements ViewWriter {
  readonly m = new Map<string, { key: Key; value: unknown }>();
  get<T>(key: Key): T | undefined {
    return this.m.get(key.join('\u0000'))?.value as T | undefined;
  }
  put(key: Key, value: unknown): void {
    this.m.set(key.join('\u0000'), { key, value });
  }
}

export async function buildDataset(): Promise<Dataset> {
  const started = Date.now();
  const phase = (name: string) => console.log(`  build: ${name} at ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const dir = mkdtempSync(join(tmpdir(), 'pm-bench-wallets-'));
  const store = openStore({ dataDir: dir });
  const rand = rng(7);
  const int = (n: number) => Math.floor(rand() * n);

  // ---- catalog: 50 events x 100 markets ----
  const catalog = new CatalogWriter(store, systemClock);
  for (let e = 0; e < 50; e++) {
    const markets = [];
    for (let k = 0; k < 100; k++) {
      const m = e * 100 + k;
      const end = new Date(T0 + (1 + ((m * 7919) % 365)) * 86_400_000).toISOString();
      markets.push({
        question: `${WORDS[m % WORDS.length]} ${WORDS[(m * 5) % WORDS.length]} #${(m * 2654435761) % 100_000}`,
        conditionId: cidOf(m),
        slug: `bench-market-${m}`,
        clobTokenIds: [tokenOf(m, 0), tokenOf(m, 1)],
        endDate: end,
        icon: `https://img/bench/${m}.png`,
      });
    }
    const out = await catalog.upsertEvents([{ title: `Bench event ${e}`, slug: `bench-event-${e}`, endDate: new Date(T0 + 400 * 86_400_000).toISOString(), markets }] as never);
    check(out.ok, `catalog import: ${JSON.stringify(out).slice(0, 300)}`);
  }
  phase('catalog imported');

  // ---- events, in journal order: positions through the real projection, fills table in seq order ----
  // LMDB inserts in key order are an order of magnitude faster than random ones, so every index is
  // written afterwards, range by range in key order, from these columns (one slot per fill).
  const positions = new MapWriter();
  const posProjection = new WalletPositionsProjection(positions);
  const W = OTHER_WALLETS + 1; // wallet indexes: 0..1999 others, 2000 = S
  const walletName = (w: number) => (w === OTHER_WALLETS ? S : walletOf(w));
  const colMarket = new Int32Array(FILLS);
  const colTaker = new Int32Array(FILLS);
  const colMaker = new Int32Array(FILLS);
  const colTSide = new Uint8Array(FILLS);
  const colMSide = new Uint8Array(FILLS);
  const colSize = new Float64Array(FILLS);
  const colTUsdc = new Float64Array(FILLS);
  const colMUsdc = new Float64Array(FILLS);
  let seq = 0;
  const tsOf = (s: number) => T0 + s * 100;
  for (let m = 0; m < MARKETS; m++) {
    const s = ++seq;
    posProjection.apply({
      type: 'market', seq: s, ts: tsOf(s), conditionId: cidOf(m), marketId: m + 1, tokenIds: [tokenOf(m, 0), tokenOf(m, 1)],
      tickPips: 100, minSizeUnits: U, makerFeeBps: 0, takerFeeBps: 0, acceptingOrders: true, negRisk: m % 9 === 0,
    });
  }
  const firstFillSeq = seq + 1;
  const sHeld = Array.from({ length: MARKETS }, (_, m) => ({ outcome: (m % 2) as 0 | 1, size: 0, bought: 0 }));
  const sTakerSeqs: number[] = [];
  const sample: FillEvent[] = [];
  let sFill = 0;
  const CHUNK = 100_000;
  for (let i = 0; i < FILLS; ) {
    const end = Math.min(FILLS, i + CHUNK);
    store.root.transactionSync(() => {
      for (; i < end; i++) {
        const s = ++seq;
        const pips = 500 + int(90) * 100;
        let f: FillEvent;
        let m: number;
        let tw: number;
        let mw: number;
        if (i % S_EVERY === S_EVERY - 1) {
          // S's fills: market by market, ten each; sells never exceed a third of the holding.
          m = sFill % MARKETS;
          const h = sHeld[m];
          sFill++;
          const selling = h.size >= 3 * U && int(5) === 0;
          const size = selling ? Math.max(1, Math.floor(h.size / U / 3)) * U : (1 + int(50)) * U;
          const sIsTaker = int(3) !== 0;
          const other = (m * 7 + int(4)) % OTHER_WALLETS;
          const sSide = selling ? 'SELL' : 'BUY';
          const oSide = selling ? 'BUY' : 'SELL';
          tw = sIsTaker ? OTHER_WALLETS : other;
          mw = sIsTaker ? other : OTHER_WALLETS;
          f = fillOf(s, tsOf(s), m, size, h.outcome, walletName(tw), walletName(mw), sIsTaker ? sSide : oSide, sIsTaker ? oSide : sSide, pips, pips, 'TRANSFER');
          if (selling) h.size -= size;
          else {
            h.size += size;
            h.bought += size;
          }
          if (sIsTaker) sTakerSeqs.push(s);
        } else {
          m = int(MARKETS);
          const a = int(4);
          const b = (a + 1 + int(3)) % 4;
          tw = (m * 7 + a) % OTHER_WALLETS;
          mw = (m * 7 + b) % OTHER_WALLETS;
          const size = (1 + int(100)) * U;
          if (int(4) === 0) {
            const o = int(2) as 0 | 1;
            f = fillOf(s, tsOf(s), m, size, o, walletName(tw), walletName(mw), 'BUY', 'BUY', pips, 10_000 - pips, 'MINT', (1 - o) as 0 | 1);
          } else {
            const side = int(2) === 0 ? 'BUY' : 'SELL';
            f = fillOf(s, tsOf(s), m, size, int(2) as 0 | 1, walletName(tw), walletName(mw), side, side === 'BUY' ? 'SELL' : 'BUY', pips, pips, 'TRANSFER');
          }
        }
        // Encoding sets the fill's transaction hash (a digest of its record).
        store.fills.putSync(s, encodeFillRecord(f));
        posProjection.apply(f);
        colMarket[i] = m;
        colTaker[i] = tw;
        colMaker[i] = mw;
        colTSide[i] = f.takerSide === 'BUY' ? SIDE_BUY : SIDE_SELL;
        colMSide[i] = f.makerSide === 'BUY' ? SIDE_BUY : SIDE_SELL;
        colSize[i] = f.size;
        colTUsdc[i] = f.takerUsdc;
        colMUsdc[i] = f.makerUsdc;
        if (i % 997 === 0) sample.push(f);
      }
    });
  }
  for (let m = 0; m < MARKETS; m += RESOLVED_EVERY) {
    const s = ++seq;
    posProjection.apply({ type: 'resolve', seq: s, ts: tsOf(s), conditionId: cidOf(m), winningOutcome: (m / RESOLVED_EVERY) % 2 === 0 ? 0 : 1, tokenIds: [tokenOf(m, 0), tokenOf(m, 1)] } as JournalEvent);
  }
  phase('fills written, positions projected');

  // ---- trade views, each range in key order ----
  /** Fill slots grouped by `group(i)` (counting sort), each group in seq order. */
  const bucket = (groups: number, entries: number, groupOf: (e: number) => number): { start: Int32Array; slots: Int32Array } => {
    const start = new Int32Array(groups + 1);
    for (let e = 0; e < entries; e++) start[groupOf(e) + 1]++;
    for (let g = 0; g < groups; g++) start[g + 1] += start[g];
    const fillAt = start.slice(0, groups);
    const slots = new Int32Array(entries);
    for (let e = 0; e < entries; e++) slots[fillAt[groupOf(e)]++] = e;
    return { start, slots };
  };
  const byMarket = bucket(MARKETS, FILLS, (i) => colMarket[i]);
  // Entries 0..FILLS-1 are taker rows, FILLS..2*FILLS-1 maker rows; grouped by (wallet, role).
  const walletRole = bucket(W * 2, 2 * FILLS, (e) => (e < FILLS ? colTaker[e] * 2 : colMaker[e - FILLS] * 2 + 1));
  const walletOrder = Array.from({ length: W }, (_, w) => w).sort((a, b) => (walletName(a) < walletName(b) ? -1 : 1));
  const seqOf = (i: number) => firstFillSeq + i;
  const entryOf = (e: number): [number, number, number, number] =>
    e < FILLS ? [e, colTSide[e], colSize[e], colTUsdc[e]] : [e - FILLS, colMSide[e - FILLS], colSize[e - FILLS], colMUsdc[e - FILLS]];
  store.root.transactionSync(() => {
    // db `views` in key order: 'wmkt' < 'wpos' < 'wtr-a' < 'wtr-m' < 'wtr-w'.
    for (const { key, value } of [...positions.m.values()].sort((x, y) => compareKeys(x.key, y.key))) store.views.putSync(key, value);
    for (const role of [TAKER_ROLE, MAKER_ROLE]) {
      for (let i = 0; i < FILLS; i++) {
        const [, side, size, usdc] = entryOf(role === TAKER_ROLE ? i : i + FILLS);
        store.views.putSync(walletViewKeys.tradeAll(role, seqOf(i)), [side, size, usdc] satisfies TradeEntry);
      }
    }
    for (let m = 0; m < MARKETS; m++) {
      for (const role of [TAKER_ROLE, MAKER_ROLE]) {
        for (let k = byMarket.start[m]; k < byMarket.start[m + 1]; k++) {
          const [i, side, size, usdc] = entryOf(byMarket.slots[k] + (role === TAKER_ROLE ? 0 : FILLS));
          store.views.putSync(walletViewKeys.tradeByMarket(cidOf(m), role, seqOf(i)), [side, size, usdc] satisfies TradeEntry);
        }
      }
    }
    for (const w of walletOrder) {
      for (const role of [TAKER_ROLE, MAKER_ROLE]) {
        const g = w * 2 + role;
        for (let k = walletRole.start[g]; k < walletRole.start[g + 1]; k++) {
          const [i, side, size, usdc] = entryOf(walletRole.slots[k]);
          store.views.putSync(walletViewKeys.tradeByWallet(walletName(w), role, seqOf(i)), [side, size, usdc, cidOf(colMarket[i])] satisfies TradeEntry);
        }
      }
    }
    store.meta.putSync(metaKeys.journalSeq, seq);
    store.meta.putSync(metaKeys.projectionCursor(POSITIONS_PROJECTION), seq);
    store.meta.putSync(metaKeys.projectionCursor(TRADES_PROJECTION), seq);
  });
  phase('trade views written');

  // The trade views must be exactly what WalletTradesProjection writes: replay a sample through it.
  const replay = new MapWriter();
  const trades = new WalletTradesProjection(replay);
  for (const f of sample) trades.apply(f);
  for (const { key, value } of replay.m.values()) {
    check(JSON.stringify(store.views.get(key)) === JSON.stringify(value), `trade view ${JSON.stringify(key)} as the projection writes it`);
  }
  return { dir, store, sHeld, sTakerSeqs, buildMs: Date.now() - started };
}

function fillOf(
  seq: number, ts: number, m: number, size: number, takerOutcome: 0 | 1, takerWallet: string, makerWallet: string,
  takerSide: 'BUY' | 'SELL', makerSide: 'BUY' | 'SELL', takerPricePips: number, makerPricePips: number, kind: 'TRANSFER' | 'MINT', makerOutcome: 0 | 1 = takerOutcome,
): FillEvent {
  const f: FillEvent = {
    type: 'fill', seq, ts, tradeId: tradeIdOf(TRADE_ID_PREFIX, seq), txHash: '', conditionId: cidOf(m), kind, size,
    takerOrderId: '0x' + seq.toString(16).padStart(64, '0'), makerOrderId: '0x' + (seq + 1e9).toString(16).padStart(64, '0'),
    takerWallet, makerWallet, takerOwner: 'bench', makerOwner: 'bench',
    takerTokenId: tokenOf(m, takerOutcome), makerTokenId: tokenOf(m, makerOutcome), takerOutcome, makerOutcome, takerSide, makerSide,
    takerPricePips, makerPricePips, takerUsdc: (size * takerPricePips) / 10_000, makerUsdc: (size * makerPricePips) / 10_000,
    takerFee: 0, makerFee: 0, makerRemaining: 0, builder: '0x' + '0'.repeat(64),
  };
  return f;
}

/** The engine's price surface as the wallet routes use it, with its publication events. */
export interface PriceStandIn extends LivePrices {
  onChanged(listener: (tokenIds: readonly string[]) => void): void;
  /** Republishes `count` random books, each mid moved by one tick, and notifies as the committed books do. */
  churn(count: number): void;
}

/** Published books for every token, as the shards serialize them (bids ascending, asks descending). */
export function livePrices(): PriceStandIn {
  const rand = rng(11);
  const books = new Map<string, { version: number; json: string }>();
  const mids = new Map<string, number>();
  const last = new Map<string, { pricePips: number }>();
  const listeners: ((tokenIds: readonly string[]) => void)[] = [];
  const publish = (m: number, o: number, mid: number, version: number) => {
    const tokenId = tokenOf(m, o);
    const half = m % 50 === 0 ? 800 : 100;
    const level = (p: number) => ({ price: String(p / 10_000), size: String(10 + Math.floor(rand() * 500)) });
    const bids = [4, 3, 2, 1, 0].map((k) => level(Math.max(100, mid - half - k * 100)));
    const asks = [4, 3, 2, 1, 0].map((k) => level(Math.min(9900, mid + half + k * 100)));
    books.set(tokenId, {
      version,
      json: JSON.stringify({ market: cidOf(m), asset_id: tokenId, timestamp: '1767225600', hash: '0'.repeat(40), bids, asks, min_order_size: '1', tick_size: '0.01', neg_risk: false, last_trade_price: String(mid / 10_000) }),
    });
    mids.set(tokenId, mid);
  };
  for (let m = 0; m < MARKETS; m++) {
    for (const o of [0, 1]) {
      const mid = 1000 + Math.floor(rand() * 80) * 100;
      publish(m, o, mid, 1);
      last.set(tokenOf(m, o), { pricePips: mid });
    }
  }
  return {
    bookSnapshot: (t) => books.get(t),
    lastTradePrice: (t) => last.get(t),
    onChanged: (l) => void listeners.push(l),
    churn(count) {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const m = Math.floor(rand() * MARKETS);
        const o = Math.floor(rand() * 2);
        const t = tokenOf(m, o);
        const mid = Math.min(8900, Math.max(1100, mids.get(t)! + (rand() < 0.5 ? -100 : 100)));
        publish(m, o, mid, books.get(t)!.version + 1);
        ids.push(t);
      }
      for (const l of listeners) l(ids);
    },
  };
}

/** The context the wallet routes read (no engine: see the header). */
function contextFor(store: Store, prices: PriceStandIn): AppContext {
  const config = testConfig({ dataDir: '/nonexistent', rateLimits: { enabled: false }, demo: false });
  const ctx = {
    config,
    store,
    log: silentLogger,
    clock: systemClock,
    metrics: new Metrics(false),
    views: new ViewStore(store.views),
    prices: new ViewStore(store.prices),
    state: { ready: true },
    openapi: () => ({}),
    catalog: { read: new CatalogReader(store), write: new CatalogWriter(store, systemClock) },
    livePrices: prices,
  };
  // walletRoutes reads config, store, views, log, catalog and the live prices only.
  return ctx as unknown as AppContext;
}

function load(base: string, paths: readonly string[], rate: number | undefined, seconds: number): Promise<LoadResult> {
  return runAutocannonChild({ url: base, connections: CONNECTIONS, pipelining: 1, duration: seconds, paths, rate });
}

/**
 * What the server process did during a run: CPU per request, garbage-collection pauses and the longest
 * event-loop delay (the load generator runs in another process, so all of it is the server's).
 */
function serverSide(): { stop(requests: number): { cpuUsPerReq: number; gcMaxMs: number; gcTotalMs: number; loopMaxMs: number } } {
  const cpu0 = process.cpuUsage();
  let gcMax = 0;
  let gcTotal = 0;
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcMax = Math.max(gcMax, e.duration);
      gcTotal += e.duration;
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  return {
    stop(requests) {
      const cpu = process.cpuUsage(cpu0);
      gc.disconnect();
      loop.disable();
      const ms = (x: number) => Math.round(x * 10) / 10;
      return { cpuUsPerReq: Math.round((cpu.user + cpu.system) / Math.max(1, requests)), gcMaxMs: ms(gcMax), gcTotalMs: ms(gcTotal), loopMaxMs: ms(loop.max / 1e6) };
    },
  };
}

function positionPaths(): string[] {
  const out: string[] = [];
  for (const sortBy of POSITION_SORTS) {
    for (const dir of ['DESC', 'ASC']) {
      for (const offset of [0, 100, 1000, 4000]) out.push(`/positions?user=${S}&sortBy=${sortBy}&sortDirection=${dir}&offset=${offset}&limit=100`);
    }
  }
  return out;
}

function tradePaths(): string[] {
  const rand = rng(5);
  const out: string[] = [];
  for (let i = 0; i < 8; i++) {
    const m = Math.floor(rand() * MARKETS);
    const three = [m, (m + 17) % MARKETS, (m + 331) % MARKETS].map(cidOf).join(',');
    out.push(
      `/trades?user=${S}&limit=100`,
      `/trades?user=${S}&takerOnly=false&side=BUY&limit=100&offset=${i * 125}`,
      `/trades?market=${cidOf(m)}&limit=100`,
      `/trades?market=${three}&filterType=CASH&filterAmount=5&limit=100`,
      `/trades?side=SELL&filterType=TOKENS&filterAmount=20&limit=100`,
      `/trades?limit=100&offset=1000`,
      `/trades?user=${walletOf(Math.floor(rand() * OTHER_WALLETS))}&takerOnly=false&limit=100`,
    );
  }
  return out;
}

/** 2,000 distinct pages (200,000 rows, twice the rendered-row cache): every render is a cold one. */
function coldTradePaths(): string[] {
  const rand = rng(9);
  const out: string[] = [];
  for (let i = 0; i < 2_000; i++) {
    const m = Math.floor(rand() * MARKETS);
    if (i % 2 === 0) out.push(`/trades?market=${cidOf(m)}&takerOnly=false&limit=100`);
    else out.push(`/trades?user=${walletOf(Math.floor(rand() * OTHER_WALLETS))}&takerOnly=false&limit=100&offset=${Math.floor(rand() * 4) * 100}`);
  }
  return out;
}

export default async function run(): Promise<void> {
  if (selected('apply')) for (const mode of ['paced', 'flood'] as const) await applyCost(mode);
  if (ONLY?.length === 1 && ONLY[0] === 'apply') return;
  const data = await buildDataset();
  const heap = collectGarbage();
  console.log(
    `built: ${FILLS.toLocaleString('en')} fills, ${MARKETS.toLocaleString('en')} markets in ${(data.buildMs / 1000).toFixed(1)} s; ` +
      `heap ${heap.before} MB -> ${heap.after} MB after a full collection`,
  );
  try {
    await measure(data);
  } finally {
    await data.store.close();
    rmSync(data.dir, { recursive: true, force: true });
  }
}

/**
 * A full garbage collection, so that the build's garbage is not collected inside a timed run (the server
 * shares this process): V8 would otherwise mark and compact it whenever the heap next grew, pausing the
 * server for milliseconds at a time.
 */
function collectGarbage(): { before: number; after: number } {
  const mb = () => Math.round(process.memoryUsage().heapUsed / 2 ** 20);
  const before = mb();
  v8.setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return { before, after: mb() };
}

/**
 * BENCH_WALLETS_ONLY=<substring>[,<substring>...]: time only the workloads whose name contains one of them
 * (the self-checks still run); `apply` runs the projection apply cost alone.
 */
const ONLY = process.env.BENCH_WALLETS_ONLY?.split(',');
const selected = (name: string) => ONLY === undefined || ONLY.some((part) => name.includes(part));

/**
 * What the wallet projections cost the trading path: the projector applies every committed fill on the
 * main thread (Projector.onCommitted, in the turn the engine acknowledges it). Fills among 2,000 wallets
 * and 1,000 markets, in batches of 50 as the engine's group commit hands them over, the first fifth a
 * warm-up, in two modes: `paced`, each batch's view writes committed before the next batch (LMDB keeps
 * up; the overlay stays small), and `flood`, one event-loop turn per batch (LMDB's commits fall behind,
 * so the overlay holds tens of thousands of queued writes). Prints main-thread time and process CPU
 * (LMDB's write thread included) per fill, and checks that every queued write left the overlay and that
 * the positions add up.
 */
export async function applyCost(mode: 'paced' | 'flood', fills = 100_000, batch = 50): Promise<{ mainUsPerFill: number; cpuUsPerFill: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'pm-bench-wallets-apply-'));
  const store = openStore({ dataDir: dir });
  try {
    const views = new ViewStore(store.views);
    const projector = new Projector(store, walletProjections(views), silentLogger);
    const rand = rng(3);
    const int = (n: number) => Math.floor(rand() * n);
    const markets = 1_000;
    let seq = 0;
    projector.onCommitted(
      Array.from({ length: markets }, (_, m): JournalEvent => ({
        type: 'market', seq: ++seq, ts: T0, conditionId: cidOf(m), marketId: m + 1, tokenIds: [tokenOf(m, 0), tokenOf(m, 1)],
        tickPips: 100, minSizeUnits: U, makerFeeBps: 0, takerFeeBps: 0, acceptingOrders: true, negRisk: false,
      })),
    );
    const events: FillEvent[] = [];
    for (let i = 0; i < fills; i++) {
      const m = int(markets);
      const o = int(2) as 0 | 1;
      const side = int(2) === 0 ? 'BUY' : 'SELL';
      const s = ++seq;
      events.push(fillOf(s, T0 + s, m, (1 + int(50)) * U, o, walletOf(int(OTHER_WALLETS)), walletOf(int(OTHER_WALLETS)), side, side === 'BUY' ? 'SELL' : 'BUY', 100 + int(98) * 100, 100 + int(98) * 100, 'TRANSFER'));
    }
    const warm = Math.floor(fills / 5 / batch) * batch;
    let main = 0;
    let cpu0 = process.cpuUsage();
    for (let i = 0; i < fills; i += batch) {
      if (i === warm) {
        await store.views.flushed;
        main = 0;
        cpu0 = process.cpuUsage();
      }
      const slice = events.slice(i, i + batch);
      const t = performance.now();
      projector.onCommitted(slice);
      main += performance.now() - t;
      if (mode === 'paced') await store.views.flushed;
      else await new Promise((done) => setImmediate(done));
    }
    await store.views.flushed;
    await new Promise((done) => setImmediate(done));
    const cpu = process.cpuUsage(cpu0);
    const timed = fills - warm;
    check(views.queued === 0, `every queued view write settled (${views.queued} left)`);
    check(projector.cursor(POSITIONS_PROJECTION) === seq && projector.cursor(TRADES_PROJECTION) === seq, 'both projections applied every fill');
    // Every fill adds its size to one BUY party's lifetime bought.
    let bought = 0;
    for (const { value } of store.views.getRange(prefixRange(['wpos']))) bought += (value as PositionState).bought;
    check(bought === events.reduce((sum, f) => sum + f.size, 0), 'lifetime bought over all positions equals the fills bought');
    const out = { mainUsPerFill: Math.round((main * 1000 * 100) / timed) / 100, cpuUsPerFill: Math.round(((cpu.user + cpu.system) * 100) / timed) / 100 };
    console.log(
      `projection apply cost, ${mode}: ${out.mainUsPerFill} us main thread, ${out.cpuUsPerFill} us process CPU per fill (${timed.toLocaleString('en')} fills in batches of ${batch})`,
    );
    return out;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Serves `data` over loopback, checks it and times every workload (exported to re-time a kept dataset). */
export async function measure(data: Dataset): Promise<void> {
  const { store } = data;
  const prices = livePrices();
  const ctx = contextFor(store, prices);
  // The floor of the environment: the same bytes as a real 100-row page of each endpoint, precomputed,
  // through the same edge (group `ops`: no validation, no reads). Filled in once the store is checked.
  const baselines = { positions: '[]', trades: '[]' };
  const baselineRoutes = (['positions', 'trades'] as const).map((which) =>
    route({ method: 'GET', path: `/bench/baseline-${which}`, group: 'ops', summary: 'bench floor', handler: () => reply({ raw: baselines[which] }) }),
  );
  const server = await startServer({
    routes: [...walletRoutes(ctx), ...baselineRoutes],
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: 1024 * 1024,
    maxHeaderBytes: 16384,
    trustedProxies: [],
    adminToken: '',
    limiter: new RateLimiter({ enabled: false, maxCallers: 1000, buckets: {} }),
    metrics: ctx.metrics,
    log: silentLogger,
    clock: systemClock,
  });
  const base = `http://127.0.0.1:${server.port}`;
  try {
    await selfCheck(base, data);
    baselines.positions = await (await fetch(`${base}/positions?user=${S}&limit=100`)).text();
    baselines.trades = await (await fetch(`${base}/trades?user=${S}&limit=100`)).text();
    const rows: string[] = [];
    const verdicts: string[] = [];
    const kb = (text: string) => `${Math.round(Buffer.byteLength(text) / 1024)} KB`;
    for (const [name, paths, variant] of [
      [`baseline: a precomputed ${kb(baselines.positions)} positions page`, ['/bench/baseline-positions'], 'baseline'],
      ['GET /positions sorted pages (5,000 positions)', positionPaths(), 'target'],
      [`baseline: a precomputed ${kb(baselines.trades)} trades page`, ['/bench/baseline-trades'], 'baseline'],
      ['GET /trades filtered pages (1,000,000 trades)', tradePaths(), 'target'],
      [`GET /positions, ${CHURN_BOOKS} books republished every ${CHURN_MS} ms`, positionPaths(), 'churn'],
      ['GET /trades, 2,000 distinct pages (cold renders)', coldTradePaths(), 'cold'],
    ] as const) {
      if (!selected(name)) continue;
      const churn = variant === 'churn';
      // Warm-up (not timed): every path once, so each sort order and each page is computed before timing.
      if (variant !== 'cold') for (const path of paths) check((await fetch(base + path)).status === 200, `warm-up ${path}`);
      const timer = churn ? setInterval(() => prices.churn(CHURN_BOOKS), CHURN_MS) : undefined;
      const windows: Array<{ steady: OpenLoopResult; seen: ReturnType<ReturnType<typeof serverSide>['stop']> }> = [];
      for (let w = 0; w < (variant === 'target' || variant === 'baseline' ? STEADY_WINDOWS : 1); w++) {
        const side = serverSide();
        const steady = await runOpenLoopChild({ url: base, paths, rate: RATE, seconds: FIXED_SECONDS, connections: CONNECTIONS });
        windows.push({ steady, seen: side.stop(steady.ok) });
        check(steady.ok === steady.sent, `${name}: every steady request answered 200`);
      }
      const p99s = windows.map((w) => w.steady.p99);
      const { steady, seen } = [...windows].sort((a, b) => a.steady.p99 - b.steady.p99)[windows.length >> 1]!;
      const fixed = await load(base, paths, RATE, FIXED_SECONDS);
      const max = await load(base, paths, undefined, MAX_SECONDS);
      if (timer !== undefined) clearInterval(timer);
      check(
        fixed.non2xx === 0 && max.non2xx === 0 && fixed.errors === 0 && max.errors === 0,
        `${name}: every request answered 200`,
      );
      rows.push(
        `| ${name} | ${Math.round(steady.rps)} | ${steady.p50} | ${steady.p99} | ${p99s.join(', ')} | ${steady.p999} | ${steady.max} | ${seen.cpuUsPerReq} | ${seen.gcMaxMs} / ${seen.gcTotalMs} | ${seen.loopMaxMs} | ${fixed.p99} / ${fixed.raw.p99} | ${Math.round(max.rps)} | ${max.p50} | ${max.p99} |`,
      );
      if (variant === 'target') {
        const met = steady.p99 < P99_TARGET_MS && steady.rps >= RATE * 0.98;
        verdicts.push(
          `${met ? 'TARGET MET' : 'TARGET MISSED'}: ${name}: p99 ${steady.p99} ms (median of ${windows.length} windows: ${p99s.join(', ')} ms) at ` +
            `${Math.round(steady.rps)} of ${RATE} req/s (target p99 < ${P99_TARGET_MS} ms)`,
        );
      }
    }
    console.log(
      `\n| workload | req/s, steady ${RATE}/s | p50 ms | p99 ms | p99 of each window, ms | p99.9 ms | max ms | server CPU us/req | GC max / total ms | loop delay max ms | autocannon at ${RATE}/s: p99 / raw p99 ms | max req/s (unthrottled) | p50 ms | p99 ms |`,
    );
    console.log(`|---|---|---|---|---|---|---|---|---|---|---|---|---|---|`);
    for (const r of rows) console.log(r);
    console.log(
      `(${CONNECTIONS} connections. Steady: one request due every ${1000 / RATE} ms for ${FIXED_SECONDS} s (bench/lib/open-loop.ts, a child process), ` +
        `latency from each request's due time, one sample per response; targets and baselines run ${STEADY_WINDOWS} such windows and the columns show ` +
        `the window with the median p99, which is what the target is held to. autocannon: the same paths at its overallRate ` +
        `for ${FIXED_SECONDS} s (bursts at the start of each second; its p99 weighs a slow response by its length in ms) and unthrottled for ${MAX_SECONDS} s. ` +
        `Rate limits off. Server columns: this process during the steady run)`);
    for (const v of verdicts) console.log(v);
  } finally {
    await server.close(1000);
  }
}

async function selfCheck(base: string, data: Dataset): Promise<void> {
  const all: { asset: string; size: number; totalBought: number }[] = [];
  for (let offset = 0; offset < 6_000; offset += 500) {
    const page = (await (await fetch(`${base}/positions?user=${S}&limit=500&offset=${offset}&sizeThreshold=0&sortBy=TITLE&sortDirection=ASC`)).json()) as typeof all;
    all.push(...page);
  }
  check(all.length === MARKETS, `S has ${MARKETS} positions (got ${all.length})`);
  for (const p of all) {
    const m = Number.parseInt(p.asset.split(':')[0].slice(-8), 16);
    const h = data.sHeld[m];
    check(p.asset.endsWith(`:${h.outcome}`) && Math.round(p.size * U) === h.size && Math.round(p.totalBought * U) === h.bought, `position of market ${m}`);
  }
  const taker = (await (await fetch(`${base}/trades?user=${S}&limit=300`)).json()) as { transactionHash: string; proxyWallet: string }[];
  const want = data.sTakerSeqs.slice(-300).reverse();
  check(taker.length === 300 && taker.every((t) => t.proxyWallet === S), 'user=S lists S\'s taker rows');
  // Trade hashes are digests of the fill: compare by reading the same fills back.
  const reader = new WalletDataReader({ store: data.store, views: new ViewStore(data.store.views), catalog: new CatalogReader(data.store) });
  const direct = reader.trades({ limit: 300, offset: 0, takerOnly: true, user: S });
  check(direct.map((t) => t.transactionHash).join() === taker.map((t) => t.transactionHash).join(), 'HTTP and reader agree');
  const fills = want.map((seq) => readFill(data.store.fills, seq)!);
  check(fills.every((f, i) => f.txHash === taker[i].transactionHash), 'user=S: the newest 300 taker fills, newest first');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
