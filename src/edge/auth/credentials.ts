/**
 * What an API key is made of, with nothing stored: the server's master key, the credentials it derives for
 * (address, nonce), a wallet's builder code, and the forms a secret and an L2 signature take on the wire.
 * Pure functions of their inputs (the master key file aside); the key records and their service are
 * api-keys.ts's, the checks that use these are auth.ts's.
 *
 * Credentials derive from a server master key, so no secret is ever stored:
 *   apiKey     = UUID (v4 layout) of HMAC-SHA256(master, "pm-exchange/api-key\0" ‖ address ‖ "\0" ‖ nonce)
 *   secret     = base64url (with padding) of HMAC-SHA256(master, "pm-exchange/secret\0" ‖ ...)
 *   passphrase = hex of HMAC-SHA256(master, "pm-exchange/passphrase\0" ‖ ...)
 * with the lowercase address and the canonical decimal nonce. A fingerprint of the master key (masterKeyId)
 * sits in the store's meta so a start with a different key (which would silently invalidate every issued
 * secret) is refused.
 *
 * A wallet's builder code (the bytes32 its orders carry in `builder` to attribute them) is
 * sha256("pm-exchange/builder-code\0" ‖ address): public, fixed, the same for all of its builder keys.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../runtime/config.ts';

export interface Credentials {
  apiKey: string;
  secret: string;
  passphrase: string;
}

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

export function mac(master: Buffer, purpose: string, address: string, nonce: string): Buffer {
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
export const base64urlPadded = (b: Buffer) => b.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');

/** The credentials of (address, nonce) under a master key. `address` lowercase, `nonce` canonical. */
export function deriveCredentials(master: Buffer, address: string, nonce: string): Credentials {
  return {
    apiKey: uuidOf(mac(master, 'api-key', address, nonce)),
    secret: base64urlPadded(mac(master, 'secret', address, nonce)),
    passphrase: mac(master, 'passphrase', address, nonce).toString('hex'),
  };
}

export function masterKeyId(master: Buffer): string {
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
export const digestForm = (sig: string): boolean => (sig.length === 64 ? HEX_DIGEST.test(sig) : B64_DIGEST.test(sig));

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
