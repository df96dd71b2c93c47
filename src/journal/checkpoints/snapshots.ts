/**
 * Snapshots: a whole store as a follower starts from it (issue 42), in a directory that is a DATA_DIR: an LMDB
 * compacting copy of the store (every table, read models included, so every read a replica serves is there
 * for the old history too) and a checkpoint at the copy's journal seq (so its start replays nothing). The
 * sequencer makes them and ships them through NATS (replication/snapshot-shipper.ts); a new or lagging
 * follower installs the newest one and applies the stream after it. This module owns the directory and the
 * manifest, and how a copy is finished (`sealCopy`) for either kind of snapshot (the state alone:
 * state-snapshot.ts); it knows nothing of NATS.
 *
 * Where a copy stands. lmdb-js copies the environment under one read transaction, so the copy is a committed
 * state. On a sequencer the replication log's records commit in rseq order except that a catalog transaction
 * may draw its rseq after a journal batch that commits after it (replication-log.ts, "Ordering"): the copy
 * then holds records past a gap. The snapshot stands at the end of the gapless prefix (`rseq`); the records
 * past it are removed from the copy's log and a follower applies them again from the stream, which is
 * harmless because those are catalog writes (tables no journal batch writes) re-applied in their order. The
 * copy's `replica:appliedRseq` is set to `rseq`, so a follower resumes after it.
 *
 * Manifest (JSON, shipped last, so a snapshot without one is incomplete and ignored):
 *   {v, kind?, floor?, name, rseq, lastRseq, journalSeq, stateHash, store, term?, createdAt, files: [{name, bytes, sha256}]}
 *   kind       `store` (absent: this module's whole copy) or `state` (state-snapshot.ts), with its `floor`
 *   lastRseq   the highest rseq the copy's store had written (the sequencer ships once the stream has it)
 *   stateHash  recovery.ts's, at journalSeq: what the installed store must prove to
 */
import { createHash } from 'node:crypto';
import { copyFileSync, createReadStream, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeCheckpoint } from './checkpoint-writer.ts';
import { AUTO_NAME, CheckpointStore, type CheckpointEntry } from './checkpoints.ts';
import { openStore, type Store } from '../env.ts';
import { metaKeys } from '../keys.ts';
import { verifyStore } from '../recovery.ts';

export const SNAPSHOT_FORMAT = 1;
/** The store file of a snapshot directory (LMDB's name for it). */
export const DATA_FILE = 'data.mdb';

export interface SnapshotFile {
  /** Path relative to the snapshot directory: `data.mdb` or `checkpoints/<file>`. */
  name: string;
  bytes: number;
  sha256: string;
}

export interface SnapshotManifest {
  v: number;
  /** What it holds (absent: a store, as every snapshot before state snapshots). */
  kind?: SnapshotKind;
  /** A state snapshot's history floor (meta `history:floor` of its store): its history ends at this journal seq. */
  floor?: number;
  name: string;
  rseq: number;
  lastRseq: number;
  journalSeq: number;
  stateHash: string;
  store: string;
  term?: number;
  createdAt: number;
  files: SnapshotFile[];
}

/**
 * store  the whole store: every table, the whole history (this module)
 * state  the state at its seq and nothing of the history before it (state-snapshot.ts)
 */
export type SnapshotKind = 'store' | 'state';
export const kindOf = (m: SnapshotManifest): SnapshotKind => m.kind ?? 'store';

export class SnapshotError extends Error {}

/** SHA-256 of a file, streamed. */
export async function fileSha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/**
 * Makes a snapshot of `store` as committed now in `dir` (created empty): the compacting copy, its log cut
 * at the gapless prefix, its applied rseq, and a checkpoint proved from `checkpoints`' newest one (the
 * replay of what followed it). Allocates the copy on disk; the proof runs on the calling thread.
 */
export async function takeSnapshot(store: Store, checkpoints: CheckpointStore, dir: string, name: string): Promise<SnapshotManifest> {
  emptyDir(dir);
  await store.root.backup(dir, true);
  const copy = openStore({ dataDir: dir });
  const journalSeq = (copy.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
  return sealCopy(copy, dir, checkpoints.list().find((e) => e.name === AUTO_NAME && e.seq <= journalSeq), name, {});
}

/** The last key of the gapless run that `keys` (ascending) begin with; undefined when there is none. */
export function gaplessEnd(keys: Iterable<number>): number | undefined {
  let end: number | undefined;
  for (const k of keys) {
    if (end !== undefined && k !== end + 1) break;
    end = k;
  }
  return end;
}

/**
 * Snapshots in the making (one shipped, one downloaded to install or to backfill from) are whole-store sized,
 * so they live under DATA_DIR/scratch, never beside it: an install renames their files into DATA_DIR on one
 * filesystem, and what a node killed half-way left is removed by its next start (`clearScratch`), not left
 * beside the store for ever.
 */
export const SCRATCH_DIR = 'scratch';

/** A new empty directory for snapshot work of `purpose`, under `dataDir`'s scratch. */
export function scratchDir(dataDir: string, purpose: 'ship' | 'install' | 'backfill'): string {
  mkdirSync(join(dataDir, SCRATCH_DIR), { recursive: true });
  return mkdtempSync(join(dataDir, SCRATCH_DIR, `${purpose}-`));
}

/** Removes every scratch directory under `dataDir`: called before a node starts anything that makes one. */
export function clearScratch(dataDir: string): void {
  rmSync(join(dataDir, SCRATCH_DIR), { recursive: true, force: true });
}

/** Creates `dir`, which must not hold anything yet. */
export function emptyDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
  if (readdirSync(dir).length > 0) throw new SnapshotError(`${dir} is not empty`);
}

