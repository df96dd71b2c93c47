/**
 * The LMDB environment: the one place that imports `lmdb`, opens the environment under DATA_DIR and
 * names every database with its options. Other modules receive a `Store` and never open anything.
 *
 * Durability: lmdb-js batches every put issued in one event-loop turn into one transaction and commits
 * it on its own write thread. With overlappingSync (lmdb-js's default on Linux, kept: the fsync happens
 * outside the write lock, so commits overlap flushes) a put's promise resolves at commit, and
 * `root.flushed` once that commit is synced. The journal writer acknowledges only after `flushed`, so an
 * acknowledged order survives a process crash and a power loss alike.
 *
 * Values are msgpack-encoded (lmdb-js's default `structuredClone`-free msgpack with shared structures
 * off, so records stay readable by any msgpack decoder). Keys are ordered-binary: arrays of strings and
 * numbers sort element by element, which gives the composite indexes of `keys.ts`.
 */
import { open, type Database, type RootDatabase } from 'lmdb';
import { mkdirSync } from 'node:fs';
import { metaKeys } from './keys.ts';

/** Bump when a stored shape changes incompatibly; start-up refuses a store written by another version. */
export const STORE_VERSION = 8;
/**
 * Older versions this build upgrades in place, raising the version so the older build refuses the store
 * from then on (it could not read what this build writes):
 *   4  also kept an `order-ids` table (order id -> seq), now an in-memory index (orders.ts)
 *      (orders.ts): the table is dropped;
 *   5  wrote `status` events as msgpack objects only. Version 6 writes them as codecs/status-codec.ts records,
 *      which a version-5 build cannot decode; it reads both, so nothing is converted;
 *   6  had no trade lifecycle: no `trade` events, no deferred fills (the flag in a fill record's kind
 *      byte), no `trades` table. Its fills are all CONFIRMED trades, which version 7 reads as they are, so
 *      nothing is converted; a version-6 build could not replay a deferred fill or a reversal;
 *   7  had no `order-id-runs` table (orders.ts): the first load of the order index reads the journal's order
 *      events once and stores what it found. A version-7 build would add orders without their entries, and
 *      may prune nothing of a journal it cannot be told was pruned (checkpoints, issue 42).
 */
const UPGRADABLE_FROM = [4, 5, 6, 7];

export interface Store {
  /** The environment's directory (DATA_DIR): checkpoints and archives live beside it (engine/checkpointer.ts). */
  readonly dataDir: string;
  readonly root: RootDatabase;
  /** Store metadata: version, sequences, master key marker, projection cursors. Key: string. */
  readonly meta: Database<unknown, string>;
  /** The journal: every committed effect in order. Key: global sequence number. */
  readonly journal: Database<unknown, number>;
  /** Orders by the journal seq of their acceptance: current state of each order ever accepted (orders.ts). */
  readonly orders: Database<unknown, number>;
  /** Balances: key [wallet, asset] where asset is 'USDC' or a token id; value integer units held. */
  readonly balances: Database<unknown, (string | number)[]>;
  /** Fills by journal seq; value: the binary record of codecs/fill-codec.ts (decode with decodeFill). */
  readonly fills: Database<Buffer, number>;
  /** Secondary indexes with empty values; the key is the whole entry. See keys.ts for each shape. */
  readonly indexes: Database<unknown, (string | number)[]>;
  /**
   * Catalog entities: key [kind, id] with kind 'event' | 'market' | 'tag' | 'series'; plus the catalog's
   * bookkeeping records (index counts, id sequences, search documents), see catalogMetaKeys in keys.ts.
   */
  readonly catalog: Database<unknown, (string | number)[]>;
  /** Admin-set wallet display profiles (name, pseudonym, bio, images). Key: lowercase address. */
  readonly profiles: Database<unknown, string>;
  /** API keys: key apiKey (uuid); also [address, nonce] entries for derive. */
  readonly apiKeys: Database<unknown, string | (string | number)[]>;
  /**
   * Signed requests already answered, kept for the clock-skew window so a replay changes nothing
   * (edge/replays.ts); keys: replayKeys in keys.ts.
   */
  readonly replays: Database<unknown, (string | number)[]>;
  /** Price history samples: key [tokenId, unixSeconds] -> price in pips. */
  readonly prices: Database<unknown, (string | number)[]>;
  /** Read models projected from the journal (positions, per-wallet trade rows, ...). */
  readonly views: Database<unknown, (string | number)[]>;

  // ---- engine (journal/writer.ts, journal/recovery.ts) ---------------------------------------------
  /** Engine markets by condition id: numeric id, token ids, trading parameters, flags, resolution. */
  readonly engineMarkets: Database<unknown, string>;
  /** Status of each deferred fill's trade by the fill's seq: [status code, ms of its last move] (trades.ts). */
  readonly trades: Database<unknown, number>;
  /** Table `order-id-runs`: the order-id index's entries in arrival order, one run per batch by its first order's seq (orders.ts). */
  readonly orderIds: Database<Buffer, number>;

  // ---- replication (journal/replication-log.ts) ----------------------------------------------------
  /**
   * The sequencer's replication log: what each committed journal batch put beside its events, and the
   * catalog, profile and API-key writes, by replication sequence (rseq). Empty outside ROLE=sequencer.
   */
  readonly replication: Database<unknown, number>;

