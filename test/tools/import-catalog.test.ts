/**
 * The catalog import command: whole-file validation before any write, batched writes with the whole
 * file's id floor, the change summary, idempotent re-import, and the CLI's exit codes and output.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openStore } from '../../src/journal/env.ts';
import { CatalogReader } from '../../src/queries/catalog.ts';
import { importCatalog, parseCatalog } from '../../tools/import-catalog.ts';
import { demoCatalog, syntheticCatalog } from '../../src/demo/catalog.ts';
import type { EventInput } from '../../src/edge/schemas/admin.ts';

const run = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), 'pm-'));
let dirs = 0;
const dir = () => mkdtempSync(join(root, `${dirs++}-`));
after(() => rmSync(root, { recursive: true, force: true }));

async function read<T>(dataDir: string, f: (r: CatalogReader) => T): Promise<T> {
  const store = openStore({ dataDir });
  try {
    return f(new CatalogReader(store));
  } finally {
    await store.close();
  }
}

test('parseCatalog takes an array or {"events": [...]} and names what is wrong otherwise', () => {
  assert.deepEqual(parseCatalog('[1]'), { ok: true, events: [1] });
  assert.deepEqual(parseCatalog('{"events": [2]}'), { ok: true, events: [2] });
  for (const bad of ['{', '{"x": 1}', '3']) assert.equal(parseCatalog(bad).ok, false, bad);
});

test('import: summary, idempotent second run, batches keep ids of later batches free', async () => {
  const dataDir = dir();
  // Id-less events first, an explicit id that the sequence would otherwise hand out in a later batch.
  const events: EventInput[] = [
    { title: 'First without id', endDate: '2027-01-01', markets: [{ question: 'A?', questionID: `0x${'1'.repeat(64)}` }] },
    { title: 'Second without id', endDate: '2027-01-01', markets: [{ question: 'B?', questionID: `0x${'2'.repeat(64)}` }] },
    ...syntheticCatalog({ events: 40, seed: 9, firstId: 2 }),
  ];
  const first = await importCatalog(events, { dataDir, batch: 7 });
  assert.ok(first.ok, JSON.stringify(!first.ok && first.errors));
  assert.equal(first.summary.events.created, 42);
  assert.equal(first.summary.tags.created + first.summary.tags.updated + first.summary.tags.unchanged, new Set(events.flatMap((e) => (e.tags ?? []).map((t) => t.id))).size);
  const ids = await read(dataDir, (r) => [r.eventBySlug('first-without-id')?.id, r.eventBySlug('second-without-id')?.id, r.event('2')?.title]);
  assert.deepEqual(ids, ['42', '43', events[2].title]);

  const again = await importCatalog(events, { dataDir, batch: 5 });
  assert.ok(again.ok);
  assert.deepEqual(again.summary.events, { created: 0, updated: 0, unchanged: 42 });
  assert.equal(again.summary.markets.created + again.summary.markets.updated, 0);
});

test('import: a bad file writes nothing and lists every problem', async () => {
  const dataDir = dir();
  const events = demoCatalog();
  const bad = [...events, { ...events[0], id: '999' }, { title: 5 }];
  const r = await importCatalog(bad, { dataDir });
  assert.ok(!r.ok);
  assert.ok(r.errors.some((e) => e.path === `[${events.length + 1}].title`));
  const semantic = await importCatalog([...events, { ...events[0], id: '999' }], { dataDir });
  assert.ok(!semantic.ok);
  assert.ok(semantic.errors.some((e) => e.path === `[${events.length}].slug` && /also used by event 1 at \[0\]/.test(e.message)), JSON.stringify(semantic.errors));
  assert.equal(await read(dataDir, (r) => r.isEmpty()), true);
  const dry = await importCatalog(events, { dataDir, dryRun: true });
  assert.ok(dry.ok && dry.summary.events.created === events.length);
  assert.equal(await read(dataDir, (r) => r.isEmpty()), true, 'a dry run writes nothing');
});

test('the CLI prints the summary, exits 1 on a bad file and 2 on bad usage', async () => {
  const d = dir();
  const file = join(d, 'catalog.json');
  writeFileSync(file, JSON.stringify({ events: demoCatalog() }));
  const ok = await run('npx', ['tsx', 'tools/import-catalog.ts', file, '--data-dir', join(d, 'data')], { cwd: process.cwd() });
  assert.match(ok.stdout, /imported \d+ events/);
  assert.match(ok.stdout, /events\s+\d+\s+0\s+0/);
  assert.match(ok.stdout, /events\/s/);
  const badFile = join(d, 'bad.json');
  writeFileSync(badFile, '[{"title": "x"}]');
  await assert.rejects(run('npx', ['tsx', 'tools/import-catalog.ts', badFile, '--data-dir', join(d, 'data')]), (e: { code: number; stderr: string }) => {
    assert.equal(e.code, 1);
    assert.match(e.stderr, /nothing written/);
    assert.match(e.stderr, /\[0\]\.endDate/);
    return true;
  });
  await assert.rejects(run('npx', ['tsx', 'tools/import-catalog.ts']), (e: { code: number }) => e.code === 2);
});
