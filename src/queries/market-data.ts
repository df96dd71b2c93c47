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
 * maintains, through its RangeOverlay (the writes of the last, not yet committed, transaction included).
 * Rules (bucketing, defaults, bounds, field sources) are in docs/decisions/market-data.md, "Market data".
 *
 * Shapes returned here are the wire forms of edge/schemas/market-data.ts, typed by its schemas. Quotes and
 * the display price follow one rule with the wallets' positions (current-price.ts).
 */
import { apiError } from '../domain/errors.ts';
import { END_CURSOR, encodeCursor } from '../domain/cursor.ts';
import type { FillEvent } from '../domain/events.ts';
import { DEFAULT_OUTCOMES } from '../domain/market-rules.ts';
import { MIN_FIDELITY, type HistoryInterval } from '../domain/price-history.ts';
import { PIPS, formatPips, formatScaled, formatUnits, pipsToNumber, unitsToNumber } from '../domain/units.ts';
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
import { readFill } from '../journal/codecs/fill-codec.ts';
import { tradeStateOf } from '../journal/trades.ts';
import { builderTradeKeys, priceKey, type BuilderTradeDim } from '../journal/keys.ts';
import type { BuilderTradeFields, BuilderTradeIdEntry, MarketDataStore } from '../projections/market-data.ts';
import { takerTradeFields } from '../projections/trade-fields.ts';
import { EMPTY_TOP, NO_PRICE, currentPricePips, midpointPips, parseBookTop, tight, twoSided, type BookTop } from './current-price.ts';

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

// ---- history parameters ---------------------------------------------------------------------------------

/** Window length of each interval ending now; '1m' is one month (30 days), as on the platform's charts. */
const INTERVAL_SECONDS: Record<Exclude<HistoryInterval, 'max' | 'all'>, number> = {
  '1h': 3600,
  '6h': 6 * 3600,
  '1d': 86_400,
  '1w': 7 * 86_400,
  '1m': 30 * 86_400,
};

/** Most buckets one series may span (30 days at 1-minute fidelity fit). */
export const MAX_HISTORY_POINTS = 50_000;
/** Samples of one bucket read one by one before deciding whether to skip the rest of it with a seek... */
const DENSE_BUCKET = 8;
/** ...which happens when at least this many more samples are expected in the bucket. */
const SKIP_AT_LEAST = 32;

export interface HistoryParams {
  startTs?: number;
  endTs?: number;
  interval?: HistoryInterval;
  fidelity?: number;
}

export interface HistoryWindow {
  start: number;
  end: number;
  /** Bucket width in minutes. */
  fidelity: number;
}

const bad = (detail: string) => apiError('PM_ERR_BAD_REQUEST', { detail });

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

// ---- builder trades -------------------------------------------------------------------------------------

export const BUILDER_TRADES_PAGE_SIZE = 100;

export interface BuilderTradeFilter {
  id?: string;
  /** The row's maker_address: the taker order's wallet. */
  makerAddress?: string;
  market?: string;
  assetId?: string;
  /** Unix seconds: trades strictly before / strictly after. */
  before?: number;
  after?: number;
  builderCode?: string;
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

  constructor(
    private readonly books: BookSource,
    private readonly md: MarketDataStore,
    private readonly outcomes: OutcomeLabels = () => undefined,
  ) {}

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

  // ---- price history ----

  /** First recorded second of a token's history, undefined when it has none. */
  private firstSample(tokenId: string): number | undefined {
    for (const e of this.md.prices.range(priceKey(tokenId, 0), priceKey(tokenId, Number.MAX_SAFE_INTEGER))) return e.key[1] as number;
    return undefined;
  }

  /**
   * The window and bucket width of a request (throws a 400 for a bad combination):
   *   interval          [now - length, now]; 'max'/'all' from the first sample of the listed tokens;
   *   startTs/endTs     either or both; a missing start is the first sample, a missing end is now;
   *   neither           interval 'max';
   *   fidelity          given: at most MAX_HISTORY_POINTS buckets over the window; absent: 1 minute, or
   *                     the smallest width that keeps the window within MAX_HISTORY_POINTS buckets.
   */
  historyWindow(tokenIds: readonly string[], p: HistoryParams, nowSec: number): HistoryWindow {
    const hasRange = p.startTs !== undefined || p.endTs !== undefined;
    if (p.interval !== undefined && hasRange) throw bad('interval cannot be combined with startTs/endTs');
    const earliest = (): number | undefined => {
      let min: number | undefined;
      for (const id of tokenIds) {
        const f = this.firstSample(id);
        if (f !== undefined && (min === undefined || f < min)) min = f;
      }
      return min;
    };
    let start: number;
    let end: number;
    const interval = p.interval ?? (hasRange ? undefined : 'max');
    if (interval === undefined) {
      end = p.endTs ?? nowSec;
      if (p.startTs !== undefined) start = p.startTs;
      else start = Math.min(earliest() ?? end, end);
      if (start > end) throw bad(p.endTs === undefined ? 'startTs must not be after endTs (default: now)' : 'startTs must not be after endTs');
    } else if (interval === 'max' || interval === 'all') {
      end = nowSec;
      start = Math.min(earliest() ?? end, end);
    } else {
      end = nowSec;
      start = Math.max(0, nowSec - INTERVAL_SECONDS[interval]);
    }
    const buckets = (f: number) => Math.floor(end / (f * 60)) - Math.floor(start / (f * 60)) + 1;
    let fidelity: number;
    if (p.fidelity !== undefined) {
      fidelity = p.fidelity;
      const n = buckets(fidelity);
      if (n > MAX_HISTORY_POINTS) {
        let min = Math.max(fidelity + 1, Math.ceil((end - start + 1) / 60 / MAX_HISTORY_POINTS));
        while (buckets(min) > MAX_HISTORY_POINTS) min++;
        throw bad(`fidelity ${fidelity} spans ${n} points over this window, more than ${MAX_HISTORY_POINTS}: use fidelity >= ${min} or a shorter window`);
      }
    } else {
      fidelity = Math.max(MIN_FIDELITY, Math.ceil((end - start + 1) / 60 / MAX_HISTORY_POINTS));
      while (buckets(fidelity) > MAX_HISTORY_POINTS) fidelity++;
    }
    return { start, end, fidelity };
  }

