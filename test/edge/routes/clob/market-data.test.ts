/**
 * The market data module (src/edge/routes/clob/market-data.ts) through the real app, over a demo market with a
 * trade and a two-sided book: every book, price, quote, spread, live activity, market look-up, history,
 * builder-trade and builder-fee route
 * answers in its schema and charges its buckets; a bad or unknown token, side, condition id or history
 * parameter answers `{"error": "<message>"}`. The numbers: test/e2e/market-data.test.ts,
 * test/edge/market-lookups.test.ts. Test harness: test/fixtures/route-contract.ts. The handlers alone, on
 * hand-built deps: 400 before 503 without market data, history windows end at the deps' clock, builder
 * trades filter as the query and the signing builder key say, in the configured shape. GET /builder/trades
 * with a trading key's L2 headers (not builder headers) is the public read, with the public rows (issue 31).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { DEMO_WALLETS } from '../../../../src/demo/catalog.ts';
import { isApiError } from '../../../../src/domain/errors.ts';
import { isReply, type AnyRoute } from '../../../../src/edge/pipeline/route.ts';
import { builderTrades, pricesHistory } from '../../../../src/edge/routes/clob/history.ts';
import { marketDataRoutes, midpoint } from '../../../../src/edge/routes/clob/market-data.ts';
import { type MarketDataDeps } from '../../../../src/edge/routes/clob/market-data-deps.ts';
import { BUILDER_TRADES_PAGE_SIZE, type MarketDataReader } from '../../../../src/queries/market-data.ts';
import { routeRequest } from '../../../fixtures/route-request.ts';
import { assertAnswers, assertGroupError, assertServes, startRouteApp, type RouteApp, type RouteCase } from '../../../fixtures/route-contract.ts';
import { TestClient, units, type Creds } from '../../../fixtures/trading-client.ts';

let h: RouteApp;
let routes: AnyRoute[];
let yes: string;
let conditionId: string;
/** A wallet's trading key, and its read-only key. */
let trader: { address: string; trading: Creds; readonly: Creds };
/** The builder code the taker of the setup's trade named. */
const BUILDER = `0x${'b1'.repeat(32)}` as const;
/** A token id no market has. */
const UNKNOWN = '12345678901234567890';

before(async () => {
  h = await startRouteApp();
  routes = marketDataRoutes(h.app.ctx);
  const info = await TestClient.info(h.base);
  const [a, b] = [new TestClient(h.base, DEMO_WALLETS[0].privateKey, info), new TestClient(h.base, DEMO_WALLETS[1].privateKey, info)];
  for (const c of [a, b]) await c.createKey();
  const ro = (await a.call('POST', '/auth/readonly-api-key')).body as { apiKey: string; secret: string; passphrase: string };
  trader = { address: a.account.address, trading: a.creds!, readonly: ro };
  const market = h.app.ctx.catalog.read.tradingMarkets().find((m) => m.acceptingOrders && !m.negRisk)!;
  conditionId = market.conditionId;
  const [yesToken, no] = market.tokenIds;
  yes = yesToken;
  const placed = async (c: TestClient, args: Parameters<TestClient['place']>[0]) => {
    const r = await c.place(args);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.status as string;
  };
  // A trade at 0.50 (a mint), then a book of 0.40 / 0.60 on the Yes token.
  await placed(a, { tokenId: yes, side: 'BUY', makerAmount: units(5), takerAmount: units(10) });
  assert.equal(await placed(b, { tokenId: no, side: 'BUY', makerAmount: units(5), takerAmount: units(10), builder: BUILDER }), 'matched');
  assert.equal(await placed(a, { tokenId: yes, side: 'SELL', makerAmount: units(5), takerAmount: units(3) }), 'live');
  assert.equal(await placed(b, { tokenId: yes, side: 'BUY', makerAmount: units(2), takerAmount: units(5) }), 'live');
});
after(() => h.close());

