/**
 * Room engine/orders/: an order from its checks to its final state: admission (this file: checks, then the
 * reservation) and the orders held in memory (order-table.ts). Separate from ledger/ (what the order may spend)
 * and shard/ (where it rests).
 *
 * Admission: what a placement or cancel request must pass to become a shard command.
 *
 * A placement is checked against its market (known, accepting orders, not resolving), its type (post-only
 * only on GTC/GTD, expiration only on GTD and at least GTD_MIN_LEAD_SEC ahead), its amounts (positive
 * integers, whole lots, a price on tick inside [tick, 1 - tick] for resting orders, a worst price in
 * [1, 9_999] pips for FOK/FAK) and the market's minimum size; then R1 reserves what it can spend
 * (reservation.ts) and it goes to its shard. Each refusal answers with its catalogue code and changes
 * nothing. A retry of a known order id gets the original answer (the same promise while it is in flight,
 * never before the commit that holds it). A cancel request names the wallet's own orders only; whatever
 * it cannot cancel is listed with the reason.
 *
 * Invariants: an order is tracked (order-table.ts) only once its reservation is held and its command is in
 * the shard link; a placement refused for back-pressure (PM_ERR_ENGINE_BUSY) releases its reservation and
 * leaves no trace; nothing is admitted while the engine is down.
 */
import { Errors } from '../../domain/errors.ts';
import type { OrderRecord } from '../../domain/events.ts';
import { GTD_MIN_LEAD_SECONDS, onTick } from '../../domain/market-rules.ts';
import { formatPips, formatUnits } from '../../domain/units.ts';
import type { Store } from '../../journal/env.ts';
import { readOrder } from '../../journal/orders.ts';
import { LOT_UNITS, PIPS_PER_UNIT_PRICE, Side, Tif } from '../book/api.ts';
import type { CancelResponse, PlaceInput, PlaceResponse } from '../engine-types.ts';
import type { GroupCommit } from '../group-commit.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { MarketState, MarketTable, TokenMarket } from '../markets/market-table.ts';
import { LIVE_UNFILLED, NO_SEQS, NO_TRADES, newPending, rejectResponse, responseOf, restsOnBook, sharedRestore, type OrderState, type OrderTable } from './order-table.ts';
import { needOf, releaseAll, reserve } from '../ledger/reservation.ts';
import type { CancelBatch } from '../shard/link-types.ts';
import type { ShardLink } from '../shard/shard-link.ts';

const TIF_OF = { GTC: Tif.GTC, GTD: Tif.GTD, FOK: Tif.FOK, FAK: Tif.FAK } as const;

/** What the checks make of a placement: read at once (one scratch object, reused). */
interface Terms {
  side: Side;
  tif: Tif;
  pricePips: number;
  sizeUnits: number;
  budgetUnits: number;
}

export interface AdmissionDeps {
  store: Store;
  ledger: Ledger;
  markets: MarketTable;
  orders: OrderTable;
  link: ShardLink;
  commit: GroupCommit;
  life: Lifecycle;
  now: () => number;
}

function reject(orderId: string, code: number, vars?: Record<string, string | number>): Promise<PlaceResponse> {
  return Promise.resolve(rejectResponse(orderId, code, vars));
}

export class Admission {
  private readonly store: Store;
  private readonly ledger: Ledger;
  private readonly markets: MarketTable;
  private readonly orders: OrderTable;
  private readonly link: ShardLink;
  private readonly commit: GroupCommit;
  private readonly life: Lifecycle;
  private readonly now: () => number;
  private readonly terms: Terms = { side: Side.BUY, tif: Tif.GTC, pricePips: 0, sizeUnits: 0, budgetUnits: 0 };

  constructor(deps: AdmissionDeps) {
    this.store = deps.store;
    this.ledger = deps.ledger;
    this.markets = deps.markets;
    this.orders = deps.orders;
    this.link = deps.link;
    this.commit = deps.commit;
    this.life = deps.life;
    this.now = deps.now;
  }

