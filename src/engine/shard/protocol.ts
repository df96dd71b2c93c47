/**
 * The cross-thread protocol between the sequencer (main thread) and the shard workers, in one file:
 * record layouts, opcodes and field indices as named constants, and one encode and one decode function per
 * record. Nothing else indexes ring words.
 *
 * Two rings per shard (ring.ts):
 *   command ring  main -> worker   slot = CMD_WORDS Float64 words
 *   result ring   worker -> main   slot = RES_WORDS Float64 words
 *
 * Every command produces exactly one RESULT record, after the FILL / CANCELED records it caused, so the
 * records of one command form a group that ends with its RESULT. The worker writes a group without
 * interleaving and publishes it whole when it fits in the ring (larger groups are published in pieces; the
 * main thread buffers until the RESULT, so a command's effects are always applied and journaled together).
 * GTD expiry is reported the same way: CANCELED records closed by a RESULT whose `cmdOp` is OP_EXPIRE, which
 * answers no command (the shard's timer found them due, or an OP_TIME expired them: then its groups come
 * before its own RESULT). Results of one shard arrive in command order, so the main thread matches every
 * other RESULT to the oldest command it has in flight on that shard (`id` double-checks it).
 *
 * Strings never go through a ring. A market gets a numeric id when it is registered; its condition id,
 * token ids and flags travel on a MessagePort (MarketMeta) that the worker reads synchronously with
 * receiveMessageOnPort when it meets the REGISTER record, so ring order decides when a market exists.
 * Snapshots and fatal errors go worker -> main by postMessage (WorkerMessage).
 */

import type { MessagePort } from 'node:worker_threads';
import type { Cancel, CancelReason, Fill, FillKind, Outcome, PlaceCommand, Side, Tif } from '../book/api.ts';

export const CMD_WORDS = 16;
export const RES_WORDS = 20;

/** Field 0 of every record. */
export const F_OP = 0;

// ---- command opcodes ---------------------------------------------------------------------------------
export const OP_PLACE = 1;
export const OP_CANCEL = 2;
export const OP_CANCEL_ALL_MARKET = 3;
/** Creates a market's book, or updates its parameters (a tick change rebuilds the book). */
export const OP_REGISTER_MARKET = 4;
/**
 * Makes the shard's published snapshots current now: every market changed since its last publication is
 * published at once, and the answer ('snapshots' with the request id) goes out even if none was (readers
 * that must see their own writes, tests). Carries a market id only for the RESULT's sake.
 */
export const OP_SNAPSHOT = 5;
/** Ends the worker after its RESULT. */
export const OP_STOP = 6;
/**
 * Not a command: `cmdOp` of the RESULT that closes a GTD expiry group, whether the shard's own timer found
 * the orders due or an OP_TIME expired them. Its `id` is the unix second the group expired at.
 */
export const OP_EXPIRE = 7;
/**
 * The exchange's time for the shard (the sandbox's test clock, runtime/clock.ts TestClock): running at the
 * system clock plus an offset, or frozen. The shard's own GTD timer follows it (none while frozen). With
 * `untilSec` > 0 the shard first expires every GTD order due by then, second by second, each second's
 * orders as one OP_EXPIRE group (so each is journaled at its own time), before its RESULT, whose
 * `restingUnits` is the earliest expiry left in its books (0: none).
 */
export const OP_TIME = 8;
/**
 * Makes the shard as it was when its thread started: every market and book forgotten, no timer armed, the
 * clock the record carries (OP_TIME's fields; `untilSec` unused), its own RESULT counted as a new thread's
 * first. A link that takes over threads another engine used sends it first (shard-threads.ts): a sandbox
 * revert keeps its matching threads instead of starting new ones.
 */
export const OP_RESET = 9;

// ---- result opcodes ----------------------------------------------------------------------------------
export const R_RESULT = 101;
export const R_FILL = 102;
export const R_CANCELED = 103;
/** The shard stopped on an unexpected error; details follow by postMessage. */
export const R_SHARD_ERROR = 104;

