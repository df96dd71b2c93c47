/**
 * Authentication through real HTTP on loopback (DESIGN section 5): API-key create / derive / list /
 * revoke with L1 EIP-712 headers signed by viem, every L1 and L2 failure mode, the platform client's HMAC
 * vectors, the master key's life cycle, and the official V2 client (@polymarket/clob-client-v2) driving
 * the key routes against the compatibility profile. Test clients build their headers with viem and
 * node:crypto, independently of src/edge/auth/auth.ts.
 *
 * Header spellings: requests over HTTP carry the spec's names as clients send them (`SVC_API_KEY`, the
 * platform's `POLY_API_KEY`, any case), and the hyphenated aliases (`SVC-API-KEY`) as an extra; every
 * case is also run through the edge's Authenticator directly with the names lowercased as the edge hands
 * them over.
 *
 * Before the body (issue 31): everything but the HMAC is decided on the headers alone (`l2Head`,
 * `builderHead`), and over HTTP a signed route refuses such a request before its body is sent, while a
 * request whose headers pass waits for its body and its HMAC.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { ClobClient } from '@polymarket/clob-client-v2';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startApp, type App } from '../../../src/node/app.ts';
import { HEAD_DECIDES_ABOVE } from '../../../src/edge/pipeline/pipeline.ts';
import { buildRoutes } from '../../../src/edge/routes.ts';
import { ApiKeyService } from '../../../src/edge/auth/api-keys.ts';
import { MASTER_KEY_FILE, decodeSecret, decodeSignature, deriveCredentials, encodeSignature, l2Digest, loadMasterKey, type Credentials } from '../../../src/edge/auth/credentials.ts';
import { openStore } from '../../../src/journal/env.ts';
import { ManualClock, nowSeconds } from '../../../src/runtime/clock.ts';
import { testConfig } from '../../../src/runtime/config.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { rawHttp, tempDir } from '../../fixtures/edge.ts';

const UNAUTHORIZED = '{"error":"Unauthorized/Invalid api key"}';
const L1_INVALID = '{"error":"Invalid L1 Request headers"}';
const SKEW = 30;

const alice = privateKeyToAccount('0x' + 'a1'.repeat(32) as `0x${string}`);
const bob = privateKeyToAccount('0x' + 'b2'.repeat(32) as `0x${string}`);
/** A wallet of the before-the-body tests only, so their keys do not count against another test's cap. */
const carol = privateKeyToAccount('0x' + 'c3'.repeat(32) as `0x${string}`);

const clock = new ManualClock(Date.UTC(2026, 0, 1));
const now = () => nowSeconds(clock);
let dataDir: string;
let app: App;

function config(dir: string, extra: Record<string, unknown> = {}) {
  return testConfig({
    dataDir: dir,
    demo: false,
    http: { port: 0 },
    rateLimits: { enabled: false },
    ...extra,
    auth: { signatureThreads: 1, ...((extra.auth as object | undefined) ?? {}) },
  });
}

before(async () => {
  dataDir = tempDir();
  app = await startApp(config(dataDir), { log: silentLogger, clock });
});
after(() => app.stop(1000));

// ---- HTTP client that keeps header case as given ---------------------------------------------------

interface Res {
  status: number;
  text: string;
  json: unknown;
}

function call(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string, timeoutMs = 5000): Promise<Res> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = { ...headers };
    if (body !== undefined) h['Content-Length'] = String(Buffer.byteLength(body));
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: h, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, text, json });
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string, timeoutMs?: number) =>
  call(app.port, method, path, headers, body, timeoutMs);

// ---- header spellings -------------------------------------------------------------------------------

/** The spec's names (`SVC_`), the platform's (`POLY_`), other cases, and the hyphenated aliases. */
type Prefix = 'SVC_' | 'POLY_' | 'svc_' | 'sVc_' | 'Poly_' | 'SVC-' | 'POLY-' | 'svc-';

const name = (p: Prefix, field: string) => p + (p.endsWith('-') ? field.replace(/_/g, '-') : field);

const lower = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));

/** The underscore spelling of the same headers, for the direct Authenticator path. */
const underscored = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.replace(/-/g, '_'), v]));

// ---- L1 headers (viem) -------------------------------------------------------------------------------

interface L1Opts {
  ts?: number | string;
  nonce?: number;
  chainId?: number;
  /** Address put in the header (default: the signer's). */
  address?: string;
  /** Address put in the signed struct (default: the header's). */
  signedAddress?: string;
  prefix?: Prefix;
  omit?: ('ADDRESS' | 'SIGNATURE' | 'TIMESTAMP' | 'NONCE')[];
  signer?: PrivateKeyAccount;
}

async function l1(acct: PrivateKeyAccount, o: L1Opts = {}): Promise<Record<string, string>> {
  const ts = String(o.ts ?? now());
  const nonce = o.nonce ?? 0;
  const address = o.address ?? acct.address;
  const signature = await (o.signer ?? acct).signTypedData({
    domain: { name: 'ClobAuthDomain', version: '1', chainId: o.chainId ?? app.ctx.config.auth.chainId },
    types: { ClobAuth: [{ name: 'address', type: 'address' }, { name: 'timestamp', type: 'string' }, { name: 'nonce', type: 'uint256' }, { name: 'message', type: 'string' }] },
    primaryType: 'ClobAuth',
    message: { address: (o.signedAddress ?? address) as `0x${string}`, timestamp: ts, nonce: BigInt(nonce), message: 'This message attests that I control the given wallet' },
  });
  const p = o.prefix ?? 'SVC_';
  const h: Record<string, string> = { [name(p, 'ADDRESS')]: address, [name(p, 'SIGNATURE')]: signature, [name(p, 'TIMESTAMP')]: ts, [name(p, 'NONCE')]: String(nonce) };
  for (const k of o.omit ?? []) delete h[name(p, k)];
  return h;
}

