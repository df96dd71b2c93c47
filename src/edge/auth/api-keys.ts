/**
 * The API-key service: every key record in memory, created, derived, listed and revoked through the store
 * (one LMDB write per change, usable once committed), with the HMAC key and passphrase bytes a live key is
 * verified with. The credentials themselves derive from the master key (credentials.ts); what a request's
 * headers prove is auth.ts's.
 *
 * The store keeps {apiKey, address, nonce, createdAt, revoked}; the service holds every record in memory
 * (keys are few) with the HMAC key and passphrase bytes derived on first use.
 *
 * Key kinds (route.ts KeyKind). Trading keys are the (address, nonce) keys of credentials.ts. Read-only and builder keys
 * are created by a trading key (L2) and derive the same way from (address, `<kind>:<32 random hex>`): the
 * random part, kept in the record's `nonce`, makes each one new; `derive` never answers for them (their
 * "nonce" is no decimal). All three are credential triples of the same form, so a read-only key signs its
 * requests exactly as a trading key does (the platform's client works with it unchanged) and a builder key
 * signs the builder headers. A record without `kind` is a trading key (stores written before kinds existed).
 * `auth.maxKeysPerWallet` caps the usable keys of each kind separately: a wallet's read-only or builder keys
 * never take a trading key's place, and every kind stays bounded, so keys cannot multiply a caller's
 * per-key rate limits without bound.
 */
import { randomBytes } from 'node:crypto';
import { apiError } from '../../domain/errors.ts';
import type { Store } from '../../journal/env.ts';
import { apiKeyByNonce, apiKeyRecordKey, masterKeyIdMetaKey } from '../../journal/keys.ts';
import { nowSeconds, type Clock } from '../../runtime/clock.ts';
import type { ExplainedKeys, KeyMaterial } from '../refusals/auth-ports.ts';
import type { KeyKind } from '../pipeline/route.ts';
import { base64urlPadded, mac, deriveCredentials, masterKeyId, type Credentials } from './credentials.ts';

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

