/**
 * GET /positions and /closed-positions through the wallet data reader (queries/wallets/positions.ts,
 * wallet-views.ts, position-prices.ts, sorting.ts) on a real store: every curPrice source, every sort in
 * both directions with the documented tie-break, the filters, catalog metadata kept current row by row,
 * price sorts kept exact while books move, and cached pages equal to fresh reads. /trades is in
 * trades.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JournalEvent } from '../../../src/domain/events.ts';
import { openStore, type Store } from '../../../src/journal/env.ts';
import { CatalogWriter } from '../../../src/projections/catalog.ts';
import { ViewStore } from '../../../src/projections/projector.ts';
import { WalletPositionsProjection } from '../../../src/projections/wallets.ts';
import { CatalogReader } from '../../../src/queries/catalog.ts';
import type { ClosedSort, PositionSort } from '../../../src/edge/schemas/wallets.ts';
import { META_TTL_MS } from '../../../src/queries/wallets/market-meta.ts';
import type { LivePrices } from '../../../src/queries/wallets/position-prices.ts';
import type { PositionsParams } from '../../../src/queries/wallets/positions.ts';
import { WalletDataReader } from '../../../src/queries/wallets/reader.ts';
import { ManualClock } from '../../../src/runtime/clock.ts';

const U = 1_000_000;
const cid = (d: string) => '0x' + d.repeat(64);
const W = '0x' + '9'.repeat(40);
const X = '0x' + '8'.repeat(40);
const M = { m1: cid('1'), m2: cid('2'), m3: cid('3'), m4: cid('4'), m5: cid('5'), m6: cid('6'), m7: cid('7'), m8: cid('8') };
const tok = (c: string, o: number) => `${c.slice(2, 6)}${o}`.replace(/^0+/, '') || '0';

// ---- a store with a catalog, positions and live prices ----------------------------------------------

let store: Store;
let views: ViewStore;
let reader: WalletDataReader;
let seq = 0;
const clock = new ManualClock(Date.UTC(2026, 0, 1));
/** Best bid/ask per token (pips) and last trades, as the engine would publish them. */
const books = new Map<string, { version: number; bid?: number; ask?: number }>();
const lastTrades = new Map<string, number>();
const prices: LivePrices = {
  bookSnapshot(tokenId) {
    const b = books.get(tokenId);
    if (!b) return undefined;
    const lvl = (p: number | undefined) => (p === undefined ? [] : [{ price: String(p / 10_000), size: '1' }]);
    // Worse levels first, best last, as the shards publish them.
    const bids = b.bid === undefined ? [] : [{ price: '0.01', size: '5' }, ...lvl(b.bid)];
    return { version: b.version, json: JSON.stringify({ bids, asks: lvl(b.ask) }) };
  },
  lastTradePrice(tokenId) {
    const p = lastTrades.get(tokenId);
    return p === undefined ? undefined : { pricePips: p };
  },
};
const setBook = (tokenId: string, bid?: number, ask?: number) => books.set(tokenId, { version: (books.get(tokenId)?.version ?? 0) + 1, bid, ask });

function ev(e: Record<string, unknown>): JournalEvent {
  seq++;
  return { seq, ts: Date.UTC(2026, 0, 1) + seq * 1000, ...e } as JournalEvent;
}
const marketEv = (c: string) => ev({ type: 'market', conditionId: c, marketId: 1, tokenIds: [tok(c, 0), tok(c, 1)], tickPips: 100, minSizeUnits: U, makerFeeBps: 0, takerFeeBps: 0, acceptingOrders: true, negRisk: c === M.m4 });
/** W buys (or sells) `size` tokens of outcome `o` at `pips` from/to X, as taker. */
function tradeEv(c: string, o: 0 | 1, side: 'BUY' | 'SELL', size: number, pips: number): JournalEvent {
  return ev({
    type: 'fill', tradeId: '0x' + '0'.repeat(64), txHash: '0x' + seq.toString(16).padStart(64, '0'), conditionId: c, kind: 'TRANSFER', size,
    takerOrderId: 'a', makerOrderId: 'b', takerWallet: W, makerWallet: X, takerOwner: 'k', makerOwner: 'k', takerTokenId: tok(c, o), makerTokenId: tok(c, o),
    takerOutcome: o, makerOutcome: o, takerSide: side, makerSide: side === 'BUY' ? 'SELL' : 'BUY', takerPricePips: pips, makerPricePips: pips,
    takerUsdc: (size * pips) / 10_000, makerUsdc: (size * pips) / 10_000, takerFee: 0, makerFee: 0, makerRemaining: 0, builder: '0x',
  });
}

