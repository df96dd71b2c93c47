/**
 * The signature pool: a piscina pool of sig-worker.ts threads for the CPU-heavy, stateless part of
 * authentication (EIP-712 digests and secp256k1 recovery), so the main thread never spends ~70 µs per
 * signature (DESIGN section 2).
 *
 * Batching. A piscina task costs a postMessage round trip plus structured cloning and a thread wake-up,
 * more than one native recovery, so orders travel in batches. `verifyOrders` calls are queued and
 * dispatched at `setImmediate` (uWS delivers every request of a poll phase in one turn), but at most one
 * task per thread is in flight: while every thread is busy, orders wait in the queue, and the moment a
 * task comes back everything queued leaves as one task (split over the free threads, at most `maxBatch`
 * orders each). An idle pool dispatches a lone order at once, so batching adds no latency; a busy pool
 * sends large tasks, so the per-task cost vanishes exactly when throughput matters. Measured
 * (bench/edge/signatures.bench.ts): one order per call, 32 calls in flight, 2 threads: 31% of the
 * recovery ceiling with one task per call, about 70% with this dispatch.
 *
 * A quiet service verifies on this thread. A task's round trip wakes a pool thread and then this one:
 * on a virtual machine each wake-up of an idle thread costs 60-280 µs of CPU (shared/probes/wake-cost.mjs),
 * more than the recovery it carries (~89 µs). So when a flush finds the pool idle, at most `inlineMax`
 * orders waiting, and this thread's event loop less than `inlineBelow` busy over its last measured window
 * (from one flush that found 50 ms passed to the next: a measure per flush, no timer of its own), the
 * orders are verified here, synchronously, by the same code the workers run (sig-worker.ts
 * `verifyOrders`). The guard keeps the pool where it pays: several orders a turn, or a main thread that
 * is the busy stage, send tasks as before, and one inline verification stalls the loop for ~0.1 ms only.
 * `inline` counts the orders verified here (tests, /metrics).
 *
 * Refusal diagnosis. `recoverDigests` runs a refused order's candidate digests (refusals/order-signature.ts) as a
 * task of its own: it shares the threads (a task is at most a dozen recoveries, under a millisecond, and
 * the diagnoses' budget bounds how many there are) but not the order queue, so verifyOrders batches,
 * counts and answers exactly as without it; and it never runs on this thread, inline or otherwise.
 *
 * Failures. A malformed order or signature comes back as `recovered: undefined` for that order. A task
 * that fails as a whole (a worker died, the pool is closing) rejects the promises of the calls it
 * carried: that is a server fault, never reported as a bad signature.
 */
import { availableParallelism } from 'node:os';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import { withWorkerArgv } from '../../runtime/worker-argv.ts';
import type { AuthDomain, ClobAuthFields, OrderDomains } from './eip712.ts';
import {
  verifyOrders as verifyHere,
  type OrderToVerify,
  type OrderVerification,
  type RecoverClobAuthTask,
  type RecoverDigestsTask,
  type SecpBackend,
  type VerifyOrdersTask,
} from './sig-worker.ts';

export type { OrderToVerify, OrderVerification, SecpBackend };

export interface SigPoolOptions {
  /** Worker threads; default (and 0) = os.availableParallelism(). */
  threads?: number;
  /** Most orders one task carries (default 64). */
  maxBatch?: number;
  /** Tasks in flight per thread before orders wait for one to come back (default 1). */
  tasksPerThread?: number;
  /** Most orders a flush verifies on this thread while the pool is idle (default 1; 0 = never). */
  inlineMax?: number;
  /** The event-loop utilization (0-1) of this thread at or above which orders always go to the pool (default 0.5; 1 = never). */
  inlineBelow?: number;
  /** A worker failed (e.g. could not start). The tasks it held reject; this is for the log. */
  onError?: (err: unknown) => void;
}

interface Call {
  orders: readonly OrderToVerify[];
  results: OrderVerification[];
  remaining: number;
  failed: boolean;
  resolve: (r: OrderVerification[]) => void;
  reject: (e: unknown) => void;
}

interface Queued {
  call: Call;
  index: number;
}

