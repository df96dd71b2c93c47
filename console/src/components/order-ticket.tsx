/**
 * The order ticket: an outcome, a side, a price and a size become an EIP-712 order signed in this page by
 * the connected wallet and sent to POST /order with L2 headers, exactly as a bot would send it. The
 * service's answer is shown as it comes: the order's id and status, or its error in its own words.
 */
import { useEffect, useState } from 'preact/hooks';
import type { OrderResult } from '../../../src/edge/schemas/orders.ts';
import type { BalanceAllowance } from '../../../src/edge/schemas/trading.ts';
import type { Static } from '@sinclair/typebox';
import { exchangeInfo, messageOf, query } from '../api.ts';
import { amount, short } from '../format.ts';
import { signedCall, useCell, wallet } from '../session.ts';
import { signOrder, ticketAmounts, type OrderType } from '../signing.ts';
import { ErrorText, useLoad, useThrottled } from './common.tsx';
import { useUserEvents } from './open-orders.tsx';
import { WalletConnect } from './wallet-connect.tsx';

export interface TicketMarket {
  conditionId: string;
  tokens: { id: string; outcome: string }[];
  tick: string;
  minSize: number;
  negRisk: boolean;
  acceptingOrders: boolean;
}

const TYPES: readonly OrderType[] = ['GTC', 'GTD', 'FOK', 'FAK'];

function Balance() {
  const w = useCell(wallet);
  const b = useLoad(w?.address ?? '', (signal) =>
    w ? signedCall<Static<typeof BalanceAllowance>>(w, `/balance-allowance${query({ asset_type: 'COLLATERAL' })}`, { signal }) : Promise.resolve(undefined),
  );
  useUserEvents(w, useThrottled(b.reload, 250));
  if (!w || !b.data) return null;
  return (
    <p class="muted small" data-testid="usdc-balance">
      USDC available {amount(Number(b.data.balance) / 1e6)}
      {Number(b.data.reserved ?? 0) > 0 ? `, reserved by open orders ${amount(Number(b.data.reserved) / 1e6)}` : ''}
    </p>
  );
}

export function OrderTicket({ market }: { market: TicketMarket }) {
  const w = useCell(wallet);
  const [token, setToken] = useState(market.tokens[0].id);
  const [side, setSide] = useState<'BUY' | 'SELL'>('BUY');
  const [price, setPrice] = useState('');
  const [size, setSize] = useState(String(Math.max(market.minSize, 1)));
  const [orderType, setOrderType] = useState<OrderType>('GTC');
  const [postOnly, setPostOnly] = useState(false);
  const [gtdMinutes, setGtdMinutes] = useState('60');
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<{ error: string; result?: OrderResult }>({ error: '' });

  useEffect(() => setToken(market.tokens[0].id), [market.conditionId]);

  const amounts = ticketAmounts({ side, price, size });
  const outcome = market.tokens.find((t) => t.id === token)?.outcome ?? '';
  const resting = orderType === 'GTC' || orderType === 'GTD';

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!w) return;
    setBusy(true);
    setAnswer({ error: '' });
    try {
      const info = await exchangeInfo();
      const minutes = Number(gtdMinutes);
      const body = await signOrder(w.account, w.creds, info, {
        tokenId: token,
        side,
        price,
        size,
        orderType,
        postOnly: resting && postOnly,
        expiration: orderType === 'GTD' && Number.isFinite(minutes) ? Math.floor(Date.now() / 1000 + minutes * 60) : undefined,
        negRisk: market.negRisk,
      });
      const result = await signedCall<OrderResult>(w, '/order', { method: 'POST', body });
      setAnswer(result.success ? { error: '', result } : { error: result.errorMsg, result });
    } catch (err) {
      setAnswer({ error: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="ticket">
      <WalletConnect />
      {w && (
        <form onSubmit={submit} aria-label="Order ticket">
          <Balance />
          <fieldset class="segmented">
            <legend>Outcome</legend>
            {market.tokens.map((t) => (
              <label key={t.id}>
                <input type="radio" name="outcome" value={t.id} checked={token === t.id} onChange={() => setToken(t.id)} />
                {t.outcome}
              </label>
            ))}
          </fieldset>
          <fieldset class="segmented">
            <legend>Side</legend>
            {(['BUY', 'SELL'] as const).map((s) => (
              <label key={s} class={s === 'BUY' ? 'buy' : 'sell'}>
                <input type="radio" name="side" value={s} checked={side === s} onChange={() => setSide(s)} />
                {s === 'BUY' ? 'Buy' : 'Sell'}
              </label>
            ))}
          </fieldset>
          <div class="row">
            <label>
              Price
              <input name="price" inputMode="decimal" autoComplete="off" placeholder={`tick ${market.tick}`} value={price} onInput={(e) => setPrice(e.currentTarget.value)} required />
            </label>
            <label>
              Size (tokens)
              <input name="size" inputMode="decimal" autoComplete="off" placeholder={`min ${market.minSize}`} value={size} onInput={(e) => setSize(e.currentTarget.value)} required />
            </label>
          </div>
          <div class="row">
            <label>
              Type
              <select name="order-type" value={orderType} onChange={(e) => setOrderType(e.currentTarget.value as OrderType)}>
                {TYPES.map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
            </label>
            {orderType === 'GTD' && (
              <label>
                Expires in (minutes)
                <input name="gtd-minutes" inputMode="numeric" value={gtdMinutes} onInput={(e) => setGtdMinutes(e.currentTarget.value)} />
              </label>
            )}
          </div>
          {resting && (
            <label class="check">
              <input type="checkbox" name="post-only" checked={postOnly} onChange={(e) => setPostOnly(e.currentTarget.checked)} />
              Post only (never take)
            </label>
          )}
          <p class="muted small" aria-live="polite">
            {price === '' || size === ''
              ? 'Enter a price and a size.'
              : 'problem' in amounts
                ? amounts.problem
                : `${side === 'BUY' ? 'Buy' : 'Sell'} ${amount(size)} ${outcome} at ${price}: ${side === 'BUY' ? 'pays' : 'receives'} up to ${amount(
                    (side === 'BUY' ? amounts.makerAmount : amounts.takerAmount) / 1e6,
                  )} USDC (fees apart)`}
          </p>
          <button type="submit" class={side === 'BUY' ? 'primary buy' : 'primary sell'} disabled={busy || !market.acceptingOrders}>
            {busy ? 'Signing…' : `Sign and place ${side === 'BUY' ? 'buy' : 'sell'}`}
          </button>
          {!market.acceptingOrders && <p class="muted small">This market does not accept orders.</p>}
        </form>
      )}
      <ErrorText error={answer.error} />
      {answer.result?.success && (
        <p class="note" role="status" data-order-id={answer.result.orderID}>
          Order {short(answer.result.orderID, 10)}: {answer.result.status}
          {Number(answer.result.makingAmount) > 0 ? ` (gave ${answer.result.makingAmount}, got ${answer.result.takingAmount} at once)` : ''}
        </p>
      )}
    </div>
  );
}
