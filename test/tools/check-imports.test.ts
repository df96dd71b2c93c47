import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check } from '../../tools/check-imports.ts';

test('src/ follows the import rules', () => {
  const found = check();
  assert.deepEqual(found, [], found.map((v) => `${v.file} -> ${v.target}: ${v.rule}`).join('\n'));
});

test('the checker catches each kind of violation', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pm-imports-'));
  for (const d of ['domain', 'engine/book', 'edge', 'queries', 'journal']) mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, 'domain/a.ts'), "import { x } from '../edge/b.ts';\n");
  writeFileSync(join(dir, 'engine/book/b.ts'), "import { y } from '../../journal/env.ts';\n");
  writeFileSync(join(dir, 'queries/c.ts'), "import { Worker } from '../engine/worker.ts';\nimport { open } from 'lmdb';\n");
  writeFileSync(join(dir, 'edge/d.ts'), "import { Ring } from '../engine/ring.ts';\nimport { w } from '../journal/writer.ts';\n");
  writeFileSync(join(dir, 'journal/e.ts'), "import uWS from 'uWebSockets.js';\n");
  const rules = check(dir).map((v) => v.rule).sort();
  assert.deepEqual(rules, [
    'domain/ imports nothing else from src/',
    'edge/ reaches the engine only through engine/engine.ts',
    'edge/ reads storage through queries/',
    'engine/book/ imports only domain/',
    'only edge/ imports uWebSockets.js',
    'only journal/ imports lmdb',
    'queries/ reads storage only',
  ]);
});
