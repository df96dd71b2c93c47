/**
 * The last refusals of each wallet, for `GET /refusals`: where a client that hides response headers (most
 * SDKs raise on a 4xx and keep only the body) can read what `X-Refusal-Reason` said.
 *
 * A refusal belongs to the wallet its credentials name (refusals/auth.ts `walletOf`: the API key's wallet
 * when the key exists, else the address header's), or to the signed caller's for a refused order; a request
 * that names no wallet is answered with its reason but kept nowhere, since nobody could list it. Only wallets
 * that hold an API key are kept (a wallet without one cannot sign `GET /refusals`). Someone who knows a
 * wallet's address can add refusals to its list (their own mistakes, charged to their address's rate
 * limits); they can never read it, and an entry holds header names, never values.
 * In memory, per process: a restart forgets them, and each node of a cluster lists what it refused.
 *
 * Bounded in bytes, whatever a client sends. Everything an entry keeps came from the request (the method
 * token, the path, the header names; the reason may quote any of them), and a request head may be 16 KiB
 * of made-up header names: a log that kept them as sent grew by 15 KB per refusal, 4.5 GB and a heap
 * exhaustion from 3,000 free keys' wallets. So each field is cut to its bound and COPIED (a cut string in
 * V8 may be a slice that keeps the whole original alive; an object's keys are the very strings of the
 * request): MAX_METHOD_CHARS, MAX_PATH_CHARS, MAX_HEADER_NAMES names of at most MAX_HEADER_NAME_CHARS each,
 * MAX_REASON_CHARS, MAX_PEER_CHARS. An entry is accounted at two bytes a character plus fixed overheads (`entryBytes`),
 * at most about 6 KB (the header names held as one string, see KeptEntry); the log keeps at most `perWallet` entries a wallet, `maxWallets` wallets and
 * `maxBytes` (MAX_LOG_BYTES, 16 MiB) accounted in all, the least recently refused wallet leaving first
 * when a bound is passed. test/edge/refusals/log.test.ts floods it with the worst entries and measures the
 * heap; test/e2e/memory-bounds.test.ts does the same to a running service over HTTP and measures its RSS.
 */
import { MAX_REASON_CHARS, type RefusalClass } from './reason.ts';

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
export const MAX_HEADER_NAMES = 40;
/** A longer header name is cut (the longest the service reads is 23 characters). */
export const MAX_HEADER_NAME_CHARS = 48;
/** A longer method token is cut (uWS takes any token as a method). */
export const MAX_METHOD_CHARS = 16;
/** A longer path is cut. */
export const MAX_PATH_CHARS = 256;
/** A longer client address is cut (an IPv6 address with a zone is under 64 characters). */
export const MAX_PEER_CHARS = 64;
/** The accounted bytes the whole log holds at most (all wallets). */
export const MAX_LOG_BYTES = 16 * 1024 * 1024;

/** What V8 spends on a string besides its characters, and on an entry's object and array. */
const STRING_OVERHEAD = 32;
const ENTRY_OVERHEAD = 160;
const WALLET_OVERHEAD = 200;

/**
 * A copy of `s` of at most `max` characters (a cut one ends in '...') that keeps nothing else alive: the
 * bytes are re-decoded into a fresh string, never a slice of the original.
 */
export function ownCopy(s: string, max: number): string {
  return Buffer.from(cut(s, max), 'utf8').toString('utf8');
}

/** `s` cut to at most `max` characters, ending in '...' when cut (may still be a slice of `s`). */
const cut = (s: string, max: number): string => (s.length > max ? s.slice(0, max - 3) + '...' : s);

const charBytes = (s: string): number => STRING_OVERHEAD + 2 * s.length;

/**
 * An entry as the log holds it: the header names in one string (a newline cannot be in a header name), so a
 * refusal is six strings for the collector to trace, not forty-six. Under a refusal flood every new entry
 * evicts an old one from old space, and the collector's work is per object.
 */
