/**
 * The last refusals of each wallet, for `GET /refusals`: where a client that hides response headers (most
 * SDKs raise on a 4xx and keep only the body) can read what `X-Refusal-Reason` said.
 *
 * A refusal belongs to the wallet its credentials name (refusals/auth.ts `walletOf`: the API key's wallet
 * when the key exists, else the address header's), or to the signed caller's for a refused order; a request
 * that names no wallet is answered with its reason but kept nowhere, since nobody could list it. Only wallets
 * that hold an API key are kept (a wallet without one cannot sign `GET /refusals`), so the log holds at most
 * `maxWallets` x `perWallet` entries whatever a client sends: the least recently refused wallet leaves
 * first. Someone who knows a wallet's address can add refusals to its list (their own mistakes, charged to
 * their address's rate limits); they can never read it, and an entry holds header names, never values.
 * In memory, per process: a restart forgets them, and each node of a cluster lists what it refused.
 */
import type { RefusalClass } from './reason.ts';

export interface RefusalEntry {
  /** Unix milliseconds. */
  readonly at: number;
  readonly method: string;
  readonly path: string;
  /** The request's header names (lowercase), never their values. */
  readonly headers: readonly string[];
  readonly class: RefusalClass;
  readonly reason: string;
  /** The client address the request came from: a request without a key reads only what its own address was refused (GET /refusals). */
  readonly peer?: string;
}

/** Most header names kept per entry (a request may carry many; the credential ones are what matter). */
const MAX_HEADER_NAMES = 40;

export class RefusalLog {
  /** Insertion order is recency: a wallet refused again moves to the end, the first one leaves first. */
  private readonly byWallet = new Map<string, RefusalEntry[]>();

  constructor(
    /** Whether a wallet may be kept (it holds an API key). */
    private readonly known: (wallet: string) => boolean,
    readonly perWallet = 100,
    readonly maxWallets = 10_000,
  ) {}

  record(wallet: string, e: Omit<RefusalEntry, 'headers'> & { headers: readonly string[] }): void {
    let list = this.byWallet.get(wallet);
    if (list === undefined) {
      if (!this.known(wallet)) return;
      list = [];
      if (this.byWallet.size >= this.maxWallets) this.byWallet.delete(this.byWallet.keys().next().value!);
    } else {
      this.byWallet.delete(wallet);
    }
    this.byWallet.set(wallet, list);
    list.push(e.headers.length > MAX_HEADER_NAMES ? { ...e, headers: e.headers.slice(0, MAX_HEADER_NAMES) } : e);
    if (list.length > this.perWallet) list.shift();
  }

  /** The wallet's refusals, newest first. */
  list(wallet: string): RefusalEntry[] {
    return (this.byWallet.get(wallet) ?? []).slice().reverse();
  }

  get wallets(): number {
    return this.byWallet.size;
  }
}
