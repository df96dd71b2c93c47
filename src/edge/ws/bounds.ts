/**
 * What the channels' sockets share, and the bounds that keep any one caller to its share (configuration
 * `stream`, defaults in config/default.json): the counts across sockets per client address, per network and
 * in all, and the dump budgets. channels.ts asks before it opens a socket, adds a subscription or sends a
 * dump, and tells after; what one socket alone may do (its message rate and size, its send buffer, its idle
 * time) stays channels.ts's. Separate because these are bookkeeping over many sockets, with no socket in
 * them: a caller's share is its address and network, and the refusal says which bound it met.
 *
 * Every bound of the channels (configuration `stream`, StreamLimits below) is listed here, those one socket
 * meets alone (the connect rate, the message rate, size and send buffer, the idle time: channels.ts) with
 * those it shares (the rest: FairShares, below). Refusals are error frames
 * {"event_type":"error","error":"<what>: <why>"}, or HTTP answers to the upgrade, each counted in
 * ws_refusals_total{channel, reason}:
 *   - upgrades are rate-limited per client address like any route (rate-limit-buckets.ts: clob + ws-connect)
 *     and capped at maxSocketsPerAddress open sockets per address and maxSocketsPerNetwork per network (the
 *     address's /24, or /64 for IPv6: domain/ip.ts addressPrefix; at least what one address may hold), 429
 *     past any of them (reasons connect_rate, address_sockets, network_sockets), and at maxSockets open
 *     sockets in all, both channels (503 "too many connections", reason global_sockets: the service is
 *     full, not the caller too fast);
 *   - messages: maxMessagesPerSecond per socket, a token bucket of that many tokens refilled at that many
 *     per second (so a burst of N, then N a second), every message charged one token, PING included (a
 *     PING costs little, but a socket sending nothing else must not be free to flood). A message with no
 *     token left is not acted on and gets "too many messages: at most N per second" (reason rate). A socket
 *     with more than 2N messages refused within STRIKE_WINDOW_MS (message-rate.ts) of the first of them is closed (4008,
 *     closes{reason="rate_limited"}): it is not reading the refusals;
 *   - dumps are charged by what they cost, per client address and per network (all their sockets
 *     together) and in all: a subscription with initial_dump (the default) costs one per book it dumps, at
 *     most dumpBooksPerAddress per dumpWindowSeconds for an address and dumpBooksPerNetwork for its network
 *     (RateLimiter's sliding window, edge/limits/rate-limit.ts, which over-admits by at most one sub-window's
 *     worth), and its bytes, at most dumpBytesPerSecond for all addresses together (a token bucket holding
 *     two seconds' worth), so that many addresses at their own budgets cannot send books faster than that
 *     (100 addresses sent 21.7 MB/s of them). A subscribe message whose dump would pass any of them is
 *     refused whole: nothing subscribed, nothing sent, "dump budget exceeded: ..." (reasons dump_budget,
 *     network_dumps, global_dumps). initial_dump false is free;
 *   - maxSubscriptionsPerSocket assets (market) or markets (user), maxSubscriptionsPerAddress and
 *     maxSubscriptionsPerNetwork over all of an address's or a network's sockets, and maxSubscriptions in
 *     all, both channels (a user socket on all of its markets holds one): a message past any of them is
 *     refused whole ("too many subscriptions: ...", reasons socket_subscriptions, address_subscriptions,
 *     network_subscriptions, global_subscriptions). Fair shares: with the defaults no address holds more
 *     than 1% of the sockets or subscriptions and no network more than 5%, so the 27 addresses that once
 *     held all 200,000 subscriptions hold at most 27% (and 5% from one /24);
 *   - followers of one asset: at most maxAssetSocketsPerAddress of an address's market sockets, and
 *     maxAssetSocketsPerNetwork of its network's, may be subscribed to the same asset; a message that would
 *     pass either is refused whole ("too many subscriptions: ...", reasons address_asset_sockets,
 *     network_asset_sockets). The shares above bound how much a caller holds, not what it costs: every
 *     change of a book is written once to every socket on it (one system call each), so 27 addresses
 *     that put all their 2,700 sockets on the same assets made each change cost 2,700 writes, and the
 *     others' p99 5x (the abuse bench's sub-grab). A client needs one socket per asset, a few for
 *     redundancy or a fleet behind one address; with the defaults (10 and 50) 27 networks put at most
 *     270 sockets on an asset;
 *   - bytes of messages: at most messageBytesPerNetwork a second from all of a network's sockets together,
 *     both channels (RateLimiter's sliding window of one second holding one second's worth; PING is
 *     free). A message past it is not read: "too many message bytes: ..." (reason network_bytes). The caps
 *     above are checked once a message is read, and reading is what a flood costs: 27 addresses, each of
 *     its own /24, once sent 8,100 subscribe messages of 15 KB in a second, every one within its
 *     socket's message rate and refused only after it was parsed and checked id by id, and the others'
 *     p99 doubled (the abuse bench's sub-grab). One second's worth at once, not two: what 27 networks
 *     may make the service read at once is then 27 x 256 KiB, not twice that. A client asking for all of
 *     its network's share of subscriptions (maxSubscriptionsPerNetwork ids of about 80 bytes) gets it
 *     within about three seconds with the defaults;
 *   - incoming messages larger than maxMessageBytes close the socket (1009);
 *   - a socket's send buffer is bounded by maxBackpressureBytes: a frame that would pass it is dropped by
 *     uWS for that socket only, and the socket is then closed (4003, "slow consumer"), so a slow reader
 *     never holds memory or delays the others (publish never waits for a socket);
 *   - a socket that sends nothing (not even PING) for idleSeconds is closed (4002).
 */
