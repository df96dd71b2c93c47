/**
 * Worker threads' execArgv (runtime/worker-argv.ts): tsx's preload flags are dropped, and a node flag that
 * Node refuses in an explicit execArgv (V8 options such as --max-old-space-size) never keeps the service's
 * workers from starting.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { withWorkerArgv, workerExecArgv } from '../../src/runtime/worker-argv.ts';

test('workers start without the tsx preload flags (their entry registers the loader itself)', () => {
  assert.deepEqual(workerExecArgv(['--require', '/x/node_modules/tsx/dist/preflight.cjs', '--import', 'file:///x/node_modules/tsx/dist/loader.mjs', '--max-old-space-size=512']), ['--max-old-space-size=512']);
  assert.deepEqual(workerExecArgv(['--import', 'tsx', '--import=tsx', '--enable-source-maps', '--import', './other.mjs']), ['--enable-source-maps', '--import', './other.mjs']);
});

test('a flag Node refuses in a worker\'s execArgv makes the workers inherit instead; other failures still throw', async () => {
  const tried: Array<string[] | undefined> = [];
  const w = withWorkerArgv((execArgv) => {
    tried.push(execArgv);
    return new Worker('require("node:worker_threads").parentPort.postMessage(42)', { eval: true, ...(execArgv === undefined ? {} : { execArgv }) });
  }, ['--max-old-space-size=512', '--enable-source-maps']);
  assert.deepEqual(tried, [['--max-old-space-size=512', '--enable-source-maps'], undefined]);
  assert.equal(await new Promise((resolve) => w.once('message', resolve)), 42);
  await w.terminate();

  const accepted: Array<string[] | undefined> = [];
  withWorkerArgv((execArgv) => accepted.push(execArgv), ['--enable-source-maps']);
  assert.deepEqual(accepted, [['--enable-source-maps']], 'an acceptable list is used as it is');
  assert.throws(() => withWorkerArgv(() => { throw new Error('boom'); }, []), /boom/);
});

test('the signature pool and a shard worker start in a process run with V8 flags', () => {
  const src = (path: string) => JSON.stringify(new URL(`../../src/${path}`, import.meta.url).href);
  const script = `
    import { SigPool } from ${src('edge/auth/sig-pool.ts')};
    import { startTsWorker } from ${src('engine/thread.ts')};
    const pool = new SigPool({ threads: 1 });
    const backend = await pool.backend();
    await pool.close();
    const w = startTsWorker(new URL('data:text/javascript,' + encodeURIComponent('import { parentPort } from "node:worker_threads"; parentPort.postMessage("up")')), {});
    const up = await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
    await w.terminate();
    console.log(backend, up);`;
  const dir = mkdtempSync(join(tmpdir(), 'pm-argv-'));
  const file = join(dir, 'start.mts');
  writeFileSync(file, script);
  const r = spawnSync(process.execPath, ['--max-old-space-size=1024', '--stack-size=2000', '--import', 'tsx', file], { encoding: 'utf8', timeout: 60_000 });
  rmSync(dir, { recursive: true, force: true });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'native up');
});
