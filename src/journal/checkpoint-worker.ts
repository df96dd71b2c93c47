/**
 * The checkpoint thread (started by engine/checkpointer.ts): it opens the store's environment (lmdb-js shares
 * it with the main thread) and runs, one at a time, what would otherwise stall the main thread for as long as
 * it takes: a checkpoint's proof (checkpoint-writer.ts: the replay of the events since the last checkpoint,
 * about 8 µs an event on this machine) and the reading and compressing of journal archives (retention.ts).
 *
 * Messages: in `{id, kind: 'write', name, keep?, force?}` or `{id, kind: 'archive', after, to, policy, dir}`;
 * out `{id, ok: true, result}` or `{id, ok: false, error}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CheckpointStore } from './checkpoints.ts';
import { writeCheckpoint, type WriteOptions, type WriteResult } from './checkpoint-writer.ts';
import { openStore, type Store } from './env.ts';
import { archiveJournal, type ArchiveRequest, type ArchiveResult } from './retention.ts';

export interface CheckpointWorkerData {
  dataDir: string;
  checkpointDir: string;
}

export type WorkerRequest = ({ kind: 'write'; name: string } & WriteOptions) | ({ kind: 'archive' } & ArchiveRequest);
export type WorkerReply = { id: number; ok: true; result: WriteResult | ArchiveResult } | { id: number; ok: false; error: string };

const data = workerData as CheckpointWorkerData;
let store: Store | undefined;
const checkpoints = new CheckpointStore(data.checkpointDir);

parentPort!.on('message', (req: WorkerRequest & { id: number }) => {
  let reply: WorkerReply;
  try {
    store ??= openStore({ dataDir: data.dataDir });
    const result = req.kind === 'write' ? writeCheckpoint(store, checkpoints, req.name, req) : archiveJournal(store, req);
    reply = { id: req.id, ok: true, result };
  } catch (e) {
    reply = { id: req.id, ok: false, error: (e as Error).message };
  }
  parentPort!.postMessage(reply);
});
