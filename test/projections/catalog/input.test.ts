/** Field normalization of admin input: dates to UTC, creators, ids, and the two-value fields. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { given, idText, normalizeCreator, normalizeIso, present, stringPair, type Problem } from '../../../src/projections/catalog/input.ts';

test('normalizeIso: a zone-less time is UTC, offsets apply, impossible dates are refused', () => {
  assert.equal(normalizeIso('2026-03-01'), '2026-03-01T00:00:00.000Z');
  assert.equal(normalizeIso('2026-03-01 12:30'), '2026-03-01T12:30:00.000Z');
  assert.equal(normalizeIso('2026-03-01T12:30:00+0200'), '2026-03-01T10:30:00.000Z');
  assert.equal(normalizeIso('2024-02-29'), '2024-02-29T00:00:00.000Z');
  assert.equal(normalizeIso('2026-02-29'), undefined);
  assert.equal(normalizeIso('1800-01-01'), undefined);
  assert.equal(normalizeIso('tomorrow'), undefined);
});

test('present, given, idText, normalizeCreator', () => {
  assert.equal(present(null), false);
  assert.equal(present(0), true);
  assert.equal(given(''), false);
  assert.equal(given('x'), true);
  assert.equal(idText(7), '7');
  assert.equal(idText(null), undefined);
  assert.equal(normalizeCreator('0xABCDEF0123456789abcdef0123456789ABCDEF01'), '0xabcdef0123456789abcdef0123456789abcdef01');
  assert.equal(normalizeCreator('Acme'), 'Acme');
  assert.equal(normalizeCreator(''), undefined);
});

test('stringPair: an array or its JSON text, exactly two values', () => {
  const p: Problem[] = [];
  assert.deepEqual(stringPair('["a",1]', 'x', p), ['a', 1]);
  assert.deepEqual(stringPair(['a', 'b'], 'x', p), ['a', 'b']);
  assert.equal(stringPair('[1,2,3]', 'x', p), undefined);
  assert.equal(stringPair('{', 'x', p), undefined);
  assert.deepEqual(p, [
    { path: 'x', message: 'must hold exactly two values' },
    { path: 'x', message: 'must be a JSON-encoded array of two values' },
  ]);
});
