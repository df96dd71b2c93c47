/**
 * Composition root: opens the store, builds the context and the route table, starts the HTTP edge.
 * `main.ts` wraps it with configuration loading and signal handling; tests start it in process.
 */
import { openStore, type Store } from './journal/env.ts';
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
}

export async function startApp(config: Readonly<Config>, opts: AppOptions = {}): Promise<App> {
  const log = opts.log ?? createLogger(config.log.level);
  const clock = opts.clock ?? systemClock;
  const store = opts.store ?? openStore({ dataDir: config.dataDir });
  const metrics = new Metrics();
  let openapi: Record<string, unknown> = {};
  const ctx: AppContext = {
    config,
    store,
    log,
    clock,
    metrics,
    state: { ready: false },
    openapi: () => openapi,
  };
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
        await store.close();
      })();
      return stopping;
    },
  };
}
