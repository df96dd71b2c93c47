/**
 * What the market-data routes (market-data.ts) and the history routes (history.ts) share: the deps they are
 * bound to, the reader or a 503, a query's token id, and the platform's 400 and 404 texts for them.
 */
import { apiError, type ApiError } from '../../../domain/errors.ts';
import { parseTokenId } from '../../../domain/ids.ts';
import type { MarketDataReader } from '../../../queries/market-data.ts';
import type { Engine } from '../../../engine/engine.ts';
import type { CatalogReader } from '../../../queries/catalog.ts';
import type { Clock } from '../../../runtime/clock.ts';
import type { AppContext } from '../../context.ts';

export const NO_BOOK = 'No orderbook exists for the requested token id';
export const bad = (detail: string): ApiError => apiError('PM_ERR_BAD_REQUEST', { detail });
export const noBook = (tokenId?: string): ApiError => apiError('PM_ERR_NOT_FOUND_ENTITY', { detail: NO_BOOK }, tokenId === undefined ? undefined : { token_id: tokenId });

/** A query token id that passed the schema's shape; the uint256 bound is the last check. */
export function tokenOf(raw: string): string {
  const t = parseTokenId(raw);
  if (t === undefined) throw bad('Invalid token id');
  return t;
}

/**
 * What the market-data handlers use: the reader of books, quotes and history (absent in contexts without
 * market data: these routes then answer 503), the engine's markets and orders, the catalog's market texts,
 * the fill journal (store and views) for live activity, the clock, and which response shapes are configured.
 */
export interface MarketDataDeps {
  readonly marketData: MarketDataReader | undefined;
  readonly engine: Pick<Engine, 'market' | 'getOrder'>;
  readonly catalog: Pick<CatalogReader, 'marketByCondition'>;
  readonly store: AppContext['store'];
  readonly views: AppContext['views'];
  readonly clock: Clock;
  /** compat.shapes is clob-client-v2: GET /builder/trades answers the platform client's cursor envelope. */
  readonly clientShapes: boolean;
}
export type Md = Pick<MarketDataDeps, 'marketData'>;

export function md(d: Md): MarketDataReader {
  if (d.marketData === undefined) throw apiError('PM_ERR_UNAVAILABLE');
  return d.marketData;
}
