/**
 * Every market of GET /markets (500 a page, more on demand), filtered in the page by a search over the
 * question, slug and tags, a tag and a status; prices move with each trade on the market channel
 * (`last_trade_price`, without the initial books: the list needs prices, not depth).
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { LastTradePriceEvent, MarketChannelEvent } from '../../../src/edge/schemas/stream.ts';
import type { MarketBook, MarketsPage as MarketsReply } from '../../../src/edge/schemas/catalog.ts';
import { call, messageOf, query } from '../api.ts';
import { ChannelBadge, ErrorText, useLoad } from '../components/common.tsx';
import { bps, price } from '../format.ts';
import { href } from '../router.ts';
import { Channel } from '../stream.ts';

export const END_CURSOR = 'LTE=';
/** Assets one market-channel socket may follow (the service's default stream.maxSubscriptionsPerSocket). */
const MAX_ASSETS = 500;

export type MarketStatus = 'open' | 'paused' | 'closed' | 'resolved';
export const STATUSES: readonly MarketStatus[] = ['open', 'paused', 'closed', 'resolved'];

export function statusOf(m: Pick<MarketBook, 'active' | 'closed' | 'accepting_orders' | 'tokens'>): MarketStatus {
  if (m.tokens.some((t) => t.winner)) return 'resolved';
  if (m.closed) return 'closed';
  return m.active && m.accepting_orders ? 'open' : 'paused';
}

function matches(m: MarketBook, words: string[], tag: string, status: string): boolean {
  if (status !== 'all' && statusOf(m) !== status) return false;
  if (tag !== '' && !m.tags.includes(tag)) return false;
  const text = `${m.question} ${m.market_slug} ${m.tags.join(' ')}`.toLowerCase();
  return words.every((w) => text.includes(w));
}

export function MarketsPage() {
  const [pages, setPages] = useState<MarketsReply[]>([]);
  const first = useLoad('markets', (signal) => call<MarketsReply>('/markets', { signal }));
  const [more, setMore] = useState({ loading: false, error: '' });
  const [search, setSearch] = useState('');
  const [tag, setTag] = useState('');
  const [status, setStatus] = useState<string>('open');
  const [prices, setPrices] = useState<Record<string, string>>({});

  useEffect(() => {
    if (first.data) setPages([first.data]);
  }, [first.data]);

  const markets = useMemo(() => pages.flatMap((p) => p.data), [pages]);
  const next = pages.length > 0 ? pages[pages.length - 1].next_cursor : END_CURSOR;
  const tags = useMemo(() => [...new Set(markets.flatMap((m) => m.tags))].sort(), [markets]);
  const shown = useMemo(() => {
    const words = search.toLowerCase().split(/\s+/).filter((w) => w !== '');
    return markets.filter((m) => matches(m, words, tag, status));
  }, [markets, search, tag, status]);

  // Live prices for the markets loaded (as many as one socket may follow): the subscription changes when a
  // page of markets loads, not with every keystroke of the search.
  const assets = useMemo(() => markets.flatMap((m) => m.tokens.map((t) => t.token_id)).slice(0, MAX_ASSETS), [markets]);
  const assetKey = assets.join(',');
  const [channel, setChannel] = useState<Channel<MarketChannelEvent> | undefined>(undefined);
  useEffect(() => {
    if (assets.length === 0) return;
    const ch = new Channel<MarketChannelEvent>('/ws/market', () => ({ type: 'market', assets_ids: assets, initial_dump: false }));
    ch.onEvents((events) => {
      const trades = events.filter((e): e is LastTradePriceEvent => e.event_type === 'last_trade_price');
      if (trades.length > 0) setPrices((p) => ({ ...p, ...Object.fromEntries(trades.map((t) => [t.asset_id, t.price])) }));
    });
    ch.start();
    setChannel(ch);
    return () => ch.close();
  }, [assetKey]);

  const loadMore = async () => {
    setMore({ loading: true, error: '' });
    try {
      const page = await call<MarketsReply>(`/markets${query({ next_cursor: next })}`);
      setPages((p) => [...p, page]);
      setMore({ loading: false, error: '' });
    } catch (e) {
      setMore({ loading: false, error: messageOf(e) });
    }
  };

  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Markets</h1>
        <ChannelBadge channel={channel} label="Prices" />
      </div>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} placeholder="question, slug or tag" />
        </label>
        <label>
          Tag
          <select value={tag} onChange={(e) => setTag(e.currentTarget.value)}>
            <option value="">Any tag</option>
            {tags.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)} name="status">
            <option value="all">Any status</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorText error={first.error} />
      <p class="muted" aria-live="polite" data-testid="market-count">
        {first.loading && markets.length === 0 ? 'Loading markets…' : `${shown.length} of ${markets.length} markets loaded`}
      </p>
      <div class="table-wrap">
        <table class="markets">
          <thead>
            <tr>
              <th scope="col">Market</th>
              <th scope="col" class="wide">
                Tags
              </th>
              <th scope="col">Status</th>
              <th scope="col" class="num">
                Prices
              </th>
              <th scope="col" class="num wide">
                Tick
              </th>
              <th scope="col" class="num wide">
                Fees (maker / taker)
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((m) => {
              const st = statusOf(m);
              return (
                <tr key={m.condition_id} data-condition-id={m.condition_id}>
                  <td>
                    <a href={href('market', m.market_slug)}>{m.question}</a>
                  </td>
                  <td class="wide">{m.tags.join(', ')}</td>
                  <td>
                    <span class={`tag status-${st}`}>{st}</span>
                  </td>
                  <td class="num prices">
                    {m.tokens.map((t) => (
                      <span key={t.token_id} class={t.winner ? 'winner' : undefined} data-token-id={t.token_id}>
                        {t.outcome} {price(prices[t.token_id] ?? t.price)}
                      </span>
                    ))}
                  </td>
                  <td class="num wide">{m.minimum_tick_size}</td>
                  <td class="num wide">
                    {bps(m.maker_base_fee)} / {bps(m.taker_base_fee)}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {next !== END_CURSOR && (
        <p>
          <button type="button" onClick={loadMore} disabled={more.loading}>
            {more.loading ? 'Loading…' : 'Load more markets'}
          </button>
        </p>
      )}
      <ErrorText error={more.error} />
    </>
  );
}
