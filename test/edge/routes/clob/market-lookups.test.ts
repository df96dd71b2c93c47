/**
 * GET /markets-by-token/{token_id} and GET /clob-markets/{condition_id} through real HTTP on loopback: the
 * look-ups the platform client makes before it builds a market order. A market imported through the admin
 * API (catalog labels, tick 0.001, a taker fee) and one registered with the engine alone (neg risk, maker
 * and taker fees, Yes/No labels); answers checked field by field and against their schemas, the tick size
 * against /book's, the trading state after an admin status change, and the 400/404 bodies of malformed
 * and unknown ids in the market-data routes' `{error}` form.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { startApp, type App } from '../../../../src/node/app.ts';
import type { Engine } from '../../../../src/engine/engine.ts';
import { testConfig } from '../../../../src/runtime/config.ts';
import { silentLogger } from '../../../../src/runtime/log.ts';
import { ClobMarketReply, MarketByTokenReply } from '../../../../src/edge/schemas/market-data.ts';
import { T, market } from '../../../fixtures/engine-harness.ts';
import { tempDir } from '../../../fixtures/edge.ts';

const ADMIN_TOKEN = 'lookups-admin';
const IMPORTED = '0x' + 'a7'.repeat(32);
const NO_BOOK = { error: 'No orderbook exists for the requested token id' };
const NO_MARKET = { error: 'No orderbook exists for the requested condition id' };

let app: App;
let base: string;
let dataDir: string;
/** The imported market's tokens, as the import answered them. */
let yes: string;
let no: string;
/** Registered with the engine only: the catalog does not describe it. */
const bare = market(31, { negRisk: true, tickPips: 1, minSizeUnits: 5 * T, makerFeeBps: 10, takerFeeBps: 30 });

async function get(path: string): Promise<{ status: number; body: any }> {
  const r = await fetch(base + path);
  return { status: r.status, body: (await r.json()) as unknown };
}

async function admin(path: string, body: unknown): Promise<any> {
  const r = await fetch(base + path, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: JSON.stringify(body) });
  const text = await r.text();
  assert.equal(r.status, 200, `${path}: ${text}`);
  return JSON.parse(text);
}

function conforms(schema: TSchema, value: unknown): void {
  if (!Value.Check(schema, value)) assert.fail(`answer does not match its schema: ${JSON.stringify([...Value.Errors(schema, value)].slice(0, 3))}`);
}

before(async () => {
  dataDir = tempDir();
  app = await startApp(testConfig({ dataDir, http: { port: 0 }, demo: false, adminToken: ADMIN_TOKEN, rateLimits: { enabled: false } }), { log: silentLogger });
  base = `http://127.0.0.1:${app.port}`;
  const events = await admin('/admin/events', [
    {
      title: 'Market look-ups',
      slug: 'market-lookups',
      endDate: '2030-01-01T00:00:00Z',
      markets: [
        { question: 'Up or down?', conditionId: IMPORTED, outcomes: ['Up', 'Down'], orderPriceMinTickSize: '0.001', orderMinSize: 2.5, takerBaseFee: 150 },
      ],
    },
  ]);
  [yes, no] = JSON.parse(events[0].markets[0].clobTokenIds) as [string, string];
  (app.ctx.engine as unknown as Engine).registerMarket(bare);
});

