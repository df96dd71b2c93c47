/**
 * The in-memory order-id index (journal/order-index.ts): every id added is found at its seq through growth,
 * an id never added is not, a lookup offers each matching candidate until the caller confirms one, and the
 * stored runs (journal/orders.ts) load as their entries would one by one.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { OrderIndex } from '../../src/journal/order-index.ts';
import { idRunOf } from '../../src/journal/orders.ts';

const orderId = () => '0x' + randomBytes(32).toString('hex');
const yes = () => true;

test('every id added is found at its seq after the table has grown many times; ids never added are not', () => {
  const ix = new OrderIndex(16);
  const ids = Array.from({ length: 50_000 }, orderId);
  ids.forEach((id, i) => ix.add(id, i + 1));
  assert.equal(ix.size, ids.length);
  ids.forEach((id, i) => assert.equal(ix.find(id, yes), i + 1, id));
  for (let k = 0; k < 5_000; k++) assert.equal(ix.find(orderId(), yes), undefined);
  // Ids that differ only in their last hex digit (sequential test fixtures) spread and resolve too.
  const near = Array.from({ length: 4096 }, (_, n) => '0x' + n.toString(16).padStart(64, '0'));
  near.forEach((id, i) => ix.add(id, 100_000 + i));
  near.forEach((id, i) => assert.equal(ix.find(id, yes), 100_000 + i));
  assert.equal(ix.find('not an order id', yes), undefined);
});

test('adding the same id at the same seq again is one entry; candidates are offered until one is confirmed', () => {
  const ix = new OrderIndex();
  const id = orderId();
  ix.add(id, 7);
  ix.add(id, 7);
  assert.equal(ix.size, 1);
  // Two seqs under one id stand for two ids whose hashes collide: the caller's check decides.
  ix.add(id, 9);
  const offered: number[] = [];
  assert.equal(ix.find(id, (seq) => (offered.push(seq), seq === 9)), 9);
  assert.deepEqual(offered, [7, 9]);
  assert.equal(ix.find(id, () => false), undefined, 'no confirmed candidate: not found');
});

test('seqs outside 1 .. 2^32 - 1 are refused (0 marks an empty slot)', () => {
  const ix = new OrderIndex();
  for (const seq of [0, -1, 1.5, 2 ** 32, NaN]) assert.throws(() => ix.add(orderId(), seq), RangeError);
  assert.equal(ix.size, 0);
});

test('stored runs load as their entries would one by one, aligned or not, seqs past 2^31 included', () => {
  const ids = Array.from({ length: 3000 }, orderId);
  const seqOf = (i: number) => (i % 7 === 0 ? 2 ** 31 + i : i + 1);
  const runs: Uint8Array[] = [];
  for (let at = 0; at < ids.length; at += 500) runs.push(idRunOf(ids.slice(at, at + 500).map((id, k) => ({ orderId: id, seq: seqOf(at + k) }))));
  // A run at an odd offset of its buffer (a store may hand one out so): read through a copy.
  const odd = Buffer.alloc(runs[1]!.byteLength + 1);
  odd.set(runs[1]!, 1);
  runs[1] = odd.subarray(1);
  const ix = new OrderIndex(ids.length);
  for (const run of runs) ix.addRun(run);
  ix.addRun(runs[0]!);
  assert.equal(ix.size, ids.length, 'a run loaded twice adds nothing');
  ids.forEach((id, i) => assert.equal(ix.find(id, yes), seqOf(i), id));
  assert.equal(ix.find(orderId(), yes), undefined);
});
