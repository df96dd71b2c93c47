/**
 * Room edge/auth/: who a caller is and what a signature proves: the Authenticator (this file), the API-key
 * service (api-keys.ts) and the credentials keys derive from the master key (credentials.ts), EIP-712
 * digests (eip712.ts, keccak.ts), the signature pool and its workers (sig-pool.ts, sig-worker*.ts), the
 * wallets a signer trades for (funders.ts) and the order checks before the engine (order-check.ts). Its refusal diagnoses sit beside it in refusals/. Separate because it implements the
 * pipeline's interfaces (Authenticator, KeyKind) and serves routes/ and ws/: it imports pipeline/, refusals/
 * and schemas/, never routes/, ws/, sandbox/ or cluster/.
 *
 * Authentication (DESIGN section 5): the edge's `Authenticator` (L1 EIP-712 headers, L2 HMAC headers)
 * over the API-key service behind `/auth/*`, and the services app.ts builds and closes.
 *
 * Headers. `svc_*` names are primary, the platform client's `poly_*` names aliases, and `svc-*` /
 * `poly-*` further aliases for paths that drop underscores; the edge hands over lowercase names.
 *
 * L2 (every trading request, on the main thread, so it must stay cheap: one Map lookup, one
 * `createHmac`, two `timingSafeEqual`): signing string = timestamp + METHOD + path (no query string) +
 * the raw body bytes as received. Key = the secret's bytes. The signature may be lowercase hex (the
 * spec) or base64 of the digest in the platform's url-safe-with-padding form; standard base64 and
 * unpadded forms are accepted too. Every failure returns undefined and the edge answers the same 401,
 * so a caller never learns which part was wrong.
 *
 * Everything but the HMAC is decided by the headers alone, and `l2Head` / `builderHead` decide it on its
 * own, so the edge refuses a request before reading its body (pipeline.ts, `sign`): every header present,
 * the signature well-formed, the timestamp within `auth.maxClockSkewSeconds`, the key usable (committed,
 * not revoked) and of the family's kind, the address its owner (L2), the passphrase its own (constant-time).
 * `l2` and `builder` make the same checks again, then the HMAC, so they never pass where the head refused
 * (and a key revoked while the body was arriving is refused).
 *
 * L1 (API-key creation and derivation): EIP-712 ClobAuth, recovered in the signature pool.
 *
 * Refusals that explain themselves (refusals/auth.ts). Every failure above stays the same opaque 401; with
 * `auth.explainRefusals` on (the default), `createAuthServices` also builds an explainer that, on the refusal
 * path only, replays these checks and names the first that failed (the X-Refusal-Reason header). It reads the
 * rules through AUTH_RULES (the same names and functions these checks use, so it cannot drift from them) and
 * the keys through `ApiKeyService.forDiagnosis`, which derives a key's secret and passphrase in any state for
 * the diagnosis alone: it caches nothing, and nothing on the accept path calls it.
 */
import { timingSafeEqual } from 'node:crypto';
import { parseAddress } from '../../domain/ids.ts';
import type { Store } from '../../journal/env.ts';
import { nowSeconds, type Clock } from '../../runtime/clock.ts';
import type { Config } from '../../runtime/config.ts';
import type { Logger } from '../../runtime/log.ts';
import type { AuthDomain, OrderDomains } from './eip712.ts';
import { Funders } from './funders.ts';
import { orderDomainsOf } from './order-check.ts';
import type { Authenticator, SignedCaller } from '../pipeline/ports.ts';
import { createAuthExplainer } from '../refusals/auth.ts';
import { type AuthExplainer, type AuthRules } from '../refusals/auth-ports.ts';
import { SigPool } from './sig-pool.ts';
import { builderCodeOf, decodeSecret, decodeSignature, digestForm, l2Digest, loadMasterKey } from './credentials.ts';
import { ApiKeyService, type KeyVerifier } from './api-keys.ts';

// ---- authenticator ---------------------------------------------------------------------------------

type Headers = Readonly<Record<string, string>>;

/**
 * Lowercase header names to try for one field, in order: `svc_x`, `poly_x`, then the hyphenated
 * `svc-x` and `poly-x`. The hyphenated spellings exist because underscores do not survive every hop:
 * nginx drops such headers by default, and the uWS build this edge runs on never answers a request
 * that carries one (docs/decisions/authentication.md, "Authentication").
 */
