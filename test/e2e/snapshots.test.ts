/**
 * Named snapshots and revert over real HTTP and the streams (src/node/revert.ts, routes/snapshots.ts):
 *   a revert restores every read byte for byte: the state hash, books, balances, wallet data (/data/trades,
 *   /positions, /trades), open orders, API keys (one made after stops working, one made before works), the
 *   catalog (a market made after is gone) and the test clock;
 *   a subscribed socket is closed with 1012 "service restart", and reconnecting gives the snapshot's book;
 *   trading works after a revert (an order placed matches), a second revert to the same snapshot works (on
 *   the proof the first made of its store), and a snapshot taken later stays listed and can be reverted to;
 *   refusals: unknown name 404, bad name 400, a taken name and the bound 409, no admin token 401, each
 *   changing nothing; with the test controls off the routes are unknown;
 *   a snapshot survives a restart of the process.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startService } from '../../tools/service-process.ts';
import { StreamClient } from '../../tools/stream-client.ts';
import { startApp } from '../../src/node/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { startTradingApp, type TradingApp } from '../fixtures/trading-app.ts';
import { tempDir } from '../fixtures/temp-dirs.ts';
import { TestClient, units } from '../fixtures/trading-client.ts';

const CID = `0x${'5a'.repeat(32)}`;
const CID2 = `0x${'5b'.repeat(32)}`;
const event = (cid: string, slug: string) => ({ title: slug, slug, endDate: '2031-01-01T00:00:00Z', markets: [{ question: `${slug}?`, conditionId: cid, orderPriceMinTickSize: 0.01, orderMinSize: '5' }] });
const A = `0x${'a1'.repeat(32)}` as const;
const B = `0x${'b2'.repeat(32)}` as const;
const C = `0x${'c3'.repeat(32)}` as const;

const apps: TradingApp[] = [];
after(async () => {
  for (const h of apps) await h.app.stop(1000).catch(() => undefined);
});

async function start(config: Record<string, unknown> = {}, dataDir?: string) {
  const h = await startTradingApp({ events: dataDir === undefined ? [event(CID, 'snap')] : [], wallets: dataDir === undefined ? [{ key: A, deposit: '1000' }, { key: B, deposit: '1000' }] : [], config, dataDir });
  apps.push(h);
  return h;
}

const ok = async (h: TradingApp, method: string, path: string, body?: unknown) => {
  const r = await h.admin(method, path, body);
  assert.equal(r.status, 200, `${method} ${path}: ${JSON.stringify(r.body)}`);
  return r.body;
};
const text = async (h: TradingApp, path: string) => {
  const r = await fetch(`${h.base}${path}`);
  return `${r.status} ${await r.text()}`;
};

/** Every read the test compares, as the bytes the service answers. */
async function reads(h: TradingApp, a: TestClient, b: TestClient, yes: string, no: string) {
  const out: Record<string, string> = {};
  for (const t of [yes, no]) out[`book ${t}`] = await text(h, `/book?token_id=${t}`);
  for (const c of [a, b]) {
    out[`admin wallet ${c.address}`] = JSON.stringify((await h.admin('GET', `/admin/wallets/${c.address}`)).body);
    out[`positions ${c.address}`] = await text(h, `/positions?user=${c.address}`);
    out[`trades ${c.address}`] = await text(h, `/trades?user=${c.address}`);
    const l2 = await c.call('GET', '/data/trades');
    out[`data/trades ${c.address}`] = `${l2.status} ${JSON.stringify(l2.body)}`;
    const orders = await c.call('GET', '/data/orders');
    out[`data/orders ${c.address}`] = `${orders.status} ${JSON.stringify(orders.body)}`;
  }
  out['state hash'] = JSON.stringify((await h.admin('GET', '/admin/state-hash')).body);
  out.clock = JSON.stringify((await h.admin('GET', '/admin/clock')).body);
  out.markets = await text(h, '/markets');
  out.market2 = await text(h, `/markets/${CID2}`);
  return out;
}

