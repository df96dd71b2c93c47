/**
 * A streaming channel (/ws/market or /ws/user, docs/streaming.md, "Streaming") that stays connected: it sends its
 * subscription on every open, PINGs every PING_MS (the service closes a silent socket after
 * stream.idleSeconds), and when the socket drops (a restart of the service, a network change) it opens
 * a new one after a growing pause, so a console left open follows the service through a restart. On the
 * market channel each open starts with a `book` per asset, so what a page holds is whole again at once.
 *
 * The one close it does not retry is the service refusing the credentials (4001): trying again would
 * be refused again, and the reason is shown instead.
 */
import type { StreamError } from '../../src/edge/schemas/stream.ts';

export type ChannelStatus = 'connecting' | 'live' | 'reconnecting' | 'refused' | 'closed';

export const PING_MS = 10_000;
/** Pauses before the n-th reconnection attempt in a row; the last repeats. */
export const BACKOFF_MS = [250, 500, 1000, 2000, 4000] as const;
const UNAUTHORIZED = 4001;

export class Channel<E extends { event_type: string }> {
  status: ChannelStatus = 'connecting';
  /** The close reason of a refused socket, or the last `error` event the service sent. */
  problem = '';
  /** Times a socket opened (the first open and every reconnection). */
  opens = 0;
  private ws: WebSocket | undefined;
  private attempt = 0;
  private pinger: number | undefined;
  private retry: number | undefined;
  private stopped = false;
  private readonly eventListeners = new Set<(events: E[]) => void>();
  private readonly statusListeners = new Set<(s: ChannelStatus) => void>();

  constructor(
    readonly path: '/ws/market' | '/ws/user',
    /** The subscription message, asked again at each open (the assets may have changed). */
    private readonly hello: () => unknown,
  ) {}

  start(): void {
    this.stopped = false;
    this.open();
  }

  close(): void {
    this.stopped = true;
    window.clearTimeout(this.retry);
    window.clearInterval(this.pinger);
    this.ws?.close(1000);
    this.ws = undefined;
    this.setStatus('closed');
  }

  /** A subscription update on the open socket (the next open sends `hello()` anyway). */
  send(msg: unknown): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  onEvents(l: (events: E[]) => void): () => void {
    this.eventListeners.add(l);
    return () => this.eventListeners.delete(l);
  }

  onStatus(l: (s: ChannelStatus) => void): () => void {
    this.statusListeners.add(l);
    return () => this.statusListeners.delete(l);
  }

  private setStatus(s: ChannelStatus): void {
    this.status = s;
    for (const l of [...this.statusListeners]) l(s);
  }

  private open(): void {
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${this.path}`;
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => {
      this.attempt = 0;
      this.opens++;
      ws.send(JSON.stringify(this.hello()));
      window.clearInterval(this.pinger);
      this.pinger = window.setInterval(() => ws.readyState === WebSocket.OPEN && ws.send('PING'), PING_MS);
      this.setStatus('live');
    };
    ws.onmessage = (m) => this.received(typeof m.data === 'string' ? m.data : '');
    ws.onclose = (c) => {
      window.clearInterval(this.pinger);
      if (this.ws !== ws || this.stopped) return;
      this.ws = undefined;
      if (c.code === UNAUTHORIZED) {
        this.problem = c.reason || 'unauthorized';
        this.setStatus('refused');
        return;
      }
      const pause = BACKOFF_MS[Math.min(this.attempt++, BACKOFF_MS.length - 1)];
      this.setStatus('reconnecting');
      this.retry = window.setTimeout(() => this.open(), pause);
    };
  }

  private received(text: string): void {
    if (text === '' || text === 'PONG') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return;
    }
    const all = (Array.isArray(parsed) ? parsed : [parsed]) as (E | StreamError)[];
    const events: E[] = [];
    for (const e of all) {
      if (e.event_type === 'error') this.problem = (e as StreamError).error;
      else events.push(e as E);
    }
    if (events.length > 0) for (const l of [...this.eventListeners]) l(events);
  }
}
