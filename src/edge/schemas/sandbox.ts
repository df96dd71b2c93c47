/**
 * Sandbox schemas (edge/sandbox/, routes/sandbox.ts): the fault scenario (the body of PUT
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
  },
  { additionalProperties: false },
);
export type FaultScenario = Static<typeof FaultScenario>;

export const FaultsState = Type.Object({
  scenario: Type.Union([FaultScenario, Type.Null()], { description: 'null: no fault is injected' }),
  source: Type.Union([Type.Literal('admin'), Type.Literal('file'), Type.Null()]),
  since: Iso,
  /** Requests the scenario has seen, and the faults it injected, since it was set. */
  requests: Type.Integer(),
  injected: Type.Object({
    latency: Type.Integer(),
    error500Applied: Type.Integer(),
    error500NotApplied: Type.Integer(),
    error503: Type.Integer(),
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
  durationSeconds: Type.Integer(),
  postOnlySeconds: Type.Integer(),
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
