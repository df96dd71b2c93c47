/**
 * Refusals that explain themselves, over real HTTP (issue 34): each credential mistake made on purpose (L2
 * headers, key kinds and states, the HMAC's common mistakes, L1 signed for chain 137) answers the contract's
 * body unchanged with the reason in `X-Refusal-Reason`; the platform's official client sees exactly the same
 * errors with reasons on and off; the wallet's last refusals on `GET /refusals` (its own only), `refusals_total` on
 * /metrics, nothing more under `auth.explainRefusals: false`, and an order signed for the platform's mainnet
 * refused with the reason under the default profile and accepted under config/platform-domains.json; under
 * the clob-v2 profile the official client's error text carries the reason after the platform's (status
 * unchanged), and a login that fails is read without a key (GET /refusals?address) from the refused client
 * address only. Every
 * reason these requests draw is checked for the credentials' secret and passphrase and the HMAC the server
 * expected. The diagnoses themselves, mistake by mistake: test/edge/refusals/.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { ApiError, ClobClient } from '@polymarket/clob-client-v2';
import { createWalletClient, custom } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { App } from '../../src/node/app.ts';
import { sampleOf } from '../../tools/metrics-text.ts';
import { startTradingApp } from '../fixtures/trading-app.ts';
import { TestClient, units, type Creds, type ExchangeInfo } from '../fixtures/trading-client.ts';

const CID = `0x${'e5'.repeat(32)}`;
const KEYS = { alice: `0x${'a1'.repeat(32)}`, bob: `0x${'b2'.repeat(32)}` } as const;
const UNAUTHORIZED = { error: 'Unauthorized/Invalid api key' };
const PLATFORM = JSON.parse(readFileSync('config/platform-domains.json', 'utf8')) as { auth: Record<string, unknown> & { chainId: number } };

interface Service {
  app: App;
  base: string;
  alice: TestClient;
  bob: TestClient;
  yes: string;
}

async function service(auth: Record<string, unknown> = {}, more: { profile?: 'clob-v2'; trustedProxies?: string[] } = {}): Promise<Service> {
  const t = await startTradingApp({
    ...more,
    auth,
    events: [{ title: 'Refusals', slug: 'refusals', endDate: '2027-06-30T00:00:00Z', markets: [{ question: 'Explained?', conditionId: CID, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] }],
    wallets: [
      { key: KEYS.alice, deposit: '100' },
      { key: KEYS.bob, deposit: '100' },
    ],
  });
  const [alice, bob] = t.clients as [TestClient, TestClient];
  return { app: t.app, base: t.base, alice, bob, yes: t.tokens(CID)[0] };
}

/** A request signed with `headers` (L2 headers of the test client, possibly spoiled), as sent. */
async function send(s: Service, method: string, path: string, headers: Record<string, string>, body?: string) {
  const r = await fetch(`${s.base}${path}`, { method, headers, body });
  return { status: r.status, body: (await r.json()) as unknown, reason: r.headers.get('x-refusal-reason') };
}

/** L2 headers of `creds` with the HMAC computed over what the caller chooses (the mistake). */
function headersOver(c: TestClient, timestamp: string, method: string, path: string, body: string | undefined): Record<string, string> {
  const creds = c.creds!;
  const key = Buffer.from(creds.secret, 'base64');
  const sig = createHmac('sha256', key).update(timestamp + method + path + (body ?? '')).digest('hex');
  return { SVC_ADDRESS: c.account.address, SVC_API_KEY: creds.apiKey, SVC_PASSPHRASE: creds.passphrase, SVC_TIMESTAMP: timestamp, SVC_SIGNATURE: sig, 'content-type': 'application/json' };
}

const now = () => Math.floor(Date.now() / 1000);

/** Every reason a test saw, with the credentials in play: checked at the end for what must never be in one. */
const seen: Array<{ reason: string; creds: Creds[] }> = [];
function expected(c: TestClient, timestamp: string, method: string, path: string, body?: string): string[] {
  const d = createHmac('sha256', Buffer.from(c.creds!.secret, 'base64')).update(timestamp + method + path + (body ?? '')).digest();
  return [d.toString('hex'), d.toString('base64'), d.toString('base64url')];
}

