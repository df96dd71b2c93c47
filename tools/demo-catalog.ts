/**
 * Writes a generated catalog as JSON, in the admin upsert shape (tools/import-catalog.ts loads it):
 * the demo catalog, or `--synthetic N` events. The generators live in src/demo/catalog.ts.
 *
 *   npx tsx tools/demo-catalog.ts [--synthetic N] [--seed S] [--out FILE]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { demoCatalog, syntheticCatalog } from '../src/demo/catalog.ts';

const { values } = parseArgs({ options: { synthetic: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string' } } });
const count = (name: string, text: string | undefined) => {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) {
    process.stderr.write(`--${name} takes a whole number, got ${JSON.stringify(text)}\n`);
    process.exit(2);
  }
  return Number(text);
};
const seed = count('seed', values.seed);
const synthetic = count('synthetic', values.synthetic);
const events = synthetic === undefined ? demoCatalog({ seed }) : syntheticCatalog({ events: synthetic, seed });
// The demo is read by people, the synthetic catalog (up to 100,000 events) by tools.
const text = JSON.stringify(events, null, synthetic === undefined ? 2 : undefined);
if (values.out) writeFileSync(values.out, text);
else process.stdout.write(text + '\n');
