/**
 * Any wallet's public record from the data API (GET /positions, /closed-positions, /trades), and for the
 * connected wallet also what only its credentials show: its balance, its open orders, its user channel as
 * it happens, and its last refusals with their reasons (GET /refusals: what a bot's SDK, which keeps only
 * the body, never showed). Each trade on that channel reads the public record again. The proxy wallet and
 * Safe the connected wallet signs for (signatureType 1 and 2) are its own too: their pages show the orders
 * it signed for them and its user channel, and its page links to them.
 */
import { useEffect, useState } from 'preact/hooks';
import type { UserChannelEvent } from '../../../src/edge/schemas/stream.ts';
import type { RefusalsPage } from '../../../src/edge/schemas/refusals.ts';
import type { ClosedPosition, Position, Trade } from '../../../src/edge/schemas/wallets.ts';
import { call, query } from '../api.ts';
import { AdminMade, ADMIN_OWNER, ChannelBadge, ErrorText, Section, useLoad, useThrottled } from '../components/common.tsx';
import { OpenOrders, useUserEvents } from '../components/open-orders.tsx';
import { WalletConnect } from '../components/wallet-connect.tsx';
import { amount, percent, price, short, time, usd } from '../format.ts';
import { href } from '../router.ts';
import { signedCall, useCell, wallet, type Wallet } from '../session.ts';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** Positions of at least one lot (0.01 token): the data API's default threshold of 1 token would hide smaller ones. */
export const POSITIONS_QUERY = { sizeThreshold: 0.01, limit: 100 };

function Lookup({ address }: { address: string }) {
  const [text, setText] = useState(address);
  const [problem, setProblem] = useState('');
  const go = (e: Event) => {
    e.preventDefault();
    const a = text.trim();
    if (!ADDRESS.test(a)) {
      setProblem('an address is 0x followed by 40 hex digits');
      return;
    }
    setProblem('');
    location.hash = href('wallet', a.toLowerCase());
  };
  return (
    <form class="filters" role="search" onSubmit={go}>
      <label>
        Wallet address
        <input name="address" class="address" value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder="0x…" spellcheck={false} autoComplete="off" />
      </label>
      <button type="submit">Show</button>
      <ErrorText error={problem} />
    </form>
  );
}

