/**
 * GET /trades through the wallet data reader (queries/wallets/trades.ts, trade-runs.ts, trade-rows.ts) on a
 * real store: the committed trade views and the fills the projection has not committed yet read as one
 * newest-first list (compared with a brute-force oracle), rendered rows kept and evicted, and the runs of
 * committed rows exact through every path.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FillEvent } from '../../../src/domain/events.ts';
import { openStore } from '../../../src/journal/env.ts';
import { metaKeys, profileKey, type Key } from '../../../src/journal/keys.ts';
import { JournalWriter } from '../../../src/journal/writer.ts';
import { ViewStore } from '../../../src/projections/projector.ts';
import { TRADES_PROJECTION, WalletTradesProjection } from '../../../src/projections/wallets.ts';
import { CatalogReader } from '../../../src/queries/catalog.ts';
import { META_TTL_MS } from '../../../src/queries/wallets/market-meta.ts';
import { WalletDataReader } from '../../../src/queries/wallets/reader.ts';
import { PROFILE_TTL_MS } from '../../../src/queries/wallets/trade-rows.ts';
import type { RunLimits } from '../../../src/queries/wallets/trade-runs.ts';
import type { TradesParams } from '../../../src/queries/wallets/trades.ts';

const U = 1_000_000;
const cid = (d: string) => '0x' + d.repeat(64);

// ---- trades across the committed / not yet committed boundary ----------------------------------------

/**
 * `n` fills among three wallets and two markets, journaled (the rows render from the fills table), a
 * trades projection writing through a ViewStore, a reader, and a brute-force oracle over every
 * (fill, role) pair.
 */
async function tradeFixture(n: number, runLimits?: Partial<RunLimits>, now?: () => number, renderedLimit?: number) {
  const s = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-wt-')) });
  const v = new ViewStore(s.views);
  const wallets = ['0x' + '1'.repeat(40), '0x' + '2'.repeat(40), '0x' + '3'.repeat(40)];
  const markets = [cid('a'), cid('b')];
  const writer = new JournalWriter(s, 0, () => Date.UTC(2026, 0, 2));
  const fills: FillEvent[] = [];
  for (let i = 0; i < n; i++) {
    const taker = wallets[i % 3];
    const maker = wallets[(i + 1 + (i % 2)) % 3];
    const c = markets[i % 2];
    const size = (1 + (i % 7)) * U;
    const pips = 1000 + ((i * 700) % 8000);
    const takerSide = i % 4 === 0 ? 'SELL' : 'BUY';
    const kind = i % 5 === 0 ? 'MINT' : 'TRANSFER';
    const f = writer.append<FillEvent>({
      type: 'fill', seq: 0, ts: 0, tradeId: '', txHash: '', conditionId: c, kind, size, takerOrderId: `t${i}`, makerOrderId: `m${i}`,
      takerWallet: taker, makerWallet: maker, takerOwner: 'k', makerOwner: 'k', takerTokenId: '1', makerTokenId: kind === 'MINT' ? '2' : '1',
      takerOutcome: 0, makerOutcome: kind === 'MINT' ? 1 : 0, takerSide: kind === 'MINT' ? 'BUY' : takerSide,
      makerSide: kind === 'MINT' ? 'BUY' : takerSide === 'BUY' ? 'SELL' : 'BUY', takerPricePips: pips, makerPricePips: kind === 'MINT' ? 10_000 - pips : pips,
      takerUsdc: (size * pips) / 10_000, makerUsdc: (size * (kind === 'MINT' ? 10_000 - pips : pips)) / 10_000, takerFee: 0, makerFee: 0, makerRemaining: 0, builder: '0x',
    });
    fills.push(f);
  }
  await writer.flush()!.committed;
  const trades = new WalletTradesProjection(v);
  const r = new WalletDataReader({ store: s, views: v, catalog: new CatalogReader(s), runLimits, now, renderedLimit });
  /** Applies fills [from, to) and commits them with the cursor. */
  const commit = async (from: number, to: number) => {
    for (const f of fills.slice(from, to)) trades.apply(f);
    await s.meta.put(metaKeys.projectionCursor(TRADES_PROJECTION), fills[to - 1].seq);
    await s.views.flushed;
    await new Promise((done) => setImmediate(done));
  };

  type Row = { seq: number; role: number; wallet: string; side: string; size: number; usdc: number; cid: string; outcome: number; price: number };
  const all: Row[] = fills.flatMap((f) => [
    { seq: f.seq, role: 0, wallet: f.takerWallet, side: f.takerSide, size: f.size, usdc: f.takerUsdc, cid: f.conditionId, outcome: f.takerOutcome, price: f.takerPricePips },
    { seq: f.seq, role: 1, wallet: f.makerWallet, side: f.makerSide, size: f.size, usdc: f.makerUsdc, cid: f.conditionId, outcome: f.makerOutcome, price: f.makerPricePips },
  ]);
  all.sort((a, b) => b.seq - a.seq || a.role - b.role);
  const oracle = (p: TradesParams, upTo = Infinity) =>
    all
      .filter((x) => x.seq <= upTo)
      .filter((x) => (p.takerOnly ? x.role === 0 : true))
      .filter((x) => p.user === undefined || x.wallet === p.user)
      .filter((x) => p.markets === undefined || p.markets.includes(x.cid))
      .filter((x) => p.side === undefined || x.side === p.side)
      .filter((x) => !p.filter || (p.filter.type === 'CASH' ? x.usdc : x.size) / U >= p.filter.amount)
      .slice(p.offset, p.offset + p.limit)
      .map((x) => `${x.seq}/${x.wallet}/${x.side}/${x.cid}:${x.outcome}/${x.size / U}/${x.price / 10_000}/${x.usdc / U}`);
  const seqByHash = new Map(fills.map((f) => [f.txHash, f.seq]));
  const got = (p: TradesParams) => r.trades(p).map((t) => `${seqByHash.get(t.transactionHash)}/${t.proxyWallet}/${t.side}/${t.asset}/${t.size}/${t.price}/${t.usdcSize}`);
  return { s, v, r, fills, commit, oracle, got, wallets, markets };
}