const get = (path: string) => h.send('GET', path);
const post = (path: string, body: unknown) => h.send('POST', path, { body });

const CASES: RouteCase[] = [
  {
    route: 'GET /book',
    group: 'clob',
    ok: () => get(`/book?token_id=${yes}`),
    bad: { send: () => get('/book?token_id=abc'), status: 400, error: 'Invalid token id' },
  },
  {
    route: 'POST /books',
    group: 'clob',
    ok: () => post('/books', [{ token_id: yes }]),
    bad: { send: () => post('/books', { token_id: yes }), status: 400, error: 'Invalid payload' },
  },
  {
    route: 'GET /price',
    group: 'clob',
    ok: () => get(`/price?token_id=${yes}&side=BUY`),
    bad: { send: () => get(`/price?token_id=${yes}&side=UP`), status: 400, error: 'Invalid side' },
  },
  {
    route: 'POST /prices',
    group: 'clob',
    ok: () => post('/prices', [{ token_id: yes, side: 'BUY' }, { token_id: yes, side: 'SELL' }]),
    bad: { send: () => post('/prices', [{ token_id: yes, side: 'UP' }]), status: 400, error: 'Invalid side at [0]' },
  },
  {
    route: 'GET /midpoint',
    group: 'clob',
    ok: () => get(`/midpoint?token_id=${yes}`),
    bad: { send: () => get(`/midpoint?token_id=${UNKNOWN}`), status: 404, error: 'No orderbook exists for the requested token id' },
  },
  {
    route: 'POST /midpoints',
    group: 'clob',
    ok: async () => {
      const r = await post('/midpoints', [{ token_id: yes, side: 'BUY' }]);
      assert.deepEqual(r.body, { [yes]: '0.5' }, 'the 0.40 / 0.60 book');
      return r;
    },
    bad: { send: () => post('/midpoints', [{ token_id: 'abc' }]), status: 400, error: 'Invalid token id at [0]' },
  },
  {
    route: 'GET /spread',
    group: 'clob',
    ok: async () => {
      const r = await get(`/spread?token_id=${yes}`);
      assert.deepEqual(r.body, { spread: '0.2' });
      return r;
    },
    bad: { send: () => get('/spread?token_id=abc'), status: 400, error: 'Invalid token id' },
  },
  {
    route: 'POST /spreads',
    group: 'clob',
    ok: () => post('/spreads', [{ token_id: yes, side: 'SELL' }]),
    bad: { send: () => post('/spreads', [{ token_id: yes, side: 'UP' }]), status: 400, error: 'Invalid side at [0]' },
  },
  {
    route: 'GET /markets/live-activity/:condition_id',
    group: 'clob',
    ok: async () => {
      const r = await get(`/markets/live-activity/${conditionId}`);
      assert.deepEqual(r.body.map((e: { price: string; size: string }) => [e.price, e.size]), [['0.5', '10']], 'the one trade, from its taker');
      return r;
    },
    bad: { send: () => get(`/markets/live-activity/0x${'0'.repeat(64)}`), status: 404, error: 'No orderbook exists for the requested condition id' },
  },
  {
    route: 'GET /fees/builder-fees/:builder_code',
    group: 'clob',
    ok: () => get(`/fees/builder-fees/0x${'ab'.repeat(32)}`),
    bad: { send: () => get('/fees/builder-fees/0x12'), status: 400, error: 'Invalid builder code' },
  },
  {
    route: 'GET /last-trade-price',
    group: 'clob',
    ok: () => get(`/last-trade-price?token_id=${yes}`),
    bad: { send: () => get('/last-trade-price'), status: 400, error: 'Invalid token id' },
  },
  {
    route: 'POST /last-trades-prices',
    group: 'clob',
    ok: () => post('/last-trades-prices', [{ token_id: yes }]),
    bad: { send: () => post('/last-trades-prices', [{ token_id: 'x' }]), status: 400, error: 'Invalid token id at [0]' },
  },
  {
    route: 'GET /tick-size',
    group: 'clob',
    ok: () => get(`/tick-size?token_id=${yes}`),
    bad: { send: () => get(`/tick-size?token_id=${UNKNOWN}`), status: 404, error: 'No orderbook exists for the requested token id' },
  },
  {
    route: 'GET /neg-risk',
    group: 'clob',
    ok: () => get(`/neg-risk?token_id=${yes}`),
    bad: { send: () => get('/neg-risk?token_id=-1'), status: 400, error: 'Invalid token id' },
  },
  {
    route: 'GET /fee-rate',
    group: 'clob',
    ok: () => get(`/fee-rate?token_id=${yes}`),
    bad: { send: () => get(`/fee-rate?token_id=${UNKNOWN}`), status: 404 },
  },
  {
    route: 'GET /markets-by-token/:token_id',
    group: 'clob',
    ok: () => get(`/markets-by-token/${yes}`),
    bad: { send: () => get('/markets-by-token/abc'), status: 400, error: 'Invalid token id' },
  },
  {
    route: 'GET /clob-markets/:condition_id',
    group: 'clob',
    ok: () => get(`/clob-markets/${conditionId}`),
    bad: { send: () => get('/clob-markets/0x12'), status: 400, error: 'Invalid condition id' },
  },
  { route: 'GET /version', group: 'clob', ok: () => get('/version') },
  {
    route: 'GET /prices-history',
    group: 'clob',
    ok: () => get(`/prices-history?market=${yes}&interval=1d`),
    bad: { send: () => get(`/prices-history?market=${yes}&interval=2d`), status: 400, error: 'Invalid interval: expected one of 1m, 1h, 6h, 1d, 1w, max' },
  },
  {
    route: 'POST /batch-prices-history',
    group: 'clob',
    ok: () => post('/batch-prices-history', { markets: [yes], interval: 'max' }),
    bad: { send: () => post('/batch-prices-history', { markets: [] }), status: 400, error: 'Invalid markets: expected 1 to 20 token ids' },
  },
  {
    route: 'GET /builder/trades',
    group: 'clob',
    ok: () => get(`/builder/trades?market=${conditionId}`),
    bad: { send: () => get('/builder/trades?maker_address=0x12'), status: 400 },
  },
];

