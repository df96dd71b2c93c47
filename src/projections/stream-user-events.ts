/**
 * The user channel's events, built from a committed batch's journal events (stream-feed.ts hands them over
 * in its publishing turn, after the acknowledgements). Owns what an order or a trade looks like on the user
 * channel and which wallet topics it goes to; the topics' names and the frame form are stream-frames.ts's.
 * Separate from the market channel's builders because it reads another input (journal events, not book
 * changes) and answers to another contract (/data/trades and /data/orders, not GET /book).
 *
 * User channel, per event: `order` accepted -> order PLACEMENT; `fill` -> a `trade` to each side's wallet
 * (trader_side TAKER / MAKER) and an order UPDATE of each of the two orders; `status` CANCELED* -> order
 * CANCELLATION (MATCHED needs none: the last UPDATE says MATCHED). A trade follows the trade lifecycle
 * (DESIGN section 11) as on the platform: a fill that settles at once is reported CONFIRMED; a deferred fill
 * is reported MATCHED, and each later `trade` journal event (MINED, RETRYING, CONFIRMED, FAILED) sends the
 * same trade again to both sides with its new status and the move's time as `last_update` (the fill read
 * by its seq when it is not in the batch), so the user channel agrees with /data/trades at every step.
 *
 * Nothing is built for a wallet with no subscribed topic (walletTopics first). Imports domain/, the stream
 * wire types (edge/schemas/stream.ts, types only), trade-fields.ts and stream-frames.ts.
 */
import type { FillEvent, JournalEvent, OrderAcceptedEvent, OrderStatusEvent, SideName } from '../domain/events.ts';
import { DEFAULT_OUTCOMES } from '../domain/market-rules.ts';
import { formatPips, formatUnits } from '../domain/units.ts';
import type { UserOrderEvent, UserTradeEvent } from '../edge/schemas/stream.ts';
import { takerTradeFields } from './trade-fields.ts';
import { userTopic, type Frames, type StreamSink } from './stream-frames.ts';

/** The fields of an order that never change after acceptance (an OrderRecord has them). */
export interface OrderFacts {
  orderId: string;
  wallet: string;
  owner: string;
  tokenId: string;
  conditionId: string;
  outcome: 0 | 1;
  side: SideName;
  pricePips: number;
  sizeUnits: number;
  orderType: string;
  expiration: number;
  /** ms since the epoch. */
  createdAt: number;
  makerFeeBps: number;
  takerFeeBps: number;
}

/** What the user channel's builders read (stream-feed.ts FeedDeps has it). */
export interface UserEventDeps {
  sink: StreamSink;
  /** An order's facts by id (the engine's order, in memory or stored). */
  order(orderId: string): OrderFacts | undefined;
  /** The catalog's outcome labels of a market. */
  outcomes(conditionId: string): readonly [string, string] | undefined;
  /** A committed fill by its journal seq (a `trade` move names its fill so). */
  fill(seq: number): FillEvent | undefined;
}

export class UserEvents {
  constructor(private readonly d: UserEventDeps) {}

  /** The user-channel frames of a batch's journal events, added to `out`. */
  build(events: readonly JournalEvent[], out: Frames): void {
    // Orders accepted in this batch (their facts without a look-up) and what their fills matched so far.
    let placed: Map<string, OrderFacts> | undefined;
    let matched: Map<string, number> | undefined;
    // Fills of this batch by seq, for a `trade` move of the same batch (no look-up).
    let fills: Map<number, FillEvent> | undefined;
    for (const e of events) {
      switch (e.type) {
        case 'order': {
          const facts = factsOf(e);
          (placed ??= new Map()).set(e.orderId, facts);
          const topics = this.walletTopics(e.wallet, e.conditionId);
          if (topics !== undefined) out.addAll(topics, JSON.stringify(this.orderEvent(facts, 'PLACEMENT', 0, 'LIVE', [], e.ts)));
          break;
        }
        case 'fill': {
          const takerTopics = this.walletTopics(e.takerWallet, e.conditionId);
          const makerTopics = e.makerWallet === e.takerWallet ? takerTopics : this.walletTopics(e.makerWallet, e.conditionId);
          const takerSoFar = ((matched ??= new Map()).get(e.takerOrderId) ?? 0) + e.size;
          matched.set(e.takerOrderId, takerSoFar);
          if (takerTopics === undefined && makerTopics === undefined) break;
          const taker = placed?.get(e.takerOrderId) ?? this.d.order(e.takerOrderId);
          const maker = placed?.get(e.makerOrderId) ?? this.d.order(e.makerOrderId);
          (fills ??= new Map()).set(e.seq, e);
          const status = e.deferred ? 'MATCHED' : 'CONFIRMED';
          if (takerTopics !== undefined) {
            out.addAll(takerTopics, JSON.stringify(this.tradeEvent(e, status, 'TAKER', taker, maker)));
            if (taker !== undefined) out.addAll(takerTopics, JSON.stringify(this.orderEvent(taker, 'UPDATE', takerSoFar, takerSoFar >= taker.sizeUnits ? 'MATCHED' : 'LIVE', [e.tradeId], e.ts)));
          }
          if (makerTopics !== undefined) {
            out.addAll(makerTopics, JSON.stringify(this.tradeEvent(e, status, 'MAKER', taker, maker)));
            if (maker !== undefined) {
              const m = maker.sizeUnits - e.makerRemaining;
              out.addAll(makerTopics, JSON.stringify(this.orderEvent(maker, 'UPDATE', m, e.makerRemaining === 0 ? 'MATCHED' : 'LIVE', [e.tradeId], e.ts)));
            }
          }
          break;
        }
        case 'status':
          this.statusEvent(e, placed, out);
          break;
        case 'trade': {
          const takerTopics = this.walletTopics(e.takerWallet, e.conditionId);
          const makerTopics = e.makerWallet === e.takerWallet ? takerTopics : this.walletTopics(e.makerWallet, e.conditionId);
          if (takerTopics === undefined && makerTopics === undefined) break;
          const f = fills?.get(e.fillSeq) ?? this.d.fill(e.fillSeq);
          if (f === undefined) break;
          const taker = placed?.get(f.takerOrderId) ?? this.d.order(f.takerOrderId);
          const maker = placed?.get(f.makerOrderId) ?? this.d.order(f.makerOrderId);
          if (takerTopics !== undefined) out.addAll(takerTopics, JSON.stringify(this.tradeEvent(f, e.status, 'TAKER', taker, maker, e.ts)));
          if (makerTopics !== undefined) out.addAll(makerTopics, JSON.stringify(this.tradeEvent(f, e.status, 'MAKER', taker, maker, e.ts)));
          break;
        }
        default:
          break;
      }
    }
  }

