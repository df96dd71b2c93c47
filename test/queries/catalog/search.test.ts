/** searchEvents and searchTags on a small catalog: matching, ranking, intersection, creators, tag order. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../../src/journal/env.ts';
import { CatalogWriter } from '../../../src/projections/catalog.ts';
import { searchEvents, searchTags } from '../../../src/queries/catalog/search.ts';
import { ManualClock } from '../../../src/runtime/clock.ts';
import type { EventInput } from '../../../src/edge/schemas/admin.ts';

const dir = mkdtempSync(join(tmpdir(), 'pm-search-'));
let store: Store;
const cond = (n: number) => '0x' + n.toString(16).padStart(64, '0');
const ev = (id: number, title: string, extra: Partial<EventInput> = {}): EventInput => ({
  id,
  title,
  endDate: '2027-01-01',
  markets: [{ question: `${title} (market)`, conditionId: cond(id) }],
  ...extra,
});

before(async () => {
  store = openStore({ dataDir: dir });
  const writer = new CatalogWriter(store, new ManualClock(Date.UTC(2026, 0, 1)));
  const o = await writer.upsertEvents([
    ev(1, 'Bitcoin above 100k', { tags: [{ label: 'Bitcoin' }] }),
    ev(2, 'Bitcoin halving delayed', { closed: true }),
    ev(3, 'Bitcoiners rally in Lisbon'),
    ev(4, 'Ethereum above 5k', { creator: 'site-a', tags: [{ label: 'Bitcoin ETF' }, { label: 'Crypto' }] }),
    ev(5, 'Bitcoin above 200k', { creator: 'site-a' }),
  ]);
  assert.ok(o.ok, JSON.stringify(!o.ok && o.errors));
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test('every word must match (as a prefix); whole words and open events rank first; total counts all matches', () => {
  const all = searchEvents(store, ['bitcoin'], undefined, 10);
  assert.equal(all.total, 5, 'event 4 by its tag');
  assert.deepEqual(new Set(all.ids), new Set([1, 2, 3, 4, 5]));
  assert.ok(all.ids.indexOf(3) > all.ids.indexOf(1) && all.ids.indexOf(3) > all.ids.indexOf(5), 'a prefix match ranks below whole-word ones');
  assert.ok(all.ids.indexOf(2) > all.ids.indexOf(1), 'closed below open at the same score');
  assert.deepEqual(searchEvents(store, ['bitcoin', 'above'], undefined, 10).ids.sort(), [1, 4, 5]);
  assert.deepEqual(searchEvents(store, ['halving', 'bitcoin'], undefined, 10).ids, [2]);
  assert.deepEqual(searchEvents(store, ['bitcoin', 'zzz'], undefined, 10), { ids: [], total: 0 });
  assert.deepEqual(searchEvents(store, ['above'], 'site-a', 10).ids.sort(), [4, 5]);
  const top = searchEvents(store, ['bitcoin'], undefined, 2);
  assert.deepEqual(top, { ids: all.ids.slice(0, 2), total: 5 }, 'the best k of the same order');
});

test('tags: every word matches the label; the exact label first; event counts per creator', () => {
  const hits = searchTags(store, ['bitcoin'], 'Bitcoin', undefined);
  assert.deepEqual(hits.map((t) => [t.label, t.event_count]), [['Bitcoin', 1], ['Bitcoin ETF', 1]]);
  assert.deepEqual(searchTags(store, ['bitcoin', 'etf'], 'bitcoin etf', undefined).map((t) => t.label), ['Bitcoin ETF']);
  assert.deepEqual(searchTags(store, ['bitcoin'], 'bitcoin', 'site-a').map((t) => t.label), ['Bitcoin ETF']);
  assert.deepEqual(searchTags(store, ['nothing'], 'nothing', undefined), []);
});
