/**
 * The diagnosis budget (src/edge/refusals/budget.ts): work in bytes hashed, per client network, per wallet
 * and in all; a flood from one network spends its own share only; reservations given back; bounded tables.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DiagnosisBudget, DIAGNOSIS_RATES, RECOVERY_COST } from '../../../src/edge/refusals/budget.ts';

const rate = (perSecond: number, burst: number) => ({ perSecond, burst });

test('a flood from one network spends its own share: another network, and a wallet it did not name, are still diagnosed', () => {
  let t = 0;
  const b = new DiagnosisBudget(DIAGNOSIS_RATES, () => t);
  const cost = 4 * RECOVERY_COST;
  let taken = 0;
  // Random wallets from addresses of one /24: what an L1 flood with random signatures names.
  for (let i = 0; i < 1000; i++) if (b.take({ ip: `198.51.100.${i % 250}`, wallet: `0x${i.toString(16).padStart(40, '0')}` }, cost)) taken++;
  assert.equal(taken, DIAGNOSIS_RATES.network.burst / cost, 'the network\'s burst, then nothing');
  assert.ok(b.take({ ip: '203.0.113.9', wallet: '0xa' }, cost), 'another network');
  // Time refills the flooding network at its rate.
  t += 1000;
  assert.ok(b.take({ ip: '198.51.100.1' }, cost));
});

test('a wallet named from one network keeps room for its own diagnoses from another', () => {
  const b = new DiagnosisBudget(DIAGNOSIS_RATES, () => 0);
  const cost = RECOVERY_COST;
  while (b.take({ ip: '198.51.100.7', wallet: '0xvictim' }, cost));
  // The flooding network is spent; the wallet's bucket, twice a network's, is not.
  assert.ok(b.take({ ip: '192.0.2.1', wallet: '0xvictim' }, cost));
});

test('every bucket must have the work: the whole service\'s allowance binds many networks together', () => {
  const b = new DiagnosisBudget({ network: rate(0, 100), wallet: rate(0, 1000), all: rate(0, 250) }, () => 0);
  assert.ok(b.take({ ip: '10.0.1.1' }, 100));
  assert.ok(b.take({ ip: '10.0.2.1' }, 100));
  assert.equal(b.take({ ip: '10.0.3.1' }, 100), false, 'the service has 50 left');
  assert.ok(b.take({ ip: '10.0.3.1' }, 50));
  // A refused take charges nothing anywhere.
  const c = new DiagnosisBudget({ network: rate(0, 100), wallet: rate(0, 10), all: rate(0, 1000) }, () => 0);
  assert.equal(c.take({ ip: '10.0.0.1', wallet: '0xw' }, 50), false);
  assert.ok(c.take({ ip: '10.0.0.1' }, 100), 'the network was not charged by the refusal');
});

test('what a diagnosis reserved and did not use goes back, never past the burst', () => {
  const b = new DiagnosisBudget({ network: rate(0, 100), wallet: rate(0, 100), all: rate(0, 100) }, () => 0);
  assert.ok(b.take({ ip: '10.0.0.1', wallet: '0xw' }, 100));
  assert.equal(b.take({ ip: '10.0.0.1', wallet: '0xw' }, 1), false);
  b.refund({ ip: '10.0.0.1', wallet: '0xw' }, 60);
  assert.ok(b.take({ ip: '10.0.0.1', wallet: '0xw' }, 60));
  b.refund({ ip: '10.0.0.1', wallet: '0xw' }, 1e9);
  assert.equal(b.take({ ip: '10.0.0.1', wallet: '0xw' }, 101), false, 'never past the burst');
});

test('the tables are bounded: the least recently charged party is forgotten (and gets a full bucket back)', () => {
  const b = new DiagnosisBudget({ network: rate(0, 10), wallet: rate(0, 10), all: rate(0, 1e12) }, () => 0, 100);
  for (let i = 0; i < 10_000; i++) b.take({ ip: `10.${i >> 8}.${i & 255}.1`, wallet: `0x${i}` }, 10);
  assert.deepEqual(b.parties, { networks: 100, wallets: 100 });
});
