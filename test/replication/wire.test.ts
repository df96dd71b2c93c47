/**
 * The batch wire format (src/replication/wire.ts): a batch survives the round trip byte for byte (order
 * records and fill blocks stay bytes, objects stay objects), a record not authenticated by the nodes' key for
 * its subject is refused as such (a forgery, another stream's record, an older build's), and every malformed
 * frame or shape is refused with a WireError naming what is wrong.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createHash } from 'node:crypto';
import { Packr } from 'msgpackr';
import type { ReplicatedBatch } from '../../src/journal/replication-log.ts';
import { ClusterKeys } from '../../src/replication/seal.ts';
import { decodeBatch as decodeWith, encodeBatch as encodeWith, messageIdOf, WIRE_VERSION, WireAuthError, WireError } from '../../src/replication/wire.ts';
import { CLUSTER_KEYS } from '../fixtures/cluster.ts';

const SUBJECT = 'pm_journal.batches';
const encodeBatch = (b: ReplicatedBatch) => encodeWith(b, CLUSTER_KEYS, SUBJECT);
const decodeBatch = (bytes: Uint8Array) => decodeWith(bytes, CLUSTER_KEYS, SUBJECT);

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

/** Any body, authenticated as the sequencer would (so only its shape is judged). */
const framed = (v: unknown) => {
  const body = new Packr({ useRecords: false }).pack(v);
  return Buffer.concat([CLUSTER_KEYS.mac('records', [SUBJECT], body), body]);
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
  // A fresh store's trade-id key (the mixed form, journal/codecs/fill-codec.ts) travels as an older store's does.
  assert.equal(decodeBatch(encodeBatch({ ...batch, p: `2:${'cd'.repeat(24)}` })).p, `2:${'cd'.repeat(24)}`);
  assert.equal(WIRE_VERSION, 3);
  // A term travels.
  assert.equal(decodeBatch(encodeBatch({ ...batch, T: 4 })).T, 4);
  assert.equal(messageIdOf({ r: 9 }), 'r9');
  assert.equal(messageIdOf({ r: 9, T: 4 }), 'T4.r9');
  // An aux record: writes only, no journal range.
  const aux: ReplicatedBatch = { r: 8, t: 1, a: [['c', ['event', '12'], { id: '12' }], ['i', ['x', 1]], ['m', ['tok', 60], 5000]] };
  assert.deepEqual(decodeBatch(encodeBatch(aux)), aux);
});

test("a record is believed only with the nodes' authenticator for its subject", () => {
  const wire = encodeBatch(batch);
  const refused = (bytes: Uint8Array, keys: ClusterKeys, subject: string) =>
    assert.throws(() => decodeWith(bytes, keys, subject), (e: unknown) => e instanceof WireAuthError && /not authenticated by the nodes' key/.test((e as Error).message));
  // Another master key (someone without the nodes' key), another subject (a record copied to another stream).
  refused(wire, ClusterKeys.fromMaster(Buffer.alloc(32, 7)), SUBJECT);
  refused(wire, CLUSTER_KEYS, 'other_journal.batches');
  // One flipped bit anywhere: in a value, in the rseq or term the body names, in the authenticator.
  for (const at of [0, 31, 32, 40, wire.length - 1]) {
    const flipped = Buffer.from(wire);
    flipped[at] ^= 1;
    refused(flipped, CLUSTER_KEYS, SUBJECT);
  }
  // A record of an older build (an unkeyed SHA-256 digest anyone can compute) is a forgery like any other.
  const body = new Packr({ useRecords: false }).pack({ v: 2, ...batch });
  refused(Buffer.concat([createHash('sha256').update(body).digest().subarray(0, 8), body]), CLUSTER_KEYS, SUBJECT);
  // One HMAC per record: the same record encodes to the same bytes (the outbox keeps them; a republish matches).
  assert.deepEqual(encodeBatch(batch), wire);
});

test('malformed frames and shapes are refused with the reason', () => {
  const base = { v: 3, r: 7, t: 1, j: [40, 41], e: [[40, { type: 'deposit' }]], f: [], p: 'ab'.repeat(24) };
  const cases: Array<[Uint8Array, RegExp]> = [
    [Uint8Array.from([1, 2, 3]), /too short/],
    [framed([1, 2]), /not a batch object/],
    [framed({ ...base, v: 4 }), /unknown batch version 4 \(this build reads 3\)/],
    [framed({ ...base, v: 2 }), /unknown batch version 2/],
    [framed({ ...base, r: 0 }), /bad replication sequence/],
    [framed({ ...base, t: 'x' }), /bad time/],
    [framed({ ...base, j: [41, 39] }), /bad journal range/],
    [framed({ ...base, e: undefined }), /without e or f/],
    [framed({ ...base, e: [[39, {}]] }), /bad journal entry/],
    [framed({ ...base, f: [[40, 'not bytes']] }), /bad fill block/],
    [framed({ ...base, p: 'zz' }), /bad trade-id prefix/],
    [framed({ ...base, p: `3:${'ab'.repeat(24)}` }), /bad trade-id prefix/],
    [framed({ v: 3, r: 2, t: 1, e: [] }), /without a journal range/],
    [framed({ ...base, rows: { b: 5 } }), /bad rows\.b/],
    [framed({ ...base, rows: { n: 1.5 } }), /bad rows\.n/],
    [framed({ v: 3, r: 2, t: 1, a: [['z', 'k', 1]] }), /bad aux write/],
    [framed({ v: 3, r: 2, t: 1, T: 0 }), /bad term T/],
  ];
  for (const [bytes, why] of cases) {
    assert.throws(() => decodeBatch(bytes), (e: unknown) => e instanceof WireError && why.test(e.message), String(why));
  }
});
