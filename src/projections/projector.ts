/**
 * Projections: read models derived from the committed journal (market data, wallet data).
 *
 * Decision (STYLE asks for it here): projections TAIL the journal by sequence; they do not run inside the
 * engine's fill transaction. The engine calls `onCommitted(events)` after each group commit, in sequence
 * order; the projector hands every event to every projection whose cursor is below the event's seq, then
 * records each projection's new cursor. Re-applying an event is impossible (seq <= cursor is skipped),
 * which is what makes a replay idempotent. After a crash the views may trail the journal; `catchUp()` at
 * start-up reads the journal from the lowest cursor and applies what each projection is missing.
 *
 * Why tail instead of joining the engine's transaction: the matching hot path stays free of read-model
 * work, a new projection can be added later and built from the whole journal, and a projection bug can
 * never fail or delay an order's commit.
 *
 * A projection's writes are deferred and coalesced (view-writes.ts) and read back before they commit through
 * an overlay (view-store.ts); both are re-exported here, the projections' one door.
 */
import type { JournalEvent } from '../domain/events.ts';
import type { Store } from '../journal/env.ts';
import { metaKeys } from '../journal/keys.ts';
import { readJournal } from '../journal/recovery.ts';
import type { Logger } from '../runtime/log.ts';
import type { ViewWrites } from './view-writes.ts';

export { ViewStore, compareKeys } from './view-store.ts';
export { ViewWrites, type ViewSink, type ViewWritesOptions } from './view-writes.ts';

export interface Projection {
  /** Stable name: the cursor key. Renaming it rebuilds the projection from the journal. */
  readonly name: string;
  /**
   * Applies one committed event. Must be deterministic and write synchronously, only through overlays
   * that share the projector's `ViewWrites` (or, without one, issue at once), so its writes go out with
   * the cursor that covers them and never after it.
   */
  apply(e: JournalEvent): void;
}

export class Projector {
  private readonly cursors = new Map<string, number>();
  /** Projections whose cursor moved since the last flush (deferred mode). */
  private readonly unsaved = new Set<string>();

  /**
   * `deferral` must be the one the projections' overlays share: the cursors then wait for the flush that
   * issues the view writes they cover. Without one, cursors are issued at the end of each apply.
   */
  constructor(
    private readonly store: Store,
    private readonly projections: readonly Projection[],
    private readonly log: Logger,
    private readonly deferral?: ViewWrites,
  ) {
    for (const p of projections) {
      if (this.cursors.has(p.name)) throw new Error(`two projections named ${p.name}`);
      const c = store.meta.get(metaKeys.projectionCursor(p.name));
      this.cursors.set(p.name, typeof c === 'number' ? c : 0);
    }
    deferral?.registerCursors({ issue: () => this.issueCursors() });
  }

  cursor(name: string): number {
    return this.cursors.get(name) ?? 0;
  }

  /**
   * Applies everything the journal holds beyond each projection's cursor, issuing the held writes after
   * each batch (a long replay holds one batch at most, or the bound). Returns the events applied.
   */
  catchUp(batchSize = 10_000): number {
    if (this.projections.length === 0) return 0;
    const from = Math.min(...this.cursors.values()) + 1;
    let applied = 0;
    // Fills live in their own table, so the journal is read as the merge of both (recovery.readJournal).
    let batch: JournalEvent[] = [];
    for (const e of readJournal(this.store, from)) {
      batch.push(e);
      if (batch.length < batchSize) continue;
      applied += this.apply(batch);
      this.deferral?.flush();
      batch = [];
    }
    if (batch.length > 0) applied += this.apply(batch);
    this.deferral?.flush();
    if (applied > 0) this.log.info({ applied }, 'projections caught up with the journal');
    return applied;
  }

  /** The engine's commit listener: events in sequence order, already durable. */
  onCommitted = (events: readonly JournalEvent[]): void => {
    this.apply(events);
  };

  private apply(events: readonly JournalEvent[]): number {
    const w = this.deferral;
    let applied = 0;
    for (const p of this.projections) {
      let cursor = this.cursors.get(p.name)!;
      for (const e of events) {
        if (e.seq <= cursor) continue;
        try {
          p.apply(e);
        } catch (err) {
          // A read model that cannot apply an event stops where it is: the journal keeps the truth and the
          // next start retries from this cursor. Trading is unaffected.
          this.log.error({ err, projection: p.name, seq: e.seq }, 'projection failed; it stops at its cursor');
          break;
        }
        cursor = e.seq;
        applied++;
        if (w !== undefined && w.full) {
          // Between two events the writes held and the cursors are consistent: issue them now, not later.
          this.advance(p.name, cursor);
          w.flush();
        }
      }
      if (cursor !== this.cursors.get(p.name)) this.advance(p.name, cursor);
    }
    return applied;
  }

  private advance(name: string, cursor: number): void {
    this.cursors.set(name, cursor);
    if (this.deferral === undefined) void this.store.meta.put(metaKeys.projectionCursor(name), cursor);
    else if (!this.unsaved.has(name)) {
      this.unsaved.add(name);
      this.deferral.add();
    }
  }

  private issueCursors(): void {
    for (const name of this.unsaved) void this.store.meta.put(metaKeys.projectionCursor(name), this.cursors.get(name)!);
    this.unsaved.clear();
  }
}
