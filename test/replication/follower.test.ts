/**
 * The replica's follower without NATS: records read out of a sequencer-side store (a journal writer with
 * a replication log) are fed to `receive` as the stream would deliver them. Valid records are applied in
 * order and duplicates skipped; a forged record (its authenticator fails, or it came on another subject) is
 * skipped and counted without stopping the follower; a record of an unknown version or shape, one of an older
 * term than one applied, one out of order or one whose journal range does not follow is refused loudly and
 * nothing of it (or after it) is applied. A standby keeps the records in its own log: its store opens as a sequencer's.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Packr } from 'msgpackr';
import { depositEvent } from '../../src/domain/events.ts';
import { openStore, type Store } from '../../src/journal/env.ts';
import { metaKeys, USDC_ASSET } from '../../src/journal/keys.ts';
import { readJournal } from '../../src/journal/recovery.ts';
import { ReplicationLog, readReplicatedBatch, type ReplicatedBatch } from '../../src/journal/replication-log.ts';
import { JournalWriter } from '../../src/journal/writer.ts';
import { Follower, type AppliedBatch } from '../../src/replication/follower.ts';
import type { NatsLink } from '../../src/replication/nats-link.ts';
import { ClusterKeys } from '../../src/replication/seal.ts';
import { decodeBatch as decodeWith, encodeBatch as encodeWith } from '../../src/replication/wire.ts';
import { CLUSTER_KEYS } from '../fixtures/cluster.ts';

/** The test stream `T`'s subject and settings. */
const SUBJECT = 't.batches';
const SETTINGS = { natsUrl: 'nats://127.0.0.1:1', stream: 'T', replicas: 1, keys: CLUSTER_KEYS };
const encodeBatch = (b: ReplicatedBatch) => encodeWith(b, CLUSTER_KEYS, SUBJECT);
const decodeBatch = (bytes: Uint8Array) => decodeWith(bytes, CLUSTER_KEYS, SUBJECT);
import type { Logger } from '../../src/runtime/log.ts';

const W = '0x00000000000000000000000000000000000000a1';

/** A sequencer store with `n` journal batches of one deposit each; returns the encoded records. */
async function sequencerRecords(n: number): Promise<Uint8Array[]> {
  const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-follow-seq-')) });
  const log = ReplicationLog.open(store);
  const writer = new JournalWriter(store, 0, () => 1_700_000_000_000, log);
  let held = 0;
  for (let i = 1; i <= n; i++) {
    writer.append(depositEvent('deposit', W, i * 1_000_000));
    held += i * 1_000_000;
    writer.putBalance(W, USDC_ASSET, held);
    writer.putNetDeposits(held);
    await writer.flush()!.committed;
  }
  await new Promise((r) => setImmediate(r));
  assert.equal(log.committedRseq, n);
  const out = Array.from({ length: n }, (_, i) => encodeBatch(readReplicatedBatch(store, i + 1)!));
  await store.close();
  return out;
}

function replica(): { store: Store; follower: Follower; applied: AppliedBatch[]; errors: string[] } {
  const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-follow-rep-')) });
  const applied: AppliedBatch[] = [];
  const errors: string[] = [];
  const logger = { error: (_o: unknown, msg: string) => errors.push(msg), warn: () => undefined, info: () => undefined } as unknown as Logger;
  const follower = new Follower({ store, logger, settings: SETTINGS, onApplied: (a) => applied.push(...a) });
  return { store, follower, applied, errors };
}

const balance = (store: Store) => store.balances.get([W, USDC_ASSET]);

test('records are applied in order, each exactly once: duplicates are skipped', async () => {
  const recs = await sequencerRecords(4);
  const r = replica();
  for (const b of [recs[0], recs[1], recs[0], recs[1], recs[2], recs[3], recs[3]]) r.follower.receive(b);
  await r.follower.whenIdle();
  assert.deepEqual(r.errors, []);
  assert.equal(r.follower.appliedRseq, 4);
  assert.equal(r.follower.appliedSeq, 4);
  assert.deepEqual(r.applied.map((a) => a.batch.r), [1, 2, 3, 4]);
  assert.deepEqual(r.applied.map((a) => a.events.map((e) => e.seq)), [[1], [2], [3], [4]]);
  assert.equal(balance(r.store), 10_000_000);
  assert.equal(r.store.meta.get(metaKeys.journalSeq), 4);
  assert.deepEqual([...readJournal(r.store)].map((e) => e.type), ['deposit', 'deposit', 'deposit', 'deposit']);
  await r.store.close();
});

