/**
 * The price of a position (`curPrice`): 1 or 0 once the market is resolved; else the token's current
 * price by the rule every reader shares (queries/current-price.ts: the midpoint of its published book
 * when both sides exist and the spread is at most 0.10; else the last trade; else the midpoint of a wider
 * book); else the catalog's imported seed price; else 0. A closed row shows the price of the event that
 * closed it (frozen: it is never priced here).
 *
 * A row remembers the price inputs it was computed from (the engine's book snapshot and last trade
 * objects, which the engine replaces when they change), so re-checking it is two identity comparisons.
 */
import { UNITS, UNITS_PER_PIP } from '../../domain/units.ts';
import type { ViewStore } from '../../projections/projector.ts';
import type { MarketFacts, WalletViewChanges } from '../../projections/wallets.ts';
import { walletViewKeys } from '../../journal/keys.ts';
import { EMPTY_TOP, NO_PRICE, currentPricePips, parseBookTop, tight, type BookTop } from '../current-price.ts';
import type { LiveRow } from './live-row.ts';
import type { MarketMeta } from './market-meta.ts';

/** What the engine publishes that prices a position. */
export interface LivePrices {
  bookSnapshot(tokenId: string): BookSnapshot | undefined;
  lastTradePrice(tokenId: string): LastTrade | undefined;
}

type BookSnapshot = { version: number; json: string };
type LastTrade = { pricePips: number };

/** Tops of published books kept (one per token, parsed once per snapshot version). */
const BOOK_CACHE_LIMIT = 200_000;

export class PositionPrices {
  private readonly facts = new Map<string, MarketFacts | null>();
  private factsVersion = -1;
  private readonly tops = new Map<string, BookTop & { version: number }>();

  constructor(
    private readonly views: ViewStore,
    private readonly changes: WalletViewChanges,
    /** Undefined without an engine: positions are priced from resolutions and seeds alone. */
    private readonly live: LivePrices | undefined,
  ) {}

  /** Trading facts of a market from the positions projection (token ids, resolution, neg-risk). */
  marketFacts(conditionId: string): MarketFacts | undefined {
    if (this.factsVersion !== this.changes.markets) {
      this.facts.clear();
      this.factsVersion = this.changes.markets;
    }
    let f = this.facts.get(conditionId);
    if (f === undefined) {
      f = this.views.get<MarketFacts>(walletViewKeys.market(conditionId)) ?? null;
      this.facts.set(conditionId, f);
    }
    return f ?? undefined;
  }

  /** Current price of an outcome in micro-USDC, from the live inputs of now. */
  current(conditionId: string, meta: MarketMeta, outcome: 0 | 1): number {
    const facts = this.marketFacts(conditionId);
    const token = facts?.tokenIds[outcome];
    const snap = token === undefined ? undefined : this.live?.bookSnapshot(token);
    const last = token === undefined ? undefined : this.live?.lastTradePrice(token);
    return this.priceOf(facts, meta, outcome, snap, last);
  }

  /** Prices a new row from the live inputs of now (a row without a token from its resolution or seed). */
  priceNew(r: LiveRow): void {
    const token = r.token;
    this.price(r, token === undefined ? undefined : this.live?.bookSnapshot(token), token === undefined ? undefined : this.live?.lastTradePrice(token));
  }

  /** Re-prices a row whose book or last trade was republished since; true when its price moved. */
  refresh(r: LiveRow): boolean {
    const token = r.token;
    const live = this.live;
    if (token === undefined || live === undefined) return false;
    const snap = live.bookSnapshot(token);
    // A tight two-sided book prices the row by itself: its last trade cannot matter while the book stands.
    if (snap === r.snap && r.tight) return false;
    const last = live.lastTradePrice(token);
    if (snap === r.snap && last === r.last) return false;
    return this.price(r, snap, last);
  }

  /**
   * Prices a row from these inputs (remembered for the next check) and recomputes its numbers when its
   * price moved; true when it did.
   */
  price(r: LiveRow, snap: BookSnapshot | undefined, last: LastTrade | undefined): boolean {
    r.snap = snap;
    r.last = last;
    r.tight = r.token !== undefined && tight(this.topOf(r.token, snap));
    const cur = this.priceOf(r.facts, r.meta, r.outcome, snap, last);
    if (cur === r.cur) return false;
    r.cur = cur;
    r.compute();
    return true;
  }

  private priceOf(facts: MarketFacts | undefined, meta: MarketMeta, outcome: 0 | 1, snap: BookSnapshot | undefined, last: LastTrade | undefined): number {
    if (facts !== undefined && facts.winner >= 0) return facts.winner === outcome ? UNITS : 0;
    if (facts !== undefined) {
      const pips = currentPricePips(this.topOf(facts.tokenIds[outcome], snap), last?.pricePips ?? NO_PRICE);
      if (pips !== NO_PRICE) return pips * UNITS_PER_PIP;
    }
    const seed = meta.seed[outcome];
    return seed >= 0 ? seed : 0;
  }

  /** Best bid and ask of a published book; parsed once per version. */
  private topOf(tokenId: string, snap: BookSnapshot | undefined): BookTop {
    if (snap === undefined) return EMPTY_TOP;
    const cached = this.tops.get(tokenId);
    if (cached !== undefined && cached.version === snap.version) return cached;
    const { bid, ask } = parseBookTop(snap.json);
    const entry = { version: snap.version, bid, ask };
    if (this.tops.size >= BOOK_CACHE_LIMIT) this.tops.clear();
    this.tops.set(tokenId, entry);
    return entry;
  }
}
