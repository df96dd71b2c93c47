/**
 * R2, settlement: what a shard's answer does to the orders, the ledger and the journal.
 *
 * For each RESULT, with the FILL and CANCELED records of its group, in the shard's order: a placement is
 * accepted (its `order` event gives it its seq, so journal order is book priority order within a market) or
 * rejected as if it never existed; each fill moves USDC and tokens between the two parties (ledger settleBuy /
 * settleSell, mint or burn of token pairs), journals a `fill` and advances both orders; each order that
 * leaves the book gets its final status, releases what it still holds and is forgotten once committed
 * (order-table.ts `recent`); a cancel request's batch and a placement are answered through group commit,
 * so after the commit that holds what they caused.
 *
 * A command's effects are applied and journaled only when its RESULT arrives, all in one turn, so a commit
 * never holds half a command: a killed FOK leaves nothing, and the books rebuilt after a crash were never
 * crossed.
 *
 * When trades settle later (trade-lifecycle.ts `deferring`), a fill is journaled `deferred`, what it delivers
 * is credited as pending, and the trade lifecycle takes it from MATCHED on.
 *
 * Invariants, checked on every record (a violation throws EngineHalt or LedgerError and halts the engine):
 * the shard's remaining size of every maker and canceled order equals the sequencer's; a fill names the taker
 * of its group and a resting maker; an order pays no more than it reserved and, while it rests, still holds
 * what it can spend (reservation.ts); a restored order rests unchanged.
 */
import { Errors } from '../../domain/errors.ts';
import { orderAcceptedEvent, statusEvent, type FillEvent, type OrderStatusName, type StatusReason } from '../../domain/events.ts';
import type { JournalWriter } from '../../journal/writer.ts';
import { lastTradeSide } from '../../journal/recovery.ts';
import { CancelReason, FillKind, MatchCode, Side, Tif } from '../book/api.ts';
import type { PlaceResponse } from '../engine-types.ts';
import type { GroupCommit } from '../group-commit.ts';
import { feeOf } from './fees.ts';
import { LedgerError, type Ledger } from './ledger.ts';
import { EngineHalt } from '../lifecycle.ts';
import type { MarketTable } from '../markets/market-table.ts';
import { LIVE_UNFILLED, appended, rejectResponse, responseOf, type OrderState, type OrderTable, type PendingPlace } from '../orders/order-table.ts';
import { OP_CANCEL, OP_CANCEL_ALL_MARKET, OP_PLACE, type CanceledRecord, type FillRecord, type ResultRecord } from '../shard/protocol.ts';
import { releaseAll, settleReservation } from './reservation.ts';
import type { Inflight, ShardRecord } from '../shard/link-types.ts';
import type { TradeLifecycle } from './trade-lifecycle.ts';

const SIDE_NAMES = ['BUY', 'SELL'] as const;
const KIND_NAMES = ['TRANSFER', 'MINT', 'MERGE'] as const;
const REASON_NAMES: Record<number, StatusReason> = {
  [CancelReason.USER]: 'USER',
  [CancelReason.EXPIRED]: 'EXPIRED',
  [CancelReason.SELF_TRADE]: 'SELF_TRADE',
  [CancelReason.MARKET_RESOLVED]: 'MARKET_RESOLVED',
  [CancelReason.UNFILLED_REMAINDER]: 'UNFILLED',
};

export class Settlement {
  readonly counters = { ordersAccepted: 0, fills: 0 };

  constructor(
    private readonly ledger: Ledger,
    private readonly orders: OrderTable,
    private readonly markets: MarketTable,
    private readonly writer: JournalWriter,
    private readonly commit: GroupCommit,
    private readonly trades: TradeLifecycle,
  ) {}

