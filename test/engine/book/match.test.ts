import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CancelReason,
  FillKind,
  MatchCode,
  Side,
  Tif,
  type Cancel,
  type EventSink,
  type Fill,
  type MarketParams,
  type MatchingBook,
  type Outcome,
  type PlaceCommand,
  type PlaceResult,
} from '../../../src/engine/book/api.ts';
import { createBook } from '../../../src/engine/book/book.ts';
import { checkBook } from '../../../src/engine/book/invariants.ts';
import { feeUnits } from '../../../src/engine/book/match.ts';

// Tick 0.01, min size 0.01 token, maker 1%, taker 2%: non-zero and different, so a swapped fee shows.
const PARAMS: MarketParams = { tickPips: 100, minSizeUnits: 10_000, makerFeeBps: 100, takerFeeBps: 200 };

type Event = { fill: Fill } | { cancel: Cancel };

function recorder(): { sink: EventSink; events: Event[] } {
  const events: Event[] = [];
  return { events, sink: { fill: (f) => events.push({ fill: { ...f } }), cancel: (c) => events.push({ cancel: { ...c } }) } };
}

function order(
  tif: Tif,
  handle: number,
  owner: number,
  outcome: Outcome,
  side: Side,
  pricePips: number,
  sizeUnits: number,
  extra: Partial<PlaceCommand> = {},
): PlaceCommand {
  return { handle, owner, outcome, side, tif, postOnly: false, pricePips, sizeUnits, budgetUnits: 0, expiresAt: 0, ...extra };
}
const gtc = (h: number, owner: number, outcome: Outcome, side: Side, p: number, size: number, extra: Partial<PlaceCommand> = {}) =>
  order(Tif.GTC, h, owner, outcome, side, p, size, extra);
const fok = (h: number, owner: number, outcome: Outcome, side: Side, p: number, size: number, extra: Partial<PlaceCommand> = {}) =>
  order(Tif.FOK, h, owner, outcome, side, p, size, extra);
const fak = (h: number, owner: number, outcome: Outcome, side: Side, p: number, size: number, extra: Partial<PlaceCommand> = {}) =>
  order(Tif.FAK, h, owner, outcome, side, p, size, extra);

const { BUY, SELL } = Side;

function fill(f: Fill): Event {
  return { fill: f };
}
function cancel(c: Cancel): Event {
  return { cancel: c };
}

function assertSound(book: MatchingBook, when: string): void {
  assert.deepEqual(checkBook(book), [], `checkBook after ${when}`);
}

function build(setup: PlaceCommand[], params = PARAMS): MatchingBook {
  const book = createBook(params);
  const { sink, events } = recorder();
  for (const c of setup) {
    const r = book.place(c, sink);
    assert.equal(r.code, MatchCode.OK, `setup order ${c.handle}`);
    assertSound(book, `setup order ${c.handle}`);
  }
  assert.equal(events.length, 0, 'setup orders must not trade');
  return book;
}

interface Case {
  name: string;
  params?: MarketParams;
  setup: PlaceCommand[];
  cmd: PlaceCommand;
  expected: {
    result: PlaceResult;
    events: Event[];
    /** Resting orders after the command (handle, remaining), in orders() order; omitted = not checked. */
    resting?: Array<[handle: number, remainingUnits: number]>;
    /** The book must be exactly as before (orders() and both depths). */
    untouched?: boolean;
  };
}

