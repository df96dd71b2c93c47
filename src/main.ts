/**
 * Process entry: load configuration (a bad key stops start-up with a message naming it), start the
 * app, and stop in order on SIGTERM/SIGINT: stop accepting, finish in-flight requests, flush LMDB,
 * exit 0.
 */
import { startApp } from './app.ts';
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
const app = await startApp(config, { log });
log.info({ host: config.http.host, port: app.port, dataDir: config.dataDir }, 'listening');

let signalled = false;
const onSignal = (signal: NodeJS.Signals) => {
  if (signalled) return;
  signalled = true;
  log.info({ signal }, 'shutting down');
  app.stop().then(
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