before(async () => {
  store = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-wq-')) });
  views = new ViewStore(store.views);
  const catalog = new CatalogWriter(store, clock);
  const mk = (c: string, question: string, endDate: string | undefined, extra: Record<string, unknown> = {}) => ({
    question, conditionId: c, slug: `m-${c.slice(2, 4)}`, clobTokenIds: [tok(c, 0), tok(c, 1)], ...(endDate ? { endDate } : {}), ...extra,
  });
  const outcome = await catalog.upsertEvents([
    {
      title: 'Sorting', slug: 'sorting', endDate: '2026-12-31T00:00:00Z', icon: 'https://e/icon.png',
      markets: [
        mk(M.m1, 'beta', '2026-03-01T00:00:00Z'),
        mk(M.m2, 'Alpha', '2026-01-01T00:00:00Z'),
        mk(M.m3, 'alpha', undefined),
        mk(M.m4, 'Gamma', '2026-02-01T00:00:00Z', { outcomes: ['Up', 'Down'] }),
        mk(M.m5, 'delta', '2026-05-01T00:00:00Z'),
        mk(M.m6, 'Epsilon', '2026-05-01T00:00:00Z'),
        mk(M.m7, 'zeta', '2026-05-01T00:00:00Z', { outcomePrices: ['0.62', '0.38'] }),
      ],
    },
  ] as never);
  assert.ok(outcome.ok, JSON.stringify(outcome));
  reader = new WalletDataReader({ store, views, catalog: new CatalogReader(store), prices });

  const positions = new WalletPositionsProjection(views);
  const apply = (...es: JournalEvent[]) => es.forEach((e) => positions.apply(e));
  apply(marketEv(M.m1), marketEv(M.m2), marketEv(M.m3), marketEv(M.m4), marketEv(M.m5), marketEv(M.m6), marketEv(M.m7));
  // Open positions P1..P5 (module header of the sort test gives their numbers).
  apply(
    tradeEv(M.m1, 0, 'BUY', 10 * U, 2000),
    tradeEv(M.m2, 0, 'BUY', 10 * U, 5000),
    tradeEv(M.m3, 0, 'BUY', 4 * U, 2500),
    tradeEv(M.m4, 0, 'BUY', 10 * U, 4000),
    tradeEv(M.m4, 1, 'BUY', 10 * U, 6000),
  );
  // Closed rows C1 (M5), C2 (M6), C3 (M7, outcome 1), closed in that order.
  apply(tradeEv(M.m5, 0, 'BUY', 10 * U, 4000), tradeEv(M.m5, 0, 'SELL', 10 * U, 6000));
  apply(tradeEv(M.m6, 0, 'BUY', 10 * U, 5000), tradeEv(M.m6, 0, 'SELL', 10 * U, 3000));
  apply(tradeEv(M.m7, 1, 'BUY', 5 * U, 2000), tradeEv(M.m7, 1, 'SELL', 5 * U, 6000));
  setBook(tok(M.m1, 0), 2900, 3100);
  setBook(tok(M.m2, 0), 4900, 5100);
  setBook(tok(M.m3, 0), 7400, 7600);
  setBook(tok(M.m4, 0), 900, 1100);
  setBook(tok(M.m4, 1), 8900, 9100);
});

after(async () => {
  await store.close();
});

test('curPrice: tight midpoint, last trade past a 0.10 spread, wide midpoint, seed, 0, and 1/0 once resolved', () => {
  const t = tok(M.m6, 0);
  // bid 0.52, ask 0.58: spread 0.06 -> midpoint 0.55.
  setBook(t, 5200, 5800);
  assert.equal(reader.curPrice(M.m6, 0), 550_000);
  // Spread exactly 0.10 (0.45 / 0.55) is not wider than 0.10: midpoint 0.50.
  setBook(t, 4500, 5500);
  assert.equal(reader.curPrice(M.m6, 0), 500_000);
  // bid 0.40, ask 0.55: spread 0.15 > 0.10 -> the last trade 0.47.
  setBook(t, 4000, 5500);
  lastTrades.set(t, 4700);
  assert.equal(reader.curPrice(M.m6, 0), 470_000);
  // Same wide book without any trade: its midpoint 0.475.
  lastTrades.delete(t);
  assert.equal(reader.curPrice(M.m6, 0), 475_000);
  // One side only: the last trade when there is one ...
  setBook(t, 4000, undefined);
  lastTrades.set(t, 3300);
  assert.equal(reader.curPrice(M.m6, 0), 330_000);
  // ... else the catalog's imported seed (M7 seeds 0.62 / 0.38), else 0.
  lastTrades.delete(t);
  assert.equal(reader.curPrice(M.m6, 0), 0);
  assert.equal(reader.curPrice(M.m7, 0), 620_000);
  assert.equal(reader.curPrice(M.m7, 1), 380_000);
  // A market neither the journal nor the catalog knows.
  assert.equal(reader.curPrice(M.m8, 0), 0);
  books.delete(t);
});

test('a book snapshot is parsed once per version', () => {
  const t = tok(M.m6, 1);
  books.set(t, { version: 7, bid: 2000, ask: 2200 });
  assert.equal(reader.curPrice(M.m6, 1), 210_000);
  // Same version, other content: the parsed best prices of version 7 are kept.
  books.set(t, { version: 7, bid: 3000, ask: 3200 });
  assert.equal(reader.curPrice(M.m6, 1), 210_000);
  books.set(t, { version: 8, bid: 3000, ask: 3200 });
  assert.equal(reader.curPrice(M.m6, 1), 310_000);
  books.delete(t);
});

/*
 * The open positions of W (buys from X at the prices below; curPrice = midpoint of the books set above):
 *   P1  M1 "beta"  o0  10 @ 0.20  cur 0.30  iv 2  cv 3  cash  1  pct  50  end 2026-03-01
 *   P2  M2 "Alpha" o0  10 @ 0.50  cur 0.50  iv 5  cv 5  cash  0  pct   0  end 2026-01-01
 *   P3  M3 "alpha" o0   4 @ 0.25  cur 0.75  iv 1  cv 3  cash  2  pct 200  end (event's) 2026-12-31
 *   P4  M4 "Gamma" o0  10 @ 0.40  cur 0.10  iv 4  cv 1  cash -3  pct -75  end 2026-02-01
 *   P5  M4 "Gamma" o1  10 @ 0.60  cur 0.90  iv 6  cv 9  cash  3  pct  50  end 2026-02-01
 * Ties break on conditionId, then outcomeIndex, ascending, whatever the direction.
 */
