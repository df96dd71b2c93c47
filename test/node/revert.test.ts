/**
 * The revert host's record of reverts (src/node/revert.ts; the reverts themselves are tested over HTTP in
 * test/e2e/snapshots.test.ts): one line a revert, appended, and past its bound the newest lines kept.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REVERT_LOG, appendRevertRecord } from '../../src/node/revert.ts';
import { tempDir } from '../fixtures/temp-dirs.ts';

const lines = (dir: string) => readFileSync(join(dir, REVERT_LOG), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));

test('each revert appends one line; past the bound the log keeps its newest lines, whole', () => {
  const dir = tempDir('pm-reverts-');
  // Each line is 27 bytes: the fourth passes 100 bytes, and from then on every append cuts back to 4 lines.
  for (let i = 0; i < 10; i++) appendRevertRecord(dir, { n: i, snapshot: 'base' }, 100, 4);
  assert.deepEqual(lines(dir).map((r) => r.n), [6, 7, 8, 9], 'the newest, in order');
  assert.deepEqual(readdirSync(dir), [REVERT_LOG], 'no temporary file left');
});

test('under the bound nothing is dropped', () => {
  const dir = tempDir('pm-reverts-');
  for (let i = 0; i < 20; i++) appendRevertRecord(dir, { n: i });
  assert.deepEqual(lines(dir).map((r) => r.n), Array.from({ length: 20 }, (_, i) => i));
});
