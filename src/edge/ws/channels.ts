/**
 * The platform's WebSocket channels on the edge's uWS app (DESIGN section 10): /ws/market and /ws/user,
 * subscriptions as uWS topics, and the bounds that keep a socket from costing more than its share.
 *
 * Delivery: projections/stream-feed.ts serializes each event once per topic and calls `sink.publish`,
 * which is uWS's app.publish: the C++ side copies the frame into every subscriber's send buffer. The
 * initial `book` dump of a subscription is the one per-socket send. Topics a socket may join:
 *   market channel  market:<token> for each asset it lists; with custom_feature_enabled also
 *                   market-custom:<token> and market-lifecycle
 *   user channel    user:<wallet> (no `markets`, or an empty list) or user:<wallet>:<cid> per market, only
 *                   ever for the wallet its credentials belong to: isolation is which topics it can join.
 *
 * Protocol: the first message subscribes (market: {assets_ids, type: "market", custom_feature_enabled?,
 * initial_dump?}; user: {auth: {apiKey, secret, passphrase}, markets?, type: "user"}); later messages are
 * {operation: "subscribe" | "unsubscribe", assets_ids | markets}; a repeated subscribe message adds. The
 * text PING is answered PONG. A message that is not valid gets {"event_type":"error","error":...} and
 * changes nothing; on the user channel a first message that is not a valid subscription, or credentials
 * that do not check, close the socket (4001) with the reason, and nothing is delivered.
 *
 * Bounds (configuration `stream`, defaults in config/default.json):
 *   - upgrades are rate-limited per client address like any route (rate-limit-buckets.ts: clob + ws-connect)
 *     and capped at maxSocketsPerAddress open sockets per address (429 past either);
 *   - maxSubscriptionsPerSocket assets (market) or markets (user); a message past it is refused whole;
 *   - incoming messages larger than maxMessageBytes close the socket (1009);
 *   - a socket's send buffer is bounded by maxBackpressureBytes: a frame that would pass it is dropped by
 *     uWS for that socket only, and the socket is then closed (4003, "slow consumer"), so a slow reader
 *     never holds memory or delays the others (publish never waits for a socket);
 *   - a socket that sends nothing (not even PING) for idleSeconds is closed (4002).
 * Churn: topics live in uWS while a socket is subscribed; per socket we keep a Set of what it joined,
 * emptied on unsubscribe and dropped at close, so subscribe/unsubscribe cycles leave nothing behind.
 *
 * Metrics (/metrics, edge/metrics.ts): open sockets and subscriptions per channel, frames and bytes sent
 * (publishes count once per receiving socket), frames dropped by backpressure, closes by reason, sockets
 * stalled by a fault.
 *
 * Stream faults (the sandbox's scenario `streams`; timers in socket-faults.ts, draws in sandbox/faults.ts):
 *   drop    the server ends the socket: abruptly (no close frame: the client sees 1006) or with 1001
 *           "going away"; counted as closes{reason="fault_drop"};
 *   stall   the socket leaves its topics and its messages are discarded unread (PING gets no PONG,
 *           subscribe messages are not acted on) while the connection stays open; at the end it rejoins the
 *           topics it had. Frames published meanwhile are lost for it, not delivered late: queueing them
 *           would cost memory per stalled socket, a late burst would hide the gap a bot must detect, and
 *           the platform's stalls (DESIGN section 11) lose events. Its client resyncs from a new `book`.
 *           Other sockets are untouched (publish skips a socket that is not on the topic).
 */
import { timingSafeEqual } from 'node:crypto';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocket, us_socket_context_t } from 'uWebSockets.js';
import { clientAddress } from '../../domain/ip.ts';
import type { Clock, Timers } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/log.ts';
import { decodeSecret, type KeyVerifier } from '../auth.ts';
import type { StreamMetrics } from '../metrics.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { bucketsFor } from '../rate-limit-buckets.ts';
import { MarketSubscribe, SubscriptionUpdate, UserSubscribe } from '../schemas/stream.ts';
import { SocketFaults, type StreamFaultSource } from './socket-faults.ts';

