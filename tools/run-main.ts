/**
 * A tool's command line: when the module is the program node was started with (not imported by a test or
 * another tool), run its `main`; a mistake in the arguments or the environment is printed as its message
 * alone, exit status 1, not as a stack trace.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export function runMain(moduleUrl: string, main: () => void | Promise<void>): void {
  if (process.argv[1] === undefined || resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  const fail = (e: unknown) => {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  };
  try {
    void Promise.resolve(main()).catch(fail);
  } catch (e) {
    fail(e);
  }
}
