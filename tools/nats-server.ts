/**
 * Starts real `nats-server` processes with JetStream for the cluster tests and benchmarks (Debian's
 * `nats-server` package, 2.9 or later): `nats-server -js -a 127.0.0.1 -p <port> -sd <dir>`, then waits
 * until it accepts connections. The port is free when chosen; `restart()` brings the server back on the
 * same port and store directory (its streams survive), `kill()` is a SIGKILL.
 *
 *   const nats = await startNatsServer({ secure: true });
 *   ... NATS_URL=nats.url, NATS_USER / NATS_PASSWORD = nats.credentials('gateway') ...
 *   await nats.stop();
 *
 * `secure`: the server runs the configuration tools/nats-config.ts writes for a deployment (one user per role,
 * the least permissions each needs), as a cluster should; without it the server has no users at all, which
 * a clustered node accepts only when told it is a test (cluster.insecure / NATS_INSECURE=1).
 *
 * `tls`: that configuration with a certificate (nats-config.ts `--tls-cert`, `--tls-key`; tools/nats-certs.ts
 * makes one for 127.0.0.1), as off loopback: the server then refuses any client that does not speak TLS, and
 * `url` is `tls://127.0.0.1:<port>`. The readiness check stays a TCP connect (the server accepts before the
 * handshake: its INFO is sent in clear, then the client upgrades).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsConfig, type NatsConfig, type NatsRole } from './nats-config.ts';

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
  /** A secure server's users (tools/nats-config.ts), undefined for one without users. */
  readonly users: NatsConfig['users'] | undefined;
  /**
   * The credentials a node of `role` connects with: its role's user on a secure server (a standby shares the
   * sequencer's), none (and `insecure`, said explicitly) on a server without users.
   */
  credentials(role: string): { natsUser: string; natsPassword: string; insecure: boolean };
  /** The same as environment variables of a child service (NATS_USER, NATS_PASSWORD, NATS_INSECURE). */
  env(role: string): Record<string, string>;
  /** The server's log, newest 16 KB (permission violations show here). */
  log(): string;
}

/** The NATS user of a node's role (tools/nats-config.ts): a standby runs as the sequencer it may become. */
export const natsRoleOf = (role: string): NatsRole => (role === 'standby' ? 'sequencer' : (role as NatsRole));

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

export async function startNatsServer(
  o: { dir?: string; port?: number; startTimeoutMs?: number; config?: string; secure?: boolean; stream?: string; tls?: { cert: string; key: string } } = {},
): Promise<NatsServer> {
  if (o.tls !== undefined && (o.config !== undefined || o.secure !== true)) throw new Error('startNatsServer: tls is an option of the secure configuration (secure: true, no config text)');
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'pm-nats-'));
  // A configuration file's text (users and permissions, say); the flags below still set JetStream, address, port and store.
  const configArgs: string[] = [];
  const secure = o.secure === true ? natsConfig({ stream: o.stream, tls: o.tls }) : undefined;
  const config = o.config ?? secure?.text;
  if (config !== undefined) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'nats.conf'), config, { mode: 0o600 });
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
    const keep = (b: Buffer) => (output = (output + b.toString()).slice(-16_000));
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
  const credentials = (role: string) => {
    const u = secure?.users[natsRoleOf(role)];
    return u === undefined ? { natsUser: '', natsPassword: '', insecure: true } : { natsUser: u.user, natsPassword: u.password, insecure: false };
  };
  return {
    users: secure?.users,
    credentials,
    env(role: string): Record<string, string> {
      const c = credentials(role);
      return c.insecure ? { NATS_INSECURE: '1' } : { NATS_USER: c.natsUser, NATS_PASSWORD: c.natsPassword };
    },
    log: () => output,
    url: `${o.tls === undefined ? 'nats' : 'tls'}://127.0.0.1:${port}`,
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
