/**
 * The committed books: every market's aggregated price levels as the journal has committed them, built
 * from journal events alone, with the GET /book bodies (and their hashes) of that state.
 *
 * Why a second copy of the books. The shards' books run ahead of the journal: a shard matches an order
 * before its group commit, and publishes snapshots on its own cadence. A stream that says "this level is
 * now 12" must never report what a crash could undo, and a client that applies every delta must land on
 * exactly what GET /book serves, hash included. Both hold by construction when the deltas and the /book
 * bodies come from one state that moves only with committed events, in journal order: this one.
 *
 * State, per market (condition id), in outcome 0's price space as the shard's book keeps it
 * (engine/book/api.ts): `bids` and `asks` map a price in pips to the total size resting there, in units.
 *   BUY outcome 0 at p  -> bid at p          SELL outcome 0 at p -> ask at p
 *   SELL outcome 1 at q -> bid at 10_000 - q  BUY outcome 1 at q -> ask at 10_000 - q
 * Outcome 1's book is the mirror (its bids are outcome 0's asks at 10_000 - p), so every change shows on
 * both tokens, each at its own price. Per resting order: its market, side of the book, price and the size
 * still resting (what its cancel or fills take away); plus the last trade of each token.
 *
 * Events (domain/events.ts), applied in journal order:
 *   market   creates the market, or changes its tick, minimum size or neg-risk flag (the body's frame)
 *   order    a GTC/GTD order rests with its full size (FOK/FAK never rest); its own fills in the same
 *            batch then take from it, so only the remainder is left when the batch ends
 *   fill     takes `size` from the maker's level (and the taker's, if it rests); last trade of each token
 *            it fills, at that token's price (a MINT or MERGE fills both)
 *   status   a final status removes what the order still had resting (cancel, expiry, self-trade,
 *            resolution, a FAK remainder that never rested is nothing to remove)
 * Everything else (balances, splits, merges of wallets, redemptions) leaves the books alone.
 *
 * A state's body is the shard's format (engine/shard/book-json.ts builds both, so the bytes cannot drift), with
 * `timestamp` the unix second of the last committed event that changed the market's book (levels, last
 * trade, tick), so the same events give the same bodies and hashes on any process that applies them (the
 * read replicas of DESIGN section 12). Bodies are built lazily, once per version, when someone reads them:
 * a market nobody watches costs only the level arithmetic per event.
 *
 * apply() returns what the batch changed, per market: the levels whose total differs from before the batch
 * (a level touched and restored is not a change), the fills, and frame changes. The stream builds its
 * deltas from that (projections/stream-feed.ts).
 *
 * Start-up: seed() takes the recovered state (resting orders, last trades, markets) with the instant it
 * stands for; bodies built from a seed carry that instant until the next change.
 *
 * Limits: a fill or status of an order this state does not hold (never seeded, or a journal damaged in a
 * way recovery refuses anyway) changes only what it can name and is counted in `unknownOrders`. A market
 * enters only with its committed `market` event, a batch after the engine registered it: until then a token
 * the engine knows has no book here. So the catalog's writes are answered after that commit, and a read
 * that meets the gap waits for it (app.ts).
 */
import type { FillEvent, JournalEvent, MarketEvent, SideName } from '../domain/events.ts';
import { PIPS } from '../domain/units.ts';
import type { Depth, Level } from '../engine/book/api.ts';
import { bookBodies, bookFrame, type BookFrame } from '../engine/shard/book-json.ts';
import { lastTradeSide } from '../journal/recovery.ts';

export interface LastTrade {
  pricePips: number;
  side: SideName;
}

/** What a market's body is framed with (the fields of a `market` event the books use). */
export interface BookMarketInput {
  conditionId: string;
  tokenIds: readonly [string, string];
  tickPips: number;
  minSizeUnits: number;
  negRisk: boolean;
}