const cases: Case[] = [
  {
    name: 'GTC that does not cross rests',
    setup: [gtc(1, 1, 0, SELL, 5000, 100_000)],
    cmd: gtc(2, 2, 0, BUY, 4900, 200_000),
    expected: { result: { code: MatchCode.OK, filledUnits: 0, restingUnits: 200_000 }, events: [], resting: [[2, 200_000], [1, 100_000]] },
  },
  {
    name: 'GTD rests with its expiry',
    setup: [],
    cmd: order(Tif.GTD, 1, 1, 1, BUY, 3000, 50_000, { expiresAt: 1_700_000_100 }),
    expected: { result: { code: MatchCode.OK, filledUnits: 0, restingUnits: 50_000 }, events: [], resting: [[1, 50_000]] },
  },
  {
    name: 'TRANSFER on outcome 0: BUY 0 takes SELL 0 at the maker price (improvement to the taker)',
    setup: [gtc(1, 1, 0, SELL, 6000, 1_000_000)],
    cmd: gtc(2, 2, 0, BUY, 6500, 1_000_000),
    expected: {
      result: { code: MatchCode.OK, filledUnits: 1_000_000, restingUnits: 0 },
      // 1 token at 0.60: 0.6 USDC each side; fee = bps * min(0.6, 0.4) * 1 -> taker 2% of 0.4, maker 1%.
      events: [
        fill({
          kind: FillKind.TRANSFER, takerHandle: 2, makerHandle: 1, takerOwner: 2, makerOwner: 1, takerOutcome: 0, makerOutcome: 0,
          takerSide: BUY, makerSide: SELL, sizeUnits: 1_000_000, takerPricePips: 6000, makerPricePips: 6000,
          takerUsdc: 600_000, makerUsdc: 600_000, takerFee: 8_000, makerFee: 4_000, makerRemainingUnits: 0,
        }),
      ],
      resting: [],
    },
  },
  {
    name: 'TRANSFER on outcome 1: SELL 1 takes a resting BUY 1 (seen as an ask at 7000)',
    setup: [gtc(1, 1, 1, BUY, 3000, 2_000_000)],
    cmd: gtc(2, 2, 1, SELL, 2500, 500_000),
    expected: {
      result: { code: MatchCode.OK, filledUnits: 500_000, restingUnits: 0 },
      events: [
        fill({
          kind: FillKind.TRANSFER, takerHandle: 2, makerHandle: 1, takerOwner: 2, makerOwner: 1, takerOutcome: 1, makerOutcome: 1,
          takerSide: SELL, makerSide: BUY, sizeUnits: 500_000, takerPricePips: 3000, makerPricePips: 3000,
          takerUsdc: 150_000, makerUsdc: 150_000, takerFee: 3_000, makerFee: 1_500, makerRemainingUnits: 1_500_000,
        }),
      ],
      resting: [[1, 1_500_000]],
    },
  },
  {
    name: 'MINT: BUY 1 at 0.45 meets a resting BUY 0 at 0.60, pays 0.40',
    setup: [gtc(1, 1, 0, BUY, 6000, 1_000_000)],
    cmd: gtc(2, 2, 1, BUY, 4500, 1_000_000),
    expected: {
      result: { code: MatchCode.OK, filledUnits: 1_000_000, restingUnits: 0 },
      events: [
        fill({
          kind: FillKind.MINT, takerHandle: 2, makerHandle: 1, takerOwner: 2, makerOwner: 1, takerOutcome: 1, makerOutcome: 0,
          takerSide: BUY, makerSide: BUY, sizeUnits: 1_000_000, takerPricePips: 4000, makerPricePips: 6000,
          takerUsdc: 400_000, makerUsdc: 600_000, takerFee: 8_000, makerFee: 4_000, makerRemainingUnits: 0,
        }),
      ],
      resting: [],
    },
  },
  {
    name: 'MERGE: SELL 1 at 0.50 meets a resting SELL 0 at 0.40, receives 0.60',
    setup: [gtc(1, 1, 0, SELL, 4000, 1_000_000)],
    cmd: gtc(2, 2, 1, SELL, 5000, 1_000_000),
    expected: {
      result: { code: MatchCode.OK, filledUnits: 1_000_000, restingUnits: 0 },
      events: [
        fill({
          kind: FillKind.MERGE, takerHandle: 2, makerHandle: 1, takerOwner: 2, makerOwner: 1, takerOutcome: 1, makerOutcome: 0,
          takerSide: SELL, makerSide: SELL, sizeUnits: 1_000_000, takerPricePips: 6000, makerPricePips: 4000,
          takerUsdc: 600_000, makerUsdc: 400_000, takerFee: 8_000, makerFee: 4_000, makerRemainingUnits: 0,
        }),
      ],
      resting: [],
    },
  },
  {
    name: 'fees round down per party (bps 7 / 3 on one lot at 0.33)',
    params: { tickPips: 100, minSizeUnits: 10_000, makerFeeBps: 3, takerFeeBps: 7 },
    setup: [gtc(1, 1, 0, SELL, 3300, 10_000)],
    cmd: gtc(2, 2, 0, BUY, 3300, 10_000),
    expected: {
      result: { code: MatchCode.OK, filledUnits: 10_000, restingUnits: 0 },
      // taker 7 * 3300 * 10_000 / 1e8 = 2.31 -> 2; maker 3 * 3300 * 10_000 / 1e8 = 0.99 -> 0.
      events: [
        fill({
          kind: FillKind.TRANSFER, takerHandle: 2, makerHandle: 1, takerOwner: 2, makerOwner: 1, takerOutcome: 0, makerOutcome: 0,
          takerSide: BUY, makerSide: SELL, sizeUnits: 10_000, takerPricePips: 3300, makerPricePips: 3300,
          takerUsdc: 3_300, makerUsdc: 3_300, takerFee: 2, makerFee: 0, makerRemainingUnits: 0,
        }),
      ],
    },
  },
  {
    name: 'multi-level sweep fills best first, then rests the rest at its limit',
    setup: [gtc(1, 1, 0, SELL, 5000, 300_000), gtc(2, 1, 0, SELL, 5100, 200_000), gtc(3, 1, 0, SELL, 5200, 500_000)],
    cmd: gtc(4, 2, 0, BUY, 5100, 600_000),
    expected: {
      result: { code: MatchCode.OK, filledUnits: 500_000, restingUnits: 100_000 },
      events: [
        fill({
          kind: FillKind.TRANSFER, takerHandle: 4, makerHandle: 1, takerOwner: 2, makerOwner: 1, takerOutcome: 0, makerOutcome: 0,
          takerSide: BUY, makerSide: SELL, sizeUnits: 300_000, takerPricePips: 5000, makerPricePips: 5000,
          takerUsdc: 150_000, makerUsdc: 150_000, takerFee: 3_000, makerFee: 1_500, makerRemainingUnits: 0,
        }),
        fill({
          kind: FillKind.TRANSFER, takerHandle: 4, makerHandle: 2, takerOwner: 2, makerOwner: 1, takerOutcome: 0, makerOutcome: 0,
          takerSide: BUY, makerSide: SELL, sizeUnits: 200_000, takerPricePips: 5100, makerPricePips: 5100,
          takerUsdc: 102_000, makerUsdc: 102_000, takerFee: 1_960, makerFee: 980, makerRemainingUnits: 0,
        }),
      ],
      resting: [[4, 100_000], [3, 500_000]],
    },
  },
  {
    name: 'price before time, then FIFO within a level (a partly filled maker keeps its place)',
    setup: [gtc(1, 1, 0, SELL, 5000, 100_000), gtc(2, 3, 0, SELL, 5000, 100_000), gtc(3, 4, 0, SELL, 4900, 100_000)],
    cmd: gtc(4, 2, 0, BUY, 5000, 150_000),
    expected: {
      result: { code: MatchCode.OK, filledUnits: 150_000, restingUnits: 0 },
      events: [
        fill({
          kind: FillKind.TRANSFER, takerHandle: 4, makerHandle: 3, takerOwner: 2, makerOwner: 4, takerOutcome: 0, makerOutcome: 0,
          takerSide: BUY, makerSide: SELL, sizeUnits: 100_000, takerPricePips: 4900, makerPricePips: 4900,
          takerUsdc: 49_000, makerUsdc: 49_000, takerFee: 980, makerFee: 490, makerRemainingUnits: 0,
        }),
        fill({
          kind: FillKind.TRANSFER, takerHandle: 4, makerHandle: 1, takerOwner: 2, makerOwner: 1, takerOutcome: 0, makerOutcome: 0,
          takerSide: BUY, makerSide: SELL, sizeUnits: 50_000, takerPricePips: 5000, makerPricePips: 5000,
          takerUsdc: 25_000, makerUsdc: 25_000, takerFee: 500, makerFee: 250, makerRemainingUnits: 50_000,
        }),
      ],
      resting: [[1, 50_000], [2, 100_000]],
    },
  },
  {
    name: 'complementary orders share one queue: a BUY 1 ask and a SELL 0 ask at the same level fill in arrival order',
    setup: [gtc(1, 1, 1, BUY, 5000, 100_000), gtc(2, 3, 0, SELL, 5000, 100_000)],
    cmd: gtc(3, 2, 0, BUY, 5000, 150_000),
    expected: {
      result: { code: MatchCode.OK, filledUnits: 150_000, restingUnits: 0 },
      events: [
        fill({
          kind: FillKind.MINT, takerHandle: 3, makerHandle: 1, takerOwner: 2, makerOwner: 1, takerOutcome: 0, makerOutcome: 1,
          takerSide: BUY, makerSide: BUY, sizeUnits: 100_000, takerPricePips: 5000, makerPricePips: 5000,
          takerUsdc: 50_000, makerUsdc: 50_000, takerFee: 1_000, makerFee: 500, makerRemainingUnits: 0,
        }),
        fill({
          kind: FillKind.TRANSFER, takerHandle: 3, makerHandle: 2, takerOwner: 2, makerOwner: 3, takerOutcome: 0, makerOutcome: 0,
          takerSide: BUY, makerSide: SELL, sizeUnits: 50_000, takerPricePips: 5000, makerPricePips: 5000,
          takerUsdc: 25_000, makerUsdc: 25_000, takerFee: 500, makerFee: 250, makerRemainingUnits: 50_000,
        }),
      ],
      resting: [[2, 50_000]],
    },
  },
  {
    name: 'FOK that can fill entirely executes (bound off tick)',
    setup: [gtc(1, 1, 0, SELL, 5000, 100_000), gtc(2, 1, 0, SELL, 5100, 100_000)],
    cmd: fok(3, 2, 0, BUY, 5099, 100_000),
    expected: {
      result: { code: MatchCode.OK, filledUnits: 100_000, restingUnits: 0 },
      events: [
        fill({
          kind: FillKind.TRANSFER, takerHandle: 3, makerHandle: 1, takerOwner: 2, makerOwner: 1, takerOutcome: 0, makerOutcome: 0,
          takerSide: BUY, makerSide: SELL, sizeUnits: 100_000, takerPricePips: 5000, makerPricePips: 5000,
          takerUsdc: 50_000, makerUsdc: 50_000, takerFee: 1_000, makerFee: 500, makerRemainingUnits: 0,
        }),
      ],
      resting: [[2, 100_000]],
    },
  },
  {
    name: 'FOK that cannot fill entirely (an off-tick bound excludes 5100) is killed, book untouched',
    setup: [gtc(1, 1, 0, SELL, 5000, 100_000), gtc(2, 1, 0, SELL, 5100, 100_000)],
    cmd: fok(3, 2, 0, BUY, 5099, 150_000),
    expected: {
      result: { code: MatchCode.FOK_NOT_FILLED, filledUnits: 0, restingUnits: 0 },
      events: [cancel({ handle: 3, owner: 2, outcome: 0, side: BUY, pricePips: 5099, remainingUnits: 150_000, reason: CancelReason.UNFILLED_REMAINDER })],
      untouched: true,
    },
  },
  {
    name: 'FAK fills what crosses; the remainder is reported as UNFILLED_REMAINDER and never rests',
    setup: [gtc(1, 1, 0, BUY, 5000, 100_000), gtc(2, 1, 0, BUY, 4800, 100_000)],
    cmd: fak(3, 2, 0, SELL, 4901, 300_000),
    expected: {
      result: { code: MatchCode.OK, filledUnits: 100_000, restingUnits: 0 },
      events: [
        fill({
          kind: FillKind.TRANSFER, takerHandle: 3, makerHandle: 1, takerOwner: 2, makerOwner: 1, takerOutcome: 0, makerOutcome: 0,
          takerSide: SELL, makerSide: BUY, sizeUnits: 100_000, takerPricePips: 5000, makerPricePips: 5000,
          takerUsdc: 50_000, makerUsdc: 50_000, takerFee: 1_000, makerFee: 500, makerRemainingUnits: 0,
        }),
        cancel({ handle: 3, owner: 2, outcome: 0, side: SELL, pricePips: 4901, remainingUnits: 200_000, reason: CancelReason.UNFILLED_REMAINDER }),
      ],
      resting: [[2, 100_000]],
    },
  },
  {
    name: 'FAK with nothing crossing -> FAK_NO_MATCH, book untouched',
    setup: [gtc(1, 1, 0, SELL, 5000, 100_000)],
    cmd: fak(2, 2, 0, BUY, 4999, 100_000),
    expected: {
      result: { code: MatchCode.FAK_NO_MATCH, filledUnits: 0, restingUnits: 0 },
      events: [cancel({ handle: 2, owner: 2, outcome: 0, side: BUY, pricePips: 4999, remainingUnits: 100_000, reason: CancelReason.UNFILLED_REMAINDER })],
      untouched: true,
    },
  },
  {
    name: 'FAK on an empty book -> FAK_NO_MATCH',
    setup: [],
    cmd: fak(1, 2, 1, SELL, 1, 100_000),
    expected: {
      result: { code: MatchCode.FAK_NO_MATCH, filledUnits: 0, restingUnits: 0 },
      events: [cancel({ handle: 1, owner: 2, outcome: 1, side: SELL, pricePips: 1, remainingUnits: 100_000, reason: CancelReason.UNFILLED_REMAINDER })],
      untouched: true,
    },
  },
  {
    name: 'FAK BUY budget stops at the last whole lot that fits (94_999 buys 10 lots at 0.40 and 10 at 0.50)',
    setup: [gtc(1, 1, 0, SELL, 4000, 100_000), gtc(2, 1, 0, SELL, 5000, 200_000)],
    cmd: fak(3, 2, 0, BUY, 5000, 300_000, { budgetUnits: 94_999 }),
    expected: {
      result: { code: MatchCode.OK, filledUnits: 200_000, restingUnits: 0 },
      events: [
        fill({
          kind: FillKind.TRANSFER, takerHandle: 3, makerHandle: 1, takerOwner: 2, makerOwner: 1, takerOutcome: 0, makerOutcome: 0,
          takerSide: BUY, makerSide: SELL, sizeUnits: 100_000, takerPricePips: 4000, makerPricePips: 4000,
          takerUsdc: 40_000, makerUsdc: 40_000, takerFee: 800, makerFee: 400, makerRemainingUnits: 0,
        }),
        fill({
          kind: FillKind.TRANSFER, takerHandle: 3, makerHandle: 2, takerOwner: 2, makerOwner: 1, takerOutcome: 0, makerOutcome: 0,
          takerSide: BUY, makerSide: SELL, sizeUnits: 100_000, takerPricePips: 5000, makerPricePips: 5000,
          takerUsdc: 50_000, makerUsdc: 50_000, takerFee: 1_000, makerFee: 500, makerRemainingUnits: 100_000,
        }),
        cancel({ handle: 3, owner: 2, outcome: 0, side: BUY, pricePips: 5000, remainingUnits: 100_000, reason: CancelReason.UNFILLED_REMAINDER }),
      ],
      resting: [[2, 100_000]],
    },
  },
  {
    name: 'FAK BUY 1 budget is spent at its own price (MINT at 0.30 against BUY 0 at 0.70)',
    setup: [gtc(1, 1, 0, BUY, 7000, 200_000)],
    cmd: fak(2, 2, 1, BUY, 3500, 200_000, { budgetUnits: 45_000 }),
    expected: {
      result: { code: MatchCode.OK, filledUnits: 150_000, restingUnits: 0 },
      events: [
        fill({
          kind: FillKind.MINT, takerHandle: 2, makerHandle: 1, takerOwner: 2, makerOwner: 1, takerOutcome: 1, makerOutcome: 0,
          takerSide: BUY, makerSide: BUY, sizeUnits: 150_000, takerPricePips: 3000, makerPricePips: 7000,
          takerUsdc: 45_000, makerUsdc: 105_000, takerFee: 900, makerFee: 450, makerRemainingUnits: 50_000,
        }),
        cancel({ handle: 2, owner: 2, outcome: 1, side: BUY, pricePips: 3500, remainingUnits: 50_000, reason: CancelReason.UNFILLED_REMAINDER }),
      ],
      resting: [[1, 50_000]],
    },
  },
  {
    name: 'FOK BUY filled exactly within budget',
    setup: [gtc(1, 1, 0, SELL, 4000, 100_000), gtc(2, 1, 0, SELL, 5000, 200_000)],
    cmd: fok(3, 2, 0, BUY, 5000, 200_000, { budgetUnits: 90_000 }),
    expected: { result: { code: MatchCode.OK, filledUnits: 200_000, restingUnits: 0 }, events: [
      fill({
        kind: FillKind.TRANSFER, takerHandle: 3, makerHandle: 1, takerOwner: 2, makerOwner: 1, takerOutcome: 0, makerOutcome: 0,
        takerSide: BUY, makerSide: SELL, sizeUnits: 100_000, takerPricePips: 4000, makerPricePips: 4000,
        takerUsdc: 40_000, makerUsdc: 40_000, takerFee: 800, makerFee: 400, makerRemainingUnits: 0,
      }),
      fill({
        kind: FillKind.TRANSFER, takerHandle: 3, makerHandle: 2, takerOwner: 2, makerOwner: 1, takerOutcome: 0, makerOutcome: 0,
        takerSide: BUY, makerSide: SELL, sizeUnits: 100_000, takerPricePips: 5000, makerPricePips: 5000,
        takerUsdc: 50_000, makerUsdc: 50_000, takerFee: 1_000, makerFee: 500, makerRemainingUnits: 100_000,
      }),
    ], resting: [[2, 100_000]] },
  },
  {
    name: 'FOK BUY one unit short of budget is killed, book untouched',
    setup: [gtc(1, 1, 0, SELL, 4000, 100_000), gtc(2, 1, 0, SELL, 5000, 200_000)],
    cmd: fok(3, 2, 0, BUY, 5000, 200_000, { budgetUnits: 89_999 }),
    expected: {
      result: { code: MatchCode.FOK_NOT_FILLED, filledUnits: 0, restingUnits: 0 },
      events: [cancel({ handle: 3, owner: 2, outcome: 0, side: BUY, pricePips: 5000, remainingUnits: 200_000, reason: CancelReason.UNFILLED_REMAINDER })],
      untouched: true,
    },
  },
  {
    name: 'post-only BUY 0 touching the best ask -> POST_ONLY_CROSSES, book untouched',
    setup: [gtc(1, 1, 0, SELL, 5000, 100_000)],
    cmd: gtc(2, 2, 0, BUY, 5000, 100_000, { postOnly: true }),
    expected: { result: { code: MatchCode.POST_ONLY_CROSSES, filledUnits: 0, restingUnits: 0 }, events: [], untouched: true },
  },
  {
    name: 'post-only SELL 1 crossing through the mirror (bid at 5000 vs ask 5000) -> POST_ONLY_CROSSES',
    setup: [gtc(1, 1, 0, SELL, 5000, 100_000)],
    cmd: gtc(2, 2, 1, SELL, 5000, 100_000, { postOnly: true }),
    expected: { result: { code: MatchCode.POST_ONLY_CROSSES, filledUnits: 0, restingUnits: 0 }, events: [], untouched: true },
  },
  {
    name: 'post-only crossing only its own order is still rejected (own orders count)',
    setup: [gtc(1, 2, 0, SELL, 5000, 100_000)],
    cmd: gtc(2, 2, 0, BUY, 5100, 100_000, { postOnly: true }),
    expected: { result: { code: MatchCode.POST_ONLY_CROSSES, filledUnits: 0, restingUnits: 0 }, events: [], untouched: true },
  },
  {
    name: 'post-only that does not cross rests',
    setup: [gtc(1, 1, 0, SELL, 5000, 100_000)],
    cmd: gtc(2, 2, 1, BUY, 5000, 100_000, { postOnly: true }),
    expected: { result: { code: MatchCode.OK, filledUnits: 0, restingUnits: 100_000 }, events: [], resting: [[1, 100_000], [2, 100_000]] },
  },
  {
    name: 'self-trade: the own resting order is canceled (SELF_TRADE) and matching continues behind it',
    setup: [gtc(1, 7, 0, SELL, 5000, 100_000), gtc(2, 8, 0, SELL, 5000, 100_000)],
    cmd: gtc(3, 7, 0, BUY, 5000, 150_000),
    expected: {
      result: { code: MatchCode.OK, filledUnits: 100_000, restingUnits: 50_000 },
      events: [
        cancel({ handle: 1, owner: 7, outcome: 0, side: SELL, pricePips: 5000, remainingUnits: 100_000, reason: CancelReason.SELF_TRADE }),
        fill({
          kind: FillKind.TRANSFER, takerHandle: 3, makerHandle: 2, takerOwner: 7, makerOwner: 8, takerOutcome: 0, makerOutcome: 0,
          takerSide: BUY, makerSide: SELL, sizeUnits: 100_000, takerPricePips: 5000, makerPricePips: 5000,
          takerUsdc: 50_000, makerUsdc: 50_000, takerFee: 1_000, makerFee: 500, makerRemainingUnits: 0,
        }),
      ],
      resting: [[3, 50_000]],
    },
  },
  {
    name: 'self-trade across outcomes: BUY 1 taker meets its own BUY 0 (a would-be MINT) and cancels it',
    setup: [gtc(1, 7, 0, BUY, 6000, 100_000)],
    cmd: gtc(2, 7, 1, BUY, 4000, 100_000),
    expected: {
      result: { code: MatchCode.OK, filledUnits: 0, restingUnits: 100_000 },
      events: [cancel({ handle: 1, owner: 7, outcome: 0, side: BUY, pricePips: 6000, remainingUnits: 100_000, reason: CancelReason.SELF_TRADE })],
      resting: [[2, 100_000]],
    },
  },
  {
    name: 'killed FOK leaves its own crossing order alone (the dry run skips own orders)',
    setup: [gtc(1, 7, 0, SELL, 5000, 100_000), gtc(2, 8, 0, SELL, 5000, 100_000)],
    cmd: fok(3, 7, 0, BUY, 5000, 200_000),
    expected: {
      result: { code: MatchCode.FOK_NOT_FILLED, filledUnits: 0, restingUnits: 0 },
      events: [cancel({ handle: 3, owner: 7, outcome: 0, side: BUY, pricePips: 5000, remainingUnits: 200_000, reason: CancelReason.UNFILLED_REMAINDER })],
      untouched: true,
    },
  },
  {
    name: 'FAK meeting only its own orders cancels them and ends FAK_NO_MATCH',
    setup: [gtc(1, 7, 0, SELL, 5000, 100_000)],
    cmd: fak(2, 7, 0, BUY, 5000, 100_000),
    expected: {
      result: { code: MatchCode.FAK_NO_MATCH, filledUnits: 0, restingUnits: 0 },
      events: [
        cancel({ handle: 1, owner: 7, outcome: 0, side: SELL, pricePips: 5000, remainingUnits: 100_000, reason: CancelReason.SELF_TRADE }),
        cancel({ handle: 2, owner: 7, outcome: 0, side: BUY, pricePips: 5000, remainingUnits: 100_000, reason: CancelReason.UNFILLED_REMAINDER }),
      ],
      resting: [],
    },
  },
  {
    name: 'GTC price off tick -> INVALID_PRICE, nothing emitted',
    setup: [gtc(1, 1, 0, SELL, 5000, 100_000)],
    cmd: gtc(2, 2, 0, BUY, 5050, 100_000),
    expected: { result: { code: MatchCode.INVALID_PRICE, filledUnits: 0, restingUnits: 0 }, events: [], untouched: true },
  },
  {
    name: 'GTC price at 1.00 -> INVALID_PRICE',
    setup: [],
    cmd: gtc(1, 2, 0, BUY, 10_000, 100_000),
    expected: { result: { code: MatchCode.INVALID_PRICE, filledUnits: 0, restingUnits: 0 }, events: [], untouched: true },
  },
  {
    name: 'FOK bound of 0 -> INVALID_PRICE',
    setup: [],
    cmd: fok(1, 2, 0, SELL, 0, 100_000),
    expected: { result: { code: MatchCode.INVALID_PRICE, filledUnits: 0, restingUnits: 0 }, events: [], untouched: true },
  },
  {
    name: 'size not a multiple of a lot -> INVALID_SIZE',
    setup: [],
    cmd: gtc(1, 2, 0, BUY, 5000, 15_000),
    expected: { result: { code: MatchCode.INVALID_SIZE, filledUnits: 0, restingUnits: 0 }, events: [], untouched: true },
  },
  {
    name: 'size below the market minimum -> INVALID_SIZE (FAK too)',
    params: { ...PARAMS, minSizeUnits: 5_000_000 },
    setup: [],
    cmd: fak(1, 2, 0, BUY, 5000, 4_990_000),
    expected: { result: { code: MatchCode.INVALID_SIZE, filledUnits: 0, restingUnits: 0 }, events: [], untouched: true },
  },
  {
    name: 'a handle that rests here -> DUPLICATE_HANDLE, book untouched (even for a crossing taker)',
    setup: [gtc(1, 1, 0, SELL, 5000, 100_000)],
    cmd: fak(1, 2, 0, BUY, 5000, 100_000),
    expected: { result: { code: MatchCode.DUPLICATE_HANDLE, filledUnits: 0, restingUnits: 0 }, events: [], untouched: true },
  },
];

