/**
 * A node's life, from start to stop: the top of src/. This folder assembles every layer below it, and only
 * main.ts (the process) and harness/ (a node for test code) import it (tools/check-imports.ts). The roles are
 * docs/cluster.md's; their decisions are docs/decisions/scale-out.md's.
 *
 *   start   main.ts loads the configuration and calls startApp, or, under the sequencer's lease, failover.ts's
 *           startFailoverNode, which calls it for the role the lease gives. startApp runs START_STEPS in order
 *           (store, auth, view-writes, engine, projections, catalog, signatures, demo, routes, listen); each
 *           step registers what it opened on one stack (closers.ts) as soon as it is open, so a start that
 *           fails at any step closes what it opened, newest first, and throws. Tests start it in process.
 *   role    config.cluster.role decides which engine the node runs and what the cluster adds (roles.ts):
 *             single     the default: the matching engine on its own store; no NATS client is ever loaded
 *             sequencer  the engine, its committed records logged and published to the journal stream, and
 *                        the gateways' commands served (cluster.ts, loaded with the NATS clients on demand)
 *             replica    no engine of its own: a follower applies the stream to the store and a replica
 *                        engine serves the reads; a write answers 421 naming the sequencer
 *             gateway    a replica whose writes go to the sequencer as commands
 *             standby    a follower ready to take the lease and become the sequencer (failover.ts)
 *           A follower's new or lagging store is first replaced by the newest snapshot the sequencer shipped
 *           (roles.ts prepareStore).
 *   serve   the read side (read-models.ts: projections, committed books, catalog, market data, rewards)
 *           follows the engine's commits; the listener (listener.ts) opens the routes and the WebSocket
 *           channels last, once everything they read is open, and the node is ready.
 *   change  a node changes role only under the lease (cluster.failover, failover.ts): a sequencer that loses
 *           it is fenced at once (App.fence: writes 503, nothing more published) and comes back as a standby;
 *           a standby that finds the lease vacant takes it and comes back as the sequencer on the same store.
 *           A change of role is a stop and a new startApp, never a change in place.
 *   revert  a ROLE=single node with the sandbox's test controls runs under revert.ts's host: a revert to a
 *           named snapshot suspends the node (everything but the listener closes, sockets get 1012), puts
 *           the snapshot's store in place and runs startApp's steps again behind the same listener.
 *   stop    App.stop (main.ts on SIGTERM or SIGINT): no longer ready, the listener drains (sockets get 1001,
 *           requests in flight finish within the grace period), then the closers run newest first, LMDB last.
 *
 * This file is the composition root: the steps in their order and the App they build. What a step wires
 * lives beside it (read-models.ts, listener.ts), what the role adds in roles.ts and cluster.ts.
 */
import { openStore, type Store } from '../journal/env.ts';
import { LIVE_DEMO_DEFAULTS, ReplayClock, startLiveDemo, type LiveDemo, type LiveDemoOptions } from '../demo/live.ts';
import { createAuthServices, type AuthServices } from '../edge/auth/auth.ts';
import type { Checkpointer } from '../engine/checkpointer.ts';
import type { EngineSurface } from '../engine/engine.ts';
import type { KeptThreads } from './kept-threads.ts';
import type { VerifiedStore } from '../journal/recovery.ts';
import { SampleLog, openEngine, openRole, prepareStore, startFollowing } from './roles.ts';
import type { Follower } from '../replication/follower.ts';
import type { Publisher } from '../replication/publisher.ts';
import type { SnapshotShipper } from '../replication/snapshot-shipper.ts';
import type { HistoryBackfill } from '../replication/history-backfill.ts';
import { ViewWrites, type ViewWritesOptions } from '../projections/projector.ts';
import { RewardsReader } from '../queries/rewards.ts';
import { Heartbeats } from '../edge/trading/heartbeats.ts';
import type { AppContext } from '../edge/context.ts';
import { Metrics } from '../edge/pipeline/metrics.ts';
import { buildOpenApi } from '../edge/pipeline/openapi.ts';
import { RateLimiter } from '../edge/limits/rate-limit.ts';
import { ReplayGuard } from '../edge/pipeline/replays.ts';
import type { RefusalDeps } from '../edge/pipeline/ports.ts';
import { RefusalLog } from '../edge/refusals/log.ts';
import { KEYLESS_PER_WALLET, KEYLESS_WALLETS, WalletRefusals } from '../edge/refusals/wallets.ts';
import { platformOrderDomain } from '../edge/refusals/known-domains.ts';
import type { OrderDomains } from '../edge/auth/eip712.ts';
import { pendingAnswerBytes } from '../edge/http/answer.ts';
import { buildRoutes } from '../edge/routes.ts';
import { resolveInCatalog } from '../edge/routes/admin.ts';
import { Sandbox } from '../edge/sandbox/sandbox.ts';
import { openTestControls, type TestControls } from '../edge/sandbox/test-controls.ts';
import { restoreTestClock } from '../edge/sandbox/test-clock.ts';
import type { EdgeServer } from '../edge/server.ts';
import { forwardedHandler } from '../edge/cluster/forward.ts';
import { testControlsOn, type Config } from '../runtime/config.ts';
import { TestClock, nowSeconds, systemClock, systemTimers, type Clock, type Timers } from '../runtime/clock.ts';
import { createLogger, type Logger } from '../runtime/log.ts';
import { Closers } from './closers.ts';
import { SnapshotHost } from './revert.ts';
import type { SnapshotControl } from '../edge/sandbox/snapshots.ts';
import { listen, openStream, userAuthRefusal } from './listener.ts';
import { livePricesOf, openBooks, openProjections, startCatalog, startRewards } from './read-models.ts';

