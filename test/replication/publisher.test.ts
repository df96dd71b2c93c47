/**
 * The sequencer's publisher against a real nats-server (tools/nats-server.ts): with NATS absent the
 * outbox holds records up to its bound, then reports itself full while commits go on; once NATS is up
 * every record reaches the stream exactly once and in order (the overflow re-read from LMDB), and a new
 * publisher on the same store resumes after the stream's last record. Skipped without nats-server, failing
 * under CI.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { depositEvent } from '../../src/domain/events.ts';
import { openStore, type Store } from '../../src/journal/env.ts';
import { USDC_ASSET } from '../../src/journal/keys.ts';
import { ReplicationLog } from '../../src/journal/replication-log.ts';
import { JournalWriter } from '../../src/journal/writer.ts';
import { Publisher } from '../../src/replication/publisher.ts';
import { decodeBatch as decodeWith } from '../../src/replication/wire.ts';
import { CLUSTER_KEYS } from '../fixtures/cluster.ts';
import type { Logger } from '../../src/runtime/log.ts';
import { freePort, startNatsServer } from '../../tools/nats-server.ts';
import { natsSkip, until } from '../fixtures/cluster.ts';

const W = '0x00000000000000000000000000000000000000b2';

function logger(): { log: Logger; errors: string[] } {
  const errors: string[] = [];
  const log = { error: (_o: unknown, msg: string) => errors.push(msg), warn: () => undefined, info: () => undefined } as unknown as Logger;
  return { log, errors };
}

async function commitDeposits(store: Store, writer: JournalWriter, from: number, n: number): Promise<void> {
  for (let i = from; i < from + n; i++) {
    writer.append(depositEvent('deposit', W, 1_000_000));
    writer.putBalance(W, USDC_ASSET, i * 1_000_000);
    await writer.flush()!.committed;
  }
  await new Promise((r) => setImmediate(r));
}

/** Every record of the stream, decoded, in stream order. */
async function streamRecords(url: string, stream: string): Promise<Array<{ seq: number; r: number; first: number }>> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    const last = (await jsm.streams.info(stream)).state.last_seq;
    const out: Array<{ seq: number; r: number; first: number }> = [];
    for (let seq = 1; seq <= last; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq });
      const b = decodeWith(m!.data, CLUSTER_KEYS, `${stream.toLowerCase()}.batches`);
      assert.equal(m!.header.get('Nats-Msg-Id'), `r${b.r}`);
      out.push({ seq, r: b.r, first: b.j![0] });
    }
    return out;
  } finally {
    await nc.close();
  }
}

test('with NATS absent the outbox fills to its bound and says so while commits go on; once NATS is up every record is published once, in order; a new publisher resumes after the stream', { skip: natsSkip() }, async () => {
  const port = await freePort();
  // A test's nats-server has no users: said explicitly (cluster.insecure).
  const settings = { natsUrl: `nats://127.0.0.1:${port}`, stream: 'PM_TEST', replicas: 1, keys: CLUSTER_KEYS, insecure: true };
  const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-pub-')) });
  const log = ReplicationLog.open(store);
  const writer = new JournalWriter(store, 0, () => 1_700_000_000_000, log);
  const l = logger();
  const publisher = new Publisher({ store, log, logger: l.log, settings, outboxBatches: 5 });
  publisher.start();

  // No server on the port: every commit still completes; the outbox stops at 5 and reports it.
  await commitDeposits(store, writer, 1, 12);
  assert.equal(log.committedRseq, 12);
  assert.deepEqual(
    { held: publisher.stats().outboxBatches, full: publisher.stats().outboxFull, overflow: publisher.stats().outboxOverflowBatches, confirmed: publisher.stats().confirmedRseq },
    { held: 5, full: 1, overflow: 7, confirmed: 0 },
  );
  assert.deepEqual(l.errors, ['replication outbox full: records are read back from the store once NATS takes them']);

  const nats = await startNatsServer({ port });
  try {
    await until('the stream confirmed all 12 records', () => publisher.stats().confirmedRseq === 12, 15_000);
    assert.deepEqual(
      { held: publisher.stats().outboxBatches, full: publisher.stats().outboxFull, confirmedSeq: publisher.stats().confirmedSeq },
      { held: 0, full: 0, confirmedSeq: 12 },
    );
    await commitDeposits(store, writer, 13, 3);
    await until('15 confirmed', () => publisher.stats().confirmedRseq === 15);
    await publisher.close();

    // Committed while no publisher runs (a crash after the commit), then a new one on the same store.
    await commitDeposits(store, writer, 16, 2);
    const again = new Publisher({ store, log: ReplicationLog.open(store), logger: l.log, settings, outboxBatches: 5 });
    again.start();
    await until('the new publisher caught up', () => again.stats().confirmedRseq === 17);
    await again.close();
    // One with nothing left to publish reports where the stream stands from the stream alone.
    const third = new Publisher({ store, log: ReplicationLog.open(store), logger: l.log, settings, outboxBatches: 5 });
    third.start();
    await until('the third publisher synchronised', () => third.stats().confirmedRseq === 17);
    assert.deepEqual([third.stats().confirmedSeq, third.stats().outboxBatches], [17, 0]);
    await third.close();
    const recs = await streamRecords(nats.url, settings.stream);
    assert.deepEqual(
      recs.map((x) => [x.seq, x.r, x.first]),
      Array.from({ length: 17 }, (_, i) => [i + 1, i + 1, i + 1]),
    );
  } finally {
    await publisher.close();
    await store.close();
    await nats.stop();
  }
});

