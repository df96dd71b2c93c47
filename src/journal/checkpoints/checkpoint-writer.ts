/**
 * Writing a checkpoint: prove the store as it stands and store the proven state (issue 42). The one way a
 * checkpoint is made from a running store, on the checkpoint thread (checkpoint-worker.ts) while the engine
 * trades, or on the main thread at an orderly stop (engine/checkpointer.ts), when nothing else runs.
 *
 * The store is read through one read snapshot (env.ts readSnapshot: the journal and the tables at one
 * journalSeq, while writers go on committing) and proved from the newest checkpoint that proves it
 * (recovery.ts verifyStore: the replay of the events since, the tables read without the history). The proof
 * is the point: a checkpoint is never written from what the engine holds in memory, only from what the
 * journal proves, so a start-up that trusts it trusts the journal.
 */
import { AUTO_NAME, type CheckpointEntry, type CheckpointStore } from './checkpoints.ts';
import { readSnapshot, type Store } from '../env.ts';
import { metaKeys } from '../keys.ts';
import { verifyStore } from '../recovery.ts';

export interface WriteOptions {
  /** Automatic checkpoints kept once this one is written (older ones removed); absent: none removed. */
  keep?: number;
  /** Write even when a checkpoint of that name already stands at the snapshot's seq. */
  force?: boolean;
}

export interface WriteResult {
  /** The checkpoint written, or undefined when one of that name already stood at the same seq. */
  entry: CheckpointEntry | undefined;
  seq: number;
  stateHash: string;
  /** Journal events the proof replayed (since the checkpoint it started from). */
  replayed: number;
  from: CheckpointEntry | undefined;
  ms: number;
}

/** Proves the store as committed now and writes its state as checkpoint `name`. Throws when the proof fails. */
export function writeCheckpoint(store: Store, checkpoints: CheckpointStore, name: string, opts: WriteOptions = {}): WriteResult {
  const t0 = performance.now();
  const snap = readSnapshot(store);
  try {
    const seq = (snap.store.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
    const same = checkpoints.list().find((e) => e.name === name && e.seq === seq);
    const verified = verifyStore(snap.store, { checkpoints });
    let entry: CheckpointEntry | undefined;
    if (same === undefined || opts.force === true) {
      const header = {
        name,
        seq,
        stateHash: verified.hash,
        store: (snap.store.meta.get(metaKeys.tradeIdPrefix) as string | undefined) ?? '',
        createdAt: Date.now(),
        events: seq,
        ...rseqOf(snap.store),
      };
      entry = checkpoints.write(header, verified.proven());
    }
    if (opts.keep !== undefined && name === AUTO_NAME) checkpoints.pruneAuto(opts.keep);
    return { entry, seq, stateHash: verified.hash, replayed: verified.events, from: verified.from, ms: performance.now() - t0 };
  } finally {
    snap.done();
  }
}

/** The replication sequence the snapshot stands at, where the store has one (a follower's applied record, a sequencer's log). */
function rseqOf(s: Store): { rseq?: number } {
  const applied = s.meta.get(metaKeys.replicaAppliedRseq) as number | undefined;
  if (applied !== undefined) return { rseq: applied };
  for (const key of s.replication.getKeys({ reverse: true, limit: 1 })) return { rseq: key as number };
  return {};
}
