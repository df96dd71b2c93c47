/** The taker's view of a fill as the platform's trade object starts: values and wire key order. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { takerTradeFields } from '../../src/projections/trade-fields.ts';
import type { FillEvent } from '../../src/domain/events.ts';

test('id, taker order, market, taker token, taker side and size in tokens, in this order', () => {
  const f = { tradeId: '0xt', takerOrderId: '0xo', conditionId: '0xc', takerTokenId: '12', makerTokenId: '13', takerSide: 'SELL', makerSide: 'BUY', size: 2_500_000 } as FillEvent;
  const t = takerTradeFields(f);
  assert.deepEqual(t, { id: '0xt', taker_order_id: '0xo', market: '0xc', asset_id: '12', side: 'SELL', size: '2.5' });
  assert.deepEqual(Object.keys(t), ['id', 'taker_order_id', 'market', 'asset_id', 'side', 'size']);
});
