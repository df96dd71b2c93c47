/**
 * The catalog write side against a real LMDB store: defaults, identity, idempotence, all-or-nothing
 * rejection (validation and a fault while writing), index maintenance, status and resolution, and
 * the engine notifications.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodePacked, hexToBigInt, keccak256, toHex } from 'viem';
import { openStore, type Store } from '../../src/journal/env.ts';
import { catalogIx, catalogKey } from '../../src/journal/keys.ts';
import { CatalogWriter, deriveConditionId, deriveTokenId, normalizeIso, type UpsertOutcome } from '../../src/projections/catalog.ts';
import type { EventRec, MarketRec, TradingMarket } from '../../src/projections/catalog/catalog-index.ts';
import { CatalogReader, getProfile } from '../../src/queries/catalog.ts';
import { ManualClock } from '../../src/runtime/clock.ts';
import type { EventInput, MarketInput } from '../../src/edge/schemas/admin.ts';

const root = mkdtempSync(join(tmpdir(), 'pm-'));
const stores: Store[] = [];
after(async () => {
  for (const s of stores) await s.close();
  rmSync(root, { recursive: true, force: true });
});

function setup() {
  const store = openStore({ dataDir: join(root, String(stores.length)) });
  stores.push(store);
  const clock = new ManualClock(Date.UTC(2026, 5, 1));
  return { store, clock, writer: new CatalogWriter(store, clock), reader: new CatalogReader(store) };
}

const cid = (n: number) => keccak256(toHex(`test condition ${n}`));

function mk(n: number, extra: Partial<MarketInput> = {}): MarketInput {
  return { question: `Will thing ${n} happen?`, conditionId: cid(n), ...extra };
}

function ev(n: number, extra: Partial<EventInput> = {}): EventInput {
  return { title: `Event number ${n}`, endDate: '2027-01-01', markets: [mk(n)], ...extra };
}

function ok(o: UpsertOutcome): Extract<UpsertOutcome, { ok: true }> {
  if (!o.ok) assert.fail(`upsert rejected: ${JSON.stringify(o.errors)}`);
  return o;
}

function errors(o: UpsertOutcome): { path: string; message: string }[] {
  if (o.ok) assert.fail('upsert was accepted');
  return o.errors;
}

const allIndexKeys = (store: Store) => [...store.indexes.getKeys({})].map((k) => JSON.stringify(k));
const allCatalogKeys = (store: Store) => [...store.catalog.getKeys({})].map((k) => JSON.stringify(k));

test('defaults: every optional field takes its documented value', async () => {
  const { writer, reader, clock } = setup();
  ok(await writer.upsertEvents([{ title: 'Will it rain in Paris?', endDate: '2027-01-01', markets: [{ question: 'Rain in Paris?', conditionId: cid(1) }] }]));
  const e = reader.event('1')!;
  const now = new Date(clock.now()).toISOString();
  assert.deepEqual(
    { slug: e.slug, ticker: e.ticker, description: e.description, image: e.image, active: e.active, closed: e.closed, archived: e.archived, negRisk: e.negRisk, creator: e.creator, createdAt: e.createdAt, creationDate: e.creationDate, startDate: e.startDate, endDate: e.endDate, eventMetadata: e.eventMetadata },
    { slug: 'will-it-rain-in-paris', ticker: 'will-it-rain-in-paris', description: '', image: '', active: true, closed: false, archived: false, negRisk: false, creator: '', createdAt: now, creationDate: now, startDate: now, endDate: '2027-01-01T00:00:00.000Z', eventMetadata: {} },
  );
  const m = reader.market('1')!;
  assert.deepEqual(m.outcomes, ['Yes', 'No']);
  assert.deepEqual(m.clobTokenIds, [deriveTokenId(cid(1), 0), deriveTokenId(cid(1), 1)]);
  assert.equal(m.slug, 'rain-in-paris');
  assert.equal(m.orderPriceMinTickSize, '0.01');
  assert.equal(m.orderMinSize, 5_000_000);
  assert.equal(m.makerBaseFee, 0);
  assert.equal(m.enableOrderBook, true);
  assert.equal(m.acceptingOrders, true);
  assert.equal(m.acceptingOrdersTimestamp, now);
  assert.equal(m.questionID, '');
  assert.equal(m.negRiskMarketID, '');
  assert.deepEqual(m.outcomePrices, []);
  assert.equal(m.startDate, e.startDate);
  assert.equal(m.endDate, e.endDate);
  assert.equal(m.winner, -1);
});

test('token ids and condition ids derive from the documented formulas', async () => {
  const { writer, reader } = setup();
  const questionID = keccak256(toHex('question'));
  ok(await writer.upsertEvents([ev(1, { markets: [{ question: 'Q?', questionID }] })]));
  const m = reader.market('1')!;
  const expectedCondition = keccak256(encodePacked(['address', 'bytes32', 'uint256'], ['0x0000000000000000000000000000000000000000', questionID, 2n]));
  assert.equal(deriveConditionId(questionID), expectedCondition);
  assert.equal(m.conditionId, expectedCondition);
  assert.equal(m.questionID, questionID);
  const token1 = hexToBigInt(keccak256(encodePacked(['bytes32', 'uint8'], [expectedCondition, 1]))).toString();
  assert.equal(m.clobTokenIds[1], token1);
});

test('re-importing the same events is a no-op: unchanged summary, same records, same index entries', async () => {
  const { writer, store, clock } = setup();
  const input = [
    ev(1, { tags: [{ label: 'Crypto' }, { id: '77', label: 'Macro', slug: 'macro' }], series: [{ title: 'Weekly', recurrence: 'weekly' }] }),
    ev(2, { negRisk: true, markets: [mk(2), mk(3)], creator: '0xAbCdEf0000000000000000000000000000000001' }),
  ];
  const first = ok(await writer.upsertEvents(input));
  assert.deepEqual(first.summary.events, { created: 2, updated: 0, unchanged: 0 });
  assert.deepEqual(first.summary.markets, { created: 3, updated: 0, unchanged: 0 });
  assert.deepEqual(first.summary.tags, { created: 2, updated: 0, unchanged: 0 });
  assert.deepEqual(first.summary.series, { created: 1, updated: 0, unchanged: 0 });
  const keys = allIndexKeys(store);
  const records = [...store.catalog.getRange({})].map((r) => JSON.stringify(r));
  clock.advance(3_600_000);
  const second = ok(await writer.upsertEvents(input));
  assert.deepEqual(second.summary, {
    events: { created: 0, updated: 0, unchanged: 2 },
    markets: { created: 0, updated: 0, unchanged: 3 },
    tags: { created: 0, updated: 0, unchanged: 2 },
    series: { created: 0, updated: 0, unchanged: 1 },
  });
  assert.equal(second.changedMarkets.length, 0);
  assert.deepEqual(allIndexKeys(store), keys);
  assert.deepEqual([...store.catalog.getRange({})].map((r) => JSON.stringify(r)), records);
});

test('an update moves the indexes and stamps updatedAt; absent optional fields fall back to defaults', async () => {
  const { writer, reader, store, clock } = setup();
  ok(await writer.upsertEvents([ev(1, { slug: 'old-slug', description: 'first' })]));
  const before = reader.event('1')!;
  clock.advance(60_000);
  const o = ok(await writer.upsertEvents([ev(1, { id: '1', slug: 'new-slug' })]));
  assert.deepEqual(o.summary.events, { created: 0, updated: 1, unchanged: 0 });
  const e = reader.event('1')!;
  assert.equal(e.description, '');
  assert.equal(e.createdAt, before.createdAt);
  assert.equal(e.updatedAt, new Date(clock.now()).toISOString());
  assert.equal(reader.eventBySlug('old-slug'), undefined);
  assert.equal(reader.eventBySlug('new-slug')?.id, '1');
  assert.equal([...store.indexes.getKeys(catalogIx.eventSlugRange('old-slug'))].length, 0);
});

test('identity: events by slug, markets by condition id, new ids never collide with explicit ones', async () => {
  const { writer, reader } = setup();
  ok(await writer.upsertEvents([ev(1, { slug: 's1' }), ev(2, { id: '5', slug: 's5', markets: [mk(2, { id: '3' })] })]));
  // s1 got id 6 (explicit 5 in the request raised the floor), its market id 4 (explicit 3).
  assert.equal(reader.eventBySlug('s1')?.id, '6');
  assert.equal(reader.marketByCondition(cid(1))?.id, '4');
  const o = ok(await writer.upsertEvents([ev(1, { slug: 's1', title: 'renamed' })]));
  assert.deepEqual(o.eventIds, ['6']);
  assert.equal(reader.event('6')?.title, 'renamed');
  assert.deepEqual(o.summary.markets, { created: 0, updated: 0, unchanged: 1 });
  const next = ok(await writer.upsertEvents([ev(9, { slug: 's9' })]));
  assert.deepEqual(next.eventIds, ['7']);
});

test('a bad event rejects the whole request with every problem, and stores nothing', async () => {
  const { writer, store, reader } = setup();
  ok(await writer.upsertEvents([ev(1, { slug: 'taken' })]));
  const keys = allIndexKeys(store);
  const records = allCatalogKeys(store);
  const errs = errors(
    await writer.upsertEvents([
      ev(2, { slug: 'fine', tags: [{ label: 'Fresh tag' }] }),
      ev(3, { id: '50', slug: 'taken' }),
      ev(4, { endDate: '2027-02-30', markets: [mk(4, { orderMinSize: 0.005 }), mk(5, { outcomes: '["Yes"]' })] }),
      ev(6, { markets: [{ question: 'no condition' }] }),
      ev(7, { tags: [{ slug: 'no-such-tag' }] }),
      ev(8, { markets: [mk(1)] }),
    ]),
  );
  const paths = errs.map((e) => e.path).sort();
  assert.deepEqual(paths, [
    '[1].slug',
    '[2].endDate',
    '[2].markets[0].orderMinSize',
    '[2].markets[1].outcomes',
    '[3].markets[0].conditionId',
    '[4].tags[0]',
    '[5].markets[0]',
  ]);
  assert.deepEqual(allIndexKeys(store), keys);
  assert.deepEqual(allCatalogKeys(store), records);
  assert.equal(reader.eventBySlug('fine'), undefined);
});

const rejections: { name: string; setup?: EventInput[]; input: EventInput[]; path: string; message: RegExp }[] = [
  { name: 'duplicate condition id in one request', input: [ev(1), ev(2, { markets: [mk(1, { slug: 'other' })] })], path: '[1].markets[0]', message: /already given/ },
  { name: 'same event twice', input: [ev(1, { id: '3' }), ev(2, { id: '3' })], path: '[1]', message: /already given/ },
  { name: 'token id used by another market', input: [ev(1), ev(2, { markets: [mk(2, { clobTokenIds: [deriveTokenId(cid(1), 0), '5'] })] })], path: '[1].markets[0].clobTokenIds', message: /also used by market/ },
  { name: 'condition id cannot change', setup: [ev(1, { markets: [mk(1, { id: '1' })] })], input: [ev(1, { markets: [mk(2, { id: '1' })] })], path: '[0].markets[0].conditionId', message: /cannot change/ },
  { name: 'token ids cannot change', setup: [ev(1)], input: [ev(1, { markets: [mk(1, { clobTokenIds: ['1', '2'] })] })], path: '[0].markets[0].clobTokenIds', message: /cannot change/ },
  { name: 'a market stays in its event', setup: [ev(1, { slug: 'a' })], input: [ev(2, { slug: 'b', markets: [mk(1)] })], path: '[0].markets[0]', message: /belongs to event 1/ },
  { name: 'neg-risk must match the event', input: [ev(1, { negRisk: true, markets: [mk(1, { negRisk: false })] })], path: '[0].markets[0].negRisk', message: /event's negRisk/ },
  { name: 'creator must match the event', input: [ev(1, { creator: 'site-a', markets: [mk(1, { creator: 'site-b' })] })], path: '[0].markets[0].creator', message: /event's creator/ },
  { name: 'tag defined twice differently', input: [ev(1, { tags: [{ id: '4', label: 'A' }] }), ev(2, { tags: [{ id: '4', label: 'B' }] })], path: '[1].tags[0]', message: /defined differently/ },
  { name: 'tag slug owned by another tag', setup: [ev(1, { tags: [{ id: '1', label: 'A', slug: 'x' }] })], input: [ev(2, { tags: [{ id: '2', label: 'B', slug: 'x' }] })], path: '[0].tags[0].slug', message: /already used by tag 1/ },
  { name: 'accepting orders on a closed market', input: [ev(1, { markets: [mk(1, { closed: true, acceptingOrders: true })] })], path: '[0].markets[0].acceptingOrders', message: /accepts orders only/ },
  { name: 'accepting orders without an order book', input: [ev(1, { markets: [mk(1, { enableOrderBook: false, acceptingOrders: true })] })], path: '[0].markets[0].acceptingOrders', message: /accepts orders only/ },
  { name: 'prices outside [0, 1]', input: [ev(1, { markets: [mk(1, { outcomePrices: ['1.5', '0'] })] })], path: '[0].markets[0].outcomePrices', message: /\[0, 1\]/ },
  { name: 'identical outcome labels', input: [ev(1, { markets: [mk(1, { outcomes: ['Yes', 'Yes'] })] })], path: '[0].markets[0].outcomes', message: /different/ },
  { name: 'outcomes not JSON', input: [ev(1, { markets: [mk(1, { outcomes: '[Yes, No' })] })], path: '[0].markets[0].outcomes', message: /JSON/ },
  { name: 'metadata too large', input: [ev(1, { eventMetadata: { blob: 'x'.repeat(20_000) } })], path: '[0].eventMetadata', message: /larger than/ },
  { name: 'title without a slug-able character', input: [ev(1, { title: '???' })], path: '[0].slug', message: /cannot be derived/ },
];

for (const c of rejections) {
  test(`rejects: ${c.name}`, async () => {
    const { writer, store } = setup();
    if (c.setup) ok(await writer.upsertEvents(c.setup));
    const keys = allIndexKeys(store);
    const errs = errors(await writer.upsertEvents(c.input));
    const hit = errs.find((e) => e.path === c.path);
    assert.ok(hit, `no problem at ${c.path}: ${JSON.stringify(errs)}`);
    assert.match(hit.message, c.message);
    assert.deepEqual(allIndexKeys(store), keys);
  });
}

test('a fault while writing aborts the transaction: nothing of the request is committed', async () => {
  const { writer, store, reader } = setup();
  ok(await writer.upsertEvents([ev(1)]));
  const keys = allIndexKeys(store);
  const records = allCatalogKeys(store);
  const put = store.indexes.put;
  let n = 0;
  store.indexes.put = function (this: typeof store.indexes, ...args: Parameters<typeof put>) {
    if (++n === 40) throw new Error('simulated disk fault');
    return put.apply(this, args);
  } as typeof put;
  try {
    await assert.rejects(writer.upsertEvents([ev(2, { tags: [{ label: 'T' }] }), ev(3), ev(4)]), /simulated disk fault/);
  } finally {
    store.indexes.put = put;
  }
  assert.ok(n >= 40);
  assert.deepEqual(allIndexKeys(store), keys);
  assert.deepEqual(allCatalogKeys(store), records);
  assert.equal(reader.eventBySlug('event-number-2'), undefined);
});

test('a market moved to closed leaves the sampling index and stops order intake; resolution is final', async () => {
  const { writer, reader, store } = setup();
  const seen: TradingMarket[][] = [];
  writer.onMarketsChanged((ms) => {
    seen.push(ms);
  });
  ok(await writer.upsertEvents([ev(1, { markets: [mk(1, { clobRewards: [{ rewardsDailyRate: 5 }] })] })]));
  assert.equal(seen.length, 1);
  assert.equal(seen[0][0].acceptingOrders, true);
  assert.equal(seen[0][0].tickPips, 100);
  assert.equal(seen[0][0].minSizeUnits, 5_000_000);
  assert.equal([...store.indexes.getKeys(catalogIx.marketSamplingRange('all'))].length, 1);

  const closed = await writer.setMarketStatus(cid(1), { closed: true });
  assert.ok(closed.ok);
  assert.equal(closed.market.acceptingOrders, false);
  assert.equal(seen.at(-1)![0].acceptingOrders, false);
  assert.equal([...store.indexes.getKeys(catalogIx.marketSamplingRange('all'))].length, 0);

  const refused = await writer.setMarketStatus(cid(1), { acceptingOrders: true });
  assert.ok(!refused.ok);
  assert.equal(refused.error.spec.code, 'PM_ERR_ADMIN_INVALID');

  const reopened = await writer.setMarketStatus(cid(1), { closed: false, acceptingOrders: true });
  assert.ok(reopened.ok && reopened.market.acceptingOrders);
  assert.ok(reopened.market.acceptingOrdersTimestamp !== '');

  const unknown = await writer.setMarketStatus(cid(99), { closed: true });
  assert.ok(!unknown.ok && unknown.error.spec.code === 'PM_ERR_ADMIN_MARKET_UNKNOWN');

  const resolved = await writer.markResolved(cid(1), 1);
  assert.ok(resolved.ok);
  assert.deepEqual([resolved.market.winner, resolved.market.closed, resolved.market.acceptingOrders], [1, true, false]);
  assert.equal(reader.tokenPrice(resolved.market, 1), 1);
  assert.equal(reader.tokenPrice(resolved.market, 0), 0);
  assert.ok((await writer.markResolved(cid(1), 1)).ok, 'the same resolution again is accepted');
  const other = await writer.markResolved(cid(1), 0);
  assert.ok(!other.ok && other.error.spec.code === 'PM_ERR_MARKET_RESOLVED');
  const reopen = await writer.setMarketStatus(cid(1), { closed: false });
  assert.ok(!reopen.ok && reopen.error.spec.code === 'PM_ERR_MARKET_RESOLVED');

  // An import cannot un-resolve: an explicit closed=false is refused, the default keeps it closed.
  const errs = errors(await writer.upsertEvents([ev(1, { markets: [mk(1, { closed: false })] })]));
  assert.match(errs[0].message, /resolved/);
  ok(await writer.upsertEvents([ev(1)]));
  const m = store.catalog.get(catalogKey('market', '1')) as MarketRec;
  assert.deepEqual([m.winner, m.closed, m.acceptingOrders], [1, true, false]);
});

test('a write is answered only once its listeners have settled (the engine has committed the markets)', async () => {
  const { writer } = setup();
  const held: { markets: TradingMarket[]; release: () => void }[] = [];
  writer.onMarketsChanged((markets) => new Promise<void>((release) => held.push({ markets, release })));
  const writes: [string, () => Promise<{ ok: boolean }>][] = [
    ['upsert', () => writer.upsertEvents([ev(1)])],
    ['status', () => writer.setMarketStatus(cid(1), { closed: true })],
    ['resolution', () => writer.markResolved(cid(1), 0)],
  ];
  for (const [name, write] of writes) {
    let answered = false;
    const w = write().then((o) => ((answered = true), o));
    while (held.length === 0) await new Promise((r) => setImmediate(r));
    const h = held.shift()!;
    assert.equal(h.markets[0].conditionId, cid(1), name);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(answered, false, `${name}: not answered while the listener is pending`);
    h.release();
    assert.equal((await w).ok, true, name);
  }
});

test('renaming a tag re-indexes the search terms of its events', async () => {
  const { writer, reader } = setup();
  ok(await writer.upsertEvents([ev(1, { tags: [{ id: '1', label: 'Zebras' }] }), ev(2, { tags: [{ id: '1', label: 'Zebras' }] })]));
  const search = (q: string) => reader.search({ q, limitPerType: 10, page: 1, searchTags: false }).events.map((e) => e.id).sort();
  assert.deepEqual(search('zebras'), ['1', '2']);
  ok(await writer.upsertEvents([ev(3, { tags: [{ id: '1', label: 'Giraffes', slug: 'zebras' }] })]));
  assert.deepEqual(search('zebras'), []);
  assert.deepEqual(search('giraffes'), ['1', '2', '3']);
});

test('markets are appended to their event, never removed', async () => {
  const { writer, reader } = setup();
  ok(await writer.upsertEvents([ev(1, { markets: [mk(1), mk(2)] })]));
  ok(await writer.upsertEvents([ev(1, { markets: [mk(3)] })]));
  const e = reader.event('1') as EventRec;
  assert.deepEqual(e.marketIds, ['1', '2', '3']);
});

test('dates: ISO forms normalize to UTC milliseconds, impossible dates are refused', () => {
  const cases: [string, string | undefined][] = [
    ['2027-01-01', '2027-01-01T00:00:00.000Z'],
    ['2027-01-01T10:00:00', '2027-01-01T10:00:00.000Z'],
    ['2027-01-01 10:00:00+0200', '2027-01-01T08:00:00.000Z'],
    ['2024-01-04T22:58:59.347924Z', '2024-01-04T22:58:59.347Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2025-02-29', undefined],
    ['2025-13-01', undefined],
    ['1800-01-01', undefined],
  ];
  for (const [input, expected] of cases) assert.equal(normalizeIso(input), expected, input);
});

test('profiles are replaced whole and read back with "" defaults', async () => {
  const { writer, store } = setup();
  const a = '0x00000000000000000000000000000000000000aa';
  assert.deepEqual(getProfile(store, a), { address: a, name: '', pseudonym: '', bio: '', profileImage: '', profileImageOptimized: '' });
  await writer.putProfile(a, { name: 'Alice', bio: 'hi' });
  await writer.putProfile(a, { pseudonym: 'al' });
  assert.deepEqual(getProfile(store, a.toUpperCase().replace('0X', '0x')), { address: a, name: '', pseudonym: 'al', bio: '', profileImage: '', profileImageOptimized: '' });
});
