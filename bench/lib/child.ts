/**
 * Runs a load generator in a child process, so the server under test keeps a core of its own (this
 * machine may have only two). The child is the generator's own module, forked with `flag` set in its
 * environment; options go in and the result comes back over the IPC channel as plain data.
 *
 * Protocol: the child sends {ready}, receives the options, and sends {result} or {error} before it exits.
 * `serveInChild` is the child's half.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export function runInChild<O, R>(moduleUrl: string, flag: string, options: O): Promise<R> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(moduleUrl), [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, [flag]: '1' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: R | undefined;
    child.on('message', (m: { ready?: true; result?: R; error?: string }) => {
      if (m.ready) child.send(options as object);
      else if (m.result) result = m.result;
      else if (m.error) reject(new Error(`${flag}: ${m.error}`));
    });
    child.on('error', reject);
    child.on('exit', (code) => (result && code === 0 ? resolve(result) : reject(new Error(`${flag} child exited with ${code}`))));
  });
}

/** In the child (when `flag` is set): runs `run` on the options the parent sends and reports. */
export function serveInChild<O, R>(flag: string, run: (o: O) => Promise<R>): void {
  if (process.env[flag] !== '1') return;
  process.once('message', (o: O) => {
    run(o).then(
      (result) => process.send!({ result }, () => process.exit(0)),
      (e: unknown) => process.send!({ error: String(e) }, () => process.exit(1)),
    );
  });
  process.send!({ ready: true });
}
