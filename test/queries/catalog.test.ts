/**
 * The catalog read side against an oracle: a seeded synthetic catalog (with text ties longer than the
 * index prefix, several sites, a series, closed and archived events) is loaded once; every list and
 * search answer is compared with a brute-force evaluation over all records, and every wire form is
 * checked against its TypeBox response schema.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { openStore, type Store } from '../../src/journal/env.ts';
import { catalogRange } from '../../src/journal/keys.ts';
import { CatalogWriter } from '../../src/projections/catalog.ts';
import {
  EVENT_COLUMNS,
  TAG_COLUMNS,
  compareFull,
  parseOrder,
  queryWords,
  statusCodesFor,
  statusCode,
  words,
  type EventRec,
  type MarketRec,
  type OrderTerm,
  type StatusFlag,
  type TagRec,
} from '../../src/projections/catalog/catalog-index.ts';
import { CatalogReader, MARKETS_PAGE_SIZE, type EventListParams } from '../../src/queries/catalog.ts';
import { ManualClock } from '../../src/runtime/clock.ts';
import { EventListItem, EventSlugForm, MarketBook, MarketWithEvents, SamplingMarket, SearchResult, Tag } from '../../src/edge/schemas/catalog.ts';
import { rng, syntheticCatalog } from '../../src/demo/catalog.ts';

const root = mkdtempSync(join(tmpdir(), 'pm-'));
let store: Store;
let reader: CatalogReader;
let events: EventRec[];
let markets: MarketRec[];
let tags: TagRec[];

before(async () => {
  store = openStore({ dataDir: join(root, 'main') });
  const writer = new CatalogWriter(store, new ManualClock(Date.UTC(2026, 0, 1)));
  const input = syntheticCatalog({ events: 1200, seed: 11, creatorShare: 0.3 });
  // Long titles that tie on the index's 40-character prefix and differ after it.
  for (let i = 0; i < 30; i++) input[i].title = `An extremely long shared title prefix for sorting ${String.fromCharCode(90 - (i % 26))}${i}`;
  for (let i = 0; i < input.length; i += 300) {
    const o = await writer.upsertEvents(input.slice(i, i + 300));
    assert.ok(o.ok, JSON.stringify(!o.ok && o.errors.slice(0, 3)));
  }
  reader = new CatalogReader(store, (tokenId) => (tokenId.endsWith('7') ? 0.42 : undefined));
  events = [...store.catalog.getRange(catalogRange('event'))].map((r) => r.value as EventRec);
  markets = [...store.catalog.getRange(catalogRange('market'))].map((r) => r.value as MarketRec);
  tags = [...store.catalog.getRange(catalogRange('tag'))].map((r) => r.value as TagRec);
});

after(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

function conforms(schema: TSchema, value: unknown, what: string): void {
  if (!Value.Check(schema, value)) assert.fail(`${what} does not match its schema: ${JSON.stringify([...Value.Errors(schema, value)].slice(0, 3))}`);
}

// ---- the oracle -------------------------------------------------------------------------------------

function oracleEvents(p: EventListParams): string[] {
  const tagIds = new Set(p.tagIds);
  for (const slug of p.tagSlugs) {
    const t = tags.find((x) => x.slug === slug);
    if (!t) return [];
    tagIds.add(t.id);
  }
  const series = p.seriesSlug === undefined ? undefined : p.seriesSlug === 'synthetic-daily' ? '900' : 'none';
  const codes = statusCodesFor(p.status);
  let rows = events.filter(
    (e) =>
      codes.includes(statusCode(e)) &&
      [...tagIds].every((t) => e.tagIds.includes(t)) &&
      (series === undefined || e.seriesIds.includes(series)) &&
      (p.creator === undefined || e.creator === p.creator) &&
      (p.slug === undefined || e.slug === p.slug),
  );
  const explicit = p.order.length > 0;
  const sign = (p.ascending ?? !explicit) ? 1 : -1;
  const terms: OrderTerm<EventRec>[] = explicit ? p.order : [{ field: 'id', column: EVENT_COLUMNS.id }];
  rows = rows.sort((a, b) => {
    for (const t of terms) {
      const c = t.flag ? Number(a[t.flag]) - Number(b[t.flag]) : compareFull(t.column!.kind, t.column!.get(a), t.column!.get(b));
      if (c !== 0) return c * sign;
    }
    return (Number(a.id) - Number(b.id)) * sign;
  });
  return rows.slice(p.offset, p.offset + p.limit).map((e) => e.id);
}

function oracleSearch(q: string, creator: string | undefined): string[] {
  const ws = queryWords(q);
  if (ws.length === 0) return [];
  const rows: { id: number; score: number; open: number }[] = [];
  for (const e of events) {
    if (creator !== undefined && e.creator !== creator) continue;
    const terms: [string, number][] = [];
    for (const w of words(e.title)) terms.push([w, 3]);
    for (const t of e.tagIds) for (const w of words(tags.find((x) => x.id === t)!.label)) terms.push([w, 2]);
    for (const m of e.marketIds) for (const w of words(markets.find((x) => x.id === m)!.question)) terms.push([w, 1]);
    let score = 0;
    let all = true;
    for (const w of ws) {
      let best = 0;
      for (const [term, weight] of terms) if (term.startsWith(w)) best = Math.max(best, weight + (term === w ? 0.5 : 0));
      if (best === 0) all = false;
      score += best;
    }
    if (all) rows.push({ id: Number(e.id), score, open: e.closed ? 0 : 1 });
  }
  return rows.sort((a, b) => b.score - a.score || b.open - a.open || b.id - a.id).map((r) => String(r.id));
}

// ---- GET /events --------------------------------------------------------------------------------

test('listEvents equals the oracle over random filters, orders, directions and pages', () => {
  const r = rng(5);
  const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)];
  const orders = ['', 'id', 'title', 'slug', 'ticker', 'startDate', 'endDate', 'createdAt', 'updatedAt', 'creationDate', 'end_date', 'closed,endDate', 'active,title', 'title,startDate', 'archived,closed', 'endDate,closed', 'closed'];
  const creators = [undefined, undefined, 'site-a', 'site-b', 'no-such-site'];
  const flag = () => pick([undefined, undefined, true, false]);
  for (let i = 0; i < 250; i++) {
    const order = parseOrder(pick(orders) || undefined, EVENT_COLUMNS, true)!;
    const p: EventListParams = {
      limit: pick([1, 5, 20, 100, 500]),
      offset: pick([0, 0, 3, 17, 150, 1100]),
      status: { active: flag(), closed: flag(), archived: flag() } as Partial<Record<StatusFlag, boolean>>,
      tagSlugs: r() < 0.3 ? [pick(tags).slug] : r() < 0.05 ? ['missing-tag'] : [],
      tagIds: r() < 0.2 ? [pick(tags).id] : [],
      seriesSlug: r() < 0.1 ? pick(['synthetic-daily', 'nope']) : undefined,
      slug: r() < 0.05 ? pick(events).slug : undefined,
      order,
      ascending: pick([undefined, true, false]),
      creator: pick(creators),
    };
    const got = reader.listEvents(p).map((e) => e.id);
    assert.deepEqual(got, oracleEvents(p), `case ${i}: ${JSON.stringify(p)}`);
  }
});

test('listEvents walks a large offset of one status without missing or repeating rows', () => {
  const all: string[] = [];
  for (let offset = 0; ; offset += 97) {
    const page = reader.listEvents({ limit: 97, offset, status: { closed: false }, tagSlugs: [], tagIds: [], order: [], creator: undefined });
    all.push(...page.map((e) => e.id));
    if (page.length < 97) break;
  }
  const expected = events.filter((e) => !e.closed).map((e) => e.id).sort((a, b) => Number(a) - Number(b));
  assert.deepEqual(all, expected);
});

test('event and market forms match their response schemas', () => {
  const list = reader.listEvents({ limit: 50, offset: 0, status: {}, tagSlugs: [], tagIds: [], order: [] });
  for (const e of list) conforms(EventListItem, e, 'list event');
  const slugForm = reader.eventBySlug(events[5].slug)!;
  conforms(EventSlugForm, slugForm, 'slug event');
  assert.equal(slugForm.markets.length, events[5].marketIds.length);
  const m = reader.marketBySlug(markets[3].slug)!;
  conforms(MarketWithEvents, m, 'market with events');
  assert.equal(m.events[0].id, markets[3].eventId);
  assert.deepEqual(JSON.parse(m.clobTokenIds), markets[3].clobTokenIds);
  assert.deepEqual(JSON.parse(m.outcomes), ['Yes', 'No']);
  for (const t of reader.listTags({ limit: 100, offset: 0, order: [] })) conforms(Tag, t, 'tag');
});

test('creator scoping: slug lookups of another site answer nothing', () => {
  const own = events.find((e) => e.creator === 'site-a')!;
  assert.ok(reader.eventBySlug(own.slug, 'site-a'));
  assert.equal(reader.eventBySlug(own.slug, 'site-b'), undefined);
  assert.ok(reader.eventBySlug(own.slug));
  const m = markets.find((x) => x.creator === 'site-b')!;
  assert.ok(reader.marketBySlug(m.slug, 'site-b'));
  assert.equal(reader.marketBySlug(m.slug, 'site-a'), undefined);
});

// ---- GET /tags ----------------------------------------------------------------------------------

test('listTags equals the oracle for every column and direction', () => {
  for (const name of ['', ...Object.keys(TAG_COLUMNS), 'label,id']) {
    for (const ascending of [undefined, true, false]) {
      const order = parseOrder(name || undefined, TAG_COLUMNS, false)!;
      const got = reader.listTags({ limit: 7, offset: 2, order, ascending }).map((t) => t.id);
      const explicit = order.length > 0;
      const sign = (ascending ?? !explicit) ? 1 : -1;
      const terms = explicit ? order : [{ field: 'id', column: TAG_COLUMNS.id }];
      const expected = [...tags]
        .sort((a, b) => {
          for (const t of terms) {
            const c = compareFull(t.column!.kind, t.column!.get(a), t.column!.get(b));
            if (c !== 0) return c * sign;
          }
          return (Number(a.id) - Number(b.id)) * sign;
        })
        .slice(2, 9)
        .map((t) => t.id);
      assert.deepEqual(got, expected, `order=${name} ascending=${ascending}`);
    }
  }
  assert.equal(parseOrder('volume', TAG_COLUMNS, false), undefined);
  assert.equal(parseOrder('closed', TAG_COLUMNS, false), undefined);
});

// ---- GET /public-search -------------------------------------------------------------------------

test('search equals the oracle: AND of word prefixes, weights, ties, pages, creator scope', () => {
  const queries = ['bitcoin', 'will bitcoin', 'Bitcoin record', 'tes', 'option b', 'nvidia ipo 2027', 'the', 'crypto', 'politics trade deal', 'zzzz', 'an extremely long', 'real madrid final', 'soc', '2026', 'Ünïcödé', 'a'];
  for (const q of queries) {
    for (const creator of [undefined, 'site-c']) {
      const expected = oracleSearch(q, creator);
      for (const [limit, page] of [[10, 1], [7, 3], [500, 1]] as const) {
        const res = reader.search({ q, limitPerType: limit, page, searchTags: true, creator });
        conforms(SearchResult, res, 'search result');
        assert.deepEqual(res.events.map((e) => e.id), expected.slice((page - 1) * limit, page * limit), `q=${q} creator=${creator} page=${page}`);
        const tagTotal = res.pagination.totalResults - expected.length;
        assert.ok(tagTotal >= 0);
        assert.equal(res.pagination.hasMore, expected.length > page * limit || tagTotal > page * limit);
      }
    }
  }
});

test('tag search: label words by prefix, event_count per scope, exact label first', () => {
  const res = reader.search({ q: 'soc', limitPerType: 10, page: 1, searchTags: true });
  assert.deepEqual(res.tags.map((t) => t.label), ['Soccer']);
  const soccer = tags.find((t) => t.label === 'Soccer')!;
  assert.equal(res.tags[0].event_count, events.filter((e) => e.tagIds.includes(soccer.id)).length);
  const scoped = reader.search({ q: 'soccer', limitPerType: 10, page: 1, searchTags: true, creator: 'site-a' });
  assert.equal(scoped.tags[0].event_count, events.filter((e) => e.tagIds.includes(soccer.id) && e.creator === 'site-a').length);
  assert.deepEqual(reader.search({ q: 'soccer', limitPerType: 10, page: 1, searchTags: false }).tags, []);
  const many = reader.search({ q: 'c', limitPerType: 10, page: 1, searchTags: true });
  assert.deepEqual(many.tags, [], 'a one-letter query word is not searched');
});

// ---- GET /markets, GET /sampling-markets ---------------------------------------------------------

test('the market pages walk every market once, in id order, with the documented prices', () => {
  const seen: string[] = [];
  let offset = 0;
  for (;;) {
    const page = reader.marketsPage(offset);
    for (const m of page.data) conforms(MarketBook, m, 'order-book market');
    seen.push(...page.data.map((m) => m.condition_id));
    offset += page.data.length;
    if (!page.more) break;
    assert.equal(page.data.length, MARKETS_PAGE_SIZE);
  }
  const byId = [...markets].sort((a, b) => Number(a.id) - Number(b.id));
  assert.deepEqual(seen, byId.map((m) => m.conditionId));
  const first = reader.marketsPage(0).data[0];
  const rec = byId[0];
  for (const [i, t] of first.tokens.entries()) {
    const live = t.token_id.endsWith('7') ? 0.42 : Number(rec.outcomePrices[i]);
    assert.equal(t.price, live);
  }
  const scoped = reader.marketsPage(0, 'site-b').data;
  assert.ok(scoped.length > 0 && scoped.every((m) => markets.find((x) => x.conditionId === m.condition_id)!.creator === 'site-b'));
});

test('sampling markets are exactly the accepting markets with a rewards rate', () => {
  const expected = markets
    .filter((m) => m.acceptingOrders && m.clobRewards.some((r) => r.rewardsDailyRate > 0))
    .sort((a, b) => Number(a.id) - Number(b.id))
    .map((m) => m.conditionId);
  const got: string[] = [];
  for (let offset = 0; ; ) {
    const page = reader.samplingPage(offset);
    for (const m of page.data) {
      conforms(SamplingMarket, m, 'sampling market');
      assert.equal(m.status, 'active');
    }
    got.push(...page.data.map((m) => m.condition_id));
    offset += page.data.length;
    if (!page.more) break;
  }
  assert.ok(expected.length > 0);
  assert.deepEqual(got, expected);
});

test('the serialized list equals the object list, and any catalog write invalidates the cached items', async () => {
  const p: EventListParams = { limit: 30, offset: 5, status: {}, tagSlugs: [], tagIds: [], order: parseOrder('title', EVENT_COLUMNS, true)!, ascending: true };
  assert.equal(reader.listEventsJson(p), JSON.stringify(reader.listEvents(p)));

  const own = openStore({ dataDir: join(root, 'cache') });
  try {
    const cached = new CatalogReader(own);
    const writer = new CatalogWriter(own, new ManualClock(Date.UTC(2026, 0, 1)));
    const ev = (title: string, label: string) => ({ id: '1', title, slug: 'e1', endDate: '2027-01-01', tags: [{ id: '1', label, slug: 't1' }] });
    assert.ok((await writer.upsertEvents([ev('Before', 'Old label')])).ok);
    const all: EventListParams = { limit: 10, offset: 0, status: {}, tagSlugs: [], tagIds: [], order: [] };
    assert.match(cached.listEventsJson(all), /"title":"Before".*"label":"Old label"/);
    // A second writer (as an import running beside the server would be) changes the event, then a tag.
    const other = new CatalogWriter(own, new ManualClock(Date.UTC(2026, 0, 2)));
    assert.ok((await other.upsertEvents([ev('After', 'Old label')])).ok);
    assert.match(cached.listEventsJson(all), /"title":"After"/);
    assert.ok((await other.upsertEvents([{ ...ev('After', 'New label') }])).ok);
    assert.match(cached.listEventsJson(all), /"label":"New label"/);
    const unchanged = cached.listEventsJson(all);
    assert.ok((await other.upsertEvents([{ ...ev('After', 'New label') }])).ok);
    assert.equal(cached.listEventsJson(all), unchanged);
  } finally {
    await own.close();
  }
});