export interface StreamLimits {
  maxBackpressureBytes: number;
  maxMessageBytes: number;
  idleSeconds: number;
  maxSocketsPerAddress: number;
  maxSubscriptionsPerSocket: number;
}

/** What the channels read of the books: whether a token exists, and the `book` event of its committed state. */
export interface BookReader {
  bookEvent(tokenId: string): string | undefined;
}

/** Topic names (projections/stream-feed.ts owns them; the edge receives them so it need not import projections). */
export interface Topics {
  market(tokenId: string): string;
  custom(tokenId: string): string;
  lifecycle: string;
  user(wallet: string, conditionId?: string): string;
}

export interface ChannelDeps {
  limits: StreamLimits;
  books: BookReader;
  topics: Topics;
  /** The API-key service's hot-path look-up (edge/auth.ts ApiKeyService.verifier). */
  keys: { verifier(apiKey: string): KeyVerifier | undefined };
  limiter: RateLimiter;
  trustedProxies: readonly string[];
  clock: Clock;
  metrics: StreamMetrics;
  log: Logger;
  /** The sandbox's stream faults (none without), and the timers they run on. */
  faults?: { source: StreamFaultSource; timers: Timers };
}

type Channel = 'market' | 'user';

export const CloseCode = {
  /** Credentials that do not check, or a first user message that is not a subscription. */
  UNAUTHORIZED: 4001,
  IDLE: 4002,
  SLOW: 4003,
  SHUTDOWN: 1001,
  /** The drop fault's close frame when it is not abrupt. */
  GOING_AWAY: 1001,
} as const;

/** Why a socket closed: the label of the closes counter, a closed set. */
export type CloseReason = 'client' | 'idle' | 'slow_consumer' | 'unauthorized' | 'message_too_large' | 'shutdown' | 'abnormal' | 'fault_drop';

interface Conn {
  channel: Channel;
  ip: string;
  lastSeen: number;
  /** Assets (market) or markets (user; '*' = all) it is subscribed to. */
  subs: Set<string>;
  custom: boolean;
  /** User channel: the wallet, once its credentials checked, and the API key that proved it. */
  wallet: string | undefined;
  apiKey: string | undefined;
  /** Set when we close it, with why; the close handler counts it. */
  closing: CloseReason | undefined;
  closed: boolean;
  /** While a stall fault lasts: the topics it left, to rejoin. */
  stalled: string[] | undefined;
}

type Socket = WebSocket<{ conn: Conn }>;

const checkMarket = TypeCompiler.Compile(MarketSubscribe);
const checkUser = TypeCompiler.Compile(UserSubscribe);
const checkUpdate = TypeCompiler.Compile(SubscriptionUpdate);

const ALL_MARKETS = '*';
const decoder = new TextDecoder();

export class StreamChannels {
  private app: TemplatedApp | undefined;
  private readonly sockets = new Set<Socket>();
  /** User sockets by the API key that authenticated them (closed when it is revoked). */
  private readonly byKey = new Map<string, Set<Socket>>();
  private readonly perAddress = new Map<string, number>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private closing = false;
  private readonly idleMs: number;
  private readonly faults: SocketFaults<Socket> | undefined;

  constructor(private readonly d: ChannelDeps) {
    this.idleMs = d.limits.idleSeconds * 1000;
    if (d.faults !== undefined) {
      const faults = new SocketFaults<Socket>(d.faults.source, d.faults.timers, {
        stall: (ws) => this.stall(ws),
        resume: (ws) => this.resume(ws),
        drop: (ws, how) => (how === 'abrupt' ? this.kill(ws) : this.end(ws, 'fault_drop', CloseCode.GOING_AWAY, 'going away')),
        stalled: (channel, delta) => d.metrics.stalled(channel, delta),
        resumed: (channel, n) => d.log.info({ fault: 'stream_stall', channel, socket: n }, 'stream stall ended'),
      });
      this.faults = faults;
      // Sockets in the order they opened (a Set keeps insertion order): the scenario numbers them so.
      d.faults.source.onChange(() => faults.reset([...this.sockets].map((ws) => [ws, ws.getUserData().conn.channel] as [Socket, Channel])));
    }
  }

