/**
 * The orders the sequencer holds in memory, and the parts their records share.
 *
 * Owns an order from admission until its final state is committed: indexed by handle (the number the shards
 * know it by), by order id and by signer while it is in flight or resting; then, from its final status until
 * the commit that holds it, in `recent`, so getOrder and a retry of its id still see it. Owns the handles
 * (unique for the engine's life) and the wallet indexes the shards compare for self-trade prevention (one
 * per wallet, never reused).
 *
 * The signer index is what an API key's open orders and cancels look up (the key belongs to the signer): an
 * EOA order's signer is its wallet, a proxy or Safe order's is the EOA that controls that wallet
 * (edge/auth/funders.ts), so one signer finds its own orders and its funders' alike.
 *
 * Invariants: an order is in byHandle, byId and its signer's set together or in none of them; a signer's
 * set is never left empty; an order leaves `recent` only with the batch that committed its final state, and
 * only if it was not finished again since.
 *
 * What a resting order keeps alive. A deep book is held here as one record per open order, so its bytes are
 * what a book costs in memory, and every new one is copied by the two scavenges it survives before it is
 * promoted, on the thread that answers orders. So a record shares what repeats: its wallet, signer, owner,
 * token id and builder are canonical copies (the ledger's wallet, the market's token id, `Interner`), not
 * the request's strings, and until its first fill it holds the one frozen empty list and the one unfilled
 * answer below. A list grows only through `appended`, which never writes to the shared one. What the order
 * signed (salt, timestamp, signature) is not in the record at all: the placement carries it until the
 * `order` event is written (PendingPlace.signed), and the journal keeps it. Measured by
 * bench/engine/memory.bench.ts: 1,460 -> 940 -> 703 bytes of heap per resting order.
 */
import type { OrderRecord, OrderSignedParts } from '../../domain/events.ts';
import { Tif, type Side } from '../book/api.ts';
import type { OpenOrdersFilter, PlaceResponse } from '../engine-types.ts';
import type { Ledger, WalletBalance } from '../ledger/ledger.ts';
import type { MarketState, TokenMarket } from '../markets/market-table.ts';

export interface OrderState {
  rec: OrderRecord;
  handle: number;
  market: MarketState;
  wb: WalletBalance;
  side: Side;
  tif: Tif;
  /** Size not yet filled and not canceled. */
  remaining: number;
  /** USDC (BUY) or tokens (SELL) this order holds reserved. */
  reserved: number;
  /** Fee rate the reservation bound uses (buyNeed). */
  feeBound: number;
  /** Journaled (its `order` event is in the journal). */
  accepted: boolean;
  /** Resting on its book (accepted and not finished). */
  live: boolean;
  /** Set while the placement is in flight. */
  pending: PendingPlace | undefined;
}

/** A placement in flight: its caller's promise and what its fills have made so far. */
export interface PendingPlace {
  promise: Promise<PlaceResponse>;
  resolve: (r: PlaceResponse) => void;
  making: number;
  taking: number;
  tradeIds: string[];
  /** A start-up re-placement: must rest untouched, journals nothing. */
  restore: boolean;
  /** What the order signed, for its `order` event (the record does not hold it); undefined for a restore. */
  signed: OrderSignedParts | undefined;
}

export const NO_TRADES = Object.freeze([]) as readonly string[] as string[];
export const NO_SEQS = Object.freeze([]) as readonly number[] as number[];
export const LIVE_UNFILLED: OrderRecord['response'] = Object.freeze({ status: 'live', makingAmount: 0, takingAmount: 0, tradeIds: NO_TRADES });

/**
 * Copies of records for the engine to take over, where the caller keeps the originals (a proof used again,
 * EngineOptions.proof): the engine changes a record's fields and appends to its trade and fill lists in
 * place (`appended`), nothing deeper.
 */
export function ownRecords(recs: readonly OrderRecord[]): OrderRecord[] {
  // An empty list is replaced, never written (`appended`): only one with items needs a copy.
  return recs.map((r) => ({ ...r, tradeIds: r.tradeIds.length === 0 ? r.tradeIds : [...r.tradeIds], fillSeqs: r.fillSeqs.length === 0 ? r.fillSeqs : [...r.fillSeqs] }));
}

