/**
 * The wire forms of catalog records: each built form passes its response schema, prices follow the
 * documented precedence, and the short forms agree with the book form.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { EventListItem, EventSummary, MarketBook, MarketCatalog, SamplingMarket, SimplifiedMarket, Tag } from '../../../src/edge/schemas/catalog.ts';
import { eventListItem, eventSummary, marketBook, marketCatalog, samplingMarket, simplifiedMarket, tagForm, tokenPrice } from '../../../src/queries/catalog/forms.ts';
import type { EventRec, MarketRec, TagRec } from '../../../src/projections/catalog/catalog-index.ts';

const at = '2026-01-01T00:00:00.000Z';
const tag: TagRec = { id: '3', label: 'Crypto', slug: 'crypto', requiresTranslation: false, createdAt: at, updatedAt: at };
const event: EventRec = {
  id: '7', ticker: 'e', slug: 'e', title: 'E?', description: 'd', resolutionSource: '', image: '', icon: '', startDate: at, creationDate: at, endDate: at,
  createdAt: at, updatedAt: at, active: true, closed: false, archived: false, negRisk: false, creator: '', tagIds: ['3'], seriesIds: [], marketIds: ['9'], eventMetadata: {},
};
const market: MarketRec = {
  id: '9', eventId: '7', question: 'Q?', conditionId: '0x' + '1'.repeat(64), questionID: '', slug: 'q', resolutionSource: '', image: '', icon: '', description: 'd',
  outcomes: ['Yes', 'No'], clobTokenIds: ['11', '12'], outcomePrices: ['0.3', '0.7'], startDate: at, endDate: at, createdAt: at, updatedAt: at,
  active: true, closed: false, archived: false, enableOrderBook: true, acceptingOrders: true, acceptingOrdersTimestamp: at, orderPriceMinTickSize: '0.01',
  orderMinSize: 5_000_000, negRisk: false, negRiskMarketID: '', negRiskRequestID: '', makerBaseFee: 0, takerBaseFee: 100, rewardsMinSize: 50, rewardsMaxSpread: 3.5,
  clobRewards: [{ assetAddress: '0x' + '0'.repeat(40), rewardsDailyRate: 10 }], creator: '', marketMakerAddress: '', gameStartTime: '', notificationsEnabled: false,
  groupItemTitle: '', rawMetadata: {}, winner: -1, resolvedAt: '',
};
const live = (t: string) => (t === '11' ? 0.45 : undefined);

test('each form passes its schema', () => {
  const check = (schema: Parameters<typeof Value.Check>[0], v: unknown) => assert.ok(Value.Check(schema, v), JSON.stringify([...Value.Errors(schema, v)].slice(0, 2)));
  check(Tag, tagForm(tag));
  check(EventSummary, eventSummary(event));
  check(EventListItem, eventListItem(event, [tagForm(tag)]));
  check(MarketCatalog, marketCatalog(market, live));
  check(MarketBook, marketBook(market, live, ['Crypto']));
  check(SimplifiedMarket, simplifiedMarket(market, live));
  check(SamplingMarket, samplingMarket(market, event));
  check(SamplingMarket, samplingMarket(market, undefined));
});

test('token prices: resolved 1/0, else live, else the seed, else 0', () => {
  assert.equal(tokenPrice(market, 0, live), 0.45);
  assert.equal(tokenPrice(market, 1, live), 0.7);
  assert.equal(tokenPrice({ ...market, outcomePrices: [] }, 1, live), 0);
  assert.equal(tokenPrice({ ...market, winner: 1 }, 1, live), 1);
  assert.equal(tokenPrice({ ...market, winner: 1 }, 0, live), 0);
  assert.equal(marketCatalog(market, live).outcomePrices, '["0.45","0.7"]');
});

test('the book form in units and strings of the platform; the short form is its subset', () => {
  const b = marketBook(market, live, ['Crypto']);
  assert.equal(b.minimum_order_size, 5);
  assert.equal(b.minimum_tick_size, 0.01);
  assert.deepEqual(b.tags, ['Crypto']);
  assert.deepEqual(b.tokens.map((t) => [t.token_id, t.outcome, t.price, t.winner]), [['11', 'Yes', 0.45, false], ['12', 'No', 0.7, false]]);
  const s = simplifiedMarket(market, live);
  assert.deepEqual(s, { condition_id: b.condition_id, rewards: b.rewards, tokens: b.tokens, active: true, closed: false, archived: false, accepting_orders: true });
});

test('sampling status: resolved, closed, paused or active', () => {
  assert.equal(samplingMarket({ ...market, winner: 0, closed: true }, event).status, 'resolved');
  assert.equal(samplingMarket({ ...market, closed: true }, event).status, 'closed');
  assert.equal(samplingMarket({ ...market, acceptingOrders: false }, event).status, 'paused');
  assert.equal(samplingMarket(market, event).status, 'active');
  assert.deepEqual(samplingMarket(market, undefined).event, { id: '', slug: '', title: '', ticker: '', description: '' });
});
