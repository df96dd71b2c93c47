/**
 * tools/load.ts's runLoad in a child process (child.ts), for benches whose server under test needs the
 * cores the load generator would take: what comes back is the run's summary, plain data.
 */
import { runLoad, type LoadOptions } from '../../tools/load.ts';
import { runInChild, serveInChild } from './child.ts';

export interface LoadSummary {
  acked: number;
  errors: number;
  elapsedS: number;
  /** Latency from each order's due time, ms. */
  p50: number;
  p99: number;
  /** The run's read-back check (true when it ran none). */
  checkOk: boolean;
  problems: string[];
}

async function summarizeLoad(o: LoadOptions): Promise<LoadSummary> {
  const r = await runLoad({ ...o, progress: false, log: () => undefined });
  return {
    acked: r.run.acked,
    errors: r.run.errors,
    elapsedS: r.run.elapsedS,
    p50: r.run.latencyMs.p50,
    p99: r.run.latencyMs.p99,
    checkOk: r.check?.ok ?? true,
    problems: r.check?.problems.slice(0, 3) ?? [],
  };
}

const CHILD_FLAG = 'PM_BENCH_LOAD_CHILD';

export function runLoadChild(o: LoadOptions): Promise<LoadSummary> {
  return runInChild(import.meta.url, CHILD_FLAG, o);
}

serveInChild(CHILD_FLAG, summarizeLoad);
