/**
 * Room edge/auth/: who a caller is and what a signature proves: API keys and the Authenticator (this
 * file), EIP-712 digests (eip712.ts, keccak.ts), the signature pool and its workers (sig-pool.ts,
 * sig-worker*.ts), the wallets a signer trades for (funders.ts) and the order checks before the engine
 * (order-check.ts). Its refusal diagnoses sit beside it in refusals/. Separate because it implements the
 * pipeline's interfaces (Authenticator, KeyKind) and serves routes/ and ws/: it imports pipeline/, refusals/
 * and schemas/, never routes/, ws/, sandbox/ or cluster/.
 *
 * Authentication (DESIGN section 5): the edge's `Authenticator` (L1 EIP-712 headers, L2 HMAC headers)
 * and the API-key service behind `/auth/*`.
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
 *
 * Credentials derive from a server master key, so no secret is ever stored:
 *   apiKey     = UUID (v4 layout) of HMAC-SHA256(master, "pm-exchange/api-key\0" ‖ address ‖ "\0" ‖ nonce)
 *   secret     = base64url (with padding) of HMAC-SHA256(master, "pm-exchange/secret\0" ‖ ...)
 *   passphrase = hex of HMAC-SHA256(master, "pm-exchange/passphrase\0" ‖ ...)
 * with the lowercase address and the canonical decimal nonce. The store keeps {apiKey, address, nonce,
 * createdAt, revoked}; the service holds every record in memory (keys are few) with the HMAC key and
 * passphrase bytes derived on first use. A fingerprint of the master key sits in the store's meta so
 * a start with a different key (which would silently invalidate every issued secret) is refused.
 *
 * Key kinds (route.ts KeyKind). Trading keys are the (address, nonce) keys above. Read-only and builder keys
 * are created by a trading key (L2) and derive the same way from (address, `<kind>:<32 random hex>`): the
 * random part, kept in the record's `nonce`, makes each one new; `derive` never answers for them (their
 * "nonce" is no decimal). All three are credential triples of the same form, so a read-only key signs its
 * requests exactly as a trading key does (the platform's client works with it unchanged) and a builder key
 * signs the builder headers. A record without `kind` is a trading key (stores written before kinds existed).
 * `auth.maxKeysPerWallet` caps the usable keys of each kind separately: a wallet's read-only or builder keys
 * never take a trading key's place, and every kind stays bounded, so keys cannot multiply a caller's
 * per-key rate limits without bound.
 *
 * A wallet's builder code (the bytes32 its orders carry in `builder` to attribute them) is
 * sha256("pm-exchange/builder-code\0" ‖ address): public, fixed, the same for all of its builder keys.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiError } from '../../domain/errors.ts';
import { parseAddress } from '../../domain/ids.ts';
import type { Store } from '../../journal/env.ts';
import { apiKeyByNonce, apiKeyRecordKey, masterKeyIdMetaKey } from '../../journal/keys.ts';
import { nowSeconds, type Clock } from '../../runtime/clock.ts';
import type { Config } from '../../runtime/config.ts';
import type { Logger } from '../../runtime/log.ts';
import type { AuthDomain, OrderDomains } from './eip712.ts';
import { Funders } from './funders.ts';
import { orderDomainsOf } from './order-check.ts';
import type { Authenticator, SignedCaller } from '../pipeline/pipeline.ts';
import { createAuthExplainer, type AuthExplainer, type AuthRules, type ExplainedKeys, type KeyMaterial } from '../refusals/auth.ts';
import type { KeyKind } from '../pipeline/route.ts';
import { SigPool } from './sig-pool.ts';

export interface Credentials {
  apiKey: string;
  secret: string;
  passphrase: string;
}

/** What the store keeps per API key. */
export interface ApiKeyRecord {
  apiKey: string;
  /** Lowercase wallet address. */
  address: string;
  /** Canonical decimal nonce. */
  nonce: string;
  /** Unix seconds. */
  createdAt: number;
  revoked: boolean;
  revokedAt?: number;
  /** Absent: a trading key. */
  kind?: 'readonly' | 'builder';
}

/** The kind of a stored key. */
export const kindOf = (r: ApiKeyRecord): KeyKind => r.kind ?? 'trading';

