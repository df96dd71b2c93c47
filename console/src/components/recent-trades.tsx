/**
 * A market's tape: its latest fills from GET /trades (each once, from the taker's side), then every
 * `last_trade_price` of its tokens as it arrives. A mint or merge fills both tokens, so it shows on
 * both; a reconnection reads the REST list again, since trades made while the socket was down never
 * arrive on it.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Trade } from '../../../src/edge/schemas/wallets.ts';
import { call, query } from '../api.ts';
import type { MarketFeed } from '../books.ts';
import { amount, price, time } from '../format.ts';
import { ErrorText, useLoad } from './common.tsx';

const SHOWN = 30;

interface TapeRow {
  key: string;
  at: number;
  outcome: string;
  side: string;
  price: string | number;
  size: string | number;
}

export function RecentTrades({ feed, conditionId, outcomes }: { feed: MarketFeed; conditionId: string; outcomes: Record<string, string> }) {
  const [opens, setOpens] = useState(feed.channel.opens);
  useEffect(() => feed.channel.onStatus(() => setOpens(feed.channel.opens)), [feed]);
  const rest = useLoad(`${conditionId}|${Math.max(opens, 1)}`, (signal) => call<Trade[]>(`/trades${query({ market: conditionId, limit: SHOWN })}`, { signal }));
  const [live, setLive] = useState<TapeRow[]>([]);

  useEffect(() => {
    setLive([]);
    return feed.onChange((c) => {
      if (c.trades.length === 0) return;
      const rows = c.trades.map((t) => ({
        key: `${t.transaction_hash}|${t.asset_id}`,
        at: Number(t.timestamp),
        outcome: outcomes[t.asset_id] ?? t.asset_id,
        side: t.side,
        price: t.price,
        size: t.size,
      }));
      setLive((l) => [...rows.reverse(), ...l].slice(0, SHOWN));
    });
  }, [feed]);

  const fromRest: TapeRow[] = (rest.data ?? []).map((t) => ({
    key: `${t.transactionHash}|${t.asset}`,
    at: t.timestamp * 1000,
    outcome: t.outcome,
    side: t.side,
    price: t.price,
    size: t.size,
  }));
  const seen = new Set(live.map((r) => r.key.split('|')[0]));
  const rows = [...live, ...fromRest.filter((r) => !seen.has(r.key.split('|')[0]))].slice(0, SHOWN);

  return (
    <div class="table-wrap">
      <ErrorText error={rest.error} />
      <table class="trades" aria-label="Recent trades" data-rows={rows.length}>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Outcome</th>
            <th scope="col">Side</th>
            <th scope="col" class="num">
              Price
            </th>
            <th scope="col" class="num">
              Size
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={5} class="muted">
                {rest.loading ? 'Loading…' : 'No trades yet'}
              </td>
            </tr>
          )}
          {rows.map((r) => (
            <tr key={r.key}>
              <td>{time(r.at)}</td>
              <td>{r.outcome}</td>
              <td class={r.side === 'BUY' ? 'buy' : 'sell'}>{r.side}</td>
              <td class="num">{price(r.price)}</td>
              <td class="num">{amount(r.size)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
