/**
 * The matching threads themselves, apart from the link that drives them (shard-link.ts): per shard its
 * worker, its command and result rings (ring.ts) and the MessagePort of market strings. Separate because
 * threads may outlive an engine: a sandbox revert (node/revert.ts) closes one engine and opens the next on
 * the same threads, since starting a worker under the TypeScript loader costs hundreds of milliseconds and a
 * revert is meant to run between every two tests of a suite.
 *
 * Owns the threads' lives: spawn() starts them and resolves once every one said it is ready; terminate()
 * ends them. Between the two, at most one link is attached at a time (attach/detach): what a worker posts,
 * its error and its exit go to the attached link, and a link that detaches leaves nothing behind that could
 * reach the next one:
 *   - one wait per result ring (awaitResults): the wake-up calls whoever is attached when it comes, so a
 *     detached link never consumes, and never clears the sleeping flag under, the next link's wait;
 *   - the ring objects stay with the thread, so their private cursors carry over to the next link.
 * A link that takes threads over resets their shards first (protocol.ts OP_RESET): books, markets, timers and
 * clock as a fresh thread's. Threads whose worker ended or failed are not `usable`; their owner starts new
 * ones.
 */
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { BOOK_FACTORIES, type BookFactoryRef, type BookKind } from './book-factory.ts';
import { CMD_WORDS, RES_WORDS, type ShardWorkerData, type WorkerMessage } from './protocol.ts';
import { Ring } from './ring.ts';
import { startTsWorker } from '../thread.ts';

/** What a link attached to a thread hears from it. */
export interface ThreadListener {
  message(msg: WorkerMessage): void;
  error(err: Error): void;
  exit(code: number): void;
  /** The result ring has records (after awaitResults). */
  results(): void;
}

export interface ShardThread {
  readonly index: number;
  readonly worker: Worker;
  readonly commands: Ring;
  readonly results: Ring;
  /** Main thread's end of the market-strings port (register). */
  readonly metaPort: MessagePort;
  exited: boolean;
  /** The worker reported a fatal error: it processes nothing more. */
  failed: boolean;
  /** A wait on the result ring is pending. */
  waiting: boolean;
  listener: ThreadListener | undefined;
}

/** What decides whether threads can serve an engine: they were started for the same shards and book. */
export interface ThreadSpec {
  shards: number;
  book: BookFactoryRef;
  snapshotIntervalMs: number;
  commandRingSlots: number;
  resultRingSlots: number;
}

/** The options of an engine that decide its threads (EngineOptions' fields of the same names and defaults). */
export interface ThreadOptions {
  shards: number;
  bookFactory?: BookKind | BookFactoryRef;
  snapshotIntervalMs?: number;
  commandRingSlots?: number;
  resultRingSlots?: number;
}

/** The threads an engine with these options runs on (`fits`). */
export function threadSpec(opts: ThreadOptions): ThreadSpec {
  const choice = opts.bookFactory ?? 'production';
  const book: BookFactoryRef = typeof choice === 'string' ? BOOK_FACTORIES[choice] : choice;
  return { shards: opts.shards, book, snapshotIntervalMs: opts.snapshotIntervalMs ?? 20, commandRingSlots: opts.commandRingSlots ?? 4096, resultRingSlots: opts.resultRingSlots ?? 16384 };
}

export class ShardThreads {
  private attached = false;

  private constructor(
    readonly spec: ThreadSpec,
    readonly threads: readonly ShardThread[],
  ) {}

  /**
   * Starts one worker per shard on `time` (absent: the system clock); resolves when all are ready. A worker
   * that fails or exits before it is ready rejects it, and every worker started is ended.
   */
  static async spawn(spec: ThreadSpec, time?: ShardWorkerData['time']): Promise<ShardThreads> {
    const threads: ShardThread[] = [];
    const ready: Promise<void>[] = [];
    for (let i = 0; i < spec.shards; i++) {
      const commands = Ring.create(spec.commandRingSlots, CMD_WORDS);
      const results = Ring.create(spec.resultRingSlots, RES_WORDS);
      const channel = new MessageChannel();
      const wd: ShardWorkerData = {
        shard: i,
        commandRing: commands.sab,
        resultRing: results.sab,
        metaPort: channel.port2,
        bookModule: spec.book.module,
        bookExport: spec.book.export,
        snapshotIntervalMs: spec.snapshotIntervalMs,
        time,
      };
      const worker = startTsWorker(new URL('./worker.ts', import.meta.url), { workerData: wd, transferList: [channel.port2] });
      const t: ShardThread = { index: i, worker, commands, results, metaPort: channel.port1, exited: false, failed: false, waiting: false, listener: undefined };
      threads.push(t);
      ready.push(watch(t));
    }
    const all = new ShardThreads(spec, threads);
    try {
      await Promise.all(ready);
    } catch (err) {
      await all.terminate();
      throw err;
    }
    return all;
  }

  /** Every worker runs and none failed: a link may take them over. */
  get usable(): boolean {
    return this.threads.every((t) => !t.exited && !t.failed);
  }

  /** Whether these threads were started for `spec` (same shards, book, rings and snapshot interval). */
  fits(spec: ThreadSpec): boolean {
    const a = this.spec;
    return a.shards === spec.shards && a.book.module === spec.book.module && a.book.export === spec.book.export && a.snapshotIntervalMs === spec.snapshotIntervalMs && a.commandRingSlots === spec.commandRingSlots && a.resultRingSlots === spec.resultRingSlots;
  }

  /** Hands the threads to a link; throws if another holds them. */
  attach(listeners: (t: ShardThread) => ThreadListener): void {
    if (this.attached) throw new Error('shard threads already serve an engine');
    this.attached = true;
    for (const t of this.threads) t.listener = listeners(t);
  }

  /** The link lets go: nothing the threads do reaches it after this. */
  detach(): void {
    this.attached = false;
    for (const t of this.threads) t.listener = undefined;
  }

  /** Ends the workers and closes their ports. */
  async terminate(): Promise<void> {
    this.detach();
    await Promise.all(
      this.threads.map(async (t) => {
        if (!t.exited) await t.worker.terminate();
        t.metaPort.close();
      }),
    );
  }
}

/**
 * Waits for the thread's next published results and tells the link attached then. At most one wait is
 * pending per ring, whichever link asked for it.
 */
export function awaitResults(t: ShardThread): void {
  if (t.waiting || t.exited) return;
  t.waiting = true;
  void t.results.waitForDataAsync().then(() => {
    t.waiting = false;
    t.listener?.results();
  });
}

/** Resolves when the worker is ready; forwards what it posts, its error and its exit to the link attached. */
function watch(t: ShardThread): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    t.worker.on('message', (msg: WorkerMessage) => {
      if (msg.type === 'ready') return resolve();
      if (msg.type === 'fatal') {
        t.failed = true;
        const err = new Error(`shard ${msg.shard} failed: ${msg.message}`);
        err.stack = msg.stack;
        reject(err);
      }
      t.listener?.message(msg);
    });
    t.worker.on('error', (err) => {
      t.failed = true;
      reject(err);
      t.listener?.error(err);
    });
    t.worker.on('exit', (code) => {
      t.exited = true;
      reject(new Error(`shard ${t.index} exited unexpectedly (code ${code})`));
      t.listener?.exit(code);
    });
  });
}
