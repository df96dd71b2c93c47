/**
 * tools/journal-archive.ts: the archives of a store, replayed from seq 1, reach the state hash of the
 * checkpoint that stands where they end; a checkpoint they do not reach, a missing archive and a damaged one
 * are reported (exit code 1); `cat` prints the events as JSON lines.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { renameSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Engine } from '../../src/engine/engine.ts';
import { writeCheckpoint } from '../../src/journal/checkpoints/checkpoint-writer.ts';
import { CheckpointStore } from '../../src/journal/checkpoints/checkpoints.ts';
import { readJournal } from '../../src/journal/recovery.ts';
import { archiveJournal } from '../../src/journal/retention.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { verifyArchives } from '../../tools/journal-archive.ts';
import { T, market, order, tempStore, wallet } from '../fixtures/engine-harness.ts';

const TOOL = fileURLToPath(new URL('../../tools/journal-archive.ts', import.meta.url));

async function trade(e: Engine, m: ReturnType<typeof market>, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await e.placeOrder(order({ wallet: wallet(1 + (i % 2)), tokenId: m.tokenIds[i % 2], side: i % 3 === 0 ? 'SELL' : 'BUY', price: 4000 + 100 * (i % 4), size: T * (1 + (i % 3)) }));
}

test('archives replay to the state of the checkpoint where they end; what does not is reported', async (t) => {
  const env = tempStore('pm-archive-tool-');
  t.after(() => env.cleanup());
  const e = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  const m = market(1);
  e.registerMarket(m);
  for (const w of [1, 2]) {
    await e.deposit(wallet(w), 1_000 * T);
    await e.split(wallet(w), m.conditionId, 100 * T);
  }
  await trade(e, m, 40);
  const cs = new CheckpointStore(join(env.dir, 'checkpoints'));
  const c1 = writeCheckpoint(env.store, cs, 'auto');
  await trade(e, m, 30);
  const c2 = writeCheckpoint(env.store, cs, 'auto');
  await e.close();
  const dir = join(env.dir, 'archive');
  const mid = Math.floor(c1.seq / 2);
  archiveJournal(env.store, { after: 0, to: mid, policy: 'archive', dir });
  archiveJournal(env.store, { after: mid, to: c1.seq, policy: 'archive', dir });

  const ok = verifyArchives(dir, cs.dir);
  assert.deepEqual(ok.problems, []);
  assert.equal(ok.to, c1.seq);
  assert.equal(ok.stateHash, c1.stateHash);
  assert.deepEqual(ok.checkpoints, [{ name: 'auto', seq: c1.seq, ok: true }]);
  assert.notEqual(ok.stateHash, c2.stateHash);

  const cli = spawnSync(process.execPath, ['--import', 'tsx', TOOL, 'verify', '--data-dir', env.dir], { encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  assert.match(cli.stdout, new RegExp(`archives: seqs 1\\.\\.${c1.seq}, ${c1.seq} events`));
  assert.match(cli.stdout, new RegExp(`checkpoint auto at seq ${c1.seq}: the same state`));
  const cat = spawnSync(process.execPath, ['--import', 'tsx', TOOL, 'cat', join(dir, 'journal-000000000001-' + String(mid).padStart(12, '0') + '.pmj.gz')], { encoding: 'utf8' });
  assert.equal(cat.status, 0, cat.stderr);
  assert.deepEqual(cat.stdout.trim().split('\n').map((l) => JSON.parse(l)), JSON.parse(JSON.stringify([...readJournal(env.store)].filter((x) => x.seq <= mid))));

  // A checkpoint at the archives' end that they do not lead to.
  const other = cs.load(cs.list().find((x) => x.seq === c1.seq)!);
  const { v: _v, ...h } = other.header;
  cs.write({ ...h, name: 'forged', stateHash: 'f'.repeat(64) }, other.state);
  const bad = verifyArchives(dir, cs.dir);
  assert.deepEqual(bad.checkpoints.map((x) => [x.name, x.ok]), [['auto', true], ['forged', false]]);
  assert.equal(spawnSync(process.execPath, ['--import', 'tsx', TOOL, 'verify', '--data-dir', env.dir], { encoding: 'utf8' }).status, 1);
  cs.remove('forged');

  // The first archive missing: nothing before the second can be replayed.
  const first = join(dir, 'journal-000000000001-' + String(mid).padStart(12, '0') + '.pmj.gz');
  renameSync(first, `${first}.away`);
  assert.match(verifyArchives(dir, cs.dir).problems[0]!, /starts at seq \d+, the archives before it end at 0/);
  renameSync(`${first}.away`, first);
  // A damaged one.
  const bytes = readFileSync(first);
  writeFileSync(first, bytes.subarray(0, bytes.length - 10));
  assert.equal(verifyArchives(dir, cs.dir).problems.length, 1);
});
