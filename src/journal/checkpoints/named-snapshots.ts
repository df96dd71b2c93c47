/**
 * Named snapshots of the whole exchange (issue 43, DESIGN section 13): what a bot's test suite saves and
 * reverts to, and the state files a team keeps in its repository. Each is a snapshot of journal/checkpoints/snapshots.ts
 * (the LMDB compacting copy of the whole store, every table and read model, plus a checkpoint at its journal
 * seq, so a start from it replays nothing), not a format of its own. This module owns the directory, the
 * names, the bound on their count, the copy into a data dir and the single-file packing; it knows nothing of
 * the service that runs on the store (src/node/revert.ts stops and reopens it).
 *
 * Layout: `<dataDir>/snapshots/<name>/` holds the snapshot directory (`data.mdb`, `checkpoints/`) and
 * `manifest.json` (journal/checkpoints/snapshots.ts SnapshotManifest: journal seq, state hash, every file's size and
 * SHA-256, time). A snapshot is made in `.tmp-<name>-<random>/`, its manifest written and fsynced last, and
 * the directory renamed to its name (then the parent fsynced): a crash (kill -9) at any point leaves either
 * no snapshot of that name or the whole one, plus at most a temporary directory, which is never listed and
 * is removed when the directory is next opened. A directory without a readable manifest is not listed.
 *
 * Names: 1-64 of [a-z0-9_-], starting with a letter or digit (lower case only: a case-insensitive file
 * system must not see two names as one). At most `max` snapshots are kept (config `sandbox.snapshots.max`);
 * a further one is refused until one is deleted, as is a name already taken.
 *
 * Packed (a state file, `.pmsnap`): the same snapshot in one file, for a repository.
 *
 *   offset  size  field
 *        0     8  magic "PMSNAP" 0x00 0x01
 *        8     4  manifest length m (u32 LE)
 *       12     m  manifest (JSON, as manifest.json)
 *   12 + m     .  each file of the manifest, in its order, its `bytes` bytes
 *
 * An unpacked file is checked against its manifest (sizes, digests, and the store's proof to the manifest's
 * state hash: snapshots.ts installSnapshot's checks) before it is listed; a directory given as a state file
 * (a snapshot directory copied out of a data dir) is checked the same way.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, copyFileSync, cpSync, createReadStream, existsSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'node:fs/promises';
import { CheckpointStore } from './checkpoints.ts';
import { TMP_PREFIX, syncDir, syncFile, tmpPathIn } from '../durable-files.ts';
import { openStore } from '../env.ts';
import { metaKeys } from '../keys.ts';
import { verifyStore } from '../recovery.ts';
import { DATA_FILE, SNAPSHOT_FORMAT, fileSha256, type SnapshotManifest } from './snapshots.ts';

export const SNAPSHOT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const SNAPSHOT_NAME_RULE = '1-64 of a-z, 0-9, _ and -, starting with a letter or a digit';
export const MANIFEST_FILE = 'manifest.json';
const PACK_MAGIC = Buffer.from([0x50, 0x4d, 0x53, 0x4e, 0x41, 0x50, 0x00, 0x01]); // "PMSNAP" 0 1
/** A manifest names a handful of files: more than this is not one. */
const MAX_MANIFEST_BYTES = 1 << 20;

/** A snapshot as listed. */
export interface SnapshotInfo {
  name: string;
  /** The journal seq it stands at: every event up to it is in its store. */
  journalSeq: number;
  stateHash: string;
  /** Bytes on disk (its store copy and checkpoint). */
  bytes: number;
  /** ms since the epoch, by the machine's clock, when it was taken. */
  createdAt: number;
}

/**
 * A named snapshot's manifest: journal/checkpoints/snapshots.ts's, plus what the store does not hold but a read shows:
 * each book's instant of last change (its `timestamp` and hash), valid when `seq` is the snapshot's journal
 * seq (nothing was committed between the two).
 */
export interface NamedManifest extends SnapshotManifest {
  books?: { seq: number; times: Array<[conditionId: string, ms: number]> };
}

export type NamedSnapshotProblem = 'name' | 'exists' | 'limit' | 'unknown' | 'damaged';

export class NamedSnapshotError extends Error {
  constructor(readonly problem: NamedSnapshotProblem, message: string) {
    super(message);
  }
}

const infoOf = (m: NamedManifest): SnapshotInfo => ({
  name: m.name,
  journalSeq: m.journalSeq,
  stateHash: m.stateHash,
  bytes: m.files.reduce((n, f) => n + f.bytes, 0),
  createdAt: m.createdAt,
});

