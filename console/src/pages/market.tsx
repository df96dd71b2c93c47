/**
 * One market (by slug, GET /markets/slug/{slug}): both tokens' books as depth views, the price chart,
 * the tape, its trading parameters (tick, minimum size, fees, rewards), and the order ticket with the
 * connected wallet's open orders here. Books, chart and tape follow the market channel; a resolution
 * (`market_resolved`) reloads the market, which then shows the winner.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { MarketWithEvents } from '../../../src/edge/schemas/catalog.ts';
import { call } from '../api.ts';
import { MarketFeed } from '../books.ts';
import { ChannelBadge, ErrorText, Section, useLoad } from '../components/common.tsx';
import { DepthBook } from '../components/depth-book.tsx';
import { OpenOrders } from '../components/open-orders.tsx';
import { OrderTicket } from '../components/order-ticket.tsx';
import { PriceChart } from '../components/price-chart.tsx';
import { RecentTrades } from '../components/recent-trades.tsx';
import { amount, bps, time } from '../format.ts';
import { href } from '../router.ts';
import { useCell, wallet } from '../session.ts';

function parseList(text: string): string[] {
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

/** The winning outcome's index once resolved: the catalog closes the market and prices the winner 1, the loser 0. */
export function winnerOf(m: Pick<MarketWithEvents, 'closed' | 'outcomePrices'>): number | undefined {
  const p = parseList(m.outcomePrices);
  if (!m.closed || p.length !== 2) return undefined;
  if (Number(p[0]) === 1 && Number(p[1]) === 0) return 0;
  if (Number(p[0]) === 0 && Number(p[1]) === 1) return 1;
  return undefined;
}

function Info({ m }: { m: MarketWithEvents }) {
  const rewards = m.clobRewards.reduce((s, r) => s + r.rewardsDailyRate, 0);
  return (
    <dl class="facts">
      <dt>Tick</dt>
      <dd data-fact="tick">{m.orderPriceMinTickSize}</dd>
      <dt>Minimum size</dt>
      <dd>{amount(m.orderMinSize)} tokens</dd>
      <dt>Maker fee</dt>
      <dd data-fact="maker-fee">{bps(m.makerBaseFee)}</dd>
      <dt>Taker fee</dt>
      <dd data-fact="taker-fee">{bps(m.takerBaseFee)}</dd>
      <dt>Rewards</dt>
      <dd data-fact="rewards">
        {rewards > 0 ? `${amount(rewards)} / day for orders of ${amount(m.rewardsMinSize)}+ within ${m.rewardsMaxSpread}¢ of the midpoint` : 'none'}
      </dd>
      <dt>Neg risk</dt>
      <dd>{m.negRisk ? 'yes' : 'no'}</dd>
      <dt>Ends</dt>
      <dd>{m.endDate ? time(Date.parse(m.endDate)) : '–'}</dd>
      <dt>Condition id</dt>
      <dd class="mono break">{m.conditionId}</dd>
    </dl>
  );
}

export function MarketPage({ slug }: { slug: string }) {
  const market = useLoad(slug, (signal) => call<MarketWithEvents>(`/markets/slug/${encodeURIComponent(slug)}`, { signal }));
  const m = market.data;
  const tokenIds = useMemo(() => (m ? parseList(m.clobTokenIds) : []), [m?.clobTokenIds]);
  const outcomes = useMemo(() => (m ? parseList(m.outcomes) : []), [m?.outcomes]);
  const w = useCell(wallet);
  const [feed, setFeed] = useState<MarketFeed | undefined>(undefined);
  const [, setVersion] = useState(0);
  const [chartToken, setChartToken] = useState(0);

  const tokenKey = tokenIds.join(',');
  useEffect(() => {
    if (tokenIds.length !== 2) return;
    const f = new MarketFeed(tokenIds);
    const off = f.onChange((c) => {
      if (c.books.length > 0 || c.trades.length > 0) setVersion((v) => v + 1);
      if (c.resolved) market.reload();
    });
    f.start();
    setFeed(f);
    return () => {
      off();
      f.close();
      setFeed(undefined);
    };
  }, [tokenKey]);

  if (!m) {
    return (
      <>
        <h1 tabIndex={-1}>{market.loading ? 'Loading market…' : 'Market'}</h1>
        <ErrorText error={market.error} />
        <p>
          <a href={href()}>Back to the markets</a>
        </p>
      </>
    );
  }

  const winner = winnerOf(m);
  const byToken = Object.fromEntries(tokenIds.map((t, i) => [t, outcomes[i] ?? `Outcome ${i}`]));
  const status = winner !== undefined ? 'resolved' : m.closed ? 'closed' : m.active && m.acceptingOrders ? 'open' : 'paused';
  return (
    <>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href()}>Markets</a> / <span>{m.events[0]?.title ?? m.slug}</span>
      </nav>
      <div class="page-head">
        <h1 tabIndex={-1}>{m.question}</h1>
        <span class={`tag status-${status}`} data-testid="market-status">
          {status}
        </span>
        <ChannelBadge channel={feed?.channel} label="Market channel" />
      </div>
      {winner !== undefined && (
        <p class="resolved" role="status" data-testid="resolution">
          Resolved: <strong>{outcomes[winner]}</strong> won.
        </p>
      )}
      <ErrorText error={market.error} />
      <div class="market-grid">
        <div class="market-main">
          {feed && (
            <Section
              title="Price"
              id="chart"
              actions={
                <div class="chart-tools" role="group" aria-label="Outcome shown">
                  {tokenIds.map((t, i) => (
                    <button key={t} type="button" class={i === chartToken ? 'chip active' : 'chip'} aria-pressed={i === chartToken} onClick={() => setChartToken(i)}>
                      {outcomes[i]}
                    </button>
                  ))}
                </div>
              }
            >
              <PriceChart feed={feed} tokenId={tokenIds[chartToken]} outcome={outcomes[chartToken] ?? ''} />
            </Section>
          )}
          {feed && (
            <Section title="Books" id="books">
              <div class="books">
                {tokenIds.map((t, i) => (
                  <DepthBook key={t} book={feed.books.get(t)!} outcome={outcomes[i] ?? ''} winner={winner === i} />
                ))}
              </div>
            </Section>
          )}
          {feed && (
            <Section title="Recent trades" id="trades">
              <RecentTrades feed={feed} conditionId={m.conditionId} outcomes={byToken} />
            </Section>
          )}
        </div>
        <aside class="market-side">
          <Section title="Order ticket" id="ticket">
            <OrderTicket
              market={{
                conditionId: m.conditionId,
                tokens: tokenIds.map((id, i) => ({ id, outcome: outcomes[i] ?? `Outcome ${i}` })),
                tick: String(m.orderPriceMinTickSize),
                minSize: m.orderMinSize,
                negRisk: m.negRisk,
                acceptingOrders: m.acceptingOrders && !m.closed,
              }}
            />
          </Section>
          {w && (
            <Section title="Your open orders here" id="open-orders">
              <OpenOrders wallet={w} market={m.conditionId} outcomes={byToken} />
            </Section>
          )}
          <Section title="Market" id="info">
            {m.description !== '' && <p class="description">{m.description}</p>}
            <Info m={m} />
          </Section>
        </aside>
      </div>
    </>
  );
}