  /** The feed's sink: publishes to uWS topics (nothing before mount), counting what each socket receives. */
  readonly sink = {
    wants: (topic: string): boolean => this.app !== undefined && this.app.numSubscribers(topic) > 0,
    publish: (topic: string, frame: string): void => {
      const app = this.app;
      if (app === undefined) return;
      const n = app.numSubscribers(topic);
      if (n === 0) return;
      app.publish(topic, frame, false);
      this.d.metrics.sent(topic.startsWith('user:') ? 'user' : 'market', n, n * Buffer.byteLength(frame));
    },
  };

  /** Mounts both routes on the edge's app (server.ts EdgeOptions.sockets) and starts the idle sweep. */
  mount = (app: TemplatedApp): void => {
    this.app = app;
    for (const channel of ['market', 'user'] as const) {
      const buckets = bucketsFor('GET', `/ws/${channel}`);
      app.ws<{ conn: Conn }>(`/ws/${channel}`, {
        // Past maxMessageBytes our own check closes with 1009 and a reason; uWS cuts a frame past twice that
        // without reading it (the client sees 1006, the close counts as abnormal).
        maxPayloadLength: 2 * this.d.limits.maxMessageBytes,
        maxBackpressure: this.d.limits.maxBackpressureBytes,
        closeOnBackpressureLimit: false,
        // Our own sweep closes idle sockets with a reason; uWS's timer would close them without one.
        idleTimeout: 0,
        sendPingsAutomatically: false,
        upgrade: (res, req, context) => this.upgrade(res, req, context, channel, buckets),
        open: (ws) => this.opened(ws),
        message: (ws, message) => this.received(ws, message),
        dropped: (ws) => this.dropped(ws),
        close: (ws, code) => this.closed(ws, code),
      });
    }
    const every = Math.max(100, Math.min(5000, Math.floor(this.idleMs / 4)));
    this.sweepTimer = setInterval(() => this.sweep(), every);
    this.sweepTimer.unref();
  };

  /** A revoked API key's user sockets are closed at once: the key no longer proves anything (4001). */
  revoked(apiKey: string): void {
    for (const ws of [...(this.byKey.get(apiKey) ?? [])]) this.end(ws, 'unauthorized', CloseCode.UNAUTHORIZED, 'API key revoked');
  }

  /** Sockets open now, per channel (tests, metrics). */
  count(channel?: Channel): number {
    let n = 0;
    for (const ws of this.sockets) if (channel === undefined || ws.getUserData().conn.channel === channel) n++;
    return n;
  }

  /** Refuses new sockets and closes every open one (1001). */
  close(): void {
    this.closing = true;
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    for (const ws of [...this.sockets]) this.end(ws, 'shutdown', CloseCode.SHUTDOWN, 'server shutting down');
  }

  // ---- connection lifecycle ----

  private upgrade(res: HttpResponse, req: HttpRequest, context: us_socket_context_t, channel: Channel, buckets: readonly string[]): void {
    // Everything is read synchronously: the request is gone once this returns.
    const key = req.getHeader('sec-websocket-key');
    const protocol = req.getHeader('sec-websocket-protocol');
    const extensions = req.getHeader('sec-websocket-extensions');
    const xff = this.d.trustedProxies.length > 0 ? req.getHeader('x-forwarded-for') || undefined : undefined;
    const ip = clientAddress(Buffer.from(res.getRemoteAddressAsText()).toString(), xff, this.d.trustedProxies);
    const refuse = (status: string, error: string) => {
      this.d.metrics.refused(channel, status.slice(0, 3));
      res.cork(() => res.writeStatus(status).writeHeader('content-type', 'application/json').end(JSON.stringify({ error }), true));
    };
    if (this.closing) return refuse('503 Service Unavailable', 'service not ready');
    const v = this.d.limiter.take(`ip:${ip}`, buckets, 1, this.d.clock.now());
    if (!v.ok) return refuse('429 Too Many Requests', 'Too Many Requests');
    if ((this.perAddress.get(ip) ?? 0) >= this.d.limits.maxSocketsPerAddress) return refuse('429 Too Many Requests', 'too many connections from this address');
    const conn: Conn = { channel, ip, lastSeen: Date.now(), subs: new Set(), custom: false, wallet: undefined, apiKey: undefined, closing: undefined, closed: false, stalled: undefined };
    res.upgrade({ conn }, key, protocol, extensions, context);
  }

