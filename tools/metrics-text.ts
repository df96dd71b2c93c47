/**
 * Reading the service's /metrics (Prometheus text format) from the tools and benchmarks: one histogram's
 * cumulative buckets, the difference between two scrapes (what happened over a window), and quantiles
 * estimated from buckets the way Prometheus' histogram_quantile does (linear within the bucket that holds
 * the rank). An estimate is only as fine as the buckets: src/edge/metrics.ts chose them for that.
 */

export interface Histogram {
  /** Cumulative counts by upper bound, ascending; the last bound is Infinity (+Inf). */
  buckets: Array<{ le: number; count: number }>;
  count: number;
  sum: number;
}

const LINE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/;

function labelsOf(text: string | undefined): Map<string, string> {
  return new Map([...(text ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
}

/** The histogram `name` whose labels include `labels` (the first such series); undefined when absent. */
export function histogramOf(text: string, name: string, labels: Record<string, string> = {}): Histogram | undefined {
  const want = Object.entries(labels);
  const buckets: Array<{ le: number; count: number }> = [];
  let count: number | undefined;
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (m === null || !m[1]!.startsWith(name)) continue;
    const suffix = m[1]!.slice(name.length);
    if (suffix !== '_bucket' && suffix !== '_count' && suffix !== '_sum') continue;
    const have = labelsOf(m[2]);
    if (!want.every(([k, v]) => have.get(k) === v)) continue;
    const value = Number(m[3]);
    if (suffix === '_bucket') {
      const le = have.get('le');
      buckets.push({ le: le === '+Inf' ? Infinity : Number(le), count: value });
    } else if (suffix === '_count') count = value;
    else sum = value;
  }
  if (count === undefined || buckets.length === 0) return undefined;
  buckets.sort((a, b) => a.le - b.le);
  return { buckets, count, sum };
}

/** What `after` observed since `before` (same buckets); `before` undefined means from zero. */
export function histogramDelta(after: Histogram, before: Histogram | undefined): Histogram {
  if (before === undefined) return after;
  return {
    buckets: after.buckets.map((b, i) => ({ le: b.le, count: b.count - (before.buckets[i]?.count ?? 0) })),
    count: after.count - before.count,
    sum: after.sum - before.sum,
  };
}

/**
 * The q-quantile (0..1) estimated from the buckets: NaN when nothing was observed; the highest finite
 * bound when the rank falls in +Inf (the true value is above it).
 */
export function quantileOf(h: Histogram, q: number): number {
  if (h.count <= 0) return NaN;
  const rank = q * h.count;
  let lower = 0;
  let below = 0;
  for (const b of h.buckets) {
    if (b.count >= rank) {
      if (b.le === Infinity) return lower;
      const inBucket = b.count - below;
      return inBucket <= 0 ? b.le : lower + ((b.le - lower) * (rank - below)) / inBucket;
    }
    lower = b.le;
    below = b.count;
  }
  return lower;
}

/** Observations above `bound` (a bucket bound of the histogram). */
export function countAbove(h: Histogram, bound: number): number {
  const b = h.buckets.find((x) => x.le === bound);
  return b === undefined ? NaN : h.count - b.count;
}
