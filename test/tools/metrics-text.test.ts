import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countAbove, histogramDelta, histogramOf, quantileOf, sampleOf } from '../../tools/metrics-text.ts';

const scrape = (a: number[], count: number, sum: number, extra = '') =>
  [
    '# HELP x_seconds help',
    '# TYPE x_seconds histogram',
    ...[0.001, 0.005, 0.01].map((le, i) => `x_seconds_bucket{le="${le}",stage="checks"} ${a[i]}`),
    `x_seconds_bucket{le="+Inf",stage="checks"} ${count}`,
    `x_seconds_sum{stage="checks"} ${sum}`,
    `x_seconds_count{stage="checks"} ${count}`,
    'x_seconds_bucket{le="0.001",stage="engine"} 7',
    'x_seconds_bucket{le="+Inf",stage="engine"} 7',
    'x_seconds_sum{stage="engine"} 0.003',
    'x_seconds_count{stage="engine"} 7',
    'x_seconds_total_bucket{le="1"} 99',
    extra,
  ].join('\n');

test('a histogram is read by name and labels, buckets in order, +Inf as Infinity', () => {
  const h = histogramOf(scrape([10, 60, 90], 100, 0.5), 'x_seconds', { stage: 'checks' });
  assert.deepEqual(h, {
    buckets: [
      { le: 0.001, count: 10 },
      { le: 0.005, count: 60 },
      { le: 0.01, count: 90 },
      { le: Infinity, count: 100 },
    ],
    count: 100,
    sum: 0.5,
  });
  assert.equal(histogramOf(scrape([10, 60, 90], 100, 0.5), 'x_seconds', { stage: 'engine' })?.count, 7);
  assert.equal(histogramOf(scrape([10, 60, 90], 100, 0.5), 'x_seconds', { stage: 'nope' }), undefined);
  // Without a label to pick one, the first series is read, never a mix of two.
  assert.deepEqual(histogramOf(scrape([10, 60, 90], 100, 0.5), 'x_seconds'), histogramOf(scrape([10, 60, 90], 100, 0.5), 'x_seconds', { stage: 'checks' }));
  assert.equal(histogramOf(scrape([10, 60, 90], 100, 0.5), 'y_seconds'), undefined);
});

test('the difference of two scrapes is what the window observed', () => {
  const before = histogramOf(scrape([5, 10, 10], 10, 0.02), 'x_seconds', { stage: 'checks' })!;
  const after = histogramOf(scrape([15, 70, 100], 110, 0.52), 'x_seconds', { stage: 'checks' })!;
  const d = histogramDelta(after, before);
  assert.deepEqual(
    d.buckets.map((b) => b.count),
    [10, 60, 90, 100],
  );
  assert.equal(d.count, 100);
  assert.ok(Math.abs(d.sum - 0.5) < 1e-12);
  assert.deepEqual(histogramDelta(after, undefined), after);
});

test('quantiles interpolate within the bucket holding the rank, as histogram_quantile does', () => {
  const h = histogramOf(scrape([10, 60, 90], 100, 0.5), 'x_seconds', { stage: 'checks' })!;
  // Rank 50 lies in (0.001, 0.005]: 40 of that bucket's 50 observations in -> 0.001 + 0.004 * 40/50.
  assert.ok(Math.abs(quantileOf(h, 0.5) - 0.0042) < 1e-12);
  // Rank 5 lies in the first bucket, from 0.
  assert.ok(Math.abs(quantileOf(h, 0.05) - 0.0005) < 1e-12);
  // Rank 99 lies in +Inf: the highest finite bound is all that is known.
  assert.equal(quantileOf(h, 0.99), 0.01);
  assert.ok(Number.isNaN(quantileOf({ buckets: [{ le: Infinity, count: 0 }], count: 0, sum: 0 }, 0.5)));
  assert.equal(countAbove(h, 0.005), 40);
  assert.equal(countAbove(h, 0.01), 10);
  assert.ok(Number.isNaN(countAbove(h, 0.002)));
});

test('a single sample is read by name and labels in any order; NaN when absent', () => {
  const text = ['# HELP y help', 'y_total{b="2",a="1"} 5', 'y_total{a="1",b="3"} 6', 'z 7', ''].join('\n');
  assert.equal(sampleOf(text, 'y_total', { a: '1', b: '3' }), 6);
  assert.equal(sampleOf(text, 'y_total', { b: '2' }), 5);
  assert.equal(sampleOf(text, 'z'), 7);
  assert.ok(Number.isNaN(sampleOf(text, 'y_total', { a: '2' })));
  assert.ok(Number.isNaN(sampleOf(text, 'nope')));
});