  close(): Promise<void>;
}

export interface StoreOptions {
  dataDir: string;
  /** Map size ceiling in bytes; LMDB grows the file up to it. */
  mapSize?: number;
}

export function openStore(opts: StoreOptions): Store {
  mkdirSync(opts.dataDir, { recursive: true });
  const root = open({
    path: opts.dataDir,
    // The environment is a directory holding data.mdb and lock.mdb.
    noSubdir: false,
    maxDbs: 24,
    mapSize: opts.mapSize ?? 64 * 1024 ** 3,
    // Durable commits: keep sync on. Speed comes from group commit, not from skipping fsync.
    noSync: false,
    useVersions: false,
    sharedStructuresKey: undefined,
    encoding: 'msgpack',
  });
  const db = <K extends string | number | (string | number)[]>(name: string) =>
    root.openDB<unknown, K>({ name, encoding: 'msgpack', keyEncoding: 'ordered-binary' });

  const store: Store = {
    dataDir: opts.dataDir,
    root,
    meta: db<string>('meta'),
    journal: root.openDB<unknown, number>({ name: 'journal', encoding: 'msgpack', keyEncoding: 'uint32' }),
    orders: root.openDB<unknown, number>({ name: 'orders', encoding: 'msgpack', keyEncoding: 'uint32' }),
    balances: db<(string | number)[]>('balances'),
    fills: root.openDB<Buffer, number>({ name: 'fills', encoding: 'binary', keyEncoding: 'uint32' }),
    indexes: root.openDB<unknown, (string | number)[]>({ name: 'indexes', encoding: 'binary', keyEncoding: 'ordered-binary' }),
    catalog: db<(string | number)[]>('catalog'),
    profiles: db<string>('profiles'),
    apiKeys: db<string | (string | number)[]>('api-keys'),
    replays: db<(string | number)[]>('replays'),
    prices: db<(string | number)[]>('prices'),
    views: db<(string | number)[]>('views'),
    engineMarkets: db<string>('engine-markets'),
    trades: root.openDB<unknown, number>({ name: 'trades', encoding: 'msgpack', keyEncoding: 'uint32' }),
    orderIds: root.openDB<Buffer, number>({ name: 'order-id-runs', encoding: 'binary', keyEncoding: 'uint32' }),
    replication: root.openDB<unknown, number>({ name: 'replication', encoding: 'msgpack', keyEncoding: 'uint32' }),
    close: () => root.close(),
  };
  checkVersion(store);
  return store;
}

/** The tables a Store holds (every member but `root` and `close`). */
const TABLES = ['meta', 'journal', 'orders', 'balances', 'fills', 'indexes', 'catalog', 'profiles', 'apiKeys', 'replays', 'prices', 'views', 'engineMarkets', 'trades', 'orderIds', 'replication'] as const;
const RANGES = new Set(['getRange', 'getKeys', 'getCount']);

/**
 * A consistent view of the store as it is now: every read through the returned store uses one LMDB read
 * transaction, so tables read one after the other agree with each other (the journal and the tables at one
 * journalSeq) while writers go on committing. Writes through it throw. `done()` ends the transaction; until
 * then LMDB cannot reuse the pages freed after it began, so keep it short (a checkpoint: seconds).
 */
export function readSnapshot(store: Store): { store: Store; done(): void } {
  const txn = store.root.useReadTransaction();
  const withTxn = (opts: unknown) => ({ ...(opts as object), transaction: txn });
  const view = (db: object) =>
    new Proxy(db, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target) as unknown;
        if (typeof v !== 'function') return v;
        const name = String(prop);
        if (name === 'get' || name === 'getBinary') return (key: unknown, opts?: unknown) => (v as (k: unknown, o: unknown) => unknown).call(target, key, withTxn(opts));
        if (RANGES.has(name)) return (opts?: unknown, ...rest: unknown[]) => (v as (o: unknown, ...r: unknown[]) => unknown).call(target, withTxn(opts), ...rest);
        if (/^(put|remove|clear|drop|transaction|childTransaction|batch|ifVersion|ifNoExists)/.test(name)) return () => {
          throw new Error(`${name}: a read snapshot of the store cannot write`);
        };
        return (v as (...a: unknown[]) => unknown).bind(target);
      },
    });
  const out = { dataDir: store.dataDir, root: store.root, close: store.close } as Record<string, unknown>;
  for (const t of TABLES) out[t] = view(store[t] as object);
  return { store: out as unknown as Store, done: () => txn.done() };
}

function checkVersion(store: Store): void {
  const found = store.meta.get('storeVersion');
  if (found === undefined) {
    store.root.transactionSync(() => {
      store.meta.putSync('storeVersion', STORE_VERSION);
      // A new store: the order-id-runs table will hold every order from the first one.
      store.meta.putSync(metaKeys.orderIdsComplete, true);
    });
  } else if (UPGRADABLE_FROM.includes(found as number)) {
    store.root.transactionSync(() => {
      if (found === 4) store.root.openDB({ name: 'order-ids' }).dropSync();
      store.meta.putSync('storeVersion', STORE_VERSION);
    });
  } else if (found !== STORE_VERSION) {
    throw new Error(`DATA_DIR holds a store of version ${String(found)}; this build reads version ${STORE_VERSION}`);
  }
}