  private opened(ws: Socket): void {
    const conn = ws.getUserData().conn;
    this.sockets.add(ws);
    this.perAddress.set(conn.ip, (this.perAddress.get(conn.ip) ?? 0) + 1);
    this.d.metrics.opened(conn.channel);
    this.faults?.opened(ws, conn.channel);
  }

  private closed(ws: Socket, code: number): void {
    const conn = ws.getUserData().conn;
    conn.closed = true;
    this.sockets.delete(ws);
    this.faults?.closed(ws);
    if (conn.apiKey !== undefined) {
      const same = this.byKey.get(conn.apiKey);
      same?.delete(ws);
      if (same?.size === 0) this.byKey.delete(conn.apiKey);
    }
    const left = (this.perAddress.get(conn.ip) ?? 1) - 1;
    if (left > 0) this.perAddress.set(conn.ip, left);
    else this.perAddress.delete(conn.ip);
    this.d.metrics.subscriptions(conn.channel, -conn.subs.size);
    conn.subs.clear();
    const reason: CloseReason = conn.closing ?? (code === 1009 ? 'message_too_large' : code === 1006 ? 'abnormal' : 'client');
    this.d.metrics.closed(conn.channel, reason);
  }

  /** uWS dropped a frame for this socket (its send buffer is past the bound): it is closed, once. */
  private dropped(ws: Socket): void {
    const conn = ws.getUserData().conn;
    this.d.metrics.dropped(conn.channel);
    if (conn.closing !== undefined) return;
    conn.closing = 'slow_consumer';
    // Not from inside the publish that is iterating the topic's sockets.
    setImmediate(() => this.end(ws, 'slow_consumer', CloseCode.SLOW, 'slow consumer: send buffer over its bound'));
  }

  private end(ws: Socket, reason: CloseReason, code: number, message: string): void {
    const conn = ws.getUserData().conn;
    if (conn.closed) return;
    conn.closing = reason;
    ws.end(code, message);
  }

  /** The drop fault's abrupt end: the connection closes without a close frame (the client sees 1006). */
  private kill(ws: Socket): void {
    const conn = ws.getUserData().conn;
    if (conn.closed) return;
    conn.closing = 'fault_drop';
    ws.close();
  }

  /** The stall fault begins: the socket leaves its topics (a socket already closing is left alone). */
  private stall(ws: Socket): boolean {
    const conn = ws.getUserData().conn;
    if (conn.closed || conn.closing !== undefined || conn.stalled !== undefined) return false;
    conn.stalled = ws.getTopics();
    for (const t of conn.stalled) ws.unsubscribe(t);
    return true;
  }

  /** The stall ends: the socket rejoins what it left; later frames reach it again. */
  private resume(ws: Socket): void {
    const conn = ws.getUserData().conn;
    const topics = conn.stalled;
    conn.stalled = undefined;
    if (topics === undefined || conn.closed) return;
    for (const t of topics) ws.subscribe(t);
  }

  private sweep(): void {
    const deadline = Date.now() - this.idleMs;
    for (const ws of this.sockets) {
      if (ws.getUserData().conn.lastSeen < deadline) this.end(ws, 'idle', CloseCode.IDLE, 'idle timeout');
    }
  }

  // ---- messages ----