function Positions({ address, version }: { address: string; version: number }) {
  const p = useLoad(`${address}|${version}`, (signal) => call<Position[]>(`/positions${query({ user: address, ...POSITIONS_QUERY })}`, { signal }));
  const rows = p.data ?? [];
  return (
    <div class="table-wrap">
      <ErrorText error={p.error} />
      <table class="positions" aria-label="Positions" data-rows={rows.length}>
        <thead>
          <tr>
            <th scope="col">Market</th>
            <th scope="col">Outcome</th>
            <th scope="col" class="num">
              Size
            </th>
            <th scope="col" class="num wide">
              Avg price
            </th>
            <th scope="col" class="num">
              Price
            </th>
            <th scope="col" class="num">
              Value
            </th>
            <th scope="col" class="num">
              P&amp;L
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={7} class="muted">
                {p.loading ? 'Loading…' : 'No open positions'}
              </td>
            </tr>
          )}
          {rows.map((r) => (
            <tr key={r.asset} data-asset={r.asset} data-size={r.size}>
              <td>
                <a href={href('market', r.slug)}>{r.title}</a>
                {r.redeemable && <span class="tag status-resolved">redeemable</span>}
              </td>
              <td>{r.outcome}</td>
              <td class="num">{amount(r.size)}</td>
              <td class="num wide">{price(r.avgPrice)}</td>
              <td class="num">{price(r.curPrice)}</td>
              <td class="num">{usd(r.currentValue)}</td>
              <td class={`num ${r.cashPnl < 0 ? 'neg' : 'pos'}`}>
                {usd(r.cashPnl)} <span class="muted">({percent(r.percentPnl)})</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ClosedPositions({ address, version }: { address: string; version: number }) {
  const p = useLoad(`${address}|${version}`, (signal) => call<ClosedPosition[]>(`/closed-positions${query({ user: address, limit: 50 })}`, { signal }));
  const rows = p.data ?? [];
  return (
    <div class="table-wrap">
      <ErrorText error={p.error} />
      <table aria-label="Closed positions" data-rows={rows.length}>
        <thead>
          <tr>
            <th scope="col">Market</th>
            <th scope="col">Outcome</th>
            <th scope="col" class="num wide">
              Avg price
            </th>
            <th scope="col" class="num">
              Closed at
            </th>
            <th scope="col" class="num">
              Realized P&amp;L
            </th>
            <th scope="col" class="wide">
              When
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={6} class="muted">
                {p.loading ? 'Loading…' : 'No closed positions'}
              </td>
            </tr>
          )}
          {rows.map((r) => (
            <tr key={r.asset}>
              <td>
                <a href={href('market', r.slug)}>{r.title}</a>
              </td>
              <td>{r.outcome}</td>
              <td class="num wide">{price(r.avgPrice)}</td>
              <td class="num">{price(r.curPrice)}</td>
              <td class={`num ${r.realizedPnl < 0 ? 'neg' : 'pos'}`}>{usd(r.realizedPnl)}</td>
              <td class="wide">{time(r.timestamp)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Trades({ address, version }: { address: string; version: number }) {
  const t = useLoad(`${address}|${version}`, (signal) => call<Trade[]>(`/trades${query({ user: address, takerOnly: false, limit: 50 })}`, { signal }));
  const rows = t.data ?? [];
  return (
    <div class="table-wrap">
      <ErrorText error={t.error} />
      <table aria-label="Trades" data-rows={rows.length}>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Market</th>
            <th scope="col">Side</th>
            <th scope="col">Outcome</th>
            <th scope="col" class="num">
              Price
            </th>
            <th scope="col" class="num">
              Size
            </th>
            <th scope="col" class="num wide">
              USDC
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={7} class="muted">
                {t.loading ? 'Loading…' : 'No trades'}
              </td>
            </tr>
          )}
          {rows.map((r, i) => (
            <tr key={`${r.transactionHash}|${r.asset}|${i}`}>
              <td>{time(r.timestamp)}</td>
              <td>
                <a href={href('market', r.slug)}>{r.title}</a>
              </td>
              <td class={r.side === 'BUY' ? 'buy' : 'sell'}>{r.side}</td>
              <td>{r.outcome}</td>
              <td class="num">{price(r.price)}</td>
              <td class="num">{amount(r.size)}</td>
              <td class="num wide">{usd(r.usdcSize)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The connected wallet's last refusals, newest first, with what each one's X-Refusal-Reason said. */
function Refusals({ w }: { w: Wallet }) {
  const r = useLoad(w.address, (signal) => signedCall<RefusalsPage>(w, '/refusals', { signal }));
  const rows = r.data?.data ?? [];
  return (
    <div class="table-wrap">
      <p class="muted small">
        Requests signed with this wallet's keys or naming its address that the service refused, and why: the <code>X-Refusal-Reason</code> header most SDKs never
        show. Kept in memory, the last {r.data?.limit ?? 100}.{' '}
        <button type="button" class="link" onClick={r.reload}>
          Refresh
        </button>
      </p>
      <ErrorText error={r.error} />
      <table class="refusals" aria-label="Refusals" data-rows={rows.length}>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Request</th>
            <th scope="col">Reason</th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={3} class="muted">
                {r.loading ? 'Loading…' : 'No refusals'}
              </td>
            </tr>
          )}
          {rows.map((e, i) => (
            <tr key={`${e.time}|${i}`} data-class={e.class}>
              <td>{time(Date.parse(e.time))}</td>
              <td>
                {e.method} {e.path}
              </td>
              <td class="reason">{e.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The user channel's latest events, newest first. */
function LiveFeed({ w }: { w: Wallet }) {
  const [events, setEvents] = useState<UserChannelEvent[]>([]);
  useEffect(() => w.user.onEvents((e) => setEvents((old) => [...[...e].reverse(), ...old].slice(0, 30))), [w]);
  return (
    <>
      <ChannelBadge channel={w.user} label="User channel" />
      <ol class="feed" aria-label="User channel events" aria-live="polite">
        {events.length === 0 && <li class="muted">Nothing yet: orders and trades of this wallet appear here as they happen.</li>}
        {events.map((e, i) =>
          e.event_type === 'order' ? (
            <li key={`${e.id}|${e.type}|${e.timestamp}|${i}`} data-owner={e.owner}>
              {time(e.timestamp)} order {e.type.toLowerCase()}: {e.side} {amount(e.original_size)} {e.outcome} at {price(e.price)}, filled {amount(e.size_matched)} ({e.status})
              {e.owner === ADMIN_OWNER && <AdminMade />}
            </li>
          ) : (
            <li key={`${e.id}|${e.status}|${e.timestamp}|${i}`}>
              {time(e.timestamp)} trade {e.status.toLowerCase()} as {e.trader_side.toLowerCase()}: {e.side} {amount(e.size)} {e.outcome} at {price(e.price)}
            </li>
          ),
        )}
      </ol>
    </>
  );
}

const FUNDER_NAMES = ['', 'proxy wallet (signatureType 1)', 'Safe (signatureType 2)'] as const;

/** The connected wallet's page: the wallets it signs for, linked. */
function Funders({ w }: { w: Wallet }) {
  return (
    <p class="muted small funders">
      It signs for its{' '}
      {([1, 2] as const).map((t) => (
        <span key={t}>
          {t === 2 && ' and its '}
          {FUNDER_NAMES[t]} <a href={href('wallet', w.wallets[t])} data-funder={t}>{short(w.wallets[t])}</a>
        </span>
      ))}
      : a bot trading for them signs as this wallet, with that signature type and that funder address.
    </p>
  );
}

export function WalletPage({ address: given }: { address?: string }) {
  const w = useCell(wallet);
  const address = (given ?? w?.address ?? '').toLowerCase();
  // Which of the connected wallet's wallets this is: 0 itself, 1 its proxy wallet, 2 its Safe; -1 none.
  const type = w === undefined ? -1 : w.wallets.indexOf(address);
  const own = type >= 0;
  const [version, setVersion] = useState(0);
  useUserEvents(own ? w : undefined, useThrottled(() => setVersion((v) => v + 1), 500), ['trade']);

  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>{address === '' ? 'Wallet' : `Wallet ${short(address)}`}</h1>
      </div>
      <Lookup address={address} />
      {address !== '' && !ADDRESS.test(address) && <ErrorText error="an address is 0x followed by 40 hex digits" />}
      {ADDRESS.test(address) && (
        <div class="stack">
          <Section title="Positions" id="positions">
            <Positions address={address} version={version} />
          </Section>
          {own && w && type > 0 && (
            <p class="muted small funder-of" data-signature-type={type}>
              The {FUNDER_NAMES[type]} of the wallet you sign with, <a href={href('wallet', w.address)}>{short(w.address)}</a>.
            </p>
          )}
          {own && w && type === 0 && <Funders w={w} />}
          {own && w && (
            <Section title="Open orders" id="open-orders">
              <OpenOrders wallet={w} maker={address} />
            </Section>
          )}
          {own && w && (
            <Section title="Live activity" id="live">
              <LiveFeed w={w} />
            </Section>
          )}
          {own && w && (
            <Section title="Refusals" id="refusals">
              <Refusals w={w} />
            </Section>
          )}
          <Section title="Trades" id="trades">
            <Trades address={address} version={version} />
          </Section>
          <Section title="Closed positions" id="closed">
            <ClosedPositions address={address} version={version} />
          </Section>
        </div>
      )}
      <Section title="Signing wallet" id="connect">
        {!own && ADDRESS.test(address) && <p class="muted small">Open orders and live activity show for the wallet you sign with, and for its proxy wallet and Safe.</p>}
        <WalletConnect />
      </Section>
    </>
  );
}
