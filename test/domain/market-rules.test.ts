/**
 * Market and order rules (domain/market-rules.ts): the tick sizes in pips match their decimal forms, a lot
 * is 0.01 token, and a resting price is on tick within [tick, 1 - tick] for every tick size.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BPS, DEFAULT_OUTCOMES, GTD_MIN_LEAD_SECONDS, LOT_UNITS, TICK_PIPS, onTick } from '../../src/domain/market-rules.ts';
import { TICK_SIZES, formatPips, parseUnits } from '../../src/domain/units.ts';

test('tick sizes in pips are the decimal tick sizes', () => {
  assert.deepEqual(TICK_PIPS, [1_000, 100, 10, 1]);
  assert.deepEqual(TICK_PIPS.map(formatPips), [...TICK_SIZES]);
});

test('a lot is 0.01 token; fees are at most 10,000 bps; GTD leads by a minute; outcomes default to Yes/No', () => {
  assert.equal(LOT_UNITS, parseUnits('0.01'));
  assert.equal(BPS, 10_000);
  assert.equal(GTD_MIN_LEAD_SECONDS, 60);
  assert.deepEqual(DEFAULT_OUTCOMES, ['Yes', 'No']);
  assert.ok(Object.isFrozen(DEFAULT_OUTCOMES), 'shared: nobody may change it');
});

const cases: { tick: number; price: number; ok: boolean }[] = [
  { tick: 100, price: 100, ok: true },
  { tick: 100, price: 9_900, ok: true },
  { tick: 100, price: 5_500, ok: true },
  { tick: 100, price: 0, ok: false },
  { tick: 100, price: 10_000, ok: false },
  { tick: 100, price: 5_510, ok: false },
  { tick: 100, price: 5_500.5, ok: false },
  { tick: 1_000, price: 9_000, ok: true },
  { tick: 1_000, price: 9_500, ok: false },
  { tick: 10, price: 10, ok: true },
  { tick: 10, price: 9_995, ok: false },
  { tick: 1, price: 1, ok: true },
  { tick: 1, price: 9_999, ok: true },
  { tick: 1, price: 10_000, ok: false },
  { tick: 1, price: NaN, ok: false },
];
for (const c of cases) test(`onTick(${c.price}, ${c.tick}) is ${c.ok}`, () => assert.equal(onTick(c.price, c.tick), c.ok));