function headerNames(field: string): readonly string[] {
  const hy = field.replace(/_/g, '-');
  return [`svc_${field}`, `poly_${field}`, `svc-${hy}`, `poly-${hy}`];
}

const NAMES = {
  address: headerNames('address'),
  apiKey: headerNames('api_key'),
  passphrase: headerNames('passphrase'),
  timestamp: headerNames('timestamp'),
  signature: headerNames('signature'),
  nonce: headerNames('nonce'),
} as const;

/** The builder headers: `svc_builder_api_key`, `poly_builder_api_key`, ... (no address: the key names its wallet). */
const BUILDER_NAMES = {
  apiKey: headerNames('builder_api_key'),
  passphrase: headerNames('builder_passphrase'),
  timestamp: headerNames('builder_timestamp'),
  signature: headerNames('builder_signature'),
} as const;

/** Every spelling of every credential header, L1, L2 and builder: what a signed route's edge keeps of the headers. */
export const CREDENTIAL_HEADER_NAMES: readonly string[] = [...Object.values(NAMES).flat(), ...Object.values(BUILDER_NAMES).flat()];

function header(h: Headers, names: readonly string[]): string | undefined {
  for (let i = 0; i < names.length; i++) {
    const v = h[names[i]!];
    if (v !== undefined) return v;
  }
  return undefined;
}

const TIMESTAMP = /^\d{1,12}$/;
const NONCE = /^\d{1,78}$/;
const UINT256_MAX = (1n << 256n) - 1n;
const L1_SIGNATURE = /^0x[0-9a-fA-F]{130}$/;

/** A decimal uint256 in canonical form, or undefined. */
function canonicalNonce(s: string): string | undefined {
  if (!NONCE.test(s)) return undefined;
  const v = BigInt(s);
  return v <= UINT256_MAX ? v.toString() : undefined;
}

export function authDomainOf(auth: Config['auth']): AuthDomain {
  return { name: auth.authDomain.name, version: auth.authDomain.version, chainId: auth.chainId };
}

/**
 * The checks' names and rules as the refusal diagnosis replays them (refusals/auth.ts cannot import this
 * module, which builds it): the same objects and functions the authenticator below checks with.
 */
export const AUTH_RULES: AuthRules = Object.freeze({
  l2: NAMES,
  builder: BUILDER_NAMES,
  header,
  digestForm,
  decodeSignature,
  timestampForm: (ts: string) => TIMESTAMP.test(ts),
  l2Digest,
  decodeSecret,
  canonicalNonce,
  l1SignatureForm: (sig: string) => L1_SIGNATURE.test(sig),
  authDomainOf,
});

export interface AuthenticatorDeps {
  keys: ApiKeyService;
  pool: SigPool;
  auth: Config['auth'];
  clock: Clock;
  /**
   * Under the sandbox's test clock, the machine's own: a signed timestamp is fresh within the skew of either
   * (a client signs with its own clock, or with GET /time's; docs/decisions/sandbox.md, "The test clock").
   */
  wallClock?: Clock;
}