test("under a lease a batch's commit resolves only once the stream confirmed its record, with the term's message id; a fenced publisher refuses what waits and publishes nothing more", { skip: natsSkip() }, async () => {
  const nats = await startNatsServer();
  const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-pub-confirm-')) });
  const l = logger();
  const log = ReplicationLog.open(store);
  const publisher = new Publisher({ store, log, logger: l.log, settings: { natsUrl: nats.url, stream: 'PM_CONFIRM', replicas: 1, keys: CLUSTER_KEYS, insecure: true }, outboxBatches: 100 });
  try {
    log.beginTerm(3);
    log.confirmation = (rseq) => publisher.whenConfirmed(rseq);
    const writer = new JournalWriter(store, 0, () => 1_700_000_000_000, log);
    publisher.start();
    await until('the publisher is up', async () => publisher.stats().confirmedRseq >= 1);
    // NATS paused: the batch commits to LMDB, but its commit promise (its acknowledgement) waits for the stream.
    nats.pause();
    writer.append(depositEvent('deposit', W, 1_000_000));
    let done = false;
    const committed = writer.flush()!.committed.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(done, false, 'not acknowledged while the stream has not confirmed it');
    nats.resume();
    await committed;
    assert.equal(publisher.stats().confirmedRseq, 2);
    const records = await (async () => {
      const nc = await connect({ servers: nats.url });
      try {
        const jsm = await jetstreamManager(nc);
        const m = await jsm.streams.getMessage('PM_CONFIRM', { seq: 2 });
        return { id: m!.header.get('Nats-Msg-Id'), T: decodeWith(m!.data, CLUSTER_KEYS, 'pm_confirm.batches').T };
      } finally {
        await nc.close();
      }
    })();
    assert.deepEqual(records, { id: 'T3.r2', T: 3 });
    // Fenced (its lease lost): what waits for a confirmation is refused (never acknowledged; a publish already
    // on the wire may still land, and a new holder applies it before its own term's first record) ...
    nats.pause();
    writer.append(depositEvent('deposit', W, 1_000_000));
    const refused = writer.flush()!.committed;
    await new Promise((r) => setTimeout(r, 100));
    publisher.fence('another node holds the lease');
    await assert.rejects(refused, /not the sequencer any more: another node holds the lease/);
    nats.resume();
    await new Promise((r) => setTimeout(r, 300));
    const lastSeq = async () => {
      const nc = await connect({ servers: nats.url });
      try {
        return (await (await jetstreamManager(nc)).streams.info('PM_CONFIRM')).state.last_seq;
      } finally {
        await nc.close();
      }
    };
    const before = await lastSeq();
    // ... and what commits after the fence is never sent.
    writer.append(depositEvent('deposit', W, 1_000_000));
    await assert.rejects(writer.flush()!.committed, /not the sequencer any more/);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await lastSeq(), before);
    assert.ok(before <= 3);
  } finally {
    nats.resume();
    await publisher.close(0);
    await store.close();
    await nats.stop();
  }
});
