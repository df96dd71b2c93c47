/**
 * MarketDataReader against a stand-in engine (snapshots as the shards publish them) and a real LMDB
 * store: quotes and midpoints on empty, one-sided and two-sided books, the top-of-book cache per
 * snapshot version, the display price rule, history windows (interval, range, defaults, bad
 * combinations), bucketing by fidelity, builder-trade filters and paging, and the market look-ups of
 * the platform client (by token, by condition id) with the fee curve checked against the platform
 * client's own balance sizing and the engine's reservation.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FillEvent, OrderRecord, OrderSignedParts } from '../../src/domain/events.ts';
import { encodeFillRecord } from '../../src/journal/codecs/fill-codec.ts';
import { isApiError } from '../../src/domain/errors.ts';
import { decodeCursor } from '../../src/domain/cursor.ts';
import { openStore, type Store } from '../../src/journal/env.ts';
import { priceKey } from '../../src/journal/keys.ts';
import { putOrderRecord } from '../../src/journal/orders.ts';
import { BuilderTradesProjection, MarketDataStore } from '../../src/projections/market-data.ts';
import { MAX_HISTORY_POINTS, MarketDataReader, feeCurveOf, type BookSource, type HistoryParams } from '../../src/queries/market-data.ts';
import { buyNeed } from '../../src/engine/ledger/fees.ts';
import { adjustBuyAmountForFees } from '@polymarket/clob-client-v2';

const CID = '0x' + 'c'.repeat(64);
const YES = '101';
const NO = '102';
const T = 1_000_000;

type Lv = [price: string, size: string];

class FakeBooks implements BookSource {
  snaps = new Map<string, { version: number; json: string }>();
  last = new Map<string, { pricePips: number; side: 'BUY' | 'SELL' }>();
  refreshed: string[] = [];
  /** Tokens whose market changed after their snapshot (the engine's RESULT-count comparison). */
  stale = new Set<string>();
  /** What the next refresh publishes per token; by default the current book again (or an empty one). */
  next = new Map<string, [Lv[], Lv[]]>();
  /** The market's trading parameters as the engine holds them. */
  params = { tickPips: 100, minSizeUnits: 5 * T, makerFeeBps: 0, takerFeeBps: 25, negRisk: false, acceptingOrders: true, resolved: -1 };
  tokenOutcome(t: string) {
    return t === YES ? { conditionId: CID, outcome: 0 as const } : t === NO ? { conditionId: CID, outcome: 1 as const } : undefined;
  }
  market(cid: string) {
    return cid === CID ? { ...this.params, tokenIds: [YES, NO] as const } : undefined;
  }
  bookSnapshot(t: string) {
    return this.snaps.get(t);
  }
  lastTradePrice(t: string) {
    return this.last.get(t);
  }
  snapshotStale(t: string): boolean {
    return this.stale.has(t);
  }
  /** Like the engine: the shard publishes a little later, and the answer comes with the publication. */
  refreshSnapshot(cid: string): Promise<void> {
    this.refreshed.push(cid);
    return new Promise((resolve) =>
      setTimeout(() => {
        for (const t of [YES, NO]) {
          const [bids, asks] = this.next.get(t) ?? [[], []];
          this.set(t, bids, asks);
          this.stale.delete(t);
        }
        resolve();
      }, 20),
    );
  }
  /** Bids ascending, asks descending, as the shards publish them. */
  set(token: string, bids: Lv[], asks: Lv[], version?: number): void {
    const v = version ?? (this.snaps.get(token)?.version ?? 0) + 1;
    const lv = (l: Lv[]) => l.map(([price, size]) => ({ price, size }));
    this.snaps.set(token, { version: v, json: JSON.stringify({ market: CID, asset_id: token, bids: lv(bids), asks: lv(asks) }) });
  }
}

function freshStore(): Store {
  return openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-mdq-')), mapSize: 256 * 1024 ** 2 });
}

function rejects400(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (e: unknown) => isApiError(e) && e.spec.status === 400 && message.test(e.message));
}

