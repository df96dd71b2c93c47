/**
 * The engine's public types: what callers of the facade (engine.ts, which re-exports them) pass and get.
 * A module of their own so that the engine's parts can name them without importing the facade that wires
 * those parts.
 */
import type { CheckpointSource, VerifiedStore } from '../journal/recovery.ts';
import type { ReplicationLog } from '../journal/replication-log.ts';
import type { OrderSubmission, TradingMarket } from '../domain/events.ts';
import type { Store } from '../journal/env.ts';
import type { Timers } from '../runtime/clock.ts';
import type { Logger } from '../runtime/log.ts';
import type { BookFactoryRef, BookKind } from './shard/book-factory.ts';
import type { ShardThreads } from './shard/shard-threads.ts';

export interface EngineOptions {
  store: Store;
  shards: number;
  log: Logger;
  /**
   * Clock in ms: order checks, journal timestamps, the trade lifecycle. GTD expiry in the shards follows the
   * system clock unless `shardTime` and Engine.shardTime() say otherwise (the sandbox's test clock).
   */
  now?: () => number;
  /** The time the shards start on (the test clock as restored); default the system clock. */
  shardTime?: ShardTime;
  /**
   * Told the unix second a group of GTD orders expired at, right before the group is applied and journaled:
   * the test clock, frozen while an advance moves it, holds its time there so the expiry is journaled at it.
   */
  onExpiry?: (sec: number) => void;
  /** Which book the shards use (book-factory.ts): a kind, or a module URL and export (tests). Default 'production'. */
  bookFactory?: BookKind | BookFactoryRef;
  /** Command ring slots per shard (power of two). Default 4096. */
  commandRingSlots?: number;
  /** Result ring slots per shard (power of two). Default 16384. */
  resultRingSlots?: number;
  /** Commands per shard that may wait for ring space before new requests get PM_ERR_ENGINE_BUSY. Default 65536. */
  overflowLimit?: number;
  /**
   * Minimum ms between two snapshot publications of a market (readers who need newer ask for them: refreshSnapshot).
   * Default 20. `Infinity`: none but those asked for, for an engine whose books are read elsewhere (the
   * service reads the committed books, src/node/roles.ts).
   */
  snapshotIntervalMs?: number;
  /** Told each journal transaction's seconds from its puts to durable (/metrics: journal_commit_duration_seconds). */
  onCommit?: (seconds: number) => void;
  /**
   * Called right before each journal batch is issued, in the same turn, so what it puts joins the batch's
   * transaction (group-commit.ts, "Riders"): the projections' deferred view writes ride along.
   */
  beforeFlush?: () => void;
  /** How trades settle after their match (trade-lifecycle.ts). Default: every trade CONFIRMED at its commit. */
  trades?: TradeSettlement;
  /** Timers on the clock of `now` (the trade lifecycle's). Default: the system's. */
  timers?: Timers;
  /** ROLE=sequencer: each batch's rows are logged for the replicas (journal/replication-log.ts). */
  replicationLog?: ReplicationLog;
  /**
   * Where start-up finds checkpoints (journal/checkpoints/checkpoints.ts): the proof starts from the newest one that
   * proves the store. Absent: from the journal's first event, as before.
   */
  checkpoints?: CheckpointSource;
  /**
   * Matching threads that outlive this engine (shard-threads.ts; a sandbox revert hands them from one engine
   * to the next): the engine resets their shards at start and lets go of them at close instead of ending
   * them. They must fit its shards and book. Absent: the engine starts its own and ends them.
   */
  threads?: ShardThreads;
  /**
   * A proof of this very store that start-up made before (journal/recovery.ts verifyStore): a sandbox revert
   * to a snapshot this process already opened, whose bytes are the snapshot's again (node/revert.ts). Start-up
   * skips the proof and restores from it, from copies of what it changes: the proof stays as given, for the
   * next time. Give it only once a start restored it (its state hash checked then, startup.ts): that check
   * is not repeated.
   */
  proof?: VerifiedStore;
  /** Told the proof start-up made, which the engine then leaves as it is (it restores from copies): a later `proof`. */
  onProof?: (verified: VerifiedStore) => void;
}

/** The exchange's time as the shards follow it (protocol.ts OP_TIME): frozen at `atMs`, or the system clock plus `offsetMs`. */
export interface ShardTime {
  frozen: boolean;
  offsetMs: number;
  atMs: number;
}

/**
 * Trade settlement (trade-lifecycle.ts): delays of each move in ms of the engine's clock, the share of
 * trades that go through RETRYING and the share of those that end FAILED, and the seed that picks them.
 */
export interface TradeSettlement {
  minedDelayMs: number;
  confirmedDelayMs: number;
  retryingShare: number;
  retryDelayMs: number;
  failedShare: number;
  seed: number;
}

/** What deferred trades have delivered to a wallet and it cannot spend yet (MATCHED or RETRYING trades). */
export interface UnsettledView {
  usdc: number;
  tokens: Array<{ tokenId: string; pending: number }>;
}

/** A market as the engine registers it: the trading parameters of domain/events.ts. */
export type MarketInput = TradingMarket;

/** A submission that passed the edge's checks: the journal's OrderSubmission shape (domain/events.ts). */
export type PlaceInput = OrderSubmission;

export interface PlaceResponse {
  ok: boolean;
  /** 0, or the numeric result of an entry of domain/errors.ts. */
  code: number;
  vars?: Record<string, string | number>;
  orderId: string;
  status: 'live' | 'matched' | 'canceled';
  makingAmount: number;
  takingAmount: number;
  tradeIds: string[];
}

export interface CancelResponse {
  canceled: string[];
  notCanceled: Record<string, string>;
}

export interface OpResult {
  ok: boolean;
  code: number;
}

export interface BalancesView {
  usdc: { available: number; reserved: number };
  tokens: Array<{ tokenId: string; conditionId: string; outcome: 0 | 1; available: number; reserved: number }>;
}

export interface OpenOrdersFilter {
  id?: string;
  conditionId?: string;
  tokenId?: string;
}

export interface EngineStats {
  journalSeq: number;
  committedSeq: number;
  /** Distinct LMDB transactions (group commit: fewer than the commands they carry). */
  transactions: number;
  batches: number;
  ordersAccepted: number;
  fills: number;
  /** Times a command had to wait for command-ring space. */
  backpressureWaits: number;
  busyRejects: number;
  openOrders: number;
}
