/**
 * The notifications projection without the engine: each party of a fill is told (a self-trade twice), a
 * cancel is told with its order's fixed fields (not a FOK/FAK remainder), a resolution reaches every wallet
 * that took part in the market and no other; a wallet keeps at most its bound, oldest dropped first, with
 * ids that stay stable; re-applying an event adds nothing; a drop removes what it names, or everything.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FillEvent, JournalEvent, OrderRecord, OrderSignedParts, OrderStatusEvent } from '../../src/domain/events.ts';
import { openStore, type Store } from '../../src/journal/env.ts';
import { putOrderRecord } from '../../src/journal/orders.ts';
import { NotificationsProjection, dropNotifications } from '../../src/projections/notifications.ts';
import { ViewStore } from '../../src/projections/projector.ts';
import { walletNotifications } from '../../src/queries/notifications.ts';

const T = 1_000_000;
const CID = '0x' + 'c'.repeat(64);
const OTHER = '0x' + 'd'.repeat(64);
const YES = '111';
const NO = '222';
const TAKER = '0x' + '1'.repeat(40);
const MAKER = '0x' + '2'.repeat(40);
const BYSTANDER = '0x' + '3'.repeat(40);
const hex = (n: number) => '0x' + n.toString(16).padStart(64, '0');

function setup(bound?: number): { store: Store; views: ViewStore; p: NotificationsProjection } {
  const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-ntf-')), mapSize: 256 * 1024 ** 2 });
  const views = new ViewStore(store.views);
  return { store, views, p: new NotificationsProjection(views, store, bound) };
}

let seq = 100;
function fill(over: Partial<FillEvent> = {}): FillEvent {
  seq++;
  return {
    type: 'fill',
    seq,
    ts: seq * 1000,
    tradeId: hex(seq),
    txHash: hex(seq + 1_000_000),
    conditionId: CID,
    kind: 'TRANSFER',
    size: 10 * T,
    takerOrderId: hex(1),
    makerOrderId: hex(2),
    takerWallet: TAKER,
    makerWallet: MAKER,
    takerOwner: 'taker-key',
    makerOwner: 'maker-key',
    takerTokenId: YES,
    makerTokenId: YES,
    takerOutcome: 0,
    makerOutcome: 0,
    takerSide: 'BUY',
    makerSide: 'SELL',
    takerPricePips: 6000,
    makerPricePips: 6000,
    takerUsdc: 6 * T,
    makerUsdc: 6 * T,
    takerFee: 12_000,
    makerFee: 0,
    makerRemaining: 0,
    builder: '0x' + '0'.repeat(64),
    ...over,
  };
}

function status(over: Partial<OrderStatusEvent>): OrderStatusEvent {
  seq++;
  return { type: 'status', seq, ts: seq * 1000, orderId: hex(2), wallet: MAKER, conditionId: CID, status: 'CANCELED', reason: 'USER', remaining: 5 * T, matched: 10 * T, ...over };
}

const summary = (views: ViewStore, wallet: string) => walletNotifications(views, wallet).map((n) => [n.id, n.type, (n.payload as { order_id?: string }).order_id ?? n.payload.market]);

test('a fill is told to each party from its own side; a self-trade twice', () => {
  const { views, p } = setup();
  const f = fill();
  p.apply(f);
  const [t] = walletNotifications(views, TAKER);
  assert.deepEqual(t, {
    id: '0',
    type: 2,
    owner: TAKER,
    payload: { order_id: hex(1), trade_id: f.tradeId, market: CID, asset_id: YES, side: 'BUY', price: '0.6', size: '10', fee: '0.012', trader_side: 'TAKER', transaction_hash: f.txHash, timestamp: f.ts / 1000 },
  });
  const [m] = walletNotifications(views, MAKER);
  assert.deepEqual([m.owner, m.payload], [MAKER, { ...t.payload, order_id: hex(2), side: 'SELL', fee: '0', trader_side: 'MAKER' }]);
  p.apply(fill({ makerWallet: TAKER }));
  assert.deepEqual(
    walletNotifications(views, TAKER).map((n) => [n.id, (n.payload as { trader_side: string }).trader_side]),
    [['0', 'TAKER'], ['1', 'TAKER'], ['2', 'MAKER']],
  );
});

test('a cancel is told with the order\'s token, side, price and size; a FOK/FAK remainder and a MATCHED order are not', async () => {
  const { store, views, p } = setup();
  const rec = { orderId: hex(2), seq: 1, wallet: MAKER, tokenId: NO, side: 'BUY', pricePips: 4000, sizeUnits: 15 * T, status: 'LIVE', sizeMatched: 0, tradeIds: [], fillSeqs: [], createdAt: 0, updatedAt: 0 } as unknown as OrderRecord & OrderSignedParts;
  await putOrderRecord(store, rec);
  const s = status({ reason: 'EXPIRED' });
  p.apply(s);
  p.apply(status({ reason: 'UNFILLED' }));
  p.apply(status({ status: 'MATCHED', reason: 'FILLED', remaining: 0 }));
  const told = walletNotifications(views, MAKER);
  assert.equal(told.length, 1);
  assert.deepEqual(told[0].payload, {
    order_id: hex(2),
    market: CID,
    asset_id: NO,
    side: 'BUY',
    price: '0.4',
    original_size: '15',
    size_matched: '10',
    size_canceled: '5',
    status: 'CANCELED',
    reason: 'EXPIRED',
    timestamp: s.ts / 1000,
  });
});

test('a resolution reaches every wallet that took part in the market: orders, fills, splits; no one else', () => {
  const { views, p } = setup();
  const ordered = '0x' + '4'.repeat(40);
  const splitter = '0x' + '5'.repeat(40);
  p.apply(fill());
  p.apply({ type: 'order', seq: ++seq, ts: seq * 1000, wallet: ordered, conditionId: CID } as unknown as JournalEvent);
  p.apply({ type: 'split', seq: ++seq, ts: seq * 1000, wallet: splitter, conditionId: CID, tokenIds: [YES, NO], amount: T });
  p.apply({ type: 'split', seq: ++seq, ts: seq * 1000, wallet: BYSTANDER, conditionId: OTHER, tokenIds: ['7', '8'], amount: T });
  const r = { type: 'resolve' as const, seq: ++seq, ts: seq * 1000, conditionId: CID, winningOutcome: 1 as const, tokenIds: [YES, NO] as [string, string] };
  p.apply(r);
  for (const w of [TAKER, MAKER, ordered, splitter]) {
    const last = walletNotifications(views, w).at(-1)!;
    assert.deepEqual([last.type, last.payload], [4, { market: CID, winning_outcome_index: 1, winning_asset_id: NO, timestamp: r.ts / 1000 }], w);
  }
  assert.deepEqual(walletNotifications(views, BYSTANDER), [], 'a wallet of another market');
});

test('a wallet keeps at most its bound: the oldest goes, the ids of the others stay', () => {
  const { views, p } = setup(3);
  const fills = [1, 2, 3, 4, 5].map(() => fill());
  for (const f of fills) p.apply(f);
  assert.deepEqual(
    walletNotifications(views, TAKER).map((n) => [n.id, (n.payload as { trade_id: string }).trade_id]),
    [['2', fills[2].tradeId], ['3', fills[3].tradeId], ['4', fills[4].tradeId]],
  );
});

test('an event applied again adds nothing (a replay after a crash between the views and the cursor)', () => {
  const { views, p } = setup();
  const f = fill();
  p.apply(f);
  p.apply(f);
  p.apply(status({ seq: f.seq, wallet: TAKER }));
  assert.deepEqual(summary(views, TAKER), [['0', 2, hex(1)]]);
});

test('a drop removes the ids it names (unknown ones are ignored), or every notification; new ones carry on after', () => {
  const { views, p } = setup();
  for (let i = 0; i < 4; i++) p.apply(fill());
  assert.equal(dropNotifications(views, TAKER, [1, 3, 99]), 2);
  assert.deepEqual(summary(views, TAKER).map((x) => x[0]), ['0', '2']);
  assert.equal(dropNotifications(views, TAKER, undefined), 2);
  assert.deepEqual(summary(views, TAKER), []);
  p.apply(fill());
  assert.deepEqual(summary(views, TAKER).map((x) => x[0]), ['4'], 'ids are never reused');
  assert.equal(summary(views, MAKER).length, 5, "another wallet's are untouched");
});
