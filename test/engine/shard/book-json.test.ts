/**
 * The shard's /book serializer (src/engine/shard/book-json.ts) and the fast formatters it uses
 * (src/domain/units.ts): byte for byte what the straightforward JSON.stringify of the body gives (the
 * oracle below, the worker's former code), since clients recompute the hash, over hand-made depths and
 * over both book implementations driven by a seeded full-feature stream. Both tokens come from outcome 0's
 * depth alone, so the oracle takes outcome 1 from the book itself: that checks the mirror assumption.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { PIPS, UNITS, formatPips, formatPipsFast, formatUnits, formatUnitsFast } from '../../../src/domain/units.ts';
import type { Depth, EventSink, MarketParams, MatchingBook } from '../../../src/engine/book/api.ts';
import { createBook } from '../../../src/engine/book/book.ts';
import { createReferenceBook } from '../../../src/engine/book/reference-book.ts';
import { oracleBookBody } from '../../fixtures/book-oracle.ts';
import { bookBodies, bookFrame, type FrameInput } from '../../../src/engine/shard/book-json.ts';
import { MIXES, Op, generateWorkload } from '../../../tools/workload.ts';

const NOW = 1_767_225_600;

/** Outcome 1's depth by the Depth contract, for hand-made outcome-0 depths. */
const mirrored = (d: Depth): Depth => ({
  bids: d.asks.map((l) => ({ pricePips: PIPS - l.pricePips, sizeUnits: l.sizeUnits })),
  asks: d.bids.map((l) => ({ pricePips: PIPS - l.pricePips, sizeUnits: l.sizeUnits })),
});

function expectBodies(name: string, m: FrameInput, d0: Depth, d1: Depth, last: [number, number]): void {
  const got = bookBodies(bookFrame(m), d0, last, NOW);
  for (const o of [0, 1] as const) {
    assert.equal(got[o], oracleBookBody(m, o === 0 ? d0 : d1, last[o], o, NOW), `${name}: outcome ${o}`);
    const parsed = JSON.parse(got[o]) as { hash: string };
    assert.equal(parsed.hash, createHash('sha1').update(JSON.stringify({ ...parsed, hash: '' })).digest('hex'), `${name}: hash of outcome ${o}`);
  }
}

test('formatPipsFast equals formatPips on every price and outside the table', () => {
  for (let p = -3; p <= PIPS + 3; p++) assert.equal(formatPipsFast(p), formatPips(p), String(p));
  for (const p of [0.5, 12.25, -0.5, 123_456, Number.MAX_SAFE_INTEGER]) assert.equal(formatPipsFast(p), formatPips(p), String(p));
  // The table fills lazily: a second lookup serves the stored string.
  assert.equal(formatPipsFast(4321), '0.4321');
});

test('formatUnitsFast equals formatUnits: whole cents, sub-cent values, extremes, odd inputs', () => {
  const values: number[] = [0, 1, 9, 10, 99, 100, 9_999, 10_000, 10_001, 99_999, 100_000, 999_999, UNITS, UNITS + 1, 1_500_000, 120_500_000];
  for (let c = 0; c <= 300_000; c += 7) values.push(c * 10_000);
  for (let u = 0; u <= 2 * UNITS; u += 37) values.push(u);
  let s = 12_345;
  for (let i = 0; i < 100_000; i++) {
    s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0;
    values.push(s * 2 ** (s % 22), s % 1000);
  }
  for (let k = 0; k <= 15; k++) values.push(10 ** k, 10 ** k - 1, 10 ** k + 1);
  values.push(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER - 1, 2 ** 52);
  // Not sizes: the fast path must hand them to formatUnits, not format them its own way.
  values.push(-1, -1_500_000, 0.5, 1.25e6 + 0.5, NaN, Infinity, -Infinity, 2 ** 60);
  for (const v of values) assert.equal(formatUnitsFast(v), formatUnits(v), String(v));
});

const base: FrameInput = { conditionId: '0x' + 'ab'.repeat(32), tokenIds: ['71321045679252212594626385532706912750332728571942532289631379312455583992563', '52114319501245915516055106046884209969926127482827954674443846427813813222426'], negRisk: false, minSizeUnits: 5 * UNITS, tickPips: 100 };
const cases: Array<{ name: string; m: FrameInput; d0: Depth; last: [number, number] }> = [
  { name: 'empty book, no trade', m: base, d0: { bids: [], asks: [] }, last: [0, 0] },
  { name: 'bids only, traded', m: { ...base, negRisk: true }, d0: { bids: [{ pricePips: 100, sizeUnits: 10_000 }, { pricePips: 4500, sizeUnits: 12_340_000 }], asks: [] }, last: [4500, 5500] },
  { name: 'asks only, tick 0.0001', m: { ...base, tickPips: 1, minSizeUnits: 0 }, d0: { bids: [], asks: [{ pricePips: 9999, sizeUnits: UNITS }, { pricePips: 5001, sizeUnits: 1 }] }, last: [0, 7] },
  {
    name: 'both sides, sub-cent and huge sizes, tick 0.1',
    m: { ...base, tickPips: 1000, minSizeUnits: 1_234_567 },
    d0: {
      bids: [{ pricePips: 1000, sizeUnits: 123_456_789 }, { pricePips: 2000, sizeUnits: 9_000_000_000_000 }],
      asks: [{ pricePips: 9000, sizeUnits: 1_000_001 }, { pricePips: 3000, sizeUnits: 500_000 }],
    },
    last: [3000, 7000],
  },
  { name: 'ids needing JSON escapes', m: { ...base, conditionId: 'c"\\\u0001', tokenIds: ['a"b', 'ü€\n'] }, d0: { bids: [{ pricePips: 4000, sizeUnits: 2 * UNITS }], asks: [] }, last: [0, 0] },
];
for (const c of cases) {
  test(`bookBodies: ${c.name}`, () => expectBodies(c.name, c.m, c.d0, mirrored(c.d0), c.last));
}

test('bookBodies on both book implementations through a full-feature stream, both outcomes from depth(0)', () => {
  const params: MarketParams = { tickPips: 100, minSizeUnits: 0, makerFeeBps: 20, takerFeeBps: 50 };
  const { commands } = generateWorkload({ seed: 31, params, mix: MIXES.full, owners: 8 }, 3000);
  const sink: EventSink = { fill: () => undefined, cancel: () => undefined };
  for (const [kind, book] of [
    ['production', createBook(params)],
    ['reference', createReferenceBook(params)],
  ] as Array<[string, MatchingBook]>) {
    const m: FrameInput = { ...base, minSizeUnits: params.minSizeUnits, tickPips: params.tickPips, negRisk: kind === 'reference' };
    let levels = 0;
    for (let i = 0; i < commands.length; i++) {
      const c = commands[i];
      if (c.op === Op.PLACE) book.place({ ...c.cmd }, sink);
      else if (c.op === Op.CANCEL) book.cancel(c.handle, sink);
      else book.expire(c.nowSec, sink);
      if (i % 50 === 0) {
        const d0 = book.depth(0);
        levels = Math.max(levels, d0.bids.length + d0.asks.length);
        expectBodies(`${kind} after ${i + 1} commands`, m, d0, book.depth(1), [i % 3 === 0 ? 0 : 100 + (i % 9800), 0]);
      }
    }
    assert.ok(levels >= 20, `${kind}: the stream built a book of ${levels} levels at most`);
  }
});
