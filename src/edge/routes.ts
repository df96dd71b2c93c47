/**
 * Room edge/routes/ (this file is its table): the API, one module per route group, handlers over the
 * context (context.ts). The top of the edge: it may use pipeline/, auth/, refusals/, sandbox/, schemas/,
 * trading/ and http/static-files.ts, and nothing but this table imports it.
 *
 * The route table: every endpoint the service answers, by group. Each group module holds its table as
 * data naming module-level handlers, which take that module's own dependencies interface (what it uses of
 * the context, nothing more) and are bound to it here; adding an endpoint is a change to one group module
 * (and adding a group is one line here). Rate-limit buckets per route are listed in rate-limit-buckets.ts and docs/http-api.md. Every
 * route passes through the sandbox's gate (edge/sandbox/sandbox.ts: maintenance windows and injected
 * faults), which leaves the routes it never touches as they are.
 */
import type { AppContext } from './context.ts';
import type { AnyRoute } from './pipeline/route.ts';
import { opsRoutes } from './routes/ops.ts';
import { authRoutes } from './routes/auth.ts';
import { catalogRoutes } from './routes/catalog.ts';
import { adminRoutes } from './routes/admin.ts';
import { walletRoutes } from './routes/wallets.ts';
import { marketDataRoutes } from './routes/market-data.ts';
import { tradingRoutes } from './routes/trading.ts';
import { sandboxRoutes } from './routes/sandbox.ts';
import { accountRoutes } from './routes/account.ts';
import { rewardsRoutes } from './routes/rewards.ts';
import { consoleRoutes } from './routes/console.ts';
import { testControlRoutes } from './routes/test-controls.ts';
import { snapshotRoutes } from './routes/snapshots.ts';

export function buildRoutes(ctx: AppContext): AnyRoute[] {
  return [
    ...opsRoutes(ctx),
    ...authRoutes(ctx),
    ...catalogRoutes(ctx),
    ...adminRoutes(ctx),
    ...walletRoutes(ctx),
    ...marketDataRoutes(ctx),
    ...tradingRoutes(ctx),
    ...sandboxRoutes(ctx),
    ...accountRoutes(ctx),
    ...rewardsRoutes(ctx),
    ...consoleRoutes(ctx),
    ...testControlRoutes(ctx),
    ...snapshotRoutes(ctx),
  ].map((r) => ctx.sandbox.gate(r));
}
