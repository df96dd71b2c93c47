/**
 * The journal writer: consecutive sequence numbers, one transaction per flushed batch (group commit),
 * fills stored as binary records that decode to what was appended, unique trade ids and transaction
 * hashes, tables written with the journal.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { depositEvent, type FillEvent, type JournalEvent } from '../../src/domain/events.ts';
import { BLOCK_FILLS, decodeFill, encodeFillRecord, readFill, recordIn } from '../../src/journal/codecs/fill-codec.ts';
import { TradeIds, newTradeIdKey, tradeIdOf, tradeIdSeq } from '../../src/journal/codecs/trade-ids.ts';
import { journalEventOf } from '../../src/journal/codecs/order-codec.ts';
import { readJournal } from '../../src/journal/recovery.ts';
import { balanceKey, metaKeys } from '../../src/journal/keys.ts';
import { JournalWriter } from '../../src/journal/writer.ts';
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
  assert.equal(journalEventOf(env.store.journal.get(1), 1).type, 'deposit');
  const f = readFill(env.store.fills, 10)!;
  const journal = [...readJournal(env.store)];
  assert.deepEqual(journal.map((e) => e.seq), evs.map((e) => e.seq), 'the journal is the two tables merged by seq');
  assert.deepEqual(journal[9], f);
  assert.deepEqual(f, evs[9]);
  assert.equal(f.size, 90_000);
  assert.equal(f.takerOrderId, '0xt9', 'strings that are not hex survive');
  const fills = journal.filter((e): e is FillEvent => e.type === 'fill');
  for (const x of fills) {
    assert.match(x.tradeId, /^0x[0-9a-f]{64}$/);
    assert.match(x.txHash, /^0x[0-9a-f]{64}$/);
  }
  assert.equal(new Set(fills.map((x) => x.tradeId)).size, 50, 'trade ids are unique');
  assert.equal(new Set(fills.map((x) => x.txHash)).size, 50, 'transaction hashes are distinct');
  const key = env.store.meta.get(metaKeys.tradeIdPrefix) as string;
  assert.ok(fills.every((x) => x.tradeId === tradeIdOf(key, x.seq) && tradeIdSeq(key, x.tradeId) === x.seq), "a trade id is its seq's under the store's key");
  const blocks = [...env.store.fills.getKeys({})];
  assert.equal(blocks.length, Math.ceil(50 / BLOCK_FILLS), 'fills are stored in blocks');
  for (let seq = 2; seq <= 51; seq++) assert.equal(readFill(env.store.fills, seq)?.seq, seq, `fill ${seq} found in its block`);
  assert.equal(readFill(env.store.fills, 1), undefined, 'a seq that is not a fill has no fill');
  assert.equal(readFill(env.store.fills, 52), undefined);
});

test('fills read back exactly across batches that recycle slabs, with repeated and alternating ids', async () => {
  const w = new JournalWriter(env.store, env.store.meta.get(metaKeys.journalSeq) as number, Date.now);
  const appended: FillEvent[] = [];
  for (let b = 0; b < 3; b++) {
    // ~1.4 MB of records per batch: slabs (1 MB) fill up and, after each commit, are reused.
    for (let i = 0; i < 2000; i++) {
      const n = b * 2000 + i;
      const f = {
        ...fill(n + 1),
        takerOrderId: '0x' + (n >> 2).toString(16).padStart(64, '0'), // four fills per taker order in a row
        makerOrderId: '0x' + (n % 7).toString(16).padStart(64, 'a'), // makers alternate: repeats are not in a row
        takerWallet: '0x' + (n % 5).toString(16).padStart(40, '0'),
        makerTokenId: String(10n ** 76n + BigInt(n % 3)),
      };
      appended.push(w.append(f));
    }
    await w.flush()!.committed;
  }
  const first = appended[0]!.seq;
  const back = [...readJournal(env.store, first)].filter((e): e is FillEvent => e.type === 'fill');
  assert.equal(back.length, appended.length);
  for (let i = 0; i < appended.length; i++) assert.deepEqual(back[i], appended[i], `fill ${i}`);
});

test('a fill record round-trips every field, hex or not, and its hash covers its content', () => {
  const a = { ...fill(7), seq: 12, ts: 1_700_000_000_123, tradeId: '0x' + 'ab'.repeat(32), conditionId: '0x' + 'c'.repeat(64), takerWallet: '0x' + 'a'.repeat(40) };
  a.takerTokenId = '123456789012345678901234567890123456789012345678901234567890123456789012345678';
  a.takerOwner = 'ünïcödé-owner';
  a.makerOrderId = '0xABCDEF'; // upper-case hex is not the compact form: it must come back unchanged
  a.takerUsdc = 2 ** 53 - 1;
  const ra = encodeFillRecord(a);
  assert.deepEqual(decodeFill(recordIn(ra, 12)!), a);
  const b = { ...a, size: a.size + 1 };
  encodeFillRecord(b);
  assert.notEqual(b.txHash, a.txHash, 'a different record has a different transaction hash');
  const a2 = { ...a };
  encodeFillRecord(a2);
  assert.equal(a2.txHash, a.txHash, 'the same record has the same transaction hash');
});

test('the writer\'s trade ids are tradeIdOf\'s texts and the bytes they spell, in both forms, across every boundary of the cached head', () => {
  const hex = '0123456789abcdef'.repeat(3);
  const seqs = [1, 2, 4095, 4096, 4097, 8191, 8192, 65_535, 65_536, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 4096, 2 ** 53 - 1, 7, 4096];
  for (const key of [hex, `2:${hex}`]) {
    const ids = new TradeIds(key);
    const b = Buffer.alloc(40, 0xee);
    for (const seq of seqs) {
      const text = tradeIdOf(key, seq);
      assert.match(text, /^0x[0-9a-f]{64}$/);
      assert.equal(ids.text(seq), text, `text of seq ${seq}`);
      ids.write(b, 4, seq);
      assert.equal('0x' + b.toString('hex', 4, 36), text, `bytes of seq ${seq}`);
      assert.equal(b[3], 0xee, 'nothing written before');
      assert.equal(b[36], 0xee, 'nothing written after');
      assert.equal(tradeIdSeq(key, text), seq, `the seq back from the id of seq ${seq}`);
    }
  }
  assert.equal(tradeIdOf(hex, 4097), `0x${hex}0000000000001001`, 'an older store keeps its sequential ids');
  assert.equal(tradeIdSeq(hex, `0x${'f'.repeat(64)}`), undefined, "another store's id");
  assert.equal(tradeIdSeq(`2:${hex}`, `0x${'0'.repeat(16)}${'f'.repeat(48)}`), undefined);
  assert.throws(() => new TradeIds('0x' + hex), /neither "2:" \+ 48 lowercase hex digits nor 48 lowercase hex digits/);
});

test('a fresh store\'s trade ids differ from their first characters on, distinct and deterministic under its key', () => {
  const key = newTradeIdKey(Buffer.alloc(24, 0x5a));
  assert.match(key, /^2:[0-9a-f]{48}$/);
  const ids = Array.from({ length: 5000 }, (_, i) => tradeIdOf(key, i + 1));
  assert.equal(new Set(ids).size, ids.length, 'unique');
  assert.equal(new Set(ids.map((id) => id.slice(0, 10))).size, ids.length, 'unique in their first 8 hex digits, as a log that cuts them shows');
  // Consecutive ids share no leading characters beyond chance (a sequential id shared 48 hex digits).
  const shared = ids.slice(1).map((id, i) => [...id.slice(2)].findIndex((c, j) => c !== ids[i]![2 + j]));
  assert.ok(shared.reduce((a, b) => a + b, 0) / shared.length < 1, `mean shared leading hex digits ${shared.reduce((a, b) => a + b, 0) / shared.length}`);
  assert.deepEqual(ids.slice(0, 3), [1, 2, 3].map((seq) => tradeIdOf(key, seq)), 'the same key and seq, the same id');
  assert.notEqual(tradeIdOf(newTradeIdKey(Buffer.alloc(24, 0x5b)), 1), ids[0], "another store's key, another id");
});

test('a fresh store writes the mixed form; a store made with a sequential key keeps it', async () => {
  const fresh = tempStore('pm-writer-ids-');
  const older = tempStore('pm-writer-ids-');
  try {
    new JournalWriter(fresh.store, 0, Date.now);
    assert.match(fresh.store.meta.get(metaKeys.tradeIdPrefix) as string, /^2:[0-9a-f]{48}$/);
    const hex = 'ab'.repeat(24);
    older.store.meta.putSync(metaKeys.tradeIdPrefix, hex);
    new JournalWriter(older.store, 0, Date.now);
    assert.equal(older.store.meta.get(metaKeys.tradeIdPrefix), hex);
  } finally {
    await fresh.cleanup();
    await older.cleanup();
  }
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