  place(o: PlaceInput): Promise<PlaceResponse> {
    if (this.life.down) return reject(o.orderId, Errors.PM_ERR_ENGINE_DOWN.result);
    const dup = this.duplicate(o.orderId);
    if (dup !== undefined) return dup;
    const tm = this.markets.token(o.tokenId);
    if (tm === undefined) return reject(o.orderId, Errors.PM_ERR_MARKET_UNKNOWN.result, { tokenId: o.tokenId });
    const market = tm.market;
    if (!market.acceptingOrders || market.resolved >= 0 || market.resolving) return reject(o.orderId, Errors.PM_ERR_MARKET_NOT_READY.result);
    const refused = this.check(o, market);
    if (refused !== undefined) return Promise.resolve(refused);

    const t = this.terms;
    const rec = this.recordOf(o, tm, t);
    this.orders.share(rec, tm);
    const ord = this.orders.create(rec, market, t.side, t.tif, t.sizeUnits);
    if (!reserve(this.ledger, ord, needOf(ord))) return reject(o.orderId, Errors.PM_ERR_BALANCE.result);
    const pending = newPending(false, o);
    ord.pending = pending;
    if (!this.link.place(ord, this.orders.walletIndex(ord.rec.wallet), false, o.postOnly)) {
      releaseAll(this.ledger, ord);
      return reject(o.orderId, Errors.PM_ERR_ENGINE_BUSY.result);
    }
    this.orders.track(ord);
    return pending.promise;
  }

  /**
   * Start-up: the open orders of the store rest again on their books, in the order given (the books' time
   * priority), each holding its reservation again; each must rest unchanged (settlement.ts). Throws when
   * the store's state cannot be restored. Resolves once every one was answered: with the first refusal
   * among the answers (the engine went down), else an accepted one; undefined when there were none.
   */
  restoreAll(recs: readonly OrderRecord[]): Promise<PlaceResponse | undefined> {
    if (recs.length === 0) return Promise.resolve(undefined);
    const pending = sharedRestore(recs.length);
    for (let i = 0; i < recs.length; i++) {
      const rec = recs[i]!;
      // The shards place what is sent while the rest is prepared (ShardLink.flush).
      if ((i & 255) === 255) this.link.flush();
      const tm = this.markets.token(rec.tokenId);
      if (tm === undefined) throw new Error(`refusing to start: open order ${rec.orderId} names unknown token ${rec.tokenId}`);
      this.orders.share(rec, tm);
      const side = rec.side === 'BUY' ? Side.BUY : Side.SELL;
      const tif = TIF_OF[rec.orderType];
      const o = this.orders.create(rec, tm.market, side, tif, rec.sizeUnits - rec.sizeMatched);
      o.accepted = true;
      if (!reserve(this.ledger, o, needOf(o))) throw new Error(`refusing to start: wallet ${rec.wallet} cannot cover open order ${rec.orderId}`);
      o.live = true;
      this.orders.track(o);
      o.pending = pending;
      this.link.place(o, this.orders.walletIndex(o.rec.wallet), true, true);
    }
    return pending.promise;
  }

