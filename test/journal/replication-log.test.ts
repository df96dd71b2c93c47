/**
 * The sequencer's replication log (src/journal/replication-log.ts): what the captured store logs (a child
 * transaction's writes as one record with them, an aborted one as nothing, loose writes once per turn),
 * what it refuses (synchronous writes that would commit outside the log), a store whose journal went on
 * without its log, and records read back with what they name.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { depositEvent } from '../../src/domain/events.ts';
import { openStore, type Store } from '../../src/journal/env.ts';
import { metaKeys, USDC_ASSET } from '../../src/journal/keys.ts';
import { ReplicationLog, ReplicationLogError, readReplicatedBatch, type LogRecord } from '../../src/journal/replication-log.ts';
import { JournalWriter } from '../../src/journal/writer.ts';

const fresh = () => openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-rlog-')) });
const records = (store: Store) => [...store.replication.getRange({})].map(({ key, value }) => [key, (value as LogRecord).a ?? (value as LogRecord).j]);
const settle = () => new Promise((r) => setTimeout(r, 50));

test('a child transaction logs its writes as one record with them; an aborted one logs nothing; loose writes are one record per turn', async () => {
  const raw = fresh();
  const log = ReplicationLog.open(raw);
  const store = log.captureWrites(raw);
  await store.root.childTransaction(() => {
    store.catalog.put(['event', '1'], { id: '1' });
    store.indexes.put(['ix', 1], Buffer.alloc(0));
  });
  await assert.rejects(
    store.root.childTransaction(() => {
      store.catalog.put(['event', '2'], { id: '2' });
      throw new Error('invalid plan');
    }),
    /invalid plan/,
  );
  await Promise.all([store.apiKeys.put('k1', { apiKey: 'k1' }), store.profiles.put('0xab', { name: 'a' }), store.apiKeys.remove('k0')]);
  await settle();
  assert.deepEqual(records(raw), [
    [1, [['c', ['event', '1'], { id: '1' }], ['i', ['ix', 1], Buffer.alloc(0)]]],
    [2, [['k', 'k1', { apiKey: 'k1' }], ['p', '0xab', { name: 'a' }], ['k', 'k0']]],
  ]);
  assert.equal(raw.catalog.get(['event', '2']), undefined, 'the aborted write is not in the store either');
  assert.equal(log.committedRseq, 2);
  assert.throws(() => store.catalog.putSync(['event', '3'], {}), ReplicationLogError);
  assert.throws(() => store.apiKeys.removeSync('k1'), ReplicationLogError);
  // Reads and the untouched tables go straight through.
  assert.deepEqual(store.catalog.get(['event', '1']), { id: '1' });
  assert.equal(store.journal, raw.journal);
  await raw.close();
});

test('journal batches: the rows beside the events, read back with the events; committedRseq counts only a committed prefix', async () => {
  const store = fresh();
  const log = ReplicationLog.open(store);
  const seen: number[] = [];
  log.onCommitted((r) => seen.push(r));
  const writer = new JournalWriter(store, 0, () => 1_700_000_000_000, log);
  writer.append(depositEvent('deposit', '0xw', 7));
  writer.putBalance('0xw', USDC_ASSET, 7);
  writer.putNetDeposits(7);
  await writer.flush()!.committed;
  await settle();
  assert.deepEqual(seen, [1]);
  const b = readReplicatedBatch(store, 1)!;
  assert.deepEqual([b.r, b.j, b.rows, b.e!.map(([s]) => s), b.f, b.p], [1, [1, 1], { b: [['0xw', USDC_ASSET, 7]], n: 7 }, [1], [], store.meta.get(metaKeys.tradeIdPrefix)]);
  assert.deepEqual(log.takeBatch(1)!.e, b.e, 'the batch as the writer put it equals its read-back');
  assert.equal(readReplicatedBatch(store, 2), undefined);
  assert.equal(store.meta.get(metaKeys.replicationJournalSeq), 1);
  await store.close();
});

test('a store whose journal went on without its log is refused', async () => {
  const store = fresh();
  const writer = new JournalWriter(store, 0, () => 1_700_000_000_000);
  writer.append(depositEvent('deposit', '0xw', 7));
  writer.putBalance('0xw', USDC_ASSET, 7);
  await writer.flush()!.committed;
  assert.throws(() => ReplicationLog.open(store), /the journal ends at seq 1, the log at 0/);
  await store.close();
});
