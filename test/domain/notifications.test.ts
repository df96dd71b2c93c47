/**
 * The notification ids an API key's caller sees (src/domain/notifications.ts): its own wallet's are slots,
 * its proxy wallet's and Safe's carry the signature type, so a drop by id alone finds the wallet.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyNotificationId, parseKeyNotificationId, parseNotificationId } from '../../src/domain/notifications.ts';

test('slots of the key\'s own wallet are plain; its proxy wallet\'s and Safe\'s carry the type', () => {
  assert.equal(keyNotificationId(0, '12'), '12');
  assert.equal(keyNotificationId(1, '12'), '1-12');
  assert.equal(keyNotificationId(2, '0'), '2-0');
  for (const [id, want] of [
    ['12', { type: 0, slot: 12 }],
    ['0', { type: 0, slot: 0 }],
    ['1-12', { type: 1, slot: 12 }],
    ['2-0', { type: 2, slot: 0 }],
  ] as const) assert.deepEqual(parseKeyNotificationId(id), want, id);
  for (const id of ['3-1', '0-1', '2-', '-1', '2-01', '2--1', 'x', '', '1-2-3', '2-99999999999999999']) assert.equal(parseKeyNotificationId(id), undefined, id);
  assert.equal(parseNotificationId('1-12'), undefined, 'a typed id is no plain slot');
});
