/**
 * Builds the web console (console/) into the directory the service serves it from (dist/console by
 * default, `console.dir`): esbuild bundles console/src/main.tsx with the libraries it imports from
 * node_modules (preact, lightweight-charts, viem) into one script and one style sheet named by their
 * content hash, and console/index.html is written with those names. Nothing is fetched at build or run
 * time and nothing built is committed: `npm ci` (prepare) and `npm start` (prestart) run this, and the
 * console's browser test builds its own copy.
 *
 * The output replaces the directory whole (built beside it, then renamed), so a service started during
 * a build serves the old console or the new one, never half of each.
 *
 *   npx tsx tools/build-console.ts [--out DIR] [--no-minify]
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { CONSOLE_BUILD_DIR } from '../src/runtime/config.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CONSOLE_SRC = join(root, 'console');

export interface BuiltConsole {
  outDir: string;
  /** The written files, page first, with their sizes in bytes. */
  files: { name: string; bytes: number }[];
  ms: number;
}

export async function buildConsole(o: { outDir?: string; minify?: boolean } = {}): Promise<BuiltConsole> {
  const t0 = performance.now();
  const outDir = resolve(o.outDir ?? CONSOLE_BUILD_DIR);
  const staging = `${outDir}.building-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const result = await build({
    entryPoints: [join(CONSOLE_SRC, 'src/main.tsx')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome109', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    conditions: ['production'],
    define: { 'process.env.NODE_ENV': '"production"' },
    minify: o.minify ?? true,
    entryNames: '[name]-[hash]',
    outdir: staging,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: root,
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const script = outputs.find((n) => n.startsWith('main-') && n.endsWith('.js'));
  const styles = outputs.find((n) => n.startsWith('main-') && n.endsWith('.css'));
  if (script === undefined || styles === undefined) throw new Error(`console build wrote ${outputs.join(', ')}: expected main-*.js and main-*.css`);
  const page = readFileSync(join(CONSOLE_SRC, 'index.html'), 'utf8').replace('{{script}}', `/console/${script}`).replace('{{styles}}', `/console/${styles}`);
  if (page.includes('{{')) throw new Error('console/index.html has a placeholder the build does not fill');
  writeFileSync(join(staging, 'index.html'), page);

  mkdirSync(dirname(outDir), { recursive: true });
  rmSync(outDir, { recursive: true, force: true });
  renameSync(staging, outDir);
  const files = ['index.html', script, styles].map((name) => ({ name, bytes: readFileSync(join(outDir, name)).length }));
  return { outDir, files, ms: Math.round(performance.now() - t0) };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : undefined;
  const built = await buildConsole({ outDir: out, minify: !args.includes('--no-minify') });
  const sizes = built.files.map((f) => `${f.name} ${(f.bytes / 1024).toFixed(1)} KiB`).join(', ');
  console.log(`console built in ${built.ms} ms into ${built.outDir}: ${sizes}`);
}
