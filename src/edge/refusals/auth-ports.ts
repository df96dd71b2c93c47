/**
 * What the auth diagnosis (refusals/auth.ts) is handed by the authentication it explains: the rules
 * (auth.ts AUTH_RULES: the very header names and functions the authenticator checks with), the keys
 * (ApiKeyService implements ExplainedKeys) and the explainer's own interface. The diagnosis cannot import
 * edge/auth/auth.ts, which builds it (no import cycles), so what it must agree with arrives through these:
 * auth/ implements them, refusals/ reads them, and neither reaches into the other.
 */
import type { Clock } from '../../runtime/clock.ts';
import type { Config } from '../../runtime/config.ts';
import type { AuthDomain } from '../auth/eip712.ts';
import type { KeyKind } from '../pipeline/route.ts';
import type { SigPool } from '../auth/sig-pool.ts';
import type { DiagnosisBudget } from './budget.ts';
import type { Refusal } from './reason.ts';

type Headers = Readonly<Record<string, string>>;

/** The header fields of each family, as auth.ts names them: lowercase spellings in the order they are read. */
export interface HeaderNames {
  readonly apiKey: readonly string[];
  readonly passphrase: readonly string[];
  readonly timestamp: readonly string[];
  readonly signature: readonly string[];
}

/**
 * The authenticator's rules the diagnosis replays, handed over by edge/auth/auth.ts (AUTH_RULES), which owns them
 * and checks with the same functions: the two cannot drift.
 */
export interface AuthRules {
  /** L2 headers (`svc_x`, `poly_x`, `svc-x`, `poly-x` per field). */
  readonly l2: HeaderNames & { readonly address: readonly string[]; readonly nonce: readonly string[] };
  readonly builder: HeaderNames;
  /** The first of `names` present. */
  header(h: Headers, names: readonly string[]): string | undefined;
  /** Whether an L2 signature header has the form of a digest. */
  digestForm(signature: string): boolean;
  /** The digest bytes of a signature of digest form. */
  decodeSignature(signature: string): Buffer | undefined;
  /** Whether a timestamp header has the accepted form (decimal, at most 12 digits). */
  timestampForm(timestamp: string): boolean;
  /** HMAC-SHA256 over `timestamp + method + path + body`. */
  l2Digest(key: Buffer, timestamp: string, method: string, path: string, body?: Buffer | string): Buffer;
  /** An API secret's key bytes, as the authenticator and the user channel decode it. */
  decodeSecret(secret: string): Buffer | undefined;
  /** A decimal uint256 in canonical form, or undefined. */
  canonicalNonce(nonce: string): string | undefined;
  /** Whether an L1 signature header has the accepted form (0x + 130 hex). */
  l1SignatureForm(signature: string): boolean;
  /** The configured ClobAuth domain. */
  authDomainOf(auth: Config['auth']): AuthDomain;
}

/** What the diagnosis reads of a key record (auth.ts ApiKeyRecord). */
export interface ExplainedRecord {
  readonly apiKey: string;
  readonly address: string;
  readonly createdAt: number;
  readonly revoked: boolean;
  readonly revokedAt?: number;
  readonly kind?: 'readonly' | 'builder';
}

/** A key's credentials in any state, for the diagnosis only (auth.ts ApiKeyService.forDiagnosis). */
export interface KeyMaterial {
  readonly record: ExplainedRecord;
  /** Its write has not committed: not usable yet. */
  readonly pending: boolean;
  /** The secret's decoded bytes: the HMAC key. */
  readonly hmacKey: Buffer;
  /** The passphrase's bytes as sent. */
  readonly passphrase: Buffer;
  /** The secret as issued (base64url), for the variant that keys with its text. */
  readonly secret: string;
}

/** What the diagnosis reads of the API-key service (auth.ts ApiKeyService implements it). */
export interface ExplainedKeys {
  /** The record of a key, whatever its state (pending included). */
  record(apiKey: string): ExplainedRecord | undefined;
  /** The committed records of one kind of a wallet, revoked ones included. */
  records(address: string, kind: KeyKind): readonly ExplainedRecord[];
  forDiagnosis(apiKey: string): KeyMaterial | undefined;
}

/** A refused request as the edge holds it (http.ts Incoming has these fields). */
export interface RefusedRequest {
  method: string;
  /** Without the query string. */
  path: string;
  /** The raw query string, without '?'. */
  query: string;
  headers: Headers;
  /** Names that arrived and were not copied into `headers` (http.ts `otherHeaders`). */
  otherHeaders?: readonly string[] | undefined;
  body: Buffer | undefined;
}

export interface AuthExplainer {
  /**
   * An l2 route refused the L2 or builder headers (before the body: body undefined; or after it): why.
   * `kinds` = the key kinds the route takes; `ip` = the client address, whose network's diagnosis budget pays.
   */
  l2(req: RefusedRequest, kinds: readonly KeyKind[], ip?: string): Refusal;
  /** L1 refused (PM_ERR_L1_HEADERS): why; tries the known ClobAuth domains on the signature pool. */
  l1(headers: Headers, ip?: string, otherHeaders?: readonly string[]): Promise<Refusal>;
  /** The user channel refused its auth message: why. */
  userChannel(auth: { apiKey: string; secret: string; passphrase: string }): Refusal;
  /**
   * The lowercase wallet a refused request's credentials name (for its owner's refusal log): the API key's
   * wallet when the key exists (any state, either header family), else the address header's if it is a
   * well-formed address, else undefined.
   */
  walletOf(headers: Headers): string | undefined;
}

export interface AuthExplainerDeps {
  keys: ExplainedKeys;
  rules: AuthRules;
  pool: Pick<SigPool, 'recoverClobAuth'>;
  auth: Config['auth'];
  clock: Clock;
  /** As AuthenticatorDeps.wallClock: a timestamp within the skew of either clock is fresh. */
  wallClock?: Clock;
  /** The service's route paths of a method (patterns with `:` are skipped), for "signed over another path". */
  paths: (method: string) => readonly string[];
  /** What the HMAC and L1 diagnoses may cost (budget.ts; default: buckets of this explainer's own at the default rates). */
  budget?: DiagnosisBudget;
}