/** A body framed as the wire frames it (authenticated by the nodes' key), whatever it holds. */
const framed = (body: Uint8Array) => Buffer.concat([CLUSTER_KEYS.mac('records', [SUBJECT], body), body]);
const flipped = (b: Uint8Array) => {
  const c = Uint8Array.from(b);
  c[c.length >> 1] ^= 0x10;
  return c;
};

test("forged records (a truncated or flipped one, another key's, an older build's digest, another subject's) are skipped and counted; the follower goes on", async () => {
  const recs = await sequencerRecords(3);
  const r = replica();
  const body = new Packr({ useRecords: false }).pack({ v: 2, ...decodeBatch(recs[1]) });
  const forgeries = [
    Uint8Array.from(recs[1].subarray(0, recs[1].length - 7)),
    flipped(recs[1]),
    encodeWith({ ...decodeBatch(recs[1]), a: [['k', 'forged', { apiKey: 'forged' }]] }, ClusterKeys.fromMaster(Buffer.alloc(32, 9)), SUBJECT),
    Buffer.concat([createHash('sha256').update(body).digest().subarray(0, 8), body]),
  ];
  r.follower.receive(recs[0]);
  for (const f of forgeries) r.follower.receive(f);
  // An authentic record on a subject the stream was given by someone else (STREAM.UPDATE): not the stream's.
  r.follower.receive(recs[1], 0, 't.injected');
  r.follower.receive(recs[1]);
  r.follower.receive(recs[2]);
  await r.follower.whenIdle();
  assert.equal(r.follower.refusal, undefined, 'a forgery does not stop the follower');
  assert.equal(r.follower.appliedRseq, 3, 'the authentic records after the forgeries are applied');
  assert.equal(r.follower.stats().forged, 5);
  assert.equal(balance(r.store), 6_000_000);
  assert.ok(r.errors.length >= 1 && r.errors.every((e) => /skipped a forged journal record/.test(e)), r.errors.join('\n'));
  assert.ok(r.errors.length < 5, 'forgeries are logged at most every 10 s, not once each');
  await r.store.close();
});

const refusals: Array<[string, (recs: Uint8Array[]) => Uint8Array[], RegExp]> = [
  ['a record that is not a batch', (recs) => [recs[0], framed(new Packr().pack([1, 2, 3])), recs[2]], /corrupt batch \(not a batch object\)/],
  ['a record of an unknown version', (recs) => [recs[0], encodeBatch({ ...decodeBatch(recs[1]), v: 4 } as ReplicatedBatch), recs[2]], /unknown batch version 4/],
  [
    "a record of a term older than one applied (a deposed sequencer's)",
    (recs) => [encodeBatch({ ...decodeBatch(recs[0]), T: 2 }), encodeBatch({ ...decodeBatch(recs[1]), T: 1 }), encodeBatch({ ...decodeBatch(recs[2]), T: 2 })],
    /batch r2 is of term 1, older than term 2 already applied/,
  ],
  ['a record without a term after one with', (recs) => [encodeBatch({ ...decodeBatch(recs[0]), T: 2 }), recs[1], recs[2]], /batch r2 is of term none, older than term 2/],
  ['a record out of order', (recs) => [recs[0], recs[2], recs[1]], /batch r3 is not the next one \(expected r2\)/],
  [
    'a journal range that does not follow',
    (recs) => {
      const b = decodeBatch(recs[1]);
      return [recs[0], encodeBatch({ ...b, j: [3, 3], e: [[3, b.e![0][1]]] }), recs[2]];
    },
    /batch r2 starts at journal seq 3, not 2/,
  ],
];