interface KeptEntry {
  readonly at: number;
  readonly method: string;
  readonly path: string;
  readonly headers: string;
  readonly class: RefusalClass;
  readonly reason: string;
  readonly peer?: string;
}

function keptBytes(e: KeptEntry): number {
  let n = ENTRY_OVERHEAD + charBytes(e.method) + charBytes(e.path) + charBytes(e.reason);
  if (e.headers !== '') n += charBytes(e.headers);
  if (e.peer !== undefined) n += charBytes(e.peer);
  return n;
}

/** An entry's accounted size: two bytes a character (a string with one non-Latin-1 character is two-byte in V8) plus overheads. */
export function entryBytes(e: RefusalEntry): number {
  return keptBytes({ ...e, headers: e.headers.join('\n') });
}

/** The entry as kept: every field cut to its bound and copied (see the header). */
function bounded(e: RefusalEntry): KeptEntry {
  const names = e.headers.length > MAX_HEADER_NAMES ? e.headers.slice(0, MAX_HEADER_NAMES) : e.headers;
  return {
    at: e.at,
    method: ownCopy(e.method, MAX_METHOD_CHARS),
    path: ownCopy(e.path, MAX_PATH_CHARS),
    headers: ownCopy(names.map((h) => cut(h, MAX_HEADER_NAME_CHARS)).join('\n'), MAX_HEADER_NAMES * (MAX_HEADER_NAME_CHARS + 1)),
    class: e.class,
    reason: ownCopy(e.reason, MAX_REASON_CHARS),
    ...(e.peer !== undefined && { peer: ownCopy(e.peer, MAX_PEER_CHARS) }),
  };
}

const shownEntry = (e: KeptEntry): RefusalEntry => ({ ...e, headers: e.headers === '' ? [] : e.headers.split('\n') });

interface WalletLog {
  entries: KeptEntry[];
  /** Their accounted bytes, WALLET_OVERHEAD included. */
  bytes: number;
}

export class RefusalLog {
  /** Insertion order is recency: a wallet refused again moves to the end, the first one leaves first. */
  private readonly byWallet = new Map<string, WalletLog>();
  private held = 0;

  constructor(
    /** Whether a wallet may be kept (it holds an API key). */
    private readonly known: (wallet: string) => boolean,
    readonly perWallet = 100,
    readonly maxWallets = 10_000,
    readonly maxBytes = MAX_LOG_BYTES,
  ) {}

  record(wallet: string, e: RefusalEntry): void {
    let log = this.byWallet.get(wallet);
    if (log === undefined) {
      if (!this.known(wallet)) return;
      log = { entries: [], bytes: WALLET_OVERHEAD + charBytes(wallet) };
      this.held += log.bytes;
      if (this.byWallet.size >= this.maxWallets) this.dropOldest();
    } else {
      this.byWallet.delete(wallet);
    }
    this.byWallet.set(wallet, log);
    const kept = bounded(e);
    const size = keptBytes(kept);
    log.entries.push(kept);
    log.bytes += size;
    this.held += size;
    if (log.entries.length > this.perWallet) {
      const gone = keptBytes(log.entries.shift()!);
      log.bytes -= gone;
      this.held -= gone;
    }
    // The wallet just refused is the newest, so it leaves last (only when it alone is past the bound).
    while (this.held > this.maxBytes && this.byWallet.size > 1) this.dropOldest();
  }

  /** The wallet's refusals, newest first. */
  list(wallet: string): RefusalEntry[] {
    return (this.byWallet.get(wallet)?.entries ?? []).map(shownEntry).reverse();
  }

  get wallets(): number {
    return this.byWallet.size;
  }

  /** The accounted bytes held now (at most maxBytes, or one wallet's when a single one is past it). */
  get bytes(): number {
    return this.held;
  }

  private dropOldest(): void {
    const [wallet, log] = this.byWallet.entries().next().value!;
    this.byWallet.delete(wallet);
    this.held -= log.bytes;
  }
}
