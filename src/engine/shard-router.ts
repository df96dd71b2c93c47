/**
 * The one placement decision: which shard worker owns a market's book.
 *
 * The key is the market's condition id (both outcome tokens share one book, DESIGN section 6). The hash is
 * 32-bit FNV-1a over the id's UTF-8 bytes: stable across processes, Node versions and restarts (no seed, no
 * V8 string hash), so a market lands on the same shard after a restart with the same shard count. Changing
 * the shard count moves markets, which is harmless: books are rebuilt from LMDB at start-up anyway.
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** 32-bit FNV-1a of the UTF-8 bytes of `text`, as an unsigned integer. */
export function fnv1a32(text: string): number {
  let h = FNV_OFFSET;
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i];
    h = Math.imul(h, FNV_PRIME);
  }
  return h >>> 0;
}

export function shardOf(conditionId: string, shards: number): number {
  if (!Number.isInteger(shards) || shards < 1) throw new Error(`shard count must be a positive integer, got ${shards}`);
  return fnv1a32(conditionId) % shards;
}
