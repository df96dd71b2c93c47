/**
 * The key builders (journal/keys.ts) against LMDB's own order (ordered-binary, the key encoding of every
 * array-keyed database in env.ts): each range builder selects exactly the keys its readers mean, next to
 * keys that share a textual prefix ('0xab' and '0xabc', '12' and '123'), and the keys inside come out in
 * the order the queries page by: journal seq, time then seq, catalog id and sort value numerically.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { openStore, type Store } from '../../src/journal/env.ts';
import {
  MAKER_ROLE,
  TAKER_ROLE,
  balanceKey,
  builderTradeKeys,
  catalogIx,
  catalogKey,
  catalogRange,
  prefixRange,
  priceKey,
  priceRange,
  walletBalancesRange,
  walletViewKeys,
  type Key,
} from '../../src/journal/keys.ts';
import { tempDir } from '../fixtures/edge.ts';

let dir: string;
let store: Store;
before(() => {
  dir = tempDir();
  store = openStore({ dataDir: dir });
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const show = (keys: Key[]) => keys.map((k) => JSON.stringify(k));

/**
 * Stores `keys` (in reverse, so that the order read back is LMDB's, not the insertion order) and returns
 * those in `range` as the queries read them: getRange(start, end), end excluded; `reverse` the way
 * ViewStore.range walks newest first.
 */
function read(keys: Key[], range: { start: Key; end: Key }, reverse = false): string[] {
  store.indexes.clearSync();
  for (const k of [...keys].reverse()) store.indexes.putSync(k, Buffer.alloc(0));
  const opts = reverse ? { start: range.end, end: range.start, reverse: true } : range;
  return show([...store.indexes.getKeys(opts)] as Key[]);
}

test('a prefix range holds every key under the prefix and no key whose part merely starts the same', () => {
  const w = '0xab';
  const inside: Key[] = [
    walletViewKeys.position(w, '0x01', 0),
    walletViewKeys.position(w, '0x01', 1),
    walletViewKeys.position(w, '0xc1', 0),
    walletViewKeys.position(w, 'é', 0),
    walletViewKeys.position(w, '中', 1),
    walletViewKeys.position(w, '\ufffe', 0),
  ];
  const outside: Key[] = [
    walletViewKeys.position('0xa', 'b', 0),
    walletViewKeys.position('0xaa', '0x01', 0),
    walletViewKeys.position('0xabc', '0x01', 0),
    walletViewKeys.position('0xac', '0x01', 0),
    walletViewKeys.market(w),
    walletViewKeys.tradeByWallet(w, TAKER_ROLE, 1),
  ];
  assert.deepEqual(read([...outside, ...inside], prefixRange(walletViewKeys.positionsOf(w))), show(inside));
});

test("a wallet's trade rows in one role come in journal seq order (numeric), newest first in reverse", () => {
  const seqs = [1, 9, 10, 100, 65_536, 2 ** 40];
  const mine = seqs.map((s) => walletViewKeys.tradeByWallet('0xab', MAKER_ROLE, s));
  const others = [
    ...seqs.map((s) => walletViewKeys.tradeByWallet('0xab', TAKER_ROLE, s)),
    walletViewKeys.tradeByWallet('0xabc', MAKER_ROLE, 5),
    walletViewKeys.tradeByWallet('0xa', MAKER_ROLE, 5),
    walletViewKeys.tradeByMarket('0xab', MAKER_ROLE, 5),
    walletViewKeys.tradeAll(MAKER_ROLE, 5),
  ];
  const range = prefixRange(walletViewKeys.tradesByWalletPrefix('0xab', MAKER_ROLE));
  assert.deepEqual(read([...others, ...mine], range), show(mine));
  assert.deepEqual(read([...others, ...mine], range, true), show([...mine].reverse()));
});

test("a market's and the global trade rows: one role, seq order, nothing of another market or role", () => {
  const cid = '0x' + 'c'.repeat(64);
  const market = [3, 20, 100].map((s) => walletViewKeys.tradeByMarket(cid, TAKER_ROLE, s));
  const all = [3, 20, 100].map((s) => walletViewKeys.tradeAll(MAKER_ROLE, s));
  const noise = [walletViewKeys.tradeByMarket(cid, MAKER_ROLE, 4), walletViewKeys.tradeByMarket(cid + '0', TAKER_ROLE, 4), walletViewKeys.tradeAll(TAKER_ROLE, 4)];
  const keys = [...noise, ...market, ...all];
  assert.deepEqual(read(keys, prefixRange(walletViewKeys.tradesByMarketPrefix(cid, TAKER_ROLE))), show(market));
  assert.deepEqual(read(keys, prefixRange(walletViewKeys.tradesAllPrefix(MAKER_ROLE))), show(all));
});

test('price samples: from and to included, in time order, never a token whose id extends this one', () => {
  const inside = [100, 101, 159, 160].map((t) => priceKey('12', t));
  const outside = [priceKey('12', 99), priceKey('12', 161), priceKey('123', 120), priceKey('1', 120), priceKey('13', 120)];
  assert.deepEqual(read([...outside, ...inside], priceRange('12', 100, 160)), show(inside));
});