for (const c of cases) {
  test(`match: ${c.name}`, () => {
    const book = build(c.setup, c.params);
    const ordersBefore = book.orders();
    const depthBefore = [book.depth(0), book.depth(1)];
    const { sink, events } = recorder();
    const result = { ...book.place(c.cmd, sink) };
    assertSound(book, 'the command');
    assert.deepEqual(result, c.expected.result);
    assert.deepEqual(events, c.expected.events);
    if (c.expected.resting) {
      assert.deepEqual(book.orders().map((o) => [o.handle, o.remainingUnits]), c.expected.resting);
    }
    if (c.expected.untouched) {
      assert.deepEqual(book.orders(), ordersBefore);
      assert.deepEqual([book.depth(0), book.depth(1)], depthBefore);
    }
    // Money identities that hold for every fill kind.
    for (const e of events) {
      if (!('fill' in e)) continue;
      const f = e.fill;
      const lots = f.sizeUnits / 10_000;
      assert.equal(f.takerUsdc, lots * f.takerPricePips);
      assert.equal(f.makerUsdc, lots * f.makerPricePips);
      if (f.kind === FillKind.TRANSFER) assert.equal(f.takerUsdc, f.makerUsdc);
      else assert.equal(f.takerUsdc + f.makerUsdc, f.sizeUnits);
    }
  });
}