export class SigPool {
  readonly threads: number;
  readonly maxBatch: number;
  private readonly piscina: Piscina;
  /**
   * Resolves once every thread has loaded its modules and native addons (one warm-up task each); rejects
   * if the pool closed first. The app waits for it before it listens, so the first orders do not wait
   * for a thread to load, and close() waits for it before it terminates any thread.
   */
  readonly ready: Promise<void>;
  private readonly started: Promise<unknown>;
  /** Pending orders per domains object (in practice one: the configured domains). */
  private queued = new Map<OrderDomains, Queued[]>();
  private queuedCount = 0;
  private flushScheduled = false;
  private closed = false;
  private inflight = 0;
  private readonly maxInflight: number;
  private readonly inlineMax: number;
  private readonly inlineBelow: number;
  /** This thread's event-loop utilization over the last completed window, and where the current one began. */
  private busy = 0;
  private eluMark: EventLoopUtilization = performance.eventLoopUtilization();
  private eluAt = performance.now();
  /** Tasks dispatched so far, and the orders they carried (what the batching saves: tests, /metrics). */
  tasks = 0;
  orders = 0;
  /** Orders verified on this thread instead (a quiet service's lone orders). */
  inline = 0;

  constructor(opts: SigPoolOptions = {}) {
    this.threads = opts.threads && opts.threads > 0 ? opts.threads : availableParallelism();
    this.maxBatch = Math.max(1, opts.maxBatch ?? 64);
    this.maxInflight = this.threads * Math.max(1, opts.tasksPerThread ?? 1);
    this.inlineMax = Math.max(0, opts.inlineMax ?? 1);
    this.inlineBelow = opts.inlineBelow ?? 0.5;
    this.piscina = withWorkerArgv(
      (execArgv) =>
        new Piscina({
          filename: new URL('./sig-worker-entry.mjs', import.meta.url).href,
          execArgv,
          minThreads: this.threads,
          maxThreads: this.threads,
          // Keep the threads: starting one under the TypeScript loader takes hundreds of milliseconds.
          idleTimeout: 2 ** 31 - 1,
        }),
    );
    // Terminating a thread while it loads its native addons (keccak, secp256k1) aborts the whole process:
    // node-addon-api's init fails fatally in a dying environment (seen when a service stopped right after
    // it started). One task per thread, sent while all are idle, lands one on each; close() waits for them.
    this.ready = Promise.all(Array.from({ length: this.threads }, () => this.piscina.run(undefined, { name: 'backend' }))).then(() => undefined);
    this.started = this.ready.catch(() => undefined);
    // Piscina re-emits worker failures as 'error' events; an EventEmitter without a listener would throw
    // them at the process.
    const onError = opts.onError ?? (() => undefined);
    this.piscina.on('error', onError);
  }

  /** Recovers the signer of L1 ClobAuth headers; undefined when the signature does not recover. */
  async recoverClobAuth(fields: ClobAuthFields & { signature: string }, domain: AuthDomain): Promise<string | undefined> {
    if (this.closed) throw new Error('signature pool is closed');
    const task: RecoverClobAuthTask = { fields: { address: fields.address, timestamp: fields.timestamp, nonce: fields.nonce, signature: fields.signature }, domain };
    return (await this.piscina.run(task, { name: 'recoverClobAuth' })) as string | undefined;
  }

