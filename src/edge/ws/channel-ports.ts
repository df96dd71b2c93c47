/**
 * What the WebSocket channels are given and what they promise, apart from how they do it: the readers of the
 * books and the catalog they check ids against, the topic names the feed owns, the services they ask
 * (keys, funders, the rate limiter, metrics, the sandbox's faults, the refusals' explanations), and the close
 * codes and reasons a client and the closes counter see. node/ builds ChannelDeps and the tests build their
 * own; channels.ts implements the protocol over them. Separate so that the wiring reads the contract without
 * the protocol, and the protocol is read without the wiring.
 *
 * Types, constants and the wording of the one error frame both channels send. Imports of edge/ only what the deps are typed by (auth/, limits/, pipeline/
 * metrics, refusals/reason.ts, socket-faults.ts, bounds.ts); never routes/.
 */
import type { Clock, Timers } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/log.ts';
import type { KeyVerifier } from '../auth/api-keys.ts';
import type { Funders } from '../auth/funders.ts';
import type { StreamMetrics } from '../pipeline/metrics.ts';
import type { RateLimiter } from '../limits/rate-limit.ts';
import type { Refusal } from '../refusals/reason.ts';
import type { StreamFaultSource } from './socket-faults.ts';
import type { StreamLimits } from './bounds.ts';

/** What the channels read of the books: whether a token exists, and the `book` event of its committed state. */
export interface BookReader {
  /**
   * The books' own string for a token id, undefined when no book has it. A socket's subscriptions keep that
   * one string rather than the copy each message parsed: 400,000 subscriptions of 66-78 character ids
   * would otherwise hold 35 MB of copies.
   */
  token(tokenId: string): string | undefined;
  /** The same string for every reader of one book version (built once per version, not per call). */
  bookEvent(tokenId: string): string | undefined;
}

/** The markets of the catalog (the user channel subscribes to no other). */
export interface MarketReader {
  /** The catalog's own string for a (lower-case) condition id, undefined for a market it does not have (see BookReader.token). */
  conditionId(conditionId: string): string | undefined;
}

/** Topic names (projections/stream-frames.ts owns them; the edge receives them so it need not import projections). */
export interface Topics {
  market(tokenId: string): string;
  custom(tokenId: string): string;
  lifecycle: string;
  user(wallet: string, conditionId?: string): string;
}

export interface ChannelDeps {
  limits: StreamLimits;
  books: BookReader;
  markets: MarketReader;
  topics: Topics;
  /** The API-key service's hot-path look-up (edge/auth/auth.ts ApiKeyService.verifier). */
  keys: { verifier(apiKey: string): KeyVerifier | undefined };
  /** The wallets a key's address signs for (its own, its proxy wallet, its Safe). */
  funders: Pick<Funders, 'walletsOf'>;
  limiter: RateLimiter;
  trustedProxies: readonly string[];
  clock: Clock;
  metrics: StreamMetrics;
  log: Logger;
  /** The sandbox's stream faults (none without), and the timers they run on. */
  faults?: { source: StreamFaultSource; timers: Timers };
  /**
   * Why refused credentials were refused (refusals/auth.ts userChannel, counted and logged by app.ts), sent as
   * an error frame before the 4001 close; absent (auth.explainRefusals false): the platform's bare close.
   * Called only for credentials that did not check.
   */
  refusals?: { userAuth(auth: { apiKey: string; secret: string; passphrase: string }): Refusal | undefined };
}

export const CloseCode = {
  /** Credentials that do not check, or a first user message that is not a subscription. */
  UNAUTHORIZED: 4001,
  IDLE: 4002,
  SLOW: 4003,
  /** Kept sending past its message rate (bounds.ts, in its header). */
  RATE_LIMITED: 4008,
  SHUTDOWN: 1001,
  /** A sandbox revert (edge/sandbox/revert.ts): the service restarts on the snapshot's state, as the platform's restart would end the socket. */
  RESTART: 1012,
  /** The drop fault's close frame when it is not abrupt. */
  GOING_AWAY: 1001,
} as const;

/** Why a socket closed: the label of the closes counter, a closed set. */
export type CloseReason = 'client' | 'idle' | 'slow_consumer' | 'unauthorized' | 'message_too_large' | 'rate_limited' | 'shutdown' | 'abnormal' | 'fault_drop';

/** Ids an "unknown ... ignored" frame names; the rest are counted ("and N more"). */
export const MAX_NAMED = 10;

/** "unknown assets ignored: 1,2 (and 12 more)": the frame both channels send for ids nobody knows. */
export function ignored(what: 'assets' | 'markets', ids: readonly string[]): string {
  const named = ids.slice(0, MAX_NAMED).join(',');
  return `unknown ${what} ignored: ${named}${ids.length > MAX_NAMED ? ` (and ${ids.length - MAX_NAMED} more)` : ''}`;
}