const C = { C1: `${M.m5}:0`, C2: `${M.m6}:0`, C3: `${M.m7}:1` };
const P = { P1: `${M.m1}:0`, P2: `${M.m2}:0`, P3: `${M.m3}:0`, P4: `${M.m4}:0`, P5: `${M.m4}:1` };
const sortCases: [PositionSort, string[], string[]][] = [
  // [sortBy, DESC order, ASC order]
  ['TOKENS', ['P1', 'P2', 'P4', 'P5', 'P3'], ['P3', 'P1', 'P2', 'P4', 'P5']],
  ['CURRENT', ['P5', 'P2', 'P1', 'P3', 'P4'], ['P4', 'P1', 'P3', 'P2', 'P5']],
  ['INITIAL', ['P5', 'P2', 'P4', 'P1', 'P3'], ['P3', 'P1', 'P4', 'P2', 'P5']],
  ['CASHPNL', ['P5', 'P3', 'P1', 'P2', 'P4'], ['P4', 'P2', 'P1', 'P3', 'P5']],
  ['PERCENTPNL', ['P3', 'P1', 'P5', 'P2', 'P4'], ['P4', 'P2', 'P1', 'P5', 'P3']],
  // Case-insensitive first ("Alpha" = "alpha"), then code-unit order ("A" < "a"); equal titles tie-break.
  ['TITLE', ['P4', 'P5', 'P1', 'P3', 'P2'], ['P2', 'P3', 'P1', 'P4', 'P5']],
  // By end date (M3 has none of its own: its event's 2026-12-31 applies).
  ['RESOLVING', ['P3', 'P1', 'P4', 'P5', 'P2'], ['P2', 'P4', 'P5', 'P1', 'P3']],
  ['PRICE', ['P5', 'P3', 'P2', 'P1', 'P4'], ['P4', 'P1', 'P2', 'P3', 'P5']],
  ['AVGPRICE', ['P5', 'P2', 'P4', 'P3', 'P1'], ['P1', 'P3', 'P4', 'P2', 'P5']],
];

const base: PositionsParams = { user: W, sizeThreshold: 1, redeemable: false, mergeable: false, limit: 100, offset: 0, sortBy: 'TOKENS', descending: true };
const names = (rows: { asset: string }[]) => rows.map((r) => Object.entries(P).find(([, a]) => a === r.asset)?.[0] ?? r.asset);

for (const [sortBy, desc, asc] of sortCases) {
  test(`positions sortBy=${sortBy} DESC and ASC`, () => {
    assert.deepEqual(names(reader.positions({ ...base, sortBy, descending: true })), desc);
    assert.deepEqual(names(reader.positions({ ...base, sortBy, descending: false })), asc);
  });
}

test('position numbers and metadata of one row', () => {
  const [p5] = reader.positions({ ...base, markets: [M.m4], sortBy: 'PRICE' });
  assert.deepEqual(p5, {
    proxyWallet: W,
    asset: `${M.m4}:1`,
    conditionId: M.m4,
    size: 10,
    avgPrice: 0.6,
    initialValue: 6,
    currentValue: 9,
    cashPnl: 3,
    percentPnl: 50,
    totalBought: 10,
    realizedPnl: 0,
    // (9 - 10 x 0.6) / 6 x 100 = 50
    percentRealizedPnl: 50,
    curPrice: 0.9,
    redeemable: false,
    mergeable: true,
    title: 'Gamma',
    slug: `m-44`,
    icon: 'https://e/icon.png',
    eventSlug: 'sorting',
    outcome: 'Down',
    outcomeIndex: 1,
    oppositeOutcome: 'Up',
    oppositeAsset: `${M.m4}:0`,
    endDate: '2026-02-01T00:00:00.000Z',
    // The buy of P5 was event 12 of the script: 2026-01-01T00:00:12Z.
    timestamp: Date.UTC(2026, 0, 1) / 1000 + 12,
    negativeRisk: true,
  });
});

test('filters: sizeThreshold (inclusive), market, title, mergeable, offset and limit', () => {
  const q = (p: Partial<PositionsParams>) => names(reader.positions({ ...base, ...p }));
  assert.deepEqual(q({ sizeThreshold: 4 }), ['P1', 'P2', 'P4', 'P5', 'P3']);
  assert.deepEqual(q({ sizeThreshold: 4.000001 }), ['P1', 'P2', 'P4', 'P5']);
  assert.deepEqual(q({ sizeThreshold: 10 }), ['P1', 'P2', 'P4', 'P5']);
  assert.deepEqual(q({ sizeThreshold: 10.5 }), []);
  assert.deepEqual(q({ markets: [M.m4, M.m3] }), ['P4', 'P5', 'P3']);
  assert.deepEqual(q({ title: 'ALPHA' }), ['P2', 'P3']);
  assert.deepEqual(q({ title: 'amm' }), ['P4', 'P5']);
  assert.deepEqual(q({ mergeable: true }), ['P4', 'P5']);
  assert.deepEqual(q({ redeemable: true }), []);
  assert.deepEqual(q({ offset: 1, limit: 2 }), ['P2', 'P4']);
  assert.deepEqual(q({ offset: 5 }), []);
  assert.deepEqual(q({ limit: 0 }), []);
  // X sold W its tokens without holding any here (nothing tracked), then bought W's exits back.
  assert.deepEqual(reader.positions({ ...base, user: X }).map((r) => r.asset), [C.C1, C.C2, C.C3]);
  assert.deepEqual(reader.positions({ ...base, user: '0x' + '7'.repeat(40) }), []);
});

test('RESOLVING puts rows without any end date last in both directions', () => {
  const w2 = '0x' + '6'.repeat(40);
  const positions = new WalletPositionsProjection(views);
  // M8 is in neither the catalog nor the journal's markets: no end date, no metadata, default labels.
  for (const e of [ev({ type: 'split', wallet: w2, conditionId: M.m8, tokenIds: ['8', '9'], amount: 2 * U }), ev({ type: 'split', wallet: w2, conditionId: M.m2, tokenIds: ['2', '3'], amount: 2 * U })]) {
    positions.apply(e);
  }
  const q = (descending: boolean) => reader.positions({ ...base, user: w2, sortBy: 'RESOLVING', descending }).map((r) => r.asset);
  assert.deepEqual(q(true), [`${M.m2}:0`, `${M.m2}:1`, `${M.m8}:0`, `${M.m8}:1`]);
  assert.deepEqual(q(false), [`${M.m2}:0`, `${M.m2}:1`, `${M.m8}:0`, `${M.m8}:1`]);
  const [m8] = reader.positions({ ...base, user: w2, markets: [M.m8] });
  assert.deepEqual([m8.title, m8.slug, m8.eventSlug, m8.endDate, m8.outcome, m8.oppositeOutcome, m8.curPrice, m8.negativeRisk], ['', '', '', '', 'Yes', 'No', 0, false]);
});

