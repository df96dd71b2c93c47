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

/**
 * A notification's id as an API key's caller sees it: the slot for its own wallet's, `<type>-<slot>` for
 * those of its proxy wallet (type 1) or Safe (type 2) (edge/auth/funders.ts), so the ids of a key's wallets
 * never collide and DELETE /notifications, which the platform client sends without a signature_type, finds
 * the wallet from the id alone.
 */
export function keyNotificationId(type: 0 | 1 | 2, slot: string): string {
  return type === 0 ? slot : `${type}-${slot}`;
}

/** The wallet type and slot of a keyNotificationId; undefined for anything else. */
export function parseKeyNotificationId(id: string): { type: 0 | 1 | 2; slot: number } | undefined {
  const dash = /^([12])-(.*)$/.exec(id);
  const slot = parseNotificationId(dash === null ? id : dash[2]!);
  if (slot === undefined) return undefined;
  return { type: dash === null ? 0 : (Number(dash[1]) as 1 | 2), slot };
}