  /**
   * Type, expiration and amount checks: a refusal, or undefined with side, type, limit price, size and
   * budget in `this.terms`.
   */
  private check(o: PlaceInput, market: MarketState): PlaceResponse | undefined {
    const tif = TIF_OF[o.orderType];
    if (tif === undefined) return rejectResponse(o.orderId, Errors.PM_ERR_BAD_REQUEST.result, { detail: `invalid order type ${String(o.orderType)}` });
    if (o.side !== 'BUY' && o.side !== 'SELL') return rejectResponse(o.orderId, Errors.PM_ERR_BAD_REQUEST.result, { detail: `invalid side ${String(o.side)}` });
    const rests = restsOnBook(tif);
    if (o.postOnly && !rests) return rejectResponse(o.orderId, Errors.PM_ERR_POST_ONLY_TYPE.result);
    if (tif === Tif.GTD) {
      if (!Number.isSafeInteger(o.expiration) || o.expiration < Math.floor(this.now() / 1000) + GTD_MIN_LEAD_SECONDS) {
        return rejectResponse(o.orderId, Errors.PM_ERR_ORDER_EXPIRATION.result);
      }
    } else if (o.expiration !== 0) {
      return rejectResponse(o.orderId, Errors.PM_ERR_ORDER_EXPIRATION.result);
    }
    const maker = o.makerAmount;
    const taker = o.takerAmount;
    if (!Number.isSafeInteger(maker) || !Number.isSafeInteger(taker) || maker <= 0 || taker <= 0) {
      return rejectResponse(o.orderId, Errors.PM_ERR_ORDER_AMOUNTS.result, { id: o.orderId, detail: 'makerAmount and takerAmount must be positive integers' });
    }
    const side = o.side === 'BUY' ? Side.BUY : Side.SELL;
    let price: number;
    let size: number;
    let budget = 0;
    if (rests) {
      size = side === Side.BUY ? taker : maker;
      const usdc = side === Side.BUY ? maker : taker;
      if (size % LOT_UNITS !== 0) return rejectResponse(o.orderId, Errors.PM_ERR_ORDER_AMOUNTS.result, { id: o.orderId, detail: 'size must be a whole number of 0.01 tokens' });
      const tick = market.tickPips;
      const scaled = usdc * PIPS_PER_UNIT_PRICE;
      const exact = Number.isSafeInteger(scaled) && scaled % size === 0;
      price = exact ? scaled / size : -1;
      if (!exact || !onTick(price, tick)) {
        return rejectResponse(o.orderId, Errors.PM_ERR_ORDER_TICK.result, { id: o.orderId, price: exact ? formatPips(price) : String(usdc / size), tick: formatPips(tick) });
      }
    } else if (side === Side.BUY) {
      size = taker - (taker % LOT_UNITS);
      budget = maker;
      price = Math.min(Math.floor((maker * PIPS_PER_UNIT_PRICE) / taker), PIPS_PER_UNIT_PRICE - 1);
      if (size === 0) return rejectResponse(o.orderId, Errors.PM_ERR_ORDER_AMOUNTS.result, { id: o.orderId, detail: 'size must be at least 0.01 tokens' });
      if (price < 1) return rejectResponse(o.orderId, Errors.PM_ERR_ORDER_TICK.result, { id: o.orderId, price: String(maker / taker), tick: formatPips(market.tickPips) });
    } else {
      size = maker;
      if (size % LOT_UNITS !== 0) return rejectResponse(o.orderId, Errors.PM_ERR_ORDER_AMOUNTS.result, { id: o.orderId, detail: 'size must be a whole number of 0.01 tokens' });
      price = Math.max(Math.ceil((taker * PIPS_PER_UNIT_PRICE) / maker), 1);
      if (price > PIPS_PER_UNIT_PRICE - 1) return rejectResponse(o.orderId, Errors.PM_ERR_ORDER_TICK.result, { id: o.orderId, price: String(taker / maker), tick: formatPips(market.tickPips) });
    }
    if (size < market.minSizeUnits) {
      return rejectResponse(o.orderId, Errors.PM_ERR_ORDER_MIN_SIZE.result, { id: o.orderId, size: formatUnits(size), min: formatUnits(market.minSizeUnits) });
    }
    const t = this.terms;
    t.side = side;
    t.tif = tif;
    t.pricePips = price;
    t.sizeUnits = size;
    t.budgetUnits = budget;
    return undefined;
  }

  /**
   * The record of an admitted order. Its fields are written in the order the store's decoder writes them
   * (journal/orders.ts), so placed and restored records share one hidden class.
   */
  private recordOf(o: PlaceInput, tm: TokenMarket, t: Terms): OrderRecord {
    const market = tm.market;
    const now = this.now();
    return {
      orderId: o.orderId,
      wallet: o.wallet,
      tokenId: o.tokenId,
      side: o.side,
      orderType: o.orderType,
      postOnly: o.postOnly,
      makerAmount: o.makerAmount,
      takerAmount: o.takerAmount,
      expiration: o.expiration,
      builder: o.builder,
      owner: o.owner,
      signer: o.signer,
      signatureType: o.signatureType,
      seq: 0,
      conditionId: market.conditionId,
      outcome: tm.outcome,
      pricePips: t.pricePips,
      sizeUnits: t.sizeUnits,
      budgetUnits: t.budgetUnits,
      makerFeeBps: market.makerFeeBps,
      takerFeeBps: market.takerFeeBps,
      sizeMatched: 0,
      status: 'LIVE',
      tradeIds: NO_TRADES,
      fillSeqs: NO_SEQS,
      createdAt: now,
      updatedAt: now,
      response: LIVE_UNFILLED,
    };
  }