/** `list` with `item` at its end: an empty list (perhaps the shared one) is replaced, never written. */
export function appended<T>(list: T[], item: T): T[] {
  if (list.length === 0) return [item];
  list.push(item);
  return list;
}

/** One copy of each string it was given, up to `cap` of them (past that, strings pass through). */
class Interner {
  private readonly copies = new Map<string, string>();
  constructor(private readonly cap: number) {}

  of(s: string): string {
    const c = this.copies.get(s);
    if (c !== undefined) return c;
    if (this.copies.size < this.cap) this.copies.set(s, s);
    return s;
  }
}

/** GTC and GTD rest on the book; FOK and FAK never do. */
export function restsOnBook(tif: Tif): boolean {
  return tif === Tif.GTC || tif === Tif.GTD;
}

export function newPending(restore: boolean, signed: OrderSignedParts | undefined): PendingPlace {
  let resolve!: (r: PlaceResponse) => void;
  const promise = new Promise<PlaceResponse>((r) => (resolve = r));
  return { promise, resolve, making: 0, taking: 0, tradeIds: NO_TRADES, restore, signed };
}

/**
 * The pending answer start-up's re-placements share (admission.ts restoreAll): a store holds many open
 * orders, and a promise each cost the restore of a sandbox revert more than their books did. Its promise
 * resolves once all `n` were answered: with the first refusal among them (an engine that went down), else
 * the last answer.
 */
export function sharedRestore(n: number): PendingPlace {
  let left = n;
  let refused: PlaceResponse | undefined;
  let finish!: (r: PlaceResponse) => void;
  const promise = new Promise<PlaceResponse>((r) => (finish = r));
  const resolve = (r: PlaceResponse) => {
    if (!r.ok) refused ??= r;
    if (--left === 0) finish(refused ?? r);
  };
  return { promise, resolve, making: 0, taking: 0, tradeIds: NO_TRADES, restore: true, signed: undefined };
}

/** The answer an accepted order's placement got (what a retry of its id is told). */
export function responseOf(rec: OrderRecord): PlaceResponse {
  const r = rec.response;
  return { ok: true, code: 0, orderId: rec.orderId, status: r.status, makingAmount: r.makingAmount, takingAmount: r.takingAmount, tradeIds: r.tradeIds };
}

export function rejectResponse(orderId: string, code: number, vars?: Record<string, string | number>): PlaceResponse {
  const r: PlaceResponse = { ok: false, code, orderId, status: 'canceled', makingAmount: 0, takingAmount: 0, tradeIds: NO_TRADES };
  if (vars !== undefined) r.vars = vars;
  return r;
}

export class OrderTable {
  private readonly byHandle = new Map<number, OrderState>();
  private readonly byId = new Map<string, OrderState>();
  private readonly bySigner = new Map<string, Set<OrderState>>();
  /** Finished orders whose final state is not committed yet (getOrder must still see them). */
  private readonly recent = new Map<string, OrderRecord>();
  /** Orders finished since the last journal batch left (they leave `recent` when it is durable). */
  private finishedBatch: OrderRecord[] = [];
  /**
   * Owners (API keys, one per wallet), the signers of proxy and Safe orders (one per key's wallet) and builder
   * codes (a few); bounded, as builder codes are the client's.
   */
  private readonly shared = new Interner(65_536);
  private readonly walletIdx = new Map<string, number>();
  private nextHandle = 1;

  constructor(private readonly ledger: Ledger) {}

  /** A new order state with a fresh handle; not tracked yet (track). */
  create(rec: OrderRecord, market: MarketState, side: Side, tif: Tif, remaining: number): OrderState {
    return {
      rec,
      handle: this.nextHandle++,
      market,
      wb: this.ledger.wallet(rec.wallet),
      side,
      tif,
      remaining,
      reserved: 0,
      feeBound: restsOnBook(tif) ? Math.max(rec.makerFeeBps, rec.takerFeeBps) : rec.takerFeeBps,
      accepted: false,
      live: false,
      pending: undefined,
    };
  }