test('match: a GTC that crosses several levels never leaves the book crossed, step by step', () => {
  const book = createBook(PARAMS);
  const { sink } = recorder();
  let h = 1;
  for (let p = 4000; p <= 6000; p += 100) {
    book.place(gtc(h++, 1, 0, SELL, p, 20_000), sink);
    assertSound(book, `ask ${p}`);
  }
  for (let p = 6000; p >= 4000; p -= 500) {
    const r = book.place(gtc(h++, 2, 1, SELL, 10_000 - p, 50_000), sink);
    assert.equal(r.code, MatchCode.OK);
    assertSound(book, `SELL 1 at ${10_000 - p}`);
    const bb = book.bestBid(0);
    const ba = book.bestAsk(0);
    if (bb !== 0 && ba !== 0) assert.ok(bb < ba);
  }
});

test('match: fee stays exact where bps * min(P, 1-P) * size overflows 2^53', () => {
  // 9e14 units (900 million tokens) at 0.5 with 10_000 bps: the naive product is 4.5e22.
  const lots = 90_000_000_000;
  const got = feeUnits(lots, 5000, 9_999);
  const want = Number((BigInt(lots) * 5000n * 9_999n) / 10_000n);
  assert.equal(got, want);
  for (const [l, m, bps] of [[1, 3300, 7], [123_457, 4999, 13], [7, 1, 9_999], [1, 5000, 1]]) {
    assert.equal(feeUnits(l, m, bps), Number((BigInt(l) * BigInt(m) * BigInt(bps)) / 10_000n));
  }
});

test('match: fee bps are read per command, so an admin change applies to the next order', () => {
  const params = { ...PARAMS };
  const book = createBook(params);
  const { sink, events } = recorder();
  book.place(gtc(1, 1, 0, SELL, 5000, 200_000), sink);
  book.place(gtc(2, 2, 0, BUY, 5000, 100_000), sink);
  params.takerFeeBps = 0;
  book.place(gtc(3, 2, 0, BUY, 5000, 100_000), sink);
  assertSound(book, 'fee change');
  const fees = events.flatMap((e) => ('fill' in e ? [e.fill.takerFee] : []));
  assert.deepEqual(fees, [1_000, 0]);
});