export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  const { keys, pool, clock } = deps;
  const skew = deps.auth.maxClockSkewSeconds;
  const domain = authDomainOf(deps.auth);

  const wall = deps.wallClock;
  const fresh = (ts: string): boolean =>
    TIMESTAMP.test(ts) && (Math.abs(nowSeconds(clock) - Number(ts)) <= skew || (wall !== undefined && Math.abs(nowSeconds(wall) - Number(ts)) <= skew));

  const samePassphrase = (key: KeyVerifier, passphrase: string): boolean => {
    const given = Buffer.from(passphrase);
    return given.length === key.passphrase.length && timingSafeEqual(given, key.passphrase);
  };

  /**
   * What the L2 headers alone decide (no body, no HMAC): every header present, the signature well-formed, the
   * timestamp fresh, the key usable and not a builder key (those sign the builder headers only), the address
   * its owner, the passphrase its own. The key when all pass.
   */
  const l2Key = (headers: Headers, owned = true): KeyVerifier | undefined => {
    const apiKey = header(headers, NAMES.apiKey);
    const address = header(headers, NAMES.address);
    const passphrase = header(headers, NAMES.passphrase);
    const timestamp = header(headers, NAMES.timestamp);
    const signature = header(headers, NAMES.signature);
    if (apiKey === undefined || address === undefined || passphrase === undefined || timestamp === undefined || signature === undefined) return undefined;
    if (!digestForm(signature) || !fresh(timestamp)) return undefined;
    const key = keys.verifier(apiKey);
    if (!key || key.kind === 'builder') return undefined;
    if (!owned) return key;
    if (address.length !== 42 || address.toLowerCase() !== key.address) return undefined;
    return samePassphrase(key, passphrase) ? key : undefined;
  };

  /** The same for the builder headers (no address: the key names its wallet); only builder keys sign them. */
  const builderKey = (headers: Headers, owned = true): KeyVerifier | undefined => {
    const apiKey = header(headers, BUILDER_NAMES.apiKey);
    const passphrase = header(headers, BUILDER_NAMES.passphrase);
    const timestamp = header(headers, BUILDER_NAMES.timestamp);
    const signature = header(headers, BUILDER_NAMES.signature);
    if (apiKey === undefined || passphrase === undefined || timestamp === undefined || signature === undefined) return undefined;
    if (!digestForm(signature) || !fresh(timestamp)) return undefined;
    const key = keys.verifier(apiKey);
    if (!key || key.kind !== 'builder') return undefined;
    if (!owned) return key;
    return samePassphrase(key, passphrase) ? key : undefined;
  };

  /** The HMAC of a request whose headers passed; the digest when it matches (constant-time), else undefined. */
  /**
   * The caller a family's headers sign for, once `key` passed that family's head (l2Key, builderKey: every
   * header present and well-formed) and the HMAC over the request verifies; undefined when it does not.
   */
  const signedBy = (names: typeof BUILDER_NAMES, key: KeyVerifier, headers: Headers, method: string, path: string, rawBody: Buffer | undefined): SignedCaller | undefined => {
    const apiKey = header(headers, names.apiKey)!;
    const timestamp = header(headers, names.timestamp)!;
    const digest = l2Digest(key.hmacKey, timestamp, method, path, rawBody);
    if (!timingSafeEqual(digest, decodeSignature(header(headers, names.signature)!)!)) return undefined;
    // The digest names the signed content whatever encoding the header used (replays.ts).
    return { apiKey, address: key.address, keyKind: key.kind, replayKey: `${apiKey}|${digest.toString('hex')}`, expiresAt: Number(timestamp) + skew };
  };

  return {
    l2Head(headers) {
      return l2Key(headers)?.kind;
    },

    builderHead(headers) {
      return builderKey(headers) !== undefined;
    },

    provable(headers, kinds) {
      const l2 = (kinds.includes('trading') || kinds.includes('readonly')) && l2Key(headers, false);
      if (l2 && kinds.includes(l2.kind)) return true;
      return kinds.includes('builder') && builderKey(headers, false) !== undefined;
    },

    l2(method, path, headers, rawBody) {
      const key = l2Key(headers);
      return key === undefined ? undefined : signedBy(NAMES, key, headers, method, path, rawBody);
    },

    builder(method, path, headers, rawBody): SignedCaller | undefined {
      const key = builderKey(headers);
      const caller = key === undefined ? undefined : signedBy(BUILDER_NAMES, key, headers, method, path, rawBody);
      return caller === undefined ? undefined : { ...caller, keyKind: 'builder', builderCode: builderCodeOf(caller.address) };
    },

    knowsKey(headers) {
      const apiKey = header(headers, NAMES.apiKey) ?? header(headers, BUILDER_NAMES.apiKey);
      return apiKey !== undefined && keys.record(apiKey) !== undefined;
    },

    apiKeyOf(headers) {
      return header(headers, NAMES.apiKey) ?? header(headers, BUILDER_NAMES.apiKey);
    },

    presented(headers, kinds) {
      return (
        ((kinds.includes('trading') || kinds.includes('readonly')) && header(headers, NAMES.apiKey) !== undefined) ||
        (kinds.includes('builder') && header(headers, BUILDER_NAMES.apiKey) !== undefined)
      );
    },

    async l1(headers) {
      const address = parseAddress(header(headers, NAMES.address) ?? '');
      const signature = header(headers, NAMES.signature);
      const timestamp = header(headers, NAMES.timestamp);
      const nonceText = header(headers, NAMES.nonce);
      const nonce = nonceText === undefined || nonceText === '' ? '0' : canonicalNonce(nonceText);
      if (!address || signature === undefined || !L1_SIGNATURE.test(signature) || timestamp === undefined || !fresh(timestamp) || nonce === undefined) {
        return undefined;
      }
      const recovered = await pool.recoverClobAuth({ address, timestamp, nonce, signature }, domain);
      // What the EIP-712 message covers, not the signature bytes (ECDSA signatures have a second valid form).
      return recovered === address ? { address, nonce, replayKey: `${address}|${timestamp}|${nonce}`, expiresAt: Number(timestamp) + skew } : undefined;
    },
  };
}

