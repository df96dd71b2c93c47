/** keccak-256 through the reused native sponge equals viem's (pure-JS) keccak256 on every block boundary. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { keccak256 as viemKeccak } from 'viem';
import { keccak256, keccakNative } from '../../../src/edge/auth/keccak.ts';

const hex = (b: Uint8Array) => '0x' + Buffer.from(b).toString('hex');

test('the native sponge loads (a silent JS fallback would cost the signature workers ~4x)', () => {
  assert.equal(keccakNative, true);
});

test('known vector and agreement with viem across the 136-byte rate, state reused between calls', () => {
  assert.equal(hex(keccak256(new Uint8Array(0))), '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
  for (const n of [1, 31, 32, 135, 136, 137, 271, 272, 273, 416, 1000]) {
    const data = randomBytes(n);
    assert.equal(hex(keccak256(data)), viemKeccak(data), `length ${n}`);
    const view = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    assert.equal(hex(keccak256(view)), viemKeccak(data), `length ${n}, Uint8Array view`);
  }
});
