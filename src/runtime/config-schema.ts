/**
 * The configuration's shape (ConfigSchema): every key, its type, its bounds and its description, the
 * named profiles (PROFILES) and the files each applies. What the layers are and how they are read, merged
 * and checked against this is config.ts's; every other module reads the result through config.ts's
 * `Config`. Imports only domain/ (the rate-limit buckets, the address lists), as runtime/ may.
 */
import { Type } from '@sinclair/typebox';
import { MAX_BUCKET_LIMIT } from '../domain/rate-limits.ts';

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
const Domain = Type.Object(
  { name: Type.String({ minLength: 1 }), version: Type.String({ minLength: 1 }), verifyingContract: Address },
  { additionalProperties: false },
);
const Bytes32 = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' });
/** A wallet factory: its address and the keccak256 of the wallets' creation code (edge/funders.ts). */
const WalletFactory = Type.Object(
  {
    factory: Address,
    initCodeHash: Bytes32,
  },
  { additionalProperties: false },
);
const Share = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });
const Ms = (description: string) => Type.Integer({ minimum: 0, maximum: 86_400_000, description });
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

/**
 * The named profiles and the files of config/ that make each, applied in order over default.json. `spec`
 * is the interface specification's own behaviour (nothing changes); `clob-v2` serves what the platform's
 * official V2 client expects on the platform's test chain (80002, a chain the client knows); `platform` is
 * the same signing for the platform's mainnet (137): orders signed for it are valid on the real exchange.
 */
export const PROFILES = {
  spec: [],
  'clob-v2': ['clob-v2-compat.json'],
  platform: ['clob-v2-compat.json', 'platform-domains.json'],
} as const satisfies Record<string, readonly string[]>;
export type ProfileName = keyof typeof PROFILES;
export const PROFILE_NAMES = Object.keys(PROFILES) as ProfileName[];
export const isProfile = (v: unknown): v is ProfileName => typeof v === 'string' && Object.hasOwn(PROFILES, v);

/** The sandbox's behaviour (engine/trade-lifecycle.ts, edge/sandbox/): all off by default. */
const Sandbox = Type.Object(
  {
    trades: Type.Object(
      {
        minedDelayMs: Ms('from the match to MINED (what a trade delivers becomes spendable); 0 = at once'),
        confirmedDelayMs: Ms('from MINED to CONFIRMED'),
        retryingShare: Share('share of trades that go MATCHED -> RETRYING instead of MINED'),
        retryDelayMs: Ms('from RETRYING to MINED or FAILED'),
        failedShare: Share('share of the RETRYING trades that end FAILED (reversed)'),
        seed: Type.Integer({ description: 'picks which trades retry and fail (the same seed and journal: the same trades)' }),
      },
      { additionalProperties: false },
    ),
    maintenance: Type.Object(
      {
        weekly: Type.Array(
          Type.Object(
            {
              day: Type.Union(WEEKDAYS.map((d) => Type.Literal(d))),
              at: Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, UTC' }),
            },
            { additionalProperties: false },
          ),
          { description: 'weekly maintenance windows (the platform restarts its engine on Tuesdays at 7:00 ET, 11:00 or 12:00 UTC)' },
        ),
        durationSeconds: Type.Integer({ minimum: 1, maximum: 86_400, description: 'length of a scheduled window (order routes answer 425)' }),
        postOnlySeconds: Type.Integer({ minimum: 0, maximum: 86_400, description: 'after each window: orders without postOnly are refused' }),
      },
      { additionalProperties: false },
    ),
    faultsFile: Type.String({ description: 'fault scenario loaded at start (JSON, the body of PUT /admin/sandbox/faults); empty = none' }),
    testControls: Type.Union([Type.Literal('auto'), Type.Literal('on'), Type.Literal('off')], {
      description:
        'the admin API\'s controls for a bot\'s test suite (the test clock, admin-made orders and books, scenarios): on, off, or auto = on in ROLE=single and off in every clustered role; ' +
        'on a clustered node they run only where the engine runs (the sequencer); they need ADMIN_TOKEN like every admin route',
    }),
    snapshots: Type.Object(
      { max: Type.Integer({ minimum: 1, maximum: 1000, description: 'named snapshots kept in DATA_DIR/snapshots (POST /admin/snapshots refuses one more until one is deleted)' }) },
      { additionalProperties: false },
    ),
    state: Type.String({
      description: 'a state file (a packed snapshot, .pmsnap, or a snapshot directory) the exchange starts from when DATA_DIR holds no store yet; it is also kept as a named snapshot. Empty = none. Needs the test controls',
    }),
  },
  { additionalProperties: false },
);

