/**
 * Replays of signed requests. A signed request is valid for the clock-skew window (auth.maxClockSkewSeconds
 * either side of its timestamp) and carries no nonce (the platform's client sends none), so a captured one
 * could be sent again within the window: a `POST /split` split again, a `DELETE /cancel-all` canceled
 * orders placed after it was captured, an L1 derive handed out the secret again. The guard remembers each
 * accepted signed request until its window closes, and an identical one inside it is answered with the
 * first one's answer and changes nothing.
 *
 * What "identical" means: L2, the same API key and the same HMAC digest (timestamp + method + path +
 * body; the digest, not the header text, so re-encoding the signature from hex to base64 is the same
 * request); L1, the same method, path, address, timestamp and nonce (what the EIP-712 message covers, not
 * the signature bytes, which ECDSA lets anyone rewrite into a second valid form).
 *
 * Which routes (RouteDef.replay, route.ts): L2 routes that change something, L1 routes, and nothing else;
 * placements are already idempotent by order id, reads change nothing. Two kinds of memory:
 *   memory   a bounded map in this process (MAX_REPLAY_BYTES over all entries, oldest evicted first and
 *            counted): key revocation, the L1 routes;
 *   durable  the same, backed by LMDB (journal/env.ts `replays`) so it survives a restart where money
 *            moves (split, merge, redeem, cancels): before the handler runs, a pending record is committed;
 *            the answer is committed before it is sent. After a crash between the two, a replay is refused
 *            with PM_ERR_REPLAY_UNKNOWN (409), never run a second time.
 * An L1 replay from another client address than the first request's is refused (PM_ERR_L1_HEADERS): its
 * first answer is the secret, which a captured request must not fetch again; the client's own retry (same
 * address) gets it.
 * Answers that say nothing happened and invite a retry, 425, 429 and 503, are not remembered.
 *
 * The catch of a nonce-less scheme: two identical requests within the same second are one request. A bot
 * that sends `DELETE /cancel-all` twice in one second gets the first answer the second time; docs/http-api.md says
 * so ("Replays").
 */
import { apiError, type ApiError } from '../../domain/errors.ts';
import type { Store } from '../../journal/env.ts';
import { replayKeys } from '../../journal/keys.ts';
import type { Logger } from '../../runtime/log.ts';
import type { Outgoing } from '../http/answer.ts';

/** Bound of the answers remembered in memory, all keys together; past it the oldest are forgotten. */
export const MAX_REPLAY_BYTES = 64 * 1024 * 1024;
/** Answers larger than this are remembered as a short refusal instead (a cancel of thousands of orders). */
const MAX_ANSWER_BYTES = 64 * 1024;
const ENTRY_OVERHEAD = 200;

export type ReplayKind = 'none' | 'memory' | 'durable';

export type ReplayClaim =
  /** A new request: run it, then give its answer to `settle` (and wait for it) before answering. */
  | { kind: 'new'; settle(out: Outgoing): Promise<Outgoing> }
  /** A replay: answer this instead of running anything. */
  | { kind: 'replay'; answer: Outgoing | Promise<Outgoing> }
  | { kind: 'refused'; error: ApiError };

interface Entry {
  key: string;
  exp: number;
  /** L1: only the first request's client address gets the answer again. */
  ip: string | undefined;
  out: Outgoing | undefined;
  waiting: Promise<Outgoing> | undefined;
  bytes: number;
}

interface DurableRecord {
  exp: number;
  pending?: boolean;
  out?: Outgoing;
}

export interface ReplayStats {
  entries: number;
  bytes: number;
  replays: number;
  evicted: number;
}

