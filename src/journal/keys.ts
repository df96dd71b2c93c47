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
  /** Per-projection cursor: last journal sequence the projection applied. */
  projectionCursor: (name: string) => `projection:${name}`,
} as const;

// ---- balances ------------------------------------------------------------------------------------
export const USDC_ASSET = 'USDC';
export const balanceKey = (wallet: string, asset: string): Key => [wallet, asset];
export const walletBalancesRange = (wallet: string) => prefixRange([wallet]);

// ---- catalog -------------------------------------------------------------------------------------
export type CatalogKind = 'event' | 'market' | 'tag' | 'series';
export const catalogKey = (kind: CatalogKind, id: string): Key => [kind, id];
export const catalogRange = (kind: CatalogKind) => prefixRange([kind]);

// ---- indexes (db `indexes`) ----------------------------------------------------------------------
// Each builder names its index with a short tag as the first element. Add new indexes here.
export const ix = {
  /** Order ids of a wallet, oldest first: ['ord-wallet', wallet, seq, orderId]. */
  ordersByWallet: (wallet: string, seq: number, orderId: string): Key => ['ord-wallet', wallet, seq, orderId],
  ordersByWalletRange: (wallet: string) => prefixRange(['ord-wallet', wallet]),
  /** Fills of a market in time order: ['fill-market', conditionId, seq]. */
  fillsByMarket: (conditionId: string, seq: number): Key => ['fill-market', conditionId, seq],
  fillsByMarketRange: (conditionId: string) => prefixRange(['fill-market', conditionId]),
  /** Fills a wallet took part in: ['fill-wallet', wallet, seq]. */
  fillsByWallet: (wallet: string, seq: number): Key => ['fill-wallet', wallet, seq],
  fillsByWalletRange: (wallet: string) => prefixRange(['fill-wallet', wallet]),
} as const;

// ---- api keys ------------------------------------------------------------------------------------
export const apiKeyByNonce = (address: string, nonce: string): Key => ['by-nonce', address, nonce];

// ---- price history -------------------------------------------------------------------------------
export const priceKey = (tokenId: string, unixSeconds: number): Key => [tokenId, unixSeconds];
export const priceRange = (tokenId: string, fromSec: number, toSec: number) => ({
  start: [tokenId, fromSec] as Key,
  end: [tokenId, toSec + 1] as Key,
});
