/**
 * Composition root: opens the store, builds the context and the route table, starts the HTTP edge.
 * `main.ts` wraps it with configuration loading and signal handling; tests start it in process.
 */
import { openStore, type Store } from './journal/env.ts';
import { metaKeys } from './journal/keys.ts';
import { readFill } from './journal/fill-codec.ts';
import { CatalogWriter } from './projections/catalog.ts';
import { CatalogReader } from './queries/catalog.ts';
import { loadDemo } from './demo/catalog.ts';
import { LIVE_DEMO_DEFAULTS, ReplayClock, startLiveDemo, type LiveDemo, type LiveDemoOptions } from './demo/live.ts';
import { createAuthServices, type AuthServices } from './edge/auth/auth.ts';
import type { Checkpointer } from './engine/checkpointer.ts';
import type { EngineSurface } from './engine/engine.ts';
import { SampleLog, openEngine, openRole, prepareStore, startFollowing, type RoleParts } from './roles.ts';
import type { Follower } from './replication/follower.ts';
import type { Publisher } from './replication/publisher.ts';
import type { SnapshotShipper } from './replication/snapshot-shipper.ts';
import { Projector, ViewStore, ViewWrites, type ViewWritesOptions } from './projections/projector.ts';
import { buildProjections } from './projections/registry.ts';
import { CommittedBooks } from './projections/committed-books.ts';
import { LIFECYCLE_TOPIC, StreamFeed, bookMessage, customTopic, marketTopic, userTopic } from './projections/stream-feed.ts';
import { StreamChannels, type ChannelDeps } from './edge/ws/channels.ts';
import { MarketDataStore, MidpointSampler } from './projections/market-data.ts';
import { MarketDataReader, type BookSource } from './queries/market-data.ts';
import { RewardsReader } from './queries/rewards.ts';
import { RewardsSampler } from './projections/rewards.ts';
import { bookMidpoint, rewardProgram } from './domain/rewards.ts';
import { Heartbeats } from './edge/trading/heartbeats.ts';
import type { AppContext, CatalogServices, EngineAdmin } from './edge/context.ts';
import { Metrics } from './edge/pipeline/metrics.ts';
import { buildOpenApi } from './edge/pipeline/openapi.ts';
import { RateLimiter } from './edge/limits/rate-limit.ts';
import { ReplayGuard } from './edge/pipeline/replays.ts';
import type { RefusalDeps } from './edge/pipeline/pipeline.ts';
import { RefusalLog } from './edge/refusals/log.ts';
import { BodyBudget, DEFAULT_BODY_BYTES } from './edge/limits/rate-limit-bytes.ts';
import { HmacStrikes } from './edge/limits/hmac-strikes.ts';
import { KEYLESS_PER_WALLET, KEYLESS_WALLETS, WalletRefusals } from './edge/refusals/wallets.ts';
import { headerValue } from './edge/refusals/reason.ts';
import { platformOrderDomain } from './edge/refusals/known-domains.ts';
import type { OrderDomains } from './edge/auth/eip712.ts';
import { pendingAnswerBytes } from './edge/http/http.ts';
import { buildRoutes } from './edge/routes.ts';
import { resolveInCatalog } from './edge/routes/admin.ts';
import { Sandbox } from './edge/sandbox/sandbox.ts';
import { openTestControls, type TestControls } from './edge/sandbox/test-controls.ts';
import { restoreTestClock } from './edge/sandbox/test-clock.ts';
import { startServer, type EdgeServer } from './edge/server.ts';
import type { SnapshotControl } from './edge/sandbox/snapshots.ts';
import { SnapshotHost } from './revert.ts';
import { forwardedHandler, gateway } from './edge/cluster/forward.ts';
import { testControlsOn, type Config } from './runtime/config.ts';
import { TestClock, nowSeconds, systemClock, systemTimers, type Clock, type Timers } from './runtime/clock.ts';
import { createLogger, type Logger } from './runtime/log.ts';

export const VERSION = '0.1.0';
/**
 * ROLE=gateway: how long a request naming a key the gateway does not hold waits for it to apply the stream as
 * it stands, before the gateway leaves the request to the sequencer (edge/forward.ts). A healthy gateway is
 * milliseconds behind; this bounds what a lagging one adds to a fresh key's first request.
 */
const KEY_CATCH_UP_MS = 1000;

