/**
 * The sequencer's lease (cluster.failover; docs/decisions/scale-out.md, "A standby sequencer"): one key, `sequencer`,
 * in the JetStream KV bucket `<stream lowercased>_cluster`, holding `{node, url, term}` of the node that may
 * write. The bucket's TTL (nats-server 2.9 has only a bucket-wide one) removes the key when its holder stops
 * renewing it; the term is the fencing token every replication record of the holder carries (wire.ts).
 *
 *   taking it    `create`: succeeds for exactly one node, and only while the key is absent
 *   keeping it   `update(key, value, revision)` every renewMs, a compare-and-set on the last revision
 *   losing it    an update refused (another node holds the key), or no renewal succeeded for
 *                `ttlMs - renewMs` (a pause, a partition: stopped before the TTL lets another node in),
 *                told once through onLost; the holder must stop writing at once
 *   watching it  a standby reads the key every pollMs (2.9 leaves no delete marker when a key expires, so
 *                a watcher would not hear of it)
 *
 * The value is authenticated (docs/decisions/scale-out.md, "The cluster's threat model"): stored as JSON
 * `{node, url, term, mac}`, `mac` the base64 of seal.ts's `lease` authenticator over the bucket, the key and
 * the three fields, so only a node can write a value another node believes. A value whose authenticator fails
 * (written by someone who could reach the bucket without the nodes' key) is a forgery, counted
 * (`LeaseStore.forged`, /metrics `pm_lease_forged`) and logged, and it is nobody's lease:
 *   - no node names its URL (a replica's 421) or sends commands to its term (a gateway);
 *   - a holder whose renewal was refused because a forgery replaced its value writes its own back over it at
 *     once: a forged value never deposes the sequencer;
 *   - a sequencer starting up takes the key over a forgery; a standby does not take it from one (it takes
 *     the lease only once the key is absent, so a forgery cannot trigger a takeover while the holder lives).
 * The key's absence cannot be authenticated: deleting it or the bucket is kept from every role but the
 * sequencer's by NATS's permissions (tools/nats-config.ts).
 *
 * Only replication/ imports the NATS clients; the roles that use this are wired in cluster.ts.
 */
import { Kvm, type KV } from '@nats-io/kv';
import type { Logger } from '../runtime/log.ts';
import type { NatsLink } from './nats-link.ts';
import { RefusalLogger, type ClusterKeys } from './seal.ts';

export const LEASE_KEY = 'sequencer';
export const leaseBucketOf = (stream: string) => `${stream.toLowerCase()}_cluster`;

export interface LeaseValue {
  /** Names the node (its logs, the standbys' view of who holds it). */
  node: string;
  /** The holder's public URL: what a replica's 421 names. */
  url: string;
  term: number;
}

export interface LeaseTimes {
  /** The key's time to live once written (the bucket's TTL). */
  ttlMs: number;
  renewMs: number;
  pollMs: number;
}

const isValue = (v: unknown): v is LeaseValue =>
  typeof v === 'object' && v !== null && typeof (v as LeaseValue).node === 'string' && typeof (v as LeaseValue).url === 'string' && Number.isSafeInteger((v as LeaseValue).term) && (v as LeaseValue).term > 0;

/** What the key holds: an authentic holder, or a forgery (a value the nodes did not write) at its revision. */
export type LeaseRead = { value: LeaseValue; revision: number; forged?: undefined } | { forged: true; revision: number; value?: undefined };

/** The bucket: read, take and renew the key. */
export class LeaseStore {
  /** Forged values read, since start. */
  forged = 0;
  private lastForgedRevision = 0;
  private readonly forgeries: RefusalLogger | undefined;

  private constructor(
    private readonly kv: KV,
    private readonly keys: ClusterKeys,
    private readonly bucket: string,
    logger?: Logger,
  ) {
    this.forgeries = logger && new RefusalLogger((d, m) => logger.error(d, m));
  }

  /**
   * The bucket, created when missing if `create` (the sequencer's and standby's user may create it; a
   * gateway's or replica's only reads it, and reads nothing until a sequencer has created it).
   */
  static async open(link: NatsLink, stream: string, replicas: number, ttlMs: number, keys: ClusterKeys, logger?: Logger, create = true): Promise<LeaseStore> {
    const kvm = new Kvm(link.js);
    const kv = create ? await kvm.create(leaseBucketOf(stream), { history: 1, ttl: ttlMs, replicas }) : await kvm.open(leaseBucketOf(stream));
    return new LeaseStore(kv, keys, leaseBucketOf(stream), logger);
  }

  private macOf(v: LeaseValue): string {
    return this.keys.mac('lease', [this.bucket, LEASE_KEY, v.node, v.url, v.term]).toString('base64');
  }

  private encode(v: LeaseValue): string {
    return JSON.stringify({ node: v.node, url: v.url, term: v.term, mac: this.macOf(v) });
  }

  /** The holder and the key's revision; undefined when nobody holds it; `forged` when its value is not a node's. */
  async read(): Promise<LeaseRead | undefined> {
    const e = await this.kv.get(LEASE_KEY);
    if (e === null || e.operation !== 'PUT') return undefined;
    let v: unknown;
    try {
      v = e.json();
    } catch {
      v = undefined;
    }
    if (isValue(v)) {
      const value: LeaseValue = { node: v.node, url: v.url, term: v.term };
      const mac = (v as { mac?: unknown }).mac;
      if (typeof mac === 'string' && this.keys.verify('lease', Buffer.from(mac, 'base64'), [this.bucket, LEASE_KEY, value.node, value.url, value.term])) return { value, revision: e.revision };
    }
    // Counted once per revision however often it is read.
    if (e.revision !== this.lastForgedRevision) {
      this.lastForgedRevision = e.revision;
      this.forged++;
      this.forgeries?.refused('forged-lease', { revision: e.revision, bucket: this.bucket }, 'the sequencer lease holds a value not written by a node (forged): nobody\'s lease (counted: pm_lease_forged)');
    }
    return { forged: true, revision: e.revision };
  }