test('quotes, midpoint and display price on empty, one-sided and two-sided books', async () => {
  const store = freshStore();
  const books = new FakeBooks();
  const r = new MarketDataReader(books, new MarketDataStore(store));
  const cases: { name: string; bids: Lv[]; asks: Lv[]; last?: number; quote: [string, string]; mid: string; display: number | undefined }[] = [
    { name: 'empty book', bids: [], asks: [], quote: ['', ''], mid: '', display: undefined },
    { name: 'empty book, traded', bids: [], asks: [], last: 4200, quote: ['', ''], mid: '', display: 0.42 },
    { name: 'bids only', bids: [['0.3', '1'], ['0.45', '2']], asks: [], quote: ['0.45', ''], mid: '', display: undefined },
    { name: 'asks only', bids: [], asks: [['0.7', '1'], ['0.55', '2']], quote: ['', '0.55'], mid: '', display: undefined },
    { name: 'two-sided', bids: [['0.4', '1'], ['0.45', '2']], asks: [['0.6', '1'], ['0.55', '3']], last: 3000, quote: ['0.45', '0.55'], mid: '0.5', display: 0.5 },
    { name: 'half-pip midpoint', bids: [['0.5', '1']], asks: [['0.5001', '1']], quote: ['0.5', '0.5001'], mid: '0.50005', display: 0.50005 },
    { name: 'wide spread uses the last trade', bids: [['0.2', '1']], asks: [['0.8', '1']], last: 6100, quote: ['0.2', '0.8'], mid: '0.5', display: 0.61 },
    { name: 'wide spread, never traded', bids: [['0.2', '1']], asks: [['0.8', '1']], quote: ['0.2', '0.8'], mid: '0.5', display: 0.5 },
  ];
  for (const c of cases) {
    books.set(YES, c.bids, c.asks);
    if (c.last !== undefined) books.last.set(YES, { pricePips: c.last, side: 'BUY' });
    else books.last.delete(YES);
    assert.deepEqual(r.quote(YES), { BUY: c.quote[0], SELL: c.quote[1] }, c.name);
    assert.equal(r.midpoint(YES), c.mid, c.name);
    assert.equal(r.displayPrice(YES), c.display, c.name);
  }
  assert.deepEqual(r.lastTrade(NO), { price: '', side: '' });
  books.last.set(NO, { pricePips: 3900, side: 'SELL' });
  assert.deepEqual(r.lastTrade(NO), { price: '0.39', side: 'SELL' });

  // The top of book is parsed once per snapshot version.
  books.set(YES, [['0.1', '1']], [['0.9', '1']], 50);
  assert.equal(r.quote(YES).BUY, '0.1');
  books.set(YES, [['0.2', '1']], [['0.9', '1']], 50);
  assert.equal(r.quote(YES).BUY, '0.1', 'same version: served from the cache');
  books.set(YES, [['0.2', '1']], [['0.9', '1']], 51);
  assert.equal(r.quote(YES).BUY, '0.2', 'new version: parsed again');
  await store.close();
});

test('ensureSnapshots asks the engine only for known tokens that have none yet', async () => {
  const store = freshStore();
  const books = new FakeBooks();
  const r = new MarketDataReader(books, new MarketDataStore(store));
  assert.equal(r.ensureSnapshots(['999']), undefined, 'unknown token: nothing to wait for');
  const wait = r.ensureSnapshots([YES, NO]);
  assert.ok(wait instanceof Promise);
  await wait;
  assert.ok(r.bookJson(YES) !== undefined && r.bookJson(NO) !== undefined, 'resolved once the publication is readable');
  assert.deepEqual(books.refreshed, [CID], 'one request per market');
  assert.equal(r.ensureSnapshots([YES, NO]), undefined);
  assert.equal(r.bookJson(YES) !== undefined, true);
  await store.close();
});

