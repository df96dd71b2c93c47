/**
 * When checkpoints are written, and what retention then removes (issue 42;
 * docs/decisions/engine.md, "Checkpoints and retention (issue 42): the design"). The format and the directory are journal/checkpoints/checkpoints.ts's, the proof is
 * journal/recovery.ts's, the writing happens on a worker thread (journal/checkpoints/checkpoint-worker.ts); this module
 * holds the policy and the one queue of that worker's jobs.
 *
 *   bootstrap   right after a start that proved the store from the journal's first event (no checkpoint
 *               could be used), the state that proof ends with is written at once, from this thread: the
 *               work is done, and the next start then replays nothing before it
 *   policy      every second: once `everyEvents` events were committed since the newest automatic
 *               checkpoint, or `everySeconds` passed and the journal moved, the worker writes one (`auto`),
 *               and the automatic ones beyond `keep` are removed
 *   named       write(name): the same, under a name, kept until removed (issue 43 builds its snapshots on it)
 *   retention   after each automatic checkpoint: the journal up to the line (the oldest automatic checkpoint
 *               kept, every projection's durable cursor, and each limit a role adds: a sequencer's stream
 *               confirmation) is archived or pruned (journal/retention.ts). The new line is recorded in meta
 *               first, then the removes are issued in slices of REMOVE_SLICE per event-loop turn, so a
 *               commit of the engine's never waits behind one long transaction. A standby's replication log
 *               is cut at the rseq of the same checkpoint (`pruneLog`)
 *   close       an orderly stop (`onShutdown`) writes a checkpoint at the journal's last seq once the engine
 *               has stopped (its closer runs after the engine's): the next start replays nothing
 *
 * One job at a time: a checkpoint and an archive never run together, and a write asked for while one runs
 * waits for it. A failed job is logged and counted (`stats().failures`); trading never waits for any of it.
 */
import type { Worker } from 'node:worker_threads';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckpointWorkerData, WorkerReply, WorkerRequest } from '../journal/checkpoints/checkpoint-worker.ts';
import { writeCheckpoint, type WriteResult } from '../journal/checkpoints/checkpoint-writer.ts';
import { AUTO_NAME, CheckpointStore, type CheckpointEntry, type CheckpointState } from '../journal/checkpoints/checkpoints.ts';
import type { Store } from '../journal/env.ts';
import { metaKeys } from '../journal/keys.ts';
import { pruneReplicationLog } from '../journal/replication-log.ts';
import { projectionFloor, type ArchiveResult, type RetentionPolicy } from '../journal/retention.ts';
import type { SnapshotKind, SnapshotManifest } from '../journal/checkpoints/snapshots.ts';
import type { Logger } from '../runtime/log.ts';
import { startTsWorker } from './thread.ts';

/** Journal removes issued per event-loop turn while retention prunes. */
const REMOVE_SLICE = 1000;
const TICK_MS = 1000;

export interface CheckpointPolicy {
  everyEvents: number;
  everySeconds: number;
  keep: number;
  onShutdown: boolean;
  retention: RetentionPolicy;
  /** Where archive files go; empty: DATA_DIR/archive. */
  archiveDir: string;
}

export interface CheckpointerStats {
  /** Journal seq of the newest checkpoint written or found (0: none). */
  seq: number;
  written: number;
  failures: number;
  /** ms the last checkpoint took (worker: snapshot, proof, file). */
  lastMs: number;
  /** Events the last checkpoint's proof replayed. */
  lastReplayed: number;
  /** The journal seq retention has pruned up to. */
  prunedTo: number;
}

/** What the start-up proof ended with (journal/recovery.ts VerifiedStore). */
export interface StartupProof {
  from?: CheckpointEntry;
  hash: string;
  materialized: { lastSeq: number };
  proven(): CheckpointState;
}

export class Checkpointer {
  private discarded = false;
  readonly checkpoints: CheckpointStore;
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly replies = new Map<number, { resolve: (r: WriteResult | ArchiveResult | SnapshotManifest) => void; reject: (e: Error) => void }>();
  /** The tail of the job queue. */
  private queue: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private closed = false;
  private lastAt: number;
  private readonly limits: Array<() => number> = [];
  private readonly counters: CheckpointerStats;

