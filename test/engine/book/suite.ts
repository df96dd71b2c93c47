/**
 * The behaviour every MatchingBook must have, as one table of cases run against any implementation
 * (exchange-core's abstract OrderBookBaseTest). The reference book and the typed-array book each get a
 * runner file; `check` (the typed book's integrity checker) runs after every step when given.
 *
 * Expected amounts are written out by hand from api.ts, never computed with the code under test.
 * Unless a step says otherwise it must emit no events at all, so every case also proves the absence of
 * stray fills and cancels.
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CancelReason,
  FillKind,
  LOT_UNITS,
  MatchCode,
  Side,
  Tif,
  type Cancel,
  type Depth,
  type EventSink,
  type Fill,
  type MarketParams,
  type MatchingBook,
  type Outcome,
  type PlaceCommand,
} from '../../../src/engine/book/api.ts';

const T = 1_000_000; // one token (or one USDC) in units

type Ev = { fill: Partial<Fill> } | { cancel: Partial<Cancel> };

interface Expect {
  code?: MatchCode;
  filled?: number;
  resting?: number;
  /** Return value of expire() / cancelAll(). */
  count?: number;
  /** Exact event sequence (fields given are compared); default: no events. */
  events?: Ev[];
  /** Events may come in any order (expire, cancelAll): compared sorted by handle. */
  anyOrder?: boolean;
  /** orders() and both depths are identical before and after the step. */
  unchanged?: boolean;
}

type Step =
  | { place: PlaceCommand; expect?: Expect }
  | { cancel: number; expect?: Expect }
  | { expire: number; expect?: Expect }
  | { cancelAll: CancelReason; expect?: Expect };

interface Final {
  /** Handles per outcome-0-space side, in priority order (BUY 0 and SELL 1 are bids). */
  bids?: number[];
  asks?: number[];
  remaining?: Record<number, number>;
  size?: number;
  nextExpiry?: number;
  /** [bestBid(0), bestAsk(0), bestBid(1), bestAsk(1)] */
  best?: [number, number, number, number];
  depth0?: Depth;
  depth1?: Depth;
}

interface Case {
  name: string;
  params?: Partial<MarketParams>;
  steps: Step[];
  final?: Final;
}

const BASE: MarketParams = { tickPips: 100, minSizeUnits: LOT_UNITS, makerFeeBps: 0, takerFeeBps: 0 };
const FEES: Partial<MarketParams> = { makerFeeBps: 20, takerFeeBps: 50 };

type Who = 'B0' | 'S0' | 'B1' | 'S1';

/** An order from owner = handle unless `extra.owner` says otherwise; GTC by default. */
function o(handle: number, who: Who, pricePips: number, sizeUnits: number, extra: Partial<PlaceCommand> = {}): PlaceCommand {
  return {
    handle,
    owner: handle,
    outcome: (who[1] === '0' ? 0 : 1) as Outcome,
    side: who[0] === 'B' ? Side.BUY : Side.SELL,
    tif: Tif.GTC,
    postOnly: false,
    pricePips,
    sizeUnits,
    budgetUnits: 0,
    expiresAt: 0,
    ...extra,
  };
}

const ok = (filled: number, resting: number, events: Ev[] = []): Expect => ({ code: MatchCode.OK, filled, resting, events });
const rests = (units: number): Expect => ok(0, units);
const rejected = (code: MatchCode, events: Ev[] = []): Expect => ({ code, filled: 0, resting: 0, events, unchanged: true });
const remainder = (handle: number, remainingUnits: number): Ev => ({
  cancel: { handle, remainingUnits, reason: CancelReason.UNFILLED_REMAINDER },
});

/** A complete Fill, so the fill-kind cases pin every field. */
function fill(
  kind: FillKind,
  taker: PlaceCommand,
  maker: PlaceCommand,
  sizeUnits: number,
  prices: [taker: number, maker: number],
  usdc: [taker: number, maker: number],
  fees: [taker: number, maker: number],
  makerRemainingUnits: number,
): Ev {
  return {
    fill: {
      kind,
      takerHandle: taker.handle,
      makerHandle: maker.handle,
      takerOwner: taker.owner,
      makerOwner: maker.owner,
      takerOutcome: taker.outcome,
      makerOutcome: maker.outcome,
      takerSide: taker.side,
      makerSide: maker.side,
      sizeUnits,
      takerPricePips: prices[0],
      makerPricePips: prices[1],
      takerUsdc: usdc[0],
      makerUsdc: usdc[1],
      takerFee: fees[0],
      makerFee: fees[1],
      makerRemainingUnits,
    },
  };
}

const f = (makerHandle: number, sizeUnits: number, more: Partial<Fill> = {}): Ev => ({ fill: { makerHandle, sizeUnits, ...more } });

/** Two-order case: maker rests 10 tokens, taker takes 4; every field of the fill written out. */
function kindCase(name: string, maker: PlaceCommand, taker: PlaceCommand, expected: Ev): Case {
  return {
    name,
    params: FEES,
    steps: [
      { place: maker, expect: rests(maker.sizeUnits) },
      { place: taker, expect: ok(taker.sizeUnits, 0, [expected]) },
    ],
    final: { remaining: { [maker.handle]: maker.sizeUnits - taker.sizeUnits }, size: 1 },
  };
}

