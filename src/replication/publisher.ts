/**
 * The sequencer's publisher: sends each committed replication-log record (journal/replication-log.ts) to
 * the journal stream, in rseq order, after its commit. It never delays an acknowledgement: the engine
 * answers on its own commit, and the publisher hears of the commit afterwards.
 *
 * Outbox. Each record is encoded as it commits and kept until the stream confirms it, up to
 * `outboxBatches` records; past that bound the outbox is full (logged once per episode, counted on
 * /metrics) and further records are not kept: trading goes on, GET / stays OK, and the records are read
 * back from LMDB when their turn comes. The same read refills after a restart: the stream's last sequence
 * is the last confirmed rseq (nats-link.ts), and publishing resumes after it.
 *
 * Each record's message carries its authenticator (wire.ts, one HMAC per record, made as it is encoded).
 *
 * Ordering and exactly-once. Up to WINDOW publishes are in flight on the one connection; each carries
 * `Nats-Msg-Id: r<rseq>` (a republish inside the duplicate window is acknowledged as a duplicate) and the
 * expectation that the stream's last sequence is rseq - 1, so the server stores nothing out of order and
 * nothing twice. On any failure (NATS gone, a timeout, an expectation refused) the publisher waits for
 * what is in flight, re-reads the stream's last sequence and resumes after it.
 */
import type { Store } from '../journal/env.ts';
import { readReplicatedBatch, type ReplicationLog } from '../journal/replication-log.ts';
import type { Logger } from '../runtime/log.ts';
import { ensureStream, openNatsLink, streamLastRseq, subjectOf, type NatsLink, type StreamSettings } from './nats-link.ts';
import { encodeBatch, messageIdOf } from './wire.ts';

const WINDOW = 256;
const RETRY_MS = 250;

export interface PublisherOptions {
  store: Store;
  log: ReplicationLog;
  logger: Logger;
  settings: StreamSettings;
  /** Bound of the outbox, in records. */
  outboxBatches: number;
  /** The connection to use instead of opening one (tests). */
  link?: NatsLink;
}

export interface PublisherStats {
  publishedSeq: number;
  confirmedSeq: number;
  confirmedRseq: number;
  outboxBatches: number;
  outboxFull: number;
  outboxOverflowBatches: number;
}

interface Entry {
  bytes: Uint8Array;
  /** The stream's message id (wire.ts messageIdOf). */
  id: string;
  /** Journal seq the record ends at (0 for an aux record). */
  journalLast: number;
}

export class Publisher {
  private readonly outbox = new Map<number, Entry>();
  private link: NatsLink | undefined;
  private closed = false;
  private seen: number;
  private next = 0;
  private inflight = 0;
  private broken = false;
  private ready = false;
  private full = false;
  private overflow = 0;
  private confirmedRseq = 0;
  private publishedSeq = 0;
  private confirmedSeq = 0;
  private running: Promise<void> | undefined;
  private lastWarning: string | undefined;
  private readonly subject: string;
  /** whenConfirmed's callers, in rseq order (records are confirmed in order). */
  private readonly waiting: Array<{ rseq: number; resolve: () => void; reject: (e: Error) => void }> = [];
  private stopped: Error | undefined;

  constructor(private readonly o: PublisherOptions) {
    this.seen = o.log.committedRseq;
    this.subject = subjectOf(o.settings.stream);
    this.link = o.link;
  }

  start(): void {
    this.o.log.onCommitted((upTo) => this.committed(upTo));
    this.running = this.run();
  }

  stats(): PublisherStats {
    return {
      publishedSeq: this.publishedSeq,
      confirmedSeq: this.confirmedSeq,
      confirmedRseq: this.confirmedRseq,
      outboxBatches: this.outbox.size,
      outboxFull: this.full ? 1 : 0,
      outboxOverflowBatches: this.overflow,
    };
  }

  /**
   * Resolves once the stream confirmed record `rseq` (cluster.failover: a batch is acknowledged only then, so
   * a takeover never loses an acknowledged one); rejects once this publisher stops (closed or fenced).
   */
  whenConfirmed(rseq: number): Promise<void> {
    if (rseq <= this.confirmedRseq) return Promise.resolve();
    if (this.stopped !== undefined) return Promise.reject(this.stopped);
    return new Promise((resolve, reject) => {
      this.waiting.push({ rseq, resolve, reject });
    });
  }

  /**
   * A deposed sequencer (its lease lost): publishes nothing more from now on, and what waits for a
   * confirmation is refused. The stream would refuse its next publish anyway (its expected last sequence
   * moved on); this stops it from trying.
   */
  fence(why: string): void {
    this.stopWaiting(new Error(`not the sequencer any more: ${why}`));
    this.closed = true;
  }

  private stopWaiting(err: Error): void {
    this.stopped ??= err;
    for (const w of this.waiting.splice(0)) w.reject(err);
  }

  /** Resolves once every committed record is confirmed by the stream (tests, orderly stops), or after `ms`. */
  async settled(ms: number): Promise<boolean> {
    const until = Date.now() + ms;
    while (this.confirmedRseq < this.o.log.committedRseq) {
      if (Date.now() > until || this.closed) return false;
      await new Promise((r) => setTimeout(r, 10));
    }
    return true;
  }

