/**
 * The stored form of fills (journal/codecs/fill-codec.ts): every kind, side and outcome round-trips with edge
 * values in every field; a record is exactly as long as its layout says (head, then tag, length and bytes
 * per string, hex stored as the bytes it spells) and its slot is padded to 8 bytes; the aligned and the
 * unaligned encoder write the same bytes; blocks are read by seq; a damaged record is refused.
 * Through the journal writer and LMDB: test/journal/writer.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FillEvent, FillKindName, SideName } from '../../../src/domain/events.ts';
import {
  SLOT_HEADER,
  blockRecords,
  decodeFill,
  encodeFill,
  encodeFillRecord,
  fillRecordBound,
  fillSeqOf,
  readFill,
  readFillsFrom,
  recordIn,
  writeSlot,
  type FillsTable,
} from '../../../src/journal/codecs/fill-codec.ts';

const hex = (bytes: number, digit: string) => '0x' + digit.repeat(2 * bytes);

function fill(seq: number, extra: Partial<FillEvent> = {}): FillEvent {
  return {
    type: 'fill',
    seq,
    ts: 1_767_225_600_000 + seq,
    tradeId: '0x' + 'ab'.repeat(24) + seq.toString(16).padStart(16, '0'),
    txHash: '',
    conditionId: hex(32, 'c'),
    kind: 'TRANSFER',
    size: 5_000_000,
    takerOrderId: hex(32, '1'),
    makerOrderId: hex(32, '2'),
    takerWallet: hex(20, 'a'),
    makerWallet: hex(20, 'b'),
    takerOwner: '2b9e0c8e-4a4b-4f7e-9c55-0f1f6f1d2a01',
    makerOwner: '7c1d5a33-0e2f-4c1b-8d7a-5b6e9f0a1c02',
    takerTokenId: '71321045679252212594626385532706912750332728571942532289631379312455583992563',
    makerTokenId: '52114319501245915516055106046884209969926127482827954674443846427813813222426',
    takerOutcome: 0,
    makerOutcome: 0,
    takerSide: 'BUY',
    makerSide: 'SELL',
    takerPricePips: 5_500,
    makerPricePips: 5_500,
    takerUsdc: 2_750_000,
    makerUsdc: 2_750_000,
    takerFee: 0,
    makerFee: 0,
    makerRemaining: 0,
    builder: hex(32, '0'),
    ...extra,
  };
}

/** A stored fill read back through a block, as the readers do; `f` gets its txHash. */
const roundTrip = (f: FillEvent): FillEvent => decodeFill(recordIn(encodeFillRecord(f), f.seq)!);

test('every kind, side and outcome pair round-trips', () => {
  let seq = 1;
  for (const kind of ['TRANSFER', 'MINT', 'MERGE'] as FillKindName[]) {
    for (const takerSide of ['BUY', 'SELL'] as SideName[]) {
      for (const makerSide of ['BUY', 'SELL'] as SideName[]) {
        for (const [takerOutcome, makerOutcome] of [[0, 0], [0, 1], [1, 0], [1, 1]] as const) {
          const f = fill(seq++, { kind, takerSide, makerSide, takerOutcome, makerOutcome });
          assert.deepEqual(roundTrip(f), f, `${kind} ${takerSide}/${makerSide} ${takerOutcome}/${makerOutcome}`);
        }
      }
    }
  }
});

test('edge values round-trip in every number and string field', () => {
  const MAX = Number.MAX_SAFE_INTEGER;
  const numbers = { ts: 0, size: MAX, takerPricePips: 1, makerPricePips: 9_999, takerUsdc: MAX, makerUsdc: 0, takerFee: MAX, makerFee: 1, makerRemaining: MAX };
  const f = fill(MAX, { ...numbers, tradeId: '0x' + 'f'.repeat(64) });
  assert.deepEqual(roundTrip(f), f, 'largest seq and amounts');
  const strings: Partial<FillEvent>[] = [
    { builder: '' },
    { builder: '0x' },
    { takerOrderId: '0xabc' }, // odd length: kept as text
    { makerOrderId: '0xABCDEF' }, // upper case: kept as text
    { conditionId: 'not hex at all' },
    { takerOwner: 'ünïcödé', makerOwner: '鍵-🔑' },
    { takerTokenId: '0', makerTokenId: '1'.repeat(78) },
    { takerWallet: '0x' + 'e'.repeat(131_070) }, // 65,535 bytes as hex: the largest length a string has
    { makerOwner: 'x'.repeat(65_535) },
  ];
  for (const [i, extra] of strings.entries()) {
    const g = fill(100 + i, extra);
    assert.deepEqual(roundTrip(g), g, JSON.stringify(extra).slice(0, 60));
  }
});

