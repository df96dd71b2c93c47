/**
 * The `order` event's binary record (journal/codecs/order-codec.ts): canonical events round-trip exactly (same
 * values, same key order), every field the record cannot hold exactly makes the writer keep the object,
 * and a journal mixing old msgpack-object order events with records reads, replays and joins the same.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { depositEvent, orderAcceptedEvent, statusEvent, type JournalEvent, type OrderAcceptedEvent, type OrderRecord, type OrderSignedParts } from '../../../src/domain/events.ts';
import { openStore, type Store } from '../../../src/journal/env.ts';
import { ORDER_RECORD_KIND, decodeOrderEvent, encodeOrderEvent, journalEventOf, orderRecordHead } from '../../../src/journal/codecs/order-codec.ts';
import { openOrdersOf, readOrder } from '../../../src/journal/orders.ts';
import { hashState, readJournal, replayJournal } from '../../../src/journal/recovery.ts';
import { JournalWriter } from '../../../src/journal/writer.ts';
import { rng } from '../../../src/demo/catalog.ts';

const ZERO32 = '0x' + '0'.repeat(64);
const hexOf = (r: () => number, bytes: number) => '0x' + Array.from({ length: bytes }, () => Math.floor(r() * 256).toString(16).padStart(2, '0')).join('');
const digitsOf = (r: () => number, n: number) => Array.from({ length: n }, () => String(Math.floor(r() * 10))).join('');
const uuidOf = (r: () => number) => hexOf(r, 16).slice(2).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
/** An integer 0 .. 2^53 - 1, often at either end. */
const intOf = (r: () => number) => {
  const x = r();
  return x < 0.1 ? 0 : x < 0.2 ? Number.MAX_SAFE_INTEGER : Math.floor(r() * 2 ** 21) * 2 ** 32 + Math.floor(r() * 2 ** 32);
};
const OWNERS = ['', 'k', 'api-key-3', 'ключ', '🔑 owner', 'é'.repeat(127), 'x'.repeat(255), '日本語のキー'];

const SIDES = ['BUY', 'SELL'] as const;
const TYPES = ['GTC', 'GTD', 'FOK', 'FAK'] as const;

function orderRecord(over: Partial<OrderRecord & OrderSignedParts> = {}): OrderRecord & OrderSignedParts {
  const wallet = '0x' + 'a1'.repeat(20);
  return {
    orderId: '0x' + '1'.repeat(64), wallet, tokenId: '7'.repeat(78), side: 'BUY', orderType: 'GTC', postOnly: false, makerAmount: 5_000_000,
    takerAmount: 10_000_000, expiration: 0, builder: ZERO32, owner: '00000000-0000-4000-8000-00000000000a', signer: wallet,
    salt: '1234567890123456', timestamp: '1700000000000', signatureType: 0, signature: '0x' + '5'.repeat(130), seq: 0,
    conditionId: '0x' + 'c'.repeat(64), outcome: 0, pricePips: 5000, sizeUnits: 10_000_000, budgetUnits: 0, makerFeeBps: 0, takerFeeBps: 25,
    sizeMatched: 0, status: 'LIVE', tradeIds: [], fillSeqs: [], createdAt: 0, updatedAt: 0, response: undefined as unknown as OrderRecord['response'],
    ...over,
  };
}

/** The `order` event of a record that carries what it signed. */
const signedEvent = (rec: OrderRecord & OrderSignedParts): OrderAcceptedEvent => orderAcceptedEvent(rec, rec);

/** The i-th random canonical event: every field drawn over its whole representable range. */
function randomEvent(r: () => number, i: number): OrderAcceptedEvent {
  const wallet = hexOf(r, 20);
  const e = signedEvent(
    orderRecord({
      orderId: hexOf(r, 32),
      wallet,
      signer: r() < 0.5 ? wallet : hexOf(r, 20),
      tokenId: digitsOf(r, 1 + Math.floor(r() * 78)),
      side: SIDES[i % 2],
      orderType: TYPES[(i >> 1) % 4],
      postOnly: (i >> 3) % 2 === 1,
      makerAmount: intOf(r),
      takerAmount: intOf(r),
      expiration: intOf(r),
      builder: r() < 0.5 ? ZERO32 : hexOf(r, 32),
      owner: r() < 0.6 ? uuidOf(r) : OWNERS[i % OWNERS.length],
      salt: digitsOf(r, 1 + Math.floor(r() * 78)),
      timestamp: digitsOf(r, 1 + Math.floor(r() * 78)),
      signatureType: i % 256,
      signature: hexOf(r, 65),
      conditionId: hexOf(r, 32),
      outcome: ((i * 7) % 256) as 0 | 1,
      pricePips: intOf(r),
      sizeUnits: intOf(r),
      budgetUnits: intOf(r),
      makerFeeBps: intOf(r),
      takerFeeBps: intOf(r),
    }),
  );
  e.seq = 1 + Math.floor(r() * 0xffff_fffe);
  e.ts = intOf(r);
  return e;
}