/** An order resting on its book, as the seed gives it (an OrderRecord has these fields). */
export interface RestingInput {
  orderId: string;
  conditionId: string;
  outcome: 0 | 1;
  side: SideName;
  pricePips: number;
  sizeUnits: number;
  sizeMatched: number;
}

export interface BookSeed {
  markets: Iterable<BookMarketInput>;
  resting: Iterable<RestingInput>;
  lastTrades: Iterable<readonly [string, LastTrade]>;
  /** ms since the epoch: the instant the seeded state stands for (bodies carry it until a change). */
  ts: number;
  /** Per market, the instant of its last change when known (a sandbox revert: the snapshot's), else `ts`. */
  times?: ReadonlyMap<string, number>;
}

/** A token's body as GET /book serves it, its hash, and a version that grows with every change. */
export interface CommittedBook {
  version: number;
  json: string;
  hash: string;
  /** ms since the epoch of the state (the body's `timestamp` is its unix second). */
  ts: number;
}

/** Best bid and ask of a token in its own price space, 0 for an empty side. */
export interface BookTop {
  bid: number;
  ask: number;
}

/** What one batch changed in one market. Prices are outcome 0's; read it before the next apply(). */
export interface MarketChange {
  readonly conditionId: string;
  readonly tokenIds: readonly [string, string];
  /** Outcome-0 prices whose bid / ask total differs from before the batch (the new totals: levelSize). */
  readonly bids: number[];
  readonly asks: number[];
  /** The batch's fills in this market, in journal order. */
  readonly fills: FillEvent[];
  /** Set when the market entered the books in this batch. */
  created: boolean;
  /** The tick before the batch when the batch changed it. */
  tickBefore: number | undefined;
  /** The top of each token before the batch (outcome 0, outcome 1). */
  readonly topBefore: readonly [BookTop, BookTop];
  /** Set when the batch resolved the market. */
  resolved: { winningOutcome: 0 | 1 } | undefined;
}

interface BookMarket extends BookMarketInput {
  tokenIds: readonly [string, string];
  frame: BookFrame;
  bids: Map<number, number>;
  asks: Map<number, number>;
  lastTrade: [LastTrade | undefined, LastTrade | undefined];
  /** ms of the last change. */
  ts: number;
  version: number;
  /** The bodies of `version`, built on first read. */
  built: [CommittedBook, CommittedBook] | undefined;
  top: [BookTop, BookTop] | undefined;
}

interface Resting {
  market: BookMarket;
  /** On outcome 0's bid side (else its ask side). */
  bid: boolean;
  /** Outcome-0 price. */
  pips: number;
  remaining: number;
}

/** Per market in a batch: the totals its touched levels had before it. */
interface Pending {
  change: MarketChange;
  market: BookMarket;
  bidsBefore: Map<number, number>;
  asksBefore: Map<number, number>;
  /** The body changed (levels, last trade, frame). */
  dirty: boolean;
}

const EMPTY_TOP: BookTop = Object.freeze({ bid: 0, ask: 0 });

function onBid(outcome: 0 | 1, side: SideName): boolean {
  return (outcome === 0) === (side === 'BUY');
}

export class CommittedBooks {
  private readonly markets = new Map<string, BookMarket>();
  private readonly byToken = new Map<string, { market: BookMarket; outcome: 0 | 1 }>();
  private readonly resting = new Map<string, Resting>();
  private readonly listeners: Array<(changes: readonly MarketChange[], events: readonly JournalEvent[]) => void> = [];
  /** Fills or statuses of orders this state did not hold (see Limits in the header). */
  unknownOrders = 0;
  /** The last journal seq applied. */
  seq = 0;

  /** Each market's instant of last change (what its bodies carry): a sandbox snapshot keeps them for its revert. */
  times(): Array<[conditionId: string, ms: number]> {
    return [...this.markets.values()].map((m) => [m.conditionId, m.ts]);
  }

