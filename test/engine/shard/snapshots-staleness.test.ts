/**
 * The published books' bookkeeping on its own (test/engine/snapshots.test.ts drives it through the engine
 * and real shards): which RESULTs make a market's body stale, which publications make it current again,
 * refreshes shared while nothing new was applied, and listeners.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MatchCode } from '../../../src/engine/book/api.ts';
import { Lifecycle } from '../../../src/engine/lifecycle.ts';
import { MarketTable } from '../../../src/engine/markets/market-table.ts';
import { Ledger } from '../../../src/engine/ledger/ledger.ts';
import { OP_CANCEL, OP_EXPIRE, OP_PLACE, OP_SNAPSHOT, type CanceledRecord, type ResultRecord, type SnapshotMessage } from '../../../src/engine/shard/protocol.ts';
import { Snapshots } from '../../../src/engine/shard/snapshots.ts';
import { silentLogger } from '../../../src/runtime/log.ts';

function setup() {
  const ledger = new Ledger();
  const markets = new MarketTable(ledger, 1);
  for (const n of [1, 2]) {
    markets.add({ conditionId: `c${n}`, marketId: n, tokenIds: [`${n}a`, `${n}b`], tickPips: 100, minSizeUnits: 0, makerFeeBps: 0, takerFeeBps: 0, acceptingOrders: true, negRisk: false, resolved: -1 });
  }
  const sent: Array<{ shard: number; marketId: number; reqId: number }> = [];
  let reqId = 100;
  const link = { snapshot: (shard: number, marketId: number) => (sent.push({ shard, marketId, reqId: ++reqId }), reqId) };
  const life = new Lifecycle(silentLogger);
  const snaps = new Snapshots(markets, link, life, silentLogger);
  return { snaps, sent, life };
}

const res = (cmdOp: number, marketId: number, code: number = MatchCode.OK): ResultRecord => ({ cmdOp, id: 1, code, filledUnits: 0, restingUnits: 0, marketId });
const pub = (resultSeq: number, tokens: string[], complete: boolean, reqId?: number): SnapshotMessage => ({
  type: 'snapshots',
  items: tokens.map((tokenId) => ({ tokenId, version: resultSeq, json: `{"asset_id":"${tokenId}"}` })),
  resultSeq,
  complete,
  reqId,
});
const expired = (marketId: number) => ({ marketId, handle: 1, owner: 1, outcome: 0, side: 0, pricePips: 100, remainingUnits: 1, reason: 1 }) as CanceledRecord;

test('a RESULT that may change a book makes both its tokens stale until a publication reflecting it arrives', () => {
  const { snaps } = setup();
  assert.equal(snaps.stale('1a'), false, 'nothing applied yet');
  assert.equal(snaps.stale('unknown'), false);
  snaps.noteResult(0, res(OP_PLACE, 1), []); // result 1
  assert.deepEqual([snaps.stale('1a'), snaps.stale('1b'), snaps.stale('2a')], [true, true, false]);
  snaps.arrived(0, pub(0, ['1a', '1b'], false)); // built before result 1
  assert.equal(snaps.stale('1a'), true, 'an older publication does not cover it');
  snaps.arrived(0, pub(1, ['1a', '1b'], false));
  assert.equal(snaps.stale('1a'), false);
  assert.equal(snaps.get('1b')?.json, '{"asset_id":"1b"}');
  assert.equal(snaps.get('1b')?.version, 1);

  snaps.noteResult(0, res(OP_PLACE, 2), []); // result 2
  assert.equal(snaps.stale('2a'), true);
  snaps.arrived(0, pub(2, [], true));
  assert.equal(snaps.stale('2a'), false, 'a complete publication covers every market of its shard');
});

test('a cancel that found nothing, snapshots and stops change no book; an expiry changes the markets of its records', () => {
  const { snaps } = setup();
  snaps.noteResult(0, res(OP_CANCEL, 1, MatchCode.UNKNOWN_ORDER), []);
  snaps.noteResult(0, res(OP_SNAPSHOT, 1), []);
  assert.equal(snaps.stale('1a'), false);
  snaps.noteResult(0, res(OP_EXPIRE, 0), [expired(2)]); // result 3
  assert.deepEqual([snaps.stale('1a'), snaps.stale('2a')], [false, true]);
  snaps.arrived(0, pub(2, ['2a', '2b'], false));
  assert.equal(snaps.stale('2a'), true, 'the RESULT count includes the two that changed nothing');
  snaps.arrived(0, pub(3, ['2a', '2b'], false));
  assert.equal(snaps.stale('2a'), false);
});

test('a refresh resolves with the answer to its request; readers share one while nothing new was applied', async () => {
  const { snaps, sent, life } = setup();
  snaps.noteResult(0, res(OP_PLACE, 1), []);
  const a = snaps.refresh('c1');
  const b = snaps.refresh('c2');
  assert.equal(a, b, 'same shard, no RESULT since: one request');
  assert.deepEqual(sent, [{ shard: 0, marketId: 1, reqId: 101 }]);
  let done = false;
  void a.then(() => (done = true));
  snaps.arrived(0, pub(1, ['1a', '1b'], true));
  await Promise.resolve();
  assert.equal(done, false, 'a publication that does not answer it does not resolve it');
  snaps.arrived(0, pub(1, [], true, 101));
  await a;
  snaps.noteResult(0, res(OP_PLACE, 1), []);
  const c = snaps.refresh('c1');
  assert.notEqual(c, a);
  assert.equal(sent.length, 2, 'a RESULT applied since the last request needs a new one');
  life.halt(new Error('stop'));
  snaps.releaseWaiters();
  await c;
  await snaps.refresh('c1');
  await snaps.refresh('unknown');
  assert.equal(sent.length, 2, 'nothing is asked of a halted engine or for an unknown market');
});

test('listeners get the token ids of each publication that has items; one failing does not stop the others', () => {
  const { snaps } = setup();
  const got: string[][] = [];
  snaps.onSnapshots(() => {
    throw new Error('listener bug');
  });
  snaps.onSnapshots((ids) => got.push([...ids]));
  snaps.arrived(0, pub(1, ['1a', '1b'], true));
  snaps.arrived(0, pub(1, [], true, 7));
  assert.deepEqual(got, [['1a', '1b']]);
});