for (const [what, feed, why] of refusals) {
  test(`${what} is refused loudly and never applied; nothing after it is applied`, async () => {
    const recs = await sequencerRecords(3);
    const r = replica();
    for (const b of feed(recs)) r.follower.receive(b);
    await r.follower.whenIdle();
    assert.equal(r.errors.length, 1, r.errors.join('\n'));
    assert.match(r.errors[0], why);
    assert.match(r.follower.refusal!, why);
    assert.equal(r.follower.stats().refused, 1);
    // Only the first record (before the bad one) is in the store.
    assert.equal(r.follower.appliedRseq, 1);
    assert.equal(r.store.meta.get(metaKeys.journalSeq), 1);
    assert.equal(r.store.meta.get(metaKeys.replicaAppliedRseq), 1);
    assert.equal(balance(r.store), 1_000_000);
    assert.equal([...readJournal(r.store)].length, 1);
    // Later records, even the right one, are ignored once refused.
    r.follower.receive(recs[1]);
    await r.follower.whenIdle();
    assert.equal(r.follower.appliedRseq, 1);
    await r.store.close();
  });
}

test('a consumer that stops delivering shows as lag: the stream\'s last sequence is read, not only the last message\'s pending count', async () => {
  const recs = await sequencerRecords(2);
  const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-follow-lag-')) });
  const logger = { error: () => undefined, warn: () => undefined, info: () => undefined } as unknown as Logger;
  // A link whose stream holds 7 records and whose consumer never delivers one (a stalled consumer).
  const stalled = new Promise<never>(() => undefined);
  const link = {
    nc: { status: async function* () {} },
    js: { consumers: { get: () => stalled } },
    jsm: { streams: { info: async () => ({ state: { last_seq: 7 } }) } },
    close: async () => undefined,
  } as unknown as NatsLink;
  const follower = new Follower({ store, logger, settings: SETTINGS, onApplied: () => undefined, link });
  // Two records delivered with nothing pending after them: caught up, as far as the messages tell.
  follower.receive(recs[0], 1);
  follower.receive(recs[1], 0);
  await follower.whenIdle();
  assert.deepEqual([follower.stats().lagBatches, follower.stats().lagSeconds], [0, 0]);
  follower.start();
  for (const end = Date.now() + 5000; follower.stats().lagBatches === 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
  const s = follower.stats();
  assert.equal(s.lagBatches, 5, 'records 3..7 are in the stream and not applied');
  assert.ok(s.lagSeconds > 0, 'seconds since the last applied record was issued');
  // Not awaited: its run loop waits on the stalled consumer for ever (a real link's close would end it).
  void follower.close();
  await store.close();
});

test("a standby keeps the records in its own replication log: its store opens as a sequencer's, at the stream's term", async () => {
  const recs = (await sequencerRecords(3)).map((b, i) => encodeBatch({ ...decodeBatch(b), T: i === 0 ? 1 : 2 }));
  const r = replica();
  const standby = new Follower({ store: r.store, logger: { error: () => undefined, warn: () => undefined, info: () => undefined } as unknown as Logger, settings: SETTINGS, onApplied: () => undefined, keepLog: true });
  for (const b of recs) standby.receive(b);
  await standby.whenIdle();
  assert.equal(standby.appliedRseq, 3);
  assert.equal(standby.appliedTerm, 2);
  assert.equal(r.store.meta.get(metaKeys.replicationTerm), 2);
  assert.equal(r.store.meta.get(metaKeys.replicationJournalSeq), 3);
  assert.deepEqual(readReplicatedBatch(r.store, 2), decodeBatch(recs[1]));
  const log = ReplicationLog.open(r.store);
  assert.equal(log.lastRseq, 3);
  assert.throws(() => log.beginTerm(2), /term 2 does not follow term 2/);
  assert.equal(log.beginTerm(3), 4);
  await new Promise((res) => setTimeout(res, 50));
  assert.deepEqual({ ...readReplicatedBatch(r.store, 4), t: 0 }, { r: 4, t: 0, T: 3 });
  await r.store.close();
  // A replica (no keepLog) writes none of it.
  const plain = replica();
  for (const b of recs) plain.follower.receive(b);
  await plain.follower.whenIdle();
  assert.equal(readReplicatedBatch(plain.store, 1), undefined);
  assert.throws(() => ReplicationLog.open(plain.store), /replication log covers its journal/);
  await plain.store.close();
});