test('GET /builder/trades: public without credentials; credential headers that do not verify are 401', async () => {
  const r = await h.send('GET', '/builder/trades', { headers: { POLY_BUILDER_API_KEY: 'not-a-key', POLY_BUILDER_PASSPHRASE: 'x', POLY_BUILDER_TIMESTAMP: '1', POLY_BUILDER_SIGNATURE: 'x' } });
  assertGroupError('clob', r, 401, 'Unauthorized/Invalid api key');
});

/** L2 headers as the platform's client sends them: POLY_* names, the HMAC in url-safe base64 with padding. */
function polyL2(address: string, creds: Creds, method: string, path: string): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const key = Buffer.from(creds.secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  const sig = createHmac('sha256', key).update(timestamp + method + path).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
  return { POLY_ADDRESS: address, POLY_API_KEY: creds.apiKey, POLY_PASSPHRASE: creds.passphrase, POLY_TIMESTAMP: timestamp, POLY_SIGNATURE: sig };
}

test('GET /builder/trades with L2 headers (not the route\'s kind): the public read, the same rows as without headers', async () => {
  for (const query of [`?market=${conditionId}`, `?builder_code=${BUILDER}`, '']) {
    const plain = await get(`/builder/trades${query}`);
    assert.equal(plain.status, 200, JSON.stringify(plain.body));
    assert.ok(plain.body.length > 0, `${query}: the setup's trade is a builder trade`);
    const cases: [string, Record<string, string>][] = [
      ['a trading key', polyL2(trader.address, trader.trading, 'GET', '/builder/trades')],
      ['a read-only key', polyL2(trader.address, trader.readonly, 'GET', '/builder/trades')],
      ['a trading key with a wrong signature', { ...polyL2(trader.address, trader.trading, 'GET', '/builder/trades'), POLY_SIGNATURE: 'A'.repeat(43) + '=' }],
    ];
    for (const [name, headers] of cases) {
      const r = await h.send('GET', `/builder/trades${query}`, { headers });
      assert.equal(r.status, 200, `${query}, ${name}: ${JSON.stringify(r.body)}`);
      assert.deepEqual(r.body, plain.body, `${query}, ${name}`);
      assert.equal(r.headers?.get('next-cursor'), plain.headers?.get('next-cursor'));
    }
  }
});