test('random canonical events round-trip exactly, with the key order of orderAcceptedEvent', () => {
  const r = rng(20_240_601);
  const events = Array.from({ length: 3000 }, (_, i) => randomEvent(r, i));
  // All encoded first and decoded after: a record handed out is never overwritten by later encodes (slabs
  // are replaced, not reused; 3000 records span many of them).
  const records = events.map((e) => encodeOrderEvent(e));
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    const rec = records[i];
    assert.ok(rec, `event ${i} is representable`);
    assert.equal(rec[0], ORDER_RECORD_KIND);
    const back = decodeOrderEvent(rec, e.seq);
    assert.deepEqual(back, e, `event ${i}`);
    assert.deepEqual(Object.keys(back), Object.keys(e), `event ${i}: key order`);
    assert.deepEqual(orderRecordHead(new Uint8Array(rec), e.seq), { orderId: e.orderId, wallet: e.wallet, conditionId: e.conditionId, sizeUnits: e.sizeUnits }, `event ${i}: head`);
  }
  const seen = (f: (e: OrderAcceptedEvent) => unknown) => new Set(events.map(f)).size;
  assert.equal(seen((e) => e.signatureType), 256, 'every signatureType');
  assert.equal(seen((e) => e.outcome), 256, 'every outcome byte');
  assert.equal(seen((e) => `${e.side} ${e.orderType} ${e.postOnly}`), 16, 'every side, order type and postOnly');
  assert.equal(seen((e) => e.tokenId.length), 78, 'every digit count');
});

test('any number round-trips in a float64 field, -0 and NaN included', () => {
  for (const v of [-0, NaN, -1, 0.5, 2 ** 53, Number.MAX_VALUE, -Infinity, Number.MIN_VALUE]) {
    const e = signedEvent(orderRecord({ makerAmount: v, pricePips: v }));
    e.ts = v;
    const back = decodeOrderEvent(encodeOrderEvent(e)!, e.seq);
    assert.deepEqual(back, e, String(v));
  }
});

test('a typical order is a 375-byte record, and journalEventOf reads either form', () => {
  const e = signedEvent(orderRecord());
  e.seq = 7;
  e.ts = 1_700_000_000_000;
  const rec = encodeOrderEvent(e)!;
  // 281 fixed + token id (1 + 39) + salt (1 + 8) + timestamp (1 + 7) + UUID owner (1 + 36)
  assert.equal(rec.length, 375);
  assert.deepEqual(journalEventOf(rec, 7), e);
  assert.equal(journalEventOf(e, 7), e, 'an object passes through');
  assert.deepEqual(journalEventOf(new Uint8Array(rec), 7), e, 'a plain Uint8Array decodes too');
});

test('a damaged record throws rather than decode to something else', () => {
  const e = signedEvent(orderRecord());
  const rec = Buffer.from(encodeOrderEvent(e)!);
  assert.throws(() => decodeOrderEvent(rec.subarray(0, rec.length - 1), 1), /order record/);
  assert.throws(() => decodeOrderEvent(Buffer.concat([rec, Buffer.alloc(1)]), 1), /order record/);
  const other = Buffer.from(rec);
  other[0] = 2;
  assert.throws(() => decodeOrderEvent(other, 1), /not an order record/);
  assert.throws(() => orderRecordHead(other, 1), /not an order record/, 'the replay\'s partial read checks the kind too');
  assert.throws(() => orderRecordHead(rec.subarray(0, 200), 1), /not an order record/);
});

type Edit = (e: Record<string, unknown>) => void;
const set =
  (k: keyof OrderAcceptedEvent, v: unknown): Edit =>
  (e) => {
    e[k] = v;
  };

/**
 * Events the record cannot hold exactly; `msgpack: false` where the msgpack object cannot either (it stores
 * -0 as 0 and a lone surrogate as U+FFFD), so the writer test leaves them out.
 */
