/**
 * Sandbox schemas (edge/sandbox/, routes/sandbox.ts, edge/ws/socket-faults.ts): the fault scenario (the body of PUT
 * /admin/sandbox/faults and the content of the file `sandbox.faultsFile` names), the admin views of the
 * maintenance windows, faults, closed-only wallets and trade settlement, and GET /auth/ban-status/closed-only.
 * Unlike the catalog import, these bodies are strict: an unknown field is an error, since a misspelt fault
 * would otherwise silently not be injected.
 */
import { Type, type Static } from '@sinclair/typebox';

const Share = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });
const LatencyMs = (description: string) => Type.Integer({ minimum: 0, maximum: 60_000, description });
const LatencyShare = Type.Optional(Share('share of order acknowledgements delayed (default 1: all)'));
const Iso = Type.Union([Type.String({ description: 'ISO 8601' }), Type.Null()]);

export const AckLatency = Type.Union(
  [
    Type.Object({ distribution: Type.Literal('fixed'), ms: LatencyMs('added to each acknowledgement'), share: LatencyShare }, { additionalProperties: false }),
    Type.Object(
      { distribution: Type.Literal('uniform'), minMs: LatencyMs('least delay'), maxMs: LatencyMs('largest delay'), share: LatencyShare },
      { additionalProperties: false },
    ),
    Type.Object(
      { distribution: Type.Literal('exponential'), meanMs: LatencyMs('mean delay'), maxMs: LatencyMs('delays are cut at this'), share: LatencyShare },
      { additionalProperties: false },
    ),
  ],
  { description: 'latency added to the answers of order routes, after the order was applied' },
);
export type AckLatency = Static<typeof AckLatency>;

const DelayMs = (description: string) => Type.Integer({ minimum: 0, maximum: 86_400_000, description });

/** A time drawn per socket: fixed, uniform, or exponential (a Poisson rate of one per `meanMs`), in ms. */
export const SocketDelay = Type.Union(
  [
    Type.Object({ distribution: Type.Literal('fixed'), ms: DelayMs('the time') }, { additionalProperties: false }),
    Type.Object({ distribution: Type.Literal('uniform'), minMs: DelayMs('shortest'), maxMs: DelayMs('longest') }, { additionalProperties: false }),
    Type.Object({ distribution: Type.Literal('exponential'), meanMs: DelayMs('mean: one event per meanMs'), maxMs: DelayMs('draws are cut at this') }, { additionalProperties: false }),
  ],
  { description: 'a time drawn per socket under the seed' },
);
export type SocketDelay = Static<typeof SocketDelay>;

const StreamChannels = Type.Optional(
  Type.Array(Type.Union([Type.Literal('market'), Type.Literal('user')]), { minItems: 1, uniqueItems: true, description: 'channels whose sockets it applies to (default both)' }),
);

