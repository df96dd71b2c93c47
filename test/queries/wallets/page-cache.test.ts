/**
 * Rendered pages and their cache (queries/wallets/page-cache.ts): a JSON array written from row texts is
 * exactly JSON.stringify's, and the cache stays within its character budget by dropping the oldest pages
 * first, never keeps a page larger than a quarter of it, and replaces a page asked for again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PageCache, flat, jsonArray } from '../../../src/queries/wallets/page-cache.ts';

test('jsonArray joins row texts into the JSON array of the rows', () => {
  const rows = [{ a: 1 }, { b: 'x,"y"' }, { c: [1, 2] }];
  assert.equal(jsonArray([]), '[]');
  assert.equal(jsonArray([JSON.stringify(rows[0])]), JSON.stringify([rows[0]]));
  assert.equal(jsonArray(rows.map((r) => JSON.stringify(r))), JSON.stringify(rows));
});

test('flat keeps the text as it is', () => {
  const s = '{"t":"' + 'é ✓ 😀' + '"}';
  assert.equal(flat(s), s);
  assert.equal(flat(''), '');
});

const page = (n: number, tag = '') => ({ json: tag.padEnd(n, '.') });

test('PageCache drops the oldest pages once over its budget', () => {
  const cache = new PageCache<{ json: string }>(100);
  cache.set('a', page(20, 'a'));
  cache.set('b', page(20, 'b'));
  cache.set('c', page(20, 'c'));
  cache.set('d', page(20, 'd'));
  cache.set('e', page(25, 'e'));
  assert.deepEqual(['a', 'b', 'c', 'd', 'e'].map((k) => cache.get(k)?.json[0]), [undefined, 'b', 'c', 'd', 'e'], '105 chars: the oldest page goes');
  cache.set('b', page(10, 'B'));
  cache.set('f', page(25, 'f'));
  assert.equal(cache.get('c')?.json[0], 'c', 'exactly at the budget: nothing goes');
  cache.set('g', page(1, 'g'));
  assert.deepEqual(['b', 'c', 'd', 'e', 'f', 'g'].map((k) => cache.get(k)?.json[0]), ['B', undefined, 'd', 'e', 'f', 'g'], 'a page set again is the newest');
});

test('PageCache never keeps a page larger than a quarter of its budget, and forgets the one it replaced', () => {
  const cache = new PageCache<{ json: string }>(100);
  cache.set('k', page(25, 'x'));
  assert.equal(cache.get('k')?.json[0], 'x');
  cache.set('k', page(26, 'y'));
  assert.equal(cache.get('k'), undefined);
  for (const k of ['p', 'q', 'r', 's']) cache.set(k, page(25, k));
  assert.deepEqual(['p', 'q', 'r', 's'].map((k) => cache.get(k)?.json[0]), ['p', 'q', 'r', 's'], 'the replaced page no longer counts');
});
