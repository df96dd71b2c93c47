import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ConfigError, loadConfig, testControlsOn } from '../../src/runtime/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'pm-config-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

test('defaults load, validate and are frozen; unnamed buckets take the spec caps', () => {
  const c = loadConfig({ env: {} });
  assert.equal(c.http.host, '127.0.0.1');
  assert.equal(c.http.port, 8080);
  assert.equal(c.dataDir, './data');
  assert.equal(c.http.maxBodyBytes, 1024 * 1024);
  assert.deepEqual(c.rateLimits.buckets['trading-burst'], { limit: 2400, windowSeconds: 10 });
  assert.deepEqual(c.rateLimits.buckets['trading-sustained'], { limit: 24000, windowSeconds: 600 });
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.http));
});

test('CONFIG_FILE overlays defaults key by key, environment overlays both', () => {
  const p = file('overlay.json', JSON.stringify({ http: { port: 9000 }, rateLimits: { buckets: { book: { limit: 5, windowSeconds: 1 } } } }));
  const c = loadConfig({ env: { CONFIG_FILE: p, HOST: '0.0.0.0', DEMO: '0', RATE_LIMITS: 'off', SHARDS: '2' } });
  assert.equal(c.http.port, 9000);
  assert.equal(c.http.host, '0.0.0.0');
  assert.equal(c.http.maxBodyBytes, 1024 * 1024, 'sibling keys survive an overlay');
  assert.equal(c.demo, 'off');
  assert.equal(c.rateLimits.enabled, false);
  assert.equal(c.engine.shards, 2);
  assert.deepEqual(c.rateLimits.buckets.book, { limit: 5, windowSeconds: 1 });
  assert.deepEqual(c.rateLimits.buckets.books, { limit: 80, windowSeconds: 10 });
  assert.equal(loadConfig({ env: { CONFIG_FILE: p, PORT: '1234' } }).http.port, 1234);
});

test('PROFILE selects a named profile: its files first, then CONFIG_FILE, then the environment', () => {
  const spec = loadConfig({ env: {} });
  assert.equal(spec.profile, 'spec');
  assert.deepEqual([spec.auth.chainId, spec.compat.shapes, spec.auth.reasonInBody, spec.sandbox.trades.minedDelayMs], [31337001, 'spec', false, 0], "the spec's profile is the default file unchanged");
  assert.deepEqual(loadConfig({ env: { PROFILE: 'spec' } }), spec);
  const client = loadConfig({ env: { PROFILE: 'clob-v2' } });
  assert.deepEqual(
    [client.profile, client.auth.chainId, client.compat.shapes, client.auth.reasonInBody, client.sandbox.trades.minedDelayMs, client.sandbox.trades.confirmedDelayMs],
    ['clob-v2', 80002, 'clob-client-v2', true, 1000, 4000],
  );
  const platform = loadConfig({ env: { PROFILE: 'platform' } });
  assert.deepEqual([platform.profile, platform.auth.chainId, platform.compat.shapes, platform.auth.reasonInBody, platform.sandbox.trades.minedDelayMs], ['platform', 137, 'clob-client-v2', true, 1000]);
  assert.equal(platform.auth.orderDomain.verifyingContract, client.auth.orderDomain.verifyingContract, 'the V2 exchange has one address on both chains');
  // A profile's own file is that profile (what CONFIG_FILE=config/clob-v2-compat.json always meant, now with the rest of it).
  assert.deepEqual(loadConfig({ env: { CONFIG_FILE: 'config/clob-v2-compat.json' } }), client);
  assert.deepEqual(loadConfig({ env: { CONFIG_FILE: 'config/platform-domains.json' } }), platform);
  // Files stack on the profile, in order, and the environment on both.
  const lag = file('lag.json', JSON.stringify({ sandbox: { trades: { minedDelayMs: 50, retryingShare: 0.2 } }, http: { port: 9001 } }));
  const off = file('off.json', JSON.stringify({ sandbox: { trades: { minedDelayMs: 0, confirmedDelayMs: 0 } } }));
  const stacked = loadConfig({ env: { PROFILE: 'clob-v2', CONFIG_FILE: `${lag},${off}`, PORT: '9002' } });
  assert.deepEqual([stacked.auth.chainId, stacked.sandbox.trades.minedDelayMs, stacked.sandbox.trades.confirmedDelayMs, stacked.sandbox.trades.retryingShare, stacked.http.port], [80002, 0, 0, 0.2, 9002]);
  assert.deepEqual(loadConfig({ env: { PROFILE: 'clob-v2', CONFIG_FILE: `${lag}:${off}` } }).sandbox.trades, stacked.sandbox.trades, "':' separates files too");
  assert.equal(loadConfig({ env: { CONFIG_FILE: `config/clob-v2-compat.json,${lag}` } }).sandbox.trades.minedDelayMs, 50, 'a profile file then a plain one');
  assert.ok(Object.isFrozen(stacked.sandbox.trades));
});

