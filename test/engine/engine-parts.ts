/**
 * The engine's in-memory parts built the way engine.ts wires them, without shards or a store, for the unit
 * tests of one part: a ledger with funded wallets, a market table with one market, an order table, and
 * order records shaped like admitted ones.
 */
import type { OrderRecord } from '../../src/domain/events.ts';
import { Side, Tif } from '../../src/engine/book/api.ts';
import { Ledger } from '../../src/engine/ledger/ledger.ts';
import { MarketTable, type MarketState } from '../../src/engine/markets/market-table.ts';
import { OrderTable, type OrderState } from '../../src/engine/orders/order-table.ts';

export const T = 1_000_000;
export const CONDITION = '0x' + 'c1'.repeat(32);
export const TOKENS: [string, string] = ['7001', '7002'];

export interface Parts {
  ledger: Ledger;
  markets: MarketTable;
  orders: OrderTable;
  market: MarketState;
}

export function parts(shards = 1): Parts {
  const ledger = new Ledger();
  const markets = new MarketTable(ledger, shards);
  const market = markets.add({
    conditionId: CONDITION,
    marketId: 1,
    tokenIds: TOKENS,
    tickPips: 100,
    minSizeUnits: T,
    makerFeeBps: 0,
    takerFeeBps: 100,
    acceptingOrders: true,
    negRisk: false,
    resolved: -1,
  });
  return { ledger, markets, orders: new OrderTable(ledger), market };
}

let n = 0;

/** An admitted-looking record: `size` tokens at `price` pips on outcome 0 unless told otherwise. */
export function record(over: Partial<OrderRecord> & Pick<OrderRecord, 'wallet'>): OrderRecord {
  n++;
  return {
    orderId: '0x' + n.toString(16).padStart(64, '0'),
    tokenId: TOKENS[over.outcome ?? 0],
    side: 'BUY',
    orderType: 'GTC',
    postOnly: false,
    makerAmount: 4 * T,
    takerAmount: 10 * T,
    expiration: 0,
    builder: '',
    owner: 'key-' + over.wallet,
    signer: over.wallet,
    signatureType: 0,
    seq: 0,
    conditionId: CONDITION,
    outcome: 0,
    pricePips: 4000,
    sizeUnits: 10 * T,
    budgetUnits: 0,
    makerFeeBps: 0,
    takerFeeBps: 100,
    sizeMatched: 0,
    status: 'LIVE',
    tradeIds: [],
    fillSeqs: [],
    createdAt: 0,
    updatedAt: 0,
    response: { status: 'live', makingAmount: 0, takingAmount: 0, tradeIds: [] },
    ...over,
  };
}

/** A tracked order state for `rec` (not reserved: the caller reserves when it needs to). */
export function order(p: Parts, rec: OrderRecord): OrderState {
  const tm = p.markets.token(rec.tokenId)!;
  p.orders.share(rec, tm);
  const o = p.orders.create(rec, p.market, rec.side === 'BUY' ? Side.BUY : Side.SELL, Tif[rec.orderType], rec.sizeUnits - rec.sizeMatched);
  p.orders.track(o);
  return o;
}
