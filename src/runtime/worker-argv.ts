/**
 * The execArgv worker threads start with (the shard workers, the signature pool). Two Node rules meet here:
 *   - tsx's preload flags (`--require .../tsx/...`, `--import tsx`) do not install its loader in a worker
 *     under Node 20 (each worker entry registers tsx itself), and loading them there for nothing doubled
 *     each worker's start-up: they are dropped.
 *   - an explicit execArgv may hold only Node's per-thread options. A V8 option such as
 *     `--max-old-space-size` or `--trace-gc` makes `new Worker` throw ERR_WORKER_INVALID_EXEC_ARGV, where
 *     a worker that inherits its parent's execArgv accepts it (V8 flags are process-wide anyway). Node
 *     does not tell which flags are V8's, so `withWorkerArgv` tries the trimmed list and, when Node
 *     refuses it, lets the workers inherit everything: a slower start instead of a service that cannot
 *     start under a common production flag.
 */
const LOADER_FLAGS = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader']);

/** `argv` without the tsx preload flags. */
export function workerExecArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf('=');
    const flag = eq > 0 ? a.slice(0, eq) : a;
    if (LOADER_FLAGS.has(flag)) {
      const value = eq > 0 ? a.slice(eq + 1) : argv[i + 1] ?? '';
      if (/(^|[/\\])tsx([/\\]|$)/.test(value)) {
        if (eq < 0) i++;
        continue;
      }
    }
    out.push(a);
  }
  return out;
}

/**
 * Starts workers with the trimmed execArgv, or, when Node refuses it, with none given (inherited).
 * `start` must throw before it has started anything when Node refuses its argv (`new Worker` and
 * piscina's constructor do).
 */
export function withWorkerArgv<T>(start: (execArgv: string[] | undefined) => T, argv: readonly string[] = process.execArgv): T {
  try {
    return start(workerExecArgv(argv));
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw err;
    return start(undefined);
  }
}
