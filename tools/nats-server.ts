/**
 * Starts real `nats-server` processes with JetStream for the cluster tests and benchmarks (Debian's
 * `nats-server` package, 2.9 or later): `nats-server -js -a 127.0.0.1 -p <port> -sd <dir>`, then waits
 * until it accepts connections. The port is free when chosen; `restart()` brings the server back on the
 * same port and store directory (its streams survive), `kill()` is a SIGKILL.
 *
 *   const nats = await startNatsServer();
 *   ... NATS_URL=nats.url ...
 *   await nats.stop();
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface NatsServer {
  readonly url: string;
  readonly port: number;
  /** The JetStream store directory. */
  readonly dir: string;
  readonly pid: number | undefined;
  /** SIGTERM and wait; removes the store directory unless it was given. */
  stop(): Promise<void>;
  /** SIGKILL and wait (the store directory stays, for restart()). */
  kill(): Promise<void>;
  /** Starts the server again on the same port and store directory. */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: the server stops answering without closing a connection (a partition, a stall). */
  pause(): void;
  resume(): void;
}

/** Whether `nats-server` can be run (the tests skip with "nats-server not on PATH" otherwise). */
export function natsServerAvailable(): boolean {
  const r = spawnSync('nats-server', ['--version'], { stdio: 'ignore' });
  return r.error === undefined && r.status === 0;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export async function startNatsServer(o: { dir?: string; port?: number; startTimeoutMs?: number; config?: string } = {}): Promise<NatsServer> {
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'pm-nats-'));
  // A configuration file's text (users and permissions, say); the flags below still set JetStream, address, port and store.
  const configArgs: string[] = [];
  if (o.config !== undefined) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'nats.conf'), o.config);
    configArgs.push('-c', join(dir, 'nats.conf'));
  }
  const port = o.port ?? (await freePort());
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let output = '';

  const launch = async () => {
    output = '';
    const c = spawn('nats-server', [...configArgs, '-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    const keep = (b: Buffer) => (output = (output + b.toString()).slice(-4000));
    c.stdout!.on('data', keep);
    c.stderr!.on('data', keep);
    let gone = false;
    exited = new Promise((r) => c.once('exit', () => ((gone = true), r())));
    const until = Date.now() + (o.startTimeoutMs ?? 10_000);
    for (;;) {
      if (gone) throw new Error(`nats-server exited at start:\n${output}`);
      if (await accepts(port)) return;
      if (Date.now() > until) {
        c.kill('SIGKILL');
        throw new Error(`nats-server did not accept connections on ${port}:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const signal = async (sig: NodeJS.Signals) => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(sig);
    await exited;
  };

  await launch();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    dir,
    get pid() {
      return child?.pid;
    },
    async stop() {
      await signal('SIGTERM');
      if (o.dir === undefined) rmSync(dir, { recursive: true, force: true });
    },
    kill: () => signal('SIGKILL'),
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    async restart() {
      await signal('SIGKILL');
      await launch();
    },
  };
}
