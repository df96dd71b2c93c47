/**
 * Price history reads (GET /prices-history, POST /batch-prices-history): the window and bucket width a request
 * asks for, and a token's samples in it grouped into buckets, read synchronously from the `prices` view that
 * projections/market-data.ts maintains, through its RangeOverlay (the samples of the last, not yet committed,
 * transaction included). Rules (bucketing, defaults, bounds) are in docs/decisions/market-data.md.
 *
 * Separate from the book reads of market-data.ts (which hands its calls here) because it reads another store
 * (LMDB samples, not the committed books) and its cost is bounded another way: by buckets, not by samples.
 * Imports domain/, journal/keys.ts and the store's type; never the engine or the books.
 */
import { apiError } from '../domain/errors.ts';
import { MIN_FIDELITY, type HistoryInterval } from '../domain/price-history.ts';
import { PIPS } from '../domain/units.ts';
import type { HistoryPoint } from '../edge/schemas/market-data.ts';
import { priceKey } from '../journal/keys.ts';
import type { MarketDataStore } from '../projections/market-data.ts';

/** Window length of each interval ending now; '1m' is one month (30 days), as on the platform's charts. */
const INTERVAL_SECONDS: Record<Exclude<HistoryInterval, 'max' | 'all'>, number> = {
  '1h': 3600,
  '6h': 6 * 3600,
  '1d': 86_400,
  '1w': 7 * 86_400,
  '1m': 30 * 86_400,
};

/** Most buckets one series may span (30 days at 1-minute fidelity fit). */
export const MAX_HISTORY_POINTS = 50_000;
/** Samples of one bucket read one by one before deciding whether to skip the rest of it with a seek... */
const DENSE_BUCKET = 8;
/** ...which happens when at least this many more samples are expected in the bucket. */
const SKIP_AT_LEAST = 32;

export interface HistoryParams {
  startTs?: number;
  endTs?: number;
  interval?: HistoryInterval;
  fidelity?: number;
}

export interface HistoryWindow {
  start: number;
  end: number;
  /** Bucket width in minutes. */
  fidelity: number;
}

const bad = (detail: string) => apiError('PM_ERR_BAD_REQUEST', { detail });

export class PriceHistoryReader {
  constructor(private readonly md: Pick<MarketDataStore, 'prices'>) {}

  /** First recorded second of a token's history, undefined when it has none. */
  private firstSample(tokenId: string): number | undefined {
    for (const e of this.md.prices.range(priceKey(tokenId, 0), priceKey(tokenId, Number.MAX_SAFE_INTEGER))) return e.key[1] as number;
    return undefined;
  }

  /**
   * The window and bucket width of a request (throws a 400 for a bad combination):
   *   interval          [now - length, now]; 'max'/'all' from the first sample of the listed tokens;
   *   startTs/endTs     either or both; a missing start is the first sample, a missing end is now;
   *   neither           interval 'max';
   *   fidelity          given: at most MAX_HISTORY_POINTS buckets over the window; absent: 1 minute, or
   *                     the smallest width that keeps the window within MAX_HISTORY_POINTS buckets.
   */
  historyWindow(tokenIds: readonly string[], p: HistoryParams, nowSec: number): HistoryWindow {
    const hasRange = p.startTs !== undefined || p.endTs !== undefined;
    if (p.interval !== undefined && hasRange) throw bad('interval cannot be combined with startTs/endTs');
    const earliest = (): number | undefined => {
      let min: number | undefined;
      for (const id of tokenIds) {
        const f = this.firstSample(id);
        if (f !== undefined && (min === undefined || f < min)) min = f;
      }
      return min;
    };
    let start: number;
    let end: number;
    const interval = p.interval ?? (hasRange ? undefined : 'max');
    if (interval === undefined) {
      end = p.endTs ?? nowSec;
      if (p.startTs !== undefined) start = p.startTs;
      else start = Math.min(earliest() ?? end, end);
      if (start > end) throw bad(p.endTs === undefined ? 'startTs must not be after endTs (default: now)' : 'startTs must not be after endTs');
    } else if (interval === 'max' || interval === 'all') {
      end = nowSec;
      start = Math.min(earliest() ?? end, end);
    } else {
      end = nowSec;
      start = Math.max(0, nowSec - INTERVAL_SECONDS[interval]);
    }
    const buckets = (f: number) => Math.floor(end / (f * 60)) - Math.floor(start / (f * 60)) + 1;
    let fidelity: number;
    if (p.fidelity !== undefined) {
      fidelity = p.fidelity;
      const n = buckets(fidelity);
      if (n > MAX_HISTORY_POINTS) {
        let min = Math.max(fidelity + 1, Math.ceil((end - start + 1) / 60 / MAX_HISTORY_POINTS));
        while (buckets(min) > MAX_HISTORY_POINTS) min++;
        throw bad(`fidelity ${fidelity} spans ${n} points over this window, more than ${MAX_HISTORY_POINTS}: use fidelity >= ${min} or a shorter window`);
      }
    } else {
      fidelity = Math.max(MIN_FIDELITY, Math.ceil((end - start + 1) / 60 / MAX_HISTORY_POINTS));
      while (buckets(fidelity) > MAX_HISTORY_POINTS) fidelity++;
    }
    return { start, end, fidelity };
  }

