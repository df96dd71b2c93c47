/**
 * The liquidity-rewards rule (domain/rewards.ts), table-driven: which markets have a program, which orders
 * score and how much (quadratic in the distance from the midpoint, linear in size), outcome 1 measured at
 * 1 - p, and earnings from share x seconds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bookMidpoint, earningsOf, orderScore, rewardProgram, scores, utcDate, type RewardProgram } from '../../src/domain/rewards.ts';

const T = 1_000_000;
const ZERO = '0x0000000000000000000000000000000000000000';

test('a program needs a positive daily rate and a positive max spread', () => {
  const cases = [
    { name: 'rate and spread', m: { clobRewards: [{ assetAddress: ZERO, rewardsDailyRate: 10 }], rewardsMinSize: 50, rewardsMaxSpread: 3.5 }, want: { rates: [{ asset: ZERO, dailyRate: 10 }], minSizeUnits: 50 * T, maxSpreadPips: 350 } },
    { name: 'zero rates left out', m: { clobRewards: [{ assetAddress: '0xAB', rewardsDailyRate: 0 }, { assetAddress: ZERO, rewardsDailyRate: 2 }], rewardsMinSize: 0, rewardsMaxSpread: 1 }, want: { rates: [{ asset: ZERO, dailyRate: 2 }], minSizeUnits: 0, maxSpreadPips: 100 } },
    { name: 'no rate', m: { clobRewards: [], rewardsMinSize: 50, rewardsMaxSpread: 3 }, want: undefined },
    { name: 'only a zero rate', m: { clobRewards: [{ assetAddress: ZERO, rewardsDailyRate: 0 }], rewardsMinSize: 50, rewardsMaxSpread: 3 }, want: undefined },
    { name: 'no max spread', m: { clobRewards: [{ assetAddress: ZERO, rewardsDailyRate: 10 }], rewardsMinSize: 50, rewardsMaxSpread: 0 }, want: undefined },
  ];
  for (const c of cases) assert.deepEqual(rewardProgram(c.m), c.want, c.name);
});

const P: RewardProgram = { rates: [{ asset: ZERO, dailyRate: 86.4 }], minSizeUnits: 10 * T, maxSpreadPips: 1500 };

test('an order scores ((v - s) / v)^2 x its remaining tokens within the max spread and from the min size, else 0', () => {
  const mid = 5000;
  const cases = [
    { name: 'at the midpoint: full weight', o: { outcome: 0 as const, pricePips: 5000, remainingUnits: 20 * T }, want: 20 },
    { name: '10 of 15 cents away', o: { outcome: 0 as const, pricePips: 4000, remainingUnits: 90 * T }, want: (5 / 15) ** 2 * 90 },
    { name: 'the ask side scores alike', o: { outcome: 0 as const, pricePips: 6000, remainingUnits: 90 * T }, want: (5 / 15) ** 2 * 90 },
    { name: 'outcome 1 at p is measured at 1 - p', o: { outcome: 1 as const, pricePips: 4000, remainingUnits: 90 * T }, want: (5 / 15) ** 2 * 90 },
    { name: 'exactly at the max spread: no weight', o: { outcome: 0 as const, pricePips: 3500, remainingUnits: 90 * T }, want: 0 },
    { name: 'beyond the max spread', o: { outcome: 0 as const, pricePips: 3000, remainingUnits: 90 * T }, want: 0 },
    { name: 'below the min size', o: { outcome: 0 as const, pricePips: 5000, remainingUnits: 9.99 * T }, want: 0 },
    { name: 'exactly the min size', o: { outcome: 0 as const, pricePips: 5000, remainingUnits: 10 * T }, want: 10 },
    { name: 'nothing left', o: { outcome: 0 as const, pricePips: 5000, remainingUnits: 0 }, want: 0 },
  ];
  for (const c of cases) assert.ok(Math.abs(orderScore(c.o, mid, P) - c.want) < 1e-12, `${c.name}: ${orderScore(c.o, mid, P)} != ${c.want}`);
  // A midpoint between two ticks (half a pip).
  assert.ok(Math.abs(orderScore({ outcome: 0, pricePips: 5000, remainingUnits: 10 * T }, 5000.5, P) - ((1500 - 0.5) / 1500) ** 2 * 10) < 1e-12);
});

test('scores(): no program or no midpoint (a one-sided book) scores nothing', () => {
  const o = { outcome: 0 as const, pricePips: 5000, remainingUnits: 20 * T };
  assert.equal(scores(o, 5000, P), true);
  assert.equal(scores(o, undefined, P), false);
  assert.equal(scores(o, 5000, undefined), false);
});

test('earnings: the daily rate x share x seconds / 86400; a whole day of all the liquidity earns the rate', () => {
  assert.equal(earningsOf(86.4, 1), 0.001);
  assert.equal(earningsOf(10, 86_400), 10);
  assert.equal(earningsOf(10, 0.5 * 3600), 10 / 48);
  assert.equal(earningsOf(10, 0), 0);
  assert.equal(utcDate(Date.UTC(2026, 2, 31, 23, 59, 59)), '2026-03-31');
});

test('bookMidpoint: one book from both outcomes\' orders, mirrored; undefined without both sides', () => {
  const o = (outcome: 0 | 1, side: 'BUY' | 'SELL', pricePips: number) => ({ outcome, side, pricePips });
  assert.equal(bookMidpoint([o(0, 'BUY', 4000), o(0, 'SELL', 6000)]), 5000);
  assert.equal(bookMidpoint([o(0, 'BUY', 4000), o(1, 'BUY', 5500)]), 4250, 'a BUY of outcome 1 at 0.55 is an ask of outcome 0 at 0.45');
  assert.equal(bookMidpoint([o(1, 'SELL', 5000), o(0, 'SELL', 5200), o(0, 'BUY', 3000)]), 5100, 'a SELL of outcome 1 at 0.50 is a bid at 0.50, above the BUY at 0.30');
  assert.equal(bookMidpoint([o(0, 'BUY', 4000), o(1, 'SELL', 7000)]), undefined);
  assert.equal(bookMidpoint([]), undefined);
});
