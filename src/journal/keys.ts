/**
 * Every key shape stored in LMDB, built here and nowhere else.
 *
 * Keys are ordered-binary arrays: LMDB sorts them element by element (numbers numerically, strings
 * bytewise), so a prefix such as ['ev-tag', tagId] selects one index range with getRange({start, end}).
 * Index entries live in the `indexes` database with an empty value: the key is the whole entry.
 *
 * A range end is the prefix followed by MAX_KEY_PART, which sorts after any string or number.
 */

/** Sorts after every string and number that can follow a prefix (ordered-binary compares bytes). */
export const MAX_KEY_PART = '\uffff';

export type Key = (string | number)[];

/** Range covering every key that starts with `prefix`. */
export function prefixRange(prefix: Key): { start: Key; end: Key } {
  return { start: prefix, end: [...prefix, MAX_KEY_PART] };
}

// ---- meta ----------------------------------------------------------------------------------------
export const metaKeys = {
  storeVersion: 'storeVersion',
  /** Last journal sequence committed. */
  journalSeq: 'journalSeq',
  /** State hash recorded at the last clean shutdown. */
  stateHash: 'stateHash',
  demoLoaded: 'demoLoaded',
  /** 48 hex digits drawn when the store is created: the first 24 bytes of every trade id (codecs/trade-ids.ts). */
  tradeIdPrefix: 'tradeIdPrefix',
  /** Per-projection cursor: last journal sequence the projection applied. */
  projectionCursor: (name: string) => `projection:${name}`,
  /** Wallets in closed-only mode (edge/sandbox/closed-only.ts): a sorted array of lowercase addresses. */
  closedOnlyWallets: 'sandbox:closedOnly',
  /** Running heartbeats (edge/heartbeats.ts): [wallet, heartbeat id] pairs sorted by wallet. */
  heartbeats: 'heartbeats',
  /** The sandbox's test clock (edge/sandbox/test-clock.ts): {frozen, atMs, offsetMs}, absent while never moved. */
  testClock: 'sandbox:testClock',
  /**
   * Replication (journal/replication-log.ts). On a sequencer: the journal seq its replication log covers
   * (equal to journalSeq unless the store was written by a process that did not log). On a replica: the
   * last rseq applied.
   */
  replicationJournalSeq: 'replication:journalSeq',
  replicaAppliedRseq: 'replica:appliedRseq',
  /**
   * The highest sequencer term (its lease's fencing token) among the records applied or written here: a
   * record of a lower term is a deposed sequencer's and is refused (replication/follower.ts).
   */
  replicationTerm: 'replication:term',
  /**
   * Set once this store served as a sequencer under a lease (cluster.failover), which acknowledges a batch
   * only once the stream confirmed it: its records the stream lacks were never acknowledged (failover.ts).
   */
  acksAfterStream: 'replication:acksAfterStream',
  /** Set when the `order-id-runs` table holds every order the journal accepted (orders.ts; unset: read the journal once). */
  orderIdsComplete: 'orderIds:complete',
  /**
   * The journal seq below and at which retention (engine/checkpointer.ts) has pruned the journal: only `order`
   * events and fills remain there, so no replay may start before it (recovery.ts); absent = 0, nothing pruned.
   */
  journalPrunedTo: 'journal:prunedTo',
  /**
   * The journal seq at and below which this store may lack rows of history: a follower started from a state
   * snapshot (journal/checkpoints/state-snapshot.ts) holds the state at that seq and every row after it, not
   * the trades, fills and closed orders before it (HISTORY_VIEW_TAGS, the `orders` rows of closed orders);
   * absent = 0, the whole history is here.
   */
  historyFloor: 'history:floor',
} as const;

// ---- balances ------------------------------------------------------------------------------------
export const USDC_ASSET = 'USDC';
export const balanceKey = (wallet: string, asset: string): Key => [wallet, asset];
export const walletBalancesRange = (wallet: string) => prefixRange([wallet]);

// ---- catalog -------------------------------------------------------------------------------------
export type CatalogKind = 'event' | 'market' | 'tag' | 'series';
export const catalogKey = (kind: CatalogKind, id: string): Key => [kind, id];
export const catalogRange = (kind: CatalogKind) => prefixRange([kind]);


