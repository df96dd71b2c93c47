import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Errors, apiError, errorByResult, formatMessage, isApiError, type ErrorCode } from '../../src/domain/errors.ts';
import { MatchCode } from '../../src/engine/book/api.ts';
import { LedgerCode } from '../../src/engine/ledger/ledger.ts';

const specs = Object.values(Errors);
const catalogueSource = readFileSync(new URL('../../src/domain/errors.ts', import.meta.url), 'utf8');

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

test('every code is documented, has an HTTP status and a result in 1..8999', () => {
  for (const s of specs) {
    assert.ok(s.doc.length > 10, `${s.code} has no documentation`);
    assert.ok(s.status >= 400 && s.status < 600, `${s.code} status ${s.status}`);
    assert.match(s.code, /^PM_ERR_[A-Z0-9_]+$/);
    assert.ok(s.result > 0 && s.result < 9000, `${s.code} result ${s.result}`);
  }
});

/**
 * The catalogue as written: each `// ---- Nxxx stage` section with the codes listed under it. The stage of
 * an entry is where it is written, so this reads the source rather than the frozen object.
 */
function stagesOfCatalogue(): Array<{ digit: number; name: string; codes: ErrorCode[] }> {
  const body = catalogueSource.slice(catalogueSource.indexOf('export const Errors = define({'));
  const stages: Array<{ digit: number; name: string; codes: ErrorCode[] }> = [];
  for (const line of body.split('\n')) {
    const header = /^\s*\/\/ ---- (\d)xxx ([^-]+?) -+$/.exec(line);
    if (header !== null) stages.push({ digit: Number(header[1]), name: header[2], codes: [] });
    const entry = /^\s*(PM_ERR_[A-Z0-9_]+):/.exec(line);
    if (entry !== null) {
      assert.ok(stages.length > 0, `${entry[1]} is written before any stage section`);
      stages[stages.length - 1].codes.push(entry[1] as ErrorCode);
    }
  }
  return stages;
}

test('each stage section holds only codes of its numeric range, and the header lists the same stages', () => {
  const stages = stagesOfCatalogue();
  assert.deepEqual(stages.map((s) => s.digit), [0, 1, 2, 3, 4, 5, 6, 7, 8], 'one section per stage, in order');
  const listed = stages.flatMap((s) => s.codes);
  assert.deepEqual([...listed].sort(), specs.map((s) => s.code).sort(), 'every entry sits in exactly one section');
  for (const st of stages) {
    for (const code of st.codes) {
      const r = Errors[code].result;
      assert.ok(r >= st.digit * 1000 && r < (st.digit + 1) * 1000, `${code} (${r}) lies outside the ${st.digit}xxx ${st.name} range`);
    }
  }
  const table = catalogueSource.split('export interface ErrorSpec')[0].split('\n').filter((l) => /^ \*\s+\dxxx /.test(l));
  const documented = table.flatMap((l) => [...l.matchAll(/(\d)xxx [a-z]/g)].map((m) => Number(m[1])));
  assert.deepEqual(documented, stages.map((s) => s.digit), 'the header table names every stage');
});

test('the matching core\'s codes are exactly the matching stage of the catalogue, and the ledger\'s are catalogue codes', () => {
  const matching = stagesOfCatalogue().find((s) => s.name === 'matching');
  assert.ok(matching !== undefined);
  const fromBook = Object.values(MatchCode).filter((c) => c !== MatchCode.OK);
  assert.deepEqual([...fromBook].sort(), matching.codes.map((c) => Errors[c].result).sort());
  for (const c of fromBook) assert.ok(c >= 4000 && c < 5000, `MatchCode ${c} outside 4xxx`);
  for (const [name, c] of Object.entries(LedgerCode)) {
    if (c === LedgerCode.OK) continue;
    assert.notEqual(errorByResult(c).code, 'PM_ERR_INTERNAL', `LedgerCode.${name} (${c}) is not in the catalogue`);
  }
});

test('every code is used somewhere in src/ besides the catalogue', () => {
  const here = new URL('../../src', import.meta.url).pathname;
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

test('an ApiError is an answer: it carries no stack frames, and other errors keep theirs', () => {
  const limit = Error.stackTraceLimit;
  const e = apiError('PM_ERR_RATE_LIMITED');
  assert.equal(isApiError(e), true);
  assert.equal(e.message, Errors.PM_ERR_RATE_LIMITED.message);
  assert.doesNotMatch(e.stack ?? '', /\n\s+at /, 'no frames captured');
  assert.equal(Error.stackTraceLimit, limit, 'the limit is put back');
  assert.match(new Error('a fault').stack ?? '', /\n\s+at /, 'a fault still has its frames');
});
