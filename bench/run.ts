/**
 * Runs every bench/**\/*.bench.ts in one process, one after another (never concurrently: they would
 * share cores and skew each other). Each file's default export is its `run()`; the first failed self-check
 * stops the run with a non-zero exit code.
 * Usage: npm run bench [-- <substring of a file path>]
 */

import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));
const filter = process.argv[2];

const files = (readdirSync(root, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => filter === undefined || f.includes(filter))
  .sort();

if (files.length === 0) {
  console.error(`bench: no *.bench.ts file under ${root}${filter ? ` matching "${filter}"` : ''}`);
  process.exit(1);
}

for (const f of files) {
  const path = join(root, f);
  console.log(`\n== ${relative(process.cwd(), path)}`);
  const mod = (await import(pathToFileURL(path).href)) as { default?: () => Promise<void> | void };
  if (typeof mod.default !== 'function') throw new Error(`${f}: no default export run()`);
  await mod.default();
}
