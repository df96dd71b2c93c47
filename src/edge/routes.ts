/**
 * The route table: every endpoint the service answers, by group. Each group module returns its routes
 * built on the shared context; adding an endpoint is a change to one group module (and adding a group
 * is one line here). Rate-limit buckets per route are listed in rate-limit-buckets.ts and README.
 */
import type { AppContext } from './context.ts';
import type { AnyRoute } from './route.ts';
import { opsRoutes } from './routes/ops.ts';

export function buildRoutes(ctx: AppContext): AnyRoute[] {
  return [...opsRoutes(ctx)];
}
