/**
 * Catalog metadata of the wallet data (queries/wallets/market-meta.ts): the fields of a market the
 * catalog holds and of one it does not (defaults, seeds, escaping), and the cache's contract: an entry is
 * read once while it lives, re-read after it expired only when the catalog was written since, stays the
 * same object when re-read unchanged, and expires at once when announced (logged for the views).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Store } from '../../../src/journal/env.ts';
import type { EventRec, MarketRec } from '../../../src/projections/catalog/catalog-index.ts';
import type { CatalogReader } from '../../../src/queries/catalog.ts';
import { META_TTL_MS, MarketMetas, marketMetaOf } from '../../../src/queries/wallets/market-meta.ts';

const C = '0x' + '12'.repeat(32);

test('a market the catalog holds: its fields, the event\'s as fallbacks, seeds in micro-USDC, text escaped once', () => {
  const m = { question: 'Über "A"', slug: 'a', icon: '', endDate: '', outcomes: ['Hi', 'Lo'], outcomePrices: ['0.25', 'bad'], negRisk: true } as unknown as MarketRec;
  const e = { slug: 'ev', icon: 'https://i/e.png', endDate: '2026-06-30T12:00:00.000Z' } as unknown as EventRec;
  const meta = marketMetaOf(C, m, e, 123, 7);
  assert.deepEqual(
    [meta.title, meta.titleLower, meta.slug, meta.eventSlug, meta.icon, meta.endDate, meta.endMs, meta.outcomes, meta.seed, meta.negRisk, meta.expiresAt, meta.generation],
    ['Über "A"', 'über "a"', 'a', 'ev', 'https://i/e.png', '2026-06-30T12:00:00.000Z', Date.UTC(2026, 5, 30, 12), ['Hi', 'Lo'], [250_000, -1], true, 123, 7],
  );
  assert.deepEqual(meta.json, {
    title: '"Über \\"A\\""',
    slug: '"a"',
    icon: '"https://i/e.png"',
    eventSlug: '"ev"',
    endDate: '"2026-06-30T12:00:00.000Z"',
    outcomes: ['"Hi"', '"Lo"'],
    conditionId: `"${C}"`,
    assets: [`"${C}:0"`, `"${C}:1"`],
  });
});

test('a market the catalog does not hold: empty texts, Yes/No, no seed, no end date', () => {
  const meta = marketMetaOf(C, undefined, undefined, 0, 0);
  assert.deepEqual([meta.title, meta.slug, meta.eventSlug, meta.icon, meta.endDate, meta.outcomes, meta.seed, meta.negRisk], ['', '', '', '', '', ['Yes', 'No'], [-1, -1], false]);
  assert.ok(Number.isNaN(meta.endMs));
  assert.deepEqual(meta.json.outcomes, ['"Yes"', '"No"']);
});

/** A catalog of one market whose title the test edits, counting reads, behind a store whose generation it sets. */
function fixture() {
  const state = { title: 'one', generation: 1, reads: 0 };
  const store = { catalog: { get: () => state.generation } } as unknown as Store;
  const catalog = {
    marketByCondition: (c: string) => {
      state.reads++;
      return c === C ? ({ question: state.title, outcomes: ['Yes', 'No'], outcomePrices: [], eventId: '1' } as unknown as MarketRec) : undefined;
    },
    event: () => undefined,
  } as unknown as CatalogReader;
  return { state, metas: new MarketMetas(store, catalog) };
}

test('an entry is read once while it lives, and re-read after it expired only when the catalog was written since', () => {
  const { state, metas } = fixture();
  const first = metas.get(C, 0);
  assert.equal(state.reads, 1);
  assert.ok(first.expiresAt >= META_TTL_MS / 2 && first.expiresAt <= META_TTL_MS, 'jittered between half and all of the lifetime');
  assert.equal(metas.get(C, first.expiresAt - 1), first);
  assert.equal(state.reads, 1, 'alive: no read');
  const later = first.expiresAt + 1;
  assert.equal(metas.get(C, later), first);
  assert.equal(state.reads, 1, 'expired, but no catalog write since: still no read');
  assert.ok(first.expiresAt > later, 'and it lives again');
  state.generation = 2;
  assert.equal(metas.get(C, first.expiresAt + 1), first, 're-read unchanged: the same object');
  assert.equal(state.reads, 2);
  state.generation = 3;
  state.title = 'two';
  const edited = metas.get(C, first.expiresAt + 1);
  assert.notEqual(edited, first);
  assert.equal(edited.title, 'two');
});

test('an announced market expires at once and is logged for the views, lowercase', () => {
  const { state, metas } = fixture();
  const first = metas.get(C, 0);
  assert.deepEqual([metas.oldestAnnounced, metas.announced], [0, 0]);
  state.generation = 2;
  state.title = 'renamed';
  metas.announce([C.toUpperCase().replace('0X', '0x'), '0x' + 'ff'.repeat(32)]);
  assert.deepEqual([metas.oldestAnnounced, metas.announced, metas.announcedAt(0), metas.announcedAt(1)], [0, 2, C, '0x' + 'ff'.repeat(32)]);
  const now = metas.get(C, 1);
  assert.notEqual(now, first);
  assert.equal(now.title, 'renamed');
});

test('the announcement log keeps its positions when it is trimmed', () => {
  const { metas } = fixture();
  const many = Array.from({ length: 100_001 }, (_, i) => '0x' + i.toString(16).padStart(64, '0'));
  metas.announce(many);
  assert.equal(metas.announced, 100_001);
  assert.ok(metas.oldestAnnounced > 0, 'the oldest half dropped');
  assert.equal(metas.announcedAt(100_000), many[100_000]);
  assert.equal(metas.announcedAt(metas.oldestAnnounced), many[metas.oldestAnnounced]);
});
