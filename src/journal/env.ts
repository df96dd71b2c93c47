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

/** Bump when a stored shape changes incompatibly; start-up refuses a store written by another version. */
export const STORE_VERSION = 7;
/**
 * Older versions this build upgrades in place, raising the version so the older build refuses the store
 * from then on (it could not read what this build writes):
 *   4  also kept an `order-ids` table (order id -> seq), now an in-memory index rebuilt from the journal
 *      (orders.ts): the table is dropped;
 *   5  wrote `status` events as msgpack objects only. Version 6 writes them as status-codec.ts records,
 *      which a version-5 build cannot decode; it reads both, so nothing is converted;
 *   6  had no trade lifecycle: no `trade` events, no deferred fills (the flag in a fill record's kind
 *      byte), no `trades` table. Its fills are all CONFIRMED trades, which version 7 reads as they are, so
 *      nothing is converted; a version-6 build could not replay a deferred fill or a reversal.
 */
const UPGRADABLE_FROM = [4, 5, 6];

export interface Store {
  readonly root: RootDatabase;
  /** Store metadata: version, sequences, master key marker, projection cursors. Key: string. */
  readonly meta: Database<unknown, string>;
  /** The journal: every committed effect in order. Key: global sequence number. */
  readonly journal: Database<unknown, number>;
  /** Orders by the journal seq of their acceptance: current state of each order ever accepted (orders.ts). */
  readonly orders: Database<unknown, number>;
  /** Balances: key [wallet, asset] where asset is 'USDC' or a token id; value integer units held. */
  readonly balances: Database<unknown, (string | number)[]>;
  /** Fills by journal seq; value: the binary record of fill-codec.ts (decode with decodeFill). */
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
    maxDbs: 16,
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
    replication: root.openDB<unknown, number>({ name: 'replication', encoding: 'msgpack', keyEncoding: 'uint32' }),
    close: () => root.close(),
  };
  checkVersion(store);
  return store;
}

function checkVersion(store: Store): void {
  const found = store.meta.get('storeVersion');
  if (found === undefined) {
    store.meta.putSync('storeVersion', STORE_VERSION);
  } else if (UPGRADABLE_FROM.includes(found as number)) {
    store.root.transactionSync(() => {
      if (found === 4) store.root.openDB({ name: 'order-ids' }).dropSync();
      store.meta.putSync('storeVersion', STORE_VERSION);
    });
  } else if (found !== STORE_VERSION) {
    throw new Error(`DATA_DIR holds a store of version ${String(found)}; this build reads version ${STORE_VERSION}`);
  }
}
