/** The ordered walks' pure parts: pages over partitions with filtered rows and tie runs, flag partitions, the comparator. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { comparator, partitionByFlags, readPage, type Entry } from '../../../src/queries/catalog/walks.ts';
import { EVENT_COLUMNS, type EventRec } from '../../../src/projections/catalog/catalog-index.ts';

const rows = (...values: [string | number, number][]): Entry[] => values.map(([v, id]) => [v, id, 0]);

test('readPage: offset and limit across partitions, rows the index cannot filter dropped', () => {
  const parts = [rows([1, 10], [2, 11], [3, 12]), rows([1, 20], [2, 21])];
  assert.deepEqual(readPage(parts, 0, 10, undefined, undefined), [10, 11, 12, 20, 21]);
  assert.deepEqual(readPage(parts, 2, 2, undefined, undefined), [12, 20]);
  assert.deepEqual(readPage(parts, 1, 10, (id) => id % 2 === 0, undefined), [12, 20]);
  assert.deepEqual(readPage(parts, 9, 10, undefined, undefined), []);
});

test('readPage: each run of tied values is ordered by sortGroup; a run wholly before the offset is never sorted', () => {
  const sorted: number[][] = [];
  const desc = (ids: number[]) => {
    sorted.push([...ids]);
    return ids.sort((a, b) => b - a);
  };
  const part = rows(['a', 1], ['a', 2], ['b', 3], ['b', 4], ['b', 5], ['c', 6]);
  assert.deepEqual(readPage([part], 0, 6, undefined, desc), [2, 1, 5, 4, 3, 6]);
  sorted.length = 0;
  assert.deepEqual(readPage([part], 3, 2, undefined, desc), [4, 3]);
  assert.deepEqual(sorted, [[3, 4, 5]], 'the run of "a" lies before the offset');
});

test('partitionByFlags: codes grouped by the leading flags in the order asked', () => {
  // Codes: active 4, closed 2, archived 1.
  assert.deepEqual(partitionByFlags([4, 6, 0, 2], [], false), [[4, 6, 0, 2]]);
  assert.deepEqual(partitionByFlags([], [], false), []);
  assert.deepEqual(partitionByFlags([4, 6, 0, 2], ['closed'], false), [[4, 0], [6, 2]]);
  assert.deepEqual(partitionByFlags([4, 6, 0, 2], ['closed'], true), [[6, 2], [4, 0]]);
  assert.deepEqual(partitionByFlags([4, 6, 0, 2], ['active', 'closed'], true), [[6], [4], [2], [0]]);
});

test('comparator: flags, then columns, ties by id, in either direction', () => {
  const recs: Record<number, Partial<EventRec>> = { 1: { id: '1', title: 'b', closed: true }, 2: { id: '2', title: 'a', closed: true }, 3: { id: '3', title: 'a', closed: false } };
  const load = (id: number) => recs[id] as EventRec;
  const terms = [{ field: 'closed', flag: 'closed' as const }, { field: 'title', column: EVENT_COLUMNS.title }];
  assert.deepEqual([1, 2, 3].sort(comparator(terms, false, load)), [3, 2, 1]);
  assert.deepEqual([1, 2, 3].sort(comparator(terms, true, load)), [1, 2, 3]);
  assert.deepEqual([3, 2].sort(comparator([{ field: 'title', column: EVENT_COLUMNS.title }], false, load)), [2, 3]);
});