describe('refusals explain themselves (the default)', () => {
  let s: Service;
  before(async () => {
    s = await service();
  });
  after(() => s.app.stop(0));

  test('a stale L2 timestamp: the contract\'s 401 body, the reason names the clock', async () => {
    const ts = String(now() - 45);
    const r = await send(s, 'GET', '/data/orders', headersOver(s.alice, ts, 'GET', '/data/orders', undefined));
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, UNAUTHORIZED);
    // 46 when the second turned between the header's making and the server's reading (a loaded machine).
    assert.match(r.reason ?? '', /timestamp .*4[56] s behind.*30 s/);
    seen.push({ reason: r.reason!, creds: [s.alice.creds!] });
  });

  test('an HMAC over another path: the reason names both paths, never the expected signature', async () => {
    const ts = String(now());
    const body = JSON.stringify([`0x${'00'.repeat(32)}`]);
    const r = await send(s, 'DELETE', '/orders', headersOver(s.alice, ts, 'DELETE', '/order', body), body);
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, UNAUTHORIZED);
    assert.match(r.reason ?? '', /\/order\b.*\/orders|\/orders.*\/order\b/);
    for (const sig of expected(s.alice, ts, 'DELETE', '/orders', body)) assert.ok(!r.reason!.includes(sig.slice(0, 16)));
    seen.push({ reason: r.reason!, creds: [s.alice.creds!] });
  });

  test("an order signed for the platform's mainnet: the contract's 400, the reason names the domain it was signed for", async () => {
    const platform = { ...s.alice.info, chainId: 137, orderDomain: { ...(PLATFORM.auth.orderDomain as ExchangeInfo['orderDomain']), chainId: 137 } };
    const wrong = new TestClient(s.base, KEYS.alice, platform);
    wrong.creds = s.alice.creds;
    const order = await wrong.signOrder({ tokenId: s.yes, side: 'BUY', makerAmount: units(0.4 * 5), takerAmount: units(5) });
    const body = JSON.stringify(order);
    const r = await send(s, 'POST', '/order', s.alice.l2Headers('POST', '/order', body), body);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { error: 'invalid order signature' });
    assert.match(r.reason ?? '', /chain 137/);
    assert.match(r.reason ?? '', /mainnet/);
    seen.push({ reason: r.reason!, creds: [s.alice.creds!] });
  });

  test('each credential mistake, made on purpose over HTTP, answers the contract\'s body with a reason that names it', async () => {
    const c = s.bob;
    const trading = c.creds!;
    const spare = await c.createKey(1);
    c.creds = trading;
    const readonly = (await c.call('POST', '/auth/readonly-api-key')).body as Creds;
    const revoked = await c.createKey(2);
    c.creds = trading;
    const del = await fetch(`${s.base}/auth/api-key`, { method: 'DELETE', headers: headersOver(new Proxy(c, { get: (t, k) => (k === 'creds' ? revoked : Reflect.get(t, k)) }), String(now()), 'DELETE', '/auth/api-key', undefined) });
    assert.equal(del.status, 200);
    const order = JSON.stringify(await c.signOrder({ tokenId: s.yes, side: 'BUY', makerAmount: units(1), takerAmount: units(5) }));
    const python = order.replace(/,"/g, ', "').replace(/":/g, '": ');
    type Mistake = { method?: string; path?: string; query?: string; body?: string; signedTs?: string; signedPath?: string; signedBody?: string; key?: Buffer; creds?: Creds; address?: string; omit?: string; passphrase?: string };
    const request = async (m: Mistake) => {
      const creds = m.creds ?? trading;
      const method = m.method ?? 'POST';
      const path = m.path ?? '/order';
      const body = m.body ?? (method === 'POST' ? order : undefined);
      const ts = m.signedTs ?? String(now());
      const key = m.key ?? Buffer.from(creds.secret, 'base64');
      const sig = createHmac('sha256', key).update(ts + method + (m.signedPath ?? path) + (m.signedBody ?? body ?? '')).digest('hex');
      const headers: Record<string, string> = { SVC_ADDRESS: m.address ?? c.account.address, SVC_API_KEY: creds.apiKey, SVC_PASSPHRASE: m.passphrase ?? creds.passphrase, SVC_TIMESTAMP: ts, SVC_SIGNATURE: sig, 'content-type': 'application/json' };
      if (m.omit !== undefined) delete headers[m.omit];
      const r = await send(s, method, path + (m.query ?? ''), headers, body);
      seen.push({ reason: r.reason ?? '', creds: [trading, spare, readonly, revoked] });
      return r;
    };
    const cases: Array<[string, Mistake, RegExp]> = [
      ['a header missing', { omit: 'SVC_PASSPHRASE' }, /^missing L2 header POLY_PASSPHRASE/],
      ['a timestamp in milliseconds', { signedTs: String(Date.now()) }, /in milliseconds; send unix seconds/],
      ['an unknown key', { creds: { ...trading, apiKey: '00000000-0000-4000-8000-000000000000' } }, /is not known to this server: API keys issued by the platform or by another server do not work here/],
      ['a revoked key', { creds: revoked }, new RegExp(`^API key ${revoked.apiKey} is revoked since`)],
      ["another wallet's address", { address: s.alice.account.address }, /is not this key's wallet/],
      ["another key's passphrase", { passphrase: spare.passphrase }, new RegExp(`is the passphrase of API key ${spare.apiKey}`)],
      ['a read-only key placing an order', { creds: readonly }, /is a read-only key: this route takes a trading key/],
      ['the query string signed', { method: 'GET', path: '/data/orders', query: '?market=' + CID, signedPath: `/data/orders?market=${CID}` }, /the query string is not signed/],
      ["the body as Python's json.dumps writes it", { signedBody: python }, /as Python's json.dumps writes it/],
      ["the secret's text as the key", { key: Buffer.from(trading.secret) }, /keyed with the secret's text bytes/],
      ["the wallet's other key's secret", { key: Buffer.from(spare.secret, 'base64') }, new RegExp(`keyed with the secret of API key ${spare.apiKey}`)],
    ];
    for (const [name, m, why] of cases) {
      const r = await request(m);
      assert.equal(r.status, 401, name);
      assert.deepEqual(r.body, UNAUTHORIZED, name);
      assert.match(r.reason ?? '', why, name);
    }

    // L1 signed for the platform's mainnet instead of this exchange's chain.
    const mainnet = new TestClient(s.base, KEYS.bob, { ...c.info, authDomain: { ...c.info.authDomain, chainId: 137 } });
    const l1 = await fetch(`${s.base}/auth/api-key`, { method: 'POST', headers: await mainnet.l1Headers(7) });
    assert.equal(l1.status, 401);
    assert.deepEqual(await l1.json(), { error: 'Invalid L1 Request headers' });
    assert.match(l1.headers.get('x-refusal-reason') ?? '', /chain 137/);
  });

  test("POST /order with the platform's older V1 order struct: the schema's 400, the reason names the struct", async () => {
    const v2 = (await s.alice.signOrder({ tokenId: s.yes, side: 'BUY', makerAmount: units(1), takerAmount: units(5) })) as { order: Record<string, unknown> };
    const { timestamp: _t, metadata: _m, builder: _b, ...rest } = v2.order;
    const body = JSON.stringify({ ...v2, order: { ...rest, taker: `0x${'0'.repeat(40)}`, expiration: '0', nonce: '0', feeRateBps: '0' } });
    const r = await send(s, 'POST', '/order', s.alice.l2Headers('POST', '/order', body), body);
    assert.equal(r.status, 400);
    assert.match((r.body as { error: string }).error, /^(missing|invalid) order\./);
    assert.match(r.reason ?? '', /older V1 order struct/);
    seen.push({ reason: r.reason!, creds: [s.alice.creds!] });
  });

  test('GET /refusals lists the caller\'s own refusals, newest first, header names but no values; another wallet sees none of them', async () => {
    const mine = await s.alice.call('GET', '/refusals');
    assert.equal(mine.status, 200);
    const data = mine.body.data as Array<{ time: string; method: string; path: string; headers: string[]; class: string; reason: string }>;
    assert.deepEqual(
      data.map((e) => [e.method, e.path, e.class]),
      [
        ['POST', '/order', 'order_signature'],
        ['POST', '/order', 'order_signature'],
        ['DELETE', '/orders', 'auth_hmac'],
        ['GET', '/data/orders', 'auth_timestamp'],
      ],
    );
    assert.equal(mine.body.count, 4);
    assert.equal(mine.body.limit, 100);
    assert.ok(data[3]!.headers.includes('svc_api_key') && data[3]!.headers.includes('svc_signature'));
    const text = JSON.stringify(mine.body);
    for (const secret of [s.alice.creds!.secret, s.alice.creds!.passphrase]) assert.ok(!text.includes(secret));
    assert.ok(Date.parse(data[0]!.time) >= Date.parse(data[3]!.time));

    // Bob's list holds his own twelve mistakes of the test before (one made with alice's address header), none of alice's.
    const theirs = await s.bob.call('GET', '/refusals');
    assert.equal(theirs.status, 200);
    assert.equal(theirs.body.count, 12);
    assert.deepEqual([theirs.body.data[0].path, theirs.body.data[0].class], ['/auth/api-key', 'auth_l1_signature']);
    assert.ok(!(theirs.body.data as Array<{ class: string }>).some((e) => e.class === 'order_signature'));
  });

  test('/metrics counts refusals by class', async () => {
    const text = await (await fetch(`${s.base}/metrics`)).text();
    for (const cls of ['auth_timestamp', 'auth_hmac', 'order_signature']) assert.ok((sampleOf(text, 'refusals_total', { class: cls }) ?? 0) >= 1, cls);
  });

  test('an accepted request carries no reason', async () => {
    const order = await s.alice.signOrder({ tokenId: s.yes, side: 'BUY', makerAmount: units(0.4 * 5), takerAmount: units(5) });
    const body = JSON.stringify(order);
    const r = await send(s, 'POST', '/order', s.alice.l2Headers('POST', '/order', body), body);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.reason, null);
  });

  test('no reason holds a secret, a passphrase or the HMAC the server expected', () => {
    assert.ok(seen.length >= 3);
    for (const { reason, creds } of seen) {
      for (const c of creds) {
        const key = Buffer.from(c.secret, 'base64');
        for (const bad of [c.secret, c.passphrase, key.toString('hex'), key.toString('base64'), key.toString('base64url')]) assert.ok(!reason.includes(bad), reason);
      }
    }
  });

  test('a signed route reads its own headers by name and only lists the others: a made-up name sent first is logged after them', async () => {
    // Issue 39: a made-up name made an object's key is internalized by V8 (old space, freed only by a full
    // collection); a signed route keeps as keys only what it reads (edge/server.ts keptHeaders) and hands the
    // rest on as names, which the refusal log lists after the names it read.
    const made = `x-made-up-${'q'.repeat(200)}`;
    const r = await send(s, 'GET', '/data/orders', { [made]: '1', ...headersOver(s.alice, String(now() - 45), 'GET', '/data/orders', undefined) });
    assert.equal(r.status, 401);
    const latest = (await s.alice.call('GET', '/refusals')).body.data[0] as { headers: string[] };
    // Listed cut to its bound (edge/refusals/log.ts MAX_HEADER_NAME_CHARS).
    const at = latest.headers.findIndex((h) => h.startsWith('x-made-up-'));
    assert.ok(at > 0, `the made-up name is listed: ${JSON.stringify(latest.headers)}`);
    assert.ok(latest.headers.slice(0, at).some((h) => h.endsWith('_api_key')), 'after the credential names the route read');
  });
});

describe('auth.explainRefusals: false', () => {
  let s: Service;
  before(async () => {
    s = await service({ explainRefusals: false });
  });
  after(() => s.app.stop(0));

  test('the same mistakes get the same bodies and no reason; GET /refusals is empty', async () => {
    const r = await send(s, 'GET', '/data/orders', headersOver(s.alice, String(now() - 45), 'GET', '/data/orders', undefined));
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, UNAUTHORIZED);
    assert.equal(r.reason, null);
    const platform = { ...s.alice.info, chainId: 137, orderDomain: { ...(PLATFORM.auth.orderDomain as ExchangeInfo['orderDomain']), chainId: 137 } };
    const wrong = new TestClient(s.base, KEYS.alice, platform);
    wrong.creds = s.alice.creds;
    const body = JSON.stringify(await wrong.signOrder({ tokenId: s.yes, side: 'BUY', makerAmount: units(2), takerAmount: units(5) }));
    const o = await send(s, 'POST', '/order', s.alice.l2Headers('POST', '/order', body), body);
    assert.deepEqual([o.status, o.body, o.reason], [400, { error: 'invalid order signature' }, null]);
    const list = await s.alice.call('GET', '/refusals');
    assert.deepEqual(list.body, { data: [], count: 0, limit: 100 });
  });
});

