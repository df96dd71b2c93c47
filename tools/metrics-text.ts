/**
 * Reading the service's /metrics (Prometheus text format) from the tools, tests and benchmarks: one sample's
 * value, one histogram's cumulative buckets, the difference between two scrapes (what happened over a
 * window), and quantiles estimated from buckets the way Prometheus' histogram_quantile does (linear within
 * the bucket that holds the rank). An estimate is only as fine as the buckets: src/edge/pipeline/metrics.ts chose
 * them for that.
 */

export interface Histogram {
  /** Cumulative counts by upper bound, ascending; the last bound is Infinity (+Inf). */
  buckets: Array<{ le: number; count: number }>;
  count: number;
  sum: number;
}

interface Sample {
  name: string;
  labels: Map<string, string>;
  value: number;
}

/** Every sample line of a scrape (comments and blank lines skipped). */
function* samplesOf(text: string): Generator<Sample> {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null) continue;
    const labels = new Map([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
    yield { name: m[1]!, labels, value: Number(m[3]) };
  }
}

const hasLabels = (have: Map<string, string>, want: Record<string, string>) => Object.entries(want).every(([k, v]) => have.get(k) === v);

/** The value of the first sample `name` whose labels include `labels` (in any order); NaN when absent. */
export function sampleOf(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const s of samplesOf(text)) if (s.name === name && hasLabels(s.labels, labels)) return s.value;
  return NaN;
}

/** The histogram `name` whose labels include `labels` (the first such series); undefined when absent. */
export function histogramOf(text: string, name: string, labels: Record<string, string> = {}): Histogram | undefined {
  const buckets: Array<{ le: number; count: number }> = [];
  let count: number | undefined;
  let sum = 0;
  let series: string | undefined;
  for (const { name: n, labels: have, value } of samplesOf(text)) {
    if (!n.startsWith(name)) continue;
    const suffix = n.slice(name.length);
    if (suffix !== '_bucket' && suffix !== '_count' && suffix !== '_sum') continue;
    if (!hasLabels(have, labels)) continue;
    // One series: the label set (but `le`) of the first matching sample.
    const id = [...have].filter(([k]) => k !== 'le').sort().join(',');
    if ((series ??= id) !== id) continue;
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
