/**
 * The sandbox's named snapshots (edge/sandbox/snapshots.ts) behind the admin token: POST /admin/snapshots
 * (save the exchange under a name, or import a state file), GET /admin/snapshots, DELETE
 * /admin/snapshots/{name}, POST /admin/snapshots/{name}/revert and /export. Mounted only where the test
 * controls run (config `sandbox.testControls`); elsewhere these paths are unknown routes.
 */
import type { AppContext } from '../context.ts';
import { bindRoutes, routeSpec, type AnyRoute, type RequestOf, type RouteSpec } from '../pipeline/route.ts';
import type { SnapshotControl } from '../sandbox/snapshots.ts';
import { ExportSnapshotBody, ExportSnapshotReply, RevertReply, SnapshotInfo, SnapshotList, SnapshotParams, StateHashReply, TakeSnapshotBody } from '../schemas/snapshots.ts';

export interface SnapshotDeps {
  readonly snapshots: SnapshotControl;
  readonly engine: Pick<AppContext['engine'], 'committedSeq' | 'stateHash'>;
}

/** The state hash of the exchange now (journal/recovery.ts hashState of the engine's state), with the journal seq. */
export function stateHashNow(d: SnapshotDeps) {
  return { seq: d.engine.committedSeq, stateHash: d.engine.stateHash() };
}

export function takeSnapshot(d: SnapshotDeps, { body }: RequestOf<undefined, typeof TakeSnapshotBody>) {
  return d.snapshots.take(body ?? {});
}

export function listSnapshots(d: SnapshotDeps) {
  return d.snapshots.list();
}

export function deleteSnapshot(d: SnapshotDeps, { params }: RequestOf<undefined, undefined, typeof SnapshotParams>) {
  return d.snapshots.remove(params.name);
}

export function revertToSnapshot(d: SnapshotDeps, { params }: RequestOf<undefined, undefined, typeof SnapshotParams>) {
  return d.snapshots.revert(params.name);
}

export function exportSnapshot(d: SnapshotDeps, { params, body }: RequestOf<undefined, typeof ExportSnapshotBody, typeof SnapshotParams>) {
  return d.snapshots.exportTo(params.name, body.path);
}

export const SNAPSHOT_ROUTES: RouteSpec<SnapshotDeps>[] = [
  routeSpec({
    method: 'POST',
    path: '/admin/snapshots',
    group: 'admin',
    auth: 'admin',
    summary: 'Save the whole exchange under a name (books, orders, balances, positions, trades, API keys, catalog, sandbox settings, the test clock), answered once it is whole on disk',
    description:
      'A copy of the store as committed when the request is handled, with a checkpoint at its journal seq (DATA_DIR/snapshots/<name>/). With `state`, a state file is imported instead (checked whole first). ' +
      'A name taken, or sandbox.snapshots.max listed, answers 409 and changes nothing.',
    body: TakeSnapshotBody,
    response: SnapshotInfo,
    handler: takeSnapshot,
  }),
  routeSpec({
    method: 'GET',
    path: '/admin/snapshots',
    group: 'admin',
    auth: 'admin',
    summary: 'The snapshots kept, oldest first, each with its journal seq, state hash, size and time',
    response: SnapshotList,
    handler: listSnapshots,
  }),
  routeSpec({
    method: 'DELETE',
    path: '/admin/snapshots/:name',
    group: 'admin',
    auth: 'admin',
    summary: 'Delete a snapshot (answers what it was)',
    params: SnapshotParams,
    response: SnapshotInfo,
    handler: deleteSnapshot,
  }),
  routeSpec({
    method: 'POST',
    path: '/admin/snapshots/:name/revert',
    group: 'admin',
    auth: 'admin',
    summary: 'Put the whole exchange back to a snapshot, in process, on the same port: answered once every read answers the snapshot\'s state',
    description:
      'Seen by clients as a restart: every WebSocket is closed with 1012 "service restart", and requests that arrive during the revert are answered 503 (PM_ERR_REVERTING, Retry-After: 1). ' +
      'Matching, projections, streams and timers stop; the store is replaced by the snapshot\'s copy and the service starts on it through its usual start-up; the test clock is where it stood in the snapshot. ' +
      'Snapshots taken later stay listed and can be reverted to in turn.',
    params: SnapshotParams,
    response: RevertReply,
    handler: revertToSnapshot,
  }),
  routeSpec({
    method: 'GET',
    path: '/admin/state-hash',
    group: 'admin',
    auth: 'admin',
    summary: 'The state hash of the exchange now (balances, open orders, market resolutions, trades settling) and the journal seq: equal to a snapshot\'s right after a revert to it',
    response: StateHashReply,
    handler: stateHashNow,
  }),
  routeSpec({
    method: 'POST',
    path: '/admin/snapshots/:name/export',
    group: 'admin',
    auth: 'admin',
    summary: 'Write a snapshot as a state file (one file, the same snapshot packed) on the service\'s machine, for `--state` or `startExchange({ state })`',
    params: SnapshotParams,
    body: ExportSnapshotBody,
    response: ExportSnapshotReply,
    handler: exportSnapshot,
  }),
];

export function snapshotRoutes(ctx: Pick<AppContext, 'controls' | 'engine'>): AnyRoute[] {
  const snapshots = ctx.controls?.snapshots;
  if (snapshots === undefined) return [];
  return bindRoutes<SnapshotDeps>({ snapshots, engine: ctx.engine }, SNAPSHOT_ROUTES);
}