export interface App {
  readonly ctx: AppContext;
  readonly server: EdgeServer;
  readonly port: number;
  /** The demo traders (`demo: "live"`). */
  readonly demo?: LiveDemo;
  /** ROLE=sequencer: its publisher and snapshot shipper; ROLE=replica: its follower (tests, /metrics). */
  readonly replication: { publisher?: Publisher; follower?: Follower; shipper?: SnapshotShipper };
  /** The node's checkpoints (engine/checkpointer.ts): write one under a name, list, export; retention. */
  readonly checkpointer?: Checkpointer;
  /** Ordered stop: close the listen socket, let in-flight requests finish, then close what start-up opened, newest first (LMDB last). */
  stop(graceMs?: number): Promise<void>;
  /**
   * A sequencer that lost its lease (failover.ts): from now on its writes answer 503 with Retry-After, it
   * publishes nothing more, takes no gateway command, and what waits for the stream's confirmation is
   * refused (never acknowledged). Its reads go on until it stops.
   */
  fence(why: string): void;
  /**
   * The sandbox's snapshots (src/revert.ts): issues the view writes held and waits for their commit, so the
   * store holds every read; answers each book's instant of last change and the journal seq they stand at.
   */
  quiesce(): Promise<{ seq: number; times: Array<[string, number]> }>;
  /** The sandbox's revert (src/revert.ts): closes what start-up opened, as stop() does, except the listener; sockets get 1012 "service restart". */
  suspend(): Promise<void>;
}

/** The start-up steps, in order; each has opened (and registered for closing) what it names. */
export const START_STEPS = ['store', 'auth', 'view-writes', 'engine', 'projections', 'catalog', 'signatures', 'demo', 'routes', 'listen'] as const;
export type StartStep = (typeof START_STEPS)[number];

export interface AppOptions {
  /**
   * The base clock: the machine's time (rate limits, socket idle times) and, unless the sandbox's test clock
   * runs over it (config sandbox.testControls), the exchange's. A ManualClock in tests. Default: the system's.
   */
  clock?: Clock;
  /** Timers on `clock` (the engine's trade lifecycle, the heartbeats): a ManualClock's in tests. Default: the system's. */
  timers?: Timers;
  log?: Logger;
  /** Use this store instead of opening config.dataDir (tests that inject faults). The app closes it like its own. */
  store?: Store;
  /** Delay and bound of the deferred view writes (tests); defaults in projections/projector.ts. */
  viewWrites?: ViewWritesOptions;
  /** Use this rate limiter instead of one built from config.rateLimits (test/edge/routes/ records what each request charges). */
  limiter?: RateLimiter;
  /** The live demo's seed, rate and replay size (tests, embedding); defaults in demo/live.ts. */
  demo?: Partial<LiveDemoOptions>;
  /**
   * Test seam: awaited after each start-up step, once what the step opened is registered for closing. A
   * throw fails the start at that point, as a real failure of the next step would (test/app.test.ts).
   */
  afterStep?: (step: StartStep) => void | Promise<void>;
  /** ROLE=sequencer under a lease (cluster.failover): the lease's term, which this sequencer's records carry. */
  term?: number;
  /** Under a lease: the URL of its holder as last read, named by a replica's 421 (else cluster.sequencerUrl). */
  leaseHolderUrl?: () => string | undefined;
  /** Under a lease: its holder's term as last read, whose command subject a gateway sends to. */
  leaseTerm?: () => number | undefined;
  /** Under a lease: forged lease values this node has read (replication/lease.ts), on /metrics `pm_lease_forged`. */
  leaseForged?: () => number;
  /** A sandbox revert (src/revert.ts): serve behind this listener, rebound to the new routes, instead of opening one. */
  listener?: EdgeServer;
  /** The sandbox's named snapshots (src/revert.ts), for the test controls' routes. */
  snapshots?: SnapshotControl;
  /** A sandbox revert: each book's instant of last change in the snapshot (else a start's books carry the start's time). */
  bookTimes?: ReadonlyMap<string, number>;
}

/**
 * What start-up has opened, closed newest first: on a failed start and by stop(), so the two cannot drift.
 * Each closer runs once; one that throws is logged and the rest still run (the store is always closed),
 * and closeAll() then rejects with the first failure.
 */
class Closers {
  private readonly stack: { what: string; close: () => unknown }[] = [];
  constructor(private readonly log: Logger) {}

  add(what: string, close: () => unknown): void {
    this.stack.push({ what, close });
  }

  /** Closes all, newest first; the one named `skip` is dropped unrun (a revert keeps the listener). */
  async closeAll(skip?: string): Promise<void> {
    const failures: unknown[] = [];
    for (let c = this.stack.pop(); c !== undefined; c = this.stack.pop()) {
      if (c.what === skip) continue;
      try {
        await c.close();
      } catch (err) {
        this.log.error({ err, closing: c.what }, 'close failed');
        failures.push(err);
      }
    }
    if (failures.length > 0) throw failures[0];
  }
}