function writeSynced(file: string, text: string): void {
  writeFileSync(file, text);
  syncFile(file);
}

/** The manifest of a snapshot directory, or undefined when it has none that reads as one. */
export function readManifest(dir: string): NamedManifest | undefined {
  try {
    const m = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as NamedManifest;
    if (typeof m !== 'object' || m === null || !Array.isArray(m.files) || !Number.isSafeInteger(m.journalSeq) || typeof m.name !== 'string') return undefined;
    return m;
  } catch {
    return undefined;
  }
}

/**
 * Checks a snapshot directory against its manifest: every file's size and digest, then its store proves
 * from its checkpoint to the manifest's state hash. Throws NamedSnapshotError('damaged') naming what differs.
 */
export async function verifySnapshotDir(dir: string, m: NamedManifest): Promise<void> {
  if (m.v !== SNAPSHOT_FORMAT) throw new NamedSnapshotError('damaged', `snapshot ${m.name}: format ${m.v}, this build reads ${SNAPSHOT_FORMAT}`);
  for (const f of m.files) {
    if (f.name.includes('..') || f.name.startsWith('/')) throw new NamedSnapshotError('damaged', `snapshot ${m.name}: file name ${JSON.stringify(f.name)}`);
    const bytes = statSync(join(dir, f.name), { throwIfNoEntry: false })?.size;
    if (bytes !== f.bytes) throw new NamedSnapshotError('damaged', `snapshot ${m.name}: ${f.name} has ${bytes ?? 'no'} bytes, the manifest says ${f.bytes}`);
    if ((await fileSha256(join(dir, f.name))) !== f.sha256) throw new NamedSnapshotError('damaged', `snapshot ${m.name}: ${f.name} does not match its digest`);
  }
  const store = openStore({ dataDir: dir });
  try {
    const v = verifyStore(store, { checkpoints: new CheckpointStore(join(dir, 'checkpoints')) });
    if (v.hash !== m.stateHash) throw new NamedSnapshotError('damaged', `snapshot ${m.name}: its store proves to state hash ${v.hash}, the manifest says ${m.stateHash}`);
    const seq = (store.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
    if (seq !== m.journalSeq) throw new NamedSnapshotError('damaged', `snapshot ${m.name}: its store stands at journal seq ${seq}, the manifest says ${m.journalSeq}`);
  } finally {
    await store.close();
  }
  rmSync(join(dir, 'lock.mdb'), { force: true });
}

/**
 * Copies a snapshot's store and checkpoints into `dataDir` in place of the store there (which must be
 * closed): each file copied beside its target, then renamed over it. `aside` keeps what was replaced
 * (`<file>.pre-revert`) so a failed start can put it back (restoreAside) or it can be dropped (dropAside).
 */
export function installCopy(snapshotDir: string, dataDir: string): void {
  mkdirSync(dataDir, { recursive: true });
  rmSync(join(dataDir, 'lock.mdb'), { force: true });
  for (const f of [DATA_FILE, 'checkpoints']) {
    const target = join(dataDir, f);
    rmSync(`${target}.pre-revert`, { recursive: true, force: true });
    if (existsSync(target)) renameSync(target, `${target}.pre-revert`);
  }
  const tmp = join(dataDir, `${DATA_FILE}.incoming`);
  // A reflink where the file system has them (a copy-on-write clone costs nothing), a copy elsewhere.
  copyFileSync(join(snapshotDir, DATA_FILE), tmp, constants.COPYFILE_FICLONE);
  renameSync(tmp, join(dataDir, DATA_FILE));
  cpSync(join(snapshotDir, 'checkpoints'), join(dataDir, 'checkpoints'), { recursive: true });
  syncDir(dataDir);
}

/** Puts back what installCopy set aside (a start on the snapshot failed). */
export function restoreAside(dataDir: string): void {
  rmSync(join(dataDir, 'lock.mdb'), { force: true });
  for (const f of [DATA_FILE, 'checkpoints']) {
    const target = join(dataDir, f);
    if (!existsSync(`${target}.pre-revert`)) continue;
    rmSync(target, { recursive: true, force: true });
    renameSync(`${target}.pre-revert`, target);
  }
}

/** Removes what installCopy set aside (the start on the snapshot succeeded). */
export function dropAside(dataDir: string): void {
  for (const f of [DATA_FILE, 'checkpoints']) rmSync(join(dataDir, `${f}.pre-revert`), { recursive: true, force: true });
}

export class NamedSnapshots {
  /** Names being taken now: a second take of one is refused before it copies anything. */
  private readonly taking = new Set<string>();

  /** Created when the first snapshot is taken: a data dir that never had one has no `snapshots/`. */
  constructor(readonly dir: string, readonly max: number) {
    // What a crash left half-made is never listed; removed here so it cannot accumulate.
    if (existsSync(dir)) for (const f of readdirSync(dir)) if (f.startsWith(TMP_PREFIX)) rmSync(join(dir, f), { recursive: true, force: true });
  }

  static checkName(name: string): void {
    if (!SNAPSHOT_NAME.test(name)) throw new NamedSnapshotError('name', `snapshot name ${JSON.stringify(name)}: ${SNAPSHOT_NAME_RULE}`);
  }

  /** Every complete snapshot, oldest first. Reads each manifest. */
  list(): SnapshotInfo[] {
    const out: SnapshotInfo[] = [];
    if (!existsSync(this.dir)) return out;
    for (const f of readdirSync(this.dir)) {
      if (!SNAPSHOT_NAME.test(f)) continue;
      const m = readManifest(join(this.dir, f));
      if (m !== undefined && m.name === f) out.push(infoOf(m));
    }
    return out.sort((a, b) => a.createdAt - b.createdAt || (a.name < b.name ? -1 : 1));
  }

  /** A snapshot's directory and manifest; NamedSnapshotError('unknown') when there is none of that name. */
  get(name: string): { dir: string; manifest: NamedManifest } {
    NamedSnapshots.checkName(name);
    const dir = join(this.dir, name);
    const manifest = readManifest(dir);
    if (manifest === undefined || manifest.name !== name) throw new NamedSnapshotError('unknown', `snapshot ${name} not found`);
    return { dir, manifest };
  }

  /** A name not taken: `snapshot-<n>`, n one past the highest in use. */
  freshName(): string {
    let n = 0;
    for (const s of this.list()) {
      const m = /^snapshot-(\d{1,9})$/.exec(s.name);
      if (m !== null) n = Math.max(n, Number(m[1]));
    }
    return `snapshot-${n + 1}`;
  }

  private checkRoom(name: string): void {
    NamedSnapshots.checkName(name);
    if (this.taking.has(name) || readManifest(join(this.dir, name)) !== undefined) throw new NamedSnapshotError('exists', `snapshot ${name} already exists`);
    if (this.list().length + this.taking.size >= this.max) throw new NamedSnapshotError('limit', `at most ${this.max} snapshots are kept (sandbox.snapshots.max): delete one first`);
  }

  /**
   * Takes snapshot `name`: `make` fills an empty directory (journal/checkpoints/snapshots.ts takeSnapshot, on the
   * checkpoint thread) and returns its manifest; then the manifest is written and the directory moved into
   * place. Nothing is listed until it is whole.
   */
  async take(name: string, make: (dir: string) => Promise<NamedManifest>): Promise<SnapshotInfo> {
    this.checkRoom(name);
    this.taking.add(name);
    mkdirSync(this.dir, { recursive: true });
    const tmp = tmpPathIn(this.dir, name);
    try {
      const manifest = await make(tmp);
      await this.place(tmp, name, manifest);
      return infoOf(manifest);
    } finally {
      this.taking.delete(name);
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  private async place(tmp: string, name: string, manifest: NamedManifest): Promise<void> {
    writeSynced(join(tmp, MANIFEST_FILE), JSON.stringify({ ...manifest, name }));
    syncDir(tmp);
    renameSync(tmp, join(this.dir, name));
    syncDir(this.dir);
  }

  /** Deletes a snapshot (NamedSnapshotError('unknown') when there is none): it stops being listed at once. */
  remove(name: string): void {
    const { dir } = this.get(name);
    const gone = tmpPathIn(this.dir, `gone-${name}`);
    renameSync(dir, gone);
    syncDir(this.dir);
    rmSync(gone, { recursive: true, force: true });
  }

  /** Writes snapshot `name` packed into one file (a state file), atomically (a temporary file, fsynced, renamed). */
  async pack(name: string, file: string): Promise<SnapshotInfo> {
    const { dir, manifest } = this.get(name);
    const head = Buffer.from(JSON.stringify(manifest));
    const len = Buffer.alloc(4);
    len.writeUInt32LE(head.length);
    const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
    // Opened first: a path that cannot be written is refused here, before a byte is read.
    const out = await open(tmp, 'w');
    try {
      await out.write(Buffer.concat([PACK_MAGIC, len, head]));
      for (const f of manifest.files) for await (const chunk of createReadStream(join(dir, f.name))) await out.write(chunk as Buffer);
      await out.sync();
      await out.close();
      renameSync(tmp, file);
    } catch (e) {
      await out.close().catch(() => undefined);
      rmSync(tmp, { force: true });
      throw e;
    }
    return infoOf(manifest);
  }

  /**
   * Adds a state file (packed, or a snapshot directory) as snapshot `name` (default: the name it was saved
   * under), checked whole before it is listed. NamedSnapshotError('damaged') when it does not check.
   */
  async importState(path: string, name?: string): Promise<SnapshotInfo> {
    const isDir = statSync(path).isDirectory();
    const manifest = stateManifest(path);
    const as = name ?? manifest.name;
    this.checkRoom(as);
    this.taking.add(as);
    mkdirSync(this.dir, { recursive: true });
    const tmp = tmpPathIn(this.dir, as);
    try {
      mkdirSync(tmp);
      if (isDir) for (const f of manifest.files) cpSync(join(path, f.name), join(tmp, f.name), { recursive: true });
      else unpack(path, tmp);
      await verifySnapshotDir(tmp, manifest);
      await this.place(tmp, as, manifest);
      return infoOf({ ...manifest, name: as });
    } finally {
      this.taking.delete(as);
      rmSync(tmp, { recursive: true, force: true });
    }
  }
}

/** The manifest of a state file: a snapshot directory's, or a packed file's. NamedSnapshotError('damaged') when it has none. */
export function stateManifest(path: string): NamedManifest {
  const manifest = statSync(path).isDirectory() ? readManifest(path) : readPackedManifest(path).manifest;
  if (manifest === undefined) throw new NamedSnapshotError('damaged', `${path}: not a snapshot directory (no ${MANIFEST_FILE})`);
  return manifest;
}

function readPackedManifest(file: string): { manifest: NamedManifest; offset: number } {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(12);
    if (readSync(fd, head, 0, 12, 0) !== 12 || !head.subarray(0, 8).equals(PACK_MAGIC)) throw new NamedSnapshotError('damaged', `${file}: not a packed snapshot`);
    const m = head.readUInt32LE(8);
    if (m > MAX_MANIFEST_BYTES) throw new NamedSnapshotError('damaged', `${file}: manifest of ${m} bytes`);
    const body = Buffer.alloc(m);
    if (readSync(fd, body, 0, m, 12) !== m) throw new NamedSnapshotError('damaged', `${file}: truncated`);
    let manifest: NamedManifest;
    try {
      manifest = JSON.parse(body.toString('utf8')) as NamedManifest;
    } catch {
      throw new NamedSnapshotError('damaged', `${file}: its manifest is not JSON`);
    }
    if (typeof manifest !== 'object' || manifest === null || !Array.isArray(manifest.files)) throw new NamedSnapshotError('damaged', `${file}: its manifest lists no files`);
    return { manifest, offset: 12 + m };
  } finally {
    closeSync(fd);
  }
}

/** Writes a packed file's members into `dir` (sizes from its manifest; checked afterwards by the caller). */
function unpack(file: string, dir: string): void {
  const { manifest, offset } = readPackedManifest(file);
  const total = statSync(file).size;
  const fd = openSync(file, 'r');
  try {
    let at = offset;
    const buf = Buffer.alloc(1 << 20);
    for (const f of manifest.files) {
      if (f.name.includes('..') || f.name.startsWith('/') || !Number.isSafeInteger(f.bytes) || f.bytes < 0) throw new NamedSnapshotError('damaged', `${file}: member ${JSON.stringify(f.name)}`);
      if (at + f.bytes > total) throw new NamedSnapshotError('damaged', `${file}: truncated in ${f.name}`);
      const target = join(dir, f.name);
      mkdirSync(join(target, '..'), { recursive: true });
      const out = openSync(target, 'w');
      try {
        for (let left = f.bytes; left > 0; ) {
          const n = readSync(fd, buf, 0, Math.min(buf.length, left), at);
          if (n <= 0) throw new NamedSnapshotError('damaged', `${file}: truncated in ${f.name}`);
          for (let w = 0; w < n; ) w += writeSync(out, buf, w, n - w);
          at += n;
          left -= n;
        }
      } finally {
        closeSync(out);
      }
    }
    if (at !== total) throw new NamedSnapshotError('damaged', `${file}: ${total - at} bytes past its last member`);
  } finally {
    closeSync(fd);
  }
}
