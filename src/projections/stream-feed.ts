/**
 * The streams' events, produced from committed journal batches: after the committed books applied a batch
 * (committed-books.ts onApplied), each topic that has a subscriber gets one frame with everything the batch
 * means for it, serialized once (the edge publishes it to every socket on the topic, edge/ws/channels.ts).
 * Nothing here runs before the commit, and batches arrive in journal order, so events leave in journal
 * order and never report what a crash could undo.
 *
 * After the acknowledgements: onApplied only queues the batch; the frames are built and published in a
 * setImmediate, so the answers the commit releases (they run as microtasks once the commit's listeners
 * return) and the next group commit's flush go first, and the streams' work is not in every order's
 * latency. Frames are built from the committed books as they are when that turn runs, so the batches queued
 * meanwhile (normally one; more when commits complete back to back) are merged first into one, as if they
 * had been one commit: their levels' union with the totals now, their fills and events in journal order.
 * A client applying the deltas still lands on what GET /book serves; a `price_change` may list a level
 * whose total ended where it started. A socket that subscribes in between gets a `book` that already holds
 * the queued batches and then their frames, whose totals it already has (a `last_trade_price` it may see
 * twice). See docs/decisions/streaming.md, "Streaming".
 *
 * Topics:
 *   market:<token>          book, price_change, last_trade_price, tick_size_change of one token
 *   market-custom:<token>   best_bid_ask (custom_feature_enabled sockets)
 *   market-lifecycle        new_market, market_resolved (custom_feature_enabled sockets)
 *   user:<wallet>           every order and trade event of a wallet (a user socket with no `markets`)
 *   user:<wallet>:<cid>     those of one market (a user socket that lists markets)
 * A socket only ever subscribes to topics of its own wallet (edge/ws/channels.ts), which is the isolation.
 *
 * Market channel, per token and batch:
 *   - tick_size_change when the batch changed the tick;
 *   - one last_trade_price per fill of the batch that fills this token (a MINT or MERGE fills both, each
 *     at its own price);
 *   - one price_change with every level of this token whose total changed, each entry with the hash GET
 *     /book serves after the batch and the best bid and ask. Each token's topic gets its own entries (one
 *     order changes both tokens' books: a client on both tokens receives both frames);
 *   - after a batch with fills, the token's full `book`: at once, or, when its last post-trade book left
 *     less than bookIntervalMs ago, once that interval ends (one book for the trades in between; the
 *     price_changes keep clients exact meanwhile). Full books of deep markets after every trade were the
 *     bulk of the bytes (docs/decisions/streaming.md, "Streaming").
 * A client that applies price_change totals to its last `book` holds what GET /book serves: both come from
 * the same committed state (test/e2e/stream.test.ts replays 2,000 random orders to check it).
 *
 * User channel: stream-user-events.ts (its header says what each journal event sends).
 *
 * Costs: nothing is built for a topic without subscribers (the `wants` check comes first); a book body is
 * built once per version (committed-books.ts), shared by /book, the `book` event and price_change hashes,
 * and its `book` event once per version too (bookMessage), shared by the feed and every initial dump.
 */
import type { FillEvent, JournalEvent } from '../domain/events.ts';
import { DEFAULT_OUTCOMES } from '../domain/market-rules.ts';
import { PIPS, formatPips, formatUnits } from '../domain/units.ts';
import type { BestBidAskEvent, LastTradePriceEvent, MarketResolvedEvent, NewMarketEvent, PriceChange, PriceChangeEvent, TickSizeChangeEvent } from '../edge/schemas/stream.ts';
import { lastTradeSide } from '../journal/recovery.ts';
import type { BookTop, CommittedBook, CommittedBooks, MarketChange } from './committed-books.ts';
import { Frames, LIFECYCLE_TOPIC, customTopic, marketTopic, type StreamSink } from './stream-frames.ts';
import { UserEvents, type OrderFacts } from './stream-user-events.ts';

export { LIFECYCLE_TOPIC, customTopic, marketTopic, userTopic } from './stream-frames.ts';