  /** Digest + recovered signer of each order, in order. */
  verifyOrders(orders: readonly OrderToVerify[], domains: OrderDomains): Promise<OrderVerification[]> {
    if (this.closed) return Promise.reject(new Error('signature pool is closed'));
    if (orders.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const call: Call = { orders, results: new Array(orders.length), remaining: orders.length, failed: false, resolve, reject };
      let q = this.queued.get(domains);
      if (!q) {
        q = [];
        this.queued.set(domains, q);
      }
      for (let i = 0; i < orders.length; i++) q.push({ call, index: i });
      this.queuedCount += orders.length;
      if (!this.flushScheduled && this.inflight < this.maxInflight) {
        this.flushScheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /**
   * Refusal path only (refusals/order-signature.ts): the address the signature recovers to over each digest, in
   * order, stopping after the first that gives `until` (so the answer may be shorter than `items`).
   */
  async recoverDigests(items: RecoverDigestsTask['items'], until?: string): Promise<Array<string | undefined>> {
    if (this.closed) throw new Error('signature pool is closed');
    if (items.length === 0) return [];
    const task: RecoverDigestsTask = until === undefined ? { items } : { items, until };
    return (await this.piscina.run(task, { name: 'recoverDigests' })) as Array<string | undefined>;
  }

  /** Which secp256k1 implementation the workers loaded. */
  async backend(): Promise<SecpBackend> {
    return (await this.piscina.run(undefined, { name: 'backend' })) as SecpBackend;
  }

  /** Stops the workers; queued and running calls reject. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.flush();
    await this.started;
    await this.piscina.destroy();
  }

  /** Dispatches what is queued over the free task slots (all of it when closing: those calls reject). */
  private readonly flush = (): void => {
    this.flushScheduled = false;
    if (this.inflight === 0 && this.queuedCount <= this.inlineMax && !this.closed && this.quiet()) {
      for (const [domains, q] of this.queued) this.verifyInline(q, domains);
      this.queued.clear();
      this.queuedCount = 0;
      return;
    }
    for (const [domains, q] of this.queued) {
      while (q.length > 0 && (this.inflight < this.maxInflight || this.closed)) {
        // Spread what waits over the free slots, but never more than maxBatch orders per task.
        const free = Math.max(1, this.maxInflight - this.inflight);
        const size = Math.min(this.maxBatch, Math.max(1, Math.ceil(q.length / free)));
        const batch = q.splice(0, size);
        this.queuedCount -= batch.length;
        this.dispatch(batch, domains);
      }
      if (q.length === 0) this.queued.delete(domains);
    }
  };

  /**
   * Whether this thread's event loop was busy less than `inlineBelow` over the last window: a window ends
   * at the first flush 50 ms or more after it began, so a burst after a long quiet spell is seen within
   * one window, and a quiet service reads the clock once per order.
   */
  private quiet(): boolean {
    const now = performance.now();
    if (now - this.eluAt >= 50) {
      const mark = performance.eventLoopUtilization();
      this.busy = performance.eventLoopUtilization(mark, this.eluMark).utilization;
      this.eluMark = mark;
      this.eluAt = now;
    }
    return this.inlineBelow >= 1 || this.busy < this.inlineBelow;
  }

  /** Verifies on this thread what a flush found waiting (at most inlineMax orders): no task, no wake-up. */
  private verifyInline(batch: Queued[], domains: OrderDomains): void {
    const results = verifyHere({ orders: batch.map((e) => e.call.orders[e.index]!), domains });
    this.inline += batch.length;
    for (let i = 0; i < batch.length; i++) {
      const { call, index } = batch[i]!;
      call.results[index] = results[i]!;
      if (--call.remaining === 0) call.resolve(call.results);
    }
  }

  private dispatch(batch: Queued[], domains: OrderDomains): void {
    const task: VerifyOrdersTask = { orders: batch.map((e) => e.call.orders[e.index]!), domains };
    const settle = (results: OrderVerification[] | undefined, err?: unknown) => {
      for (let i = 0; i < batch.length; i++) {
        const { call, index } = batch[i]!;
        if (call.failed) continue;
        if (!results) {
          call.failed = true;
          call.reject(err);
          continue;
        }
        call.results[index] = results[i]!;
        if (--call.remaining === 0) call.resolve(call.results);
      }
    };
    const run = this.closed
      ? Promise.reject(new Error('signature pool is closed'))
      : (this.piscina.run(task, { name: 'verifyOrders' }) as Promise<OrderVerification[]>);
    this.inflight++;
    this.tasks++;
    this.orders += batch.length;
    const done = () => {
      this.inflight--;
      // A slot is free: whatever queued while every thread was busy leaves now, as one task.
      if (this.queuedCount > 0) this.flush();
    };
    run.then(
      (r) => {
        done();
        settle(r);
      },
      (e: unknown) => {
        done();
        settle(undefined, e);
      },
    );
  }
}