  /** A command's RESULT with the records it caused (ShardEvents.answered). */
  apply(inf: Inflight, r: ResultRecord, group: readonly ShardRecord[]): void {
    switch (inf.op) {
      case OP_PLACE:
        if (inf.order.pending?.restore) this.onRestored(inf.order, r, group);
        else this.onPlaced(inf.order, r, group);
        return;
      case OP_CANCEL: {
        for (const rec of group) this.applyCancel(rec as CanceledRecord);
        const b = inf.batch;
        const id = inf.order.rec.orderId;
        if (r.code === MatchCode.OK) b.canceled.push(id);
        else b.notCanceled[id] = inf.order.accepted ? (inf.order.rec.status === 'MATCHED' ? 'order already matched' : 'order already canceled') : 'order not found';
        if (--b.pending === 0) this.commit.ack(b.resolve, { canceled: b.canceled, notCanceled: b.notCanceled });
        return;
      }
      case OP_CANCEL_ALL_MARKET:
        for (const rec of group) this.applyCancel(rec as CanceledRecord);
        inf.done(r);
        return;
      default:
        for (const rec of group) this.applyCancel(rec as CanceledRecord);
        inf.done(r);
    }
  }

  /** The CANCELED records of a GTD expiry (ShardEvents.expired). */
  expired(group: readonly ShardRecord[]): void {
    for (const rec of group) this.applyCancel(rec as CanceledRecord);
  }

  /**
   * Halt step: the commands the shards will no longer answer (shard-link takeUnanswered) get their
   * PM_ERR_ENGINE_DOWN answers.
   */
  answerDown(unanswered: readonly Inflight[]): void {
    const down = Errors.PM_ERR_ENGINE_DOWN;
    for (const inf of unanswered) {
      if (inf.op === OP_PLACE) inf.order.pending?.resolve(rejectResponse(inf.order.rec.orderId, down.result));
      else if (inf.op === OP_CANCEL) {
        inf.batch.notCanceled[inf.order.rec.orderId] = down.message;
        if (--inf.batch.pending === 0) inf.batch.resolve({ canceled: inf.batch.canceled, notCanceled: inf.batch.notCanceled });
      } else {
        try {
          inf.done({ cmdOp: inf.op, id: inf.id, code: down.result, filledUnits: 0, restingUnits: 0, marketId: 0 });
        } catch {
          // a resolution completing on a halted engine may throw (ledger): nothing it journals is flushed any more
        }
      }
    }
  }

  private onRestored(o: OrderState, r: ResultRecord, group: readonly ShardRecord[]): void {
    const pending = o.pending as PendingPlace;
    o.pending = undefined;
    if (r.code !== MatchCode.OK || r.filledUnits !== 0 || r.restingUnits !== o.remaining || group.length > 0) {
      throw new EngineHalt(`open order ${o.rec.orderId} did not rest unchanged when restored (code ${r.code}, filled ${r.filledUnits}, resting ${r.restingUnits})`);
    }
    pending.resolve(responseOf(o.rec));
  }