import { RateLimiter } from '../limits/rate-limit.ts';

export interface StreamLimits {
  maxBackpressureBytes: number;
  maxMessageBytes: number;
  idleSeconds: number;
  maxSocketsPerAddress: number;
  maxSubscriptionsPerSocket: number;
  /** Open sockets in all, both channels. */
  maxSockets: number;
  /** Subscriptions in all, both channels. */
  maxSubscriptions: number;
  maxMessagesPerSecond: number;
  dumpBooksPerAddress: number;
  dumpWindowSeconds: number;
  /** Open sockets per network (/24, /64), both channels; never less than maxSocketsPerAddress. */
  maxSocketsPerNetwork: number;
  /** Subscriptions over all of an address's sockets, both channels. */
  maxSubscriptionsPerAddress: number;
  /** Subscriptions over all of a network's sockets; never less than maxSubscriptionsPerAddress. */
  maxSubscriptionsPerNetwork: number;
  /** Books the dumps of a network's addresses may send per dumpWindowSeconds; never less than dumpBooksPerAddress. */
  dumpBooksPerNetwork: number;
  /** Bytes of dumps all addresses together may be sent per second. */
  dumpBytesPerSecond: number;
  /** Market sockets of one address that may be subscribed to the same asset. */
  maxAssetSocketsPerAddress: number;
  /** Market sockets of one network that may be subscribed to the same asset; never less than maxAssetSocketsPerAddress. */
  maxAssetSocketsPerNetwork: number;
  /** Bytes of messages all of a network's sockets may send per second, both channels; never less than maxMessageBytes. */
  messageBytesPerNetwork: number;
}

/** What a refusal was for: the label of the refusals counter, a closed set (the bounds in the header). */
export type RefusalReason =
  | 'shutdown'
  | 'connect_rate'
  | 'address_sockets'
  | 'network_sockets'
  | 'global_sockets'
  | 'rate'
  | 'dump_budget'
  | 'network_dumps'
  | 'global_dumps'
  | 'socket_subscriptions'
  | 'address_subscriptions'
  | 'network_subscriptions'
  | 'global_subscriptions'
  | 'address_asset_sockets'
  | 'network_asset_sockets'
  | 'network_bytes';

/** Who holds a share: a socket's client address and its network (domain/ip.ts addressPrefix). */
export interface Holder {
  ip: string;
  network: string;
}

const DUMP_BUCKET = ['dump'] as const;
const DUMP_NETWORK_BUCKET = ['dump-network'] as const;
const BYTES_BUCKET = ['message-bytes'] as const;

