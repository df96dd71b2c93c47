/**
 * A wallet's notifications (GET /notifications), oldest first, as projections/notifications.ts keeps them:
 * at most MAX_NOTIFICATIONS_PER_WALLET, read through the ViewStore overlay so a fill acknowledged a moment
 * ago is already there.
 */
import type { Notification, StoredNotification } from '../edge/schemas/notifications.ts';
import { notificationKeys } from '../journal/keys.ts';
import type { ViewStore } from '../projections/projector.ts';

export function walletNotifications(views: ViewStore, wallet: string): Notification[] {
  return views.range<StoredNotification>(notificationKeys.ofWallet(wallet.toLowerCase())).map((e) => ({ id: String(e.key[2]), ...e.value }));
}
