/**
 * Retention of the journal (issue 42): what happens to the journal below the oldest checkpoint kept, which
 * no proof needs any more (recovery.ts starts from a checkpoint). This module owns the archive format and
 * what is deleted; engine/checkpointer.ts decides where the line is and issues the deletes.
 *
 * What stays, whatever the policy: the `order` events (GET /data/order/{id} joins them with the order rows,
 * orders.ts) and the fills table (every trade read: /data/trades, wallet trades, builder trades read fills
 * by seq). From the line down they are read models, no longer a log. Everything else in the `journal`
 * table (status, trade, deposit, withdraw, split, merge, redeem, market, resolve events) is removed, by
 * policy:
 *   archive  first copied, with every order event and fill of the range, to a gzip file in the archive
 *            directory, so the whole journal can still be read and replayed (tools/journal-archive.ts);
 *   prune    removed without a copy: the checkpoints' chain of proofs is then the audit trail;
 *   keep     nothing removed (the journal grows as before).
 *
 * Archive file `journal-<from 12 digits>-<to 12 digits>.pmj.gz`, events from..to: concatenated gzip
 * members (gunzip reads them as one stream), each holding one msgpack value (plain msgpack, as the
 * checkpoints):
 *   first   {v: 1, kind: 'pm-journal-archive', from, to, store, createdAt}   store: the trade-id prefix
 *   then    chunks, each a msgpack bin whose bytes are the msgpack of {e: [seq, value][], f: [key, block][]}:
 *           up to CHUNK events each, in seq order, the journal table's values as stored (order and status
 *           records as bytes, other events as objects), and the fill blocks (codecs/fill-codec.ts) holding the
 *           range's fills, each block once, in key order
 *   last    {end: true, events, sha256}   events: journal table values; sha256: hex digest of every chunk's
 *           bytes, in order
 * Written to a temporary name, fsynced and renamed, like a checkpoint.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Packr } from 'msgpackr';
import type { FillEvent, JournalEvent } from '../domain/events.ts';
import { writeFileAtomic } from './durable-files.ts';
import type { Store } from './env.ts';
import { blockRecords, decodeFill } from './codecs/fill-codec.ts';
import { metaKeys } from './keys.ts';
import { ORDER_RECORD_KIND, journalEventOf } from './codecs/order-codec.ts';

export type RetentionPolicy = 'archive' | 'prune' | 'keep';

/** Events per archive chunk (one gzip member). */
const CHUNK = 8192;
const FILE = /^journal-(\d{12})-(\d{12})\.pmj\.gz$/;
const packr = new Packr({ useRecords: false, moreTypes: false });

export interface ArchiveRequest {
  /** Events after `after`, up to and including `to`, leave the journal. */
  after: number;
  to: number;
  policy: 'archive' | 'prune';
  /** Where archive files go (policy archive). */
  dir: string;
}

export interface ArchiveResult {
  /** The archive file written (policy archive). */
  file?: string;
  /** Journal table keys to remove: every event of the range but the `order` events. */
  remove: number[];
  events: number;
}

export class ArchiveError extends Error {}

/** Whether a journal table value is an `order` event (record or object): kept as a read model. */
export function isOrderValue(value: unknown): boolean {
  if (value instanceof Uint8Array) return value[0] === ORDER_RECORD_KIND;
  return (value as { type?: unknown }).type === 'order';
}

export const archiveFileName = (from: number, to: number) => `journal-${String(from).padStart(12, '0')}-${String(to).padStart(12, '0')}.pmj.gz`;

/**
 * Reads the journal's events after..to, writes them to an archive file (policy archive), and returns the
 * keys of the journal table to remove. Reads only: the removal is the caller's (a batch of removes per turn
 * on the main thread, engine/checkpointer.ts), after it has recorded the new line (meta journalPrunedTo).
 */
export function archiveJournal(store: Store, req: ArchiveRequest): ArchiveResult {
  const remove: number[] = [];
  let events = 0;
  const from = req.after + 1;
  if (req.to < from) return { remove, events };
  const members: Buffer[] = [];
  const digest = createHash('sha256');
  const write = req.policy === 'archive';
  if (write) members.push(gzipSync(packr.pack({ v: 1, kind: 'pm-journal-archive', from, to: req.to, store: store.meta.get(metaKeys.tradeIdPrefix), createdAt: Date.now() })));
  let e: Array<[number, unknown]> = [];
  let f: Array<[number, Uint8Array]> = [];
  const flush = () => {
    if (!write || (e.length === 0 && f.length === 0)) return;
    const body = packr.pack({ e, f });
    digest.update(body);
    // The chunk's bytes travel as one msgpack bin, so a reader digests exactly what was written.
    members.push(gzipSync(packr.pack(body), { level: 6 }));
    e = [];
    f = [];
  };
  for (const { key, value } of store.journal.getRange({ start: from, end: req.to + 1 })) {
    if (!isOrderValue(value)) remove.push(key);
    events++;
    if (write) {
      e.push([key, value]);
      if (e.length >= CHUNK) flush();
    }
  }
  if (write) {
    // The blocks holding the range's fills: the one holding `from` may start before it.
    let start = from;
    for (const key of store.fills.getKeys({ start: from, reverse: true, limit: 1 })) start = key;
    for (const { key, value } of store.fills.getRange({ start, end: req.to + 1 })) {
      f.push([key, Buffer.from(value)]);
      if (f.length >= CHUNK / 16) flush();
    }
    flush();
    members.push(gzipSync(packr.pack({ end: true, events, sha256: digest.digest('hex') })));
    mkdirSync(req.dir, { recursive: true });
    const name = archiveFileName(from, req.to);
    writeFileAtomic(req.dir, name, members);
    return { file: join(req.dir, name), remove, events };
  }
  return { remove, events };
}

