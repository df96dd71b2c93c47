/**
 * The user channel's protocol (/ws/user; channels.ts's header has the wire): its credentials, checked as L2
 * checks them, the wallets they prove, the markets it subscribes to, and the topics of those wallets that it
 * joins (user-topics.ts). Owns the API-key index of user sockets (a revoked key closes them) and the join and
 * leave of wallet topics; the socket's lifecycle, its bounds and what a frame costs stay the channels', which it
 * calls through UserChannelOps. Separate because isolation lives here: a socket only ever joins topics of the
 * wallets its credentials belong to, and that is easier to check in a file that does nothing else.
 *
 * Imports auth/credentials.ts (the secret's wire form), refusals/reason.ts (the header-safe reason text),
 * the stream schemas, and the ws room's own ports and topics; never routes/.
 */
import { timingSafeEqual } from 'node:crypto';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { decodeSecret } from '../auth/credentials.ts';
import { headerValue } from '../refusals/reason.ts';
import { SubscriptionUpdate, UserSubscribe } from '../schemas/stream.ts';
import { CloseCode, ignored, type ChannelDeps, type CloseReason } from './channel-ports.ts';
import { UserTopics } from './user-topics.ts';

/** What the user channel keeps of a socket (channels.ts's Conn has it). */
export interface UserConn {
  /** Markets it is subscribed to ('*' = all). */
  subs: Set<string>;
  /** The wallet, once its credentials checked, and the API key that proved it. */
  wallet: string | undefined;
  /** The wallets whose topics a subscription joins (the key's, its proxy wallet's, its Safe's). */
  wallets: readonly string[];
  apiKey: string | undefined;
}

/** What the user channel asks of the channels: frames, closes and the subscription caps. */
export interface UserChannelOps<S, C> {
  error(s: S, error: string): void;
  end(s: S, reason: CloseReason, code: number, message: string): void;
  /** Refuses (and says why) a subscription of `fresh` more past a cap; true when refused. */
  overCap(s: S, conn: C, fresh: number, what: 'markets'): boolean;
  /** Counts `n` subscriptions more (or fewer). */
  added(conn: C, n: number): void;
}

const checkUser = TypeCompiler.Compile(UserSubscribe);
const checkUpdate = TypeCompiler.Compile(SubscriptionUpdate);

const ALL_MARKETS = '*';

export class UserChannel<S, C extends UserConn> {
  /** The wallet topics and their sockets: the channels' sink publishes to these. */
  readonly topics = new UserTopics<S>();
  /** User sockets by the API key that authenticated them (closed when it is revoked). */
  private readonly byKey = new Map<string, Set<S>>();

  constructor(
    private readonly d: Pick<ChannelDeps, 'keys' | 'funders' | 'markets' | 'topics' | 'refusals'>,
    private readonly ops: UserChannelOps<S, C>,
  ) {}

  /** The open user sockets an API key authenticated. */
  socketsOf(apiKey: string): S[] {
    return [...(this.byKey.get(apiKey) ?? [])];
  }

  /** A user socket closed: it leaves its key's index and every topic it joined (its subscriptions are the channels' to clear). */
  closed(s: S, conn: C): void {
    if (conn.apiKey !== undefined) {
      const same = this.byKey.get(conn.apiKey);
      same?.delete(s);
      if (same?.size === 0) this.byKey.delete(conn.apiKey);
    }
    for (const id of conn.subs) this.leave(s, conn, id);
  }

  /** A parsed message: the first subscribes (and authenticates), later ones subscribe or unsubscribe. */
  received(s: S, conn: C, msg: unknown): void {
    if (conn.wallet === undefined) {
      if (!checkUser.Check(msg)) return this.ops.end(s, 'unauthorized', CloseCode.UNAUTHORIZED, 'the first message must be {"auth": {apiKey, secret, passphrase}, "type": "user"}');
      const wallet = this.authenticate(msg.auth);
      if (wallet === undefined) {
        // Sent before end(): uWS queues the close frame behind it, so the client reads the reason, then the close.
        const why = this.d.refusals?.userAuth(msg.auth);
        if (why !== undefined) this.ops.error(s, headerValue(why.text));
        return this.ops.end(s, 'unauthorized', CloseCode.UNAUTHORIZED, 'Unauthorized/Invalid api key');
      }
      conn.wallet = wallet;
      conn.wallets = this.d.funders.walletsOf(wallet);
      conn.apiKey = msg.auth.apiKey;
      const same = this.byKey.get(msg.auth.apiKey);
      if (same) same.add(s);
      else this.byKey.set(msg.auth.apiKey, new Set([s]));
      return this.subscribe(s, conn, msg.markets ?? []);
    }
    if (checkUpdate.Check(msg) && msg.markets !== undefined) {
      if (msg.operation === 'subscribe') return this.subscribe(s, conn, msg.markets);
      if (conn.subs.has(ALL_MARKETS) && msg.markets.length > 0) return this.ops.error(s, 'subscribed to all markets: unsubscribe with "markets": [] first');
      const ids = msg.markets.length === 0 ? [ALL_MARKETS] : msg.markets.map((m) => m.toLowerCase());
      for (const id of ids) {
        if (!conn.subs.delete(id)) continue;
        this.leave(s, conn, id);
        this.ops.added(conn, -1);
      }
      return;
    }
    if (checkUser.Check(msg)) return this.subscribe(s, conn, msg.markets ?? []);
    this.ops.error(s, 'expected {"operation": "subscribe"|"unsubscribe", "markets": [...]}');
  }

  /** An empty list means every market of the wallet; ids the catalog does not know are ignored, and said. */
  private subscribe(s: S, conn: C, markets: readonly string[]): void {
    if (conn.subs.has(ALL_MARKETS)) return;
    if (markets.length === 0) {
      // All replaces the per-market topics (a frame would otherwise arrive twice).
      if (conn.subs.size === 0 && this.ops.overCap(s, conn, 1, 'markets')) return;
      for (const id of conn.subs) this.leave(s, conn, id);
      this.ops.added(conn, 1 - conn.subs.size);
      conn.subs.clear();
      conn.subs.add(ALL_MARKETS);
      this.join(s, conn, ALL_MARKETS);
      return;
    }
    const fresh: string[] = [];
    const unknown: string[] = [];
    for (const id of new Set(markets.map((m) => m.toLowerCase()))) {
      if (conn.subs.has(id)) continue;
      const cid = this.d.markets.conditionId(id);
      if (cid === undefined) unknown.push(id);
      else fresh.push(cid);
    }
    if (this.ops.overCap(s, conn, fresh.length, 'markets')) return;
    for (const id of fresh) {
      conn.subs.add(id);
      this.join(s, conn, id);
    }
    this.ops.added(conn, fresh.length);
    if (unknown.length > 0) this.ops.error(s, ignored('markets', unknown));
  }

  /** Joins a user subscription's topics: the market (or all markets, ALL_MARKETS) of each of the key's wallets. */
  private join(s: S, conn: C, id: string): void {
    for (const wallet of conn.wallets) this.topics.join(s, this.d.topics.user(wallet, id === ALL_MARKETS ? undefined : id));
  }

  private leave(s: S, conn: C, id: string): void {
    for (const wallet of conn.wallets) this.topics.leave(s, this.d.topics.user(wallet, id === ALL_MARKETS ? undefined : id));
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
}
