/**
 * Wallet data through real HTTP on loopback, driven by the engine (orders, splits, merges, a resolution
 * and a redeem) on a manual clock, so every number and timestamp below is worked out by hand:
 * GET /trades, /positions, /closed-positions with every parameter, default, bound and sort direction;
 * every error body of DESIGN section 4 (including the IP allowlist and a failing storage read); and the
 * projections rebuilt from the journal after a restart (cursors reset, then views wiped).
 *
 * The script (wallets A, B, C; each step advances the clock by one second):
 *   M1 "Will it rain in Lisbon?" (Rain / Dry)
 *     a  B rests BUY Dry 10 @ 0.60; A BUY Rain 10 @ 0.40 -> MINT            A Rain 10 @ 0.40
 *     b  C rests SELL Rain 20 @ 0.55; A BUY Rain 20 @ 0.55                   A Rain 30, avg (4 + 11) / 30 = 0.50
 *     c  B rests BUY Rain 12 @ 0.60; A SELL Rain 12 @ 0.60                   realized 12 x 0.10 = 1.2, size 18
 *     d  C rests SELL Rain 5 @ 0.58, B rests BUY Rain 5 @ 0.52               book 0.52 / 0.58: curPrice 0.55
 *   M2 "Will BTC close above 100k?"
 *     e  C rests SELL Yes 10 @ 0.30; A BUY Yes 10 @ 0.30
 *     f  B rests BUY Yes 10 @ 0.45; A SELL Yes 10 @ 0.45                     closed: realized 10 x 0.15 = 1.5
 *   M3 "Split test market" (seed prices 0.45 / 0.55)
 *     g  A splits 10, then (g2) merges 4                                     Yes 6 and No 6 @ 0.5, mergeable
 *     i  B rests BUY No 6 @ 0.70; A SELL No 6 @ 0.70                         No closed: 6 x 0.20 = 1.2
 *   M4 "Resolved market"
 *     j  B rests BUY No 10 @ 0.30; A BUY Yes 10 @ 0.70 -> MINT              A Yes 10 @ 0.70
 *     k  A splits 4                                                          Yes 14, avg floor(9 / 14) = 0.642857; No 4 @ 0.5
 *     l  resolved, Yes wins (admin route)                                    both redeemable
 *     n  A redeems                                                           Yes +14 x 0.357143 = 5.000002, No -4 x 0.5 = -2
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { Type, type TSchema } from '@sinclair/typebox';
import { startApp, type App } from '../../src/node/app.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { openStore, type Store } from '../../src/journal/env.ts';
import { metaKeys, type Key } from '../../src/journal/keys.ts';
import { POSITIONS_PROJECTION, TRADES_PROJECTION } from '../../src/projections/wallets.ts';
import { ClosedPosition, Position, Trade } from '../../src/edge/schemas/wallets.ts';
import { ManualClock } from '../../src/runtime/clock.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';

const U = 1_000_000;
const T0 = Date.UTC(2026, 0, 1);
const A = '0x' + 'a1'.repeat(20);
const B = '0x' + 'b2'.repeat(20);
const C = '0x' + 'c3'.repeat(20);
const D = '0x' + 'd4'.repeat(20);
const E = '0x' + 'e5'.repeat(20);
const cid = (d: string) => '0x' + d.repeat(64);
const M1 = cid('1');
const M2 = cid('2');
const M3 = cid('3');
const M4 = cid('4');
const M5 = cid('5');
const TOK: Record<string, [string, string]> = { [M1]: ['1001', '1002'], [M2]: ['2001', '2002'], [M3]: ['3001', '3002'], [M4]: ['4001', '4002'], [M5]: ['5001', '5002'] };

let dataDir: string;
let app: App;
let base: string;
let engine: Engine;
let clock: ManualClock;
/** Unix seconds of each scripted step. */
const at: Record<string, number> = {};
/** A storage read failure switch on the app's own store (see the 500 test). */
const failing = { reads: false };

async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const r = await fetch(base + path, { headers });
  return { status: r.status, body: await r.json() };
}

async function ok(path: string): Promise<any[]> {
  const r = await get(path);
  assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
  return r.body;
}

function conforms(schema: TSchema, value: unknown): void {
  if (!Value.Check(schema, value)) assert.fail(`answer does not match its schema: ${JSON.stringify([...Value.Errors(schema, value)].slice(0, 3))}`);
}

let orderNo = 0;
/** Places a GTC order of `size` tokens at `pips`; BUY makerAmount = USDC, takerAmount = tokens. */
async function order(wallet: string, tokenId: string, side: 'BUY' | 'SELL', size: number, pips: number, expect: 'live' | 'matched') {
  const usdc = (size * U * pips) / 10_000;
  const r = await engine.placeOrder({
    orderId: '0x' + (++orderNo).toString(16).padStart(64, '0'),
    wallet,
    tokenId,
    side,
    orderType: 'GTC',
    postOnly: false,
    makerAmount: side === 'BUY' ? usdc : size * U,
    takerAmount: side === 'BUY' ? size * U : usdc,
    expiration: 0,
    builder: '0x' + '0'.repeat(64),
    owner: 'k',
    signer: wallet,
    salt: '1',
    timestamp: '0',
    signatureType: 0,
    signature: '0x',
  });
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.status, expect, `${side} ${size} @ ${pips} by ${wallet}`);
}

function step(name: string): void {
  clock.advance(1000);
  at[name] = Math.floor(clock.now() / 1000);
}

async function opOk(p: Promise<{ ok: boolean; code: number }>) {
  const r = await p;
  assert.ok(r.ok, JSON.stringify(r));
}