/** A count per key that forgets a key at zero (the per-address and per-network tallies). */
function tally(map: Map<string, number>, key: string, delta: number): void {
  const n = (map.get(key) ?? 0) + delta;
  if (n > 0) map.set(key, n);
  else map.delete(key);
}

/**
 * How many sockets of each holder (an address, a network) follow each asset. Nested so that a key is the
 * holder's string and the asset's canonical one (the books' token), never a new string per pair; a holder
 * leaves with its last follow.
 */
class Followers {
  private readonly byHolder = new Map<string, Map<string, number>>();

  /** The first of `assets` that `holder` already follows from `cap` sockets; undefined when all fit. */
  full(holder: string, assets: readonly string[], cap: number): string | undefined {
    const mine = this.byHolder.get(holder);
    if (mine === undefined) return undefined;
    for (const a of assets) if ((mine.get(a) ?? 0) >= cap) return a;
    return undefined;
  }

  /** The sockets of `holder` that follow `asset`. */
  count(holder: string, asset: string): number {
    return this.byHolder.get(holder)?.get(asset) ?? 0;
  }

  add(holder: string, assets: Iterable<string>, delta: 1 | -1): void {
    let mine = this.byHolder.get(holder);
    if (mine === undefined) {
      if (delta < 0) return;
      mine = new Map();
      this.byHolder.set(holder, mine);
    }
    for (const a of assets) tally(mine, a, delta);
    if (mine.size === 0) this.byHolder.delete(holder);
  }
}

export class FairShares {
  private readonly perAddress = new Map<string, number>();
  private readonly perNetwork = new Map<string, number>();
  /** Subscriptions held by open sockets per address and per network (fair shares of maxSubscriptions). */
  private readonly subsPerAddress = new Map<string, number>();
  private readonly subsPerNetwork = new Map<string, number>();
  /** Subscriptions held by open sockets, both channels (maxSubscriptions). */
  private subscriptions = 0;
  /** Market sockets on each asset, per address and per network (maxAssetSocketsPer*). */
  private readonly addressFollowers = new Followers();
  private readonly networkFollowers = new Followers();
  /** Bytes of dumps all addresses may still be sent now (a token bucket, refilled at dumpBytesPerSecond). */
  private dumpBytes: number;
  private dumpBytesAt = performance.now();
  /** Books dumped per client address over dumpWindowSeconds. */
  private readonly dumps: RateLimiter;
  /** Bytes of messages per network over one second (messageBytesPerNetwork). */
  private readonly messageBytes: RateLimiter;
  private readonly bytesCharge = [{ caller: '', buckets: BYTES_BUCKET }];

  constructor(private readonly limits: StreamLimits) {
    // Only addresses with a socket open, or one closed within the window, hold an entry; past maxCallers
    // newcomers share one (rate-limit.ts), which only ever refuses more.
    this.dumps = new RateLimiter({
      enabled: true,
      maxCallers: Math.max(1024, 4 * limits.maxSockets),
      buckets: {
        [DUMP_BUCKET[0]]: { limit: limits.dumpBooksPerAddress, windowSeconds: limits.dumpWindowSeconds },
        [DUMP_NETWORK_BUCKET[0]]: { limit: Math.max(limits.dumpBooksPerNetwork, limits.dumpBooksPerAddress), windowSeconds: limits.dumpWindowSeconds },
      },
    });
    this.dumpBytes = 2 * limits.dumpBytesPerSecond;
    this.messageBytes = new RateLimiter({
      enabled: true,
      maxCallers: Math.max(1024, 4 * limits.maxSockets),
      buckets: { [BYTES_BUCKET[0]]: { limit: this.networkMessageBytes, windowSeconds: 1 } },
    });
  }

  /**
   * Charges a message of `bytes` to its network's bytes; the refusal when they are spent (the message is then
   * not read), undefined when it may be read.
   */
  chargeMessage(h: Holder, bytes: number): string | undefined {
    const charge = this.bytesCharge;
    charge[0]!.caller = h.network;
    const v = this.messageBytes.takeAll(charge, bytes, performance.now());
    if (v.ok) return undefined;
    const kib = Math.round(this.networkMessageBytes / 1024);
    return `too many message bytes: a network (${h.network}) may send at most ${kib} KiB a second over all of its connections; retry in ${v.retryAfterSeconds} s`;
  }