/**
 * The lowest durable cursor of the store's projections (meta `projection:<name>`): their catch-up after a
 * crash reads the journal from there, so retention stays at or below it. Infinity when the store has none.
 */
export function projectionFloor(store: Store): number {
  const prefix = metaKeys.projectionCursor('');
  let floor = Number.POSITIVE_INFINITY;
  for (const { value } of store.meta.getRange({ start: prefix, end: prefix + '\uffff' })) {
    if (typeof value === 'number') floor = Math.min(floor, value);
  }
  return floor;
}

// ---- reading archives back (tools/journal-archive.ts, tests) ---------------------------------------------

export interface ArchiveEntry {
  file: string;
  from: number;
  to: number;
}

/** The archive files of a directory, oldest first; temporary files are removed. */
export function listArchives(dir: string): ArchiveEntry[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: ArchiveEntry[] = [];
  for (const n of names) {
    if (n.startsWith('.tmp-')) {
      rmSync(join(dir, n), { force: true });
      continue;
    }
    const m = FILE.exec(n);
    if (m !== null) out.push({ file: join(dir, n), from: Number(m[1]), to: Number(m[2]) });
  }
  return out.sort((a, b) => a.from - b.from);
}

export interface ArchiveHeader {
  v: number;
  kind: string;
  from: number;
  to: number;
  store: string;
  createdAt: number;
}

/**
 * Every event of an archive, in seq order (journal events and fills merged, as replay.ts readJournal
 * merges the two tables), checked: the header, the digest of the chunks, the count, and that the seqs run
 * from..to without a gap. Throws ArchiveError naming the file and the fault. Allocates the whole file.
 */
export function readArchive(file: string): { header: ArchiveHeader; events: JournalEvent[] } {
  let values: unknown[];
  try {
    values = packr.unpackMultiple(gunzipSync(readFileSync(file))) as unknown[];
  } catch (e) {
    throw new ArchiveError(`${file}: cannot be read (${(e as Error).message})`);
  }
  const header = values[0] as ArchiveHeader;
  const end = values[values.length - 1] as { end?: boolean; events?: number; sha256?: string };
  if (header?.kind !== 'pm-journal-archive' || header.v !== 1) throw new ArchiveError(`${file}: not a journal archive of format 1`);
  if (end?.end !== true) throw new ArchiveError(`${file}: truncated (no end record)`);
  const digest = createHash('sha256');
  const events: JournalEvent[] = [];
  const fills = new Map<number, FillEvent>();
  for (const bytes of values.slice(1, -1) as Uint8Array[]) {
    if (!(bytes instanceof Uint8Array)) throw new ArchiveError(`${file}: a chunk is not bytes`);
    digest.update(bytes);
    const chunk = packr.unpack(bytes) as { e: Array<[number, unknown]>; f: Array<[number, Uint8Array]> };
    for (const [seq, value] of chunk.e) events.push(journalEventOf(value, seq));
    for (const [, block] of chunk.f) {
      for (const rec of blockRecords(Buffer.from(block.buffer, block.byteOffset, block.byteLength))) {
        const fill = decodeFill(rec);
        if (fill.seq >= header.from && fill.seq <= header.to) fills.set(fill.seq, fill);
      }
    }
  }
  if (digest.digest('hex') !== end.sha256) throw new ArchiveError(`${file}: digest mismatch (the file is damaged)`);
  if (events.length !== end.events) throw new ArchiveError(`${file}: ${events.length} journal events, its end record says ${end.events}`);
  const merged: JournalEvent[] = [...events, ...fills.values()].sort((a, b) => a.seq - b.seq);
  for (let i = 0; i < merged.length; i++) {
    if (merged[i]!.seq !== header.from + i) throw new ArchiveError(`${file}: seq ${header.from + i} is missing`);
  }
  if (merged.length !== header.to - header.from + 1) throw new ArchiveError(`${file}: holds ${merged.length} events for seqs ${header.from}..${header.to}`);
  return { header, events: merged };
}