// ---- PLACE -------------------------------------------------------------------------------------------
const P_MARKET = 1;
const P_HANDLE = 2;
const P_OWNER = 3;
const P_OUTCOME = 4;
const P_SIDE = 5;
const P_TIF = 6;
const P_POST_ONLY = 7;
const P_PRICE = 8;
const P_SIZE = 9;
const P_BUDGET = 10;
const P_EXPIRES = 11;

export function encodePlace(w: Float64Array, off: number, marketId: number, c: PlaceCommand): void {
  w[off + F_OP] = OP_PLACE;
  w[off + P_MARKET] = marketId;
  w[off + P_HANDLE] = c.handle;
  w[off + P_OWNER] = c.owner;
  w[off + P_OUTCOME] = c.outcome;
  w[off + P_SIDE] = c.side;
  w[off + P_TIF] = c.tif;
  w[off + P_POST_ONLY] = c.postOnly ? 1 : 0;
  w[off + P_PRICE] = c.pricePips;
  w[off + P_SIZE] = c.sizeUnits;
  w[off + P_BUDGET] = c.budgetUnits;
  w[off + P_EXPIRES] = c.expiresAt;
}

/** Decodes into `out` (reused by the worker: the book copies what it keeps). Returns the market id. */
export function decodePlace(w: Float64Array, off: number, out: PlaceCommand): number {
  out.handle = w[off + P_HANDLE];
  out.owner = w[off + P_OWNER];
  out.outcome = w[off + P_OUTCOME] as Outcome;
  out.side = w[off + P_SIDE] as Side;
  out.tif = w[off + P_TIF] as Tif;
  out.postOnly = w[off + P_POST_ONLY] !== 0;
  out.pricePips = w[off + P_PRICE];
  out.sizeUnits = w[off + P_SIZE];
  out.budgetUnits = w[off + P_BUDGET];
  out.expiresAt = w[off + P_EXPIRES];
  return w[off + P_MARKET];
}

// ---- CANCEL ------------------------------------------------------------------------------------------
const C_MARKET = 1;
const C_HANDLE = 2;

export function encodeCancel(w: Float64Array, off: number, marketId: number, handle: number): void {
  w[off + F_OP] = OP_CANCEL;
  w[off + C_MARKET] = marketId;
  w[off + C_HANDLE] = handle;
}

export function decodeCancel(w: Float64Array, off: number): { marketId: number; handle: number } {
  return { marketId: w[off + C_MARKET], handle: w[off + C_HANDLE] };
}

// ---- CANCEL_ALL_MARKET -------------------------------------------------------------------------------
const A_MARKET = 1;
const A_REASON = 2;
const A_REQ = 3;

export function encodeCancelAllMarket(w: Float64Array, off: number, marketId: number, reason: CancelReason, reqId: number): void {
  w[off + F_OP] = OP_CANCEL_ALL_MARKET;
  w[off + A_MARKET] = marketId;
  w[off + A_REASON] = reason;
  w[off + A_REQ] = reqId;
}

export function decodeCancelAllMarket(w: Float64Array, off: number): { marketId: number; reason: CancelReason; reqId: number } {
  return { marketId: w[off + A_MARKET], reason: w[off + A_REASON] as CancelReason, reqId: w[off + A_REQ] };
}

// ---- REGISTER_MARKET ---------------------------------------------------------------------------------
const G_MARKET = 1;
const G_TICK = 2;
const G_MIN_SIZE = 3;
const G_MAKER_FEE = 4;
const G_TAKER_FEE = 5;
const G_REQ = 6;

export interface RegisterRecord {
  marketId: number;
  tickPips: number;
  minSizeUnits: number;
  makerFeeBps: number;
  takerFeeBps: number;
  reqId: number;
}

export function encodeRegister(w: Float64Array, off: number, r: RegisterRecord): void {
  w[off + F_OP] = OP_REGISTER_MARKET;
  w[off + G_MARKET] = r.marketId;
  w[off + G_TICK] = r.tickPips;
  w[off + G_MIN_SIZE] = r.minSizeUnits;
  w[off + G_MAKER_FEE] = r.makerFeeBps;
  w[off + G_TAKER_FEE] = r.takerFeeBps;
  w[off + G_REQ] = r.reqId;
}

