/**
 * Group commit: what the engine journals in a turn leaves as one LMDB transaction, and nobody is answered
 * before the transaction holding their effects is durable.
 *
 * Owns the answers waiting for a commit (in the order they were given), the flush schedule, the batch in
 * flight, committedSeq and the onCommitted listeners. The parts append events and rows to the journal writer
 * (journal/writer.ts) as they apply a command; a flush, at the end of the turn, adds the ledger rows the turn
 * changed (balances, net deposits) and sends the batch.
 *
 * At most one batch is being committed: what is journaled meanwhile waits in the writer and leaves as the
 * next batch the moment the commit is durable. Flushing every event-loop turn made a transaction of every
 * one or two orders under load, and each LMDB transaction rewrites the B-tree paths and free list it
 * touches: ~200 KB written per order over HTTP against ~8 KB in large batches.
 *
 * Riders. Writes that need no commit of their own (the projections' deferred view writes: projector.ts)
 * may ride along: a rider registered with `beforeFlush` is called synchronously right before a batch's
 * puts are issued, so what it puts joins the batch's transaction. On this machine every durable commit
 * costs an fsync and several thread wake-ups (hundreds of µs of CPU); at 100 orders/s each order's view
 * writes were a second transaction of their own, 20 ms after the order's.
 *
 * Invariants: an answer given to ack() is delivered only after every batch holding what was journaled before
 * it is durable (an answer given while a batch is in flight waits for the next one); batches commit in
 * sequence order, so committedSeq only grows and listeners see events in journal order; a finished order
 * leaves the order table's `recent` only with the batch that holds its final state. A failed commit halts the
 * engine and its answers become PM_ERR_JOURNAL; on a halt the answers still waiting become
 * PM_ERR_ENGINE_DOWN (answerDown) and nothing more is flushed.
 */
import { Errors } from '../domain/errors.ts';
import type { JournalEvent } from '../domain/events.ts';
import { USDC_ASSET } from '../journal/keys.ts';
import type { JournalWriter } from '../journal/writer.ts';
import type { Logger } from '../runtime/log.ts';
import type { CancelResponse, OpResult, PlaceResponse } from './engine-types.ts';
import type { Ledger } from './ledger/ledger.ts';
import type { Lifecycle } from './lifecycle.ts';
import { rejectResponse, type OrderTable } from './orders/order-table.ts';

/** What group commit needs of the journal writer (a fake one in tests). */
export type CommitWriter = Pick<JournalWriter, 'flush' | 'putBalance' | 'putNetDeposits' | 'pending'>;

export interface GroupCommitDeps {
  writer: CommitWriter;
  /** The journal seq already durable when the engine starts. */
  committedSeq: number;
  ledger: Ledger;
  orders: OrderTable;
  life: Lifecycle;
  log: Logger;
  /** Told each transaction's seconds from its puts to durable. */
  onCommit?: (seconds: number) => void;
}

export class GroupCommit {
  /** The journal seq of the last durable batch. */
  committedSeq: number;
  private readonly writer: CommitWriter;
  private readonly ledger: Ledger;
  private readonly orders: OrderTable;
  private readonly life: Lifecycle;
  private readonly log: Logger;
  private readonly onCommit: ((seconds: number) => void) | undefined;
  private readonly listeners: Array<(events: JournalEvent[]) => void> = [];
  private readonly riders: Array<() => void> = [];
  private flushScheduled = false;
  private committing = false;
  private flushAfterCommit = false;
  private ackFns: Array<(v: never) => void> = [];
  private ackVals: unknown[] = [];
  private netDepositsDirty = false;
  private lastCommit: Promise<unknown> = Promise.resolve();

  constructor(deps: GroupCommitDeps) {
    this.writer = deps.writer;
    this.committedSeq = deps.committedSeq;
    this.ledger = deps.ledger;
    this.orders = deps.orders;
    this.life = deps.life;
    this.log = deps.log;
    this.onCommit = deps.onCommit;
  }

  /** Answers `value` once everything journaled so far is committed. */
  ack<T>(resolve: (v: T) => void, value: T): void {
    this.ackFns.push(resolve as (v: never) => void);
    this.ackVals.push(value);
    this.scheduleFlush();
  }

  /**
   * Resolves once everything journaled so far is durable: `{ ok: true }`, else the failure (journal, engine
   * down) that kept it from becoming durable. Readers of in-memory state (an order, open orders, balances)
   * take their copy first and answer after this, so no reply shows what a crash could still undo. With
   * nothing in flight it resolves in a microtask; otherwise within the commit in flight and the next.
   */
  afterCommit(): Promise<OpResult> {
    if (this.life.halted) return Promise.resolve({ ok: false, code: Errors.PM_ERR_ENGINE_DOWN.result });
    return new Promise((resolve) => this.ack(resolve, { ok: true, code: 0 }));
  }

