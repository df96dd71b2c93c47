/**
 * A token's price over time: GET /prices-history for the chosen range, then the midpoint of the live book
 * after each change and every trade price from the market channel: the two kinds of sample the service
 * records (it keeps at most one midpoint a minute, so a reload draws the same line with fewer points).
 * The container carries what was last drawn (`data-last-time`, `data-last-value`, `data-points`) for its
 * label and for tests.
 */
import { createChart, LineSeries, type IChartApi, type ISeriesApi, type UTCTimestamp } from 'lightweight-charts';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { HistoryPoint } from '../../../src/edge/schemas/market-data.ts';
import { call, messageOf, query } from '../api.ts';
import type { MarketFeed } from '../books.ts';
import { price, time } from '../format.ts';
import { ErrorText } from './common.tsx';

/** Each range's interval and bucket width (minutes), a few hundred points at most. */
export const RANGES = {
  '1h': { interval: '1h', fidelity: 1 },
  '6h': { interval: '6h', fidelity: 1 },
  '1d': { interval: '1d', fidelity: 5 },
  '1w': { interval: '1w', fidelity: 30 },
  max: { interval: 'max', fidelity: 180 },
} as const;
export type Range = keyof typeof RANGES;

interface Point {
  time: UTCTimestamp;
  value: number;
}

function palette(): { text: string; grid: string; line: string } {
  const dark = window.matchMedia?.('(prefers-color-scheme: dark)').matches === true;
  return dark ? { text: '#c9d1d9', grid: '#30363d', line: '#58a6ff' } : { text: '#24292f', grid: '#eaeef2', line: '#0969da' };
}

export function PriceChart({ feed, tokenId, outcome }: { feed: MarketFeed; tokenId: string; outcome: string }) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<{ api: IChartApi; series: ISeriesApi<'Line'> } | undefined>(undefined);
  const last = useRef<Point | undefined>(undefined);
  const [range, setRange] = useState<Range>('1d');
  const [error, setError] = useState('');
  const [shown, setShown] = useState<{ points: number; last?: Point }>({ points: 0 });

  useEffect(() => {
    const el = box.current!;
    const p = palette();
    const api = createChart(el, {
      autoSize: true,
      // The chart's own attribution logo injects a <style> element, which the page's policy refuses (style-src
      // 'self'); the footer carries the attribution notice and link the library's licence asks for instead.
      layout: { background: { color: 'transparent' }, textColor: p.text, attributionLogo: false },
      grid: { vertLines: { color: p.grid }, horzLines: { color: p.grid } },
      timeScale: { timeVisible: true, secondsVisible: false },
      localization: { priceFormatter: (v: number) => v.toFixed(3) },
    });
    const series = api.addSeries(LineSeries, { color: p.line, lineWidth: 2, priceFormat: { type: 'price', precision: 3, minMove: 0.001 } });
    chart.current = { api, series };
    return () => {
      chart.current = undefined;
      api.remove();
    };
  }, []);

  const draw = (points: Point[]) => {
    last.current = points[points.length - 1];
    setShown({ points: points.length, last: last.current });
  };

  // History for the token and range, then live samples on top of it.
  useEffect(() => {
    const ctl = new AbortController();
    const c = chart.current!;
    let points: Point[] = [];
    let ready = false;
    const pending: Point[] = [];
    const add = (pt: Point) => {
      if (!ready) {
        pending.push(pt);
        return;
      }
      // The chart takes times in order only: a sample within the last point's second replaces it.
      const at = last.current !== undefined && pt.time < last.current.time ? last.current.time : pt.time;
      const point = { time: at, value: pt.value };
      c.series.update(point);
      if (last.current !== undefined && last.current.time === at) points[points.length - 1] = point;
      else points.push(point);
      draw(points);
    };
    // The midpoint of the book as the frame left it, then the frame's trades: within a minute the service
    // records the first midpoint and every trade price after it, so a trade's price is the latest sample.
    const off = feed.onChange((change) => {
      if (change.books.includes(tokenId)) {
        const book = feed.books.get(tokenId)!;
        const mid = book.midpoint();
        if (mid !== undefined) add({ time: Math.floor((book.at || Date.now()) / 1000) as UTCTimestamp, value: mid });
      }
      for (const t of change.trades) {
        if (t.asset_id === tokenId) add({ time: Math.floor(Number(t.timestamp) / 1000) as UTCTimestamp, value: Number(t.price) });
      }
    });
    setError('');
    const r = RANGES[range];
    call<{ history: HistoryPoint[] }>(`/prices-history${query({ market: tokenId, interval: r.interval, fidelity: r.fidelity })}`, { signal: ctl.signal }).then(
      ({ history }) => {
        if (ctl.signal.aborted) return;
        points = history.map((h) => ({ time: h.t as UTCTimestamp, value: h.p }));
        c.series.setData(points);
        c.api.timeScale().fitContent();
        last.current = points[points.length - 1];
        draw(points);
        ready = true;
        for (const pt of pending.splice(0)) add(pt);
      },
      (e: unknown) => {
        if (ctl.signal.aborted) return;
        setError(messageOf(e));
        ready = true;
        for (const pt of pending.splice(0)) add(pt);
      },
    );
    return () => {
      ctl.abort();
      off();
    };
  }, [feed, tokenId, range]);

  const summary = shown.last ? `${outcome} price ${price(shown.last.value)} at ${time(shown.last.time)}` : `${outcome}: no price recorded in this range`;
  return (
    <div class="chart-block">
      <div class="chart-tools" role="group" aria-label="Chart range">
        {(Object.keys(RANGES) as Range[]).map((k) => (
          <button key={k} type="button" class={k === range ? 'chip active' : 'chip'} aria-pressed={k === range} onClick={() => setRange(k)}>
            {k}
          </button>
        ))}
      </div>
      <div
        class="chart"
        ref={box}
        role="img"
        aria-label={summary}
        data-token-id={tokenId}
        data-points={shown.points}
        data-last-time={shown.last?.time ?? ''}
        data-last-value={shown.last?.value ?? ''}
      />
      <p class="muted small">{summary}</p>
      <ErrorText error={error} />
    </div>
  );
}
