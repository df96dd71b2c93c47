/**
 * Room edge/sandbox/: the sandbox's gates and faults (maintenance, closed-only wallets, injected faults,
 * the test clock, test controls and their counterparties). Separate because none of it runs in a production
 * profile's request path unless configured; it imports auth/, pipeline/, schemas/ and ws/socket-faults.ts,
 * never routes/.
 *
 * The sandbox's controls at the edge, in one place: maintenance windows (maintenance.ts), closed-only
 * wallets (closed-only.ts) and fault injection (faults.ts), plus the two ways they reach requests:
 *
 *   gate(route)          wraps a route's handler (routes.ts applies it to the whole table): on the order
 *                        routes, 425 during a maintenance window, then the scenario's 503, 500 and latency;
 *                        on the order-book API's other routes, the scenario's 503. Admin, operations,
 *                        catalog and data routes are never touched, so the sandbox can always be driven.
 *   orderRefusal(order)  what POST /order and /orders refuse after their checks, just before the engine
 *                        takes the order: any order during a maintenance window (a request that passed the
 *                        gate as the window began), a BUY of a closed-only wallet, an order without postOnly
 *                        during a post-only period. The demo's traders (demo/engine-venue.ts) meet the same
 *                        refusals: a window stops matching for everyone.
 *   placing(promise)     counts an order the engine took until it is answered, so that starting a window
 *                        (quiet()) can wait for the orders taken before it: once the admin's start is
 *                        answered, nothing trades until the post-only period has ended.
 *
 * Refusals and faults are counted in /metrics (`sandbox_refusals_total{reason}`, faults.ts's series), the
 * maintenance phase is the gauge `sandbox_maintenance_phase{phase}` and trades still settling
 * `trades_settling{status}`. Everything is off by default: no schedule, no scenario, no closed-only wallet.
 */
import { Counter, Gauge } from 'prom-client';
import { apiError, type ApiError } from '../../domain/errors.ts';
import type { OrderSubmission } from '../../domain/events.ts';
import type { Engine } from '../../engine/engine.ts';
import type { Store } from '../../journal/env.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { Config } from '../../runtime/config.ts';
import type { Logger } from '../../runtime/log.ts';
import type { Metrics } from '../pipeline/metrics.ts';
import type { AnyRoute, RouteRequest } from '../pipeline/route.ts';
import type { SandboxState } from '../schemas/sandbox.ts';
import { ClosedOnlyWallets } from './closed-only.ts';
import { FaultInjector, readScenarioFile } from './faults.ts';
import { MaintenanceWindows } from './maintenance.ts';

/** The routes a maintenance window closes and order faults apply to (the platform's order endpoints). */
export const ORDER_ROUTES: ReadonlySet<string> = new Set([
  'POST /order',
  'POST /orders',
  'DELETE /order',
  'DELETE /orders',
  'DELETE /cancel-market-orders',
  'DELETE /cancel-all',
]);

