/**
 * The sandbox's test controls (edge/sandbox/test-controls.ts) behind the admin token: the test clock (GET and
 * PUT /admin/clock, POST /admin/clock/advance). Mounted only where the controls run (config
 * `sandbox.testControls`); elsewhere these paths are unknown routes.
 */
import { apiError } from '../../domain/errors.ts';
import type { TestClockState } from '../../runtime/clock.ts';
import type { AppContext } from '../context.ts';
import { bindRoutes, routeSpec, type AnyRoute, type RequestOf, type RouteSpec } from '../route.ts';
import type { TestControls } from '../sandbox/test-controls.ts';
import { AdvanceBody, AdvanceReply, ClockModeBody, ClockState } from '../schemas/test-controls.ts';

export interface TestControlDeps {
  readonly controls: TestControls;
}

const MAX_TIME_MS = 8_640_000_000_000_000;

export function clockState(s: TestClockState): ClockState {
  return { now: new Date(s.now).toISOString(), nowMs: s.now, time: Math.floor(s.now / 1000), frozen: s.frozen, offsetMs: s.offsetMs };
}

export function getClock(d: TestControlDeps) {
  return clockState(d.controls.clock.state());
}

export async function setClockMode(d: TestControlDeps, { body }: RequestOf<undefined, typeof ClockModeBody>) {
  return clockState(await d.controls.clock.setFrozen(body.frozen));
}

/** The instant an advance body names, or a 400 listing what is wrong with it. */
export function advanceTarget(body: AdvanceBody, nowMs: number): number {
  const given = (body.seconds !== undefined ? 1 : 0) + (body.to !== undefined ? 1 : 0);
  if (given !== 1) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: ['give exactly one of `seconds` and `to`'] });
  if (body.seconds !== undefined) return nowMs + Math.round(body.seconds * 1000);
  const to = body.to!;
  const ms = typeof to === 'number' ? to * 1000 : Date.parse(to);
  if (!Number.isSafeInteger(ms) || ms > MAX_TIME_MS) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: ['`to` is not unix seconds or an ISO 8601 time'] });
  return ms;
}

export async function advanceClock(d: TestControlDeps, { body }: RequestOf<undefined, typeof AdvanceBody>) {
  const c = d.controls.clock;
  const r = await c.advanceTo(advanceTarget(body, c.state().now));
  return { clock: clockState(c.state()), advanced: { from: new Date(r.fromMs).toISOString(), to: new Date(r.toMs).toISOString(), timers: r.timers, tookMs: r.tookMs } };
}

export const TEST_CONTROL_ROUTES: readonly RouteSpec<TestControlDeps>[] = [
  routeSpec({
    method: 'GET',
    path: '/admin/clock',
    group: 'admin',
    auth: 'admin',
    summary: 'The test clock: the exchange\'s time, and whether it is frozen or running',
    response: ClockState,
    handler: getClock,
  }),
  routeSpec({
    method: 'PUT',
    path: '/admin/clock',
    group: 'admin',
    auth: 'admin',
    summary: 'Freeze the exchange\'s time where it stands, or let it run on from there',
    description: 'Frozen, nothing happens by itself: GTD orders do not expire, trades do not settle, heartbeats do not lapse, until the clock is advanced.',
    body: ClockModeBody,
    response: ClockState,
    handler: setClockMode,
  }),
  routeSpec({
    method: 'POST',
    path: '/admin/clock/advance',
    group: 'admin',
    auth: 'admin',
    summary: 'Move the exchange\'s time forward: everything due on the way happens, in order, each at its time; answered once it is committed',
    description:
      'GTD expiries, trade settlement moves, heartbeat lapses, maintenance windows, reward and midpoint samples and scenario events due before the target happen in time order. ' +
      'A running clock runs on from the target; a frozen one stays there. Time never goes back: a target before the exchange\'s time is refused.',
    body: AdvanceBody,
    response: AdvanceReply,
    handler: advanceClock,
  }),
];

export function testControlRoutes(ctx: Pick<AppContext, 'controls'>): AnyRoute[] {
  if (ctx.controls === undefined) return [];
  return bindRoutes<TestControlDeps>({ controls: ctx.controls }, TEST_CONTROL_ROUTES);
}