test('a record is as long as its layout: 149-byte head, then tag, u16 length and bytes per string', () => {
  const f = fill(42, { kind: 'MINT', takerSide: 'SELL', makerOutcome: 1 });
  const block = encodeFillRecord(f);
  const [record, ...more] = [...blockRecords(block)];
  assert.equal(more.length, 0);
  // Hex strings as the bytes they spell, other strings as UTF-8; three bytes of tag and length each.
  const strings = [32, 32, 32, 20, 20, 36, 36, 77, 77, 32];
  const expected = 149 + strings.reduce((n, s) => n + 3 + s, 0);
  assert.equal(record.length, expected);
  assert.equal(block.readUInt32LE(0), expected, 'the slot header holds the length');
  assert.equal(block.readUInt32LE(4), 0);
  assert.equal(block.length, SLOT_HEADER + Math.ceil(expected / 8) * 8, 'the slot is padded to 8 bytes');
  assert.ok(block.subarray(SLOT_HEADER + expected).every((b) => b === 0), 'with zeros');
  assert.ok(fillRecordBound(f) >= expected);
  // Fields where the layout puts them.
  assert.equal('0x' + record.toString('hex', 0, 32), f.tradeId);
  assert.equal('0x' + record.toString('hex', 32, 64), f.txHash);
  assert.equal(record.readDoubleLE(64), 42);
  assert.equal(fillSeqOf(record), 42);
  assert.equal(record.readDoubleLE(80), f.size);
  assert.deepEqual([...record.subarray(144, 149)], [1, 0, 1, 1, 1], 'kind MINT, outcomes 0/1, sides SELL/SELL');
  assert.deepEqual([record[149], record.readUInt16LE(150)], [1, 32], 'the condition id: hex tag, 32 bytes');
  assert.equal('0x' + record.toString('hex', 152, 184), f.conditionId);
});

test('the aligned and the unaligned encoder write the same record', () => {
  const f = fill(7, { kind: 'MERGE', takerFee: 12_345, makerRemaining: 990_000 });
  const slab = Buffer.allocUnsafeSlow(2 * 4096); // 8-byte aligned, as the writer's slabs
  const aligned = encodeFill(f, slab, 16) - 16;
  const unaligned = encodeFill(f, slab, 4096 + 3) - (4096 + 3);
  assert.equal(aligned, unaligned);
  assert.deepEqual(slab.subarray(4096 + 3, 4096 + 3 + unaligned), slab.subarray(16, 16 + aligned));
  assert.deepEqual({ ...decodeFill(slab.subarray(16, 16 + aligned)), txHash: f.txHash }, { ...f, txHash: f.txHash }, 'the txHash stays zero until sealed');
  assert.throws(() => encodeFill({ ...f, tradeId: '0x1234' }, slab, 0), /trade id 0x1234 is not 0x \+ 64 hex/);
});

/** A fills table in memory: blocks under the seq of their first fill, read like the LMDB one. */
function table(blocks: FillEvent[][]): FillsTable {
  const map = new Map<number, Buffer>();
  for (const fills of blocks) {
    const slab = Buffer.alloc(fills.reduce((n, f) => n + SLOT_HEADER + fillRecordBound(f) + 8, 0));
    let end = 0;
    for (const f of fills) end = writeSlot(f, slab, end);
    map.set(fills[0].seq, slab.subarray(0, end));
  }
  const keys = [...map.keys()].sort((a, b) => a - b);
  const select = (o: { start?: number; reverse?: boolean; limit?: number }) => {
    const from = o.start ?? (o.reverse ? Infinity : -Infinity);
    const picked = o.reverse ? keys.filter((k) => k <= from).reverse() : keys.filter((k) => k >= from);
    return picked.slice(0, o.limit ?? picked.length);
  };
  return {
    get: (k) => map.get(k),
    getKeys: select,
    getRange: (o) => select(o).map((key) => ({ key, value: map.get(key)! })),
  };
}

