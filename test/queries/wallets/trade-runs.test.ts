/**
 * The committed trade rows kept by range (queries/wallets/trade-runs.ts), on a real store with small
 * limits, against the range read straight from LMDB: a cursor lists every row at or below the committed
 * cursor newest first whether the run holds it, reads more of it, or streams past its cap; a run brought
 * up by a few rows, started over after many, or asked for an earlier cursor stays exact; trimming keeps
 * answers exact; condition ids are interned and named back; RunRows grows column by column.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../../src/journal/env.ts';
import { TAKER_ROLE, walletViewKeys, type Key } from '../../../src/journal/keys.ts';
import type { TradeEntry } from '../../../src/projections/wallets.ts';
import { RunRows, TradeRuns, type RunLimits } from '../../../src/queries/wallets/trade-runs.ts';

const LIMITS: RunLimits = { firstRead: 4, refreshRows: 8, rowsCap: 50, readAhead: 16, rowsLimit: 120 };
const cidOf = (seq: number) => '0x' + (seq % 3).toString(16).padStart(64, '0');

async function fixture() {
  const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-runs-')) });
  const wallet = walletViewKeys.tradesByWalletPrefix('0x' + '1'.repeat(40), TAKER_ROLE);
  const all = walletViewKeys.tradesAllPrefix(TAKER_ROLE);
  /** Writes rows (from, to] under both ranges: the wallet's carry a condition id, the global ones none. */
  const write = async (from: number, to: number) => {
    for (let seq = from + 1; seq <= to; seq++) {
      const e: TradeEntry = [seq % 2, seq * 10, seq * 7];
      store.views.put([...wallet, seq], [...e, cidOf(seq)]);
      store.views.put([...all, seq], e);
    }
    await store.views.flushed;
  };
  /** What a range holds at or below `cursor`, newest first, read straight from LMDB. */
  const oracle = (prefix: Key, cursor: number) =>
    Array.from(store.views.getRange({ start: [...prefix, cursor], end: prefix, reverse: true }), (x) => (x.key as Key)[prefix.length] as number);
  return { store, wallet, all, write, oracle };
}

/** The first `n` rows a cursor lists (all of them by default): seq, side, size, usdc, condition id. */
function walk(runs: TradeRuns, prefix: Key, cursor: number, want: number, n = Infinity) {
  const c = runs.cursor(prefix, cursor, TAKER_ROLE, want);
  const out: { seq: number; side: number; size: number; usdc: number; cid: string | undefined }[] = [];
  try {
    for (c.advance(); c.seq >= 0 && out.length < n; c.advance()) out.push({ seq: c.seq, side: c.side, size: c.size, usdc: c.usdc, cid: runs.marketName(c.market) });
  } finally {
    c.close();
  }
  return out;
}

const seqs = (rows: { seq: number }[]) => rows.map((r) => r.seq);

test('a cursor lists the range newest first: held rows, rows read on demand, and rows streamed past the cap', async () => {
  const { store, wallet, all, write, oracle } = await fixture();
  await write(0, 100);
  const runs = new TradeRuns(store, LIMITS);
  const rows = walk(runs, wallet, 100, 10);
  assert.deepEqual(seqs(rows), oracle(wallet, 100), 'every row, past the 50-row cap too');
  assert.deepEqual(rows[0], { seq: 100, side: 0, size: 1000, usdc: 700, cid: cidOf(100) }, 'the columns of a row, its condition id named back');
  assert.deepEqual(seqs(walk(runs, wallet, 100, 10)), oracle(wallet, 100), 'again, from the kept run');
  assert.deepEqual(seqs(walk(runs, all, 100, 3, 7)), oracle(all, 100).slice(0, 7), 'a page of 7');
  assert.ok(walk(runs, all, 100, 3, 1).every((r) => r.cid === undefined), 'global entries carry no condition id');
  assert.deepEqual(seqs(walk(runs, wallet, 60, 5)), oracle(wallet, 60), 'a lower cursor: the run is read again from there');
  await store.close();
});

test('a run brought up by a few rows, started over after many, or asked for an earlier cursor stays exact', async () => {
  const { store, wallet, write, oracle } = await fixture();
  await write(0, 40);
  const runs = new TradeRuns(store, LIMITS);
  assert.deepEqual(seqs(walk(runs, wallet, 40, 5, 20)), oracle(wallet, 40).slice(0, 20));
  await write(40, 45);
  assert.deepEqual(seqs(walk(runs, wallet, 45, 5)), oracle(wallet, 45), '5 new rows: brought up');
  await write(45, 70);
  assert.deepEqual(seqs(walk(runs, wallet, 70, 5)), oracle(wallet, 70), '25 new rows (more than refreshRows): started over');
  assert.deepEqual(seqs(walk(runs, wallet, 30, 5)), oracle(wallet, 30), 'the cursor moved back: read again');
  assert.deepEqual(seqs(walk(runs, wallet, 70, 5)), oracle(wallet, 70));
  await store.close();
});

test('trimming runs over the row limit keeps every answer exact', async () => {
  const { store, wallet, all, write, oracle } = await fixture();
  await write(0, 90);
  const runs = new TradeRuns(store, LIMITS);
  for (let round = 0; round < 3; round++) {
    for (const prefix of [wallet, all]) {
      runs.trim();
      assert.deepEqual(seqs(walk(runs, prefix, 90 - round * 10, 60)), oracle(prefix, 90 - round * 10), `round ${round}`);
    }
  }
  await store.close();
});

test('RunRows grows column by column and copies a row across', () => {
  const rows = new RunRows();
  for (let i = 0; i < 200; i++) rows.push(i, i % 2, i * 3, i * 5, i % 4 === 0 ? -1 : i);
  assert.equal(rows.n, 200);
  assert.ok(rows.seq.length >= 200);
  assert.deepEqual([rows.seq[199], rows.side[199], rows.size[199], rows.usdc[199], rows.market[199]], [199, 1, 597, 995, 199]);
  assert.deepEqual([rows.seq[64], rows.market[64]], [64, -1]);
  const other = new RunRows();
  other.copyFrom(rows, 7);
  assert.deepEqual([other.n, other.seq[0], other.side[0], other.size[0], other.usdc[0], other.market[0]], [1, 7, 1, 21, 35, 7]);
});
