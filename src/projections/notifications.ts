/**
 * Notifications (GET and DELETE /notifications), projected from the committed journal: what happened to a
 * wallet's orders and markets, kept until the wallet drops them.
 *
 *   fill      each party of a fill hears of it (type 2): its own order, side, token, price, size and fee;
 *             a deferred fill is told at its match, as the CLOB shows it (its later moves are trade states,
 *             read in GET /data/trades)
 *   status    an order that left the book unfilled, CANCELED or CANCELED_MARKET_RESOLVED (type 1), for any
 *             reason but UNFILLED: a FOK/FAK remainder never rested, and its submitter read it in the answer
 *   resolve   every wallet that took part in the market (an order, a fill, a split, a merge, a redeem) hears
 *             of its resolution (type 4)
 *
 * Layout (journal/keys.ts notificationKeys): ['ntf', wallet, slot] -> the notification, slot = the n-th one
 * the wallet received, which is its id; ['ntf-s', wallet] -> {first, next, seq}: slots below `first` are
 * gone, `next` is the next slot, `seq` the last event applied for the wallet; ['ntf-p', conditionId, wallet]
 * -> 1 for each participant of a market. The bound (MAX_NOTIFICATIONS_PER_WALLET): once `next - first`
 * reaches it, the slot at `first` is removed as a new one is written, so a wallet holds at most that many
 * and eviction costs one removal, never a scan. A drop (queries/notifications.ts) removes slots and leaves
 * the state alone: a wallet that drops keeps fewer.
 *
 * Idempotence: the projector applies each seq once; a wallet's state also skips an event at or below its
 * `seq`, so a replay that re-applies an event adds nothing twice. Wallets are lowercase in the journal.
 */
import type { FillEvent, JournalEvent, OrderStatusEvent, ResolveEvent } from '../domain/events.ts';
import { MAX_NOTIFICATIONS_PER_WALLET, NOTIFICATION_TYPES } from '../domain/notifications.ts';
import { formatPips, formatUnits } from '../domain/units.ts';
import type { StoredNotification } from '../edge/schemas/notifications.ts';
import type { Store } from '../journal/env.ts';
import { notificationKeys } from '../journal/keys.ts';
import { readOrder } from '../journal/orders.ts';
import type { Projection, ViewStore } from './projector.ts';

export const NOTIFICATIONS_PROJECTION = 'notifications';

/** A wallet's list state: slots in [first, next) may exist; `seq` is the last journal seq applied for it. */
export interface NotificationState {
  first: number;
  next: number;
  seq: number;
}

const secondsOf = (ms: number) => Math.floor(ms / 1000);

export class NotificationsProjection implements Projection {
  readonly name = NOTIFICATIONS_PROJECTION;

  constructor(
    private readonly views: ViewStore,
    private readonly store: Store,
    private readonly bound = MAX_NOTIFICATIONS_PER_WALLET,
  ) {}

  apply(e: JournalEvent): void {
    switch (e.type) {
      case 'order':
      case 'split':
      case 'merge':
      case 'credit':
      case 'redeem':
        return this.participant(e.conditionId, e.wallet);
      case 'fill':
        return this.fill(e);
      case 'status':
        return this.status(e);
      case 'resolve':
        return this.resolved(e);
    }
  }