// Fill kinds. Fees: taker 50 bps, maker 20 bps of min(P, 1 - P) * size, floored.
const kindCases: Case[] = (() => {
  const c: Case[] = [];
  {
    const m = o(1, 'S0', 6000, 10 * T), t = o(2, 'B0', 6500, 4 * T);
    c.push(kindCase('TRANSFER on outcome 0 at the maker price', m, t,
      fill(FillKind.TRANSFER, t, m, 4 * T, [6000, 6000], [2_400_000, 2_400_000], [8_000, 3_200], 6 * T)));
  }
  {
    // SELL 1 @0.30 is a bid at 0.70; BUY 1 @0.35 an ask at 0.65: they cross at P = 0.70.
    const m = o(1, 'S1', 3000, 10 * T), t = o(2, 'B1', 3500, 4 * T);
    c.push(kindCase('TRANSFER on outcome 1 at the maker price', m, t,
      fill(FillKind.TRANSFER, t, m, 4 * T, [3000, 3000], [1_200_000, 1_200_000], [6_000, 2_400], 6 * T)));
  }
  {
    const m = o(1, 'B0', 6000, 10 * T), t = o(2, 'B1', 4500, 4 * T);
    c.push(kindCase('MINT with the maker on outcome 0: USDC sums to the size', m, t,
      fill(FillKind.MINT, t, m, 4 * T, [4000, 6000], [1_600_000, 2_400_000], [8_000, 3_200], 6 * T)));
  }
  {
    const m = o(1, 'B1', 4000, 10 * T), t = o(2, 'B0', 6500, 4 * T);
    c.push(kindCase('MINT with the maker on outcome 1', m, t,
      fill(FillKind.MINT, t, m, 4 * T, [6000, 4000], [2_400_000, 1_600_000], [8_000, 3_200], 6 * T)));
  }
  {
    const m = o(1, 'S0', 4000, 10 * T), t = o(2, 'S1', 5000, 4 * T);
    c.push(kindCase('MERGE with the maker on outcome 0: payouts sum to the size', m, t,
      fill(FillKind.MERGE, t, m, 4 * T, [6000, 4000], [2_400_000, 1_600_000], [8_000, 3_200], 6 * T)));
  }
  {
    const m = o(1, 'S1', 6000, 10 * T), t = o(2, 'S0', 3500, 4 * T);
    c.push(kindCase('MERGE with the maker on outcome 1', m, t,
      fill(FillKind.MERGE, t, m, 4 * T, [4000, 6000], [1_600_000, 2_400_000], [8_000, 3_200], 6 * T)));
  }
  {
    // 50 * 3300 * 30_000 / 1e8 = 49.5 -> 49; 20 * 3300 * 30_000 / 1e8 = 19.8 -> 19.
    const m = o(1, 'S0', 3300, 10 * T), t = o(2, 'B0', 3300, 3 * LOT_UNITS);
    c.push(kindCase('fees round down for each party', m, t,
      fill(FillKind.TRANSFER, t, m, 3 * LOT_UNITS, [3300, 3300], [9_900, 9_900], [49, 19], 10 * T - 3 * LOT_UNITS)));
  }
  {
    // min(0.80, 0.20) = 0.20: 50 bps * 0.2 * 4 T = 4_000; 20 bps -> 1_600.
    const m = o(1, 'S0', 8000, 10 * T), t = o(2, 'B0', 8000, 4 * T);
    c.push(kindCase('fee is charged on min(p, 1 - p)', m, t,
      fill(FillKind.TRANSFER, t, m, 4 * T, [8000, 8000], [3_200_000, 3_200_000], [4_000, 1_600], 6 * T)));
  }
  {
    // 123_456_789 tokens: the products behind the fee pass 2^53, the amounts themselves do not.
    const big = 123_456_789 * T;
    const m = o(1, 'S0', 3333, big), t = o(2, 'B0', 3400, big);
    c.push({
      name: 'amounts and fees stay exact on a very large fill',
      params: { tickPips: 1, makerFeeBps: 13, takerFeeBps: 37 },
      steps: [
        { place: m, expect: rests(big) },
        { place: t, expect: ok(big, 0, [fill(FillKind.TRANSFER, t, m, big, [3333, 3333], [41_148_147_773_700, 41_148_147_773_700], [152_248_146_762, 53_492_592_105], 0)]) },
      ],
      final: { size: 0 },
    });
  }
  return c;
})();