// ---- api keys (db `apiKeys`, edge/auth.ts) --------------------------------------------------------
// A key record lives under its API key (a UUID string); the [tag, address, nonce] entry maps a wallet's
// nonce to its key, so string keys are records and array keys are the index.
export const apiKeyRecordKey = (apiKey: string): string => apiKey;
export const apiKeyByNonce = (address: string, nonce: string): Key => ['by-nonce', address, nonce];
/** Meta key (db `meta`): fingerprint of the master key the stored API keys derive from. */
export const masterKeyIdMetaKey = 'auth:masterKeyId';

/**
 * Replays (edge/replays.ts): ['r', key] holds a signed request's recorded answer, ['e', expiresAtSeconds,
 * key] orders the same records by expiry so the expired ones are found without a scan.
 */
export const replayKeys = {
  record: (key: string): Key => ['r', key],
  byExpiry: (expiresAt: number, key: string): Key => ['e', expiresAt, key],
  /** Records whose expiry is at most `nowSeconds`. */
  expired: (nowSeconds: number) => ({ start: ['e'] as Key, end: ['e', nowSeconds + 1] as Key }),
  all: () => prefixRange(['r']),
};

// ---- price history -------------------------------------------------------------------------------
export const priceKey = (tokenId: string, unixSeconds: number): Key => [tokenId, unixSeconds];
export const priceRange = (tokenId: string, fromSec: number, toSec: number) => ({
  start: [tokenId, fromSec] as Key,
  end: [tokenId, toSec + 1] as Key,
});

// ---- engine (journal/writer.ts, journal/recovery.ts) ----------------------------------------------
export const engineMetaKeys = {
  /** Deposits minus withdrawals in USDC units: the right-hand side of the collateral identity. */
  netDeposits: 'engine:netDeposits',
} as const;

// ==== catalog indexes and bookkeeping ===========================================================
// Catalog ids are decimal strings that fit a safe integer, so index keys hold them as numbers and
// sort numerically. Index entries (db `indexes`) carry an empty value; bookkeeping records (db
// `catalog`, beside the [kind, id] entities) hold small numbers or documents. See
// projections/catalog/catalog-index.ts for what each scope, status code, column and term means.

/** Event status code in index keys: active << 2 | closed << 1 | archived (0..7). */
export type StatusCode = number;

/** Range of keys [...prefix, s] for every string s that starts with `text`. */
function textPrefixRange(prefix: Key, text: string): { start: Key; end: Key } {
  return { start: [...prefix, text], end: [...prefix, text + MAX_KEY_PART] };
}

export const catalogIx = {
  /** Event by slug: ['cev-slug', slug, id]. */
  eventSlug: (slug: string, id: number): Key => ['cev-slug', slug, id],
  eventSlugRange: (slug: string) => prefixRange(['cev-slug', slug]),
  /**
   * Events of a scope (all, one tag, one series, one creator, creator x tag, creator x series), split by
   * status code and ordered by one column: ['cev-sort', scope, status, column, value, id].
   */
  eventSort: (scope: string, status: StatusCode, column: string, value: string | number, id: number): Key => [
    'cev-sort', scope, status, column, value, id,
  ],
  eventSortRange: (scope: string, status: StatusCode, column: string) => prefixRange(['cev-sort', scope, status, column]),
  /** Search postings: ['cev-term', scope, term, id, field weight, open 0|1]. Scope is all or one creator. */
  eventTerm: (scope: string, term: string, id: number, weight: number, open: number): Key => ['cev-term', scope, term, id, weight, open],
  /** Every posting whose term starts with `prefix`. */
  eventTermPrefixRange: (scope: string, prefix: string) => textPrefixRange(['cev-term', scope], prefix),

  /** Market by slug, by condition id and by outcome token id: [tag, value, id]. */
  marketSlug: (slug: string, id: number): Key => ['cmk-slug', slug, id],
  marketSlugRange: (slug: string) => prefixRange(['cmk-slug', slug]),
  marketCondition: (conditionId: string, id: number): Key => ['cmk-cond', conditionId, id],
  marketConditionRange: (conditionId: string) => prefixRange(['cmk-cond', conditionId]),
  marketToken: (tokenId: string, id: number): Key => ['cmk-token', tokenId, id],
  marketTokenRange: (tokenId: string) => prefixRange(['cmk-token', tokenId]),
  /** Markets of a scope (all or one creator) in id order: the GET /markets cursor walk. */
  marketList: (scope: string, id: number): Key => ['cmk-list', scope, id],
  marketListRange: (scope: string) => prefixRange(['cmk-list', scope]),
  /** Markets with rewards that accept orders, per scope, in id order: GET /sampling-markets. */
  marketSampling: (scope: string, id: number): Key => ['cmk-samp', scope, id],
  marketSamplingRange: (scope: string) => prefixRange(['cmk-samp', scope]),

  /** Tag by slug: ['ctag-slug', slug, id]; tags ordered by a column: ['ctag-sort', column, value, id]. */
  tagSlug: (slug: string, id: number): Key => ['ctag-slug', slug, id],
  tagSlugRange: (slug: string) => prefixRange(['ctag-slug', slug]),
  tagSort: (column: string, value: string | number, id: number): Key => ['ctag-sort', column, value, id],
  tagSortRange: (column: string) => prefixRange(['ctag-sort', column]),
  /** Tag label search postings: ['ctag-term', term, id]. */
  tagTerm: (term: string, id: number): Key => ['ctag-term', term, id],
  tagTermPrefixRange: (prefix: string) => textPrefixRange(['ctag-term'], prefix),

  /** Series by slug: ['cser-slug', slug, id]. */
  seriesSlug: (slug: string, id: number): Key => ['cser-slug', slug, id],
  seriesSlugRange: (slug: string) => prefixRange(['cser-slug', slug]),
} as const;