test('builder trades: fromMs <= ts < toMs, by time then seq, one dimension value only', () => {
  const user = '0x' + '1'.repeat(40);
  const inside = [
    builderTradeKeys.entry('user', user, 1_000, 7),
    builderTradeKeys.entry('user', user, 1_000, 12),
    builderTradeKeys.entry('user', user, 1_001, 3),
    builderTradeKeys.entry('user', user, 1_999, 50),
  ];
  const outside = [
    builderTradeKeys.entry('user', user, 999, 99),
    builderTradeKeys.entry('user', user, 2_000, 1),
    builderTradeKeys.entry('user', user + '0', 1_500, 1),
    builderTradeKeys.entry('builder', user, 1_500, 1),
    builderTradeKeys.entry('all', '', 1_500, 1),
  ];
  assert.deepEqual(read([...outside, ...inside], builderTradeKeys.range('user', user, 1_000, 2_000)), show(inside));
  const all = [builderTradeKeys.entry('all', '', 5, 1), builderTradeKeys.entry('all', '', 6, 2)];
  assert.deepEqual(read([...inside, ...all], builderTradeKeys.range('all', '', 0, 10)), show(all), "the 'all' dimension's value is ''");

  const taker = '0x' + 'd'.repeat(64);
  const fills = [2, 10, 11].map((s) => builderTradeKeys.ofTaker(taker, s));
  assert.deepEqual(read([builderTradeKeys.ofTaker(taker + '0', 1), builderTradeKeys.byId(taker), ...fills], builderTradeKeys.ofTakerRange(taker)), show(fills));
});

test('catalog ids are numbers in index keys: id 9 before id 10, within a scope and apart from the next scope', () => {
  const list = [1, 9, 10, 100, 2 ** 50].map((id) => catalogIx.marketList('all', id));
  const outside = [catalogIx.marketList('all2', 5), catalogIx.marketList('al', 5), catalogIx.marketSampling('all', 5)];
  assert.deepEqual(read([...outside, ...list], catalogIx.marketListRange('all')), show(list));

  const slugs = [catalogIx.eventSlug('btc', 3), catalogIx.eventSlug('btc', 20)];
  assert.deepEqual(read([catalogIx.eventSlug('btc-up', 1), catalogIx.eventSlug('bt', 2), ...slugs], catalogIx.eventSlugRange('btc')), show(slugs));
});

test('event sort keys: one scope, status and column, ordered by the value (numbers numerically, ISO dates in time) then id', () => {
  const byVolume = [
    catalogIx.eventSort('all', 4, 'volume', 0, 8),
    catalogIx.eventSort('all', 4, 'volume', 0.5, 2),
    catalogIx.eventSort('all', 4, 'volume', 2, 9),
    catalogIx.eventSort('all', 4, 'volume', 2, 10),
    catalogIx.eventSort('all', 4, 'volume', 10, 1),
    catalogIx.eventSort('all', 4, 'volume', 1e15, 1),
  ];
  const outside = [
    catalogIx.eventSort('all', 5, 'volume', 1, 1),
    catalogIx.eventSort('all', 3, 'volume', 1, 1),
    catalogIx.eventSort('all', 4, 'volume24hr', 1, 1),
    catalogIx.eventSort('all:x', 4, 'volume', 1, 1),
  ];
  assert.deepEqual(read([...outside, ...byVolume], catalogIx.eventSortRange('all', 4, 'volume')), show(byVolume));
  const byDate = ['2025-12-31T23:59:59.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.001Z', '2027-02-01T00:00:00.000Z'].map((d, i) =>
    catalogIx.eventSort('all', 4, 'endDate', d, 10 - i),
  );
  assert.deepEqual(read([...byDate].reverse(), catalogIx.eventSortRange('all', 4, 'endDate')), show(byDate));
});

test('a text prefix range holds every term that starts with the text, whatever follows, and no other term', () => {
  const inside = [
    catalogIx.eventTerm('all', 'bit', 1, 3, 1),
    catalogIx.eventTerm('all', 'bitcoin', 2, 1, 0),
    catalogIx.eventTerm('all', 'bitcoin', 3, 1, 1),
    catalogIx.eventTerm('all', 'bitté', 4, 1, 1),
    catalogIx.eventTerm('all', 'bit中', 5, 1, 1),
  ];
  const outside = [
    catalogIx.eventTerm('all', 'bi', 6, 1, 1),
    catalogIx.eventTerm('all', 'bis', 7, 1, 1),
    catalogIx.eventTerm('all', 'biu', 8, 1, 1),
    catalogIx.eventTerm('site-a', 'bitcoin', 9, 1, 1),
    catalogIx.tagTerm('bitcoin', 1),
  ];
  assert.deepEqual(read([...outside, ...inside], catalogIx.eventTermPrefixRange('all', 'bit')), show(inside));
  const tags = [catalogIx.tagTerm('pol', 2), catalogIx.tagTerm('politics', 1)];
  assert.deepEqual(read([catalogIx.tagTerm('po', 3), catalogIx.tagTerm('pom', 4), ...tags], catalogIx.tagTermPrefixRange('pol')), show(tags));
});

test('entities of one kind and balances of one wallet', () => {
  const markets = ['1', '2', '20'].map((id) => catalogKey('market', id));
  assert.deepEqual(read([catalogKey('event', '1'), catalogKey('marketx' as 'market', '1'), ...markets], catalogRange('market')), show(markets));
  const mine = [balanceKey('0xab', '12'), balanceKey('0xab', 'USDC')];
  assert.deepEqual(read([balanceKey('0xabc', 'USDC'), balanceKey('0xa', 'USDC'), ...mine], walletBalancesRange('0xab')), show(mine));
});
