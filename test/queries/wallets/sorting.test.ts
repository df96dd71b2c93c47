/**
 * The orders of a view's rows (queries/wallets/sorting.ts): every sort in both directions with the
 * documented tie-break (ord ascending whatever the direction, rows without an end date last), and
 * RowOrders kept exact while prices move (moved rows merged back, or a fresh sort past an eighth of the
 * rows, repeated rows included) and while metadata changes, compared with a full sort every time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLOSED_SORTS, POSITION_SORTS, type ClosedSort, type PositionSort } from '../../../src/edge/schemas/wallets.ts';
import type { MarketRec } from '../../../src/projections/catalog/catalog-index.ts';
import type { PositionState } from '../../../src/projections/wallets.ts';
import { LiveRow } from '../../../src/queries/wallets/live-row.ts';
import { marketMetaOf } from '../../../src/queries/wallets/market-meta.ts';
import { PRICE_SORTS, RowOrders, comparator } from '../../../src/queries/wallets/sorting.ts';

const U = 1_000_000;
let seed = 7;
const rnd = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return Math.floor((seed / 2147483648) * n);
};

const TITLES = ['apple', 'Apple', 'banana', 'cherry', 'apple'];
const END_DATES = ['2026-03-01T00:00:00.000Z', '', '2025-01-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'];

function metaOf(i: number, title = TITLES[i % TITLES.length]) {
  const m = { question: title, slug: '', icon: '', endDate: END_DATES[i % END_DATES.length], outcomes: ['Yes', 'No'], outcomePrices: [], negRisk: false } as unknown as MarketRec;
  return marketMetaOf('0x' + i.toString(16).padStart(64, '0'), m, undefined, Infinity, 0);
}

/** `n` rows in (conditionId, outcome) order with few distinct values, so that every sort has ties. */
function rowsOf(n: number, open: boolean): LiveRow[] {
  const rows: LiveRow[] = [];
  for (let i = 0; i < n; i++) {
    const st: PositionState = {
      seq: i,
      size: open ? (1 + rnd(4)) * U : 0,
      avg: (1 + rnd(5)) * 100_000,
      bought: (1 + rnd(4)) * U,
      realized: (rnd(5) - 2) * 100_000,
      first: 0,
      last: 1_000 * (1 + rnd(3)),
      closedAt: open ? 0 : 1_000 * (1 + rnd(3)) + rnd(999),
      closePrice: open ? 0 : rnd(3) * 500_000,
    };
    const r = new LiveRow('0x' + i.toString(16).padStart(64, '0'), (i % 2) as 0 | 1, st, metaOf(i >> 1), undefined, open ? `t${i}` : undefined, false, false);
    if (open) r.cur = rnd(3) * 250_000;
    r.compute();
    r.ord = i;
    rows.push(r);
  }
  return rows;
}

const ids = (rows: readonly LiveRow[]) => rows.map((r) => r.ord);
const fullSort = (rows: readonly LiveRow[], sortBy: PositionSort | ClosedSort, descending: boolean) => ids([...rows].sort(comparator(sortBy, descending)));

/** The number each numeric sort orders by, read independently of the comparators. */
const KEY: Partial<Record<PositionSort | ClosedSort, (r: LiveRow) => number>> = {
  CURRENT: (r) => r.cv,
  INITIAL: (r) => r.iv,
  TOKENS: (r) => r.size,
  CASHPNL: (r) => r.cash,
  PERCENTPNL: (r) => r.pct,
  PRICE: (r) => r.cur,
  AVGPRICE: (r) => r.avg,
  REALIZEDPNL: (r) => r.realized,
  TIMESTAMP: (r) => r.timestamp,
};