const cases: Case[] = [
  ...kindCases,
  {
    name: 'GTC rests when nothing crosses; outcome 1 sees it mirrored',
    steps: [{ place: o(1, 'S0', 6000, T), expect: rests(T) }],
    final: { bids: [], asks: [1], size: 1, best: [0, 6000, 4000, 0], nextExpiry: 0 },
  },
  {
    name: 'empty book: no best prices, empty depth',
    steps: [],
    final: { size: 0, best: [0, 0, 0, 0], depth0: { bids: [], asks: [] }, depth1: { bids: [], asks: [] }, nextExpiry: 0 },
  },
  {
    name: 'price improvement goes to a BUY taker',
    steps: [
      { place: o(1, 'S0', 6000, T), expect: rests(T) },
      { place: o(2, 'B0', 7000, T), expect: ok(T, 0, [f(1, T, { takerPricePips: 6000, makerPricePips: 6000, takerUsdc: 600_000 })]) },
    ],
    final: { size: 0 },
  },
  {
    name: 'price improvement goes to a SELL taker',
    steps: [
      { place: o(1, 'B0', 6000, T), expect: rests(T) },
      { place: o(2, 'S0', 5000, T), expect: ok(T, 0, [f(1, T, { takerPricePips: 6000, takerUsdc: 600_000, makerUsdc: 600_000 })]) },
    ],
    final: { size: 0 },
  },
  {
    name: 'FIFO within a level',
    steps: [
      { place: o(1, 'S0', 6000, T), expect: rests(T) },
      { place: o(2, 'S0', 6000, T), expect: rests(T) },
      { place: o(3, 'S0', 6000, T), expect: rests(T) },
      { place: o(4, 'B0', 6000, 1_500_000), expect: ok(1_500_000, 0, [f(1, T, { makerRemainingUnits: 0 }), f(2, 500_000, { makerRemainingUnits: 500_000 })]) },
    ],
    final: { asks: [2, 3], remaining: { 2: 500_000, 3: T } },
  },
  {
    name: 'better price beats earlier time',
    steps: [
      { place: o(1, 'S0', 6100, T), expect: rests(T) },
      { place: o(2, 'S0', 6000, T), expect: rests(T) },
      { place: o(3, 'B0', 6100, T), expect: ok(T, 0, [f(2, T)]) },
    ],
    final: { asks: [1] },
  },
  {
    name: 'time priority holds across outcomes at one level (TRANSFER then MINT)',
    steps: [
      { place: o(1, 'S0', 6000, T), expect: rests(T) },
      { place: o(2, 'B1', 4000, T), expect: rests(T) },
      { place: o(3, 'B0', 6000, 1_500_000), expect: ok(1_500_000, 0, [
        f(1, T, { kind: FillKind.TRANSFER }),
        f(2, 500_000, { kind: FillKind.MINT, takerUsdc: 300_000, makerUsdc: 200_000, makerPricePips: 4000 }),
      ]) },
    ],
    final: { asks: [2], remaining: { 2: 500_000 } },
  },
  {
    name: 'a GTC sweeps several levels and rests the remainder at its limit',
    params: { tickPips: 10 },
    steps: [
      { place: o(1, 'S0', 6000, T), expect: rests(T) },
      { place: o(2, 'S0', 6100, T), expect: rests(T) },
      { place: o(3, 'S0', 6200, T), expect: rests(T) },
      { place: o(4, 'B0', 6150, 3 * T), expect: ok(2 * T, T, [f(1, T, { takerPricePips: 6000 }), f(2, T, { takerPricePips: 6100 })]) },
    ],
    final: { bids: [4], asks: [3], remaining: { 4: T }, best: [6150, 6200, 3800, 3850] },
  },
  {
    name: 'a SELL of outcome 1 sweeps asks of both outcomes (SELL 0 = MERGE, BUY 1 = TRANSFER)',
    steps: [
      { place: o(1, 'S0', 3000, T), expect: rests(T) },
      { place: o(2, 'B1', 6500, T), expect: rests(T) },
      // SELL 1 @0.60 is a bid at 0.40: it crosses the ask at 0.30 (S0) and the ask at 0.35 (B1 @0.65).
      { place: o(3, 'S1', 6000, 2 * T), expect: ok(2 * T, 0, [
        f(1, T, { kind: FillKind.MERGE, takerPricePips: 7000, makerPricePips: 3000, takerUsdc: 700_000, makerUsdc: 300_000 }),
        f(2, T, { kind: FillKind.TRANSFER, takerPricePips: 6500, makerPricePips: 6500, takerUsdc: 650_000, makerUsdc: 650_000 }),
      ]) },
    ],
    final: { size: 0 },
  },
  {
    name: 'GTD rests, expires at its time, and drives nextExpiry',
    steps: [
      { place: o(1, 'B0', 4000, T, { tif: Tif.GTD, expiresAt: 1000 }), expect: rests(T) },
      { place: o(2, 'B0', 4100, T, { tif: Tif.GTD, expiresAt: 900 }), expect: rests(T) },
      { place: o(3, 'B0', 4200, T), expect: rests(T) },
      { place: o(4, 'S0', 4100, 1_500_000), expect: ok(1_500_000, 0, [f(3, T, { takerPricePips: 4200 }), f(2, 500_000)]) },
      { expire: 899, expect: { count: 0, unchanged: true } },
      { expire: 900, expect: { count: 1, events: [{ cancel: { handle: 2, owner: 2, outcome: 0, side: Side.BUY, pricePips: 4100, remainingUnits: 500_000, reason: CancelReason.EXPIRED } }] } },
    ],
    final: { bids: [1], nextExpiry: 1000 },
  },
  {
    name: 'expire removes every due GTD and leaves GTC',
    steps: [
      { place: o(1, 'B0', 4000, T, { tif: Tif.GTD, expiresAt: 1000 }), expect: rests(T) },
      { place: o(2, 'S1', 4000, T, { tif: Tif.GTD, expiresAt: 500 }), expect: rests(T) },
      { place: o(3, 'S0', 7000, T), expect: rests(T) },
      { expire: 5000, expect: { count: 2, anyOrder: true, events: [
        { cancel: { handle: 1, reason: CancelReason.EXPIRED, remainingUnits: T } },
        { cancel: { handle: 2, reason: CancelReason.EXPIRED, remainingUnits: T, outcome: 1, side: Side.SELL, pricePips: 4000 } },
      ] } },
    ],
    final: { bids: [], asks: [3], nextExpiry: 0, size: 1 },
  },
  {
    // api.ts leaves the order open; both books document priority order, and the differential test relies on it.
    name: 'expire and cancelAll emit in priority order: bids best first, then asks best first',
    steps: [
      { place: o(1, 'B0', 4000, T, { tif: Tif.GTD, expiresAt: 100 }), expect: rests(T) },
      { place: o(2, 'S1', 5500, T, { tif: Tif.GTD, expiresAt: 100 }), expect: rests(T) },
      { place: o(3, 'B0', 4500, T, { tif: Tif.GTD, expiresAt: 100 }), expect: rests(T) },
      { place: o(4, 'S0', 7000, T, { tif: Tif.GTD, expiresAt: 100 }), expect: rests(T) },
      { place: o(5, 'B1', 4000, T, { tif: Tif.GTD, expiresAt: 50 }), expect: rests(T) },
      { place: o(6, 'S0', 6000, T), expect: rests(T) },
      { place: o(7, 'B0', 4500, T), expect: rests(T) },
      { expire: 100, expect: { count: 5, events: [2, 3, 1, 5, 4].map((handle) => ({ cancel: { handle, reason: CancelReason.EXPIRED } })) } },
      { place: o(8, 'B0', 4500, T), expect: rests(T) },
      { place: o(9, 'S1', 7000, T), expect: rests(T) },
      { cancelAll: CancelReason.MARKET_RESOLVED, expect: { count: 4, events: [7, 8, 9, 6].map((handle) => ({ cancel: { handle, reason: CancelReason.MARKET_RESOLVED } })) } },
    ],
    final: { size: 0 },
  },
  {
    name: 'FOK fills completely across levels',
    steps: [
      { place: o(1, 'S0', 6000, T), expect: rests(T) },
      { place: o(2, 'S0', 6100, T), expect: rests(T) },
      { place: o(3, 'B0', 6100, 2 * T, { tif: Tif.FOK, budgetUnits: 1_220_000 }), expect: ok(2 * T, 0, [f(1, T), f(2, T)]) },
    ],
    final: { size: 0 },
  },
  {
    name: 'FOK that cannot fill is killed and the book is untouched',
    steps: [
      { place: o(1, 'S0', 6000, T), expect: rests(T) },
      { place: o(2, 'S0', 6200, T), expect: rests(T) },
      { place: o(3, 'B0', 6100, 2 * T, { tif: Tif.FOK }), expect: rejected(MatchCode.FOK_NOT_FILLED, [remainder(3, 2 * T)]) },
    ],
    final: { asks: [1, 2] },
  },
  {
    name: 'FOK on an empty book is killed',
    steps: [{ place: o(1, 'S0', 6000, T, { tif: Tif.FOK }), expect: rejected(MatchCode.FOK_NOT_FILLED, [remainder(1, T)]) }],
    final: { size: 0 },
  },
  {
    name: 'FOK accepts an off-tick worst price',
    steps: [
      { place: o(1, 'S0', 6000, T), expect: rests(T) },
      { place: o(2, 'B0', 6001, T, { tif: Tif.FOK }), expect: ok(T, 0, [f(1, T, { takerPricePips: 6000 })]) },
    ],
  },
  {
    name: 'FOK SELL on outcome 1 at an off-tick price trades at the maker price',
    steps: [
      { place: o(1, 'B1', 4000, T), expect: rests(T) },
      { place: o(2, 'S1', 3950, T, { tif: Tif.FOK }), expect: ok(T, 0, [f(1, T, { kind: FillKind.TRANSFER, takerPricePips: 4000, takerUsdc: 400_000 })]) },
    ],
  },
  {
    name: 'FAK fills what crosses and cancels the rest',
    steps: [
      { place: o(1, 'S0', 6000, T), expect: rests(T) },
      { place: o(2, 'S0', 6200, T), expect: rests(T) },
      { place: o(3, 'B0', 6100, 3 * T, { tif: Tif.FAK }), expect: ok(T, 0, [f(1, T), remainder(3, 2 * T)]) },
    ],
    final: { asks: [2] },
  },
  {
    name: 'FAK that fills everything emits no remainder',
    steps: [
      { place: o(1, 'B0', 6000, 2 * T), expect: rests(2 * T) },
      { place: o(2, 'S0', 5000, T, { tif: Tif.FAK }), expect: ok(T, 0, [f(1, T, { makerRemainingUnits: T })]) },
    ],
    final: { bids: [1], remaining: { 1: T } },
  },
  {
    name: 'FAK with nothing to match is rejected',
    steps: [
      { place: o(1, 'S0', 6200, T), expect: rests(T) },
      { place: o(2, 'B0', 6100, T, { tif: Tif.FAK }), expect: rejected(MatchCode.FAK_NO_MATCH, [remainder(2, T)]) },
    ],
    final: { asks: [1] },
  },
  {
    name: 'post-only that would cross is rejected; one that does not rests',
    steps: [
      { place: o(1, 'S0', 6000, T), expect: rests(T) },
      { place: o(2, 'B0', 6000, T, { postOnly: true }), expect: rejected(MatchCode.POST_ONLY_CROSSES) },
      { place: o(3, 'B0', 5900, T, { postOnly: true }), expect: rests(T) },
      // BUY 1 @0.41 is an ask at 0.59: it would cross the post-only bid at 0.59.
      { place: o(4, 'B1', 4100, T, { postOnly: true, tif: Tif.GTD, expiresAt: 100 }), expect: rejected(MatchCode.POST_ONLY_CROSSES) },
      { place: o(5, 'B0', 6000, T, { postOnly: true, owner: 1 }), expect: rejected(MatchCode.POST_ONLY_CROSSES) },
    ],
    final: { bids: [3], asks: [1] },
  },
  {
    name: 'FAK BUY budget caps spend in whole lots',
    steps: [
      { place: o(1, 'S0', 6000, T), expect: rests(T) },
      { place: o(2, 'S0', 6100, 5 * T), expect: rests(5 * T) },
      // 0.60 USDC buys the first token; the 1.40 left buys 229 lots at 0.61 (1.3969), not 230 (1.403).
      { place: o(3, 'B0', 6200, 6 * T, { tif: Tif.FAK, budgetUnits: 2 * T }), expect: ok(3_290_000, 0, [
        f(1, T, { takerUsdc: 600_000 }),
        f(2, 2_290_000, { takerUsdc: 1_396_900, makerRemainingUnits: 2_710_000 }),
        remainder(3, 2_710_000),
      ]) },
    ],
    final: { asks: [2], remaining: { 2: 2_710_000 } },
  },
  {
    name: 'FOK BUY whose budget falls short is killed',
    steps: [
      { place: o(1, 'S0', 6000, T), expect: rests(T) },
      { place: o(2, 'S0', 6100, 5 * T), expect: rests(5 * T) },
      { place: o(3, 'B0', 6200, 6 * T, { tif: Tif.FOK, budgetUnits: 3_649_999 }), expect: rejected(MatchCode.FOK_NOT_FILLED, [remainder(3, 6 * T)]) },
      { place: o(4, 'B0', 6200, 6 * T, { tif: Tif.FOK, budgetUnits: 3_650_000 }), expect: ok(6 * T, 0, [f(1, T), f(2, 5 * T)]) },
    ],
    final: { size: 0 },
  },
  {
    name: 'a budget below one lot matches nothing',
    steps: [
      { place: o(1, 'S0', 6000, T), expect: rests(T) },
      { place: o(2, 'B0', 6000, T, { tif: Tif.FAK, budgetUnits: 5_999 }), expect: rejected(MatchCode.FAK_NO_MATCH, [remainder(2, T)]) },
    ],
  },
  {
    name: 'budget of a BUY on outcome 1 is spent at its own-outcome price (MINT)',
    steps: [
      { place: o(1, 'B0', 6000, T), expect: rests(T) },
      // P = 0.60, so outcome 1 pays 0.40 per token: 0.30 USDC buys 75 lots.
      { place: o(2, 'B1', 4500, T, { tif: Tif.FAK, budgetUnits: 300_000 }), expect: ok(750_000, 0, [
        f(1, 750_000, { kind: FillKind.MINT, takerUsdc: 300_000, makerUsdc: 450_000, takerPricePips: 4000 }),
        remainder(2, 250_000),
      ]) },
    ],
    final: { remaining: { 1: 250_000 } },
  },
  {
    name: 'self-trade: the resting order of the same owner is canceled and matching goes on',
    steps: [
      { place: o(1, 'S0', 6000, T, { owner: 7 }), expect: rests(T) },
      { place: o(2, 'S0', 6000, T, { owner: 8 }), expect: rests(T) },
      { place: o(3, 'B0', 6000, T, { owner: 7 }), expect: ok(T, 0, [
        { cancel: { handle: 1, owner: 7, outcome: 0, side: Side.SELL, pricePips: 6000, remainingUnits: T, reason: CancelReason.SELF_TRADE } },
        f(2, T, { takerOwner: 7, makerOwner: 8 }),
      ]) },
    ],
    final: { size: 0 },
  },
  {
    name: 'self-trade across outcomes, then the taker rests',
    steps: [
      { place: o(1, 'B1', 4000, T, { owner: 7 }), expect: rests(T) },
      { place: o(2, 'B0', 6000, T, { owner: 7 }), expect: ok(0, T, [{ cancel: { handle: 1, reason: CancelReason.SELF_TRADE, outcome: 1, pricePips: 4000 } }]) },
    ],
    final: { bids: [2], asks: [] },
  },
  {
    name: 'FOK cannot count its own orders and leaves them alone when killed',
    steps: [
      { place: o(1, 'S0', 6000, T, { owner: 7 }), expect: rests(T) },
      { place: o(2, 'S0', 6100, T, { owner: 8 }), expect: rests(T) },
      { place: o(3, 'B0', 6100, 2 * T, { tif: Tif.FOK, owner: 7 }), expect: rejected(MatchCode.FOK_NOT_FILLED, [remainder(3, 2 * T)]) },
      { place: o(4, 'B0', 6100, T, { tif: Tif.FOK, owner: 7 }), expect: ok(T, 0, [
        { cancel: { handle: 1, reason: CancelReason.SELF_TRADE } },
        f(2, T),
      ]) },
    ],
    final: { size: 0 },
  },
  {
    name: 'FAK that meets only its own order cancels it and matches nothing',
    steps: [
      { place: o(1, 'S0', 6000, T, { owner: 7 }), expect: rests(T) },
      { place: o(2, 'B0', 6000, T, { tif: Tif.FAK, owner: 7 }), expect: { code: MatchCode.FAK_NO_MATCH, filled: 0, resting: 0, events: [
        { cancel: { handle: 1, reason: CancelReason.SELF_TRADE } },
        remainder(2, T),
      ] } },
    ],
    final: { size: 0 },
  },
  {
    name: 'cancel emits USER with the unfilled size; unknown and repeated cancels fail',
    steps: [
      { place: o(1, 'S1', 3000, 2 * T), expect: rests(2 * T) },
      { place: o(2, 'B1', 3000, T), expect: ok(T, 0, [f(1, T)]) },
      { cancel: 1, expect: { code: MatchCode.OK, events: [{ cancel: { handle: 1, owner: 1, outcome: 1, side: Side.SELL, pricePips: 3000, remainingUnits: T, reason: CancelReason.USER } }] } },
      { cancel: 1, expect: { code: MatchCode.UNKNOWN_ORDER, unchanged: true } },
      { cancel: 2, expect: { code: MatchCode.UNKNOWN_ORDER, unchanged: true } },
      { cancel: 999, expect: { code: MatchCode.UNKNOWN_ORDER, unchanged: true } },
    ],
    final: { size: 0, best: [0, 0, 0, 0] },
  },
  {
    name: 'cancel of one order keeps the others of its level in order',
    steps: [
      { place: o(1, 'B0', 5000, T), expect: rests(T) },
      { place: o(2, 'S1', 5000, T), expect: rests(T) },
      { place: o(3, 'B0', 5000, T), expect: rests(T) },
      { cancel: 2, expect: { code: MatchCode.OK, events: [{ cancel: { handle: 2, reason: CancelReason.USER } }] } },
      { place: o(4, 'S0', 5000, 1_500_000), expect: ok(1_500_000, 0, [f(1, T), f(3, 500_000)]) },
    ],
    final: { bids: [3], remaining: { 3: 500_000 } },
  },
  {
    name: 'cancelAll empties the book with the given reason',
    steps: [
      { place: o(1, 'B0', 4000, T), expect: rests(T) },
      { place: o(2, 'S1', 4000, 2 * T, { tif: Tif.GTD, expiresAt: 99 }), expect: rests(2 * T) },
      { place: o(3, 'B1', 3000, 3 * T), expect: rests(3 * T) },
      { cancelAll: CancelReason.MARKET_RESOLVED, expect: { count: 3, anyOrder: true, events: [
        { cancel: { handle: 1, remainingUnits: T, reason: CancelReason.MARKET_RESOLVED } },
        { cancel: { handle: 2, remainingUnits: 2 * T, reason: CancelReason.MARKET_RESOLVED } },
        { cancel: { handle: 3, remainingUnits: 3 * T, reason: CancelReason.MARKET_RESOLVED } },
      ] } },
      { cancelAll: CancelReason.USER, expect: { count: 0 } },
    ],
    final: { size: 0, nextExpiry: 0, best: [0, 0, 0, 0], depth0: { bids: [], asks: [] } },
  },
  {
    name: 'depth mirrors the other outcome and lists the best level last',
    steps: [
      { place: o(1, 'B0', 4000, T), expect: rests(T) },
      { place: o(2, 'B0', 4500, 2 * T), expect: rests(2 * T) },
      { place: o(3, 'S1', 5000, 3 * T), expect: rests(3 * T) },
      { place: o(4, 'B0', 5000, T), expect: rests(T) },
      { place: o(5, 'S0', 6000, 4 * T), expect: rests(4 * T) },
      { place: o(6, 'B1', 3000, 5 * T), expect: rests(5 * T) },
      { place: o(7, 'B1', 4000, T), expect: rests(T) },
    ],
    final: {
      bids: [3, 4, 2, 1],
      asks: [5, 7, 6],
      best: [5000, 6000, 4000, 5000],
      depth0: {
        bids: [{ pricePips: 4000, sizeUnits: T }, { pricePips: 4500, sizeUnits: 2 * T }, { pricePips: 5000, sizeUnits: 4 * T }],
        asks: [{ pricePips: 7000, sizeUnits: 5 * T }, { pricePips: 6000, sizeUnits: 5 * T }],
      },
      depth1: {
        bids: [{ pricePips: 3000, sizeUnits: 5 * T }, { pricePips: 4000, sizeUnits: 5 * T }],
        asks: [{ pricePips: 6000, sizeUnits: T }, { pricePips: 5500, sizeUnits: 2 * T }, { pricePips: 5000, sizeUnits: 4 * T }],
      },
    },
  },
  {
    name: 'a resting handle cannot be placed again',
    steps: [
      { place: o(1, 'B0', 4000, T), expect: rests(T) },
      { place: o(1, 'S0', 3000, T), expect: rejected(MatchCode.DUPLICATE_HANDLE) },
      { place: o(1, 'S0', 3000, T, { tif: Tif.FOK }), expect: rejected(MatchCode.DUPLICATE_HANDLE) },
    ],
    final: { bids: [1], asks: [] },
  },
  {
    name: 'extreme on-tick prices trade',
    params: { tickPips: 1 },
    steps: [
      { place: o(1, 'B0', 1, T), expect: rests(T) },
      { place: o(2, 'B1', 9999, T), expect: ok(T, 0, [f(1, T, { kind: FillKind.MINT, takerUsdc: 999_900, makerUsdc: 100, takerPricePips: 9999 })]) },
    ],
    final: { size: 0 },
  },
];

