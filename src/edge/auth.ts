/**
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
 * L1 (API-key creation and derivation): EIP-712 ClobAuth, recovered in the signature pool.
 *
 * Credentials derive from a server master key, so no secret is ever stored:
 *   apiKey     = UUID (v4 layout) of HMAC-SHA256(master, "pm-exchange/api-key\0" ‖ address ‖ "\0" ‖ nonce)
 *   secret     = base64url (with padding) of HMAC-SHA256(master, "pm-exchange/secret\0" ‖ ...)
 *   passphrase = hex of HMAC-SHA256(master, "pm-exchange/passphrase\0" ‖ ...)
 * with the lowercase address and the canonical decimal nonce. The store keeps {apiKey, address, nonce,
 * createdAt, revoked}; the service holds every record in memory (keys are few) with the HMAC key and
 * passphrase bytes derived on first use. A fingerprint of the master key sits in the store's meta so
 * a start with a different key (which would silently invalidate every issued secret) is refused.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiError } from '../domain/errors.ts';
import { parseAddress } from '../domain/ids.ts';
import type { Store } from '../journal/env.ts';
import { apiKeyByNonce, apiKeyRecordKey, masterKeyIdMetaKey } from '../journal/keys.ts';
import { nowSeconds, type Clock } from '../runtime/clock.ts';
import type { Config } from '../runtime/config.ts';
import type { Logger } from '../runtime/log.ts';
import type { AuthDomain, OrderDomains } from './eip712.ts';
import { orderDomainsOf } from './order-check.ts';
import type { Authenticator } from './pipeline.ts';
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

/** The 32 digest bytes of an L2 signature header (hex, or base64 in either alphabet), else undefined. */
export function decodeSignature(sig: string): Buffer | undefined {
  if (sig.length === 64) return HEX_DIGEST.test(sig) ? Buffer.from(sig, 'hex') : undefined;
  // Node's base64 decoder reads both alphabets and tolerates missing padding.
  return B64_DIGEST.test(sig) ? Buffer.from(sig, 'base64') : undefined;
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
  hmacKey: Buffer;
  passphrase: Buffer;
}

const nonceId = (address: string, nonce: string) => `${address}\n${nonce}`;