  /** Installs the recovered state. Allocates: start-up only. */
  seed(s: BookSeed): void {
    for (const m of s.markets) this.upsertMarket(m, s.times?.get(m.conditionId) ?? s.ts);
    for (const [tokenId, t] of s.lastTrades) {
      const tm = this.byToken.get(tokenId);
      if (tm !== undefined) tm.market.lastTrade[tm.outcome] = { pricePips: t.pricePips, side: t.side };
    }
    for (const o of s.resting) {
      const m = this.markets.get(o.conditionId);
      const remaining = o.sizeUnits - o.sizeMatched;
      if (m === undefined || remaining <= 0) continue;
      const bid = onBid(o.outcome, o.side);
      const pips = o.outcome === 0 ? o.pricePips : PIPS - o.pricePips;
      this.resting.set(o.orderId, { market: m, bid, pips, remaining });
      add(bid ? m.bids : m.asks, pips, remaining);
    }
  }

  /**
   * Applies one committed batch, events in journal order, and tells the listeners what it changed.
   * Returns the changes (read them before the next apply).
   */
  apply(events: readonly JournalEvent[]): MarketChange[] {
    const pending = new Map<string, Pending>();
    const touch = (m: BookMarket): Pending => {
      let p = pending.get(m.conditionId);
      if (p === undefined) {
        p = {
          market: m,
          change: { conditionId: m.conditionId, tokenIds: m.tokenIds, bids: [], asks: [], fills: [], created: false, tickBefore: undefined, topBefore: [this.topOf(m, 0), this.topOf(m, 1)], resolved: undefined },
          bidsBefore: new Map(),
          asksBefore: new Map(),
          dirty: false,
        };
        pending.set(m.conditionId, p);
      }
      return p;
    };
    const move = (p: Pending, bid: boolean, pips: number, delta: number): void => {
      const levels = bid ? p.market.bids : p.market.asks;
      const before = bid ? p.bidsBefore : p.asksBefore;
      if (!before.has(pips)) before.set(pips, levels.get(pips) ?? 0);
      add(levels, pips, delta);
      p.dirty = true;
    };
    const take = (p: Pending, orderId: string, size: number): void => {
      const r = this.resting.get(orderId);
      if (r === undefined) return;
      const n = Math.min(size, r.remaining);
      r.remaining -= n;
      move(p, r.bid, r.pips, -n);
      if (r.remaining === 0) this.resting.delete(orderId);
    };

    for (const e of events) {
      this.seq = e.seq;
      switch (e.type) {
        case 'market': {
          const existing = this.markets.get(e.conditionId);
          if (existing === undefined) {
            const m = this.upsertMarket(e, e.ts);
            const p = touch(m);
            p.change.created = true;
            p.dirty = true;
          } else if (frameDiffers(existing, e)) {
            const p = touch(existing);
            if (existing.tickPips !== e.tickPips && p.change.tickBefore === undefined) p.change.tickBefore = existing.tickPips;
            this.upsertMarket(e, e.ts);
            p.dirty = true;
          }
          break;
        }
        case 'order': {
          if (e.orderType !== 'GTC' && e.orderType !== 'GTD') break;
          const m = this.markets.get(e.conditionId);
          if (m === undefined) break;
          const bid = onBid(e.outcome, e.side);
          const pips = e.outcome === 0 ? e.pricePips : PIPS - e.pricePips;
          this.resting.set(e.orderId, { market: m, bid, pips, remaining: e.sizeUnits });
          move(touch(m), bid, pips, e.sizeUnits);
          break;
        }
        case 'fill': {
          const m = this.markets.get(e.conditionId);
          if (m === undefined) break;
          const p = touch(m);
          if (!this.resting.has(e.makerOrderId)) this.unknownOrders++;
          take(p, e.makerOrderId, e.size);
          take(p, e.takerOrderId, e.size);
          const side = lastTradeSide(e);
          m.lastTrade[e.takerOutcome] = { pricePips: e.takerPricePips, side };
          m.lastTrade[e.makerOutcome] = { pricePips: e.makerPricePips, side };
          p.change.fills.push(e);
          p.dirty = true;
          break;
        }
        case 'status': {
          if (e.status === 'LIVE') break;
          const r = this.resting.get(e.orderId);
          if (r === undefined) {
            // A FOK/FAK remainder or a fully matched order never rests here: nothing to remove.
            if (e.remaining > 0 && e.reason !== 'UNFILLED') this.unknownOrders++;
            break;
          }
          this.resting.delete(e.orderId);
          if (r.remaining > 0) move(touch(r.market), r.bid, r.pips, -r.remaining);
          break;
        }
        case 'resolve': {
          const m = this.markets.get(e.conditionId);
          if (m !== undefined) touch(m).change.resolved = { winningOutcome: e.winningOutcome };
          break;
        }
        default:
          break;
      }
    }

    const changes: MarketChange[] = [];
    for (const p of pending.values()) {
      const m = p.market;
      for (const [pips, before] of p.bidsBefore) if ((m.bids.get(pips) ?? 0) !== before) p.change.bids.push(pips);
      for (const [pips, before] of p.asksBefore) if ((m.asks.get(pips) ?? 0) !== before) p.change.asks.push(pips);
      if (p.change.bids.length > 0 || p.change.asks.length > 0 || p.change.fills.length > 0 || p.change.created || p.change.tickBefore !== undefined) {
        m.version++;
        m.ts = lastTs(events, m.conditionId, m.ts);
        m.built = undefined;
        m.top = undefined;
      }
      if (p.dirty || p.change.resolved !== undefined) changes.push(p.change);
    }
    for (const l of this.listeners) l(changes, events);
    return changes;
  }