/** Invalid input: one table row per rule; each one must leave a non-empty book untouched. */
const invalid: Array<{ name: string; params?: Partial<MarketParams>; order: PlaceCommand; code: MatchCode; events?: Ev[] }> = [
  { name: 'GTC off tick', order: o(9, 'B0', 6050, T), code: MatchCode.INVALID_PRICE },
  { name: 'GTD off tick', order: o(9, 'S1', 4010, T, { tif: Tif.GTD, expiresAt: 10 }), code: MatchCode.INVALID_PRICE },
  { name: 'GTC price 0', order: o(9, 'B0', 0, T), code: MatchCode.INVALID_PRICE },
  { name: 'GTC price below one tick', order: o(9, 'B0', 50, T), code: MatchCode.INVALID_PRICE },
  { name: 'GTC price 1.0', order: o(9, 'S0', 10_000, T), code: MatchCode.INVALID_PRICE },
  { name: 'GTC price between 1 - tick and 1', order: o(9, 'S0', 9950, T), code: MatchCode.INVALID_PRICE },
  { name: 'GTC price not an integer', order: o(9, 'S0', 6000.5, T), code: MatchCode.INVALID_PRICE },
  { name: 'tick 0.1: 0.05 is off tick', params: { tickPips: 1000 }, order: o(9, 'B0', 500, T), code: MatchCode.INVALID_PRICE },
  { name: 'tick 0.0001: 0 is out of range', params: { tickPips: 1 }, order: o(9, 'B1', 0, T), code: MatchCode.INVALID_PRICE },
  { name: 'FAK price 0', order: o(9, 'S0', 0, T, { tif: Tif.FAK }), code: MatchCode.INVALID_PRICE },
  { name: 'FOK price 1.0', order: o(9, 'B0', 10_000, T, { tif: Tif.FOK, budgetUnits: T }), code: MatchCode.INVALID_PRICE },
  { name: 'size 0', order: o(9, 'B0', 4000, 0), code: MatchCode.INVALID_SIZE },
  { name: 'size not a multiple of the lot', order: o(9, 'B0', 4000, T + 1), code: MatchCode.INVALID_SIZE },
  { name: 'size below the market minimum', params: { minSizeUnits: 5 * T }, order: o(9, 'B0', 4000, 5 * T - LOT_UNITS), code: MatchCode.INVALID_SIZE },
  { name: 'FAK size below the market minimum', params: { minSizeUnits: 5 * T }, order: o(9, 'S0', 4000, 4 * T, { tif: Tif.FAK }), code: MatchCode.INVALID_SIZE },
  { name: 'size beyond 2^53 units', order: o(9, 'B0', 4000, 1e17), code: MatchCode.INVALID_SIZE },
  { name: 'FOK size not a multiple of the lot', order: o(9, 'S0', 4000, LOT_UNITS / 2, { tif: Tif.FOK }), code: MatchCode.INVALID_SIZE },
];

