/**
 * Default rate-limit caps and the route -> bucket table (DESIGN section 8, spec "Limits").
 *
 * Every route charges its API's general bucket (catalog, clob, data, admin) plus the named caps the spec's
 * table gives it; routes the table does not name count only against the general bucket. The trading routes
 * charge both trading windows at once. Keys are "METHOD pattern" with the exact uWS pattern the route is
 * registered under, so the edge looks a route's list up once, when it registers the route.
 */
import { DEFAULT_BUCKETS } from '../../domain/rate-limits.ts';

export { DEFAULT_BUCKETS };


/** Buckets charged to the wallet (all its API keys together) as well as to the key (DESIGN section 8). */
export const WALLET_BUCKETS: readonly string[] = Object.freeze(['trading-burst', 'trading-sustained']);

const CATALOG = ['catalog'] as const;
const CLOB = ['clob'] as const;
const DATA = ['data'] as const;
const ADMIN = ['admin'] as const;
const TRADING = ['clob', 'trading-burst', 'trading-sustained'] as const;

const table: Record<string, readonly string[]> = {
  'GET /': ['clob', 'health'],
  'GET /ok': ['clob', 'health'],

  'GET /events': ['catalog', 'catalog-events', 'catalog-listing'],
  'GET /markets': ['catalog', 'catalog-markets', 'catalog-listing'],
  'GET /tags': ['catalog', 'catalog-tags'],
  'GET /public-search': ['catalog', 'catalog-search'],
  'GET /events/slug/:slug': CATALOG,
  'GET /markets/slug/:slug': CATALOG,

  'GET /book': ['clob', 'book'],
  'POST /books': ['clob', 'books'],
  'GET /price': ['clob', 'price'],
  'POST /prices': ['clob', 'prices'],
  'GET /midpoint': ['clob', 'midpoint'],
  'GET /prices-history': ['clob', 'prices-history'],
  'POST /batch-prices-history': ['clob', 'batch-prices-history'],
  'GET /sampling-markets': CLOB,
  'GET /markets/:condition_id': CLOB,
  'GET /simplified-markets': CLOB,
  'GET /sampling-simplified-markets': CLOB,
  'GET /builder/trades': CLOB,
  'POST /midpoints': CLOB,
  'GET /spread': CLOB,
  'POST /spreads': CLOB,
  'GET /markets/live-activity/:condition_id': CLOB,
  'GET /fees/builder-fees/:builder_code': CLOB,
  'GET /last-trade-price': CLOB,
  'POST /last-trades-prices': CLOB,
  'GET /tick-size': CLOB,
  'GET /neg-risk': CLOB,
  'GET /fee-rate': CLOB,
  'GET /markets-by-token/:token_id': CLOB,
  'GET /clob-markets/:condition_id': CLOB,
  'GET /version': CLOB,
  'GET /time': CLOB,
  'GET /exchange-info': CLOB,
  'GET /data/order/:id': CLOB,
  'GET /openapi.json': CLOB,
  'GET /metrics': CLOB,
  'GET /ws/market': ['clob', 'ws-connect'],
  'GET /ws/user': ['clob', 'ws-connect'],

  // POST /orders debits one unit per order it carries (the edge passes the count as the cost).
  'POST /order': TRADING,
  'DELETE /order': TRADING,
  'POST /orders': TRADING,
  'GET /data/orders': CLOB,
  'GET /data/trades': CLOB,
  'DELETE /orders': CLOB,
  'DELETE /cancel-market-orders': CLOB,
  'DELETE /cancel-all': CLOB,
  'GET /balance-allowance': CLOB,
  'GET /balance-allowance/update': CLOB,
  'GET /data/pre-migration-orders': CLOB,
  'POST /split': CLOB,
  'POST /merge': CLOB,
  'POST /redeem': CLOB,
  'POST /auth/api-key': ['clob', 'api-keys'],
  'GET /auth/derive-api-key': CLOB,
  'GET /auth/api-keys': CLOB,
  'DELETE /auth/api-key': CLOB,
  'POST /auth/readonly-api-key': CLOB,
  'GET /auth/readonly-api-keys': CLOB,
  'DELETE /auth/readonly-api-key': CLOB,
  'GET /auth/validate-readonly-api-key': CLOB,
  'POST /auth/builder-api-key': CLOB,
  'GET /auth/builder-api-key': CLOB,
  'DELETE /auth/builder-api-key': CLOB,
  'GET /auth/ban-status/closed-only': CLOB,
  'GET /notifications': CLOB,
  'GET /refusals': CLOB,
  'DELETE /notifications': CLOB,
  'POST /v1/heartbeats': CLOB,
  'GET /order-scoring': CLOB,
  'POST /orders-scoring': CLOB,
  'GET /rewards/markets/current': CLOB,
  'GET /rewards/markets/:condition_id': CLOB,
  'GET /rewards/user': CLOB,
  'GET /rewards/user/total': CLOB,
  'GET /rewards/user/percentages': CLOB,
  'GET /rewards/user/markets': CLOB,

  'GET /trades': ['data', 'data-trades'],
  'GET /positions': DATA,
  'GET /closed-positions': DATA,

  'POST /admin/events': ADMIN,
  'POST /admin/markets/:conditionId/status': ADMIN,
  'POST /admin/markets/:conditionId/resolve': ADMIN,
  'POST /admin/wallets/:address/deposit': ADMIN,
  'POST /admin/wallets/:address/withdraw': ADMIN,
  'GET /admin/wallets/:address': ADMIN,
  'PUT /admin/wallets/:address/profile': ADMIN,
  'PUT /admin/wallets/:address/closed-only': ADMIN,
  'GET /admin/sandbox': ADMIN,
  'POST /admin/sandbox/maintenance': ADMIN,
  'DELETE /admin/sandbox/maintenance': ADMIN,
  'PUT /admin/sandbox/faults': ADMIN,
  'DELETE /admin/sandbox/faults': ADMIN,
  'GET /admin/clock': ADMIN,
  'PUT /admin/clock': ADMIN,
  'POST /admin/clock/advance': ADMIN,
  'POST /admin/orders': ADMIN,
  'DELETE /admin/orders': ADMIN,
  'POST /admin/wallets/:address/tokens': ADMIN,
  'PUT /admin/books/:token_id': ADMIN,
  'POST /admin/orders/:orderId/fill': ADMIN,
  'POST /admin/scenarios': ADMIN,
  'GET /admin/scenarios': ADMIN,
  'DELETE /admin/scenarios': ADMIN,
  'POST /admin/snapshots': ADMIN,
  'GET /admin/snapshots': ADMIN,
  'DELETE /admin/snapshots/:name': ADMIN,
  'POST /admin/snapshots/:name/revert': ADMIN,
  'POST /admin/snapshots/:name/export': ADMIN,
  'GET /admin/state-hash': ADMIN,

  // The web console's files, with the operations routes under the order-book API's general cap: a page
  // load is three requests, and everything the console shows is fetched through the routes above.
  'GET /console': ['clob', 'console'],
  'GET /console/': ['clob', 'console'],
  'GET /console/:file': ['clob', 'console'],
};

export const ROUTE_BUCKETS: Readonly<Record<string, readonly string[]>> = Object.freeze(
  Object.fromEntries(Object.entries(table).map(([route, buckets]) => [route, Object.freeze([...buckets])])),
);

const UNKNOWN_ROUTE: readonly string[] = Object.freeze(['clob']);

/** Buckets a route charges; an unlisted route counts against the order-book API's general cap only. */
export function bucketsFor(method: string, pattern: string): readonly string[] {
  return ROUTE_BUCKETS[`${method.toUpperCase()} ${pattern}`] ?? UNKNOWN_ROUTE;
}
