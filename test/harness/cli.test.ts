/**
 * The bin's command line (src/harness/cli.ts): options parsed into the harness's, bad ones refused with the
 * reason; the banner prints what a local chain node prints (URLs, the admin token, every funded wallet with
 * its key, the scenario's wallets). The bin itself runs from a packed tarball in test/harness/pack.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { banner, optionsOf, USAGE } from '../../src/harness/cli.ts';

test('options: defaults, every flag, and refusals naming the flag', () => {
  assert.deepEqual(optionsOf([]), { port: 8080, host: undefined, dataDir: undefined, demo: 'static', adminToken: undefined, configFile: undefined, scenario: undefined, state: undefined, frozen: false, logLevel: 'warn' });
  assert.deepEqual(
    optionsOf(['--port', '0', '--host', '0.0.0.0', '--data-dir', '/tmp/x', '--demo', 'off', '--admin-token', 't', '--config', 'c.json', '--scenario', 's.json', '--state', 'f.pmsnap', '--frozen', '--log-level', 'info']),
    { port: 0, host: '0.0.0.0', dataDir: '/tmp/x', demo: 'off', adminToken: 't', configFile: 'c.json', scenario: 's.json', state: 'f.pmsnap', frozen: true, logLevel: 'info' },
  );
  assert.throws(() => optionsOf(['--port', '70000']), /--port/);
  assert.throws(() => optionsOf(['--demo', 'full']), /--demo/);
  assert.throws(() => optionsOf(['--log-level', 'loud']), /--log-level/);
  assert.throws(() => optionsOf(['--verbose']), /verbose/);
  assert.throws(() => optionsOf(['extra']), /extra|positional/);
});

test('--help (or -h) asks for the usage, which names every option the command line takes', () => {
  assert.equal(optionsOf(['--help']), 'help');
  assert.equal(optionsOf(['--port', '0', '-h']), 'help');
  const flags = ['--port', '--host', '--data-dir', '--demo', '--admin-token', '--config', '--scenario', '--state', '--frozen', '--log-level', '--help'];
  for (const f of flags) assert.match(USAGE, new RegExp(`^\\s+(-h, )?${f} `, 'm'), f);
  // Each documented flag parses: the usage promises nothing the parser refuses.
  for (const f of flags.slice(0, -1)) assert.doesNotThrow(() => optionsOf(f === '--frozen' ? [f] : [f, f === '--port' ? '1' : f === '--demo' ? 'off' : f === '--log-level' ? 'info' : 'x']), f);
});

test('the banner: URLs, token, every wallet with its balance and key, the scenario\'s wallets', () => {
  const text = banner(
    {
      url: 'http://127.0.0.1:8080',
      wsUrl: 'ws://127.0.0.1:8080',
      adminToken: 'tok',
      dataDir: '/tmp/s',
      chainId: 31337001,
      wallets: [
        { address: '0xaa', privateKey: '0x11' },
        { address: '0xbb', privateKey: '0x22' },
      ],
      scenario: { id: 1, name: 'rain', market: { conditionId: '0xcc', yes: '1', no: '2' }, wallets: { mm: '0xdd' }, startedAt: '', events: [] },
    } as never,
    ['10000', '5'],
  );
  for (const line of ['Listening on     http://127.0.0.1:8080', 'ws://127.0.0.1:8080/ws/market', 'Admin token      tok', '(0) 0xaa (10000 USDC)', '(1) 0xbb (5 USDC)', '(0) 0x11', '(1) 0x22', 'mm           0xdd', 'Chain id         31337001']) {
    assert.ok(text.includes(line), `missing: ${line}\n${text}`);
  }
  assert.match(text, /TEST KEYS ONLY/);
});