/** A wallet's builder code: the bytes32 (0x + 64 hex) its orders name in `builder`. */
export function builderCodeOf(address: string): string {
  return '0x' + createHash('sha256').update(`pm-exchange/builder-code\0${address.toLowerCase()}`).digest('hex');
}

// ---- master key --------------------------------------------------------------------------------

export const MASTER_KEY_FILE = 'master.key';

function decodeMasterKey(text: string): Buffer | undefined {
  const t = text.trim();
  const hex = t.startsWith('0x') ? t.slice(2) : t;
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]+$/.test(hex) && hex.length % 2 === 0) key = Buffer.from(hex, 'hex');
  else if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) key = Buffer.from(t, 'base64');
  return key && key.length >= 16 ? key : undefined;
}

/**
 * The master key: `auth.masterKey` when set (hex or base64, at least 16 bytes), else DATA_DIR/master.key,
 * generated on the first start (32 random bytes as hex, mode 0600) and read back afterwards.
 */
export function loadMasterKey(auth: Pick<Config['auth'], 'masterKey'>, dataDir: string): Buffer {
  if (auth.masterKey !== '') {
    const key = decodeMasterKey(auth.masterKey);
    if (!key) throw new Error('invalid configuration: auth.masterKey: expected hex or base64 of at least 16 bytes');
    return key;
  }
  const path = join(dataDir, MASTER_KEY_FILE);
  try {
    // 'wx' fails when the file exists, so two processes racing on a fresh DATA_DIR cannot both write.
    writeFileSync(path, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  // A key readable by others is tightened rather than refused: it is the operator's file.
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  const key = decodeMasterKey(readFileSync(path, 'utf8'));
  // Never regenerate over an unreadable key: every issued credential would silently change.
  if (!key) throw new Error(`${path} does not hold a master key (hex of at least 16 bytes); restore it or remove it with the API keys`);
  return key;
}

// ---- credential derivation ---------------------------------------------------------------------

function mac(master: Buffer, purpose: string, address: string, nonce: string): Buffer {
  return createHmac('sha256', master).update(`pm-exchange/${purpose}\0${address}\0${nonce}`).digest();
}

function uuidOf(bytes: Buffer): string {
  const b = Buffer.from(bytes.subarray(0, 16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Standard base64 with padding, url-safe alphabet: the form the platform issues and its clients expect. */
const base64urlPadded = (b: Buffer) => b.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');

/** The credentials of (address, nonce) under a master key. `address` lowercase, `nonce` canonical. */
export function deriveCredentials(master: Buffer, address: string, nonce: string): Credentials {
  return {
    apiKey: uuidOf(mac(master, 'api-key', address, nonce)),
    secret: base64urlPadded(mac(master, 'secret', address, nonce)),
    passphrase: mac(master, 'passphrase', address, nonce).toString('hex'),
  };
}

function masterKeyId(master: Buffer): string {
  return createHmac('sha256', master).update('pm-exchange/master-key-id').digest('hex').slice(0, 32);
}

// ---- signature helpers (exported for tests and clients of this module) ----------------------------

const BASE64_SECRET = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** An API secret's key bytes: base64url or standard base64, padding optional. */
export function decodeSecret(secret: string): Buffer | undefined {
  if (!BASE64_SECRET.test(secret)) return undefined;
  const key = Buffer.from(secret, 'base64');
  return key.length > 0 ? key : undefined;
}

const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;
// 32 bytes are 43 base64 characters plus one '=' of padding.
const B64_DIGEST = /^[A-Za-z0-9+/_-]{43}=?$/;

/** Whether an L2 signature header has the form of a digest (hex, or base64 in either alphabet); decodes nothing. */
const digestForm = (sig: string): boolean => (sig.length === 64 ? HEX_DIGEST.test(sig) : B64_DIGEST.test(sig));

/** The 32 digest bytes of an L2 signature header (hex, or base64 in either alphabet), else undefined. */
export function decodeSignature(sig: string): Buffer | undefined {
  if (!digestForm(sig)) return undefined;
  // Node's base64 decoder reads both alphabets and tolerates missing padding.
  return Buffer.from(sig, sig.length === 64 ? 'hex' : 'base64');
}

/** HMAC-SHA256 over `timestamp + method + path + body` (body bytes appended as they are). */
export function l2Digest(key: Buffer, timestamp: string, method: string, path: string, body?: Buffer | string): Buffer {
  const h = createHmac('sha256', key).update(timestamp).update(method).update(path);
  if (body !== undefined && body.length > 0) h.update(body);
  return h.digest();
}

/** The platform's encoding of an L2 signature: url-safe base64 with padding. */
export const encodeSignature = base64urlPadded;

// ---- API-key service -----------------------------------------------------------------------------

interface KeyEntry {
  record: ApiKeyRecord;
  /** True until the record's LMDB write has committed: not usable, but its nonce is taken. */
  pending: boolean;
  hmacKey?: Buffer;
  passphrase?: Buffer;
}

/** What L2 verification needs of a live key. */
export interface KeyVerifier {
  address: string;
  kind: KeyKind;
  hmacKey: Buffer;
  passphrase: Buffer;
}

const nonceId = (address: string, nonce: string) => `${address}\n${nonce}`;

export class ApiKeyService implements ExplainedKeys {
  private readonly byKey = new Map<string, KeyEntry>();
  private readonly byNonce = new Map<string, string>();
  private readonly byAddress = new Map<string, string[]>();

  private constructor(
    private readonly store: Store,
    private readonly master: Buffer,
    private readonly clock: Clock,
    private readonly maxPerWallet: number,
  ) {}

  /**
   * Loads every stored key record. Throws when the store holds keys issued under another master key
   * (their secrets could no longer be derived).
   */
  static open(store: Store, master: Buffer, clock: Clock, maxPerWallet = Infinity): ApiKeyService {
    const svc = new ApiKeyService(store, master, clock, maxPerWallet);
    for (const { key, value } of store.apiKeys.getRange()) {
      if (typeof key !== 'string') continue;
      svc.index({ record: value as ApiKeyRecord, pending: false });
    }
    const id = masterKeyId(master);
    const stored = store.meta.get(masterKeyIdMetaKey);
    if (stored !== id) {
      if (stored !== undefined && svc.byKey.size > 0) {
        throw new Error(
          `the auth master key differs from the one that issued the ${svc.byKey.size} stored API keys; ` +
            'restore it (auth.masterKey or DATA_DIR/master.key)',
        );
      }
      store.meta.putSync(masterKeyIdMetaKey, id);
    }
    return svc;
  }

  private index(e: KeyEntry): void {
    const r = e.record;
    this.byKey.set(r.apiKey, e);
    if (r.kind === undefined) this.byNonce.set(nonceId(r.address, r.nonce), r.apiKey);
    const list = this.byAddress.get(r.address);
    if (list) list.push(r.apiKey);
    else this.byAddress.set(r.address, [r.apiKey]);
  }

  private unindex(r: ApiKeyRecord): void {
    this.byKey.delete(r.apiKey);
    if (r.kind === undefined) this.byNonce.delete(nonceId(r.address, r.nonce));
    const list = this.byAddress.get(r.address);
    if (list) {
      const i = list.indexOf(r.apiKey);
      if (i >= 0) list.splice(i, 1);
      if (list.length === 0) this.byAddress.delete(r.address);
    }
  }

  /** Creates the key of (address, nonce); a nonce once used (even revoked) stays taken. Answers after the commit. */
  async create(address: string, nonce: string): Promise<Credentials> {
    if (this.byNonce.has(nonceId(address, nonce))) throw apiError('PM_ERR_CREATE_API_KEY');
    return this.issue(address, nonce, undefined);
  }

  /**
   * Creates a read-only or builder key of the wallet (its creator is a trading key, checked by the route).
   * Answers after the commit.
   */
  async createKind(address: string, kind: 'readonly' | 'builder'): Promise<Credentials> {
    return this.issue(address, `${kind}:${randomBytes(16).toString('hex')}`, kind);
  }

  private issue(address: string, nonce: string, kind: ApiKeyRecord['kind']): Promise<Credentials> {
    // Usable keys of the kind only (pending ones included: two concurrent creates count twice); revoked ones free a place.
    const usable = this.recordsOf(address, kind ?? 'trading', true).filter((r) => !r.revoked).length;
    if (usable >= this.maxPerWallet) throw apiError('PM_ERR_TOO_MANY_KEYS', { max: this.maxPerWallet });
    const creds = deriveCredentials(this.master, address, nonce);
    // A UUID collision between two (address, nonce) pairs is a 2^-122 event; refuse rather than alias.
    if (this.byKey.has(creds.apiKey)) throw apiError('PM_ERR_CREATE_API_KEY');
    const record: ApiKeyRecord = { apiKey: creds.apiKey, address, nonce, createdAt: nowSeconds(this.clock), revoked: false, ...(kind ? { kind } : {}) };
    const entry: KeyEntry = { record, pending: true };
    // Indexed before the write so a concurrent create of the same nonce is refused at once.
    this.index(entry);
    const writes = [this.store.apiKeys.put(apiKeyRecordKey(record.apiKey), record)];
    if (kind === undefined) writes.push(this.store.apiKeys.put(apiKeyByNonce(address, nonce), record.apiKey));
    return Promise.all(writes).then(
      () => {
        entry.pending = false;
        return creds;
      },
      (e: unknown) => {
        this.unindex(record);
        throw e;
      },
    );
  }

  /** The credentials of a created, unrevoked key for (address, nonce). */
  derive(address: string, nonce: string): Credentials {
    const apiKey = this.byNonce.get(nonceId(address, nonce));
    const e = apiKey === undefined ? undefined : this.byKey.get(apiKey);
    if (!e || e.pending || e.record.revoked) throw apiError('PM_ERR_DERIVE_API_KEY');
    return deriveCredentials(this.master, address, nonce);
  }

  private readonly revokedListeners: Array<(apiKey: string) => void> = [];

  /** Told of each revoked key as soon as it stops working (the user channel closes its sockets). */
  onRevoked(listener: (apiKey: string) => void): void {
    this.revokedListeners.push(listener);
  }

  /**
   * A read replica wrote these API-key records (the replication stream): memory follows the store, and a
   * revocation is told to the revoked listeners as on the sequencer.
   */
  replicated(apiKeys: readonly string[]): void {
    for (const apiKey of apiKeys) {
      const rec = this.store.apiKeys.get(apiKeyRecordKey(apiKey)) as ApiKeyRecord | undefined;
      if (rec === undefined) continue;
      const e = this.byKey.get(apiKey);
      if (e === undefined) {
        this.index({ record: rec, pending: false });
        continue;
      }
      const revokedNow = rec.revoked && !e.record.revoked;
      e.record = rec;
      if (revokedNow) for (const l of this.revokedListeners) l(apiKey);
    }
  }

  /** Revokes a key: refused from the next request on (memory first), durable when the promise resolves. */
  async revoke(apiKey: string): Promise<void> {
    const e = this.byKey.get(apiKey);
    if (!e || e.record.revoked) return;
    e.record = { ...e.record, revoked: true, revokedAt: nowSeconds(this.clock) };
    for (const l of this.revokedListeners) l(apiKey);
    await this.store.apiKeys.put(apiKeyRecordKey(apiKey), e.record);
  }

  /**
   * Usable trading keys of a wallet, oldest first: by creation second, then nonce, then key, so the same keys
   * list the same way before and after a restart (which loads them in key order).
   */
  list(address: string): string[] {
    return this.recordsOf(address, 'trading', false)
      .filter((r) => !r.revoked)
      .map((r) => r.apiKey);
  }

  /** Every committed record of one kind of the wallet, revoked ones included, in list order. Allocates. */
  records(address: string, kind: KeyKind): ApiKeyRecord[] {
    return this.recordsOf(address, kind, false);
  }

  private recordsOf(address: string, kind: KeyKind, pendingToo: boolean): ApiKeyRecord[] {
    const out: ApiKeyRecord[] = [];
    for (const k of this.byAddress.get(address) ?? []) {
      const e = this.byKey.get(k);
      if (e !== undefined && (pendingToo || !e.pending) && kindOf(e.record) === kind) out.push(e.record);
    }
    return out.sort((a, b) => a.createdAt - b.createdAt || a.nonce.length - b.nonce.length || (a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0) || (a.apiKey < b.apiKey ? -1 : 1));
  }

  /** The committed, unrevoked record of a key, else undefined. */
  usable(apiKey: string): ApiKeyRecord | undefined {
    const e = this.byKey.get(apiKey);
    return e === undefined || e.pending || e.record.revoked ? undefined : e.record;
  }

  /** The record of a key, whatever its state (tests, admin). */
  record(apiKey: string): ApiKeyRecord | undefined {
    return this.byKey.get(apiKey)?.record;
  }

  /**
   * Refusal diagnosis only (refusals/auth.ts): a key's secret, HMAC key and passphrase whatever its state
   * (pending and revoked too), so the diagnosis can try them against what a refused request sent. Never for
   * authentication (it answers for keys that must not pass), and nothing of it may leave in a reason. Derived
   * afresh each call and not cached: a refused request never warms or holds the hot path's entries.
   */
  forDiagnosis(apiKey: string): KeyMaterial | undefined {
    const e = this.byKey.get(apiKey);
    if (e === undefined) return undefined;
    const { address, nonce } = e.record;
    const hmacKey = mac(this.master, 'secret', address, nonce);
    return { record: e.record, pending: e.pending, hmacKey, secret: base64urlPadded(hmacKey), passphrase: Buffer.from(mac(this.master, 'passphrase', address, nonce).toString('hex')) };
  }

  /** Hot path: what L2 needs to verify a request signed with `apiKey`, undefined unless the key is usable. */
  verifier(apiKey: string): KeyVerifier | undefined {
    const e = this.byKey.get(apiKey);
    if (!e || e.pending || e.record.revoked) return undefined;
    if (!e.hmacKey || !e.passphrase) {
      const { address, nonce } = e.record;
      e.hmacKey = mac(this.master, 'secret', address, nonce);
      e.passphrase = Buffer.from(mac(this.master, 'passphrase', address, nonce).toString('hex'));
    }
    return { address: e.record.address, kind: kindOf(e.record), hmacKey: e.hmacKey, passphrase: e.passphrase };
  }

  get size(): number {
    return this.byKey.size;
  }
}

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
  const signedDigest = (key: KeyVerifier, timestamp: string, signature: string, method: string, path: string, rawBody: Buffer | undefined): Buffer | undefined => {
    const digest = l2Digest(key.hmacKey, timestamp, method, path, rawBody);
    return timingSafeEqual(digest, decodeSignature(signature)!) ? digest : undefined;
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
      if (key === undefined) return undefined;
      // Present and well-formed: l2Key checked them.
      const apiKey = header(headers, NAMES.apiKey)!;
      const timestamp = header(headers, NAMES.timestamp)!;
      const digest = signedDigest(key, timestamp, header(headers, NAMES.signature)!, method, path, rawBody);
      if (digest === undefined) return undefined;
      // The digest names the signed content whatever encoding the header used (replays.ts).
      return { apiKey, address: key.address, keyKind: key.kind, replayKey: `${apiKey}|${digest.toString('hex')}`, expiresAt: Number(timestamp) + skew };
    },

    builder(method, path, headers, rawBody): SignedCaller | undefined {
      const key = builderKey(headers);
      if (key === undefined) return undefined;
      const apiKey = header(headers, BUILDER_NAMES.apiKey)!;
      const timestamp = header(headers, BUILDER_NAMES.timestamp)!;
      const digest = signedDigest(key, timestamp, header(headers, BUILDER_NAMES.signature)!, method, path, rawBody);
      if (digest === undefined) return undefined;
      return {
        apiKey,
        address: key.address,
        keyKind: 'builder',
        builderCode: builderCodeOf(key.address),
        replayKey: `${apiKey}|${digest.toString('hex')}`,
        expiresAt: Number(timestamp) + skew,
      };
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

export function createAuthServices(opts: { config: Readonly<Config>; store: Store; clock: Clock; wallClock?: Clock; log: Logger }): AuthServices {
  const { config, store, clock, wallClock, log } = opts;
  const keys = ApiKeyService.open(store, loadMasterKey(config.auth, config.dataDir), clock, config.auth.maxKeysPerWallet);
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
    close: () => pool.close(),
  };
}
