/**
 * Market-data reads: books, quotes, last trades, price history, builder trades, and the market look-ups
 * the platform's client makes before it builds a market order (by token, by condition id).
 *
 * Books come from a BookSource: in the service the committed books (app.ts, projections/committed-books.ts),
 * in some tests and benches the shards' published snapshots (engine.bookSnapshot). The /book body is already
 * serialized, hashed and consistent (never half a match), so GET /book and POST /books pass it on as
 * it is. Quotes read the best bid and ask of those same snapshots; each snapshot version is parsed once
 * (top-of-book cache), so a quote costs a map lookup while the book is unchanged.
 *
 * Shards publish a changed market at most once per interval (engine/shard/worker.ts), so a snapshot may lag the
 * orders already acknowledged. Every route that reads a book or a quote goes through ensureSnapshots first:
 * when the engine says the market's snapshot may be stale, it asks for a fresh one and waits, so a client
 * that got an order acknowledged and then reads the book sees that order (read-your-writes). The committed
 * books are current by construction: never stale. They can only miss a market the engine has registered
 * and not yet committed (a reader that heard of it before its import was answered): the same wait then is
 * for that commit (app.ts), so a known token gets 503 only from an engine that has stopped.
 *
 * History and builder trades are synchronous LMDB reads of the views that projections/market-data.ts
 * maintains, through its RangeOverlay (the writes of the last, not yet committed, transaction included):
 * price-history.ts and builder-trades.ts own them, and this reader hands their calls on, so the routes
 * read every market datum from one object. Rules (bucketing, defaults, bounds, field sources) are in
 * docs/decisions/market-data.md, "Market data".
 *
 * Shapes returned here are the wire forms of edge/schemas/market-data.ts, typed by its schemas. Quotes and
 * the display price follow one rule with the wallets' positions (current-price.ts).
 */
import type { FillEvent } from '../domain/events.ts';
import { DEFAULT_OUTCOMES } from '../domain/market-rules.ts';
import { PIPS, formatPips, formatScaled, pipsToNumber, unitsToNumber } from '../domain/units.ts';
import type {
  BuilderTrade,
  ClientBuilderTrade,
  ClobMarketReply,
  FeeCurve,
  HistoryPoint,
  LastTradeReply,
  MarketByTokenReply,
  Quote,
} from '../edge/schemas/market-data.ts';
import type { BuilderTradeFields, MarketDataStore } from '../projections/market-data.ts';
import { BUILDER_TRADES_PAGE_SIZE, BuilderTradesReader, type BuilderTradeFilter } from './builder-trades.ts';
import { PriceHistoryReader, type HistoryParams, type HistoryWindow } from './price-history.ts';
import { EMPTY_TOP, NO_PRICE, currentPricePips, midpointPips, parseBookTop, tight, twoSided, type BookTop } from './current-price.ts';

export { BUILDER_TRADES_PAGE_SIZE, type BuilderTradeFilter } from './builder-trades.ts';
export { MAX_HISTORY_POINTS, type HistoryParams, type HistoryWindow } from './price-history.ts';

// ---- what the engine provides (engine/engine.ts's Engine satisfies it) -------------------------------------

export interface TokenOutcome {
  conditionId: string;
  outcome: 0 | 1;
}

export interface BookMarket {
  /** Outcome 0's token, then outcome 1's. */
  tokenIds: readonly [string, string];
  tickPips: number;
  minSizeUnits: number;
  makerFeeBps: number;
  takerFeeBps: number;
  negRisk: boolean;
  acceptingOrders: boolean;
  /** -1 while trading, else the winning outcome. */
  resolved: number;
}

export interface BookSource {
  bookSnapshot(tokenId: string): { version: number; json: string } | undefined;
  lastTradePrice(tokenId: string): { pricePips: number; side: 'BUY' | 'SELL' } | undefined;
  tokenOutcome(tokenId: string): TokenOutcome | undefined;
  market(conditionId: string): BookMarket | undefined;
  /** Whether the token's published snapshot may miss a change already applied (and acknowledged). */
  snapshotStale(tokenId: string): boolean;
  /**
   * Asks the market's shard to publish its unpublished changes; resolves once the market's snapshots,
   * readable by then, reflect every command answered before the call.
   */
  refreshSnapshot(conditionId: string): Promise<void>;
}

/** How long a request waits for a snapshot it asked for before it answers with what there is (or 503). */
const SNAPSHOT_WAIT_MS = 2000;

/** Outcome labels of a market from the catalog, undefined when the catalog does not hold it. */
export type OutcomeLabels = (conditionId: string) => readonly [string, string] | undefined;

// ---- the platform's fee curve ---------------------------------------------------------------------------

