/**
 * The in-memory static files (src/edge/http/static-files.ts) on a directory made here: each served type gets
 * its Content-Type, hashed names are immutable and the rest revalidated with a strong ETag; what must not
 * be served is left out with its reason (hidden and odd names, unknown types, subdirectories, symbolic
 * links to files outside, files past their bound or past the total, text that is not UTF-8); a missing
 * directory is reported, never thrown; If-None-Match is matched as RFC 9110 reads it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { IMMUTABLE, REVALIDATE, loadStaticFiles, matchesEtag } from '../../../src/edge/http/static-files.ts';
import { tempDir } from '../../fixtures/temp-dirs.ts';

function dirWith(files: Record<string, string | Buffer>): string {
  const dir = tempDir('pm-static-');
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
  return dir;
}

test('each served file has its type, its cache policy and an ETag of its content', () => {
  const dir = dirWith({
    'index.html': '<!doctype html><p>é</p>',
    'main-4KJ2HQ3P.js': 'export {}',
    'main-ZZ23AB7Q.css': 'body{}',
    'logo.svg': '<svg/>',
    'notes.txt': 'x',
  });
  const { files, skipped, missing } = loadStaticFiles(dir);
  assert.equal(missing, undefined);
  assert.deepEqual(skipped, []);
  const expect: [string, string, string][] = [
    ['index.html', 'text/html; charset=utf-8', REVALIDATE],
    ['main-4KJ2HQ3P.js', 'text/javascript; charset=utf-8', IMMUTABLE],
    ['main-ZZ23AB7Q.css', 'text/css; charset=utf-8', IMMUTABLE],
    ['logo.svg', 'image/svg+xml; charset=utf-8', REVALIDATE],
    ['notes.txt', 'text/plain; charset=utf-8', REVALIDATE],
  ];
  for (const [name, type, cache] of expect) {
    const f = files.get(name);
    assert.ok(f, name);
    assert.equal(f.contentType, type, name);
    assert.equal(f.cacheControl, cache, name);
    assert.match(f.etag, /^"[A-Za-z0-9_-]{27}"$/, name);
  }
  assert.equal(files.get('index.html')!.body, '<!doctype html><p>é</p>');
  assert.equal(files.get('index.html')!.bytes, Buffer.byteLength('<!doctype html><p>é</p>'));
  assert.notEqual(files.get('logo.svg')!.etag, files.get('notes.txt')!.etag);
  assert.equal(loadStaticFiles(dirWith({ 'a.txt': 'x' })).files.get('a.txt')!.etag, files.get('notes.txt')!.etag, 'the same bytes, the same tag');
});

test('what must not be served is skipped with its reason, and nothing outside the directory is read', () => {
  const outside = dirWith({ 'secret.txt': 'do not serve' });
  const dir = dirWith({
    '.env.txt': 'hidden',
    'with space.js': 'x',
    'script.php': 'x',
    'binary.js': Buffer.from([0xff, 0xfe, 0x00, 0x80]),
    'ok.js': 'ok',
  });
  mkdirSync(join(dir, 'sub.js'));
  symlinkSync(join(outside, 'secret.txt'), join(dir, 'link.txt'));
  const { files, skipped } = loadStaticFiles(dir);
  assert.deepEqual([...files.keys()], ['ok.js']);
  assert.deepEqual(
    Object.fromEntries(skipped.map((s) => [s.name, s.reason])),
    {
      '.env.txt': 'not a servable name',
      'with space.js': 'not a servable name',
      'script.php': 'not a served type',
      'binary.js': 'not UTF-8 text',
      'sub.js': 'not a regular file',
      'link.txt': 'not a regular file',
    },
  );
});

test('files past their bound, past the total or past the count are skipped, never cut', () => {
  const dir = dirWith({ 'a.js': 'a'.repeat(100), 'b.js': 'b'.repeat(300), 'c.js': 'c'.repeat(100), 'd.js': 'd'.repeat(100), 'e.js': 'e' });
  const { files, skipped } = loadStaticFiles(dir, { maxFiles: 3, maxFileBytes: 200, maxTotalBytes: 250 });
  assert.deepEqual([...files.keys()], ['a.js', 'c.js', 'e.js']);
  assert.equal(files.get('a.js')!.body.length, 100);
  assert.deepEqual(skipped, [
    { name: 'b.js', reason: 'larger than 200 bytes' },
    { name: 'd.js', reason: 'past 250 bytes in all' },
  ]);
  const many = loadStaticFiles(dirWith({ 'a.js': 'a', 'b.js': 'b', 'c.js': 'c' }), { maxFiles: 2, maxFileBytes: 10, maxTotalBytes: 100 });
  assert.deepEqual(many.skipped, [{ name: 'c.js', reason: 'past 2 files' }]);
});

test('a directory that cannot be read is reported missing, with no files', () => {
  const r = loadStaticFiles(join(tmpdir(), 'pm-static-never-made', 'x'));
  assert.equal(r.files.size, 0);
  assert.match(r.missing ?? '', /ENOENT/);
});

const ETAG_CASES: { name: string; header: string | undefined; expected: boolean }[] = [
  { name: 'absent', header: undefined, expected: false },
  { name: 'empty', header: '', expected: false },
  { name: 'the same tag', header: '"abc"', expected: true },
  { name: 'its weak form', header: 'W/"abc"', expected: true },
  { name: 'in a list', header: '"x", "abc" , "y"', expected: true },
  { name: 'any', header: '*', expected: true },
  { name: 'another tag', header: '"abd"', expected: false },
  { name: 'unquoted', header: 'abc', expected: false },
];
for (const c of ETAG_CASES) {
  test(`If-None-Match ${c.name}: ${c.expected ? 'matches' : 'does not match'}`, () => {
    assert.equal(matchesEtag(c.header, '"abc"'), c.expected);
  });
}