export async function startApp(config: Readonly<Config>, opts: AppOptions = {}): Promise<App> {
  const log = opts.log ?? createLogger(config.log.level);
  // Named snapshots and revert (src/revert.ts) where the test controls run on a node of its own: each
  // revert opens the app again through the same steps, behind the same listener and rate limits.
  if (testControlsOn(config) && config.cluster.role === 'single' && opts.store === undefined) {
    const limiter = opts.limiter ?? new RateLimiter(config.rateLimits);
    const host = await SnapshotHost.start(config, log, (hooks) => openOnce(config, { ...opts, ...hooks, limiter }, log));
    return revertible(host);
  }
  return openOnce(config, opts, log);
}

/** The app over a snapshot host: every member reads the generation running now. */
function revertible(host: SnapshotHost<App>): App {
  return {
    get ctx() {
      return host.current.ctx;
    },
    get server() {
      return host.current.server;
    },
    get port() {
      return host.current.port;
    },
    get demo() {
      return host.current.demo;
    },
    get replication() {
      return host.current.replication;
    },
    get checkpointer() {
      return host.current.checkpointer;
    },
    stop: (graceMs?: number) => host.stop(graceMs),
    fence: (why: string) => host.current.fence(why),
    quiesce: () => host.current.quiesce(),
    suspend: () => host.current.suspend(),
  };
}

/** One opening of the app: every start-up step, each resource registered for closing as it opens. */
async function openOnce(config: Readonly<Config>, opts: AppOptions, log: Logger): Promise<App> {
  const closers = new Closers(log);
  try {
    return await openApp(config, opts, log, closers);
  } catch (e) {
    // Worker threads and timers left running would keep a process alive that failed to start, and an open
    // store would hold its environment. The start's own error is the one to report; closers log theirs.
    await closers.closeAll().catch(() => undefined);
    throw e;
  }
}

