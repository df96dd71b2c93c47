/**
 * Market-channel readers on a thread of their own, for the stream benchmarks: each socket upgrades, sends one
 * masked subscribe frame and then reads and discards, counting bytes. On the benchmark's main thread they
 * would share its event loop with the load generator, and every answer the generator times would wait
 * behind the readers' `data` events: the client's queue, not the service's latency. They still share the
 * machine's cores.
 *
 * Messages: in {port, assets: string[][]} (one socket per entry, subscribed to those assets) -> out
 * {ready: n} once every socket is subscribed; in 'bytes' -> out {bytes, cpuS} (bytes read so far, and the
 * thread's CPU seconds); in 'close' -> sockets destroyed, out {closed: n}.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
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
/**
 * One receive buffer for every reader of the thread (net's `onread`): each read lands in it and is counted,
 * with no Buffer allocated and no 'data' event emitted per read. On this machine the readers' CPU is taken
 * from the service's two cores, so what they spend per frame is part of what the benchmark measures.
 */
const shared = Buffer.allocUnsafe(256 * 1024);

/** A WebSocket reader in a few lines: upgrade, one masked subscribe frame, then read and discard. */
export function rawSubscriber(port: number, assets: string[], count: (n: number) => void = (n) => (bytes += n)): Promise<Socket> {
  return new Promise((resolve, reject) => {
    let upgraded = false;
    const socket = tcpConnect({
      port,
      host: '127.0.0.1',
      onread: {
        buffer: shared,
        callback: (n: number, buf: Uint8Array) => {
          count(n);
          if (upgraded) return true;
          const head = Buffer.from(buf.buffer, buf.byteOffset, n).toString('latin1');
          if (!head.startsWith('HTTP/1.1 101')) {
            reject(new Error(`upgrade refused: ${head.split('\r\n')[0]}`));
            return true;
          }
          upgraded = true;
          socket.write(maskedText(JSON.stringify({ type: 'market', assets_ids: assets, initial_dump: false })));
          resolve(socket);
          return true;
        },
      },
    });
    socket.once('error', reject);
    socket.on('connect', () => {
      socket.write(`GET /ws/market HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\n\r\n`);
    });
  });
}

/** CPU seconds of the calling thread (user + system), from /proc/thread-self/stat. */
export function threadCpuSeconds(): number {
  const stat = readFileSync('/proc/thread-self/stat', 'latin1');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

if (parentPort !== null) {
  const port = parentPort;
  let sockets: Socket[] = [];
  port.on('message', async (m: { port: number; assets: string[][] } | 'bytes' | 'close') => {
    if (m === 'bytes') return port.postMessage({ bytes, cpuS: threadCpuSeconds() });
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
