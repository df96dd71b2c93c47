/**
 * What route handlers may use. main.ts builds one context and passes it to every route module; each
 * capability (catalog, engine, auth, projections) adds its member here when it lands.
 */
import type { Config } from '../runtime/config.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Logger } from '../runtime/log.ts';
import type { Store } from '../journal/env.ts';
import type { Metrics } from './metrics.ts';

export interface AppContext {
  readonly config: Readonly<Config>;
  readonly store: Store;
  readonly log: Logger;
  readonly clock: Clock;
  readonly metrics: Metrics;
  /** Flips to true once the service can trade (engine recovered, catalog loaded). */
  readonly state: { ready: boolean };
  /** The OpenAPI document of the mounted route table. */
  openapi(): Record<string, unknown>;
}