/** The start-up steps in dependency order; every resource registers its closer as soon as it is open. */
async function openApp(config: Readonly<Config>, opts: AppOptions, log: Logger, closers: Closers): Promise<App> {
  const engineRole = config.cluster.role === 'single' || config.cluster.role === 'sequencer';
  // Two clocks. The base clock is the machine's: how fast clients talk (rate limits, socket idle times)
  // and how stale a signature may be. The exchange's clock times every rule (journal times, GTD expiry,
  // settlement, heartbeats, samples, GET /time): the base clock itself, or the sandbox's test clock over it,
  // which an admin may freeze and advance (edge/sandbox/test-clock.ts).
  const base = opts.clock ?? systemClock;
  const baseTimers = opts.timers ?? systemTimers;
  const testClock = testControlsOn(config) && engineRole ? new TestClock(base, baseTimers) : undefined;
  const exchange: Clock = testClock ?? base;
  const timers = testClock?.timers ?? baseTimers;
  // The living demo replays its history under this clock before it follows the exchange's (demo/live.ts).
  const replayClock = config.demo === 'live' && engineRole ? new ReplayClock(exchange) : undefined;
  const clock = replayClock ?? exchange;
  const done = async (step: StartStep) => opts.afterStep?.(step);
  const metrics = new Metrics();

  if (opts.store === undefined) await prepareStore(config, log, metrics);
  const raw = opts.store ?? openStore({ dataDir: config.dataDir });
  closers.add('store', () => raw.close());
  const role = await openRole(raw, config, log, metrics, { term: opts.term, leaseTerm: opts.leaseTerm });
  const leaseForged = opts.leaseForged;
  if (leaseForged !== undefined) metrics.watch('pm_lease', () => ({ forged: leaseForged() }), { forged: 'Sequencer lease values read that no node wrote (forged; nobody\'s lease), since start' });
  const forwarder = role.gateway;
  if (forwarder !== undefined) closers.add('gateway', () => forwarder.close());
  const store = role.sequencer?.store ?? raw;
  // The test clock stands where the last process left it (time never goes back across a restart).
  if (testClock !== undefined) restoreTestClock(store, testClock);
  await done('store');
  // E.g. a master key that did not issue the stored API keys throws here.
  const auth = createAuthServices({ config, store, clock, wallClock: testClock && base, log });
  closers.add('auth', () => auth.close());
  warnOfPlatformDomains(auth.orderDomains, log);
  // Signed requests already answered, for their window (edge/replays.ts); durable ones live in the store.
  // A request fresh by either clock (auth.ts) is remembered until both have passed its window.
  const replays = new ReplayGuard(store.replays, testClock === undefined ? () => nowSeconds(clock) : () => Math.min(nowSeconds(clock), nowSeconds(base)), log);
  closers.add('replays', () => replays.close());
  await done('auth');
  // Every view write (projections, midpoint samples) and the projection cursors go out together, coalesced
  // (projections/projector.ts). Opened before the engine so that it closes after it: the engine's last
  // commits reach the projector while it closes, and their view writes go out after.
  const viewWrites = new ViewWrites(log, opts.viewWrites);
  closers.add('view writes', () => viewWrites.close());
  await done('view-writes');
  const engineTime = testClock && {
    shardTime: { frozen: testClock.frozen, offsetMs: testClock.state().offsetMs, atMs: testClock.now() },
    // While an advance holds the clock frozen, GTD orders the shards expire are journaled at their second.
    onExpiry: (sec: number) => testClock.hold(sec * 1000),
  };
  const engine = await openEngine({ config, opts: { timers, ...engineTime }, store, clock, log, metrics, closers, role, keys: auth.keys, viewWrites });
  // Maintenance windows, closed-only wallets, the fault scenario of sandbox.faultsFile (a bad file fails the start).
  const sandbox = new Sandbox({ config, store, clock, log, metrics, engine });
  // The first listener of each commit: when it became durable, for the streams' commit-to-publish metric.
  const committed = { at: 0 };
  engine.onCommitted(() => (committed.at = performance.now()));
  await done('engine');

  const { views, prices, marketDataStore } = openProjections({ store, engine, viewWrites, log });
  // A sequencer logs its samplers' writes for its replicas in the flush that issues the samples themselves.
  const samples = role.sequencer && new SampleLog(role.sequencer.log, viewWrites);
  const { books, catalog, marketData } = openBooks({ store, engine, clock, timers, marketDataStore, log, closers, role, samples, times: opts.bookTimes });
  watchMetrics(metrics, engine, auth, replays);
  // A replica applies the stream once every read model listens to its engine.
  startFollowing(role, closers);
  await done('projections');

  if (role.replica === undefined) {
    await startCatalog({ catalog, engine, store, config, clock, log, history: replayClock && { clock: replayClock, ms: opts.demo?.replayMs ?? LIVE_DEMO_DEFAULTS.replayMs } });
  }
  await done('catalog');
  // Listen only once the signature threads have loaded: the first orders would otherwise wait for them.
  await auth.pool.ready;
  await done('signatures');
  // The demo traders sign and place through the signature pool and the engine, so they start after both;
  // a fresh store gets its week of history here, before the listener opens.
  let demo: LiveDemo | undefined;
  if (replayClock && role.engine !== undefined) {
    demo = await startLiveDemo({ engine: role.engine, sandbox, auth, catalog: catalog.read, clock: replayClock, log }, opts.demo);
    closers.add('demo traders', () => demo!.stop());
  }
  await done('demo');

  // Liquidity rewards are scored where orders rest, by the engine's process; a replica gets the accruals.
  if (role.replica === undefined) startRewards({ config, views, catalog, engine, clock, timers, log, closers, samples });
  // Restored heartbeats get their full timeout from here, once nothing but the listener is left to open.
  const heartbeats = new Heartbeats({ store, engine, log, timers, timeoutSeconds: config.heartbeats.timeoutSeconds });
  // The admin API's controls for a bot's test suite (sandbox.testControls): the test clock, ...
  const controls: TestControls | undefined = testClock && role.engine !== undefined ? openTestControls({
          clock: testClock,
          engine: role.engine,
          store,
          log,
          domains: auth.orderDomains,
          catalog,
          resolve: (conditionId, winner) => resolveInCatalog({ catalog, engine }, conditionId, winner),
          snapshots: opts.snapshots,
        }) : undefined;
  closers.add('heartbeats', () => heartbeats.close());

  // A key holder's refusals, and apart from them those of wallets without a key yet (a failing login's,
  // read from the client address that was refused: edge/refusals/wallets.ts).
  const hasKey = (w: string) => (['trading', 'readonly', 'builder'] as const).some((k) => auth.keys.records(w, k).length > 0);
  const refusals = new WalletRefusals(hasKey, new RefusalLog(hasKey), new RefusalLog(() => true, KEYLESS_PER_WALLET, KEYLESS_WALLETS));
  const ctx: AppContext = Object.freeze({
    config,
    store,
    engine,
    views,
    prices,
    log,
    clock,
    metrics,
    state: { ready: false },
    // The document describes the route table built from this context, so the context reads it lazily.
    openapi: () => openapi,
    auth,
    refusals,
    catalog,
    marketData,
    livePrices: livePricesOf(books),
    sandbox,
    heartbeats,
    rewards: new RewardsReader(views, catalog.read, () => clock.now()),
    controls,
  });
  const limiter = opts.limiter ?? new RateLimiter(config.rateLimits);
  // Sockets are timed by the machine's clock: a stall or a drop is real time a bot waits through.
  const streamFaults = { source: sandbox.faults, timers: baseTimers };
  const stream = openStream({ config, books, engine, catalog, keys: auth.keys, funders: auth.funders, userAuthRefusal: userAuthRefusal(auth, refusals, metrics), limiter, metrics, clock: base, log, committed, store, faults: streamFaults });
  const routes = buildRoutes(ctx);
  const openapi = buildOpenApi(routes, VERSION);
  await done('routes');

  auth.setRoutePaths(routes);
  const explained: RefusalDeps | undefined = auth.explainer && { auth: auth.explainer, log: refusals, count: (c) => metrics.refused(c), inBody: config.auth.reasonInBody };
  const deposed: { why?: string } = {};
  const sequencerUrl = () => opts.leaseHolderUrl?.() || config.cluster.sequencerUrl;
  const { server, drain } = await listen({ config, routes, limiter, metrics, log, clock: base, auth, replays, refusals: explained, sockets: stream, role, closers, deposed, sequencerUrl, listener: opts.listener });
  // ROLE=sequencer: what gateways forward runs through the same routes (edge/forward.ts). Closed before the
  // server drains, after answering what it holds.
  const commands = role.sequencer === undefined ? undefined : role.cluster!.serveCommands(config, log, metrics, forwardedHandler(server.dispatch), opts.term);
  if (commands !== undefined) closers.add('commands', () => commands.close());
  await done('listen');
  log.info({ uws: server.build, role: config.cluster.role }, 'uWebSockets.js build');
  ctx.state.ready = true;

  let stopping: Promise<void> | undefined;
  return {
    ctx,
    server,
    port: server.port,
    demo,
    replication: { publisher: role.sequencer?.publisher, follower: role.replica?.follower, shipper: role.shipper },
    checkpointer: role.checkpointer,
    fence(why: string) {
      if (deposed.why !== undefined) return;
      deposed.why = why;
      role.sequencer?.publisher.fence(why);
      void commands?.close();
    },
    stop(graceMs = config.shutdown.graceMs) {
      stopping ??= (async () => {
        ctx.state.ready = false;
        await drain(graceMs);
        await closers.closeAll();
      })();
      return stopping;
    },
    async quiesce() {
      const seq = books.seq;
      const times = books.times();
      viewWrites.flush();
      await store.root.flushed;
      return { seq, times };
    },
    suspend() {
      stopping ??= (async () => {
        ctx.state.ready = false;
        stream.close(true);
        role.checkpointer?.discard();
        await closers.closeAll('server');
      })();
      return stopping;
    },
  };
}