/** Valid edges of the same rules: must be accepted. */
const valid: Array<{ name: string; params?: Partial<MarketParams>; order: PlaceCommand; expect: Expect }> = [
  { name: 'GTC at exactly one tick', order: o(9, 'B0', 100, T), expect: rests(T) },
  { name: 'GTC at exactly 1 - tick', order: o(9, 'S0', 9900, T), expect: rests(T) },
  { name: 'tick 0.1 at 0.9', params: { tickPips: 1000 }, order: o(9, 'S0', 9000, T), expect: rests(T) },
  { name: 'tick 0.0001 at 0.0001', params: { tickPips: 1 }, order: o(9, 'B0', 1, T), expect: rests(T) },
  { name: 'size equal to the market minimum', params: { minSizeUnits: 5 * T }, order: o(9, 'B0', 4000, 5 * T), expect: rests(5 * T) },
  { name: 'one lot', order: o(9, 'B0', 4000, LOT_UNITS), expect: rests(LOT_UNITS) },
  { name: 'FAK off tick that matches nothing', order: o(9, 'B0', 4050, T, { tif: Tif.FAK }), expect: rejected(MatchCode.FAK_NO_MATCH, [remainder(9, T)]) },
];

function recorder(): EventSink & { events: Ev[] } {
  const events: Ev[] = [];
  return {
    events,
    // Copies: a book may hand the same Fill/Cancel object back on every call.
    fill: (x: Fill) => void events.push({ fill: { ...x } }),
    cancel: (x: Cancel) => void events.push({ cancel: { ...x } }),
  };
}