  private onPlaced(o: OrderState, r: ResultRecord, group: readonly ShardRecord[]): void {
    const pending = o.pending as PendingPlace;
    let filled = false;
    for (const rec of group) if ((rec as FillRecord).makerHandle !== undefined) filled = true;
    if (r.code !== MatchCode.OK) {
      if (filled) throw new EngineHalt(`order ${o.rec.orderId} was rejected with code ${r.code} after fills`);
      // Rejected by matching with nothing filled: it never existed. Self-trade cancels of the wallet's
      // resting orders that the attempt caused (FAK) are real and journaled.
      for (const rec of group) {
        const c = rec as CanceledRecord;
        if (c.handle !== o.handle) this.applyCancel(c);
      }
      o.pending = undefined;
      releaseAll(this.ledger, o);
      this.orders.untrack(o);
      const vars = r.code === MatchCode.INVALID_PRICE || r.code === MatchCode.INVALID_SIZE ? { id: o.rec.orderId } : undefined;
      pending.resolve(rejectResponse(o.rec.orderId, r.code, vars));
      return;
    }

    this.accept(o, pending);
    for (const rec of group) {
      if ((rec as FillRecord).makerHandle !== undefined) this.applyFill(o, rec as FillRecord);
      else if ((rec as CanceledRecord).handle === o.handle) this.finish(o, 'CANCELED', 'UNFILLED');
      else this.applyCancel(rec as CanceledRecord);
    }
    o.pending = undefined;
    if (r.restingUnits > 0) {
      if (r.restingUnits !== o.remaining) throw new EngineHalt(`order ${o.rec.orderId}: shard rests ${r.restingUnits}, sequencer expects ${o.remaining}`);
      o.live = true;
      settleReservation(this.ledger, o);
    } else if (o.rec.status === 'LIVE') {
      if (o.remaining !== 0 && o.tif !== Tif.FOK && o.tif !== Tif.FAK) throw new EngineHalt(`order ${o.rec.orderId} neither rests nor filled`);
      this.finish(o, 'MATCHED', 'FILLED');
    }
    const status = r.restingUnits > 0 ? 'live' : 'matched';
    o.rec.response =
      status === 'live' && pending.tradeIds.length === 0
        ? LIVE_UNFILLED
        : { status, makingAmount: pending.making, takingAmount: pending.taking, tradeIds: pending.tradeIds };
    this.writer.putOrder(o.rec, false);
    this.commit.ack(pending.resolve, {
      ok: true,
      code: 0,
      orderId: o.rec.orderId,
      status,
      makingAmount: pending.making,
      takingAmount: pending.taking,
      tradeIds: pending.tradeIds,
    } satisfies PlaceResponse);
  }

  /** Journals the order's acceptance: its `order` event gives it its seq (time priority). */
  private accept(o: OrderState, pending: PendingPlace): void {
    if (pending.signed === undefined) throw new EngineHalt(`order ${o.rec.orderId} was accepted without what it signed`);
    const ev = this.writer.append(orderAcceptedEvent(o.rec, pending.signed));
    o.rec.seq = ev.seq;
    o.rec.createdAt = ev.ts;
    o.rec.updatedAt = ev.ts;
    o.accepted = true;
    this.counters.ordersAccepted++;
    this.writer.putOrder(o.rec, true);
  }

  private applyFill(taker: OrderState, f: FillRecord): void {
    const maker = this.orders.byHandleOf(f.makerHandle);
    if (maker === undefined || !maker.live) throw new EngineHalt(`fill against unknown maker handle ${f.makerHandle}`);
    if (f.takerHandle !== taker.handle) throw new EngineHalt(`fill of handle ${f.takerHandle} inside the group of ${taker.handle}`);
    const size = f.sizeUnits;
    if (maker.remaining - size !== f.makerRemainingUnits) {
      throw new EngineHalt(`maker ${maker.rec.orderId}: shard leaves ${f.makerRemainingUnits}, sequencer expects ${maker.remaining - size}`);
    }
    const takerFee = feeOf(taker.rec.takerFeeBps, f.takerPricePips, size);
    const makerFee = feeOf(maker.rec.makerFeeBps, f.makerPricePips, size);
    const deferred = this.trades.deferring;
    this.settleParty(taker, size, f.takerUsdc, takerFee, deferred);
    this.settleParty(maker, size, f.makerUsdc, makerFee, deferred);
    const cid = taker.market.conditionId;
    if (f.kind === FillKind.MINT) this.ledger.mint(cid, size);
    else if (f.kind === FillKind.MERGE) this.ledger.burn(cid, size);

    const fill: FillEvent = {
      type: 'fill',
      seq: 0,
      ts: 0,
      tradeId: '',
      txHash: '',
      conditionId: cid,
      kind: KIND_NAMES[f.kind],
      size,
      takerOrderId: taker.rec.orderId,
      makerOrderId: maker.rec.orderId,
      takerWallet: taker.rec.wallet,
      makerWallet: maker.rec.wallet,
      takerOwner: taker.rec.owner,
      makerOwner: maker.rec.owner,
      takerTokenId: taker.rec.tokenId,
      makerTokenId: maker.rec.tokenId,
      takerOutcome: taker.rec.outcome,
      makerOutcome: maker.rec.outcome,
      takerSide: SIDE_NAMES[taker.side],
      makerSide: SIDE_NAMES[maker.side],
      takerPricePips: f.takerPricePips,
      makerPricePips: f.makerPricePips,
      takerUsdc: f.takerUsdc,
      makerUsdc: f.makerUsdc,
      takerFee,
      makerFee,
      makerRemaining: f.makerRemainingUnits,
      builder: taker.rec.builder,
    };
    // Set before append: the writer encodes the record there.
    if (deferred) fill.deferred = true;
    const ev = this.writer.append(fill);
    if (deferred) this.trades.matched(ev);
    this.counters.fills++;
    const pending = taker.pending as PendingPlace;
    if (taker.side === Side.BUY) {
      pending.making += f.takerUsdc + takerFee;
      pending.taking += size;
    } else {
      pending.making += size;
      pending.taking += f.takerUsdc - takerFee;
    }
    pending.tradeIds = appended(pending.tradeIds, ev.tradeId);
    for (const o of [taker, maker]) {
      o.remaining -= size;
      o.rec.sizeMatched += size;
      o.rec.tradeIds = appended(o.rec.tradeIds, ev.tradeId);
      o.rec.fillSeqs = appended(o.rec.fillSeqs, ev.seq);
      o.rec.updatedAt = ev.ts;
    }
    this.markets.lastTrades.set(taker.rec.tokenId, { pricePips: f.takerPricePips, side: lastTradeSide(ev) });
    this.markets.lastTrades.set(maker.rec.tokenId, { pricePips: f.makerPricePips, side: lastTradeSide(ev) });
    if (maker.remaining === 0) this.finish(maker, 'MATCHED', 'FILLED');
    else {
      settleReservation(this.ledger, maker);
      this.writer.putOrder(maker.rec, false);
    }
  }

