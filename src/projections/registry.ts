/**
 * Every read model the projector maintains, in one list. A capability that derives a view from the
 * journal adds its projection here; the projector gives each its own cursor.
 */
import type { Store } from '../journal/env.ts';
import { readFill } from '../journal/codecs/fill-codec.ts';
import type { Projection, ViewStore } from './projector.ts';
import { walletProjections } from './wallets.ts';
import { BuilderTradesProjection, MarketDataStore, TradePriceProjection } from './market-data.ts';
import { NotificationsProjection } from './notifications.ts';

export interface ProjectionDeps {
  store: Store;
  /** Overlay over `store.views` (read-your-writes). */
  views: ViewStore;
  /** Overlay over `store.prices`. */
  prices: ViewStore;
  /**
   * Ranged overlays of the market-data views, shared with queries/market-data.ts; one is made if absent,
   * deferring as `views` does (all of a projector's overlays must share its ViewWrites).
   */
  marketData?: MarketDataStore;
}

export function buildProjections(deps: ProjectionDeps): Projection[] {
  const md = deps.marketData ?? new MarketDataStore(deps.store, deps.views.deferral);
  return [
    ...walletProjections(deps.views, (seq) => readFill(deps.store.fills, seq)),
    new TradePriceProjection(md),
    new BuilderTradesProjection(md),
    new NotificationsProjection(deps.views, deps.store),
  ];
}
