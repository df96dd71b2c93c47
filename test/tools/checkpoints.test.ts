/**
 * tools/checkpoints.ts: a checkpoint written by name from a store (its proof), exported to a file, imported
 * into another store's checkpoints under another name, listed, removed; a damaged file is not imported.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Engine } from '../../src/engine/engine.ts';
import { CheckpointStore } from '../../src/journal/checkpoints/checkpoints.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { main } from '../../tools/checkpoints.ts';
import { T, market, order, tempStore, wallet } from '../fixtures/engine-harness.ts';

const TOOL = fileURLToPath(new URL('../../tools/checkpoints.ts', import.meta.url));
const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', TOOL, ...args], { encoding: 'utf8' });

/** The command in this process (a spawn costs seconds): its exit code and what it printed. */
async function run(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const { log, error } = console;
  console.log = (...a: unknown[]) => out.push(a.join(' '));
  console.error = (...a: unknown[]) => err.push(a.join(' '));
  try {
    return { status: await main(args).catch((e: Error) => (err.push(e.message), 1)), stdout: out.join('\n'), stderr: err.join('\n') };
  } finally {
    console.log = log;
    console.error = error;
  }
}

test('write by name, export, import elsewhere under another name, list, remove; a damaged file is refused', async (t) => {
  const env = tempStore('pm-ckpt-tool-');
  t.after(() => env.cleanup());
  const e = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  const m = market(1);
  e.registerMarket(m);
  await e.deposit(wallet(1), 100 * T);
  await e.placeOrder(order({ wallet: wallet(1), tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 5 * T }));
  const hash = e.stateHash();
  const seq = e.committedSeq;
  await e.close();
  await env.store.close();

  const w = cli('write', 'fixture', '--data-dir', env.dir);
  assert.equal(w.status, 0, w.stderr);
  assert.match(w.stdout, new RegExp(`fixture at seq ${seq}: state hash ${hash} \\(proved from the journal's start, ${seq} events replayed\\)`));
  const file = join(env.dir, 'fixture.ckpt');
  assert.equal((await run('export', 'fixture', file, '--data-dir', env.dir)).status, 0);
  const other = join(env.dir, 'other');
  const i = await run('import', file, 'copied', '--data-dir', other);
  assert.equal(i.status, 0, i.stderr);
  const imported = new CheckpointStore(join(other, 'checkpoints'));
  assert.deepEqual(imported.list().map((x) => [x.name, x.seq]), [['copied', seq]]);
  assert.equal(imported.load(imported.list()[0]!).header.stateHash, hash);
  assert.match((await run('list', '--data-dir', other)).stdout, new RegExp(`^copied\\tseq ${seq}\\t${hash}`));
  const bytes = readFileSync(file);
  bytes[bytes.length - 50]! ^= 1;
  writeFileSync(file, bytes);
  const bad = await run('import', file, 'damaged', '--data-dir', other);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /digest mismatch/);
  assert.equal((await run('remove', 'copied', '--data-dir', other)).status, 0);
  assert.deepEqual(new CheckpointStore(join(other, 'checkpoints')).list(), []);
});