/**
 * The user channel's refused credentials explained (edge/refusals/auth.ts), counted and kept for the key's
 * wallet as the HTTP refusals are (pipeline.ts); absent under `auth.explainRefusals: false`.
 */
function userAuthRefusal(auth: AuthServices, log: WalletRefusals, metrics: Metrics): ChannelDeps['refusals'] {
  const explainer = auth.explainer;
  if (explainer === undefined) return undefined;
  return {
    userAuth(credentials) {
      const r = explainer.userChannel(credentials);
      metrics.refused(r.class);
      const wallet = explainer.walletOf({ poly_api_key: credentials.apiKey });
      const kept = r.owner ?? r;
      if (wallet !== undefined) log.record(wallet, { at: Date.now(), method: 'WS', path: '/ws/user', headers: [], class: kept.class, reason: headerValue(kept.text) });
      return r;
    },
  };
}

/**
 * An order domain that is one of the platform's real exchanges (config/platform-domains.json, or the compat
 * profile's test chain) makes every order signed for this service valid there too: said at every start.
 */
function warnOfPlatformDomains(domains: OrderDomains, log: Logger): void {
  const real = [domains.normal, domains.negRisk].map(platformOrderDomain).filter((k) => k !== undefined);
  if (real.length === 0) return;
  log.warn(
    { exchanges: real.map((k) => k.label) },
    `orders signed for this service are valid on the platform's real exchange (${real[0]!.label}): trade here only with keys that hold nothing`,
  );
}

/**
 * The HTTP and WebSocket listener. Its closer drains it: sockets first (they get 1001 and a reason before
 * the listener closes and the app cuts what is left), then the requests in flight.
 */