  /** The refusal of one more socket for `h`, `open` sockets being open in all; undefined when it fits. */
  socketRefusal(h: Holder, open: number): { status: string; reason: RefusalReason; error: string } | undefined {
    if ((this.perAddress.get(h.ip) ?? 0) >= this.limits.maxSocketsPerAddress) return { status: '429 Too Many Requests', reason: 'address_sockets', error: 'too many connections from this address' };
    if ((this.perNetwork.get(h.network) ?? 0) >= this.networkSockets) return { status: '429 Too Many Requests', reason: 'network_sockets', error: `too many connections from this network (${h.network})` };
    if (open >= this.limits.maxSockets) return { status: '503 Service Unavailable', reason: 'global_sockets', error: `too many connections: the service holds at most ${this.limits.maxSockets}` };
    return undefined;
  }

  opened(h: Holder): void {
    tally(this.perAddress, h.ip, 1);
    tally(this.perNetwork, h.network, 1);
  }

  closed(h: Holder): void {
    tally(this.perAddress, h.ip, -1);
    tally(this.perNetwork, h.network, -1);
  }

  /**
   * The caps a subscription of `fresh` more must fit, on a socket holding `held`, per address, per network and
   * in all; the refusal, when it does not.
   */
  subscriptionRefusal(h: Holder, held: number, fresh: number, what: 'assets' | 'markets'): { reason: RefusalReason; error: string } | undefined {
    const { maxSubscriptionsPerSocket: perSocket, maxSubscriptionsPerAddress: perAddress, maxSubscriptions: all } = this.limits;
    if (held + fresh > perSocket) return { reason: 'socket_subscriptions', error: `too many subscriptions: at most ${perSocket} ${what} per connection` };
    if (fresh <= 0) return undefined;
    if ((this.subsPerAddress.get(h.ip) ?? 0) + fresh > perAddress) {
      return { reason: 'address_subscriptions', error: `too many subscriptions: an address holds at most ${perAddress} over all of its connections` };
    }
    if ((this.subsPerNetwork.get(h.network) ?? 0) + fresh > this.networkSubscriptions) {
      return { reason: 'network_subscriptions', error: `too many subscriptions: a network (${h.network}) holds at most ${this.networkSubscriptions} over all of its connections` };
    }
    if (this.subscriptions + fresh > all) return { reason: 'global_subscriptions', error: `too many subscriptions: the service holds at most ${all} in all` };
    return undefined;
  }

  /**
   * How many subscriptions more a socket of `h` holding `held` may take before a cap of subscriptionRefusal
   * refuses it (what the smallest of them has left).
   */
  subscriptionRoom(h: Holder, held: number): number {
    const { maxSubscriptionsPerSocket: perSocket, maxSubscriptionsPerAddress: perAddress, maxSubscriptions: all } = this.limits;
    return Math.min(perSocket - held, perAddress - (this.subsPerAddress.get(h.ip) ?? 0), this.networkSubscriptions - (this.subsPerNetwork.get(h.network) ?? 0), all - this.subscriptions);
  }

  /**
   * The per-address cap on followers of one asset, for one asset: followRefusal's first check. A caller that
   * meets its assets one by one can refuse at the first that is full, as followRefusal would name it.
   */
  addressFollowRefusal(h: Holder, asset: string): { reason: RefusalReason; error: string } | undefined {
    const perAddress = this.limits.maxAssetSocketsPerAddress;
    return this.addressFollowers.count(h.ip, asset) < perAddress ? undefined : addressFollowError(perAddress, asset);
  }

  /**
   * The caps on followers of one asset that a market socket of `h` subscribing to `assets` (none of which
   * it follows yet) must fit; the refusal, when it does not.
   */
  followRefusal(h: Holder, assets: readonly string[]): { reason: RefusalReason; error: string } | undefined {
    const perAddress = this.limits.maxAssetSocketsPerAddress;
    let full = this.addressFollowers.full(h.ip, assets, perAddress);
    if (full !== undefined) return addressFollowError(perAddress, full);
    const perNetwork = this.assetNetworkSockets;
    full = this.networkFollowers.full(h.network, assets, perNetwork);
    if (full !== undefined) {
      return { reason: 'network_asset_sockets', error: `too many subscriptions: a network (${h.network}) may follow an asset from at most ${perNetwork} connections, and follows ${full} from that many` };
    }
    return undefined;
  }