  /** The ledger's net deposits changed: the next batch carries them. */
  netDepositsChanged(): void {
    this.netDepositsDirty = true;
  }

  /** Calls `listener` with the events of each durable batch, batches in journal order. */
  onCommitted(listener: (events: JournalEvent[]) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Calls `rider` right before each batch's puts are issued, in the same synchronous turn, so its own puts
   * join that transaction. It must not journal anything (it is not the engine's) and must not throw (a
   * throw is logged and the batch still leaves).
   */
  beforeFlush(rider: () => void): void {
    this.riders.push(rider);
  }

  /** Flushes at the end of this turn (once, however many times it is asked). */
  scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => this.flush());
  }

  /** Sends what the writer holds as one batch, unless a batch is in flight (then it leaves right after). */
  flush(): void {
    this.flushScheduled = false;
    if (this.life.halted) return;
    if (this.committing) {
      this.flushAfterCommit = true;
      return;
    }
    this.putLedgerRows();
    const fns = this.ackFns;
    const vals = this.ackVals;
    this.ackFns = [];
    this.ackVals = [];
    const finished = this.orders.takeFinished();
    if (this.writer.pending) this.ride();
    const res = this.writer.flush();
    if (res === undefined) {
      for (let i = 0; i < fns.length; i++) fns[i](vals[i] as never);
      return;
    }
    this.committing = true;
    const issued = performance.now();
    this.lastCommit = res.committed.then(
      () => {
        this.onCommit?.((performance.now() - issued) / 1000);
        this.commitDone();
        this.committedSeq = res.lastSeq;
        for (let i = 0; i < fns.length; i++) fns[i](vals[i] as never);
        this.orders.forget(finished);
        for (const l of this.listeners) {
          try {
            l(res.events);
          } catch (err) {
            this.log.error({ err }, 'onCommitted listener failed');
          }
        }
      },
      (err: unknown) => {
        this.commitDone();
        const e = err instanceof Error ? err : new Error(String(err));
        this.life.halt(e);
        for (let i = 0; i < fns.length; i++) fns[i](answerInstead(vals[i], Errors.PM_ERR_JOURNAL) as never);
      },
    );
  }

  private ride(): void {
    for (const r of this.riders) {
      try {
        r();
      } catch (err) {
        this.log.error({ err }, 'a rider of the group commit failed');
      }
    }
  }

  /** Resolves once nothing is being committed and nothing waits to be. */
  async drain(): Promise<void> {
    for (;;) {
      const c = this.lastCommit;
      await c.catch(() => undefined);
      if (c === this.lastCommit && !this.committing && !this.flushAfterCommit && !this.flushScheduled) return;
      if (!this.committing && !this.flushScheduled) this.flush();
    }
  }

  /** Halt step: every answer still waiting for a commit becomes PM_ERR_ENGINE_DOWN. */
  answerDown(): void {
    for (let i = 0; i < this.ackFns.length; i++) this.ackFns[i](answerInstead(this.ackVals[i], Errors.PM_ERR_ENGINE_DOWN) as never);
    this.ackFns = [];
    this.ackVals = [];
  }

  /** The balance rows of the wallets the turn changed, and the net deposits if they changed. */
  private putLedgerRows(): void {
    for (const w of this.ledger.takeDirty()) {
      if (w.usdcDirty) {
        w.usdcDirty = false;
        this.writer.putBalance(w.wallet, USDC_ASSET, w.usdcAvailable + w.usdcReserved + w.usdcPending);
      }
      for (const tokenId of w.dirtyTokens) {
        const t = w.tokens.get(tokenId);
        if (t === undefined) continue;
        t.dirty = false;
        this.writer.putBalance(w.wallet, tokenId, t.available + t.reserved + t.pending);
      }
      w.dirtyTokens = [];
    }
    if (this.netDepositsDirty) {
      this.netDepositsDirty = false;
      this.writer.putNetDeposits(this.ledger.netDeposits);
    }
  }

  /** The batch in flight is durable (or failed): what waited leaves now, as one batch. */
  private commitDone(): void {
    this.committing = false;
    if (this.flushAfterCommit) {
      this.flushAfterCommit = false;
      this.scheduleFlush();
    }
  }
}

/** The answer to give instead of `value` (a placement, cancel or operation answer) when it cannot stand. */
function answerInstead(value: unknown, why: { readonly result: number; readonly message: string }): unknown {
  const v = value as Partial<PlaceResponse & CancelResponse & OpResult>;
  if (v.orderId !== undefined) return rejectResponse(v.orderId, why.result);
  if (v.canceled !== undefined) {
    const notCanceled = { ...v.notCanceled };
    for (const id of v.canceled) notCanceled[id] = why.message;
    return { canceled: [], notCanceled };
  }
  return { ok: false, code: why.result };
}
