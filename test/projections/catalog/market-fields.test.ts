/** The market fields parsed beyond a default: each value, each refusal with its path, and the fallback. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { minSizeOf, outcomesOf, pricesOf, tokenIdsOf } from '../../../src/projections/catalog/market-fields.ts';
import type { Problem } from '../../../src/projections/catalog/input.ts';
import type { MarketRec } from '../../../src/projections/catalog/catalog-index.ts';
import type { MarketInput } from '../../../src/edge/schemas/admin.ts';

const m = (extra: Partial<MarketInput>): MarketInput => ({ question: 'q', ...extra });

test('outcomes: default pair, JSON text or array, refused when equal, empty or not two', () => {
  const p: Problem[] = [];
  assert.deepEqual(outcomesOf(m({}), 'm', p), ['Yes', 'No']);
  assert.deepEqual(outcomesOf(m({ outcomes: '["Up","Down"]' }), 'm', p), ['Up', 'Down']);
  assert.deepEqual(outcomesOf(m({ outcomes: ['A', 'B'] }), 'm', p), ['A', 'B']);
  assert.equal(p.length, 0);
  assert.deepEqual(outcomesOf(m({ outcomes: ['A', 'A'] }), 'm', p), ['Yes', 'No']);
  assert.deepEqual(outcomesOf(m({ outcomes: '["A"' }), 'm', p), ['Yes', 'No']);
  assert.deepEqual(outcomesOf(m({ outcomes: ['A', ' '] }), 'm', p), ['Yes', 'No']);
  assert.deepEqual(outcomesOf(m({ outcomes: ['A', 'B', 'C'] }), 'm', p), ['Yes', 'No']);
  assert.deepEqual(p.map((x) => x.message), [
    'must be two different non-empty labels of at most 100 characters',
    'must be a JSON-encoded array of two values',
    'must be two different non-empty labels of at most 100 characters',
    'must hold exactly two values',
  ]);
  assert.ok(p.every((x) => x.path === 'm.outcomes'));
});

test('token ids: kept when absent, taken when valid, refused when equal, malformed or different from the stored', () => {
  const kept: [string, string] = ['1', '2'];
  const p: Problem[] = [];
  assert.equal(tokenIdsOf(m({}), '9', undefined, kept, 'm', p), kept);
  assert.deepEqual(tokenIdsOf(m({ clobTokenIds: ['12', '13'] }), '9', undefined, kept, 'm', p), ['12', '13']);
  const old = { clobTokenIds: ['12', '13'] } as MarketRec;
  assert.deepEqual(tokenIdsOf(m({ clobTokenIds: '["12","13"]' }), '9', old, kept, 'm', p), ['12', '13']);
  assert.equal(p.length, 0);
  assert.equal(tokenIdsOf(m({ clobTokenIds: ['12', '14'] }), '9', old, kept, 'm', p), kept);
  assert.equal(tokenIdsOf(m({ clobTokenIds: ['5', '5'] }), '9', undefined, kept, 'm', p), kept);
  assert.equal(tokenIdsOf(m({ clobTokenIds: ['x', '5'] }), '9', undefined, kept, 'm', p), kept);
  assert.deepEqual(p.map((x) => x.message), [
    'market 9 has token ids ["12","13"]; they cannot change',
    'must be two different uint256 decimal strings',
    'must be two different uint256 decimal strings',
  ]);
});

test('prices: none when absent, normalized decimals when valid, refused above 1 or with more decimals', () => {
  const p: Problem[] = [];
  assert.deepEqual(pricesOf(m({}), 'm', p), []);
  assert.deepEqual(pricesOf(m({ outcomePrices: ['0.25', 0.75] }), 'm', p), ['0.25', '0.75']);
  assert.deepEqual(pricesOf(m({ outcomePrices: ['0.500', '1'] }), 'm', p), ['0.5', '1']);
  assert.equal(p.length, 0);
  assert.deepEqual(pricesOf(m({ outcomePrices: ['1.5', '0'] }), 'm', p), []);
  assert.deepEqual(pricesOf(m({ outcomePrices: ['0.1234567', '0'] }), 'm', p), []);
  assert.equal(p.length, 2);
  assert.equal(p[0].path, 'm.outcomePrices');
});

test('minimum size: 5 shares by default, lots only, positive', () => {
  const p: Problem[] = [];
  assert.equal(minSizeOf(m({}), 'm', p), 5_000_000);
  assert.equal(minSizeOf(m({ orderMinSize: 2.5 }), 'm', p), 2_500_000);
  assert.equal(p.length, 0);
  assert.equal(minSizeOf(m({ orderMinSize: 0.001 }), 'm', p), 5_000_000);
  assert.equal(minSizeOf(m({ orderMinSize: 0 }), 'm', p), 5_000_000);
  assert.deepEqual(p, [
    { path: 'm.orderMinSize', message: 'must be a positive multiple of 0.01' },
    { path: 'm.orderMinSize', message: 'must be a positive multiple of 0.01' },
  ]);
});
