/**
 * What a caller can make the service read, hash and diagnose, over real HTTP with the default caps (issue 39,
 * finding 2 and the disclosure of finding 5):
 *   - body bytes are charged up front, per key and per address: once a free key's 1 MiB bodies have spent
 *     its bytes (4 MiB a minute here, so that a loaded machine cannot stretch the window), the next is
 *     answered 429 on its headers alone (the body is never sent here);
 *   - a key whose requests keep failing their HMAC behind the right passphrase is refused on its headers,
 *     before its body, for a while;
 *   - to a caller that does not prove the secret, a wrong passphrase and a wrong HMAC read the same in
 *     X-Refusal-Reason; the key's wallet reads which on GET /refusals.
 * The answers that must come before the body are read from a raw socket that sends the head and nothing
 * else: an answer that waited for the body would never come.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, test } from 'node:test';
import { startApp, type App } from '../../src/node/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { rawHttp, tempDir } from '../fixtures/edge.ts';
import { TestClient, type Creds } from '../fixtures/trading-client.ts';

/** A key's body bytes: four 1 MiB bodies a minute. */
const KEY_BYTES = { limit: 4 * 2 ** 20, windowSeconds: 60 };

let app: App;
let base: string;
let info: Awaited<ReturnType<typeof TestClient.info>>;

before(async () => {
  app = await startApp(
    testConfig({ dataDir: tempDir(), http: { port: 0 }, demo: 'off', auth: { signatureThreads: 1 }, rateLimits: { bodyBytes: { perKey: KEY_BYTES, perAddress: { limit: 64 * 2 ** 20, windowSeconds: 60 } } } }),
    { log: silentLogger },
  );
  base = `http://127.0.0.1:${app.port}`;
  info = await TestClient.info(base);
});
after(() => app.stop(1000));

/** The head of a signed request whose body is `bodyBytes` long, signed over `signedBody` with `key` (default: the secret). */
function head(c: TestClient, creds: Creds, method: string, path: string, bodyBytes: number, o: { signedBody?: string; key?: Buffer; passphrase?: string } = {}): string {
  const h = c.l2Headers(method, path, o.signedBody ?? '', creds);
  if (o.key !== undefined) h.SVC_SIGNATURE = createHmac('sha256', o.key).update(h.SVC_TIMESTAMP + method + path + (o.signedBody ?? '')).digest('hex');
  if (o.passphrase !== undefined) h.SVC_PASSPHRASE = o.passphrase;
  const lines = Object.entries(h).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return `${method} ${path} HTTP/1.1\r\nHost: x\r\n${lines}Content-Length: ${bodyBytes}\r\n\r\n`;
}

test("a free key's 1 MiB bodies spend its bytes; then it is answered 429 on its headers, its body never read", { timeout: 60_000 }, async () => {
  const c = new TestClient(base, `0x${'d1'.repeat(32)}`, info);
  const creds = await c.createKey();
  const body = JSON.stringify({ orderIDs: ['0x' + 'ab'.repeat(32)], pad: 'x'.repeat(2 ** 20 - 100) });
  const statuses: number[] = [];
  for (let i = 0; i < KEY_BYTES.limit / 2 ** 20; i++) {
    const r = await fetch(`${base}/orders`, { method: 'DELETE', headers: c.l2Headers('DELETE', '/orders', body, creds), body });
    await r.arrayBuffer();
    statuses.push(r.status);
  }
  assert.ok(statuses.every((s) => s !== 429), `within the key's bytes: ${statuses.join(',')}`);
  // The head alone: answered at once.
  const r = await rawHttp(app.port, head(c, creds, 'DELETE', '/orders', body.length, { signedBody: body }), { untilFinal: true, timeoutMs: 5000 });
  const answer = r.responses[0]!;
  assert.equal(answer.status, 429);
  assert.equal(answer.headers['ratelimit-limit'], String(KEY_BYTES.limit));
  assert.ok(Number(answer.headers['retry-after']) >= 1);
  assert.deepEqual(JSON.parse(answer.body.toString()), { error: 'Too Many Requests' });
});

test('a key that keeps failing its HMAC behind the right passphrase is refused on its headers, before its body', { timeout: 60_000 }, async () => {
  const c = new TestClient(base, `0x${'d2'.repeat(32)}`, info);
  const creds = await c.createKey();
  const wrong = Buffer.alloc(32, 9);
  const body = JSON.stringify({ orderIDs: ['0x' + 'cd'.repeat(32)] });
  for (let i = 0; i < 5; i++) {
    const h = c.l2Headers('DELETE', '/orders', body, creds);
    h.SVC_SIGNATURE = createHmac('sha256', wrong).update(h.SVC_TIMESTAMP + 'DELETE/orders' + body).digest('hex');
    assert.equal((await fetch(`${base}/orders`, { method: 'DELETE', headers: h, body })).status, 401);
  }
  // Now even a good signature is refused on the head of a large body, the body (never sent) unread.
  const r = await rawHttp(app.port, head(c, creds, 'DELETE', '/orders', 500_000, { signedBody: body }), { untilFinal: true, timeoutMs: 5000 });
  assert.equal(r.responses[0]?.status, 401);
  assert.match(r.responses[0]!.headers['x-refusal-reason']!, /is refused on its headers, before its body, for \d+ s more: 5 of its requests failed their credential checks/);
  // A small body is still read and judged; another key of the same wallet is not benched.
  assert.equal((await c.call('DELETE', '/orders', ['0x' + 'cd'.repeat(32)], creds)).status, 200);
  const other = await c.createKey(1);
  assert.equal((await c.call('DELETE', '/orders', ['0x' + 'cd'.repeat(32)], other)).status, 200);
});

test("without the secret, a wrong passphrase and a wrong HMAC read the same; the key's wallet reads which on GET /refusals", async () => {
  const c = new TestClient(base, `0x${'d3'.repeat(32)}`, info);
  const creds = await c.createKey();
  const wrong = Buffer.alloc(32, 4);
  const reasons: string[] = [];
  for (const passphrase of [creds.passphrase, 'f'.repeat(64)]) {
    const h = c.l2Headers('GET', '/data/orders', undefined, creds);
    h.SVC_SIGNATURE = createHmac('sha256', wrong).update(h.SVC_TIMESTAMP + 'GET/data/orders').digest('hex');
    h.SVC_PASSPHRASE = passphrase;
    const r = await fetch(`${base}/data/orders`, { headers: h });
    assert.equal(r.status, 401);
    reasons.push(r.headers.get('x-refusal-reason')!);
  }
  // Each request signs its own second: under load the two may fall on either side of one.
  const same = (r: string) => r.replace(/timestamp \d+ \+/, 'timestamp T +');
  assert.equal(same(reasons[0]!), same(reasons[1]!));
  assert.match(reasons[0]!, /^L2 credentials of API key .* do not check: .*which one is wrong is said only to a request whose signature proves it holds the key's secret; the key's wallet reads it on GET \/refusals\)/);
  assert.ok(!reasons[0]!.includes(c.address.slice(2)), "the key's wallet is not named");
  const list = (await c.call('GET', '/refusals')).body as { data: { class: string; reason: string }[] };
  assert.deepEqual(list.data.slice(0, 2).map((e) => e.class), ['auth_passphrase', 'auth_hmac']);
  assert.match(list.data[0]!.reason, /^POLY_PASSPHRASE is not the passphrase of API key/);
});