/*
 * Closed rows (bought, then sold to zero, from/to X):
 *   C1  M5 "delta"   o0  10 @ 0.40 -> 0.60  realized  2  close price 0.6  closed first
 *   C2  M6 "Epsilon" o0  10 @ 0.50 -> 0.30  realized -2  close price 0.3
 *   C3  M7 "zeta"    o1   5 @ 0.20 -> 0.60  realized  2  close price 0.6  closed last
 */
const closedCases: [ClosedSort, string[], string[]][] = [
  ['REALIZEDPNL', ['C1', 'C3', 'C2'], ['C2', 'C1', 'C3']],
  ['TITLE', ['C3', 'C2', 'C1'], ['C1', 'C2', 'C3']],
  ['PRICE', ['C1', 'C3', 'C2'], ['C2', 'C1', 'C3']],
  ['AVGPRICE', ['C2', 'C1', 'C3'], ['C3', 'C1', 'C2']],
  ['TIMESTAMP', ['C3', 'C2', 'C1'], ['C1', 'C2', 'C3']],
];
const closedNames = (rows: { asset: string }[]) => rows.map((r) => Object.entries(C).find(([, a]) => a === r.asset)?.[0] ?? r.asset);

for (const [sortBy, desc, asc] of closedCases) {
  test(`closed positions sortBy=${sortBy} DESC and ASC`, () => {
    const q = (descending: boolean) => closedNames(reader.closedPositions({ user: W, limit: 10, offset: 0, sortBy, descending }));
    assert.deepEqual(q(true), desc);
    assert.deepEqual(q(false), asc);
  });
}

test('a closed row: size 0, the frozen close price, the closing time, no negativeRisk', () => {
  const [c3] = reader.closedPositions({ user: W, limit: 10, offset: 0, sortBy: 'TIMESTAMP', descending: true });
  assert.deepEqual(c3, {
    proxyWallet: W,
    asset: C.C3,
    conditionId: M.m7,
    size: 0,
    avgPrice: 0.2,
    initialValue: 0,
    currentValue: 0,
    cashPnl: 0,
    percentPnl: 0,
    totalBought: 5,
    // 5 x (0.60 - 0.20)
    realizedPnl: 2,
    // (0 - 5 x 0.2) / 1 x 100: the platform's formula gives -100 for every closed row with a basis.
    percentRealizedPnl: -100,
    curPrice: 0.6,
    redeemable: false,
    mergeable: false,
    title: 'zeta',
    slug: 'm-77',
    icon: 'https://e/icon.png',
    eventSlug: 'sorting',
    outcome: 'No',
    outcomeIndex: 1,
    oppositeOutcome: 'Yes',
    oppositeAsset: `${M.m7}:0`,
    endDate: '2026-05-01T00:00:00.000Z',
    // The sale that closed C3 was event 18 of the script.
    timestamp: Date.UTC(2026, 0, 1) / 1000 + 18,
  });
  const q = (p: object) => closedNames(reader.closedPositions({ user: W, limit: 10, offset: 0, sortBy: 'REALIZEDPNL', descending: true, ...p }));
  assert.deepEqual(q({ markets: [M.m6] }), ['C2']);
  assert.deepEqual(q({ title: 'ETA' }), ['C3']);
  assert.deepEqual(q({ offset: 1, limit: 1 }), ['C3']);
  assert.deepEqual(q({ limit: 0 }), []);
  // Open rows never show as closed, closed rows never as open.
  assert.equal(reader.positions({ ...base, sizeThreshold: 0 }).length, 5);
});

test('resolution: curPrice 1 / 0, redeemable, and no longer mergeable', () => {
  const positions = new WalletPositionsProjection(views);
  positions.apply(ev({ type: 'resolve', conditionId: M.m4, winningOutcome: 1, tokenIds: [tok(M.m4, 0), tok(M.m4, 1)] }));
  const rows = reader.positions({ ...base, redeemable: true });
  assert.deepEqual(names(rows), ['P4', 'P5']);
  // P4 lost: cur 0, cv 0, cash -4, -100%; P5 won: cur 1, cv 10, cash 10 - 6 = 4, 4 / 6 = 66.6666%.
  assert.deepEqual(rows.map((r) => [r.curPrice, r.currentValue, r.cashPnl, r.percentPnl, r.redeemable, r.mergeable]), [
    [0, 0, -4, -100, true, false],
    [1, 10, 4, 66.6666, true, false],
  ]);
  assert.deepEqual(reader.positions({ ...base, mergeable: true }), []);
});

// ---- catalog metadata, kept current row by row --------------------------------------------------------

/**
 * One catalog event whose markets carry `titles` (read at each call: edit it, then call again to write the
 * edit): market i has condition id mk(i), slug `<slug>-i` and tokens `<digit>i0` / `<digit>i1`.
 */
function catalogEvent(s: Store, slug: string, digit: string, titles: string[], mk: (i: number) => string): () => Promise<void> {
  const catalog = new CatalogWriter(s, clock);
  return async () => {
    const markets = titles.map((question, i) => ({ question, conditionId: mk(i), slug: `${slug}-${i}`, clobTokenIds: [`${digit}${i}0`, `${digit}${i}1`] }));
    const out = await catalog.upsertEvents([{ title: slug, slug, endDate: '2026-12-31T00:00:00Z', markets }] as never);
    assert.ok(out.ok, JSON.stringify(out));
  };
}

