/**
 * Schemas of the sandbox's named snapshots (edge/sandbox/snapshots.ts, routes/snapshots.ts): take, list,
 * delete, revert, export. Bodies are strict (an unknown field is an error). A name is 1-64 of a-z, 0-9, _
 * and -, starting with a letter or digit (journal/checkpoints/named-snapshots.ts owns the rule; the pattern here says
 * it to clients and refuses a bad one before any handler runs).
 */
import { Type, type Static } from '@sinclair/typebox';
import { ClockState } from './test-controls.ts';

const NAME_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';
const Name = (description: string) => Type.String({ pattern: NAME_PATTERN, maxLength: 64, description });
const Path = (description: string) => Type.String({ minLength: 2, maxLength: 4096, pattern: '^/', description });

export const SnapshotParams = Type.Object({ name: Name('the snapshot\'s name') });

export const TakeSnapshotBody = Type.Object(
  {
    name: Type.Optional(Name('its name; default `snapshot-<n>`, n one past the highest such name listed')),
    state: Type.Optional(Path('instead of the exchange as it stands: a state file on the service\'s machine (a packed snapshot or a snapshot directory, absolute path), checked and kept under `name` (default: the name it was saved under)')),
  },
  { additionalProperties: false },
);
export type TakeSnapshotBody = Static<typeof TakeSnapshotBody>;

export const SnapshotInfo = Type.Object({
  name: Type.String(),
  seq: Type.Integer({ description: 'the journal seq it stands at: every event up to it is in it' }),
  stateHash: Type.String({ description: 'the state hash of its store at that seq (GET /admin/state-hash answers it after a revert to it)' }),
  bytes: Type.Integer({ description: 'bytes on disk (its store copy and checkpoint)' }),
  createdAt: Type.String({ description: 'when it was taken, ISO 8601, machine time' }),
});
export type SnapshotInfo = Static<typeof SnapshotInfo>;

export const SnapshotList = Type.Object({
  snapshots: Type.Array(SnapshotInfo, { description: 'oldest first' }),
  max: Type.Integer({ description: 'how many may be kept (sandbox.snapshots.max)' }),
});
export type SnapshotList = Static<typeof SnapshotList>;

export const RevertReply = Type.Object({
  snapshot: SnapshotInfo,
  /** What the revert left behind: where the journal and the state stood before it. */
  from: Type.Object({ seq: Type.Integer(), stateHash: Type.String() }, { description: 'where the exchange stood before the revert (recorded in DATA_DIR/snapshots/reverts.jsonl)' }),
  clock: Type.Optional(ClockState),
  tookMs: Type.Number({ description: 'how long the service took to stop and start again on the snapshot' }),
  phases: Type.Object(
    {
      drainMs: Type.Integer({ description: 'the requests in flight finishing' }),
      stopMs: Type.Integer({ description: 'the service closing (sockets, timers, matching threads, projections, store)' }),
      copyMs: Type.Integer({ description: 'the snapshot\'s store copied in' }),
      startMs: Type.Integer({ description: 'the service starting on it (start-up\'s steps)' }),
    },
    { description: 'where the time went' },
  ),
});
export type RevertReply = Static<typeof RevertReply>;

export const ExportSnapshotBody = Type.Object(
  { path: Path('where to write the packed snapshot on the service\'s machine (absolute path; an existing file is replaced)') },
  { additionalProperties: false },
);
export type ExportSnapshotBody = Static<typeof ExportSnapshotBody>;

export const ExportSnapshotReply = Type.Object({ snapshot: SnapshotInfo, path: Type.String(), bytes: Type.Integer({ description: 'the file\'s size' }) });
export type ExportSnapshotReply = Static<typeof ExportSnapshotReply>;

export const StateHashReply = Type.Object({
  seq: Type.Integer({ description: 'the journal seq committed' }),
  stateHash: Type.String({ description: 'SHA-256 of the canonical state (journal/recovery.ts hashState): what a snapshot, a checkpoint and a restart prove to' }),
});
