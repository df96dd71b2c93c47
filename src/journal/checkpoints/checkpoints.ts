/**
 * Checkpoints: the replay's state at a journal seq, stored as files, named, with a digest. This module owns
 * the file format and the directory; journal/recovery.ts owns what the state means (it proves the tables
 * from it and continues the replay after it), engine/checkpointer.ts decides when one is written.
 *
 * What a checkpoint holds (CheckpointState): what `replayJournal` knows after applying events 1..seq, no
 * more: balances held, the open orders with their `order` events as the journal stores them (record bytes,
 * or the object) and the units each has left, market resolutions, the trades still settling with their
 * fills, net deposits and each token's last trade. The header carries the state hash of those (recovery.ts
 * hashState), which a loaded state must reproduce, and the trade-id prefix of the store it was taken from
 * (drawn when a store is created): a checkpoint is only ever used on that store or a copy of it.
 *
 * File (`<dir>/<seq, 12 digits>.<name>.ckpt`):
 *
 *   offset  size  field
 *        0     8  magic "PMCKPT" 0x00 0x01
 *        8     4  header length h (u32 LE)
 *       12     h  header: msgpack {v, name, seq, stateHash, store, createdAt, events, rseq?}
 *   12 + h     b  state: msgpack CheckpointState
 *    end-32   32  SHA-256 of every byte before it
 *
 * Plain msgpack (no records, no extensions), like the replication wire: any msgpack decoder reads it. The
 * digest covers header and state, so a flipped bit anywhere is refused (it would otherwise decode as
 * another number). A reader checks, in order: the magic, the digest, the format version, the header's
 * name and seq against the file name. Every failure throws CheckpointError naming the file and what is
 * wrong; the caller (recovery.ts) then tries an older checkpoint.
 *
 * Writing is atomic: the bytes go to `.tmp-<name>-<random>` in the same directory, are fsynced, renamed to
 * the final name and the directory fsynced. A crash at any point leaves either the old set of files or the
 * new one, plus at most a temporary file, which is never read and is removed when the directory is next
 * opened. Names: 1-64 of [a-z0-9_-]; `auto` is the name of the checkpoints the engine writes on its own
 * (the newest `keep` of them are kept, `pruneAuto`), any other name is kept until removed.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Packr } from 'msgpackr';
import type { FillEvent, TradeStatusName } from '../../domain/events.ts';
import { TMP_PREFIX, syncDir, writeFileAtomic } from '../durable-files.ts';

/** Format version written; a reader refuses any other. */
export const CHECKPOINT_FORMAT = 1;
/** The name of the checkpoints the engine writes by policy. */
export const AUTO_NAME = 'auto';

const MAGIC = Buffer.from([0x50, 0x4d, 0x43, 0x4b, 0x50, 0x54, 0x00, 0x01]); // "PMCKPT" 0 1
const DIGEST_BYTES = 32;
const NAME = /^[a-z0-9_-]{1,64}$/;
const FILE = /^(\d{12})\.([a-z0-9_-]{1,64})\.ckpt$/;

const packr = new Packr({ useRecords: false, moreTypes: false });

/** The replay's state after applying journal events 1..seq (replay.ts builds it, recovery.ts reads it). */
export interface CheckpointState {
  seq: number;
  netDeposits: number;
  /** Every non-zero balance: units held (available + reserved + pending). */
  balances: Array<[wallet: string, asset: string, held: number]>;
  /** Every market the journal created, -1 while trading, else the winning outcome. */
  markets: Array<[conditionId: string, resolved: number]>;
  /** Every order open at `seq`: its `order` event as the journal table stores it, and the units it has left. */
  open: Array<[seq: number, remaining: number, event: unknown]>;
  /** Every trade not settled for good, with its fill: status MATCHED, RETRYING or MINED. */
  settling: Array<[status: TradeStatusName, fill: FillEvent]>;
  /** Each token's newest fill: price and the side it is reported with. */
  lastTrades: Array<[tokenId: string, pricePips: number, side: 'BUY' | 'SELL']>;
}