test('a revert puts back every read byte for byte, closes sockets with 1012, and trading goes on from the snapshot', { timeout: 120_000 }, async () => {
  const h = await start();
  const [a, b] = h.clients as [TestClient, TestClient];
  const [yes, no] = h.tokens(CID);
  await ok(h, 'PUT', '/admin/clock', { frozen: true });
  // A resting bid and ask, and one trade.
  assert.equal((await a.place({ tokenId: yes, side: 'BUY', makerAmount: units(0.4 * 20), takerAmount: units(20) })).body.status, 'live');
  assert.equal((await b.place({ tokenId: no, side: 'BUY', makerAmount: units(0.5 * 10), takerAmount: units(10) })).body.status, 'live');
  assert.equal((await b.place({ tokenId: no, side: 'BUY', makerAmount: units(0.6 * 10), takerAmount: units(10) })).body.status, 'matched');
  const before = await reads(h, a, b, yes, no);

  const snap = await ok(h, 'POST', '/admin/snapshots', { name: 'base' });
  assert.equal(snap.name, 'base');
  assert.equal(snap.seq, h.app.ctx.engine.committedSeq);
  assert.equal(snap.stateHash, JSON.parse(before['state hash']!).stateHash, 'the snapshot stands at the state the reads showed');
  assert.ok(snap.bytes > 0);
  assert.deepEqual((await ok(h, 'GET', '/admin/snapshots')).snapshots.map((s: any) => [s.name, s.seq]), [['base', snap.seq]]);

  // After the snapshot: a new API key, a new wallet's key, more trading, a new market, time moves.
  const keyBefore = a.creds!;
  const c = new TestClient(h.base, C, a.info);
  await ok(h, 'POST', `/admin/wallets/${c.address}/deposit`, { amount: '500' });
  const keyAfter = await c.createKey();
  assert.equal((await c.call('GET', '/data/orders')).status, 200);
  assert.equal((await c.place({ tokenId: yes, side: 'SELL', makerAmount: units(10), takerAmount: units(0.4 * 10), })).status, 400, 'c holds no tokens');
  assert.equal((await a.place({ tokenId: yes, side: 'BUY', makerAmount: units(0.45 * 10), takerAmount: units(10) })).body.status, 'live');
  assert.equal((await b.place({ tokenId: yes, side: 'SELL', makerAmount: units(5), takerAmount: units(0.45 * 5) })).status, 400, 'b holds no yes tokens');
  await ok(h, 'POST', '/admin/events', [event(CID2, 'later')]);
  await ok(h, 'POST', '/admin/clock/advance', { seconds: 3600 });
  const moved = await reads(h, a, b, yes, no);
  assert.notEqual(moved[`book ${yes}`], before[`book ${yes}`]);
  assert.notEqual(moved.market2, before.market2);
  assert.notEqual(moved.clock, before.clock);

  const market = await StreamClient.connect(`ws://127.0.0.1:${h.app.port}/ws/market`, { pingMs: 0 });
  market.subscribeMarket([yes]);
  await market.next((e) => e.event_type === 'book');

  const generation = h.app.ctx;
  const reverted = await ok(h, 'POST', '/admin/snapshots/base/revert');
  assert.notEqual(h.app.ctx, generation, "the app's members read the generation running now");
  assert.equal(reverted.snapshot.name, 'base');
  assert.equal(reverted.snapshot.stateHash, snap.stateHash);
  assert.equal(reverted.from.stateHash, JSON.parse(moved['state hash']!).stateHash);
  assert.deepEqual(await market.closed, { code: 1012, reason: 'service restart' });

  const after = await reads(h, a, b, yes, no);
  for (const k of Object.keys(before)) assert.equal(after[k], before[k], `${k} is back as it was`);

  // API keys: the one made after the snapshot no longer exists; the one made before works.
  assert.equal((await c.call('GET', '/data/orders', undefined, keyAfter)).status, 401);
  assert.equal((await a.call('GET', '/data/orders', undefined, keyBefore)).status, 200);

  // A reconnecting client's first book is the snapshot's.
  const again = await StreamClient.connect(`ws://127.0.0.1:${h.app.port}/ws/market`, { pingMs: 0 });
  again.subscribeMarket([yes]);
  const book = (await again.next((e) => e.event_type === 'book')) as any;
  const rest = JSON.parse(before[`book ${yes}`]!.slice(4));
  assert.deepEqual([book.bids, book.asks, book.hash], [rest.bids, rest.asks, rest.hash]);

  // Trading goes on: what is left of a's resting bid at 0.40 (10, from before the snapshot) is taken.
  await ok(h, 'POST', `/admin/wallets/${b.address}/tokens`, { tokenId: yes, amount: '10' });
  const taker = await b.place({ tokenId: yes, side: 'SELL', makerAmount: units(10), takerAmount: units(0.4 * 10) });
  assert.equal(taker.body.status, 'matched', JSON.stringify(taker.body));
  const bookAfterTrade = await new Promise<any>((resolve) => {
    const each = () => {
      const e = again.events.find((x: any) => x.event_type === 'price_change' || (x.event_type === 'book' && x !== book));
      if (e !== undefined) resolve(e);
      else setTimeout(each, 10);
    };
    each();
  });
  assert.ok(bookAfterTrade, 'the new generation streams to the reconnected socket');
  again.close();

  // A snapshot taken now, then the first again, then this one: each revert lands where its snapshot stood.
  const later = await ok(h, 'POST', '/admin/snapshots', { name: 'later' });
  assert.notEqual(later.stateHash, snap.stateHash);
  await ok(h, 'POST', '/admin/snapshots/base/revert');
  const twice = await reads(h, a, b, yes, no);
  for (const k of Object.keys(before)) assert.equal(twice[k], before[k], `${k} after the second revert`);
  assert.deepEqual((await ok(h, 'GET', '/admin/snapshots')).snapshots.map((s: any) => s.name), ['base', 'later'], 'a revert keeps the later snapshot');
  await ok(h, 'POST', '/admin/snapshots/later/revert');
  assert.equal((await ok(h, 'GET', '/admin/state-hash')).stateHash, later.stateHash);

  // The reverts are on record beside the snapshots.
  const log = readFileSync(join(h.app.ctx.config.dataDir, 'snapshots', 'reverts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(log.map((r) => r.snapshot), ['base', 'base', 'later']);
  // The second revert to base reused the proof the first made of its store; the one to later proved its own.
  assert.deepEqual(log.map((r) => r.proved), [true, false, true]);
  assert.equal(log[0].from.stateHash, reverted.from.stateHash);
});

test('requests that arrive during a revert are answered 503 with the reason, and the revert\'s answer comes once reads serve the snapshot', { timeout: 60_000 }, async () => {
  const h = await start();
  const [yes] = h.tokens(CID);
  const snap = await ok(h, 'POST', '/admin/snapshots', { name: 'quiet' });
  await h.clients[0]!.place({ tokenId: yes, side: 'BUY', makerAmount: units(0.3 * 10), takerAmount: units(10) });
  let reverting = true;
  const seen: { status: number; body: string; retryAfter: string | null }[] = [];
  const poll = (async () => {
    while (reverting) {
      const r = await fetch(`${h.base}/book?token_id=${yes}`);
      seen.push({ status: r.status, body: await r.text(), retryAfter: r.headers.get('retry-after') });
    }
  })();
  const r = await h.admin('POST', '/admin/snapshots/quiet/revert');
  reverting = false;
  await poll;
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const held = seen.filter((x) => x.status === 503);
  assert.ok(held.length > 0, `some request arrived during the revert (${seen.length} sent)`);
  for (const x of held) assert.deepEqual([JSON.parse(x.body).error, x.retryAfter], ['reverting to snapshot quiet: retry', '1']);
  assert.deepEqual([...new Set(seen.map((x) => x.status))].sort(), [200, 503]);
  // The first read after the answer is the snapshot's: no bid.
  assert.equal(JSON.parse((await text(h, `/book?token_id=${yes}`)).slice(4)).bids.length, 0);
  assert.equal((await ok(h, 'GET', '/admin/state-hash')).stateHash, snap.stateHash);
});

test('a revert whose start fails starts again on the state before it, behind the same port, and says why (500)', { timeout: 60_000 }, async () => {
  // The start-up seam (AppOptions.afterStep) fails the second opening at its last step, once it is serving
  // behind the listener: what that opening registered for closing must not take the listener with it.
  let opened = 0;
  let failOnce = false;
  const app = await startApp(
    testConfig({ dataDir: tempDir('pm-snap-fail-'), http: { port: 0 }, adminToken: 't', demo: false, rateLimits: { enabled: false }, auth: { signatureThreads: 1, masterKey: 'cd'.repeat(32) } }),
    {
      log: silentLogger,
      afterStep: (step) => {
        if (step === 'store') opened++;
        if (step === 'listen' && failOnce && opened === 2) throw new Error('the start failed on purpose');
      },
    },
  );
  try {
    const base = `http://127.0.0.1:${app.port}`;
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${base}${path}`, { method, headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: r.status, body: (await r.json()) as any };
    };
    const snap = await call('POST', '/admin/snapshots', { name: 'before' });
    await call('POST', `/admin/wallets/0x${'1'.repeat(40)}/deposit`, { amount: '5' });
    const moved = (await call('GET', '/admin/state-hash')).body;
    assert.notEqual(moved.stateHash, snap.body.stateHash);
    failOnce = true;
    const r = await call('POST', '/admin/snapshots/before/revert');
    assert.equal(r.status, 500);
    assert.match(r.body.error, /revert to snapshot before failed: the start failed on purpose/);
    assert.deepEqual((await call('GET', '/admin/state-hash')).body, moved, 'the state before the revert serves again, on the same port');
    assert.equal(opened, 3);
    const again = await call('POST', '/admin/snapshots/before/revert');
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal((await call('GET', '/admin/state-hash')).body.stateHash, snap.body.stateHash);
  } finally {
    await app.stop(1000);
  }
});

test('refusals change nothing: unknown 404, bad name 400, a taken name and the bound 409, no admin token 401', async () => {
  const h = await start({ sandbox: { snapshots: { max: 2 } } });
  await ok(h, 'POST', '/admin/snapshots', { name: 'one' });
  const listed = await ok(h, 'GET', '/admin/snapshots');
  const hash = (await ok(h, 'GET', '/admin/state-hash')).stateHash;
  const refused = async (method: string, path: string, body: unknown, status: number, error: RegExp, token = true) => {
    const r = await fetch(`${h.base}${path}`, { method, headers: { ...(token ? { authorization: 'Bearer t' } : {}), 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const got = (await r.json()) as any;
    assert.equal(r.status, status, `${method} ${path}: ${JSON.stringify(got)}`);
    assert.match(JSON.stringify(got), error);
  };
  await refused('POST', '/admin/snapshots/nope/revert', undefined, 404, /snapshot nope not found/);
  await refused('DELETE', '/admin/snapshots/nope', undefined, 404, /snapshot nope not found/);
  await refused('POST', '/admin/snapshots/Bad.Name/revert', undefined, 400, /invalid|name/);
  await refused('POST', '/admin/snapshots', { name: '../x' }, 400, /invalid|name/);
  await refused('POST', '/admin/snapshots', { name: 'x'.repeat(65) }, 400, /invalid|name/);
  await refused('POST', '/admin/snapshots', { name: 'imported', state: '/nonexistent/state.pmsnap' }, 400, /state: ENOENT/);
  await refused('POST', '/admin/snapshots/one/export', { path: '/nonexistent/dir/out.pmsnap' }, 400, /path: ENOENT/);
  await refused('POST', '/admin/snapshots/one/export', { path: 'relative.pmsnap' }, 400, /invalid/);
  await refused('POST', '/admin/snapshots', { name: 'one' }, 409, /snapshot one already exists/);
  await refused('POST', '/admin/snapshots', { name: 'one', extra: 1 }, 400, /invalid/);
  await refused('POST', '/admin/snapshots', {}, 200, /snapshot-1/);
  await refused('POST', '/admin/snapshots', { name: 'three' }, 409, /at most 2 snapshots/);
  await refused('POST', '/admin/snapshots/one/revert', undefined, 401, /unauthorized/, false);
  await refused('POST', '/admin/snapshots', { name: 'four' }, 401, /unauthorized/, false);
  await refused('GET', '/admin/snapshots', undefined, 401, /unauthorized/, false);
  await refused('DELETE', '/admin/snapshots/one', undefined, 401, /unauthorized/, false);
  await refused('GET', '/admin/state-hash', undefined, 401, /unauthorized/, false);
  const now = await ok(h, 'GET', '/admin/snapshots');
  assert.deepEqual(now.snapshots.map((s: any) => s.name), [...listed.snapshots.map((s: any) => s.name), 'snapshot-1']);
  assert.equal((await ok(h, 'GET', '/admin/state-hash')).stateHash, hash);
  assert.deepEqual(readdirSync(join(h.app.ctx.config.dataDir, 'snapshots')).sort(), ['one', 'snapshot-1']);
  // Deleting makes room again, and a deleted snapshot is gone.
  assert.equal((await ok(h, 'DELETE', '/admin/snapshots/one')).name, 'one');
  await refused('POST', '/admin/snapshots/one/revert', undefined, 404, /snapshot one not found/);
  await ok(h, 'POST', '/admin/snapshots', { name: 'three' });
});

test('with the test controls off the snapshot routes are unknown', async () => {
  const h = await start({ sandbox: { testControls: 'off' } });
  for (const [method, path] of [['GET', '/admin/snapshots'], ['POST', '/admin/snapshots'], ['POST', '/admin/snapshots/x/revert'], ['DELETE', '/admin/snapshots/x'], ['GET', '/admin/state-hash']] as const) {
    const r = await h.admin(method, path, method === 'POST' ? {} : undefined);
    assert.equal(r.status, 404, `${method} ${path}`);
  }
  assert.equal(existsSync(join(h.app.ctx.config.dataDir, 'snapshots')), false);
});

test('a snapshot survives a restart of the process and can be reverted to after it', { timeout: 60_000 }, async () => {
  const dataDir = tempDir('pm-snap-restart-');
  const first = await startTradingApp({ events: [event(CID, 'snap')], wallets: [{ key: A, deposit: '1000' }], config: {}, dataDir });
  const [yes] = first.tokens(CID);
  const snap = await ok(first, 'POST', '/admin/snapshots', { name: 'kept' });
  assert.equal((await first.clients[0]!.place({ tokenId: yes, side: 'BUY', makerAmount: units(0.3 * 10), takerAmount: units(10) })).body.status, 'live');
  await first.app.stop(1000);
  const second = await start({}, dataDir);
  assert.deepEqual((await ok(second, 'GET', '/admin/snapshots')).snapshots.map((s: any) => [s.name, s.seq, s.stateHash]), [['kept', snap.seq, snap.stateHash]]);
  assert.notEqual((await ok(second, 'GET', '/admin/state-hash')).stateHash, snap.stateHash);
  await ok(second, 'POST', '/admin/snapshots/kept/revert');
  assert.equal((await ok(second, 'GET', '/admin/state-hash')).stateHash, snap.stateHash);
  assert.equal(JSON.parse((await text(second, `/book?token_id=${yes}`)).slice(4)).bids.length, 0);
});

test('kill -9 while a snapshot is taken leaves no half snapshot listed; the next start cleans up and the others still revert', { timeout: 180_000 }, async () => {
  const dataDir = tempDir('pm-snap-kill-');
  const dir = join(dataDir, 'snapshots');
  let svc = await startService({ dataDir, adminToken: 't', env: { RATE_LIMITS: 'off', DEMO: 'static' } });
  try {
    const post = (base: string, path: string, body: unknown = {}) => fetch(`${base}${path}`, { method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const whole = await (await post(svc.url, '/admin/snapshots', { name: 'whole' })).json() as any;
    assert.equal(whole.name, 'whole');
    // Kill the process once the half-made directory exists; a snapshot that finished first is another try.
    let killed = false;
    for (let attempt = 0; attempt < 5 && !killed; attempt++) {
      const name = `cut-${attempt}`;
      void post(svc.url, '/admin/snapshots', { name }).catch(() => undefined);
      for (const end = Date.now() + 30_000; Date.now() < end; ) {
        const names = existsSync(dir) ? readdirSync(dir) : [];
        if (names.includes(name)) break;
        if (names.some((n) => n.startsWith(`.tmp-${name}-`))) {
          await svc.stop('SIGKILL');
          killed = true;
          break;
        }
        await new Promise((r) => setImmediate(r));
      }
    }
    assert.ok(killed, 'the process was killed while a snapshot was being taken');
    assert.ok(readdirSync(dir).some((n) => n.startsWith('.tmp-')), 'it left a half-made directory');
    svc = await startService({ dataDir, adminToken: 't', env: { RATE_LIMITS: 'off', DEMO: 'static' } });
    const listed = await (await fetch(`${svc.url}/admin/snapshots`, { headers: { authorization: 'Bearer t' } })).json() as any;
    const names = listed.snapshots.map((s: any) => s.name);
    assert.equal(names[0], 'whole');
    assert.ok(names.every((n: string) => n === 'whole' || /^cut-\d$/.test(n)), JSON.stringify(names));
    assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith('.tmp-')), [], 'the next start removed it');
    for (const n of names) assert.equal((await post(svc.url, `/admin/snapshots/${n}/revert`)).status, 200, n);
    const hash = await (await fetch(`${svc.url}/admin/state-hash`, { headers: { authorization: 'Bearer t' } })).json() as any;
    assert.equal(hash.stateHash, listed.snapshots.at(-1).stateHash);
  } finally {
    await svc.stop('SIGKILL');
  }
});