test('ensureSnapshots refreshes a stale snapshot and waits for it; a current one is read at once', async () => {
  const store = freshStore();
  const books = new FakeBooks();
  const r = new MarketDataReader(books, new MarketDataStore(store));
  books.set(YES, [['0.4', '10']], []);
  books.set(NO, [], [['0.6', '10']]);
  assert.equal(r.ensureSnapshots([YES]), undefined, 'current: no request');
  assert.equal(r.quote(YES).BUY, '0.4');

  // An acknowledged order that the coalesced publication has not shown yet.
  books.stale.add(YES).add(NO);
  books.next.set(YES, [[], [['0.45', '5']]]);
  const wait = r.ensureSnapshots([NO, YES]);
  assert.ok(wait instanceof Promise, 'stale: the reader must wait');
  assert.equal(r.quote(YES).BUY, '0.4', 'nothing new before the publication');
  await wait;
  assert.deepEqual(books.refreshed, [CID], 'both tokens of the market: one request');
  assert.deepEqual(JSON.parse(r.bookJson(YES) as string).asks, [{ price: '0.45', size: '5' }]);
  assert.deepEqual(r.quote(YES), { BUY: '', SELL: '0.45' }, 'the new version is parsed');
  assert.equal(r.ensureSnapshots([YES, NO]), undefined, 'current again');

  // Only the stale token's market is asked, even when listed with current ones.
  books.stale.add(NO);
  await r.ensureSnapshots([YES, NO, '999']);
  assert.deepEqual(books.refreshed, [CID, CID]);
  await store.close();
});

test('history window: intervals end now, ranges and defaults, bad combinations answer 400', async () => {
  const store = freshStore();
  const md = new MarketDataStore(store);
  const r = new MarketDataReader(new FakeBooks(), md);
  const now = 1_800_000_000;
  const first = now - 10 * 86_400;
  md.prices.put(priceKey(YES, first), 5000);
  md.prices.put(priceKey(YES, now - 100), 5100);
  md.prices.put(priceKey(NO, first - 500), 5000);

  const cases: { name: string; p: HistoryParams; tokens?: string[]; expect: { start: number; end: number; fidelity: number } }[] = [
    { name: '1h', p: { interval: '1h' }, expect: { start: now - 3600, end: now, fidelity: 1 } },
    { name: '6h', p: { interval: '6h', fidelity: 5 }, expect: { start: now - 6 * 3600, end: now, fidelity: 5 } },
    { name: '1d', p: { interval: '1d' }, expect: { start: now - 86_400, end: now, fidelity: 1 } },
    { name: '1w', p: { interval: '1w' }, expect: { start: now - 7 * 86_400, end: now, fidelity: 1 } },
    { name: '1m is a month', p: { interval: '1m' }, expect: { start: now - 30 * 86_400, end: now, fidelity: 1 } },
    { name: 'max starts at the first sample', p: { interval: 'max' }, expect: { start: first, end: now, fidelity: 1 } },
    { name: 'all = max', p: { interval: 'all' }, expect: { start: first, end: now, fidelity: 1 } },
    { name: 'max over several tokens: the earliest', p: { interval: 'max' }, tokens: [YES, NO], expect: { start: first - 500, end: now, fidelity: 1 } },
    { name: 'no parameters = max', p: {}, expect: { start: first, end: now, fidelity: 1 } },
    { name: 'no samples: an empty window at now', p: {}, tokens: ['999'], expect: { start: now, end: now, fidelity: 1 } },
    { name: 'startTs and endTs', p: { startTs: 100, endTs: 200, fidelity: 60 }, expect: { start: 100, end: 200, fidelity: 60 } },
    { name: 'startTs alone ends now', p: { startTs: now - 50 }, expect: { start: now - 50, end: now, fidelity: 1 } },
    { name: 'endTs alone starts at the first sample', p: { endTs: now - 200 }, expect: { start: first, end: now - 200, fidelity: 1 } },
    { name: 'endTs before every sample', p: { endTs: 10 }, expect: { start: 10, end: 10, fidelity: 1 } },
    { name: 'one year without fidelity widens the buckets', p: { startTs: now - 365 * 86_400, endTs: now }, expect: { start: now - 365 * 86_400, end: now, fidelity: 11 } },
  ];
  for (const c of cases) assert.deepEqual(r.historyWindow(c.tokens ?? [YES], c.p, now), c.expect, c.name);

  const bad: { p: HistoryParams; message: RegExp }[] = [
    { p: { interval: '1d', startTs: 1 }, message: /interval cannot be combined with startTs\/endTs/ },
    { p: { interval: 'max', endTs: 1 }, message: /interval cannot be combined/ },
    { p: { startTs: 200, endTs: 100 }, message: /startTs must not be after endTs$/ },
    { p: { startTs: now + 10 }, message: /startTs must not be after endTs \(default: now\)/ },
    { p: { startTs: now - 365 * 86_400, endTs: now, fidelity: 1 }, message: new RegExp(`more than ${MAX_HISTORY_POINTS}: use fidelity >= 11`) },
  ];
  for (const b of bad) rejects400(() => r.historyWindow([YES], b.p, now), b.message);
  await store.close();
});

