/**
 * The price of a position (queries/wallets/position-prices.ts), over a stand-in for the engine's published
 * books and last trades: every source in order (resolution, the shared current-price rule, the seed, 0),
 * a book parsed once per snapshot version, a row re-priced only when its inputs were replaced (and not
 * asked for its last trade while its book is tight), and market facts re-read when the projection says
 * they changed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ViewStore } from '../../../src/projections/projector.ts';
import { WalletViewChanges, type MarketFacts, type PositionState } from '../../../src/projections/wallets.ts';
import type { MarketRec } from '../../../src/projections/catalog/catalog-index.ts';
import { LiveRow } from '../../../src/queries/wallets/live-row.ts';
import { marketMetaOf } from '../../../src/queries/wallets/market-meta.ts';
import { PositionPrices, type LivePrices } from '../../../src/queries/wallets/position-prices.ts';

const U = 1_000_000;
const C = '0x' + '34'.repeat(32);
const seeded = marketMetaOf(C, { question: 'q', outcomes: ['Yes', 'No'], outcomePrices: ['0.33', '0.67'] } as unknown as MarketRec, undefined, Infinity, 0);
const unseeded = marketMetaOf(C, undefined, undefined, Infinity, 0);

function fixture() {
  const facts: { value: MarketFacts | undefined; reads: number } = { value: { seq: 1, tokenIds: ['7', '8'], negRisk: false, winner: -1 }, reads: 0 };
  const views = {
    get: () => {
      facts.reads++;
      return facts.value;
    },
  } as unknown as ViewStore;
  const changes = new WalletViewChanges();
  let parses = 0;
  const books = new Map<string, { version: number; json: string }>();
  const lasts = new Map<string, { pricePips: number }>();
  let lastReads = 0;
  const live: LivePrices = {
    bookSnapshot: (t) => books.get(t),
    lastTradePrice: (t) => {
      lastReads++;
      return lasts.get(t);
    },
  };
  const publish = (t: string, bid?: string, ask?: string) => {
    const version = (books.get(t)?.version ?? 0) + 1;
    const text = JSON.stringify({ bids: bid === undefined ? [] : [{ price: '0.01', size: '1' }, { price: bid, size: '1' }], asks: ask === undefined ? [] : [{ price: ask, size: '1' }] });
    // A getter, to count how often a body is read (parsed).
    books.set(t, {
      version,
      get json() {
        parses++;
        return text;
      },
    });
  };
  const trade = (t: string, pricePips: number) => lasts.set(t, { pricePips });
  return { facts, changes, prices: new PositionPrices(views, changes, live), publish, trade, counts: () => ({ parses, lastReads }) };
}

test('every source in order: tight midpoint, last trade past 0.10, wide midpoint, seed, 0, and 1 / 0 once resolved', () => {
  const { facts, changes, prices, publish, trade } = fixture();
  const cur = (meta = seeded, o: 0 | 1 = 0) => prices.current(C, meta, o);
  publish('7', '0.5', '0.6');
  assert.equal(cur(), 550_000, 'tight midpoint');
  trade('7', 4_700);
  assert.equal(cur(), 550_000, 'tight midpoint, whatever the last trade');
  publish('7', '0.4', '0.6');
  assert.equal(cur(), 470_000, 'spread 0.20: the last trade');
  publish('7', '0.4', '0.501');
  assert.equal(cur(), 470_000, 'spread 0.101: still the last trade');
  publish('8', '0.3', '0.65');
  assert.equal(cur(seeded, 1), 475_000, 'wide book, never traded: the wide midpoint');
  publish('8');
  assert.equal(cur(seeded, 1), 670_000, 'no book, no trade: the seed');
  assert.equal(cur(unseeded, 1), 0, 'no seed either: 0');
  facts.value = { ...facts.value!, winner: 1 };
  changes.markets++;
  assert.deepEqual([cur(seeded, 0), cur(seeded, 1)], [0, U], 'resolved: 0 and 1');
  facts.value = undefined;
  changes.markets++;
  assert.equal(cur(seeded, 0), 330_000, 'a market the positions never saw: its seed');
});

function row(token: string | undefined, facts: MarketFacts | undefined, meta = seeded): LiveRow {
  const st: PositionState = { seq: 1, size: 2 * U, avg: 400_000, bought: 2 * U, realized: 0, first: 0, last: 0, closedAt: 0, closePrice: 0 };
  return new LiveRow(C, 0, st, meta, facts, token, false, false);
}

test('a row is re-priced only when its book or last trade was replaced, and its last trade is not read while its book is tight', () => {
  const { facts, prices, publish, trade, counts } = fixture();
  publish('7', '0.5', '0.56');
  const r = row('7', facts.value);
  prices.priceNew(r);
  r.compute();
  assert.deepEqual([r.cur, r.tight, r.cv], [530_000, true, 1_060_000]);
  const before = counts();
  assert.equal(prices.refresh(r), false);
  assert.equal(counts().lastReads, before.lastReads, 'tight and unchanged: no last-trade read');
  trade('7', 9_000);
  assert.equal(prices.refresh(r), false, 'a new last trade does not move a tight book\'s price');
  publish('7', '0.3', '0.6');
  assert.equal(prices.refresh(r), true, 'the book widened: the last trade prices it');
  assert.deepEqual([r.cur, r.tight, r.cv, r.json], [900_000, false, 1_800_000, undefined], 'numbers recomputed, text to be written again');
  assert.equal(prices.refresh(r), false, 'same inputs: nothing moved');
  trade('7', 9_100);
  assert.equal(prices.refresh(r), true, 'a new last trade moves a wide book\'s price');
  assert.equal(r.cur, 910_000);
});

test('a snapshot is parsed once per version, whatever the rows priced from it', () => {
  const { facts, prices, publish, counts } = fixture();
  publish('7', '0.2', '0.25');
  const rows = [row('7', facts.value), row('7', facts.value), row('7', facts.value)];
  for (const r of rows) prices.priceNew(r);
  prices.current(C, seeded, 0);
  assert.equal(counts().parses, 1);
  publish('7', '0.21', '0.25');
  for (const r of rows) prices.refresh(r);
  assert.equal(counts().parses, 2);
  assert.deepEqual(rows.map((r) => r.cur), [230_000, 230_000, 230_000]);
});

test('rows without a live token are priced from their resolution or seed, and never re-priced', () => {
  const { prices } = fixture();
  const resolved = row(undefined, { seq: 1, tokenIds: ['7', '8'], negRisk: false, winner: 0 });
  prices.priceNew(resolved);
  assert.equal(resolved.cur, U);
  const unknown = row(undefined, undefined);
  prices.priceNew(unknown);
  assert.equal(unknown.cur, 330_000);
  assert.equal(prices.refresh(resolved), false);
  assert.equal(prices.refresh(unknown), false);
});

test('market facts are read once until the projection reports a change', () => {
  const { facts, changes, prices } = fixture();
  prices.marketFacts(C);
  prices.marketFacts(C);
  assert.equal(facts.reads, 1);
  changes.markets++;
  prices.marketFacts(C);
  assert.equal(facts.reads, 2);
});