/** What new_market and market_resolved say about a market (the catalog's record). */
export interface MarketInfo {
  id: string;
  question: string;
  slug: string;
  description: string;
  outcomes: readonly [string, string];
  event: { id: string; ticker: string; slug: string; title: string; description: string };
}

export interface FeedDeps {
  books: CommittedBooks;
  sink: StreamSink;
  /** An order's facts by id (the engine's order, in memory or stored). */
  order(orderId: string): OrderFacts | undefined;
  /** The catalog's outcome labels of a market. */
  outcomes(conditionId: string): readonly [string, string] | undefined;
  /** The catalog's description of a market. */
  marketInfo(conditionId: string): MarketInfo | undefined;
  /** A committed fill by its journal seq (a `trade` move names its fill so). */
  fill(seq: number): FillEvent | undefined;
  /** Called after a batch's frames are published (the commit-to-publish metric). */
  published?: () => void;
  /** Least time between two post-trade `book` events of a token (0: after every batch with a trade). */
  bookIntervalMs?: number;
}

/**
 * Each body's `book` event, built on its first use. committed-books.ts builds a token's body once per
 * version (a new object for each), so keying on the body is keying on the version, with no token or
 * version number to compare: feed frames and every socket's initial dump share one string per version,
 * and a dump flood costs no serializing. Entries go when their body is dropped.
 */
const bookMessages = new WeakMap<CommittedBook, string>();

/** The `book` event of a committed body: the same bytes with `event_type` first and the timestamp in ms. */
export function bookMessage(b: CommittedBook): string {
  let m = bookMessages.get(b);
  if (m !== undefined) return m;
  const json = b.json;
  const at = json.indexOf('"timestamp":"') + 13;
  const end = json.indexOf('"', at);
  m = '{"event_type":"book",' + json.slice(1, at) + b.ts + json.slice(end);
  bookMessages.set(b, m);
  return m;
}

const price = (pips: number) => (pips > 0 ? formatPips(pips) : '');

export class StreamFeed {
  /** Frames published (one per topic and batch) and events in them, since start. */
  readonly counters = { frames: 0, events: 0 };
  /** Per token: when its last post-trade `book` left (ms, performance.now()). */
  private readonly lastBook = new Map<string, number>();
  /** Tokens traded since their last `book`, waiting for their interval, with their topics. */
  private readonly booksDue = new Map<string, string>();
  private bookTimer: NodeJS.Timeout | undefined;
  /** Batches applied since the last publishing turn, in journal order. */
  private queued: Array<{ changes: readonly MarketChange[]; events: readonly JournalEvent[] }> = [];
  private publishing: NodeJS.Immediate | undefined;
  private readonly user: UserEvents;

  constructor(private readonly d: FeedDeps) {
    this.user = new UserEvents(d);
  }

  /** Publishes what is queued, then stops the timer of the books waiting for their interval. */
  close(): void {
    if (this.publishing !== undefined) this.publishQueued();
    if (this.bookTimer !== undefined) clearTimeout(this.bookTimer);
    this.bookTimer = undefined;
    this.booksDue.clear();
  }

  /**
   * A trade touched the token's book: its `book` goes out now if the last one left at least bookIntervalMs
   * ago, else when that interval ends (one frame however many trades came in between). The price_change of
   * the same batch already carries the levels, so a client is exact meanwhile; the `book` is the refresh.
   */
  private bookAfterTrade(token: string, topic: string, out: Frames): void {
    const interval = this.d.bookIntervalMs ?? 0;
    const now = performance.now();
    const last = this.lastBook.get(token);
    if (last === undefined || now - last >= interval) {
      this.lastBook.set(token, now);
      this.booksDue.delete(token);
      out.add(topic, bookMessage(this.d.books.book(token)!));
      return;
    }
    this.booksDue.set(token, topic);
    if (this.bookTimer === undefined) {
      this.bookTimer = setTimeout(() => this.sendDueBooks(), Math.max(1, last + interval - now));
      this.bookTimer.unref();
    }
  }

