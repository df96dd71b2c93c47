/**
 * The pieces the journal's binary records share (journal/codecs/hex.ts): hex text as the bytes it spells, the
 * bounded memo of recurring texts' bytes, and the slab records are carved from.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecordSlab, RecurringBytes, copyBytes, writeHexBytes } from '../../../src/journal/codecs/hex.ts';

test('hex text is written as its bytes only when it is "0x" + lowercase hex of even length', () => {
  const b = new Uint8Array(8);
  assert.equal(writeHexBytes(b, 1, '0x00ff7a'), 3);
  assert.deepEqual([...b.subarray(0, 5)], [0, 0x00, 0xff, 0x7a, 0]);
  assert.equal(writeHexBytes(b, 0, '0x'), 0);
  // Each would read back as a different text, so none is written as bytes.
  for (const s of ['0xFF', '0xf', '00ff', '0X00', '', '0', '0x0g', '0x0\u0130', '0x\u0660\u0661']) assert.equal(writeHexBytes(b, 0, s), -1, s);
});

test('recurring bytes are kept as copies, and the memo empties when it is full', () => {
  const memo = new RecurringBytes(2);
  const src = new Uint8Array([1, 2, 3]);
  memo.remember('a', src);
  src[0] = 9;
  assert.deepEqual([...memo.get('a')!], [1, 2, 3], 'a copy: the caller reuses its buffer');
  memo.remember('b', new Uint8Array([4]));
  memo.remember('c', new Uint8Array([5]));
  assert.equal(memo.get('a'), undefined, 'full: cleared before the third');
  assert.deepEqual([...memo.get('c')!], [5]);
  const out = new Uint8Array(6);
  assert.equal(copyBytes(out, 2, memo.get('c')!), 3);
  assert.equal(out[2], 5);
});

test('RecordSlab: records start 8-byte aligned, a record that might not fit starts a fresh slab, and no record is written over', () => {
  const slab = new RecordSlab(64);
  const records: Buffer[] = [];
  for (let i = 0; i < 20; i++) {
    const at = slab.start(24);
    assert.equal(at % 8, 0);
    const len = 9 + (i % 13);
    slab.buf.fill(i, at, at + len);
    slab.f64[at >>> 3] = i + 0.5; // the float64 view writes the same bytes
    records.push(slab.finish(at, at + len));
  }
  records.forEach((r, i) => {
    assert.equal(r.readDoubleLE(0), i + 0.5, `record ${i} keeps its number`);
    assert.ok(r.subarray(8).every((b) => b === i), `record ${i} keeps its bytes`);
  });
  assert.ok(new Set(records.map((r) => r.buffer)).size > 1, 'more than one slab was used');
});
