/**
 * The leading fields of the platform's trade object for a fill, seen from its taker: the user channel's
 * `trade` message (stream-feed.ts) and GET /builder/trades rows (queries/market-data.ts) start with them.
 */
import type { FillEvent, SideName } from '../domain/events.ts';
import { formatUnits } from '../domain/units.ts';

export interface TakerTradeFields {
  id: string;
  taker_order_id: string;
  market: string;
  asset_id: string;
  side: SideName;
  size: string;
}

/** Key order is the wire order. */
export function takerTradeFields(f: FillEvent): TakerTradeFields {
  return { id: f.tradeId, taker_order_id: f.takerOrderId, market: f.conditionId, asset_id: f.takerTokenId, side: f.takerSide, size: formatUnits(f.size) };
}