  /** A retry of a known order id gets the original answer; an order in flight, the same promise. */
  private duplicate(orderId: string): Promise<PlaceResponse> | undefined {
    // An order known in memory may be applied but not yet committed: answer it only after the commit,
    // as its original answer is (never acknowledge what a crash could still lose).
    const live = this.orders.get(orderId);
    if (live !== undefined) {
      if (live.pending !== undefined) return live.pending.promise;
      return new Promise((resolve) => this.commit.ack(resolve, responseOf(live.rec)));
    }
    const recent = this.orders.recentOf(orderId);
    if (recent !== undefined) return new Promise((resolve) => this.commit.ack(resolve, responseOf(recent)));
    const rec = readOrder(this.store, orderId);
    if (rec !== undefined) return Promise.resolve(responseOf(rec));
    return undefined;
  }

  // ---- cancels --------------------------------------------------------------------------------------------

  /** Cancels the orders among `orderIds` that `signer` signed; any other id is 'order not found'. */
  cancelOrders(signer: string, orderIds: string[]): Promise<CancelResponse> {
    const targets: OrderState[] = [];
    const notCanceled: Record<string, string> = {};
    const seen = new Set<string>();
    for (const id of orderIds) {
      if (seen.has(id)) continue;
      seen.add(id);
      const o = this.orders.get(id);
      if (o !== undefined && o.rec.signer === signer && (o.live || (o.pending !== undefined && !o.pending.restore))) targets.push(o);
      else notCanceled[id] = this.notCancelableReason(signer, id);
    }
    return this.cancelTargets(signer, targets, notCanceled);
  }

  /** Cancels the open orders `signer` signed in a market and/or token (both given: both must match; none: all). */
  cancelMarketOrders(signer: string, f: { conditionId?: string; tokenId?: string }): Promise<CancelResponse> {
    const targets: OrderState[] = [];
    for (const o of this.orders.ofSigner(signer)) {
      if (f.conditionId !== undefined && f.conditionId !== '' && o.rec.conditionId !== f.conditionId) continue;
      if (f.tokenId !== undefined && f.tokenId !== '' && o.rec.tokenId !== f.tokenId) continue;
      if (restsOnBook(o.tif)) targets.push(o);
    }
    return this.cancelTargets(signer, targets, {});
  }

  private notCancelableReason(signer: string, orderId: string): string {
    const rec = this.orders.recentOf(orderId) ?? readOrder(this.store, orderId);
    if (rec === undefined || rec.signer !== signer) return 'order not found';
    return rec.status === 'MATCHED' ? 'order already matched' : 'order already canceled';
  }

  private cancelTargets(signer: string, targets: OrderState[], notCanceled: Record<string, string>): Promise<CancelResponse> {
    if (this.life.down) {
      for (const o of targets) notCanceled[o.rec.orderId] = Errors.PM_ERR_ENGINE_DOWN.message;
      return Promise.resolve({ canceled: [], notCanceled });
    }
    if (targets.length === 0) return Promise.resolve({ canceled: [], notCanceled });
    return new Promise((resolve) => {
      const batch: CancelBatch = { signer, canceled: [], notCanceled, pending: 0, resolve };
      for (const o of targets) {
        if (!this.link.cancel(o, batch)) {
          notCanceled[o.rec.orderId] = Errors.PM_ERR_ENGINE_BUSY.message;
          continue;
        }
        batch.pending++;
      }
      if (batch.pending === 0) resolve({ canceled: [], notCanceled });
    });
  }
}
