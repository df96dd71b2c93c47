/**
 * Market-channel readers on a thread of their own, for the stream benchmarks: each socket upgrades, sends one
 * masked subscribe frame and then reads and discards, counting bytes. On the benchmark's main thread they
 * would share its event loop with the load generator, and every answer the generator times would wait
 * behind the readers' `data` events: the client's queue, not the service's latency. They still share the
 * machine's cores.
 *
 * Messages: in {port, assets: string[][]} (one socket per entry, subscribed to those assets) -> out
 * {ready: n} once every socket is subscribed; in 'bytes' -> out {bytes}; in 'close' -> sockets destroyed,
 * out {closed: n}.
 */
import { randomBytes } from 'node:crypto';
import { connect as tcpConnect, type Socket } from 'node:net';
import { parentPort } from 'node:worker_threads';

export function maskedText(text: string): Buffer {
  const payload = Buffer.from(text);
  const head = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 255]);
  const mask = randomBytes(4);
  const body = Buffer.alloc(payload.length);
  for (let i = 0; i < payload.length; i++) body[i] = payload[i] ^ mask[i & 3];
  return Buffer.concat([head, mask, body]);
}

let bytes = 0;

/** A WebSocket reader in a few lines: upgrade, one masked subscribe frame, then read and discard. */
export function rawSubscriber(port: number, assets: string[], count: (n: number) => void = (n) => (bytes += n)): Promise<Socket> {
  return new Promise((resolve, reject) => {
    let upgraded = false;
    const socket = tcpConnect(port, '127.0.0.1');
    socket.once('error', reject);
    socket.on('connect', () => {
      socket.write(`GET /ws/market HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\n\r\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      count(chunk.length);
      if (upgraded) return;
      if (!chunk.toString('latin1').startsWith('HTTP/1.1 101')) return reject(new Error(`upgrade refused: ${chunk.toString('latin1').split('\r\n')[0]}`));
      upgraded = true;
      socket.write(maskedText(JSON.stringify({ type: 'market', assets_ids: assets, initial_dump: false })));
      resolve(socket);
    });
  });
}

if (parentPort !== null) {
  const port = parentPort;
  let sockets: Socket[] = [];
  port.on('message', async (m: { port: number; assets: string[][] } | 'bytes' | 'close') => {
    if (m === 'bytes') return port.postMessage({ bytes });
    if (m === 'close') {
      for (const s of sockets) s.destroy();
      port.postMessage({ closed: sockets.length });
      sockets = [];
      return;
    }
    for (const a of m.assets) sockets.push(await rawSubscriber(m.port, a));
    port.postMessage({ ready: sockets.length });
  });
}