test('the module serves exactly its twenty-one routes, in the clob group', () => {
  assertServes(routes, CASES);
});

for (const c of CASES) {
  test(`${c.route} answers in its schema and charges its buckets`, async () => {
    await assertAnswers(h, routes, c);
  });
}

for (const c of CASES.filter((x) => x.bad)) {
  test(`${c.route}: a bad request answers in the clob form`, async () => {
    const bad = c.bad!;
    assertGroupError(c.group, await bad.send(), bad.status, bad.error);
  });
}

test('the handlers on hand-built deps: no market data, the clock, builder trade filters and shapes', async () => {
  const none = { marketData: undefined };
  assert.throws(() => midpoint(none, routeRequest({ query: { token_id: 'x1' } })), (e) => isApiError(e) && e.message === 'Invalid token id');
  assert.throws(() => midpoint(none, routeRequest({ query: { token_id: yes } })), (e) => isApiError(e) && e.spec.status === 503);

  // One hour of history ending at the deps' clock: ten years after the trade, no sample in the window.
  const later = { marketData: h.app.ctx.marketData, clock: { now: () => Date.now() + 10 * 365 * 86_400_000 } };
  assert.deepEqual(pricesHistory(later, routeRequest({ query: { market: yes, interval: '1h' as const } })), { history: [] });
  assert.notDeepEqual(pricesHistory({ ...later, clock: { now: () => Date.now() } }, routeRequest({ query: { market: yes, interval: '1h' as const } })).history, []);

  const asked: unknown[] = [];
  const reader = {
    builderTrades: (f: unknown, offset: number, limit?: number, out?: unknown) => (asked.push({ f, offset, limit, client: out !== undefined }), { rows: [], next: 'LTE=' }),
    clientBuilderTrade: () => assert.fail('no rows'),
  } as unknown as MarketDataReader;
  const deps: Pick<MarketDataDeps, 'marketData' | 'clientShapes'> = { marketData: reader, clientShapes: false };
  const CODE = '0x' + 'c0'.repeat(32);
  const spec = builderTrades(deps, routeRequest({ query: { market: '0xAB', maker_address: '', before: '1700000000' }, caller: { builderCode: CODE } }));
  assert.ok(isReply(spec));
  assert.deepEqual([spec.body, spec.headers], [[], { 'Next-Cursor': 'LTE=' }]);
  assert.deepEqual(asked.pop(), {
    f: { id: undefined, makerAddress: undefined, market: '0xab', assetId: undefined, before: 1_700_000_000, after: undefined, builderCode: CODE },
    offset: 0,
    limit: undefined,
    client: false,
  });
  assert.throws(
    () => builderTrades(deps, routeRequest({ query: { builder_code: '0x' + 'd0'.repeat(32) }, caller: { builderCode: CODE } })),
    (e) => isApiError(e) && e.message === 'builder_code is not the code of the builder key that signed the request',
  );
  const client = builderTrades({ ...deps, clientShapes: true }, routeRequest({ query: {} }));
  assert.deepEqual(client, { data: [], next_cursor: 'LTE=', limit: BUILDER_TRADES_PAGE_SIZE, count: 0 });
  assert.equal((asked.pop() as { client: boolean }).client, true);
});
