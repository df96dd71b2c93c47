/**
 * The sandbox's test controls, together: what a bot's test suite drives through the admin API to arrange a
 * market and move time (DESIGN section 13). Built by app.ts only where the engine runs and
 * `sandbox.testControls` says so (config.ts testControlsOn: on in ROLE=single by default, off in every
 * clustered role unless asked for); absent otherwise, and then their routes are not mounted at all (404, as
 * an unknown route). Like every admin route they need the admin token.
 *
 *   clock            the test clock (test-clock.ts): freeze, run, advance
 *   counterparties   orders as any wallet, token credits, books, trades against an order (counterparties.ts)
 *   scenarios        a market, its books, wallets and a timed script in one document (scenario.ts)
 *   snapshots        the whole exchange saved under a name, and reverted to (snapshots.ts; the node's work)
 */
import type { Engine } from '../../engine/engine.ts';
import type { Store } from '../../journal/env.ts';
import type { TestClock } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/log.ts';
import type { OrderDomains } from '../auth/eip712.ts';
import { Counterparties } from './counterparties.ts';
import { Scenarios, type ScenarioDeps } from './scenario.ts';
import type { SnapshotControl } from './snapshots.ts';
import { TestClockControl } from './test-clock.ts';

export interface TestControls {
  readonly clock: TestClockControl;
  readonly counterparties: Counterparties;
  readonly scenarios: Scenarios;
  /** Absent where the node runs no store of its own to save (never in ROLE=single). */
  readonly snapshots?: SnapshotControl;
}

export function openTestControls(o: {
  clock: TestClock;
  engine: Engine;
  store: Store;
  log: Logger;
  domains: OrderDomains;
  catalog: ScenarioDeps['catalog'];
  resolve: ScenarioDeps['resolve'];
  snapshots?: SnapshotControl;
}): TestControls {
  const counterparties = new Counterparties({ engine: o.engine, domains: o.domains, clock: o.clock });
  return Object.freeze({
    clock: new TestClockControl(o.clock, o.engine, o.store, o.log),
    counterparties,
    scenarios: new Scenarios({ counterparties, catalog: o.catalog, engine: o.engine, clock: o.clock, timers: o.clock.timers, resolve: o.resolve, log: o.log }),
    ...(o.snapshots !== undefined ? { snapshots: o.snapshots } : {}),
  });
}
