/**
 * A wallet's fills for GET /data/trades come from the wallet-trades projection's rows, both roles merged
 * in seq order, a self-trade once, queued (not yet committed) view writes included.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FillEvent } from '../../src/domain/events.ts';
import { JournalWriter } from '../../src/journal/writer.ts';
import { ViewStore } from '../../src/projections/projector.ts';
import { buildProjections } from '../../src/projections/registry.ts';
import { MarketDataStore } from '../../src/projections/market-data.ts';
import { recentMarketFills, walletFillSeqs, walletFills } from '../../src/queries/fills.ts';
import { tempStore } from '../fixtures/engine-harness.ts';

let env: ReturnType<typeof tempStore>;
before(() => {
  env = tempStore('pm-fills-');
});
after(async () => {
  await env.cleanup();
});

const A = '0x' + 'a'.repeat(40);
const B = '0x' + 'b'.repeat(40);
const C = '0x' + 'c'.repeat(40);
const CID = '0x' + '1'.repeat(64);

function fill(taker: string, maker: string, i: number): FillEvent {
  return {
    type: 'fill', seq: 0, ts: 0, tradeId: '', txHash: '', conditionId: CID, kind: 'TRANSFER', size: 1_000_000,
    takerOrderId: '0x' + i.toString(16).padStart(64, '0'), makerOrderId: '0x' + (1000 + i).toString(16).padStart(64, '0'),
    takerWallet: taker, makerWallet: maker, takerOwner: 'k1', makerOwner: 'k2', takerTokenId: '11', makerTokenId: '11',
    takerOutcome: 0, makerOutcome: 0, takerSide: 'BUY', makerSide: 'SELL', takerPricePips: 5000, makerPricePips: 5000,
    takerUsdc: 500_000, makerUsdc: 500_000, takerFee: 0, makerFee: 0, makerRemaining: 0, builder: '0x' + '0'.repeat(64),
  };
}

test('both roles merged by seq, a self-trade listed once, queued view rows included', async () => {
  const views = new ViewStore(env.store.views);
  const projections = buildProjections({ store: env.store, views, prices: new ViewStore(env.store.prices), marketData: new MarketDataStore(env.store) });
  const w = new JournalWriter(env.store, 0, () => 1_700_000_000_000);
  const evs = [fill(A, B, 1), fill(B, A, 2), fill(C, B, 3), fill(A, A, 4), fill(B, C, 5)].map((f) => w.append(f));
  await w.flush()!.committed;
  for (const e of evs) for (const p of projections) p.apply(e);
  // Nothing of the projection has committed yet: the overlay must answer.
  assert.deepEqual(walletFillSeqs(views, A), [1, 2, 4]);
  assert.deepEqual(walletFillSeqs(views, B), [1, 2, 3, 5]);
  assert.deepEqual(walletFillSeqs(views, C.toUpperCase().replace('0X', '0x')), [3, 5], 'wallets compare case-insensitively');
  assert.deepEqual(walletFillSeqs(views, '0x' + 'd'.repeat(40)), []);
  assert.deepEqual([...walletFills(env.store, views, A)], [evs[0], evs[1], evs[3]], 'the fills themselves, decoded');
  // Several wallets (a signer and its funders): the fills of any, merged by seq, one between two of them once.
  assert.deepEqual(walletFillSeqs(views, [A, C]), [1, 2, 3, 4, 5]);
  assert.deepEqual(walletFillSeqs(views, [C, '0x' + 'd'.repeat(40)]), [3, 5]);
  assert.deepEqual(walletFillSeqs(views, []), []);
});

test('deferred fills are listed at their own seq from the match on, once, whatever their trade became', async () => {
  const views = new ViewStore(env.store.views);
  const projections = buildProjections({ store: env.store, views, prices: new ViewStore(env.store.prices), marketData: new MarketDataStore(env.store) });
  const w = new JournalWriter(env.store, 100, () => 1_700_000_000_000);
  const D = '0x' + 'd'.repeat(40);
  const E = '0x' + 'e'.repeat(40);
  const deferred = (f: FillEvent): FillEvent => ({ ...f, deferred: true });
  const f1 = w.append(deferred(fill(D, E, 11)));
  const f2 = w.append(fill(D, E, 12));
  const f3 = w.append(deferred(fill(E, D, 13)));
  await w.flush()!.committed;
  const move = (f: FillEvent, status: 'MINED' | 'FAILED' | 'RETRYING') =>
    w.append({ type: 'trade', seq: 0, ts: 0, tradeId: f.tradeId, fillSeq: f.seq, status, conditionId: CID, takerWallet: f.takerWallet, makerWallet: f.makerWallet, takerOwner: 'k1', makerOwner: 'k2' });
  const moves = [move(f1, 'MINED'), move(f3, 'RETRYING'), move(f3, 'FAILED')];
  await w.flush()!.committed;
  for (const e of [f1, f2, f3, ...moves]) for (const p of projections) p.apply(e);
  // f1 also has trade rows (under its MINED move's seq): listed once, at its own seq; f3 FAILED is still D's trade.
  assert.deepEqual(walletFillSeqs(views, D), [f1.seq, f2.seq, f3.seq]);
  assert.deepEqual(walletFillSeqs(views, E), [f1.seq, f2.seq, f3.seq]);
  assert.deepEqual([...walletFills(env.store, views, D)].map((f) => [f.seq, f.deferred === true]), [[f1.seq, true], [f2.seq, false], [f3.seq, true]]);
});

test('a market\'s latest fills: newest first, bounded, committed rows and queued ones merged', async () => {
  const views = new ViewStore(env.store.views);
  const projections = buildProjections({ store: env.store, views, prices: new ViewStore(env.store.prices), marketData: new MarketDataStore(env.store) });
  const w = new JournalWriter(env.store, 200, () => 1_700_000_000_000);
  const M = '0x' + '7'.repeat(64);
  const inM = (i: number) => ({ ...fill(A, B, 300 + i), conditionId: M });
  const first = [1, 2, 3].map((i) => w.append(inM(i)));
  await w.flush()!.committed;
  for (const e of first) for (const p of projections) p.apply(e);
  await env.store.views.flushed;
  // Two more, applied but not committed: the overlay holds them.
  const later = [4, 5].map((i) => w.append(inM(i)));
  await w.flush()!.committed;
  for (const e of later) for (const p of projections) p.apply(e);
  assert.ok(views.queued > 0);
  assert.deepEqual(recentMarketFills(env.store, views, M, 4).map((f) => f.seq), [205, 204, 203, 202]);
  assert.deepEqual(recentMarketFills(env.store, views, M, 10).map((f) => f.takerOrderId), [5, 4, 3, 2, 1].map((i) => '0x' + (300 + i).toString(16).padStart(64, '0')));
  assert.deepEqual(recentMarketFills(env.store, views, '0x' + '8'.repeat(64), 10), []);
});
