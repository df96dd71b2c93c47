/**
 * Imports a catalog JSON file into the store, through the same validation as POST /admin/events.
 *
 *   npx tsx tools/import-catalog.ts <file.json> [--data-dir DIR] [--batch N] [--dry-run]
 *
 * The file is an array of events in the admin upsert shape (or `{"events": [...]}`), markets nested.
 * The whole file is checked first (schema, then against the store: identity, uniqueness, references);
 * if anything is wrong nothing is written and every problem is listed (the first 50 printed). Then it
 * is written in batches of N events (default 500), each batch one transaction, with a progress bar, and
 * a summary of created / updated / unchanged events, markets, tags and series is printed. Importing the
 * same file again reports everything unchanged.
 *
 * DATA_DIR (or --data-dir, default from the configuration) is the server's LMDB environment; LMDB allows
 * the import while the server runs, but a running engine only registers the new markets at its next
 * start, so prefer POST /admin/events against a live server.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import cliProgress from 'cli-progress';
import { openStore } from '../src/journal/env.ts';
import { CatalogWriter, explicitIdFloors, type Problem, type UpsertOutcome, type UpsertSummary } from '../src/projections/catalog.ts';
import { systemClock } from '../src/runtime/clock.ts';
import { loadConfig } from '../src/runtime/config.ts';
import { EventInput } from '../src/edge/schemas/admin.ts';

const checkEvent = TypeCompiler.Compile(EventInput);

export interface ImportOptions {
  dataDir: string;
  batch?: number;
  dryRun?: boolean;
  /** Progress callback (done, total) after each batch. */
  onProgress?: (done: number, total: number) => void;
}

export type ImportResult =
  | { ok: true; summary: UpsertSummary; events: number; markets: number; checkMs: number; writeMs: number }
  | { ok: false; errors: Problem[] };