after(async () => {
  await app.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('GET /markets-by-token: the condition id and both tokens (outcome 0 primary), from either token', async () => {
  const expected = { condition_id: IMPORTED, primary_token_id: yes, secondary_token_id: no };
  for (const token of [yes, no]) {
    const r = await get(`/markets-by-token/${token}`);
    assert.deepEqual([r.status, r.body], [200, expected], token);
    conforms(MarketByTokenReply, r.body);
  }
  const [y, n] = bare.tokenIds;
  assert.deepEqual((await get(`/markets-by-token/${n}`)).body, { condition_id: bare.conditionId, primary_token_id: y, secondary_token_id: n });
});

test('GET /clob-markets: tokens with their labels, tick size, neg risk, minimum size, fees and fee curve', async () => {
  const imported = await get(`/clob-markets/${IMPORTED}`);
  assert.equal(imported.status, 200);
  conforms(ClobMarketReply, imported.body);
  assert.deepEqual(imported.body, {
    c: IMPORTED,
    t: [{ t: yes, o: 'Up' }, { t: no, o: 'Down' }],
    mts: 0.001,
    nr: false,
    mos: 2.5,
    mbf: 0,
    tbf: 150,
    fd: { r: 0.0075, e: 0, to: true },
    ao: true,
  });
  // The client caches String(mts) as the tick size it rounds and validates prices with.
  const book = await get(`/book?token_id=${yes}`);
  assert.equal(String(imported.body.mts), book.body.tick_size);
  assert.deepEqual((await get(`/clob-markets/${IMPORTED.toUpperCase().replace('0X', '0x')}`)).body, imported.body, 'hex in any case');

  const engineOnly = await get(`/clob-markets/${bare.conditionId}`);
  conforms(ClobMarketReply, engineOnly.body);
  assert.deepEqual(engineOnly.body, {
    c: bare.conditionId,
    t: [{ t: bare.tokenIds[0], o: 'Yes' }, { t: bare.tokenIds[1], o: 'No' }],
    mts: 0.0001,
    nr: true,
    mos: 5,
    mbf: 10,
    tbf: 30,
    fd: { r: 0.0015, e: 0, to: false },
    ao: true,
  });
  assert.equal(String(engineOnly.body.mts), (await get(`/book?token_id=${bare.tokenIds[0]}`)).body.tick_size);
});

test('GET /clob-markets: ao follows the engine once the admin API stops order intake', async () => {
  await admin(`/admin/markets/${IMPORTED}/status`, { acceptingOrders: false });
  const end = Date.now() + 5000;
  let ao: boolean;
  do {
    ao = (await get(`/clob-markets/${IMPORTED}`)).body.ao as boolean;
    if (ao) await new Promise((r) => setTimeout(r, 20));
  } while (ao && Date.now() < end);
  assert.equal(ao, false);
  await admin(`/admin/markets/${IMPORTED}/status`, { acceptingOrders: true });
});

const cases: { name: string; path: string; status: number; body: unknown }[] = [
  { name: 'token: letters', path: '/markets-by-token/abc', status: 400, body: { error: 'Invalid token id' } },
  { name: 'token: leading zero', path: '/markets-by-token/0123', status: 400, body: { error: 'Invalid token id' } },
  { name: 'token: negative', path: '/markets-by-token/-5', status: 400, body: { error: 'Invalid token id' } },
  { name: 'token: 2^256', path: `/markets-by-token/${(1n << 256n).toString()}`, status: 400, body: { error: 'Invalid token id' } },
  { name: 'token: a condition id', path: `/markets-by-token/${IMPORTED}`, status: 400, body: { error: 'Invalid token id' } },
  // No id at all is no route (uWS matches no empty parameter): the unknown-route answer.
  { name: 'token: none', path: '/markets-by-token/', status: 404, body: { error: 'not found' } },
  { name: 'token: unknown', path: '/markets-by-token/987654321', status: 404, body: NO_BOOK },
  { name: 'token: unknown 2^256 - 1', path: `/markets-by-token/${((1n << 256n) - 1n).toString()}`, status: 404, body: NO_BOOK },
  { name: 'condition: short', path: '/clob-markets/0x1234', status: 400, body: { error: 'Invalid condition id' } },
  { name: 'condition: long', path: `/clob-markets/${IMPORTED}00`, status: 400, body: { error: 'Invalid condition id' } },
  { name: 'condition: no 0x', path: `/clob-markets/${IMPORTED.slice(2)}`, status: 400, body: { error: 'Invalid condition id' } },
  { name: 'condition: not hex', path: `/clob-markets/0x${'g'.repeat(64)}`, status: 400, body: { error: 'Invalid condition id' } },
  { name: 'condition: a token id', path: `/clob-markets/${bare.tokenIds[0]}`, status: 400, body: { error: 'Invalid condition id' } },
  { name: 'condition: none', path: '/clob-markets/', status: 404, body: { error: 'not found' } },
  { name: 'condition: unknown', path: `/clob-markets/0x${'e'.repeat(64)}`, status: 404, body: NO_MARKET },
];
for (const c of cases) {
  test(`GET ${c.path.split('/')[1]}: ${c.name} -> ${c.status}`, async () => {
    const r = await get(c.path);
    assert.deepEqual([r.status, r.body], [c.status, c.body], c.path);
  });
}
