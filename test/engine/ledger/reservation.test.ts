/**
 * R1 and its release: an order reserves exactly what it can spend (USDC with the fee bound for a BUY,
 * tokens for a SELL), never less, and gives back only what it can no longer spend.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buyNeed } from '../../../src/engine/ledger/fees.ts';
import { LedgerError } from '../../../src/engine/ledger/ledger.ts';
import { needOf, release, releaseAll, reserve, settleReservation } from '../../../src/engine/ledger/reservation.ts';
import { CONDITION, T, order, parts, record } from '../engine-parts.ts';

const A = '0x' + 'a'.repeat(40);

test('a resting BUY reserves price x size plus the fee bound; a FAK BUY its budget plus fees; a SELL its tokens', () => {
  const p = parts();
  const gtc = order(p, record({ wallet: A, pricePips: 4000, sizeUnits: 10 * T, makerFeeBps: 0, takerFeeBps: 100 }));
  assert.equal(needOf(gtc), buyNeed(true, 4000, 10 * T, 0, 100));
  assert.equal(needOf(gtc), 4 * T + 40_000, '4 USDC and 1% of min(p, 1 - p) x size');
  const fak = order(p, record({ wallet: A, orderType: 'FAK', pricePips: 5000, sizeUnits: 10 * T, budgetUnits: 5 * T, takerFeeBps: 0 }));
  assert.equal(needOf(fak), 5 * T, 'no fee: the budget');
  const sell = order(p, record({ wallet: A, side: 'SELL', sizeUnits: 3 * T }));
  assert.equal(needOf(sell), 3 * T);
});

test('reserve holds what the wallet has or nothing; release and releaseAll give it back', () => {
  const p = parts();
  const o = order(p, record({ wallet: A, pricePips: 4000, sizeUnits: 10 * T, takerFeeBps: 0 }));
  p.ledger.deposit(A, 3 * T);
  assert.equal(reserve(p.ledger, o, needOf(o)), false, '4 USDC needed, 3 held');
  assert.equal(o.reserved, 0);
  assert.equal(p.ledger.wallet(A).usdcReserved, 0);
  p.ledger.deposit(A, T);
  assert.equal(reserve(p.ledger, o, needOf(o)), true);
  assert.deepEqual([o.reserved, p.ledger.wallet(A).usdcReserved, p.ledger.wallet(A).usdcAvailable], [4 * T, 4 * T, 0]);
  release(p.ledger, o, T);
  assert.deepEqual([o.reserved, p.ledger.wallet(A).usdcAvailable], [3 * T, T]);
  releaseAll(p.ledger, o);
  assert.deepEqual([o.reserved, p.ledger.wallet(A).usdcReserved, p.ledger.wallet(A).usdcAvailable], [0, 0, 4 * T]);

  const sell = order(p, record({ wallet: A, side: 'SELL', sizeUnits: 2 * T }));
  assert.equal(reserve(p.ledger, sell, 2 * T), false, 'no tokens yet');
  assert.equal(p.ledger.split(A, CONDITION, 2 * T), 0);
  assert.equal(reserve(p.ledger, sell, 2 * T), true);
  assert.equal(p.ledger.wallet(A).token(sell.rec.tokenId).reserved, 2 * T);
});

test('after a fill a BUY keeps exactly what its remainder can spend; holding less is a broken invariant', () => {
  const p = parts();
  p.ledger.deposit(A, 10 * T);
  const o = order(p, record({ wallet: A, pricePips: 4000, sizeUnits: 10 * T, takerFeeBps: 0 }));
  assert.ok(reserve(p.ledger, o, needOf(o)));
  // 6 tokens filled at a better price (0.35 instead of 0.40): 2.1 USDC paid from the 4 reserved.
  p.ledger.settleBuy(o.wb, o.rec.tokenId, 6 * T, 2_100_000, 0);
  o.reserved -= 2_100_000;
  o.remaining = 4 * T;
  settleReservation(p.ledger, o);
  assert.equal(o.reserved, 1_600_000, '4 tokens at 0.40 still reserved; the improvement is released');
  assert.equal(p.ledger.wallet(A).usdcAvailable, 10 * T - 4 * T + 300_000);
  o.reserved -= 1;
  assert.throws(() => settleReservation(p.ledger, o), LedgerError);
});
