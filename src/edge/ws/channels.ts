/**
 * Room edge/ws/: the WebSocket channels (this file: the sockets' lifecycle, their bounds and the market
 * channel), the user channel's credentials and wallet topics (user-channel.ts, user-topics.ts), what the
 * channels are given and the close codes they promise (channel-ports.ts), a socket's message rate
 * (message-rate.ts), the fair shares (bounds.ts) and the injected socket faults (socket-faults.ts).
 * Separate because a socket lives past a request: its own lifecycle beside http/, with the same credentials
 * (auth/) and caps (limits/). Imports auth/, limits/, pipeline/ (metrics), refusals/ and schemas/; never routes/.
 *
 * The platform's WebSocket channels on the edge's uWS app (DESIGN section 10): /ws/market and /ws/user,
 * subscriptions as topics, and the bounds that keep a socket from costing more than its share.
 *
 * Delivery: projections/stream-feed.ts serializes each event once per topic and calls `sink.publish`. A
 * market topic is a uWS topic: app.publish, whose C++ side copies the frame into every subscriber's send
 * buffer. A user topic is ours, a Map of topic to its sockets, and the frame is sent to each (see "Memory"
 * for why). The initial `book` dump of a subscription is the one per-socket send of the market channel; its
 * books are the committed bodies' `book` events, built once per book version for everyone
 * (stream-feed.ts bookMessage), so a dump costs copying bytes, never serializing. Topics a socket may join:
 *   market channel  market:<token> for each asset it lists; with custom_feature_enabled also
 *                   market-custom:<token> and market-lifecycle
 *   user channel    user:<wallet> (no `markets`, or an empty list) or user:<wallet>:<cid> per market, only
 *                   ever for the wallets its credentials belong to: isolation is which topics it can join.
 *                   Those are the key's address and the proxy wallet and Safe it signs for (edge/auth/funders.ts):
 *                   a proxy or Safe order's events are its maker's, so one subscription joins that topic of
 *                   each of the three (a funder's events reach its signer's key, as on the platform).
 *
 * Protocol: the first message subscribes (market: {assets_ids, type: "market", custom_feature_enabled?,
 * initial_dump?}; user: {auth: {apiKey, secret, passphrase}, markets?, type: "user"}); later messages are
 * {operation: "subscribe" | "unsubscribe", assets_ids | markets}; a repeated subscribe message adds. The
 * text PING is answered PONG. A message that is not valid gets {"event_type":"error","error":...} and
 * changes nothing; on the user channel a first message that is not a valid subscription, or credentials
 * that do not check, close the socket (4001) with the reason, and nothing is delivered. Credentials that do
 * not check keep the platform's close reason ("Unauthorized/Invalid api key"); when refusals explain
 * themselves (deps `refusals`, auth.explainRefusals), one {"event_type":"error","error":"<why>"} frame saying
 * what was wrong (refusals/auth.ts) is sent just before the close: uWS queues the close frame after it, so it
 * arrives first. Ids nobody knows
 * (a token no book has; a condition id no market of the catalog has, as registered with the engine) are
 * ignored: the rest of the message is acted on, and the socket gets one error frame naming them, "unknown
 * assets ignored: <ids>" or "unknown markets ignored: <ids>" (at most MAX_NAMED ids, then how many more),
 * so a typo costs nothing and is said.
 *
 * Bounds (configuration `stream`; every one, with the refusal it answers, in bounds.ts's header): what one
 * socket meets alone is enforced here (the connect rate, its message rate and size, its send buffer, its idle
 * time); what sockets share per client address, per network and in all (sockets, subscriptions, dump
 * budgets) is counted by bounds.ts's FairShares, which this file asks before it opens, subscribes or dumps.
 * A message admitted by those is acted on within a share of each event-loop turn (turn-budget.ts): past
 * TURN_BUDGET_MS of messages in a turn, the rest wait for the next, each socket's in order.
 * Churn: a socket's subscriptions are a Set of what it joined, emptied on unsubscribe and dropped at close,
 * with its topics, so subscribe/unsubscribe cycles leave nothing behind. The message rate is message-rate.ts's.
 * Memory: user topics are ours, in the JS heap (user-topics.ts says why), not uWS topics.
 *
 * Metrics (/metrics, edge/pipeline/metrics.ts): open sockets and subscriptions per channel, frames and bytes sent
 * (publishes count once per receiving socket), frames dropped by backpressure, closes by reason, sockets
 * stalled by a fault.
 *
 * Stream faults (the sandbox's scenario `streams`; timers in socket-faults.ts, draws in sandbox/faults.ts):
 *   drop    the server ends the socket: abruptly (no close frame: the client sees 1006) or with 1001
 *           "going away"; counted as closes{reason="fault_drop"};
 *   stall   the socket leaves its uWS topics and is sent nothing on ours, and its messages are discarded
 *           unread (PING gets no PONG, subscribe messages are not acted on, nothing is charged to its
 *           message rate) while the connection stays open; at the end it rejoins the uWS topics it had.
 *           Frames published meanwhile are lost for it, not delivered late: queueing them would cost
 *           memory per stalled socket, a late burst would hide the gap a bot must detect, and the
 *           platform's stalls (DESIGN section 11) lose events. Its client resyncs from a new `book`.
 *           Other sockets are untouched (publish skips a socket that is not on the topic).
 */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocket, us_socket_context_t } from 'uWebSockets.js';
