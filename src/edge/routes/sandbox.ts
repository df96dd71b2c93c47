/**
 * The sandbox's routes (edge/sandbox/): the admin controls of maintenance windows, fault injection and
 * closed-only wallets, behind the admin bearer token like every admin route, and the platform's ban-status
 * read for a wallet's own closed-only mode (L2). Trade settlement is configuration only
 * (`sandbox.trades`); GET /admin/sandbox shows it with the trades still settling.
 */
import { apiError } from '../../domain/errors.ts';
import type { Logger } from '../../runtime/log.ts';
import type { AppContext } from '../context.ts';
import { READ_KEYS, bindRoutes, routeSpec, type AnyRoute, type RequestOf, type RouteSpec } from '../pipeline/route.ts';
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
import type { Funders } from '../auth/funders.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';

/**
 * What the sandbox routes use: the sandbox's parts (not its gate), the log that records each admin change, and
 * the key's wallets (a key is closed-only when any wallet it signs for is).
 */
export interface SandboxRouteDeps {
  readonly sandbox: Pick<Sandbox, 'state' | 'maintenance' | 'faults' | 'closedOnly' | 'quiet'>;
  readonly log: Pick<Logger, 'info' | 'warn'>;
  readonly funders: Pick<Funders, 'walletsOf'>;
}
type Sb<K extends keyof SandboxRouteDeps['sandbox']> = { readonly sandbox: Pick<SandboxRouteDeps['sandbox'], K> };

export function sandboxState(d: Sb<'state'>) {
  return d.sandbox.state();
}

/**
 * Starts the window, then answers once the orders the engine took before it are answered (Sandbox.quiet):
 * from the answer on, nothing trades until its post-only period has ended. The answer echoes what was set.
 */
export async function startMaintenance(d: Sb<'maintenance' | 'quiet'> & Pick<SandboxRouteDeps, 'log'>, { body }: RequestOf<undefined, typeof StartMaintenanceBody>) {
  const m = d.sandbox.maintenance;
  m.start(body.durationSeconds, body.postOnlySeconds);
  d.log.warn({ durationSeconds: body.durationSeconds, postOnlySeconds: body.postOnlySeconds ?? m.settings.postOnlySeconds }, 'maintenance window started');
  await d.sandbox.quiet();
  return m.state();
}

export function endMaintenance(d: Sb<'maintenance'> & Pick<SandboxRouteDeps, 'log'>) {
  d.sandbox.maintenance.end();
  d.log.info('maintenance window ended');
  return d.sandbox.maintenance.state();
}

/** Sets (or with `undefined` clears) the scenario; one that is not valid changes nothing and lists every problem. */
function setFaults(d: Sb<'faults'>, scenario: FaultScenario | undefined) {
  const problems = scenario === undefined ? [] : scenarioProblems(scenario);
  if (problems.length > 0) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: problems });
  d.sandbox.faults.set(scenario, 'admin');
  return d.sandbox.faults.state();
}

export function putFaults(d: Sb<'faults'>, { body }: RequestOf<undefined, typeof FaultScenario>) {
  return setFaults(d, body);
}

export function clearFaults(d: Sb<'faults'>) {
  return setFaults(d, undefined);
}

export async function setClosedOnly(
  d: Sb<'closedOnly'> & Pick<SandboxRouteDeps, 'log'>,
  { params, body }: RequestOf<undefined, typeof ClosedOnlyBody, typeof AddressParams>,
) {
  const address = params.address.toLowerCase();
  await d.sandbox.closedOnly.set(address, body.closedOnly);
  d.log.info({ address, closedOnly: body.closedOnly }, 'closed-only mode changed');
  return { address, closedOnly: d.sandbox.closedOnly.has(address) };
}

/** Closed-only when the key's wallet, its proxy wallet or its Safe is: its BUYs for that wallet are refused. */
export function banStatus(d: Sb<'closedOnly'> & Pick<SandboxRouteDeps, 'funders'>, req: RequestOf) {
  return { closed_only: d.funders.walletsOf(req.caller.address!).some((w) => d.sandbox.closedOnly.has(w)) };
}

export const SANDBOX_ROUTES: readonly RouteSpec<SandboxRouteDeps>[] = [
  routeSpec({
    method: 'GET',
    path: '/admin/sandbox',
    group: 'admin',
    auth: 'admin',
    summary: 'The sandbox as it stands: maintenance phase and schedule, fault scenario and what it injected, closed-only wallets, trade settlement',
    response: SandboxState,
    handler: sandboxState,
  }),
  routeSpec({
    method: 'POST',
    path: '/admin/sandbox/maintenance',
    group: 'admin',
    auth: 'admin',
    summary: 'Start a maintenance window now: order routes answer 425 for durationSeconds, then orders without postOnly are refused for postOnlySeconds',
    description:
      'Open orders stay on their books and every read keeps working. A window already running is replaced. Answered once the orders the ' +
      'engine took before the window are answered: from then on nothing trades until the post-only period ends. The answer echoes the lengths set.',
    body: StartMaintenanceBody,
    response: MaintenanceState,
    handler: startMaintenance,
  }),
  routeSpec({
    method: 'DELETE',
    path: '/admin/sandbox/maintenance',
    group: 'admin',
    auth: 'admin',
    summary: 'End the maintenance window (admin or scheduled) and its post-only period now',
    response: MaintenanceState,
    handler: endMaintenance,
  }),
  routeSpec({
    method: 'PUT',
    path: '/admin/sandbox/faults',
    group: 'admin',
    auth: 'admin',
    summary: 'Set the fault scenario (ack latency, 500 after or without applying, 503, dropped or stalled stream sockets), replacing any; {} turns faults off',
    description: 'Faults are drawn from the seed and the request count since this call: the same seed and requests meet the same faults.',
    body: FaultScenario,
    response: FaultsState,
    handler: putFaults,
  }),
  routeSpec({
    method: 'DELETE',
    path: '/admin/sandbox/faults',
    group: 'admin',
    auth: 'admin',
    summary: 'Turn fault injection off',
    response: FaultsState,
    handler: clearFaults,
  }),
  routeSpec({
    method: 'PUT',
    path: '/admin/wallets/:address/closed-only',
    group: 'admin',
    auth: 'admin',
    summary: 'Set or clear a wallet\'s closed-only mode: only cancels and SELL orders (reducing a position) are accepted',
    params: AddressParams,
    body: ClosedOnlyBody,
    response: ClosedOnlyReply,
    handler: setClosedOnly,
  }),
  routeSpec({
    method: 'GET',
    path: '/auth/ban-status/closed-only',
    group: 'trading',
    auth: 'l2',
    keys: READ_KEYS,
    summary: 'Whether the caller\'s wallet, its proxy wallet or its Safe is in closed-only mode (the platform client\'s getClosedOnlyMode)',
    response: BanStatus,
    handler: banStatus,
  }),
];

export function sandboxRoutes(ctx: Pick<AppContext, 'sandbox' | 'log' | 'auth'>): AnyRoute[] {
  return bindRoutes<SandboxRouteDeps>({ sandbox: ctx.sandbox, log: ctx.log, funders: ctx.auth.funders }, SANDBOX_ROUTES);
}
