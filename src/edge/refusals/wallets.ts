/**
 * Whose refusals are kept, and who may read them (GET /refusals). Two logs (log.ts), so that the one a key
 * holder reads cannot be flushed by requests that name made-up wallets:
 *
 *   keyed    wallets that hold an API key: every refusal of a request naming the wallet (its key, or its
 *            address), read by a request signed with one of the wallet's keys (L2), as before;
 *   keyless  wallets that hold none yet: what a login (L1, POST /auth/api-key, GET /auth/derive-api-key)
 *            or any other request naming the address was refused for, so that a failing login can be
 *            diagnosed before there is a key to sign with. Small (KEYLESS_PER_WALLET entries of at most
 *            KEYLESS_WALLETS wallets, the least recently refused leaving first).
 *
 * The rule for reading without a key: `GET /refusals?address=0x...` unsigned lists the refusals of that
 * address that were made from the reader's own client address (the same one the rate limits charge:
 * X-Forwarded-For only from `http.trustedProxies`), from either log. So a bot reads what its own requests
 * were refused for, and nobody reads another client's refusals from elsewhere. Two clients behind one NAT
 * share an address and so each other's refusals of a wallet both name; a reason holds no secret (reason.ts).
 * A signed read lists everything kept for the caller's wallet, from both logs.
 *
 * In memory, per process (as log.ts): a restart forgets them.
 */
import type { RefusalEntry, RefusalLog } from './log.ts';

/** Refusals kept per wallet without a key, and such wallets kept. */
export const KEYLESS_PER_WALLET = 20;
export const KEYLESS_WALLETS = 2_000;

export class WalletRefusals {
  constructor(
    /** Whether a wallet holds an API key (of any kind). */
    private readonly hasKey: (wallet: string) => boolean,
    private readonly keyed: RefusalLog,
    private readonly keyless: RefusalLog,
  ) {}

  /** Most refusals listed for one wallet. */
  get perWallet(): number {
    return this.keyed.perWallet;
  }

  record(wallet: string, e: RefusalEntry): void {
    if (this.hasKey(wallet)) this.keyed.record(wallet, e);
    else this.keyless.record(wallet, e);
  }

  /** A signed read: every refusal kept for the wallet, newest first. */
  list(wallet: string): RefusalEntry[] {
    return newestFirst(this.keyed.list(wallet), this.keyless.list(wallet), this.perWallet);
  }

  /** An unsigned read: the refusals of `wallet` made from client address `peer`, newest first. */
  fromPeer(wallet: string, peer: string): RefusalEntry[] {
    const mine = (e: RefusalEntry) => e.peer === peer;
    return newestFirst(this.keyed.list(wallet).filter(mine), this.keyless.list(wallet).filter(mine), this.perWallet);
  }
}

/** Two lists that are each newest first, merged, at most `max`. */
function newestFirst(a: RefusalEntry[], b: RefusalEntry[], max: number): RefusalEntry[] {
  if (b.length === 0) return a.slice(0, max);
  if (a.length === 0) return b.slice(0, max);
  return [...a, ...b].sort((x, y) => y.at - x.at).slice(0, max);
}