  /** Calls `listener` after each apply() with what it changed (also batches that changed nothing). */
  onApplied(listener: (changes: readonly MarketChange[], events: readonly JournalEvent[]) => void): void {
    this.listeners.push(listener);
  }

  /** The token's committed /book body, built once per version. Undefined for a token no market has. */
  book(tokenId: string): CommittedBook | undefined {
    const tm = this.byToken.get(tokenId);
    if (tm === undefined) return undefined;
    return this.built(tm.market)[tm.outcome];
  }

  /** GET /book's source (queries/market-data.ts BookSource): the same body, as `{version, json}`. */
  bookSnapshot(tokenId: string): CommittedBook | undefined {
    return this.book(tokenId);
  }

  /** Best bid and ask of a token in its own price space (0 = empty side). */
  top(tokenId: string): BookTop | undefined {
    const tm = this.byToken.get(tokenId);
    return tm === undefined ? undefined : this.topOf(tm.market, tm.outcome);
  }

  /** Size resting at a price of a token's book in its own price space (0 = no level). */
  levelSize(tokenId: string, side: 'BUY' | 'SELL', pricePips: number): number {
    const tm = this.byToken.get(tokenId);
    if (tm === undefined) return 0;
    const m = tm.market;
    if (tm.outcome === 0) return (side === 'BUY' ? m.bids : m.asks).get(pricePips) ?? 0;
    // Outcome 1 bids at q are outcome 0 asks at 10_000 - q.
    return (side === 'BUY' ? m.asks : m.bids).get(PIPS - pricePips) ?? 0;
  }

  /** The token's last trade, undefined before any. */
  lastTrade(tokenId: string): LastTrade | undefined {
    const tm = this.byToken.get(tokenId);
    return tm?.market.lastTrade[tm.outcome];
  }

  /** Which market and outcome a token is. */
  tokenOf(tokenId: string): { conditionId: string; outcome: 0 | 1; tokenIds: readonly [string, string] } | undefined {
    const tm = this.byToken.get(tokenId);
    return tm === undefined ? undefined : { conditionId: tm.market.conditionId, outcome: tm.outcome, tokenIds: tm.market.tokenIds };
  }

  /** Orders resting in this state (tests, metrics). */
  get restingCount(): number {
    return this.resting.size;
  }