async function listen(o: {
  config: Readonly<Config>;
  routes: ReturnType<typeof buildRoutes>;
  limiter: RateLimiter;
  metrics: Metrics;
  log: Logger;
  clock: Clock;
  auth: AuthServices;
  replays: ReplayGuard;
  refusals: RefusalDeps | undefined;
  sockets: { mount: StreamChannels['mount']; close(): void };
  role: RoleParts;
  closers: Closers;
  deposed: { why?: string };
  sequencerUrl: () => string;
  listener: EdgeServer | undefined;
}): Promise<{ server: EdgeServer; drain: (graceMs: number) => Promise<void> }> {
  const { config, log, role } = o;
  const edge: Parameters<typeof startServer>[0] = {
    routes: o.routes,
    host: config.http.host,
    port: config.http.port,
    maxBodyBytes: config.http.maxBodyBytes,
    maxHeaderBytes: config.http.maxHeaderBytes,
    trustedProxies: config.http.trustedProxies,
    adminToken: config.adminToken,
    limiter: o.limiter,
    metrics: o.metrics,
    log,
    clock: o.clock,
    auth: o.auth.authenticator,
    replays: o.replays,
    refusals: o.refusals,
    sockets: o.sockets.mount,
    replica: role.replica === undefined ? undefined : { sequencerUrl: o.sequencerUrl },
    deposed: role.sequencer === undefined ? undefined : () => o.deposed.why,
    gateway:
      role.gateway === undefined
        ? undefined
        : gateway(
            (r) => role.gateway!.forward(r),
            (r) => role.cluster!.requestBytes(r) <= role.gateway!.maxRequestBytes(),
            () => role.replica!.follower.caughtUp(Math.min(config.cluster.forwardTimeoutMs, KEY_CATCH_UP_MS)),
          ),
    journalSeq: role.journalSeq,
    writeSeq: role.writeSeq,
    bodies: new BodyBudget({ enabled: config.rateLimits.enabled, maxCallers: config.rateLimits.maxCallers, ...DEFAULT_BODY_BYTES, ...config.rateLimits.bodyBytes }),
    strikes: new HmacStrikes(),
  };
  // After a revert the listener stays: the new routes are served behind it (src/revert.ts).
  const server = o.listener ?? (await startServer(edge));
  if (o.listener !== undefined) o.listener.rebind(edge);
  // stop() drains with its own grace period; a failed start closes with the configured one.
  let draining: Promise<void> | undefined;
  const drain = (graceMs: number) =>
    (draining ??= (o.sockets.close(), server.close(graceMs)).then((drained) => {
      if (!drained) log.warn({ inFlight: server.inFlight.size }, 'shutdown grace period ended with requests in flight');
    }));
  // A borrowed listener (a revert's) outlives a failed start: the revert starts again behind it.
  o.closers.add('server', () => (o.listener === undefined ? drain(config.shutdown.graceMs) : o.sockets.close()));
  return { server, drain };
}

/**
 * The books as committed: GET /book, the quotes and the streams read this one state (docs/decisions/streaming.md,
 * "Streaming"), so a client applying the stream's deltas lands on what /book serves. With them the catalog
 * and market data, which read each other's prices and outcomes.
 */
function openBooks(o: {
  store: Store;
  engine: EngineSurface;
  clock: Clock;
  timers: Timers;
  marketDataStore: MarketDataStore;
  log: Logger;
  closers: Closers;
  role: RoleParts;
  samples: SampleLog | undefined;
  times: ReadonlyMap<string, number> | undefined;
}) {
  const { store, engine, clock, marketDataStore, role } = o;
  const books = new CommittedBooks();
  books.seed({ ...engine.bookSeed(), ts: clock.now(), times: o.times });
  engine.onCommitted((events) => books.apply(events));
  const catalog: CatalogServices = Object.freeze({
    // The catalog's live prices come from market data (the midpoint, or the last trade when the spread is
    // wider than 0.10), and market data labels outcomes from the catalog: each asks the other only when
    // serving, so the two consts refer to each other through functions that run once both exist.
    read: new CatalogReader(store, (tokenId) => marketData.displayPrice(tokenId)),
    write: new CatalogWriter(store, clock),
  });
  const bookSource: BookSource = {
    bookSnapshot: (tokenId) => books.book(tokenId),
    lastTradePrice: (tokenId) => books.lastTrade(tokenId),
    tokenOutcome: (tokenId) => engine.tokenOutcome(tokenId),
    market: (conditionId) => engine.market(conditionId),
    // Committed state is current by construction: an acknowledged order was applied before its answer left.
    snapshotStale: () => false,
    // Asked only for a token the engine knows and these books do not: its market is registered and its
    // `market` event not yet committed (a reader that heard of it before its import was answered). The read
    // waits for that commit, after which the books hold the market, rather than answering 503; an engine
    // that stopped resolves at once, and the read answers 503.
    refreshSnapshot: () => engine.afterCommit().then(() => undefined),
  };
  const marketData = new MarketDataReader(bookSource, marketDataStore, (conditionId) => catalog.read.marketByCondition(conditionId)?.outcomes);
  // Records midpoints as books change (projections/market-data.ts); trade prices come from the projector.
  // A replica samples nothing: a sample's time is when the sequencer took it, which its log carries.
  if (role.replica === undefined) {
    // A change is dated by its batch's journal time: when it happened, whenever its commit landed.
    const bookChanges = {
      onSnapshots: (l: (tokenIds: readonly string[], atMs?: number) => void) =>
        books.onApplied((changes, events) => changes.length > 0 && l(changes.flatMap((c) => c.tokenIds), events.at(-1)?.ts)),
    };
    const samples = o.samples;
    const onSample = samples && ((key: (string | number)[], pips: number) => samples.hold('m', key, pips));
    const sampler = new MidpointSampler({ feed: bookChanges, md: marketDataStore, midpoint: (t) => marketData.midpointPips(t), now: () => clock.now(), timers: o.timers, log: o.log, onSample });
    sampler.start();
    o.closers.add('midpoint sampler', () => sampler.stop());
  }
  return { books, catalog, marketData };
}