async function start(store?: Store): Promise<void> {
  clock = new ManualClock(T0);
  app = await startApp(testConfig({ dataDir, http: { port: 0 }, demo: false, adminToken: 't', rateLimits: { enabled: false } }), { log: silentLogger, clock, store });
  base = `http://127.0.0.1:${app.port}`;
  engine = app.ctx.engine as unknown as Engine;
}

/** A store whose range reads of `views` and `fills` throw while `failing.reads` is set. */
function faultyStore(): Store {
  const store = openStore({ dataDir });
  for (const db of [store.views, store.fills] as { getRange: (o: unknown) => unknown }[]) {
    const getRange = db.getRange.bind(db);
    db.getRange = (opts: unknown) => {
      if (failing.reads) throw new Error('MDB_CORRUPTED: injected read failure');
      return getRange(opts);
    };
  }
  return store;
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pm-wallets-'));
  await start(faultyStore());
  const market = (conditionId: string, question: string, slug: string, endDate: string, extra: Record<string, unknown> = {}) => ({
    question, conditionId, slug, endDate, clobTokenIds: TOK[conditionId], orderMinSize: 1, orderPriceMinTickSize: '0.01', acceptingOrders: true, ...extra,
  });
  const events = [
    {
      title: 'Wallet data e2e',
      slug: 'wallet-e2e',
      icon: 'https://img/event.png',
      endDate: '2026-12-31T00:00:00Z',
      markets: [
        market(M1, 'Will it rain in Lisbon?', 'rain-lisbon', '2026-06-30T00:00:00Z', { outcomes: ['Rain', 'Dry'], icon: 'https://img/rain.png' }),
        market(M2, 'Will BTC close above 100k?', 'btc-100k', '2026-03-31T00:00:00Z'),
        market(M3, 'Split test market', 'split-market', '2026-04-30T00:00:00Z', { outcomePrices: ['0.45', '0.55'] }),
        market(M4, 'Resolved market', 'resolved-market', '2026-02-28T00:00:00Z'),
        market(M5, 'Volume market', 'volume-market', '2026-05-31T00:00:00Z'),
      ],
    },
  ];
  const r = await fetch(base + '/admin/events', { method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: JSON.stringify(events) });
  assert.equal(r.status, 200, await r.text());
  const profile = await fetch(base + `/admin/wallets/${A}/profile`, {
    method: 'PUT',
    headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Alice', pseudonym: 'Rain-Maker', bio: 'Trades "weather"', profileImage: 'https://img/a.png', profileImageOptimized: 'https://img/a-small.png' }),
  });
  assert.equal(profile.status, 200, await profile.text());
  for (const w of [A, B, C, D, E]) await opOk(engine.deposit(w, 1_000 * U));
  await opOk(engine.split(C, M1, 100 * U));
  await opOk(engine.split(C, M2, 100 * U));
  await opOk(engine.split(C, M5, 200 * U));

  step('a');
  await order(B, TOK[M1][1], 'BUY', 10, 6000, 'live');
  await order(A, TOK[M1][0], 'BUY', 10, 4000, 'matched');
  step('b');
  await order(C, TOK[M1][0], 'SELL', 20, 5500, 'live');
  await order(A, TOK[M1][0], 'BUY', 20, 5500, 'matched');
  step('c');
  await order(B, TOK[M1][0], 'BUY', 12, 6000, 'live');
  await order(A, TOK[M1][0], 'SELL', 12, 6000, 'matched');
  step('d');
  await order(C, TOK[M1][0], 'SELL', 5, 5800, 'live');
  await order(B, TOK[M1][0], 'BUY', 5, 5200, 'live');
  step('e');
  await order(C, TOK[M2][0], 'SELL', 10, 3000, 'live');
  await order(A, TOK[M2][0], 'BUY', 10, 3000, 'matched');
  step('f');
  await order(B, TOK[M2][0], 'BUY', 10, 4500, 'live');
  await order(A, TOK[M2][0], 'SELL', 10, 4500, 'matched');
  step('g');
  await opOk(engine.split(A, M3, 10 * U));
  step('g2');
  await opOk(engine.merge(A, M3, 4 * U));
});

after(async () => {
  await app?.stop();
});

// ---- M3 before its No side is sold: a mergeable pair ----------------------------------------------

test('a split pair is mergeable until one side is gone', async () => {
  const rows = await ok(`/positions?user=${A}&mergeable=true`);
  // Split 10 at 0.5, merge 4 at 0.5 (realized 4 x 0 = 0): 6 of each, both mergeable.
  assert.deepEqual(rows.map((r) => [r.asset, r.size, r.avgPrice, r.totalBought, r.realizedPnl, r.mergeable]), [
    [`${M3}:0`, 6, 0.5, 10, 0, true],
    [`${M3}:1`, 6, 0.5, 10, 0, true],
  ]);
  step('i');
  await order(B, TOK[M3][1], 'BUY', 6, 7000, 'live');
  await order(A, TOK[M3][1], 'SELL', 6, 7000, 'matched');
  assert.deepEqual(await ok(`/positions?user=${A}&mergeable=true`), []);
  step('j');
  await order(B, TOK[M4][1], 'BUY', 10, 3000, 'live');
  await order(A, TOK[M4][0], 'BUY', 10, 7000, 'matched');
  step('k');
  await opOk(engine.split(A, M4, 4 * U));
  step('l');
  const r = await fetch(base + `/admin/markets/${M4}/resolve`, { method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: '{"winningOutcomeIndex":0}' });
  assert.equal(r.status, 200, await r.text());
  await engine.refreshSnapshot(M1);
});