/** '/markets/0/question' -> '.markets[0].question' */
const pathOf = (p: string) => p.split('/').filter(Boolean).map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`)).join('');

/** Parses the file's JSON: an array of events or {"events": [...]}. */
export function parseCatalog(text: string): { ok: true; events: unknown[] } | { ok: false; errors: Problem[] } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { ok: false, errors: [{ path: '(file)', message: `not JSON: ${(e as Error).message}` }] };
  }
  const events = Array.isArray(doc) ? doc : typeof doc === 'object' && doc !== null && Array.isArray((doc as { events?: unknown }).events) ? (doc as { events: unknown[] }).events : undefined;
  if (!events) return { ok: false, errors: [{ path: '(file)', message: 'expected an array of events or {"events": [...]}' }] };
  return { ok: true, events };
}

/** Checks the whole input, then writes it batch by batch. Nothing is written when any problem exists. */
export async function importCatalog(input: unknown[], opts: ImportOptions): Promise<ImportResult> {
  const t0 = performance.now();
  const errors: Problem[] = [];
  input.forEach((ev, i) => {
    if (!checkEvent.Check(ev)) for (const e of checkEvent.Errors(ev)) errors.push({ path: `[${i}]${pathOf(e.path)}`, message: e.message });
  });
  if (errors.length > 0) return { ok: false, errors };
  const events = input as EventInput[];

  const store = openStore({ dataDir: opts.dataDir });
  try {
    const writer = new CatalogWriter(store, systemClock);
    const checked = writer.check(events);
    if (!checked.ok) return { ok: false, errors: checked.errors };
    const markets = events.reduce((n, e) => n + (e.markets?.length ?? 0), 0);
    const t1 = performance.now();
    if (opts.dryRun) return { ok: true, summary: checked.summary, events: events.length, markets, checkMs: t1 - t0, writeMs: 0 };

    const size = Math.max(1, opts.batch ?? 500);
    const floors = explicitIdFloors(events);
    // Two batches in flight: one is planned and written while the previous one commits (fsync).
    const inFlight: { start: number; end: number; done: Promise<UpsertOutcome> }[] = [];
    const settle = async (): Promise<Problem[] | undefined> => {
      const b = inFlight.shift()!;
      const outcome = await b.done;
      if (!outcome.ok) {
        // Only a concurrent writer can make a checked batch fail; the batches before it stay committed.
        return outcome.errors.map((e) => ({ path: e.path.replace(/^\[(\d+)\]/, (_m, n: string) => `[${b.start + Number(n)}]`), message: e.message }));
      }
      opts.onProgress?.(b.end, events.length);
      return undefined;
    };
    for (let i = 0; i < events.length; i += size) {
      const end = Math.min(i + size, events.length);
      inFlight.push({ start: i, end, done: writer.upsertEvents(events.slice(i, end), floors) });
      if (inFlight.length >= 2) {
        const failed = await settle();
        if (failed) {
          await Promise.allSettled(inFlight.map((b) => b.done));
          return { ok: false, errors: failed };
        }
      }
    }
    while (inFlight.length > 0) {
      const failed = await settle();
      if (failed) {
        await Promise.allSettled(inFlight.map((b) => b.done));
        return { ok: false, errors: failed };
      }
    }
    // The whole-file plan counts each tag and series once; per-batch summaries would count it per batch.
    return { ok: true, summary: checked.summary, events: events.length, markets, checkMs: t1 - t0, writeMs: performance.now() - t1 };
  } finally {
    await store.close();
  }
}

export function formatSummary(s: UpsertSummary): string {
  const rows = (['events', 'markets', 'tags', 'series'] as const).map((k) => `  ${k.padEnd(8)} ${String(s[k].created).padStart(9)} ${String(s[k].updated).padStart(9)} ${String(s[k].unchanged).padStart(10)}`);
  return ['           created   updated  unchanged', ...rows].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const args = argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(name);
    if (i < 0) return undefined;
    const v = args[i + 1];
    args.splice(i, 2);
    return v;
  };
  const dryRun = args.includes('--dry-run');
  if (dryRun) args.splice(args.indexOf('--dry-run'), 1);
  const dataDirArg = flag('--data-dir');
  const batchArg = flag('--batch');
  const file = args[0];
  if (!file || args.length > 1 || (batchArg !== undefined && !/^[1-9]\d*$/.test(batchArg))) {
    process.stderr.write('usage: npx tsx tools/import-catalog.ts <file.json> [--data-dir DIR] [--batch N] [--dry-run]\n');
    return 2;
  }
  const dataDir = dataDirArg ?? loadConfig().dataDir;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    process.stderr.write(`cannot read ${file}: ${(e as Error).message}\n`);
    return 1;
  }
  const parsed = parseCatalog(text);
  const bar = new cliProgress.SingleBar(
    { format: 'importing |{bar}| {percentage}% | {value}/{total} events | ETA {eta_formatted}', hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  const result = parsed.ok
    ? await importCatalog(parsed.events, {
        dataDir,
        dryRun,
        batch: batchArg ? Number(batchArg) : undefined,
        onProgress: (done, total) => {
          if (!started) {
            bar.start(total, 0);
            started = true;
          }
          bar.update(done);
        },
      })
    : parsed;
  if (started) bar.stop();
  if (!result.ok) {
    process.stderr.write(`import refused, nothing written: ${result.errors.length} problem(s)\n`);
    for (const e of result.errors.slice(0, 50)) process.stderr.write(`  ${e.path}: ${e.message}\n`);
    if (result.errors.length > 50) process.stderr.write(`  ... and ${result.errors.length - 50} more\n`);
    return 1;
  }
  process.stdout.write(`${dryRun ? 'dry run (nothing written)' : 'imported'} ${result.events} events into ${dataDir}\n${formatSummary(result.summary)}\n`);
  const seconds = (result.checkMs + result.writeMs) / 1000;
  process.stdout.write(
    `checked in ${(result.checkMs / 1000).toFixed(1)} s, written in ${(result.writeMs / 1000).toFixed(1)} s: ` +
      `${Math.round(result.events / seconds)} events/s, ${Math.round(result.markets / seconds)} markets/s overall\n`,
  );
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv);
}