  private upsertMarket(e: BookMarketInput | MarketEvent, ts: number): BookMarket {
    const input: BookMarketInput = { conditionId: e.conditionId, tokenIds: [e.tokenIds[0], e.tokenIds[1]], tickPips: e.tickPips, minSizeUnits: e.minSizeUnits, negRisk: e.negRisk };
    let m = this.markets.get(e.conditionId);
    if (m === undefined) {
      m = { ...input, frame: bookFrame(input), bids: new Map(), asks: new Map(), lastTrade: [undefined, undefined], ts, version: 0, built: undefined, top: undefined };
      this.markets.set(m.conditionId, m);
      this.byToken.set(m.tokenIds[0], { market: m, outcome: 0 });
      this.byToken.set(m.tokenIds[1], { market: m, outcome: 1 });
    } else {
      m.tickPips = input.tickPips;
      m.minSizeUnits = input.minSizeUnits;
      m.negRisk = input.negRisk;
      m.frame = bookFrame(input);
    }
    return m;
  }

  /** Allocates: the two bodies, once per version. */
  private built(m: BookMarket): [CommittedBook, CommittedBook] {
    if (m.built !== undefined) return m.built;
    const depth: Depth = { bids: sorted(m.bids, true), asks: sorted(m.asks, false) };
    const last: [number, number] = [m.lastTrade[0]?.pricePips ?? 0, m.lastTrade[1]?.pricePips ?? 0];
    const [j0, j1] = bookBodies(m.frame, depth, last, Math.floor(m.ts / 1000));
    m.built = [
      { version: m.version, json: j0, hash: hashOf(j0), ts: m.ts },
      { version: m.version, json: j1, hash: hashOf(j1), ts: m.ts },
    ];
    return m.built;
  }

  private topOf(m: BookMarket, outcome: 0 | 1): BookTop {
    if (m.top === undefined) {
      let bestBid = 0;
      for (const p of m.bids.keys()) if (p > bestBid) bestBid = p;
      let bestAsk = 0;
      for (const p of m.asks.keys()) if (bestAsk === 0 || p < bestAsk) bestAsk = p;
      m.top = [
        bestBid === 0 && bestAsk === 0 ? EMPTY_TOP : { bid: bestBid, ask: bestAsk },
        { bid: bestAsk === 0 ? 0 : PIPS - bestAsk, ask: bestBid === 0 ? 0 : PIPS - bestBid },
      ];
    }
    return m.top[outcome];
  }
}

function add(levels: Map<number, number>, pips: number, delta: number): void {
  const v = (levels.get(pips) ?? 0) + delta;
  if (v > 0) levels.set(pips, v);
  else levels.delete(pips);
}

/** Bids ascending and asks descending: best price last, as /book lists them. Allocates. */
function sorted(levels: Map<number, number>, ascending: boolean): Level[] {
  const out: Level[] = [];
  for (const [pricePips, sizeUnits] of levels) out.push({ pricePips, sizeUnits });
  out.sort(ascending ? (a, b) => a.pricePips - b.pricePips : (a, b) => b.pricePips - a.pricePips);
  return out;
}

function frameDiffers(m: BookMarket, e: MarketEvent): boolean {
  return m.tickPips !== e.tickPips || m.minSizeUnits !== e.minSizeUnits || m.negRisk !== e.negRisk;
}

/** The ts of the batch's last event about the market (the batch's events share a commit). */
function lastTs(events: readonly JournalEvent[], conditionId: string, otherwise: number): number {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as { conditionId?: string; ts: number };
    if (e.conditionId === conditionId) return e.ts;
  }
  return otherwise;
}

const HASH_AT = '"hash":"';

/** The 40 hex digits after `"hash":"` (bodies are built by book-json.ts, which puts it there). */
export function hashOf(json: string): string {
  const i = json.indexOf(HASH_AT) + HASH_AT.length;
  return json.slice(i, i + 40);
}