// ---- positions ------------------------------------------------------------------------------------

test('GET /positions: every field of the scripted rows (default sort TOKENS DESC)', async () => {
  const rows = await ok(`/positions?user=${A.toUpperCase().replace('0X', '0x')}`);
  conforms(Type.Array(Position), rows);
  assert.deepEqual(Object.keys(rows[0]), Object.keys(Position.properties), 'fields in the order of the Position type');
  const common = { proxyWallet: A, eventSlug: 'wallet-e2e', negativeRisk: false };
  assert.deepEqual(rows, [
    {
      ...common,
      asset: `${M1}:0`, conditionId: M1,
      size: 18, avgPrice: 0.5,
      initialValue: 9, // 18 x 0.5
      currentValue: 9.9, // 18 x 0.55 (midpoint of 0.52 / 0.58)
      cashPnl: 0.9, percentPnl: 10, // 0.9 / 9
      totalBought: 30, realizedPnl: 1.2,
      percentRealizedPnl: -34, // (9.9 - 30 x 0.5) / 15 x 100
      curPrice: 0.55, redeemable: false, mergeable: false,
      title: 'Will it rain in Lisbon?', slug: 'rain-lisbon', icon: 'https://img/rain.png',
      outcome: 'Rain', outcomeIndex: 0, oppositeOutcome: 'Dry', oppositeAsset: `${M1}:1`,
      endDate: '2026-06-30T00:00:00.000Z', timestamp: at.c,
    },
    {
      ...common,
      asset: `${M4}:0`, conditionId: M4,
      size: 14, avgPrice: 0.642857, // floor((0.70 x 10 + 0.5 x 4) / 14 = 0.6428571...)
      initialValue: 8.999998, // round(14 x 0.642857)
      currentValue: 14, // resolved, Yes won: curPrice 1
      cashPnl: 5.000002,
      percentPnl: 55.5555, // trunc(5.000002 / 8.999998 x 100 = 55.55558...)
      totalBought: 14, realizedPnl: 0, percentRealizedPnl: 55.5555,
      curPrice: 1, redeemable: true, mergeable: false, // a resolved market cannot merge
      title: 'Resolved market', slug: 'resolved-market', icon: 'https://img/event.png',
      outcome: 'Yes', outcomeIndex: 0, oppositeOutcome: 'No', oppositeAsset: `${M4}:1`,
      endDate: '2026-02-28T00:00:00.000Z', timestamp: at.k,
    },
    {
      ...common,
      asset: `${M3}:0`, conditionId: M3,
      size: 6, avgPrice: 0.5, initialValue: 3,
      currentValue: 2.7, // no book, no trade of this token: the catalog seed 0.45
      cashPnl: -0.3, percentPnl: -10,
      totalBought: 10, realizedPnl: 0,
      percentRealizedPnl: -46, // (2.7 - 10 x 0.5) / 5 x 100
      curPrice: 0.45, redeemable: false, mergeable: false,
      title: 'Split test market', slug: 'split-market', icon: 'https://img/event.png',
      outcome: 'Yes', outcomeIndex: 0, oppositeOutcome: 'No', oppositeAsset: `${M3}:1`,
      endDate: '2026-04-30T00:00:00.000Z', timestamp: at.g2, // the merge was its last activity
    },
    {
      ...common,
      asset: `${M4}:1`, conditionId: M4,
      size: 4, avgPrice: 0.5, initialValue: 2, currentValue: 0, cashPnl: -2, percentPnl: -100,
      totalBought: 4, realizedPnl: 0, percentRealizedPnl: -100,
      curPrice: 0, redeemable: true, mergeable: false, // the losing side is redeemable too (for 0)
      title: 'Resolved market', slug: 'resolved-market', icon: 'https://img/event.png',
      outcome: 'No', outcomeIndex: 1, oppositeOutcome: 'Yes', oppositeAsset: `${M4}:0`,
      endDate: '2026-02-28T00:00:00.000Z', timestamp: at.k,
    },
  ]);
});

test('GET /positions: every sortBy in both directions, ties by conditionId then outcomeIndex', async () => {
  const order = async (q: string) => (await ok(`/positions?user=${A}&${q}`)).map((r: { asset: string }) => r.asset);
  const [r1, y3, y4, n4] = [`${M1}:0`, `${M3}:0`, `${M4}:0`, `${M4}:1`];
  // value per row:        r1 (M1)   y4 (M4 Yes)  y3 (M3)  n4 (M4 No)
  const cases: [string, string[]][] = [
    ['TOKENS', [r1, y4, y3, n4]], //       18       14           6        4
    ['CURRENT', [y4, r1, y3, n4]], //       9.9      14           2.7      0
    ['INITIAL', [r1, y4, y3, n4]], //       9        8.999998     3        2
    ['CASHPNL', [y4, r1, y3, n4]], //       0.9      5.000002    -0.3     -2
    ['PERCENTPNL', [y4, r1, y3, n4]], //    10       55.5555     -10     -100
    ['TITLE', [r1, y3, y4, n4]], //        Will..   Resolved     Split    Resolved
    ['RESOLVING', [r1, y3, y4, n4]], //    06-30    02-28        04-30    02-28
    ['PRICE', [y4, r1, y3, n4]], //         0.55     1            0.45     0
    ['AVGPRICE', [y4, r1, y3, n4]], //      0.5      0.642857     0.5      0.5  (0.5s tie: M1 < M3 < M4)
  ];
  for (const [sortBy, desc] of cases) {
    assert.deepEqual(await order(`sortBy=${sortBy}`), desc, `${sortBy} default DESC`);
    assert.deepEqual(await order(`sortBy=${sortBy}&sortDirection=DESC`), desc, `${sortBy} DESC`);
    const asc = await order(`sortBy=${sortBy}&sortDirection=ASC`);
    if (sortBy === 'TITLE') assert.deepEqual(asc, [y4, n4, y3, r1], 'TITLE ASC: the two "Resolved market" rows keep their tie order');
    else if (sortBy === 'RESOLVING') assert.deepEqual(asc, [y4, n4, y3, r1], 'RESOLVING ASC');
    else if (sortBy === 'AVGPRICE') assert.deepEqual(asc, [r1, y3, n4, y4], 'AVGPRICE ASC: the 0.5 ties stay ascending');
    else assert.deepEqual(asc, [...desc].reverse(), `${sortBy} ASC`);
  }
});

