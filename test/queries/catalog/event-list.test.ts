/**
 * eventListIds against a brute-force evaluation over every event of a small synthetic catalog: filters
 * (status, tags by slug and id, series, creator, slug), default and explicit orders with leading flags,
 * offsets and limits, and unknown tags or series matching nothing.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../../src/journal/env.ts';
import { catalogKey, catalogRange } from '../../../src/journal/keys.ts';
import { CatalogWriter } from '../../../src/projections/catalog.ts';
import { EVENT_COLUMNS, compareFull, statusCode, statusCodesFor, type EventRec, type OrderTerm, type TagRec } from '../../../src/projections/catalog/catalog-index.ts';
import { eventListIds } from '../../../src/queries/catalog/event-list.ts';
import type { EventListParams } from '../../../src/queries/catalog/params.ts';
import { ManualClock } from '../../../src/runtime/clock.ts';
import { syntheticCatalog } from '../../../src/demo/catalog.ts';

const dir = mkdtempSync(join(tmpdir(), 'pm-events-'));
let store: Store;
let events: EventRec[];
let tags: TagRec[];
const load = (id: number) => store.catalog.get(catalogKey('event', String(id))) as EventRec;

before(async () => {
  store = openStore({ dataDir: dir });
  const writer = new CatalogWriter(store, new ManualClock(Date.UTC(2026, 0, 1)));
  const o = await writer.upsertEvents(syntheticCatalog({ events: 240, seed: 3, creatorShare: 0.4 }));
  assert.ok(o.ok);
  events = [...store.catalog.getRange(catalogRange('event'))].map((r) => r.value as EventRec);
  tags = [...store.catalog.getRange(catalogRange('tag'))].map((r) => r.value as TagRec);
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const params = (p: Partial<EventListParams>): EventListParams => ({ limit: 20, offset: 0, status: {}, tagSlugs: [], tagIds: [], order: [], ...p });

function oracle(p: EventListParams): number[] {
  const tagIds = [...p.tagIds, ...p.tagSlugs.map((s) => tags.find((t) => t.slug === s)?.id ?? 'none')];
  const codes = statusCodesFor(p.status);
  const explicit = p.order.length > 0;
  const sign = (p.ascending ?? !explicit) ? 1 : -1;
  return events
    .filter((e) => codes.includes(statusCode(e)) && tagIds.every((t) => e.tagIds.includes(t)))
    .filter((e) => (p.creator === undefined || e.creator === p.creator) && (p.slug === undefined || e.slug === p.slug))
    .filter((e) => p.seriesSlug === undefined || e.seriesIds.length > 0)
    .sort((a, b) => {
      for (const t of p.order) {
        const c = t.flag ? Number(a[t.flag]) - Number(b[t.flag]) : compareFull(t.column!.kind, t.column!.get(a), t.column!.get(b));
        if (c !== 0) return c * sign;
      }
      return (Number(a.id) - Number(b.id)) * sign;
    })
    .map((e) => Number(e.id))
    .slice(p.offset, p.offset + p.limit);
}

test('every combination of filters and orders gives the brute-force page', () => {
  const [t1, t2] = [tags[0], tags[1]];
  const orders: OrderTerm<EventRec>[][] = [
    [],
    [{ field: 'title', column: EVENT_COLUMNS.title }],
    [{ field: 'closed', flag: 'closed' }, { field: 'endDate', column: EVENT_COLUMNS.endDate }],
  ];
  let checked = 0;
  for (const order of orders)
    for (const status of [{}, { closed: false }, { active: true, archived: false }])
      for (const filter of [{}, { tagSlugs: [t1.slug] }, { tagSlugs: [t1.slug], tagIds: [t2.id] }, { creator: 'site-a' }, { seriesSlug: 'synthetic-daily' }, { tagSlugs: [t2.slug], creator: 'site-b' }])
        for (const [offset, limit] of [[0, 20], [15, 7]])
          for (const ascending of [undefined, true, false]) {
            const p = params({ order, status, offset, limit, ascending, ...filter });
            assert.deepEqual(eventListIds(store, p, load), oracle(p), JSON.stringify(p));
            checked++;
          }
  assert.equal(checked, 3 * 3 * 6 * 2 * 3);
});

test('a slug answers its one event on the first page only; unknown tags or series match nothing', () => {
  const e = events[17];
  assert.deepEqual(eventListIds(store, params({ slug: e.slug }), load), [Number(e.id)]);
  assert.deepEqual(eventListIds(store, params({ slug: e.slug, offset: 1 }), load), []);
  assert.deepEqual(eventListIds(store, params({ slug: e.slug, creator: e.creator === 'x' ? 'y' : 'x' }), load), []);
  assert.deepEqual(eventListIds(store, params({ tagSlugs: ['no-such-tag'] }), load), []);
  assert.deepEqual(eventListIds(store, params({ seriesSlug: 'no-such-series' }), load), []);
});
