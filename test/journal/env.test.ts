/**
 * The store's version check (journal/env.ts): a new store is stamped with the current version, a
 * version-4 store is upgraded in place (its order-id table dropped: the index is rebuilt from the
 * journal), a version-5, 6 or 7 store has its version raised (nothing to convert; a version-7 store's
 * order-id index is read from its journal once, test/journal/orders.test.ts), and any other
 * version (an older one, or a newer store opened by an older build) is refused with both versions named.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { open } from 'lmdb';
import { STORE_VERSION, openStore } from '../../src/journal/env.ts';

/** Writes a bare environment as an older build left it. */
async function legacyStore(version: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'pm-env-'));
  const root = open({ path: dir, maxDbs: 16 });
  const meta = root.openDB({ name: 'meta', encoding: 'msgpack', keyEncoding: 'ordered-binary' });
  const ids = root.openDB({ name: 'order-ids', encoding: 'msgpack', keyEncoding: 'ordered-binary' });
  await meta.put('storeVersion', version);
  await ids.put('0x' + '1'.repeat(64), 3);
  await root.close();
  return dir;
}

test('a new store carries the current version; a version-4 store is upgraded and loses its order-id table', async (t) => {
  const fresh = mkdtempSync(join(tmpdir(), 'pm-env-'));
  const old = await legacyStore(4);
  t.after(() => {
    rmSync(fresh, { recursive: true, force: true });
    rmSync(old, { recursive: true, force: true });
  });
  const a = openStore({ dataDir: fresh, mapSize: 2 ** 26 });
  assert.equal(a.meta.get('storeVersion'), STORE_VERSION);
  await a.close();

  const b = openStore({ dataDir: old, mapSize: 2 ** 26 });
  assert.equal(b.meta.get('storeVersion'), STORE_VERSION);
  assert.equal([...b.root.getKeys({})].includes('order-ids'), false, 'the order-ids table is gone');
  await b.close();
  // Upgraded once: the next open finds the current version.
  const c = openStore({ dataDir: old, mapSize: 2 ** 26 });
  assert.equal(c.meta.get('storeVersion'), STORE_VERSION);
  await c.close();
});

test('a version-5 store is raised to the current version with its tables untouched', async (t) => {
  const dir = await legacyStore(5);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const s = openStore({ dataDir: dir, mapSize: 2 ** 26 });
  assert.equal(s.meta.get('storeVersion'), STORE_VERSION);
  assert.equal([...s.root.getKeys({})].includes('order-ids'), true, 'only a version-4 store loses a table');
  await s.close();
});

test('a version-6 store (before the trade lifecycle) is raised to the current version and gains the trades table', async (t) => {
  const dir = await legacyStore(6);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const s = openStore({ dataDir: dir, mapSize: 2 ** 26 });
  assert.equal(s.meta.get('storeVersion'), STORE_VERSION);
  assert.equal(s.trades.getCount(), 0);
  await s.close();
});

test('a version-7 store (before the stored order-id index) is raised to version 8 without claiming a complete index', async (t) => {
  assert.equal(STORE_VERSION, 8);
  const dir = await legacyStore(7);
  const fresh = mkdtempSync(join(tmpdir(), 'pm-env-'));
  t.after(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(fresh, { recursive: true, force: true });
  });
  const s = openStore({ dataDir: dir, mapSize: 2 ** 26 });
  assert.equal(s.meta.get('storeVersion'), 8);
  assert.equal(s.meta.get('orderIds:complete'), undefined, 'its index must be read from the journal once (orders.ts)');
  await s.close();
  const n = openStore({ dataDir: fresh, mapSize: 2 ** 26 });
  assert.equal(n.meta.get('orderIds:complete'), true, 'a new store holds every order id from its first order');
  await n.close();
});

test('a store of a newer version is refused: an older build never opens what it cannot read', async (t) => {
  const dir = await legacyStore(STORE_VERSION + 1);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.throws(() => openStore({ dataDir: dir, mapSize: 2 ** 26 }), new RegExp(`version ${STORE_VERSION + 1}; this build reads version ${STORE_VERSION}`));
});

test('a store of any other version is refused, naming both versions', async (t) => {
  const dir = await legacyStore(3);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.throws(() => openStore({ dataDir: dir, mapSize: 2 ** 26 }), new RegExp(`version 3; this build reads version ${STORE_VERSION}`));
});