test('GET /positions: sizeThreshold (default 1, inclusive), redeemable, mergeable, market, title, limit, offset', async () => {
  const assets = async (q: string) => (await ok(`/positions?user=${A}&${q}`)).map((r: { asset: string }) => r.asset);
  assert.deepEqual(await assets('sizeThreshold=6'), [`${M1}:0`, `${M4}:0`, `${M3}:0`]);
  assert.deepEqual(await assets('sizeThreshold=6.000001'), [`${M1}:0`, `${M4}:0`]);
  assert.deepEqual(await assets('sizeThreshold=0'), [`${M1}:0`, `${M4}:0`, `${M3}:0`, `${M4}:1`], 'closed rows never appear');
  assert.deepEqual(await assets('sizeThreshold=18.5'), []);
  assert.deepEqual(await assets('redeemable=true'), [`${M4}:0`, `${M4}:1`]);
  assert.deepEqual(await assets('redeemable=false&mergeable=false'), [`${M1}:0`, `${M4}:0`, `${M3}:0`, `${M4}:1`]);
  assert.deepEqual(await assets(`market=${M3},${M1.toUpperCase().replace('0X', '0x')}`), [`${M1}:0`, `${M3}:0`]);
  assert.deepEqual(await assets('title=RESOLVED'), [`${M4}:0`, `${M4}:1`]);
  assert.deepEqual(await assets('title=lisbon%3F'), [`${M1}:0`]);
  assert.deepEqual(await assets('title=nothing-like-this'), []);
  assert.deepEqual(await assets('limit=2&offset=1'), [`${M4}:0`, `${M3}:0`]);
  assert.deepEqual(await assets('limit=0'), []);
  assert.deepEqual(await assets('offset=4'), []);
  assert.deepEqual(await assets('limit=500&offset=10000'), []);
  // B's book orders rest; its fills made positions it holds: Dry 10 (a), Rain 12 (c), BTC Yes 10 (f), No 6 (i), M4 No 10 (j).
  assert.equal((await ok(`/positions?user=${B}&sizeThreshold=0`)).length, 5);
});

test('after the redeem: GET /closed-positions rows and every sort, GET /positions without them', async () => {
  step('n');
  await opOk(engine.redeem(A, M4));
  assert.deepEqual((await ok(`/positions?user=${A}`)).map((r: { asset: string }) => r.asset), [`${M1}:0`, `${M3}:0`]);
  const rows = await ok(`/closed-positions?user=${A}`);
  conforms(Type.Array(ClosedPosition), rows);
  assert.deepEqual(Object.keys(rows[0]), Object.keys(ClosedPosition.properties), 'no negativeRisk on closed rows');
  // REALIZEDPNL DESC by default: M4 Yes 5.000002, M2 Yes 1.5, M3 No 1.2, M4 No -2.
  assert.deepEqual(rows.map((r: { asset: string; realizedPnl: number; curPrice: number; timestamp: number }) => [r.asset, r.realizedPnl, r.curPrice, r.timestamp]), [
    [`${M4}:0`, 5.000002, 1, at.n], // 14 x (1 - 0.642857)
    [`${M2}:0`, 1.5, 0.45, at.f], // 10 x (0.45 - 0.30)
    [`${M3}:1`, 1.2, 0.7, at.i], // 6 x (0.70 - 0.50)
    [`${M4}:1`, -2, 0, at.n], // 4 x (0 - 0.5)
  ]);
  assert.deepEqual(rows[1], {
    proxyWallet: A,
    asset: `${M2}:0`,
    conditionId: M2,
    size: 0,
    avgPrice: 0.3,
    initialValue: 0,
    currentValue: 0,
    cashPnl: 0,
    percentPnl: 0,
    totalBought: 10,
    realizedPnl: 1.5,
    percentRealizedPnl: -100, // (0 - 10 x 0.3) / 3 x 100, section 1.2's formula on an empty position
    curPrice: 0.45, // the sale that closed it
    redeemable: false,
    mergeable: false,
    title: 'Will BTC close above 100k?',
    slug: 'btc-100k',
    icon: 'https://img/event.png',
    eventSlug: 'wallet-e2e',
    outcome: 'Yes',
    outcomeIndex: 0,
    oppositeOutcome: 'No',
    oppositeAsset: `${M2}:1`,
    endDate: '2026-03-31T00:00:00.000Z',
    timestamp: at.f,
  });
  const assets = async (q: string) => (await ok(`/closed-positions?user=${A}&${q}`)).map((r: { asset: string }) => r.asset);
  const [y4, y2, n3, n4] = [`${M4}:0`, `${M2}:0`, `${M3}:1`, `${M4}:1`];
  //                                          y4         y2      n3      n4
  const cases: [string, string[], string[]][] = [
    ['REALIZEDPNL', [y4, y2, n3, n4], [n4, n3, y2, y4]], // 5.000002  1.5  1.2  -2
    ['PRICE', [y4, n3, y2, n4], [n4, y2, n3, y4]], //        1         0.45 0.7  0
    ['AVGPRICE', [y4, n3, n4, y2], [y2, n3, n4, y4]], //     0.642857  0.3  0.5  0.5
    ['TIMESTAMP', [y4, n4, n3, y2], [y2, n3, y4, n4]], //    n         f    i    n
    ['TITLE', [y2, n3, y4, n4], [y4, n4, n3, y2]], //        Resolved  Will Split Resolved
  ];
  for (const [sortBy, desc, asc] of cases) {
    assert.deepEqual(await assets(`sortBy=${sortBy}`), desc, `${sortBy} default DESC`);
    assert.deepEqual(await assets(`sortBy=${sortBy}&sortDirection=DESC`), desc, `${sortBy} DESC`);
    assert.deepEqual(await assets(`sortBy=${sortBy}&sortDirection=ASC`), asc, `${sortBy} ASC`);
  }
  assert.deepEqual(await assets(`market=${M4}`), [y4, n4]);
  assert.deepEqual(await assets('title=btc'), [y2]);
  assert.deepEqual(await assets('limit=1&offset=2'), [n3]);
  assert.deepEqual(await assets('limit=0'), []);
  assert.deepEqual(await assets('offset=100000&limit=50'), []);
  assert.deepEqual(await ok(`/closed-positions?user=${D}`), []);
});

