import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/journal/env.ts';
import { Projector, ViewStore, compareKeys, type Projection } from '../../src/projections/projector.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { deposit, journal, totals } from '../fixtures/projections.ts';

test('applies committed events in order, skips what it already applied, and reads its own queued writes', async () => {
  const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-proj-')) });
  const views = new ViewStore(store.views);
  const p = new Projector(store, [totals(views)], silentLogger);
  p.onCommitted([deposit(1, 'a', 5), deposit(2, 'a', 7)]);
  // Same turn, not committed yet: the cache makes the queued value visible.
  assert.equal(views.get(['totals', 'a']), 12);
  p.onCommitted([deposit(2, 'a', 7), deposit(3, 'b', 1)]);
  assert.equal(views.get(['totals', 'a']), 12, 'seq 2 applied twice');
  assert.equal(views.get(['totals', 'b']), 1);
  assert.equal(p.cursor('totals'), 3);
  await store.close();
});

test('catch-up after a restart applies exactly what the cursor misses; a new projection rebuilds from seq 1', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pm-proj-'));
  let store = openStore({ dataDir: dir });
  let views = new ViewStore(store.views);
  const events = [deposit(1, 'a', 5), deposit(2, 'a', 7), deposit(3, 'b', 1), deposit(4, 'b', 2)];
  await journal(store, events);
  let p = new Projector(store, [totals(views)], silentLogger);
  p.onCommitted(events.slice(0, 2));
  await store.meta.flushed;
  await store.close();

  // Restart: the journal holds 4 events, the projection has seen 2.
  store = openStore({ dataDir: dir });
  views = new ViewStore(store.views);
  p = new Projector(store, [totals(views), totals(views, 'fresh')], silentLogger);
  assert.equal(p.cursor('totals'), 2);
  assert.equal(p.catchUp(2), 2 + 4);
  assert.equal(views.get(['totals', 'a']), 12);
  assert.equal(views.get(['totals', 'b']), 3);
  assert.equal(views.get(['fresh', 'a']), 12);
  assert.equal(views.get(['fresh', 'b']), 3);
  assert.equal(p.catchUp(), 0, 'a second catch-up changes nothing');
  await store.close();
});

test('a failing projection stops at its cursor without stopping the others', async () => {
  const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-proj-')) });
  const views = new ViewStore(store.views);
  const broken: Projection = { name: 'broken', apply: (e) => { if (e.seq === 2) throw new Error('boom'); } };
  const p = new Projector(store, [broken, totals(views)], silentLogger);
  p.onCommitted([deposit(1, 'a', 1), deposit(2, 'a', 1), deposit(3, 'a', 1)]);
  assert.equal(p.cursor('broken'), 1);
  assert.equal(p.cursor('totals'), 3);
  await store.close();
});

test('view store: queued writes are visible to point reads and prefix ranges until they commit', async () => {
  const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-proj-')) });
  const v = new ViewStore(store.views);
  await store.views.put(['pos', 'w1', 'b'], 'committed-b');
  await store.views.put(['pos', 'w1', 'd'], 'committed-d');
  v.put(['pos', 'w1', 'a'], 'queued-a');
  v.put(['pos', 'w1', 'c'], 'queued-c');
  v.remove(['pos', 'w1', 'd']);
  v.put(['pos', 'w2', 'a'], 'other wallet');
  assert.equal(v.get(['pos', 'w1', 'a']), 'queued-a');
  assert.equal(v.get(['pos', 'w1', 'd']), undefined);
  assert.deepEqual(v.range(['pos', 'w1']).map((e) => e.value), ['queued-a', 'committed-b', 'queued-c']);
  assert.deepEqual(v.range(['pos', 'w1'], { reverse: true, limit: 2 }).map((e) => e.value), ['queued-c', 'committed-b']);
  assert.ok(v.queued > 0);
  await store.views.flushed;
  await new Promise((r) => setImmediate(r));
  assert.equal(v.queued, 0, 'committed writes leave the overlay');
  assert.deepEqual(v.range(['pos', 'w1']).map((e) => e.value), ['queued-a', 'committed-b', 'queued-c']);
  // The version counts writes (puts and removals), not commits: readers key cached answers on it.
  const version = v.version;
  assert.equal(version, 4);
  v.put(['pos', 'w1', 'e'], 'e');
  v.remove(['pos', 'w1', 'e']);
  assert.equal(v.version, version + 2);
  await store.views.flushed;
  assert.equal(v.version, version + 2, 'a commit changes no answer, so not the version');
  await store.close();
});

test('key order matches LMDB ordered-binary order', async () => {
  const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-proj-')) });
  const keys = [['a', 2], ['a', 10], ['a', 'x'], ['b', 1], ['a', 1, 'z'], ['ab', 0], ['a', -5]];
  for (const k of keys) void store.views.put(k, 1);
  await store.views.flushed;
  const lmdbOrder = [...store.views.getKeys({})].map((k) => JSON.stringify(k));
  assert.deepEqual([...keys].sort(compareKeys).map((k) => JSON.stringify(k)), lmdbOrder);
  await store.close();
});
