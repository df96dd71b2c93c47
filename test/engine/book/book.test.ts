import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CancelReason,
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
import { BookCore, createBook } from '../../../src/engine/book/book.ts';
import { checkBook } from '../../../src/engine/book/invariants.ts';
import { CHUNK_SLOTS } from '../../../src/engine/book/layout.ts';

const PARAMS: MarketParams = { tickPips: 100, minSizeUnits: 10_000, makerFeeBps: 100, takerFeeBps: 200 };
const { BUY, SELL } = Side;

function recorder(): { sink: EventSink; fills: Fill[]; cancels: Cancel[] } {
  const fills: Fill[] = [];
  const cancels: Cancel[] = [];
  return { fills, cancels, sink: { fill: (f) => fills.push({ ...f }), cancel: (c) => cancels.push({ ...c }) } };
}

function cmd(handle: number, owner: number, outcome: Outcome, side: Side, pricePips: number, sizeUnits: number, extra: Partial<PlaceCommand> = {}): PlaceCommand {
  return { handle, owner, outcome, side, tif: Tif.GTC, postOnly: false, pricePips, sizeUnits, budgetUnits: 0, expiresAt: 0, ...extra };
}

function sound(book: MatchingBook, when: string): void {
  assert.deepEqual(checkBook(book), [], `checkBook after ${when}`);
}

/** Places every command (each must be accepted), checking the book after each. */
function placeAll(book: MatchingBook, cmds: PlaceCommand[], sink: EventSink = recorder().sink): void {
  for (const c of cmds) {
    assert.equal(book.place(c, sink).code, MatchCode.OK, `place ${c.handle}`);
    sound(book, `place ${c.handle}`);
  }
}

test('book: createBook rejects parameters it cannot index', () => {
  for (const tickPips of [0, 3, 7, 10_000, 1.5, -100]) {
    assert.throws(() => createBook({ ...PARAMS, tickPips }), /tickPips/, `tick ${tickPips}`);
  }
  assert.throws(() => createBook({ ...PARAMS, makerFeeBps: -1 }), /makerFeeBps/);
  for (const tickPips of [1, 10, 25, 50, 100, 1000]) assert.equal(createBook({ ...PARAMS, tickPips }).size(), 0);
});

interface DepthCase {
  name: string;
  setup: PlaceCommand[];
  expected: { depth0: Depth; depth1: Depth; best: [bid0: number, ask0: number, bid1: number, ask1: number] };
}

const depthCases: DepthCase[] = [
  {
    name: 'empty book',
    setup: [],
    expected: { depth0: { bids: [], asks: [] }, depth1: { bids: [], asks: [] }, best: [0, 0, 0, 0] },
  },
  {
    name: 'outcome-0 orders only: bids ascending, asks descending, best last',
    setup: [cmd(1, 1, 0, BUY, 4000, 10_000), cmd(2, 1, 0, BUY, 4500, 20_000), cmd(3, 1, 0, SELL, 5500, 30_000), cmd(4, 1, 0, SELL, 6000, 40_000)],
    expected: {
      depth0: {
        bids: [{ pricePips: 4000, sizeUnits: 10_000 }, { pricePips: 4500, sizeUnits: 20_000 }],
        asks: [{ pricePips: 6000, sizeUnits: 40_000 }, { pricePips: 5500, sizeUnits: 30_000 }],
      },
      // Outcome 1 sees outcome 0's asks as bids at 1 - p and its bids as asks at 1 - p.
      depth1: {
        bids: [{ pricePips: 4000, sizeUnits: 40_000 }, { pricePips: 4500, sizeUnits: 30_000 }],
        asks: [{ pricePips: 6000, sizeUnits: 10_000 }, { pricePips: 5500, sizeUnits: 20_000 }],
      },
      best: [4500, 5500, 4500, 5500],
    },
  },
  {
    name: 'both outcomes aggregate into one level (BUY 0 at 0.40 and SELL 1 at 0.60 are both bids at 4000)',
    setup: [cmd(1, 1, 0, BUY, 4000, 10_000), cmd(2, 2, 1, SELL, 6000, 20_000), cmd(3, 3, 1, BUY, 3000, 50_000)],
    expected: {
      depth0: { bids: [{ pricePips: 4000, sizeUnits: 30_000 }], asks: [{ pricePips: 7000, sizeUnits: 50_000 }] },
      depth1: { bids: [{ pricePips: 3000, sizeUnits: 50_000 }], asks: [{ pricePips: 6000, sizeUnits: 30_000 }] },
      best: [4000, 7000, 3000, 6000],
    },
  },
  {
    name: 'extreme prices at a 1-pip tick',
    setup: [cmd(1, 1, 0, BUY, 1, 10_000), cmd(2, 1, 0, SELL, 9999, 10_000)],
    expected: {
      depth0: { bids: [{ pricePips: 1, sizeUnits: 10_000 }], asks: [{ pricePips: 9999, sizeUnits: 10_000 }] },
      depth1: { bids: [{ pricePips: 1, sizeUnits: 10_000 }], asks: [{ pricePips: 9999, sizeUnits: 10_000 }] },
      best: [1, 9999, 1, 9999],
    },
  },
];