// ---- trades ---------------------------------------------------------------------------------------

const tradeKey = (t: { proxyWallet: string; side: string; asset: string; size: number; price: number; usdcSize: number; timestamp: number }) =>
  `${t.proxyWallet === A ? 'A' : t.proxyWallet === B ? 'B' : t.proxyWallet === C ? 'C' : t.proxyWallet} ${t.side} ${t.asset} ${t.size} @${t.price} $${t.usdcSize} ${t.timestamp}`;

test('GET /trades: each fill once from its taker, newest first, every field', async () => {
  const rows = await ok('/trades');
  conforms(Type.Array(Trade), rows);
  assert.deepEqual(Object.keys(rows[0]), Object.keys(Trade.properties));
  // Splits, merges and redeems are not trades; A was the taker of every fill.
  assert.deepEqual(rows.map(tradeKey), [
    `A BUY ${M4}:0 10 @0.7 $7 ${at.j}`, // MINT: A's side of it
    `A SELL ${M3}:1 6 @0.7 $4.2 ${at.i}`,
    `A SELL ${M2}:0 10 @0.45 $4.5 ${at.f}`,
    `A BUY ${M2}:0 10 @0.3 $3 ${at.e}`,
    `A SELL ${M1}:0 12 @0.6 $7.2 ${at.c}`,
    `A BUY ${M1}:0 20 @0.55 $11 ${at.b}`,
    `A BUY ${M1}:0 10 @0.4 $4 ${at.a}`,
  ]);
  const first = rows[6];
  assert.deepEqual({ ...first, transactionHash: undefined }, {
    proxyWallet: A, side: 'BUY', asset: `${M1}:0`, conditionId: M1, size: 10, price: 0.4, timestamp: at.a,
    title: 'Will it rain in Lisbon?', slug: 'rain-lisbon', icon: 'https://img/rain.png', eventSlug: 'wallet-e2e', outcome: 'Rain', outcomeIndex: 0,
    name: 'Alice', pseudonym: 'Rain-Maker', bio: 'Trades "weather"', profileImage: 'https://img/a.png', profileImageOptimized: 'https://img/a-small.png',
    transactionHash: undefined, usdcSize: 4,
  });
  assert.match(first.transactionHash, /^0x[0-9a-f]{64}$/);
  assert.equal(new Set(rows.map((r: { transactionHash: string }) => r.transactionHash)).size, 7);
});

test('GET /trades: takerOnly=false adds the maker rows, each from its own wallet\'s perspective', async () => {
  const rows = await ok('/trades?takerOnly=false');
  assert.equal(rows.length, 14);
  assert.deepEqual(rows.slice(0, 4).map(tradeKey), [
    `A BUY ${M4}:0 10 @0.7 $7 ${at.j}`,
    `B BUY ${M4}:1 10 @0.3 $3 ${at.j}`, // the other buyer of the MINT: No at 0.30
    `A SELL ${M3}:1 6 @0.7 $4.2 ${at.i}`,
    `B BUY ${M3}:1 6 @0.7 $4.2 ${at.i}`,
  ]);
  assert.equal(rows[0].transactionHash, rows[1].transactionHash, 'two rows of one fill share its hash');
  // Profile fields are the row's wallet's: A's admin-set profile, none for B.
  assert.deepEqual([rows[0].name, rows[0].bio, rows[1].name, rows[1].pseudonym, rows[1].profileImage], ['Alice', 'Trades "weather"', '', '', '']);
  assert.deepEqual((await ok(`/trades?user=${B}&takerOnly=false`)).map(tradeKey), [
    `B BUY ${M4}:1 10 @0.3 $3 ${at.j}`,
    `B BUY ${M3}:1 6 @0.7 $4.2 ${at.i}`,
    `B BUY ${M2}:0 10 @0.45 $4.5 ${at.f}`,
    `B BUY ${M1}:0 12 @0.6 $7.2 ${at.c}`,
    `B BUY ${M1}:1 10 @0.6 $6 ${at.a}`,
  ]);
  assert.deepEqual((await ok(`/trades?user=${C}&takerOnly=false`)).map(tradeKey), [`C SELL ${M2}:0 10 @0.3 $3 ${at.e}`, `C SELL ${M1}:0 20 @0.55 $11 ${at.b}`]);
  // takerOnly=true (the default) lists only the fills the wallet took: B and C never took one.
  assert.deepEqual(await ok(`/trades?user=${B}`), []);
  assert.deepEqual(await ok(`/trades?user=${C}&takerOnly=true`), []);
});

