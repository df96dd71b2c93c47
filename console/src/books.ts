/**
 * A market as the console follows it on the market channel: one local book per token, replaced by each
 * `book` and moved by each `price_change` entry (the entry's size is the level's new total, "0" removes
 * it), which the service guarantees lands on what GET /book serves. The feed tells its listeners after
 * each frame what changed: books, trades (`last_trade_price`) and a resolution (`market_resolved`).
 */
import type { BookEvent, LastTradePriceEvent, MarketChannelEvent, MarketResolvedEvent, PriceChange } from '../../src/edge/schemas/stream.ts';
import { Channel } from './stream.ts';

export interface DepthLevel {
  price: string;
  size: string;
  /** Size of this level and every better one. */
  total: number;
}

export class LocalBook {
  readonly bids = new Map<string, string>();
  readonly asks = new Map<string, string>();
  tickSize = '';
  minOrderSize = '';
  lastTradePrice = '';
  hash = '';
  /** Service time (ms) of the last event applied. */
  at = 0;

  constructor(readonly tokenId: string) {}

  replace(e: BookEvent): void {
    this.bids.clear();
    this.asks.clear();
    for (const l of e.bids) this.bids.set(l.price, l.size);
    for (const l of e.asks) this.asks.set(l.price, l.size);
    this.tickSize = e.tick_size;
    this.minOrderSize = e.min_order_size;
    this.lastTradePrice = e.last_trade_price;
    this.hash = e.hash;
    this.at = Number(e.timestamp);
  }

  change(c: PriceChange, at: number): void {
    const side = c.side === 'BUY' ? this.bids : this.asks;
    if (c.size === '0') side.delete(c.price);
    else side.set(c.price, c.size);
    this.hash = c.hash;
    this.at = at;
  }

  /** Each side best first, at most `n` levels, with cumulative totals. */
  depth(n: number): { bids: DepthLevel[]; asks: DepthLevel[] } {
    const side = (m: Map<string, string>, bestFirst: (a: number, b: number) => number): DepthLevel[] => {
      const levels = [...m].sort((a, b) => bestFirst(Number(a[0]), Number(b[0]))).slice(0, n);
      let total = 0;
      return levels.map(([price, size]) => ({ price, size, total: (total += Number(size)) }));
    };
    return { bids: side(this.bids, (a, b) => b - a), asks: side(this.asks, (a, b) => a - b) };
  }

  best(): { bid: number | undefined; ask: number | undefined } {
    let bid: number | undefined;
    let ask: number | undefined;
    for (const p of this.bids.keys()) if (bid === undefined || Number(p) > bid) bid = Number(p);
    for (const p of this.asks.keys()) if (ask === undefined || Number(p) < ask) ask = Number(p);
    return { bid, ask };
  }

  /** The midpoint the service records for the price history; undefined unless both sides exist. */
  midpoint(): number | undefined {
    const { bid, ask } = this.best();
    return bid === undefined || ask === undefined ? undefined : Math.round(((bid + ask) / 2) * 1e5) / 1e5;
  }
}

export interface FeedChange {
  /** Tokens whose book changed. */
  books: string[];
  trades: LastTradePriceEvent[];
  resolved?: MarketResolvedEvent;
}

export class MarketFeed {
  readonly books = new Map<string, LocalBook>();
  readonly channel: Channel<MarketChannelEvent>;
  private readonly listeners = new Set<(c: FeedChange) => void>();

  constructor(readonly tokenIds: readonly string[]) {
    for (const t of tokenIds) this.books.set(t, new LocalBook(t));
    this.channel = new Channel<MarketChannelEvent>('/ws/market', () => ({ type: 'market', assets_ids: [...tokenIds], custom_feature_enabled: true }));
    this.channel.onEvents((events) => this.apply(events));
  }

  start(): void {
    this.channel.start();
  }

  close(): void {
    this.channel.close();
  }

  onChange(l: (c: FeedChange) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  private apply(events: MarketChannelEvent[]): void {
    const change: FeedChange = { books: [], trades: [] };
    const touched = new Set<string>();
    for (const e of events) {
      switch (e.event_type) {
        case 'book': {
          const b = this.books.get(e.asset_id);
          if (b) {
            b.replace(e);
            touched.add(e.asset_id);
          }
          break;
        }
        case 'price_change':
          for (const c of e.price_changes) {
            const b = this.books.get(c.asset_id);
            if (b) {
              b.change(c, Number(e.timestamp));
              touched.add(c.asset_id);
            }
          }
          break;
        case 'last_trade_price': {
          const b = this.books.get(e.asset_id);
          if (b) {
            b.lastTradePrice = e.price;
            change.trades.push(e);
          }
          break;
        }
        case 'tick_size_change': {
          const b = this.books.get(e.asset_id);
          if (b) {
            b.tickSize = e.new_tick_size;
            touched.add(e.asset_id);
          }
          break;
        }
        case 'market_resolved':
          if (e.assets_ids.some((t) => this.books.has(t))) change.resolved = e;
          break;
        default:
          break;
      }
    }
    change.books = [...touched];
    if (change.books.length > 0 || change.trades.length > 0 || change.resolved) for (const l of [...this.listeners]) l(change);
  }
}