export class ReplayGuard {
  private readonly entries = new Map<string, Entry>();
  /** Keys by expiry second, for the sweep. */
  private readonly byExpiry = new Map<number, string[]>();
  private bytes = 0;
  private replays = 0;
  private evicted = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: Store['replays'],
    private readonly nowSeconds: () => number,
    private readonly log: Logger,
    private readonly maxBytes = MAX_REPLAY_BYTES,
  ) {
    this.timer = setInterval(() => this.sweep(), 1000);
    this.timer.unref();
    this.sweep();
  }

  /** Claims `key` (valid until `exp`, unix seconds) for a request; see ReplayClaim. */
  claim(key: string, exp: number, kind: Exclude<ReplayKind, 'none'>, ip?: string): ReplayClaim | Promise<ReplayClaim> {
    const now = this.nowSeconds();
    const seen = this.entries.get(key);
    if (seen !== undefined && seen.exp >= now) {
      if (seen.ip !== undefined && seen.ip !== ip) return { kind: 'refused', error: apiError('PM_ERR_L1_HEADERS') };
      this.replays++;
      return { kind: 'replay', answer: seen.out ?? seen.waiting! };
    }
    if (kind === 'durable') {
      const rec = this.db.get(replayKeys.record(key)) as DurableRecord | undefined;
      if (rec !== undefined && rec.exp >= now) {
        this.replays++;
        if (rec.out === undefined) return { kind: 'refused', error: apiError('PM_ERR_REPLAY_UNKNOWN') };
        return { kind: 'replay', answer: rec.out };
      }
    }
    let resolve!: (out: Outgoing) => void;
    const entry: Entry = { key, exp, ip, out: undefined, waiting: new Promise<Outgoing>((r) => (resolve = r)), bytes: ENTRY_OVERHEAD + key.length };
    this.add(entry);
    const settle = async (out: Outgoing): Promise<Outgoing> => {
      const forget = out.status === 425 || out.status === 429 || out.status === 503;
      const kept = forget || Buffer.byteLength(out.body) <= MAX_ANSWER_BYTES ? out : tooLargeToKeep(out);
      if (kind === 'durable') {
        if (forget) await this.removeDurable(key, exp);
        else await this.db.put(replayKeys.record(key), { exp, out: kept } satisfies DurableRecord);
      }
      if (forget) this.remove(entry);
      else {
        entry.out = kept;
        entry.bytes += Buffer.byteLength(kept.body);
        this.bytes += Buffer.byteLength(kept.body);
        this.evict();
      }
      entry.waiting = undefined;
      resolve(out);
      return out;
    };
    if (kind === 'memory') return { kind: 'new', settle };
    // Durable: the pending record is committed before anything runs, so a crash cannot let a replay run it again.
    const pending: DurableRecord = { exp, pending: true };
    return Promise.all([this.db.put(replayKeys.record(key), pending), this.db.put(replayKeys.byExpiry(exp, key), 1)]).then(
      () => ({ kind: 'new', settle }) as ReplayClaim,
      (err: unknown) => {
        this.remove(entry);
        throw err;
      },
    );
  }

  stats(): ReplayStats {
    return { entries: this.entries.size, bytes: this.bytes, replays: this.replays, evicted: this.evicted };
  }

  close(): void {
    clearInterval(this.timer);
  }

  private add(e: Entry): void {
    this.entries.set(e.key, e);
    this.bytes += e.bytes;
    const list = this.byExpiry.get(e.exp);
    if (list) list.push(e.key);
    else this.byExpiry.set(e.exp, [e.key]);
    this.evict();
  }

  private remove(e: Entry): void {
    if (this.entries.get(e.key) !== e) return;
    this.entries.delete(e.key);
    this.bytes -= e.bytes;
  }

  /** Oldest first (Map order is claim order); a durable entry forgotten here is still read from LMDB. */
  private evict(): void {
    if (this.bytes <= this.maxBytes) return;
    for (const e of this.entries.values()) {
      if (this.bytes <= this.maxBytes) break;
      if (e.out === undefined) continue;
      this.remove(e);
      this.evicted++;
    }
  }

  private sweep(): void {
    const now = this.nowSeconds();
    for (const [exp, keys] of this.byExpiry) {
      if (exp >= now) continue;
      this.byExpiry.delete(exp);
      for (const k of keys) {
        const e = this.entries.get(k);
        if (e !== undefined && e.exp === exp && e.out !== undefined) this.remove(e);
      }
    }
    // Durable records whose window closed (also those a crash left behind).
    try {
      const gone: string[] = [];
      for (const { key } of this.db.getRange({ ...replayKeys.expired(now - 1), snapshot: false })) gone.push(String((key as (string | number)[])[2]));
      if (gone.length > 0) {
        void this.db.transaction(() => {
          for (const { key } of this.db.getRange({ ...replayKeys.expired(now - 1), snapshot: false })) this.db.remove(key as (string | number)[]);
          for (const k of gone) this.db.remove(replayKeys.record(k));
        });
      }
    } catch (err) {
      this.log.warn({ err }, 'replay sweep failed');
    }
  }

  private async removeDurable(key: string, exp: number): Promise<void> {
    await Promise.all([this.db.remove(replayKeys.record(key)), this.db.remove(replayKeys.byExpiry(exp, key))]);
  }
}

function tooLargeToKeep(out: Outgoing): Outgoing {
  return { status: 409, body: JSON.stringify({ error: 'duplicate request: this signed request was already answered' }) };
}