  private sendDueBooks(): void {
    this.bookTimer = undefined;
    const interval = this.d.bookIntervalMs ?? 0;
    const now = performance.now();
    const out = new Frames();
    let next = Infinity;
    for (const [token, topic] of this.booksDue) {
      const due = (this.lastBook.get(token) ?? 0) + interval;
      if (due > now) {
        next = Math.min(next, due);
        continue;
      }
      this.booksDue.delete(token);
      this.lastBook.set(token, now);
      const book = this.d.books.book(token);
      if (book !== undefined && this.d.sink.wants(topic)) out.add(topic, bookMessage(book));
    }
    out.flush(this.d.sink, this.counters);
    if (next !== Infinity) {
      this.bookTimer = setTimeout(() => this.sendDueBooks(), Math.max(1, next - now));
      this.bookTimer.unref();
    }
  }

  /** committed-books.ts onApplied: queues the batch for the publishing turn (header: "After the acknowledgements"). */
  onApplied = (changes: readonly MarketChange[], events: readonly JournalEvent[]): void => {
    this.queued.push({ changes, events });
    this.publishing ??= setImmediate(this.publishQueued);
  };

  /** The queued batches' frames, one per topic that has a subscriber, the batches merged into one. */
  private readonly publishQueued = (): void => {
    if (this.publishing !== undefined) clearImmediate(this.publishing);
    this.publishing = undefined;
    const queued = this.queued;
    this.queued = [];
    if (queued.length === 0) return;
    const changes = queued.length === 1 ? queued[0].changes : mergeChanges(queued.map((q) => q.changes));
    const events = queued.length === 1 ? queued[0].events : queued.flatMap((q) => q.events);
    const out = new Frames();
    for (const c of changes) this.marketEvents(c, out);
    this.user.build(events, out);
    if (out.flush(this.d.sink, this.counters) > 0) this.d.published?.();
  };

  private marketEvents(c: MarketChange, out: Frames): void {
    const { sink, books } = this.d;
    for (const outcome of [0, 1] as const) {
      const token = c.tokenIds[outcome];
      const topic = marketTopic(token);
      if (sink.wants(topic)) {
        const book = books.book(token)!;
        const ts = String(book.ts);
        if (c.tickBefore !== undefined) {
          const ev: TickSizeChangeEvent = { event_type: 'tick_size_change', asset_id: token, market: c.conditionId, old_tick_size: formatPips(c.tickBefore), new_tick_size: JSON.parse(book.json).tick_size, timestamp: ts };
          out.add(topic, JSON.stringify(ev));
        }
        if (c.fills.length > 0) {
          for (const f of c.fills) {
            const own = f.takerTokenId === token ? f.takerPricePips : f.makerTokenId === token ? f.makerPricePips : 0;
            if (own === 0) continue;
            const ev: LastTradePriceEvent = {
              event_type: 'last_trade_price',
              asset_id: token,
              market: c.conditionId,
              price: formatPips(own),
              side: lastTradeSide(f),
              size: formatUnits(f.size),
              fee_rate_bps: String(this.d.order(f.takerOrderId)?.takerFeeBps ?? 0),
              timestamp: String(f.ts),
              transaction_hash: f.txHash,
            };
            out.add(topic, JSON.stringify(ev));
          }
        }
        const levels = this.priceChanges(c, outcome, token, book);
        if (levels.length > 0) {
          const ev: PriceChangeEvent = { event_type: 'price_change', market: c.conditionId, timestamp: ts, price_changes: levels };
          out.add(topic, JSON.stringify(ev));
        }
        if (c.fills.length > 0) this.bookAfterTrade(token, topic, out);
      }
      const custom = customTopic(token);
      if (sink.wants(custom)) {
        const before = c.topBefore[outcome];
        const now = books.top(token)!;
        if (before.bid !== now.bid || before.ask !== now.ask) {
          const ev: BestBidAskEvent = { event_type: 'best_bid_ask', market: c.conditionId, asset_id: token, best_bid: price(now.bid), best_ask: price(now.ask), spread: spread(now), timestamp: String(books.book(token)!.ts) };
          out.add(custom, JSON.stringify(ev));
        }
      }
    }
    if ((c.created || c.resolved !== undefined) && sink.wants(LIFECYCLE_TOPIC)) {
      const info = this.d.marketInfo(c.conditionId);
      const ts = String(this.d.books.book(c.tokenIds[0])!.ts);
      const base: Omit<NewMarketEvent, 'event_type'> = {
        id: info?.id ?? '',
        question: info?.question ?? '',
        market: c.conditionId,
        slug: info?.slug ?? '',
        description: info?.description ?? '',
        assets_ids: [c.tokenIds[0], c.tokenIds[1]],
        outcomes: [...(info?.outcomes ?? DEFAULT_OUTCOMES)],
        event_message: info?.event ?? { id: '', ticker: '', slug: '', title: '', description: '' },
        timestamp: ts,
      };
      if (c.created) out.add(LIFECYCLE_TOPIC, JSON.stringify({ event_type: 'new_market', ...base } satisfies NewMarketEvent));
      if (c.resolved !== undefined) {
        const w = c.resolved.winningOutcome;
        const ev: MarketResolvedEvent = { ...base, event_type: 'market_resolved', winning_asset_id: c.tokenIds[w], winning_outcome: base.outcomes[w] };
        out.add(LIFECYCLE_TOPIC, JSON.stringify(ev));
      }
    }
  }

