/**
 * Why credentials were refused (refusals/reason.ts): the X-Refusal-Reason text of a 401 from an l2 route
 * (`Unauthorized/Invalid api key`) or an l1 route (`Invalid L1 Request headers`), and the error frame the
 * user channel sends before it closes with 4001. The decision is edge/auth/auth.ts's and is already made when
 * anything here runs: this module replays the authenticator's checks, in the authenticator's order, on the
 * refused request, and names the first one that fails. It is called on the refusal path only, so an
 * accepted request never pays for it, and it changes no answer.
 *
 * L2 and builder headers (`l2`), in the order of auth.ts `l2Key` / `builderKey`, then the pipeline's kind
 * check, then the HMAC:
 *   1. every header present (L2: POLY_ADDRESS, POLY_API_KEY, POLY_PASSPHRASE, POLY_TIMESTAMP,
 *      POLY_SIGNATURE; builder: the POLY_BUILDER_* four), named in the platform's spelling, with near
 *      misses that arrived but are not read;
 *   2. the signature has the form of a digest (64 hex, or 43/44 base64 in either alphabet);
 *   3. the timestamp is decimal unix seconds (13 digits: milliseconds, said), within
 *      `auth.maxClockSkewSeconds` of this server (behind or ahead by how much, and the server's time);
 *   4. the key: unknown here (keys of the platform or another server do not work here), not yet committed,
 *      revoked (since when), a builder key on the L2 headers or another kind on the builder headers;
 *   5. a key kind the route takes (a read-only key where a trading key is needed): like 4, it depends on
 *      the key id alone, so it is said before anything that would confirm an address or a passphrase;
 *   6. the address (L2: 42 characters, the key's wallet), the passphrase (the key's, or another key's of
 *      the same wallet) and the HMAC, judged together: to a caller whose signature proves it holds the
 *      key's secret (it verifies over what arrived, or a mistake of step 7 reproduces it) the reason names
 *      which is wrong, the key's wallet included; to any other the three read the same (class
 *      auth_credentials, what the server signs over, never the wallet), and `Refusal.owner` carries the
 *      precise reason to the key's wallet's log (docs/decisions/authentication.md, "What a reason may tell a caller
 *      without the secret");
 *   7. the HMAC, once the key's own checks pass: the common mistakes (hmac-mistakes.ts) are TRIED with the key's real
 *      secret, one HMAC each, and the first that reproduces the signature is named: another path of the
 *      method (routes nearest the request's first), the query string or the full URL signed, a trailing
 *      slash, another method or its lower case, the body re-serialized (JSON.stringify, Python's
 *      json.dumps, py-clob-client's str(dict) with ' made ", sorted keys, the platform client's key order,
 *      indented by 2 or 4 spaces or tabs), left out, or an object appended as text, the timestamp in
 *      milliseconds or a second off, the secret's text bytes, hex or a base64 decoding that dropped '-' and
 *      '_' as the key, the passphrase or API key as the key, another key of the same wallet; single
 *      mistakes first, then the body's top-level keys in every other order (up to 5 keys: 119), then pairs
 *      as far as the bounds go.
 *      When none matches, the reason says what this server signed over and how it decodes the secret, and
 *      a JSON body that is pretty-printed, or whose keys are not in the order the platform's client writes
 *      them, is named as such first: its signer signed other bytes than it sent, which no secret fixes.
 * A route taking both families (DELETE /auth/builder-api-key) explains both when both arrived, L2 first.
 * Refused before the body arrived (body undefined with a Content-Length), the HMAC was not checked: only a
 * header check can have failed, and that is what is said.
 *
 * L1 (`l1`): the headers present, the address well formed, the signature 0x + 130 hex, the timestamp as
 * above, the nonce a canonical uint256; then the signature is recovered on the signature pool under the
 * configured ClobAuth domain and under each of the platform's (known-domains.ts KNOWN_AUTH_DOMAINS), and
 * the reason names the domain under which it recovers to the address (the SDK that signs for the
 * platform's mainnet whatever it is pointed at), or what it recovers to and what to sign. A pool that cannot
 * answer (closing) leaves the reason at what to sign; the promise never rejects.
 *
 * User channel (`userChannel`): the key (unknown, pending, revoked, a builder key), the secret (does not
 * decode, sent as hex, another key's, swapped with the passphrase, or simply not this key's), the
 * passphrase.
 *
 * What a reason never holds: a secret, a passphrase, an HMAC or expected signature in any encoding or any
 * part of one, the bytes a wrong secret decoded to, nor which wallet owns a key, or whether an address or a
 * passphrase is right, for a caller that has not proved the key's secret (step 6). It names public things: header names,
 * addresses the caller sent or a signature recovers to, paths, methods, clocks, byte counts, domains, the
 * API key id the caller sent (when it has the form of one) and other key ids of a wallet whose credentials
 * the caller has just shown it holds. Values of credential headers are never echoed, in case a secret
 * was put in the wrong one. Every comparison with key material is constant-time, as in auth.ts: the
 * diagnosis runs on the request's path, so an early-exit compare would time-leak what it compares.
 *
 * Cost. Header diagnoses: a few Map look-ups and at most three HMACs to derive the key's material (a
 * passphrase mismatch also derives the wallet's other keys', at most MAX_OTHER_KEYS). The HMAC diagnosis:
 * at most MAX_HMAC_TRIES (300) HMACs and MAX_HMAC_BYTES (256 KiB) hashed, on the main thread (a few µs per
 * HMAC over a small body: about a millisecond at worst), and none for a body over MAX_DIAGNOSED_BODY
 * (64 KiB): the reason says so; reachable only by a caller naming a usable key of the route's kind with a
 * fresh timestamp; L1: at most 1 + KNOWN_AUTH_DOMAINS recoveries on the pool. Both are priced by their work
 * (budget.ts: bytes hashed, RECOVERY_COST a recovery) for the client's network, the wallet named and the
 * service, taken at their most before and given back after: past a share the reason says what failed and
 * that the variants were not tried.
 *
 * This module cannot import edge/auth/auth.ts (which builds it: no import cycles), so what it must agree with
 * arrives as `rules` (auth.ts AUTH_RULES, the very functions and names the authenticator checks with) and
 * `keys` (ApiKeyService, which implements ExplainedKeys).
 */