export interface CheckpointHeader {
  v: number;
  name: string;
  seq: number;
  /** state-hash.ts hashState of the state: what a loaded state must reproduce. */
  stateHash: string;
  /** The trade-id prefix of the store it was taken from (meta `tradeIdPrefix`). */
  store: string;
  /** ms since the epoch when it was written. */
  createdAt: number;
  /** Journal events its state covers (seq, unless the store's journal started elsewhere). */
  events: number;
  /** ROLE=sequencer, replica, standby: the replication sequence the store stood at, if known. */
  rseq?: number;
}

/** A checkpoint file as listed: what its name says, before anything is read. */
export interface CheckpointEntry {
  file: string;
  name: string;
  seq: number;
}

export interface Checkpoint {
  header: CheckpointHeader;
  state: CheckpointState;
}

export class CheckpointError extends Error {}

/** Encodes a checkpoint file's bytes. Allocates the whole file. */
export function encodeCheckpoint(header: Omit<CheckpointHeader, 'v'>, state: CheckpointState): Buffer {
  if (!NAME.test(header.name)) throw new CheckpointError(`checkpoint name ${JSON.stringify(header.name)}: 1-64 of a-z, 0-9, _ and -`);
  if (header.seq !== state.seq) throw new CheckpointError(`header seq ${header.seq} differs from the state's ${state.seq}`);
  const head = packr.pack({ v: CHECKPOINT_FORMAT, ...header });
  const body = packr.pack(state);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length);
  const bytes = Buffer.concat([MAGIC, len, head, body, Buffer.alloc(DIGEST_BYTES)]);
  const end = bytes.length - DIGEST_BYTES;
  createHash('sha256').update(bytes.subarray(0, end)).digest().copy(bytes, end);
  return bytes;
}

/** Decodes and checks a checkpoint file's bytes; `what` names it in errors. */
export function decodeCheckpoint(bytes: Buffer, what: string): Checkpoint {
  const header = decodeHeader(bytes, what);
  const end = bytes.length - DIGEST_BYTES;
  if (!createHash('sha256').update(bytes.subarray(0, end)).digest().equals(bytes.subarray(end))) throw new CheckpointError(`${what}: digest mismatch (the file is damaged)`);
  let state: CheckpointState;
  try {
    state = packr.unpack(bytes.subarray(12 + bytes.readUInt32LE(8), end)) as CheckpointState;
  } catch (e) {
    throw new CheckpointError(`${what}: state is not msgpack (${(e as Error).message})`);
  }
  checkState(state, header, what);
  return { header, state };
}

function decodeHeader(bytes: Buffer, what: string): CheckpointHeader {
  if (bytes.length < MAGIC.length + 4 + DIGEST_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) throw new CheckpointError(`${what}: not a checkpoint file`);
  const h = bytes.readUInt32LE(8);
  if (12 + h > bytes.length - DIGEST_BYTES) throw new CheckpointError(`${what}: truncated`);
  let header: CheckpointHeader;
  try {
    header = packr.unpack(bytes.subarray(12, 12 + h)) as CheckpointHeader;
  } catch (e) {
    throw new CheckpointError(`${what}: header is not msgpack (${(e as Error).message})`);
  }
  if (typeof header !== 'object' || header === null) throw new CheckpointError(`${what}: header is not an object`);
  if (header.v !== CHECKPOINT_FORMAT) throw new CheckpointError(`${what}: format ${JSON.stringify(header.v)}, this build reads ${CHECKPOINT_FORMAT}`);
  if (!Number.isSafeInteger(header.seq) || header.seq < 0 || typeof header.stateHash !== 'string' || typeof header.store !== 'string' || typeof header.name !== 'string') {
    throw new CheckpointError(`${what}: header fields are damaged`);
  }
  return header;
}

function checkState(s: CheckpointState, h: CheckpointHeader, what: string): void {
  const arrays = [s?.balances, s?.markets, s?.open, s?.settling, s?.lastTrades];
  if (typeof s !== 'object' || s === null || s.seq !== h.seq || !Number.isSafeInteger(s.netDeposits) || arrays.some((a) => !Array.isArray(a))) {
    throw new CheckpointError(`${what}: state does not match its header or is damaged`);
  }
}