test('catalog edits reach a view without rebuilding it: announced at once, unannounced once the metadata expires', async () => {
  const s = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-wm-')) });
  const v = new ViewStore(s.views);
  const owner = '0x' + '4'.repeat(40);
  const n = 20;
  const mk = (i: number) => '0x' + 'e'.repeat(62) + i.toString(16).padStart(2, '0');
  const titles = ['alpha', 'beta', 'gamma', ...Array.from({ length: n - 3 }, (_, i) => `m${i + 3}`)];
  const importEvent = catalogEvent(s, 'meta', '9', titles, mk);
  await importEvent();
  const positions = new WalletPositionsProjection(v);
  for (let i = 0; i < n; i++) positions.apply({ type: 'split', seq: i + 1, ts: (i + 1) * 1000, wallet: owner, conditionId: mk(i), tokenIds: [`9${i}0`, `9${i}1`], amount: U } as JournalEvent);
  await s.views.flushed;
  let t = 0;
  // `served`: only the rows a request serves and the announced markets are checked; `rolling`: also four
  // others per request, with at most one catalog read.
  const served = new WalletDataReader({ store: s, views: v, catalog: new CatalogReader(s), now: () => t, metaChecks: { rows: 0 } });
  const rolling = new WalletDataReader({ store: s, views: v, catalog: new CatalogReader(s), now: () => t, metaChecks: { rows: 4, reads: 1 } });
  const q = (r: WalletDataReader, p: Partial<PositionsParams> = {}) =>
    r.positions({ user: owner, sizeThreshold: 0, redeemable: false, mergeable: false, limit: 2, offset: 0, sortBy: 'TITLE', descending: false, ...p }).map((row) => `${row.title}:${row.outcomeIndex}`);
  for (const r of [served, rolling]) assert.deepEqual(q(r), ['alpha:0', 'alpha:1']);

  // From here on the view's rows cannot be read again from storage: whatever follows is not a rebuild.
  const range = s.views.getRange.bind(s.views);
  s.views.getRange = ((o: unknown) => {
    if (JSON.stringify(o).includes('wpos')) throw new Error('the wallet view was rebuilt');
    return range(o as never);
  }) as typeof s.views.getRange;

  // Unannounced: the cached metadata stands until it expires; then a served row is checked, and when its
  // title changed the page is picked again in the new order.
  titles[0] = 'zeta';
  await importEvent();
  t = 1_000;
  assert.deepEqual(q(served), ['alpha:0', 'alpha:1']);
  t = META_TTL_MS + 1;
  assert.deepEqual(q(served), ['beta:0', 'beta:1']);
  assert.deepEqual(q(served, { title: 'ZET' }), ['zeta:0', 'zeta:1']);
  assert.deepEqual(q(served, { descending: true }), ['zeta:0', 'zeta:1']);

  // An unannounced edit of a row no page shows reaches the order through the rolling check only.
  titles[10] = 'aaa';
  await importEvent();
  t = 3 * META_TTL_MS;
  for (let i = 0; i < 3 * n && q(rolling)[0] !== 'aaa:0'; i++);
  assert.deepEqual(q(rolling), ['aaa:0', 'aaa:1']);
  for (let i = 0; i < 3 * n; i++) assert.deepEqual(q(served), ['beta:0', 'beta:1']);

  // Announced: at once, whatever the age of the cached metadata.
  titles[2] = 'aardvark';
  await importEvent();
  t += 1;
  served.catalogChanged([mk(2).toUpperCase().replace('0X', '0x')]);
  assert.deepEqual(q(served), ['aardvark:0', 'aardvark:1']);
  await s.close();
});

test('expired metadata is not read again while the catalog has not been written since; it is once it has', async () => {
  const s = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-wgen-')) });
  const v = new ViewStore(s.views);
  const owner = '0x' + '4'.repeat(40);
  const n = 6;
  const mk = (i: number) => '0x' + 'f'.repeat(62) + i.toString(16).padStart(2, '0');
  const titles = Array.from({ length: n }, (_, i) => `gen ${i}`);
  const importEvent = catalogEvent(s, 'gen', '6', titles, mk);
  await importEvent();
  const positions = new WalletPositionsProjection(v);
  for (let i = 0; i < n; i++) positions.apply({ type: 'split', seq: i + 1, ts: (i + 1) * 1000, wallet: owner, conditionId: mk(i), tokenIds: [`6${i}0`, `6${i}1`], amount: U } as JournalEvent);
  await s.views.flushed;
  const reads = { n: 0 };
  const counting = new CatalogReader(s);
  const byCondition = counting.marketByCondition.bind(counting);
  counting.marketByCondition = (c: string) => {
    reads.n++;
    return byCondition(c);
  };
  let t = 0;
  const reader = new WalletDataReader({ store: s, views: v, catalog: counting, now: () => t });
  const titlesServed = () =>
    reader.positions({ user: owner, sizeThreshold: 0, redeemable: false, mergeable: false, limit: 20, offset: 0, sortBy: 'TITLE', descending: false }).map((r) => r.title);
  assert.deepEqual(titlesServed(), titles.flatMap((x) => [x, x]));
  assert.equal(reads.n, n, 'each market read once for the view');
  for (const k of [1, 2, 3]) {
    t = k * META_TTL_MS + 1; // every entry has expired
    assert.deepEqual(titlesServed(), titles.flatMap((x) => [x, x]));
  }
  assert.equal(reads.n, n, 'expired entries under an unchanged catalog were not read again');
  titles[3] = 'a renamed';
  await importEvent(); // a write that announces nothing to this reader
  t = 5 * META_TTL_MS;
  assert.deepEqual(titlesServed().slice(0, 2), ['a renamed', 'a renamed']);
  assert.ok(reads.n > n, 'after a catalog write, expired entries are read again');
  await s.close();
});

// ---- price sorts while books move --------------------------------------------------------------------