import { timingSafeEqual } from 'node:crypto';
import { parseAddress } from '../../domain/ids.ts';
import { nowSeconds, type Clock } from '../../runtime/clock.ts';
import type { Config } from '../../runtime/config.ts';
import type { AuthDomain } from '../auth/eip712.ts';
import type { KeyKind } from '../pipeline/route.ts';
import type { SigPool } from '../auth/sig-pool.ts';
import { KNOWN_AUTH_DOMAINS, profileAdvice } from './known-domains.ts';
import { DiagnosisBudget, RECOVERY_COST } from './budget.ts';
import { MAX_DIAGNOSED_BODY, bytesOf, jsonBodyForm, keyOrders, signingMistakes, type Signing } from './hmac-mistakes.ts';
import { shown, type Refusal, type RefusalClass } from './reason.ts';

type Headers = Readonly<Record<string, string>>;

/** Most HMACs one refused request's signature diagnosis computes. */
export const MAX_HMAC_TRIES = 300;
/** Most bytes those HMACs hash in all (a large body leaves room for fewer tries). */
export const MAX_HMAC_BYTES = 256 * 1024;
/** Other keys of the wallet tried as the HMAC key or compared as the passphrase. */
export const MAX_OTHER_KEYS = 20;

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

// ---- wording ---------------------------------------------------------------------------------------

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The platform's spelling of a field (`poly_api_key` -> POLY_API_KEY): the second name auth.ts reads. */
const platformName = (names: readonly string[]): string => names[1]!.toUpperCase();
/** Its hyphenated alias (POLY-API-KEY). */
const hyphenName = (names: readonly string[]): string => names[3]!.toUpperCase();


const KIND_WORD: Record<KeyKind, string> = { trading: 'a trading key', readonly: 'a read-only key', builder: 'a builder key' };
const CREATE_ROUTE: Record<KeyKind, string> = {
  trading: 'POST /auth/api-key (L1 headers)',
  readonly: 'POST /auth/readonly-api-key',
  builder: 'POST /auth/builder-api-key',
};
const kindOf = (r: ExplainedRecord): KeyKind => r.kind ?? 'trading';
const takes = (kinds: readonly KeyKind[]): string => kinds.map((k) => KIND_WORD[k]).join(' or ');

/** The caller's API key header, named without echoing anything that is not an id. */
function keyName(apiKey: string, header: string): string {
  return UUID.test(apiKey) ? `API key ${apiKey.toLowerCase()}` : `the ${header} value (${apiKey.length} characters, not an API key id: a UUID)`;
}

const isoOf = (seconds: number): string => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

const sameBytes = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

/** The secp256k1 group order halved: a signature with a larger s is the malleated twin of a low-s one (eip712.ts). */
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

// ---- the explainer ---------------------------------------------------------------------------------

type Family = 'L2' | 'builder';

/** The outcome of replaying one family's header checks: a refusal, or the key whose HMAC is to be explained. */
/** The key's own checks passed; `mismatch` is the refusal of the address or passphrase, when one fails (said only once the secret is proved). */
interface KeyVerdict {
  key: KeyMaterial;
  apiKey: string;
  timestamp: string;
  signature: string;
  mismatch: Refusal | undefined;
}
type HeadVerdict = { refusal: Refusal } | KeyVerdict;

