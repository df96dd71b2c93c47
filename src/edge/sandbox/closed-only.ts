/**
 * Closed-only mode per wallet, as the platform's ban status names it: set by an admin (PUT
 * /admin/wallets/{address}/closed-only), reported to the wallet by GET /auth/ban-status/closed-only, and
 * enforced on its orders (routes/clob/trading.ts): cancels and SELL orders, which can only reduce a position, are
 * accepted; a BUY is refused with 400 `'{address}' address in closed only mode`.
 *
 * The set survives restarts: it is one meta record (a sorted list of lowercase addresses), read once at
 * start and rewritten on each change (admin-rate, a few wallets).
 */
import type { Store } from '../../journal/env.ts';
import { metaKeys } from '../../journal/keys.ts';

export class ClosedOnlyWallets {
  private readonly wallets: Set<string>;

  constructor(private readonly store: Store) {
    const stored = store.meta.get(metaKeys.closedOnlyWallets);
    this.wallets = new Set(Array.isArray(stored) ? (stored as string[]) : []);
  }

  has(wallet: string): boolean {
    return this.wallets.size > 0 && this.wallets.has(wallet.toLowerCase());
  }

  /** Sets or clears the mode of a wallet; resolves once the change is durable. */
  async set(wallet: string, closedOnly: boolean): Promise<void> {
    const w = wallet.toLowerCase();
    if (closedOnly === this.wallets.has(w)) return;
    if (closedOnly) this.wallets.add(w);
    else this.wallets.delete(w);
    await this.store.meta.put(metaKeys.closedOnlyWallets, this.list());
  }

  /** The wallets in closed-only mode, sorted. */
  list(): string[] {
    return [...this.wallets].sort();
  }
}
