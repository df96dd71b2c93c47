/**
 * The cluster's keys and authenticators (docs/decisions/scale-out.md, "The cluster's threat model"): NATS is transport,
 * not a trust boundary, so whatever one node believes of another's message it believes because the message
 * carries an authenticator only the nodes can make. This module owns how those keys are derived and the
 * byte format of every authenticator; the modules that put one on a message (commands.ts, wire.ts, lease.ts)
 * say what they bind into it.
 *
 * Keys. Every node holds `auth.masterKey`. It is never used directly: HKDF-SHA256 (node:crypto `hkdfSync`,
 * salt "pm-exchange/cluster") derives one 32-byte key per purpose, the purpose's name as `info`:
 *
 *   commands  AES-256-GCM: a gateway's command message, sealed whole (it carries passphrases, L2 signatures)
 *   answers   AES-256-GCM: the sequencer's answer to one (it carries new API secrets and passphrases)
 *   records   HMAC-SHA256: each replication record on the journal stream
 *   lease     HMAC-SHA256: the sequencer lease's value
 *   snapshots HMAC-SHA256: a snapshot's manifest in the object store (it names every file's SHA-256, so it
 *             authenticates the whole snapshot: replication/snapshot-store.ts)
 *
 * so a key that leaks from one use (or a bug that reveals one) gives nothing for another.
 *
 * What is bound. `mac` and `seal` take the bytes to protect and a list of context parts (a subject, a term,
 * a reply inbox, a direction): each part is framed by its length (4 bytes, big-endian) before it is hashed,
 * so no two lists of parts produce the same input, and a message made for one context fails in any other.
 *
 * Formats.
 *   mac     32 bytes: HMAC-SHA256(key, frame(parts...) ‖ bytes)
 *   sealed  12-byte random nonce ‖ ciphertext ‖ 16-byte GCM tag; the framed parts are the additional data.
 *           The nonce is random (2^-32 collision bound holds far past any cluster's message count under one
 *           key) and doubles as the message's id: `nonceOf`
 *
 * What it must not do: use the master key for anything but the derivation, compare tags in variable time, or
 * return anything from `open` whose tag failed.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

export type MacPurpose = 'records' | 'lease' | 'snapshots';
export type SealPurpose = 'commands' | 'answers';
type Purpose = MacPurpose | SealPurpose;

const SALT = 'pm-exchange/cluster';
export const MAC_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** What `seal` adds to its plaintext. */
export const SEAL_OVERHEAD = NONCE_BYTES + TAG_BYTES;

export type Part = string | Uint8Array | number;

function framed(parts: readonly Part[]): Buffer {
  const bufs: Buffer[] = [];
  for (const p of parts) {
    const b = typeof p === 'string' ? Buffer.from(p, 'utf8') : typeof p === 'number' ? Buffer.from(String(p), 'utf8') : Buffer.from(p.buffer, p.byteOffset, p.byteLength);
    const len = Buffer.allocUnsafe(4);
    len.writeUInt32BE(b.length);
    bufs.push(len, b);
  }
  return Buffer.concat(bufs);
}

export class ClusterKeys {
  private readonly keys: Record<Purpose, Buffer>;

  private constructor(master: Uint8Array) {
    const derive = (p: Purpose) => Buffer.from(hkdfSync('sha256', master, SALT, `pm-exchange/cluster/${p}`, 32));
    this.keys = { commands: derive('commands'), answers: derive('answers'), records: derive('records'), lease: derive('lease'), snapshots: derive('snapshots') };
  }

  /** The purpose keys of a cluster whose nodes share `master` (auth.masterKey). */
  static fromMaster(master: Uint8Array): ClusterKeys {
    if (master.length < 16) throw new Error('the cluster keys need a master key of at least 16 bytes');
    return new ClusterKeys(master);
  }

  /** The authenticator of `bytes` in the context `parts`. */
  mac(purpose: MacPurpose, parts: readonly Part[], bytes: Uint8Array = EMPTY): Buffer {
    return createHmac('sha256', this.keys[purpose]).update(framed(parts)).update(bytes).digest();
  }

  /** Whether `tag` is `bytes`'s authenticator in the context `parts` (constant time). */
  verify(purpose: MacPurpose, tag: Uint8Array, parts: readonly Part[], bytes: Uint8Array = EMPTY): boolean {
    if (tag.length !== MAC_BYTES) return false;
    return timingSafeEqual(tag, this.mac(purpose, parts, bytes));
  }

  /** `plaintext` encrypted and authenticated, bound to the context `parts`. */
  seal(purpose: SealPurpose, parts: readonly Part[], plaintext: Uint8Array): Buffer {
    const nonce = randomBytes(NONCE_BYTES);
    const c = createCipheriv('aes-256-gcm', this.keys[purpose], nonce);
    c.setAAD(framed(parts));
    const body = c.update(plaintext);
    const rest = c.final();
    return Buffer.concat([nonce, body, rest, c.getAuthTag()]);
  }

  /** The plaintext of a sealed message, or undefined when it was not sealed by a node for exactly this context. */
  open(purpose: SealPurpose, parts: readonly Part[], sealed: Uint8Array): Buffer | undefined {
    if (sealed.length < SEAL_OVERHEAD) return undefined;
    const s = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    try {
      const d = createDecipheriv('aes-256-gcm', this.keys[purpose], s.subarray(0, NONCE_BYTES));
      d.setAAD(framed(parts));
      d.setAuthTag(s.subarray(s.length - TAG_BYTES));
      const out = d.update(s.subarray(NONCE_BYTES, s.length - TAG_BYTES));
      return Buffer.concat([out, d.final()]);
    } catch {
      return undefined;
    }
  }
}

const EMPTY = new Uint8Array(0);

/** A sealed message's nonce: unique per message, so it names the message (commands.ts refuses one seen before). */
export function nonceOf(sealed: Uint8Array): string {
  return Buffer.from(sealed.buffer, sealed.byteOffset, Math.min(NONCE_BYTES, sealed.byteLength)).toString('base64');
}

/**
 * A refusal's log line at most once per `everyMs` for each kind (with how many were refused meanwhile): a
 * flood of forgeries is counted in full on /metrics but never floods the log.
 */
export class RefusalLogger {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly log: (detail: Record<string, unknown>, msg: string) => void,
    private readonly everyMs = 10_000,
  ) {}

  refused(kind: string, detail: Record<string, unknown>, msg: string, now = Date.now()): void {
    const seen = this.last.get(kind);
    if (seen !== undefined && now - seen.at < this.everyMs) {
      seen.suppressed++;
      return;
    }
    this.last.set(kind, { at: now, suppressed: 0 });
    this.log({ ...detail, kind, ...(seen !== undefined && seen.suppressed > 0 ? { suppressedSinceLast: seen.suppressed } : {}) }, msg);
  }
}