test('history buckets: epoch-aligned buckets of `fidelity` minutes, last sample of each, empty buckets left out', async () => {
  const store = freshStore();
  const md = new MarketDataStore(store);
  const r = new MarketDataReader(new FakeBooks(), md);
  const d = 1_800_000_000 - (1_800_000_000 % 86_400); // a UTC midnight
  const samples: [number, number][] = [
    [d + 5, 5000],
    [d + 40, 5050],
    [d + 61, 5100],
    [d + 299, 5150],
    [d + 300, 5200],
    [d + 3600 + 1, 5300],
    [d + 86_400 + 7, 5400.5],
  ];
  for (const [s, p] of samples) md.prices.put(priceKey(YES, s), p);
  await store.prices.flushed;
  md.prices.put(priceKey(YES, d + 3600 + 59), 5350); // still queued: read-your-writes
  assert.equal(md.prices.pending, 1);

  const cases: { name: string; start: number; end: number; fidelity: number; expect: [number, number][] }[] = [
    { name: '1 minute', start: d, end: d + 2 * 86_400, fidelity: 1, expect: [[d, 0.505], [d + 60, 0.51], [d + 240, 0.515], [d + 300, 0.52], [d + 3600, 0.535], [d + 86_400, 0.54005]] },
    { name: '5 minutes', start: d, end: d + 2 * 86_400, fidelity: 5, expect: [[d, 0.515], [d + 300, 0.52], [d + 3600, 0.535], [d + 86_400, 0.54005]] },
    { name: '1 hour', start: d, end: d + 2 * 86_400, fidelity: 60, expect: [[d, 0.52], [d + 3600, 0.535], [d + 86_400, 0.54005]] },
    { name: '1 day', start: d, end: d + 2 * 86_400, fidelity: 1440, expect: [[d, 0.535], [d + 86_400, 0.54005]] },
    { name: 'window bounds are inclusive', start: d + 40, end: d + 300, fidelity: 1, expect: [[d, 0.505], [d + 60, 0.51], [d + 240, 0.515], [d + 300, 0.52]] },
    { name: 'a window inside a bucket', start: d + 41, end: d + 298, fidelity: 60, expect: [[d, 0.51]] },
    { name: 'nothing recorded', start: d + 400, end: d + 3000, fidelity: 1, expect: [] },
  ];
  for (const c of cases) {
    const got = r.history(YES, { start: c.start, end: c.end, fidelity: c.fidelity });
    assert.deepEqual(got, c.expect.map(([t, p]) => ({ t, p })), c.name);
  }
  assert.deepEqual(r.history(NO, { start: d, end: d + 86_400, fidelity: 1 }), [], 'another token has its own series');
  await store.prices.flushed;
  await store.close();
});

test('history equals a naive bucketing for dense, sparse and queued samples (seeded, random windows and fidelities)', async () => {
  const store = freshStore();
  const md = new MarketDataStore(store);
  const r = new MarketDataReader(new FakeBooks(), md);
  let seed = 20251121;
  const rnd = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
  const t0 = 1_800_000_000 - (1_800_000_000 % 86_400);
  const all = new Map<number, number>();
  // Bursts of dense samples (every 1-20 s) separated by quiet stretches, over three days.
  for (let t = t0; t < t0 + 3 * 86_400; ) {
    const dense = rnd(3) === 0;
    const until = t + 600 + rnd(4 * 3600);
    for (; t < until; t += dense ? 1 + rnd(20) : 60 + rnd(1800)) all.set(t, 1000 + rnd(8000));
    t += rnd(6 * 3600);
  }
  for (const [t, p] of all) md.prices.put(priceKey(YES, t), p);
  await store.prices.flushed;
  // Queued writes: new seconds and overwrites, some inside dense buckets the reader skips over.
  const keys = [...all.keys()];
  for (let i = 0; i < 40; i++) {
    const t = rnd(2) === 0 ? keys[rnd(keys.length)] : t0 + rnd(3 * 86_400);
    const p = 1000 + rnd(8000);
    all.set(t, p);
    md.prices.put(priceKey(YES, t), p);
  }
  assert.ok(md.prices.pending > 0);
  const naive = (start: number, end: number, fidelity: number) => {
    const w = fidelity * 60;
    const out: { t: number; p: number }[] = [];
    for (const t of [...all.keys()].sort((a, b) => a - b)) {
      if (t < start || t > end) continue;
      const b = t - (t % w);
      if (out.length > 0 && out[out.length - 1].t === b) out[out.length - 1].p = all.get(t)! / 10_000;
      else out.push({ t: b, p: all.get(t)! / 10_000 });
    }
    return out;
  };
  for (let i = 0; i < 60; i++) {
    const start = t0 - 3600 + rnd(3 * 86_400);
    const end = start + rnd(2 * 86_400);
    const fidelity = [1, 2, 5, 15, 60, 180, 1440][rnd(7)];
    assert.deepEqual(r.history(YES, { start, end, fidelity }), naive(start, end, fidelity), `window ${start}..${end} at ${fidelity}`);
  }
  await store.prices.flushed;
  await store.close();
});