for (const c of depthCases) {
  test(`book: depth and best prices — ${c.name}`, () => {
    const book = createBook(c.name.includes('1-pip') ? { ...PARAMS, tickPips: 1 } : PARAMS);
    placeAll(book, c.setup);
    assert.deepEqual(book.depth(0), c.expected.depth0);
    assert.deepEqual(book.depth(1), c.expected.depth1);
    assert.deepEqual([book.bestBid(0), book.bestAsk(0), book.bestBid(1), book.bestAsk(1)], c.expected.best);
  });
}

test('book: orders() lists bids best first, then asks best first, FIFO within a level', () => {
  const book = createBook(PARAMS);
  placeAll(book, [
    cmd(1, 1, 0, BUY, 4000, 10_000),
    cmd(2, 1, 0, SELL, 6000, 10_000),
    cmd(3, 1, 1, SELL, 5500, 10_000), // bid at 4500
    cmd(4, 1, 0, BUY, 4000, 10_000),
    cmd(5, 1, 1, BUY, 4500, 10_000), // ask at 5500
    cmd(6, 1, 0, SELL, 6000, 10_000),
  ]);
  assert.deepEqual(book.orders().map((o) => o.handle), [3, 1, 4, 5, 2, 6]);
  const o3 = book.orders()[0];
  assert.deepEqual(o3, { handle: 3, owner: 1, outcome: 1, side: SELL, pricePips: 5500, remainingUnits: 10_000, expiresAt: 0 });
});

interface CancelCase {
  name: string;
  setup: PlaceCommand[];
  cancel: number;
  expected: { code: MatchCode; cancels: Cancel[]; resting: number[] };
}

const cancelCases: CancelCase[] = [
  {
    name: 'cancel reports the unfilled remainder with reason USER',
    setup: [cmd(1, 1, 1, BUY, 3000, 70_000), cmd(2, 1, 0, BUY, 5000, 10_000)],
    cancel: 1,
    expected: {
      code: MatchCode.OK,
      cancels: [{ handle: 1, owner: 1, outcome: 1, side: BUY, pricePips: 3000, remainingUnits: 70_000, reason: CancelReason.USER }],
      resting: [2],
    },
  },
  {
    name: 'cancel from the middle of a queue keeps the others in order',
    setup: [cmd(1, 1, 0, SELL, 5000, 10_000), cmd(2, 1, 0, SELL, 5000, 20_000), cmd(3, 1, 0, SELL, 5000, 30_000)],
    cancel: 2,
    expected: {
      code: MatchCode.OK,
      cancels: [{ handle: 2, owner: 1, outcome: 0, side: SELL, pricePips: 5000, remainingUnits: 20_000, reason: CancelReason.USER }],
      resting: [1, 3],
    },
  },
  {
    name: 'cancel of the best level moves the best to the next level',
    setup: [cmd(1, 1, 0, BUY, 5000, 10_000), cmd(2, 1, 0, BUY, 3000, 20_000)],
    cancel: 1,
    expected: {
      code: MatchCode.OK,
      cancels: [{ handle: 1, owner: 1, outcome: 0, side: BUY, pricePips: 5000, remainingUnits: 10_000, reason: CancelReason.USER }],
      resting: [2],
    },
  },
  {
    name: 'unknown handle -> UNKNOWN_ORDER, nothing emitted',
    setup: [cmd(1, 1, 0, BUY, 5000, 10_000)],
    cancel: 99,
    expected: { code: MatchCode.UNKNOWN_ORDER, cancels: [], resting: [1] },
  },
];

