/**
 * What a node opens last: the HTTP and WebSocket listener over the route table, with the channels' feed from
 * the committed books (app.ts's `routes` and `listen` steps). Owns how the listener drains on stop (sockets
 * first, then the requests in flight) and what a gateway does with a request it cannot answer itself; the
 * requests' own path is edge/'s (edge/server.ts).
 */
import type { Store } from '../journal/env.ts';
import { readFill } from '../journal/codecs/fill-codec.ts';
import type { AuthServices } from '../edge/auth/auth.ts';
import type { EngineSurface } from '../engine/engine.ts';
import type { RoleParts } from './roles.ts';
import type { CommittedBooks } from '../projections/committed-books.ts';
import { LIFECYCLE_TOPIC, StreamFeed, bookMessage, customTopic, marketTopic, userTopic } from '../projections/stream-feed.ts';
import { StreamChannels, type ChannelDeps } from '../edge/ws/channels.ts';
import type { CatalogServices } from '../edge/context.ts';
import type { Metrics } from '../edge/pipeline/metrics.ts';
import type { RateLimiter } from '../edge/limits/rate-limit.ts';
import type { ReplayGuard } from '../edge/pipeline/replays.ts';
import type { RefusalDeps } from '../edge/pipeline/ports.ts';
import { BodyBudget, DEFAULT_BODY_BYTES } from '../edge/limits/rate-limit-bytes.ts';
import { HmacStrikes } from '../edge/limits/hmac-strikes.ts';
import type { WalletRefusals } from '../edge/refusals/wallets.ts';
import { headerValue } from '../edge/refusals/reason.ts';
import { buildRoutes } from '../edge/routes.ts';
import { startServer, type EdgeServer } from '../edge/server.ts';
import type { CommandForwarder } from '../replication/commands.ts';
import { gateway } from '../edge/cluster/forward.ts';
import type { Config } from '../runtime/config.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Logger } from '../runtime/log.ts';
import type { Closers } from './closers.ts';

/**
 * ROLE=gateway: how long a request naming a key the gateway does not hold waits for it to apply the stream as
 * it stands, before the gateway leaves the request to the sequencer (edge/forward.ts). A healthy gateway is
 * milliseconds behind; this bounds what a lagging one adds to a fresh key's first request.
 */
const KEY_CATCH_UP_MS = 1000;

/**
 * The user channel's refused credentials explained (edge/refusals/auth.ts), counted and kept for the key's
 * wallet as the HTTP refusals are (pipeline.ts); absent under `auth.explainRefusals: false`.
 */
export function userAuthRefusal(auth: AuthServices, log: WalletRefusals, metrics: Metrics): ChannelDeps['refusals'] {
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
 * The HTTP and WebSocket listener. Its closer drains it: sockets first (they get 1001 and a reason before
 * the listener closes and the app cuts what is left), then the requests in flight.
 */
export async function listen(o: {
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
  // The edge's way to the sequencer through one of the role's forwarders (its writes, or its reads of history).
  const toSequencer = (f: CommandForwarder | undefined) =>
    f === undefined
      ? undefined
      : gateway(
          (r) => f.forward(r),
          (r) => role.cluster!.requestBytes(r) <= f.maxRequestBytes(),
          () => role.replica!.follower.caughtUp(Math.min(config.cluster.forwardTimeoutMs, KEY_CATCH_UP_MS)),
        );
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
    gateway: toSequencer(role.gateway),
    history: toSequencer(role.history),
    // The backfill starts with the engine, which may open after the listener: asked per request.
    historyHeld: role.history === undefined ? undefined : () => role.backfill?.held() === true,
    journalSeq: role.journalSeq,
    writeSeq: role.writeSeq,
    bodies: new BodyBudget({ enabled: config.rateLimits.enabled, maxCallers: config.rateLimits.maxCallers, ...DEFAULT_BODY_BYTES, ...config.rateLimits.bodyBytes }),
    strikes: new HmacStrikes(),
  };
  // After a revert the listener stays: the new routes are served behind it (revert.ts).
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
 * The streaming channels: the feed turns each batch the committed books applied into frames, one per topic
 * that has subscribers, and the channels publish them on the edge's app (mounted by startServer).
 */
export function openStream(o: {
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
