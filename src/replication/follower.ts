/**
 * The replica's follower: reads the journal stream from the record after the last one this store applied,
 * checks each record, writes it into the replica's LMDB exactly as the sequencer wrote it
 * (journal/replication-log.ts), and then tells the read side (replica-engine.ts: books, projections, the
 * order index, API keys) what the batch held, in journal order.
 *
 * Forgeries first (docs/decisions/scale-out.md, "The cluster's threat model"): a message on a subject other than the
 * stream's own (`<stream lowercased>.batches`: one added to the stream by someone who could update it), or
 * whose authenticator fails (wire.ts: not made with the nodes' key for that subject), is skipped: never
 * applied, counted (`pm_replica_forged`) and logged at most every 10 s. It does not stop the follower, or
 * anyone who can publish to the stream could halt every replica; the records that follow it are checked as
 * usual (an authentic record's rseq says where it belongs).
 *
 * Checks, in order: the message decodes as a batch of a known version (wire.ts); its rseq is not one
 * already applied (a duplicate is skipped: a redelivery after a reconnect); its term is not older than the
 * highest one applied (a deposed sequencer's record that reached the stream some other way); its rseq is
 * exactly the next one; a journal batch starts exactly after the last journal seq applied. Anything else is refused loudly: logged
 * as an error, counted on /metrics (`pm_replica_refused`), and the follower stops for good, serving the
 * state it has (never a state with a hole in it) until an operator looks.
 *
 * A reconnect to NATS restarts the consumer from the next record (the server may have lost it).
 *
 * Lag (/metrics): records the stream holds beyond the last one applied, from the consumer's pending count
 * with each message and from the stream's last sequence, read every LAG_POLL_MS: a consumer that stopped
 * delivering (a stall, a lost consumer) shows as lag growing, not as a replica that is caught up.
 *
 * Catch-up: from the record after the last one this store applied (a new or lagging store first installs
 * the sequencer's newest snapshot: snapshot-install.ts), with one ordered consumer starting at the next
 * rseq. Records waiting in the queue are applied together (one LMDB transaction for up to MAX_GROUP of
 * them), so catching up costs a commit per group, not per batch; the read side is handed each batch's
 * events decoded from the batch itself (replication-log.ts eventsOfBatch), not read back from the store.
 */
import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import type { JournalEvent } from '../domain/events.ts';
import type { Store } from '../journal/env.ts';
import { metaKeys } from '../journal/keys.ts';
import { applyReplicatedBatches, eventsOfBatch, type ReplicatedBatch } from '../journal/replication-log.ts';
import type { Logger } from '../runtime/log.ts';
import { openNatsLink, streamLastRseq, subjectOf, type NatsLink, type StreamSettings } from './nats-link.ts';
import { RefusalLogger } from './seal.ts';
import { decodeBatch, WireAuthError, WireError } from './wire.ts';

const MAX_GROUP = 512;
/** How often the stream's last sequence is read for the lag figures. */
const LAG_POLL_MS = 1000;

export interface AppliedBatch {
  batch: ReplicatedBatch;
  /** The batch's journal events, decoded from what was written (empty for an aux record). */
  events: JournalEvent[];
}

export interface FollowerOptions {
  store: Store;
  logger: Logger;
  settings: StreamSettings;
  /** Told of each applied group, after its commit, batches in order. */
  onApplied: (applied: AppliedBatch[]) => void;
  /** Told, per record, the seconds from the sequencer issuing it to its application here (read models included). */
  applyDelay?: (seconds: number) => void;
  /** The connection to use instead of opening one (tests). */
  link?: NatsLink;
  /** ROLE=standby: the records are also kept in this store's replication log, so it can take over. */
  keepLog?: boolean;
}

export interface FollowerStats {
  appliedSeq: number;
  appliedRseq: number;
  lagBatches: number;
  lagSeconds: number;
  refused: number;
  forged: number;
}

export class Follower {
  appliedRseq: number;
  appliedSeq: number;
  /** The highest term applied (0: none yet, or a stream without leases). */
  appliedTerm: number;
  /** Why the follower stopped, once it refused a record. */
  refusal: string | undefined;
  /** Messages skipped as forgeries (another subject, a failed authenticator). */
  forged = 0;
  private readonly queue: Uint8Array[] = [];
  private readonly subject: string;
  private readonly forgeries: RefusalLogger;
  private applying = false;
  private streamPending = 0;
  /** The stream's last sequence (rseq) when it was last read (LAG_POLL_MS). */
  private streamLast = 0;
  private lagTimer: NodeJS.Timeout | undefined;
  /** Sequencer time (ms) of the last applied record. */
  private lastT = 0;
  private closed = false;
  private link: NatsLink | undefined;
  private messages: ConsumerMessages | undefined;
  private running: Promise<void> | undefined;
  private idle: Array<() => void> = [];
  private lastWarning: string | undefined;

