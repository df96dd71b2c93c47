/**
 * Enforces the import rules of the layered layout (STYLE.md): who may import whom inside src/, and
 * which files may import uWebSockets.js and lmdb. Prints every violation and exits 1 when any exist.
 * Run by test/tools/check-imports.test.ts, so CI fails on a violation.
 *
 *   domain/        imports nothing else from src/
 *   engine/book/   imports only domain/ (and itself)
 *   engine/        never edge/
 *   edge/          reaches the engine only through engine/engine.ts (the facade), engine/book/api.ts
 *                  and engine/shard-router.ts, and storage only through queries/ (plus journal/env.ts
 *                  and journal/keys.ts types)
 *   queries/       never engine/ internals or edge/
 *   uWebSockets.js only in edge/; lmdb only in journal/
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

// Type-only imports (`import type ... from`) are erased at compile time and create no dependency.
const IMPORT = /(?:^|\n)\s*(?:import|export)\s(?!type\s)[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|new URL\(\s*['"]([^'"]+\.(?:ts|mjs))['"]/g;

export interface Violation {
  file: string;
  target: string;
  rule: string;
}

export function check(srcDir = src): Violation[] {
  const out: Violation[] = [];
  for (const file of files(srcDir)) {
    const rel = relative(srcDir, file).split('\\').join('/');
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (!spec) continue;
      const v = (rule: string) => out.push({ file: rel, target: spec, rule });
      if (spec === 'uWebSockets.js' && !rel.startsWith('edge/')) v('only edge/ imports uWebSockets.js');
      if (spec === 'lmdb' && !rel.startsWith('journal/')) v('only journal/ imports lmdb');
      if (!spec.startsWith('.')) continue;
      const target = relative(srcDir, resolve(dirname(file), spec)).split('\\').join('/');
      if (target.startsWith('..')) continue;
      const top = target.split('/')[0];
      if (rel.startsWith('domain/') && top !== 'domain') v('domain/ imports nothing else from src/');
      if (rel.startsWith('engine/book/') && !target.startsWith('engine/book/') && top !== 'domain') v('engine/book/ imports only domain/');
      if (rel.startsWith('engine/') && top === 'edge') v('engine/ never imports edge/');
      if (rel.startsWith('queries/') && (top === 'edge' || (top === 'engine' && target !== 'engine/book/api.ts'))) v('queries/ reads storage only');
      if (rel.startsWith('edge/') && top === 'engine' && !['engine/engine.ts', 'engine/book/api.ts', 'engine/shard-router.ts'].includes(target)) {
        v('edge/ reaches the engine only through engine/engine.ts');
      }
      if (rel.startsWith('edge/') && top === 'journal' && !['journal/env.ts', 'journal/keys.ts'].includes(target)) v('edge/ reads storage through queries/');
    }
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const found = check();
  for (const x of found) console.error(`${x.file}: imports ${x.target}: ${x.rule}`);
  console.log(found.length === 0 ? 'import rules: ok' : `import rules: ${found.length} violation(s)`);
  process.exit(found.length === 0 ? 0 : 1);
}
