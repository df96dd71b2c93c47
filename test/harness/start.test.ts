/**
 * startExchange (src/harness/start.ts), the test fixture: an empty exchange still has its five funded test
 * wallets, whose keys sign; `frozen` freezes the clock; a scenario given as a file starts with it; options go
 * over a config file over the defaults, never the environment; close() stops the service, removes a temporary
 * store and keeps one that was given; a start that fails leaves nothing behind; a state file exported from one
 * exchange starts another in the state it was saved in (its API keys included), listed as a snapshot to revert
 * to, and a damaged one fails the start with its reason.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEMO_WALLETS } from '../../src/demo/catalog.ts';
import { AdminError } from '../../src/harness/admin-client.ts';
import { startExchange } from '../../src/harness/start.ts';
import { TestClient, units } from '../fixtures/trading-client.ts';

test('an empty exchange: five funded test wallets whose keys trade, a random admin token, a frozen clock when asked', async () => {
  const ex = await startExchange({ demo: 'off', frozen: true });
  try {
    assert.deepEqual(ex.wallets.map((w) => w.address), DEMO_WALLETS.map((w) => w.address));
    for (const w of ex.wallets) assert.equal((await ex.admin.balances(w.address)).usdc.available, '10000');
    assert.match(ex.adminToken, /^[0-9a-f]{32}$/);
    assert.equal((await ex.admin.clock()).frozen, true);
    assert.equal(ex.wsUrl, ex.url.replace('http', 'ws'));
    // The wallets' keys sign: the first one creates an API key and rests an order in a market made for it.
    const m = await ex.admin.createMarket({ question: 'Does the fixture trade?' });
    const c = new TestClient(ex.url, ex.wallets[0]!.privateKey, await TestClient.info(ex.url));
    await c.createKey();
    const placed = await c.place({ tokenId: m.yes, side: 'BUY', makerAmount: units(4), takerAmount: units(10) });
    assert.deepEqual([placed.status, placed.body.status], [200, 'live']);
    assert.equal(ex.chainId, (await TestClient.info(ex.url)).chainId);
    // A refusal of the admin API throws with its status and body.
    await assert.rejects(ex.admin.advance({ to: 0 }), (e: unknown) => e instanceof AdminError && e.status === 400 && /only moves forward/.test(String(e.body.error)));
  } finally {
    await ex.close();
  }
  assert.equal(existsSync(ex.dataDir), false, 'close() removed the temporary store');
  await ex.close();
});

test('options over a config file over the defaults; a scenario file starts with it; a given store stays', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pm-harness-'));
  const store = join(dir, 'store');
  const file = join(dir, 'config.json');
  const scenario = join(dir, 'scenario.json');
  writeFileSync(file, JSON.stringify({ heartbeats: { timeoutSeconds: 30 }, rewards: { sampleSeconds: 120 } }));
  writeFileSync(scenario, JSON.stringify({ market: { question: 'From a file?' }, wallets: { mm: { usdc: '10' } } }));
  // The shell's environment is not the fixture's configuration.
  const env = { DEMO: process.env.DEMO, HOST: process.env.HOST };
  process.env.DEMO = 'live';
  process.env.HOST = '0.0.0.0';
  try {
    const ex = await startExchange({ demo: 'off', dataDir: store, configFile: file, config: { heartbeats: { timeoutSeconds: 45 } }, scenario, adminToken: 'given' });
    try {
      const config = (ex.app as { ctx: { config: { heartbeats: { timeoutSeconds: number }; rewards: { sampleSeconds: number } } } }).ctx.config;
      assert.deepEqual([config.heartbeats.timeoutSeconds, config.rewards.sampleSeconds], [45, 120]);
      assert.equal(ex.adminToken, 'given');
      assert.ok(ex.url.startsWith('http://127.0.0.1:'), 'not HOST');
      assert.equal((ex.app as { demo?: unknown }).demo, undefined, 'not DEMO');
      assert.equal(ex.scenario?.market.conditionId.length, 66);
      assert.equal((await ex.admin.balances(ex.scenario!.wallets.mm!)).usdc.available, '10');
    } finally {
      await ex.close();
    }
    assert.ok(readdirSync(store).length > 0, 'a store that was given stays');
  } finally {
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a start that fails names the bad setting and leaves no store behind', async () => {
  const before = new Set(readdirSync(tmpdir()).filter((f) => f.startsWith('pm-exchange-')));
  await assert.rejects(startExchange({ config: { heartbeats: { timeoutSeconds: -1 } } }), /heartbeats\.timeoutSeconds/);
  const after = readdirSync(tmpdir()).filter((f) => f.startsWith('pm-exchange-') && !before.has(f));
  assert.deepEqual(after, []);
});

test('a state file: exported from one exchange, another starts from it (books, balances, API keys, clock) and can revert to it', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pm-state-'));
  const file = join(dir, 'fixture.pmsnap');
  try {
    const first = await startExchange({ demo: 'off', frozen: true });
    let saved: { hash: string; book: string; key: Awaited<ReturnType<TestClient['createKey']>>; clock: unknown; yes: string };
    try {
      const m = await first.admin.createMarket({ question: 'Is it a fixture?' });
      await first.admin.setBook(m.yes, { bids: [{ price: 0.4, size: 100 }], asks: [{ price: 0.42, size: 50 }] });
      const c = new TestClient(first.url, first.wallets[0]!.privateKey, await TestClient.info(first.url));
      const key = await c.createKey();
      await first.admin.advance(3600);
      await first.admin.snapshot('fixture');
      const exported = await first.admin.exportSnapshot('fixture', file);
      assert.equal(exported.bytes, readFileSync(file).length);
      saved = { hash: (await first.admin.stateHash()).stateHash, book: await (await fetch(`${first.url}/book?token_id=${m.yes}`)).text(), key, clock: await first.admin.clock(), yes: m.yes };
    } finally {
      await first.close();
    }
    const second = await startExchange({ state: file });
    try {
      assert.equal((await second.admin.stateHash()).stateHash, saved.hash);
      assert.equal(await (await fetch(`${second.url}/book?token_id=${saved.yes}`)).text(), saved.book);
      assert.deepEqual(await second.admin.clock(), saved.clock, 'frozen where the state was saved');
      const c = new TestClient(second.url, second.wallets[0]!.privateKey, await TestClient.info(second.url));
      assert.equal((await c.call('GET', '/data/orders', undefined, saved.key)).status, 200, 'the API key made before the save works: the master key came with it');
      assert.deepEqual((await second.admin.snapshots()).snapshots.map((s) => s.name), ['fixture']);
      await second.admin.setBook(saved.yes, { bids: [{ price: 0.3, size: 10 }], asks: [] });
      await second.admin.revert('fixture');
      assert.equal(await (await fetch(`${second.url}/book?token_id=${saved.yes}`)).text(), saved.book);
    } finally {
      await second.close();
    }
    // A damaged state file fails the start, naming what is wrong, and leaves no store behind.
    const bytes = readFileSync(file);
    bytes[bytes.length - 100] ^= 0xff;
    writeFileSync(file, bytes);
    await assert.rejects(startExchange({ state: file }), /does not match its digest/);
    await assert.rejects(startExchange({ state: join(dir, 'missing.pmsnap') }), /ENOENT|no such file/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