/** Bookkeeping records in db `catalog`, beside the [kind, id] entities. */
export const catalogMetaKeys = {
  /** Number of events in (scope, status code): lets a query pick its most selective index. */
  count: (scope: string, status: StatusCode): Key => ['cstat', scope, status],
  /** Next id to hand out for a kind when an upsert names none. */
  nextId: (kind: CatalogKind): Key => ['cseq', kind],
  /** An event's indexed search terms: what to delete when it is re-indexed, and the candidate check. */
  searchDoc: (eventId: string): Key => ['csdoc', eventId],
  /** Bumped by every catalog write transaction: readers drop their caches when it moves. */
  generation: ['cgen'] as Key,
} as const;

// ---- wallet profiles (db `profiles`) --------------------------------------------------------------
/** Admin-set display profile of a wallet, by lowercase address. */
export const profileKey = (address: string): string => address;

// ==== wallet data views (db `views`, projections/wallets.ts, queries/wallets/) =====================
// Written by the wallet projections through the ViewStore, read by the wallet data queries. Wallets are
// lowercase addresses. A trade row is one party's side of a fill: role 0 = taker, 1 = maker; its entry
// carries what the row filters need ([side 0 BUY | 1 SELL, size units, usdc units, and on the per-wallet
// index the condition id]), so a filtered page loads only the fills it returns. The row of a deferred fill
// is keyed by the seq of its MINED move (when it lands on the data API) and carries the fill's seq fifth.

/** Role of a trade row in its fill. */
export const TAKER_ROLE = 0;
export const MAKER_ROLE = 1;

export const walletViewKeys = {
  /** Position state of one (wallet, outcome token): ['wpos', wallet, conditionId, outcome]. */
  position: (wallet: string, conditionId: string, outcome: number): Key => ['wpos', wallet, conditionId, outcome],
  /** Prefix of every position of a wallet (one range: GET /positions sorts a wallet's rows in memory). */
  positionsOf: (wallet: string): Key => ['wpos', wallet],
  /** What the journal says about a market (token ids, neg-risk, winner): ['wmkt', conditionId]. */
  market: (conditionId: string): Key => ['wmkt', conditionId],
  /** Trade rows of a wallet in one role, by journal seq: ['wtr-w', wallet, role, seq]. */
  tradeByWallet: (wallet: string, role: number, seq: number): Key => ['wtr-w', wallet, role, seq],
  tradesByWalletPrefix: (wallet: string, role: number): Key => ['wtr-w', wallet, role],
  /** Trade rows of a market in one role: ['wtr-m', conditionId, role, seq]. */
  tradeByMarket: (conditionId: string, role: number, seq: number): Key => ['wtr-m', conditionId, role, seq],
  tradesByMarketPrefix: (conditionId: string, role: number): Key => ['wtr-m', conditionId, role],
  /** Every trade row in one role: ['wtr-a', role, seq] (the global feed, filtered without loading fills). */
  tradeAll: (role: number, seq: number): Key => ['wtr-a', role, seq],
  tradesAllPrefix: (role: number): Key => ['wtr-a', role],
  /**
   * A deferred fill a wallet took part in, by the fill's seq: ['wtr-d', wallet, seq] (the CLOB's view of its
   * trades, whatever their status; the rows above list a deferred trade only once MINED, under that move's seq).
   */
  deferredTrade: (wallet: string, seq: number): Key => ['wtr-d', wallet, seq],
  deferredTradesPrefix: (wallet: string): Key => ['wtr-d', wallet],
} as const;

