/**
 * Room engine/markets/: the markets the engine knows (this file) and their administration (market-admin.ts:
 * register, status, resolve). Separate because orders, ledger and shards all read it and none of them owns it.
 *
 * The markets the engine knows: parameters and state per condition id, which market and outcome each token
 * id is, and the last trade per token.
 *
 * Invariants: a token id belongs to one market only; a market's shard is fixed by its condition id
 * (shard-router.ts) and its numeric id (what crosses the rings) by registration order, 1, 2, ...; every
 * market here is also a market of the ledger. Rows change only through market-admin.ts (register, resolve)
 * and start-up; the records are held, not copied, so readers read them at once and keep nothing.
 */
import type { TradingMarket } from '../../domain/events.ts';
import type { MarketRow } from '../../journal/writer.ts';
import type { Ledger } from '../ledger/ledger.ts';
import { shardOf } from '../shard-router.ts';

export interface MarketState extends MarketRow {
  shard: number;
  /** Resolution requested: the cancel-all is in flight, orders are refused. */
  resolving: boolean;
}

export interface TokenMarket {
  market: MarketState;
  outcome: 0 | 1;
}

export interface LastTrade {
  pricePips: number;
  side: 'BUY' | 'SELL';
}

export class MarketTable {
  private readonly byCondition = new Map<string, MarketState>();
  private readonly byToken = new Map<string, TokenMarket>();
  /** Per token id, its newest fill: price in its own outcome space, side as the trade is reported (lastTradeSide). */
  readonly lastTrades = new Map<string, LastTrade>();

  constructor(
    private readonly ledger: Ledger,
    private readonly shards: number,
  ) {}

  get size(): number {
    return this.byCondition.size;
  }

  get(conditionId: string): MarketState | undefined {
    return this.byCondition.get(conditionId);
  }

  token(tokenId: string): TokenMarket | undefined {
    return this.byToken.get(tokenId);
  }

  values(): IterableIterator<MarketState> {
    return this.byCondition.values();
  }

  /** Adds a market (and its tokens) here and to the ledger. The row's ids must be new. */
  add(row: MarketRow): MarketState {
    const m: MarketState = { ...row, tokenIds: [row.tokenIds[0], row.tokenIds[1]], shard: shardOf(row.conditionId, this.shards), resolving: false };
    this.byCondition.set(m.conditionId, m);
    this.byToken.set(m.tokenIds[0], { market: m, outcome: 0 });
    this.byToken.set(m.tokenIds[1], { market: m, outcome: 1 });
    this.ledger.addMarket(m.conditionId, m.tokenIds);
    return m;
  }
}

/**
 * The parameters a registration may change (the ids and the token pair are fixed at creation), in the
 * order the journal's market event and the stored row write them after the ids.
 */
export function parametersOf(m: TradingMarket): Pick<TradingMarket, 'tickPips' | 'minSizeUnits' | 'makerFeeBps' | 'takerFeeBps' | 'acceptingOrders' | 'negRisk'> {
  return { tickPips: m.tickPips, minSizeUnits: m.minSizeUnits, makerFeeBps: m.makerFeeBps, takerFeeBps: m.takerFeeBps, acceptingOrders: m.acceptingOrders, negRisk: m.negRisk };
}

/** The market's table row (journal/writer.ts), without the engine's own fields; key order is the store's. */
export function rowOf(m: MarketState): MarketRow {
  return { conditionId: m.conditionId, marketId: m.marketId, tokenIds: m.tokenIds, ...parametersOf(m), resolved: m.resolved };
}
