/**
 * The checkpoint file and directory (journal/checkpoints/checkpoints.ts): what is written reads back the same; a flipped
 * byte anywhere, a truncated file, another format or a file renamed to another seq is refused with the file
 * named; writing is atomic (no half-written file under a checkpoint's name, leftovers of a crash removed);
 * listing, named checkpoints, the automatic ones' pruning, export and import.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { AUTO_NAME, CheckpointError, CheckpointStore, decodeCheckpoint, encodeCheckpoint, type CheckpointState } from '../../../src/journal/checkpoints/checkpoints.ts';

const fill = {
  type: 'fill', seq: 7, ts: 1_700_000_000_000, tradeId: '0x' + '1'.repeat(64), txHash: '0x' + '2'.repeat(64), conditionId: '0x' + 'c'.repeat(64),
  takerOrderId: '0x' + '3'.repeat(64), makerOrderId: '0x' + '4'.repeat(64), takerWallet: '0x' + 'a'.repeat(40), makerWallet: '0x' + 'b'.repeat(40),
  takerOwner: 'o1', makerOwner: 'o2', takerTokenId: '11', makerTokenId: '12', builder: '0x' + '0'.repeat(64), kind: 'TRANSFER', takerSide: 'BUY',
  makerSide: 'SELL', takerOutcome: 0, makerOutcome: 0, size: 5_000_000, takerPricePips: 5000, makerPricePips: 5000, takerUsdc: 2_500_000,
  makerUsdc: 2_500_000, takerFee: 0, makerFee: 0, makerRemaining: 0, deferred: true,
} as const;

function state(seq: number): CheckpointState {
  return {
    seq,
    netDeposits: 1_000_000_000,
    balances: [['0x' + 'a'.repeat(40), 'USDC', 750_000_000], ['0x' + 'b'.repeat(40), '11', 5_000_000]],
    markets: [['0x' + 'c'.repeat(64), -1]],
    open: [[3, 4_000_000, Buffer.from([1, 2, 3, 4, 250])], [5, 1_000_000, { type: 'order', orderId: '0x' + '9'.repeat(64), seq: 5 }]],
    settling: [['MATCHED', { ...fill } as never]],
    lastTrades: [['11', 5000, 'BUY']],
  };
}

const header = (seq: number, name = AUTO_NAME) => ({ name, seq, stateHash: 'ab'.repeat(32), store: 'cd'.repeat(24), createdAt: 1_700_000_000_123, events: seq });

function tempDir(t: { after: (f: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'pm-ckpt-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('a checkpoint reads back exactly what was written, bytes included', () => {
  const bytes = encodeCheckpoint(header(9), state(9));
  const c = decodeCheckpoint(bytes, 'mem');
  assert.deepEqual(c.state, state(9));
  assert.equal(c.header.seq, 9);
  assert.equal(c.header.stateHash, 'ab'.repeat(32));
  assert.ok(Buffer.isBuffer(c.state.open[0]![2]), 'an order record stays bytes');
  assert.throws(() => encodeCheckpoint(header(9), state(8)), CheckpointError, 'header and state must name the same seq');
  assert.throws(() => encodeCheckpoint(header(9, 'Bad Name'), state(9)), /checkpoint name/);
});

test('a flipped byte anywhere in the file, a truncated file and another format are refused, naming the file', () => {
  const bytes = encodeCheckpoint(header(9), state(9));
  // Every byte of the file: magic, header length, header, state and the digest itself.
  for (let i = 0; i < bytes.length; i++) {
    const bad = Buffer.from(bytes);
    bad[i]! ^= 0x10;
    assert.throws(() => decodeCheckpoint(bad, 'f.ckpt'), (e: Error) => e instanceof CheckpointError && e.message.startsWith('f.ckpt: '), `byte ${i}`);
  }
  assert.throws(() => decodeCheckpoint(bytes.subarray(0, bytes.length - 1), 'f.ckpt'), CheckpointError);
  assert.throws(() => decodeCheckpoint(bytes.subarray(0, 20), 'f.ckpt'), /truncated|not a checkpoint/);
  assert.throws(() => decodeCheckpoint(Buffer.alloc(0), 'f.ckpt'), /not a checkpoint file/);
});

test('the directory: written atomically, listed newest first, a renamed file refused, crash leftovers removed', (t) => {
  const dir = tempDir(t);
  const cs = new CheckpointStore(dir);
  cs.write(header(10), state(10));
  cs.write(header(30), state(30));
  cs.write(header(20, 'before-test'), state(20));
  assert.deepEqual(cs.list().map((e) => [e.seq, e.name]), [[30, 'auto'], [20, 'before-test'], [10, 'auto']]);
  assert.deepEqual(readdirSync(dir).filter((f) => !f.endsWith('.ckpt')), [], 'no temporary file is left behind');
  assert.deepEqual(cs.load(cs.list()[1]!).state, state(20));
  assert.equal(cs.header(cs.list()[0]!).seq, 30);

  // A file moved under another seq's name is not that checkpoint.
  renameSync(join(dir, '000000000010.auto.ckpt'), join(dir, '000000000011.auto.ckpt'));
  const moved = cs.list().find((e) => e.seq === 11)!;
  assert.throws(() => cs.load(moved), /its header says auto at seq 10/);

  // What a crash in the middle of a write leaves (a temporary file) is never listed and goes at the next open.
  writeFileSync(join(dir, '.tmp-000000000040.auto.ckpt-1234abcd'), Buffer.from('half a checkpoint'));
  assert.equal(cs.list().some((e) => e.seq === 40), false);
  new CheckpointStore(dir);
  assert.equal(existsSync(join(dir, '.tmp-000000000040.auto.ckpt-1234abcd')), false);
});

test('automatic checkpoints beyond `keep` are removed, named ones stay; remove, export and import', (t) => {
  const dir = tempDir(t);
  const cs = new CheckpointStore(dir);
  for (const seq of [10, 20, 30, 40]) cs.write(header(seq), state(seq));
  cs.write(header(15, 'fixture'), state(15));
  const gone = cs.pruneAuto(2);
  assert.deepEqual(gone.map((e) => e.seq), [20, 10]);
  assert.deepEqual(cs.list().map((e) => `${e.seq}.${e.name}`), ['40.auto', '30.auto', '15.fixture']);

  const file = join(dir, 'exported.bin');
  cs.exportTo(cs.list()[2]!, file);
  assert.deepEqual(readFileSync(file), readFileSync(cs.list()[2]!.file), 'an export is the file itself');
  const other = new CheckpointStore(join(dir, 'other'));
  const imported = other.importFrom(file, 'renamed');
  assert.equal(imported.name, 'renamed');
  assert.deepEqual(other.load(imported).state, state(15));
  assert.equal(other.load(imported).header.name, 'renamed');

  const damaged = Buffer.from(readFileSync(file));
  damaged[damaged.length - 40]! ^= 1;
  writeFileSync(file, damaged);
  assert.throws(() => other.importFrom(file), /digest mismatch/, 'a damaged file is not imported');
  assert.equal(cs.remove('fixture'), 1);
  assert.equal(cs.list().some((e) => e.name === 'fixture'), false);
});
