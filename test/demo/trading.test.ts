/**
 * The traders' decisions (src/demo/trading.ts): deterministic under a seed, fair prices bounded, quotes on
 * tick inside the price range and never crossed, makers within their inventory limits, takers crossing
 * the makers' quotes, and legs and amounts the engine reads back at the intended price.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FairWalk,
  HISTORY_WALK,
  LIVE_WALK,
  MAKER_PRESETS,
  TAKER_PRESETS,
  createRng,
  legFor,
  makerQuote,
  needsRequote,
  orderAmounts,
  sizeFor,
  takerIntent,
  type MakerParams,
  type MarketRules,
  type TakerParams,
} from '../../src/demo/trading.ts';

const UNITS = 1_000_000;
const LOT = 10_000;
const MARKETS: MarketRules[] = [
  { tickPips: 100, minSizeUnits: 5 * UNITS },
  { tickPips: 10, minSizeUnits: 5 * UNITS },
  { tickPips: 1000, minSizeUnits: 1 * UNITS },
];

test('the same seed gives the same walk and the same decisions; another seed does not', () => {
  const run = (seed: number) => {
    const rng = createRng(seed);
    const walk = new FairWalk(4_000, LIVE_WALK, createRng(seed + 1));
    const out: number[] = [];
    for (let i = 0; i < 200; i++) {
      walk.step(500);
      const t = takerIntent(TAKER_PRESETS[0]!, rng, walk.pips, walk.trendPips, 0, MARKETS[0]!)!;
      out.push(walk.pips, t.limitPips, t.sizeUnits, t.buy ? 1 : 0);
    }
    return out;
  };
  assert.deepEqual(run(7), run(7));
  assert.notDeepEqual(run(7), run(8));
});

test('the fair price walks within its bounds and moves', () => {
  for (const params of [HISTORY_WALK, LIVE_WALK]) {
    for (const start of [params.minPips - 100, 50, 5_000, 9_990]) {
      const w = new FairWalk(start, params, createRng(3));
      const seen = new Set<number>();
      for (let i = 0; i < 2_000; i++) {
        w.step(30 * 60_000);
        assert.ok(w.pips >= params.minPips && w.pips <= params.maxPips, `${w.pips} within [${params.minPips}, ${params.maxPips}]`);
        seen.add(Math.round(w.pips));
      }
      assert.ok(seen.size > 100, 'it moves');
    }
  }
  // Mean reversion keeps the price near its anchor where a pure walk wanders off.
  const wander = (reversionPerHour: number) => {
    const w = new FairWalk(5_000, { ...LIVE_WALK, reversionPerHour }, createRng(1));
    let sum = 0;
    let far = 0;
    for (let i = 0; i < 48 * 60; i++) {
      w.step(60_000);
      sum += w.pips;
      far = Math.max(far, Math.abs(w.pips - 5_000));
    }
    return { mean: sum / (48 * 60), far };
  };
  const held = wander(LIVE_WALK.reversionPerHour);
  const free = wander(0);
  assert.ok(Math.abs(held.mean - 5_000) < 500, `mean ${held.mean} near the anchor`);
  assert.ok(held.far < free.far, `reverting ${held.far} < free ${free.far}`);
});

test('quotes are on tick, inside [tick, 1 - tick], at least a tick apart, around the fair price', () => {
  for (const m of MARKETS) {
    for (const p of MAKER_PRESETS) {
      for (let fair = 1; fair < 10_000; fair += 37) {
        const q = makerQuote(fair, 0, p, m);
        assert.ok(q.bid !== undefined && q.ask !== undefined);
        for (const px of [q.bid, q.ask]) {
          assert.equal(px % m.tickPips, 0, `${px} on tick ${m.tickPips}`);
          assert.ok(px >= m.tickPips && px <= 10_000 - m.tickPips, `${px} inside the range`);
        }
        assert.ok(q.ask - q.bid >= m.tickPips, `bid ${q.bid} < ask ${q.ask}`);
        // Away from the edges the quotes straddle the fair price at about the half spread.
        if (fair > p.halfSpreadPips + 2 * m.tickPips && fair < 10_000 - p.halfSpreadPips - 2 * m.tickPips) {
          assert.ok(q.bid <= fair - p.halfSpreadPips && q.bid > fair - p.halfSpreadPips - m.tickPips);
          assert.ok(q.ask >= fair + p.halfSpreadPips && q.ask < fair + p.halfSpreadPips + m.tickPips);
        }
        assert.equal(q.sizeUnits % LOT, 0);
        assert.ok(q.sizeUnits >= m.minSizeUnits);
      }
    }
  }
});

test('makers respect their inventory limit and lean against what they hold', () => {
  const p: MakerParams = { halfSpreadPips: 200, sizeUnits: 50 * UNITS, maxInventoryUnits: 500 * UNITS, skewPips: 150, requotePips: 100 };
  const m = MARKETS[0]!;
  const cases = [
    { inv: 0, bid: true, ask: true },
    { inv: 499 * UNITS, bid: true, ask: true },
    { inv: 500 * UNITS, bid: false, ask: true },
    { inv: 2_000 * UNITS, bid: false, ask: true },
    { inv: -500 * UNITS, bid: true, ask: false },
    { inv: -499 * UNITS, bid: true, ask: true },
  ];
  for (const c of cases) {
    const q = makerQuote(5_000, c.inv, p, m);
    assert.equal(q.bid !== undefined, c.bid, `bid at inventory ${c.inv / UNITS}`);
    assert.equal(q.ask !== undefined, c.ask, `ask at inventory ${c.inv / UNITS}`);
  }
  const flat = makerQuote(5_000, 0, p, m);
  const long = makerQuote(5_000, 400 * UNITS, p, m);
  const short = makerQuote(5_000, -400 * UNITS, p, m);
  assert.ok(long.bid! < flat.bid! && long.ask! < flat.ask!, 'long: both quotes lower');
  assert.ok(short.bid! > flat.bid! && short.ask! > flat.ask!, 'short: both quotes higher');
});

test('a quote is replaced once it is at least a tick and the requote distance away', () => {
  const p = MAKER_PRESETS[1]!;
  const m = MARKETS[0]!;
  assert.equal(needsRequote(5_000, 5_000, p, m), false);
  assert.equal(needsRequote(5_000, 5_000 + p.requotePips - 1, p, m), false);
  assert.equal(needsRequote(5_000, 5_000 + p.requotePips, p, m), true);
  assert.equal(needsRequote(5_000, 5_000 - p.requotePips, p, m), true);
  assert.equal(needsRequote(5_000, 5_010, { ...p, requotePips: 0 }, MARKETS[1]!), true, 'one tick of 0.001');
});

test('takers cross the makers: a buy reaches the tight maker\'s ask, a sell its bid', () => {
  const rng = createRng(11);
  for (const m of MARKETS) {
    for (const t of TAKER_PRESETS) {
      for (let fair = 500; fair <= 9_500; fair += 250) {
        const q = makerQuote(fair, 0, MAKER_PRESETS[0]!, m);
        const intent = takerIntent({ ...t, style: 'random' }, rng, fair, 0, 0, m)!;
        if (intent.buy) assert.ok(intent.limitPips >= q.ask!, `buy limit ${intent.limitPips} reaches ask ${q.ask} (fair ${fair})`);
        else assert.ok(intent.limitPips <= q.bid!, `sell limit ${intent.limitPips} reaches bid ${q.bid} (fair ${fair})`);
        assert.ok(intent.limitPips >= 1 && intent.limitPips <= 9_999);
        assert.equal(intent.sizeUnits % LOT, 0);
        assert.ok(intent.sizeUnits >= Math.max(t.minSizeUnits, m.minSizeUnits) && intent.sizeUnits <= Math.max(t.maxSizeUnits, m.minSizeUnits));
      }
    }
  }
});

test('random takers buy and sell; momentum takers follow the trend and wait without one; inventory turns them', () => {
  const m = MARKETS[0]!;
  const random: TakerParams = { ...TAKER_PRESETS[0]!, style: 'random' };
  const rng = createRng(5);
  let buys = 0;
  for (let i = 0; i < 1_000; i++) if (takerIntent(random, rng, 5_000, 0, 0, m)!.buy) buys++;
  assert.ok(buys > 400 && buys < 600, `${buys} buys of 1000`);

  const momentum: TakerParams = { ...TAKER_PRESETS[2]!, style: 'momentum', trendPips: 60 };
  assert.equal(takerIntent(momentum, rng, 5_000, 59, 0, m), undefined);
  assert.equal(takerIntent(momentum, rng, 5_000, -59, 0, m), undefined);
  assert.equal(takerIntent(momentum, rng, 5_000, 60, 0, m)!.buy, true);
  assert.equal(takerIntent(momentum, rng, 5_000, -200, 0, m)!.buy, false);

  for (const p of [random, momentum]) {
    for (let i = 0; i < 50; i++) {
      assert.equal(takerIntent(p, rng, 5_000, 500, p.maxInventoryUnits, m)!.buy, false, 'full long: sells');
      assert.equal(takerIntent(p, rng, 5_000, -500, -p.maxInventoryUnits, m)!.buy, true, 'full short: buys');
    }
  }
});

test('legs: sell what is held, else buy the other outcome; the engine reads the amounts back at the price', () => {
  const size = 20 * UNITS;
  const table = [
    { name: 'buy Yes with USDC', buy: true, free: { yes: 0, no: 0 }, leg: { outcome: 0, side: 'BUY', pricePips: 4_300 } },
    { name: 'buy Yes by selling held No', buy: true, free: { yes: 0, no: size }, leg: { outcome: 1, side: 'SELL', pricePips: 5_700 } },
    { name: 'too little No: buy Yes', buy: true, free: { yes: 0, no: size - LOT }, leg: { outcome: 0, side: 'BUY', pricePips: 4_300 } },
    { name: 'sell held Yes', buy: false, free: { yes: size, no: 0 }, leg: { outcome: 0, side: 'SELL', pricePips: 4_300 } },
    { name: 'sell Yes without Yes: buy No', buy: false, free: { yes: 0, no: size }, leg: { outcome: 1, side: 'BUY', pricePips: 5_700 } },
  ] as const;
  for (const c of table) {
    const leg = legFor(c.buy, 4_300, size, c.free);
    assert.deepEqual(leg, { ...c.leg, sizeUnits: size }, c.name);
    const { makerAmount, takerAmount } = orderAmounts(leg);
    const [usdc, tokens] = leg.side === 'BUY' ? [makerAmount, takerAmount] : [takerAmount, makerAmount];
    assert.equal(tokens, size, c.name);
    // engine.ts: price = USDC x 10_000 / size, exact for a resting order.
    assert.equal((usdc * 10_000) / tokens, leg.pricePips, c.name);
    assert.ok(Number.isSafeInteger(usdc));
  }
  assert.equal(sizeFor(3 * UNITS + 5, MARKETS[0]!), 5 * UNITS, 'at least the minimum');
  assert.equal(sizeFor(12 * UNITS + 9_999, MARKETS[0]!), 12 * UNITS, 'whole lots');
});
