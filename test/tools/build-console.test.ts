/**
 * tools/build-console.ts: the console builds from node_modules alone into a page, one script and one
 * style sheet named by their content hash; the page names exactly those files under /console/ and loads
 * nothing from anywhere else; the script imports nothing at run time (every library is in the bundle);
 * a second build replaces the directory whole; what it builds is what the static-file loader serves.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { HASHED_NAME, loadStaticFiles } from '../../src/edge/http/static-files.ts';
import { buildConsole } from '../../tools/build-console.ts';

test('the console builds into a page, a script and a style sheet that need nothing else', async (t) => {
  const outDir = join(mkdtempSync(join(tmpdir(), 'pm-console-build-')), 'console');
  const built = await buildConsole({ outDir });
  t.diagnostic(`built in ${built.ms} ms: ${built.files.map((f) => `${f.name} ${f.bytes} B`).join(', ')}`);
  const names = readdirSync(outDir).sort();
  assert.equal(names.length, 3, names.join(', '));
  const script = names.find((n) => n.endsWith('.js'))!;
  const styles = names.find((n) => n.endsWith('.css'))!;
  for (const n of [script, styles]) assert.match(n, HASHED_NAME, `${n} carries its content hash`);

  const page = readFileSync(join(outDir, 'index.html'), 'utf8');
  assert.match(page, new RegExp(`<script type="module" src="/console/${script}"></script>`));
  assert.match(page, new RegExp(`<link rel="stylesheet" href="/console/${styles}">`));
  assert.doesNotMatch(page, /(src|href)="(https?:)?\/\//, 'the page loads nothing from another origin');

  const code = readFileSync(join(outDir, script), 'utf8');
  assert.doesNotMatch(code, /(^|[;\n}])\s*import\s*[{*\w]|import\(\s*["'`]/, 'the bundle imports nothing at run time');
  assert.doesNotMatch(code, /\bfetch\(\s*["'`]https?:/, 'the bundle fetches nothing from another origin');
  assert.ok(built.files.reduce((s, f) => s + f.bytes, 0) < 1024 * 1024, 'the whole console stays under 1 MiB');

  const served = loadStaticFiles(outDir);
  assert.deepEqual([...served.files.keys()].sort(), names);
  assert.deepEqual(served.skipped, []);
});

test('a second build replaces the directory whole: nothing of the first stays', async () => {
  const outDir = join(mkdtempSync(join(tmpdir(), 'pm-console-build-')), 'console');
  await buildConsole({ outDir });
  writeFileSync(join(outDir, 'main-OLDOLDOL.js'), 'old');
  const again = await buildConsole({ outDir, minify: false });
  assert.deepEqual(readdirSync(outDir).sort(), again.files.map((f) => f.name).sort());
});
