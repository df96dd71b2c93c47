/**
 * What route handlers may use. app.ts builds the parts in dependency order and then one frozen context,
 * complete when created; each route module takes from it only what its dependencies interface lists
 * (edge/pipeline/route.ts, RouteSpec). Each capability (catalog, engine, auth, projections) adds its member here
 * when it lands.
 */
import type { Config } from '../runtime/config.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Logger } from '../runtime/log.ts';
import type { Store } from '../journal/env.ts';
import type { Metrics } from './pipeline/metrics.ts';
import type { ViewStore } from '../projections/projector.ts';
import type { AuthServices } from './auth/auth.ts';
import type { WalletRefusals } from './refusals/wallets.ts';
import type { CatalogReader } from '../queries/catalog.ts';
import type { MarketDataReader } from '../queries/market-data.ts';
import type { CatalogWriter } from '../projections/catalog.ts';
import type { TradingMarket } from '../projections/catalog/catalog-index.ts';
import type { EngineSurface } from '../engine/engine.ts';
import type { Sandbox } from './sandbox/sandbox.ts';
import type { Heartbeats } from './trading/heartbeats.ts';
import type { RewardsReader } from '../queries/rewards.ts';
import type { TestControls } from './sandbox/test-controls.ts';

/** The catalog: reads (queries/catalog.ts) and admin writes (projections/catalog.ts). */
export interface CatalogServices {
  readonly read: CatalogReader;
  readonly write: CatalogWriter;
}

/**
 * The narrow part of the engine the catalog, the admin routes and the demo loader use (Engine provides
 * it), so they can be exercised against a recording double.
 */
export interface EngineAdmin {
  /** Idempotent: creates the market or updates its parameters and flags. */
  registerMarket(m: TradingMarket): void;
  deposit(wallet: string, units: number): Promise<{ ok: boolean; code: number }>;
  withdraw(wallet: string, units: number): Promise<{ ok: boolean; code: number }>;
  resolveMarket(conditionId: string, winningOutcome: 0 | 1): Promise<{ ok: boolean; code: number }>;
  balances(wallet: string): {
    usdc: { available: number; reserved: number };
    tokens: { tokenId: string; conditionId: string; outcome: number; available: number; reserved: number }[];
  };
}

export interface AppContext {
  readonly config: Readonly<Config>;
  readonly store: Store;
  readonly log: Logger;
  readonly clock: Clock;
  readonly metrics: Metrics;
  /** Read-your-writes overlays over the `views` and `prices` databases (projections/projector.ts). */
  readonly views: ViewStore;
  readonly prices: ViewStore;
  /** Flips to true once the service can trade (engine recovered, catalog loaded); the one mutable part. */
  readonly state: { ready: boolean };
  /**
   * The OpenAPI document of the mounted route table. A function because the document describes the table
   * built from this context, /openapi.json included.
   */
  openapi(): Record<string, unknown>;
  /** API keys, the signature pool and the edge's Authenticator (edge/auth/auth.ts). */
  readonly auth: AuthServices;
  /** The wallets' last refusals, with their reasons (edge/refusals/wallets.ts, log.ts; GET /refusals). */
  readonly refusals: WalletRefusals;
  readonly catalog: CatalogServices;
  /** The matching engine: sequencer, ledger and journal (engine/engine.ts), recovered before any route is mounted. */
  readonly engine: EngineSurface;
  /** Books, quotes, price history and builder trades (queries/market-data.ts). */
  readonly marketData: MarketDataReader;
  /**
   * The committed books (projections/committed-books.ts) as wallet data's live prices: the same state
   * /book and the streams serve, and a listener told which tokens' books or last trades each commit moved.
   */
  readonly livePrices: {
    bookSnapshot(tokenId: string): { version: number; json: string } | undefined;
    lastTradePrice(tokenId: string): { pricePips: number } | undefined;
    onChanged(listener: (tokenIds: readonly string[]) => void): void;
  };
  /** Maintenance windows, closed-only wallets and fault injection (edge/sandbox/sandbox.ts). */
  readonly sandbox: Sandbox;
  /** The wallets' dead man's switches (POST /v1/heartbeats, edge/trading/heartbeats.ts). */
  readonly heartbeats: Heartbeats;
  /** Liquidity-reward programs and earnings (queries/rewards.ts). */
  readonly rewards: RewardsReader;
  /** The sandbox's test controls (edge/sandbox/test-controls.ts); undefined where they are off. */
  readonly controls: TestControls | undefined;
}