/**
 * What trying a request's HMAC showed: it verifies over what arrived, or `found` names the mistake that
 * reproduces it, or `why` says what was tried; `form`, how a JSON body sent differs from the client's form.
 */
interface HmacFinding {
  verified: boolean;
  found?: string;
  why: string;
  form?: string;
}

export function createAuthExplainer(deps: AuthExplainerDeps): AuthExplainer {
  const { keys, rules, pool, clock } = deps;
  const skew = deps.auth.maxClockSkewSeconds;
  const ownDomain = rules.authDomainOf(deps.auth);
  const budget = deps.budget ?? new DiagnosisBudget();
  const refusal = (cls: RefusalClass, text: string): Refusal => ({ class: cls, text });

  /** Accepted spellings of every credential header of both families, for the near-miss scan. */
  const known = new Set<string>([...Object.values(rules.l2).flat(), ...Object.values(rules.builder).flat()]);

  /** Headers that arrived, look like the missing fields, and are not read (`x-poly-api-key`, `poly_apikey`). */
  function nearMisses(req: Pick<RefusedRequest, 'headers' | 'otherHeaders'>, fields: ReadonlyArray<readonly string[]>): string[] {
    const tokens = fields.map((names) => names[0]!.slice(4).replace(/[^a-z]/g, ''));
    const out: string[] = [];
    for (const name of [...Object.keys(req.headers), ...(req.otherHeaders ?? [])]) {
      // No spelling of a credential header is longer; a request may carry many made-up long names.
      if (name.length > 40 || known.has(name)) continue;
      const flat = name.replace(/[^a-z]/g, '');
      if (tokens.some((t) => flat.endsWith(t))) out.push(name);
      if (out.length === 3) break;
    }
    return out;
  }

  /** The timestamp's problem, if any (the same test as auth.ts `fresh`). */
  function timestampProblem(label: string, names: readonly string[], ts: string): Refusal | undefined {
    const now = nowSeconds(clock);
    const name = platformName(names);
    if (!rules.timestampForm(ts)) {
      if (/^\d{13}$/.test(ts)) return refusal('auth_timestamp', `${label} timestamp ${ts} has 13 digits: it is in milliseconds; send unix seconds (server time ${now})`);
      if (/^\d+\.\d+$/.test(ts)) return refusal('auth_timestamp', `${label} timestamp ${shown(ts)} has a fraction: send whole unix seconds (server time ${now})`);
      if (/^\d+$/.test(ts)) return refusal('auth_timestamp', `${label} timestamp ${shown(ts)} has ${ts.length} digits: send unix seconds (server time ${now})`);
      return refusal('auth_timestamp', `${name} ${shown(ts)} is not a decimal number of unix seconds (server time ${now})`);
    }
    const behind = now - Number(ts);
    if (Math.abs(behind) <= skew) return undefined;
    if (deps.wallClock !== undefined && Math.abs(nowSeconds(deps.wallClock) - Number(ts)) <= skew) return undefined;
    const how = behind > 0 ? `${behind} s behind` : `${-behind} s ahead of`;
    return refusal('auth_timestamp', `${label} timestamp ${Number(ts)} is ${how} this server (allowed ${skew} s; server time ${now}, GET /time)`);
  }

  /** Another key of the wallet whose passphrase this is (constant-time compares), else undefined. */
  function passphraseOwner(address: string, self: string, given: Buffer): ExplainedRecord | undefined {
    for (const r of otherKeys(address, self)) {
      const m = keys.forDiagnosis(r.apiKey);
      if (m !== undefined && sameBytes(given, m.passphrase)) return r;
    }
    return undefined;
  }

  /** The wallet's other committed keys, every kind, at most MAX_OTHER_KEYS (newest first: the likeliest mix-up). */
  function otherKeys(address: string, self: string): ExplainedRecord[] {
    const all = (['trading', 'readonly', 'builder'] as const).flatMap((k) => keys.records(address, k)).filter((r) => r.apiKey !== self);
    return all.sort((a, b) => b.createdAt - a.createdAt).slice(0, MAX_OTHER_KEYS);
  }

  /** Why a key that exists cannot sign (pending, revoked), else undefined. */
  function keyStateProblem(m: KeyMaterial, name: string): Refusal | undefined {
    if (m.pending) return refusal('auth_key', `${name} is still being created (its write has not committed): retry once its creation has answered`);
    const r = m.record;
    if (r.revoked) {
      const since = r.revokedAt === undefined ? '' : ` since ${isoOf(r.revokedAt)} (unix ${r.revokedAt})`;
      return refusal('auth_key', `${name} is revoked${since}: create another with ${CREATE_ROUTE[kindOf(r)]}`);
    }
    return undefined;
  }

  /** The address (L2) or passphrase that does not check against the key, as its wallet may read it; undefined when both do. */
  function mismatchOf(family: Family, h: Headers, m: KeyMaterial, name: string): Refusal | undefined {
    const names = family === 'L2' ? rules.l2 : rules.builder;
    if (family === 'L2') {
      const address = rules.header(h, rules.l2.address)!;
      const addrName = platformName(rules.l2.address);
      if (address.length !== 42) return refusal('auth_address', `${addrName} is ${address.length} characters, expected 42 (0x + 40 hex)`);
      if (address.toLowerCase() !== m.record.address) {
        return refusal('auth_address', `the address header ${addrName} ${shown(address)} is not this key's wallet (${m.record.address}): send the address that created the key with L1 (the signer, not a funder or proxy wallet)`);
      }
    }
    const passphrase = rules.header(h, names.passphrase)!;
    const given = Buffer.from(passphrase);
    if (sameBytes(given, m.passphrase)) return undefined;
    const passName = platformName(names.passphrase);
    const other = passphraseOwner(m.record.address, m.record.apiKey, given);
    return refusal(
      'auth_passphrase',
      other !== undefined
        ? `${passName} is the passphrase of API key ${other.apiKey} (${KIND_WORD[kindOf(other)]} of the same wallet), not of ${name}: send one key's id, passphrase and secret together`
        : `${passName} is not the passphrase of ${name} (${passphrase.length} characters arrived; this server's passphrases are 64 hex characters, as issued with the key)`,
    );
  }

  /** auth.ts l2Key / builderKey replayed: the first check that fails, else what the HMAC diagnosis needs. */
  function head(family: Family, req: Pick<RefusedRequest, 'headers' | 'otherHeaders'>, kinds: readonly KeyKind[]): HeadVerdict {
    const h = req.headers;
    const names = family === 'L2' ? rules.l2 : rules.builder;
    const fields: Array<[string, readonly string[]]> =
      family === 'L2'
        ? [['address', rules.l2.address], ['apiKey', names.apiKey], ['passphrase', names.passphrase], ['timestamp', names.timestamp], ['signature', names.signature]]
        : [['apiKey', names.apiKey], ['passphrase', names.passphrase], ['timestamp', names.timestamp], ['signature', names.signature]];
    const missing = fields.filter(([, n]) => rules.header(h, n) === undefined).map(([, n]) => n);
    if (missing.length > 0) {
      const list = missing.map(platformName).join(', ');
      const all = missing.length === fields.length;
      let text = `missing ${family} header${missing.length > 1 ? 's' : ''} ${list}${all ? ` (none of the ${fields.length} arrived)` : ''}`;
      text += `; the SVC_ spellings are read too, and underscored names also hyphenated (${hyphenName(missing[0]!)})`;
      const misses = nearMisses(req, missing);
      if (misses.length > 0) text += `; arrived but not read: ${misses.join(', ')}`;
      else if (all) text += '; a proxy such as nginx drops underscored header names unless underscores_in_headers is on';
      return { refusal: refusal('auth_header', text) };
    }
    const apiKey = rules.header(h, names.apiKey)!;
    const timestamp = rules.header(h, names.timestamp)!;
    const signature = rules.header(h, names.signature)!;
    const sigName = platformName(names.signature);

    if (!rules.digestForm(signature)) {
      let why: string;
      if (/^0x[0-9a-fA-F]{130}$/.test(signature)) why = 'it is an EIP-712 signature (0x + 130 hex), which L1 routes take; this route takes the HMAC-SHA256 of the request';
      else if (/^0x[0-9a-fA-F]{64}$/.test(signature)) why = 'it is 0x + 64 hex: send the digest without the 0x prefix';
      else why = `expected the HMAC-SHA256 digest as 64 hex characters or 44 characters of base64 (url-safe or standard; 43 without padding), got ${signature.length} characters`;
      return { refusal: refusal('auth_header', `${sigName} is not a digest: ${why}`) };
    }
    const late = timestampProblem(family, names.timestamp, timestamp);
    if (late !== undefined) return { refusal: late };

    const keyHeader = platformName(names.apiKey);
    const name = keyName(apiKey, keyHeader);
    const m = keys.forDiagnosis(apiKey);
    if (m === undefined) {
      return {
        refusal: refusal(
          'auth_key',
          `${name} is not known to this server: API keys issued by the platform or by another server do not work here; create one with ${CREATE_ROUTE[family === 'L2' ? 'trading' : 'builder']}`,
        ),
      };
    }
    const state = keyStateProblem(m, name);
    if (state !== undefined) return { refusal: state };
    const kind = kindOf(m.record);
    if (family === 'L2' && kind === 'builder') {
      return { refusal: refusal('auth_key', `${name} is a builder key: builder keys sign the POLY_BUILDER_* headers, not the L2 ones; this route takes ${takes(kinds)}`) };
    }
    if (family === 'builder' && kind !== 'builder') {
      return { refusal: refusal('auth_key', `${name} is ${KIND_WORD[kind]}: the POLY_BUILDER_* headers take a builder key (${CREATE_ROUTE.builder}); ${KIND_WORD[kind]} signs the L2 headers`) };
    }
    if (!kinds.includes(kind)) {
      return { refusal: refusal('auth_key', `${name} is ${KIND_WORD[kind]}: this route takes ${takes(kinds)}${kinds.includes('trading') ? `, created with ${CREATE_ROUTE.trading}` : ''}`) };
    }
    // The address and the passphrase are judged with the HMAC (`credentials`): which of the three fails is
    // said only to a caller whose signature proves it holds the secret.
    return { key: m, apiKey, timestamp, signature, mismatch: mismatchOf(family, h, m, name) };
  }

  /**
   * What the HMAC of a request whose key passed its own checks shows: whether it verifies with the key's
   * secret over what arrived, or which common mistake reproduces it (either proves the caller holds the
   * secret), else why nothing was found. Priced by the bytes it hashes, for the caller's network and the
   * key's wallet (budget.ts); a body over MAX_DIAGNOSED_BODY is not hashed again at all.
   */
  function hmacFinding(req: RefusedRequest, v: KeyVerdict, ip: string | undefined): HmacFinding {
    const given = rules.decodeSignature(v.signature)!;
    const body = req.body ?? Buffer.alloc(0);
    if (body.length > MAX_DIAGNOSED_BODY) {
      return { verified: false, why: `the body is ${body.length} bytes, and the common mistakes are tried only on bodies of at most ${MAX_DIAGNOSED_BODY / 1024} KiB` };
    }
    const base: Signing = { key: v.key.hmacKey, ts: v.timestamp, method: req.method, path: req.path, body };
    const by = { ip, wallet: v.key.record.address };
    // Room for variants longer than what arrived (full URLs, Python's spacing); what is not used goes back.
    const reserved = Math.min(MAX_HMAC_BYTES, MAX_HMAC_TRIES * (2 * bytesOf(base) + 128));
    if (!budget.take(by, reserved)) return { verified: false, why: 'the common mistakes were not tried (diagnosis is busy)' };
    const matches = (s: Signing): boolean => sameBytes(rules.l2Digest(s.key, s.ts, s.method, s.path, s.body), given);
    let tries = 0;
    let bytes = 0;
    let cut = false;
    const attempt = (s: Signing): boolean => {
      const cost = bytesOf(s);
      if (tries >= MAX_HMAC_TRIES || bytes + cost > reserved) {
        cut = true;
        return false;
      }
      tries++;
      bytes += cost;
      return matches(s);
    };
    const done = (r: HmacFinding) => {
      budget.refund(by, reserved - bytes);
      return r;
    };
    if (attempt(base)) return done({ verified: true, why: '' });
    const m = v.key;
    const others = otherKeys(m.record.address, m.record.apiKey).flatMap((r) => {
      const other = keys.forDiagnosis(r.apiKey);
      if (other === undefined) return [];
      const state = r.revoked ? ', revoked' : '';
      return [{ hmacKey: other.hmacKey, what: `it was keyed with the secret of API key ${r.apiKey} (${KIND_WORD[kindOf(r)]} of the same wallet${state}): send that key's id and passphrase with it, or sign with this key's secret` }];
    });
    const context = { method: req.method, path: req.path, query: req.query, host: req.headers['host'], secret: m.secret, passphrase: m.passphrase, apiKey: v.apiKey, hmacKey: m.hmacKey, routePaths: deps.paths(req.method), otherKeys: others };
    const dims = signingMistakes(context, base);
    for (const dim of dims) {
      for (const a of dim) {
        if (attempt(a.apply(base))) return done({ verified: false, found: a.what, why: '' });
        if (cut) break;
      }
    }
    // A body re-serialized with its keys in another order is a likelier mistake than any two at once.
    for (const a of keyOrders(body)) {
      if (cut) break;
      if (attempt(a.apply(base))) return done({ verified: false, found: a.what, why: '' });
    }
    for (let i = 0; i < dims.length && !cut; i++) {
      for (let j = i + 1; j < dims.length && !cut; j++) {
        for (const a of dims[i]!) {
          for (const b of dims[j]!) {
            if (attempt(b.apply(a.apply(base)))) return done({ verified: false, found: `${a.what}; and ${b.what}`, why: '' });
            if (cut) break;
          }
          if (cut) break;
        }
      }
    }
    const form = jsonBodyForm(body);
    return done({
      verified: false,
      why: `none of ${tries - 1} common mistakes reproduces it with the key's secret (other paths, the query string, method, the body re-serialized, reordered, indented or left out, milliseconds, secret encodings, the wallet's other keys)`,
      ...(form !== undefined && { form }),
    });
  }

  /**
   * The address, passphrase and HMAC of a key that passed its own checks, judged together. To a caller whose
   * signature proves it holds the key's secret (it verifies over what arrived, or a common mistake reproduces
   * it), the reason names what is wrong; to any other, a wrong address, passphrase or HMAC read the same
   * (`auth_credentials`), and the key's wallet reads which on GET /refusals (`owner`).
   */
  function credentials(f: Family, req: RefusedRequest, v: KeyVerdict, ip: string | undefined): Refusal {
    const body = req.body;
    const name = keyName(v.apiKey, platformName((f === 'L2' ? rules.l2 : rules.builder).apiKey));
    const what = `${f} signature does not match`;
    const query = req.query === '' ? '' : ` (its query string is not signed)`;
    const length = body?.length ?? 0;
    const server = `this server signs HMAC-SHA256 over timestamp ${v.timestamp} + ${req.method} + ${req.path}${query} + ${length > 0 ? `the body as received (${length} bytes)` : 'no body'}, keyed with the secret's base64url decoding`;
    const fields = f === 'L2' ? 'address, passphrase and signature' : 'passphrase and signature';
    const unproven = (detail: string, owner: Refusal): Refusal => ({
      class: 'auth_credentials',
      // Said before the detail, which may be long enough for the header's bound to cut (reason.ts).
      text: `${f} credentials of ${name} do not check: its ${fields} are not all the key's (which one is wrong is said only to a request whose signature proves it holds the key's secret; the key's wallet reads it on GET /refusals), and ${detail}`,
      owner: { class: owner.class, text: owner.text },
    });
    const declared = Number(req.headers['content-length'] ?? '0');
    if (body === undefined && (declared > 0 || req.headers['transfer-encoding'] !== undefined)) {
      const detail = 'the request was refused before its body arrived, so its signature was not checked';
      return unproven(detail, v.mismatch ?? refusal('auth_hmac', `${f} headers check, and ${detail} (retry it)`));
    }
    const h = hmacFinding(req, v, ip);
    const m = v.mismatch;
    if (h.verified) return m ?? refusal('auth_hmac', `${f} headers and signature check now: the request was refused as it arrived (its timestamp or key may have changed state since)`);
    if (h.found !== undefined) return m === undefined ? refusal('auth_hmac', `${what}: ${h.found}`) : refusal(m.class, `${m.text}; and the ${what}: ${h.found}`);
    // A JSON body sent in another form than the client's (pretty-printed, reordered) is named first: it fails
    // whatever the secret, so the question about the secret comes last and conditional.
    const form = h.form === undefined ? '' : `${h.form}; `;
    const secret = `the secret API key ${v.apiKey.toLowerCase()}'s?`;
    const ask = h.form === undefined ? `: is ${secret}` : `; if the bytes signed were these, is ${secret}`;
    const detail = `the signature does not verify: ${form}${server}; ${h.why}`;
    return unproven(detail, m === undefined ? refusal('auth_hmac', `${what}: ${form}${server}; ${h.why}${ask}`) : refusal(m.class, `${m.text}; and the ${what}: ${form}${server}; ${h.why}`));
  }

  /** One family's diagnosis: its header checks, then its credentials once the body is in. */
  function family(f: Family, req: RefusedRequest, kinds: readonly KeyKind[], ip: string | undefined): Refusal {
    const v = head(f, req, kinds);
    if ('refusal' in v) return v.refusal;
    return credentials(f, req, v, ip);
  }

  /** `r` with more said after it, to its caller and to its wallet alike. */
  const and = (r: Refusal, more: string): Refusal => ({ class: r.class, text: r.text + more, ...(r.owner && { owner: { class: r.owner.class, text: r.owner.text + more } }) });

  return {
    l2(req, kinds, ip) {
      const h = req.headers;
      const l2Kinds = kinds.includes('trading') || kinds.includes('readonly');
      const builderKinds = kinds.includes('builder');
      const hasL2 = rules.header(h, rules.l2.apiKey) !== undefined;
      const hasBuilder = rules.header(h, rules.builder.apiKey) !== undefined;
      if (l2Kinds && builderKinds) {
        if (hasL2 && hasBuilder) {
          const a = family('L2', req, kinds, ip);
          const b = family('builder', req, kinds, ip);
          const owner = a.owner !== undefined || b.owner !== undefined ? { owner: { class: (a.owner ?? a).class, text: `${(a.owner ?? a).text}; builder headers: ${(b.owner ?? b).text}` } } : {};
          return { class: a.class, text: `${a.text}; builder headers: ${b.text}`, ...owner };
        }
        if (hasBuilder) return family('builder', req, kinds, ip);
        const a = family('L2', req, kinds, ip);
        return hasL2 ? a : and(a, "; or sign with a builder key's POLY_BUILDER_* headers");
      }
      if (builderKinds) {
        const b = family('builder', req, kinds, ip);
        return !hasBuilder && hasL2 ? and(b, '; this route takes builder keys only, and the L2 headers that arrived do not sign it') : b;
      }
      const a = family('L2', req, kinds, ip);
      return !hasL2 && hasBuilder ? and(a, `; the builder headers that arrived do not sign this route (it takes ${takes(kinds)})`) : a;
    },

    async l1(headers, ip, otherHeaders) {
      const n = rules.l2;
      const present = [n.address, n.signature, n.timestamp].map((names) => rules.header(headers, names));
      const missing = [n.address, n.signature, n.timestamp].filter((_, i) => present[i] === undefined);
      if (missing.length > 0) {
        let text = `missing L1 header${missing.length > 1 ? 's' : ''} ${missing.map(platformName).join(', ')} (POLY_NONCE is optional, default 0); the SVC_ spellings are read too, and underscored names also hyphenated (${hyphenName(missing[0]!)})`;
        const misses = nearMisses({ headers, otherHeaders }, missing);
        if (misses.length > 0) text += `; arrived but not read: ${misses.join(', ')}`;
        return refusal('auth_header', text);
      }
      const [addressText, signature, timestamp] = present as [string, string, string];
      const address = parseAddress(addressText);
      if (address === undefined) return refusal('auth_header', `POLY_ADDRESS ${shown(addressText)} is not an address: expected 0x + 40 hex (42 characters), got ${addressText.length} characters`);
      if (!rules.l1SignatureForm(signature)) {
        let why: string;
        if (/^[0-9a-fA-F]{130}$/.test(signature)) why = 'it lacks the 0x prefix';
        else if (rules.digestForm(signature)) why = 'it has the form of an L2 HMAC; L1 routes take the EIP-712 ClobAuth signature';
        else why = `got ${signature.length} characters`;
        return refusal('auth_header', `POLY_SIGNATURE is not an EIP-712 signature (0x + 130 hex, r s v): ${why}`);
      }
      const late = timestampProblem('L1', n.timestamp, timestamp);
      if (late !== undefined) return late;
      const nonceText = rules.header(headers, n.nonce);
      const nonce = nonceText === undefined || nonceText === '' ? '0' : rules.canonicalNonce(nonceText);
      if (nonce === undefined) return refusal('auth_header', `POLY_NONCE ${shown(nonceText!)} is not a uint256 in decimal`);

      const fields = { address, timestamp, nonce, signature };
      const chain = `this exchange's ClobAuth domain (chain ${ownDomain.chainId})`;
      const sign = `sign ClobAuth {address ${address}, timestamp "${timestamp}", nonce ${nonce}} for {name "${ownDomain.name}", version "${ownDomain.version}", chainId ${ownDomain.chainId}} (GET /exchange-info)`;
      const unexplained = (why: string) => refusal('auth_l1_signature', `L1 signature does not recover to POLY_ADDRESS ${address} under ${chain}: ${sign}; ${why}`);
      // Priced by its recoveries, for the caller's network and the address it names; what it did not use goes back.
      const by = { ip, wallet: address };
      const reserved = (1 + KNOWN_AUTH_DOMAINS.length) * RECOVERY_COST;
      if (!budget.take(by, reserved)) return unexplained("the platform's domains were not tried (diagnosis is busy)");
      let recoveries = 0;
      // The pool may be closing: the refusal stands, and the reason says what is known without recovering.
      const recover = (d: AuthDomain) => {
        recoveries++;
        return pool.recoverClobAuth(fields, d).catch(() => null);
      };
      try {
        const own = await recover(ownDomain);
        if (own === null) return unexplained('the signature pool could not be asked what it recovers to');
        if (own === address) return refusal('auth_l1_signature', `L1 signature recovers to POLY_ADDRESS under ${chain} now: the request was refused as it arrived (its timestamp may have left the window since)`);
        if (own === undefined) {
          const v = parseInt(signature.slice(130, 132), 16);
          const s = BigInt('0x' + signature.slice(66, 130));
          let why: string;
          if (![0, 1, 27, 28].includes(v)) why = `its last byte (v) is 0x${signature.slice(130, 132)}, expected 1b or 1c (27 or 28)`;
          else if (s > HALF_N) why = 'its s is in the upper half of the curve order: send the low-s form every standard signer emits';
          else why = 'r or s is out of range';
          return refusal('auth_l1_signature', `L1 signature does not recover to any address: ${why}`);
        }
        for (const k of KNOWN_AUTH_DOMAINS) {
          const d = k.domain;
          if (d.chainId === ownDomain.chainId && d.name === ownDomain.name && d.version === ownDomain.version) continue;
          if ((await recover(d)) === address) {
            return refusal('auth_l1_signature', `L1 signature recovers to ${own} under ${chain}; it recovers to the address under ${k.label}: sign ClobAuth for chain ${ownDomain.chainId} (GET /exchange-info)${profileAdvice(k.profile)}`);
          }
        }
        return refusal('auth_l1_signature', `L1 signature recovers to ${own} under ${chain}, not to POLY_ADDRESS ${address}, nor under the platform's domains: ${sign}`);
      } finally {
        budget.refund(by, reserved - recoveries * RECOVERY_COST);
      }
    },

    userChannel(auth) {
      const m = keys.forDiagnosis(auth.apiKey);
      const name = keyName(auth.apiKey, 'apiKey');
      if (m === undefined) return refusal('auth_key', `${name} is not known to this server: API keys issued by the platform or by another server do not work here; create one with ${CREATE_ROUTE.trading}`);
      const state = keyStateProblem(m, name);
      if (state !== undefined) return state;
      const kind = kindOf(m.record);
      if (kind === 'builder') return refusal('auth_key', `${name} is a builder key: it proves no wallet on the user channel; authenticate with a trading or read-only key`);
      const secret = rules.decodeSecret(auth.secret);
      const secretOk = secret !== undefined && sameBytes(secret, m.hmacKey);
      const passOk = sameBytes(Buffer.from(auth.passphrase), m.passphrase);
      if (!secretOk) {
        const swapped = sameBytes(Buffer.from(auth.secret), m.passphrase) && sameBytes(rules.decodeSecret(auth.passphrase) ?? Buffer.alloc(0), m.hmacKey);
        if (swapped) return refusal('auth_hmac', `the secret and passphrase of ${name} are swapped: "secret" takes the secret, "passphrase" the passphrase`);
        // Whether the passphrase is right is said only where the secret sent proves the caller holds one of
        // the wallet's (hex, another key's); otherwise only to the key's wallet, on GET /refusals.
        const nor = passOk ? '' : ' (nor is the passphrase)';
        const unproven = (text: string): Refusal => (nor === '' ? refusal('auth_hmac', text) : { class: 'auth_hmac', text, owner: { class: 'auth_hmac', text: text + nor } });
        if (secret === undefined) return unproven(`the secret does not decode as base64 (url-safe or standard, ${auth.secret.length} characters arrived): send it as issued with ${name}`);
        if (/^[0-9a-fA-F]+$/.test(auth.secret) && auth.secret.length % 2 === 0 && sameBytes(Buffer.from(auth.secret, 'hex'), m.hmacKey)) {
          return refusal('auth_hmac', `the secret was sent as hex: send it as issued (base64url)${nor}`);
        }
        for (const r of otherKeys(m.record.address, m.record.apiKey)) {
          const other = keys.forDiagnosis(r.apiKey);
          if (other !== undefined && sameBytes(secret, other.hmacKey)) {
            return refusal('auth_hmac', `the secret is API key ${r.apiKey}'s (${KIND_WORD[kindOf(r)]} of the same wallet), not ${name}'s: send one key's id, secret and passphrase together${nor}`);
          }
        }
        return unproven(`the secret is not ${name}'s (it decodes to ${secret.length} bytes, which are not this key's)`);
      }
      if (!passOk) {
        const other = passphraseOwner(m.record.address, m.record.apiKey, Buffer.from(auth.passphrase));
        if (other !== undefined) return refusal('auth_passphrase', `the passphrase is API key ${other.apiKey}'s (${KIND_WORD[kindOf(other)]} of the same wallet), not ${name}'s`);
        return refusal('auth_passphrase', `the passphrase is not ${name}'s (${auth.passphrase.length} characters arrived; passphrases are 64 hex characters, as issued with the key)`);
      }
      return refusal('auth_key', `the credentials of ${name} check now: the message was refused as it arrived (the key may have changed state since)`);
    },

    walletOf(headers) {
      for (const names of [rules.l2.apiKey, rules.builder.apiKey]) {
        const apiKey = rules.header(headers, names);
        const r = apiKey === undefined ? undefined : keys.record(apiKey);
        if (r !== undefined) return r.address;
      }
      const address = rules.header(headers, rules.l2.address);
      return address === undefined ? undefined : parseAddress(address);
    },
  };
}
