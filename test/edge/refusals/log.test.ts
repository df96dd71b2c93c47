import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RefusalLog } from '../../../src/edge/refusals/log.ts';

const entry = (n: number, headers: string[] = ['poly_api_key']) => ({ at: n, method: 'POST', path: '/order', headers, class: 'auth_hmac' as const, reason: `r${n}` });

test('a wallet lists its own refusals, newest first, at most perWallet of them', () => {
  const log = new RefusalLog(() => true, 3);
  for (let i = 1; i <= 5; i++) log.record('0xa', entry(i));
  log.record('0xb', entry(9));
  assert.deepEqual(log.list('0xa').map((e) => e.reason), ['r5', 'r4', 'r3']);
  assert.deepEqual(log.list('0xb').map((e) => e.reason), ['r9']);
  assert.deepEqual(log.list('0xc'), []);
});

test('only wallets that could read their list are kept, and at most maxWallets of them (the least recently refused leaves)', () => {
  const log = new RefusalLog((w) => w !== '0xnokey', 10, 2);
  log.record('0xnokey', entry(1));
  assert.equal(log.wallets, 0);
  log.record('0xa', entry(1));
  log.record('0xb', entry(2));
  log.record('0xa', entry(3)); // 0xa refused again: 0xb is now the oldest
  log.record('0xc', entry(4));
  assert.equal(log.wallets, 2);
  assert.deepEqual(log.list('0xb'), []);
  assert.deepEqual(log.list('0xa').map((e) => e.reason), ['r3', 'r1']);
  assert.deepEqual(log.list('0xc').map((e) => e.reason), ['r4']);
});

test('an entry keeps at most 40 header names', () => {
  const log = new RefusalLog(() => true);
  log.record('0xa', entry(1, Array.from({ length: 100 }, (_, i) => `x-h${i}`)));
  assert.equal(log.list('0xa')[0]!.headers.length, 40);
});
