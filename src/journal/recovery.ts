/**
 * Start-up recovery and its proof.
 *
 * The engine restarts from the materialized tables, not from the journal: balances from `balances`
 * (integer units held, proceeds of unsettled trades included), markets from `engineMarkets`, trades still
 * settling from `trades` (trades.ts), open orders from `orders` (status LIVE, remaining = size - sizeMatched), re-placed into the books in sequence order (their original time priority) by the
 * engine without re-matching: the sequencer journals a command's effects only once the shard has finished
 * it, so the committed books were never crossed. Reservations are recomputed from the open orders.
 *
 * Before it trusts the tables, start-up checks them against the journal: `replayJournal` recomputes
 * balances, open orders and market resolutions from the events alone (seq 1 .. journalSeq, which must be
 * gapless), and the state hash of the replay must equal the state hash of the tables. A mismatch means the
 * store was damaged or written by a buggy build; start-up refuses with the first difference found.
 *
 * From a checkpoint (checkpoints.ts: the replay's state at a seq C, itself proven this way when it was
 * written) the replay starts at C + 1, and the tables are read without the history: balances and markets
 * whole, the order and trade rows of what was open or settling at C and every row keyed after C (orders.ts
 * openOrdersOf). verifyStore takes the newest checkpoint that proves the tables, then older ones, then the
 * whole journal while retention has pruned nothing of it; never a state the journal does not prove.
 *
 * The state hash is state-hash.ts's, the replay replay.ts's; this module loads the tables and proves them.
 */
import type { OrderAcceptedEvent, OrderRecord } from '../domain/events.ts';
import { CheckpointError, type Checkpoint, type CheckpointEntry, type CheckpointState } from './checkpoints/checkpoints.ts';
import type { Store } from './env.ts';
import { engineMetaKeys, metaKeys } from './keys.ts';
import { openOrdersOf } from './orders.ts';
import { RecoveryError, replayJournal, type LastTrade } from './replay.ts';
import { balanceMapKey, diffStates, hashState, type CanonicalState } from './state-hash.ts';
import { unsettledTrades, type TradeState } from './trades.ts';
import type { MarketRow } from './writer.ts';

export { RecoveryError, TRADE_MOVES, lastTradeSide, readJournal, replayEvents, replayJournal, type LastTrade, type ReplayResult } from './replay.ts';
export { balanceMapKey, diffStates, hashState, type CanonicalState, type OpenOrderView } from './state-hash.ts';

// ---- the tables -----------------------------------------------------------------------------------------

export interface MaterializedState {
  lastSeq: number;
  netDeposits: number;
  markets: MarketRow[];
  balances: Array<{ wallet: string; asset: string; held: number }>;
  /** LIVE orders, oldest first. */
  openOrders: OrderRecord[];
  /** Trades still settling (trades.ts), by fill seq. */
  trades: Array<{ fillSeq: number } & TradeState>;
}

/**
 * Where a proof from a checkpoint needs the tables read (orders.ts openOrdersOf, trades.ts unsettledTrades):
 * the rows that can be open or settling without reading every order and trade ever.
 */
export interface TablesSince {
  seq: number;
  open: readonly number[];
  settling: readonly number[];
}

