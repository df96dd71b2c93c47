import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeCursor, encodeCursor, END_CURSOR, FIRST_CURSOR, nextCursor } from '../../src/domain/cursor.ts';
import { formatAsset, parseAddress, parseAsset, parseConditionId, parseTokenId } from '../../src/domain/ids.ts';

const cid = '0x' + 'Ab'.repeat(32);

test('addresses and condition ids are case-insensitive in, lowercase out', () => {
  assert.equal(parseAddress('0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266'), '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266');
  assert.equal(parseAddress('0x123'), undefined);
  assert.equal(parseConditionId(cid), cid.toLowerCase());
  assert.equal(parseConditionId(cid + '0'), undefined);
});

test('token ids are canonical uint256 decimals', () => {
  assert.equal(parseTokenId('0'), '0');
  assert.equal(parseTokenId('123'), '123');
  assert.equal(parseTokenId('0123'), undefined);
  assert.equal(parseTokenId('-1'), undefined);
  assert.equal(parseTokenId(((1n << 256n) - 1n).toString()), ((1n << 256n) - 1n).toString());
  assert.equal(parseTokenId((1n << 256n).toString()), undefined);
});

test('asset form round-trips', () => {
  const a = formatAsset(cid.toLowerCase(), 1);
  assert.deepEqual(parseAsset(a), { conditionId: cid.toLowerCase(), outcome: 1 });
  assert.equal(parseAsset(cid + ':2'), undefined);
  assert.equal(parseAsset('nope'), undefined);
});

test('cursor: MA== is the first page, LTE= the end, malformed is undefined', () => {
  assert.equal(FIRST_CURSOR, encodeCursor(0));
  assert.equal(decodeCursor(FIRST_CURSOR), 0);
  assert.equal(decodeCursor(undefined), 0);
  assert.equal(decodeCursor(END_CURSOR), 'end');
  assert.equal(decodeCursor(encodeCursor(500)), 500);
  for (const bad of ['!!', 'MA=', Buffer.from('-5').toString('base64'), Buffer.from('1.5').toString('base64'), Buffer.from('abc').toString('base64')]) {
    assert.equal(decodeCursor(bad), undefined, bad);
  }
  assert.equal(nextCursor(0, 10, 25), encodeCursor(10));
  assert.equal(nextCursor(20, 5, 25), END_CURSOR);
});
