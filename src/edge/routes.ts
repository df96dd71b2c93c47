/**
 * Room edge/routes/ (this file is its table): the API, one module per route group, handlers over the
 * context (context.ts). The top of the edge: it may use pipeline/, auth/, refusals/, sandbox/, schemas/,
 * trading/ and http/static-files.ts, and nothing but this table imports it.
 *
 * Its sub-rooms are the interface's sections (interface-spec.md, "Endpoints"), each served on its own base URL
 * by the platform: clob/ (the order book and market data, trading, API keys, the account, rewards), data/
 * (wallet data) and catalog/ (events, markets, tags). The files at routes/'s root are the service's own,
 * beyond the interface: the admin API, the test controls, the sandbox, the console and the operations
 * routes. No group imports another (tools/check-imports.ts); what two groups share lives below routes/.
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
import { authRoutes } from './routes/clob/auth.ts';
import { catalogRoutes } from './routes/catalog/catalog.ts';
import { adminRoutes } from './routes/admin.ts';
import { walletRoutes } from './routes/data/wallets.ts';
import { marketDataRoutes } from './routes/clob/market-data.ts';
import { tradingRoutes } from './routes/clob/trading.ts';
import { sandboxRoutes } from './routes/sandbox.ts';
import { accountRoutes } from './routes/clob/account.ts';
import { rewardsRoutes } from './routes/clob/rewards.ts';
import { consoleRoutes } from './routes/console.ts';
import { testControlRoutes } from './routes/test-controls.ts';
import { snapshotRoutes } from './routes/snapshots.ts';

/** The route groups, in the table's order. */
const GROUPS: readonly ((ctx: AppContext) => AnyRoute[])[] = [
  opsRoutes,
  authRoutes,
  catalogRoutes,
  adminRoutes,
  walletRoutes,
  marketDataRoutes,
  tradingRoutes,
  sandboxRoutes,
  accountRoutes,
  rewardsRoutes,
  consoleRoutes,
  testControlRoutes,
  snapshotRoutes,
];

export function buildRoutes(ctx: AppContext): AnyRoute[] {
  return GROUPS.flatMap((group) => group(ctx)).map((r) => ctx.sandbox.gate(r));
}
