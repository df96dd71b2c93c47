/**
 * The exchange as a test fixture: `startExchange(options)` starts the whole service in this process, on a
 * free port with a store of its own, and hands a test what a local chain node hands a contract's tests: the
 * URL, funded wallets with their test keys, an admin client (the test clock, counterparties, scenarios) and
 * `close()`, which stops it and removes its temporary store.
 *
 * What it starts with: the demo catalog (`demo: "static"`, the default: 42 markets and the five demo wallets,
 * 10,000 USDC each), or an empty exchange (`"off"`: the five wallets are funded all the same), or the living
 * demo (`"live"`: traders too). The test controls are on and the admin token is random unless given. The
 * configuration is the defaults, then `configFile` (a JSON file, as CONFIG_FILE), then `config` (an object),
 * never the process's environment: a test's exchange does not change with the shell it runs in. Logs are
 * silent unless asked for. One signature thread unless configured: a test fixture starts in well under a
 * second and leaves the cores to the test.
 *
 * What it must not do: keep the process alive after close(), or leave its temporary store behind (a store
 * given as `dataDir` is the caller's and stays).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startApp, type App } from '../node/app.ts';
import { DEMO_FUNDING_UNITS, DEMO_WALLETS } from '../demo/catalog.ts';
import type { Scenario, ScenarioReply } from '../edge/schemas/test-controls.ts';
import { formatUnits } from '../domain/units.ts';
import { configOf, readConfigFile } from '../runtime/config.ts';
import { createLogger, silentLogger } from '../runtime/log.ts';
import { AdminClient } from './admin-client.ts';

export interface ExchangeOptions {
  /** What a fresh store starts with: `static` (default) the demo catalog and funded wallets; `off` no catalog; `live` demo traders too. */
  demo?: 'static' | 'off' | 'live';
  /** The store's directory (kept by close()); default a temporary one that close() removes. */
  dataDir?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The admin API's bearer token; default a random one (`exchange.adminToken`). */
  adminToken?: string;
  /** A JSON configuration file overlaid on the defaults (as CONFIG_FILE), e.g. config/clob-v2-compat.json. */
  configFile?: string;
  /** Configuration overlaid last (e.g. `{ sandbox: { trades: { minedDelayMs: 5000 } } }`). */
  config?: Record<string, unknown>;
  /** Freeze the exchange's clock before the test starts (it runs otherwise). */
  frozen?: boolean;
  /** A scenario started once the exchange is up (the object, or a JSON file's path). */
  scenario?: Scenario | string;
  /**
   * A state file to start from: a packed snapshot (`admin.exportSnapshot`) or a snapshot directory (copied out of
   * DATA_DIR/snapshots). Loaded when the store is new (a temporary one always is) and kept as a snapshot under
   * the name it was saved with, so a test can revert to it. The demo catalog and funding are the state's.
   */
  state?: string;
  /** pino level of the service's log on stderr; default `silent`. */
  logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

/** A funded wallet: TEST KEYS ONLY (derived from public strings: anyone can sign for them). */
export interface TestWallet {
  address: string;
  privateKey: `0x${string}`;
}

export interface Exchange {
  /** `http://host:port`: every route (the platform's REST paths, the admin API, /console). */
  readonly url: string;
  /** `ws://host:port`: the streams at /ws/market and /ws/user. */
  readonly wsUrl: string;
  readonly adminToken: string;
  readonly dataDir: string;
  /** The chain id orders and API keys are signed for (GET /exchange-info has the domains). */
  readonly chainId: number;
  /** The five demo wallets, 10,000 USDC each on a fresh store. */
  readonly wallets: readonly TestWallet[];
  readonly admin: AdminClient;
  /** The scenario started with `options.scenario`. */
  readonly scenario?: ScenarioReply;
  /** The service itself (its context, for tests that look inside). */
  readonly app: App;
  /** Stops the service; removes the store when it was a temporary one. */
  close(): Promise<void>;
}

export async function startExchange(options: ExchangeOptions = {}): Promise<Exchange> {
  const temporary = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'pm-exchange-'));
  const adminToken = options.adminToken ?? randomBytes(16).toString('hex');
  let app: App | undefined;
  try {
    const config = configOf(
      { auth: { signatureThreads: 1 }, log: { level: options.logLevel ?? 'silent' }, sandbox: { testControls: 'on' } },
      options.configFile === undefined ? {} : readConfigFile(options.configFile),
      options.config ?? {},
      { dataDir, demo: options.demo ?? 'static', adminToken, http: { port: options.port ?? 0, host: options.host ?? '127.0.0.1' } },
      options.state === undefined ? {} : { sandbox: { state: resolve(options.state) } },
    );
    const log = config.log.level === 'silent' ? silentLogger : createLogger(config.log.level);
    app = await startApp(config, { log });
    const host = config.http.host.includes(':') ? `[${config.http.host}]` : config.http.host;
    const url = `http://${host}:${app.port}`;
    const admin = new AdminClient(url, adminToken);
    // An empty exchange still has its five funded wallets, as a local chain node has its accounts (once:
    // a store that holds anything already was set up before).
    if (config.demo === 'off' && app.ctx.engine.committedSeq === 0) {
      for (const w of DEMO_WALLETS) await admin.deposit(w.address, formatUnits(DEMO_FUNDING_UNITS));
    }
    if (options.frozen === true) await admin.freeze();
    const scenario = options.scenario === undefined ? undefined : await admin.startScenario(typeof options.scenario === 'string' ? (JSON.parse(readFileSync(options.scenario, 'utf8')) as Scenario) : options.scenario);
    const started = app;
    let closing: Promise<void> | undefined;
    return {
      url,
      wsUrl: url.replace(/^http/, 'ws'),
      adminToken,
      dataDir,
      chainId: config.auth.chainId,
      wallets: DEMO_WALLETS.map((w) => ({ address: w.address, privateKey: w.privateKey })),
      admin,
      scenario,
      app: started,
      close() {
        closing ??= (async () => {
          await started.stop(1000);
          if (temporary) rmSync(dataDir, { recursive: true, force: true });
        })();
        return closing;
      },
    };
  } catch (err) {
    await app?.stop(1000).catch(() => undefined);
    if (temporary) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}
