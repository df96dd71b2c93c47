/**
 * Process entry: load configuration (a bad key stops start-up with a message naming it), start the
 * app, and stop in order on SIGTERM/SIGINT: stop accepting, finish in-flight requests, flush LMDB,
 * exit 0.
 */
import { startApp } from './node/app.ts';
import { ConfigError, loadConfig, type Config } from './runtime/config.ts';
import { createLogger } from './runtime/log.ts';

let config: Readonly<Config>;
try {
  config = loadConfig();
} catch (e) {
  if (e instanceof ConfigError) {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
  throw e;
}

const log = createLogger(config.log.level);
// Under the sequencer's lease (cluster.failover) the node may change role while it runs (failover.ts).
const failover = config.cluster.failover.enabled && config.cluster.role !== 'single';
const node = failover ? await (await import('./node/failover.ts')).startFailoverNode(config, { log }) : undefined;
const app = node === undefined ? await startApp(config, { log }) : undefined;
// The console's address as a browser on this machine opens it (a wildcard listen address is reached at 127.0.0.1).
const wildcard = ['0.0.0.0', '::', '[::]'].includes(config.http.host);
const shownHost = wildcard ? '127.0.0.1' : config.http.host.includes(':') && !config.http.host.startsWith('[') ? `[${config.http.host}]` : config.http.host;
const consoleUrl = (port: number) => (config.console.enabled ? `http://${shownHost}:${port}/console` : undefined);
const listening = (port: number, role: string) =>
  log.info({ host: config.http.host, port, dataDir: config.dataDir, role, profile: config.profile, console: consoleUrl(port) }, 'listening');
listening(node?.app.port ?? app!.port, node?.role ?? config.cluster.role);
if (node !== undefined) {
  void (async () => {
    for (;;) {
      await node.changed();
      listening(node.app.port, node.role);
    }
  })();
}

let signalled = false;
const onSignal = (signal: NodeJS.Signals) => {
  if (signalled) return;
  signalled = true;
  log.info({ signal }, 'shutting down');
  (node ?? app!).stop().then(
    () => {
      log.info('stopped');
      process.exit(0);
    },
    (err: unknown) => {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    },
  );
};
process.on('SIGTERM', onSignal);
process.on('SIGINT', onSignal);