const Bucket = Type.Object(
  { limit: Type.Integer({ minimum: 1, maximum: MAX_BUCKET_LIMIT }), windowSeconds: Type.Integer({ minimum: 1, maximum: 86400 }) },
  { additionalProperties: false },
);

export const ConfigSchema = Type.Object(
  {
    profile: Type.Union(
      PROFILE_NAMES.map((p) => Type.Literal(p)),
      { description: 'the named profile the configuration started from (PROFILES); set by PROFILE or by a profile\'s own file, reported by GET /exchange-info' },
    ),
    http: Type.Object(
      {
        host: Type.String({ minLength: 1 }),
        port: Type.Integer({ minimum: 0, maximum: 65535 }),
        maxBodyBytes: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024 }),
        maxHeaderBytes: Type.Integer({
          minimum: 4096,
          maximum: 1024 * 1024,
          description: 'bound of a request head (request line and headers); larger heads get the parser\'s 431',
        }),
        trustedProxies: Type.Array(Type.String({ minLength: 1 })),
      },
      { additionalProperties: false },
    ),
    dataDir: Type.String({ minLength: 1 }),
    demo: Type.Union([Type.Literal('live'), Type.Literal('static'), Type.Literal('off')], {
      description: 'what an empty store starts with: live = the demo catalog, a replayed week of trading and live traders; static = the catalog and funded demo wallets; off = nothing',
    }),
    adminToken: Type.String(),
    log: Type.Object(
      { level: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))) },
      { additionalProperties: false },
    ),
    engine: Type.Object({ shards: Type.Integer({ minimum: 1, maximum: 64 }) }, { additionalProperties: false }),
    auth: Type.Object(
      {
        maxClockSkewSeconds: Type.Integer({ minimum: 1, maximum: 3600 }),
        chainId: Type.Integer({ minimum: 1 }),
        authDomain: Type.Object({ name: Type.String({ minLength: 1 }), version: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
        orderDomain: Domain,
        negRiskOrderDomain: Domain,
        walletFactories: Type.Object(
          {
            proxy: WalletFactory,
            safe: WalletFactory,
          },
          {
            additionalProperties: false,
            description:
              'the factories whose CREATE2 address derived from an order\'s signer is the maker of a signatureType 1 (proxy) or 2 (Safe) order; default: the platform\'s (edge/funders.ts)',
          },
        ),
        masterKey: Type.String({ description: 'hex or base64 secret from which API credentials derive; empty = generated into DATA_DIR' }),
        signatureThreads: Type.Integer({ minimum: 0, maximum: 256, description: 'signature-recovery worker threads; 0 = os.availableParallelism()' }),
        inlineSignatures: Type.Object(
          {
            maxOrders: Type.Integer({ minimum: 0, maximum: 64, description: 'most orders of one event-loop turn verified on the receiving thread while the signature pool is idle; 0 = always the pool' }),
            belowUtilization: Type.Number({ minimum: 0, maximum: 1, description: "only while that thread's event loop was busy less than this share of its last window (1 = whatever its load)" }),
          },
          { additionalProperties: false },
        ),
        maxKeysPerWallet: Type.Integer({ minimum: 1, maximum: 1000, description: 'usable (unrevoked) API keys a wallet may hold at once' }),
        explainRefusals: Type.Boolean({ description: 'refusals of the auth and order checks carry an X-Refusal-Reason header and are listed by GET /refusals; false = the platform\'s silence' }),
        reasonInBody: Type.Boolean({
          description:
            'a refusal\'s reason is also appended to the body\'s error text (`error`, or `errorMsg` of a POST /orders element), where SDKs that drop headers show it; ' +
            'status and body shape stay the platform\'s (needs explainRefusals)',
        }),
      },
      { additionalProperties: false },
    ),
    dataApi: Type.Object({ ipAllowlist: Type.Array(Type.String({ minLength: 1 })) }, { additionalProperties: false }),
    rateLimits: Type.Object(
      {
        enabled: Type.Boolean(),
        maxCallers: Type.Integer({ minimum: 16 }),
        buckets: Type.Record(Type.String(), Bucket),
        bodyBytes: Type.Optional(
          Type.Object(
            {
              perAddress: Type.Optional(Bucket),
              perKey: Type.Optional(Bucket),
            },
            { additionalProperties: false, description: 'body bytes a client address (every body) and an API key (signed routes) may make the edge read per window; unset = the defaults (edge/rate-limit-bytes.ts)' },
          ),
        ),
      },
      { additionalProperties: false },
    ),
    shutdown: Type.Object({ graceMs: Type.Integer({ minimum: 0, maximum: 600_000 }) }, { additionalProperties: false }),
    sandbox: Sandbox,
    console: Type.Object(
      {
        enabled: Type.Boolean({ description: 'serve the web console under /console' }),
        dir: Type.String({ description: 'the built console (npm run build:console); empty = this package\'s dist/console' }),
      },
      { additionalProperties: false },
    ),
    stream: Type.Object(
      {
        maxBackpressureBytes: Type.Integer({ minimum: 16 * 1024, maximum: 256 * 1024 * 1024, description: 'send-buffer bound per WebSocket; a socket past it is closed (slow consumer)' }),
        maxMessageBytes: Type.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024, description: 'largest message a client may send; larger ones close the socket' }),
        idleSeconds: Type.Number({ exclusiveMinimum: 0, maximum: 86_400, description: 'a socket that sends nothing (not even PING) for this long is closed' }),
        maxSocketsPerAddress: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'open WebSockets per client address' }),
        maxSubscriptionsPerSocket: Type.Integer({ minimum: 1, maximum: 100_000, description: 'assets (market channel) or markets (user channel) per socket' }),
        maxSockets: Type.Integer({ minimum: 1, maximum: 10_000_000, description: 'open WebSockets in all, both channels; an upgrade past it is answered 503' }),
        maxSubscriptions: Type.Integer({ minimum: 1, maximum: 100_000_000, description: 'subscriptions in all, both channels; a subscribe message past it is refused whole' }),
        maxMessagesPerSecond: Type.Integer({
          minimum: 1,
          maximum: 1_000_000,
          description: 'messages a socket may send per second (a token bucket: bursts of this many), PING included; past it a message is refused, and a socket with more than twice this many refused within 5 s is closed (4008)',
        }),
        dumpBooksPerAddress: Type.Integer({ minimum: 1, maximum: 4_294_967_295, description: 'books the initial dumps of one client address (all its sockets) may send per dumpWindowSeconds; a subscription past it is refused whole' }),
        dumpWindowSeconds: Type.Number({ minimum: 1, maximum: 3600, description: 'the window of dumpBooksPerAddress and dumpBooksPerNetwork' }),
        maxSocketsPerNetwork: Type.Integer({ minimum: 1, maximum: 10_000_000, description: "open WebSockets per network (an address's /24, or /64 for IPv6), both channels; at least maxSocketsPerAddress" }),
        maxSubscriptionsPerAddress: Type.Integer({ minimum: 1, maximum: 100_000_000, description: "subscriptions over all of an address's sockets, both channels; a subscribe message past it is refused whole" }),
        maxSubscriptionsPerNetwork: Type.Integer({ minimum: 1, maximum: 100_000_000, description: "subscriptions over all of a network's sockets (/24, /64); at least maxSubscriptionsPerAddress" }),
        dumpBooksPerNetwork: Type.Integer({ minimum: 1, maximum: 4_294_967_295, description: "books the initial dumps of a network's addresses may send per dumpWindowSeconds; at least dumpBooksPerAddress" }),
        dumpBytesPerSecond: Type.Integer({ minimum: 65_536, maximum: 4_294_967_295, description: 'bytes of initial dumps the service sends per second to all addresses together (a bucket of two seconds); a subscription whose dump does not fit is refused whole' }),
        maxAssetSocketsPerAddress: Type.Integer({ minimum: 1, maximum: 1_000_000, description: "market sockets of one client address that may be subscribed to the same asset; a subscribe message past it is refused whole" }),
        maxAssetSocketsPerNetwork: Type.Integer({ minimum: 1, maximum: 10_000_000, description: "market sockets of one network (/24, /64) that may be subscribed to the same asset; at least maxAssetSocketsPerAddress" }),
        messageBytesPerNetwork: Type.Integer({ minimum: 1024, maximum: 1_073_741_824, description: "bytes of messages all of a network's sockets (/24, /64) may send per second, both channels, PING free (a window of one second); a message past it is not read and is refused; at least maxMessageBytes" }),
        bookIntervalMs: Type.Integer({ minimum: 0, maximum: 60_000, description: 'least time between two post-trade `book` events of a token; 0 = after every commit with a trade' }),
      },
      { additionalProperties: false },
    ),
    heartbeats: Type.Object(
      {
        timeoutSeconds: Type.Integer({
          minimum: 1,
          maximum: 3600,
          description: 'a wallet that started heartbeats (POST /v1/heartbeats) and sends none for this long has all its open orders canceled',
        }),
      },
      { additionalProperties: false },
    ),
    rewards: Type.Object(
      {
        sampleSeconds: Type.Integer({
          minimum: 1,
          maximum: 3600,
          description: 'how often the scoring orders of the markets with liquidity rewards are sampled (earnings accrue per sample)',
        }),
      },
      { additionalProperties: false },
    ),
    cluster: Type.Object(
      {
        role: Type.Union([Type.Literal('single'), Type.Literal('sequencer'), Type.Literal('replica'), Type.Literal('gateway'), Type.Literal('standby')], {
          description:
            'single = one process, no NATS; sequencer = the writer, publishing its journal to NATS JetStream; replica = serves reads from that stream; ' +
            'gateway = a replica that also takes every write, verifies orders\' signatures and forwards the writes to the sequencer over NATS; ' +
            'standby = a replica that keeps the replication log and takes over as sequencer when the lease is free (needs cluster.failover)',
        }),
        natsUrl: Type.String({ minLength: 1, description: 'the NATS server (JetStream enabled) of the sequencer and replicas' }),
        natsUser: Type.String({ description: 'the NATS user this node connects as (empty: none); its permissions say what it may publish (docs/cluster.md, "Running more than one node")' }),
        natsPassword: Type.String({ description: 'that user\'s password' }),
        natsCaFile: Type.String({
          description:
            'a PEM file of the CA that signed the NATS server\'s certificate (tools/nats-certs.ts writes one): trusted for this connection only, and TLS is then required (empty: the system\'s CAs and NODE_EXTRA_CA_CERTS; a tls:// natsUrl requires TLS either way)',
        }),
        insecure: Type.Boolean({
          description: 'tests only: a clustered node may connect to NATS with no credentials (refused otherwise; logged loudly at start). NATS is not a trust boundary either way: every message is authenticated',
        }),
        sequencerUrl: Type.String({ description: 'the sequencer\'s public URL, named by a replica when it refuses a trading or admin request' }),
        stream: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'JetStream stream holding the journal batches' }),
        replicas: Type.Integer({ minimum: 1, maximum: 5, description: 'JetStream replication factor of the stream (1 on one server, 3 on a cluster)' }),
        outboxBatches: Type.Integer({ minimum: 1, maximum: 10_000_000, description: 'batches the sequencer holds for NATS; past it they are re-read from LMDB later' }),
        forwardTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000, description: 'ROLE=gateway: how long a forwarded request waits for the sequencer before it is answered 503 with Retry-After' }),
        followerStart: Type.Union([Type.Literal('auto'), Type.Literal('store'), Type.Literal('state')], {
          description:
            'ROLE=replica, gateway, standby: what a new or lagging store installs. state = the sequencer\'s state alone, in the same time at any age; the reads of history from before it go to the sequencer until the backfill (cluster.backfill) has copied the history in, and a standby may not become the sequencer until then (docs/decisions/history.md); ' +
            'store = its whole store (history included; its time grows with the history); auto (default) = state for a replica or gateway, store for a standby (eligible for the lease sooner)',
        }),
        backfill: Type.Boolean({
          description:
            'ROLE=replica, gateway started from a state snapshot: copy the history in, in the background, from the sequencer\'s newest whole-store snapshot at or above its history floor, then answer the reads of history from its own store (replication/history-backfill.ts); false: keep sending them to the sequencer. A standby always copies it (it must hold the history to become the sequencer)',
        }),
        backfillRetrySeconds: Type.Integer({ minimum: 1, maximum: 86_400, description: 'how long a backfill that found no whole-store snapshot at or above its floor, or failed, waits before it tries again' }),
        failover: Type.Object(
          {
            enabled: Type.Boolean({
              description:
                'the sequencer holds a lease in NATS KV and a standby takes over when it lapses; the sequencer acknowledges a batch only once the stream confirmed it',
            }),
            nodeUrl: Type.String({ description: 'this node\'s public URL, written into the lease when it holds it (what replicas name in a 421)' }),
            leaseMs: Type.Integer({ minimum: 300, maximum: 600_000, description: 'the lease\'s time to live: a sequencer that stops renewing is replaced after it' }),
            renewMs: Type.Integer({ minimum: 50, maximum: 60_000, description: 'how often the holder renews the lease (it stops writing after leaseMs - renewMs without a renewal)' }),
            pollMs: Type.Integer({ minimum: 20, maximum: 60_000, description: 'how often a standby (and a replica, for its 421) reads the lease' }),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
    history: Type.Object(
      {
        checkpoints: Type.Object(
          {
            everyEvents: Type.Integer({
              minimum: 1,
              maximum: 1_000_000_000,
              description: 'a checkpoint once this many journal events were committed since the last one: what a start after a crash replays at most',
            }),
            everySeconds: Type.Integer({ minimum: 1, maximum: 86_400 * 7, description: 'and at least this often while the journal moves' }),
            keep: Type.Integer({ minimum: 1, maximum: 1000, description: 'automatic checkpoints kept (named ones are kept until removed)' }),
            onShutdown: Type.Boolean({ description: 'an orderly stop writes a checkpoint at its last journal seq, so the next start replays nothing' }),
          },
          { additionalProperties: false },
        ),
        snapshots: Type.Object(
          {
            everySeconds: Type.Integer({
              minimum: 1,
              maximum: 86_400 * 7,
              description: 'ROLE=sequencer: how often it ships a snapshot of its store for new and lagging followers (NATS object store), while the journal moves',
            }),
            keep: Type.Integer({ minimum: 1, maximum: 100, description: 'snapshots kept; the stream is purged below the oldest one kept' }),
          },
          { additionalProperties: false },
        ),
        journal: Type.Object(
          {
            retention: Type.Union([Type.Literal('archive'), Type.Literal('prune'), Type.Literal('keep')], {
              description:
                'the journal below the oldest checkpoint kept: archive = copied to gzip files then removed; prune = removed; keep = kept. Order events and fills stay either way (the API reads them)',
            }),
            archiveDir: Type.String({ description: 'where archive files go; empty = DATA_DIR/archive' }),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
    compat: Type.Object(
      {
        shapes: Type.Union([Type.Literal('spec'), Type.Literal('clob-client-v2')], {
          description:
            'where the spec and the platform client\'s types disagree on a response: spec = the spec\'s shape; clob-client-v2 = the client\'s ' +
            '(GET /data/order/{id} and /data/orders as its OpenOrder, GET /builder/trades as its cursor envelope of BuilderTrade)',
        }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