/** The committed books as wallet data's live prices (AppContext.livePrices). */
function livePricesOf(books: CommittedBooks): AppContext['livePrices'] {
  return {
    bookSnapshot: (tokenId: string) => books.book(tokenId),
    lastTradePrice: (tokenId: string) => books.lastTrade(tokenId),
    onChanged: (listener: (tokenIds: readonly string[]) => void) =>
      books.onApplied((changes, events) => {
        const tokens = changes.flatMap((c) => c.tokenIds);
        for (const e of events) if (e.type === 'fill') tokens.push(e.takerTokenId, e.makerTokenId);
        if (tokens.length > 0) listener(tokens);
      }),
  };
}

function watchMetrics(metrics: Metrics, engine: EngineSurface, auth: AuthServices, replays: ReplayGuard): void {
  metrics.watchEngine(() => engine.stats());
  metrics.watchSignaturePool(() => auth.pool);
  metrics.watch('replay', () => replays.stats(), {
    entries: 'Signed requests remembered in memory for their window (edge/replays.ts)',
    bytes: 'Bytes those entries hold (bounded by MAX_REPLAY_BYTES)',
    replays: 'Replays answered with the first answer since start',
    evicted: 'Entries forgotten before their window closed because memory was full, since start',
  });
  metrics.watch('http', () => ({ pendingAnswerBytes: pendingAnswerBytes() }), {
    pendingAnswerBytes: 'Answer bytes waiting for clients that read slowly (bounded by MAX_PENDING_BYTES, edge/http.ts)',
  });
}

/** Liquidity rewards: the sampler scores the open orders of the rewards markets every rewards.sampleSeconds. */
function startRewards(o: {
  config: Readonly<Config>;
  views: ViewStore;
  catalog: CatalogServices;
  engine: EngineSurface;
  clock: Clock;
  timers: Timers;
  log: Logger;
  closers: Closers;
  samples: SampleLog | undefined;
}): void {
  const { catalog, engine, clock, views, samples } = o;
  // Accruals are sampled on the clock, not derived from the journal: a sequencer logs them for its replicas.
  const logged: Pick<ViewStore, 'get' | 'put'> = {
    get: (key) => views.get(key),
    put: (key, value) => {
      views.put(key, value);
      samples?.hold('v', key, value);
    },
  };
  const rewardsSampler = new RewardsSampler({
    views: samples === undefined ? views : logged,
    markets: () =>
      catalog.read.samplingRecords().flatMap((m) => {
        const program = rewardProgram(m);
        return program === undefined ? [] : [{ conditionId: m.conditionId, token0: m.clobTokenIds[0], program }];
      }),
    // The midpoint of the very orders it scores: one state, even while the test clock advances ahead of commits.
    midpoint: (_token0, orders) => bookMidpoint(orders),
    orders: (cids) => engine.restingOrders(cids),
    now: () => clock.now(),
    timers: o.timers,
    sampleSeconds: o.config.rewards.sampleSeconds,
    log: o.log,
  });
  rewardsSampler.start();
  o.closers.add('rewards sampler', () => rewardsSampler.stop());
}

/**
 * The read models: projections catch up with whatever the journal holds beyond their cursors, then follow
 * every later commit.
 */
function openProjections(o: { store: Store; engine: EngineSurface; viewWrites: ViewWrites; log: Logger }) {
  const { store, engine, viewWrites, log } = o;
  const views = new ViewStore(store.views, viewWrites);
  const prices = new ViewStore(store.prices, viewWrites);
  const marketDataStore = new MarketDataStore(store, viewWrites);
  const projector = new Projector(store, buildProjections({ store, views, prices, marketData: marketDataStore }), log, viewWrites);
  projector.catchUp();
  engine.onCommitted(projector.onCommitted);
  return { views, prices, marketDataStore };
}

/**
 * The streaming channels: the feed turns each batch the committed books applied into frames, one per topic
 * that has subscribers, and the channels publish them on the edge's app (mounted by startServer).
 */
