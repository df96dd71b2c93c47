/**
 * Catalog behaviour through real HTTP on loopback: every parameter, default, bound and error of
 * GET /events, /events/slug/{slug}, /markets/slug/{slug}, /public-search, /tags, /markets and
 * /sampling-markets, and every answer checked against its response schema. The catalog is the demo
 * plus 300 synthetic events posted through the admin API (over 500 markets, so the cursor has pages).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { Type, type TSchema } from '@sinclair/typebox';
import { startApp, type App } from '../../src/node/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { EventListItem, EventSlugForm, MarketWithEvents, MarketsPage, SamplingPage, SearchResult, Tag } from '../../src/edge/schemas/catalog.ts';
import { demoCatalog, syntheticCatalog, DEMO_BASE_MS } from '../../src/demo/catalog.ts';

let app: App;
let base: string;
let dataDir: string;
const synthetic = syntheticCatalog({ events: 300, seed: 3, firstId: 1000, creatorShare: 0.3 });
const demo = demoCatalog({ baseMs: DEMO_BASE_MS });
const totalEvents = demo.length + synthetic.length;
const totalMarkets = [...demo, ...synthetic].reduce((n, e) => n + (e.markets?.length ?? 0), 0);

async function get(path: string): Promise<{ status: number; body: any }> {
  const r = await fetch(base + path);
  return { status: r.status, body: await r.json() };
}

function conforms(schema: TSchema, value: unknown): void {
  if (!Value.Check(schema, value)) assert.fail(`answer does not match its schema: ${JSON.stringify([...Value.Errors(schema, value)].slice(0, 3))}`);
}

const badRequest = (param: string) => ({ type: 'bad request', error: `${param} is invalid` });

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pm-'));
  app = await startApp(testConfig({ dataDir, http: { port: 0 }, adminToken: 't', demo: false, rateLimits: { enabled: false } }), { log: silentLogger });
  base = `http://127.0.0.1:${app.port}`;
  for (const batch of [demo, synthetic.slice(0, 150), synthetic.slice(150)]) {
    const r = await fetch(base + '/admin/events', { method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: JSON.stringify(batch) });
    assert.equal(r.status, 200, await r.text());
  }
  assert.ok(totalMarkets > 500);
});

after(async () => {
  await app.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

// ---- GET /events --------------------------------------------------------------------------------

test('GET /events: default limit 100, id ascending, list form only', async () => {
  const { status, body } = await get('/events');
  assert.equal(status, 200);
  conforms(Type.Array(EventListItem), body);
  assert.equal(body.length, 100);
  const ids = body.map((e: { id: string }) => Number(e.id));
  assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
  assert.equal(ids[0], 1);
  for (const k of ['creationDate', 'markets', 'series', 'eventMetadata']) assert.ok(!(k in body[0]), `${k} must not be in the list form`);
  assert.ok(Array.isArray(body[0].tags) && body[0].tags[0].label);
});

const eventParamErrors: [string, string][] = [
  ['limit=0', 'limit'],
  ['limit=501', 'limit'],
  ['limit=abc', 'limit'],
  ['limit=1.5', 'limit'],
  ['offset=-1', 'offset'],
  ['offset=x', 'offset'],
  ['active=yes', 'active'],
  ['closed=1', 'closed'],
  ['archived=', 'archived'],
  ['ascending=maybe', 'ascending'],
  ['tag_id=abc', 'tag_id'],
  ['order=volume', 'order'],
  ['order=', 'order'],
  ['order=id,nope', 'order'],
  ['order=' + 'id,'.repeat(9) + 'id', 'order'],
];

for (const [query, param] of eventParamErrors) {
  test(`GET /events?${query} -> 400 "${param} is invalid"`, async () => {
    const { status, body } = await get(`/events?${query}`);
    assert.equal(status, 400);
    assert.deepEqual(body, badRequest(param));
  });
}

test('GET /events: limit bounds 1 and 500, offset past the end, unknown parameters ignored', async () => {
  assert.equal((await get('/events?limit=1')).body.length, 1);
  assert.equal((await get('/events?limit=500')).body.length, Math.min(500, totalEvents));
  assert.deepEqual((await get(`/events?offset=${totalEvents}`)).body, []);
  const { status, body } = await get('/events?limit=3&offset=2&foo=bar&volume_min=5');
  assert.equal(status, 200);
  assert.deepEqual(body.map((e: { id: string }) => e.id), ['3', '4', '5']);
});

test('GET /events: status filters combine', async () => {
  const all = [...demo, ...synthetic];
  const expect = (f: (e: (typeof all)[number]) => boolean) => all.filter(f).length;
  const count = async (q: string) => (await get(`/events?limit=500&${q}`)).body.length;
  assert.equal(await count('closed=true'), expect((e) => e.closed === true));
  assert.equal(await count('closed=false&active=true'), expect((e) => !e.closed && e.active !== false));
  assert.equal(await count('archived=true'), expect((e) => e.archived === true));
  assert.equal(await count('active=false&archived=false'), expect((e) => e.active === false && !e.archived));
});

test('GET /events: tag, tag_slug and tag_id select the same events; unknown tags select none', async () => {
  const bySlug = (await get('/events?limit=500&tag=crypto')).body.map((e: { id: string }) => e.id);
  assert.ok(bySlug.length > 0);
  assert.deepEqual((await get('/events?limit=500&tag_slug=crypto')).body.map((e: { id: string }) => e.id), bySlug);
  assert.deepEqual((await get('/events?limit=500&tag_id=3')).body.map((e: { id: string }) => e.id), bySlug);
  for (const e of (await get('/events?limit=500&tag=crypto')).body) assert.ok(e.tags.some((t: { slug: string }) => t.slug === 'crypto'));
  assert.deepEqual((await get('/events?tag=no-such-tag')).body, []);
  assert.deepEqual((await get('/events?tag_id=999999')).body, []);
  const both = (await get('/events?limit=500&tag=crypto&tag_id=4')).body;
  assert.ok(both.length > 0 && both.every((e: { tags: { id: string }[] }) => e.tags.some((t) => t.id === '3') && e.tags.some((t) => t.id === '4')));
});

test('GET /events: series_slug and slug', async () => {
  const series = (await get('/events?series_slug=btc-up-or-down-daily&limit=500')).body;
  assert.equal(series.length, demo.filter((e) => e.series?.length).length);
  assert.deepEqual((await get('/events?series_slug=nope')).body, []);
  const one = (await get('/events?slug=fed-decision-in-december')).body;
  assert.deepEqual(one.map((e: { slug: string }) => e.slug), ['fed-decision-in-december']);
  assert.deepEqual((await get('/events?slug=fed-decision-in-december&closed=true')).body, []);
  assert.deepEqual((await get('/events?slug=nope')).body, []);
});

test('GET /events: order by a comma-separated list, ascending or not, snake_case accepted', async () => {
  const asc = (await get('/events?order=endDate&ascending=true&limit=500')).body;
  const ends = asc.map((e: { endDate: string }) => e.endDate);
  assert.deepEqual(ends, [...ends].sort());
  const desc = (await get('/events?order=end_date&limit=500')).body.map((e: { endDate: string }) => e.endDate);
  assert.deepEqual(desc, [...ends].sort().reverse().slice(0, desc.length));
  const mixed = (await get('/events?order=closed,title&ascending=true&limit=500')).body;
  const firstClosed = mixed.findIndex((e: { closed: boolean }) => e.closed);
  assert.ok(firstClosed > 0 && mixed.slice(firstClosed).every((e: { closed: boolean }) => e.closed));
  const titles = mixed.slice(0, firstClosed).map((e: { title: string }) => e.title.toLowerCase());
  assert.deepEqual(titles, [...titles].sort());
  const byIdDesc = (await get('/events?ascending=false&limit=2')).body.map((e: { id: string }) => Number(e.id));
  assert.ok(byIdDesc[0] > byIdDesc[1]);
});

test('GET /events: creator keeps one site\'s events', async () => {
  const expected = synthetic.filter((e) => e.creator === 'site-a').length;
  const body = (await get('/events?creator=site-a&limit=500')).body;
  assert.equal(body.length, expected);
  assert.ok(body.every((e: { creator: string }) => e.creator === 'site-a'));
  const acme = (await get('/events?creator=acme-markets&tag=crypto')).body;
  assert.ok(acme.length > 0 && acme.every((e: { creator: string }) => e.creator === 'acme-markets'));
  assert.deepEqual((await get('/events?creator=nobody')).body, []);
});

// ---- slug lookups -------------------------------------------------------------------------------

test('GET /events/slug/{slug}: slug form with tags, series, markets and eventMetadata', async () => {
  const { status, body } = await get('/events/slug/bitcoin-up-or-down-2026-11-02');
  assert.equal(status, 200);
  conforms(EventSlugForm, body);
  assert.equal(body.series[0].slug, 'btc-up-or-down-daily');
  assert.equal(body.series[0].recurrence, 'daily');
  assert.equal(typeof body.eventMetadata.context, 'string');
  assert.ok(body.creationDate);
  assert.deepEqual(JSON.parse(body.markets[0].outcomes), ['Up', 'Down']);
  const tokens = JSON.parse(body.markets[0].clobTokenIds);
  assert.equal(tokens.length, 2);
  assert.ok(tokens.every((t: string) => /^\d+$/.test(t)));
});

test('GET /events/slug/{slug}: unknown, other creator, undecodable or impossible (2 KB, bad charset) slug are 404 slug not found', async () => {
  const impossible = ['/events/slug/' + 'x'.repeat(2100), '/markets/slug/' + 'y'.repeat(2100), '/events/slug/has%20space', '/markets/slug/-dash'];
  for (const path of ['/events/slug/nope', '/events/slug/fed-decision-in-december?creator=acme-markets', '/events/slug/%E0%A4%A', '/markets/slug/nope', ...impossible]) {
    const { status, body } = await get(path);
    assert.equal(status, 404, path);
    assert.deepEqual(body, { type: 'not found error', error: 'slug not found' });
  }
  assert.equal((await get('/events/slug/champions-league-final-penalties-2027?creator=acme-markets')).status, 200);
  assert.equal((await get('/events/slug/fed%2Ddecision%2Din%2Ddecember')).status, 200);
});

test('GET /markets/slug/{slug}: catalog form with the event summary', async () => {
  const { status, body } = await get('/markets/slug/fed-decision-in-december-no-change');
  assert.equal(status, 200);
  conforms(MarketWithEvents, body);
  assert.equal(body.events.length, 1);
  assert.equal(body.events[0].slug, 'fed-decision-in-december');
  for (const k of ['tags', 'markets', 'series', 'eventMetadata']) assert.ok(!(k in body.events[0]));
  assert.ok('creationDate' in body.events[0]);
  assert.equal(body.negRisk, true);
  assert.match(body.negRiskMarketID, /^0x[0-9a-f]{64}$/);
  assert.equal(body.groupItemTitle, 'No change');
  assert.equal((await get('/markets/slug/fed-decision-in-december-no-change?creator=acme-markets')).status, 404);
});

// ---- GET /public-search ----------------------------------------------------------------------------

test('GET /public-search: q is required (missing or blank)', async () => {
  for (const path of ['/public-search', '/public-search?q=', '/public-search?q=%20%20', '/public-search?limit_per_type=5']) {
    const { status, body } = await get(path);
    assert.equal(status, 400, path);
    assert.deepEqual(body, { type: 'bad request', error: 'q is required' });
  }
});

const searchParamErrors: [string, string][] = [
  ['limit_per_type=0', 'limit_per_type'],
  ['limit_per_type=501', 'limit_per_type'],
  ['limit_per_type=x', 'limit_per_type'],
  ['page=0', 'page'],
  ['page=-2', 'page'],
  ['search_tags=yes', 'search_tags'],
  ['search_profiles=1', 'search_profiles'],
  [`q=${'x'.repeat(301)}`, 'q'],
];

for (const [query, param] of searchParamErrors) {
  test(`GET /public-search?${query.slice(0, 30)} -> 400 "${param} is invalid"`, async () => {
    const { status, body } = await get(`/public-search?q=bitcoin&${query}`);
    assert.equal(status, 400);
    assert.deepEqual(body, badRequest(param));
  });
}

test('GET /public-search: ranking, pagination, tags, profiles never returned', async () => {
  const { status, body } = await get('/public-search?q=bitcoin');
  assert.equal(status, 200);
  conforms(SearchResult, body);
  assert.ok(!('profiles' in body));
  assert.ok(body.events.length > 0 && body.events.length <= 25);
  assert.deepEqual(body.tags.map((t: { slug: string }) => t.slug), ['bitcoin']);
  assert.equal(body.tags[0].event_count, demo.filter((e) => e.tags?.some((t) => t.slug === 'bitcoin')).length);
  // Title matches rank above market-question-only matches.
  assert.match(body.events[0].title, /bitcoin/i);
  const total = body.pagination.totalResults;
  const page1 = (await get('/public-search?q=bitcoin&limit_per_type=2&page=1')).body;
  const page2 = (await get('/public-search?q=bitcoin&limit_per_type=2&page=2')).body;
  assert.equal(page1.pagination.totalResults, total);
  assert.equal(page1.pagination.hasMore, true);
  assert.deepEqual([...page1.events, ...page2.events].map((e: { id: string }) => e.id), body.events.slice(0, 4).map((e: { id: string }) => e.id));
  const last = (await get(`/public-search?q=bitcoin&limit_per_type=500&page=1`)).body;
  assert.equal(last.pagination.hasMore, false);
  const noTags = (await get('/public-search?q=bitcoin&search_tags=false&search_profiles=true')).body;
  assert.deepEqual(noTags.tags, []);
  assert.ok(!('profiles' in noTags));
  const none = (await get('/public-search?q=qwertyuiop')).body;
  assert.deepEqual(none, { events: [], tags: [], pagination: { hasMore: false, totalResults: 0 } });
});

test('GET /public-search: creator scopes events and tag counts', async () => {
  const { body } = await get('/public-search?q=solana&creator=acme-markets');
  assert.deepEqual(body.events.map((e: { slug: string }) => e.slug), ['solana-etf-inflows-1b-2026']);
  assert.deepEqual((await get('/public-search?q=solana&creator=other-site')).body.events, []);
  const tags = (await get('/public-search?q=crypto&creator=acme-markets')).body.tags;
  assert.equal(tags[0].event_count, demo.filter((e) => e.creator === 'acme-markets' && e.tags?.some((t) => t.slug === 'crypto')).length);
});

// ---- GET /tags ----------------------------------------------------------------------------------

test('GET /tags: default order, limit/offset bounds, order and ascending', async () => {
  const all = (await get('/tags?limit=500')).body;
  conforms(Type.Array(Tag), all);
  assert.equal(all.length, 8 + 20);
  assert.deepEqual(all.slice(0, 2).map((t: { slug: string }) => t.slug), ['politics', 'elections']);
  assert.equal(all[0].requiresTranslation, false);
  assert.equal((await get('/tags?limit=3&offset=1')).body[0].slug, 'elections');
  const labels = (await get('/tags?order=label&ascending=true&limit=500')).body.map((t: { label: string }) => t.label.toLowerCase());
  assert.deepEqual(labels, [...labels].sort());
  for (const [q, p] of [['limit=0', 'limit'], ['limit=501', 'limit'], ['offset=-1', 'offset'], ['order=closed', 'order'], ['ascending=2', 'ascending']]) {
    const r = await get(`/tags?${q}`);
    assert.equal(r.status, 400, q);
    assert.deepEqual(r.body, badRequest(p));
  }
});

// ---- GET /markets, GET /sampling-markets -----------------------------------------------------------

test('GET /markets: the cursor walk visits every market once and ends with LTE=', async () => {
  let cursor: string | undefined;
  const seen = new Set<string>();
  const cursors: string[] = [];
  for (let i = 0; i < 10; i++) {
    const { status, body } = await get('/markets' + (cursor ? `?next_cursor=${encodeURIComponent(cursor)}` : ''));
    assert.equal(status, 200);
    conforms(MarketsPage, body);
    assert.equal(body.limit, 500);
    assert.equal(body.count, body.data.length);
    for (const m of body.data) seen.add(m.condition_id);
    cursors.push(body.next_cursor);
    cursor = body.next_cursor;
    if (cursor === 'LTE=') break;
  }
  assert.equal(cursor, 'LTE=');
  assert.deepEqual(cursors.slice(0, -1), ['NTAw'].slice(0, cursors.length - 1));
  assert.equal(seen.size, totalMarkets);
  assert.deepEqual((await get('/markets?next_cursor=MA==')).body.data[0], (await get('/markets')).body.data[0]);
  assert.deepEqual((await get('/markets?next_cursor=LTE=')).body, { data: [], next_cursor: 'LTE=', limit: 500, count: 0 });
  assert.deepEqual((await get(`/markets?next_cursor=${encodeURIComponent(Buffer.from(String(totalMarkets + 10)).toString('base64'))}`)).body.next_cursor, 'LTE=');
  for (const bad of ['xx', 'LTE', Buffer.from('-5').toString('base64'), Buffer.from('1.5').toString('base64')]) {
    const r = await get(`/markets?next_cursor=${encodeURIComponent(bad)}`);
    assert.equal(r.status, 400, bad);
    assert.deepEqual(r.body, { error: 'invalid next_cursor' });
  }
});

test('GET /markets: order-book form fields', async () => {
  const m = (await get('/markets')).body.data.find((x: { market_slug: string }) => x.market_slug === 'will-bitcoin-reach-150k-by-december-31-2026');
  assert.ok(m);
  assert.equal(m.minimum_tick_size, 0.01);
  assert.equal(m.minimum_order_size, 5);
  assert.equal(m.taker_base_fee, 100);
  assert.equal(m.maker_base_fee, 0);
  assert.equal(m.seconds_delay, 0);
  assert.equal(m.is_50_50_outcome, false);
  assert.equal(m.notifications_enabled, false);
  assert.equal(m.neg_risk, false);
  assert.equal(m.neg_risk_market_id, '');
  assert.deepEqual(m.tags, ['Crypto', 'Bitcoin']);
  assert.deepEqual(m.rewards, { rates: [{ asset_address: '0x0000000000000000000000000000000000000000', rewards_daily_rate: 30 }], min_size: 50, max_spread: 3.5 });
  assert.deepEqual(m.tokens.map((t: { outcome: string; winner: boolean }) => [t.outcome, t.winner]), [['Yes', false], ['No', false]]);
  const sum = m.tokens[0].price + m.tokens[1].price;
  assert.ok(Math.abs(sum - 1) < 1e-9, 'imported seed prices');
  assert.match(m.accepting_order_timestamp, /^\d{4}-\d{2}-\d{2}T/);
  assert.equal((await get('/markets?creator=acme-markets')).body.data.length, 2);
});

test('GET /sampling-markets: rewarded markets that accept orders, with the cursor envelope', async () => {
  const { status, body } = await get('/sampling-markets');
  assert.equal(status, 200);
  conforms(SamplingPage, body);
  const expected = [...demo, ...synthetic].flatMap((e) => (e.closed ? [] : (e.markets ?? []).filter((m) => !m.closed && (m.clobRewards?.length ?? 0) > 0)));
  assert.equal(body.data.length, expected.length);
  assert.equal(body.next_cursor, 'LTE=');
  const fed = body.data.find((m: { slug: string }) => m.slug === 'fed-decision-in-december-no-change');
  assert.equal(fed.status, 'active');
  assert.equal(fed.event.slug, 'fed-decision-in-december');
  assert.equal(typeof fed.market_id, 'number');
  assert.deepEqual(fed.outcomes, ['Yes', 'No']);
  assert.equal(fed.assets_ids.length, 2);
  assert.deepEqual(fed.raw_metadata, {});
  assert.equal((await get('/sampling-markets?next_cursor=bad')).status, 400);
});
