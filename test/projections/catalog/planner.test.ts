/**
 * planUpsert on a store: tags and series as references or definitions (one planned record per id, a
 * second definition must agree), new ids above the request's explicit ones, and a market's identity
 * and status rules. Writes nothing.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../../src/journal/env.ts';
import { explicitIdFloors, planUpsert, summarize } from '../../../src/projections/catalog/planner.ts';
import type { EventInput } from '../../../src/edge/schemas/admin.ts';

const dir = mkdtempSync(join(tmpdir(), 'pm-plan-'));
const store = openStore({ dataDir: dir });
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});
const NOW = '2026-06-01T00:00:00.000Z';
const cond = (n: number) => '0x' + n.toString(16).padStart(64, '0');
type Ev = Omit<EventInput, 'endDate'> & { endDate?: string };
const withEnd = (inputs: Ev[]): EventInput[] => inputs.map((e) => ({ endDate: '2027-01-01', ...e }));
const plan = (inputs: Ev[]) => planUpsert(store, withEnd(inputs), NOW);

test('tags and series: definitions planned once per id, references checked, problems named by path', () => {
  const p = plan([
    {
      title: 'One',
      tags: [{ label: 'Crypto' }, { slug: 'crypto' }, { slug: 'missing' }, {}, { label: '!!!' }],
      series: [{ title: 'Daily BTC' }, { id: 40 }, { slug: 'daily-btc', ticker: 't' }],
      markets: [{ question: 'q?', conditionId: cond(1) }],
    },
    { title: 'Two', tags: [{ label: 'Crypto', slug: 'crypto', requiresTranslation: true }] },
  ]);
  assert.deepEqual([...p.tags.values()].map((t) => [t.next.id, t.next.slug, t.path]), [['1', 'crypto', '[0].tags[0]']]);
  assert.deepEqual([...p.series.values()].map((s) => [s.next.id, s.next.slug, s.next.ticker]), [['41', 'daily-btc', 'daily-btc']]);
  assert.deepEqual(p.errors, [
    { path: '[0].tags[3]', message: 'a tag needs an id, a slug or a label' },
    { path: '[0].tags[4].slug', message: 'cannot be derived from the label: give a slug' },
    { path: '[0].series[2].title', message: 'is required' },
    { path: '[1].tags[0]', message: 'tag 1 is defined differently at [0].tags[0]' },
    { path: '[0].tags[2]', message: 'tag with slug missing does not exist' },
    { path: '[0].series[1]', message: 'series 40 does not exist' },
  ]);
});

test('explicit ids raise the floor of new ids; the summary counts what would be created', () => {
  const inputs = withEnd([{ title: 'A', markets: [{ question: 'a?', conditionId: cond(2) }] }, { id: 7, title: 'B', markets: [{ id: 30, question: 'b?', conditionId: cond(3) }] }]);
  assert.deepEqual(explicitIdFloors(inputs), { event: 8, market: 31 });
  const p = plan(inputs);
  assert.deepEqual(p.errors, []);
  assert.deepEqual(p.eventOrder, ['8', '7']);
  assert.deepEqual([...p.markets.keys()], ['31', '30']);
  assert.deepEqual(summarize(p).events, { created: 2, updated: 0, unchanged: 0 });
});

test('a market: the condition id is required or derived, neg-risk and creator follow the event, a closed market may not be told to take orders', () => {
  const p = plan([
    {
      title: 'C',
      negRisk: true,
      markets: [
        { question: 'no id?' },
        { question: 'derived?', questionID: cond(9) },
        { question: 'mismatch?', conditionId: cond(4), negRisk: false, creator: 'other' },
        { question: 'closed?', conditionId: cond(5), closed: true, acceptingOrders: true },
        { question: 'open?', conditionId: cond(6) },
      ],
    },
  ]);
  const markets = [...p.markets.values()].map((m) => m.next);
  assert.equal(markets[0].conditionId.length, 66);
  assert.equal(markets[0].questionID, cond(9));
  assert.deepEqual(markets.map((m) => [m.question, m.negRisk, m.closed, m.acceptingOrders]), [
    ['derived?', true, false, true],
    ['mismatch?', false, false, true],
    ['closed?', true, true, true],
    ['open?', true, false, true],
  ]);
  assert.equal(markets[3].acceptingOrdersTimestamp, NOW);
  assert.equal(markets[1].negRiskMarketID, '');
  assert.ok([0, 2, 3].every((i) => markets[i].negRiskMarketID === markets[0].negRiskMarketID && markets[0].negRiskMarketID !== ''));
  assert.deepEqual(p.errors, [
    { path: '[0].markets[0].conditionId', message: 'is required (or give questionID to derive it)' },
    { path: '[0].markets[2].negRisk', message: "must equal the event's negRisk (true)" },
    { path: '[0].markets[2].creator', message: `must equal the event's creator ("")` },
    { path: '[0].markets[3].acceptingOrders', message: 'a market accepts orders only when it is active, not closed, not archived, not resolved and has an order book' },
  ]);
  assert.equal([...store.catalog.getKeys({})].length, 0, 'planning writes nothing');
});