  private received(ws: Socket, message: ArrayBuffer): void {
    const conn = ws.getUserData().conn;
    if (conn.closing !== undefined) return;
    conn.lastSeen = Date.now();
    // Stalled: read and discarded, as a stuck server would; the socket still counts as alive.
    if (conn.stalled !== undefined) return;
    if (message.byteLength > this.d.limits.maxMessageBytes) return this.end(ws, 'message_too_large', 1009, `message too big: at most ${this.d.limits.maxMessageBytes} bytes`);
    const text = decoder.decode(message);
    if (text === 'PING') {
      this.send(ws, 'PONG');
      return;
    }
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      if (conn.channel === 'user' && conn.wallet === undefined) return this.end(ws, 'unauthorized', CloseCode.UNAUTHORIZED, 'the first message must be a user subscription');
      return this.error(ws, 'invalid JSON');
    }
    if (conn.channel === 'market') this.onMarket(ws, conn, msg);
    else this.onUser(ws, conn, msg);
  }

  private onMarket(ws: Socket, conn: Conn, msg: unknown): void {
    if (checkMarket.Check(msg)) {
      if (msg.custom_feature_enabled === true) this.enableCustom(ws, conn);
      return this.subscribeAssets(ws, conn, msg.assets_ids, msg.initial_dump !== false);
    }
    if (checkUpdate.Check(msg) && msg.assets_ids !== undefined) {
      if (msg.custom_feature_enabled === true) this.enableCustom(ws, conn);
      if (msg.operation === 'subscribe') return this.subscribeAssets(ws, conn, msg.assets_ids, msg.initial_dump !== false);
      for (const id of msg.assets_ids) {
        if (!conn.subs.delete(id)) continue;
        ws.unsubscribe(this.d.topics.market(id));
        if (conn.custom) ws.unsubscribe(this.d.topics.custom(id));
        this.d.metrics.subscriptions('market', -1);
      }
      return;
    }
    this.error(ws, 'expected {"assets_ids": [...], "type": "market"} or {"operation": "subscribe"|"unsubscribe", "assets_ids": [...]}');
  }

  private enableCustom(ws: Socket, conn: Conn): void {
    if (conn.custom) return;
    conn.custom = true;
    ws.subscribe(this.d.topics.lifecycle);
    for (const id of conn.subs) ws.subscribe(this.d.topics.custom(id));
  }

  private subscribeAssets(ws: Socket, conn: Conn, ids: readonly string[], dump: boolean): void {
    const books: string[] = [];
    const fresh: string[] = [];
    for (const id of new Set(ids)) {
      const book = this.d.books.bookEvent(id);
      if (book === undefined) continue;
      if (dump) books.push(book);
      if (!conn.subs.has(id)) fresh.push(id);
    }
    if (conn.subs.size + fresh.length > this.d.limits.maxSubscriptionsPerSocket) {
      return this.error(ws, `too many subscriptions: at most ${this.d.limits.maxSubscriptionsPerSocket} assets per connection`);
    }
    // Subscribed before the dump is sent: a frame published after this is queued after the dump, and the
    // dump is the committed state as of now, so the client misses nothing and sees nothing twice out of order.
    for (const id of fresh) {
      conn.subs.add(id);
      ws.subscribe(this.d.topics.market(id));
      if (conn.custom) ws.subscribe(this.d.topics.custom(id));
    }
    this.d.metrics.subscriptions('market', fresh.length);
    if (books.length > 0) this.send(ws, '[' + books.join(',') + ']');
  }

  private onUser(ws: Socket, conn: Conn, msg: unknown): void {
    if (conn.wallet === undefined) {
      if (!checkUser.Check(msg)) return this.end(ws, 'unauthorized', CloseCode.UNAUTHORIZED, 'the first message must be {"auth": {apiKey, secret, passphrase}, "type": "user"}');
      const wallet = this.authenticate(msg.auth);
      if (wallet === undefined) return this.end(ws, 'unauthorized', CloseCode.UNAUTHORIZED, 'Unauthorized/Invalid api key');
      conn.wallet = wallet;
      conn.apiKey = msg.auth.apiKey;
      const same = this.byKey.get(msg.auth.apiKey);
      if (same) same.add(ws);
      else this.byKey.set(msg.auth.apiKey, new Set([ws]));
      return this.subscribeMarkets(ws, conn, msg.markets ?? []);
    }
    if (checkUpdate.Check(msg) && msg.markets !== undefined) {
      if (msg.operation === 'subscribe') return this.subscribeMarkets(ws, conn, msg.markets);
      if (conn.subs.has(ALL_MARKETS) && msg.markets.length > 0) return this.error(ws, 'subscribed to all markets: unsubscribe with "markets": [] first');
      const ids = msg.markets.length === 0 ? [ALL_MARKETS] : msg.markets.map((m) => m.toLowerCase());
      for (const id of ids) {
        if (!conn.subs.delete(id)) continue;
        ws.unsubscribe(this.d.topics.user(conn.wallet, id === ALL_MARKETS ? undefined : id));
        this.d.metrics.subscriptions('user', -1);
      }
      return;
    }
    if (checkUser.Check(msg)) return this.subscribeMarkets(ws, conn, msg.markets ?? []);
    this.error(ws, 'expected {"operation": "subscribe"|"unsubscribe", "markets": [...]}');
  }

  /** An empty list means every market of the wallet. */
  private subscribeMarkets(ws: Socket, conn: Conn, markets: readonly string[]): void {
    const wallet = conn.wallet!;
    const ids = markets.length === 0 ? [ALL_MARKETS] : [...new Set(markets.map((m) => m.toLowerCase()))];
    if (conn.subs.has(ALL_MARKETS)) return;
    if (ids[0] === ALL_MARKETS) {
      // All replaces the per-market topics (a frame would otherwise arrive twice).
      for (const id of conn.subs) ws.unsubscribe(this.d.topics.user(wallet, id));
      this.d.metrics.subscriptions('user', 1 - conn.subs.size);
      conn.subs.clear();
      conn.subs.add(ALL_MARKETS);
      ws.subscribe(this.d.topics.user(wallet));
      return;
    }
    const fresh = ids.filter((id) => !conn.subs.has(id));
    if (conn.subs.size + fresh.length > this.d.limits.maxSubscriptionsPerSocket) {
      return this.error(ws, `too many subscriptions: at most ${this.d.limits.maxSubscriptionsPerSocket} markets per connection`);
    }
    for (const id of fresh) {
      conn.subs.add(id);
      ws.subscribe(this.d.topics.user(wallet, id));
    }
    this.d.metrics.subscriptions('user', fresh.length);
  }

  /** The wallet of valid credentials: the same key, secret and passphrase as L2, compared in constant time. */
  private authenticate(auth: { apiKey: string; secret: string; passphrase: string }): string | undefined {
    const key = this.d.keys.verifier(auth.apiKey);
    // Trading and read-only keys read their wallet's orders and trades; a builder key proves nothing here.
    if (key === undefined || key.kind === 'builder') return undefined;
    const secret = decodeSecret(auth.secret);
    const pass = Buffer.from(auth.passphrase);
    const secretOk = secret !== undefined && secret.length === key.hmacKey.length && timingSafeEqual(secret, key.hmacKey);
    const passOk = pass.length === key.passphrase.length && timingSafeEqual(pass, key.passphrase);
    return secretOk && passOk ? key.address : undefined;
  }

  private error(ws: Socket, error: string): void {
    this.send(ws, JSON.stringify({ event_type: 'error', error }));
  }

  private send(ws: Socket, frame: string): void {
    const conn = ws.getUserData().conn;
    if (conn.closed || conn.stalled !== undefined) return;
    // 2: dropped, the send buffer is past its bound (uWS sends nothing more until it drains).
    if (ws.send(frame, false) === 2) return this.dropped(ws);
    this.d.metrics.sent(conn.channel, 1, Buffer.byteLength(frame));
  }
}
