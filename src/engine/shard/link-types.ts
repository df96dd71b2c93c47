/**
 * The shard link's contract with the engine's parts (shard-link.ts): what it holds in flight and hands on
 * (settlement.ts applies it, snapshots.ts counts it) and the options it takes. A module of its own, as
 * engine-types.ts is the facade's, so the parts name these without importing the link.
 */
import type { CancelResponse, EngineOptions } from '../engine-types.ts';
import type { OrderState } from '../orders/order-table.ts';
import type * as op from './protocol.ts';
import type { CanceledRecord, FillRecord, ResultRecord, SnapshotMessage } from './protocol.ts';

/** The cancels of one request: answered together when the last of them has its RESULT. */
export interface CancelBatch {
  /** Whose request: the orders' signer. */
  signer: string;
  canceled: string[];
  notCanceled: Record<string, string>;
  pending: number;
  resolve: (r: CancelResponse) => void;
}

/** A command sent to a shard and not yet answered. */
export type Inflight =
  | { op: typeof op.OP_PLACE; id: number; order: OrderState }
  | { op: typeof op.OP_CANCEL; id: number; order: OrderState; batch: CancelBatch }
  | { op: RequestOp; id: number; done: (r: ResultRecord) => void };

/** The engine's own commands (ShardLink.request), each answered to a `done`. */
export type RequestOp = typeof op.OP_CANCEL_ALL_MARKET | typeof op.OP_REGISTER_MARKET | typeof op.OP_SNAPSHOT | typeof op.OP_STOP | typeof op.OP_TIME | typeof op.OP_RESET;

export type ShardRecord = FillRecord | CanceledRecord;

/** Where what the shards send goes (engine.ts wires it). */
export interface ShardEvents {
  /** A snapshot publication of the shard (postMessage). */
  snapshots(shard: number, msg: SnapshotMessage): void;
  /** Every RESULT of the shard, before the group is applied. */
  result(shard: number, r: ResultRecord, group: readonly ShardRecord[]): void;
  /** The CANCELED records of a GTD expiry (closed by an OP_EXPIRE RESULT, whose id is the second they expired at). */
  expired(group: readonly ShardRecord[], r: ResultRecord): void;
  /** A command's RESULT with the records it caused. */
  answered(inf: Inflight, r: ResultRecord, group: readonly ShardRecord[]): void;
  /** A drain has consumed records: what they caused can be journaled. */
  drained(): void;
}

export type ShardLinkOptions = Pick<EngineOptions, 'shards' | 'bookFactory' | 'commandRingSlots' | 'resultRingSlots' | 'overflowLimit' | 'snapshotIntervalMs' | 'shardTime' | 'threads'>;
