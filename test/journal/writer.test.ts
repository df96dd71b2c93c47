/**
 * The journal writer: consecutive sequence numbers, one transaction per flushed batch (group commit),
 * fills indexed by market and by both wallets, tables written with the journal, deterministic digests.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { depositEvent, fillFromRow, type FillEvent, type FillRow, type JournalEvent } from '../../src/domain/events.ts';
import { readJournal } from '../../src/journal/recovery.ts';
import { balanceKey, ix, metaKeys } from '../../src/journal/keys.ts';
import { JournalWriter, fillDigests } from '../../src/journal/writer.ts';
import { tempStore } from '../fixtures/engine-harness.ts';

let env: ReturnType<typeof tempStore>;
before(() => {
  env = tempStore('pm-writer-');
});
after(async () => {
  await env.cleanup();
});

function fill(i: number): FillEvent {
  return {
    type: 'fill', seq: 0, ts: 0, tradeId: '', txHash: '', conditionId: '0xc', kind: 'TRANSFER', size: 10_000 * i,
    takerOrderId: '0xt' + i, makerOrderId: '0xm' + i, takerWallet: '0xa', makerWallet: '0xb', takerOwner: 'ka', makerOwner: 'kb',
    takerTokenId: '1', makerTokenId: '1', takerOutcome: 0, makerOutcome: 0, takerSide: 'BUY', makerSide: 'SELL',
    takerPricePips: 5000, makerPricePips: 5000, takerUsdc: 5000 * i, makerUsdc: 5000 * i, takerFee: 0, makerFee: 0, makerRemaining: 0, builder: '0x0',
  };
}

test('one batch: consecutive seqs, one transaction, every table written together', async () => {
  const w = new JournalWriter(env.store, 0, () => 1_700_000_000_000);
  const evs: JournalEvent[] = [w.append(depositEvent('deposit', '0xa', 100))];
  for (let i = 1; i <= 50; i++) evs.push(w.append(fill(i)));
  w.putBalance('0xa', 'USDC', 42);
  const r = w.flush();
  assert.ok(r);
  assert.deepEqual(evs.map((e) => e.seq), Array.from({ length: 51 }, (_, i) => i + 1));
  assert.equal(w.transactions, 1);
  await r.committed;
  assert.equal(env.store.meta.get(metaKeys.journalSeq), 51);
  assert.equal(env.store.balances.get(balanceKey('0xa', 'USDC')), 42);
  assert.equal((env.store.journal.get(1) as JournalEvent).type, 'deposit');
  const f = fillFromRow(env.store.fills.get(10) as FillRow);
  assert.deepEqual([...readJournal(env.store)][9], f);
  assert.deepEqual(f, evs[9]);
  assert.equal(f.size, 90_000);
  assert.match(f.tradeId, /^0x[0-9a-f]{64}$/);
  assert.match(f.txHash, /^0x[0-9a-f]{64}$/);
  assert.notEqual(f.tradeId, f.txHash);
  assert.deepEqual(fillDigests(f), { tradeId: f.tradeId, txHash: f.txHash });
  assert.equal([...env.store.indexes.getKeys(ix.fillsByMarketRange('0xc'))].length, 50);
  assert.equal([...env.store.indexes.getKeys(ix.fillsByWalletRange('0xa'))].length, 50);
  assert.equal([...env.store.indexes.getKeys(ix.fillsByWalletRange('0xb'))].length, 50);
});

test('batches flushed in one event-loop turn share a transaction; later turns get new ones', async () => {
  const w = new JournalWriter(env.store, env.store.meta.get(metaKeys.journalSeq) as number, Date.now);
  const promises = [];
  for (let b = 0; b < 10; b++) {
    w.append(depositEvent('deposit', '0xa', 1));
    promises.push(w.flush()?.committed);
  }
  assert.equal(w.transactions, 1);
  await Promise.all(promises);
  w.append(depositEvent('deposit', '0xa', 1));
  await w.flush()?.committed;
  assert.equal(w.transactions, 2);
  assert.equal(w.flush(), undefined, 'nothing to flush');
});

test('a batch is acknowledged only once its commit is flushed to disk, not at commit', async () => {
  // lmdb-js (overlappingSync) resolves a put at commit and syncs afterwards; hold the flush back and the
  // acknowledgement must wait for it even though the data is already committed and readable.
  let release!: () => void;
  const flushGate = new Promise<void>((resolve) => (release = resolve));
  Object.defineProperty(env.store.root, 'flushed', { configurable: true, get: () => flushGate });
  try {
    const w = new JournalWriter(env.store, env.store.meta.get(metaKeys.journalSeq) as number, Date.now);
    const e = w.append(depositEvent('deposit', '0xflush', 7));
    let acknowledged = false;
    const r = w.flush()!;
    void r.committed.then(() => (acknowledged = true));
    for (let i = 0; i < 100 && env.store.journal.get(e.seq) === undefined; i++) await new Promise((res) => setTimeout(res, 10));
    assert.ok(env.store.journal.get(e.seq), 'the batch committed');
    await new Promise((res) => setTimeout(res, 20));
    assert.equal(acknowledged, false, 'acknowledged before the flush');
    release();
    await r.committed;
    assert.equal(acknowledged, true);
  } finally {
    delete (env.store.root as unknown as Record<string, unknown>).flushed;
  }
});
