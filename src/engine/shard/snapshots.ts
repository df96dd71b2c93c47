/**
 * The published books: the /book bodies the shards publish, how current they are, and who is told.
 *
 * Owns the newest body and version per token id (as the worker built them: worker.ts, "Snapshots"), per
 * market the RESULT counts that say whether its body may be stale, per shard the publications asked for and
 * in flight, and the onSnapshots listeners.
 *
 * Staleness is exact because both sides count the same thing: the shard numbers each publication with the
 * RESULT records it had written before building it (resultSeq), and this module counts the RESULTs it
 * applied per shard (noteResult, called for every RESULT before its group is applied), remembering per
 * market the last one that may have changed its book. A body is stale when such a RESULT is newer than every
 * publication covering the market. Counting RESULTs, not time, is what makes the comparison exact although
 * snapshots (postMessage) and results (ring) reach this thread in either order.
 *
 * Invariants: a market's `published` and a shard's `complete` only grow; a refresh resolves when the answer
 * to its OP_SNAPSHOT has arrived (the bodies are readable then), or at once when the engine is down; after a
 * halt every refresh waiting is let go (releaseWaiters).
 */
import type { Logger } from '../../runtime/log.ts';
import { MatchCode } from '../book/api.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { MarketTable } from '../markets/market-table.ts';
import { OP_CANCEL, OP_EXPIRE, OP_RESET, OP_SNAPSHOT, OP_STOP, OP_TIME, type ResultRecord, type SnapshotMessage } from './protocol.ts';
import type { ShardRecord } from './link-types.ts';
import type { ShardLink } from './shard-link.ts';

export interface BookSnapshot {
  version: number;
  json: string;
}

interface ShardSnaps {
  /** RESULTs of the shard applied so far. */
  results: number;
  /** resultSeq of its newest publication that left nothing unpublished. */
  complete: number;
  /** The refresh in flight, and the RESULT count when it was asked. */
  refresh: { seq: number; promise: Promise<void> } | undefined;
}

export class Snapshots {
  private readonly bodies = new Map<string, BookSnapshot>();
  private readonly listeners: Array<(tokenIds: readonly string[]) => void> = [];
  /** refresh() callers by request id, answered when the shard's snapshot message arrives. */
  private readonly waiters = new Map<number, () => void>();
  /** Per market id, in RESULT counts of its shard: the last RESULT that may have changed its book, and its newest publication. */
  private readonly bookSeqs = new Map<number, { changed: number; published: number }>();
  private readonly shardSnaps: ShardSnaps[] = [];

  constructor(
    private readonly markets: MarketTable,
    private readonly link: Pick<ShardLink, 'snapshot'>,
    private readonly life: Lifecycle,
    private readonly log: Logger,
  ) {}

  /** The newest published body of the token's book. */
  get(tokenId: string): BookSnapshot | undefined {
    return this.bodies.get(tokenId);
  }

  /**
   * Asks the market's shard to publish every change it has not published yet (OP_SNAPSHOT); resolves once
   * the snapshots of all its markets reflect at least every command answered before the call.
   */
  refresh(conditionId: string): Promise<void> {
    const m = this.markets.get(conditionId);
    if (m === undefined || this.life.down) return Promise.resolve();
    const st = this.shardSnap(m.shard);
    // A request in flight made after the last RESULT this shard applied covers whatever a new one would:
    // every command answered so far went into the ring before it. Readers of a busy market share it.
    if (st.refresh !== undefined && st.refresh.seq === st.results) return st.refresh.promise;
    // Resolved by the snapshot message itself (it travels by postMessage, which can arrive after the
    // command's RESULT in the ring), so the new bodies are readable when the promise resolves.
    const promise = new Promise<void>((resolve) => {
      this.waiters.set(this.link.snapshot(m.shard, m.marketId), resolve);
    });
    const refresh = { seq: st.results, promise };
    st.refresh = refresh;
    void promise.then(() => {
      if (st.refresh === refresh) st.refresh = undefined;
    });
    return promise;
  }

  /**
   * True when the token's market may have changed after its published snapshot was built: a RESULT that may
   * have changed the book was applied here and no publication reflecting it has arrived yet. False for an
   * unknown token.
   */
  stale(tokenId: string): boolean {
    const tm = this.markets.token(tokenId);
    if (tm === undefined) return false;
    const b = this.bookSeqs.get(tm.market.marketId);
    return b !== undefined && b.changed > b.published && b.changed > this.shardSnap(tm.market.shard).complete;
  }

  /** Calls `listener` with the token ids of each publication, once the new bodies are readable. */
  onSnapshots(listener: (tokenIds: readonly string[]) => void): void {
    this.listeners.push(listener);
  }

  /** Counts the shard's RESULT (as the shard does) and notes which market's book it may have changed. */
  noteResult(shard: number, r: ResultRecord, group: readonly ShardRecord[]): void {
    const seq = ++this.shardSnap(shard).results;
    switch (r.cmdOp) {
      case OP_SNAPSHOT:
      case OP_STOP:
      case OP_TIME:
      case OP_RESET:
        return;
      case OP_CANCEL:
        // The shard leaves its book, and so its snapshot, untouched when a cancel finds nothing.
        if (r.code !== MatchCode.OK) return;
        break;
      case OP_EXPIRE:
        for (const rec of group) this.bookSeq(rec.marketId).changed = seq;
        return;
    }
    this.bookSeq(r.marketId).changed = seq;
  }

  /** A publication of the shard arrived: the new bodies, how far they reach, and a refresh it answers. */
  arrived(shard: number, msg: SnapshotMessage): void {
    for (const s of msg.items) {
      this.bodies.set(s.tokenId, s);
      const tm = this.markets.token(s.tokenId);
      if (tm !== undefined) {
        const b = this.bookSeq(tm.market.marketId);
        if (msg.resultSeq > b.published) b.published = msg.resultSeq;
      }
    }
    const st = this.shardSnap(shard);
    if (msg.complete && msg.resultSeq > st.complete) st.complete = msg.resultSeq;
    if (msg.items.length > 0 && this.listeners.length > 0) this.published(msg.items.map((s) => s.tokenId));
    if (msg.reqId !== undefined) {
      this.waiters.get(msg.reqId)?.();
      this.waiters.delete(msg.reqId);
    }
  }

  /** Halt step: every refresh waiting resolves (its shard will not answer). */
  releaseWaiters(): void {
    for (const w of this.waiters.values()) w();
    this.waiters.clear();
  }

  private published(tokenIds: readonly string[]): void {
    for (const l of this.listeners) {
      try {
        l(tokenIds);
      } catch (err) {
        this.log.error({ err }, 'onSnapshots listener failed');
      }
    }
  }

  private shardSnap(shard: number): ShardSnaps {
    return (this.shardSnaps[shard] ??= { results: 0, complete: 0, refresh: undefined });
  }

  private bookSeq(marketId: number): { changed: number; published: number } {
    let b = this.bookSeqs.get(marketId);
    if (b === undefined) {
      b = { changed: 0, published: 0 };
      this.bookSeqs.set(marketId, b);
    }
    return b;
  }
}