// ---- composition -------------------------------------------------------------------------------

/** Everything authentication needs at run time; app.ts builds one and closes it on stop. */
export interface AuthServices {
  readonly keys: ApiKeyService;
  readonly pool: SigPool;
  readonly authenticator: Authenticator;
  /** The configured order domains (what `checkOrders` verifies against). */
  readonly orderDomains: OrderDomains;
  /** The signers' proxy wallets and Safes (auth.walletFactories): the makers of their type 1 and 2 orders. */
  readonly funders: Funders;
  /**
   * Says why credentials were refused, for the X-Refusal-Reason header and the user channel's error frame
   * (refusals/auth.ts); undefined under `auth.explainRefusals: false`. Call it on the refusal path only.
   */
  readonly explainer: AuthExplainer | undefined;
  /**
   * The mounted routes, for the explainer's "signed over another path" diagnosis: app.ts calls it once the
   * route table is built (a later call replaces the list). Patterns with `:` are left out; until it is called
   * that diagnosis has no other paths to try.
   */
  setRoutePaths(routes: ReadonlyArray<{ readonly method: string; readonly path: string }>): void;
  close(): Promise<void>;
}

/** The signature threads for `config` (auth.signatureThreads, inline signatures), failures logged. */
export function signaturePool(config: Readonly<Config>, log: Logger): SigPool {
  const pool = new SigPool({
    threads: config.auth.signatureThreads,
    inlineMax: config.auth.inlineSignatures.maxOrders,
    inlineBelow: config.auth.inlineSignatures.belowUtilization,
    onError: (err) => log.error({ err }, 'signature worker failed'),
  });
  pool.backend().then(
    (b) => {
      if (b !== 'native') log.warn('secp256k1 native binding not loaded: signature recovery runs on the pure-JS fallback (about 30x slower)');
    },
    () => undefined,
  );
  return pool;
}

/**
 * `pool`: signature threads that outlive these services (a sandbox revert, node/kept-threads.ts); close()
 * leaves them running. Absent: the services start their own and close them.
 */
export function createAuthServices(opts: { config: Readonly<Config>; store: Store; clock: Clock; wallClock?: Clock; log: Logger; pool?: SigPool }): AuthServices {
  const { config, store, clock, wallClock, log } = opts;
  const keys = ApiKeyService.open(store, loadMasterKey(config.auth, config.dataDir), clock, config.auth.maxKeysPerWallet);
  const pool = opts.pool ?? signaturePool(config, log);
  const authenticator = createAuthenticator({ keys, pool, auth: config.auth, clock, wallClock });
  // Filled by setRoutePaths; the explainer reads it on each diagnosis, so the order of the two does not matter.
  const routePaths = new Map<string, string[]>();
  const explainer = config.auth.explainRefusals
    ? createAuthExplainer({ keys, rules: AUTH_RULES, pool, auth: config.auth, clock, wallClock, paths: (method) => routePaths.get(method) ?? [] })
    : undefined;
  return {
    keys,
    pool,
    authenticator,
    orderDomains: orderDomainsOf(config.auth),
    funders: new Funders(config.auth.walletFactories),
    explainer,
    setRoutePaths(routes) {
      routePaths.clear();
      for (const { method, path } of routes) {
        if (path.includes(':')) continue;
        const list = routePaths.get(method);
        if (list === undefined) routePaths.set(method, [path]);
        else if (!list.includes(path)) list.push(path);
      }
    },
    close: () => (opts.pool === undefined ? pool.close() : Promise.resolve()),
  };
}
