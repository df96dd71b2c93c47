/**
 * The user channel's refused credentials explain themselves (src/edge/ws/channels.ts deps `refusals`, with
 * src/edge/refusals/auth.ts userChannel behind it), over real sockets: the error frame carrying the reason
 * arrives before the 4001 close, whose code and reason stay the platform's; without `refusals` no frame is
 * sent, only the close; credentials that check never ask for a reason.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { AUTH_RULES } from '../../../src/edge/auth/auth.ts';
import { ApiKeyService } from '../../../src/edge/auth/api-keys.ts';
import { type Credentials } from '../../../src/edge/auth/credentials.ts';
import { Funders } from '../../../src/edge/auth/funders.ts';
import { Metrics } from '../../../src/edge/pipeline/metrics.ts';
import { RateLimiter } from '../../../src/edge/limits/rate-limit.ts';
import { createAuthExplainer } from '../../../src/edge/refusals/auth.ts';
import type { EdgeServer } from '../../../src/edge/server.ts';
import { SigPool } from '../../../src/edge/auth/sig-pool.ts';
import { StreamChannels, type ChannelDeps } from '../../../src/edge/ws/channels.ts';
import { openStore, type Store } from '../../../src/journal/env.ts';
import { systemClock } from '../../../src/runtime/clock.ts';
import { testConfig } from '../../../src/runtime/config.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { startTestServer, tempDir } from '../../fixtures/edge.ts';

const config = testConfig();
const WALLET = '0x' + '5e'.repeat(20);

let store: Store;
let keys: ApiKeyService;
let pool: SigPool;
let creds: Credentials;
/** Credentials the explainer was asked about. */
const asked: string[] = [];
const servers: EdgeServer[] = [];
const channels: StreamChannels[] = [];
let explained: number;
let silent: number;

/** The channels on a server of their own, with or without the reason hook. */
async function serve(refusals: ChannelDeps['refusals']): Promise<number> {
  const limiter = new RateLimiter({ enabled: false, maxCallers: 1000, buckets: {} });
  const metrics = new Metrics(false);
  const ch = new StreamChannels({
    limits: config.stream,
    books: { token: () => undefined, bookEvent: () => undefined },
    markets: { conditionId: () => undefined },
    topics: { market: (t) => `market:${t}`, custom: (t) => `market-custom:${t}`, lifecycle: 'market-lifecycle', user: (w, c) => (c === undefined ? `user:${w}` : `user:${w}:${c}`) },
    keys,
    funders: new Funders(config.auth.walletFactories),
    limiter,
    trustedProxies: [],
    clock: systemClock,
    metrics: metrics.stream(),
    log: silentLogger,
    refusals,
  });
  const { server } = await startTestServer([], { sockets: ch.mount });
  servers.push(server);
  channels.push(ch);
  return server.port;
}

before(async () => {
  store = openStore({ dataDir: tempDir() });
  keys = ApiKeyService.open(store, Buffer.alloc(32, 3), systemClock);
  creds = await keys.create(WALLET, '0');
  pool = new SigPool({ threads: 1 });
  const explainer = createAuthExplainer({ keys, rules: AUTH_RULES, pool, auth: config.auth, clock: systemClock, paths: () => [] });
  explained = await serve({
    userAuth: (auth) => {
      asked.push(auth.apiKey);
      return explainer.userChannel(auth);
    },
  });
  silent = await serve(undefined);
});

after(async () => {
  for (const ch of channels) ch.close();
  for (const s of servers) await s.close(1000);
  await pool.close();
  await store.close();
});

type Seen = { frame: string } | { close: number; reason: string };

/** Opens /ws/user, sends one subscription, and records frames and the close in the order they arrive (or until `waitMs`). */
function subscribe(port: number, auth: Credentials, waitMs = 2000): Promise<Seen[]> {
  return new Promise((resolve, reject) => {
    const seen: Seen[] = [];
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws/user`, { perMessageDeflate: false });
    const timer = setTimeout(() => {
      ws.terminate();
      resolve(seen);
    }, waitMs);
    ws.once('error', reject);
    ws.once('open', () => ws.send(JSON.stringify({ type: 'user', auth, markets: [] })));
    ws.on('message', (data) => seen.push({ frame: data.toString() }));
    ws.once('close', (code, reason) => {
      clearTimeout(timer);
      seen.push({ close: code, reason: reason.toString() });
      resolve(seen);
    });
  });
}

test('refused credentials: one error frame with the reason, then the 4001 close with the platform reason', async () => {
  const seen = await subscribe(explained, { ...creds, passphrase: 'not-it' });
  assert.equal(seen.length, 2, JSON.stringify(seen));
  const frame = JSON.parse((seen[0] as { frame: string }).frame) as { event_type: string; error: string };
  assert.equal(frame.event_type, 'error');
  assert.equal(frame.error, `the passphrase is not API key ${creds.apiKey}'s (6 characters arrived; passphrases are 64 hex characters, as issued with the key)`);
  assert.deepEqual(seen[1], { close: 4001, reason: 'Unauthorized/Invalid api key' });

  const unknown = await subscribe(explained, { ...creds, apiKey: '00000000-0000-4000-8000-000000000000' });
  assert.match((unknown[0] as { frame: string }).frame, /"error":"API key 00000000-0000-4000-8000-000000000000 is not known to this server/);
  assert.deepEqual(unknown[1], { close: 4001, reason: 'Unauthorized/Invalid api key' });
  assert.ok(!unknown.some((s) => 'frame' in s && (s.frame.includes(creds.secret) || s.frame.includes(creds.passphrase))));
});

test('without the reason hook: no frame, the same close', async () => {
  const seen = await subscribe(silent, { ...creds, passphrase: 'not-it' });
  assert.deepEqual(seen, [{ close: 4001, reason: 'Unauthorized/Invalid api key' }]);
});

test('credentials that check never ask for a reason and get no error frame', async () => {
  asked.length = 0;
  const seen = await subscribe(explained, creds, 300);
  assert.deepEqual(seen, [], 'no frame, no close: subscribed to all of its markets');
  assert.deepEqual(asked, []);
});
