/**
 * The connected wallet's open orders (GET /data/orders, L2, in either profile's shape: orders.ts: every order
 * its key signed, for its own wallet or its proxy wallet or Safe; `maker` keeps one of them), of one market or
 * all, each with a cancel (DELETE /order); an order the admin API placed for the wallet (owner "admin") is
 * marked so. The list is read again whenever the wallet's user channel reports an order event (a placement, a
 * fill, a cancel from anywhere) and when the channel reconnects.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Static } from '@sinclair/typebox';
import type { CancelResult } from '../../../src/edge/schemas/orders.ts';
import type { ClientOpenOrder, OpenOrdersPage } from '../../../src/edge/schemas/trading.ts';
import { messageOf, query } from '../api.ts';
import { amount, price, short, time } from '../format.ts';
import { openOrderRow } from '../orders.ts';
import { signedCall, type Wallet } from '../session.ts';
import { AdminMade, ADMIN_OWNER, ErrorText, useLoad, useThrottled } from './common.tsx';

/** Either profile's page: the spec's OrderView items or the platform client's OpenOrder ones (orders.ts). */
type OrdersPage = Omit<Static<typeof OpenOrdersPage>, 'data'> & { data: Array<Static<typeof OpenOrdersPage>['data'][number] | Static<typeof ClientOpenOrder>> };

export function useUserEvents(w: Wallet | undefined, on: () => void, kinds: readonly string[] = ['order', 'trade']): void {
  useEffect(() => {
    if (!w) return;
    const offEvents = w.user.onEvents((events) => events.some((e) => kinds.includes(e.event_type)) && on());
    let opens = w.user.opens;
    const offStatus = w.user.onStatus((s) => {
      if (s === 'live' && w.user.opens > opens) {
        opens = w.user.opens;
        on();
      }
    });
    return () => {
      offEvents();
      offStatus();
    };
  }, [w]);
}

export function OpenOrders({ wallet: w, market, outcomes, maker }: { wallet: Wallet; market?: string; outcomes?: Record<string, string>; maker?: string }) {
  const orders = useLoad(`${w.address}|${market ?? ''}`, (signal) => signedCall<OrdersPage>(w, `/data/orders${query({ market })}`, { signal }));
  const reload = useThrottled(orders.reload, 100);
  useUserEvents(w, reload, ['order']);
  const [result, setResult] = useState({ error: '', note: '' });
  const [canceling, setCanceling] = useState('');

  const cancel = async (id: string) => {
    setCanceling(id);
    setResult({ error: '', note: '' });
    try {
      const r = await signedCall<CancelResult>(w, '/order', { method: 'DELETE', body: { orderID: id } });
      const reason = r.not_canceled[id];
      setResult(reason !== undefined ? { error: reason, note: '' } : { error: '', note: `Canceled ${short(id, 10)}` });
      orders.reload();
    } catch (e) {
      setResult({ error: messageOf(e), note: '' });
    } finally {
      setCanceling('');
    }
  };

  const rows = (orders.data?.data ?? []).map(openOrderRow).filter((o) => maker === undefined || o.maker === maker);
  return (
    <div class="table-wrap">
      <ErrorText error={orders.error} />
      <ErrorText error={result.error} />
      {result.note !== '' && (
        <p class="note" role="status">
          {result.note}
        </p>
      )}
      <table class="orders" aria-label="Open orders" data-rows={rows.length}>
        <thead>
          <tr>
            <th scope="col">Side</th>
            <th scope="col">Outcome</th>
            <th scope="col" class="num">
              Price
            </th>
            <th scope="col" class="num">
              Size
            </th>
            <th scope="col" class="num">
              Filled
            </th>
            <th scope="col" class="wide">
              Type
            </th>
            <th scope="col" class="wide">
              Placed
            </th>
            <th scope="col">
              <span class="visually-hidden">Cancel</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={8} class="muted">
                {orders.loading ? 'Loading…' : 'No open orders'}
              </td>
            </tr>
          )}
          {rows.map((o) => (
            <tr key={o.id} data-order-id={o.id} data-owner={o.owner}>
              <td class={o.side === 'BUY' ? 'buy' : 'sell'}>{o.side}</td>
              <td>{outcomes?.[o.assetId] ?? o.outcome}</td>
              <td class="num">{price(o.price)}</td>
              <td class="num">{amount(o.originalSize)}</td>
              <td class="num">{amount(o.sizeMatched)}</td>
              <td class="wide">
                {o.type}
                {o.owner === ADMIN_OWNER && <AdminMade />}
              </td>
              <td class="wide">{time(o.createdAt)}</td>
              <td>
                <button type="button" class="small" onClick={() => cancel(o.id)} disabled={canceling === o.id} aria-label={`Cancel ${o.side} ${o.outcome} at ${o.price}`}>
                  {canceling === o.id ? 'Canceling…' : 'Cancel'}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
