/**
 * The `status` event's binary record (journal/codecs/status-codec.ts): canonical events round-trip exactly (same
 * values, same key order), every field the record cannot hold exactly makes the writer keep the object,
 * and a journal mixing msgpack-object status events (older stores) with records reads and replays the same.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { depositEvent, orderAcceptedEvent, statusEvent, type JournalEvent, type OrderRecord, type OrderSignedParts, type OrderStatusEvent, type OrderStatusName, type StatusReason } from '../../../src/domain/events.ts';
import { openStore } from '../../../src/journal/env.ts';
import { journalEventOf } from '../../../src/journal/codecs/order-codec.ts';
import { hashState, readJournal, replayJournal } from '../../../src/journal/recovery.ts';
import { STATUS_RECORD_BYTES, STATUS_RECORD_KIND, decodeStatusEvent, encodeStatusEvent } from '../../../src/journal/codecs/status-codec.ts';
import { JournalWriter } from '../../../src/journal/writer.ts';
import { rng } from '../../../src/demo/catalog.ts';

const hexOf = (r: () => number, bytes: number) => '0x' + Array.from({ length: bytes }, () => Math.floor(r() * 256).toString(16).padStart(2, '0')).join('');
const STATUSES: OrderStatusName[] = ['LIVE', 'MATCHED', 'CANCELED', 'CANCELED_MARKET_RESOLVED'];
const REASONS: StatusReason[] = ['USER', 'EXPIRED', 'SELF_TRADE', 'MARKET_RESOLVED', 'UNFILLED', 'FILLED'];

/** What statusEvent reads of a record. */
const rec = (orderId: string, wallet: string, conditionId: string, matched: number) =>
  ({ orderId, wallet, conditionId, sizeMatched: matched }) as unknown as OrderRecord;

function randomEvent(r: () => number, i: number): OrderStatusEvent {
  const num = () => (r() < 0.1 ? 0 : r() < 0.1 ? Number.MAX_SAFE_INTEGER : Math.floor(r() * 2 ** 40));
  const e = statusEvent(rec(hexOf(r, 32), hexOf(r, 20), hexOf(r, 32), num()), STATUSES[i % 4]!, REASONS[(i >> 2) % 6]!, num());
  e.seq = 1 + Math.floor(r() * 2 ** 40);
  e.ts = num();
  return e;
}

test('random canonical events round-trip exactly, with the key order of statusEvent', () => {
  const r = rng(20261121);
  for (let i = 0; i < 2000; i++) {
    const e = randomEvent(r, i);
    const bytes = encodeStatusEvent(e);
    assert.ok(bytes, `event ${i} is representable`);
    assert.equal(bytes.length, STATUS_RECORD_BYTES);
    assert.equal(bytes[0], STATUS_RECORD_KIND);
    const back = decodeStatusEvent(Buffer.from(bytes), e.seq);
    assert.deepEqual(back, e);
    assert.deepEqual(Object.keys(back), Object.keys(e));
    assert.deepEqual(journalEventOf(new Uint8Array(bytes), e.seq), e, 'journalEventOf tells a status record by its kind');
  }
});

test('records are independent: encoding more never changes the bytes of an earlier record', () => {
  const r = rng(7);
  const events = Array.from({ length: 1500 }, (_, i) => randomEvent(r, i)); // more than one 64 KB slab
  const records = events.map((e) => encodeStatusEvent(e)!);
  records.forEach((b, i) => assert.deepEqual(decodeStatusEvent(b, events[i]!.seq), events[i]));
});

const NOT_REPRESENTABLE: Array<{ name: string; edit: (e: Record<string, unknown>) => void }> = [
  { name: 'uppercase order id', edit: (e) => (e.orderId = (e.orderId as string).toUpperCase().replace('0X', '0x')) },
  { name: 'short order id', edit: (e) => (e.orderId = '0x1234') },
  { name: 'wallet without 0x', edit: (e) => (e.wallet = (e.wallet as string).slice(2) + '00') },
  { name: 'condition id of another length', edit: (e) => (e.conditionId = (e.conditionId as string) + 'ab') },
  { name: 'unknown status', edit: (e) => (e.status = 'PAUSED') },
  { name: 'unknown reason', edit: (e) => (e.reason = 'BORED') },
  { name: 'remaining as text', edit: (e) => (e.remaining = '5') },
  { name: 'matched missing', edit: (e) => delete e.matched },
  { name: 'an extra key', edit: (e) => (e.note = 'x') },
  { name: 'ts as text', edit: (e) => (e.ts = '1') },
];