test('GET /trades: side, filterType/filterAmount (inclusive), market, user, limit and offset', async () => {
  const keys = async (q: string) => (await ok(`/trades?${q}`)).map(tradeKey);
  assert.deepEqual(await keys(`user=${A}&side=SELL`), [`A SELL ${M3}:1 6 @0.7 $4.2 ${at.i}`, `A SELL ${M2}:0 10 @0.45 $4.5 ${at.f}`, `A SELL ${M1}:0 12 @0.6 $7.2 ${at.c}`]);
  assert.deepEqual(await keys(`takerOnly=false&side=SELL&user=${B}`), []);
  // CASH: usdcSize >= 7 keeps 7 (inclusive), 7.2 and 11.
  assert.deepEqual(await keys('filterType=CASH&filterAmount=7'), [`A BUY ${M4}:0 10 @0.7 $7 ${at.j}`, `A SELL ${M1}:0 12 @0.6 $7.2 ${at.c}`, `A BUY ${M1}:0 20 @0.55 $11 ${at.b}`]);
  // TOKENS: size >= 12 keeps 12 and 20.
  assert.deepEqual(await keys('filterType=TOKENS&filterAmount=12'), [`A SELL ${M1}:0 12 @0.6 $7.2 ${at.c}`, `A BUY ${M1}:0 20 @0.55 $11 ${at.b}`]);
  assert.deepEqual(await keys('filterType=TOKENS&filterAmount=0'), (await keys('')));
  assert.deepEqual(await keys(`market=${M1}`), [`A SELL ${M1}:0 12 @0.6 $7.2 ${at.c}`, `A BUY ${M1}:0 20 @0.55 $11 ${at.b}`, `A BUY ${M1}:0 10 @0.4 $4 ${at.a}`]);
  assert.equal((await keys(`market=${M1},${M2}`)).length, 5);
  assert.equal((await keys(`market=${M1},${M2}&takerOnly=false`)).length, 10);
  assert.deepEqual(await keys(`user=${A}&market=${M2}`), [`A SELL ${M2}:0 10 @0.45 $4.5 ${at.f}`, `A BUY ${M2}:0 10 @0.3 $3 ${at.e}`]);
  assert.deepEqual(await keys(`user=${B}&market=${M1}&takerOnly=false&side=BUY&filterType=CASH&filterAmount=6.5`), [`B BUY ${M1}:0 12 @0.6 $7.2 ${at.c}`]);
  assert.deepEqual(await keys('limit=2&offset=1'), [`A SELL ${M3}:1 6 @0.7 $4.2 ${at.i}`, `A SELL ${M2}:0 10 @0.45 $4.5 ${at.f}`]);
  assert.deepEqual(await keys('limit=0'), []);
  assert.deepEqual(await keys('offset=10000&limit=10000'), []);
  assert.deepEqual(await keys(`market=${M5}`), []);
});

test('GET /trades: a market listed twice (in any case) lists its fills once', async () => {
  const keys = async (q: string) => (await ok(`/trades?${q}`)).map(tradeKey);
  const once = await keys(`market=${M1}`);
  assert.equal(once.length, 3);
  assert.deepEqual(await keys(`market=${M1},${M1.toUpperCase().replace('0X', '0x')}`), once);
  assert.deepEqual(await keys(`market=${M1}&market=${M1}&takerOnly=false`), await keys(`market=${M1}&takerOnly=false`));
});

test('defaults: /trades limit 100, /positions limit 100, /closed-positions limit 10', async () => {
  // D takes 101 single tokens from one resting sale of C's (concurrent orders share commits).
  await order(C, TOK[M5][0], 'SELL', 101, 5000, 'live');
  const takes: Promise<void>[] = [];
  for (let i = 0; i < 101; i++) takes.push(order(D, TOK[M5][0], 'BUY', 1, 5000, 'matched'));
  await Promise.all(takes);
  assert.equal((await ok(`/trades?user=${D}`)).length, 100);
  assert.equal((await ok(`/trades?user=${D}&limit=101`)).length, 101);
  assert.equal((await ok(`/trades?user=${D}&limit=101&offset=100`)).length, 1);
  // E splits 1 in each of 63 engine-only markets (126 positions of size 1: the default threshold keeps
  // them, it is inclusive), then merges it back in 12 of them: 24 closed rows and 102 open ones.
  const extra: string[] = [];
  for (let i = 0; i < 63; i++) {
    const c = '0x' + 'e'.repeat(60) + i.toString(16).padStart(4, '0');
    extra.push(c);
    engine.registerMarket({ conditionId: c, tokenIds: [`9${i}0`, `9${i}1`], tickPips: 100, minSizeUnits: U, makerFeeBps: 0, takerFeeBps: 0, acceptingOrders: true, negRisk: false });
  }
  await Promise.all(extra.map((c) => opOk(engine.split(E, c, U))));
  await Promise.all(extra.slice(0, 12).map((c) => opOk(engine.merge(E, c, U))));
  assert.equal((await ok(`/positions?user=${E}`)).length, 100);
  assert.equal((await ok(`/positions?user=${E}&limit=500`)).length, 102);
  assert.equal((await ok(`/closed-positions?user=${E}`)).length, 10);
  assert.equal((await ok(`/closed-positions?user=${E}&limit=50`)).length, 24);
  // Rows of an engine-only market: no catalog metadata, the catalog's default labels.
  const [row] = await ok(`/positions?user=${E}&market=${extra[20]}`);
  assert.deepEqual([row.title, row.slug, row.eventSlug, row.icon, row.endDate, row.outcome, row.oppositeOutcome], ['', '', '', '', '', 'Yes', 'No']);
});

