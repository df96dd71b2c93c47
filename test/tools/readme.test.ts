import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { bucketTable, readmePath, section } from '../../tools/readme-tables.ts';

test('README lists the rate-limit buckets of every route exactly as the code charges them', () => {
  const got = section(readFileSync(readmePath, 'utf8'));
  assert.ok(got !== undefined, 'README.md lacks the generated rate-limit table');
  assert.equal(got, bucketTable(), 'README table is stale: run `npx tsx tools/readme-tables.ts --write`');
});

test('README quick start is the two commands CI and users rely on', () => {
  const readme = readFileSync(readmePath, 'utf8');
  assert.match(readme, /npm ci && npm start/);
  assert.match(readme, /npm ci && npm test/);
});
