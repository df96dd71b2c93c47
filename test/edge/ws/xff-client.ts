/**
 * tools/stream-client.ts's client as a given client address (X-Forwarded-For; the app must trust 127.0.0.1 as
 * a proxy), with no PING of its own, for the tests of per-address and global bounds; plus what they read of
 * it: a PING answered (every message sent before it handled), the error frames' texts, the `book` events.
 */
import type { StreamError } from '../../../src/edge/schemas/stream.ts';
import { StreamClient } from '../../../tools/stream-client.ts';

export class XffClient {
  private constructor(readonly client: StreamClient) {}

  /** Opens `url` as client `ip`; rejects with "upgrade refused: <status> <body>" when the service refuses. */
  static async connect(url: string, ip: string): Promise<XffClient> {
    return new XffClient(await StreamClient.connect(url, { pingMs: 0, headers: { 'x-forwarded-for': ip } }));
  }

  get events(): StreamClient['events'] {
    return this.client.events;
  }

  get pongs(): number {
    return this.client.pongs;
  }

  get closed(): StreamClient['closed'] {
    return this.client.closed;
  }

  send(msg: unknown): void {
    this.client.send(msg);
  }

  close(): void {
    this.client.close();
  }

  /** PING, and wait for its PONG: every message sent before it has been handled. */
  async pong(timeoutMs = 10_000): Promise<void> {
    const want = this.client.pongs + 1;
    this.send('PING');
    const end = Date.now() + timeoutMs;
    while (this.client.pongs < want) {
      if (Date.now() > end) throw new Error('no PONG');
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  /** The error frames' texts from event `from` on. */
  errors(from = 0): string[] {
    return this.events.slice(from).flatMap((e) => (e.event_type === 'error' ? [(e as StreamError).error] : []));
  }

  /** `book` events from event `from` on. */
  books(from = 0): number {
    return this.events.slice(from).filter((e) => e.event_type === 'book').length;
  }
}