describe('the platform-domain profile (config/platform-domains.json)', () => {
  let s: Service;
  before(async () => {
    s = await service(PLATFORM.auth);
  });
  after(() => s.app.stop(0));

  test("publishes the platform's mainnet domains, and an order signed for them (as SDKs that hard-code chain 137 sign) is accepted", async () => {
    const info = s.alice.info;
    assert.equal(info.chainId, 137);
    assert.equal(info.orderDomain.verifyingContract.toLowerCase(), (PLATFORM.auth.orderDomain as { verifyingContract: string }).verifyingContract.toLowerCase());
    const r = await s.alice.call('POST', '/order', await s.alice.signOrder({ tokenId: s.yes, side: 'BUY', makerAmount: units(0.4 * 5), takerAmount: units(5) }));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.success, true);
  });
});

describe('the clob-v2 profile: reasons where the official client shows them, and a failing login read without a key', () => {
  let s: Service;
  const account = privateKeyToAccount(KEYS.alice);
  const wallet = createWalletClient({ account, transport: custom({ request: async () => assert.fail('the client must sign locally') }) });
  before(async () => {
    // The loopback peer is a trusted proxy here, so X-Forwarded-For names other client addresses.
    s = await service({}, { profile: 'clob-v2', trustedProxies: ['127.0.0.1'] });
  });
  after(() => s.app.stop(0));

  test("the client's error text is the platform's, then the reason; the status is the platform's", async () => {
    const c = s.alice.creds!;
    const client = new ClobClient({ host: s.base, chain: 80002, signer: wallet as never, creds: { key: c.apiKey, secret: c.secret, passphrase: 'f'.repeat(64) }, throwOnError: true });
    const e = await client.getOpenOrders().then(() => assert.fail('refused'), (x: unknown) => x);
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.status, 401);
    assert.match(e.message, new RegExp(`^Unauthorized/Invalid api key \\(reason: POLY_PASSPHRASE is not the passphrase of API key ${c.apiKey}`));

    // An order refused by the engine: a SELL of tokens the wallet does not hold, one and in a batch.
    const good = new ClobClient({ host: s.base, chain: 80002, signer: wallet as never, creds: { key: c.apiKey, secret: c.secret, passphrase: c.passphrase }, throwOnError: true });
    const sell = await good.createOrder({ tokenID: s.yes, price: 0.5, size: 5, side: 'SELL' as never }, { tickSize: '0.01', negRisk: false });
    const refused = await good.postOrder(sell).then(() => assert.fail('refused'), (x: unknown) => x);
    assert.ok(refused instanceof ApiError);
    assert.equal(refused.status, 400);
    assert.match(refused.message, /^not enough balance \/ allowance \(reason: a SELL reserves the tokens it offers: 5 \(makerAmount\) of token \d+, and wallet 0x[0-9a-f]{40} has 0 available/);
    const batch = (await good.postOrders([{ order: await good.createOrder({ tokenID: s.yes, price: 0.5, size: 6, side: 'SELL' as never }, { tickSize: '0.01', negRisk: false }), orderType: 'GTC' as never }])) as unknown as Array<{ success: boolean; errorMsg: string }>;
    assert.equal(batch[0]!.success, false);
    assert.match(batch[0]!.errorMsg, /^not enough balance \/ allowance \(reason: a SELL reserves the tokens it offers: 6 \(makerAmount\)/);
  });

  test('a login signed for the mainnet: the reason names the profile that takes it; GET /refusals?address lists it for the refused client address only', async () => {
    const mainnet = new ClobClient({ host: s.base, chain: 137, signer: wallet as never, throwOnError: true });
    const e = await mainnet.createApiKey(7).then(() => assert.fail('refused'), (x: unknown) => x);
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.status, 401);
    assert.match(e.message, /^Invalid L1 Request headers \(reason: L1 signature recovers to 0x[0-9a-f]{40} under this exchange's ClobAuth domain \(chain 80002\); it recovers to the address under the platform's mainnet \(Polygon, chain 137\): sign ClobAuth for chain 80002 \(GET \/exchange-info\), or start this exchange with PROFILE=platform, which takes it\)$/);

    // A wallet with no key at all, refused from 10.1.1.1 (its bot's address) and from 10.2.2.2.
    const fresh = privateKeyToAccount(`0x${'c3'.repeat(32)}`);
    const login = async (from: string) => {
      const client = new TestClient(s.base, `0x${'c3'.repeat(32)}`, { ...s.alice.info, authDomain: { ...s.alice.info.authDomain, chainId: 137 } });
      const r = await fetch(`${s.base}/auth/api-key`, { method: 'POST', headers: { ...(await client.l1Headers(1)), 'x-forwarded-for': from } });
      assert.equal(r.status, 401);
    };
    await login('10.1.1.1');
    await login('10.2.2.2');
    const read = async (from: string, address = fresh.address) => {
      const r = await fetch(`${s.base}/refusals?address=${address}`, { headers: { 'x-forwarded-for': from } });
      assert.equal(r.status, 200);
      return ((await r.json()) as { data: Array<{ path: string; class: string; reason: string }> }).data;
    };
    const mine = await read('10.1.1.1');
    assert.deepEqual(mine.map((x) => [x.path, x.class]), [['/auth/api-key', 'auth_l1_signature']], 'its own refusal only, though two were made');
    assert.match(mine[0]!.reason, /PROFILE=platform/);
    assert.deepEqual(await read('10.3.3.3'), [], 'nothing for a client address that was not refused');
    assert.deepEqual(await read('10.1.1.1', account.address), [], "not another wallet's refusals either");
    // The official client's own failed login (from the loopback address) is there for the loopback address.
    assert.equal((await read('127.0.0.1', account.address)).filter((x) => x.path === '/auth/api-key').length, 1);
    // Signed, the wallet reads all of its own.
    assert.ok((await s.alice.call('GET', '/refusals')).body.data.length >= 2);
  });
});

