/**
 * Starts a worker thread whose entry is a TypeScript module.
 *
 * The catch: on Node 20 a worker does not inherit the tsx loader of its parent (the ESM hooks that
 * `tsx`/`--import tsx` register live in the main thread's loader), so `new Worker('x.ts')` fails with
 * ERR_UNKNOWN_FILE_EXTENSION even though the worker gets the same execArgv. The worker therefore boots
 * from a tiny inline ES module that registers tsx's ESM API in its own thread and then imports the entry.
 * tsx's API is resolved here, to an absolute URL, because a data: module has no base to resolve from.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { withWorkerArgv } from '../runtime/worker-argv.ts';

export function startTsWorker(entry: URL, options: WorkerOptions): Worker {
  const api = import.meta.resolve('tsx/esm/api');
  const code = `import { register } from ${JSON.stringify(api)}; register(); await import(${JSON.stringify(entry.href)});`;
  const url = new URL('data:text/javascript,' + encodeURIComponent(code));
  return withWorkerArgv((execArgv) => new Worker(url, { ...(execArgv === undefined ? {} : { execArgv }), ...options }));
}
