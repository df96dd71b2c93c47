/**
 * The GET /book bodies of a market's two tokens, serialized by the shard worker for each publication.
 *
 * Format (DESIGN section 7): compact JSON, keys in the order market, asset_id, timestamp, hash, bids, asks,
 * min_order_size, tick_size, neg_risk, last_trade_price; prices and sizes as minimal decimal strings; bids
 * ascending and asks descending (best last); `hash` = SHA-1 hex of the same body with `hash` set to "".
 * The bytes are exactly those of JSON.stringify over the object in that key order (tests and the snapshot
 * benchmark check it against that oracle), because clients recompute the hash.
 *
 * Why by hand: the straightforward way (map levels to objects, format each number, stringify twice: once to
 * hash, once with the hash) cost about 100 µs of shard CPU per order at a moderate rate. Here:
 *   - both tokens come from one depth walk: by the Depth contract (book/api.ts) outcome 1's bids are
 *     outcome 0's asks at 10_000 - p in the same order, and its asks are outcome 0's bids;
 *   - each level's `{"price":"…","size":"` prefix is cached per price, its size formatted once for both
 *     tokens (domain/units.ts fast formatters);
 *   - the body is built once as `pre` + `post` around the hash, hashed, and the hash spliced in;
 *   - the constant parts of a market (ids, minimum size, tick, neg risk) are built once per registration.
 */
import { createHash } from 'node:crypto';
import { PIPS, formatPipsFast, formatUnitsFast } from '../../domain/units.ts';
import type { Depth, Level } from '../book/api.ts';

/** The parts of a market's two bodies that change only with its registration. */
export interface BookFrame {
  /** Per outcome: `{"market":"…","asset_id":"…","timestamp":"`. */
  heads: readonly [string, string];
  /** `"],"min_order_size":"…","tick_size":"…","neg_risk":…,"last_trade_price":"` closes the asks. */
  tail: string;
}

export interface FrameInput {
  conditionId: string;
  tokenIds: readonly [string, string];
  negRisk: boolean;
  minSizeUnits: number;
  tickPips: number;
}

/** Allocates: once per market registration. */
export function bookFrame(m: FrameInput): BookFrame {
  const head = (tokenId: string) => `{"market":${JSON.stringify(m.conditionId)},"asset_id":${JSON.stringify(tokenId)},"timestamp":"`;
  return {
    heads: [head(m.tokenIds[0]), head(m.tokenIds[1])],
    tail: `],"min_order_size":${JSON.stringify(formatUnitsFast(m.minSizeUnits))},"tick_size":${JSON.stringify(formatPipsFast(m.tickPips))},"neg_risk":${m.negRisk === true},"last_trade_price":"`,
  };
}

/** `{"price":"0.45","size":"` per price in pips, made on first use. */
const LEVEL_HEAD: Array<string | undefined> = new Array(PIPS + 1);

function levelHead(pips: number): string {
  return LEVEL_HEAD[pips] ?? (LEVEL_HEAD[pips] = `{"price":"${formatPipsFast(pips)}","size":"`);
}

/**
 * The /book bodies of outcome 0 and 1, from outcome 0's depth. `lastTradePips` 0 = no trade yet ("").
 * Allocates: the strings (publication only, never inside matching).
 */
export function bookBodies(frame: BookFrame, depth0: Depth, lastTradePips: readonly [number, number], nowSec: number): [string, string] {
  // Outcome 0's bids are outcome 1's asks and the other way round, level for level.
  const [b0, a1] = levelsJson(depth0.bids);
  const [a0, b1] = levelsJson(depth0.asks);
  const ts = nowSec + '","hash":"';
  return [body(frame.heads[0] + ts, b0, a0, frame.tail, lastTradePips[0]), body(frame.heads[1] + ts, b1, a1, frame.tail, lastTradePips[1])];
}

/** One side's levels as JSON array items, and the same levels at the mirrored price (the other outcome). */
function levelsJson(levels: readonly Level[]): [string, string] {
  let same = '';
  let mirrored = '';
  for (let i = 0; i < levels.length; i++) {
    const l = levels[i];
    const size = formatUnitsFast(l.sizeUnits) + '"}';
    const sep = i === 0 ? '' : ',';
    same += sep + levelHead(l.pricePips) + size;
    mirrored += sep + levelHead(PIPS - l.pricePips) + size;
  }
  return [same, mirrored];
}

function body(pre: string, bids: string, asks: string, tail: string, lastPips: number): string {
  const post = '","bids":[' + bids + '],"asks":[' + asks + tail + (lastPips > 0 ? formatPipsFast(lastPips) : '') + '"}';
  const hash = createHash('sha1').update(pre).update(post).digest('hex');
  return pre + hash + post;
}