export const VERSION = '0.1.0';

export interface App {
  readonly ctx: AppContext;
  readonly server: EdgeServer;
  readonly port: number;
  /** The demo traders (`demo: "live"`). */
  readonly demo?: LiveDemo;
  /** ROLE=sequencer: its publisher and snapshot shipper; ROLE=replica: its follower (tests, /metrics). */
  readonly replication: { publisher?: Publisher; follower?: Follower; shipper?: SnapshotShipper; backfill?: HistoryBackfill };
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
   * The sandbox's snapshots (revert.ts): issues the view writes held and waits for their commit, so the
   * store holds every read; answers each book's instant of last change and the journal seq they stand at.
   */
  quiesce(): Promise<{ seq: number; times: Array<[string, number]> }>;
  /** The sandbox's revert (revert.ts): closes what start-up opened, as stop() does, except the listener; sockets get 1012 "service restart". */
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
   * throw fails the start at that point, as a real failure of the next step would (test/node/app.test.ts).
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
  /** A sandbox revert (revert.ts): serve behind this listener, rebound to the new routes, instead of opening one. */
  listener?: EdgeServer;
  /** The sandbox's named snapshots (revert.ts), for the test controls' routes. */
  snapshots?: SnapshotControl;
  /** A sandbox revert: each book's instant of last change in the snapshot (else a start's books carry the start's time). */
  bookTimes?: ReadonlyMap<string, number>;
  /** A revertible node (revert.ts): the matching and signature threads this opening takes over instead of starting its own. */
  threads?: KeptThreads;
  /** A sandbox revert to a snapshot opened before: the proof of its store made then (EngineOptions.proof). */
  proof?: VerifiedStore;
  /** Told the proof of the store this opening made (EngineOptions.onProof). */
  onProof?: (verified: VerifiedStore) => void;
}

export async function startApp(config: Readonly<Config>, opts: AppOptions = {}): Promise<App> {
  const log = opts.log ?? createLogger(config.log.level);
  // Named snapshots and revert (revert.ts) where the test controls run on a node of its own: each revert
  // opens the app again through the same steps, behind the same listener and rate limits.
  if (testControlsOn(config) && config.cluster.role === 'single' && opts.store === undefined) {
    const limiter = opts.limiter ?? new RateLimiter(config.rateLimits);
    const host = await SnapshotHost.start(config, log, (hooks) => openOnce(config, { ...opts, ...hooks, limiter }, log));
    return revertible(host);
  }
  return openOnce(config, opts, log);
}

/** The app over a snapshot host: every member reads the generation running now. */
function revertible(host: SnapshotHost<App>): App {
  const calls = {
    stop: (graceMs?: number) => host.stop(graceMs),
    fence: (why: string) => host.current.fence(why),
    quiesce: () => host.current.quiesce(),
    suspend: () => host.current.suspend(),
  };
  return readThrough(calls, () => host.current, ['ctx', 'server', 'port', 'demo', 'replication', 'checkpointer']);
}

/** `target` given a getter for each of `keys` that reads it from `source()` at every access: a view, not a copy. */
function readThrough<T extends object, S, K extends keyof S>(target: T, source: () => S, keys: readonly K[]): T & Pick<S, K> {
  for (const key of keys) Object.defineProperty(target, key, { enumerable: true, get: () => source()[key] });
  return target as T & Pick<S, K>;
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
  for (const [name, f] of [['gateway', role.gateway], ['history reads', role.history]] as const) if (f !== undefined) closers.add(name, () => f.close());
  const store = role.sequencer?.store ?? raw;
  // The test clock stands where the last process left it (time never goes back across a restart).
  if (testClock !== undefined) restoreTestClock(store, testClock);
  await done('store');
  // E.g. a master key that did not issue the stored API keys throws here.
  const auth = createAuthServices({ config, store, clock, wallClock: testClock && base, log, pool: opts.threads?.signatures(config, log) });
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
  const engine = await openEngine({ config, opts: { timers, ...engineTime, proof: opts.proof, onProof: opts.onProof }, store, clock, log, metrics, closers, role, keys: auth.keys, viewWrites, threads: opts.threads });
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
  // The followers' reads of history (a store with a history floor) on a subject of their own, the history
  // routes only (edge/pipeline/route.ts `history`).
  const commands =
    role.sequencer === undefined
      ? undefined
      : [
          role.cluster!.serveCommands(config, log, metrics, forwardedHandler(server.dispatch), opts.term),
          role.cluster!.serveCommands(config, log, metrics, forwardedHandler((req) => server.dispatch(req, 'history')), opts.term, 'reads'),
        ];
  if (commands !== undefined) closers.add('commands', () => Promise.all(commands.map((c) => c.close())));
  await done('listen');
  log.info({ uws: server.build, role: config.cluster.role }, 'uWebSockets.js build');
  ctx.state.ready = true;

  let stopping: Promise<void> | undefined;
  return {
    ctx,
    server,
    port: server.port,
    demo,
    replication: { publisher: role.sequencer?.publisher, follower: role.replica?.follower, shipper: role.shipper, backfill: role.backfill },
    checkpointer: role.checkpointer,
    fence(why: string) {
      if (deposed.why !== undefined) return;
      deposed.why = why;
      role.sequencer?.publisher.fence(why);
      for (const c of commands ?? []) void c.close();
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
        role.engine?.discard();
        await closers.closeAll('server');
      })();
      return stopping;
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