export function decodeRegister(w: Float64Array, off: number): RegisterRecord {
  return {
    marketId: w[off + G_MARKET],
    tickPips: w[off + G_TICK],
    minSizeUnits: w[off + G_MIN_SIZE],
    makerFeeBps: w[off + G_MAKER_FEE],
    takerFeeBps: w[off + G_TAKER_FEE],
    reqId: w[off + G_REQ],
  };
}

/** Sent on the shard's meta port right before each REGISTER record (strings for the snapshots). */
export interface MarketMeta {
  marketId: number;
  conditionId: string;
  tokenIds: [string, string];
  negRisk: boolean;
  /** Last trade per outcome (pips, 0 = none) so a rebuilt shard's snapshots keep showing it. */
  lastTradePips: [number, number];
}

// ---- SNAPSHOT / STOP ---------------------------------------------------------------------------------
const S_MARKET = 1;
const S_REQ = 2;

export function encodeSnapshot(w: Float64Array, off: number, marketId: number, reqId: number): void {
  w[off + F_OP] = OP_SNAPSHOT;
  w[off + S_MARKET] = marketId;
  w[off + S_REQ] = reqId;
}

export function decodeSnapshot(w: Float64Array, off: number): { marketId: number; reqId: number } {
  return { marketId: w[off + S_MARKET], reqId: w[off + S_REQ] };
}

const T_REQ = 1;

export function encodeStop(w: Float64Array, off: number, reqId: number): void {
  w[off + F_OP] = OP_STOP;
  w[off + T_REQ] = reqId;
}

export function decodeStop(w: Float64Array, off: number): { reqId: number } {
  return { reqId: w[off + T_REQ] };
}

// ---- TIME ---------------------------------------------------------------------------------------------
const M_REQ = 1;
const M_FROZEN = 2;
const M_OFFSET = 3;
const M_AT = 4;
const M_UNTIL = 5;

export interface TimeRecord {
  reqId: number;
  /** Frozen at `atMs`; else running at Date.now() + `offsetMs`. */
  frozen: boolean;
  offsetMs: number;
  atMs: number;
  /** Expire every GTD order with expiresAt <= untilSec first; 0 = none. */
  untilSec: number;
}

export function encodeTime(w: Float64Array, off: number, t: TimeRecord): void {
  w[off + F_OP] = OP_TIME;
  w[off + M_REQ] = t.reqId;
  w[off + M_FROZEN] = t.frozen ? 1 : 0;
  w[off + M_OFFSET] = t.offsetMs;
  w[off + M_AT] = t.atMs;
  w[off + M_UNTIL] = t.untilSec;
}

/** OP_RESET carries the clock the shard follows after it, in OP_TIME's layout. */
export function encodeReset(w: Float64Array, off: number, t: TimeRecord): void {
  encodeTime(w, off, t);
  w[off + F_OP] = OP_RESET;
}

export function decodeTime(w: Float64Array, off: number): TimeRecord {
  return { reqId: w[off + M_REQ], frozen: w[off + M_FROZEN] !== 0, offsetMs: w[off + M_OFFSET], atMs: w[off + M_AT], untilSec: w[off + M_UNTIL] };
}

// ---- RESULT ------------------------------------------------------------------------------------------
const RR_CMD_OP = 1;
const RR_ID = 2;
const RR_CODE = 3;
const RR_FILLED = 4;
const RR_RESTING = 5;
const RR_MARKET = 6;

export interface ResultRecord {
  /** Opcode of the command this result closes (OP_EXPIRE for an unsolicited expiry group). */
  cmdOp: number;
  /** The command's handle (PLACE, CANCEL) or request id (the others). */
  id: number;
  /** 0 or a 4xxx MatchCode. */
  code: number;
  filledUnits: number;
  restingUnits: number;
  marketId: number;
}