export class ApiKeyService {
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
    this.byNonce.set(nonceId(r.address, r.nonce), r.apiKey);
    const list = this.byAddress.get(r.address);
    if (list) list.push(r.apiKey);
    else this.byAddress.set(r.address, [r.apiKey]);
  }

  private unindex(r: ApiKeyRecord): void {
    this.byKey.delete(r.apiKey);
    this.byNonce.delete(nonceId(r.address, r.nonce));
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
    // Usable keys only (pending ones included: two concurrent creates count twice); revoked ones free a place.
    const usable = (this.byAddress.get(address) ?? []).filter((k) => !this.byKey.get(k)?.record.revoked).length;
    if (usable >= this.maxPerWallet) throw apiError('PM_ERR_TOO_MANY_KEYS', { max: this.maxPerWallet });
    const creds = deriveCredentials(this.master, address, nonce);
    // A UUID collision between two (address, nonce) pairs is a 2^-122 event; refuse rather than alias.
    if (this.byKey.has(creds.apiKey)) throw apiError('PM_ERR_CREATE_API_KEY');
    const record: ApiKeyRecord = { apiKey: creds.apiKey, address, nonce, createdAt: nowSeconds(this.clock), revoked: false };
    const entry: KeyEntry = { record, pending: true };
    // Indexed before the write so a concurrent create of the same nonce is refused at once.
    this.index(entry);
    try {
      await Promise.all([
        this.store.apiKeys.put(apiKeyRecordKey(record.apiKey), record),
        this.store.apiKeys.put(apiKeyByNonce(address, nonce), record.apiKey),
      ]);
    } catch (e) {
      this.unindex(record);
      throw e;
    }
    entry.pending = false;
    return creds;
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

  /** Revokes a key: refused from the next request on (memory first), durable when the promise resolves. */
  async revoke(apiKey: string): Promise<void> {
    const e = this.byKey.get(apiKey);
    if (!e || e.record.revoked) return;
    e.record = { ...e.record, revoked: true, revokedAt: nowSeconds(this.clock) };
    for (const l of this.revokedListeners) l(apiKey);
    await this.store.apiKeys.put(apiKeyRecordKey(apiKey), e.record);
  }

  /** The wallet's usable API keys, oldest first. */
  /**
   * Usable keys of a wallet, oldest first: by creation second, then nonce, then key, so the same keys list
   * the same way before and after a restart (which loads them in key order).
   */
  list(address: string): string[] {
    const usable: ApiKeyRecord[] = [];
    for (const k of this.byAddress.get(address) ?? []) {
      const e = this.byKey.get(k);
      if (e !== undefined && !e.pending && !e.record.revoked) usable.push(e.record);
    }
    usable.sort((a, b) => a.createdAt - b.createdAt || a.nonce.length - b.nonce.length || (a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0) || (a.apiKey < b.apiKey ? -1 : 1));
    return usable.map((r) => r.apiKey);
  }

  /** The record of a key, whatever its state (tests, admin). */
  record(apiKey: string): ApiKeyRecord | undefined {
    return this.byKey.get(apiKey)?.record;
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
    return { address: e.record.address, hmacKey: e.hmacKey, passphrase: e.passphrase };
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
 * that carries one (docs/decisions.md, "Authentication").
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

export interface AuthenticatorDeps {
  keys: ApiKeyService;
  pool: SigPool;
  auth: Config['auth'];
  clock: Clock;
}

export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  const { keys, pool, clock } = deps;
  const skew = deps.auth.maxClockSkewSeconds;
  const domain = authDomainOf(deps.auth);

  const fresh = (ts: string): boolean => TIMESTAMP.test(ts) && Math.abs(nowSeconds(clock) - Number(ts)) <= skew;

  return {
    l2(method, path, headers, rawBody) {
      const apiKey = header(headers, NAMES.apiKey);
      const address = header(headers, NAMES.address);
      const passphrase = header(headers, NAMES.passphrase);
      const timestamp = header(headers, NAMES.timestamp);
      const signature = header(headers, NAMES.signature);
      if (apiKey === undefined || address === undefined || passphrase === undefined || timestamp === undefined || signature === undefined) return undefined;
      if (!fresh(timestamp)) return undefined;
      const key = keys.verifier(apiKey);
      if (!key || address.length !== 42 || address.toLowerCase() !== key.address) return undefined;
      const given = decodeSignature(signature);
      if (!given) return undefined;
      const pass = Buffer.from(passphrase);
      if (pass.length !== key.passphrase.length || !timingSafeEqual(pass, key.passphrase)) return undefined;
      const digest = l2Digest(key.hmacKey, timestamp, method, path, rawBody);
      if (!timingSafeEqual(digest, given)) return undefined;
      // The digest names the signed content whatever encoding the header used (replays.ts).
      return { apiKey, address: key.address, replayKey: `${apiKey}|${digest.toString('hex')}`, expiresAt: Number(timestamp) + skew };
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
  close(): Promise<void>;
}

export function createAuthServices(opts: { config: Readonly<Config>; store: Store; clock: Clock; log: Logger }): AuthServices {
  const { config, store, clock, log } = opts;
  const keys = ApiKeyService.open(store, loadMasterKey(config.auth, config.dataDir), clock, config.auth.maxKeysPerWallet);
  const pool = new SigPool({ threads: config.auth.signatureThreads, onError: (err) => log.error({ err }, 'signature worker failed') });
  pool.backend().then(
    (b) => {
      if (b !== 'native') log.warn('secp256k1 native binding not loaded: signature recovery runs on the pure-JS fallback (about 30x slower)');
    },
    () => undefined,
  );
  const authenticator = createAuthenticator({ keys, pool, auth: config.auth, clock });
  return { keys, pool, authenticator, orderDomains: orderDomainsOf(config.auth), close: () => pool.close() };
}
