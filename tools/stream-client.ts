/**
 * A small typed client of the streaming channels (DESIGN section 10), the reference docs/streaming.md
 * ("Streaming") follows: connect, subscribe, PING every few seconds, collect events (a frame may be one event or
 * an array), and keep local books from `book` snapshots plus `price_change` totals, which is all a bot
 * needs to follow a market. tools/watch.ts draws one in the terminal; the stream tests and the stream
 * benchmark use it as their client.
 */
import WebSocket from 'ws';
import type { BookEvent, MarketChannelEvent, PriceChangeEvent, StreamError, UserChannelEvent } from '../src/edge/schemas/stream.ts';

export type StreamEvent = MarketChannelEvent | UserChannelEvent | StreamError;

export interface ClientOptions {
  /** PING period in ms (the platform's clients send one every 10 s); 0 = never. Default 10,000. */
  pingMs?: number;
  /** Called with each event as it arrives, and the ms (Date.now()) its frame arrived. */
  onEvent?: (e: StreamEvent, at: number) => void;
  /** Headers of the upgrade request (e.g. X-Forwarded-For behind a trusted proxy). */
  headers?: Record<string, string>;
}

export class StreamClient {
  /** Every event received, in order. */
  readonly events: StreamEvent[] = [];
  /** PONGs received. */
  pongs = 0;
  /** Frames received (a frame may hold several events). */
  frames = 0;
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly waiters: Array<{ pred: (e: StreamEvent) => boolean; from: number; resolve: (e: StreamEvent) => void }> = [];
  private pinger: NodeJS.Timeout | undefined;

  private constructor(
    readonly ws: WebSocket,
    private readonly opts: ClientOptions,
  ) {
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on('message', (data) => this.received(data.toString()));
    ws.once('close', () => this.stopPing());
    const every = opts.pingMs ?? 10_000;
    if (every > 0) {
      this.pinger = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send('PING'), every);
      this.pinger.unref();
    }
  }

  /** Opens `url` (ws://host:port/ws/market or /ws/user); rejects with "upgrade refused: <status> <body>" when refused. */
  static connect(url: string, opts: ClientOptions = {}): Promise<StreamClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false, headers: opts.headers });
      ws.once('open', () => resolve(new StreamClient(ws, opts)));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => reject(new Error(`upgrade refused: ${res.statusCode} ${body}`)));
      });
    });
  }

  send(msg: unknown): void {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
  }

  subscribeMarket(assets: readonly string[], o: { custom?: boolean; initialDump?: boolean } = {}): void {
    this.send({ type: 'market', assets_ids: assets, ...(o.custom ? { custom_feature_enabled: true } : {}), ...(o.initialDump === false ? { initial_dump: false } : {}) });
  }

  subscribeUser(auth: { apiKey: string; secret: string; passphrase: string }, markets: readonly string[] = []): void {
    this.send({ type: 'user', auth, markets });
  }

  /** {operation} update: `assets_ids` on the market channel, `markets` on the user channel. */
  update(operation: 'subscribe' | 'unsubscribe', ids: { assets_ids?: string[]; markets?: string[] }): void {
    this.send({ operation, ...ids });
  }

  /** The first event received from index `from` on (default: since connecting) that `pred` accepts, or the next to arrive. */
  next<T extends StreamEvent = StreamEvent>(pred: (e: StreamEvent) => boolean, timeoutMs = 5000, from = 0): Promise<T> {
    for (let i = from; i < this.events.length; i++) if (pred(this.events[i])) return Promise.resolve(this.events[i] as T);
    return new Promise((resolve, reject) => {
      const w = { pred, from, resolve: resolve as (e: StreamEvent) => void };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`no matching event within ${timeoutMs} ms`));
      }, timeoutMs);
      w.resolve = (e) => {
        clearTimeout(timer);
        (resolve as (e: StreamEvent) => void)(e);
      };
      this.waiters.push(w);
    });
  }

  close(): void {
    this.stopPing();
    this.ws.close();
  }

  private stopPing(): void {
    if (this.pinger !== undefined) clearInterval(this.pinger);
    this.pinger = undefined;
  }

  private received(text: string): void {
    const at = Date.now();
    if (text === 'PONG') {
      this.pongs++;
      return;
    }
    this.frames++;
    const parsed = JSON.parse(text) as StreamEvent | StreamEvent[];
    for (const e of Array.isArray(parsed) ? parsed : [parsed]) {
      this.events.push(e);
      this.opts.onEvent?.(e, at);
      for (let i = 0; i < this.waiters.length; i++) {
        if (this.waiters[i].pred(e)) {
          this.waiters.splice(i, 1)[0].resolve(e);
          i--;
        }
      }
    }
  }
}

type Level = { price: string; size: string };

/**
 * One token's book as a client keeps it: replaced by each `book`, updated by each `price_change` entry of
 * its token (the entry's size is the level's new total; "0" removes it). `hash` is the hash GET /book
 * serves for the state it holds.
 */
export class LocalBook {
  readonly bids = new Map<string, string>();
  readonly asks = new Map<string, string>();
  hash = '';
  lastTradePrice = '';
  tickSize = '';

  constructor(readonly assetId: string) {}

  /** Applies an event if it is about this token; returns whether it was. */
  apply(e: StreamEvent): boolean {
    if (e.event_type === 'book' && e.asset_id === this.assetId) {
      this.replace(e);
      return true;
    }
    if (e.event_type === 'price_change') return this.change(e);
    if (e.event_type === 'last_trade_price' && e.asset_id === this.assetId) this.lastTradePrice = e.price;
    if (e.event_type === 'tick_size_change' && e.asset_id === this.assetId) this.tickSize = e.new_tick_size;
    return false;
  }

  /** Levels as GET /book lists them: bids ascending, asks descending (best last). */
  levels(): { bids: Level[]; asks: Level[] } {
    const list = (m: Map<string, string>, asc: boolean) =>
      [...m].map(([price, size]) => ({ price, size })).sort((a, b) => (asc ? 1 : -1) * (Number(a.price) - Number(b.price)));
    return { bids: list(this.bids, true), asks: list(this.asks, false) };
  }

  bestBid(): string {
    const b = this.levels().bids;
    return b.length > 0 ? b[b.length - 1].price : '';
  }

  bestAsk(): string {
    const a = this.levels().asks;
    return a.length > 0 ? a[a.length - 1].price : '';
  }

  private replace(e: BookEvent): void {
    this.bids.clear();
    this.asks.clear();
    for (const l of e.bids) this.bids.set(l.price, l.size);
    for (const l of e.asks) this.asks.set(l.price, l.size);
    this.hash = e.hash;
    this.lastTradePrice = e.last_trade_price;
    this.tickSize = e.tick_size;
  }

  private change(e: PriceChangeEvent): boolean {
    let mine = false;
    for (const c of e.price_changes) {
      if (c.asset_id !== this.assetId) continue;
      mine = true;
      const side = c.side === 'BUY' ? this.bids : this.asks;
      if (c.size === '0') side.delete(c.price);
      else side.set(c.price, c.size);
      this.hash = c.hash;
    }
    return mine;
  }
}
