/**
 * The wallet projections on scripted journal events, with every expected number worked out by hand in
 * the comments (units: sizes 10^-6 token, prices and averages micro-USDC per token, money micro-USDC).
 * Also: applying an event twice changes nothing, trade rows land under the keys the queries walk, and
 * the change feed moves with every write.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FillEvent, JournalEvent } from '../../src/domain/events.ts';
import { walletViewKeys, type Key } from '../../src/journal/keys.ts';
import {
  WalletPositionsProjection,
  WalletTradesProjection,
  WalletViewChanges,
  applyBuy,
  applySell,
  emptyPosition,
  type MarketFacts,
  type PositionState,
  type ViewWriter,
} from '../../src/projections/wallets.ts';

/** A plain in-memory view store that copies values, as LMDB would. */
class MapViews implements ViewWriter {
  readonly m = new Map<string, { key: Key; value: unknown }>();
  get<T>(key: Key): T | undefined {
    const e = this.m.get(JSON.stringify(key));
    return e === undefined ? undefined : (structuredClone(e.value) as T);
  }
  put(key: Key, value: unknown): void {
    this.m.set(JSON.stringify(key), { key, value: structuredClone(value) });
  }
  snapshot(): string {
    return JSON.stringify([...this.m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  }
}

const U = 1_000_000; // units per token, micro-USDC per USDC
const CID = '0x' + 'c'.repeat(64);
const CID2 = '0x' + 'd'.repeat(64);
const A = '0x' + 'a'.repeat(40);
const B = '0x' + 'b'.repeat(40);

let seq = 0;
const ts = (s: number) => 1_700_000_000_000 + s * 1000;

/** A fill at journal seq `seq`: prices in pips, size in units; usdc per party = size x price. */
function fill(o: Partial<FillEvent> & { taker: string; maker: string; size: number; takerPricePips: number; makerPricePips: number }): FillEvent {
  const s = ++seq;
  const takerSide = o.takerSide ?? 'BUY';
  const makerSide = o.makerSide ?? (o.kind === 'MINT' ? 'BUY' : o.kind === 'MERGE' ? 'SELL' : takerSide === 'BUY' ? 'SELL' : 'BUY');
  return {
    type: 'fill',
    seq: s,
    ts: ts(s),
    tradeId: '0x' + s.toString(16).padStart(64, '0'),
    txHash: '0x' + s.toString(16).padStart(64, 'f'),
    conditionId: o.conditionId ?? CID,
    kind: o.kind ?? 'TRANSFER',
    size: o.size,
    takerOrderId: '0x01',
    makerOrderId: '0x02',
    takerWallet: o.taker,
    makerWallet: o.maker,
    takerOwner: 'k1',
    makerOwner: 'k2',
    takerTokenId: '1',
    makerTokenId: '2',
    takerOutcome: o.takerOutcome ?? 0,
    makerOutcome: o.makerOutcome ?? (o.kind === 'MINT' || o.kind === 'MERGE' ? 1 : (o.takerOutcome ?? 0)),
    takerSide,
    makerSide,
    takerPricePips: o.takerPricePips,
    makerPricePips: o.makerPricePips,
    takerUsdc: o.takerUsdc ?? (o.size * o.takerPricePips) / 10_000,
    makerUsdc: o.makerUsdc ?? (o.size * o.makerPricePips) / 10_000,
    takerFee: o.takerFee ?? 0,
    makerFee: o.makerFee ?? 0,
    makerRemaining: 0,
    builder: '0x' + '0'.repeat(64),
  };
}

const split = (type: 'split' | 'merge', wallet: string, amount: number, conditionId = CID): JournalEvent => {
  const s = ++seq;
  return { type, seq: s, ts: ts(s), wallet, conditionId, tokenIds: ['1', '2'], amount } as JournalEvent;
};
const resolve = (winningOutcome: 0 | 1, conditionId = CID): JournalEvent => {
  const s = ++seq;
  return { type: 'resolve', seq: s, ts: ts(s), conditionId, winningOutcome, tokenIds: ['1', '2'] };
};
const redeem = (wallet: string, winningOutcome: 0 | 1, burned: [number, number], conditionId = CID): JournalEvent => {
  const s = ++seq;
  return { type: 'redeem', seq: s, ts: ts(s), wallet, conditionId, tokenIds: ['1', '2'], winningOutcome, burned, payout: burned[winningOutcome] };
};
const market = (negRisk = false, conditionId = CID): JournalEvent => {
  const s = ++seq;
  return {
    type: 'market', seq: s, ts: ts(s), conditionId, marketId: 1, tokenIds: ['1', '2'], tickPips: 100, minSizeUnits: U,
    makerFeeBps: 0, takerFeeBps: 0, acceptingOrders: true, negRisk,
  };
};

function setup() {
  const views = new MapViews();
  const changes = new WalletViewChanges();
  const positions = new WalletPositionsProjection(views, changes);
  const trades = new WalletTradesProjection(views);
  const apply = (...events: JournalEvent[]) => {
    for (const e of events) {
      positions.apply(e);
      trades.apply(e);
    }
  };
  const pos = (wallet: string, outcome = 0, conditionId = CID) => views.get<PositionState>(walletViewKeys.position(wallet, conditionId, outcome));
  return { views, changes, apply, pos };
}

/** The fields the numbers live in, without seq and times. */
const nums = (p: PositionState | undefined) => p && { size: p.size, avg: p.avg, bought: p.bought, realized: p.realized, closePrice: p.closePrice, closed: p.closedAt > 0 };

test('buys at two prices, a partial sell and a full exit (taker and maker of transfers)', () => {
  const { apply, pos } = setup();
  // B got its tokens from a split of 30 first (bought 30 of each outcome at 0.5), so its sales are tracked.
  // A buys 10 at 0.40 from B, then 20 at 0.55 from B.
  const s0 = split('split', B, 30 * U);
  const f1 = fill({ taker: A, maker: B, size: 10 * U, takerPricePips: 4000, makerPricePips: 4000 });
  const f2 = fill({ taker: A, maker: B, size: 20 * U, takerPricePips: 5500, makerPricePips: 5500 });
  apply(s0, f1, f2);
  // avg = floor((0.40 x 10 + 0.55 x 20) / 30) = floor(15 / 30) = 0.5 exactly.
  assert.deepEqual(nums(pos(A)), { size: 30 * U, avg: 500_000, bought: 30 * U, realized: 0, closePrice: 0, closed: false });
  // B sold 10 at 0.40 and 20 at 0.55 against an average of 0.5: 10 x (0.40 - 0.5) + 20 x (0.55 - 0.5) = -1 + 1 = 0.
  assert.deepEqual(nums(pos(B)), { size: 0, avg: 500_000, bought: 30 * U, realized: 0, closePrice: 550_000, closed: true });

  // Partial sell: A sells 12 at 0.60 (maker B buys): realized 12 x (0.60 - 0.50) = 1.2; avg unchanged.
  apply(fill({ taker: A, maker: B, size: 12 * U, takerSide: 'SELL', takerPricePips: 6000, makerPricePips: 6000 }));
  assert.deepEqual(nums(pos(A)), { size: 18 * U, avg: 500_000, bought: 30 * U, realized: 1_200_000, closePrice: 0, closed: false });
  // B reopened its closed outcome-0 position: it bought 12 at 0.60 -> avg 0.60, realized kept (0).
  assert.deepEqual(nums(pos(B)), { size: 12 * U, avg: 600_000, bought: 42 * U, realized: 0, closePrice: 0, closed: false });

  // Full exit as a maker: B takes A's 18 at 0.45: 18 x (0.45 - 0.50) = -0.9 -> 1.2 - 0.9 = 0.3.
  const exit = fill({ taker: B, maker: A, size: 18 * U, takerSide: 'BUY', takerPricePips: 4500, makerPricePips: 4500 });
  apply(exit);
  const a = pos(A)!;
  assert.deepEqual(nums(a), { size: 0, avg: 500_000, bought: 30 * U, realized: 300_000, closePrice: 450_000, closed: true });
  assert.equal(a.closedAt, exit.ts);
  assert.equal(a.last, exit.ts);
  assert.equal(a.first, f1.ts, 'first activity is the first buy');
});

test('the average is truncated to 10^-6 at each buy, as the platform\'s PnL subgraph does', () => {
  const { apply, pos } = setup();
  apply(
    fill({ taker: A, maker: B, size: 3 * U, takerPricePips: 1000, makerPricePips: 1000 }),
    fill({ taker: A, maker: B, size: 4 * U, takerPricePips: 2000, makerPricePips: 2000 }),
  );
  // (0.10 x 3 + 0.20 x 4) / 7 = 1.1 / 7 = 0.157142857... -> 157142 micro.
  assert.equal(pos(A)!.avg, 157_142);
  // Selling 7 at 0.20: trunc(7 x (0.2 - 0.157142)) = trunc(7 x 42858 micro) = 300006 micro.
  apply(fill({ taker: A, maker: B, size: 7 * U, takerSide: 'SELL', takerPricePips: 2000, makerPricePips: 2000 }));
  assert.equal(pos(A)!.realized, 300_006);
});

test('MINT fills make both parties buyers and MERGE fills both sellers, each of its own outcome at its own price', () => {
  const { apply, pos } = setup();
  // A buys outcome 0 at 0.35 and B outcome 1 at 0.65 from newly minted pairs.
  apply(fill({ kind: 'MINT', taker: A, maker: B, size: 10 * U, takerOutcome: 0, makerOutcome: 1, takerPricePips: 3500, makerPricePips: 6500 }));
  assert.deepEqual(nums(pos(A, 0)), { size: 10 * U, avg: 350_000, bought: 10 * U, realized: 0, closePrice: 0, closed: false });
  assert.deepEqual(nums(pos(B, 1)), { size: 10 * U, avg: 650_000, bought: 10 * U, realized: 0, closePrice: 0, closed: false });
  assert.equal(pos(A, 1), undefined, 'a MINT gives each party only its own outcome');
  // MERGE of 4: A sells outcome 0 at 0.45 (4 x (0.45 - 0.35) = 0.4), B sells outcome 1 at 0.55 (4 x (0.55 - 0.65) = -0.4).
  apply(fill({ kind: 'MERGE', taker: A, maker: B, size: 4 * U, takerOutcome: 0, makerOutcome: 1, takerSide: 'SELL', takerPricePips: 4500, makerPricePips: 5500 }));
  assert.deepEqual(nums(pos(A, 0)), { size: 6 * U, avg: 350_000, bought: 10 * U, realized: 400_000, closePrice: 0, closed: false });
  assert.deepEqual(nums(pos(B, 1)), { size: 6 * U, avg: 650_000, bought: 10 * U, realized: -400_000, closePrice: 0, closed: false });
});

test('a split buys both outcomes at 0.5 and a merge sells both at 0.5', () => {
  const { apply, pos } = setup();
  // A holds 10 of outcome 0 at 0.30, then splits 10: outcome 0 avg (0.30 x 10 + 0.5 x 10) / 20 = 0.40; outcome 1 avg 0.5.
  apply(fill({ taker: A, maker: B, size: 10 * U, takerPricePips: 3000, makerPricePips: 3000 }), split('split', A, 10 * U));
  assert.deepEqual(nums(pos(A, 0)), { size: 20 * U, avg: 400_000, bought: 20 * U, realized: 0, closePrice: 0, closed: false });
  assert.deepEqual(nums(pos(A, 1)), { size: 10 * U, avg: 500_000, bought: 10 * U, realized: 0, closePrice: 0, closed: false });
  // Merge 5: outcome 0 realizes 5 x (0.5 - 0.4) = 0.5; outcome 1 realizes 5 x (0.5 - 0.5) = 0.
  apply(split('merge', A, 5 * U));
  assert.deepEqual(nums(pos(A, 0)), { size: 15 * U, avg: 400_000, bought: 20 * U, realized: 500_000, closePrice: 0, closed: false });
  assert.deepEqual(nums(pos(A, 1)), { size: 5 * U, avg: 500_000, bought: 10 * U, realized: 0, closePrice: 0, closed: false });
  // Merging the other 5 empties outcome 1 (closed at the merge price 0.5) and leaves 10 of outcome 0.
  apply(split('merge', A, 5 * U));
  assert.deepEqual(nums(pos(A, 1)), { size: 0, avg: 500_000, bought: 10 * U, realized: 0, closePrice: 500_000, closed: true });
  assert.equal(pos(A, 0)!.realized, 1_000_000, '0.5 + 5 x (0.5 - 0.4) = 1.0');
});

test('a redeem sells each burned holding at its payout: 1 for the winner, 0 for the loser', () => {
  const { apply, pos, views } = setup();
  // A: 8 of outcome 0 at 0.25 and (split 2) 2 more of each: outcome 0 avg (0.25 x 8 + 0.5 x 2) / 10 = 0.30; outcome 1: 2 at 0.5.
  apply(market(), fill({ taker: A, maker: B, size: 8 * U, takerPricePips: 2500, makerPricePips: 2500 }), split('split', A, 2 * U));
  assert.equal(pos(A, 0)!.avg, 300_000);
  apply(resolve(0));
  assert.equal(views.get<MarketFacts>(walletViewKeys.market(CID))!.winner, 0);
  // Resolution alone changes no position (they stay open and become redeemable).
  assert.equal(pos(A, 0)!.size, 10 * U);
  apply(redeem(A, 0, [10 * U, 2 * U]));
  // Winner: 10 x (1 - 0.30) = 7; loser: 2 x (0 - 0.5) = -1.
  assert.deepEqual(nums(pos(A, 0)), { size: 0, avg: 300_000, bought: 10 * U, realized: 7_000_000, closePrice: 1_000_000, closed: true });
  assert.deepEqual(nums(pos(A, 1)), { size: 0, avg: 500_000, bought: 2 * U, realized: -1_000_000, closePrice: 0, closed: true });
});

test('only tracked holdings realize PnL: a sale larger than the position sells what is held', () => {
  const s = emptyPosition(0);
  applyBuy(s, 5 * U, 400_000, 1);
  applySell(s, 8 * U, 600_000, 2);
  // q' = min(8, 5) = 5: 5 x (0.6 - 0.4) = 1.0; size 0, closed at 0.6.
  assert.deepEqual({ size: s.size, realized: s.realized, closedAt: s.closedAt, closePrice: s.closePrice }, { size: 0, realized: 1_000_000, closedAt: 2, closePrice: 600_000 });
  // A sale with nothing tracked creates no position row at all.
  const { apply, pos } = setup();
  apply(fill({ taker: A, maker: B, size: 3 * U, takerSide: 'SELL', takerPricePips: 5000, makerPricePips: 5000 }));
  assert.equal(pos(A), undefined);
  assert.deepEqual(nums(pos(B)), { size: 3 * U, avg: 500_000, bought: 3 * U, realized: 0, closePrice: 0, closed: false });
});

test('a wallet trading with itself in one token updates its position once with both sides', () => {
  const { apply, pos } = setup();
  apply(fill({ taker: A, maker: B, size: 10 * U, takerPricePips: 4000, makerPricePips: 4000 }));
  // A sells 4 at 0.5 to itself: the sale realizes 4 x (0.5 - 0.4) = 0.4 and the buy of 4 at 0.5 moves the
  // average to floor((0.4 x 6 + 0.5 x 4) / 10) = 0.44.
  apply(fill({ taker: A, maker: A, size: 4 * U, takerSide: 'SELL', makerSide: 'BUY', takerPricePips: 5000, makerPricePips: 5000 }));
  assert.deepEqual(nums(pos(A)), { size: 10 * U, avg: 440_000, bought: 14 * U, realized: 400_000, closePrice: 0, closed: false });
});

test('holdings past 2^53 micro-USDC products stay exact', () => {
  const s = emptyPosition(0);
  // 3,000,000 tokens at 0.9999 then 1,000,000 at 0.0001: (2,999,700 + 100) / 4,000,000 = 0.74995 exactly.
  applyBuy(s, 3_000_000 * U, 999_900, 1);
  applyBuy(s, 1_000_000 * U, 100, 2);
  assert.equal(s.avg, 749_950);
  // Sell all 4,000,000 at 0.123457: 4e6 x (0.123457 - 0.74995) = -2,505,972 USDC exactly.
  applySell(s, 4_000_000 * U, 123_457, 3);
  assert.equal(s.realized, -2_505_972 * U);
});

test('applying any event twice changes nothing, in any interleaving', () => {
  const script = (): JournalEvent[] => [
    market(true),
    fill({ taker: A, maker: B, size: 10 * U, takerPricePips: 4000, makerPricePips: 4000 }),
    split('split', A, 6 * U),
    fill({ kind: 'MINT', taker: B, maker: A, size: 5 * U, takerOutcome: 0, makerOutcome: 1, takerPricePips: 5200, makerPricePips: 4800 }),
    split('merge', A, 3 * U),
    fill({ taker: A, maker: B, size: 7 * U, takerSide: 'SELL', takerPricePips: 6100, makerPricePips: 6100 }),
    resolve(1),
    redeem(A, 1, [6 * U, 8 * U]),
    redeem(B, 1, [10 * U, 0]),
  ];
  seq = 0;
  const once = setup();
  once.apply(...script());
  seq = 0;
  const twice = setup();
  const events = script();
  for (const e of events) twice.apply(e, e);
  twice.apply(...events);
  assert.equal(twice.views.snapshot(), once.views.snapshot());
  // The replayed market event must not reset the winner recorded after it.
  assert.equal(twice.views.get<MarketFacts>(walletViewKeys.market(CID))!.winner, 1);
  assert.equal(twice.views.get<MarketFacts>(walletViewKeys.market(CID))!.negRisk, true);
});

test('trade rows: one per party under wallet, market and global keys, role 0 taker and 1 maker', () => {
  const { apply, views } = setup();
  const mixed = '0x' + 'AbC'.repeat(13) + 'D';
  const f = fill({ conditionId: CID2, taker: mixed, maker: B, size: 2_500_000, takerSide: 'SELL', takerOutcome: 1, takerPricePips: 3300, makerPricePips: 3300 });
  apply(f);
  // usdc = 2.5 x 0.33 = 0.825 -> 825000 micro on both sides of a transfer.
  assert.deepEqual(views.get(walletViewKeys.tradeByWallet(mixed.toLowerCase(), 0, f.seq)), [1, 2_500_000, 825_000, CID2]);
  assert.deepEqual(views.get(walletViewKeys.tradeByWallet(B, 1, f.seq)), [0, 2_500_000, 825_000, CID2]);
  assert.deepEqual(views.get(walletViewKeys.tradeByMarket(CID2, 0, f.seq)), [1, 2_500_000, 825_000]);
  assert.deepEqual(views.get(walletViewKeys.tradeByMarket(CID2, 1, f.seq)), [0, 2_500_000, 825_000]);
  assert.deepEqual(views.get(walletViewKeys.tradeAll(0, f.seq)), [1, 2_500_000, 825_000]);
  assert.deepEqual(views.get(walletViewKeys.tradeAll(1, f.seq)), [0, 2_500_000, 825_000]);
  // The taker sold tokens it never had here: no position row; B bought 2.5.
  assert.equal(views.m.size, 6 + 1, 'six trade rows and B\'s position, nothing else');
});

test('the change feed moves for the wallets written and for market facts', () => {
  const { apply, changes } = setup();
  assert.equal(changes.walletVersion(A), 0);
  apply(fill({ kind: 'MINT', taker: A, maker: B, size: U, takerPricePips: 5000, makerPricePips: 5000 }));
  const a1 = changes.walletVersion(A);
  const b1 = changes.walletVersion(B);
  assert.ok(a1 > 0 && b1 > 0 && a1 !== b1);
  apply(split('split', A, U));
  assert.ok(changes.walletVersion(A) > a1);
  assert.equal(changes.walletVersion(B), b1, 'B was not touched');
  const m0 = changes.markets;
  apply(market(), resolve(0));
  assert.equal(changes.markets, m0 + 2);
});

test('a deferred fill enters positions and trade rows at its MINED move, under that move\'s seq; a FAILED one never does', () => {
  const views = new MapViews();
  const changes = new WalletViewChanges();
  const stored = new Map<number, FillEvent>();
  const positions = new WalletPositionsProjection(views, changes, (s) => stored.get(s));
  const trades = new WalletTradesProjection(views, (s) => stored.get(s));
  const apply = (...events: JournalEvent[]) => {
    for (const e of events) {
      if (e.type === 'fill') stored.set(e.seq, e);
      positions.apply(e);
      trades.apply(e);
    }
  };
  const move = (f: FillEvent, status: 'MINED' | 'RETRYING' | 'FAILED' | 'CONFIRMED'): JournalEvent => {
    const s = ++seq;
    return { type: 'trade', seq: s, ts: ts(s), tradeId: f.tradeId, fillSeq: f.seq, status, conditionId: f.conditionId, takerWallet: f.takerWallet, makerWallet: f.makerWallet, takerOwner: 'k1', makerOwner: 'k2' };
  };
  const rows = (prefix: Key) => [...views.m.values()].filter((e) => JSON.stringify(e.key).startsWith(JSON.stringify(prefix).slice(0, -1))).map((e) => [e.key, e.value]);
  const s0 = split('split', B, 30 * U);
  const f1 = { ...fill({ taker: A, maker: B, size: 10 * U, takerPricePips: 4000, makerPricePips: 4000 }), deferred: true as const };
  const f2 = { ...fill({ taker: A, maker: B, size: 5 * U, takerPricePips: 5000, makerPricePips: 5000 }), deferred: true as const };
  apply(s0, f1, f2);
  assert.equal(views.get(walletViewKeys.position(A, CID, 0)), undefined, 'not on chain yet: no position');
  assert.deepEqual(rows(walletViewKeys.tradesByWalletPrefix(A, 0)), []);
  assert.deepEqual(rows(walletViewKeys.deferredTradesPrefix(A)).map(([k]) => k), [walletViewKeys.deferredTrade(A, f1.seq), walletViewKeys.deferredTrade(A, f2.seq)]);
  assert.equal(rows(walletViewKeys.deferredTradesPrefix(B)).length, 2);

  const mined = move(f1, 'MINED');
  const version = changes.walletVersion(A);
  apply(move(f2, 'RETRYING'), mined, move(f2, 'FAILED'), move(f1, 'CONFIRMED'));
  assert.ok(changes.walletVersion(A) > version, 'the MINED move touched the wallet');
  // Only f1: A bought 10 at 0.40; B sold 10 of its split at 0.5 -> realized -1.
  assert.deepEqual(nums(views.get<PositionState>(walletViewKeys.position(A, CID, 0))), { size: 10 * U, avg: 400_000, bought: 10 * U, realized: 0, closePrice: 0, closed: false });
  assert.deepEqual(nums(views.get<PositionState>(walletViewKeys.position(B, CID, 0))), { size: 20 * U, avg: 500_000, bought: 30 * U, realized: -1_000_000, closePrice: 0, closed: false });
  assert.equal(views.get<PositionState>(walletViewKeys.position(A, CID, 0))!.last, mined.ts, 'at the time it landed');
  // The rows sit under the MINED move's seq and name the fill.
  assert.deepEqual(rows(walletViewKeys.tradesByWalletPrefix(A, 0)), [[walletViewKeys.tradeByWallet(A, 0, mined.seq), [0, 10 * U, 4 * U, CID, f1.seq]]]);
  assert.deepEqual(rows(walletViewKeys.tradesByMarketPrefix(CID, 1)), [[walletViewKeys.tradeByMarket(CID, 1, mined.seq), [1, 10 * U, 4 * U, CID, f1.seq]]]);
  assert.deepEqual(rows(walletViewKeys.tradesAllPrefix(0)), [[walletViewKeys.tradeAll(0, mined.seq), [0, 10 * U, 4 * U, CID, f1.seq]]]);
  // Applying it all again changes nothing.
  const snap = views.snapshot();
  apply(mined);
  assert.equal(views.snapshot(), snap);
  assert.throws(() => new WalletPositionsProjection(new MapViews()).apply(mined), /no fill reader/);
});