  /** Points the record at the canonical copies of what it shares with other orders (header). */
  share(rec: OrderRecord, tm: TokenMarket): void {
    const wallet = this.ledger.wallet(rec.wallet).wallet;
    rec.signer = rec.signer === wallet ? wallet : this.shared.of(rec.signer);
    rec.wallet = wallet;
    rec.tokenId = tm.market.tokenIds[tm.outcome];
    rec.owner = this.shared.of(rec.owner);
    rec.builder = this.shared.of(rec.builder);
    if (rec.tradeIds.length === 0) rec.tradeIds = NO_TRADES;
    if (rec.fillSeqs.length === 0) rec.fillSeqs = NO_SEQS;
    const r = rec.response;
    // A restored record may hold no answer (orders.ts: answer 0).
    if (r !== undefined && r.status === 'live' && r.makingAmount === 0 && r.takingAmount === 0 && r.tradeIds.length === 0) rec.response = LIVE_UNFILLED;
  }

  track(o: OrderState): void {
    this.byHandle.set(o.handle, o);
    this.byId.set(o.rec.orderId, o);
    let set = this.bySigner.get(o.rec.signer);
    if (set === undefined) {
      set = new Set();
      this.bySigner.set(o.rec.signer, set);
    }
    set.add(o);
  }

  untrack(o: OrderState): void {
    this.byHandle.delete(o.handle);
    this.byId.delete(o.rec.orderId);
    const set = this.bySigner.get(o.rec.signer);
    if (set !== undefined) {
      set.delete(o);
      if (set.size === 0) this.bySigner.delete(o.rec.signer);
    }
  }

  /** A tracked order by the handle the shards know it by. */
  byHandleOf(handle: number): OrderState | undefined {
    return this.byHandle.get(handle);
  }

  /** A tracked order (in flight or resting) by its id. */
  get(orderId: string): OrderState | undefined {
    return this.byId.get(orderId);
  }

  /** A finished order whose final state is not committed yet. */
  recentOf(orderId: string): OrderRecord | undefined {
    return this.recent.get(orderId);
  }

  /** The tracked orders `signer` signed (its own wallet's and its funders'), in the order they were tracked. */
  ofSigner(signer: string): Iterable<OrderState> {
    return this.bySigner.get(signer) ?? [];
  }

  /** Every tracked order. */
  all(): IterableIterator<OrderState> {
    return this.byHandle.values();
  }

  /** Tracked orders resting on their books. */
  openCount(): number {
    let open = 0;
    for (const o of this.byHandle.values()) if (o.live) open++;
    return open;
  }

  /** Allocates: the open (accepted, resting) orders `signer` signed, oldest first. */
  openOrders(signer: string, filter: OpenOrdersFilter): OrderRecord[] {
    const out: OrderRecord[] = [];
    for (const o of this.ofSigner(signer)) {
      if (!o.live) continue;
      if (filter.id !== undefined && filter.id !== '' && o.rec.orderId !== filter.id) continue;
      if (filter.conditionId !== undefined && filter.conditionId !== '' && o.rec.conditionId !== filter.conditionId) continue;
      if (filter.tokenId !== undefined && filter.tokenId !== '' && o.rec.tokenId !== filter.tokenId) continue;
      out.push(o.rec);
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** Allocates: every wallet's open (accepted, resting) orders in the given markets, oldest first. */
  restingIn(conditionIds: ReadonlySet<string>): OrderRecord[] {
    const out: OrderRecord[] = [];
    if (conditionIds.size === 0) return out;
    for (const o of this.byHandle.values()) if (o.live && conditionIds.has(o.rec.conditionId)) out.push(o.rec);
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** The order reached its final state (untracked by the caller): kept in `recent` until that is committed. */
  finished(rec: OrderRecord): void {
    this.recent.set(rec.orderId, rec);
    this.finishedBatch.push(rec);
  }

  /** The orders finished since the last call: the ones the journal batch about to leave holds. */
  takeFinished(): OrderRecord[] {
    const out = this.finishedBatch;
    this.finishedBatch = [];
    return out;
  }

  /** The batch holding these final states is durable: they are read from the store from now on. */
  forget(finished: readonly OrderRecord[]): void {
    for (const rec of finished) if (this.recent.get(rec.orderId) === rec) this.recent.delete(rec.orderId);
  }

  /** The wallet's index for self-trade prevention in the shards: 1, 2, ... in order of first use. */
  walletIndex(wallet: string): number {
    let i = this.walletIdx.get(wallet);
    if (i === undefined) {
      i = this.walletIdx.size + 1;
      this.walletIdx.set(wallet, i);
    }
    return i;
  }
}
