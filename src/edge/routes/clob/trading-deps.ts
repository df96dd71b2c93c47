/**
 * What the trading routes use of the context (TradingDeps), built once per route table: shared by the order
 * writes (trading.ts), the caller's reads (order-reads.ts) and the wallet operations (wallet-ops.ts).
 */
import type { Engine } from '../../../engine/engine.ts';
import type { CatalogReader } from '../../../queries/catalog.ts';
import type { MarketDataReader } from '../../../queries/market-data.ts';
import type { AppContext } from '../../context.ts';
import type { Funders } from '../../auth/funders.ts';
import type { Metrics } from '../../pipeline/metrics.ts';
import { orderCheckDeps, type OrderCheckDeps } from '../../auth/order-check.ts';
import type { Sandbox } from '../../sandbox/sandbox.ts';

/**
 * What the trading handlers use: the engine (orders, balances, wallet operations, commits), the order checks
 * (signature pool, domains, markets, clock), the check and engine timings, the sandbox's order rules, outcome
 * labels from the catalog, trade rows from market data (absent in contexts without it: /data/trades answers
 * 503), the fill journal (store and views), the configured shapes and the exchange contracts balances name.
 */
export interface TradingDeps {
  readonly engine: Pick<
    Engine,
    'placeOrder' | 'cancelOrders' | 'cancelMarketOrders' | 'cancelAll' | 'getOrder' | 'openOrders' | 'balances' | 'unsettled' | 'afterCommit' | 'split' | 'merge' | 'redeem' | 'market'
  >;
  readonly checks: OrderCheckDeps;
  readonly metrics: Pick<Metrics, 'orderChecks' | 'orderEngine'>;
  readonly sandbox: Pick<Sandbox, 'orderRefusal' | 'placing'>;
  /** `auth.reasonInBody` (with explainRefusals): a refused element of POST /orders carries its reason in errorMsg. */
  readonly reasonInBody: boolean;
  readonly catalog: Pick<CatalogReader, 'marketByCondition'>;
  readonly marketData: Pick<MarketDataReader, 'tradeOut'> | undefined;
  readonly store: AppContext['store'];
  readonly views: AppContext['views'];
  /**
   * compat.shapes is clob-client-v2: orders answer the platform client's OpenOrder (docs/decisions/sandbox.md,
   * "The platform's V2 client").
   */
  readonly clientShapes: boolean;
  /** The exchange contracts a wallet's balance is "approved" for: the order domains' verifying contracts, lowercase. */
  readonly exchanges: readonly string[];
  /** The key's wallets: its own, its proxy wallet and its Safe (whose money signature_type names). */
  readonly funders: Pick<Funders, 'makerOf' | 'walletsOf'>;
}
export type Eng = Pick<TradingDeps, 'engine'>;

export function tradingDeps(ctx: Pick<AppContext, 'engine' | 'auth' | 'clock' | 'metrics' | 'sandbox' | 'catalog' | 'marketData' | 'store' | 'views' | 'config'>): TradingDeps {
  const a = ctx.config.auth;
  return {
    engine: ctx.engine,
    checks: orderCheckDeps({ auth: ctx.auth, clock: ctx.clock, engine: ctx.engine, explain: ctx.config.auth.explainRefusals }),
    metrics: ctx.metrics,
    sandbox: ctx.sandbox,
    catalog: ctx.catalog.read,
    marketData: ctx.marketData,
    store: ctx.store,
    views: ctx.views,
    clientShapes: ctx.config.compat.shapes === 'clob-client-v2',
    reasonInBody: a.explainRefusals && a.reasonInBody,
    exchanges: [...new Set([a.orderDomain.verifyingContract, a.negRiskOrderDomain.verifyingContract].map((x) => x.toLowerCase()))],
    funders: ctx.auth.funders,
  };
}
