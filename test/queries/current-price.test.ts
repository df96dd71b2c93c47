/**
 * The current price of a token (queries/current-price.ts), table-driven: the top of a published /book body
 * (best level last, the sentinel for an empty side and an unreadable price), and the rule every reader
 * shares (tight midpoint, last trade past a 0.10 spread, wide midpoint, nothing), at the spread's boundary
 * and with midpoints that end in half a pip.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EMPTY_TOP, NO_PRICE, WIDE_SPREAD_PIPS, currentPricePips, midpointPips, parseBookTop, tight, twoSided, type BookTop } from '../../src/queries/current-price.ts';

const level = (price: string) => ({ price, size: '10' });
const body = (bids: string[], asks: string[]) =>
  JSON.stringify({ market: '0x01', asset_id: '1', timestamp: '0', hash: '', bids: bids.map(level), asks: asks.map(level), min_order_size: '5', tick_size: '0.01', neg_risk: false, last_trade_price: '' });

test('the sentinel is 0 pips and the wide spread is 0.10', () => {
  assert.equal(NO_PRICE, 0);
  assert.equal(WIDE_SPREAD_PIPS, 1_000);
  assert.deepEqual(EMPTY_TOP, { bid: NO_PRICE, ask: NO_PRICE });
});

const tops: { name: string; bids: string[]; asks: string[]; top: BookTop }[] = [
  { name: 'both sides: the best of each is its last level', bids: ['0.1', '0.45'], asks: ['0.9', '0.55'], top: { bid: 4_500, ask: 5_500 } },
  { name: 'one level a side', bids: ['0.01'], asks: ['0.99'], top: { bid: 100, ask: 9_900 } },
  { name: 'no bids', bids: [], asks: ['0.6'], top: { bid: NO_PRICE, ask: 6_000 } },
  { name: 'no asks', bids: ['0.4'], asks: [], top: { bid: 4_000, ask: NO_PRICE } },
  { name: 'an empty book', bids: [], asks: [], top: EMPTY_TOP },
  { name: 'a fourth-decimal tick', bids: ['0.0001'], asks: ['0.9999'], top: { bid: 1, ask: 9_999 } },
  { name: 'a price finer than a pip is no price', bids: ['0.12345'], asks: ['0.5'], top: { bid: NO_PRICE, ask: 5_000 } },
  { name: 'a price that is not a decimal is no price', bids: ['0.4'], asks: ['x'], top: { bid: 4_000, ask: NO_PRICE } },
];
for (const c of tops) {
  test(`parseBookTop: ${c.name}`, () => assert.deepEqual(parseBookTop(body(c.bids, c.asks)), c.top));
}

const rules: { name: string; top: BookTop; last: number; twoSided: boolean; tight: boolean; mid: number; price: number }[] = [
  { name: 'tight book: the midpoint, whatever the last trade', top: { bid: 4_500, ask: 5_500 }, last: 9_000, twoSided: true, tight: true, mid: 5_000, price: 5_000 },
  { name: 'spread exactly 0.10 is tight', top: { bid: 4_000, ask: 5_000 }, last: 9_000, twoSided: true, tight: true, mid: 4_500, price: 4_500 },
  { name: 'a tight midpoint may end in half a pip', top: { bid: 4_501, ask: 4_502 }, last: NO_PRICE, twoSided: true, tight: true, mid: 4_501.5, price: 4_501.5 },
  { name: 'spread 0.1001: the last trade', top: { bid: 4_000, ask: 5_001 }, last: 3_300, twoSided: true, tight: false, mid: 4_500.5, price: 3_300 },
  { name: 'wide book, never traded: the wide midpoint', top: { bid: 1_000, ask: 9_000 }, last: NO_PRICE, twoSided: true, tight: false, mid: 5_000, price: 5_000 },
  { name: 'only bids: the last trade', top: { bid: 4_000, ask: NO_PRICE }, last: 4_700, twoSided: false, tight: false, mid: NO_PRICE, price: 4_700 },
  { name: 'only asks: the last trade', top: { bid: NO_PRICE, ask: 6_000 }, last: 100, twoSided: false, tight: false, mid: NO_PRICE, price: 100 },
  { name: 'empty book: the last trade', top: EMPTY_TOP, last: 9_999, twoSided: false, tight: false, mid: NO_PRICE, price: 9_999 },
  { name: 'one side, never traded: no price', top: { bid: 4_000, ask: NO_PRICE }, last: NO_PRICE, twoSided: false, tight: false, mid: NO_PRICE, price: NO_PRICE },
  { name: 'empty book, never traded: no price', top: EMPTY_TOP, last: NO_PRICE, twoSided: false, tight: false, mid: NO_PRICE, price: NO_PRICE },
];
for (const c of rules) {
  test(`current price: ${c.name}`, () => {
    assert.equal(twoSided(c.top), c.twoSided, 'twoSided');
    assert.equal(tight(c.top), c.tight, 'tight');
    assert.equal(midpointPips(c.top), c.mid, 'midpoint');
    assert.equal(currentPricePips(c.top, c.last), c.price, 'current price');
  });
}

test('the rule over a parsed book is the rule over its top', () => {
  const top = parseBookTop(body(['0.2', '0.3'], ['0.8', '0.65']));
  assert.equal(currentPricePips(top, 6_100), 6_100, 'spread 0.35: last trade');
  assert.equal(currentPricePips(top, NO_PRICE), 4_750, 'never traded: the wide midpoint');
});