test('numeric sorts order by their key in the requested direction; equal keys keep ord ascending both ways', () => {
  const open = rowsOf(40, true);
  const closed = rowsOf(40, false);
  for (const [rows, sorts] of [[open, POSITION_SORTS], [closed, CLOSED_SORTS]] as const) {
    for (const sortBy of sorts) {
      const key = KEY[sortBy];
      if (key === undefined) continue;
      for (const descending of [true, false]) {
        const sorted = [...rows].sort(comparator(sortBy, descending));
        let ties = 0;
        for (let i = 1; i < sorted.length; i++) {
          const [a, b] = [key(sorted[i - 1]), key(sorted[i])];
          if (a === b) {
            ties++;
            assert.ok(sorted[i - 1].ord < sorted[i].ord, `${sortBy} ${descending}: tie at ${i}`);
          } else assert.ok(descending ? a > b : a < b, `${sortBy} ${descending}: ordered at ${i}`);
        }
        assert.ok(ties > 0, `${sortBy}: the rows have ties to break`);
      }
    }
  }
});

test('TITLE compares case-insensitively first, then by case; RESOLVING puts rows without an end date last both ways', () => {
  const rows = rowsOf(10, true);
  const titles = (desc: boolean) => [...rows].sort(comparator('TITLE', desc)).map((r) => r.meta.title);
  assert.deepEqual(titles(false), ['Apple', 'Apple', 'apple', 'apple', 'apple', 'apple', 'banana', 'banana', 'cherry', 'cherry']);
  assert.deepEqual(titles(true), ['cherry', 'cherry', 'banana', 'banana', 'apple', 'apple', 'apple', 'apple', 'Apple', 'Apple']);
  for (const desc of [true, false]) {
    const ends = [...rows].sort(comparator('RESOLVING', desc)).map((r) => r.meta.endDate);
    assert.deepEqual(ends.slice(-2), ['', ''], `no end date last (${desc ? 'DESC' : 'ASC'})`);
    const dated = ends.slice(0, -2).map((d) => Date.parse(d));
    assert.deepEqual(dated, [...dated].sort((x, y) => (desc ? y - x : x - y)));
  }
});

test('RowOrders stays equal to a full sort while prices move: merged back, or sorted again past an eighth', () => {
  const open = rowsOf(64, true);
  const closed = rowsOf(24, false);
  const orders = new RowOrders(open, closed);
  const read = () => {
    for (const sortBy of POSITION_SORTS) for (const d of [true, false]) assert.deepEqual(ids(orders.rows(false, sortBy, d)), fullSort(open, sortBy, d), `open ${sortBy} ${d}`);
    for (const sortBy of CLOSED_SORTS) for (const d of [true, false]) assert.deepEqual(ids(orders.rows(true, sortBy, d)), fullSort(closed, sortBy, d), `closed ${sortBy} ${d}`);
  };
  read();
  const closedPrice = ids(orders.rows(true, 'PRICE', true));
  for (let round = 0; round < 200; round++) {
    // Mostly a few rows (merged), sometimes many (a fresh sort), sometimes one row twice.
    const k = round % 10 === 9 ? 20 : 1 + rnd(4);
    const moved: LiveRow[] = [];
    for (let j = 0; j < k; j++) {
      const r = open[rnd(open.length)];
      r.cur = rnd(5) * 200_000;
      r.compute();
      moved.push(r);
      if (round % 7 === 0) moved.push(r);
    }
    orders.pricesMoved(moved);
    read();
  }
  assert.deepEqual(ids(orders.rows(true, 'PRICE', true)), closedPrice, 'open rows never enter a closed order');
});

test('orders that do not read prices ignore moved rows; orders that read metadata are sorted again once told', () => {
  const open = rowsOf(16, true);
  const orders = new RowOrders(open, []);
  const tokens = orders.rows(false, 'TOKENS', true);
  const before = ids(tokens);
  const title = ids(orders.rows(false, 'TITLE', false));
  assert.ok(!PRICE_SORTS.has('TOKENS') && !PRICE_SORTS.has('TITLE'));
  open[3].cur = 990_000;
  open[3].compute();
  orders.pricesMoved([open[3]]);
  assert.equal(orders.rows(false, 'TOKENS', true), tokens, 'the same order, untouched');
  assert.deepEqual(ids(tokens), before);
  open[5].meta = metaOf(5, 'aaa first');
  assert.deepEqual(ids(orders.rows(false, 'TITLE', false)), title, 'kept until told');
  orders.metaChanged();
  const resorted = ids(orders.rows(false, 'TITLE', false));
  assert.equal(resorted[0], 5);
  assert.deepEqual(resorted, fullSort(open, 'TITLE', false));
});
