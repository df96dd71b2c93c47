/**
 * Watches one token's book and trades live over the market channel, redrawn in place in the terminal:
 *
 *   npx tsx tools/watch.ts --market <token id> [--url ws://127.0.0.1:8080] [--depth 10]
 *
 * It is the streaming example of docs/streaming.md as a program (tools/stream-client.ts does the work): subscribe,
 * take the `book`, apply every `price_change`, list `last_trade_price` events, PING every 10 s, and
 * reconnect after a close (the first `book` after a reconnect replaces what it held). Ctrl-C stops it.
 */
import { parseArgs } from 'node:util';
import { LocalBook, StreamClient, type StreamEvent } from './stream-client.ts';

const { values } = parseArgs({
  options: {
    market: { type: 'string' },
    url: { type: 'string', default: process.env.STREAM_URL ?? 'ws://127.0.0.1:8080' },
    depth: { type: 'string', default: '10' },
  },
});
if (values.market === undefined || !/^[0-9]{1,78}$/.test(values.market)) {
  console.error('usage: npx tsx tools/watch.ts --market <token id> [--url ws://127.0.0.1:8080] [--depth 10]');
  process.exit(2);
}
const token = values.market;
const depth = Math.max(1, Number(values.depth) || 10);
const url = values.url!.replace(/^http/, 'ws').replace(/\/$/, '') + '/ws/market';

const book = new LocalBook(token);
const trades: string[] = [];
let status = 'connecting';
let drawQueued = false;

function draw(): void {
  drawQueued = false;
  const { bids, asks } = book.levels();
  const lines = [`${url}  token ${token.length > 20 ? token.slice(0, 8) + '…' + token.slice(-8) : token}  ${status}`, `hash ${book.hash || '-'}  tick ${book.tickSize || '-'}  last ${book.lastTradePrice || '-'}`, ''];
  const row = (side: string, l: { price: string; size: string } | undefined) => (l === undefined ? '' : `${side} ${l.price.padStart(8)} ${l.size.padStart(14)}`);
  // Asks arrive descending (best last): the best ask sits just above the best bid.
  for (const l of asks.slice(-depth)) lines.push(row('ask', l));
  lines.push('-'.repeat(28));
  for (const l of bids.slice(-depth).reverse()) lines.push(row('bid', l));
  lines.push('', 'trades (newest first):', ...trades.slice(0, depth));
  process.stdout.write('\x1b[H\x1b[2J' + lines.join('\n') + '\n');
}

function redraw(): void {
  if (drawQueued) return;
  drawQueued = true;
  setTimeout(draw, 50);
}

function onEvent(e: StreamEvent): void {
  book.apply(e);
  if (e.event_type === 'last_trade_price' && e.asset_id === token) {
    trades.unshift(`${new Date(Number(e.timestamp)).toISOString().slice(11, 23)}  ${e.side.padEnd(4)} ${e.size.padStart(12)} @ ${e.price}`);
    trades.length = Math.min(trades.length, 100);
  }
  redraw();
}

async function follow(): Promise<void> {
  for (;;) {
    try {
      const c = await StreamClient.connect(url, { onEvent });
      status = 'live';
      c.subscribeMarket([token]);
      redraw();
      const closed = await c.closed;
      status = `closed (${closed.code}${closed.reason ? ' ' + closed.reason : ''}), reconnecting`;
    } catch (err) {
      status = `${(err as Error).message}, retrying`;
    }
    redraw();
    await new Promise((r) => setTimeout(r, 1000));
  }
}

process.on('SIGINT', () => {
  process.stdout.write('\n');
  process.exit(0);
});
await follow();