  constructor(
    private readonly o: {
      store: Store;
      policy: CheckpointPolicy;
      log: Logger;
      committedSeq: () => number;
      /**
       * A follower that keeps the replication log (ROLE=standby): retention also removes its records up to
       * the rseq the oldest kept checkpoint stands at (a sequencer's own log is cut by its snapshot shipper).
       */
      pruneLog?: boolean;
    },
  ) {
    this.checkpoints = new CheckpointStore(join(o.store.dataDir, 'checkpoints'));
    const newest = this.checkpoints.list().find((e) => e.name === AUTO_NAME);
    this.lastAt = Date.now();
    this.counters = { seq: newest?.seq ?? 0, written: 0, failures: 0, lastMs: 0, lastReplayed: 0, prunedTo: this.prunedTo() };
  }

  stats(): CheckpointerStats {
    return { ...this.counters };
  }

  private prunedTo(): number {
    return (this.o.store.meta.get(metaKeys.journalPrunedTo) as number | undefined) ?? 0;
  }

  /** Retention never removes past what `limit()` returns (a journal seq): a role's own need (stream confirmation). */
  limit(limit: () => number): void {
    this.limits.push(limit);
  }

  /**
   * After a start: a store proved from the journal's first event gets its first checkpoint now, from that
   * proof (no worker, no second replay).
   */
  bootstrap(proof: StartupProof): void {
    if (proof.from !== undefined) return;
    const seq = proof.materialized.lastSeq;
    if (seq === 0) return;
    const t0 = performance.now();
    const entry = this.checkpoints.write(
      { name: AUTO_NAME, seq, stateHash: proof.hash, store: (this.o.store.meta.get(metaKeys.tradeIdPrefix) as string | undefined) ?? '', createdAt: Date.now(), events: seq },
      proof.proven(),
    );
    this.counters.seq = seq;
    this.counters.written++;
    this.counters.lastMs = performance.now() - t0;
    this.o.log.info({ seq, file: entry.file, ms: Math.round(this.counters.lastMs) }, 'first checkpoint written from the start-up proof');
  }