  /**
   * The token's samples in [start, end] grouped into buckets of `fidelity` minutes aligned to the unix
   * epoch: one point per bucket that holds a sample, t = the bucket's start, p = its last sample (the
   * price in effect at the bucket's close). Buckets without samples are left out.
   *
   * Reads are bounded by the buckets, not by the samples: after DENSE_BUCKET samples of one bucket the
   * rest of it is skipped with one reverse seek to its last sample, so an hourly series over minute
   * samples reads a few entries per hour. The samples still queued for commit are merged in last.
   */
  history(tokenId: string, w: HistoryWindow): HistoryPoint[] {
    const width = w.fidelity * 60;
    const endEx = w.end + 1;
    const db = this.md.prices.db;
    const starts: number[] = [];
    const lastSec: number[] = [];
    const values: number[] = [];
    /** Keeps the latest sample of bucket `b`; buckets arrive in order, except queued samples (below). */
    const record = (b: number, sec: number, v: number): void => {
      let lo = 0;
      let hi = starts.length;
      if (hi > 0 && starts[hi - 1] < b) lo = hi;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (starts[mid] < b) lo = mid + 1;
        else hi = mid;
      }
      if (starts[lo] === b) {
        if (sec >= lastSec[lo]) {
          lastSec[lo] = sec;
          values[lo] = v;
        }
        return;
      }
      if (lo === starts.length) {
        starts.push(b);
        lastSec.push(sec);
        values.push(v);
      } else {
        starts.splice(lo, 0, b);
        lastSec.splice(lo, 0, sec);
        values.splice(lo, 0, v);
      }
    };
    let from = w.start;
    scan: while (from < endEx) {
      let bucket = -1;
      let n = 0;
      let first = 0;
      for (const e of db.getRange({ start: priceKey(tokenId, from), end: priceKey(tokenId, endEx) })) {
        const sec = e.key[1] as number;
        const b = sec - (sec % width);
        if (b !== bucket) {
          bucket = b;
          n = 0;
          first = sec;
        }
        record(b, sec, e.value as number);
        if (++n !== DENSE_BUCKET) continue;
        const next = Math.min(b + width, endEx);
        // A seek costs about as much as a few dozen sequential reads: skip only when the pace of the
        // samples read so far predicts many more in this bucket.
        if (((next - sec) * (n - 1)) / (sec - first + 1) > SKIP_AT_LEAST) {
          // Keys are whole seconds, so next - 0.5 sorts after every sample of this bucket and before the next's.
          for (const t of db.getRange({ start: priceKey(tokenId, next - 0.5), end: priceKey(tokenId, sec), reverse: true, limit: 1 })) {
            record(b, t.key[1] as number, t.value as number);
          }
          from = next;
          continue scan;
        }
      }
      break;
    }
    for (const q of this.md.prices.queuedIn(priceKey(tokenId, w.start), priceKey(tokenId, endEx))) {
      const sec = q.key[1] as number;
      record(sec - (sec % width), sec, q.value as number);
    }
    const out: HistoryPoint[] = new Array(starts.length);
    for (let i = 0; i < starts.length; i++) out[i] = { t: starts[i], p: values[i] / PIPS };
    return out;
  }

  // ---- builder trades ----

  /**
   * One page of builder trades matching every given filter, oldest first, starting `offset` matches in.
   * The listing walks the most selective index the filters name (trade id, then token, market, wallet,
   * builder code, else all), bounded by the time filters; the other filters are checked on each fill.
   */
  builderTrades(f: BuilderTradeFilter, offset: number, limit?: number): { rows: BuilderTrade[]; next: string };
  builderTrades<T>(f: BuilderTradeFilter, offset: number, limit: number, out: (fill: FillEvent, x: BuilderTradeFields) => T): { rows: T[]; next: string };
  builderTrades<T>(
    f: BuilderTradeFilter,
    offset: number,
    limit = BUILDER_TRADES_PAGE_SIZE,
    out: (fill: FillEvent, x: BuilderTradeFields) => T = (fill, x) => this.tradeOut(fill, x) as T,
  ): { rows: T[]; next: string } {
    const fromMs = f.after !== undefined ? (f.after + 1) * 1000 : 0;
    const toMs = f.before !== undefined ? f.before * 1000 : Number.MAX_SAFE_INTEGER;
    const matches = (fill: FillEvent): boolean =>
      fill.ts >= fromMs &&
      fill.ts < toMs &&
      (f.market === undefined || fill.conditionId === f.market) &&
      (f.assetId === undefined || fill.takerTokenId === f.assetId) &&
      (f.makerAddress === undefined || fill.takerWallet === f.makerAddress) &&
      (f.builderCode === undefined || fill.builder.toLowerCase() === f.builderCode);

    if (f.id !== undefined) {
      const entry = this.md.views.get<BuilderTradeIdEntry>(builderTradeKeys.byId(f.id));
      const fill = entry === undefined ? undefined : this.fill(entry.s);
      const rows = fill !== undefined && matches(fill) && offset === 0 ? [out(fill, entry as BuilderTradeFields)] : [];
      return { rows, next: END_CURSOR };
    }
    if (fromMs >= toMs) return { rows: [], next: END_CURSOR };

    let dim: BuilderTradeDim = 'all';
    let value = '';
    if (f.assetId !== undefined) [dim, value] = ['asset', f.assetId];
    else if (f.market !== undefined) [dim, value] = ['market', f.market];
    else if (f.makerAddress !== undefined) [dim, value] = ['user', f.makerAddress];
    else if (f.builderCode !== undefined) [dim, value] = ['builder', f.builderCode];
    const range = builderTradeKeys.range(dim, value, fromMs, toMs);

    const rows: T[] = [];
    let skipped = 0;
    let more = false;
    for (const e of this.md.views.range<BuilderTradeFields>(range.start, range.end)) {
      const fill = this.fill(e.key[3] as number);
      if (fill === undefined || !matches(fill)) continue;
      if (skipped < offset) {
        skipped++;
        continue;
      }
      if (rows.length === limit) {
        more = true;
        break;
      }
      rows.push(out(fill, e.value));
    }
    return { rows, next: more ? encodeCursor(offset + rows.length) : END_CURSOR };
  }

  private fill(seq: number): FillEvent | undefined {
    return readFill(this.md.store.fills, seq);
  }

  private outcome(conditionId: string, index: 0 | 1): string {
    return (this.outcomes(conditionId) ?? DEFAULT_OUTCOMES)[index];
  }

  /** A builder trade in the platform V2 client's camelCase BuilderTrade (GET /builder/trades, clob-client-v2 shapes). */
  clientBuilderTrade(f: FillEvent, x: BuilderTradeFields): ClientBuilderTrade {
    const t = this.tradeOut(f, x);
    return {
      id: t.id,
      tradeType: 'TAKER',
      takerOrderHash: t.taker_order_id,
      builder: f.builder.toLowerCase(),
      market: t.market,
      assetId: t.asset_id,
      side: t.side,
      size: t.size,
      sizeUsdc: formatUnits(f.takerUsdc),
      price: t.price,
      status: t.status,
      outcome: t.outcome,
      outcomeIndex: f.takerOutcome,
      owner: t.owner,
      maker: t.maker_address,
      transactionHash: t.transaction_hash,
      matchTime: t.match_time,
      bucketIndex: t.bucket_index,
      fee: t.fee_rate_bps,
      feeUsdc: formatUnits(f.takerFee),
      builderFee: '0',
      builderCode: f.builder.toLowerCase(),
      createdAt: t.match_time,
      updatedAt: t.last_update,
    };
  }

  /**
   * A fill in the platform's trade shape, seen from its taker. `x` carries what the fill itself does not:
   * the position among the taker order's fills and both orders' fee rates. The status and its time are the
   * trade's as committed (journal/trades.ts): CONFIRMED at the match unless the fill was deferred.
   */
  tradeOut(f: FillEvent, x: BuilderTradeFields): BuilderTrade {
    const time = new Date(f.ts).toISOString();
    const state = tradeStateOf(this.md.store, f);
    return {
      ...takerTradeFields(f),
      fee_rate_bps: String(x.tf),
      price: formatPips(f.takerPricePips),
      status: state.status,
      outcome: this.outcome(f.conditionId, f.takerOutcome),
      maker_address: f.takerWallet,
      owner: f.takerOwner,
      transaction_hash: f.txHash,
      match_time: time,
      last_update: new Date(state.updatedAt).toISOString(),
      bucket_index: x.b,
      type: 'TAKER',
      maker_orders: [
        {
          order_id: f.makerOrderId,
          maker_address: f.makerWallet,
          owner: f.makerOwner,
          matched_amount: formatUnits(f.size),
          fee_rate_bps: String(x.mf),
          price: formatPips(f.makerPricePips),
          asset_id: f.makerTokenId,
          outcome: this.outcome(f.conditionId, f.makerOutcome),
          side: f.makerSide,
        },
      ],
    };
  }
}