// ---- errors -----------------------------------------------------------------------------------------

const longTitle = 'x'.repeat(101);
const errorCases: [string, number, string][] = [
  ['/trades?foo=1', 400, 'unknown_field: foo'],
  ['/trades?limit=5&Limit=5', 400, 'unknown_field: Limit'],
  ['/trades?limit=10001', 400, 'invalid_field: limit'],
  ['/trades?limit=-1', 400, 'invalid_field: limit'],
  ['/trades?limit=abc', 400, 'invalid_field: limit'],
  ['/trades?limit=1.5', 400, 'invalid_field: limit'],
  ['/trades?offset=10001', 400, 'invalid_field: offset'],
  ['/trades?takerOnly=yes', 400, 'invalid_field: takerOnly'],
  ['/trades?filterType=CASH', 400, 'missing_field: filterAmount'],
  ['/trades?filterAmount=1', 400, 'missing_field: filterType'],
  ['/trades?filterType=USD&filterAmount=1', 400, 'invalid_field: filterType'],
  ['/trades?filterType=CASH&filterAmount=-1', 400, 'invalid_field: filterAmount'],
  ['/trades?filterType=CASH&filterAmount=abc', 400, 'invalid_field: filterAmount'],
  ['/trades?market=0x1234', 400, 'invalid_field: market'],
  [`/trades?market=${M1},nope`, 400, 'invalid_field: market'],
  ['/trades?market=', 400, 'invalid_field: market'],
  [`/trades?market=${Array.from({ length: 101 }, () => M1).join(',')}`, 400, 'invalid_field: market'],
  ['/trades?user=0x123', 400, 'invalid_field: user'],
  ['/trades?side=buy', 400, 'invalid_field: side'],
  ['/positions', 400, 'missing_field: user'],
  ['/positions?limit=5', 400, 'missing_field: user'],
  ['/positions?foo=1', 400, 'unknown_field: foo'],
  ['/positions?user=abc', 400, 'invalid_field: user'],
  [`/positions?user=${A}&limit=501`, 400, 'invalid_field: limit'],
  [`/positions?user=${A}&offset=10001`, 400, 'invalid_field: offset'],
  [`/positions?user=${A}&sizeThreshold=-0.5`, 400, 'invalid_field: sizeThreshold'],
  [`/positions?user=${A}&redeemable=1`, 400, 'invalid_field: redeemable'],
  [`/positions?user=${A}&mergeable=maybe`, 400, 'invalid_field: mergeable'],
  [`/positions?user=${A}&sortBy=SIZE`, 400, 'invalid_field: sortBy'],
  [`/positions?user=${A}&sortBy=tokens`, 400, 'invalid_field: sortBy'],
  [`/positions?user=${A}&sortBy=REALIZEDPNL`, 400, 'invalid_field: sortBy'],
  [`/positions?user=${A}&sortDirection=UP`, 400, 'invalid_field: sortDirection'],
  [`/positions?user=${A}&title=${longTitle}`, 400, 'invalid_field: title'],
  [`/positions?user=${A}&takerOnly=true`, 400, 'unknown_field: takerOnly'],
  ['/closed-positions', 400, 'missing_field: user'],
  ['/closed-positions?foo=1', 400, 'unknown_field: foo'],
  [`/closed-positions?user=${A}&limit=51`, 400, 'invalid_field: limit'],
  [`/closed-positions?user=${A}&offset=100001`, 400, 'invalid_field: offset'],
  [`/closed-positions?user=${A}&sortBy=TOKENS`, 400, 'invalid_field: sortBy'],
  [`/closed-positions?user=${A}&sortDirection=desc`, 400, 'invalid_field: sortDirection'],
  [`/closed-positions?user=${A}&title=${longTitle}`, 400, 'invalid_field: title'],
  [`/closed-positions?user=${A}&sizeThreshold=1`, 400, 'unknown_field: sizeThreshold'],
];

for (const [path, status, error] of errorCases) {
  test(`GET ${path.length > 90 ? path.slice(0, 90) + '...' : path} -> ${status} ${error}`, async () => {
    const r = await get(path);
    assert.equal(r.status, status);
    assert.deepEqual(r.body, { error });
  });
}

test('bounds that are allowed', async () => {
  for (const path of [
    '/trades?limit=10000&offset=10000',
    '/trades?limit=0&offset=0',
    `/positions?user=${A}&limit=500&offset=10000&title=${'x'.repeat(100)}`,
    `/closed-positions?user=${A}&limit=50&offset=100000&title=${'x'.repeat(100)}`,
    `/trades?market=${Array.from({ length: 100 }, () => M1).join(',')}`,
  ]) {
    assert.equal((await get(path)).status, 200, path);
  }
});