/**
 * Our taker fee, `bps / 10^4 * min(p, 1 - p)` USDC per token, as the platform's curve `r * (p(1-p))^e`.
 * No (r, e) gives min(p, 1 - p) exactly, so this is the flat bound e = 0, r = bps / 2 / 10^4: the fee at
 * p = 0.5, the most a token can cost at any price. The client evaluates the curve at the order's worst
 * price p and holds back `amount / p * r`; the engine reserves a FOK/FAK BUY's fee as
 * `bps / 10^4 * min(amount, min(p, 0.5) * amount / p)` (engine/ledger/ledger.ts, buyNeed), which this equals for
 * p >= 0.5 and stays below for p < 0.5. So an order the client sized to a balance is never refused for
 * its fee. The closer-looking e = 1, r = 2 * bps / 10^4 (exact at 0.5, within 2x of the fee at any one
 * price) holds back `2 * bps / 10^4 * (1 - p)` per USDC, less than the reservation's `bps / 10^4 * 0.5 / p`
 * at every p > 0.5: a favourite bought with a whole balance would be refused for balance.
 */
export function feeCurveOf(takerFeeBps: number, makerFeeBps: number): FeeCurve {
  return { r: takerFeeBps / 20_000, e: 0, to: makerFeeBps === 0 };
}

// ---- the reader -----------------------------------------------------------------------------------------

/** The top of a token's published book (NO_PRICE for an empty side), parsed once per snapshot version. */
interface Top extends BookTop {
  version: number;
  /** Its wire form, formatted once per version (shared: never mutated). */
  quote: Readonly<Quote>;
}

const EMPTY_QUOTE: Readonly<Quote> = Object.freeze({ BUY: '', SELL: '' });

export class MarketDataReader {
  private readonly tops = new Map<string, Top>();
  private readonly prices: PriceHistoryReader;
  private readonly trades: BuilderTradesReader;

  constructor(
    private readonly books: BookSource,
    md: MarketDataStore,
    private readonly outcomes: OutcomeLabels = () => undefined,
  ) {
    this.prices = new PriceHistoryReader(md);
    this.trades = new BuilderTradesReader(md, outcomes);
  }

  /** The token's market and outcome, or undefined for a token no market has. */
  token(tokenId: string): TokenOutcome | undefined {
    return this.books.tokenOutcome(tokenId);
  }

  /** Trading parameters of the token's market. */
  marketOf(tokenId: string): BookMarket | undefined {
    const t = this.books.tokenOutcome(tokenId);
    return t === undefined ? undefined : this.books.market(t.conditionId);
  }

  /** The token's market and both its tokens, undefined for a token no market has. */
  marketByToken(tokenId: string): MarketByTokenReply | undefined {
    const t = this.books.tokenOutcome(tokenId);
    const m = t === undefined ? undefined : this.books.market(t.conditionId);
    if (t === undefined || m === undefined) return undefined;
    return { condition_id: t.conditionId, primary_token_id: m.tokenIds[0], secondary_token_id: m.tokenIds[1] };
  }

  /**
   * The engine's trading parameters of a market in the platform's compact form, undefined for a condition
   * id the engine does not trade. Outcome labels come from the catalog (Yes/No when it has none).
   */
  clobMarket(conditionId: string): ClobMarketReply | undefined {
    const m = this.books.market(conditionId);
    if (m === undefined) return undefined;
    return {
      c: conditionId,
      t: [
        { t: m.tokenIds[0], o: this.outcome(conditionId, 0) },
        { t: m.tokenIds[1], o: this.outcome(conditionId, 1) },
      ],
      mts: pipsToNumber(m.tickPips),
      nr: m.negRisk,
      mos: unitsToNumber(m.minSizeUnits),
      mbf: m.makerFeeBps,
      tbf: m.takerFeeBps,
      fd: feeCurveOf(m.takerFeeBps, m.makerFeeBps),
      ao: m.acceptingOrders && m.resolved < 0,
    };
  }

  /**
   * Undefined when every listed known token has a published snapshot that reflects every change applied to
   * its market (always, on a quiet market): read at once. Otherwise asks the shards of the missing or stale
   * ones for fresh snapshots, once per market, and resolves when they are readable, or after
   * SNAPSHOT_WAIT_MS (the engine has stopped). Then read the books without asking again: on a busy
   * market newer changes may already make them stale, but everything acknowledged before this call is in.
   */
  ensureSnapshots(tokenIds: readonly string[]): Promise<void> | undefined {
    let waits: Promise<void>[] | undefined;
    let asked: Set<string> | undefined;
    for (const id of tokenIds) {
      if (this.books.bookSnapshot(id) !== undefined && !this.books.snapshotStale(id)) continue;
      const t = this.books.tokenOutcome(id);
      if (t === undefined || asked?.has(t.conditionId)) continue;
      (asked ??= new Set()).add(t.conditionId);
      (waits ??= []).push(this.refreshed(t.conditionId));
    }
    return waits === undefined ? undefined : Promise.all(waits).then(() => undefined);
  }