test('trades: committed views and fills above the cursor read as one newest-first list', async () => {
  const { s, v, r, fills, commit, oracle, got, wallets, markets } = await tradeFixture(40);
  // The trades projection committed the first 25 fills (its cursor says so).
  await commit(0, 25);
  const cases: TradesParams[] = [];
  const d: TradesParams = { limit: 100, offset: 0, takerOnly: true };
  for (const takerOnly of [true, false]) {
    cases.push({ ...d, takerOnly });
    cases.push({ ...d, takerOnly, offset: 10, limit: 10 });
    cases.push({ ...d, takerOnly, offset: 14, limit: 3 });
    for (const w of wallets) cases.push({ ...d, takerOnly, user: w }, { ...d, takerOnly, user: w, side: 'SELL' }, { ...d, takerOnly, user: w, markets: [markets[1]] });
    cases.push({ ...d, takerOnly, markets: [markets[0]] }, { ...d, takerOnly, markets: markets, offset: 3, limit: 20 });
    cases.push({ ...d, takerOnly, side: 'BUY', filter: { type: 'CASH', amount: 2.1 } }, { ...d, takerOnly, filter: { type: 'TOKENS', amount: 4 } });
  }
  // The reader keeps what it read of each committed range: these answers leave runs at cursor 25.
  for (const p of cases) assert.deepEqual(got(p), oracle(p, 25), `committed only: ${JSON.stringify(p)}`);

  // The other 15 are applied but not committed (same turn): they are in the ViewStore overlay only.
  const trades = new WalletTradesProjection(v);
  for (const f of fills.slice(25)) trades.apply(f);
  assert.ok(v.queued > 0);
  for (const p of cases) assert.deepEqual(got(p), oracle(p), `queued above the cursor: ${JSON.stringify(p)}`);
  assert.equal(r.trades({ ...d, takerOnly: false, limit: 1000 }).length, 80);
  assert.equal(r.trades({ ...d, limit: 0 }).length, 0);

  // A write may be committed while its queued copy is still in the overlay: such a row is listed once.
  const copies: Array<{ key: Key; value: unknown }> = [];
  const recorder = new WalletTradesProjection({ get: () => undefined, put: (key, value) => void copies.push({ key, value }) });
  for (const f of fills.slice(25)) recorder.apply(f);
  for (const { key, value } of copies) s.views.putSync(key, value);
  s.meta.putSync(metaKeys.projectionCursor(TRADES_PROJECTION), fills[39].seq);
  assert.ok(v.queued > 0);
  for (const p of cases) assert.deepEqual(got(p), oracle(p), `committed and still queued: ${JSON.stringify(p)}`);

  // Once they commit with the cursor, the runs are brought up to it and the answers are the same.
  await s.meta.put(metaKeys.projectionCursor(TRADES_PROJECTION), fills[39].seq);
  await s.views.flushed;
  await new Promise((done) => setImmediate(done));
  assert.equal(v.queued, 0);
  for (const p of cases) assert.deepEqual(got(p), oracle(p), `caught up: ${JSON.stringify(p)}`);
  await s.close();
});