for (const c of cancelCases) {
  test(`book: ${c.name}`, () => {
    const book = createBook(PARAMS);
    placeAll(book, c.setup);
    const { sink, cancels } = recorder();
    assert.equal(book.cancel(c.cancel, sink), c.expected.code);
    sound(book, 'cancel');
    assert.deepEqual(cancels, c.expected.cancels);
    assert.deepEqual(book.orders().map((o) => o.handle), c.expected.resting);
  });
}

test('book: cancel twice -> second is UNKNOWN_ORDER; a canceled handle may not be found again', () => {
  const book = createBook(PARAMS);
  placeAll(book, [cmd(1, 1, 0, BUY, 5000, 10_000)]);
  const { sink } = recorder();
  assert.equal(book.cancel(1, sink), MatchCode.OK);
  assert.equal(book.cancel(1, sink), MatchCode.UNKNOWN_ORDER);
  sound(book, 'double cancel');
  assert.equal(book.size(), 0);
  assert.equal(book.bestBid(0), 0);
});

test('book: a fully filled maker cannot be canceled', () => {
  const book = createBook(PARAMS);
  placeAll(book, [cmd(1, 1, 0, SELL, 5000, 10_000), cmd(2, 2, 0, BUY, 5000, 10_000)]);
  assert.equal(book.cancel(1, recorder().sink), MatchCode.UNKNOWN_ORDER);
  sound(book, 'cancel of filled');
});

test('book: a canceled order loses its place; re-entering joins the back of the queue', () => {
  const book = createBook(PARAMS);
  placeAll(book, [cmd(1, 1, 0, SELL, 5000, 10_000), cmd(2, 2, 0, SELL, 5000, 10_000)]);
  const { sink, fills } = recorder();
  assert.equal(book.cancel(1, sink), MatchCode.OK);
  placeAll(book, [cmd(3, 1, 0, SELL, 5000, 10_000)]);
  placeAll(book, [cmd(4, 9, 0, BUY, 5000, 10_000)], sink);
  assert.deepEqual(fills.map((f) => f.makerHandle), [2]);
  assert.deepEqual(book.orders().map((o) => o.handle), [3]);
});

test('book: cancelAll cancels in priority order with the given reason and leaves an empty, reusable book', () => {
  const book = createBook(PARAMS);
  placeAll(book, [
    cmd(1, 1, 0, SELL, 6000, 10_000),
    cmd(2, 2, 0, BUY, 4000, 20_000, { tif: Tif.GTD, expiresAt: 500 }),
    cmd(3, 3, 1, SELL, 5500, 30_000),
    cmd(4, 4, 1, BUY, 3000, 40_000),
  ]);
  const { sink, cancels } = recorder();
  assert.equal(book.cancelAll(CancelReason.MARKET_RESOLVED, sink), 4);
  sound(book, 'cancelAll');
  assert.deepEqual(cancels.map((c) => [c.handle, c.remainingUnits, c.reason]), [
    [3, 30_000, CancelReason.MARKET_RESOLVED],
    [2, 20_000, CancelReason.MARKET_RESOLVED],
    [1, 10_000, CancelReason.MARKET_RESOLVED],
    [4, 40_000, CancelReason.MARKET_RESOLVED],
  ]);
  assert.equal(book.size(), 0);
  assert.equal(book.nextExpiry(), 0);
  assert.deepEqual(book.depth(0), { bids: [], asks: [] });
  assert.equal(book.cancelAll(CancelReason.USER, sink), 0);
  placeAll(book, [cmd(5, 1, 0, BUY, 4000, 10_000), cmd(6, 1, 0, SELL, 4100, 10_000)]);
  assert.deepEqual(book.orders().map((o) => o.handle), [5, 6]);
});