export function encodeResult(w: Float64Array, off: number, r: ResultRecord): void {
  w[off + F_OP] = R_RESULT;
  w[off + RR_CMD_OP] = r.cmdOp;
  w[off + RR_ID] = r.id;
  w[off + RR_CODE] = r.code;
  w[off + RR_FILLED] = r.filledUnits;
  w[off + RR_RESTING] = r.restingUnits;
  w[off + RR_MARKET] = r.marketId;
}

export function decodeResult(w: Float64Array, off: number): ResultRecord {
  return {
    cmdOp: w[off + RR_CMD_OP],
    id: w[off + RR_ID],
    code: w[off + RR_CODE],
    filledUnits: w[off + RR_FILLED],
    restingUnits: w[off + RR_RESTING],
    marketId: w[off + RR_MARKET],
  };
}

// ---- FILL --------------------------------------------------------------------------------------------
const FL_MARKET = 1;
const FL_KIND = 2;
const FL_TAKER = 3;
const FL_MAKER = 4;
const FL_TAKER_OWNER = 5;
const FL_MAKER_OWNER = 6;
const FL_TAKER_OUTCOME = 7;
const FL_MAKER_OUTCOME = 8;
const FL_TAKER_SIDE = 9;
const FL_MAKER_SIDE = 10;
const FL_SIZE = 11;
const FL_TAKER_PRICE = 12;
const FL_MAKER_PRICE = 13;
const FL_TAKER_USDC = 14;
const FL_MAKER_USDC = 15;
const FL_TAKER_FEE = 16;
const FL_MAKER_FEE = 17;
const FL_MAKER_REMAINING = 18;

export interface FillRecord extends Fill {
  marketId: number;
}

export function encodeFill(w: Float64Array, off: number, marketId: number, f: Fill): void {
  w[off + F_OP] = R_FILL;
  w[off + FL_MARKET] = marketId;
  w[off + FL_KIND] = f.kind;
  w[off + FL_TAKER] = f.takerHandle;
  w[off + FL_MAKER] = f.makerHandle;
  w[off + FL_TAKER_OWNER] = f.takerOwner;
  w[off + FL_MAKER_OWNER] = f.makerOwner;
  w[off + FL_TAKER_OUTCOME] = f.takerOutcome;
  w[off + FL_MAKER_OUTCOME] = f.makerOutcome;
  w[off + FL_TAKER_SIDE] = f.takerSide;
  w[off + FL_MAKER_SIDE] = f.makerSide;
  w[off + FL_SIZE] = f.sizeUnits;
  w[off + FL_TAKER_PRICE] = f.takerPricePips;
  w[off + FL_MAKER_PRICE] = f.makerPricePips;
  w[off + FL_TAKER_USDC] = f.takerUsdc;
  w[off + FL_MAKER_USDC] = f.makerUsdc;
  w[off + FL_TAKER_FEE] = f.takerFee;
  w[off + FL_MAKER_FEE] = f.makerFee;
  w[off + FL_MAKER_REMAINING] = f.makerRemainingUnits;
}

/** Allocates one record object (the main thread keeps it until the group's RESULT). */
export function decodeFill(w: Float64Array, off: number): FillRecord {
  return {
    marketId: w[off + FL_MARKET],
    kind: w[off + FL_KIND] as FillKind,
    takerHandle: w[off + FL_TAKER],
    makerHandle: w[off + FL_MAKER],
    takerOwner: w[off + FL_TAKER_OWNER],
    makerOwner: w[off + FL_MAKER_OWNER],
    takerOutcome: w[off + FL_TAKER_OUTCOME] as Outcome,
    makerOutcome: w[off + FL_MAKER_OUTCOME] as Outcome,
    takerSide: w[off + FL_TAKER_SIDE] as Side,
    makerSide: w[off + FL_MAKER_SIDE] as Side,
    sizeUnits: w[off + FL_SIZE],
    takerPricePips: w[off + FL_TAKER_PRICE],
    makerPricePips: w[off + FL_MAKER_PRICE],
    takerUsdc: w[off + FL_TAKER_USDC],
    makerUsdc: w[off + FL_MAKER_USDC],
    takerFee: w[off + FL_TAKER_FEE],
    makerFee: w[off + FL_MAKER_FEE],
    makerRemainingUnits: w[off + FL_MAKER_REMAINING],
  };
}

