/**
 * tools/run-main.ts: a tool run as a program prints a mistake as its message alone and exits 1; imported (as
 * the tests and other tools import tools/nats-config.ts), it runs nothing.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('a tool run with bad arguments says what is wrong on one line and exits 1; imported, it runs nothing', async () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'tools/nats-config.ts'], { cwd: root, encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^usage: npx tsx tools\/nats-config\.ts --out DIR/);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  assert.equal(r.stdout, '');
  // Imported, main would find no --out and exit this test's process: it must not run at all.
  const m = await import('../../tools/nats-config.ts');
  assert.equal(typeof m.natsConfig, 'function');
});
