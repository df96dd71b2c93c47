/**
 * The catalog module (src/edge/routes/catalog/catalog.ts) through the real app over the demo catalog: every
 * listing and lookup answers in its schema and charges its buckets; bad parameters and unknown slugs answer
 * `{type, error}` on the catalog routes and `{error}` on the order-book listings (/markets,
 * /sampling-markets, the simplified forms) and GET /markets/{condition_id}. Catalog semantics: test/e2e/catalog.test.ts, test/queries/catalog.test.ts.
 * Test harness: test/fixtures/route-contract.ts. The handlers alone, on a hand-built reader: a page is
 * built again once its tokens' snapshots are current, and a slug that could never be stored is not looked up.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isApiError } from '../../../../src/domain/errors.ts';
import type { AnyRoute } from '../../../../src/edge/pipeline/route.ts';
import { catalogRoutes, eventBySlug, marketsPage, type CatalogRouteDeps } from '../../../../src/edge/routes/catalog/catalog.ts';
import { routeRequest } from '../../../fixtures/route-request.ts';
import { assertAnswers, assertGroupError, assertServes, startRouteApp, type RouteApp, type RouteCase } from '../../../fixtures/route-contract.ts';

let h: RouteApp;
let routes: AnyRoute[];
let eventSlug: string;
let marketSlug: string;
let conditionId: string;
before(async () => {
  h = await startRouteApp();
  routes = catalogRoutes(h.app.ctx);
  eventSlug = (await h.send('GET', '/events?limit=1')).body[0].slug;
  const market = (await h.send('GET', `/events/slug/${eventSlug}`)).body.markets[0];
  marketSlug = market.slug;
  conditionId = market.conditionId;
});
after(() => h.close());

const CASES: RouteCase[] = [
  {
    route: 'GET /events',
    group: 'catalog',
    ok: () => h.send('GET', '/events?limit=5&closed=false&order=endDate&ascending=true'),
    bad: { send: () => h.send('GET', '/events?limit=-1'), status: 400, error: 'limit is invalid' },
  },
  {
    route: 'GET /events/slug/:slug',
    group: 'catalog',
    ok: () => h.send('GET', `/events/slug/${eventSlug}`),
    bad: { send: () => h.send('GET', '/events/slug/no-such-event'), status: 404, error: 'slug not found' },
  },
  {
    route: 'GET /markets/slug/:slug',
    group: 'catalog',
    ok: () => h.send('GET', `/markets/slug/${marketSlug}`),
    bad: { send: () => h.send('GET', '/markets/slug/no-such-market'), status: 404, error: 'slug not found' },
  },
  {
    route: 'GET /public-search',
    group: 'catalog',
    ok: () => h.send('GET', '/public-search?q=bitcoin'),
    bad: { send: () => h.send('GET', '/public-search'), status: 400, error: 'q is required' },
  },
  {
    route: 'GET /tags',
    group: 'catalog',
    ok: () => h.send('GET', '/tags?limit=3'),
    bad: { send: () => h.send('GET', '/tags?order=nope'), status: 400, error: 'order is invalid' },
  },
  {
    route: 'GET /markets',
    group: 'clob',
    ok: () => h.send('GET', '/markets'),
    bad: { send: () => h.send('GET', '/markets?next_cursor=not-a-cursor'), status: 400, error: 'invalid next_cursor' },
  },
  {
    route: 'GET /markets/:condition_id',
    group: 'clob',
    ok: async () => {
      const r = await h.send('GET', `/markets/${conditionId}`);
      assert.equal(r.body.condition_id, conditionId.toLowerCase());
      assert.equal(r.body.market_slug, marketSlug);
      return r;
    },
    bad: { send: () => h.send('GET', `/markets/0x${'0'.repeat(64)}`), status: 404, error: 'market not found' },
  },
  {
    route: 'GET /simplified-markets',
    group: 'clob',
    ok: () => h.send('GET', '/simplified-markets'),
    bad: { send: () => h.send('GET', '/simplified-markets?next_cursor=not-a-cursor'), status: 400, error: 'invalid next_cursor' },
  },
  {
    route: 'GET /sampling-simplified-markets',
    group: 'clob',
    ok: async () => {
      const r = await h.send('GET', '/sampling-simplified-markets');
      const sampling = h.app.ctx.catalog.read.samplingRecords().map((m) => m.conditionId);
      assert.ok(sampling.length > 0);
      assert.deepEqual(r.body.data.map((m: { condition_id: string }) => m.condition_id), sampling, 'the sampling markets, in the short form');
      return r;
    },
    bad: { send: () => h.send('GET', '/sampling-simplified-markets?next_cursor=LTE'), status: 400, error: 'invalid next_cursor' },
  },
  {
    route: 'GET /sampling-markets',
    group: 'clob',
    ok: () => h.send('GET', '/sampling-markets'),
    bad: { send: () => h.send('GET', '/sampling-markets?next_cursor=not-a-cursor'), status: 400, error: 'invalid next_cursor' },
  },
];

test('the module serves exactly its ten routes: five in the catalog group, the order-book listings and GET /markets/{condition_id} in clob', () => {
  assertServes(routes, CASES);
});

for (const c of CASES) {
  test(`${c.route} answers in its schema and charges its buckets`, async () => {
    await assertAnswers(h, routes, c);
  });
}

for (const c of CASES.filter((x) => x.bad)) {
  test(`${c.route}: a bad request answers in the ${c.group} form`, async () => {
    const bad = c.bad!;
    assertGroupError(c.group, await bad.send(), bad.status, bad.error);
  });
}

test('the handlers on a hand-built reader: live pages, slugs checked before any read', async () => {
  const unused = () => assert.fail('not read by these handlers');
  let builds = 0;
  const looked: string[] = [];
  const read: CatalogRouteDeps['read'] = {
    listEventsJson: unused,
    marketBySlug: unused,
    search: unused,
    listTags: unused,
    marketBookByCondition: unused,
    simplifiedPage: unused,
    samplingPage: unused,
    eventBySlug: (slug) => (looked.push(slug), undefined),
    marketsPage: (offset) => (builds++, { data: [{ tokens: [{ token_id: `${offset}1` }, { token_id: `${offset}2` }] }] as never, more: true }),
  };
  const waited: string[][] = [];
  const marketData = { ensureSnapshots: (ids: readonly string[]) => (waited.push([...ids]), Promise.resolve()) };
  const page = await marketsPage({ read, marketData }, routeRequest({ query: {} }));
  assert.equal(builds, 2, 'built again once the snapshots hold every acknowledged order');
  assert.deepEqual(waited, [['01', '02']]);
  assert.deepEqual({ ...page, data: undefined }, { data: undefined, next_cursor: 'MQ==', limit: 500, count: 1 });
  builds = 0;
  await marketsPage({ read }, routeRequest({ query: {} }));
  assert.equal(builds, 1, 'without market data, built once');
  await assert.rejects(marketsPage({ read }, routeRequest({ query: { next_cursor: '%%%' } })), (e) => isApiError(e) && e.message === 'invalid next_cursor');

  const slugReq = (slug: string) => routeRequest({ params: { slug }, query: {} });
  assert.throws(() => eventBySlug({ read }, slugReq('%E0%A4%A')), (e) => isApiError(e) && e.spec.code === 'PM_ERR_CATALOG_SLUG');
  assert.throws(() => eventBySlug({ read }, slugReq('a'.repeat(5000))), (e) => isApiError(e) && e.spec.code === 'PM_ERR_CATALOG_SLUG');
  assert.deepEqual(looked, [], 'never looked up');
  assert.throws(() => eventBySlug({ read }, slugReq('some-event')), (e) => isApiError(e) && e.spec.code === 'PM_ERR_CATALOG_SLUG');
  assert.deepEqual(looked, ['some-event']);
});