  private refreshed(conditionId: string): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, SNAPSHOT_WAIT_MS);
      timer.unref();
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.books.refreshSnapshot(conditionId).then(done, done);
    });
  }

  /** The /book body of a token (pre-serialized), undefined when it has no snapshot. */
  bookJson(tokenId: string): string | undefined {
    return this.books.bookSnapshot(tokenId)?.json;
  }

  /** Best bid and ask in pips (NO_PRICE = empty side), undefined without a snapshot. */
  top(tokenId: string): Top | undefined {
    const snap = this.books.bookSnapshot(tokenId);
    if (snap === undefined) return undefined;
    let t = this.tops.get(tokenId);
    if (t === undefined || t.version !== snap.version) {
      // Allocates: once per snapshot version.
      const { bid, ask } = parseBookTop(snap.json);
      const quote = Object.freeze({ BUY: bid !== NO_PRICE ? formatPips(bid) : '', SELL: ask !== NO_PRICE ? formatPips(ask) : '' });
      t = { version: snap.version, bid, ask, quote };
      this.tops.set(tokenId, t);
    }
    return t;
  }

  /** BUY = best bid, SELL = best ask, as decimal strings; "" for an empty side. Shared object: read only. */
  quote(tokenId: string): Readonly<Quote> {
    return this.top(tokenId)?.quote ?? EMPTY_QUOTE;
  }

  /** Midpoint in pips (may end in .5), undefined unless both sides have orders. */
  midpointPips(tokenId: string): number | undefined {
    const t = this.top(tokenId);
    const mid = t === undefined ? NO_PRICE : midpointPips(t);
    return mid === NO_PRICE ? undefined : mid;
  }

  /** The midpoint as a minimal decimal string (half a pip is a fifth decimal), "" unless both sides exist. */
  midpoint(tokenId: string): string {
    const t = this.top(tokenId);
    return t !== undefined && twoSided(t) ? formatScaled((t.bid + t.ask) * 5, 5) : '';
  }

  /** Best ask minus best bid as a minimal decimal string, "" unless both sides exist. */
  spread(tokenId: string): string {
    const t = this.top(tokenId);
    return t !== undefined && twoSided(t) ? formatPips(t.ask - t.bid) : '';
  }

  /** Last trade of the token from its own side's view; "" and "" before any trade. */
  lastTrade(tokenId: string): LastTradeReply {
    const l = this.books.lastTradePrice(tokenId);
    return l === undefined ? { price: '', side: '' } : { price: formatPips(l.pricePips), side: l.side };
  }

  /**
   * The price a market list shows for a token (DESIGN section 7, curPrice; the rule is current-price.ts's):
   * the midpoint, or the last trade when the spread is wider than 0.10; the midpoint again if it never
   * traded; undefined when there is neither a two-sided book nor a trade.
   */
  displayPrice(tokenId: string): number | undefined {
    const t = this.top(tokenId) ?? EMPTY_TOP;
    // While the book is tight its last trade cannot matter: the engine is not asked for it.
    const last = tight(t) ? NO_PRICE : (this.books.lastTradePrice(tokenId)?.pricePips ?? NO_PRICE);
    const p = currentPricePips(t, last);
    return p === NO_PRICE ? undefined : p / PIPS;
  }

  private outcome(conditionId: string, index: 0 | 1): string {
    return (this.outcomes(conditionId) ?? DEFAULT_OUTCOMES)[index];
  }

  // ---- price history (price-history.ts) and builder trades (builder-trades.ts) ----

  /** The window and bucket width of a history request (throws a 400 for a bad combination). */
  historyWindow(tokenIds: readonly string[], p: HistoryParams, nowSec: number): HistoryWindow {
    return this.prices.historyWindow(tokenIds, p, nowSec);
  }

  /** The token's samples in the window, one point per bucket that holds one. */
  history(tokenId: string, w: HistoryWindow): HistoryPoint[] {
    return this.prices.history(tokenId, w);
  }

  /** One page of builder trades matching every given filter, oldest first, starting `offset` matches in. */
  builderTrades(f: BuilderTradeFilter, offset: number, limit?: number): { rows: BuilderTrade[]; next: string };
  builderTrades<T>(f: BuilderTradeFilter, offset: number, limit: number, out: (fill: FillEvent, x: BuilderTradeFields) => T): { rows: T[]; next: string };
  builderTrades<T>(f: BuilderTradeFilter, offset: number, limit?: number, out?: (fill: FillEvent, x: BuilderTradeFields) => T): { rows: T[]; next: string } {
    return out === undefined ? (this.trades.builderTrades(f, offset, limit) as { rows: T[]; next: string }) : this.trades.builderTrades(f, offset, limit ?? BUILDER_TRADES_PAGE_SIZE, out);
  }

  /** A builder trade in the platform V2 client's camelCase BuilderTrade. */
  clientBuilderTrade(f: FillEvent, x: BuilderTradeFields): ClientBuilderTrade {
    return this.trades.clientBuilderTrade(f, x);
  }

  /** A fill in the platform's trade shape, seen from its taker. */
  tradeOut(f: FillEvent, x: BuilderTradeFields): BuilderTrade {
    return this.trades.tradeOut(f, x);
  }
}