test('builder trades: every filter, strict before/after in seconds, trade id, outcome labels, cursor walk', async () => {
  const store = freshStore();
  const md = new MarketDataStore(store);
  const r = new MarketDataReader(new FakeBooks(), md, (cid) => (cid === CID ? ['Up', 'Down'] : undefined));
  const B1 = '0x' + 'b1'.repeat(32);
  const B2 = '0x' + 'b2'.repeat(32);
  const W1 = '0x' + '1'.repeat(40);
  const W2 = '0x' + '2'.repeat(40);
  const OTHER = '0x' + 'd'.repeat(64);
  const hex = (n: number) => '0x' + n.toString(16).padStart(64, '0');
  const t0 = 1_800_000_000_000;
  const orders = [hex(1), hex(2), hex(3), hex(4)];
  for (const [i, id] of orders.entries()) {
    const rec = { orderId: id, seq: 9000 + i, makerFeeBps: i, takerFeeBps: 10 + i, status: 'LIVE', sizeMatched: 0, tradeIds: [], fillSeqs: [], createdAt: 0, updatedAt: 0 } as unknown as OrderRecord & OrderSignedParts;
    void putOrderRecord(store, rec);
  }
  await store.orders.flushed;

  // 12 fills, one per second: builder, taker wallet, market and token vary with i.
  const fills: FillEvent[] = [];
  for (let i = 0; i < 12; i++) {
    const yes = i % 3 !== 2;
    fills.push({
      type: 'fill', seq: 100 + i, ts: t0 + i * 1000 + 500, tradeId: hex(5000 + i), txHash: hex(6000 + i),
      conditionId: i < 10 ? CID : OTHER, kind: 'TRANSFER', size: (i + 1) * T, takerOrderId: orders[i % 2], makerOrderId: orders[2 + (i % 2)],
      takerWallet: i % 4 === 0 ? W2 : W1, makerWallet: '0x' + '9'.repeat(40), takerOwner: 'tk', makerOwner: 'mk',
      takerTokenId: yes ? YES : NO, makerTokenId: yes ? YES : NO, takerOutcome: yes ? 0 : 1, makerOutcome: yes ? 0 : 1,
      takerSide: 'BUY', makerSide: 'SELL', takerPricePips: 5000 + i * 100, makerPricePips: 5000 + i * 100,
      takerUsdc: 0, makerUsdc: 0, takerFee: 0, makerFee: 0, makerRemaining: 0, builder: i === 11 ? '0x' + '0'.repeat(64) : i % 2 === 0 ? B1 : B2,
    });
  }
  const p = new BuilderTradesProjection(md);
  for (const f of fills) {
    void store.fills.put(f.seq, encodeFillRecord(f));
    p.apply(f);
  }
  await store.fills.flushed;
  const builderFills = fills.slice(0, 11);
  const ids = (rows: { id: string }[]) => rows.map((x) => x.id);
  const expect = (pred: (f: FillEvent, i: number) => boolean) => builderFills.filter(pred).map((f) => f.tradeId);
  const sec = (i: number) => Math.floor((t0 + i * 1000 + 500) / 1000);

  const cases: { name: string; filter: Parameters<MarketDataReader['builderTrades']>[0]; expect: string[] }[] = [
    { name: 'all builder trades, oldest first', filter: {}, expect: expect(() => true) },
    { name: 'builder_code', filter: { builderCode: B1 }, expect: expect((_, i) => i % 2 === 0) },
    { name: 'market', filter: { market: OTHER }, expect: expect((_, i) => i >= 10) },
    { name: 'asset_id', filter: { assetId: NO }, expect: expect((_, i) => i % 3 === 2) },
    { name: 'maker_address (the taker wallet)', filter: { makerAddress: W2 }, expect: expect((_, i) => i % 4 === 0) },
    { name: 'after is strict', filter: { after: sec(8) }, expect: expect((_, i) => i > 8) },
    { name: 'before is strict', filter: { before: sec(2) }, expect: expect((_, i) => i < 2) },
    { name: 'after and before', filter: { after: sec(2), before: sec(6) }, expect: expect((_, i) => i > 2 && i < 6) },
    { name: 'empty time window', filter: { after: sec(5), before: sec(5) }, expect: [] },
    { name: 'combined: asset + builder + wallet', filter: { assetId: YES, builderCode: B2, makerAddress: W1 }, expect: expect((_, i) => i % 3 !== 2 && i % 2 === 1) },
    { name: 'trade id', filter: { id: fills[4].tradeId }, expect: [fills[4].tradeId] },
    { name: 'trade id with a filter it fails', filter: { id: fills[4].tradeId, builderCode: B2 }, expect: [] },
    { name: 'trade id of a non-builder fill', filter: { id: fills[11].tradeId }, expect: [] },
    { name: 'unknown builder code', filter: { builderCode: '0x' + 'ee'.repeat(32) }, expect: [] },
  ];
  for (const c of cases) {
    const page = r.builderTrades(c.filter, 0);
    assert.deepEqual(ids(page.rows), c.expect, c.name);
    assert.equal(page.next, 'LTE=', c.name);
  }

  const row = r.builderTrades({ id: fills[5].tradeId }, 0).rows[0];
  const f5 = fills[5];
  assert.deepEqual(row, {
    id: f5.tradeId, taker_order_id: f5.takerOrderId, market: CID, asset_id: NO, side: 'BUY', size: '6', fee_rate_bps: '11',
    price: '0.55', status: 'CONFIRMED', outcome: 'Down', maker_address: W1, owner: 'tk', transaction_hash: f5.txHash,
    match_time: new Date(f5.ts).toISOString(), last_update: new Date(f5.ts).toISOString(), bucket_index: 2, type: 'TAKER',
    maker_orders: [{ order_id: f5.makerOrderId, maker_address: '0x' + '9'.repeat(40), owner: 'mk', matched_amount: '6', fee_rate_bps: '3', price: '0.55', asset_id: NO, outcome: 'Down', side: 'SELL' }],
  });
  assert.equal(r.builderTrades({ market: OTHER }, 0).rows[0].outcome, 'Yes', 'a market the catalog does not describe: Yes/No');

  // Cursor walk with 4 rows per page over the 6 B1 trades... and over everything.
  for (const [filter, all] of [[{ builderCode: B1 }, expect((_, i) => i % 2 === 0)], [{}, expect(() => true)]] as const) {
    const seen: string[] = [];
    let offset = 0;
    for (let pages = 0; ; pages++) {
      assert.ok(pages < 10);
      const page = r.builderTrades(filter, offset, 4);
      seen.push(...ids(page.rows));
      if (page.next === 'LTE=') break;
      const next = decodeCursor(page.next);
      assert.equal(typeof next, 'number');
      assert.equal(page.rows.length, 4);
      offset = next as number;
    }
    assert.deepEqual(seen, all);
  }
  assert.deepEqual(r.builderTrades({}, 11, 4), { rows: [], next: 'LTE=' }, 'past the end');
  await store.close();
});

