/**
 * Who keeps and who reads a wallet's refusals (src/edge/refusals/wallets.ts): a key holder's in the keyed
 * log, a wallet without a key in the small keyless one (which made-up wallets cannot flush the keyed one
 * through); a signed read lists both, an unsigned read only what was refused from the reader's own client
 * address.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RefusalLog, type RefusalEntry } from '../../../src/edge/refusals/log.ts';
import { KEYLESS_PER_WALLET, WalletRefusals } from '../../../src/edge/refusals/wallets.ts';

const KEYED = '0x' + 'aa'.repeat(20);
const NEW = '0x' + 'bb'.repeat(20);
const entry = (at: number, peer?: string, path = '/auth/api-key'): RefusalEntry => ({ at, method: 'POST', path, headers: ['poly_address'], class: 'auth_l1_signature', reason: `r${at}`, peer });

function logs() {
  const withKey = new Set([KEYED]);
  const keyed = new RefusalLog((w) => withKey.has(w), 100, 10);
  const keyless = new RefusalLog(() => true, KEYLESS_PER_WALLET, 3);
  return { withKey, keyed, keyless, refusals: new WalletRefusals((w) => withKey.has(w), keyed, keyless) };
}

test('a wallet without a key is kept apart, and read from the client address that was refused only', () => {
  const { refusals, keyed, keyless } = logs();
  refusals.record(NEW, entry(1, '10.0.0.1'));
  refusals.record(NEW, entry(2, '10.0.0.2'));
  refusals.record(NEW, entry(3, '10.0.0.1'));
  refusals.record(NEW, entry(4));
  assert.equal(keyed.wallets, 0, 'the keyed log holds key holders only');
  assert.equal(keyless.wallets, 1);
  assert.deepEqual(refusals.fromPeer(NEW, '10.0.0.1').map((e) => e.reason), ['r3', 'r1'], 'its own refusals, newest first');
  assert.deepEqual(refusals.fromPeer(NEW, '10.0.0.2').map((e) => e.reason), ['r2']);
  assert.deepEqual(refusals.fromPeer(NEW, '10.0.0.9'), [], 'another address reads nothing');
  assert.deepEqual(refusals.list(NEW).map((e) => e.reason), ['r4', 'r3', 'r2', 'r1'], 'a signed read lists all of them');
});

test('once the wallet holds a key, its refusals go to the keyed log; both are read together', () => {
  const { refusals, withKey, keyed } = logs();
  refusals.record(KEYED, entry(5, '10.0.0.1', '/order'));
  refusals.record(NEW, entry(1, '10.0.0.1'));
  withKey.add(NEW);
  refusals.record(NEW, entry(7, '10.0.0.1', '/order'));
  refusals.record(NEW, entry(6, '10.0.0.2', '/order'));
  assert.equal(keyed.wallets, 2);
  assert.deepEqual(refusals.list(NEW).map((e) => e.reason), ['r7', 'r6', 'r1']);
  assert.deepEqual(refusals.fromPeer(NEW, '10.0.0.1').map((e) => e.reason), ['r7', 'r1']);
  assert.deepEqual(refusals.fromPeer(KEYED, '10.0.0.2'), []);
});

test('made-up wallets flush only the keyless log, never a key holder\'s refusals', () => {
  const { refusals } = logs();
  refusals.record(KEYED, entry(1, '10.0.0.1', '/order'));
  for (let i = 0; i < 50; i++) refusals.record('0x' + i.toString(16).padStart(40, '0'), entry(10 + i, '6.6.6.6'));
  assert.deepEqual(refusals.list(KEYED).map((e) => e.reason), ['r1']);
  assert.equal(refusals.list('0x' + (0).toString(16).padStart(40, '0')).length, 0, 'the least recently refused made-up wallet left');
});