/**
 * Finishes a snapshot whose store `copy` (open, in `dir`) was written: cuts its replication log at the
 * gapless prefix and records that rseq as applied, proves and writes its checkpoint from `base` (a
 * checkpoint of the source store that the copy holds the journal after; copied beside it), closes it and
 * digests its files. `extra`: what the manifest adds for its kind (state-snapshot.ts).
 */
export async function sealCopy(copy: Store, dir: string, base: CheckpointEntry | undefined, name: string, extra: Pick<SnapshotManifest, 'kind' | 'floor'>): Promise<SnapshotManifest> {
  try {
    // The log's keys (retention keeps it short): the gapless run from its first key, and what lies past a gap.
    const keys = [...copy.replication.getKeys({})] as number[];
    const rseq = gaplessEnd(keys) ?? 0;
    const lastRseq = keys.length > 0 ? keys[keys.length - 1]! : 0;
    let p: Promise<unknown> = Promise.resolve();
    for (const r of keys) if (r > rseq) p = copy.replication.remove(r);
    if (rseq > 0) p = copy.meta.put(metaKeys.replicaAppliedRseq, rseq);
    await p;
    const journalSeq = (copy.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
    // Its checkpoint, proved from the base: the replay of what the copy holds after it.
    const cs = new CheckpointStore(join(dir, 'checkpoints'));
    if (base !== undefined) copyFileSync(base.file, join(cs.dir, base.file.slice(base.file.lastIndexOf('/') + 1)));
    const w = writeCheckpoint(copy, cs, AUTO_NAME, { keep: 1 });
    const files: SnapshotFile[] = [];
    for (const f of [DATA_FILE, ...cs.list().map((e) => `checkpoints/${e.file.slice(e.file.lastIndexOf('/') + 1)}`)]) {
      files.push({ name: f, bytes: statSync(join(dir, f)).size, sha256: '' });
    }
    const term = copy.meta.get(metaKeys.replicationTerm) as number | undefined;
    const manifest: SnapshotManifest = {
      v: SNAPSHOT_FORMAT,
      ...extra,
      name,
      rseq,
      lastRseq,
      journalSeq,
      stateHash: w.stateHash,
      store: (copy.meta.get(metaKeys.tradeIdPrefix) as string | undefined) ?? '',
      ...(term !== undefined ? { term } : {}),
      createdAt: Date.now(),
      files,
    };
    await copy.close();
    rmSync(join(dir, 'lock.mdb'), { force: true });
    for (const f of manifest.files) f.sha256 = await fileSha256(join(dir, f.name));
    return manifest;
  } catch (e) {
    await copy.close().catch(() => undefined);
    throw e;
  }
}

/** The snapshot's format, and every file in `dir` of the manifest's size and digest; throws SnapshotError naming what differs. */
export async function checkFiles(dir: string, m: SnapshotManifest): Promise<void> {
  if (m.v !== SNAPSHOT_FORMAT) throw new SnapshotError(`snapshot ${m.name}: format ${m.v}, this build reads ${SNAPSHOT_FORMAT}`);
  for (const f of m.files) {
    const bytes = statSync(join(dir, f.name), { throwIfNoEntry: false })?.size;
    if (bytes !== f.bytes) throw new SnapshotError(`snapshot ${m.name}: ${f.name} has ${bytes ?? 'no'} bytes, the manifest says ${f.bytes}`);
    if ((await fileSha256(join(dir, f.name))) !== f.sha256) throw new SnapshotError(`snapshot ${m.name}: ${f.name} does not match its digest`);
  }
}

/**
 * Checks a downloaded snapshot in `dir` against its manifest (every file's size and digest; then the store,
 * opened, proves from its checkpoint to the manifest's state hash and stands at its rseq) and moves it into
 * place in `dataDir`: the store file and the checkpoints replace those there (a follower's store holds
 * nothing the stream and the snapshot do not; its other files, a generated master key, stay). Throws
 * SnapshotError, leaving `dataDir` untouched, when anything does not match.
 */
export async function installSnapshot(dir: string, dataDir: string, m: SnapshotManifest): Promise<void> {
  await checkFiles(dir, m);
  const store = openStore({ dataDir: dir });
  try {
    const v = verifyStore(store, { checkpoints: new CheckpointStore(join(dir, 'checkpoints')) });
    if (v.hash !== m.stateHash) throw new SnapshotError(`snapshot ${m.name}: its store proves to state hash ${v.hash}, the manifest says ${m.stateHash}`);
    const applied = (store.meta.get(metaKeys.replicaAppliedRseq) as number | undefined) ?? 0;
    if (applied !== m.rseq) throw new SnapshotError(`snapshot ${m.name}: its store stands at rseq ${applied}, the manifest says ${m.rseq}`);
    const floor = (store.meta.get(metaKeys.historyFloor) as number | undefined) ?? 0;
    if (floor !== (m.floor ?? 0)) throw new SnapshotError(`snapshot ${m.name}: its store's history floor is ${floor}, the manifest says ${m.floor ?? 0}`);
  } finally {
    await store.close();
  }
  mkdirSync(dataDir, { recursive: true });
  for (const f of [DATA_FILE, 'lock.mdb', 'checkpoints']) rmSync(join(dataDir, f), { recursive: true, force: true });
  renameSync(join(dir, DATA_FILE), join(dataDir, DATA_FILE));
  renameSync(join(dir, 'checkpoints'), join(dataDir, 'checkpoints'));
  rmSync(dir, { recursive: true, force: true });
}
