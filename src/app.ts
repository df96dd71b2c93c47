/**
 * Composition root: opens the store, builds the context and the route table, starts the HTTP edge.
 * `main.ts` wraps it with configuration loading and signal handling; tests start it in process.
 */
import { openStore, type Store } from './journal/env.ts';
import { metaKeys } from './journal/keys.ts';
import { CatalogWriter } from './projections/catalog.ts';
import { CatalogReader } from './queries/catalog.ts';
import { loadDemo } from './demo/catalog.ts';
import { createAuthServices } from './edge/auth.ts';
import { Engine } from './engine/engine.ts';
import { Projector, ViewStore, ViewWrites, type ViewWritesOptions } from './projections/projector.ts';
import { buildProjections } from './projections/registry.ts';
import { MarketDataStore, MidpointSampler } from './projections/market-data.ts';
import { MarketDataReader } from './queries/market-data.ts';
import type { AppContext } from './edge/context.ts';
import { Metrics } from './edge/metrics.ts';
import { buildOpenApi } from './edge/openapi.ts';
import { RateLimiter } from './edge/rate-limit.ts';
import { buildRoutes } from './edge/routes.ts';
import { startServer, type EdgeServer } from './edge/server.ts';
import type { Config } from './runtime/config.ts';
import { systemClock, type Clock } from './runtime/clock.ts';
import { createLogger, type Logger } from './runtime/log.ts';

export const VERSION = '0.1.0';

export interface App {
  readonly ctx: AppContext;
  readonly server: EdgeServer;
  readonly port: number;
  /** Ordered stop: close the listen socket, let in-flight requests finish, flush and close LMDB. */
  stop(graceMs?: number): Promise<void>;
}

export interface AppOptions {
  clock?: Clock;
  log?: Logger;
  /** Use this store instead of opening config.dataDir (tests that inject faults). */
  store?: Store;
  /** Delay and bound of the deferred view writes (tests); defaults in projections/projector.ts. */
  viewWrites?: ViewWritesOptions;
}

export async function startApp(config: Readonly<Config>, opts: AppOptions = {}): Promise<App> {
  const log = opts.log ?? createLogger(config.log.level);
  const clock = opts.clock ?? systemClock;
  const store = opts.store ?? openStore({ dataDir: config.dataDir });
  const metrics = new Metrics();
  let openapi: Record<string, unknown> = {};
  let auth: ReturnType<typeof createAuthServices>;
  try {
    auth = createAuthServices({ config, store, clock, log });
  } catch (e) {
    // E.g. a master key that did not issue the stored API keys: leave nothing open behind the throw.
    if (!opts.store) await store.close();
    throw e;
  }
  // The engine recovers books and balances from the store before anything can trade; projections then
  // catch up with whatever the journal holds beyond their cursors, and follow every later commit.
  let engine: Engine;
  try {
    engine = await Engine.open({ store, shards: config.engine.shards, log, now: () => clock.now(), onCommit: (s) => metrics.commit(s) });
  } catch (e) {
    await auth.close();
    if (!opts.store) await store.close();
    throw e;
  }
  // Every view write (projections, midpoint samples) and the projection cursors go out together, coalesced
  // (projections/projector.ts); `viewWrites.close()` issues what is held before the store closes.
  const viewWrites = new ViewWrites(log, opts.viewWrites);
  const views = new ViewStore(store.views, viewWrites);
  const prices = new ViewStore(store.prices, viewWrites);
  const marketDataStore = new MarketDataStore(store, viewWrites);
  const projector = new Projector(store, buildProjections({ store, views, prices, marketData: marketDataStore }), log, viewWrites);
  projector.catchUp();
  engine.onCommitted(projector.onCommitted);
  metrics.watchEngine(() => engine.stats());
  metrics.watchSignaturePool(() => auth.pool);
  const ctx: AppContext = {
    config,
    store,
    engine,
    views,
    prices,
    log,
    clock,
    metrics,
    state: { ready: false },
    openapi: () => openapi,
    auth,
    catalog: {
      read: new CatalogReader(store, (tokenId) => ctx.marketPrice?.(tokenId)),
      write: new CatalogWriter(store, clock),
    },
  };
  const marketData = new MarketDataReader(engine, marketDataStore, (conditionId) => ctx.catalog.read.marketByCondition(conditionId)?.outcomes);
  ctx.marketData = marketData;
  ctx.marketPrice = (tokenId) => marketData.displayPrice(tokenId);
  // Records midpoints as books change (projections/market-data.ts); trade prices come from the projector.
  const sampler = new MidpointSampler({ feed: engine, md: marketDataStore, midpoint: (t) => marketData.midpointPips(t), now: () => clock.now(), log });
  sampler.start();
  try {
    await startCatalog(ctx);
    // Listen only once the signature threads have loaded: the first orders would otherwise wait for them.
    await auth.pool.ready;
  } catch (e) {
    // A demo catalog or funding the engine refused: stop the workers so the process can exit with the error.
    sampler.stop();
    await engine.close();
    viewWrites.close();
    await auth.close();
    if (!opts.store) await store.close();
    throw e;
  }
  const routes = buildRoutes(ctx);
  openapi = buildOpenApi(routes, VERSION);
  const server = await startServer({
    routes,
    host: config.http.host,
    port: config.http.port,
    maxBodyBytes: config.http.maxBodyBytes,
    trustedProxies: config.http.trustedProxies,
    adminToken: config.adminToken,
    limiter: new RateLimiter(config.rateLimits),
    metrics,
    log,
    clock,
    auth: auth.authenticator,
  }).catch(async (e: unknown) => {
    // Worker threads would keep a process alive that failed to listen.
    sampler.stop();
    await engine.close();
    viewWrites.close();
    await auth.close();
    throw e;
  });
  ctx.state.ready = true;

  let stopping: Promise<void> | undefined;
  return {
    ctx,
    server,
    port: server.port,
    stop(graceMs = config.shutdown.graceMs) {
      stopping ??= (async () => {
        ctx.state.ready = false;
        const drained = await server.close(graceMs);
        if (!drained) log.warn({ inFlight: server.inFlight.size }, 'shutdown grace period ended with requests in flight');
        sampler.stop();
        // The engine's last commits reach the projector while it closes; their view writes go out after.
        await engine.close();
        viewWrites.close();
        await auth.close();
        await store.close();
      })();
      return stopping;
    },
  };
}

/**
 * Connects the catalog to the engine's market registry and loads the demo catalog into an empty store.
 * Runs once the engine (if any) is in the context: every stored market is registered, and every later
 * change is passed on as it commits. Demo wallets are funded only when an engine is present.
 */
async function startCatalog(ctx: AppContext): Promise<void> {
  const { catalog, log, store, config, clock } = ctx;
  const register = (markets: ReturnType<CatalogReader['tradingMarkets']>) => {
    const engine = ctx.engine;
    if (!engine) return;
    for (const m of markets) {
      try {
        engine.registerMarket(m);
      } catch (err) {
        log.error({ err, conditionId: m.conditionId }, 'engine refused a catalog market');
      }
    }
  };
  register(catalog.read.tradingMarkets());
  catalog.write.onMarketsChanged(register);
  if (config.demo && catalog.read.isEmpty() && store.meta.get(metaKeys.demoLoaded) === undefined) {
    const { summary, funded } = await loadDemo(catalog.write, ctx.engine, clock.now());
    await store.meta.put(metaKeys.demoLoaded, new Date(clock.now()).toISOString());
    log.info({ events: summary.events.created, markets: summary.markets.created, fundedWallets: funded }, 'demo catalog loaded');
  }
}
