/** The shared schema fragments: field tables keep the order given and check like the fields written out. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { Side, TraderSide, booleans, numbers, strings } from '../../../src/edge/schemas/common.ts';

test('strings, numbers and booleans: one plain schema per name, in the order given', () => {
  const s = strings('b', 'a', 'c');
  assert.deepEqual(Object.keys(s), ['b', 'a', 'c']);
  const written = Type.Object({ x: Type.Number(), b: Type.String(), a: Type.String(), c: Type.String(), y: Type.Boolean() });
  const table = Type.Object({ ...numbers('x'), ...s, ...booleans('y') });
  assert.equal(JSON.stringify(table), JSON.stringify(written));
  assert.ok(Value.Check(table, { x: 1, b: '', a: 'a', c: 'c', y: false }));
  assert.ok(!Value.Check(table, { x: 1, b: 2, a: 'a', c: 'c', y: false }));
});

test('Side and TraderSide accept exactly their two words', () => {
  assert.ok(Value.Check(Side, 'BUY') && Value.Check(Side, 'SELL') && !Value.Check(Side, 'buy'));
  assert.ok(Value.Check(TraderSide, 'TAKER') && Value.Check(TraderSide, 'MAKER') && !Value.Check(TraderSide, 'BUY'));
});