import { addressPrefix, clientAddress } from '../../domain/ip.ts';
import { bucketsFor } from '../limits/rate-limit-buckets.ts';
import { MarketSubscribe, SubscriptionUpdate } from '../schemas/stream.ts';
import { SocketFaults } from './socket-faults.ts';
import { FairShares, type RefusalReason } from './bounds.ts';
import { CloseCode, ignored, type ChannelDeps, type CloseReason } from './channel-ports.ts';
import { MessageRate, STRIKE_WINDOW_MS } from './message-rate.ts';
import { UserChannel } from './user-channel.ts';
import { TurnBudget } from './turn-budget.ts';

export type { ChannelDeps } from './channel-ports.ts';

type Channel = 'market' | 'user';

interface Conn {
  channel: Channel;
  ip: string;
  /** The address's network (domain/ip.ts addressPrefix): what its fair shares are counted by. */
  network: string;
  lastSeen: number;
  /** Assets (market) or markets (user; '*' = all) it is subscribed to. */
  subs: Set<string>;
  custom: boolean;
  /** User channel: the wallet, once its credentials checked, and the API key that proved it. */
  wallet: string | undefined;
  /** User channel: the wallets whose topics a subscription joins (the key's, its proxy wallet's, its Safe's). */
  wallets: readonly string[];
  apiKey: string | undefined;
  rate: MessageRate;
  /** Set when we close it, with why; the close handler counts it. */
  closing: CloseReason | undefined;
  closed: boolean;
  /** While a stall fault lasts: the topics it left, to rejoin. */
  stalled: string[] | undefined;
}

type Socket = WebSocket<{ conn: Conn }>;

const checkMarket = TypeCompiler.Compile(MarketSubscribe);
const checkUpdate = TypeCompiler.Compile(SubscriptionUpdate);
const decoder = new TextDecoder();
/** Main-thread time a turn spends on sockets' messages before the rest wait for the next (turn-budget.ts). */
const TURN_BUDGET_MS = 2;
/** Bytes of messages that may wait for a later turn; past it the oldest are handled at once (turn-budget.ts). */
const MAX_WAITING_BYTES = 16 * 1024 * 1024;

export class StreamChannels {
  private app: TemplatedApp | undefined;
  private readonly sockets = new Set<Socket>();
  /** What sockets share per address, per network and in all (bounds.ts). */
  private readonly shares: FairShares;
  /** The user channel's protocol, its key index and its topics (user-channel.ts; not uWS topics). */
  private readonly user: UserChannel<Socket, Conn>;
  private sweepTimer: NodeJS.Timeout | undefined;
  private closing = false;
  private readonly idleMs: number;
  private readonly faults: SocketFaults<Socket> | undefined;
  /** Messages handled within a share of each turn, each socket's in order (turn-budget.ts). */
  private readonly turns: TurnBudget<Conn>;