function pick<T extends object>(actual: T, like: Partial<T>): Partial<T> {
  const out: Partial<T> = {};
  for (const k of Object.keys(like) as Array<keyof T>) out[k] = actual[k];
  return out;
}

function handleOf(e: Ev): number {
  return 'fill' in e ? (e.fill.makerHandle ?? -1) : (e.cancel.handle ?? -1);
}

function compareEvents(actual: Ev[], expected: Ev[], anyOrder: boolean, where: string): void {
  const a = anyOrder ? [...actual].sort((x, y) => handleOf(x) - handleOf(y)) : actual;
  const e = anyOrder ? [...expected].sort((x, y) => handleOf(x) - handleOf(y)) : expected;
  assert.equal(a.length, e.length, `${where}: ${a.length} events, expected ${e.length}: ${JSON.stringify(actual)}`);
  for (let i = 0; i < e.length; i++) {
    const ex = e[i];
    const ac = a[i];
    if ('fill' in ex) {
      assert.ok('fill' in ac, `${where}: event ${i} should be a fill, got ${JSON.stringify(ac)}`);
      assert.deepEqual(pick(ac.fill as Fill, ex.fill), ex.fill, `${where}: fill ${i}`);
    } else {
      assert.ok('cancel' in ac, `${where}: event ${i} should be a cancel, got ${JSON.stringify(ac)}`);
      assert.deepEqual(pick(ac.cancel as Cancel, ex.cancel), ex.cancel, `${where}: cancel ${i}`);
    }
  }
}

