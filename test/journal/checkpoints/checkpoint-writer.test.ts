/**
 * A checkpoint is written whole or not at all (journal/checkpoints/checkpoint-writer.ts, checkpoints.ts): a child process
 * writes checkpoints of a store with many open orders (a file of megabytes) in a loop, and is SIGKILLed the
 * moment its temporary file appears, that is in the middle of writing one. After each kill the directory
 * holds only whole checkpoints (each one's digest checks), the leftover is removed at the next open, and the
 * store is proved from the newest one to the state hash of the whole journal. Writing a checkpoint of a
 * store whose newest checkpoint is current replaces nothing unless forced.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Engine } from '../../../src/engine/engine.ts';
import { writeCheckpoint } from '../../../src/journal/checkpoints/checkpoint-writer.ts';
import { CheckpointStore } from '../../../src/journal/checkpoints/checkpoints.ts';
import { verifyStore } from '../../../src/journal/recovery.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { T, market, order, tempStore, wallet } from '../../fixtures/engine-harness.ts';

const CHILD = fileURLToPath(new URL('../../fixtures/checkpoint-writer-child.ts', import.meta.url));
const KILLS = 3;

/** Kills the child once a temporary checkpoint file shows in `dir`; resolves whether it saw one. */
function killMidWrite(storeDir: string, dir: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, storeDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let saw = false;
    let poll: NodeJS.Timeout | undefined;
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.once('data', () => {
      poll = setInterval(() => {
        if (readdirSync(dir).some((f) => f.startsWith('.tmp-'))) {
          saw = true;
          child.kill('SIGKILL');
        }
      }, 1);
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      clearTimeout(guard);
      clearInterval(poll);
      if (signal !== 'SIGKILL') reject(new Error(`child ended without being killed: ${stderr}`));
      else resolve(saw);
    });
  });
}

test('SIGKILL in the middle of a checkpoint\'s file leaves whole checkpoints only, and the store proves from the newest', async (t) => {
  const env = tempStore('pm-ckpt-kill-');
  t.after(() => env.cleanup());
  const e = await Engine.open({ store: env.store, shards: 1, log: silentLogger });
  const m = market(1);
  e.registerMarket(m);
  await e.deposit(wallet(1), 1_000_000 * T);
  // Many open orders: a state of megabytes, so a write takes long enough to be caught in the middle.
  const rs = [];
  for (let i = 0; i < 6000; i++) rs.push(e.placeOrder(order({ wallet: wallet(1), tokenId: m.tokenIds[i % 2], side: 'BUY', price: 1000 + 100 * (i % 20), size: T * (5 + (i % 7)) })));
  for (const r of await Promise.all(rs)) assert.ok(r.ok, `order refused: ${r.code}`);
  const hash = e.stateHash();
  await e.close();
  const dir = join(env.dir, 'checkpoints');
  const cs = new CheckpointStore(dir);
  const first = writeCheckpoint(env.store, cs, 'auto');
  assert.ok(first.entry !== undefined);
  assert.equal(writeCheckpoint(env.store, cs, 'auto').entry, undefined, 'a current checkpoint is not written again');
  await env.store.close();

  let caught = 0;
  for (let k = 0; k < KILLS; k++) {
    if (await killMidWrite(env.dir, dir)) caught++;
    const again = new CheckpointStore(dir);
    assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith('.tmp-')), [], 'the half-written file is gone at the next open');
    const listed = again.list();
    assert.ok(listed.length >= 1);
    for (const c of listed) assert.equal(again.load(c).header.stateHash, hash, `${c.file} is whole`);
  }
  assert.equal(caught, KILLS, 'every kill landed while a checkpoint file was being written');
  const { openStore } = await import('../../../src/journal/env.ts');
  const store = openStore({ dataDir: env.dir });
  try {
    const v = verifyStore(store, { checkpoints: new CheckpointStore(dir) });
    assert.ok(v.from !== undefined);
    assert.equal(v.hash, hash);
    assert.equal(verifyStore(store).hash, hash);
  } finally {
    await store.close();
  }
});