test('trades: a rendered row is kept while its market metadata and wallet profile are unchanged, and written again once one changed', async () => {
  let t = 0;
  const { s, r, commit, wallets } = await tradeFixture(6, undefined, () => t);
  await commit(0, 6);
  const page = () => r.trades({ limit: 100, offset: 0, takerOnly: true, user: wallets[0] });
  const first = page();
  assert.ok(first.length > 0 && first.every((row) => row.name === ''));
  // Rows are rendered from the fill record: with the fills table unreadable, only kept rows can be served.
  const get = s.fills.get.bind(s.fills);
  s.fills.get = ((k: number) => {
    throw new Error(`fill ${k} read again`);
  }) as typeof s.fills.get;
  t = META_TTL_MS + PROFILE_TTL_MS;
  assert.deepEqual(page(), first, 'metadata and profile re-read, unchanged: the kept rows');
  await s.profiles.put(profileKey(wallets[0]), { name: 'Renamed' });
  t = META_TTL_MS + 2 * PROFILE_TTL_MS + 1;
  assert.throws(page, /read again/, 'a changed profile writes the rows again');
  s.fills.get = get;
  assert.ok(page().every((row) => row.name === 'Renamed'));
  await s.close();
});

test('trades: rendered rows beyond the limit are dropped, rows served again kept longest', async () => {
  const { s, commit, oracle, got } = await tradeFixture(30, undefined, undefined, 4);
  await commit(0, 30);
  let reads = 0;
  const get = s.fills.get.bind(s.fills);
  s.fills.get = ((k: number) => {
    reads++;
    return get(k);
  }) as typeof s.fills.get;
  const page = (offset: number, limit: number) => {
    const p: TradesParams = { limit, offset, takerOnly: true };
    reads = 0;
    assert.deepEqual(got(p), oracle(p));
    return reads;
  };
  assert.equal(page(0, 2), 2, 'rendered');
  assert.equal(page(0, 2), 0, 'kept');
  assert.equal(page(2, 2), 2, 'two more: four kept');
  assert.equal(page(0, 2), 0, 'served again: marked used');
  assert.equal(page(4, 2), 2, 'two more: the two oldest unused ones make room');
  assert.equal(page(0, 2), 0, 'used ones got a second chance');
  assert.equal(page(2, 2), 2, 'dropped ones are rendered again');
  assert.equal(page(10, 12), 12, 'a page larger than the limit is served whole');
  assert.equal(page(0, 30), 30);
  await s.close();
});

test('trades: a run reads ahead at most readAhead rows beyond what the request lists', async () => {
  const { s, commit, oracle, got } = await tradeFixture(240, { firstRead: 4, readAhead: 8 });
  await commit(0, 240);
  const limits: number[] = [];
  const getRange = s.views.getRange.bind(s.views);
  s.views.getRange = ((o: { limit?: number }) => {
    if (o.limit !== undefined) limits.push(o.limit);
    return getRange(o as never);
  }) as typeof s.views.getRange;
  // Walk the global taker range down one page at a time: the run grows to ~200 rows, so without the cap
  // each extension would read as many rows again as the run already holds.
  for (let offset = 0; offset < 200; offset += 10) {
    const p: TradesParams = { limit: 10, offset, takerOnly: true };
    assert.deepEqual(got(p), oracle(p));
  }
  assert.ok(limits.length > 5, `the run was extended ${limits.length} times`);
  assert.ok(Math.max(...limits) <= 10 + 8, `largest read ${Math.max(...limits)} rows`);
  s.views.getRange = getRange;
  await s.close();
});

test('trades: runs of committed rows stay exact when extended, brought up, started over, capped and evicted', async () => {
  // Small limits, so that 240 fills reach every path: reads of 4 rows doubling, a run started over after
  // 8 new rows, at most 30 rows a run (deeper pages stream), 50 rows in all (runs evicted in turn).
  const { s, commit, oracle, got, wallets, markets } = await tradeFixture(240, { firstRead: 4, refreshRows: 8, rowsCap: 30, rowsLimit: 50 });
  const cases: TradesParams[] = [];
  for (const takerOnly of [true, false]) {
    for (const [offset, limit] of [[0, 3], [2, 5], [7, 20], [25, 10], [60, 30], [150, 100]]) {
      const d: TradesParams = { limit, offset, takerOnly };
      cases.push(d, { ...d, side: 'SELL' }, { ...d, filter: { type: 'TOKENS', amount: 6 } }, { ...d, markets: [markets[1]] }, { ...d, markets });
      for (const w of wallets) cases.push({ ...d, user: w }, { ...d, user: w, markets: [markets[0]], side: 'BUY' });
    }
  }
  let upTo = 0;
  for (const [from, to] of [[0, 100], [100, 103], [103, 104], [104, 130], [130, 240]]) {
    await commit(from, to);
    upTo = to;
    // Twice in turn, and once backwards: runs are created, hit, extended and evicted in different orders.
    for (const p of [...cases, ...cases, ...[...cases].reverse()]) assert.deepEqual(got(p), oracle(p, upTo), `after ${to} fills: ${JSON.stringify(p)}`);
  }
  await s.close();
});