export interface SandboxDeps {
  config: Readonly<Config>;
  store: Store;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  engine: Pick<Engine, 'tradeSettlement'>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class Sandbox {
  readonly maintenance: MaintenanceWindows;
  readonly closedOnly: ClosedOnlyWallets;
  readonly faults: FaultInjector;
  private readonly clock: Clock;
  private readonly engine: SandboxDeps['engine'];
  private readonly refusals: Counter<'reason'>;
  /** Orders the engine took that are not answered yet, and who waits for there to be none. */
  private inFlight = 0;
  private idle: Array<() => void> = [];
  private readonly settled = () => {
    if (--this.inFlight === 0) for (const wake of this.idle.splice(0)) wake();
  };

  /** Throws when the configured scenario file cannot be read or is not a valid scenario. */
  constructor(deps: SandboxDeps) {
    const { config, store, clock, log, metrics, engine } = deps;
    this.clock = clock;
    this.engine = engine;
    this.maintenance = new MaintenanceWindows(config.sandbox.maintenance, clock);
    this.closedOnly = new ClosedOnlyWallets(store);
    this.faults = new FaultInjector(log, clock, metrics.registry);
    if (config.sandbox.faultsFile !== '') this.faults.set(readScenarioFile(config.sandbox.faultsFile), 'file');
    const registers = [metrics.registry];
    this.refusals = new Counter({ name: 'sandbox_refusals_total', help: 'Requests refused by the sandbox, by reason', labelNames: ['reason'] as const, registers });
    const maintenance = this.maintenance;
    new Gauge({
      name: 'sandbox_maintenance_phase',
      help: 'Trading phase: 1 for the current one of open, maintenance (order routes answer 425), post-only',
      labelNames: ['phase'] as const,
      registers,
      collect() {
        const now = maintenance.phaseAt().phase;
        for (const p of ['open', 'maintenance', 'post-only']) this.labels(p).set(p === now ? 1 : 0);
      },
    });
    const closedOnly = this.closedOnly;
    new Gauge({
      name: 'sandbox_closed_only_wallets',
      help: 'Wallets in closed-only mode',
      registers,
      collect() {
        this.set(closedOnly.list().length);
      },
    });
    new Gauge({
      name: 'trades_settling',
      help: 'Trades not settled for good yet (trade lifecycle), by status',
      labelNames: ['status'] as const,
      registers,
      collect() {
        for (const [status, n] of Object.entries(engine.tradeSettlement().settling)) this.labels(status).set(n);
      },
    });
  }

  /** The route with the sandbox's behaviour around its handler (itself when the sandbox never touches it). */
  gate(route: AnyRoute): AnyRoute {
    const key = `${route.method} ${route.path}`;
    const handler = route.handler;
    if (ORDER_ROUTES.has(key)) {
      return {
        ...route,
        handler: async (req: RouteRequest<any, any, any>) => {
          if (this.maintenance.phaseAt().phase === 'maintenance') {
            this.refusals.labels('maintenance').inc();
            throw apiError('PM_ERR_NOT_READY');
          }
          const f = this.faults.forOrder(key);
          if (f.error503) throw apiError('PM_ERR_UNAVAILABLE');
          if (f.error500 === 'not-applied') throw apiError('PM_ERR_INTERNAL');
          const out = await handler(req);
          if (f.latencyMs > 0) await sleep(f.latencyMs);
          if (f.error500 === 'applied') throw apiError('PM_ERR_INTERNAL');
          return out;
        },
      };
    }
    if (route.group !== 'clob' && route.group !== 'trading') return route;
    return {
      ...route,
      handler: (req: RouteRequest<any, any, any>) => {
        if (this.faults.forOther(key)) throw apiError('PM_ERR_UNAVAILABLE');
        return handler(req);
      },
    };
  }

  /**
   * What POST /order and /orders (and the demo's venue) refuse of an order that passed their checks: any
   * order during a maintenance window (425), a BUY of a closed-only wallet (400; its maker's or its signer's:
   * closing an EOA closes what it signs for its proxy and Safe too), an order without postOnly in a post-only
   * period (503, with the seconds left). Undefined admits.
   */
  orderRefusal(o: Pick<OrderSubmission, 'wallet' | 'signer' | 'side' | 'postOnly'>): { error: ApiError; retryAfterSeconds?: number } | undefined {
    if (this.maintenance.phaseAt().phase === 'maintenance') {
      this.refusals.labels('maintenance').inc();
      return { error: apiError('PM_ERR_NOT_READY') };
    }
    if (o.side === 'BUY') {
      const closed = this.closedOnly.has(o.wallet) ? o.wallet : o.signer !== o.wallet && this.closedOnly.has(o.signer) ? o.signer : undefined;
      if (closed !== undefined) {
        this.refusals.labels('closed_only').inc();
        return { error: apiError('PM_ERR_CLOSED_ONLY', { address: closed.toLowerCase() }) };
      }
    }
    if (!o.postOnly) {
      const now = this.clock.now();
      const p = this.maintenance.phaseAt(now);
      if (p.phase === 'post-only') {
        this.refusals.labels('post_only').inc();
        const retryAfterSeconds = Math.max(1, Math.ceil(((p.until as number) - now) / 1000));
        return { error: apiError('PM_ERR_POST_ONLY_MODE', undefined, { code: 'post_only_mode', retry_after_seconds: retryAfterSeconds }), retryAfterSeconds };
      }
    }
    return undefined;
  }

  /** An order the engine is taking (orderRefusal admitted it): counted until answered. Returns `p`. */
  placing<T>(p: Promise<T>): Promise<T> {
    this.inFlight++;
    p.then(this.settled, this.settled);
    return p;
  }

  /** Resolves once every order the engine took before the call has been answered (committed or refused). */
  quiet(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }

  state(): SandboxState {
    const t = this.engine.tradeSettlement();
    return {
      maintenance: this.maintenance.state(),
      faults: this.faults.state(),
      closedOnly: this.closedOnly.list(),
      trades: { ...t.settings, settling: { ...t.settling } },
    };
  }
}