  private settleParty(o: OrderState, size: number, usdc: number, fee: number, deferred: boolean): void {
    if (o.side === Side.BUY) {
      const pay = usdc + fee;
      if (o.reserved < pay) throw new LedgerError(`order ${o.rec.orderId} pays ${pay} but reserved ${o.reserved}`);
      this.ledger.settleBuy(o.wb, o.rec.tokenId, size, usdc, fee, deferred);
      o.reserved -= pay;
    } else {
      if (o.reserved < size) throw new LedgerError(`order ${o.rec.orderId} sells ${size} but reserved ${o.reserved}`);
      this.ledger.settleSell(o.wb, o.rec.tokenId, size, usdc, fee, deferred);
      o.reserved -= size;
    }
  }

  /** A resting order left the book without a fill (user, expiry, self-trade, resolution). */
  private applyCancel(c: CanceledRecord): void {
    const o = this.orders.byHandleOf(c.handle);
    if (o === undefined || !o.live) throw new EngineHalt(`cancel of unknown resting handle ${c.handle}`);
    if (c.remainingUnits !== o.remaining) throw new EngineHalt(`order ${o.rec.orderId}: shard cancels ${c.remainingUnits}, sequencer expects ${o.remaining}`);
    const reason = REASON_NAMES[c.reason] ?? 'USER';
    this.finish(o, c.reason === CancelReason.MARKET_RESOLVED ? 'CANCELED_MARKET_RESOLVED' : 'CANCELED', reason);
  }

  /** Final status: journaled, reservation released, order forgotten once committed. */
  private finish(o: OrderState, status: OrderStatusName, reason: StatusReason): void {
    const remaining = status === 'MATCHED' ? 0 : o.remaining;
    o.rec.status = status;
    o.live = false;
    const ev = this.writer.append(statusEvent(o.rec, status, reason, remaining));
    o.rec.updatedAt = ev.ts;
    o.remaining = 0;
    releaseAll(this.ledger, o);
    this.writer.putOrder(o.rec, false);
    this.orders.untrack(o);
    this.orders.finished(o.rec);
  }
}
