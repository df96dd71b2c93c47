/**
 * One token's book as a depth view: asks above the spread (best ask nearest it), bids below (best bid
 * nearest it), each level with its size and the running total from the best price, drawn as a bar
 * whose length is that total against the deeper side's total.
 */
import type { DepthLevel, LocalBook } from '../books.ts';
import { amount, price } from '../format.ts';

export const DEPTH_LEVELS = 12;

function Row({ l, side, max }: { l: DepthLevel; side: 'bid' | 'ask'; max: number }) {
  return (
    <tr class={side} data-side={side} data-price={l.price} data-size={l.size}>
      <td class="num price">{price(l.price)}</td>
      <td class="num">{amount(l.size)}</td>
      <td class="num total">
        <span class="bar" aria-hidden="true" style={{ width: `${max > 0 ? (100 * l.total) / max : 0}%` }} />
        <span class="bar-text">{amount(l.total)}</span>
      </td>
    </tr>
  );
}

export function DepthBook({ book, outcome, winner }: { book: LocalBook; outcome: string; winner?: boolean }) {
  const { bids, asks } = book.depth(DEPTH_LEVELS);
  const max = Math.max(bids[bids.length - 1]?.total ?? 0, asks[asks.length - 1]?.total ?? 0);
  const { bid, ask } = book.best();
  const spread = bid !== undefined && ask !== undefined ? price(Math.round((ask - bid) * 1e4) / 1e4) : '–';
  const mid = book.midpoint();
  return (
    <div class="depth" data-token-id={book.tokenId} data-outcome={outcome}>
      <table>
        <caption>
          {outcome} book{winner ? ' (winner)' : ''}
        </caption>
        <thead>
          <tr>
            <th scope="col" class="num">
              Price
            </th>
            <th scope="col" class="num">
              Size
            </th>
            <th scope="col" class="num">
              Total
            </th>
          </tr>
        </thead>
        <tbody class="asks">
          {asks.length === 0 && (
            <tr class="empty">
              <td colSpan={3}>No asks</td>
            </tr>
          )}
          {[...asks].reverse().map((l) => (
            <Row key={l.price} l={l} side="ask" max={max} />
          ))}
        </tbody>
        <tbody class="spread">
          <tr>
            <td colSpan={3}>
              Spread {spread} · Mid {mid === undefined ? '–' : price(mid)} · Last {price(book.lastTradePrice)}
            </td>
          </tr>
        </tbody>
        <tbody class="bids">
          {bids.map((l) => (
            <Row key={l.price} l={l} side="bid" max={max} />
          ))}
          {bids.length === 0 && (
            <tr class="empty">
              <td colSpan={3}>No bids</td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