function snapshot(b: MatchingBook): unknown {
  return { orders: b.orders(), d0: b.depth(0), d1: b.depth(1), size: b.size(), next: b.nextExpiry() };
}

function isBid(outcome: Outcome, side: Side): boolean {
  return (outcome === 0) === (side === Side.BUY);
}

function runStep(b: MatchingBook, step: Step, where: string, check?: (b: MatchingBook) => string[]): void {
  const sink = recorder();
  const x: Expect = step.expect ?? {};
  const before = x.unchanged ? snapshot(b) : undefined;
  if ('place' in step) {
    const r = b.place(step.place, sink);
    if (x.code !== undefined) assert.equal(r.code, x.code, `${where}: code`);
    if (x.filled !== undefined) assert.equal(r.filledUnits, x.filled, `${where}: filledUnits`);
    if (x.resting !== undefined) assert.equal(r.restingUnits, x.resting, `${where}: restingUnits`);
  } else if ('cancel' in step) {
    const code = b.cancel(step.cancel, sink);
    if (x.code !== undefined) assert.equal(code, x.code, `${where}: code`);
  } else if ('expire' in step) {
    const n = b.expire(step.expire, sink);
    if (x.count !== undefined) assert.equal(n, x.count, `${where}: count`);
  } else {
    const n = b.cancelAll(step.cancelAll, sink);
    if (x.count !== undefined) assert.equal(n, x.count, `${where}: count`);
  }
  compareEvents(sink.events, x.events ?? [], x.anyOrder ?? false, where);
  if (before !== undefined) assert.deepEqual(snapshot(b), before, `${where}: book changed`);
  if (check) assert.deepEqual(check(b), [], `${where}: checkBook`);
}