/** Faults of the WebSocket channels (edge/ws/socket-faults.ts executes them; faults.ts draws them). */
export const StreamFaults = Type.Object(
  {
    drop: Type.Optional(
      Type.Object(
        {
          share: Share('share of sockets the server closes'),
          channels: StreamChannels,
          afterMs: SocketDelay,
          how: Type.Optional(
            Type.Union([Type.Literal('abrupt'), Type.Literal('going-away')], {
              description: 'abrupt (default): the TCP connection ends without a close frame, the client sees 1006; going-away: a close frame 1001 "going away"',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    stall: Type.Optional(
      Type.Object(
        {
          share: Share('share of sockets that stall'),
          channels: StreamChannels,
          afterMs: SocketDelay,
          forMs: SocketDelay,
          repeat: Type.Optional(Type.Boolean({ description: 'after it resumes, the socket stalls again after a new afterMs draw (default false: once)' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, description: 'stalled or dropped WebSocket sockets of /ws/market and /ws/user' },
);
export type StreamFaults = Static<typeof StreamFaults>;

export const FaultScenario = Type.Object(
  {
    seed: Type.Optional(Type.Integer({ description: 'draws of every fault (default 1): the same seed and request sequence, the same faults' })),
    ackLatency: Type.Optional(AckLatency),
    error500: Type.Optional(
      Type.Object(
        {
          share: Share('share of order requests answered 500 {"error":"internal error"}'),
          appliedShare: Share('of those, the share answered 500 after the order (or cancel) was applied; the rest are not applied'),
        },
        { additionalProperties: false },
      ),
    ),
    error503: Type.Optional(
      Type.Object({ share: Share('share of order-book API requests (order routes, books, prices, /data/*) answered 503, not applied') }, { additionalProperties: false }),
    ),
    streams: Type.Optional(StreamFaults),
  },
  { additionalProperties: false },
);
export type FaultScenario = Static<typeof FaultScenario>;

export const FaultsState = Type.Object({
  scenario: Type.Union([FaultScenario, Type.Null()], { description: 'null: no fault is injected' }),
  source: Type.Union([Type.Literal('admin'), Type.Literal('file'), Type.Null()]),
  since: Iso,
  /** Requests and sockets the scenario has seen, and the faults it injected, since it was set. */
  requests: Type.Integer(),
  sockets: Type.Object({ market: Type.Integer(), user: Type.Integer() }, { description: 'sockets of each channel numbered by the scenario (open when it was set, or opened since)' }),
  injected: Type.Object({
    latency: Type.Integer(),
    error500Applied: Type.Integer(),
    error500NotApplied: Type.Integer(),
    error503: Type.Integer(),
    streamDrop: Type.Integer({ description: 'sockets closed by the drop fault' }),
    streamStall: Type.Integer({ description: 'stalls begun (a repeating stall counts each time)' }),
  }),
});
export type FaultsState = Static<typeof FaultsState>;

const Weekday = Type.Union(['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'].map((d) => Type.Literal(d)));

export const MaintenanceState = Type.Object({
  phase: Type.Union([Type.Literal('open'), Type.Literal('maintenance'), Type.Literal('post-only')], {
    description: 'maintenance: order routes answer 425; post-only: orders without postOnly are refused (503)',
  }),
  until: Type.Union([Type.String({ description: 'ISO 8601: when the phase ends' }), Type.Null()]),
  weekly: Type.Array(Type.Object({ day: Weekday, at: Type.String({ description: 'HH:MM UTC' }) })),
  durationSeconds: Type.Integer({ description: "the window's length: the admin window's while it or its post-only period lasts (what POST set), else the schedule's" }),
  postOnlySeconds: Type.Integer({ description: 'the post-only period after it, likewise' }),
  nextScheduled: Type.Union([Type.String({ description: 'ISO 8601 start of the next scheduled window' }), Type.Null()]),
});
export type MaintenanceState = Static<typeof MaintenanceState>;

export const StartMaintenanceBody = Type.Object(
  {
    durationSeconds: Type.Integer({ minimum: 1, maximum: 86_400, description: 'length of the window, from now' }),
    postOnlySeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400, description: 'post-only period after it (default: the configured one)' })),
  },
  { additionalProperties: false },
);
export type StartMaintenanceBody = Static<typeof StartMaintenanceBody>;

const Status = Type.Integer({ minimum: 0 });
export const TradeSettlementState = Type.Object({
  minedDelayMs: Type.Integer(),
  confirmedDelayMs: Type.Integer(),
  retryingShare: Type.Number(),
  retryDelayMs: Type.Integer(),
  failedShare: Type.Number(),
  seed: Type.Integer(),
  settling: Type.Object({ MATCHED: Status, RETRYING: Status, MINED: Status }, { description: 'trades not settled for good yet, by status' }),
});

export const SandboxState = Type.Object({
  maintenance: MaintenanceState,
  faults: FaultsState,
  closedOnly: Type.Array(Type.String(), { description: 'wallets in closed-only mode' }),
  trades: TradeSettlementState,
});
export type SandboxState = Static<typeof SandboxState>;

export const ClosedOnlyBody = Type.Object({ closedOnly: Type.Boolean() }, { additionalProperties: false });
export const ClosedOnlyReply = Type.Object({ address: Type.String(), closedOnly: Type.Boolean() });

/** GET /auth/ban-status/closed-only, as the platform's client (getClosedOnlyMode) reads it. */
export const BanStatus = Type.Object({ closed_only: Type.Boolean() });