test('book: GTD expiry — nextExpiry tracks the earliest, expire removes expiresAt <= now in priority order', () => {
  const book = createBook(PARAMS);
  const gtd = (h: number, side: Side, p: number, exp: number) => cmd(h, 1, 0, side, p, 10_000, { tif: Tif.GTD, expiresAt: exp });
  assert.equal(book.nextExpiry(), 0);
  placeAll(book, [gtd(1, BUY, 4000, 300), gtd(2, SELL, 6000, 100), cmd(3, 1, 0, BUY, 4500, 10_000), gtd(4, BUY, 4500, 100), gtd(5, BUY, 4000, 200)]);
  assert.equal(book.nextExpiry(), 100);
  const { sink, cancels } = recorder();

  assert.equal(book.expire(99, sink), 0);
  assert.equal(cancels.length, 0);

  assert.equal(book.expire(100, sink), 2);
  sound(book, 'expire 100');
  // Bids before asks: handle 4 (bid 4500) then 2 (ask 6000), although 2 arrived first.
  assert.deepEqual(cancels.map((c) => [c.handle, c.reason]), [[4, CancelReason.EXPIRED], [2, CancelReason.EXPIRED]]);
  assert.equal(book.nextExpiry(), 200);

  // A cancel removes a GTD order from the expiry heap as well.
  assert.equal(book.cancel(5, sink), MatchCode.OK);
  sound(book, 'cancel GTD');
  assert.equal(book.nextExpiry(), 300);

  cancels.length = 0;
  assert.equal(book.expire(10_000, sink), 1);
  sound(book, 'expire all');
  assert.deepEqual(cancels.map((c) => c.handle), [1]);
  assert.equal(book.nextExpiry(), 0);
  assert.deepEqual(book.orders().map((o) => o.handle), [3]);
});

test('book: a filled GTD maker leaves the expiry heap; expire() then finds nothing', () => {
  const book = createBook(PARAMS);
  placeAll(book, [cmd(1, 1, 0, SELL, 5000, 10_000, { tif: Tif.GTD, expiresAt: 100 }), cmd(2, 2, 0, BUY, 5000, 10_000)]);
  assert.equal(book.nextExpiry(), 0);
  assert.equal(book.expire(1_000, recorder().sink), 0);
  sound(book, 'expire after fill');
});

test('book: many GTD orders expire in priority order (bids best first, asks best first, FIFO)', () => {
  const book = createBook(PARAMS);
  const expected: number[] = [];
  const cmds: PlaceCommand[] = [];
  // Expiries run against priority order so the heap order and the emitted order differ.
  for (let i = 0; i < 40; i++) {
    const bid = i % 2 === 0;
    const p = bid ? 4000 + (i % 5) * 100 : 6000 - (i % 5) * 100;
    cmds.push(cmd(i + 1, 1, 0, bid ? BUY : SELL, p, 10_000, { tif: Tif.GTD, expiresAt: 1_000 - i }));
  }
  placeAll(book, cmds);
  expected.push(...book.orders().map((o) => o.handle));
  const { sink, cancels } = recorder();
  assert.equal(book.expire(1_000, sink), 40);
  sound(book, 'expire 40');
  assert.deepEqual(cancels.map((c) => c.handle), expected);
});

