import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UNITS_PER_PIP, formatPips, formatUnits, parseIntegerUnits, parsePips, parseUnits } from '../../src/domain/units.ts';

const parseCases = [
  { name: 'whole', input: '12', units: 12_000_000 },
  { name: 'decimal', input: '0.55', units: 550_000 },
  { name: 'six decimals', input: '1.000001', units: 1_000_001 },
  { name: 'trailing zeros beyond precision', input: '2.5000000000', units: 2_500_000 },
  { name: 'too precise', input: '0.0000001', units: undefined },
  { name: 'negative', input: '-1', units: undefined },
  { name: 'exponent', input: '1e3', units: undefined },
  { name: 'empty', input: '', units: undefined },
  { name: 'junk', input: '1.2.3', units: undefined },
  { name: 'too large', input: '99999999999', units: undefined },
];
for (const c of parseCases) test(`parseUnits: ${c.name}`, () => assert.equal(parseUnits(c.input), c.units));

const formatCases = [
  { units: 0, text: '0' },
  { units: 550_000, text: '0.55' },
  { units: 120_500_000, text: '120.5' },
  { units: 1, text: '0.000001' },
  { units: -1_500_000, text: '-1.5' },
  { units: 10_000_000, text: '10' },
];
for (const c of formatCases) test(`formatUnits(${c.units})`, () => assert.equal(formatUnits(c.units), c.text));

test('pips: parse and format are inverse on every tick of 0.0001', () => {
  for (let p = 1; p < 10_000; p++) assert.equal(parsePips(formatPips(p)), p);
  assert.equal(formatPips(5500), '0.55');
  assert.equal(parsePips('0.00001'), undefined);
});

test('integer base units refuse signs, decimals and unsafe values', () => {
  assert.equal(parseIntegerUnits('5500000'), 5_500_000);
  assert.equal(parseIntegerUnits('9007199254740993'), undefined);
  assert.equal(parseIntegerUnits('1.5'), undefined);
  assert.equal(parseIntegerUnits('-5'), undefined);
  assert.equal(parseIntegerUnits(''), undefined);
});

test('a price in pips times UNITS_PER_PIP is the same price in units per token', () => {
  for (const pips of [0, 1, 99, 5_000, 5_555, 9_999, 10_000]) assert.equal(pips * UNITS_PER_PIP, parseUnits(formatPips(pips)), `${pips} pips`);
});
