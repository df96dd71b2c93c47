/**
 * The market table: markets by condition id and token, the shard fixed by the condition id, the ledger told
 * of every market, and rows without the engine's own fields.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MarketTable, parametersOf, rowOf } from '../../../src/engine/markets/market-table.ts';
import { Ledger } from '../../../src/engine/ledger/ledger.ts';
import { shardOf } from '../../../src/engine/shard-router.ts';
import type { MarketRow } from '../../../src/journal/writer.ts';

const row = (n: number): MarketRow => ({
  conditionId: '0x' + n.toString(16).padStart(64, '0'),
  marketId: n,
  tokenIds: [`${n}1`, `${n}2`],
  tickPips: 100,
  minSizeUnits: 0,
  makerFeeBps: 0,
  takerFeeBps: 0,
  acceptingOrders: true,
  negRisk: false,
  resolved: -1,
});

test('a market is found by condition id and by either token, on the shard its condition id names', () => {
  const ledger = new Ledger();
  const t = new MarketTable(ledger, 4);
  const ms = [1, 2, 3, 4, 5].map((n) => t.add(row(n)));
  assert.equal(t.size, 5);
  for (const m of ms) {
    assert.equal(t.get(m.conditionId), m);
    assert.deepEqual(t.token(m.tokenIds[0]), { market: m, outcome: 0 });
    assert.deepEqual(t.token(m.tokenIds[1]), { market: m, outcome: 1 });
    assert.equal(m.shard, shardOf(m.conditionId, 4));
    assert.equal(m.resolving, false);
    assert.ok(ledger.markets.has(m.conditionId), 'the ledger knows it');
  }
  assert.equal(t.token('nope'), undefined);
  assert.deepEqual([...t.values()], ms);
  assert.deepEqual(rowOf(ms[0]), row(1), 'the row leaves shard and resolving out');
});

test('rows keep the stored key order; parametersOf holds what a registration may change, in that order', () => {
  const ledger = new Ledger();
  const m = new MarketTable(ledger, 1).add({ ...row(7), tickPips: 10, negRisk: true });
  // The store encodes rows (and the journal market events) with their key order: it must not move.
  assert.deepEqual(Object.keys(rowOf(m)), ['conditionId', 'marketId', 'tokenIds', 'tickPips', 'minSizeUnits', 'makerFeeBps', 'takerFeeBps', 'acceptingOrders', 'negRisk', 'resolved']);
  assert.deepEqual(parametersOf(m), { tickPips: 10, minSizeUnits: 0, makerFeeBps: 0, takerFeeBps: 0, acceptingOrders: true, negRisk: true });
  assert.deepEqual(Object.keys(parametersOf(m)), ['tickPips', 'minSizeUnits', 'makerFeeBps', 'takerFeeBps', 'acceptingOrders', 'negRisk']);
});