test('book: GTD with expiresAt 0 never expires; GTC ignores expiresAt', () => {
  const book = createBook(PARAMS);
  placeAll(book, [cmd(1, 1, 0, BUY, 4000, 10_000, { tif: Tif.GTD, expiresAt: 0 }), cmd(2, 1, 0, BUY, 4000, 10_000, { expiresAt: 50 })]);
  assert.equal(book.nextExpiry(), 0);
  assert.equal(book.expire(Number.MAX_SAFE_INTEGER, recorder().sink), 0);
  assert.deepEqual(book.orders().map((o) => o.expiresAt), [0, 0]);
});

test('book: growth beyond the initial capacity — 100k resting orders, cancels, refill through the free list', () => {
  const book = createBook({ ...PARAMS, tickPips: 10 }) as BookCore;
  const { sink } = recorder();
  const N = 100_000;
  for (let i = 0; i < N; i++) {
    const bid = (i & 1) === 0;
    const level = (i * 7919) % 400;
    const r = book.place(cmd(i + 1, i % 97, 0, bid ? BUY : SELL, bid ? 4990 - level * 10 : 5010 + level * 10, 10_000 * (1 + (i % 9))), sink);
    assert.equal(r.code, MatchCode.OK);
    // checkBook is O(n); after every step would make this test quadratic, so check at each growth step.
    if ((i & (i + 1)) === 0 || i % 25_000 === 0) sound(book, `${i + 1} orders`);
  }
  sound(book, `${N} orders`);
  assert.equal(book.size(), N);
  assert.ok(book.slots.chunkCount > 1, 'grew past one chunk');
  assert.ok(book.slots.capacity >= N && book.slots.capacity < N + CHUNK_SLOTS);
  for (let i = 0; i < N; i += 2) assert.equal(book.cancel(i + 1, sink), MatchCode.OK);
  sound(book, 'half canceled');
  const capacity = book.slots.capacity;
  for (let i = 0; i < N / 2; i++) {
    assert.equal(book.place(cmd(N + i + 1, 1, 1, SELL, 5500, 10_000), sink).code, MatchCode.OK);
  }
  sound(book, 'refilled');
  assert.equal(book.slots.capacity, capacity, 'freed slots were reused');
  assert.equal(book.size(), N);
  // One taker sweeps the whole mirrored SELL 1 level (bid at 4500) and more.
  const r = book.place({ ...cmd(2 * N, 5, 0, SELL, 4500, 10_000 * N), tif: Tif.FAK }, sink);
  assert.equal(r.code, MatchCode.OK);
  sound(book, 'big sweep');
  assert.equal(book.bestBid(0) < 4500 || book.bestBid(0) === 0, true);
});

test('book: checkBook catches corruption', () => {
  const book = createBook(PARAMS) as BookCore;
  placeAll(book, [cmd(1, 1, 0, BUY, 4000, 20_000), cmd(2, 1, 0, BUY, 4000, 10_000), cmd(3, 1, 0, SELL, 6000, 10_000)]);
  const slot = book.index.get(1);
  book.slots.setRemaining(slot, 30_000);
  assert.ok(checkBook(book).some((e) => e.includes('total')), 'level total mismatch');
  book.slots.setRemaining(slot, 20_000);
  sound(book, 'repair');
  book.bestAskL = 70;
  assert.ok(checkBook(book).some((e) => e.includes('bestAskL')), 'best pointer');
  book.bestAskL = 60;
  const other = book.index.get(2);
  book.slots.setPrev(other, 99);
  assert.ok(checkBook(book).some((e) => e.includes('prev')), 'broken link');
});

test('book: a market that was never traded keeps no level arrays', () => {
  const book = createBook({ ...PARAMS, tickPips: 1 }) as BookCore;
  assert.equal(book.levels.allocated, false);
  book.place({ ...cmd(1, 1, 0, BUY, 5000, 10_000), tif: Tif.FAK }, recorder().sink);
  assert.equal(book.levels.allocated, false);
  placeAll(book, [cmd(2, 1, 0, BUY, 5000, 10_000)]);
  assert.equal(book.levels.allocated, true);
  book.cancelAll(CancelReason.MARKET_RESOLVED, recorder().sink);
  assert.equal(book.levels.allocated, false);
  sound(book, 'released');
});