/** The file name of a checkpoint: its seq first, so names sort by seq. */
export const checkpointFileName = (seq: number, name: string) => `${String(seq).padStart(12, '0')}.${name}.ckpt`;

/**
 * The checkpoints of one store: a directory (`DATA_DIR/checkpoints`). Synchronous file operations: the
 * engine calls it at start-up and its worker thread (checkpoint-worker.ts) writes; the files are state-sized.
 */
export class CheckpointStore {
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    // What a crash left half-written is never read; removed here so it cannot accumulate.
    for (const f of readdirSync(dir)) if (f.startsWith(TMP_PREFIX)) rmSync(join(dir, f), { force: true });
  }

  /** Every checkpoint file, newest (highest seq) first; for equal seqs, by name. Reads no file. */
  list(): CheckpointEntry[] {
    const out: CheckpointEntry[] = [];
    for (const f of readdirSync(this.dir)) {
      const m = FILE.exec(f);
      if (m !== null) out.push({ file: join(this.dir, f), name: m[2]!, seq: Number(m[1]) });
    }
    return out.sort((a, b) => b.seq - a.seq || (a.name < b.name ? -1 : 1));
  }

  /** Reads and checks one checkpoint (CheckpointError when damaged). */
  load(e: CheckpointEntry): Checkpoint {
    let bytes: Buffer;
    try {
      bytes = readFileSync(e.file);
    } catch (err) {
      throw new CheckpointError(`${e.file}: ${(err as Error).message}`);
    }
    const c = decodeCheckpoint(bytes, e.file);
    if (c.header.seq !== e.seq || c.header.name !== e.name) throw new CheckpointError(`${e.file}: its header says ${c.header.name} at seq ${c.header.seq}`);
    return c;
  }

  /** The header of one checkpoint, without checking the digest (listings). */
  header(e: CheckpointEntry): CheckpointHeader {
    return decodeHeader(readFileSync(e.file), e.file);
  }

  /** Writes a checkpoint under `header.name` (replacing one of the same name and seq). */
  write(header: Omit<CheckpointHeader, 'v'>, state: CheckpointState): CheckpointEntry {
    const file = checkpointFileName(header.seq, header.name);
    writeFileAtomic(this.dir, file, [encodeCheckpoint(header, state)]);
    return { file: join(this.dir, file), name: header.name, seq: header.seq };
  }

  /** Removes every checkpoint named `name` (or only the one at `seq`); how many went. */
  remove(name: string, seq?: number): number {
    let n = 0;
    for (const e of this.list()) {
      if (e.name !== name || (seq !== undefined && e.seq !== seq)) continue;
      rmSync(e.file, { force: true });
      n++;
    }
    if (n > 0) syncDir(this.dir);
    return n;
  }

  /** Keeps the newest `keep` automatic checkpoints and removes the older ones; returns those removed. */
  pruneAuto(keep: number): CheckpointEntry[] {
    const auto = this.list().filter((e) => e.name === AUTO_NAME);
    const gone = auto.slice(Math.max(keep, 1));
    for (const e of gone) rmSync(e.file, { force: true });
    if (gone.length > 0) syncDir(this.dir);
    return gone;
  }

  /** Copies a checkpoint, checked first, to `file` (a state file an operator or a test keeps). */
  exportTo(e: CheckpointEntry, file: string): void {
    this.load(e);
    copyFileSync(e.file, file);
  }

  /**
   * Adds the checkpoint in `file` (checked) to this directory, under `name` if given: the header is
   * rewritten with the new name and the digest recomputed, the state untouched.
   */
  importFrom(file: string, name?: string): CheckpointEntry {
    const c = decodeCheckpoint(readFileSync(file), file);
    const { v: _v, ...header } = c.header;
    return this.write({ ...header, name: name ?? header.name }, c.state);
  }
}
