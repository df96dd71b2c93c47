/**
 * Notifications (GET and DELETE /notifications): what happened to a wallet's orders and markets, kept until
 * the wallet drops them (projections/notifications.ts). The platform client's Notification is
 * `{type, owner, payload}`; `id` is what DELETE /notifications?ids= names. Types follow the platform's
 * numbering: 1 an order canceled, 2 an order filled, 4 a market resolved.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Str, TraderSide, strings } from './common.ts';
import { NOTIFICATION_TYPES } from '../../domain/notifications.ts';

const Seconds = Type.Integer({ description: 'unix seconds (journal time of the event)' });

export const CancelPayload = Type.Object({
  order_id: Str,
  market: Type.String({ description: 'condition id' }),
  asset_id: Type.String({ description: "the order's token" }),
  ...strings('side', 'price', 'original_size', 'size_matched'),
  size_canceled: Type.String({ description: 'what left the book unfilled' }),
  status: Type.String({ description: 'CANCELED, or CANCELED_MARKET_RESOLVED' }),
  reason: Type.String({ description: 'USER (a cancel), EXPIRED (GTD), SELF_TRADE, MARKET_RESOLVED; also a heartbeat that lapsed (USER)' }),
  timestamp: Seconds,
});

export const FillPayload = Type.Object({
  order_id: Type.String({ description: "the wallet's order that filled" }),
  trade_id: Str,
  market: Str,
  asset_id: Type.String({ description: "the wallet's token in the fill" }),
  side: Type.String({ description: "the wallet's side" }),
  price: Type.String({ description: "in the wallet's outcome" }),
  size: Str,
  fee: Type.String({ description: 'USDC the wallet paid in fees' }),
  trader_side: TraderSide,
  transaction_hash: Str,
  timestamp: Seconds,
});

export const ResolvedPayload = Type.Object({
  market: Str,
  winning_outcome_index: Type.Integer(),
  winning_asset_id: Str,
  timestamp: Seconds,
});

/** A notification as stored (its key is its id). */
export const StoredNotification = Type.Union([
  Type.Object({ type: Type.Literal(NOTIFICATION_TYPES.cancel), owner: Str, payload: CancelPayload }),
  Type.Object({ type: Type.Literal(NOTIFICATION_TYPES.fill), owner: Str, payload: FillPayload }),
  Type.Object({ type: Type.Literal(NOTIFICATION_TYPES.resolved), owner: Str, payload: ResolvedPayload }),
]);
export type StoredNotification = Static<typeof StoredNotification>;

export const Notification = Type.Intersect([
  Type.Object({ id: Type.String({ description: 'what DELETE /notifications?ids= names' }) }),
  StoredNotification,
]);
export type Notification = Static<typeof Notification>;

export const NotificationsQuery = Type.Object({
  signature_type: Type.Optional(Type.Integer({ minimum: 0, maximum: 255, description: "whose: 0 (default) the key's wallet, 1 its proxy wallet, 2 its Safe" })),
});

export const DropNotificationsQuery = Type.Object({
  ids: Type.Optional(Type.String({ maxLength: 20_000, description: 'comma-separated notification ids; absent or empty drops every notification' })),
});