test('a profile nobody knows, or a file of another profile than the one selected, names what to change', () => {
  const names = (key: string, text: RegExp) => (e: unknown) => e instanceof ConfigError && e.key === key && text.test(e.message);
  assert.throws(() => loadConfig({ env: { PROFILE: 'mainnet' } }), names('PROFILE', /unknown profile "mainnet" \(known: spec, clob-v2, platform\)/));
  assert.throws(() => loadConfig({ env: { CONFIG_FILE: file('p.json', JSON.stringify({ profile: 'nope' })) } }), names('profile', /names the unknown profile "nope"/));
  assert.throws(
    () => loadConfig({ env: { PROFILE: 'platform', CONFIG_FILE: 'config/clob-v2-compat.json' } }),
    names('profile', /config\/clob-v2-compat\.json is the clob-v2 profile's file, and PROFILE=platform selects another/),
  );
  assert.throws(() => loadConfig({ env: { CONFIG_FILE: 'config/clob-v2-compat.json,config/platform-domains.json' } }), names('profile', /clob-v2 profile's file/));
});

test('DEMO and `demo` take live, static or off; the boolean forms they used to have still work', () => {
  assert.equal(loadConfig({ env: {} }).demo, 'live');
  const cases: [string, string][] = [
    ['1', 'live'], ['true', 'live'], ['on', 'live'], ['live', 'live'], ['LIVE', 'live'],
    ['static', 'static'],
    ['0', 'off'], ['false', 'off'], ['off', 'off'],
  ];
  for (const [env, mode] of cases) assert.equal(loadConfig({ env: { DEMO: env } }).demo, mode, `DEMO=${env}`);
  for (const [value, mode] of [[true, 'live'], [false, 'off'], ['static', 'static']] as const) {
    const p = file(`demo-${String(value)}.json`, JSON.stringify({ demo: value }));
    assert.equal(loadConfig({ env: { CONFIG_FILE: p } }).demo, mode, `"demo": ${JSON.stringify(value)}`);
  }
});

const bad: { name: string; env?: Record<string, string>; file?: unknown; key: string }[] = [
  { name: 'non-numeric PORT', env: { PORT: 'abc' }, key: 'PORT' },
  { name: 'PORT out of range', env: { PORT: '70000' }, key: 'http.port' },
  { name: 'bad DEMO', env: { DEMO: 'maybe' }, key: 'DEMO' },
  { name: 'bad demo in file', file: { demo: 'sometimes' }, key: 'demo' },
  { name: 'bad log level', env: { LOG_LEVEL: 'loud' }, key: 'log.level' },
  { name: 'zero shards', env: { SHARDS: '0' }, key: 'engine.shards' },
  { name: 'unknown key in file', file: { http: { prot: 1 } }, key: 'http.prot' },
  { name: 'wrong type in file', file: { auth: { maxClockSkewSeconds: '30' } }, key: 'auth.maxClockSkewSeconds' },
  { name: 'bad bucket', file: { rateLimits: { buckets: { book: { limit: 0, windowSeconds: 10 } } } }, key: 'rateLimits.buckets.book.limit' },
  { name: 'bad trusted proxy', file: { http: { trustedProxies: ['10.0.0.0/99'] } }, key: 'http.trustedProxies' },
  { name: 'bad allowlist entry', file: { dataApi: { ipAllowlist: ['not-an-ip'] } }, key: 'dataApi.ipAllowlist' },
  { name: 'bad contract address', file: { auth: { orderDomain: { verifyingContract: '0x12' } } }, key: 'auth.orderDomain.verifyingContract' },
];
for (const c of bad) {
  test(`config error names the key: ${c.name}`, () => {
    const env: Record<string, string> = { ...(c.env ?? {}) };
    if (c.file) env.CONFIG_FILE = file(`${c.key}.json`, JSON.stringify(c.file));
    assert.throws(
      () => loadConfig({ env }),
      (e: unknown) => e instanceof ConfigError && e.key === c.key && e.message.includes(c.key),
    );
  });
}

test('unreadable or non-object CONFIG_FILE is a config error', () => {
  assert.throws(() => loadConfig({ env: { CONFIG_FILE: join(dir, 'missing.json') } }), ConfigError);
  assert.throws(() => loadConfig({ env: { CONFIG_FILE: file('arr.json', '[1]') } }), ConfigError);
  assert.throws(() => loadConfig({ env: { CONFIG_FILE: file('junk.json', '{nope') } }), ConfigError);
});

test('npm start with a bad value stops with a message naming the key and exit code 1', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: { ...process.env, PORT: 'eighty', DATA_DIR: join(dir, 'never') },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /invalid configuration: PORT/);
});

test('the sandbox is off by default; its keys come from a file and FAULTS_FILE, and bad values name their key', () => {
  const d = loadConfig({ env: {} });
  assert.deepEqual(d.sandbox, {
    trades: { minedDelayMs: 0, confirmedDelayMs: 0, retryingShare: 0, retryDelayMs: 0, failedShare: 0, seed: 1 },
    maintenance: { weekly: [], durationSeconds: 90, postOnlySeconds: 120 },
    faultsFile: '',
    testControls: 'auto',
    snapshots: { max: 64 },
    state: '',
  });
  const p = file('sandbox.json', JSON.stringify({ sandbox: { trades: { minedDelayMs: 2000, retryingShare: 0.1 }, maintenance: { weekly: [{ day: 'tue', at: '11:00' }] } } }));
  const c = loadConfig({ env: { CONFIG_FILE: p, FAULTS_FILE: '/tmp/faults.json' } });
  assert.deepEqual([c.sandbox.trades.minedDelayMs, c.sandbox.trades.retryingShare, c.sandbox.trades.confirmedDelayMs], [2000, 0.1, 0]);
  assert.deepEqual(c.sandbox.maintenance.weekly, [{ day: 'tue', at: '11:00' }]);
  assert.equal(c.sandbox.faultsFile, '/tmp/faults.json');
  assert.equal(loadConfig({ env: { STATE_FILE: 'fixtures/a.pmsnap' } }).sandbox.state, 'fixtures/a.pmsnap');
  const bad = (sandbox: unknown) => file('bad-sandbox.json', JSON.stringify({ sandbox }));
  assert.throws(() => loadConfig({ env: { CONFIG_FILE: bad({ trades: { failedShare: 2 } }) } }), (e: unknown) => e instanceof ConfigError && e.key === 'sandbox.trades.failedShare');
  assert.throws(() => loadConfig({ env: { CONFIG_FILE: bad({ maintenance: { weekly: [{ day: 'tue', at: '25:00' }] } }) } }), (e: unknown) => e instanceof ConfigError && e.key.startsWith('sandbox.maintenance.weekly'));
  assert.throws(() => loadConfig({ env: { CONFIG_FILE: bad({ snapshots: { max: 0 } }) } }), (e: unknown) => e instanceof ConfigError && e.key === 'sandbox.snapshots.max');
});

test('the test controls: auto by default, on in ROLE=single only; TEST_CONTROLS and a file set them; a bad value names its key', () => {
  const on = (env: Record<string, string>) => testControlsOn(loadConfig({ env }));
  assert.equal(on({}), true, 'auto, single');
  assert.equal(on({ ROLE: 'sequencer' }), false, 'auto: off in a clustered role');
  assert.equal(on({ ROLE: 'sequencer', TEST_CONTROLS: 'on' }), true, 'unless asked for');
  assert.equal(on({ TEST_CONTROLS: 'off' }), false, 'a production configuration turns them off');
  assert.equal(on({ TEST_CONTROLS: '0' }), false);
  assert.equal(loadConfig({ env: { TEST_CONTROLS: 'AUTO' } }).sandbox.testControls, 'auto');
  assert.equal(on({ CONFIG_FILE: file('controls.json', JSON.stringify({ sandbox: { testControls: 'off' } })) }), false);
  assert.throws(() => loadConfig({ env: { TEST_CONTROLS: 'maybe' } }), (e: unknown) => e instanceof ConfigError && e.key === 'TEST_CONTROLS');
  assert.throws(
    () => loadConfig({ env: { CONFIG_FILE: file('bad-controls.json', JSON.stringify({ sandbox: { testControls: true } })) } }),
    (e: unknown) => e instanceof ConfigError && e.key === 'sandbox.testControls',
  );
});

test('the cluster role: single by default; ROLE, NATS_URL, NATS_CA_FILE, SEQUENCER_URL and FOLLOWER_START set it, a bad value names its key', () => {
  const d = loadConfig({ env: {} });
  assert.deepEqual(d.cluster, { role: 'single', natsUrl: 'nats://127.0.0.1:4222', natsUser: '', natsPassword: '', natsCaFile: '', insecure: false, sequencerUrl: '', stream: 'PM_JOURNAL', replicas: 1, outboxBatches: 100000, forwardTimeoutMs: 5000, followerStart: 'auto', backfill: true, backfillRetrySeconds: 30, failover: { enabled: false, nodeUrl: '', leaseMs: 3000, renewMs: 1000, pollMs: 500 } });
  const c = loadConfig({ env: { ROLE: 'replica', NATS_URL: 'tls://10.0.0.5:4222', NATS_CA_FILE: '/etc/pm-nats/tls/ca.pem', SEQUENCER_URL: 'https://seq.example' } });
  assert.deepEqual([c.cluster.role, c.cluster.natsUrl, c.cluster.natsCaFile, c.cluster.sequencerUrl], ['replica', 'tls://10.0.0.5:4222', '/etc/pm-nats/tls/ca.pem', 'https://seq.example']);
  assert.throws(() => loadConfig({ env: { ROLE: 'leader' } }), (e: unknown) => e instanceof ConfigError && e.key === 'cluster.role');
  assert.equal(loadConfig({ env: { FOLLOWER_START: 'store' } }).cluster.followerStart, 'store');
  assert.throws(() => loadConfig({ env: { FOLLOWER_START: 'history' } }), (e: unknown) => e instanceof ConfigError && e.key === 'cluster.followerStart');
  const p = join(dir, 'cluster.json');
  writeFileSync(p, JSON.stringify({ cluster: { replicas: 0 } }));
  assert.throws(() => loadConfig({ env: { CONFIG_FILE: p } }), (e: unknown) => e instanceof ConfigError && e.key === 'cluster.replicas');
});