test('every field the record cannot hold exactly yields undefined', () => {
  const r = rng(3);
  for (const { name, edit } of NOT_REPRESENTABLE) {
    const e = randomEvent(r, 0);
    assert.ok(encodeStatusEvent(e), `${name}: the unedited event is representable`);
    edit(e as unknown as Record<string, unknown>);
    assert.equal(encodeStatusEvent(e), undefined, name);
  }
});

test('a damaged record throws rather than decode to something else', () => {
  const e = randomEvent(rng(5), 1);
  const good = Buffer.from(encodeStatusEvent(e)!);
  const damaged = [
    good.subarray(0, STATUS_RECORD_BYTES - 1),
    Buffer.concat([good, Buffer.from([0])]),
    Buffer.from(good).fill(9, 1, 2), // status 9
    Buffer.from(good).fill(6, 2, 3), // reason 6
    Buffer.from(good).fill(1, 0, 1), // an order record's kind
  ];
  for (const b of damaged) assert.throws(() => decodeStatusEvent(b, 1), /not a status record/);
});

test('through the writer: records where they fit, objects where not; a journal mixing both replays identically', async () => {
  const dirs: string[] = [];
  const run = async (asObjects: boolean) => {
    const dir = mkdtempSync(join(tmpdir(), 'pm-status-codec-'));
    dirs.push(dir);
    const store = openStore({ dataDir: dir, mapSize: 2 ** 28 });
    try {
      const w = new JournalWriter(store, 0, () => 1_700_000_000_000);
      const r = rng(11);
      const appended: JournalEvent[] = [w.append(depositEvent('deposit', '0x' + 'a'.repeat(40), 100))];
      for (let i = 0; i < 40; i++) {
        const e = randomEvent(r, i);
        // An event the record cannot hold (every 5th), or an older store's object (asObjects): stored as is.
        if (i % 5 === 4) e.wallet = e.wallet.toUpperCase().replace('0X', '0x');
        appended.push(w.append(e));
      }
      if (asObjects) {
        // What an older build wrote: every event as its msgpack object.
        for (const e of appended) void store.journal.put(e.seq, e);
        await store.journal.flushed;
      } else {
        await w.flush()!.committed;
      }
      const stored = appended.map((e) => store.journal.get(e.seq));
      const binary = stored.filter((v) => v instanceof Uint8Array).length;
      assert.equal(binary, asObjects ? 0 : 32, 'status records where they fit, objects where not');
      assert.deepEqual([...readJournal(store)], appended);
      return { journal: [...readJournal(store)], seqs: appended.map((e) => e.seq) };
    } finally {
      await store.close();
    }
  };
  try {
    const records = await run(false);
    const objects = await run(true);
    assert.deepEqual(records, objects, 'the same journal either way');
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
});

test('replay reads status records: an order they finish is no longer open', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pm-status-replay-'));
  const store = openStore({ dataDir: dir, mapSize: 2 ** 28 });
  try {
    const w = new JournalWriter(store, 0, () => 1_700_000_000_000);
    const order = (n: number) =>
      ({
        orderId: '0x' + n.toString(16).padStart(64, '0'), wallet: '0x' + 'b'.repeat(40), tokenId: '1', side: 'BUY', orderType: 'GTC', postOnly: false,
        makerAmount: 1_000_000, takerAmount: 2_000_000, expiration: 0, builder: '0x' + '0'.repeat(64), owner: 'k', signer: '0x' + 'b'.repeat(40),
        salt: '1', timestamp: '1', signatureType: 0, signature: '0x' + '1'.repeat(130), seq: 0, conditionId: '0x' + 'c'.repeat(64), outcome: 0,
        pricePips: 5000, sizeUnits: 2_000_000, budgetUnits: 0, makerFeeBps: 0, takerFeeBps: 0, sizeMatched: 0, status: 'LIVE', tradeIds: [], fillSeqs: [],
        createdAt: 0, updatedAt: 0, response: undefined,
      }) as unknown as OrderRecord & OrderSignedParts;
    w.append(depositEvent('deposit', '0x' + 'b'.repeat(40), 10_000_000));
    const a = order(1);
    const b = order(2);
    w.append(orderAcceptedEvent(a, a));
    w.append(orderAcceptedEvent(b, b));
    w.append(statusEvent(a, 'CANCELED', 'USER', a.sizeUnits));
    await w.flush()!.committed;
    assert.ok(store.journal.get(4) instanceof Uint8Array, 'the status event is stored as a record');
    const replay = replayJournal(store);
    assert.deepEqual(replay.state.openOrders.map((o) => o.orderId), [b.orderId]);
    assert.equal(typeof hashState(replay.state), 'string');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