const NOT_REPRESENTABLE: Array<{ name: string; edit: Edit; msgpack?: false }> = [
  { name: 'uppercase order id', edit: set('orderId', '0x' + 'AB'.repeat(32)) },
  { name: 'mixed-case wallet', edit: set('wallet', '0x' + 'aB'.repeat(20)) },
  { name: '0X prefix', edit: set('orderId', '0X' + '1'.repeat(64)) },
  { name: 'no 0x prefix', edit: set('conditionId', 'c'.repeat(66)) },
  { name: 'order id one digit short', edit: set('orderId', '0x' + '1'.repeat(63)) },
  { name: 'order id one byte long', edit: set('orderId', '0x' + '1'.repeat(66)) },
  { name: 'wallet of 32 bytes', edit: set('wallet', '0x' + '1'.repeat(64)) },
  { name: 'signer not hex', edit: set('signer', '0x' + 'g'.repeat(40)) },
  { name: 'builder empty', edit: set('builder', '') },
  { name: 'builder uppercase', edit: set('builder', '0x' + 'F'.repeat(64)) },
  { name: 'signature of 64 bytes', edit: set('signature', '0x' + '5'.repeat(128)) },
  { name: 'signature uppercase', edit: set('signature', '0x' + 'A'.repeat(130)) },
  { name: 'hex with a non-ASCII character whose low byte is a digit', edit: set('orderId', '0x' + '\u0130' + '1'.repeat(63)) },
  { name: 'order id not a string', edit: set('orderId', 12) },
  { name: 'token id with a letter', edit: set('tokenId', '12a4') },
  { name: 'token id negative', edit: set('tokenId', '-1') },
  { name: 'token id of 256 digits', edit: set('tokenId', '1'.repeat(256)) },
  { name: 'token id a number', edit: set('tokenId', 1234) },
  { name: 'salt with a space', edit: set('salt', ' 1') },
  { name: 'timestamp with a point', edit: set('timestamp', '1.5') },
  { name: 'timestamp with a full-width digit', edit: set('timestamp', '１２') },
  { name: 'owner of 256 bytes', edit: set('owner', 'x'.repeat(256)) },
  { name: 'owner of 256 bytes in 128 characters', edit: set('owner', 'é'.repeat(128)) },
  { name: 'owner with a lone surrogate', edit: set('owner', 'key\ud800'), msgpack: false },
  { name: 'owner not a string', edit: set('owner', null) },
  { name: 'outcome 256', edit: set('outcome', 256) },
  { name: 'outcome -1', edit: set('outcome', -1) },
  { name: 'outcome 0.5', edit: set('outcome', 0.5) },
  { name: 'outcome -0', edit: set('outcome', -0), msgpack: false },
  { name: 'outcome a string', edit: set('outcome', '0') },
  { name: 'signatureType 1.5', edit: set('signatureType', 1.5) },
  { name: 'signatureType -0', edit: set('signatureType', -0), msgpack: false },
  { name: 'side lowercase', edit: set('side', 'buy') },
  { name: 'unknown order type', edit: set('orderType', 'IOC') },
  { name: 'postOnly a number', edit: set('postOnly', 1) },
  { name: 'amount a string', edit: set('makerAmount', '5000000') },
  { name: 'fee rate null', edit: set('takerFeeBps', null) },
  { name: 'an extra key', edit: set('note' as keyof OrderAcceptedEvent, 'x') },
  {
    name: 'a missing key',
    edit: (e) => {
      delete e.budgetUnits;
    },
  },
];

test('every field the record cannot hold exactly yields undefined', () => {
  for (const { name, edit } of NOT_REPRESENTABLE) {
    const e = signedEvent(orderRecord());
    assert.ok(encodeOrderEvent(e), `${name}: the unedited event is representable`);
    edit(e as unknown as Record<string, unknown>);
    assert.equal(encodeOrderEvent(e), undefined, name);
  }
});

function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'pm-order-codec-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('through the writer: records where they fit, objects where not, and readJournal returns each event as appended', async () => {
  const { dir, cleanup } = tempDir();
  const store = openStore({ dataDir: dir, mapSize: 2 ** 28 });
  try {
    const w = new JournalWriter(store, 0, () => 1_700_000_000_000);
    const appended: JournalEvent[] = [w.append(depositEvent('deposit', '0xa', 100))];
    const binary = new Set<number>();
    let n = 0;
    for (const { name, edit, msgpack } of NOT_REPRESENTABLE) {
      if (msgpack === false) continue;
      const e = signedEvent(orderRecord({ orderId: '0x' + (++n).toString(16).padStart(64, '0') }));
      edit(e as unknown as Record<string, unknown>);
      appended.push(w.append(e));
      assert.equal(encodeOrderEvent(e), undefined, name);
    }
    for (let i = 0; i < 5; i++) {
      const e = w.append(signedEvent(orderRecord({ orderId: '0x' + (++n).toString(16).padStart(64, '0'), owner: OWNERS[i] })));
      appended.push(e);
      binary.add(e.seq);
    }
    await w.flush()!.committed;
    for (const e of appended) {
      const stored = store.journal.get(e.seq);
      assert.equal(stored instanceof Uint8Array, binary.has(e.seq), `seq ${e.seq}: stored as ${binary.has(e.seq) ? 'a record' : 'the object'}`);
    }
    assert.deepEqual([...readJournal(store)], appended);
    assert.deepEqual([...readJournal(store, 10)], appended.slice(9), 'from a seq');
  } finally {
    await store.close();
    cleanup();
  }
});