test('trades: a condition id listed twice in `market` lists its rows once', async () => {
  const { s, v, fills, commit, oracle, got, markets, wallets } = await tradeFixture(30);
  await commit(0, 20);
  // The other 10 only queued in the overlay: both sources are read per listed market.
  const trades = new WalletTradesProjection(v);
  for (const f of fills.slice(20)) trades.apply(f);
  for (const takerOnly of [true, false]) {
    const d: TradesParams = { limit: 100, offset: 0, takerOnly };
    assert.deepEqual(got({ ...d, markets: [markets[0], markets[0]] }), oracle({ ...d, markets: [markets[0]] }), `takerOnly=${takerOnly}`);
    assert.deepEqual(got({ ...d, markets: [markets[1], markets[0], markets[1]] }), oracle({ ...d, markets }), `takerOnly=${takerOnly}, both`);
    assert.deepEqual(got({ ...d, user: wallets[0], markets: [markets[1], markets[1]] }), oracle({ ...d, user: wallets[0], markets: [markets[1]] }));
  }
  await s.close();
});

test('a deferred fill is listed once MINED, in the place of its MINED move, rendered from its own fill; a FAILED one never', async () => {
  const s = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-wt-')) });
  const v = new ViewStore(s.views);
  const A = '0x' + '1'.repeat(40);
  const B = '0x' + '2'.repeat(40);
  const writer = new JournalWriter(s, 0, () => Date.UTC(2026, 0, 2));
  const fillOf = (i: number, deferred: boolean): FillEvent => ({
    type: 'fill', seq: 0, ts: 0, tradeId: '', txHash: '', conditionId: cid('a'), kind: 'TRANSFER', size: i * U, takerOrderId: `t${i}`, makerOrderId: `m${i}`,
    takerWallet: A, makerWallet: B, takerOwner: 'k', makerOwner: 'k', takerTokenId: '1', makerTokenId: '1', takerOutcome: 0, makerOutcome: 0,
    takerSide: 'BUY', makerSide: 'SELL', takerPricePips: 5000, makerPricePips: 5000, takerUsdc: (i * U) / 2, makerUsdc: (i * U) / 2, takerFee: 0, makerFee: 0,
    makerRemaining: 0, builder: '0x', ...(deferred ? { deferred: true as const } : {}),
  });
  const move = (f: FillEvent, status: 'MINED' | 'RETRYING' | 'FAILED') =>
    writer.append({ type: 'trade', seq: 0, ts: 0, tradeId: f.tradeId, fillSeq: f.seq, status, conditionId: f.conditionId, takerWallet: A, makerWallet: B, takerOwner: 'k', makerOwner: 'k' });
  const d1 = writer.append(fillOf(1, true));
  const d2 = writer.append(fillOf(2, true));
  const n3 = writer.append(fillOf(3, false));
  await writer.flush()!.committed;
  const events = [d1, d2, n3, move(d2, 'RETRYING'), move(d1, 'MINED'), move(d2, 'FAILED')];
  await writer.flush()!.committed;
  const stored = new Map([d1, d2, n3].map((f) => [f.seq, f]));
  const trades = new WalletTradesProjection(v, (seq) => stored.get(seq));
  const r = new WalletDataReader({ store: s, views: v, catalog: new CatalogReader(s) });
  const list = () => r.trades({ limit: 10, offset: 0, takerOnly: false, user: A }).map((t) => [t.size, t.transactionHash]);
  // Newest first: d1 landed (MINED) after n3 matched; d2 failed and is never listed.
  const expected = [[1, d1.txHash], [3, n3.txHash]];
  for (const e of events.slice(0, 4)) trades.apply(e);
  assert.deepEqual(list(), [[3, n3.txHash]], 'before MINED only the immediate trade');
  for (const e of events.slice(4)) trades.apply(e);
  assert.deepEqual(list(), expected, 'queued above the cursor');
  await s.meta.put(metaKeys.projectionCursor(TRADES_PROJECTION), events[events.length - 1].seq);
  await s.views.flushed;
  await new Promise((done) => setImmediate(done));
  const fresh = new WalletDataReader({ store: s, views: v, catalog: new CatalogReader(s) });
  assert.deepEqual(fresh.trades({ limit: 10, offset: 0, takerOnly: false, user: A }).map((t) => [t.size, t.transactionHash]), expected, 'committed');
  assert.deepEqual(fresh.trades({ limit: 10, offset: 0, takerOnly: true, markets: [cid('a')] }).map((t) => t.size), [1, 3], 'per market');
  assert.deepEqual(fresh.trades({ limit: 1, offset: 1, takerOnly: true }).map((t) => t.size), [3], 'global feed, paged');
  await s.close();
});
