/**
 * How a file of the data directory reaches the disk for good, outside LMDB: checkpoints, named snapshots and
 * journal archives. A file is written under a temporary name in its directory, fsynced, renamed into place
 * and its directory fsynced, so a crash leaves either the old state or the whole new file, never half of one;
 * a temporary name (TMP_PREFIX) is what a crash can leave behind, and its owner removes those when it opens.
 * Owns those steps; which files, and when, is each caller's. Separate because three owners wrote the same
 * steps each, and a missed directory fsync is the kind of mistake that only a power cut shows.
 *
 * Synchronous: the callers are start-up, shutdown and their own worker or timer. Imports node:fs only.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Prefix of a temporary file or directory an atomic write uses: only a crash leaves one. */
export const TMP_PREFIX = '.tmp-';

/** A fresh temporary path in `dir` for `name` (TMP_PREFIX, the name, a random suffix). */
export const tmpPathIn = (dir: string, name: string): string => join(dir, `${TMP_PREFIX}${name}-${randomBytes(4).toString('hex')}`);

/** Fsyncs a directory: a rename or removal in it is durable once this returns. */
export function syncDir(dir: string): void {
  syncPath(dir, 'r');
}

/** Fsyncs a file already written. */
export function syncFile(file: string): void {
  syncPath(file, 'r+');
}

function syncPath(path: string, flags: string): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes `chunks` to `dir/file` atomically (temporary file, fsync, rename, directory fsync). */
export function writeFileAtomic(dir: string, file: string, chunks: readonly Uint8Array[]): void {
  const tmp = tmpPathIn(dir, file);
  const fd = openSync(tmp, 'w');
  try {
    for (const bytes of chunks) for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, Math.min(bytes.length - at, 1 << 20));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(dir, file));
  syncDir(dir);
}