  /**
   * The token's samples in [start, end] grouped into buckets of `fidelity` minutes aligned to the unix
   * epoch: one point per bucket that holds a sample, t = the bucket's start, p = its last sample (the
   * price in effect at the bucket's close). Buckets without samples are left out.
   *
   * Reads are bounded by the buckets, not by the samples: after DENSE_BUCKET samples of one bucket the
   * rest of it is skipped with one reverse seek to its last sample, so an hourly series over minute
   * samples reads a few entries per hour. The samples still queued for commit are merged in last.
   */
  history(tokenId: string, w: HistoryWindow): HistoryPoint[] {
    const width = w.fidelity * 60;
    const endEx = w.end + 1;
    const db = this.md.prices.db;
    const starts: number[] = [];
    const lastSec: number[] = [];
    const values: number[] = [];
    /** Keeps the latest sample of bucket `b`; buckets arrive in order, except queued samples (below). */
    const record = (b: number, sec: number, v: number): void => {
      let lo = 0;
      let hi = starts.length;
      if (hi > 0 && starts[hi - 1] < b) lo = hi;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (starts[mid] < b) lo = mid + 1;
        else hi = mid;
      }
      if (starts[lo] === b) {
        if (sec >= lastSec[lo]) {
          lastSec[lo] = sec;
          values[lo] = v;
        }
        return;
      }
      if (lo === starts.length) {
        starts.push(b);
        lastSec.push(sec);
        values.push(v);
      } else {
        starts.splice(lo, 0, b);
        lastSec.splice(lo, 0, sec);
        values.splice(lo, 0, v);
      }
    };
    let from = w.start;
    scan: while (from < endEx) {
      let bucket = -1;
      let n = 0;
      let first = 0;
      for (const e of db.getRange({ start: priceKey(tokenId, from), end: priceKey(tokenId, endEx) })) {
        const sec = e.key[1] as number;
        const b = sec - (sec % width);
        if (b !== bucket) {
          bucket = b;
          n = 0;
          first = sec;
        }
        record(b, sec, e.value as number);
        if (++n !== DENSE_BUCKET) continue;
        const next = Math.min(b + width, endEx);
        // A seek costs about as much as a few dozen sequential reads: skip only when the pace of the
        // samples read so far predicts many more in this bucket.
        if (((next - sec) * (n - 1)) / (sec - first + 1) > SKIP_AT_LEAST) {
          // Keys are whole seconds, so next - 0.5 sorts after every sample of this bucket and before the next's.
          for (const t of db.getRange({ start: priceKey(tokenId, next - 0.5), end: priceKey(tokenId, sec), reverse: true, limit: 1 })) {
            record(b, t.key[1] as number, t.value as number);
          }
          from = next;
          continue scan;
        }
      }
      break;
    }
    for (const q of this.md.prices.queuedIn(priceKey(tokenId, w.start), priceKey(tokenId, endEx))) {
      const sec = q.key[1] as number;
      record(sec - (sec % width), sec, q.value as number);
    }
    const out: HistoryPoint[] = new Array(starts.length);
    for (let i = 0; i < starts.length; i++) out[i] = { t: starts[i], p: values[i] / PIPS };
    return out;
  }
}
