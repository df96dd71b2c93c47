/**
 * A service started by a test or a benchmark (tools/service-process.ts) runs with the node flags `npm start`
 * gives it, read from package.json's start script: what the abuse bench measures is what a deployment runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFlags, startService } from '../../tools/service-process.ts';

function checkoutWithStart(start: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'pm-start-'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ scripts: { start } }));
  return dir;
}

test('startFlags: the flags between node and --import tsx of the start script; none for an older checkout; anything else refused', () => {
  const dirs = [
    checkoutWithStart('node --concurrent-marking-max-worker-num=1 --max-semi-space-size=8 --import tsx src/main.ts'),
    checkoutWithStart('node --import tsx src/main.ts'),
    checkoutWithStart('tsx src/main.ts'),
    checkoutWithStart('node src/main.ts'),
    checkoutWithStart('node --import tsx src/main.ts && rm -rf data'),
  ];
  try {
    assert.deepEqual(startFlags(dirs[0]), ['--concurrent-marking-max-worker-num=1', '--max-semi-space-size=8']);
    assert.deepEqual(startFlags(dirs[1]), []);
    assert.deepEqual(startFlags(dirs[2]), []);
    assert.throws(() => startFlags(dirs[3]), /start script/);
    assert.throws(() => startFlags(dirs[4]), /start script/);
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
});

test("npm start caps V8's concurrent marking at one thread", () => {
  // docs/decisions/hardening.md, "The GC's marking threads": on the two cores of the reference machine, V8's default
  // markers took the cores the order path's own threads need while a large heap was marked.
  assert.ok(startFlags().includes('--concurrent-marking-max-worker-num=1'), `start flags: ${startFlags().join(' ')}`);
});

test('a started service runs with the start script flags', { skip: existsSync('/proc/self/cmdline') ? false : 'needs /proc (Linux)' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pm-svc-'));
  const svc = await startService({ dataDir: join(dir, 'data'), adminToken: 'x' });
  try {
    const argv = readFileSync(`/proc/${svc.pid}/cmdline`, 'utf8').split('\0');
    const flags = startFlags();
    assert.ok(flags.length > 0);
    assert.deepEqual(argv.slice(1, 1 + flags.length), flags);
    assert.deepEqual(argv.slice(1 + flags.length, 4 + flags.length), ['--import', 'tsx', 'src/main.ts']);
    assert.equal((await fetch(`${svc.url}/`)).status, 200);
  } finally {
    await svc.stop('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
});