test('price sorts stay exact while books move: moved rows merged back, or a new sort past many', async () => {
  const s = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-wp-')) });
  const v = new ViewStore(s.views);
  const owner = '0x' + '4'.repeat(40);
  const other = '0x' + '3'.repeat(40);
  const n = 60;
  const mk = (i: number) => '0x' + i.toString(16).padStart(64, '0');
  const tokenOf = (i: number, o: number) => `t${i}-${o}`;
  const book = new Map<string, { version: number; json: string }>();
  let x = 7;
  const rnd = (k: number) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return Math.floor((x / 2147483648) * k);
  };
  const publish = (t: string) => {
    // Tight books (spread 0.02) from 0.05 to 0.95; ties in price happen on purpose (20 price levels).
    const mid = 500 + rnd(20) * 450;
    book.set(t, { version: (book.get(t)?.version ?? 0) + 1, json: JSON.stringify({ bids: [{ price: String((mid - 100) / 10_000), size: '1' }], asks: [{ price: String((mid + 100) / 10_000), size: '1' }] }) });
  };
  const prices: LivePrices = { bookSnapshot: (t) => book.get(t), lastTradePrice: () => undefined };
  const positions = new WalletPositionsProjection(v);
  let sq = 0;
  for (let i = 0; i < n; i++) {
    positions.apply({ type: 'market', seq: ++sq, ts: 0, conditionId: mk(i), marketId: i + 1, tokenIds: [tokenOf(i, 0), tokenOf(i, 1)], tickPips: 100, minSizeUnits: U, makerFeeBps: 0, takerFeeBps: 0, acceptingOrders: true, negRisk: false } as JournalEvent);
    for (const o of [0, 1] as const) {
      const size = (1 + rnd(4)) * U;
      const pips = 1000 + rnd(8) * 1000;
      positions.apply({
        type: 'fill', seq: ++sq, ts: sq * 1000, tradeId: '', txHash: '', conditionId: mk(i), kind: 'TRANSFER', size, takerOrderId: 'a', makerOrderId: 'b',
        takerWallet: owner, makerWallet: other, takerOwner: 'k', makerOwner: 'k', takerTokenId: tokenOf(i, o), makerTokenId: tokenOf(i, o), takerOutcome: o, makerOutcome: o,
        takerSide: 'BUY', makerSide: 'SELL', takerPricePips: pips, makerPricePips: pips, takerUsdc: (size * pips) / 10_000, makerUsdc: (size * pips) / 10_000,
        takerFee: 0, makerFee: 0, makerRemaining: 0, builder: '0x',
      } as JournalEvent);
      publish(tokenOf(i, o));
    }
  }
  const readers = {
    'tokens named': new WalletDataReader({ store: s, views: v, catalog: new CatalogReader(s), prices, priceEvents: true }),
    'tokens unnamed': new WalletDataReader({ store: s, views: v, catalog: new CatalogReader(s), prices, priceEvents: true }),
    'no price events': new WalletDataReader({ store: s, views: v, catalog: new CatalogReader(s), prices }),
  };
  const p0: PositionsParams = { user: owner, sizeThreshold: 0, redeemable: false, mergeable: false, limit: 500, offset: 0, sortBy: 'TITLE', descending: false };
  const keyOf: Record<string, (r: { currentValue: number; cashPnl: number; percentPnl: number; curPrice: number }) => number> = {
    CURRENT: (r) => r.currentValue,
    CASHPNL: (r) => r.cashPnl,
    PERCENTPNL: (r) => r.percentPnl,
    PRICE: (r) => r.curPrice,
  };
  /**
   * Every price sort, both directions, whole and in pages, against the rows' own numbers sorted here. The
   * price sorts are read first: the unsorted read re-prices every row it returns.
   */
  const check = (r: WalletDataReader, what: string, sorts: string[]) => {
    const seen: [string, boolean, string[], string[]][] = [];
    for (const sortBy of sorts) {
      for (const descending of [true, false]) {
        const q = { ...p0, sortBy: sortBy as PositionSort, descending };
        seen.push([sortBy, descending, r.positions(q).map((row) => row.asset), r.positions({ ...q, offset: 37, limit: 20 }).map((row) => row.asset)]);
      }
    }
    const all = r.positions(p0);
    assert.equal(all.length, 2 * n);
    for (const [sortBy, descending, whole, page] of seen) {
      const k = keyOf[sortBy];
      const want = [...all]
        .sort((a, b) => (descending ? k(b) - k(a) : k(a) - k(b)) || (a.conditionId < b.conditionId ? -1 : a.conditionId > b.conditionId ? 1 : a.outcomeIndex - b.outcomeIndex))
        .map((row) => row.asset);
      assert.deepEqual(whole, want, `${what}: ${sortBy} ${descending ? 'DESC' : 'ASC'}`);
      assert.deepEqual(page, want.slice(37, 57), `${what}: ${sortBy} page`);
    }
  };
  const sorts = Object.keys(keyOf);
  for (const [name, r] of Object.entries(readers)) check(r, `first sort, ${name}`, sorts);
  // 1 and 3 books (merged back), then 60 (about 40 of 120 rows: sorted again); some rounds read only some
  // orders, so moved rows pile up between reads. Round 4 also floods the log of changed tokens past what
  // it keeps: the views re-check every row.
  for (const [round, count] of [1, 3, 1, 60, 2, 5].entries()) {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const t = tokenOf(rnd(n), rnd(2));
      publish(t);
      ids.push(t, 'a token nobody holds');
    }
    readers['tokens named'].pricesChanged(ids);
    if (round === 4) for (let i = 0; i < 3; i++) readers['tokens named'].pricesChanged(new Array<string>(60_000).fill('flood'));
    readers['tokens unnamed'].pricesChanged();
    const some = round % 2 === 0 ? sorts : sorts.slice(round % 4, (round % 4) + 2);
    for (const [name, r] of Object.entries(readers)) check(r, `round ${round} (${count} books), ${name}`, some);
  }
  for (const [name, r] of Object.entries(readers)) check(r, `last, ${name}`, sorts);

  // With price events, an order that does not read prices re-prices the reported rows too.
  const named = readers['tokens named'];
  const mid = (t: string) => {
    const b = JSON.parse(book.get(t)!.json) as { bids: { price: string }[]; asks: { price: string }[] };
    return (Number(b.bids[0].price) + Number(b.asks[0].price)) / 2;
  };
  for (let round = 0; round < 3; round++) {
    const ids = [tokenOf(rnd(n), 0), tokenOf(rnd(n), 1)];
    for (const t of ids) publish(t);
    named.pricesChanged(ids);
    const rows = named.positions({ ...p0, sortBy: 'TOKENS' });
    for (const row of rows) assert.ok(Math.abs(row.curPrice - mid(tokenOf(Number.parseInt(row.conditionId.slice(2), 16), row.outcomeIndex))) < 1e-9, row.asset);
  }
  await s.close();
});

