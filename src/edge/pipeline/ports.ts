/**
 * The pipeline's ports: what the stages (pipeline.ts) are handed and run without knowing who implements it.
 * auth/ implements the Authenticator, cluster/ the Gateway, refusals/ the diagnoses of RefusalDeps, and
 * edge/server.ts assembles PipelineDeps from what app.ts built. Separate from the stages so that an
 * implementer reads its contract without the order of checks, and the dependency runs one way: those rooms
 * import this file, the pipeline imports none of them. With the contract, how the stages ask it: a route's key
 * kinds, the L2 family first, then the builder headers (signedBy, headersCouldSign).
 */
import type { Clock } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/log.ts';
import type { Incoming } from '../http/http.ts';
import type { Outgoing } from '../http/answer.ts';
import type { Metrics } from './metrics.ts';
import type { RateLimiter } from '../limits/rate-limit.ts';
import type { BodyBudget } from '../limits/rate-limit-bytes.ts';
import type { HmacStrikes } from '../limits/hmac-strikes.ts';
import type { ReplayGuard } from './replays.ts';
import type { KeyKind } from './route.ts';
import type { RefusalLog } from '../refusals/log.ts';
import type { Refusal, RefusalClass } from '../refusals/reason.ts';

/** Verifies signed headers. Implemented by auth.ts; absent = every signed route answers 401. */
export interface Authenticator {
  /**
   * L2: API key + HMAC over `timestamp + METHOD + path + rawBody`. Undefined when anything fails.
   * `replayKey` names the signed content (key and digest), valid until `expiresAt` (unix seconds).
   */
  l2(method: string, path: string, headers: Readonly<Record<string, string>>, rawBody: Buffer | undefined): SignedCaller | undefined;
  /**
   * Builder headers (`*_BUILDER_API_KEY`, `*_BUILDER_PASSPHRASE`, `*_BUILDER_TIMESTAMP`,
   * `*_BUILDER_SIGNATURE`): a builder key + the same HMAC. Undefined when anything fails.
   */
  builder(method: string, path: string, headers: Readonly<Record<string, string>>, rawBody: Buffer | undefined): SignedCaller | undefined;
  /**
   * The part of `l2` the headers alone decide, everything but the HMAC: the kind of the key when it could pass
   * once the body is in, else undefined. `l2` never passes where this refused.
   */
  l2Head(headers: Readonly<Record<string, string>>): KeyKind | undefined;
  /** The same for `builder`: whether the builder headers could pass once the body is in. */
  builderHead(headers: Readonly<Record<string, string>>): boolean;
  /**
   * Whether the headers fail, if at all, only on the address or passphrase: a usable key of one of `kinds`,
   * a fresh timestamp, a signature of digest form. The HMAC of such a request can still prove that its caller
   * holds the key's secret (refusals/auth.ts says what is wrong only then). Absent: never.
   */
  provable?(headers: Readonly<Record<string, string>>, kinds: readonly KeyKind[]): boolean;
  /**
   * Whether the request carries the API key header of a family that signs for these kinds (the L2 one for
   * trading and read-only keys, the builder one for builder keys): an `authOptional` route's test.
   */
  presented(headers: Readonly<Record<string, string>>, kinds: readonly KeyKind[]): boolean;
  /**
   * Whether this node holds the key the API key header names (L2 or builder), in any state: a gateway whose
   * stream lags may not hold a key issued a moment ago, and leaves such a request to the sequencer.
   */
  knowsKey(headers: Readonly<Record<string, string>>): boolean;
  /** The API key header's value (L2 first, then builder), whatever it names; absent: keys are not charged their bytes nor benched. */
  apiKeyOf?(headers: Readonly<Record<string, string>>): string | undefined;
  /** L1: EIP-712 ClobAuth signature. Undefined when anything fails. */
  l1(headers: Readonly<Record<string, string>>): Promise<(SignedCaller & { nonce: string }) | undefined>;
}

/** ROLE=gateway: the sequencer's answer to a request this node does not decide (forward.ts builds it). */
export interface Gateway {
  forward(req: Incoming, ip: string, hints?: unknown): Promise<Outgoing>;
  /**
   * Resolves true once this node has applied the whole stream as it stood when asked (so a key it still does
   * not hold does not exist), false when it cannot tell within a bound (its stream lags or is away): then only
   * the sequencer can decide.
   */
  caughtUp(): Promise<boolean>;
}

export interface SignedCaller {
  address: string;
  apiKey?: string;
  /** l2 and builder: the kind of the key that signed. */
  keyKind?: KeyKind;
  /** Builder keys: their builder code. */
  builderCode?: string;
  replayKey: string;
  expiresAt: number;
}

