/**
 * The sandbox's named snapshots, as the admin routes see them (routes/snapshots.ts): save the whole exchange
 * under a name, list, delete, export as a state file, and revert to one. The work is the node's: the
 * snapshots themselves are journal/checkpoints/named-snapshots.ts's, a revert stops the service behind its listener and
 * starts it again on the snapshot's store (src/node/revert.ts), which is why this is only an interface here. Part
 * of the test controls (test-controls.ts): absent where they are off.
 *
 * Every method answers in the wire's shapes and throws an ApiError (domain/errors.ts) for what a caller can
 * get wrong: an unknown name (404), a name taken or the bound reached (409), a state file that does not
 * check (400).
 */
import type { ExportSnapshotReply, RevertReply, SnapshotInfo, SnapshotList, TakeSnapshotBody } from '../schemas/snapshots.ts';

export interface SnapshotControl {
  /** Saves the exchange as committed now (or imports `state`), once it is whole on disk. */
  take(body: TakeSnapshotBody): Promise<SnapshotInfo>;
  list(): SnapshotList;
  remove(name: string): SnapshotInfo;
  /** Puts the exchange back to the snapshot; answers once a read answers the snapshot's state. */
  revert(name: string): Promise<RevertReply>;
  /** Writes the snapshot packed into one file on the service's machine. */
  exportTo(name: string, path: string): Promise<ExportSnapshotReply>;
}