test('a book that moves under an open position never brings it into the closed positions sorted by price', async () => {
  const s = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-wpc-')) });
  const v = new ViewStore(s.views);
  const owner = '0x' + '6'.repeat(40);
  const other = '0x' + '7'.repeat(40);
  const cid = (i: number) => '0x' + (i + 1).toString(16).padStart(64, '0');
  const book = new Map<string, { version: number; json: string }>();
  const publish = (t: string, bid: string, ask: string) =>
    book.set(t, { version: (book.get(t)?.version ?? 0) + 1, json: JSON.stringify({ bids: [{ price: bid, size: '1' }], asks: [{ price: ask, size: '1' }] }) });
  const positions = new WalletPositionsProjection(v);
  let sq = 0;
  const trade = (i: number, side: 'BUY' | 'SELL', pips: number) =>
    positions.apply({
      type: 'fill', seq: ++sq, ts: sq * 1000, tradeId: '', txHash: '', conditionId: cid(i), kind: 'TRANSFER', size: 2 * U, takerOrderId: 'a', makerOrderId: 'b',
      takerWallet: owner, makerWallet: other, takerOwner: 'k', makerOwner: 'k', takerTokenId: `t${i}`, makerTokenId: `t${i}`, takerOutcome: 0, makerOutcome: 0,
      takerSide: side, makerSide: side === 'BUY' ? 'SELL' : 'BUY', takerPricePips: pips, makerPricePips: pips, takerUsdc: (2 * U * pips) / 10_000,
      makerUsdc: (2 * U * pips) / 10_000, takerFee: 0, makerFee: 0, makerRemaining: 0, builder: '0x',
    } as JournalEvent);
  const N = 12;
  for (let i = 0; i <= N; i++) {
    positions.apply({ type: 'market', seq: ++sq, ts: 0, conditionId: cid(i), marketId: i + 1, tokenIds: [`t${i}`, `u${i}`], tickPips: 100, minSizeUnits: U, makerFeeBps: 0, takerFeeBps: 0, acceptingOrders: true, negRisk: false } as JournalEvent);
    publish(`t${i}`, '0.4', '0.42');
  }
  // Markets 0..N-1: bought and sold out (closed; more than eight, so a moved row would be merged in, not
  // trigger a fresh sort); market N: bought and held (open).
  for (let i = 0; i < N; i++) {
    trade(i, 'BUY', 3000);
    trade(i, 'SELL', 4000 + 100 * i);
  }
  trade(N, 'BUY', 3000);
  const closedOrder = Array.from({ length: N }, (_, i) => cid(N - 1 - i));
  const reader = new WalletDataReader({ store: s, views: v, catalog: new CatalogReader(s), prices: { bookSnapshot: (t) => book.get(t), lastTradePrice: () => undefined }, priceEvents: true });
  const closed = () => reader.closedPositions({ user: owner, limit: 50, offset: 0, sortBy: 'PRICE', descending: true }).map((r) => r.conditionId);
  const open = () => reader.positions({ user: owner, sizeThreshold: 0, redeemable: false, mergeable: false, limit: 50, offset: 0, sortBy: 'PRICE', descending: true });
  assert.deepEqual(closed(), closedOrder);
  assert.deepEqual(open().map((r) => r.conditionId), [cid(N)]);
  for (const [bid, ask] of [['0.7', '0.72'], ['0.1', '0.12'], ['0.5', '0.52']]) {
    publish(`t${N}`, bid!, ask!);
    reader.pricesChanged([`t${N}`]);
    assert.deepEqual(closed(), closedOrder, `closed positions after the open one moved to ${bid}`);
    const [row] = open();
    assert.ok(Math.abs(row!.curPrice - (Number(bid) + 0.01)) < 1e-9, `open position priced at the new midpoint (${row!.curPrice})`);
  }
  await s.close();
});

