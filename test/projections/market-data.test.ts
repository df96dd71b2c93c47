/**
 * Market-data projections without the engine: trade samples at every fill, the builder-trades index
 * (zero builder ignored, one entry per dimension, bucket index per taker order that survives a restart,
 * fee rates from the order records), the ranged read-your-writes overlay, and the midpoint sampler's rule
 * (first two-sided change of a minute at once, later ones at the next minute, never over a trade sample).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FillEvent, OrderRecord, OrderSignedParts } from '../../src/domain/events.ts';
import { openStore, type Store } from '../../src/journal/env.ts';
import { readJournal } from '../../src/journal/recovery.ts';
import { putOrderRecord } from '../../src/journal/orders.ts';
import { builderTradeKeys, priceKey, type Key } from '../../src/journal/keys.ts';
import {
  BuilderTradesProjection,
  MarketDataStore,
  MidpointSampler,
  RangeOverlay,
  TradePriceProjection,
  isZeroBuilder,
  type BuilderTradeFields,
} from '../../src/projections/market-data.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { Engine } from '../../src/engine/engine.ts';
import { Projector, ViewStore } from '../../src/projections/projector.ts';
import { buildProjections } from '../../src/projections/registry.ts';
import { MarketDataReader } from '../../src/queries/market-data.ts';
import { market, order, wallet } from '../fixtures/engine-harness.ts';

const T = 1_000_000;
const CID = '0x' + 'c'.repeat(64);
const YES = '111';
const NO = '222';
const B1 = '0x' + 'ab'.repeat(32);
const ZERO = '0x' + '0'.repeat(64);
const hex = (n: number) => '0x' + n.toString(16).padStart(64, '0');

function freshStore(): Store {
  return openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-mdproj-')), mapSize: 256 * 1024 ** 2 });
}

let seq = 0;
function fill(over: Partial<FillEvent> = {}): FillEvent {
  seq++;
  return {
    type: 'fill',
    seq,
    ts: 1_800_000_000_000 + seq * 1000,
    tradeId: hex(1000 + seq),
    txHash: hex(2000 + seq),
    conditionId: CID,
    kind: 'TRANSFER',
    size: 2 * T,
    takerOrderId: hex(1),
    makerOrderId: hex(2),
    takerWallet: '0x' + '1'.repeat(40),
    makerWallet: '0x' + '2'.repeat(40),
    takerOwner: 'taker-key',
    makerOwner: 'maker-key',
    takerTokenId: YES,
    makerTokenId: YES,
    takerOutcome: 0,
    makerOutcome: 0,
    takerSide: 'BUY',
    makerSide: 'SELL',
    takerPricePips: 5500,
    makerPricePips: 5500,
    takerUsdc: 1.1 * T,
    makerUsdc: 1.1 * T,
    takerFee: 0,
    makerFee: 0,
    makerRemaining: 0,
    builder: B1,
    ...over,
  };
}

let nextSeq = 1;
function putOrder(store: Store, orderId: string, makerFeeBps: number, takerFeeBps: number): void {
  const rec = { orderId, seq: nextSeq++, makerFeeBps, takerFeeBps, status: 'LIVE', sizeMatched: 0, tradeIds: [], fillSeqs: [], createdAt: 0, updatedAt: 0 } as unknown as OrderRecord & OrderSignedParts;
  void putOrderRecord(store, rec);
}

const keysOf = (o: RangeOverlay, start: Key, end: Key) => [...o.range(start, end)].map((e) => e.key);

test('isZeroBuilder: only absent, empty or all-zero codes attribute nothing', () => {
  for (const z of [undefined, '', '0x', ZERO, ZERO.toUpperCase().replace('0X', '0x')]) assert.equal(isZeroBuilder(z), true, String(z));
  for (const b of [B1, '0x' + '0'.repeat(63) + '1']) assert.equal(isZeroBuilder(b), false, b);
});

test('trade samples: each token a fill touched gets its own price at the fill second; later fills in a second win', async () => {
  const store = freshStore();
  const md = new MarketDataStore(store);
  const p = new TradePriceProjection(md);
  const t0 = 1_800_000_000_000;
  p.apply(fill({ ts: t0 + 100, takerPricePips: 5500, makerPricePips: 5500 }));
  p.apply(fill({ ts: t0 + 900, takerPricePips: 5600, makerPricePips: 5600 }));
  p.apply(fill({ ts: t0 + 61_000, kind: 'MINT', takerTokenId: YES, makerTokenId: NO, takerOutcome: 0, makerOutcome: 1, makerSide: 'BUY', takerPricePips: 6200, makerPricePips: 3800 }));
  p.apply({ type: 'deposit', seq: 99, ts: t0, wallet: 'w', amount: 1 });
  const sec = t0 / 1000;
  // Visible before the commit (overlay), then from LMDB.
  for (const phase of ['queued', 'committed']) {
    assert.equal(md.prices.get(priceKey(YES, sec)), 5600, phase);
    assert.equal(md.prices.get(priceKey(YES, sec + 61)), 6200, phase);
    assert.equal(md.prices.get(priceKey(NO, sec + 61)), 3800, phase);
    assert.equal(md.prices.get(priceKey(NO, sec)), undefined, `${phase}: a TRANSFER of YES is not a NO sample`);
    await store.prices.flushed;
  }
  assert.equal(md.prices.pending, 0);
  assert.deepEqual(keysOf(md.prices, priceKey(YES, 0), priceKey(YES, 1e12)), [[YES, sec], [YES, sec + 61]]);
  await store.close();
});

test('builder trades: zero builder skipped; one entry per dimension; bucket index per taker order; fee rates from the orders', async () => {
  const store = freshStore();
  const md = new MarketDataStore(store);
  const p = new BuilderTradesProjection(md);
  putOrder(store, hex(1), 10, 20);
  putOrder(store, hex(2), 5, 7);
  putOrder(store, hex(3), 1, 30);
  await store.orders.flushed;

  const plain = fill({ builder: ZERO, takerOrderId: hex(3) });
  p.apply(plain);
  assert.equal([...md.views.range(['bt-all'], ['bt-all', '\uffff'])].length, 0, 'a zero builder code is not a builder trade');

  const a = fill({ takerOrderId: hex(1), makerOrderId: hex(2) });
  const b = fill({ takerOrderId: hex(1), makerOrderId: hex(2) });
  const c = fill({ takerOrderId: hex(3), makerOrderId: hex(2), builder: B1.toUpperCase().replace('0X', '0x'), takerTokenId: NO, takerOutcome: 1 });
  for (const f of [a, b, c]) p.apply(f);

  const fields = (f: FillEvent) => md.views.get<BuilderTradeFields & { t: number; s: number }>(builderTradeKeys.byId(f.tradeId));
  assert.deepEqual(fields(a), { b: 0, tf: 20, mf: 5, t: a.ts, s: a.seq });
  assert.deepEqual(fields(b), { b: 1, tf: 20, mf: 5, t: b.ts, s: b.seq });
  assert.deepEqual(fields(c), { b: 0, tf: 30, mf: 5, t: c.ts, s: c.seq });
  assert.equal(fields(plain), undefined);

  const seqs = (dim: Parameters<typeof builderTradeKeys.range>[0], value: string) => {
    const r = builderTradeKeys.range(dim, value, 0, Number.MAX_SAFE_INTEGER);
    return [...md.views.range(r.start, r.end)].map((e) => e.key[3]);
  };
  assert.deepEqual(seqs('all', ''), [a.seq, b.seq, c.seq]);
  assert.deepEqual(seqs('builder', B1), [a.seq, b.seq, c.seq], 'builder codes are indexed lowercase');
  assert.deepEqual(seqs('market', CID), [a.seq, b.seq, c.seq]);
  assert.deepEqual(seqs('asset', YES), [a.seq, b.seq]);
  assert.deepEqual(seqs('asset', NO), [c.seq]);
  assert.deepEqual(seqs('user', a.takerWallet), [a.seq, b.seq, c.seq]);
  assert.deepEqual(seqs('user', a.makerWallet), [], "the user index is the taker's wallet (the row's maker_address)");

  // Time bounds are key ranges: [from, to).
  const r = builderTradeKeys.range('all', '', b.ts, c.ts);
  assert.deepEqual([...md.views.range(r.start, r.end)].map((e) => e.key[3]), [b.seq]);

  // A restart in the middle of an order's fills (new projection instance) keeps counting from the store.
  await store.views.flushed;
  const md2 = new MarketDataStore(store);
  const d = fill({ takerOrderId: hex(1), makerOrderId: hex(2) });
  new BuilderTradesProjection(md2).apply(d);
  assert.equal(md2.views.get<BuilderTradeFields>(builderTradeKeys.byId(d.tradeId))?.b, 2);

  assert.throws(() => p.apply(fill({ takerOrderId: hex(77) })), /has no record/, 'a fill whose order record is missing stops the projection loudly');
  await store.close();
});

test('RangeOverlay: queued writes merge into the committed range in key order, replace committed values, and are lazy', async () => {
  const store = freshStore();
  const o = new RangeOverlay(store.prices);
  for (const s of [10, 20, 30, 40]) o.put(['t', s], s);
  await store.prices.flushed;
  assert.equal(o.pending, 0);
  o.put(['t', 25], 25);
  o.put(['t', 30], 300);
  o.put(['t', 5], 5);
  o.put(['u', 1], 1);
  assert.equal(o.pending, 4);
  const got = [...o.range<number>(['t', 0], ['t', 35])];
  assert.deepEqual(got.map((e) => e.key[1]), [5, 10, 20, 25, 30]);
  assert.deepEqual(got.map((e) => e.value), [5, 10, 20, 25, 300]);
  assert.equal(o.get(['t', 30]), 300);
  assert.equal(o.get(['t', 41]), undefined);
  // Lazy: stopping after the first entry does not read the rest.
  const it = o.range(['t', 0], ['t', 100]);
  assert.deepEqual(it.next().value?.key, ['t', 5]);
  await store.prices.flushed;
  assert.equal(o.pending, 0);
  assert.deepEqual([...o.range<number>(['t', 0], ['t', 100])].map((e) => e.value), [5, 10, 20, 25, 300, 40]);
  await store.close();
});

test('midpoint sampler: first two-sided change of a minute at once, later ones at the next minute, never over a sample', async () => {
  const store = freshStore();
  const md = new MarketDataStore(store);
  let listener: (ids: readonly string[]) => void = () => undefined;
  let now = Date.UTC(2027, 0, 1, 12, 0, 5);
  const mids = new Map<string, number | undefined>([[YES, undefined]]);
  const s = new MidpointSampler({ feed: { onSnapshots: (l) => (listener = l) }, md, midpoint: (t) => mids.get(t), now: () => now, log: silentLogger });
  const at = (ms: number) => md.prices.get(priceKey(YES, Math.floor(ms / 1000)));

  listener([YES]);
  assert.equal(s.samples, 0, 'not started: publications are ignored');
  s.start();
  listener([YES]);
  assert.equal(s.samples, 0, 'one-sided book: no midpoint, nothing recorded');
  mids.set(YES, 5000);
  now += 2000;
  listener([YES]);
  assert.equal(at(now), 5000, 'the first two-sided state of the minute is recorded at once');
  mids.set(YES, 5100);
  now += 10_000;
  listener([YES]);
  s.tick();
  assert.equal(at(now), undefined, 'a second change in the same minute waits');
  assert.equal(s.samples, 1);

  now = Date.UTC(2027, 0, 1, 12, 1, 0, 300);
  s.tick();
  assert.equal(at(now), 5100, "the waiting change is recorded at the next minute's first tick");
  s.tick();
  assert.equal(s.samples, 2, 'no change since: nothing more');

  // A change in a new minute when a trade already recorded that second: the trade sample stays.
  now = Date.UTC(2027, 0, 1, 12, 2, 7);
  md.prices.put(priceKey(YES, Math.floor(now / 1000)), 6100);
  mids.set(YES, 5200.5);
  listener([YES]);
  assert.equal(at(now), 6100);
  now += 1000;
  listener([YES]);
  now = Date.UTC(2027, 0, 1, 12, 3, 0, 100);
  s.tick();
  assert.equal(at(now), 5200.5, 'half-pip midpoints are stored as they are');

  s.stop();
  mids.set(YES, 4000);
  now = Date.UTC(2027, 0, 1, 12, 10, 0);
  listener([YES]);
  assert.equal(at(now), undefined, 'stopped: publications are ignored');
  await store.prices.flushed;
  await store.close();
});

test('rebuilt from the journal: a fresh projector catches the market-data views up with what the engine committed', async () => {
  const store = freshStore();
  const engine = await Engine.open({ store, shards: 1, log: silentLogger });
  const m = market(5);
  engine.registerMarket(m);
  const [maker, taker] = [wallet(0x51), wallet(0x52)];
  assert.ok((await engine.deposit(maker, 1000 * T)).ok && (await engine.deposit(taker, 1000 * T)).ok);
  assert.ok((await engine.split(maker, m.conditionId, 100 * T)).ok);
  for (const price of [5000, 5100]) assert.ok((await engine.placeOrder(order({ wallet: maker, tokenId: m.tokenIds[0], side: 'SELL', price, size: 2 * T }))).ok);
  const buy = { ...order({ wallet: taker, tokenId: m.tokenIds[0], side: 'BUY', price: 5100, size: 4 * T }), builder: B1 };
  const placed = await engine.placeOrder(buy);
  assert.deepEqual([placed.ok, placed.tradeIds.length], [true, 2]);
  const fills = [...readJournal(store)].filter((e): e is FillEvent => e.type === 'fill' && e.takerWallet === taker);
  await engine.close();

  const md = new MarketDataStore(store);
  const projector = new Projector(store, buildProjections({ store, views: new ViewStore(store.views), prices: new ViewStore(store.prices), marketData: md }), silentLogger);
  assert.ok(projector.catchUp() > 0);
  const none = () => undefined;
  const reader = new MarketDataReader({ bookSnapshot: none, lastTradePrice: none, tokenOutcome: none, market: none, refreshSnapshot: async () => undefined, snapshotStale: () => false }, md);
  const page = reader.builderTrades({ builderCode: B1 }, 0);
  assert.deepEqual(page.rows.map((r) => [r.id, r.price, r.size, r.bucket_index]), [
    [placed.tradeIds[0], '0.5', '2', 0],
    [placed.tradeIds[1], '0.51', '2', 1],
  ]);
  const sec = Math.floor(fills[1].ts / 1000);
  assert.equal(md.prices.get(priceKey(m.tokenIds[0], sec)), 5100, 'the last fill of the second');
  await store.views.flushed;
  await store.close();
});
