import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Errors, apiError, errorByResult, formatMessage, isApiError } from '../../src/domain/errors.ts';

const specs = Object.values(Errors);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('codes, numeric results and messages are unique', () => {
  assert.equal(new Set(specs.map((s) => s.code)).size, specs.length);
  assert.equal(new Set(specs.map((s) => s.result)).size, specs.length, 'a numeric result code is reused');
});

test('every code is documented, has an HTTP status and sits in its stage range', () => {
  for (const s of specs) {
    assert.ok(s.doc.length > 10, `${s.code} has no documentation`);
    assert.ok(s.status >= 400 && s.status < 600, `${s.code} status ${s.status}`);
    assert.match(s.code, /^PM_ERR_[A-Z0-9_]+$/);
    assert.ok(s.result > 0 && s.result < 9000, `${s.code} result ${s.result}`);
  }
});

test('every code is used somewhere in src/ besides the catalogue', () => {
  const here = new URL('../../src/', import.meta.url).pathname;
  const text = sourceFiles(here)
    .filter((f) => !f.endsWith('domain/errors.ts'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  const results = new Set([...text.matchAll(/\b([1-9]\d{3})\b/g)].map((m) => Number(m[1])));
  const unused = specs.filter((s) => !text.includes(s.code) && !results.has(s.result)).map((s) => s.code);
  assert.deepEqual(unused, [], `unused error codes: ${unused.join(', ')}`);
});

test('numeric codes round-trip to their spec and unknown ones are internal errors', () => {
  for (const s of specs) assert.equal(errorByResult(s.result), s);
  assert.equal(errorByResult(987654).code, 'PM_ERR_INTERNAL');
});

test('message templates fill named placeholders and keep unknown ones', () => {
  assert.equal(formatMessage('order {id} at {price}', { id: '0xab', price: '0.5' }), 'order 0xab at 0.5');
  assert.equal(formatMessage('{a} {b}', { a: 1 }), '1 {b}');
  const e = apiError('PM_ERR_DATA_UNKNOWN_FIELD', { name: 'foo' });
  assert.equal(e.message, 'unknown_field: foo');
  assert.equal(e.spec.status, 400);
  assert.ok(isApiError(e));
  assert.ok(!isApiError(new Error('x')));
  // A structured clone (what crosses a thread) is no longer an ApiError: only numeric codes cross.
  assert.ok(!isApiError(structuredClone({ message: e.message })));
});
