/**
 * A channel client that says which client address it is (X-Forwarded-For; the app must trust 127.0.0.1 as
 * a proxy), for the tests of per-address and global bounds. It keeps what the tests read: events in order,
 * PONGs, and the close. tools/stream-client.ts is the full client; it sends no headers.
 */
import WebSocket from 'ws';

export interface Event {
  event_type: string;
  error?: string;
  [k: string]: unknown;
}

export class XffClient {
  readonly events: Event[] = [];
  pongs = 0;
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on('message', (data: Buffer) => {
      const text = data.toString();
      if (text === 'PONG') {
        this.pongs++;
        return;
      }
      const parsed = JSON.parse(text) as Event | Event[];
      for (const e of Array.isArray(parsed) ? parsed : [parsed]) this.events.push(e);
    });
  }

  /** Opens `url` as client `ip`; rejects with "upgrade refused: <status> <body>" when the service refuses. */
  static connect(url: string, ip: string): Promise<XffClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false, headers: { 'x-forwarded-for': ip } });
      ws.once('open', () => resolve(new XffClient(ws)));
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

  /** PING, and wait for its PONG: every message sent before it has been handled. */
  async pong(timeoutMs = 10_000): Promise<void> {
    const want = this.pongs + 1;
    this.send('PING');
    const end = Date.now() + timeoutMs;
    while (this.pongs < want) {
      if (Date.now() > end) throw new Error('no PONG');
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  /** The error frames' texts from event `from` on. */
  errors(from = 0): string[] {
    return this.events.slice(from).flatMap((e) => (e.event_type === 'error' ? [e.error ?? ''] : []));
  }

  /** `book` events from event `from` on. */
  books(from = 0): number {
    return this.events.slice(from).filter((e) => e.event_type === 'book').length;
  }

  close(): void {
    this.ws.close();
  }
}