  private statusEvent(e: OrderStatusEvent, placed: Map<string, OrderFacts> | undefined, out: Frames): void {
    if (e.status !== 'CANCELED' && e.status !== 'CANCELED_MARKET_RESOLVED') return;
    const topics = this.walletTopics(e.wallet, e.conditionId);
    if (topics === undefined) return;
    const facts = placed?.get(e.orderId) ?? this.d.order(e.orderId);
    if (facts !== undefined) out.addAll(topics, JSON.stringify(this.orderEvent(facts, 'CANCELLATION', e.matched, e.status, [], e.ts)));
  }

  /** The wallet's topics that have subscribers for an event of market `conditionId`, undefined when none. */
  private walletTopics(wallet: string, conditionId: string): string[] | undefined {
    const all = userTopic(wallet);
    const one = userTopic(wallet, conditionId);
    const a = this.d.sink.wants(all);
    const b = this.d.sink.wants(one);
    return a ? (b ? [all, one] : [all]) : b ? [one] : undefined;
  }

  private label(conditionId: string, outcome: 0 | 1): string {
    return (this.d.outcomes(conditionId) ?? DEFAULT_OUTCOMES)[outcome];
  }

  private orderEvent(o: OrderFacts, type: UserOrderEvent['type'], sizeMatched: number, status: string, trades: string[], ts: number): UserOrderEvent {
    return {
      event_type: 'order',
      id: o.orderId,
      owner: o.owner,
      order_owner: o.owner,
      market: o.conditionId,
      asset_id: o.tokenId,
      side: o.side,
      price: formatPips(o.pricePips),
      original_size: formatUnits(o.sizeUnits),
      size_matched: formatUnits(sizeMatched),
      associate_trades: trades,
      outcome: this.label(o.conditionId, o.outcome),
      type,
      created_at: String(Math.floor(o.createdAt / 1000)),
      expiration: String(o.expiration),
      order_type: o.orderType,
      status,
      maker_address: o.wallet,
      timestamp: String(ts),
    };
  }

  /** A fill as the platform's user-channel trade, as seen by one of its sides; `movedAt` (ms) is its last status move's time. */
  tradeEvent(f: FillEvent, status: string, side: 'TAKER' | 'MAKER', taker: OrderFacts | undefined, maker: OrderFacts | undefined, movedAt = f.ts): UserTradeEvent {
    const sec = String(Math.floor(f.ts / 1000));
    return {
      event_type: 'trade',
      type: 'TRADE',
      ...takerTradeFields(f),
      price: formatPips(f.takerPricePips),
      fee_rate_bps: String(taker?.takerFeeBps ?? 0),
      status,
      matchtime: sec,
      match_time: sec,
      last_update: String(Math.floor(movedAt / 1000)),
      outcome: this.label(f.conditionId, f.takerOutcome),
      owner: side === 'TAKER' ? f.takerOwner : f.makerOwner,
      trade_owner: f.takerOwner,
      maker_address: f.takerWallet,
      maker_orders: [
        {
          asset_id: f.makerTokenId,
          matched_amount: formatUnits(f.size),
          order_id: f.makerOrderId,
          outcome: this.label(f.conditionId, f.makerOutcome),
          owner: f.makerOwner,
          price: formatPips(f.makerPricePips),
          fee_rate_bps: String(maker?.makerFeeBps ?? 0),
          side: f.makerSide,
          maker_address: f.makerWallet,
        },
      ],
      timestamp: String(f.ts),
      transaction_hash: f.txHash,
      trader_side: side,
    };
  }
}

function factsOf(e: OrderAcceptedEvent): OrderFacts {
  return {
    orderId: e.orderId,
    wallet: e.wallet,
    owner: e.owner,
    tokenId: e.tokenId,
    conditionId: e.conditionId,
    outcome: e.outcome,
    side: e.side,
    pricePips: e.pricePips,
    sizeUnits: e.sizeUnits,
    orderType: e.orderType,
    expiration: e.expiration,
    createdAt: e.ts,
    makerFeeBps: e.makerFeeBps,
    takerFeeBps: e.takerFeeBps,
  };
}