test('a failing storage read answers 500 internal_error and the service keeps serving', async () => {
  const fresh = '0x' + '77'.repeat(20);
  // Ranges nothing has read before: what the reader already holds in memory (the committed trade rows it
  // walked, rendered rows) is served without a storage read.
  const unread = [`/positions?user=${fresh}`, `/closed-positions?user=${'0x' + '78'.repeat(20)}`, `/trades?user=${'0x' + '79'.repeat(20)}`, `/trades?market=${'0x' + '7a'.repeat(32)}`];
  failing.reads = true;
  try {
    for (const path of unread) {
      const r = await get(path);
      assert.equal(r.status, 500, path);
      assert.deepEqual(r.body, { error: 'internal_error: unexpected database failure' });
    }
  } finally {
    failing.reads = false;
  }
  assert.deepEqual(await ok(`/positions?user=${fresh}`), []);
  assert.equal((await ok('/trades')).length, 100);
});

test('IP allowlist: 401 unauthorized: ip_not_allowlisted before anything else; allowlisted callers pass', async () => {
  const other = await startApp(
    testConfig({
      dataDir: mkdtempSync(join(tmpdir(), 'pm-wallets-ip-')),
      http: { port: 0, trustedProxies: ['127.0.0.1'] },
      dataApi: { ipAllowlist: ['10.1.2.0/24', '::1'] },
      demo: false,
      rateLimits: { enabled: false },
    }),
    { log: silentLogger },
  );
  try {
    const url = (p: string) => `http://127.0.0.1:${other.port}${p}`;
    const call = async (p: string, xff?: string) => {
      const r = await fetch(url(p), { headers: xff ? { 'x-forwarded-for': xff } : {} });
      return { status: r.status, body: await r.json() };
    };
    const denied = { status: 401, body: { error: 'unauthorized: ip_not_allowlisted' } };
    for (const p of ['/trades', `/positions?user=${A}`, `/closed-positions?user=${A}`, '/trades?foo=1', '/positions']) {
      assert.deepEqual(await call(p), denied, `${p} from 127.0.0.1`);
      assert.deepEqual(await call(p, '10.9.9.9'), denied, `${p} from 10.9.9.9`);
    }
    assert.deepEqual(await call('/trades', '10.1.2.3'), { status: 200, body: [] });
    assert.deepEqual(await call(`/positions?user=${A}`, '10.1.2.254'), { status: 200, body: [] });
    assert.deepEqual(await call('/trades?foo=1', '10.1.2.3'), { status: 400, body: { error: 'unknown_field: foo' } });
    // The allowlist covers the wallet data routes only.
    assert.equal((await fetch(url('/'))).status, 200);
  } finally {
    await other.stop();
  }
});

test('a catalog edit of a market shows at once in trades and positions', async () => {
  const before = await ok(`/trades?market=${M2}`);
  assert.equal(before[0].title, 'Will BTC close above 100k?');
  const edited = [{
    title: 'Wallet data e2e', slug: 'wallet-e2e', icon: 'https://img/event.png', endDate: '2026-12-31T00:00:00Z',
    markets: [{ question: 'Will BTC close above 120k?', conditionId: M2, slug: 'btc-100k', endDate: '2026-03-31T00:00:00Z', clobTokenIds: TOK[M2], orderMinSize: 1, orderPriceMinTickSize: '0.01', acceptingOrders: true }],
  }];
  const r = await fetch(base + '/admin/events', { method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: JSON.stringify(edited) });
  assert.equal(r.status, 200, await r.text());
  assert.deepEqual((await ok(`/trades?market=${M2}`)).map((t: { title: string }) => t.title), ['Will BTC close above 120k?', 'Will BTC close above 120k?']);
  const closed = await ok(`/closed-positions?user=${A}&market=${M2}`);
  assert.equal(closed[0].title, 'Will BTC close above 120k?');
});

// ---- restart: the projections catch up from the journal ---------------------------------------------

async function snapshotAnswers(): Promise<string> {
  await engine.refreshSnapshot(M1);
  const paths = [
    `/positions?user=${A}&sizeThreshold=0`,
    `/positions?user=${B}&sizeThreshold=0`,
    `/positions?user=${C}&sizeThreshold=0`,
    `/positions?user=${E}&limit=500&sortBy=TITLE`,
    `/closed-positions?user=${A}&limit=50`,
    `/closed-positions?user=${E}&limit=50`,
    '/trades?takerOnly=false&limit=10000',
    `/trades?user=${B}&takerOnly=false`,
  ];
  const out: unknown[] = [];
  for (const p of paths) out.push(await ok(p));
  return JSON.stringify(out);
}

async function restartWith(edit: (store: Store) => Promise<void>): Promise<void> {
  await app.stop();
  const store = openStore({ dataDir });
  await edit(store);
  await store.close();
  await start();
}

test('after a restart the projections catch up: cursors reset (replay over the views), then views wiped', async () => {
  const before = await snapshotAnswers();
  assert.ok(before.includes('5.000002'));
  const cursors = [POSITIONS_PROJECTION, TRADES_PROJECTION].map((n) => metaKeys.projectionCursor(n));

  // Replaying every event over views that already hold them changes nothing.
  await restartWith(async (store) => {
    for (const k of cursors) await store.meta.remove(k);
  });
  assert.equal(await snapshotAnswers(), before, 'replay over existing views');

  // Views lost entirely (or a new build): rebuilt from the journal alone.
  await restartWith(async (store) => {
    const walletKeys = [...store.views.getKeys({})].filter((k) => typeof (k as Key)[0] === 'string' && /^w(pos|mkt|tr-)/.test((k as Key)[0] as string));
    assert.ok(walletKeys.length > 100);
    await store.views.transaction(() => {
      for (const k of walletKeys) store.views.remove(k as Key);
      for (const k of cursors) store.meta.remove(k);
    });
  });
  assert.equal(await snapshotAnswers(), before, 'rebuilt from the journal');
});