  /** Starts the policy's timer. */
  start(): void {
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.busy || this.closed) return;
    const committed = this.o.committedSeq();
    const since = committed - this.counters.seq;
    const due = since >= this.o.policy.everyEvents || (since > 0 && Date.now() - this.lastAt >= this.o.policy.everySeconds * 1000);
    if (!due) return;
    this.busy = true;
    try {
      await this.write(AUTO_NAME);
      await this.retain();
    } catch (err) {
      this.o.log.error({ err }, 'checkpoint failed');
    } finally {
      this.busy = false;
    }
  }

  /**
   * Writes a checkpoint of the store as committed now, under `name` (`auto`: the policy's; anything else is
   * kept until removed). Resolves with what was written; rejects when the proof or the file failed.
   */
  write(name: string): Promise<WriteResult> {
    return this.queued(name, async () => (await this.ask({ kind: 'write', name, ...(name === AUTO_NAME ? { keep: this.o.policy.keep } : {}) })) as WriteResult);
  }

  private queued(name: string, run: () => Promise<WriteResult>): Promise<WriteResult> {
    const job = this.queue.then(async () => {
      const r = await run();
      if (name === AUTO_NAME) {
        this.counters.seq = Math.max(this.counters.seq, r.seq);
        this.lastAt = Date.now();
      }
      if (r.entry !== undefined) this.counters.written++;
      this.counters.lastMs = r.ms;
      this.counters.lastReplayed = r.replayed;
      this.o.log.info({ name, seq: r.seq, replayed: r.replayed, from: r.from?.seq ?? 0, ms: Math.round(r.ms) }, r.entry === undefined ? 'checkpoint already current' : 'checkpoint written');
      return r;
    });
    this.queue = job.catch((err: unknown) => {
      this.counters.failures++;
      this.o.log.error({ err, name }, 'checkpoint not written');
    });
    return job;
  }

  /** The line below which retention may remove the journal now. */
  retentionLine(): number {
    const autos = this.checkpoints.list().filter((e) => e.name === AUTO_NAME);
    if (autos.length === 0) return 0;
    let line = autos[autos.length - 1]!.seq;
    line = Math.min(line, projectionFloor(this.o.store));
    for (const l of this.limits) line = Math.min(line, l());
    return Math.max(0, line);
  }

  /** Archives or prunes the journal up to the retention line (a no-op under `keep`), and cuts a standby's log. */
  async retain(): Promise<void> {
    const policy = this.o.policy.retention;
    if (this.closed) return;
    if (this.o.pruneLog === true) {
      const autos = this.checkpoints.list().filter((e) => e.name === AUTO_NAME);
      const rseq = autos.length === 0 ? undefined : this.checkpoints.header(autos[autos.length - 1]!).rseq;
      if (rseq !== undefined) await pruneReplicationLog(this.o.store, rseq);
    }
    if (policy === 'keep') return;
    const from = this.prunedTo();
    const line = this.retentionLine();
    if (line <= from) return;
    const dir = this.o.policy.archiveDir === '' ? join(this.o.store.dataDir, 'archive') : this.o.policy.archiveDir;
    const job = this.queue.then(() => this.ask({ kind: 'archive', after: from, to: line, policy, dir }));
    this.queue = job.catch(() => undefined);
    const r = (await job) as ArchiveResult;
    if (this.prunedTo() !== from) {
      // A backfill lowered the line while this range was archived (history-copy.ts: it copied in the journal
      // below it). Nothing was removed: this round's file goes, and the next archives from the lower line.
      if (r.file !== undefined) rmSync(r.file, { force: true });
      this.o.log.info({ was: from, now: this.prunedTo() }, 'journal retention: the line was lowered under this round; the next one archives from it');
      return;
    }
    // The line first: from now on no proof starts before it, whatever the removes below have reached.
    await this.o.store.meta.put(metaKeys.journalPrunedTo, line);
    this.counters.prunedTo = line;
    let last: Promise<unknown> = Promise.resolve();
    for (let i = 0; i < r.remove.length; i += REMOVE_SLICE) {
      for (const seq of r.remove.slice(i, i + REMOVE_SLICE)) last = this.o.store.journal.remove(seq);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await last;
    this.o.log.info({ policy, after: from, to: line, removed: r.remove.length, file: r.file }, 'journal retention');
  }

  /**
   * Makes a snapshot of the store as committed now in `dir`, on the worker, queued with the checkpoints: a
   * follower's store, shipped by the sequencer; `of` the whole store (journal/checkpoints/snapshots.ts) or its
   * state (state-snapshot.ts).
   */
  snapshot(dir: string, name: string, of: SnapshotKind = 'store'): Promise<SnapshotManifest> {
    const job = this.queue.then(() => this.ask({ kind: 'snapshot', dir, name, of }) as Promise<SnapshotManifest>);
    this.queue = job.catch(() => undefined);
    return job;
  }

  private ask(req: WorkerRequest): Promise<WriteResult | ArchiveResult | SnapshotManifest> {
    const w = this.workerOf();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.replies.set(id, { resolve, reject });
      w.ref();
      w.postMessage({ ...req, id });
    });
  }

  private workerOf(): Worker {
    if (this.worker !== undefined) return this.worker;
    const data: CheckpointWorkerData = { dataDir: this.o.store.dataDir, checkpointDir: this.checkpoints.dir };
    const w = startTsWorker(new URL('../journal/checkpoints/checkpoint-worker.ts', import.meta.url), { workerData: data });
    w.unref();
    w.on('message', (m: WorkerReply) => {
      const r = this.replies.get(m.id);
      if (r === undefined) return;
      this.replies.delete(m.id);
      if (this.replies.size === 0) w.unref();
      if (m.ok) r.resolve(m.result);
      else r.reject(new Error(m.error));
    });
    const fail = (err: Error) => {
      for (const r of this.replies.values()) r.reject(err);
      this.replies.clear();
      if (this.worker === w) this.worker = undefined;
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`checkpoint worker exited (${code})`)));
    this.worker = w;
    return w;
  }

  /** The store is about to be replaced (a sandbox revert, src/node/revert.ts): close() writes no checkpoint nothing will start from. */
  discard(): void {
    this.discarded = true;
  }

  /**
   * Stops the policy; call it once the engine has stopped (its last batch committed). `onShutdown`: writes a
   * checkpoint at the journal's last seq first (not after discard()). Then the worker ends.
   */

  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.closed = true;
    await this.queue;
    try {
      // Here, not on the worker: nothing else runs any more, and a stop should not wait for a thread to start.
      const keep = this.o.policy.keep;
      if (!this.discarded && this.o.policy.onShutdown && this.o.committedSeq() > this.counters.seq) await this.queued(AUTO_NAME, async () => writeCheckpoint(this.o.store, this.checkpoints, AUTO_NAME, { keep }));
    } catch (err) {
      this.o.log.error({ err }, 'checkpoint at shutdown not written');
    } finally {
      await this.worker?.terminate();
      this.worker = undefined;
    }
  }
}