test('market look-ups: by token from either outcome, by condition id with catalog labels, fees and trading state', () => {
  const store = freshStore();
  const books = new FakeBooks();
  const labelled = new MarketDataReader(books, new MarketDataStore(store), (cid) => (cid === CID ? ['Up', 'Down'] : undefined));
  const bare = new MarketDataReader(books, new MarketDataStore(store));

  const byToken = { condition_id: CID, primary_token_id: YES, secondary_token_id: NO };
  assert.deepEqual(labelled.marketByToken(YES), byToken);
  assert.deepEqual(labelled.marketByToken(NO), byToken, 'the same answer from the other outcome');
  assert.equal(labelled.marketByToken('103'), undefined);

  assert.deepEqual(labelled.clobMarket(CID), {
    c: CID,
    t: [{ t: YES, o: 'Up' }, { t: NO, o: 'Down' }],
    mts: 0.01,
    nr: false,
    mos: 5,
    mbf: 0,
    tbf: 25,
    fd: { r: 0.00125, e: 0, to: true },
    ao: true,
  });
  assert.deepEqual(bare.clobMarket(CID)?.t, [{ t: YES, o: 'Yes' }, { t: NO, o: 'No' }], 'a market the catalog does not describe: Yes/No');
  assert.equal(labelled.clobMarket('0x' + 'd'.repeat(64)), undefined);

  const cases: { name: string; params: Partial<FakeBooks['params']>; expect: Record<string, unknown> }[] = [
    { name: 'tick 0.0001, odd minimum size', params: { tickPips: 1, minSizeUnits: 2_510_000 }, expect: { mts: 0.0001, mos: 2.51 } },
    { name: 'tick 0.1', params: { tickPips: 1000 }, expect: { mts: 0.1 } },
    { name: 'neg risk', params: { negRisk: true }, expect: { nr: true } },
    { name: 'makers pay too', params: { makerFeeBps: 10, takerFeeBps: 30 }, expect: { mbf: 10, tbf: 30, fd: { r: 0.0015, e: 0, to: false } } },
    { name: 'no fees', params: { takerFeeBps: 0 }, expect: { tbf: 0, fd: { r: 0, e: 0, to: true } } },
    { name: 'not accepting orders', params: { acceptingOrders: false }, expect: { ao: false } },
    { name: 'resolved', params: { resolved: 1 }, expect: { ao: false } },
  ];
  const base = { ...books.params };
  for (const c of cases) {
    books.params = { ...base, ...c.params };
    const got = labelled.clobMarket(CID) as unknown as Record<string, unknown>;
    for (const [k, v] of Object.entries(c.expect)) assert.deepEqual(got[k], v, `${c.name}: ${k}`);
    // The client keys its rounding table by String(mts): it must be the tick size's own decimal form.
    assert.equal(String(got.mts), ['0.1', '0.01', '0.001', '0.0001'].find((t) => Math.round(Number(t) * 10_000) === books.params.tickPips), c.name);
  }
  books.params = base;
});

