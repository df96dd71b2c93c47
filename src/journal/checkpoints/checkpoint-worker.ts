/**
 * The checkpoint thread (started by engine/checkpointer.ts): it opens the store's environment (lmdb-js shares
 * it with the main thread) and runs, one at a time, what would otherwise stall the main thread for as long as
 * it takes: a checkpoint's proof (checkpoint-writer.ts: the replay of the events since the last checkpoint,
 * about 8 µs an event on this machine), the reading and compressing of journal archives (retention.ts) and
 * the copy and digests of a snapshot.
 *
 * Priority: the thread runs at the lowest CPU priority (nice 19, this thread only: Linux's setpriority on its
 * thread id), so that the order path, whose threads keep the process's priority, is never the one that waits
 * for a core. Measured without it (bench/cluster/history.bench.ts, 2 cores, load ~8): single orders at
 * 1,000/s had a p99 6.5x higher while checkpoints were written back to back than without. The price: on a
 * machine whose cores are kept busy, a checkpoint waits for idle time (its read transaction meanwhile keeps
 * LMDB from reusing the pages written since), and a start after a crash may replay more.
 *
 * Messages: in `{id, kind: 'write', name, keep?, force?}`, `{id, kind: 'archive', after, to, policy, dir}` or
 * `{id, kind: 'snapshot', dir, name, of}` (a follower's store of this one: `of` 'store', snapshots.ts, or
 * 'state', state-snapshot.ts); out `{id, ok: true,
 * result}` or `{id, ok: false, error}`.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { CheckpointStore } from './checkpoints.ts';
import { writeCheckpoint, type WriteOptions, type WriteResult } from './checkpoint-writer.ts';
import { openStore, type Store } from '../env.ts';
import { archiveJournal, type ArchiveRequest, type ArchiveResult } from '../retention.ts';
import { takeSnapshot, type SnapshotKind, type SnapshotManifest } from './snapshots.ts';
import { takeStateSnapshot } from './state-snapshot.ts';

export interface CheckpointWorkerData {
  dataDir: string;
  checkpointDir: string;
}

export type WorkerRequest = ({ kind: 'write'; name: string } & WriteOptions) | ({ kind: 'archive' } & ArchiveRequest) | { kind: 'snapshot'; dir: string; name: string; of: SnapshotKind };
export type WorkerReply = { id: number; ok: true; result: WriteResult | ArchiveResult | SnapshotManifest } | { id: number; ok: false; error: string };

/** The checkpoint thread's nice value (see the header). */
export const CHECKPOINT_NICE = 19;

/** This thread's id (Linux: /proc/thread-self -> <pid>/task/<tid>), undefined elsewhere. */
function threadId(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

const tid = threadId();
if (tid !== undefined) {
  try {
    setPriority(tid, CHECKPOINT_NICE);
  } catch {
    // Not permitted here (a sandbox): the thread keeps the process's priority; nothing else changes.
  }
}

const data = workerData as CheckpointWorkerData;
let store: Store | undefined;
const checkpoints = new CheckpointStore(data.checkpointDir);

// One request at a time: a snapshot's copy is awaited before the next message is taken up.
let busy: Promise<unknown> = Promise.resolve();
parentPort!.on('message', (req: WorkerRequest & { id: number }) => {
  busy = busy.then(async () => {
    let reply: WorkerReply;
    try {
      const s = (store ??= openStore({ dataDir: data.dataDir }));
      const result =
        req.kind === 'write'
          ? writeCheckpoint(s, checkpoints, req.name, req)
          : req.kind === 'archive'
            ? archiveJournal(s, req)
            : await (req.of === 'state' ? takeStateSnapshot : takeSnapshot)(s, checkpoints, req.dir, req.name);
      reply = { id: req.id, ok: true, result };
    } catch (e) {
      reply = { id: req.id, ok: false, error: (e as Error).message };
    }
    parentPort!.postMessage(reply);
  });
});