// ---- L2 headers (node:crypto) --------------------------------------------------------------------------

type Enc = 'hex' | 'base64url' | 'base64url-unpadded' | 'base64' | 'HEX';

interface L2Opts {
  ts?: number | string;
  enc?: Enc;
  prefix?: Prefix;
  omit?: ('ADDRESS' | 'API_KEY' | 'PASSPHRASE' | 'TIMESTAMP' | 'SIGNATURE')[];
  /** The path that is signed (default: the request path without its query). */
  signedPath?: string;
  signedMethod?: string;
  signedBody?: string;
  secret?: string;
  passphrase?: string;
  apiKey?: string;
}

function hmac(secret: string, message: string, enc: Enc): string {
  const key = Buffer.from(secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  const mac = createHmac('sha256', key).update(message).digest();
  switch (enc) {
    case 'hex':
      return mac.toString('hex');
    case 'HEX':
      return mac.toString('hex').toUpperCase();
    case 'base64':
      return mac.toString('base64');
    case 'base64url':
      return mac.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
    case 'base64url-unpadded':
      return mac.toString('base64url');
  }
}

function l2(creds: Credentials, address: string, method: string, path: string, body?: string, o: L2Opts = {}): Record<string, string> {
  const ts = String(o.ts ?? now());
  const signedPath = o.signedPath ?? path.split('?')[0]!;
  const message = ts + (o.signedMethod ?? method) + signedPath + (o.signedBody ?? body ?? '');
  const p = o.prefix ?? 'SVC_';
  const h: Record<string, string> = {
    [name(p, 'ADDRESS')]: address,
    [name(p, 'API_KEY')]: o.apiKey ?? creds.apiKey,
    [name(p, 'PASSPHRASE')]: o.passphrase ?? creds.passphrase,
    [name(p, 'TIMESTAMP')]: ts,
    [name(p, 'SIGNATURE')]: hmac(o.secret ?? creds.secret, message, o.enc ?? 'hex'),
  };
  for (const k of o.omit ?? []) delete h[name(p, k)];
  return h;
}

/** The edge's Authenticator called as the edge calls it: lowercase names, path without query, raw bytes. */
function directL2(method: string, path: string, headers: Record<string, string>, body?: string) {
  const raw = body !== undefined ? Buffer.from(body) : method === 'GET' ? undefined : Buffer.alloc(0);
  return app.ctx.auth.authenticator.l2(method, path.split('?')[0]!, lower(underscored(headers)), raw);
}

/** The named fields of an Authenticator answer (it also carries the replay key and its expiry). */
function pick<T extends object, K extends keyof T>(v: T | undefined, ...keys: K[]): Pick<T, K> | undefined {
  if (v === undefined) return undefined;
  return Object.fromEntries(keys.map((k) => [k, v[k]])) as Pick<T, K>;
}

const directL1 = (headers: Record<string, string>) => app.ctx.auth.authenticator.l1(lower(underscored(headers)));

async function createKey(acct: PrivateKeyAccount, nonce = 0): Promise<Credentials> {
  const r = await send('POST', '/auth/api-key', await l1(acct, { nonce }));
  assert.equal(r.status, 200, r.text);
  return r.json as Credentials;
}

// ---- tests -----------------------------------------------------------------------------------------------

test('create, derive (same credentials every time), create on a used nonce 400, list keys', async () => {
  const creds = await createKey(alice, 0);
  assert.match(creds.apiKey, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.match(creds.secret, /^[A-Za-z0-9_-]{43}=$/);
  assert.equal(Buffer.from(creds.secret, 'base64').length, 32);
  assert.match(creds.passphrase, /^[0-9a-f]{64}$/);

  for (let i = 0; i < 2; i++) {
    const d = await send('GET', '/auth/derive-api-key', await l1(alice, { nonce: 0, prefix: 'POLY-' }));
    assert.equal(d.status, 200, d.text);
    assert.deepEqual(d.json, creds);
  }
  // The identical signed create within its window would be a replay (answered as the first one): a new second.
  clock.advance(1000);
  const again = await send('POST', '/auth/api-key', await l1(alice, { nonce: 0 }));
  assert.equal(again.status, 400);
  assert.equal(again.text, '{"error":"Could not create api key"}');

  const second = await createKey(alice, 1);
  assert.notEqual(second.apiKey, creds.apiKey);
  assert.notEqual(second.secret, creds.secret);
  // Another wallet's nonce 0 is its own.
  const bobs = await createKey(bob, 0);
  assert.notEqual(bobs.apiKey, creds.apiKey);

  const never = await send('GET', '/auth/derive-api-key', await l1(alice, { nonce: 7 }));
  assert.equal(never.status, 400);
  assert.equal(never.text, '{"error":"Could not derive api key!"}');

  const list = await send('GET', '/auth/api-keys', l2(creds, alice.address, 'GET', '/auth/api-keys'));
  assert.equal(list.status, 200, list.text);
  assert.deepEqual(list.json, { apiKeys: [creds.apiKey, second.apiKey] });
});

test('revoke: the key stops working at once, derive fails, its nonce stays burned, other keys live on', async () => {
  const k = await createKey(alice, 10);
  const other = await createKey(alice, 11);
  const del = await send('DELETE', '/auth/api-key', l2(k, alice.address, 'DELETE', '/auth/api-key'));
  assert.equal(del.status, 200, del.text);
  assert.equal(del.json, 'OK');
  assert.equal(app.ctx.auth.keys.record(k.apiKey)?.revoked, true);

  const after1 = await send('GET', '/auth/api-keys', l2(k, alice.address, 'GET', '/auth/api-keys'));
  assert.equal(after1.status, 401);
  assert.equal(after1.text, UNAUTHORIZED);
  const derive = await send('GET', '/auth/derive-api-key', await l1(alice, { nonce: 10 }));
  assert.equal(derive.status, 400);
  clock.advance(1000);
  const create = await send('POST', '/auth/api-key', await l1(alice, { nonce: 10 }));
  assert.equal(create.status, 400);
  assert.equal(create.text, '{"error":"Could not create api key"}');

  const list = await send('GET', '/auth/api-keys', l2(other, alice.address, 'GET', '/auth/api-keys'));
  assert.equal(list.status, 200);
  assert.ok(!(list.json as { apiKeys: string[] }).apiKeys.includes(k.apiKey));
  assert.ok((list.json as { apiKeys: string[] }).apiKeys.includes(other.apiKey));
});

test('L1 failures answer 401 "Invalid L1 Request headers" (over HTTP and through the Authenticator with underscore names)', async () => {
  const cases: [string, () => Promise<Record<string, string>>][] = [
    ['signed by another wallet', () => l1(alice, { signer: bob })],
    ['header address is not the signed one', () => l1(alice, { address: bob.address, signedAddress: alice.address })],
    ['signed for another chain', () => l1(alice, { chainId: 137 })],
    ['stale timestamp', () => l1(alice, { ts: now() - SKEW - 1 })],
    ['future timestamp', () => l1(alice, { ts: now() + SKEW + 1 })],
    ['timestamp in milliseconds', () => l1(alice, { ts: clock.now() })],
    ['missing address', () => l1(alice, { omit: ['ADDRESS'] })],
    ['missing signature', () => l1(alice, { omit: ['SIGNATURE'] })],
    ['missing timestamp', () => l1(alice, { omit: ['TIMESTAMP'] })],
    ['nonce header differs from the signed nonce', async () => ({ ...(await l1(alice, { nonce: 1 })), SVC_NONCE: '2' })],
    ['nonce not decimal', async () => ({ ...(await l1(alice)), SVC_NONCE: 'abc' })],
    ['signature not 65 bytes', async () => ({ ...(await l1(alice)), SVC_SIGNATURE: '0x1234' })],
    ['address malformed', async () => ({ ...(await l1(alice)), SVC_ADDRESS: 'alice' })],
    ['no headers at all', async () => ({})],
  ];
  for (const [label, headers] of cases) {
    const h = await headers();
    for (const [method, path] of [['POST', '/auth/api-key'], ['GET', '/auth/derive-api-key']] as const) {
      const r = await send(method, path, h);
      assert.equal(r.status, 401, `${label} ${method} ${path}: ${r.text}`);
      assert.equal(r.text, L1_INVALID, label);
    }
    assert.equal(await directL1(h), undefined, `${label} (underscore names)`);
  }
  // At the edges of the window, without a nonce header (nonce 0), in every spelling: accepted.
  const accepted: [string, () => Promise<Record<string, string>>][] = [
    ['oldest timestamp, no nonce header, lowercase names', () => l1(alice, { ts: now() - SKEW, omit: ['NONCE'], prefix: 'svc_' })],
    ['newest timestamp, lowercase address', () => l1(alice, { ts: now() + SKEW, address: alice.address.toLowerCase() })],
    ['SVC_ names', () => l1(alice, { prefix: 'SVC_' })],
    ['POLY_ names', () => l1(alice, { prefix: 'POLY_' })],
    ['mixed-case names', () => l1(alice, { prefix: 'sVc_' })],
    ['mixed-case POLY_ names', () => l1(alice, { prefix: 'Poly_' })],
    ['hyphenated SVC- names (alias)', () => l1(alice, { prefix: 'SVC-' })],
    ['hyphenated POLY- names (alias)', () => l1(alice, { prefix: 'POLY-' })],
  ];
  for (const [label, headers] of accepted) {
    const h = await headers();
    const r = await send('GET', '/auth/derive-api-key', h);
    assert.equal(r.status, 200, `${label}: ${r.text}`);
    assert.deepEqual(pick(await directL1(h), 'address', 'nonce'), { address: alice.address.toLowerCase(), nonce: '0' }, `${label} (underscore names)`);
  }
  for (const prefix of ['SVC_', 'POLY_', 'svc_'] as const) {
    assert.deepEqual(pick(await directL1(await l1(bob, { prefix, nonce: 12 })), 'address', 'nonce'), { address: bob.address.toLowerCase(), nonce: '12' }, prefix);
  }
  // Nonces are canonical decimal uint256.
  assert.deepEqual(pick(await directL1({ ...(await l1(bob, { nonce: 12, prefix: 'SVC_' })), SVC_NONCE: '0012' }), 'address', 'nonce'), { address: bob.address.toLowerCase(), nonce: '12' });
  assert.equal(await directL1({ ...(await l1(bob, { prefix: 'SVC_' })), SVC_NONCE: (1n << 256n).toString() }), undefined);
});

test('the platform client HMAC vectors pass through the signature functions', () => {
  const vectors = [
    // official-client.md section 3.2 and Appendix A; platform-semantics.md section 4.2
    { secret: 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=', ts: '1700000000', method: 'POST', path: '/order', body: '{"hello":"world"}', sig: 'ErJwyPR_pOiePjCsk0Y-QBDob8O4lav69jTejldb-ZA=' },
    { secret: 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=', ts: '1700000000', method: 'GET', path: '/data/orders', body: undefined, sig: 'Xk7ucqyxdXt4Rya-du9c6i0l0gqjxKd7WbJMhIZ0N4s=' },
    { secret: 'CzBVep_E6Q4zWH2ix-wRNluApcrvFDleg6jN8hc8YYY=', ts: '1700000000', method: 'DELETE', path: '/order', body: '{"orderID":"0xabc"}', sig: 'VNdtrqTRfeaeMElR5kOnMFy4738Ykyk7mAp0cHQTFhE=' },
    { secret: 'CzBVep_E6Q4zWH2ix-wRNluApcrvFDleg6jN8hc8YYY=', ts: '1700000000', method: 'GET', path: '/data/order/0xabc', body: undefined, sig: 'N1R0vqqYLGcgWBlvr0Y7vpdb_xNtI_BsWpVdI-Olxec=' },
    { secret: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', ts: '1000000', method: 'test-sign', path: '/orders', body: '{"hash": "0x123"}', sig: 'ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=' },
  ];
  for (const v of vectors) {
    for (const secret of [v.secret, v.secret.replace(/=+$/, ''), v.secret.replace(/-/g, '+').replace(/_/g, '/')]) {
      const key = decodeSecret(secret);
      assert.ok(key, secret);
      const digest = l2Digest(key, v.ts, v.method, v.path, v.body === undefined ? undefined : Buffer.from(v.body));
      assert.equal(encodeSignature(digest), v.sig);
      // Every accepted spelling of the signature decodes to the same digest.
      for (const spelled of [v.sig, v.sig.replace(/=$/, ''), v.sig.replace(/-/g, '+').replace(/_/g, '/'), digest.toString('hex')]) {
        assert.deepEqual(decodeSignature(spelled), digest, spelled);
      }
    }
  }
  for (const bad of ['', 'zz', 'a'.repeat(63), 'g'.repeat(64), 'ErJwyPR_pOiePjCsk0Y-QBDob8O4lav69jTejldb-ZA==', 'ErJwyPR_pOiePjCsk0Y-QBDob8O4lav69jTejldb-Z', 'ErJwyPR pOiePjCsk0Y-QBDob8O4lav69jTejldb-ZA=']) {
    assert.equal(decodeSignature(bad), undefined, JSON.stringify(bad));
  }
  assert.equal(decodeSecret('not base64!'), undefined);
});

test('L2: every failure answers the same 401 body; accepted encodings, aliases and query strings pass', async () => {
  const creds = await createKey(alice, 20);
  const bobs = await createKey(bob, 20);
  const path = '/auth/api-keys';
  const wrongSecret = Buffer.alloc(32, 7).toString('base64url');
  const sig = (h: Record<string, string>) => h.SVC_SIGNATURE!;
  const ok: [string, string, Record<string, string>][] = [
    ['hex', path, l2(creds, alice.address, 'GET', path)],
    ['uppercase hex', path, l2(creds, alice.address, 'GET', path, undefined, { enc: 'HEX' })],
    ['base64url with padding (platform)', path, l2(creds, alice.address, 'GET', path, undefined, { enc: 'base64url' })],
    ['base64url without padding', path, l2(creds, alice.address, 'GET', path, undefined, { enc: 'base64url-unpadded' })],
    ['standard base64', path, l2(creds, alice.address, 'GET', path, undefined, { enc: 'base64' })],
    ['POLY_ names', path, l2(creds, alice.address, 'GET', path, undefined, { prefix: 'POLY_', enc: 'base64url' })],
    ['lowercase names', path, l2(creds, alice.address, 'GET', path, undefined, { prefix: 'svc_' })],
    ['mixed-case names', path, l2(creds, alice.address, 'GET', path, undefined, { prefix: 'sVc_' })],
    ['mixed-case POLY_ names', path, l2(creds, alice.address, 'GET', path, undefined, { prefix: 'Poly_', enc: 'base64url' })],
    ['hyphenated SVC- names (alias)', path, l2(creds, alice.address, 'GET', path, undefined, { prefix: 'SVC-' })],
    ['hyphenated POLY- names (alias)', path, l2(creds, alice.address, 'GET', path, undefined, { prefix: 'POLY-', enc: 'base64url' })],
    ['lowercase address', path, l2(creds, alice.address.toLowerCase(), 'GET', path)],
    ['query string not signed', `${path}?next_cursor=MA%3D%3D&x=1`, l2(creds, alice.address, 'GET', path)],
    ['timestamp at the window edge (past)', path, l2(creds, alice.address, 'GET', path, undefined, { ts: now() - SKEW })],
    ['timestamp at the window edge (future)', path, l2(creds, alice.address, 'GET', path, undefined, { ts: now() + SKEW })],
  ];
  for (const [label, p, h] of ok) {
    const r = await send('GET', p, h);
    assert.equal(r.status, 200, `${label}: ${r.text}`);
    assert.deepEqual(pick(directL2('GET', p, h), 'apiKey', 'address'), { apiKey: creds.apiKey, address: alice.address.toLowerCase() }, `${label} (underscore names)`);
  }
  for (const prefix of ['SVC_', 'POLY_', 'svc_'] as const) {
    assert.ok(directL2('GET', path, l2(creds, alice.address, 'GET', path, undefined, { prefix, enc: 'base64url' })), prefix);
  }

  const fail: [string, string, Record<string, string>][] = [
    ['wrong secret', path, l2(creds, alice.address, 'GET', path, undefined, { secret: wrongSecret })],
    ['wrong passphrase', path, l2(creds, alice.address, 'GET', path, undefined, { passphrase: bobs.passphrase })],
    ['stale timestamp', path, l2(creds, alice.address, 'GET', path, undefined, { ts: now() - SKEW - 1 })],
    ['future timestamp', path, l2(creds, alice.address, 'GET', path, undefined, { ts: now() + SKEW + 1 })],
    ['timestamp not a number', path, l2(creds, alice.address, 'GET', path, undefined, { ts: 'soon' })],
    ["another wallet's key with this address", path, l2(bobs, alice.address, 'GET', path)],
    ["this key with another wallet's address", path, l2(creds, bob.address, 'GET', path)],
    ["another wallet's key and passphrase, signed with this secret", path, l2(creds, alice.address, 'GET', path, undefined, { apiKey: bobs.apiKey, passphrase: bobs.passphrase })],
    ['unknown api key', path, l2(creds, alice.address, 'GET', path, undefined, { apiKey: '00000000-0000-4000-8000-000000000000' })],
    ['signed another method', path, l2(creds, alice.address, 'GET', path, undefined, { signedMethod: 'POST' })],
    ['signed another path', path, l2(creds, alice.address, 'GET', path, undefined, { signedPath: '/auth/api-key' })],
    ['signed the query string too', `${path}?a=1`, l2(creds, alice.address, 'GET', path, undefined, { signedPath: `${path}?a=1` })],
    ['signed with a body the request does not carry', path, l2(creds, alice.address, 'GET', path, undefined, { signedBody: '{}' })],
    ['truncated signature', path, { ...l2(creds, alice.address, 'GET', path), SVC_SIGNATURE: sig(l2(creds, alice.address, 'GET', path)).slice(0, 60) }],
    ['signature of another timestamp', path, { ...l2(creds, alice.address, 'GET', path), SVC_SIGNATURE: sig(l2(creds, alice.address, 'GET', path, undefined, { ts: now() - 1 })) }],
    ...(['ADDRESS', 'API_KEY', 'PASSPHRASE', 'TIMESTAMP', 'SIGNATURE'] as const).map(
      (k): [string, string, Record<string, string>] => [`missing ${k}`, path, l2(creds, alice.address, 'GET', path, undefined, { omit: [k] })],
    ),
    ['no headers', path, {}],
  ];
  for (const [label, p, h] of fail) {
    const r = await send('GET', p, h);
    assert.equal(r.status, 401, `${label}: ${r.status} ${r.text}`);
    assert.equal(r.text, UNAUTHORIZED, label);
    assert.equal(directL2('GET', p, h), undefined, `${label} (underscore names)`);
  }

  // Body bytes are part of the signature: tampering after signing fails (the key is not revoked) ...
  const del = '/auth/api-key';
  const signedBody = '{"reason":"rotate"}';
  for (const sent of ['{"reason":"rotatE"}', '{"reason": "rotate"}', '']) {
    const r = await send('DELETE', del, l2(creds, alice.address, 'DELETE', del, signedBody), sent);
    assert.equal(r.status, 401, `body ${JSON.stringify(sent)}: the raw bytes are signed, not a re-serialization`);
    assert.equal(r.text, UNAUTHORIZED);
    assert.equal(directL2('DELETE', del, l2(creds, alice.address, 'DELETE', del, signedBody), sent), undefined);
  }
  assert.equal(app.ctx.auth.keys.record(creds.apiKey)?.revoked, false);
  // ... and the same request with the signed bytes goes through (and revokes the key).
  const good = await send('DELETE', del, l2(creds, alice.address, 'DELETE', del, signedBody, { prefix: 'POLY_', enc: 'base64url' }), signedBody);
  assert.equal(good.status, 200, good.text);
  assert.equal(app.ctx.auth.keys.record(creds.apiKey)?.revoked, true);
});

test('GET /exchange-info publishes the chain id, domains, tick sizes and wallet factories', async () => {
  const r = await send('GET', '/exchange-info');
  assert.equal(r.status, 200);
  const a = app.ctx.config.auth;
  assert.deepEqual(r.json, {
    chainId: a.chainId,
    authDomain: { name: 'ClobAuthDomain', version: '1', chainId: a.chainId },
    orderDomain: { ...a.orderDomain, chainId: a.chainId },
    negRiskOrderDomain: { ...a.negRiskOrderDomain, chainId: a.chainId },
    tickSizes: ['0.1', '0.01', '0.001', '0.0001'],
    walletFactories: a.walletFactories,
    profile: 'spec',
  });
});

test('master key: generated once into DATA_DIR (0600), keys and credentials survive a restart, another key is refused', async () => {
  const file = join(dataDir, MASTER_KEY_FILE);
  assert.ok(existsSync(file));
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const creds = await createKey(alice, 30);
  // Several keys created in one second, so the order cannot come from the clock alone.
  for (const n of [35, 31, 33]) await createKey(alice, n);
  const listed = await send('GET', '/auth/api-keys', l2(creds, alice.address, 'GET', '/auth/api-keys'));
  assert.ok((listed.json as { apiKeys: string[] }).apiKeys.length >= 4);

  await app.stop(1000);
  app = await startApp(config(dataDir), { log: silentLogger, clock });
  const d = await send('GET', '/auth/derive-api-key', await l1(alice, { nonce: 30 }));
  assert.equal(d.status, 200, d.text);
  assert.deepEqual(d.json, creds);
  const list = await send('GET', '/auth/api-keys', l2(creds, alice.address, 'GET', '/auth/api-keys'));
  assert.equal(list.status, 200, list.text);
  assert.equal(list.text, listed.text, 'the same keys in the same order after the restart');
  assert.equal((await send('POST', '/auth/api-key', await l1(alice, { nonce: 30 }))).status, 400, 'the nonce is still used after restart');
  assert.equal((await send('GET', '/auth/derive-api-key', await l1(alice, { nonce: 10 }))).status, 400, 'a revoked key stays revoked after restart');

  // A different master key cannot re-derive the stored keys' secrets: start-up refuses.
  await assert.rejects(startApp(config(dataDir, { auth: { masterKey: 'ab'.repeat(32) } }), { log: silentLogger, clock }), /master key differs/);
});

test('loadMasterKey and deriveCredentials: configured hex/base64 keys, refused short keys, deterministic derivation', () => {
  const dir = tempDir();
  const hex = '0x' + 'cd'.repeat(32);
  assert.deepEqual(loadMasterKey({ masterKey: hex }, dir), Buffer.alloc(32, 0xcd));
  assert.deepEqual(loadMasterKey({ masterKey: Buffer.alloc(24, 1).toString('base64') }, dir), Buffer.alloc(24, 1));
  assert.throws(() => loadMasterKey({ masterKey: 'abcd' }, dir), /auth\.masterKey/);
  assert.equal(existsSync(join(dir, MASTER_KEY_FILE)), false, 'a configured key writes no file');

  const generated = loadMasterKey({ masterKey: '' }, dir);
  assert.equal(generated.length, 32);
  assert.deepEqual(loadMasterKey({ masterKey: '' }, dir), generated, 'read back, not regenerated');
  writeFileSync(join(dir, MASTER_KEY_FILE), 'garbage');
  assert.throws(() => loadMasterKey({ masterKey: '' }, dir), /does not hold a master key/);
  assert.equal(readFileSync(join(dir, MASTER_KEY_FILE), 'utf8'), 'garbage', 'never overwritten');

  const a = deriveCredentials(generated, '0xabc', '0');
  assert.deepEqual(deriveCredentials(generated, '0xabc', '0'), a);
  assert.notDeepEqual(deriveCredentials(generated, '0xabc', '1'), a);
  assert.notDeepEqual(deriveCredentials(Buffer.alloc(32, 9), '0xabc', '0'), a);
});

test('the service stores no secret: only {apiKey, address, nonce, createdAt, revoked}', async () => {
  const dir = tempDir();
  const store = openStore({ dataDir: dir });
  try {
    const svc = ApiKeyService.open(store, Buffer.alloc(32, 5), clock);
    const creds = await svc.create('0x' + '12'.repeat(20), '3');
    const stored = store.apiKeys.get(creds.apiKey) as Record<string, unknown>;
    assert.deepEqual(Object.keys(stored).sort(), ['address', 'apiKey', 'createdAt', 'nonce', 'revoked']);
    const raw = JSON.stringify([...store.apiKeys.getRange()]) + JSON.stringify([...store.meta.getRange()]);
    assert.ok(!raw.includes(creds.secret) && !raw.includes(creds.passphrase));
    // Concurrent creates of one nonce: exactly one wins.
    const both = await Promise.allSettled([svc.create('0x' + '34'.repeat(20), '0'), svc.create('0x' + '34'.repeat(20), '0')]);
    assert.deepEqual(both.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
  } finally {
    await store.close();
  }
});

test('the official V2 client creates/derives, lists and revokes its key against the compat profile', async () => {
  const compat = JSON.parse(readFileSync(new URL('../../../config/clob-v2-compat.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  const dir = tempDir();
  const capp = await startApp(config(dir, compat), { log: silentLogger, clock });
  try {
    // The client sends POLY_ADDRESS, POLY_SIGNATURE, ... exactly as it does against the platform.
    const host = `http://127.0.0.1:${capp.port}`;
    const acct = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
    const signer = { account: acct, signTypedData: (args: Parameters<typeof acct.signTypedData>[0]) => acct.signTypedData(args) } as unknown as ConstructorParameters<typeof ClobClient>[0]['signer'];
    // useServerTime: the server runs on a manual clock, so the client takes its timestamps from GET /time.
    const l1Client = new ClobClient({ host, chain: 80002, signer, useServerTime: true });
    const creds = await l1Client.createOrDeriveApiKey();
    assert.match(creds.key, /^[0-9a-f-]{36}$/);
    assert.deepEqual(await l1Client.createOrDeriveApiKey(), creds, 'create 400 -> derive returns the same credentials');

    const client = new ClobClient({ host, chain: 80002, signer, creds, useServerTime: true });
    assert.deepEqual(await client.getApiKeys(), { apiKeys: [creds.key] });
    assert.equal(await client.deleteApiKey(), 'OK');
    const refused = (await client.getApiKeys()) as unknown as { error: string; status: number };
    assert.equal(refused.status, 401);
    // The profile appends the reason to the platform's text (auth.reasonInBody), which stays first.
    assert.match(refused.error, /^Unauthorized\/Invalid api key \(reason: API key [0-9a-f-]{36} is revoked since /);
  } finally {
    await capp.stop(1000);
  }
});

test('every signed route authenticates SVC_*, POLY_*, lowercase and mixed-case names; a wrong signature is refused on each', async () => {
  const creds = await createKey(alice, 41);
  let nonce = 42;
  // Routes a trading key signs (GET /builder/trades takes builder keys only: test/e2e/key-kinds.test.ts).
  const signed = buildRoutes(app.ctx).filter((r) => r.auth === 'l2' && (r.keys ?? ['trading']).includes('trading'));
  assert.ok(signed.length >= 10, `${signed.length} signed routes`);
  for (const r of signed) {
    const path = r.path.replace(/:[a-z_]+/gi, '0x' + 'ab'.repeat(32));
    const body = r.method === 'GET' ? undefined : '{}';
    for (const prefix of ['SVC_', 'POLY_', 'svc_', 'sVc_', 'Poly_'] as const) {
      // Revoking spends the key: that route gets a fresh one each time.
      const k = r.method === 'DELETE' && r.path === '/auth/api-key' ? await createKey(alice, nonce++) : creds;
      const res = await send(r.method, path, l2(k, alice.address, r.method, path, body, { prefix }), body);
      assert.notEqual(res.status, 401, `${r.method} ${r.path} with ${prefix} names: ${res.text}`);
    }
    const forged = await send(r.method, path, l2(creds, alice.address, r.method, path, body, { secret: Buffer.alloc(32, 9).toString('base64url') }), body);
    assert.equal(forged.status, 401, `${r.method} ${r.path}: a wrong signature`);
  }
});

test('underscore header names (SVC_*, POLY_*) reach the edge over HTTP exactly as written', async () => {
  const creds = await createKey(alice, 40);
  const path = '/auth/api-keys';
  for (const prefix of ['SVC_', 'POLY_'] as const) {
    // Raw bytes on the socket, so no client library can respell the names on the way.
    const h = l2(creds, alice.address, 'GET', path, undefined, { prefix });
    const head = `GET ${path} HTTP/1.1\r\nHost: x\r\n${Object.entries(h).map(([k, v]) => `${k}: ${v}\r\n`).join('')}Connection: close\r\n\r\n`;
    assert.match(head, new RegExp(`\r\n${prefix}API_KEY: `));
    const r = await rawHttp(app.port, head, { timeoutMs: 2000, untilFinal: true });
    assert.equal(r.responses[0]?.status, 200, `${prefix}: no answer or refused (closedByServer=${r.closedByServer})`);
    assert.ok((JSON.parse(r.responses[0]!.body.toString()) as { apiKeys: string[] }).apiKeys.includes(creds.apiKey));
  }
});

// ---- before the body (issue 31) -----------------------------------------------------------------------------

/** Builder headers (`SVC_BUILDER_*`) of a builder key, signed like L2. */
function builderL2(creds: Credentials, method: string, path: string, o: { ts?: number; secret?: string } = {}): Record<string, string> {
  const ts = String(o.ts ?? now());
  return {
    SVC_BUILDER_API_KEY: creds.apiKey,
    SVC_BUILDER_PASSPHRASE: creds.passphrase,
    SVC_BUILDER_TIMESTAMP: ts,
    SVC_BUILDER_SIGNATURE: hmac(o.secret ?? creds.secret, ts + method + path, 'hex'),
  };
}

/** Carol's trading key plus a read-only and a builder key it made. */
async function carolsKeys(nonce: number): Promise<{ trading: Credentials; readonly: Credentials; builder: Credentials }> {
  const trading = await createKey(carol, nonce);
  const ro = await send('POST', '/auth/readonly-api-key', l2(trading, carol.address, 'POST', '/auth/readonly-api-key'));
  assert.equal(ro.status, 200, ro.text);
  const b = await send('POST', '/auth/builder-api-key', l2(trading, carol.address, 'POST', '/auth/builder-api-key'));
  assert.equal(b.status, 200, b.text);
  const { key, secret, passphrase } = b.json as { key: string; secret: string; passphrase: string };
  return { trading, readonly: ro.json as Credentials, builder: { apiKey: key, secret, passphrase } };
}

test('l2Head and builderHead decide everything but the HMAC: they pass where only the HMAC is wrong, and refuse wherever l2 refuses for another reason', async () => {
  const { trading, readonly, builder } = await carolsKeys(0);
  const bobs = await createKey(bob, 50);
  const revoked = await createKey(carol, 1);
  assert.equal((await send('DELETE', '/auth/api-key', l2(revoked, carol.address, 'DELETE', '/auth/api-key'))).status, 200);
  const head = (h: Record<string, string>) => app.ctx.auth.authenticator.l2Head(lower(underscored(h)));
  const path = '/data/orders';
  const sig = (h: Record<string, string>) => h.SVC_SIGNATURE!;

  const passes: [string, Record<string, string>, string][] = [
    ['a trading key', l2(trading, carol.address, 'GET', path), 'trading'],
    ['POLY_ names, base64url', l2(trading, carol.address, 'GET', path, undefined, { prefix: 'POLY_', enc: 'base64url' }), 'trading'],
    ['a read-only key', l2(readonly, carol.address, 'GET', path), 'readonly'],
  ];
  for (const [label, h, kind] of passes) {
    assert.equal(head(h), kind, label);
    assert.ok(directL2('GET', path, h), label);
  }
  const hmacOnly: [string, Record<string, string>][] = [
    ['wrong secret', l2(trading, carol.address, 'GET', path, undefined, { secret: Buffer.alloc(32, 7).toString('base64url') })],
    ['signed another path', l2(trading, carol.address, 'GET', path, undefined, { signedPath: '/data/trades' })],
    ['signed a body the request does not carry', l2(trading, carol.address, 'GET', path, undefined, { signedBody: '{}' })],
  ];
  for (const [label, h] of hmacOnly) {
    assert.equal(head(h), 'trading', `${label}: only the HMAC can tell`);
    assert.equal(directL2('GET', path, h), undefined, label);
  }
  const refused: [string, Record<string, string>][] = [
    ['wrong passphrase', l2(trading, carol.address, 'GET', path, undefined, { passphrase: bobs.passphrase })],
    ['passphrase of another length', l2(trading, carol.address, 'GET', path, undefined, { passphrase: 'short' })],
    ['stale timestamp', l2(trading, carol.address, 'GET', path, undefined, { ts: now() - SKEW - 1 })],
    ['future timestamp', l2(trading, carol.address, 'GET', path, undefined, { ts: now() + SKEW + 1 })],
    ['timestamp not a number', l2(trading, carol.address, 'GET', path, undefined, { ts: 'soon' })],
    ["another wallet's key with this address", l2(bobs, carol.address, 'GET', path)],
    ["this key with another wallet's address", l2(trading, bob.address, 'GET', path)],
    ['unknown api key', l2(trading, carol.address, 'GET', path, undefined, { apiKey: '00000000-0000-4000-8000-000000000000' })],
    ['a revoked key', l2(revoked, carol.address, 'GET', path)],
    ['a builder key in the L2 headers', l2(builder, carol.address, 'GET', path)],
    ['signature not a digest', { ...l2(trading, carol.address, 'GET', path), SVC_SIGNATURE: sig(l2(trading, carol.address, 'GET', path)).slice(0, 60) }],
    ...(['ADDRESS', 'API_KEY', 'PASSPHRASE', 'TIMESTAMP', 'SIGNATURE'] as const).map((k): [string, Record<string, string>] => [`missing ${k}`, l2(trading, carol.address, 'GET', path, undefined, { omit: [k] })]),
    ['no headers', {}],
  ];
  for (const [label, h] of refused) {
    assert.equal(head(h), undefined, label);
    assert.equal(directL2('GET', path, h), undefined, label);
  }

  const a = app.ctx.auth.authenticator;
  const bpath = '/builder/trades';
  const direct = (h: Record<string, string>) => [a.builderHead(lower(h)), a.builder('GET', bpath, lower(h), undefined) !== undefined];
  assert.deepEqual(direct(builderL2(builder, 'GET', bpath)), [true, true], 'a builder key');
  assert.deepEqual(direct(builderL2(builder, 'GET', bpath, { secret: trading.secret })), [true, false], 'a builder key, a wrong HMAC');
  assert.deepEqual(direct(builderL2(builder, 'GET', bpath, { ts: now() - SKEW - 1 })), [false, false], 'stale');
  assert.deepEqual(direct(builderL2(trading, 'GET', bpath)), [false, false], 'a trading key in the builder headers');
  assert.deepEqual(direct({ ...builderL2(builder, 'GET', bpath), SVC_BUILDER_PASSPHRASE: trading.passphrase }), [false, false], 'wrong passphrase');

  // Which credential headers an authOptional route looks at: the families that sign for its kinds.
  const l2h = lower(l2(trading, carol.address, 'GET', path));
  const bh = lower(builderL2(builder, 'GET', bpath));
  assert.deepEqual(
    [a.presented(l2h, ['builder']), a.presented(bh, ['builder']), a.presented(l2h, ['trading']), a.presented(bh, ['trading', 'readonly']), a.presented({}, ['trading', 'builder'])],
    [false, true, true, false, false],
  );
});

/**
 * Sends a head, waits `stallMs`, then sends the body (if given) and waits a second more: what came back
 * before the body was sent, what came after, and whether the server closed the connection.
 */
function stallThenSend(head: string, body: string | undefined, stallMs: number): Promise<{ before: string; after: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    let got = '';
    let before: string | undefined;
    const sock = net.connect(app.port, '127.0.0.1', () => sock.write(head));
    const finish = (closedByServer: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      const b = before ?? got;
      resolve({ before: b, after: got.slice(b.length), closedByServer });
    };
    let timer = setTimeout(() => {
      before = got;
      if (body === undefined) return finish(false);
      sock.write(body);
      timer = setTimeout(() => finish(false), 1000);
    }, stallMs);
    sock.on('data', (d: Buffer) => (got += d.toString('latin1')));
    sock.on('error', () => undefined);
    sock.on('close', () => finish(true));
  });
}

const rawHead = (method: string, path: string, headers: Record<string, string>, length: number) =>
  `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}Content-Length: ${length}\r\n\r\n`;

test('over HTTP, a signed route refuses on the headers before the body is sent; headers that pass wait for the body and its HMAC', async () => {
  const { trading, readonly, builder } = await carolsKeys(2);
  const path = '/auth/api-key';
  const body = '{"reason":"rotate"}';
  const before: [string, Record<string, string>][] = [
    ['no credentials', {}],
    ['stale timestamp', l2(trading, carol.address, 'DELETE', path, body, { ts: now() - SKEW - 1 })],
    ['unknown key', l2(trading, carol.address, 'DELETE', path, body, { apiKey: '00000000-0000-4000-8000-000000000000' })],
    ['a read-only key on a route of trading keys', l2(readonly, carol.address, 'DELETE', path, body)],
    ['a builder key in the L2 headers', l2(builder, carol.address, 'DELETE', path, body)],
  ];
  for (const [label, h] of before) {
    const r = await stallThenSend(rawHead('DELETE', path, h, body.length), undefined, 400);
    assert.match(r.before, /^HTTP\/1\.1 401 /, `${label}: answered while the body was still unsent`);
    assert.ok(r.before.endsWith(UNAUTHORIZED), label);
    assert.equal(r.closedByServer, true, label);
  }
  // Only the passphrase or address wrong: a body that may be large is refused before it is sent; a small one is
  // waited for, and its HMAC (the secret's, here) lets the reason say which header is wrong.
  for (const [label, h] of [
    ['wrong passphrase', l2(trading, carol.address, 'DELETE', path, body, { passphrase: readonly.passphrase })],
    ["another wallet's address", l2(trading, alice.address, 'DELETE', path, body)],
  ] as const) {
    const large = await stallThenSend(rawHead('DELETE', path, h, HEAD_DECIDES_ABOVE + 1), undefined, 400);
    assert.match(large.before, /^HTTP\/1\.1 401 /, `${label}, large: answered while the body was still unsent`);
    const small = await stallThenSend(rawHead('DELETE', path, h, body.length), body, 300);
    assert.equal(small.before, '', `${label}, small: no answer before the body`);
    assert.match(small.after, /^HTTP\/1\.1 401 /);
    assert.match(small.after, /x-refusal-reason: (POLY_PASSPHRASE is the passphrase of API key|the address header POLY_ADDRESS)/i, label);
  }
  // Headers that pass: nothing is answered until the body is in; then its HMAC decides.
  const tampered = await stallThenSend(rawHead('DELETE', path, l2(trading, carol.address, 'DELETE', path, body), body.length), body.replace('rotate', 'rotatE'), 300);
  assert.equal(tampered.before, '', 'no answer before the body');
  assert.match(tampered.after, /^HTTP\/1\.1 401 /);
  assert.equal(app.ctx.auth.keys.record(trading.apiKey)?.revoked, false);
  const good = await stallThenSend(rawHead('DELETE', path, l2(trading, carol.address, 'DELETE', path, body, { prefix: 'POLY_', enc: 'base64url' }), body.length), body, 300);
  assert.equal(good.before, '', 'no answer before the body');
  assert.match(good.after, /^HTTP\/1\.1 200 /);
  assert.equal(app.ctx.auth.keys.record(trading.apiKey)?.revoked, true);
});