// ---- CANCELED ----------------------------------------------------------------------------------------
const CN_MARKET = 1;
const CN_HANDLE = 2;
const CN_OWNER = 3;
const CN_OUTCOME = 4;
const CN_SIDE = 5;
const CN_PRICE = 6;
const CN_REMAINING = 7;
const CN_REASON = 8;

export interface CanceledRecord extends Cancel {
  marketId: number;
}

export function encodeCanceled(w: Float64Array, off: number, marketId: number, c: Cancel): void {
  w[off + F_OP] = R_CANCELED;
  w[off + CN_MARKET] = marketId;
  w[off + CN_HANDLE] = c.handle;
  w[off + CN_OWNER] = c.owner;
  w[off + CN_OUTCOME] = c.outcome;
  w[off + CN_SIDE] = c.side;
  w[off + CN_PRICE] = c.pricePips;
  w[off + CN_REMAINING] = c.remainingUnits;
  w[off + CN_REASON] = c.reason;
}

/** Allocates one record object. */
export function decodeCanceled(w: Float64Array, off: number): CanceledRecord {
  return {
    marketId: w[off + CN_MARKET],
    handle: w[off + CN_HANDLE],
    owner: w[off + CN_OWNER],
    outcome: w[off + CN_OUTCOME] as Outcome,
    side: w[off + CN_SIDE] as Side,
    pricePips: w[off + CN_PRICE],
    remainingUnits: w[off + CN_REMAINING],
    reason: w[off + CN_REASON] as CancelReason,
  };
}

// ---- SHARD_ERROR -------------------------------------------------------------------------------------
const E_CODE = 1;

export function encodeShardError(w: Float64Array, off: number, code: number): void {
  w[off + F_OP] = R_SHARD_ERROR;
  w[off + E_CODE] = code;
}

export function decodeShardError(w: Float64Array, off: number): { code: number } {
  return { code: w[off + E_CODE] };
}

// ---- postMessage shapes ------------------------------------------------------------------------------

/** One token's published depth: `json` is the finished /book body, hash included. */
export interface SnapshotItem {
  tokenId: string;
  version: number;
  json: string;
}

/**
 * A publication of depth snapshots. postMessage and the result ring are independent channels, so it may
 * arrive before or after RESULT records written before it; `resultSeq` says where it stands instead.
 */
export interface SnapshotMessage {
  type: 'snapshots';
  /** Two per published market (both tokens); empty for an answer with nothing new to publish. */
  items: SnapshotItem[];
  /** RESULT records the shard had written when it built these: they reflect exactly those commands. */
  resultSeq: number;
  /** No market of the shard has a change left unpublished: every one is current as of `resultSeq`. */
  complete: boolean;
  /** The OP_SNAPSHOT request this publication answers, if any. */
  reqId?: number;
}

export type WorkerMessage =
  | { type: 'ready'; shard: number }
  | SnapshotMessage
  | { type: 'fatal'; shard: number; message: string; stack?: string };

/** workerData of a shard worker. */
export interface ShardWorkerData {
  shard: number;
  commandRing: SharedArrayBuffer;
  resultRing: SharedArrayBuffer;
  metaPort: MessagePort;
  /** Module URL and export name of the book factory (see book-factory.ts). */
  bookModule: string;
  bookExport: string;
  /** Minimum milliseconds between two snapshot publications of a market (OP_SNAPSHOT excepted); Infinity: only OP_SNAPSHOT's. */
  snapshotIntervalMs: number;
  /** The exchange's time the shard starts on (later ones come as OP_TIME); absent: the system clock. */
  time?: { frozen: boolean; offsetMs: number; atMs: number };
}