test('a page served again is what a fresh read writes: after price moves, catalog edits (announced or not), fills and a resolution', async () => {
  const s = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-wcache-')) });
  const v = new ViewStore(s.views);
  const owner = '0x' + '5'.repeat(40);
  const other = '0x' + '7'.repeat(40);
  const n = 8;
  const mk = (i: number) => '0x' + 'd'.repeat(62) + i.toString(16).padStart(2, '0');
  const titles = Array.from({ length: n }, (_, i) => `market ${i}`);
  const importEvent = catalogEvent(s, 'cache', '7', titles, mk);
  await importEvent();
  const book = new Map<string, { version: number; json: string }>();
  const publish = (t: string, bid: string, ask: string) =>
    book.set(t, { version: (book.get(t)?.version ?? 0) + 1, json: JSON.stringify({ bids: [{ price: bid, size: '1' }], asks: [{ price: ask, size: '1' }] }) });
  const positions = new WalletPositionsProjection(v);
  let sq = 0;
  const trade = (i: number, side: 'BUY' | 'SELL', size: number) =>
    positions.apply({
      type: 'fill', seq: ++sq, ts: sq * 1000, tradeId: '', txHash: '', conditionId: mk(i), kind: 'TRANSFER', size, takerOrderId: 'a', makerOrderId: 'b',
      takerWallet: owner, makerWallet: other, takerOwner: 'k', makerOwner: 'k', takerTokenId: `7${i}0`, makerTokenId: `7${i}0`, takerOutcome: 0, makerOutcome: 0,
      takerSide: side, makerSide: side === 'BUY' ? 'SELL' : 'BUY', takerPricePips: 3000, makerPricePips: 3000, takerUsdc: (size * 3000) / 10_000,
      makerUsdc: (size * 3000) / 10_000, takerFee: 0, makerFee: 0, makerRemaining: 0, builder: '0x',
    } as JournalEvent);
  for (let i = 0; i < n; i++) {
    positions.apply({ type: 'market', seq: ++sq, ts: 0, conditionId: mk(i), marketId: i + 1, tokenIds: [`7${i}0`, `7${i}1`], tickPips: 100, minSizeUnits: U, makerFeeBps: 0, takerFeeBps: 0, acceptingOrders: true, negRisk: false } as JournalEvent);
    publish(`7${i}0`, '0.3', '0.32');
    trade(i, 'BUY', (i + 2) * U);
    if (i < 3) trade(i, 'SELL', (i + 2) * U); // markets 0-2 closed
  }
  await s.views.flushed;
  let t = 0;
  const deps = { store: s, views: v, prices: { bookSnapshot: (tk: string) => book.get(tk), lastTradePrice: () => undefined }, priceEvents: true, now: () => t, metaChecks: { rows: 0 } };
  const kept = new WalletDataReader({ ...deps, catalog: new CatalogReader(s) });
  const pages: Array<[string, (r: WalletDataReader) => unknown]> = [];
  for (const sortBy of ['TOKENS', 'CURRENT', 'PRICE', 'TITLE'] as const) {
    for (const descending of [true, false]) {
      pages.push([`open ${sortBy} ${descending}`, (r) => r.positions({ user: owner, sizeThreshold: 0, redeemable: false, mergeable: false, limit: 3, offset: 1, sortBy, descending })]);
    }
  }
  pages.push(['open title filter', (r) => r.positions({ user: owner, sizeThreshold: 0, redeemable: false, mergeable: false, limit: 10, offset: 0, sortBy: 'TOKENS', descending: true, title: 'MARKET 6' })]);
  for (const sortBy of ['REALIZEDPNL', 'TITLE', 'PRICE'] as const) pages.push([`closed ${sortBy}`, (r) => r.closedPositions({ user: owner, limit: 2, offset: 0, sortBy, descending: true })]);
  // Each page twice from the kept reader (the second answer from its cache), against a reader that has
  // never served anything.
  const same = (what: string) => {
    const fresh = new WalletDataReader({ ...deps, catalog: new CatalogReader(s) });
    for (const [name, read] of pages) {
      const want = read(fresh);
      assert.deepEqual(read(kept), want, `${what}: ${name}`);
      assert.deepEqual(read(kept), want, `${what}: ${name}, served again`);
    }
  };
  same('first read');
  publish('750', '0.8', '0.82');
  kept.pricesChanged(['750']);
  same('a book moved');
  titles[4] = 'aaa first';
  await importEvent();
  kept.catalogChanged([mk(4)]);
  same('an announced title edit');
  titles[1] = 'zzz closed';
  titles[6] = 'MARKET 6 renamed';
  await importEvent();
  t = META_TTL_MS + 1; // unannounced: the served rows' metadata has expired
  same('unannounced edits, once the metadata expired');
  trade(5, 'SELL', 7 * U);
  trade(0, 'BUY', U);
  await s.views.flushed;
  same('the wallet traded (one position closed, one reopened)');
  positions.apply({ type: 'resolve', seq: ++sq, ts: sq * 1000, conditionId: mk(7), winningOutcome: 0, tokenIds: ['770', '771'] } as JournalEvent);
  await s.views.flushed;
  same('a market resolved');
  await s.close();
});

test('closed positions sortBy=TIMESTAMP: rows closed in the same second tie on the timestamp shown', async () => {
  const s = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-wts-')) });
  const v = new ViewStore(s.views);
  const owner = '0x' + '5'.repeat(40);
  const positions = new WalletPositionsProjection(v);
  const c = (i: number) => '0x' + i.toString(16).padStart(64, '0');
  const second = Date.UTC(2026, 0, 1, 12);
  let sq = 0;
  // Split and merge back: M1 closes 100 ms into the second, M2 900 ms into it; both show the same timestamp.
  for (const [i, ms] of [[1, 100], [2, 900]] as const) {
    positions.apply({ type: 'split', seq: ++sq, ts: second - 5000, wallet: owner, conditionId: c(i), tokenIds: [`${i}0`, `${i}1`], amount: U } as JournalEvent);
    positions.apply({ type: 'merge', seq: ++sq, ts: second + ms, wallet: owner, conditionId: c(i), tokenIds: [`${i}0`, `${i}1`], amount: U } as JournalEvent);
  }
  const r = new WalletDataReader({ store: s, views: v, catalog: new CatalogReader(s) });
  const q = (descending: boolean) => r.closedPositions({ user: owner, limit: 10, offset: 0, sortBy: 'TIMESTAMP', descending }).map((row) => `${row.conditionId === c(1) ? 'M1' : 'M2'}:${row.outcomeIndex}@${row.timestamp}`);
  const t = second / 1000;
  const tied = [`M1:0@${t}`, `M1:1@${t}`, `M2:0@${t}`, `M2:1@${t}`];
  assert.deepEqual(q(true), tied, 'DESC: equal timestamps break by conditionId, outcomeIndex ascending');
  assert.deepEqual(q(false), tied, 'ASC');
  await s.close();
});
