/**
 * Snapshots in NATS (issue 42): the JetStream object store `<stream lowercased>_snapshots` holds the
 * snapshots the sequencer ships (journal/checkpoints/snapshots.ts: a store's compacting copy and its checkpoint) for the
 * followers that start from one. One object per file, named `<snapshot>/<file>`, and the manifest last, as
 * `<snapshot>/manifest` (JSON): a snapshot without a manifest is a shipment that did not finish (a crash, a
 * lost lease) and is never fetched; the shipper deletes it, and the chunks an upload killed midway left
 * without an object, once a newer one is complete.
 *
 * Integrity and authenticity: the object store keeps a SHA-256 of each object and the client checks it as it
 * reads; the manifest carries every file's SHA-256 again, checked once the file is on disk, and the installed
 * store must prove to the manifest's state hash (journal/checkpoints/snapshots.ts installSnapshot). The manifest object is
 * authenticated by the nodes' key (replication/seal.ts, purpose `snapshots`, bound to the bucket and the
 * snapshot's name), and since it names every file's digest, that authenticates the whole snapshot: anyone who
 * can write to the bucket can make a follower download junk, never install it. A manifest that does not verify
 * (forged, damaged, another cluster's) is no snapshot: `list` leaves it out and counts it (`forged`).
 *
 * The manifest object's bytes (this module's format): `{"mac": <hex HMAC>, "manifest": <the manifest's JSON
 * text>}`, the HMAC over the manifest's text exactly as stored.
 *
 * Snapshot names sort by what they hold: `s<rseq, 12 digits>-<ms since the epoch>`, and `-state` after a state
 * snapshot's (journal/checkpoints/state-snapshot.ts). Each kind is kept and listed on its own.
 */
import { createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { Objm, StorageType, type ObjectStore } from '@nats-io/obj';
import { kindOf, type SnapshotKind, type SnapshotManifest } from '../journal/checkpoints/snapshots.ts';
import type { NatsLink } from './nats-link.ts';
import type { ClusterKeys } from './seal.ts';

/** Object chunks: the object store's default size, well under NATS's default 1 MB payload. */
const CHUNK_BYTES = 128 * 1024;
const MANIFEST = 'manifest';

export const snapshotBucketOf = (stream: string) => `${stream.toLowerCase()}_snapshots`;
export const snapshotNameOf = (rseq: number, at: number, of: SnapshotKind = 'store') => `s${String(rseq).padStart(12, '0')}-${at}${of === 'state' ? '-state' : ''}`;

const newestFirst = (a: SnapshotManifest, b: SnapshotManifest) => b.rseq - a.rseq || b.createdAt - a.createdAt;

export class SnapshotBucket {
  /** Manifest objects refused (`<snapshot>/manifest` names with the revision seen), distinct. */
  private readonly refusedManifests = new Set<string>();

  private constructor(
    private readonly os: ObjectStore,
    private readonly link: NatsLink,
    private readonly name: string,
    private readonly keys: ClusterKeys,
    private readonly onForged: (object: string, why: string) => void,
  ) {}

  /**
   * The sequencer's: opens the bucket, creating it (file storage, the stream's replication factor) when
   * missing. `onForged` hears of each manifest refused, once.
   */
  static async create(link: NatsLink, stream: string, replicas: number, keys: ClusterKeys, onForged: (object: string, why: string) => void = () => undefined): Promise<SnapshotBucket> {
    const name = snapshotBucketOf(stream);
    return new SnapshotBucket(await new Objm(link.js).create(name, { storage: StorageType.File, replicas }), link, name, keys, onForged);
  }

  /** A follower's: opens the bucket, undefined when there is none (nothing shipped yet). Never creates it. */
  static async open(link: NatsLink, stream: string, keys: ClusterKeys, onForged: (object: string, why: string) => void = () => undefined): Promise<SnapshotBucket | undefined> {
    const name = snapshotBucketOf(stream);
    try {
      return new SnapshotBucket(await new Objm(link.js).open(name), link, name, keys, onForged);
    } catch (err) {
      if (/not found/i.test((err as Error).message)) return undefined;
      throw err;
    }
  }

  /** Manifests refused as not authenticated by the nodes' key, distinct, since this bucket was opened. */
  get forged(): number {
    return this.refusedManifests.size;
  }

  private manifestParts(snapshot: string): string[] {
    return ['snapshot-manifest', this.name, snapshot];
  }

  /** The manifest object's bytes: the manifest's text and its authenticator (header). */
  private sealManifest(m: SnapshotManifest): Uint8Array {
    const text = JSON.stringify(m);
    const mac = this.keys.mac('snapshots', this.manifestParts(m.name), Buffer.from(text, 'utf8')).toString('hex');
    return new TextEncoder().encode(JSON.stringify({ mac, manifest: text }));
  }

  /** The manifest in the object `object`'s bytes, or why it is refused. */
  private openManifest(object: string, bytes: Uint8Array): SnapshotManifest | string {
    const snapshot = object.slice(0, object.lastIndexOf('/'));
    let env: { mac?: unknown; manifest?: unknown };
    try {
      env = JSON.parse(new TextDecoder().decode(bytes)) as typeof env;
    } catch {
      return 'not JSON';
    }
    if (typeof env !== 'object' || env === null || typeof env.mac !== 'string' || typeof env.manifest !== 'string' || !/^[0-9a-f]{64}$/.test(env.mac)) return 'no authenticator';
    if (!this.keys.verify('snapshots', Buffer.from(env.mac, 'hex'), this.manifestParts(snapshot), Buffer.from(env.manifest, 'utf8'))) return 'its authenticator does not verify (not written by a node of this cluster, or altered)';
    let m: SnapshotManifest;
    try {
      m = JSON.parse(env.manifest) as SnapshotManifest;
    } catch {
      return 'an authenticated manifest that does not parse';
    }
    return m.name === snapshot ? m : `it names snapshot ${String(m.name)}`;
  }

  /** Uploads the files of snapshot `m` from `dir`, then its manifest: complete from then on. */
  async publish(dir: string, m: SnapshotManifest): Promise<void> {
    for (const f of m.files) {
      const data = Readable.toWeb(createReadStream(join(dir, f.name), { highWaterMark: CHUNK_BYTES })) as unknown as ReadableStream<Uint8Array>;
      await this.os.put({ name: `${m.name}/${f.name}`, options: { max_chunk_size: CHUNK_BYTES } }, data, { timeout: 30_000 });
    }
    await this.os.putBlob({ name: `${m.name}/${MANIFEST}` }, this.sealManifest(m));
  }

  /** The complete snapshots whose manifest is authentic, newest (highest rseq) first. */
  async list(): Promise<SnapshotManifest[]> {
    const out: SnapshotManifest[] = [];
    for (const info of await this.os.list()) {
      if (!info.name.endsWith(`/${MANIFEST}`)) continue;
      const bytes = await this.os.getBlob(info.name);
      if (bytes === null) continue;
      const m = this.openManifest(info.name, bytes);
      if (typeof m !== 'string') {
        out.push(m);
        continue;
      }
      const seen = `${info.name}@${info.revision}`;
      if (!this.refusedManifests.has(seen)) {
        this.refusedManifests.add(seen);
        this.onForged(info.name, m);
      }
    }
    return out.sort(newestFirst);
  }

  /**
   * Downloads snapshot `m`'s files into `dir`; the object store checks each object's digest as it is read.
   * `stopped`, asked between chunks, abandons the download (throws).
   */
  async fetch(m: SnapshotManifest, dir: string, stopped: () => boolean = () => false): Promise<void> {
    for (const f of m.files) {
      const r = await this.os.get(`${m.name}/${f.name}`);
      if (r === null) throw new Error(`snapshot ${m.name}: object ${f.name} is missing`);
      const file = join(dir, f.name);
      mkdirSync(dirname(file), { recursive: true });
      const out = createWriteStream(file);
      const reader = r.data.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (stopped()) {
          await reader.cancel().catch(() => undefined);
          out.destroy();
          throw new Error(`snapshot ${m.name}: download stopped`);
        }
        if (!out.write(value)) await new Promise<void>((res) => out.once('drain', () => res()));
      }
      await new Promise<void>((res, rej) => out.end((err?: Error | null) => (err ? rej(err) : res())));
      const err = await r.error;
      if (err) throw new Error(`snapshot ${m.name}: ${f.name}: ${err.message}`);
    }
  }

  /**
   * Chunks no object owns: what an upload killed before its object's metadata was written left in the
   * bucket's stream (the object store writes an object's metadata after its last chunk, and only a client
   * that lives to see a failure removes its chunks). Subject names `$O.<bucket>.C.<nuid>`.
   */
  async orphanChunks(): Promise<string[]> {
    const info = await this.link.jsm.streams.info(`OBJ_${this.name}`, { subjects_filter: `$O.${this.name}.C.>` });
    const live = new Set((await this.os.list()).map((i) => i.nuid));
    return Object.keys(info.state.subjects ?? {}).filter((subject) => !live.has(subject.slice(subject.lastIndexOf('.') + 1)));
  }

  /**
   * Keeps the newest `keep` complete snapshots of each kind: deletes the objects of older ones, of snapshots
   * whose manifest is refused (forged), of unfinished shipments older than the newest complete one, and the
   * chunks no object owns. Call it when no upload of this bucket is under way (the shipper does, right after
   * its own). Returns the snapshots kept, newest (highest rseq) first: the last is the one the stream must go
   * back to.
   */
  async prune(keep: number): Promise<SnapshotManifest[]> {
    for (const subject of await this.orphanChunks()) await this.link.jsm.streams.purge(`OBJ_${this.name}`, { filter: subject });
    const complete = await this.list();
    const n = Math.max(1, keep);
    const kept = [...complete.filter((m) => kindOf(m) === 'store').slice(0, n), ...complete.filter((m) => kindOf(m) === 'state').slice(0, n)].sort(newestFirst);
    const keepNames = new Set(kept.map((m) => m.name));
    const newest = kept[0]?.name ?? '';
    const objects = await this.os.list();
    const withManifest = new Set(objects.filter((i) => i.name.endsWith(`/${MANIFEST}`)).map((i) => i.name.slice(0, i.name.lastIndexOf('/'))));
    for (const info of objects) {
      const name = info.name.slice(0, info.name.indexOf('/'));
      if (keepNames.has(name)) continue;
      // An unfinished shipment (no manifest yet) newer than the newest complete one may still be on its way.
      if (name > newest && !withManifest.has(name)) continue;
      await this.os.delete(info.name);
    }
    return kept;
  }

  /** Bytes the bucket holds (its stream's). */
  async bytes(): Promise<number> {
    return (await this.os.status()).size;
  }
}