// ==== market data (projections/market-data.ts, queries/market-data.ts) ============================
// Price samples use priceKey/priceRange above (db `prices`): [tokenId, unixSeconds] -> price in pips, a
// midpoint may fall on half a pip (x.5). Builder trades are index entries in db `views`, one per
// (dimension, fill) with the fill's time (ms) then its journal seq, so time filters are key ranges and
// rows come out in time order; the value is the row's derived fields (bucket index, fee rates) and the
// fill itself is read from db `fills` by seq.

/** Dimensions a builder-trade listing can be driven by. */
export type BuilderTradeDim = 'all' | 'builder' | 'market' | 'asset' | 'user';
const BT_TAGS: Record<BuilderTradeDim, string> = { all: 'bt-all', builder: 'bt-bld', market: 'bt-mkt', asset: 'bt-ast', user: 'bt-usr' };

export const builderTradeKeys = {
  /** [tag, value, tsMs, seq]; the 'all' dimension has the value ''. */
  entry: (dim: BuilderTradeDim, value: string, tsMs: number, seq: number): Key => [BT_TAGS[dim], value, tsMs, seq],
  /** Entries of one dimension value with fromMs <= ts < toMs. */
  range: (dim: BuilderTradeDim, value: string, fromMs: number, toMs: number) => ({
    start: [BT_TAGS[dim], value, fromMs] as Key,
    end: [BT_TAGS[dim], value, toMs] as Key,
  }),
  /** A builder trade by its trade id: ['bt-id', tradeId] -> {ts, seq, ...row fields}. */
  byId: (tradeId: string): Key => ['bt-id', tradeId],
  /** The builder fills of one taker order, in seq order: ['bt-tk', takerOrderId, seq] (bucket_index). */
  ofTaker: (takerOrderId: string, seq: number): Key => ['bt-tk', takerOrderId, seq],
  ofTakerRange: (takerOrderId: string) => prefixRange(['bt-tk', takerOrderId]),
} as const;

/**
 * The `views` tags whose rows are history (a row per fill or trade move, never rewritten, as many as the
 * trades ever made): the trade rows and the builder trades. Every other tag is state (positions,
 * notifications, reward accruals, the journal's markets), bounded by wallets and markets.
 */
export const HISTORY_VIEW_TAGS: ReadonlySet<string> = new Set(['wtr-w', 'wtr-m', 'wtr-a', 'wtr-d', ...Object.values(BT_TAGS), 'bt-id', 'bt-tk']);

// ==== notifications (db `views`, projections/notifications.ts, queries/notifications.ts) ==========
// A wallet's notifications by slot, the n-th it received (its id): [ntf, wallet, slot] -> the notification
// without its id. Beside them the wallet's list state (slots [first, next) may exist; the last event seq
// applied) and the wallets that took part in each market (orders, fills, splits, merges, redeems), who hear
// of its resolution.

export const notificationKeys = {
  entry: (wallet: string, slot: number): Key => ['ntf', wallet, slot],
  ofWallet: (wallet: string): Key => ['ntf', wallet],
  state: (wallet: string): Key => ['ntf-s', wallet],
  participant: (conditionId: string, wallet: string): Key => ['ntf-p', conditionId, wallet],
  participantsOf: (conditionId: string): Key => ['ntf-p', conditionId],
} as const;

// ==== liquidity rewards (db `views`, projections/rewards.ts, queries/rewards.ts) ===================
// Written by the rewards sampler (not a journal projection: scores are observations of live books, like the
// midpoint samples). Dates are UTC `YYYY-MM-DD`.

export const rewardKeys = {
  /** A wallet's accrued share of one market's rewards on one day: ['rwd-u', wallet, date, conditionId] -> RewardAccrual. */
  accrual: (wallet: string, date: string, conditionId: string): Key => ['rwd-u', wallet, date, conditionId],
  accrualsOf: (wallet: string, date: string): Key => ['rwd-u', wallet, date],
  /** One market's day: ['rwd-m', date, conditionId] -> MarketDay (samples in which it had scoring orders, their total score). */
  marketDay: (date: string, conditionId: string): Key => ['rwd-m', date, conditionId],
  /** Samples taken on a day: ['rwd-d', date] -> count. */
  samples: (date: string): Key => ['rwd-d', date],
} as const;
