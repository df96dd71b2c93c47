import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bucketTable, readmePath, section } from '../../tools/readme-tables.ts';

// The table moved with the reference to docs/http-api.md ("Rate limits"); the quick start stayed on the README.
const frontPage = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'README.md');

test('README lists the rate-limit buckets of every route exactly as the code charges them', () => {
  const got = section(readFileSync(readmePath, 'utf8'));
  assert.ok(got !== undefined, 'docs/http-api.md lacks the generated rate-limit table');
  assert.equal(got, bucketTable(), 'docs/http-api.md table is stale: run `npx tsx tools/readme-tables.ts --write`');
});

test('README quick start is the two commands CI and users rely on', () => {
  const readme = readFileSync(frontPage, 'utf8');
  assert.match(readme, /npm ci && npm start/);
  assert.match(readme, /npm ci && npm test/);
});
