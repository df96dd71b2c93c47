/**
 * demo/catalog.ts over the table in demo/demo-events.ts: the same seed and day give the same catalog, every
 * table event and the eleven daily events are there in id order, open markets' prices are the table's
 * within the jitter and on their tick, closed events keep the table's prices, and neg-risk fields carry
 * one market per name.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_BASE_MS, demoCatalog, syntheticCatalog } from '../../src/demo/catalog.ts';
import { DEMO_EVENTS } from '../../src/demo/demo-events.ts';

test('same seed and day: byte-identical; another seed moves open prices only', () => {
  const a = JSON.stringify(demoCatalog());
  assert.equal(JSON.stringify(demoCatalog({ seed: 2026, baseMs: DEMO_BASE_MS + 3_600_000 })), a, 'base day is the start of the day');
  const other = demoCatalog({ seed: 1 });
  assert.notEqual(JSON.stringify(other), a);
  assert.deepEqual(other.map((e) => e.slug), demoCatalog().map((e) => e.slug));
});

test('the table, then the daily series: ids in order, closed before the base day', () => {
  const events = demoCatalog();
  assert.equal(events.length, DEMO_EVENTS.length + 11);
  events.forEach((e, i) => assert.equal(e.id, String(i + 1)));
  DEMO_EVENTS.forEach((s, i) => {
    assert.equal(events[i].slug, s.slug);
    assert.equal(events[i].markets?.length, s.markets.length);
  });
  const daily = events.slice(DEMO_EVENTS.length);
  assert.equal(daily[0].slug, 'bitcoin-up-or-down-2026-10-29');
  assert.equal(daily[3].slug, 'bitcoin-up-or-down-2026-11-01');
  assert.deepEqual(daily.map((e) => e.closed), [true, true, true, false, false, false, false, false, false, false, false]);
  assert.ok(daily.every((e) => e.series?.length === 1));
});

test('prices: the table within the jitter on the tick, closed events as written', () => {
  const events = demoCatalog({ seed: 5 });
  DEMO_EVENTS.forEach((s, i) => {
    s.markets.forEach((m, k) => {
      const [yes, no] = JSON.parse(events[i].markets![k].outcomePrices as string) as [string, string];
      const tick = Number(m.tick ?? '0.01');
      assert.ok(Math.abs(Number(yes) + Number(no) - 1) < 1e-9);
      assert.ok(Math.abs(Number(yes) / tick - Math.round(Number(yes) / tick)) < 1e-6, `${yes} on tick ${tick}`);
      if (s.closed) assert.equal(Number(yes), m.yes);
      else assert.ok(Math.abs(Number(yes) - m.yes) <= 0.05 + tick, `${s.slug} ${m.group ?? ''}: ${yes} vs ${m.yes}`);
    });
  });
  for (const e of events.slice(DEMO_EVENTS.length).filter((e) => e.closed)) assert.equal(e.markets![0].outcomePrices, '["0.50","0.50"]');
});

test('a neg-risk field: one market per name, its group title, rewards where the table has them', () => {
  const nba = demoCatalog().find((e) => e.slug === 'nba-champion-2027')!;
  assert.equal(nba.negRisk, true);
  assert.deepEqual(nba.markets!.map((m) => m.groupItemTitle), ['Oklahoma City Thunder', 'Denver Nuggets', 'Boston Celtics', 'New York Knicks', 'Cleveland Cavaliers', 'Other']);
  assert.equal(nba.markets![5].question, 'Will the field (any other team) win the 2027 NBA Finals?');
  assert.deepEqual(nba.markets!.map((m) => m.clobRewards?.length), [1, 1, 0, 0, 0, 0]);
  assert.equal(nba.markets![0].slug, 'nba-champion-2027-oklahoma-city-thunder');
});

test('syntheticCatalog: the asked number of events, markets per event exact over multiples of 4', () => {
  const events = syntheticCatalog({ events: 400, marketsPerEvent: 3, firstId: 10 });
  assert.equal(events.length, 400);
  assert.equal(events[0].id, '10');
  assert.equal(events.reduce((n, e) => n + (e.markets?.length ?? 0), 0), 1200);
  assert.equal(new Set(events.map((e) => e.slug)).size, 400);
});