function assertFinal(b: MatchingBook, fin: Final): void {
  const orders = b.orders();
  if (fin.bids) assert.deepEqual(orders.filter((x) => isBid(x.outcome, x.side)).map((x) => x.handle), fin.bids, 'bids in priority order');
  if (fin.asks) assert.deepEqual(orders.filter((x) => !isBid(x.outcome, x.side)).map((x) => x.handle), fin.asks, 'asks in priority order');
  if (fin.remaining) {
    for (const [h, units] of Object.entries(fin.remaining)) {
      const found = orders.find((x) => x.handle === Number(h));
      assert.ok(found, `order ${h} should rest`);
      assert.equal(found.remainingUnits, units, `remaining of ${h}`);
    }
  }
  if (fin.size !== undefined) {
    assert.equal(b.size(), fin.size, 'size()');
    assert.equal(orders.length, fin.size, 'orders().length');
  }
  if (fin.nextExpiry !== undefined) assert.equal(b.nextExpiry(), fin.nextExpiry, 'nextExpiry');
  if (fin.best) assert.deepEqual([b.bestBid(0), b.bestAsk(0), b.bestBid(1), b.bestAsk(1)], fin.best, 'best bid/ask');
  if (fin.depth0) assert.deepEqual(b.depth(0), fin.depth0, 'depth(0)');
  if (fin.depth1) assert.deepEqual(b.depth(1), fin.depth1, 'depth(1)');
}

/** Orders a non-empty book holds before an invalid-input row is tried on it. */
const SEED_ORDERS = [o(101, 'B0', 3000, 5 * T), o(102, 'S0', 7000, 6 * T), o(103, 'B1', 2000, 7 * T)];

export function bookSuite(name: string, create: (p: MarketParams) => MatchingBook, check?: (b: MatchingBook) => string[]): void {
  const make = (p?: Partial<MarketParams>): MatchingBook => create({ ...BASE, ...p });

  describe(`${name}: behaviour`, () => {
    for (const c of cases) {
      test(c.name, () => {
        const b = make(c.params);
        if (check) assert.deepEqual(check(b), [], 'checkBook on a new book');
        c.steps.forEach((s, i) => runStep(b, s, `step ${i}`, check));
        if (c.final) assertFinal(b, c.final);
      });
    }
  });

  describe(`${name}: invalid input`, () => {
    for (const row of invalid) {
      test(row.name, () => {
        const b = make(row.params);
        for (const s of SEED_ORDERS) runStep(b, { place: s, expect: { code: MatchCode.OK } }, `seed ${s.handle}`, check);
        runStep(b, { place: row.order, expect: rejected(row.code, row.events ?? []) }, 'invalid', check);
      });
    }
    for (const row of valid) {
      test(`accepts ${row.name}`, () => {
        const b = make(row.params);
        runStep(b, { place: row.order, expect: row.expect }, 'valid', check);
      });
    }
  });
}
