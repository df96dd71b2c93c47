/**
 * `npx pm-exchange`: the exchange for a shell, as a local chain node starts (bin/pm-exchange.js loads this
 * through tsx). It starts the harness (start.ts) with the options below, prints the URLs, the admin token and
 * the funded wallets with their test keys, and runs until SIGINT or SIGTERM, when it stops and removes its
 * temporary store. `--help` prints the options (USAGE below) and exits 0; a bad option prints the reason and
 * the usage and exits 2; a failed start exits 1.
 */
import { parseArgs } from 'node:util';
import { VERSION } from '../node/app.ts';
import { startExchange, type ExchangeOptions } from './start.ts';

export const USAGE = `usage: pm-exchange [options]

Starts the exchange (the demo catalog, five funded test wallets) and prints its URLs, admin token and the
wallets' test keys; Ctrl-C stops it and removes its temporary store.

  --port N            listen port (default 8080; 0 = a free one)
  --host H            listen address (default 127.0.0.1)
  --data-dir DIR      keep the store there (default: a temporary one, removed on exit)
  --demo MODE         static (default: the demo catalog), off (no markets) or live (demo traders too)
  --admin-token T     the admin API's bearer token (default: a random one, printed)
  --config FILE       a JSON configuration overlaid on the defaults (as CONFIG_FILE), e.g. the
                      package's config/clob-v2-compat.json for the official client
  --scenario FILE     a scenario (JSON) started once the exchange is up
  --state PATH        start from a state file (a packed snapshot, e.g. written by
                      POST /admin/snapshots/{name}/export, or a snapshot directory); it is also
                      kept as a snapshot to revert to
  --frozen            start with the test clock frozen
  --log-level L       the service's log on stderr: fatal, error, warn (default), info, debug, trace, silent
  -h, --help          this text`;

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The options a command line gives, `help` when it asks for the usage, or a usage error (thrown as a string). */
export function optionsOf(argv: readonly string[]): ExchangeOptions | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      demo: { type: 'string' },
      'admin-token': { type: 'string' },
      config: { type: 'string' },
      scenario: { type: 'string' },
      state: { type: 'string' },
      frozen: { type: 'boolean' },
      'log-level': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help === true) return 'help';
  const port = values.port === undefined ? 8080 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw `--port: expected 0..65535, got ${values.port}`;
  const demo = values.demo ?? 'static';
  if (demo !== 'static' && demo !== 'off' && demo !== 'live') throw `--demo: expected static, off or live, got ${demo}`;
  const level = values['log-level'] ?? 'warn';
  if (!(LEVELS as readonly string[]).includes(level)) throw `--log-level: expected one of ${LEVELS.join(', ')}, got ${level}`;
  return {
    port,
    host: values.host,
    dataDir: values['data-dir'],
    demo,
    adminToken: values['admin-token'],
    configFile: values.config,
    scenario: values.scenario,
    state: values.state,
    frozen: values.frozen === true,
    logLevel: level as ExchangeOptions['logLevel'],
  };
}

/** What the shell is told: the URLs, the admin token, the wallets and their keys, as local chain nodes print them. */
export function banner(ex: Awaited<ReturnType<typeof startExchange>>, usdc: readonly string[]): string {
  const lines = [
    `pm-exchange ${VERSION}: a prediction-market exchange for bots' test suites`,
    '',
    `Listening on     ${ex.url}`,
    `Streams          ${ex.wsUrl}/ws/market  ${ex.wsUrl}/ws/user`,
    `Console          ${ex.url}/console`,
    `Admin token      ${ex.adminToken}   (Authorization: Bearer ${ex.adminToken})`,
    `Chain id         ${ex.chainId}   (domains: ${ex.url}/exchange-info)`,
    `Store            ${ex.dataDir}`,
    '',
    'Funded wallets',
    '==================',
    ...ex.wallets.map((w, i) => `(${i}) ${w.address} (${usdc[i]} USDC)`),
    '',
    'Private keys (TEST KEYS ONLY: derived from public strings, anyone can sign with them)',
    '==================',
    ...ex.wallets.map((w, i) => `(${i}) ${w.privateKey}`),
  ];
  if (ex.scenario !== undefined) {
    lines.push('', `Scenario ${ex.scenario.id} ${ex.scenario.name}: market ${ex.scenario.market.conditionId} (yes ${ex.scenario.market.yes}, no ${ex.scenario.market.no})`);
    for (const [name, address] of Object.entries(ex.scenario.wallets)) lines.push(`  ${name.padEnd(12)} ${address}`);
  }
  lines.push('', 'Ctrl-C stops it.');
  return lines.join('\n');
}

export async function main(argv: readonly string[]): Promise<void> {
  let options: ExchangeOptions | 'help';
  try {
    options = optionsOf(argv);
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  let ex: Awaited<ReturnType<typeof startExchange>>;
  try {
    ex = await startExchange(options);
  } catch (e) {
    process.stderr.write(`pm-exchange could not start: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
  const usdc = await Promise.all(ex.wallets.map(async (w) => (await ex.admin.balances(w.address)).usdc.available));
  process.stdout.write(`${banner(ex, usdc)}\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    ex.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`shutdown failed: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