/**
 * The state row of an order as the writer leaves it after acceptance (or a cancel): its event keeps what
 * it signed, and the record held (returned with it) has no signed parts, as the engine's.
 */
function accept(w: JournalWriter, signed: OrderRecord & OrderSignedParts): { ev: OrderAcceptedEvent; rec: OrderRecord } {
  const ev = w.append(orderAcceptedEvent(signed, signed));
  const { salt: _salt, timestamp: _timestamp, signature: _signature, ...rec } = signed;
  rec.seq = ev.seq;
  rec.createdAt = ev.ts;
  rec.updatedAt = ev.ts;
  rec.response = { status: 'live', makingAmount: 0, takingAmount: 0, tradeIds: [] };
  w.putOrder(rec, true);
  return { ev, rec };
}

/**
 * One journal written by the writer (order events as records), then order events at `oldAt` (seq -> true)
 * put back as plain msgpack objects, as a store of version 4 or 5 holds them.
 */
async function journalStore(dir: string, oldForm: (seq: number) => boolean): Promise<{ events: JournalEvent[]; recs: OrderRecord[] }> {
  const store = openStore({ dataDir: dir, mapSize: 2 ** 28 });
  let now = 1_700_000_000_000;
  const w = new JournalWriter(store, 0, () => now++);
  const r = rng(7);
  const events: JournalEvent[] = [w.append(depositEvent('deposit', '0x' + 'a1'.repeat(20), 1_000_000))];
  const recs: OrderRecord[] = [];
  for (let i = 0; i < 40; i++) {
    const { type: _type, ts: _ts, ...submission } = randomEvent(r, i);
    const { ev, rec } = accept(w, orderRecord({ ...submission, seq: 0, outcome: (i % 2) as 0 | 1 }));
    events.push(ev);
    recs.push(rec);
    if (i % 7 === 3) {
      const canceled = recs[i - 1];
      canceled.status = 'CANCELED';
      canceled.updatedAt = now;
      events.push(w.append(statusEvent(canceled, 'CANCELED', 'USER', canceled.sizeUnits)));
      w.putOrder(canceled, false);
    }
  }
  await w.flush()!.committed;
  for (const e of events) if (e.type === 'order' && oldForm(e.seq)) void store.journal.put(e.seq, { ...e });
  await store.journal.flushed;
  for (const e of events) {
    if (e.type === 'order') assert.equal(store.journal.get(e.seq) instanceof Uint8Array, !oldForm(e.seq), `seq ${e.seq}`);
  }
  await store.close();
  return { events, recs };
}

test('a journal of old msgpack-object order events, records, or both, reads, replays and joins identically', async () => {
  const forms: Array<[string, (seq: number) => boolean]> = [
    ['old objects', () => true],
    ['records', () => false],
    ['mixed', (seq) => seq % 2 === 0],
  ];
  const results: Array<{ journal: JournalEvent[]; hash: string; open: string[]; orders: Array<OrderRecord | undefined> }> = [];
  for (const [name, oldForm] of forms) {
    const { dir, cleanup } = tempDir();
    try {
      const { events, recs } = await journalStore(dir, oldForm);
      // A reader without a replay (the id index comes from a scan of the journal), then start-up's replay.
      let store: Store = openStore({ dataDir: dir, mapSize: 2 ** 28 });
      const orders = recs.map((rec) => readOrder(store, rec.orderId));
      assert.deepEqual(orders, recs, `${name}: readOrder after a scan`);
      await store.close();
      store = openStore({ dataDir: dir, mapSize: 2 ** 28 });
      const replay = replayJournal(store);
      const journal = [...readJournal(store)];
      assert.deepEqual(journal, events, `${name}: readJournal`);
      assert.equal(replay.lastSeq, events.length);
      assert.deepEqual(
        replay.state.openOrders.map((o) => o.orderId),
        recs.filter((x) => x.status === 'LIVE').map((x) => x.orderId),
        `${name}: open orders`,
      );
      assert.deepEqual(recs.map((rec) => readOrder(store, rec.orderId)), recs, `${name}: readOrder after the replay`);
      const open = openOrdersOf(store).map((o) => o.orderId);
      results.push({ journal, hash: hashState(replay.state), open, orders });
      await store.close();
    } finally {
      cleanup();
    }
  }
  for (const r of results.slice(1)) assert.deepEqual(r, results[0]);
});