test('fills are found by seq in their block, and read in order from any seq', () => {
  const a = [10, 11, 13].map((s) => fill(s));
  const b = [20, 21].map((s) => fill(s, { kind: 'MINT' }));
  const fills = table([a, b]);
  for (const f of [...a, ...b]) assert.deepEqual({ ...readFill(fills, f.seq)!, txHash: '' }, f, `seq ${f.seq}`);
  for (const missing of [1, 9, 12, 14, 19, 22]) assert.equal(readFill(fills, missing), undefined, `seq ${missing} is not a fill`);
  assert.deepEqual([...readFillsFrom(fills, 11)].map((f) => f.seq), [11, 13, 20, 21], 'from the middle of a block');
  assert.deepEqual([...readFillsFrom(fills, 14)].map((f) => f.seq), [20, 21], 'from a gap');
  assert.deepEqual([...readFillsFrom(fills)].map((f) => f.seq), [10, 11, 13, 20, 21]);
});

test('a damaged record is refused rather than read as another fill', () => {
  const record = Buffer.from([...blockRecords(encodeFillRecord(fill(5)))][0]);
  const damage = (edit: (b: Buffer) => Buffer | void) => {
    const b = Buffer.from(record);
    return edit(b) ?? b;
  };
  const cases: [string, Buffer][] = [
    ['one byte short', record.subarray(0, record.length - 1)],
    ['one byte long', Buffer.concat([record, Buffer.alloc(1)])],
    ['shorter than the head', record.subarray(0, 100)],
    ['empty', Buffer.alloc(0)],
    ['kind 3', damage((b) => void (b[144] = 3))],
    ['taker outcome 2', damage((b) => void (b[145] = 2))],
    ['maker side 2', damage((b) => void (b[148] = 2))],
    ['string tag 2', damage((b) => void (b[149] = 2))],
    ['a string length past the end', damage((b) => void b.writeUInt16LE(0xffff, 150))],
    ['a string one byte shorter', damage((b) => void b.writeUInt16LE(31, 150))],
  ];
  for (const [name, bad] of cases) assert.throws(() => decodeFill(bad), /^Error: fill record of \d+ bytes is damaged/, name);

  // A slot header whose length is wrong hands the decoder a record with the wrong end: refused too.
  const block = encodeFillRecord(fill(6));
  block.writeUInt32LE(block.readUInt32LE(0) + 1, 0);
  const fills: FillsTable = { get: () => block, getKeys: () => [6], getRange: () => [{ key: 6, value: block }] };
  assert.throws(() => readFill(fills, 6), /damaged/);
  assert.throws(() => [...readFillsFrom(fills, 6)], /damaged/);
});

test('a deferred fill keeps its flag in the kind byte; other fills have none', () => {
  for (const kind of ['TRANSFER', 'MINT', 'MERGE'] as FillKindName[]) {
    const f = fill(300, { kind, deferred: true });
    const back = roundTrip(f);
    assert.deepEqual(back, f, kind);
    assert.equal(back.deferred, true);
    const rec = recordIn(encodeFillRecord(f), f.seq)!;
    assert.equal(rec[144], 0x80 | ['TRANSFER', 'MINT', 'MERGE'].indexOf(kind), 'the flag is the kind byte\'s high bit');
    assert.equal('deferred' in roundTrip(fill(301, { kind })), false, 'absent, not false, when not deferred');
  }
  const damagedKind = Buffer.from(recordIn(encodeFillRecord(fill(302, { deferred: true })), 302)!);
  damagedKind[144] = 0x83;
  assert.throws(() => decodeFill(damagedKind), /damaged/);
});
