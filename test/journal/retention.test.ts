/**
 * Retention's archive (journal/retention.ts): an archive holds every event of its range, fills merged, and
 * reads back equal to what the journal held; what is to be removed is every event but the `order` events;
 * a damaged or truncated archive is refused; the projections' durable cursors bound retention.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Engine } from '../../src/engine/engine.ts';
import { metaKeys } from '../../src/journal/keys.ts';
import { readJournal } from '../../src/journal/recovery.ts';
import { ArchiveError, archiveJournal, listArchives, projectionFloor, readArchive } from '../../src/journal/retention.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { T, market, order, tempStore, wallet } from '../fixtures/engine-harness.ts';

async function tradedStore() {
  const env = tempStore('pm-retention-');
  const e = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  const m = market(1, { takerFeeBps: 100 });
  e.registerMarket(m);
  for (let w = 1; w <= 3; w++) {
    await e.deposit(wallet(w), 500 * T);
    await e.split(wallet(w), m.conditionId, 100 * T);
  }
  // Enough fills for several fill blocks, crossing and resting orders, cancels.
  for (let i = 0; i < 90; i++) {
    await e.placeOrder(order({ wallet: wallet(1 + (i % 3)), tokenId: m.tokenIds[i % 2], side: i % 4 < 2 ? 'SELL' : 'BUY', price: 4800 + 100 * (i % 5), size: T * (1 + (i % 3)) }));
  }
  await e.cancelAll(wallet(2));
  await e.close();
  return env;
}

test('an archive reads back every event of its range, fills included; the events to remove are all but the order events', async (t) => {
  const env = await tradedStore();
  t.after(() => env.cleanup());
  const last = env.store.meta.get(metaKeys.journalSeq) as number;
  const all = [...readJournal(env.store)];
  const dir = join(env.dir, 'archive');
  // Two archives split in the middle of the fills: a fill block may straddle the line.
  const cut = all.filter((e) => e.type === 'fill')[20]!.seq;
  const a = archiveJournal(env.store, { after: 0, to: cut, policy: 'archive', dir });
  const b = archiveJournal(env.store, { after: cut, to: last, policy: 'archive', dir });
  assert.deepEqual(listArchives(dir).map((x) => [x.from, x.to]), [[1, cut], [cut + 1, last]]);
  const back = [...readArchive(a.file!).events, ...readArchive(b.file!).events];
  assert.deepEqual(back, all, 'the whole journal, event for event');
  const orderSeqs = new Set(all.filter((e) => e.type === 'order').map((e) => e.seq));
  const fills = new Set(all.filter((e) => e.type === 'fill').map((e) => e.seq));
  const removed = [...a.remove, ...b.remove];
  assert.ok(removed.length > 0 && removed.every((s) => !orderSeqs.has(s) && !fills.has(s)), 'order events stay; fills are in their own table');
  assert.equal(removed.length, all.length - orderSeqs.size - fills.size, 'every other event goes');
  // `prune` writes nothing and removes the same.
  const p = archiveJournal(env.store, { after: 0, to: last, policy: 'prune', dir: join(env.dir, 'none') });
  assert.equal(p.file, undefined);
  assert.deepEqual(p.remove, removed);
  assert.deepEqual(listArchives(join(env.dir, 'none')), []);
});

test('a damaged or truncated archive is refused', async (t) => {
  const env = await tradedStore();
  t.after(() => env.cleanup());
  const last = env.store.meta.get(metaKeys.journalSeq) as number;
  const { file } = archiveJournal(env.store, { after: 0, to: last, policy: 'archive', dir: join(env.dir, 'archive') });
  const bytes = readFileSync(file!);
  writeFileSync(file!, bytes.subarray(0, bytes.length - 30));
  assert.throws(() => readArchive(file!), ArchiveError);
  // A byte changed inside a chunk, recompressed: only the digest can tell.
  writeFileSync(file!, bytes);
  const { gunzipSync, gzipSync } = await import('node:zlib');
  const raw = gunzipSync(bytes);
  raw[Math.floor(raw.length / 2)]! ^= 0x01;
  writeFileSync(file!, gzipSync(raw));
  assert.throws(() => readArchive(file!), /digest mismatch|cannot be read|missing|holds/);
});

test('the projections\' durable cursors bound retention', async (t) => {
  const env = tempStore('pm-retention-');
  t.after(() => env.cleanup());
  assert.equal(projectionFloor(env.store), Number.POSITIVE_INFINITY, 'no projection: no bound');
  env.store.meta.putSync(metaKeys.projectionCursor('wallets'), 120);
  env.store.meta.putSync(metaKeys.projectionCursor('prices'), 90);
  env.store.meta.putSync(metaKeys.journalSeq, 500);
  assert.equal(projectionFloor(env.store), 90);
});
