/**
 * The batch wire format (src/replication/wire.ts): a batch survives the round trip byte for byte (order
 * records and fill blocks stay bytes, objects stay objects), and every malformed frame or shape is refused
 * with a WireError naming what is wrong.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { Packr } from 'msgpackr';
import type { ReplicatedBatch } from '../../src/journal/replication-log.ts';
import { decodeBatch, encodeBatch, messageIdOf, WIRE_VERSION, WireError } from '../../src/replication/wire.ts';

const batch: ReplicatedBatch = {
  r: 7,
  t: 1_700_000_000_123,
  j: [40, 43],
  e: [
    [40, Uint8Array.from([0x4f, 1, 2, 3, 250])],
    [41, { type: 'deposit', seq: 41, ts: 1_700_000_000_000, wallet: '0xab', amount: 5_000_000 }],
  ],
  f: [[42, Uint8Array.from({ length: 64 }, (_, i) => i)]],
  p: 'ab'.repeat(24),
  rows: { o: [[40, [0, 0, 1_700_000_000_000, [], [0, 1, 2, 0]]]], b: [['0xab', 'USDC', 5_000_000]], n: 5_000_000 },
};

const framed = (v: unknown) => {
  const body = new Packr({ useRecords: false }).pack(v);
  return Buffer.concat([createHash('sha256').update(body).digest().subarray(0, 8), body]);
};

test('a batch round-trips: bytes stay bytes, objects stay objects, the version is checked and dropped', () => {
  const wire = encodeBatch(batch);
  const back = decodeBatch(wire);
  assert.deepEqual({ ...back, e: back.e!.map(([s, v]) => [s, v instanceof Uint8Array ? [...v] : v]), f: back.f!.map(([s, v]) => [s, [...v]]) }, {
    ...batch,
    e: batch.e!.map(([s, v]) => [s, v instanceof Uint8Array ? [...v] : v]),
    f: batch.f!.map(([s, v]) => [s, [...v]]),
  });
  assert.ok(back.e![0][1] instanceof Uint8Array && back.f![0][1] instanceof Uint8Array);
  // A fresh store's trade-id key (the mixed form, journal/fill-codec.ts) travels as an older store's does.
  assert.equal(decodeBatch(encodeBatch({ ...batch, p: `2:${'cd'.repeat(24)}` })).p, `2:${'cd'.repeat(24)}`);
  assert.equal(WIRE_VERSION, 2);
  // A term travels; a version 1 frame (before terms) still reads.
  assert.equal(decodeBatch(encodeBatch({ ...batch, T: 4 })).T, 4);
  assert.deepEqual(decodeBatch(framed({ v: 1, r: 9, t: 1 })), { r: 9, t: 1 });
  assert.equal(messageIdOf({ r: 9 }), 'r9');
  assert.equal(messageIdOf({ r: 9, T: 4 }), 'T4.r9');
  // An aux record: writes only, no journal range.
  const aux: ReplicatedBatch = { r: 8, t: 1, a: [['c', ['event', '12'], { id: '12' }], ['i', ['x', 1]], ['m', ['tok', 60], 5000]] };
  assert.deepEqual(decodeBatch(encodeBatch(aux)), aux);
});

test('malformed frames and shapes are refused with the reason', () => {
  const base = { v: 1, r: 7, t: 1, j: [40, 41], e: [[40, { type: 'deposit' }]], f: [], p: 'ab'.repeat(24) };
  const cases: Array<[Uint8Array, RegExp]> = [
    [Uint8Array.from([1, 2, 3]), /too short/],
    [Buffer.concat([Buffer.alloc(8), new Packr().pack(base)]), /digest mismatch/],
    [framed([1, 2]), /not a batch object/],
    [framed({ ...base, v: 3 }), /unknown batch version 3 \(this build reads 1 and 2\)/],
    [framed({ ...base, r: 0 }), /bad replication sequence/],
    [framed({ ...base, t: 'x' }), /bad time/],
    [framed({ ...base, j: [41, 39] }), /bad journal range/],
    [framed({ ...base, e: undefined }), /without e or f/],
    [framed({ ...base, e: [[39, {}]] }), /bad journal entry/],
    [framed({ ...base, f: [[40, 'not bytes']] }), /bad fill block/],
    [framed({ ...base, p: 'zz' }), /bad trade-id prefix/],
    [framed({ ...base, p: `3:${'ab'.repeat(24)}` }), /bad trade-id prefix/],
    [framed({ v: 1, r: 2, t: 1, e: [] }), /without a journal range/],
    [framed({ ...base, rows: { b: 5 } }), /bad rows\.b/],
    [framed({ ...base, rows: { n: 1.5 } }), /bad rows\.n/],
    [framed({ v: 1, r: 2, t: 1, a: [['z', 'k', 1]] }), /bad aux write/],
    [framed({ v: 2, r: 2, t: 1, T: 0 }), /bad term T/],
    [framed({ v: 1, r: 2, t: 1, T: 3 }), /bad term T/],
  ];
  for (const [bytes, why] of cases) {
    assert.throws(() => decodeBatch(bytes), (e: unknown) => e instanceof WireError && why.test(e.message), String(why));
  }
});
