/**
 * The sandbox's routes (edge/sandbox/): the admin controls of maintenance windows, fault injection and
 * closed-only wallets, behind the admin bearer token like every admin route, and the platform's ban-status
 * read for a wallet's own closed-only mode (L2). Trade settlement is configuration only
 * (`sandbox.trades`); GET /admin/sandbox shows it with the trades still settling.
 */
import { apiError } from '../../domain/errors.ts';
import type { AppContext } from '../context.ts';
import { READ_KEYS, route, type AnyRoute } from '../route.ts';
import { AddressParams } from '../schemas/admin.ts';
import {
  BanStatus,
  ClosedOnlyBody,
  ClosedOnlyReply,
  FaultScenario,
  FaultsState,
  MaintenanceState,
  SandboxState,
  StartMaintenanceBody,
} from '../schemas/sandbox.ts';
import { scenarioProblems } from '../sandbox/faults.ts';

export function sandboxRoutes(ctx: AppContext): AnyRoute[] {
  const sb = ctx.sandbox;
  return [
    route({
      method: 'GET',
      path: '/admin/sandbox',
      group: 'admin',
      auth: 'admin',
      summary: 'The sandbox as it stands: maintenance phase and schedule, fault scenario and what it injected, closed-only wallets, trade settlement',
      response: SandboxState,
      handler: () => sb.state(),
    }),
    route({
      method: 'POST',
      path: '/admin/sandbox/maintenance',
      group: 'admin',
      auth: 'admin',
      summary: 'Start a maintenance window now: order routes answer 425 for durationSeconds, then orders without postOnly are refused for postOnlySeconds',
      description: 'Open orders stay on their books and every read keeps working. A window already running is replaced.',
      body: StartMaintenanceBody,
      response: MaintenanceState,
      handler: ({ body }) => {
        sb.maintenance.start(body.durationSeconds, body.postOnlySeconds);
        ctx.log.warn({ durationSeconds: body.durationSeconds, postOnlySeconds: body.postOnlySeconds ?? sb.maintenance.settings.postOnlySeconds }, 'maintenance window started');
        return sb.maintenance.state();
      },
    }),
    route({
      method: 'DELETE',
      path: '/admin/sandbox/maintenance',
      group: 'admin',
      auth: 'admin',
      summary: 'End the maintenance window (admin or scheduled) and its post-only period now',
      response: MaintenanceState,
      handler: () => {
        sb.maintenance.end();
        ctx.log.info('maintenance window ended');
        return sb.maintenance.state();
      },
    }),
    route({
      method: 'PUT',
      path: '/admin/sandbox/faults',
      group: 'admin',
      auth: 'admin',
      summary: 'Set the fault scenario (ack latency, 500 after or without applying, 503), replacing any; {} turns faults off',
      description: 'Faults are drawn from the seed and the request count since this call: the same seed and requests meet the same faults.',
      body: FaultScenario,
      response: FaultsState,
      handler: ({ body }) => {
        const problems = scenarioProblems(body);
        if (problems.length > 0) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: problems });
        sb.faults.set(body, 'admin');
        return sb.faults.state();
      },
    }),
    route({
      method: 'DELETE',
      path: '/admin/sandbox/faults',
      group: 'admin',
      auth: 'admin',
      summary: 'Turn fault injection off',
      response: FaultsState,
      handler: () => {
        sb.faults.set(undefined, 'admin');
        return sb.faults.state();
      },
    }),
    route({
      method: 'PUT',
      path: '/admin/wallets/:address/closed-only',
      group: 'admin',
      auth: 'admin',
      summary: 'Set or clear a wallet\'s closed-only mode: only cancels and SELL orders (reducing a position) are accepted',
      params: AddressParams,
      body: ClosedOnlyBody,
      response: ClosedOnlyReply,
      handler: async ({ params, body }) => {
        const address = params.address.toLowerCase();
        await sb.closedOnly.set(address, body.closedOnly);
        ctx.log.info({ address, closedOnly: body.closedOnly }, 'closed-only mode changed');
        return { address, closedOnly: sb.closedOnly.has(address) };
      },
    }),
    route({
      method: 'GET',
      path: '/auth/ban-status/closed-only',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: 'Whether the caller\'s wallet is in closed-only mode (the platform client\'s getClosedOnlyMode)',
      response: BanStatus,
      handler: (req) => ({ closed_only: sb.closedOnly.has(req.caller.address!) }),
    }),
  ];
}
