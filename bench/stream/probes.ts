/**
 * What the two stream benchmarks (stream.bench.ts, versions.bench.ts) share: a request to the readers' worker
 * thread, one timed window of the load tool with its self-checks and the CPU each side used, and the
 * self-check that every probe's book, rebuilt from its `book` and `price_change` events, is GET /book's
 * (levels and hash).
 */
import type { Worker } from 'node:worker_threads';
import { driveLoad, verifyLoad, type LoadSession, type RunStats } from '../../tools/load.ts';
import { cpuSeconds, type ServiceProcess } from '../../tools/service-process.ts';
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

export interface TimedLoad {
  run: RunStats;
  /** CPU seconds of the service over the window, all threads, and of its main thread alone. */
  cpuS: number;
  mainCpuS: number;
  /** CPU seconds of this process over the window: the load generator, the probes and the readers' thread. */
  clientCpuS: number;
  /** The service's /metrics before and after the window. */
  metricsBefore: string;
  metricsAfter: string;
}

/**
 * Drives the prepared session (the timed window) and checks it: no order errors, and the service agrees with
 * every acknowledgement (verifyLoad). `bench` names the benchmark in a failure.
 */
export async function timedLoad(bench: string, svc: ServiceProcess, session: LoadSession): Promise<TimedLoad> {
  const scrape = async () => (await fetch(`${svc.url}/metrics`)).text();
  const metricsBefore = await scrape();
  const c0 = cpuSeconds(svc.pid) ?? NaN;
  const m0 = cpuSeconds(svc.pid, svc.pid) ?? NaN;
  const own0 = process.cpuUsage();
  const run = await driveLoad(session);
  const cpuS = (cpuSeconds(svc.pid) ?? NaN) - c0;
  const mainCpuS = (cpuSeconds(svc.pid, svc.pid) ?? NaN) - m0;
  const own = process.cpuUsage(own0);
  const metricsAfter = await scrape();
  if (run.errors > 0) throw new Error(`${bench} self-check: ${run.errors} order errors: ${JSON.stringify(run.errorClasses)}`);
  const check = await verifyLoad(session, run);
  if (!check.ok) throw new Error(`${bench} self-check: the service disagrees with its acknowledgements:\n${check.problems.join('\n')}`);
  return { run, cpuS, mainCpuS, clientCpuS: (own.user + own.system) / 1e6, metricsBefore, metricsAfter };
}