  /** A market socket of `h` follows `assets` (delta 1), or no longer does (-1). */
  followed(h: Holder, assets: Iterable<string>, delta: 1 | -1): void {
    this.addressFollowers.add(h.ip, assets, delta);
    this.networkFollowers.add(h.network, assets, delta);
  }

  /** `n` subscriptions more (fewer when negative) held by `h`. */
  added(h: Holder, n: number): void {
    this.subscriptions += n;
    tally(this.subsPerAddress, h.ip, n);
    tally(this.subsPerNetwork, h.network, n);
  }

  /**
   * Charges a dump of `books` to the address's and the network's book budgets and to the bytes all dumps may
   * take now; all or nothing. The refusal, when one of them lacks it.
   */
  chargeDump(h: Holder, books: readonly string[]): { reason: RefusalReason; why: string } | undefined {
    const { dumpBooksPerAddress: perAddress, dumpWindowSeconds: window, dumpBytesPerSecond: rate } = this.limits;
    const now = performance.now();
    this.dumpBytes = Math.min(2 * rate, this.dumpBytes + ((now - this.dumpBytesAt) / 1000) * rate);
    this.dumpBytesAt = now;
    let bytes = 0;
    for (const b of books) bytes += b.length;
    if (bytes > this.dumpBytes) {
      const mb = (n: number) => (n / 2 ** 20).toFixed(1);
      const why =
        bytes > 2 * rate
          ? `this dump is ${mb(bytes)} MiB of books, more than the ${mb(2 * rate)} MiB the service sends in two seconds to everyone; subscribe to fewer assets at a time`
          : `the service sends at most ${mb(rate)} MiB of books a second to everyone, this dump is ${mb(bytes)} MiB; retry in ${Math.max(1, Math.ceil((bytes - this.dumpBytes) / rate))} s`;
      return { reason: 'global_dumps', why };
    }
    const v = this.dumps.takeAll([{ caller: `a:${h.ip}`, buckets: DUMP_BUCKET }, { caller: `n:${h.network}`, buckets: DUMP_NETWORK_BUCKET }], books.length, now);
    if (!v.ok) {
      if (v.bucket === DUMP_NETWORK_BUCKET[0]) {
        return { reason: 'network_dumps', why: `at most ${v.limit} books per ${window} s per network (${h.network}), this dump is ${books.length}; retry in ${v.retryAfterSeconds} s` };
      }
      const why =
        books.length > perAddress
          ? `this dump is ${books.length} books, an address may receive at most ${perAddress} per ${window} s`
          : `at most ${perAddress} books per ${window} s per address, this dump is ${books.length}; retry in ${v.retryAfterSeconds} s`;
      return { reason: 'dump_budget', why };
    }
    this.dumpBytes -= bytes;
    return undefined;
  }

  /** A network's socket cap: never less than what one address may hold. */
  private get networkSockets(): number {
    return Math.max(this.limits.maxSocketsPerNetwork, this.limits.maxSocketsPerAddress);
  }

  /** A network's cap on the followers of one asset: never less than one address's. */
  private get assetNetworkSockets(): number {
    return Math.max(this.limits.maxAssetSocketsPerNetwork, this.limits.maxAssetSocketsPerAddress);
  }

  /** A network's bytes of messages a second: never less than one message of the largest size. */
  private get networkMessageBytes(): number {
    return Math.max(this.limits.messageBytesPerNetwork, this.limits.maxMessageBytes);
  }

  /** A network's subscription cap: never less than what one address may hold. */
  private get networkSubscriptions(): number {
    return Math.max(this.limits.maxSubscriptionsPerNetwork, this.limits.maxSubscriptionsPerAddress);
  }
}

function addressFollowError(perAddress: number, asset: string): { reason: RefusalReason; error: string } {
  return { reason: 'address_asset_sockets', error: `too many subscriptions: an address may follow an asset from at most ${perAddress} connections, and follows ${asset} from that many` };
}