export interface PipelineDeps {
  adminToken: string;
  limiter: RateLimiter;
  metrics: Metrics;
  log: Logger;
  clock: Clock;
  auth?: Authenticator;
  /** Remembers signed requests for their window so a replay changes nothing (replays.ts); absent: no protection. */
  replays?: ReplayGuard;
  /**
   * ROLE=replica: where the sequencer is, named when a write route is refused (under a lease, the holder's
   * URL as last read, else cluster.sequencerUrl).
   */
  replica?: { sequencerUrl: () => string };
  /**
   * A sequencer that lost its lease (failover.ts): why, while its writes answer 503 with Retry-After until it
   * has become a standby; undefined while it holds the lease (and on every other node).
   */
  deposed?: () => string | undefined;
  /** ROLE=gateway: what a replica would refuse goes to the sequencer instead (forward.ts). */
  gateway?: Gateway;
  /**
   * A replica or gateway whose store has a history floor (started from a state snapshot): where the routes
   * marked `history` go, the sequencer (forward.ts, on the reads subject of replication/commands.ts).
   */
  history?: Gateway;
  /** Such a node's history copied back in (replication/history-backfill.ts): from then on its history reads are answered here. */
  historyHeld?: () => boolean;
  /** The sequence the read state reflects (X-Journal-Seq on read routes, taken as the request begins). */
  journalSeq?: () => number;
  /**
   * The sequence an answered write is covered by (X-Journal-Seq on the answers of write routes, taken as the
   * answer leaves): a node whose reads report at least it holds the write (read-your-writes on a replica).
   */
  writeSeq?: () => number;
  /** `auth.explainRefusals`: refusals explain themselves (refusals/reason.ts); absent, they say nothing more than the platform. */
  refusals?: RefusalDeps;
  /** The body bytes a caller may make the edge read (rate-limit-bytes.ts), charged before the body; absent: not charged. */
  bodies?: BodyBudget;
  /** Keys that keep failing their HMAC, refused before their bodies (hmac-strikes.ts); absent: none is. */
  strikes?: HmacStrikes;
}

/** What the pipeline needs to explain a refusal and keep it for its wallet (app.ts builds it). */
export interface RefusalDeps {
  /** The auth diagnosis (refusals/auth.ts); absent without an Authenticator. */
  auth?: {
    /** `ip`: the client address, whose network pays for the diagnosis (refusals/budget.ts). */
    l2(req: Incoming, kinds: readonly KeyKind[], ip: string): Refusal;
    l1(headers: Readonly<Record<string, string>>, ip: string, otherHeaders?: readonly string[]): Promise<Refusal>;
    walletOf(headers: Readonly<Record<string, string>>): string | undefined;
  };
  /** The wallets' last refusals (GET /refusals). */
  log: Pick<RefusalLog, 'record'>;
  /** Counts one refusal by class (/metrics `refusals_total`). */
  count(cls: RefusalClass): void;
  /** `auth.reasonInBody`: the reason is also appended to the body's `error` text (refusals/reason.ts withReasonText). */
  inBody?: boolean;
}

/**
 * The signed caller of an l2 request when its credentials verify and are of a kind the route accepts: the L2
 * headers (trading and read-only keys) first, then the builder headers where the route takes builder keys.
 */
export function signedBy(keys: readonly KeyKind[], a: Authenticator | undefined, req: Incoming): SignedCaller | undefined {
  if (a === undefined) return undefined;
  const byKey = keys.includes('trading') || keys.includes('readonly') ? a.l2(req.method, req.path, req.headers, req.body) : undefined;
  const s = byKey ?? (keys.includes('builder') ? a.builder(req.method, req.path, req.headers, req.body) : undefined);
  return s !== undefined && s.keyKind !== undefined && keys.includes(s.keyKind) ? s : undefined;
}

/**
 * `sign`'s first half: whether the credential headers could authenticate the request on a route taking `keys`,
 * everything but the HMAC checked. Never false where signedBy passes (it tries the same families in the same
 * way), so refusing on it before the body changes no answer, only when it is given.
 */
export function headersCouldSign(keys: readonly KeyKind[], a: Authenticator | undefined, req: Incoming): boolean {
  if (a === undefined) return false;
  if (keys.includes('trading') || keys.includes('readonly')) {
    const kind = a.l2Head(req.headers);
    if (kind !== undefined && keys.includes(kind)) return true;
  }
  return keys.includes('builder') && a.builderHead(req.headers);
}