  async close(graceMs = 2000): Promise<void> {
    await this.settled(this.link === undefined ? 0 : graceMs);
    this.stopWaiting(new Error('the publisher closed'));
    this.closed = true;
    await this.running?.catch(() => undefined);
    if (this.o.link === undefined) await this.link?.close().catch(() => undefined);
  }

  private committed(upTo: number): void {
    for (let r = this.seen + 1; r <= upTo; r++) {
      if (this.outbox.size < this.o.outboxBatches) {
        try {
          this.outbox.set(r, this.entry(r, this.o.log.takeBatch(r)));
        } catch (err) {
          // Left for send(), which reads it again and stops publishing loudly if it is still not there.
          this.o.logger.error({ err, rseq: r }, 'cannot read a committed replication record');
        }
      } else {
        this.o.log.takeBatch(r);
        if (!this.full) this.o.logger.error({ outboxBatches: this.o.outboxBatches, rseq: r }, 'replication outbox full: records are read back from the store once NATS takes them');
        this.full = true;
        this.overflow++;
      }
    }
    this.seen = Math.max(this.seen, upTo);
    this.pump();
  }

  private entry(rseq: number, b = readReplicatedBatch(this.o.store, rseq)): Entry {
    if (b === undefined) throw new Error(`replication log has no record ${rseq}`);
    return { bytes: encodeBatch(b, this.o.settings.keys, this.subject), id: messageIdOf(b), journalLast: b.j?.[1] ?? 0 };
  }

  private async run(): Promise<void> {
    this.link ??= await openNatsLink(this.o.settings, this.o.logger, () => this.closed, 'pm-sequencer');
    if (this.link === undefined) return;
    while (!this.closed) {
      try {
        await ensureStream(this.link.jsm, this.o.settings);
        const last = await streamLastRseq(this.link.jsm, this.o.settings.stream);
        if (last > this.o.log.lastRseq) {
          this.o.logger.error(
            { streamLast: last, logLast: this.o.log.lastRseq, stream: this.o.settings.stream },
            'the journal stream holds records this store never wrote (another sequencer\'s stream?): not publishing',
          );
          return;
        }
        this.confirmed(last, this.journalLastOf(last));
        this.next = last + 1;
        this.broken = false;
        this.ready = true;
        this.lastWarning = undefined;
        this.pump();
        // Wait until a publish fails (or the publisher closes), then resynchronise from the stream.
        while (!this.closed && !(this.broken && this.inflight === 0)) await new Promise((r) => setTimeout(r, RETRY_MS));
        this.ready = false;
      } catch (err) {
        if (this.closed) return;
        // Once per episode (NATS down retries every RETRY_MS).
        const why = (err as Error).message;
        if (why !== this.lastWarning) this.o.logger.warn({ err: why }, 'journal stream unavailable; retrying');
        this.lastWarning = why;
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  }

  /** The journal seq the stream holds up to once it holds record `rseq`: that of the last journal batch at or before it. */
  private journalLastOf(rseq: number): number {
    for (const { value } of this.o.store.replication.getRange({ start: rseq, end: 0, reverse: true, limit: 64 })) {
      const j = (value as { j?: [number, number] }).j;
      if (j !== undefined) return j[1];
    }
    return this.confirmedSeq;
  }

  private confirmed(rseq: number, journalSeq: number): void {
    if (rseq <= this.confirmedRseq) return;
    for (let r = this.confirmedRseq + 1; r <= rseq; r++) this.outbox.delete(r);
    this.confirmedRseq = rseq;
    this.confirmedSeq = Math.max(this.confirmedSeq, journalSeq);
    let n = 0;
    while (n < this.waiting.length && this.waiting[n]!.rseq <= rseq) this.waiting[n++]!.resolve();
    if (n > 0) this.waiting.splice(0, n);
    if (this.full && this.outbox.size < this.o.outboxBatches) {
      this.full = false;
      this.o.logger.info({ confirmedRseq: rseq }, 'replication outbox has room again');
    }
  }

  private pump(): void {
    if (!this.ready || this.broken || this.closed || this.link === undefined) return;
    while (this.inflight < WINDOW && this.next <= this.o.log.committedRseq) this.send(this.next++);
  }

  private send(rseq: number): void {
    let e: Entry;
    try {
      e = this.outbox.get(rseq) ?? this.entry(rseq);
    } catch (err) {
      this.o.logger.error({ err, rseq }, 'cannot read a replication record; publishing stopped');
      this.broken = true;
      return;
    }
    this.inflight++;
    if (e.journalLast > 0) this.publishedSeq = e.journalLast;
    this.link!.js.publish(this.subject, e.bytes, { msgID: e.id, expect: { lastSequence: rseq - 1 } }).then(
      () => {
        this.inflight--;
        this.confirmed(rseq, e.journalLast);
        this.pump();
      },
      (err: unknown) => {
        this.inflight--;
        if (!this.broken && !this.closed) this.o.logger.warn({ err: (err as Error).message, rseq }, 'journal stream publish failed; resynchronising');
        this.broken = true;
      },
    );
  }
}
