/**
 * Admin API through real HTTP: bearer-token gate (404 without a configured token, 401 for a wrong
 * one), idempotent catalog upsert, rejected partial imports, schema errors listed, market status and
 * resolution, wallet deposit / withdraw / balances and profiles. The engine side runs first against a
 * recording double of the engine contract (context.ts EngineAdmin) behind the app's engine's EngineAdmin
 * methods, then against the real engine that startApp runs.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { keccak256, toHex } from 'viem';
import { startApp, type App } from '../../src/node/app.ts';
import type { EngineAdmin } from '../../src/edge/context.ts';
import { Errors } from '../../src/domain/errors.ts';
import type { Engine } from '../../src/engine/engine.ts';
import type { TradingMarket } from '../../src/projections/catalog/catalog-index.ts';
import { getProfile } from '../../src/queries/catalog.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { UpsertEventsReply, WalletBalances } from '../../src/edge/schemas/admin.ts';
import type { EventInput } from '../../src/edge/schemas/admin.ts';

const WALLET = '0x00000000000000000000000000000000000000Ab';
const wallet = WALLET.toLowerCase();
const cid = (n: number) => keccak256(toHex(`admin test condition ${n}`));

function event(n: number, extra: Partial<EventInput> = {}): EventInput {
  return {
    title: `Admin event ${n}`,
    slug: `admin-event-${n}`,
    endDate: '2027-06-30T00:00:00Z',
    tags: [{ label: 'Testing' }],
    markets: [{ question: `Admin question ${n}?`, conditionId: cid(n), clobRewards: [{ rewardsDailyRate: 3 }], orderPriceMinTickSize: 0.001, orderMinSize: '2.5' }],
    ...extra,
  };
}

class RecordingEngine implements EngineAdmin {
  registered: TradingMarket[] = [];
  usdc = new Map<string, number>();
  resolved = new Map<string, 0 | 1>();
  registerMarket(m: TradingMarket): void {
    this.registered.push(m);
  }
  async deposit(w: string, units: number) {
    this.usdc.set(w, (this.usdc.get(w) ?? 0) + units);
    return { ok: true, code: 0 };
  }
  async withdraw(w: string, units: number) {
    const have = this.usdc.get(w) ?? 0;
    if (units > have) return { ok: false, code: Errors.PM_ERR_BALANCE.result };
    this.usdc.set(w, have - units);
    return { ok: true, code: 0 };
  }
  async resolveMarket(conditionId: string, winner: 0 | 1) {
    if (this.resolved.has(conditionId)) return { ok: false, code: Errors.PM_ERR_MARKET_RESOLVED.result };
    this.resolved.set(conditionId, winner);
    return { ok: true, code: 0 };
  }
  balances(w: string) {
    return { usdc: { available: this.usdc.get(w) ?? 0, reserved: 250_000 }, tokens: [{ tokenId: '12', conditionId: cid(1), outcome: 1, available: 1_500_000, reserved: 0 }] };
  }
}

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function startWith(adminToken: string): Promise<{ app: App; call: (method: string, path: string, body?: unknown, auth?: string) => Promise<{ status: number; body: any }> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-'));
  dirs.push(dataDir);
  const app = await startApp(testConfig({ dataDir, http: { port: 0 }, adminToken, demo: false, rateLimits: { enabled: false } }), { log: silentLogger });
  const call = async (method: string, path: string, body?: unknown, auth = 'Bearer t') => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (auth) headers.authorization = auth;
    const r = await fetch(`http://127.0.0.1:${app.port}${path}`, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: r.status, body: await r.json() };
  };
  return { app, call };
}

const ADMIN_ROUTES: [string, string, unknown][] = [
  ['POST', '/admin/events', [event(1)]],
  ['POST', `/admin/markets/${cid(1)}/status`, { closed: true }],
  ['POST', `/admin/markets/${cid(1)}/resolve`, { winningOutcomeIndex: 0 }],
  ['POST', `/admin/wallets/${WALLET}/deposit`, { amount: '1' }],
  ['POST', `/admin/wallets/${WALLET}/withdraw`, { amount: '1' }],
  ['GET', `/admin/wallets/${WALLET}`, undefined],
  ['PUT', `/admin/wallets/${WALLET}/profile`, { name: 'x' }],
];

test('without ADMIN_TOKEN every admin route answers 404, even with a bearer token', async () => {
  const { app, call } = await startWith('');
  try {
    for (const [method, path, body] of ADMIN_ROUTES) {
      const r = await call(method, path, body);
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.deepEqual(r.body, { error: 'not found' });
    }
    assert.equal((await call('GET', '/events')).status, 200, 'nothing was stored');
    assert.deepEqual((await call('GET', '/events')).body, []);
  } finally {
    await app.stop();
  }
});

describe('with ADMIN_TOKEN', () => {
  let app: App;
  let call: Awaited<ReturnType<typeof startWith>>['call'];
  const engine = new RecordingEngine();

  before(async () => {
    ({ app, call } = await startWith('t'));
    // The admin routes and the catalog's market registry reach the engine only through EngineAdmin: those
    // methods of the app's engine go to the recording double, so the tests can check what reached it.
    for (const k of ['registerMarket', 'deposit', 'withdraw', 'resolveMarket', 'balances'] as const) {
      Object.defineProperty(app.ctx.engine, k, { value: (engine[k] as (...args: never[]) => unknown).bind(engine) });
    }
  });
  after(async () => {
    await app.stop();
  });

  test('a missing, malformed or wrong token answers 401 on every admin route and changes nothing', async () => {
    for (const auth of ['', 'Bearer wrong', 'Bearer', 'Basic t', 'bearer t', 'Bearer tt']) {
      for (const [method, path, body] of ADMIN_ROUTES) {
        const r = await call(method, path, body, auth);
        assert.equal(r.status, 401, `${auth} ${method} ${path}`);
        assert.deepEqual(r.body, { error: 'unauthorized' });
      }
    }
    assert.deepEqual((await call('GET', '/events')).body, []);
  });

  test('POST /admin/events answers the stored events; posting them again changes nothing', async () => {
    const first = await call('POST', '/admin/events', [event(1), event(2, { negRisk: true, markets: [{ question: 'A?', conditionId: cid(2) }, { question: 'B?', conditionId: cid(3) }] })]);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.ok(Value.Check(UpsertEventsReply, first.body));
    assert.deepEqual(first.body.map((e: { slug: string }) => e.slug), ['admin-event-1', 'admin-event-2']);
    const m = first.body[0].markets[0];
    assert.equal(m.orderPriceMinTickSize, 0.001);
    assert.equal(m.orderMinSize, 2.5);
    assert.equal(first.body[1].markets.length, 2);
    assert.equal(first.body[1].markets[0].negRiskMarketID, first.body[1].markets[1].negRiskMarketID);
    const reg = engine.registered.find((r) => r.conditionId === cid(1))!;
    assert.deepEqual(reg, { conditionId: cid(1), tokenIds: JSON.parse(m.clobTokenIds), tickPips: 10, minSizeUnits: 2_500_000, makerFeeBps: 0, takerFeeBps: 0, acceptingOrders: true, negRisk: false });
    const registeredBefore = engine.registered.length;

    const again = await call('POST', '/admin/events', [event(1), event(2, { negRisk: true, markets: [{ question: 'A?', conditionId: cid(2) }, { question: 'B?', conditionId: cid(3) }] })]);
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, first.body);
    assert.equal(engine.registered.length, registeredBefore, 'an unchanged import registers nothing again');

    // The answer is itself a valid import of the same state.
    const roundTrip = await call('POST', '/admin/events', first.body);
    assert.equal(roundTrip.status, 200, JSON.stringify(roundTrip.body));
    assert.deepEqual(roundTrip.body, first.body);
  });

  test('a partially invalid import is rejected whole with the list of errors', async () => {
    const r = await call('POST', '/admin/events', [event(10), event(11, { slug: 'admin-event-1', id: '77' }), event(12, { markets: [{ question: 'Q?', conditionId: cid(1) }] })]);
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'invalid request');
    assert.deepEqual(r.body.errors.map((e: { path: string }) => e.path).sort(), ['[1].slug', '[2].markets[0]']);
    assert.equal((await call('GET', '/events/slug/admin-event-10')).status, 404);
  });

  test('schema problems are all listed, with their paths', async () => {
    const r = await call('POST', '/admin/events', [{ slug: 'x', endDate: 'tomorrow', markets: [{ question: '', conditionId: '0x12' }] }]);
    assert.equal(r.status, 400);
    const paths = new Set(r.body.errors.map((e: { path: string }) => e.path));
    for (const p of ['[0].title', '[0].endDate', '[0].markets[0].question', '[0].markets[0].conditionId']) assert.ok(paths.has(p), `${p} in ${[...paths]}`);
    for (const bad of [[], {}, 'null', [{ title: 'x', endDate: '2027-01-01', markets: [{ question: 'q', makerBaseFee: 1.5 }] }]]) {
      const b = await call('POST', '/admin/events', bad);
      assert.equal(b.status, 400, JSON.stringify(bad));
      assert.equal(b.body.error, 'invalid request');
      assert.ok(Array.isArray(b.body.errors) && b.body.errors.length > 0);
    }
    const j = await call('POST', '/admin/events', '[{"title": ');
    assert.deepEqual([j.status, j.body], [400, { error: 'invalid JSON body' }]);
  });

  test('market status: validation, unknown market, closing stops order intake and reaches the engine', async () => {
    const path = `/admin/markets/${cid(1)}/status`;
    for (const body of [{}, { closed: 'yes' }, { paused: true }]) {
      const r = await call('POST', path, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error, 'invalid request');
    }
    const bad = await call('POST', '/admin/markets/0x12/status', { closed: true });
    assert.equal(bad.status, 400);
    const unknown = await call('POST', `/admin/markets/${cid(99)}/status`, { closed: true });
    assert.deepEqual([unknown.status, unknown.body], [404, { error: `market ${cid(99)} not found` }]);

    const closed = await call('POST', path, { closed: true });
    assert.equal(closed.status, 200);
    assert.equal(closed.body.closed, true);
    assert.equal(closed.body.acceptingOrders, false);
    assert.equal(engine.registered.at(-1)!.acceptingOrders, false);
    const sampling = (await call('GET', '/sampling-markets')).body.data.map((x: { condition_id: string }) => x.condition_id);
    assert.ok(!sampling.includes(cid(1)));
    const refused = await call('POST', path, { acceptingOrders: true });
    assert.equal(refused.status, 400);
    const reopened = await call('POST', path, { closed: false, acceptingOrders: true });
    assert.equal(reopened.status, 200);
    assert.equal(reopened.body.acceptingOrders, true);
    assert.equal(engine.registered.at(-1)!.acceptingOrders, true);
    const paused = await call('POST', path, { acceptingOrders: false });
    assert.deepEqual([paused.body.acceptingOrders, paused.body.closed, paused.body.active], [false, false, true]);
    await call('POST', path, { acceptingOrders: true });
  });

  test('resolve: through the engine, then the catalog shows the winner; repeat is harmless, another winner refused', async () => {
    const path = `/admin/markets/${cid(2)}/resolve`;
    for (const body of [{}, { winningOutcomeIndex: 2 }, { winningOutcomeIndex: '1' }]) assert.equal((await call('POST', path, body)).status, 400);
    assert.equal((await call('POST', `/admin/markets/${cid(98)}/resolve`, { winningOutcomeIndex: 0 })).status, 404);
    const r = await call('POST', path, { winningOutcomeIndex: 1 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual([r.body.closed, r.body.acceptingOrders, JSON.parse(r.body.outcomePrices)], [true, false, ['0', '1']]);
    assert.equal(engine.resolved.get(cid(2)), 1);
    const book = (await call('GET', '/markets')).body.data.find((m: { condition_id: string }) => m.condition_id === cid(2));
    assert.deepEqual(book.tokens.map((t: { winner: boolean; price: number }) => [t.winner, t.price]), [[false, 0], [true, 1]]);
    assert.equal((await call('POST', path, { winningOutcomeIndex: 1 })).status, 200);
    const other = await call('POST', path, { winningOutcomeIndex: 0 });
    assert.deepEqual([other.status, other.body], [400, { error: `market ${cid(2)} is already resolved` }]);
    const reopen = await call('POST', `/admin/markets/${cid(2)}/status`, { closed: false });
    assert.equal(reopen.status, 400);
  });

  test('deposit, withdraw and balances: decimal strings in and out, engine refusals mapped', async () => {
    const dep = await call('POST', `/admin/wallets/${WALLET}/deposit`, { amount: '12.5' });
    assert.equal(dep.status, 200, JSON.stringify(dep.body));
    assert.ok(Value.Check(WalletBalances, dep.body));
    assert.deepEqual(dep.body, {
      address: wallet,
      usdc: { available: '12.5', reserved: '0.25' },
      tokens: [{ tokenId: '12', asset: `${cid(1)}:1`, available: '1.5', reserved: '0' }],
    });
    const wd = await call('POST', `/admin/wallets/${WALLET}/withdraw`, { amount: '2.000001' });
    assert.equal(wd.body.usdc.available, '10.499999');
    const tooMuch = await call('POST', `/admin/wallets/${WALLET}/withdraw`, { amount: '100' });
    assert.deepEqual([tooMuch.status, tooMuch.body], [400, { error: 'not enough balance / allowance' }]);
    assert.deepEqual((await call('POST', `/admin/wallets/${WALLET}/deposit`, { amount: '0' })).body, { error: 'invalid amount' });
    for (const amount of ['-1', '1.0000001', 'abc', 5, '']) {
      const r = await call('POST', `/admin/wallets/${WALLET}/deposit`, { amount });
      assert.equal(r.status, 400, String(amount));
    }
    assert.equal((await call('POST', '/admin/wallets/0x123/deposit', { amount: '1' })).status, 400);
    const bal = await call('GET', `/admin/wallets/${WALLET}`);
    assert.equal(bal.body.usdc.available, '10.499999');
  });

  test('profiles: PUT replaces the profile that wallet data reads', async () => {
    const r = await call('PUT', `/admin/wallets/${WALLET}/profile`, { name: 'Alice', bio: 'trader', profileImage: 'https://x.invalid/a.png' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { address: wallet, name: 'Alice', pseudonym: '', bio: 'trader', profileImage: 'https://x.invalid/a.png', profileImageOptimized: '' });
    await call('PUT', `/admin/wallets/${WALLET}/profile`, { pseudonym: 'al' });
    assert.deepEqual(getProfile(app.ctx.store, WALLET), { address: wallet, name: '', pseudonym: 'al', bio: '', profileImage: '', profileImageOptimized: '' });
    for (const body of [{ name: 5 }, { nickname: 'x' }, { bio: 'x'.repeat(501) }]) assert.equal((await call('PUT', `/admin/wallets/${WALLET}/profile`, body)).status, 400);
  });
});

describe('with the real engine', () => {
  let app: App;
  let call: Awaited<ReturnType<typeof startWith>>['call'];
  let engine: Engine;

  before(async () => {
    ({ app, call } = await startWith('t'));
    assert.ok(app.ctx.engine, 'startApp runs the engine');
    engine = app.ctx.engine as Engine;
  });
  after(async () => {
    await app.stop();
  });

  test('catalog markets reach the engine; deposits, withdrawals and resolution go through it', async () => {
    const up = await call('POST', '/admin/events', [event(1), event(2)]);
    assert.equal(up.status, 200, JSON.stringify(up.body));
    const em = engine.market(cid(1));
    assert.ok(em, 'the engine knows the market');
    assert.equal(em.tickPips, 10);
    assert.equal(em.minSizeUnits, 2_500_000);

    assert.equal((await call('POST', `/admin/wallets/${WALLET}/deposit`, { amount: '100' })).body.usdc.available, '100');
    assert.equal((await call('POST', `/admin/wallets/${WALLET}/withdraw`, { amount: '30.5' })).body.usdc.available, '69.5');
    const refused = await call('POST', `/admin/wallets/${WALLET}/withdraw`, { amount: '1000' });
    assert.deepEqual([refused.status, refused.body], [400, { error: 'not enough balance / allowance' }]);

    await call('POST', `/admin/markets/${cid(2)}/status`, { acceptingOrders: false });
    assert.equal(engine.market(cid(2))!.acceptingOrders, false);

    const res = await call('POST', `/admin/markets/${cid(1)}/resolve`, { winningOutcomeIndex: 0 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(engine.market(cid(1))!.resolved, 0);
    assert.equal(res.body.closed, true);
  });
});

test('GET /admin/wallets/{address} lists tokens in a stable order (by asset), byte for byte the same after a restart', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-'));
  dirs.push(dataDir);
  const cfg = testConfig({ dataDir, http: { port: 0 }, adminToken: 't', demo: false, rateLimits: { enabled: false } });
  const raw = async (app: App) => (await fetch(`http://127.0.0.1:${app.port}/admin/wallets/${WALLET}`, { headers: { authorization: 'Bearer t' } })).text();
  let app = await startApp(cfg, { log: silentLogger });
  let before: string;
  try {
    const up = await fetch(`http://127.0.0.1:${app.port}/admin/events`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify([event(11), event(12), event(13)]),
    });
    assert.equal(up.status, 200);
    await app.ctx.engine.deposit(wallet, 100_000_000);
    // Tokens arrive in an order unrelated to their ids: split the markets last to first, then one more of the first.
    for (const n of [13, 11, 12, 11]) assert.equal((await app.ctx.engine.split(wallet, cid(n), 1_000_000)).ok, true);
    before = await raw(app);
  } finally {
    await app.stop();
  }
  const listed = (JSON.parse(before) as { tokens: { asset: string }[] }).tokens.map((t) => t.asset);
  assert.equal(listed.length, 6);
  assert.deepEqual(listed, [...listed].sort(), 'sorted by asset (condition id, then outcome)');
  app = await startApp(cfg, { log: silentLogger });
  try {
    assert.equal(await raw(app), before);
  } finally {
    await app.stop();
  }
});
