/**
 * Durable file writes (src/journal/durable-files.ts): what the checkpoints, named snapshots and journal
 * archives rely on. An atomic write leaves the whole file under its name and no temporary file, replaces an
 * older file of that name whole, and the temporary names it uses are the ones their owners sweep at open.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { TMP_PREFIX, syncDir, syncFile, tmpPathIn, writeFileAtomic } from '../../src/journal/durable-files.ts';

function scratch(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'durable-files-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('writeFileAtomic writes every chunk in order, larger than one write, and leaves no temporary file', (t) => {
  const dir = scratch(t);
  const big = Buffer.alloc(3 * (1 << 20) + 17, 7);
  const chunks = [Buffer.from('head:'), big, new Uint8Array([1, 2, 3])];
  writeFileAtomic(dir, 'a.bin', chunks);
  assert.deepEqual(readFileSync(join(dir, 'a.bin')), Buffer.concat(chunks));
  assert.deepEqual(readdirSync(dir), ['a.bin']);
});

test('writeFileAtomic replaces an older file of the same name whole', (t) => {
  const dir = scratch(t);
  writeFileSync(join(dir, 'a.bin'), 'an older and longer content');
  writeFileAtomic(dir, 'a.bin', [Buffer.from('new')]);
  assert.equal(readFileSync(join(dir, 'a.bin'), 'utf8'), 'new');
  assert.deepEqual(readdirSync(dir), ['a.bin']);
});

test('tmpPathIn names a fresh path in the directory under TMP_PREFIX, which the owners sweep at open', (t) => {
  const dir = scratch(t);
  const a = tmpPathIn(dir, 'x');
  const b = tmpPathIn(dir, 'x');
  assert.equal(dirname(a), dir);
  assert.ok(basename(a).startsWith(`${TMP_PREFIX}x-`), a);
  assert.notEqual(a, b);
});

test('syncDir and syncFile accept what exists and throw on what does not', (t) => {
  const dir = scratch(t);
  writeFileSync(join(dir, 'f'), 'x');
  syncDir(dir);
  syncFile(join(dir, 'f'));
  assert.throws(() => syncFile(join(dir, 'missing')), /ENOENT/);
  assert.throws(() => syncDir(join(dir, 'missing')), /ENOENT/);
});
