/**
 * What the two stream benchmarks (stream.bench.ts, versions.bench.ts) share: a request to the readers' worker
 * thread, and the self-check that every probe's book, rebuilt from its `book` and `price_change` events, is
 * GET /book's (levels and hash).
 */
import type { Worker } from 'node:worker_threads';
import { LocalBook, type StreamClient } from '../../tools/stream-client.ts';

/** Posts `msg` to the readers' worker and resolves with its answer (rejects if the worker fails first). */
export function ask<T>(w: Worker, msg: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const failed = (e: Error) => reject(e);
    w.once('error', failed);
    w.once('message', (m: T) => {
      w.off('error', failed);
      resolve(m);
    });
    w.postMessage(msg);
  });
}

/**
 * Waits until every probe has answered a PING (so it has read everything sent before), then checks probe i's
 * book of tokens[i % tokens.length] against GET /book; throws naming `bench` on a difference.
 */
export async function checkProbes(bench: string, url: string, probes: readonly StreamClient[], tokens: readonly string[]): Promise<void> {
  for (const p of probes) p.send('PING');
  const deadline = Date.now() + 10_000;
  while (probes.some((p) => p.pongs === 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  for (const [i, p] of probes.entries()) {
    const token = tokens[i % tokens.length];
    const local = new LocalBook(token);
    for (const e of p.events) local.apply(e);
    const rest = (await (await fetch(`${url}/book?token_id=${token}`)).json()) as { bids: unknown[]; asks: unknown[]; hash: string };
    if (JSON.stringify(local.levels()) !== JSON.stringify({ bids: rest.bids, asks: rest.asks }) || local.hash !== rest.hash) {
      throw new Error(`${bench} self-check: probe ${i}'s book of ${token} differs from GET /book`);
    }
  }
}
