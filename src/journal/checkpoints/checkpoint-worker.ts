/**
 * The checkpoint thread (started by engine/checkpointer.ts): it opens the store's environment (lmdb-js shares
 * it with the main thread) and runs, one at a time, what would otherwise stall the main thread for as long as
 * it takes: a checkpoint's proof (checkpoint-writer.ts: the replay of the events since the last checkpoint,
 * about 8 µs an event on this machine), the reading and compressing of journal archives (retention.ts) and
 * the copy and digests of a snapshot.
 *
 * Priority: the thread runs at the lowest CPU priority Linux has: the SCHED_IDLE policy (util-linux's `chrt
 * --idle`, run once on this thread's id), and nice 19 beside it (setpriority; all that is left where chrt is
 * missing or refused). The order path's threads keep the process's priority, so they never wait for a core
 * this thread holds. Why SCHED_IDLE: at nice 19 the thread keeps the core it runs on for a while after an
 * order thread wakes there (the scheduler weighs the two; Linux 6.18 here), while a SCHED_IDLE task gives
 * way at once to any task of another policy that wakes. Measured (bench/cluster/history.bench.ts, 1.5
 * million orders of history, its phase 4: single orders at 1,000/s while proofs of ~140,000 events are
 * written back to back, p99 with / without, the median of three pairs): 2.08 at nice 19 alone, 0.96 with
 * SCHED_IDLE. With neither (2 cores, load ~8), p99 was 6.5x higher while checkpoints were written. The price:
 * on a machine whose cores are kept busy, a checkpoint waits for idle time (its read transaction meanwhile
 * keeps LMDB from reusing the pages written since), and a start after a crash may replay more.
 *
 * Messages: in `{id, kind: 'write', name, keep?, force?}`, `{id, kind: 'archive', after, to, policy, dir}` or
 * `{id, kind: 'snapshot', dir, name, of}` (a follower's store of this one: `of` 'store', snapshots.ts, or
 * 'state', state-snapshot.ts); out `{id, ok: true,
 * result}` or `{id, ok: false, error}`.
 */
import { execFileSync } from 'node:child_process';
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
    // Not permitted here (a sandbox): the thread keeps the process's priority.
  }
  try {
    // Node has no sched_setscheduler; chrt (util-linux, in every Debian install) is that call, on this thread.
    execFileSync('chrt', ['--idle', '--pid', '0', String(tid)], { stdio: 'ignore', timeout: 5000 });
  } catch {
    // No chrt, or not permitted: nice 19 alone.
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