  constructor(private readonly d: ChannelDeps) {
    this.idleMs = d.limits.idleSeconds * 1000;
    this.turns = new TurnBudget<Conn>(TURN_BUDGET_MS, MAX_WAITING_BYTES, (err) => d.log.error({ err }, 'stream message failed'));
    this.shares = new FairShares(d.limits);
    this.user = new UserChannel<Socket, Conn>(d, {
      error: (ws, error) => this.error(ws, error),
      end: (ws, reason, code, message) => this.end(ws, reason, code, message),
      overCap: (ws, conn, fresh, what) => this.overCap(ws, conn, fresh, what),
      added: (conn, n) => this.added(conn, n),
    });
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

  /** The feed's sink: publishes to user topics or uWS topics (nothing before mount), counting what each socket receives. */
  readonly sink = {
    wants: (topic: string): boolean => this.user.topics.has(topic) || (this.app !== undefined && this.app.numSubscribers(topic) > 0),
    publish: (topic: string, frame: string): void => {
      const own = this.user.topics.sockets(topic);
      if (own !== undefined) {
        const bytes = Buffer.byteLength(frame);
        for (const ws of own) this.send(ws, frame, bytes);
        return;
      }
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
    for (const ws of this.user.socketsOf(apiKey)) this.end(ws, 'unauthorized', CloseCode.UNAUTHORIZED, 'API key revoked');
  }

  /** Sockets open now, per channel (tests, metrics). */
  count(channel?: Channel): number {
    let n = 0;
    for (const ws of this.sockets) if (channel === undefined || ws.getUserData().conn.channel === channel) n++;
    return n;
  }

  /** Refuses new sockets and closes every open one (1001; 1012 "service restart" when the service restarts in place, a revert). */
  close(restart = false): void {
    this.closing = true;
    this.turns.close();
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    const [code, message] = restart ? [CloseCode.RESTART, 'service restart'] : [CloseCode.SHUTDOWN, 'server shutting down'];
    for (const ws of [...this.sockets]) this.end(ws, 'shutdown', code, message);
  }

  // ---- connection lifecycle ----

  private upgrade(res: HttpResponse, req: HttpRequest, context: us_socket_context_t, channel: Channel, buckets: readonly string[]): void {
    // Everything is read synchronously: the request is gone once this returns.
    const key = req.getHeader('sec-websocket-key');
    const protocol = req.getHeader('sec-websocket-protocol');
    const extensions = req.getHeader('sec-websocket-extensions');
    const xff = this.d.trustedProxies.length > 0 ? req.getHeader('x-forwarded-for') || undefined : undefined;
    const ip = clientAddress(Buffer.from(res.getRemoteAddressAsText()).toString(), xff, this.d.trustedProxies);
    const refuse = (status: string, reason: RefusalReason, error: string) => {
      this.d.metrics.refused(channel, status.slice(0, 3));
      this.d.metrics.refusal(channel, reason);
      res.cork(() => res.writeStatus(status).writeHeader('content-type', 'application/json').end(JSON.stringify({ error }), true));
    };
    if (this.closing) return refuse('503 Service Unavailable', 'shutdown', 'service not ready');
    const v = this.d.limiter.take(`ip:${ip}`, buckets, 1, this.d.clock.now());
    if (!v.ok) return refuse('429 Too Many Requests', 'connect_rate', 'Too Many Requests');
    const network = addressPrefix(ip);
    // uWS opens the socket within res.upgrade (opened() runs before it returns), so `sockets` is exact here.
    const full = this.shares.socketRefusal({ ip, network }, this.sockets.size);
    if (full !== undefined) return refuse(full.status, full.reason, full.error);
    const conn: Conn = {
      channel,
      ip,
      network,
      lastSeen: Date.now(),
      subs: new Set(),
      custom: false,
      wallet: undefined,
      wallets: [],
      apiKey: undefined,
      rate: new MessageRate(this.d.limits.maxMessagesPerSecond, performance.now()),
      closing: undefined,
      closed: false,
      stalled: undefined,
    };
    res.upgrade({ conn }, key, protocol, extensions, context);
  }

  private opened(ws: Socket): void {
    const conn = ws.getUserData().conn;
    this.sockets.add(ws);
    this.shares.opened(conn);
    this.d.metrics.opened(conn.channel);
    this.faults?.opened(ws, conn.channel);
  }

  private closed(ws: Socket, code: number): void {
    const conn = ws.getUserData().conn;
    conn.closed = true;
    this.sockets.delete(ws);
    this.faults?.closed(ws);
    this.shares.closed(conn);
    if (conn.channel === 'user') this.user.closed(ws, conn);
    else this.shares.followed(conn, conn.subs, -1);
    this.added(conn, -conn.subs.size);
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
    if (!conn.rate.admit(performance.now())) return this.tooFast(ws, conn);
    // PING is free of the network's bytes: a client kept from subscribing must still keep its socket.
    if (message.byteLength === 4 && decoder.decode(message) === 'PING') return this.turns.submit(conn, 4, () => this.pong(ws, conn));
    const tooMuch = this.shares.chargeMessage(conn, message.byteLength);
    if (tooMuch !== undefined) return this.refuse(ws, conn, 'network_bytes', tooMuch);
    // Read now (uWS's buffer is gone once this returns); acted on now or in a later turn (turn-budget.ts).
    const text = decoder.decode(message);
    this.turns.submit(conn, message.byteLength, () => this.handle(ws, conn, text));
  }

  private pong(ws: Socket, conn: Conn): void {
    if (conn.closing !== undefined || conn.stalled !== undefined) return;
    this.send(ws, 'PONG');
  }

  /** An admitted message, parsed and acted on (skipped if its socket began closing or stalled since it came). */
  private handle(ws: Socket, conn: Conn, text: string): void {
    if (conn.closing !== undefined || conn.closed || conn.stalled !== undefined) return;
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      if (conn.channel === 'user' && conn.wallet === undefined) return this.end(ws, 'unauthorized', CloseCode.UNAUTHORIZED, 'the first message must be a user subscription');
      return this.error(ws, 'invalid JSON');
    }
    if (conn.channel === 'market') this.onMarket(ws, conn, msg);
    else this.user.received(ws, conn, msg);
  }

  /** A message past the rate: refused with a frame, or, past 2N refusals in STRIKE_WINDOW_MS, the socket closed. */
  private tooFast(ws: Socket, conn: Conn): void {
    const rate = conn.rate.rate;
    const close = conn.rate.strike(performance.now());
    this.d.metrics.refusal(conn.channel, 'rate');
    if (close) return this.end(ws, 'rate_limited', CloseCode.RATE_LIMITED, `too many messages: more than ${2 * rate} refused within ${STRIKE_WINDOW_MS / 1000} s`);
    this.error(ws, `too many messages: at most ${rate} per second`);
  }

  /** A message refused whole by a bound: nothing changed, an error frame says why, the refusal is counted. */
  private refuse(ws: Socket, conn: Conn, reason: RefusalReason, error: string): void {
    this.d.metrics.refusal(conn.channel, reason);
    this.error(ws, error);
  }

  /** The caps a subscription of `fresh` more must fit, per socket and in all; the refusal, when it does not. */
  private overCap(ws: Socket, conn: Conn, fresh: number, what: 'assets' | 'markets'): boolean {
    const refused = this.shares.subscriptionRefusal(conn, conn.subs.size, fresh, what);
    if (refused === undefined) return false;
    this.refuse(ws, conn, refused.reason, refused.error);
    return true;
  }

  private added(conn: Conn, n: number): void {
    if (n === 0) return;
    this.shares.added(conn, n);
    this.d.metrics.subscriptions(conn.channel, n);
  }

  private onMarket(ws: Socket, conn: Conn, msg: unknown): void {
    if (checkMarket.Check(msg)) {
      if (msg.custom_feature_enabled === true) this.enableCustom(ws, conn);
      return this.subscribeAssets(ws, conn, msg.assets_ids, msg.initial_dump !== false);
    }
    if (checkUpdate.Check(msg) && msg.assets_ids !== undefined) {
      if (msg.custom_feature_enabled === true) this.enableCustom(ws, conn);
      if (msg.operation === 'subscribe') return this.subscribeAssets(ws, conn, msg.assets_ids, msg.initial_dump !== false);
      const left: string[] = [];
      for (const id of msg.assets_ids) {
        if (!conn.subs.delete(id)) continue;
        ws.unsubscribe(this.d.topics.market(id));
        if (conn.custom) ws.unsubscribe(this.d.topics.custom(id));
        left.push(id);
      }
      this.shares.followed(conn, left, -1);
      this.added(conn, -left.length);
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
    const known: string[] = [];
    const fresh: string[] = [];
    const unknown: string[] = [];
    // When no count cap can refuse this message whatever it holds, the first asset the address already follows
    // from its cap is the refusal followRefusal would give after the loop: given at once. A crowd of sockets
    // asking for what their address already follows (the subscription grab's 90 of 100) costs one id each,
    // not the whole list.
    const early = ids.length <= this.shares.subscriptionRoom(conn, conn.subs.size);
    // Duplicates skipped as they come: a refusal at the first asset has not hashed the whole list first.
    const seen = new Set<string>();
    for (const id of ids) {
      if (seen.has(id)) continue;
      seen.add(id);
      if (conn.subs.has(id)) {
        known.push(id);
        continue;
      }
      const token = this.d.books.token(id);
      if (token === undefined) unknown.push(id);
      else {
        if (early) {
          const crowded = this.shares.addressFollowRefusal(conn, token);
          if (crowded !== undefined) return this.refuse(ws, conn, crowded.reason, crowded.error);
        }
        known.push(token);
        fresh.push(token);
      }
    }
    if (this.overCap(ws, conn, fresh.length, 'assets')) return;
    const crowded = this.shares.followRefusal(conn, fresh);
    if (crowded !== undefined) return this.refuse(ws, conn, crowded.reason, crowded.error);
    let books: string[] = [];
    if (dump && known.length > 0) {
      books = known.map((id) => this.d.books.bookEvent(id)!);
      const refused = this.shares.chargeDump(conn, books);
      if (refused !== undefined) return this.refuse(ws, conn, refused.reason, `dump budget exceeded: ${refused.why}`);
    }
    // Subscribed before the dump is sent: a frame published after this is queued after the dump, and the
    // dump is the committed state as of now, so the client misses nothing and sees nothing twice out of order.
    for (const id of fresh) {
      conn.subs.add(id);
      ws.subscribe(this.d.topics.market(id));
      if (conn.custom) ws.subscribe(this.d.topics.custom(id));
    }
    this.shares.followed(conn, fresh, 1);
    this.added(conn, fresh.length);
    if (books.length > 0) this.send(ws, '[' + books.join(',') + ']');
    if (unknown.length > 0) this.error(ws, ignored('assets', unknown));
  }

  private error(ws: Socket, error: string): void {
    this.send(ws, JSON.stringify({ event_type: 'error', error }));
  }

  private send(ws: Socket, frame: string, bytes = Buffer.byteLength(frame)): void {
    const conn = ws.getUserData().conn;
    if (conn.closed || conn.stalled !== undefined) return;
    // 2: dropped, the send buffer is past its bound (uWS sends nothing more until it drains).
    if (ws.send(frame, false) === 2) return this.dropped(ws);
    this.d.metrics.sent(conn.channel, 1, bytes);
  }
}