  private fill(f: FillEvent): void {
    const at = secondsOf(f.ts);
    const party = (maker: boolean): StoredNotification => ({
      type: NOTIFICATION_TYPES.fill,
      owner: maker ? f.makerWallet : f.takerWallet,
      payload: {
        order_id: maker ? f.makerOrderId : f.takerOrderId,
        trade_id: f.tradeId,
        market: f.conditionId,
        asset_id: maker ? f.makerTokenId : f.takerTokenId,
        side: maker ? f.makerSide : f.takerSide,
        price: formatPips(maker ? f.makerPricePips : f.takerPricePips),
        size: formatUnits(f.size),
        fee: formatUnits(maker ? f.makerFee : f.takerFee),
        trader_side: maker ? 'MAKER' : 'TAKER',
        transaction_hash: f.txHash,
        timestamp: at,
      },
    });
    // A self-trade is one wallet on both sides: both of its notifications, one state update.
    if (f.takerWallet === f.makerWallet) this.add(f.takerWallet, f.seq, [party(false), party(true)]);
    else {
      this.add(f.takerWallet, f.seq, [party(false)]);
      this.add(f.makerWallet, f.seq, [party(true)]);
    }
    this.participant(f.conditionId, f.takerWallet);
    this.participant(f.conditionId, f.makerWallet);
  }

  private status(e: OrderStatusEvent): void {
    if ((e.status !== 'CANCELED' && e.status !== 'CANCELED_MARKET_RESOLVED') || e.reason === 'UNFILLED') return;
    // The order's fixed fields (token, side, price, size): its record, committed with or before this event.
    const o = readOrder(this.store, e.orderId);
    this.add(e.wallet, e.seq, [
      {
        type: NOTIFICATION_TYPES.cancel,
        owner: e.wallet,
        payload: {
          order_id: e.orderId,
          market: e.conditionId,
          asset_id: o?.tokenId ?? '',
          side: o?.side ?? '',
          price: o === undefined ? '' : formatPips(o.pricePips),
          original_size: o === undefined ? '' : formatUnits(o.sizeUnits),
          size_matched: formatUnits(e.matched),
          size_canceled: formatUnits(e.remaining),
          status: e.status,
          reason: e.reason,
          timestamp: secondsOf(e.ts),
        },
      },
    ]);
  }

  private resolved(e: ResolveEvent): void {
    const payload = { market: e.conditionId, winning_outcome_index: e.winningOutcome, winning_asset_id: e.tokenIds[e.winningOutcome], timestamp: secondsOf(e.ts) };
    for (const { key } of this.views.range(notificationKeys.participantsOf(e.conditionId))) {
      const wallet = key[2] as string;
      this.add(wallet, e.seq, [{ type: NOTIFICATION_TYPES.resolved, owner: wallet, payload }]);
    }
  }

  /** Appends `items` to the wallet's list (event `seq`), dropping the oldest past the bound. */
  private add(wallet: string, seq: number, items: StoredNotification[]): void {
    const stateKey = notificationKeys.state(wallet);
    const s = this.views.get<NotificationState>(stateKey) ?? { first: 0, next: 0, seq: 0 };
    if (seq <= s.seq) return;
    let { first, next } = s;
    for (const n of items) {
      this.views.put(notificationKeys.entry(wallet, next++), n);
      while (next - first > this.bound) this.views.remove(notificationKeys.entry(wallet, first++));
    }
    this.views.put(stateKey, { first, next, seq } satisfies NotificationState);
  }

  private participant(conditionId: string, wallet: string): void {
    const key = notificationKeys.participant(conditionId, wallet);
    if (this.views.get(key) === undefined) this.views.put(key, 1);
  }
}

/**
 * Drops notifications of a wallet (DELETE /notifications): the given slots, or every one when `slots` is
 * undefined. Writes through the overlay like the projection, so a slot written but not yet issued is
 * removed before it ever reaches LMDB; the caller flushes and awaits the commit before it answers, which
 * also saves the cursor that covers what was dropped, so a restart cannot bring a dropped one back.
 * Returns how many existed.
 */
export function dropNotifications(views: ViewStore, wallet: string, slots: readonly number[] | undefined): number {
  const keys = slots === undefined ? views.range(notificationKeys.ofWallet(wallet)).map((e) => e.key) : slots.map((s) => notificationKeys.entry(wallet, s));
  let dropped = 0;
  for (const key of keys) {
    if (views.get(key) === undefined) continue;
    views.remove(key);
    dropped++;
  }
  return dropped;
}
