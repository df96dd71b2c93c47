/**
 * The rewards sampler and the earnings read from its accruals, without the engine: at each sample each
 * wallet's share of a market (its scores over everyone's) accrues share x seconds and earnings at the rate
 * in force; a market without a midpoint or without scoring orders accrues nothing; days are UTC; the
 * earnings, totals (an honest 0) and the markets' list (share, competitiveness, order) follow.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OrderRecord } from '../../src/domain/events.ts';
import type { RewardProgram } from '../../src/domain/rewards.ts';
import { openStore } from '../../src/journal/env.ts';
import { rewardKeys } from '../../src/journal/keys.ts';
import type { MarketRec } from '../../src/projections/catalog/catalog-index.ts';
import { ViewStore } from '../../src/projections/projector.ts';
import { RewardsSampler, walletScores, type RewardMarket } from '../../src/projections/rewards.ts';
import type { CatalogReader } from '../../src/queries/catalog.ts';
import { RewardsReader } from '../../src/queries/rewards.ts';
import { silentLogger } from '../../src/runtime/log.ts';

const T = 1_000_000;
const ZERO = '0x0000000000000000000000000000000000000000';
const CID = '0x' + 'c'.repeat(64);
const QUIET = '0x' + 'd'.repeat(64);
const ALICE = '0x' + 'a'.repeat(40);
const BOB = '0x' + 'b'.repeat(40);
const DAY = Date.UTC(2026, 4, 1);
const PROGRAM: RewardProgram = { rates: [{ asset: ZERO, dailyRate: 86.4 }], minSizeUnits: 10 * T, maxSpreadPips: 1500 };

const rec = (wallet: string, conditionId: string, outcome: 0 | 1, pricePips: number, size: number, matched = 0) =>
  ({ wallet, conditionId, outcome, pricePips, sizeUnits: size * T, sizeMatched: matched * T, status: 'LIVE' }) as unknown as OrderRecord;

function setup(o: { orders: OrderRecord[]; mid?: number; sampleSeconds?: number }) {
  const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'pm-rwd-')), mapSize: 256 * 1024 ** 2 });
  const views = new ViewStore(store.views);
  let now = DAY + 3600_000;
  const markets: RewardMarket[] = [
    { conditionId: CID, token0: 'y', program: PROGRAM },
    { conditionId: QUIET, token0: 'q', program: PROGRAM },
  ];
  const state = { orders: o.orders, mid: o.mid ?? 5000 };
  const sampler = new RewardsSampler({
    views,
    markets: () => markets,
    midpoint: (t) => (t === 'y' ? state.mid : undefined),
    orders: (cids) => state.orders.filter((x) => cids.has(x.conditionId)),
    now: () => now,
    sampleSeconds: o.sampleSeconds ?? 60,
    log: silentLogger,
  });
  const catalogRec = { conditionId: CID, eventId: '1', question: 'Q?', slug: 'q', image: '', startDate: '2026-04-01T00:00:00Z', createdAt: '', endDate: '2026-05-10T00:00:00Z', rewardsMaxSpread: 15, rewardsMinSize: 10, clobRewards: [{ assetAddress: ZERO, rewardsDailyRate: 86.4 }], clobTokenIds: ['y', 'n'], outcomes: ['Yes', 'No'] } as unknown as MarketRec;
  const catalog = {
    samplingRecords: () => [catalogRec],
    marketByCondition: (c: string) => (c === CID ? catalogRec : undefined),
    event: () => ({ slug: 'event' }),
    tokenPrice: () => 0.5,
  } as unknown as CatalogReader;
  return { views, sampler, state, reader: new RewardsReader(views, catalog, () => now), at: (ms: number) => (now = ms) };
}

test('walletScores: each wallet\'s orders summed; orders that do not score are left out', () => {
  const s = walletScores([rec(ALICE, CID, 0, 4000, 90), rec(ALICE, CID, 1, 4000, 90), rec(BOB, CID, 0, 5000, 20), rec(BOB, CID, 0, 3000, 100), rec(BOB, CID, 0, 5000, 20, 15)], 5000, PROGRAM);
  assert.deepEqual([...s.keys()], [ALICE, BOB]);
  assert.ok(Math.abs(s.get(ALICE)! - 2 * (1 / 9) * 90) < 1e-12);
  assert.equal(s.get(BOB), 20, 'the far order and the one with 5 tokens left do not score');
});

test('each sample accrues every wallet\'s share x seconds and earnings; no midpoint or no scorer, nothing', () => {
  // Alice: 20 at the mid (S = 20); Bob: 90 at 10 of 15 cents (S = 10). Shares 2/3 and 1/3.
  const h = setup({ orders: [rec(ALICE, CID, 0, 5000, 20), rec(BOB, CID, 1, 4000, 90), rec(BOB, QUIET, 0, 5000, 50)] });
  h.sampler.sample();
  h.sampler.sample();
  const date = '2026-05-01';
  const a = h.views.get<{ shareSeconds: number; earned: Record<string, number> }>(rewardKeys.accrual(ALICE, date, CID))!;
  const b = h.views.get<{ shareSeconds: number; earned: Record<string, number> }>(rewardKeys.accrual(BOB, date, CID))!;
  assert.ok(Math.abs(a.shareSeconds - 2 * 60 * (2 / 3)) < 1e-9);
  assert.ok(Math.abs(b.shareSeconds - 2 * 60 * (1 / 3)) < 1e-9);
  assert.ok(Math.abs(a.earned[ZERO] - (86.4 * 80) / 86_400) < 1e-12, '86.4 a day x 80 share-seconds');
  assert.equal(h.views.get(rewardKeys.accrual(BOB, date, QUIET)), undefined, 'the quiet market has no midpoint');
  assert.equal(h.views.get(rewardKeys.samples(date)), 120);
  assert.ok(Math.abs(h.views.get<{ scoreSeconds: number }>(rewardKeys.marketDay(date, CID))!.scoreSeconds - 30 * 120) < 1e-9);

  // A one-sided book (no midpoint): the sample counts, nobody earns.
  h.state.mid = undefined as unknown as number;
  h.sampler.sample();
  assert.equal(h.views.get(rewardKeys.samples(date)), 180);
  assert.ok(Math.abs(h.views.get<{ shareSeconds: number }>(rewardKeys.accrual(ALICE, date, CID))!.shareSeconds - 80) < 1e-9);
});

test('earnings, totals and the markets\' list of a day; a wallet that never scored has an honest 0', () => {
  const h = setup({ orders: [rec(ALICE, CID, 0, 5000, 20), rec(BOB, CID, 1, 4000, 90)], sampleSeconds: 3600 });
  h.sampler.sample();
  h.at(DAY + 86_400_000 + 60_000);
  h.sampler.sample(); // the next UTC day
  const day1 = '2026-05-01';
  const [e] = h.reader.earnings(ALICE, day1);
  assert.deepEqual({ ...e, earnings: Math.round(e.earnings * 1e9) / 1e9 }, { date: day1, condition_id: CID, asset_address: ZERO, maker_address: ALICE, earnings: 2.4, asset_rate: 1 });
  assert.equal(h.reader.earnings(ALICE, '2026-05-02').length, 1, 'the second sample went to the next day');
  const carol = '0x' + 'c'.repeat(40);
  assert.deepEqual(h.reader.earnings(carol, day1), []);
  assert.deepEqual(h.reader.totals(carol, day1), [{ date: day1, asset_address: ZERO, maker_address: carol, earnings: 0, asset_rate: 1 }]);
  const [m] = h.reader.userMarkets(BOB, day1);
  assert.ok(Math.abs(m.earning_percentage - 100 / 3) < 1e-9, 'a third of the score over the sampled hour');
  assert.ok(Math.abs(m.market_competitiveness - 30) < 1e-9, 'S 20 + 10 on average');
  assert.ok(Math.abs(m.earnings[0].earnings - 1.2) < 1e-9);
  assert.deepEqual(m.rewards_config, [{ asset_address: ZERO, start_date: '2026-04-01', end_date: '2026-05-10', rate_per_day: 86.4, total_rewards: 86.4 * 40 }]);
  assert.deepEqual(h.reader.userMarkets(BOB, day1, { noCompetition: true }), [], 'the market had scoring orders');
});

test('catching up: a clock moved past many periods takes every sample, each on its own day; a late timer takes one', () => {
  const h = setup({ orders: [rec(ALICE, CID, 0, 5000, 20)], sampleSeconds: 60 });
  h.sampler.start();
  // From 01:00 on day 1 to 00:30 on day 2: 1,410 periods, 1,379 of them on day 1 (the one at midnight is day 2's).
  h.at(DAY + 86_400_000 + 1_800_000);
  h.sampler.catchUp(true);
  assert.equal(h.views.get(rewardKeys.samples('2026-05-01')), 1_379 * 60);
  assert.equal(h.views.get(rewardKeys.samples('2026-05-02')), 31 * 60);
  assert.equal(h.sampler.samples, 1_410);
  assert.ok(Math.abs(h.reader.earnings(ALICE, '2026-05-01')[0]!.earnings - (86.4 * 1_379 * 60) / 86_400) < 1e-9, 'the whole market for each sample');
  // Five periods later, by a timer that ran late rather than a moved clock: one sample.
  h.at(DAY + 86_400_000 + 1_800_000 + 300_000);
  h.sampler.catchUp(false);
  assert.equal(h.views.get(rewardKeys.samples('2026-05-02')), 32 * 60);
  h.sampler.stop();
});