function openStream(o: {
  config: Readonly<Config>;
  books: CommittedBooks;
  engine: EngineSurface;
  catalog: CatalogServices;
  keys: AuthServices['keys'];
  funders: AuthServices['funders'];
  userAuthRefusal: ChannelDeps['refusals'];
  limiter: RateLimiter;
  metrics: Metrics;
  clock: Clock;
  log: Logger;
  committed: { at: number };
  store: Store;
  faults: ChannelDeps['faults'];
}): { mount: StreamChannels['mount']; close(restart?: boolean): void } {
  const { books, catalog } = o;
  const metrics = o.metrics.stream();
  const channels = new StreamChannels({
    limits: o.config.stream,
    books: {
      token: (tokenId) => {
        const t = books.tokenOf(tokenId);
        return t?.tokenIds[t.outcome];
      },
      // One string per book version for every reader (bookMessage caches it on the version's body).
      bookEvent: (tokenId) => {
        const b = books.book(tokenId);
        return b === undefined ? undefined : bookMessage(b);
      },
    },
    // The catalog's markets as the engine registered them (every catalog market is, at start and on each
    // change; a replica's engine has the journal's): a Map look-up, where the catalog's own look-up reads
    // LMDB (2.4 µs for an unknown id, 15 µs for a known one), and a message may name 1,000 ids.
    markets: { conditionId: (conditionId) => o.engine.market(conditionId)?.conditionId },
    topics: { market: marketTopic, custom: customTopic, lifecycle: LIFECYCLE_TOPIC, user: userTopic },
    keys: o.keys,
    funders: o.funders,
    refusals: o.userAuthRefusal,
    limiter: o.limiter,
    trustedProxies: o.config.http.trustedProxies,
    clock: o.clock,
    metrics,
    log: o.log,
    faults: o.faults,
  });
  const feed = new StreamFeed({
    books,
    sink: channels.sink,
    order: (orderId) => o.engine.getOrder(orderId),
    fill: (seq) => readFill(o.store.fills, seq),
    outcomes: (conditionId) => catalog.read.marketByCondition(conditionId)?.outcomes,
    published: () => metrics.published((performance.now() - o.committed.at) / 1000),
    bookIntervalMs: o.config.stream.bookIntervalMs,
    marketInfo: (conditionId) => {
      const m = catalog.read.marketByCondition(conditionId);
      if (m === undefined) return undefined;
      const ev = catalog.read.event(m.eventId);
      return {
        id: m.id,
        question: m.question,
        slug: m.slug,
        description: m.description,
        outcomes: m.outcomes,
        event: { id: ev?.id ?? '', ticker: ev?.ticker ?? '', slug: ev?.slug ?? '', title: ev?.title ?? '', description: ev?.description ?? '' },
      };
    },
  });
  books.onApplied(feed.onApplied);
  o.keys.onRevoked((apiKey) => channels.revoked(apiKey));
  return {
    mount: channels.mount,
    close: (restart?: boolean) => {
      feed.close();
      channels.close(restart);
    },
  };
}

/**
 * Connects the catalog to the engine's market registry and loads the demo catalog into an empty store:
 * every stored market is registered, and every later change is passed on as it commits. A catalog write
 * resolves only once the engine has committed the `market` events it caused (projections/catalog/writer.ts),
 * and the committed books have applied them by then: an admin write is answered, like an order, after the
 * commit of what it changed, so the market's book (empty if nothing rests) is there for the first read that
 * follows on /book and the market channel, with its new tick. The start-up registrations are committed
 * before the listener opens, for the same reason. With `history`
 * (the live demo), a fresh store's clock is held `history.ms` back first, so the catalog and the demo
 * funding date from where the replayed history starts; the catalog's own dates stay based on today.
 */
async function startCatalog(o: {
  catalog: CatalogServices;
  engine: EngineAdmin & Pick<EngineSurface, 'afterCommit'>;
  store: Store;
  config: Readonly<Config>;
  clock: Clock;
  log: Logger;
  history?: { clock: ReplayClock; ms: number };
}): Promise<void> {
  const { catalog, engine, store, config, clock, log, history } = o;
  const register = (markets: ReturnType<CatalogReader['tradingMarkets']>) => {
    for (const m of markets) {
      try {
        engine.registerMarket(m);
      } catch (err) {
        log.error({ err, conditionId: m.conditionId }, 'engine refused a catalog market');
      }
    }
    // Resolves once what these registrations journaled is durable; with nothing new, once a registration
    // of the same parameters still in flight is. An engine that stopped resolves at once: its reads answer
    // 503 anyway.
    return engine.afterCommit();
  };
  await register(catalog.read.tradingMarkets());
  catalog.write.onMarketsChanged(register);
  if (config.demo !== 'off' && catalog.read.isEmpty() && store.meta.get(metaKeys.demoLoaded) === undefined) {
    const today = clock.now();
    history?.clock.hold(today - history.ms);
    const { summary, funded } = await loadDemo(catalog.write, engine, today);
    await store.meta.put(metaKeys.demoLoaded, new Date(clock.now()).toISOString());
    log.info({ events: summary.events.created, markets: summary.markets.created, fundedWallets: funded }, 'demo catalog loaded');
  }
}
