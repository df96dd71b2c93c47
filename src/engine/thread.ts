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

export function startTsWorker(entry: URL, options: WorkerOptions): Worker {
  const api = import.meta.resolve('tsx/esm/api');
  const code = `import { register } from ${JSON.stringify(api)}; register(); await import(${JSON.stringify(entry.href)});`;
  return new Worker(new URL('data:text/javascript,' + encodeURIComponent(code)), { execArgv: withoutTsxPreload(process.execArgv), ...options });
}

/** The inherited tsx preload flags only slow a worker's start (they cannot install the loader there). */
function withoutTsxPreload(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if ((a === '--require' || a === '--import' || a === '-r') && /tsx/.test(args[i + 1] ?? '')) {
      i++;
      continue;
    }
    if (/^--(require|import)=.*tsx/.test(a)) continue;
    out.push(a);
  }
  return out;
}