test('fee curve: the client sizes a whole-balance market BUY that the engine never refuses for its fee', () => {
  // The client (adjustBuyAmountForFees, with the curve of /clob-markets) shrinks the amount until amount +
  // fee fits the balance; the engine reserves buyNeed for a FOK/FAK BUY at the order's worst price.
  const balances = [1, 7.77, 100, 12_345.67];
  for (const bps of [1, 25, 150, 999, 10_000]) {
    const { r, e } = feeCurveOf(bps, 0);
    for (let pips = 100; pips <= 9900; pips += 100) {
      const p = pips / 10_000;
      for (const balance of balances) {
        const amount = adjustBuyAmountForFees(balance, p, balance, r, e, 0);
        // The client's own rounding: USDC to 2 decimals; the engine's size: whole lots of 0.01 token.
        const budget = Math.floor(amount * 100) * 10_000;
        const size = Math.floor(budget / pips) * 100;
        const need = buyNeed(false, pips, size, budget, bps);
        assert.ok(need <= Math.round(balance * 1_000_000), `bps ${bps}, p ${p}, balance ${balance}: needs ${need} units`);
      }
    }
  }
  // Tight where the reservation is: at p >= 0.5 the client holds back exactly what the engine reserves.
  const { r, e } = feeCurveOf(200, 0);
  const heldBack = 100 - adjustBuyAmountForFees(100, 0.8, 100, r, e, 0);
  const reserved = (buyNeed(false, 8000, 125_000_000, 100_000_000, 200) - 100_000_000) / 1_000_000;
  assert.ok(Math.abs(heldBack - reserved) < 1e-9, `held back ${heldBack}, reserved ${reserved}`);
});
