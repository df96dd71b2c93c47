/**
 * One position of a wallet view (queries/wallets/live-row.ts): the exact integer helpers against BigInt,
 * the position numbers of docs/decisions/wallet-data.md ("Position numbers") for an open and a closed row, and the
 * row's JSON text against the Position and ClosedPosition schemas, field for field in schema order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { ClosedPosition, Position } from '../../../src/edge/schemas/wallets.ts';
import type { EventRec, MarketRec } from '../../../src/projections/catalog/catalog-index.ts';
import type { MarketFacts, PositionState } from '../../../src/projections/wallets.ts';
import { LiveRow, mulMicro, percent4 } from '../../../src/queries/wallets/live-row.ts';
import { marketMetaOf } from '../../../src/queries/wallets/market-meta.ts';

const U = 1_000_000;

// ---- exact helpers ----------------------------------------------------------------------------------

test('mulMicro is round-half-up of a x b / 10^6 and percent4 truncates, exactly, past 2^53 too', () => {
  let x = 12345;
  const rnd = (max: number) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return Math.floor((x / 2147483648) * max);
  };
  for (let i = 0; i < 20_000; i++) {
    const a = i % 3 === 0 ? rnd(2 ** 31) * 4096 + rnd(4096) : rnd(10 ** 9);
    const b = rnd(U + 1);
    const want = (BigInt(a) * BigInt(b) + 500_000n) / 1_000_000n;
    assert.equal(BigInt(mulMicro(a, b)), want, `mulMicro(${a}, ${b})`);
    const num = rnd(2 ** 30) * (i % 2 === 0 ? 1 : -1) * (i % 5 === 0 ? 1_000_000 : 1);
    const den = rnd(2 ** 30) + 1;
    assert.equal(BigInt(percent4(num, den)), (BigInt(num) * 1_000_000n) / BigInt(den), `percent4(${num}, ${den})`);
  }
  // 0.5 exactly rounds up: 1.5 units x 1 micro = 1.5 -> 2; 2.5 -> 3.
  assert.equal(mulMicro(1_500_000, 1), 2);
  assert.equal(mulMicro(2_500_000, 1), 3);
  // -9.45 / 9.5 x 100 = -99.47368... -> -99.4736 (truncated toward zero, the platform's verification row).
  assert.equal(percent4(-9_450_000, 9_500_000), -994_736);
});

// ---- a row ------------------------------------------------------------------------------------------

const C = '0x' + 'ab'.repeat(32);
const WALLET = '0x' + '9'.repeat(40);
const market = {
  question: 'Will "it" rain?',
  slug: 'rain',
  icon: '',
  endDate: '2026-12-31T00:00:00.000Z',
  outcomes: ['Up', 'Down'],
  outcomePrices: ['0.6', '0.4'],
  negRisk: false,
} as unknown as MarketRec;
const event = { slug: 'weather', icon: 'https://x/icon.png', endDate: '' } as unknown as EventRec;
const meta = marketMetaOf(C, market, event, Infinity, 0);
const facts: MarketFacts = { seq: 1, tokenIds: ['11', '12'], negRisk: true, winner: -1 };

function state(p: Partial<PositionState>): PositionState {
  return { seq: 1, size: 0, avg: 0, bought: 0, realized: 0, first: 1_000, last: 2_000, closedAt: 0, closePrice: 0, ...p };
}

test('an open row: the documented example, buys of 10 at 0.70 and 4 at 0.5 priced at 0.6', () => {
  // avg = floor(9 / 14) = 0.642857 per token.
  const r = new LiveRow(C, 0, state({ size: 14 * U, avg: 642_857, bought: 14 * U, last: 1_767_225_600_999 }), meta, facts, '11', false, true);
  r.cur = 600_000;
  r.compute();
  assert.equal(r.iv, 8_999_998, 'initialValue = round(14 x 0.642857) = 8.999998');
  assert.equal(r.cv, 8_400_000);
  assert.equal(r.cash, -599_998);
  assert.equal(r.pct, -66_666, 'trunc(-0.599998 / 8.999998 x 100, 4 decimals) = -6.6666');
  assert.equal(r.pctReal, -66_666, 'B = initialValue while nothing was sold');
  assert.equal(r.timestamp, 1_767_225_600, 'the seconds of the last activity');
  const row = JSON.parse(r.text(WALLET, true)) as Position;
  assert.ok(Value.Check(Position, row), JSON.stringify([...Value.Errors(Position, row)].slice(0, 3)));
  assert.deepEqual(Object.keys(row), Object.keys(Position.properties), 'fields in schema order');
  assert.deepEqual(row, {
    proxyWallet: WALLET,
    asset: `${C}:0`,
    conditionId: C,
    size: 14,
    avgPrice: 0.642857,
    initialValue: 8.999998,
    currentValue: 8.4,
    cashPnl: -0.599998,
    percentPnl: -6.6666,
    totalBought: 14,
    realizedPnl: 0,
    percentRealizedPnl: -6.6666,
    curPrice: 0.6,
    redeemable: false,
    mergeable: true,
    title: 'Will "it" rain?',
    slug: 'rain',
    icon: 'https://x/icon.png',
    eventSlug: 'weather',
    outcome: 'Up',
    outcomeIndex: 0,
    oppositeOutcome: 'Down',
    oppositeAsset: `${C}:1`,
    endDate: '2026-12-31T00:00:00.000Z',
    timestamp: 1_767_225_600,
    negativeRisk: true,
  });
});

test('a closed row: size 0 at its frozen close price, -100 % realized, no negativeRisk', () => {
  const r = new LiveRow(C, 1, state({ size: 0, avg: 400_000, bought: 5 * U, realized: 1_000_000, closedAt: 1_767_225_700_500, closePrice: 600_000 }), meta, facts, undefined, false, false);
  assert.equal(r.cur, 600_000, 'a closed row keeps the price of the event that closed it');
  r.compute();
  assert.deepEqual([r.iv, r.cv, r.cash, r.pct, r.pctReal], [0, 0, 0, 0, -1_000_000]);
  assert.equal(r.timestamp, 1_767_225_700, 'the seconds of the close');
  const row = JSON.parse(r.text(WALLET, false)) as ClosedPosition;
  assert.ok(Value.Check(ClosedPosition, row));
  assert.deepEqual(Object.keys(row), Object.keys(ClosedPosition.properties), 'fields in schema order, no negativeRisk');
  assert.deepEqual([row.outcome, row.oppositeOutcome, row.realizedPnl, row.percentRealizedPnl, row.curPrice], ['Down', 'Up', 1, -100, 0.6]);
});

test('the text is kept until the numbers are computed again', () => {
  const r = new LiveRow(C, 0, state({ size: 2 * U, avg: 500_000, bought: 2 * U }), meta, facts, '11', false, false);
  r.compute();
  const first = r.text(WALLET, true);
  assert.equal(r.text(WALLET, true), first);
  r.cur = 750_000;
  r.compute();
  const second = JSON.parse(r.text(WALLET, true)) as Position;
  assert.deepEqual([second.curPrice, second.currentValue, second.cashPnl, second.percentPnl], [0.75, 1.5, 0.5, 50]);
});
