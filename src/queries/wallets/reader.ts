/**
 * Wallet data read side: GET /trades, /positions and /closed-positions, from the views of
 * projections/wallets.ts, the fills table of the journal writer, the catalog and the engine's live
 * prices. Synchronous: every answer is computed in one call, inside one LMDB read snapshot.
 *
 * WalletDataReader is the facade the routes hold; it wires the parts, one concern each:
 *   market-meta.ts      catalog metadata of the markets shown, kept per market and re-read when it may
 *                       have changed
 *   position-prices.ts  `curPrice` of a position (queries/current-price.ts plus resolution and the seed)
 *   live-row.ts         one position: its numbers and its JSON text
 *   wallet-views.ts     a wallet's rows kept in memory, re-checked for prices and metadata per request
 *   sorting.ts          the orders of a view's rows, kept in order as prices move
 *   positions.ts        /positions and /closed-positions pages
 *   trade-runs.ts       the committed trade rows requests have read, column by column
 *   trade-rows.ts       trade rows rendered from their fills
 *   trades.ts           /trades pages: the rows not yet committed, then the committed ranges, merged
 *   page-cache.ts       rendered pages kept while nothing they show has changed
 * Numbers and fields follow docs/decisions/wallet-data.md, "Wallet data".
 */
import type { ClosedPosition, Position, Trade } from '../../edge/schemas/wallets.ts';
import type { Store } from '../../journal/env.ts';
import type { ViewStore } from '../../projections/projector.ts';
import { walletViewChanges } from '../../projections/wallets.ts';
import type { CatalogReader } from '../catalog.ts';
import { MarketMetas } from './market-meta.ts';
import { PositionPages, type ClosedParams, type PositionsParams } from './positions.ts';
import { PositionPrices, type LivePrices } from './position-prices.ts';
import { TradePages, type TradesParams } from './trades.ts';
import { RENDERED_TRADES_LIMIT, TradeRows } from './trade-rows.ts';
import { RUN_LIMITS, TradeRuns, type RunLimits } from './trade-runs.ts';
import { META_CHECKS, WalletViews, type MetaChecks } from './wallet-views.ts';

export interface WalletDataDeps {
  store: Store;
  views: ViewStore;
  catalog: CatalogReader;
  prices?: LivePrices;
  /** Monotonic ms for cache ages (default performance.now); not business time. */
  now?: () => number;
  /**
   * True when the caller calls `pricesChanged(tokenIds)` on every book publication and every committed
   * fill; then a page re-checks only the rows of the tokens reported since its view last looked.
   */
  priceEvents?: boolean;
  /** Sizes of the trade-row runs (trade-runs.ts), smaller in tests to exercise every path. */
  runLimits?: Partial<RunLimits>;
  /** The rolling metadata check of a view (wallet-views.ts, checkMeta), smaller in tests. */
  metaChecks?: Partial<MetaChecks>;
  /** Rendered trade rows kept (default RENDERED_TRADES_LIMIT), smaller in tests. */
  renderedLimit?: number;
}

export class WalletDataReader {
  private readonly metas: MarketMetas;
  private readonly prices: PositionPrices;
  private readonly views: WalletViews;
  private readonly positionPages: PositionPages;
  private readonly tradePages: TradePages;
  private readonly now: () => number;

  constructor(deps: WalletDataDeps) {
    const now = (this.now = deps.now ?? (() => performance.now()));
    const priceEvents = deps.priceEvents ?? false;
    const changes = walletViewChanges(deps.views);
    this.metas = new MarketMetas(deps.store, deps.catalog);
    this.prices = new PositionPrices(deps.views, changes, deps.prices);
    this.views = new WalletViews({
      views: deps.views,
      changes,
      metas: this.metas,
      prices: this.prices,
      priceEvents,
      metaChecks: { ...META_CHECKS, ...deps.metaChecks },
      now,
    });
    this.positionPages = new PositionPages(this.views, priceEvents, now);
    const runs = new TradeRuns(deps.store, { ...RUN_LIMITS, ...deps.runLimits });
    const rows = new TradeRows(deps.store, this.metas, deps.renderedLimit ?? RENDERED_TRADES_LIMIT);
    this.tradePages = new TradePages(deps.store, deps.views, runs, rows, now);
  }

  /**
   * A book was published or a fill committed: the live prices of these tokens may have moved (of any
   * token when none are named).
   */
  pricesChanged(tokenIds?: readonly string[]): void {
    this.views.pricesChanged(tokenIds);
  }

  /**
   * The catalog changed these markets: their metadata is re-read at its next use, and the wallet views
   * re-check their rows of these markets at their next request.
   */
  catalogChanged(conditionIds: readonly string[]): void {
    this.metas.announce(conditionIds);
  }

  /** Current price of an outcome in micro-USDC (position-prices.ts gives the order of sources). */
  curPrice(conditionId: string, outcome: 0 | 1): number {
    return this.prices.current(conditionId, this.metas.get(conditionId, this.now()), outcome);
  }

  positions(p: PositionsParams): Position[] {
    return JSON.parse(this.positionsJson(p)) as Position[];
  }

  /** GET /positions as JSON text (the route answers it as is). */
  positionsJson(p: PositionsParams): string {
    return this.positionPages.open(p);
  }

  closedPositions(p: ClosedParams): ClosedPosition[] {
    return JSON.parse(this.closedPositionsJson(p)) as ClosedPosition[];
  }

  /** GET /closed-positions as JSON text. */
  closedPositionsJson(p: ClosedParams): string {
    return this.positionPages.closed(p);
  }

  trades(p: TradesParams): Trade[] {
    return JSON.parse(this.tradesJson(p)) as Trade[];
  }

  /** GET /trades as JSON text: rows newest first (seq descending, taker before maker). */
  tradesJson(p: TradesParams): string {
    return this.tradePages.page(p);
  }
}