  /** The changed levels of one token, in its own price space (outcome 1 mirrors outcome 0's levels). */
  private priceChanges(c: MarketChange, outcome: 0 | 1, token: string, book: CommittedBook): PriceChange[] {
    const books = this.d.books;
    const top = books.top(token)!;
    const bestBid = price(top.bid);
    const bestAsk = price(top.ask);
    const out: PriceChange[] = [];
    const level = (p: number, side: 'BUY' | 'SELL') =>
      out.push({ asset_id: token, price: formatPips(p), size: formatUnits(books.levelSize(token, side, p)), side, hash: book.hash, best_bid: bestBid, best_ask: bestAsk });
    for (const p of c.bids) outcome === 0 ? level(p, 'BUY') : level(PIPS - p, 'SELL');
    for (const p of c.asks) outcome === 0 ? level(p, 'SELL') : level(PIPS - p, 'BUY');
    return out;
  }

}

/**
 * Consecutive batches' changes as one batch's (allocates: only when commits completed back to back): per
 * market, in order of first change, the union of the changed levels (their totals are read when the frames
 * are built, so they are the latest), the fills in journal order, created if any batch created it, the tick
 * and tops from before the first batch, the last resolution.
 */
function mergeChanges(batches: ReadonlyArray<readonly MarketChange[]>): MarketChange[] {
  const byMarket = new Map<string, { change: MarketChange; bids: Set<number>; asks: Set<number> }>();
  for (const changes of batches) {
    for (const c of changes) {
      const m = byMarket.get(c.conditionId);
      if (m === undefined) {
        byMarket.set(c.conditionId, { change: { ...c, bids: [...c.bids], asks: [...c.asks], fills: [...c.fills] }, bids: new Set(c.bids), asks: new Set(c.asks) });
        continue;
      }
      const into = m.change;
      for (const p of c.bids) {
        if (m.bids.has(p)) continue;
        m.bids.add(p);
        into.bids.push(p);
      }
      for (const p of c.asks) {
        if (m.asks.has(p)) continue;
        m.asks.add(p);
        into.asks.push(p);
      }
      for (const f of c.fills) into.fills.push(f);
      into.created ||= c.created;
      into.tickBefore ??= c.tickBefore;
      if (c.resolved !== undefined) into.resolved = c.resolved;
    }
  }
  return [...byMarket.values()].map((m) => m.change);
}

function spread(t: BookTop): string {
  return t.bid > 0 && t.ask > 0 ? formatPips(t.ask - t.bid) : '';
}