test("the platform's official client, unchanged, sees exactly the refusals it saw before: the same error and status with reasons on and off", async () => {
  const [on, off] = await Promise.all([service(), service({ explainRefusals: false })]);
  try {
    const account = privateKeyToAccount(KEYS.alice);
    const wallet = createWalletClient({ account, transport: custom({ request: async () => assert.fail('the client must sign locally') }) });
    const seenBy = async (s: Service, creds: { key: string; secret: string; passphrase: string }) => {
      const client = new ClobClient({ host: s.base, chain: 137, signer: wallet as never, creds, throwOnError: true });
      try {
        await client.getOpenOrders();
      } catch (e) {
        assert.ok(e instanceof ApiError, String(e));
        return { message: e.message, status: e.status };
      }
      return assert.fail('refused');
    };
    for (const mistake of ['passphrase', 'secret'] as const) {
      const answers = [];
      for (const s of [on, off]) {
        const c = s.alice.creds!;
        const creds = { key: c.apiKey, secret: c.secret, passphrase: c.passphrase, [mistake]: mistake === 'secret' ? Buffer.alloc(32, 3).toString('base64url') : 'f'.repeat(64) };
        answers.push(await seenBy(s, creds));
      }
      assert.deepEqual(answers[0], answers[1], mistake);
      assert.deepEqual(answers[0], { message: 'Unauthorized/Invalid api key', status: 401 }, mistake);
    }
  } finally {
    await Promise.all([on.app.stop(0), off.app.stop(0)]);
  }
});
