/**
 * Named snapshots on disk (journal/checkpoints/named-snapshots.ts), without a service: names and their refusals, the
 * bound, listing only what is whole, a half-made directory removed on the next open, a state file packed and
 * imported again to the same store (its proof to the manifest's state hash), and a damaged one refused, each
 * refusal changing nothing.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CheckpointStore } from '../../../src/journal/checkpoints/checkpoints.ts';
import { NamedSnapshotError, NamedSnapshots, installCopy, readManifest } from '../../../src/journal/checkpoints/named-snapshots.ts';
import { takeSnapshot } from '../../../src/journal/checkpoints/snapshots.ts';
import { openStore } from '../../../src/journal/env.ts';
import { verifyStore } from '../../../src/journal/recovery.ts';
import { Engine } from '../../../src/engine/engine.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { tempDir } from '../../fixtures/temp-dirs.ts';
import { T, market, order, tempStore, wallet } from '../../fixtures/engine-harness.ts';

const refused = (problem: string) => (e: unknown) => e instanceof NamedSnapshotError && e.problem === problem;

test('names, the bound, whole-or-not-listed, packing and importing a state file, a damaged one refused', async (t) => {
  const env = tempStore('pm-named-');
  t.after(() => env.cleanup());
  const engine = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  const m = market(1);
  engine.registerMarket(m);
  await engine.deposit(wallet(1), 100 * T);
  assert.ok((await engine.placeOrder(order({ wallet: wallet(1), tokenId: m.tokenIds[0], side: 'BUY', price: 3000, size: 5 * T }))).ok);
  const hash = engine.stateHash();
  const checkpoints = new CheckpointStore(join(env.dir, 'checkpoints'));
  const make = (name: string) => (dir: string) => takeSnapshot(env.store, checkpoints, dir, name);

  const dir = join(tempDir('pm-named-dir-'), 'snapshots');
  const snaps = new NamedSnapshots(dir, 2);
  assert.deepEqual(snaps.list(), [], 'nothing listed, and no directory made, before the first');
  assert.equal(existsSync(dir), false);
  for (const bad of ['', 'Upper', '-lead', 'a.b', '../x', 'x'.repeat(65)]) await assert.rejects(snaps.take(bad, make(bad)), refused('name'), bad);
  const one = await snaps.take('one', make('one'));
  assert.deepEqual([one.name, one.journalSeq, one.stateHash], ['one', engine.committedSeq, hash]);
  await assert.rejects(snaps.take('one', make('one')), refused('exists'));
  assert.equal(snaps.freshName(), 'snapshot-1');
  await snaps.take('snapshot-1', make('snapshot-1'));
  assert.equal(snaps.freshName(), 'snapshot-2');
  await assert.rejects(snaps.take('three', make('three')), refused('limit'));
  assert.deepEqual(snaps.list().map((s) => s.name), ['one', 'snapshot-1']);
  assert.throws(() => snaps.get('nope'), refused('unknown'));

  // A directory without its manifest (a crash before it was written) is not listed; a half-made one is
  // removed when the directory is next opened.
  mkdirSync(join(dir, 'half'));
  mkdirSync(join(dir, '.tmp-cut-0000'));
  writeFileSync(join(dir, '.tmp-cut-0000', 'data.mdb'), 'partial');
  const reopened = new NamedSnapshots(dir, 3);
  assert.deepEqual(reopened.list().map((s) => s.name), ['one', 'snapshot-1']);
  assert.equal(existsSync(join(dir, '.tmp-cut-0000')), false);

  // Packed into one file and imported under another name: the same store, proved to the same state hash.
  const file = join(tempDir('pm-named-file-'), 'one.pmsnap');
  await reopened.pack('one', file);
  const imported = await reopened.importState(file, 'again');
  assert.deepEqual([imported.name, imported.journalSeq, imported.stateHash], ['again', one.journalSeq, hash]);
  const target = tempDir('pm-named-target-');
  installCopy(reopened.get('again').dir, target);
  const store = openStore({ dataDir: target });
  try {
    assert.equal(verifyStore(store, { checkpoints: new CheckpointStore(join(target, 'checkpoints')) }).hash, hash);
  } finally {
    await store.close();
  }

  // A flipped byte in the store copy is refused with its reason, and nothing is listed for it.
  const bytes = readFileSync(file);
  bytes[bytes.length - 64] ^= 0x55;
  writeFileSync(file, bytes);
  const roomy = new NamedSnapshots(dir, 10);
  await assert.rejects(roomy.importState(file, 'damaged'), (e: unknown) => refused('damaged')(e) && /does not match its digest/.test((e as Error).message));
  writeFileSync(file, bytes.subarray(0, 100));
  await assert.rejects(roomy.importState(file, 'cut'), refused('damaged'));
  // Listed by when each was taken (an import keeps its time: 'again' is 'one'), then by name.
  assert.deepEqual(roomy.list().map((s) => s.name), ['again', 'one', 'snapshot-1']);
  assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith('.tmp-')), []);
  assert.equal(readManifest(join(dir, 'damaged')), undefined);

  // Deleted: no longer listed, its name free again.
  roomy.remove('snapshot-1');
  assert.deepEqual(roomy.list().map((s) => s.name), ['again', 'one']);
  assert.throws(() => roomy.remove('snapshot-1'), refused('unknown'));
  await engine.close();
});