/** Allocates: reads the engine tables (start-up only); with `since`, the order and trade rows it names. */
export function loadMaterialized(store: Store, orderEvents?: ReadonlyMap<number, OrderAcceptedEvent>, since?: TablesSince): MaterializedState {
  const lastSeq = (store.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
  const netDeposits = (store.meta.get(engineMetaKeys.netDeposits) as number | undefined) ?? 0;
  const markets: MarketRow[] = [];
  for (const { value } of store.engineMarkets.getRange({})) markets.push(value as MarketRow);
  markets.sort((a, b) => a.marketId - b.marketId);
  const balances: MaterializedState['balances'] = [];
  for (const { key, value } of store.balances.getRange({})) {
    balances.push({ wallet: String(key[0]), asset: String(key[1]), held: value as number });
  }
  const openOrders = openOrdersOf(store, orderEvents, since);
  return { lastSeq, netDeposits, markets, balances, openOrders, trades: unsettledTrades(store, since) };
}

export function canonicalOfTables(m: MaterializedState): CanonicalState {
  const balances = new Map<string, number>();
  for (const b of m.balances) balances.set(balanceMapKey(b.wallet, b.asset), b.held);
  return {
    balances,
    openOrders: m.openOrders.map((o) => ({ conditionId: o.conditionId, seq: o.seq, orderId: o.orderId, remaining: o.sizeUnits - o.sizeMatched })),
    markets: new Map(m.markets.map((r) => [r.conditionId, r.resolved])),
    netDeposits: m.netDeposits,
    trades: new Map(m.trades.map((t) => [t.fillSeq, t.status])),
  };
}

export interface VerifiedStore {
  materialized: MaterializedState;
  hash: string;
  /** Journal events replayed (after the checkpoint, when one was used). */
  events: number;
  lastTrades: Map<string, LastTrade>;
  /** The checkpoint the proof started from; undefined: the journal's first event. */
  from?: CheckpointEntry;
  /** The proven state at materialized.lastSeq, as a checkpoint stores it. Allocates. */
  proven(): CheckpointState;
}

/** Where verifyStore finds checkpoints (checkpoints.ts CheckpointStore). */
export interface CheckpointSource {
  list(): CheckpointEntry[];
  load(e: CheckpointEntry): Checkpoint;
}

export interface VerifyOptions {
  checkpoints?: CheckpointSource;
  /** Told of each checkpoint that could not be used, and why (the proof then tries the next older one). */
  skipped?: (e: CheckpointEntry, why: string) => void;
}

/**
 * Loads the tables and proves them against the journal, starting from the newest checkpoint that proves
 * them (checkpoints.ts), else from the journal's first event while the journal still holds it. A
 * checkpoint is passed over when it cannot be read (damaged, another format), was taken from another store,
 * stands beyond the journal's end or before what retention pruned, or does not prove the tables (its
 * replay fails or the state hashes differ): the next older one is tried. Throws RecoveryError with a clear
 * message when no path proves the tables: the engine must not start on such a store.
 */
export function verifyStore(store: Store, opts: VerifyOptions = {}): VerifiedStore {
  const lastSeq = (store.meta.get(metaKeys.journalSeq) as number | undefined) ?? 0;
  const prunedTo = (store.meta.get(metaKeys.journalPrunedTo) as number | undefined) ?? 0;
  const storeId = (store.meta.get(metaKeys.tradeIdPrefix) as string | undefined) ?? '';
  const failures: string[] = [];
  for (const entry of opts.checkpoints?.list() ?? []) {
    let why: string | undefined;
    try {
      if (entry.seq > lastSeq) why = `it stands at seq ${entry.seq}, beyond the journal's end (${lastSeq})`;
      else if (entry.seq < prunedTo) why = `it stands at seq ${entry.seq}, before what retention pruned (${prunedTo})`;
      else {
        const c = opts.checkpoints!.load(entry);
        if (c.header.store !== storeId) why = `it was taken from another store (${c.header.store.slice(0, 12)}…, this one ${storeId.slice(0, 12)}…)`;
        else return { ...proveFrom(store, { state: c.state, stateHash: c.header.stateHash }), from: entry };
      }
    } catch (e) {
      if (!(e instanceof RecoveryError || e instanceof CheckpointError)) throw e;
      why = e.message;
    }
    failures.push(`checkpoint ${entry.name} at seq ${entry.seq}: ${why}`);
    opts.skipped?.(entry, why);
  }
  if (prunedTo > 0) {
    throw new RecoveryError(`refusing to start: the journal was pruned up to seq ${prunedTo} and no checkpoint proves the tables${failures.length > 0 ? ` (${failures.join('; ')})` : ''}`);
  }
  try {
    return proveFrom(store, undefined);
  } catch (e) {
    if (e instanceof RecoveryError && failures.length > 0) throw new RecoveryError(`${e.message} (and no checkpoint proves the tables: ${failures.join('; ')})`);
    throw e;
  }
}

/** The proof itself: replay from `base` (or the journal's start), tables read as far as the replay needs. */
function proveFrom(store: Store, base: { state: CheckpointState; stateHash: string } | undefined): VerifiedStore {
  // The replay first: the tables' open orders join their state rows with the order events it decoded.
  const replay = replayJournal(store, base);
  const b = base?.state;
  const since = b && { seq: b.seq, open: b.open.map((o) => o[0]), settling: b.settling.map((t) => t[1].seq) };
  const materialized = loadMaterialized(store, replay.openEvents, since);
  if (replay.lastSeq !== materialized.lastSeq) {
    throw new RecoveryError(`refusing to start: the journal ends at seq ${replay.lastSeq} but meta.journalSeq is ${materialized.lastSeq}`);
  }
  const tables = canonicalOfTables(materialized);
  const tablesHash = hashState(tables);
  const journalHash = hashState(replay.state);
  if (tablesHash !== journalHash) {
    throw new RecoveryError(
      `refusing to start: state hash of the tables (${tablesHash}) differs from the journal replay (${journalHash}); ${diffStates(tables, replay.state) ?? ''}`,
    );
  }
  return { materialized, hash: tablesHash, events: replay.events, lastTrades: replay.lastTrades, proven: replay.checkpoint };
}