  constructor(private readonly o: FollowerOptions) {
    this.appliedRseq = (o.store.meta.get(metaKeys.replicaAppliedRseq) as number | undefined) ?? 0;
    this.appliedSeq = (o.store.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
    this.appliedTerm = (o.store.meta.get(metaKeys.replicationTerm) as number | undefined) ?? 0;
    this.link = o.link;
    this.subject = subjectOf(o.settings.stream);
    this.forgeries = new RefusalLogger((d, m) => o.logger.error(d, m));
  }

  start(): void {
    this.running = this.run();
    this.lagTimer = setInterval(() => void this.pollStreamLast(), LAG_POLL_MS);
    this.lagTimer.unref();
  }

  stats(): FollowerStats {
    const lagBatches = Math.max(this.streamPending + this.queue.length, this.streamLast - this.appliedRseq);
    return {
      appliedSeq: this.appliedSeq,
      appliedRseq: this.appliedRseq,
      lagBatches,
      lagSeconds: lagBatches > 0 && this.lastT > 0 ? Math.max(0, (Date.now() - this.lastT) / 1000) : 0,
      refused: this.refusal === undefined ? 0 : 1,
      forged: this.forged,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.lagTimer !== undefined) clearInterval(this.lagTimer);
    await this.messages?.close().catch(() => undefined);
    await this.running?.catch(() => undefined);
    await this.whenIdle();
    if (this.o.link === undefined) await this.link?.close().catch(() => undefined);
  }

  /**
   * Resolves true once everything the stream held when this was called is applied (the stream's last sequence
   * read after the call: one read shared by the callers that arrive while another is under way), false when
   * that cannot be told within `timeoutMs` (NATS away, the stream not applied in time, the follower stopped).
   * A gateway asks before it refuses a key it does not hold (edge/forward.ts).
   */
  async caughtUp(timeoutMs: number): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    let last: number;
    try {
      last = await Promise.race([this.freshLast(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), timeoutMs).unref())]);
    } catch {
      return false;
    }
    while (this.appliedRseq < last) {
      if (this.refusal !== undefined || this.closed || Date.now() >= until) return false;
      await new Promise((r) => setTimeout(r, 5));
    }
    return true;
  }

  private lastRead: Promise<number> | undefined;
  private nextRead: Promise<number> | undefined;

  /** The stream's last sequence as read by a request sent after this call (coalesced). */
  private freshLast(): Promise<number> {
    const link = this.link;
    if (link === undefined || this.closed) return Promise.reject(new Error('not connected'));
    const read = () => streamLastRseq(link.jsm, this.o.settings.stream);
    if (this.lastRead === undefined) {
      const p = read().finally(() => {
        if (this.lastRead === p) this.lastRead = undefined;
      });
      this.lastRead = p;
      return p;
    }
    // A read is under way, sent before this call: the next one, shared by everyone who waits for it.
    if (this.nextRead === undefined) {
      const after = this.lastRead.catch(() => 0);
      const p = after.then(() => {
        this.nextRead = undefined;
        const q = read().finally(() => {
          if (this.lastRead === q) this.lastRead = undefined;
        });
        this.lastRead = q;
        return q;
      });
      this.nextRead = p;
    }
    return this.nextRead;
  }

  /** Resolves when nothing is queued or being applied. */
  whenIdle(): Promise<void> {
    if (!this.applying && this.queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.idle.push(r));
  }

  /** Reads the stream's last sequence; unreachable NATS leaves the last figure (the lag it showed stays). */
  private async pollStreamLast(): Promise<void> {
    const link = this.link;
    if (link === undefined || this.closed) return;
    try {
      this.streamLast = Math.max(this.streamLast, await streamLastRseq(link.jsm, this.o.settings.stream));
    } catch {
      // The consumer's own retries log NATS being away; this figure simply waits for it.
    }
  }

  /** A message from the stream on `subject`; `pending`: how many more the stream holds for this consumer. */
  receive(data: Uint8Array, pending = 0, subject = this.subject): void {
    if (this.refusal !== undefined || this.closed) return;
    if (subject !== this.subject) return this.skipForged(`a message on ${subject}, not the stream's subject ${this.subject}`, { subject });
    this.queue.push(data);
    this.streamPending = pending;
    if (!this.applying) void this.applyQueued();
  }

  private async run(): Promise<void> {
    this.link ??= await openNatsLink(this.o.settings, this.o.logger, () => this.closed, 'pm-replica');
    if (this.link === undefined) return;
    // After a reconnect the server may have lost the (ephemeral) consumer: start a new one from the next
    // record rather than wait for the client to notice missed heartbeats. A record delivered twice is skipped.
    const link = this.link;
    void (async () => {
      for await (const st of link.nc.status()) if (st.type === 'reconnect') void this.messages?.close().catch(() => undefined);
    })();
    while (!this.closed && this.refusal === undefined) {
      try {
        await this.whenIdle();
        const consumer = await this.link.js.consumers.get(this.o.settings.stream, {
          deliver_policy: DeliverPolicy.StartSequence,
          opt_start_seq: this.appliedRseq + 1,
        });
        this.messages = await consumer.consume({ max_messages: 1024, expires: 5000 });
        this.lastWarning = undefined;
        for await (const m of this.messages) {
          if (this.closed || this.refusal !== undefined) break;
          this.receive(m.data, m.info.pending, m.subject);
        }
      } catch (err) {
        if (this.closed) return;
        // Once per episode: a replica started before its sequencer created the stream retries every 250 ms.
        const why = (err as Error).message;
        if (why !== this.lastWarning) this.o.logger.warn({ err: why }, 'journal stream unavailable; retrying');
        this.lastWarning = why;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  private skipForged(why: string, detail: Record<string, unknown>): void {
    this.forged++;
    this.forgeries.refused('forged-record', { ...detail, appliedRseq: this.appliedRseq }, `skipped a forged journal record: ${why} (counted: pm_replica_forged)`);
  }

  private refuse(why: string, detail: Record<string, unknown>): void {
    this.refusal = why;
    this.queue.length = 0;
    this.o.logger.error({ ...detail, appliedRseq: this.appliedRseq, appliedSeq: this.appliedSeq }, `replica refused a journal batch: ${why}; applying stopped`);
    void this.messages?.close().catch(() => undefined);
  }

  /** Checks the queued records and applies the valid prefix, one group per transaction. */
  private async applyQueued(): Promise<void> {
    this.applying = true;
    try {
      while (this.queue.length > 0 && this.refusal === undefined) {
        const group: ReplicatedBatch[] = [];
        let rseq = this.appliedRseq;
        let seq = this.appliedSeq;
        let term = this.appliedTerm;
        while (this.queue.length > 0 && group.length < MAX_GROUP) {
          const data = this.queue.shift()!;
          let b: ReplicatedBatch;
          try {
            b = decodeBatch(data, this.o.settings.keys, this.subject);
          } catch (e) {
            if (e instanceof WireAuthError) {
              this.skipForged(e.message, { after: rseq });
              continue;
            }
            if (!(e instanceof WireError)) throw e;
            this.refuse(`corrupt batch (${e.message})`, { after: rseq });
            break;
          }
          if (b.r <= rseq) continue;
          if (b.T !== undefined ? b.T < term : term > 0) {
            this.refuse(`batch r${b.r} is of term ${b.T ?? 'none'}, older than term ${term} already applied (a deposed sequencer's)`, { rseq: b.r, term: b.T });
            break;
          }
          if (b.r !== rseq + 1) {
            this.refuse(`batch r${b.r} is not the next one (expected r${rseq + 1})`, { rseq: b.r });
            break;
          }
          if (b.j !== undefined && b.j[0] !== seq + 1) {
            this.refuse(`batch r${b.r} starts at journal seq ${b.j[0]}, not ${seq + 1}`, { rseq: b.r, first: b.j[0] });
            break;
          }
          group.push(b);
          rseq = b.r;
          if (b.T !== undefined) term = b.T;
          if (b.j !== undefined) seq = b.j[1];
        }
        if (group.length === 0) continue;
        await applyReplicatedBatches(this.o.store, group, this.o.keepLog === true);
        this.appliedRseq = rseq;
        this.appliedTerm = term;
        this.appliedSeq = seq;
        // Each batch's events from its own values (decoded once), not read back from the store just written.
        const applied: AppliedBatch[] = group.map((b) => ({ batch: b, events: b.j === undefined ? [] : eventsOfBatch(b) }));
        const last = group[group.length - 1];
        this.lastT = last.t;
        this.o.onApplied(applied);
        const now = Date.now();
        for (const b of group) this.o.applyDelay?.(Math.max(0, (now - b.t) / 1000));
      }
    } catch (err) {
      this.refuse(`cannot apply (${(err as Error).message})`, { err });
    } finally {
      this.applying = false;
      const idle = this.idle;
      this.idle = [];
      for (const r of idle) r();
    }
  }
}