  /** Takes the key if nobody holds it: its revision, or undefined when another node does. */
  async create(value: LeaseValue): Promise<number | undefined> {
    try {
      return await this.kv.create(LEASE_KEY, this.encode(value));
    } catch (err) {
      if (/wrong last sequence|key exists/i.test((err as Error).message)) return undefined;
      throw err;
    }
  }

  /**
   * Takes the key if nobody holds it or a forgery does (written over at its revision, so a node that got there
   * first still wins): its revision, or undefined when another node holds it.
   */
  async take(value: LeaseValue, timeoutMs: number): Promise<number | undefined> {
    const cur = await this.read();
    if (cur === undefined) return this.create(value);
    return cur.forged === true ? this.update(value, cur.revision, timeoutMs) : undefined;
  }

  /** Renews the key at `revision`: the new revision, or undefined when the key moved (another holder). */
  async update(value: LeaseValue, revision: number, timeoutMs: number): Promise<number | undefined> {
    try {
      return await this.kv.update(LEASE_KEY, this.encode(value), revision, timeoutMs);
    } catch (err) {
      if (/wrong last sequence/i.test((err as Error).message)) return undefined;
      throw err;
    }
  }
}

/**
 * The holder's side: renews every renewMs and says once, through onLost, when the lease is gone (refused,
 * or not renewed for ttlMs - renewMs). Time is checked before every renewal and by a timer of its own, so
 * a process that was paused finds out as soon as it runs again, before it renews.
 */
export class LeaseHolder {
  private timer: NodeJS.Timeout | undefined;
  private lastRenewed: number;
  private lost: string | undefined;
  private renewing = false;

  constructor(
    private readonly store: LeaseStore,
    readonly value: LeaseValue,
    private revision: number,
    private readonly times: LeaseTimes,
    /** Told once, when the lease is lost; may be replaced while held (a standby hands the lease to its sequencer). */
    public onLost: (why: string) => void,
    private readonly logger: Logger,
  ) {
    this.lastRenewed = Date.now();
  }

  /** Why the lease was lost, once it was. */
  get lostBecause(): string | undefined {
    return this.lost;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), Math.max(10, Math.floor(this.times.renewMs / 4)));
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private lose(why: string): void {
    if (this.lost !== undefined) return;
    this.lost = why;
    this.stop();
    this.logger.error({ term: this.value.term, why }, 'sequencer lease lost: this node stops writing');
    this.onLost(why);
  }

  private async tick(): Promise<void> {
    if (this.lost !== undefined) return;
    const since = Date.now() - this.lastRenewed;
    if (since >= this.times.ttlMs - this.times.renewMs) return this.lose(`not renewed for ${since} ms`);
    if (this.renewing || since < this.times.renewMs) return;
    this.renewing = true;
    // The server writes the key after this moment, so its TTL runs out no sooner than ttlMs from it.
    const sent = Date.now();
    try {
      let rev = await this.store.update(this.value, this.revision, this.times.renewMs);
      if (this.lost !== undefined) return;
      if (rev === undefined) {
        // Refused: another node holds it, or a forgery replaced this holder's value (written back over it).
        const cur = await this.store.read();
        if (cur?.forged === true) rev = await this.store.update(this.value, cur.revision, this.times.renewMs);
        if (this.lost !== undefined) return;
        if (rev === undefined) return this.lose('another node holds the lease');
        this.logger.warn({ term: this.value.term }, 'a forged lease value replaced this holder\'s: written back over it');
      }
      this.revision = rev;
      this.lastRenewed = sent;
    } catch (err) {
      // Missed: the time check above ends the lease if this goes on.
      this.logger.warn({ err: (err as Error).message, term: this.value.term }, 'sequencer lease renewal failed');
    } finally {
      this.renewing = false;
    }
  }
}

/**
 * Reads the lease every pollMs (a replica, for the URL its 421 names; a standby, to see it lapse). Keeps
 * the last holder seen and the highest term seen; a read that fails leaves them as they were.
 */
export class LeaseWatcher {
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  /** The holder at the last read; undefined when nobody held it, a forgery did (or before the first read). */
  holder: LeaseValue | undefined;
  /** Whether the last read found the key absent (undefined before the first read); a forgery is not absence. */
  vacant: boolean | undefined;
  /** The highest term seen in the lease. */
  highestTerm = 0;

  constructor(
    private readonly store: LeaseStore,
    private readonly pollMs: number,
    private readonly onRead?: () => void,
  ) {}

  start(): void {
    void this.read();
    this.timer = setInterval(() => void this.read(), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async read(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const cur = await this.store.read();
      this.holder = cur?.value;
      this.vacant = cur === undefined;
      if (cur?.value !== undefined) this.highestTerm = Math.max(this.highestTerm, cur.value.term);
      this.onRead?.();
    } catch {
      // NATS away: what was seen stays; the next read tries again.
    } finally {
      this.reading = false;
    }
  }
}
