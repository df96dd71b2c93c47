/**
 * What the notifications of a wallet are, shared by the projection that writes them, the query that reads
 * them and their schema: the platform's type numbers, the bound per wallet and the id form.
 */

/** The platform's notification types: an order canceled, an order filled, a market resolved. */
export const NOTIFICATION_TYPES = { cancel: 1, fill: 2, resolved: 4 } as const;

/** Notifications a wallet keeps; past it the oldest is dropped as a new one arrives. */
export const MAX_NOTIFICATIONS_PER_WALLET = 500;

/** A notification's id: its slot in the wallet's list (the n-th notification the wallet received, from 0). */
export function parseNotificationId(id: string): number | undefined {
  if (!/^(0|[1-9]\d{0,15})$/.test(id)) return undefined;
  const n = Number(id);
  return Number.isSafeInteger(n) ? n : undefined;
}
