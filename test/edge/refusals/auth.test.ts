/**
 * Credential refusals that explain themselves (src/edge/refusals/auth.ts): each common mistake made on purpose
 * against a real ApiKeyService over a temporary LMDB store (and a real signature pool for L1), and the reason
 * naming it. Requests are built here with node:crypto and viem, independently of the module under test.
 *
 *   L2 and builder headers, in the authenticator's order: missing (and near-miss) headers, a signature that is
 *   no digest, milliseconds, clock skew both ways, unknown / pending / revoked keys, key kinds on the wrong
 *   family or route, the address and passphrase; then the HMAC variants tried with the real key (another
 *   path, the query string, a trailing slash, method case, re-serialized bodies, no body, milliseconds, the
 *   secret's encodings, another key of the wallet, two mistakes at once) and what the server signs when none
 *   matches; the HMAC diagnosis reached exactly where the authenticator's header checks pass; its bounds
 *   (HMACs, bytes hashed, the budget).
 *   L1: missing and malformed headers, signatures for the platform's chains, another signer, a bad v.
 *   The user channel's credentials, and walletOf.
 * The last test reads every reason the others produced: none holds a secret (text, bytes in hex, base64 or
 * base64url), a passphrase, or the HMAC the server expected, nor any 12-character piece of one.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { AUTH_RULES, createAuthenticator } from '../../../src/edge/auth/auth.ts';
import { ApiKeyService } from '../../../src/edge/auth/api-keys.ts';
import { deriveCredentials, type Credentials } from '../../../src/edge/auth/credentials.ts';
import { createAuthExplainer, MAX_HMAC_BYTES, MAX_HMAC_TRIES } from '../../../src/edge/refusals/auth.ts';
import { type AuthExplainer, type AuthRules, type RefusedRequest } from '../../../src/edge/refusals/auth-ports.ts';
import { DiagnosisBudget, DIAGNOSIS_RATES } from '../../../src/edge/refusals/budget.ts';
import { CLOB_AUTH_TYPES } from '../../../src/edge/auth/eip712.ts';
import { REFUSAL_CLASSES, type Refusal } from '../../../src/edge/refusals/reason.ts';
import type { KeyKind } from '../../../src/edge/pipeline/route.ts';
import { SigPool } from '../../../src/edge/auth/sig-pool.ts';
import { openStore, type Store } from '../../../src/journal/env.ts';
import { ManualClock, nowSeconds } from '../../../src/runtime/clock.ts';
import { testConfig } from '../../../src/runtime/config.ts';
import { tempDir } from '../../fixtures/edge.ts';

const MASTER = Buffer.alloc(32, 0x5a);
const clock = new ManualClock(Date.UTC(2026, 0, 1));
const now = () => nowSeconds(clock);
const config = testConfig();
const SKEW = config.auth.maxClockSkewSeconds;
const CHAIN = config.auth.chainId;

const alice = privateKeyToAccount(('0x' + 'a1'.repeat(32)) as `0x${string}`);
const bob = privateKeyToAccount(('0x' + 'b2'.repeat(32)) as `0x${string}`);
const A = alice.address.toLowerCase();
const B = bob.address.toLowerCase();

const PATHS: Record<string, string[]> = {
  GET: ['/data/orders', '/data/trades', '/data/order/:id', '/time', '/builder/trades'],
  POST: ['/order', '/orders', '/auth/api-key', '/auth/readonly-api-key'],
  DELETE: ['/order', '/orders', '/auth/api-key', '/auth/builder-api-key'],
};

let store: Store;
let keys: ApiKeyService;
let pool: SigPool;
let explainer: AuthExplainer;
let trading: Credentials;
let trading2: Credentials;
let readonly: Credentials;
let builder: Credentials;
let revoked: Credentials;
let bobs: Credentials;
let revokedAt: number;

/** HMACs the explainer computed (a counting wrapper around the real rule). */
let hmacs = 0;
let hashed = 0;
const counting: AuthRules = {
  ...AUTH_RULES,
  l2Digest: (key, ts, method, path, body) => {
    hmacs++;
    hashed += ts.length + method.length + path.length + (body === undefined ? 0 : Buffer.byteLength(body));
    return AUTH_RULES.l2Digest(key, ts, method, path, body);
  },
};

/** A budget no test here reaches. */
const plenty = () => new DiagnosisBudget({ network: { perSecond: 1e12, burst: 1e12 }, wallet: { perSecond: 1e12, burst: 1e12 }, all: { perSecond: 1e12, burst: 1e12 } });

const explainerWith = (o: { paths?: Record<string, string[]>; budget?: DiagnosisBudget } = {}) =>
  createAuthExplainer({
    keys,
    rules: counting,
    pool,
    auth: config.auth,
    clock,
    paths: (m) => (o.paths ?? PATHS)[m] ?? [],
    budget: o.budget ?? plenty(),
  });

before(async () => {
  store = openStore({ dataDir: tempDir() });
  keys = ApiKeyService.open(store, MASTER, clock);
  trading = await keys.create(A, '0');
  clock.advance(1000);
  readonly = await keys.createKind(A, 'readonly');
  clock.advance(1000);
  builder = await keys.createKind(A, 'builder');
  clock.advance(1000);
  trading2 = await keys.create(A, '1');
  revoked = await keys.create(A, '2');
  clock.advance(5000);
  await keys.revoke(revoked.apiKey);
  revokedAt = now();
  clock.advance(60_000);
  bobs = await keys.create(B, '0');
  pool = new SigPool({ threads: 1 });
  await pool.ready;
  explainer = explainerWith();
});

after(async () => {
  await pool.close();
  await store.close();
});

// ---- what every reason is checked against at the end ------------------------------------------------------

/** Every reason produced, and the HMACs the server expected of the requests explained. */
const produced: Refusal[] = [];
const expectedDigests: Buffer[] = [];

function record(r: Refusal): Refusal {
  assert.ok((REFUSAL_CLASSES as readonly string[]).includes(r.class), r.class);
  assert.ok(!/[\r\n]/.test(r.text), 'one line');
  produced.push(r);
  return r;
}

// ---- requests ---------------------------------------------------------------------------------------------

const b64url = (b: Buffer) => b.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
const keyBytes = (secret: string) => Buffer.from(secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64');

interface Signed {
  ts?: number | string;
  /** What the signature is computed over, when it differs from the request. */
  signedTs?: string;
  signedMethod?: string;
  signedPath?: string;
  signedBody?: string;
  /** The HMAC key (default: the secret's base64url decoding). */
  key?: Buffer;
  address?: string;
  apiKey?: string;
  passphrase?: string;
  signature?: string;
  omit?: string[];
  /** Header name prefix: poly_ (default), poly-, svc_. */
  prefix?: string;
}

/** L2 headers as the edge hands them over (lowercase), signed with node:crypto. */
function l2Headers(creds: Credentials, address: string, method: string, path: string, body: string | undefined, o: Signed = {}, family: 'l2' | 'builder' = 'l2'): Record<string, string> {
  const ts = String(o.ts ?? now());
  const message = (o.signedTs ?? ts) + (o.signedMethod ?? method) + (o.signedPath ?? path) + (o.signedBody ?? body ?? '');
  const sig = b64url(createHmac('sha256', o.key ?? keyBytes(creds.secret)).update(message).digest());
  const p = o.prefix ?? 'poly_';
  const n = (f: string) => (p.endsWith('-') ? p + (family === 'builder' ? 'builder-' : '') + f.replace(/_/g, '-') : p + (family === 'builder' ? 'builder_' : '') + f);
  const h: Record<string, string> = {
    [n('api_key')]: o.apiKey ?? creds.apiKey,
    [n('passphrase')]: o.passphrase ?? creds.passphrase,
    [n('timestamp')]: ts,
    [n('signature')]: o.signature ?? sig,
  };
  if (family === 'l2') h[n('address')] = o.address ?? address;
  for (const f of o.omit ?? []) delete h[n(f)];
  return h;
}

function req(method: string, pathAndQuery: string, headers: Record<string, string>, body?: string): RefusedRequest {
  const [path, query = ''] = pathAndQuery.split('?') as [string, string?];
  return { method, path, query, headers, body: body === undefined ? undefined : Buffer.from(body) };
}

/** The HMAC the server expects of a request (with the key its API key header names), kept for the leak check. */
function noteExpected(r: RefusedRequest): void {
  for (const [k, ts] of [
    ['poly_api_key', 'poly_timestamp'],
    ['poly_builder_api_key', 'poly_builder_timestamp'],
    ['svc_api_key', 'svc_timestamp'],
  ] as const) {
    const apiKey = r.headers[k];
    const m = apiKey === undefined ? undefined : keys.forDiagnosis(apiKey);
    if (m === undefined) continue;
    expectedDigests.push(AUTH_RULES.l2Digest(m.hmacKey, r.headers[ts] ?? String(now()), r.method, r.path, r.body));
  }
}

function explainL2(r: RefusedRequest, kinds: readonly KeyKind[] = ['trading'], e: AuthExplainer = explainer): Refusal {
  noteExpected(r);
  return record(e.l2(r, kinds));
}

function expect(r: Refusal, cls: Refusal['class'], re: RegExp): void {
  assert.equal(r.class, cls, r.text);
  assert.match(r.text, re);
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// ---- L2 headers ---------------------------------------------------------------------------------------------

test('L2 headers: each header mistake is named, in the order the authenticator checks', () => {
  const path = '/data/orders';
  const h = (o: Signed = {}, creds = trading, address = alice.address) => req('GET', path, l2Headers(creds, address, 'GET', path, undefined, o));
  const cases: Array<{ name: string; r: RefusedRequest; kinds?: KeyKind[]; cls: Refusal['class']; re: RegExp }> = [
    { name: 'one header missing', r: h({ omit: ['api_key'] }), cls: 'auth_header', re: /^missing L2 header POLY_API_KEY; the SVC_ spellings are read too, and underscored names also hyphenated \(POLY-API-KEY\)$/ },
    { name: 'two missing', r: h({ omit: ['signature', 'timestamp'] }), cls: 'auth_header', re: /^missing L2 headers POLY_TIMESTAMP, POLY_SIGNATURE;/ },
    { name: 'none at all', r: req('GET', path, {}), cls: 'auth_header', re: /none of the 5 arrived.*nginx drops underscored header names unless underscores_in_headers is on/ },
    {
      name: 'a near miss',
      r: req('GET', path, (({ poly_api_key, ...rest }) => ({ ...rest, 'x-poly-apikey': poly_api_key! }))(l2Headers(trading, alice.address, 'GET', path, undefined))),
      cls: 'auth_header',
      re: /missing L2 header POLY_API_KEY.*arrived but not read: x-poly-apikey/,
    },
    { name: 'signature not a digest', r: h({ signature: 'abc'.repeat(20) }), cls: 'auth_header', re: /^POLY_SIGNATURE is not a digest: expected .*64 hex characters or 44 characters of base64.*got 60 characters$/ },
    { name: 'an EIP-712 signature on L2', r: h({ signature: '0x' + 'ab'.repeat(65) }), cls: 'auth_header', re: /is an EIP-712 signature/ },
    { name: 'a 0x digest', r: h({ signature: '0x' + 'ab'.repeat(32) }), cls: 'auth_header', re: /without the 0x prefix/ },
    { name: 'milliseconds', r: h({ ts: String(clock.now()) }), cls: 'auth_timestamp', re: new RegExp(`^L2 timestamp ${clock.now()} has 13 digits: it is in milliseconds; send unix seconds \\(server time ${now()}\\)$`) },
    { name: 'behind', r: h({ ts: now() - 45 }), cls: 'auth_timestamp', re: new RegExp(`^L2 timestamp ${now() - 45} is 45 s behind this server \\(allowed ${SKEW} s; server time ${now()}`) },
    { name: 'ahead', r: h({ ts: now() + 40 }), cls: 'auth_timestamp', re: /is 40 s ahead of this server \(allowed 30 s/ },
    { name: 'not a number', r: h({ ts: 'soon' }), cls: 'auth_timestamp', re: /^POLY_TIMESTAMP "soon" is not a decimal number of unix seconds/ },
    { name: 'a fraction', r: h({ ts: `${now()}.25` }), cls: 'auth_timestamp', re: /has a fraction: send whole unix seconds/ },
    {
      name: 'unknown key',
      r: h({ apiKey: '00000000-0000-4000-8000-000000000000' }),
      cls: 'auth_key',
      re: /^API key 00000000-0000-4000-8000-000000000000 is not known to this server: API keys issued by the platform or by another server do not work here; create one with POST \/auth\/api-key/,
    },
    { name: 'the secret in the key header', r: h({ apiKey: trading.secret }), cls: 'auth_key', re: /^the POLY_API_KEY value \(44 characters, not an API key id: a UUID\) is not known/ },
    { name: 'revoked', r: h({}, revoked), cls: 'auth_key', re: new RegExp(`^API key ${revoked.apiKey} is revoked since \\d{4}-\\d\\d-\\d\\dT[0-9:]+Z \\(unix ${revokedAt}\\): create another with POST /auth/api-key`) },
    { name: 'a builder key on L2', r: h({}, builder), cls: 'auth_key', re: /is a builder key: builder keys sign the POLY_BUILDER_\* headers, not the L2 ones; this route takes a trading key/ },
    { name: 'address of 41 characters', r: h({ address: alice.address.slice(0, 41) }), cls: 'auth_address', re: /^POLY_ADDRESS is 41 characters, expected 42 \(0x \+ 40 hex\)$/ },
    { name: "another wallet's address", r: h({ address: bob.address }), cls: 'auth_address', re: new RegExp(`^the address header POLY_ADDRESS "${bob.address}" is not this key's wallet`) },
    { name: 'wrong passphrase', r: h({ passphrase: 'x'.repeat(10) }), cls: 'auth_passphrase', re: new RegExp(`^POLY_PASSPHRASE is not the passphrase of API key ${trading.apiKey} \\(10 characters arrived`) },
    {
      name: "another key's passphrase",
      r: h({ passphrase: trading2.passphrase }),
      cls: 'auth_passphrase',
      re: new RegExp(`^POLY_PASSPHRASE is the passphrase of API key ${trading2.apiKey} \\(a trading key of the same wallet\\), not of API key ${trading.apiKey}`),
    },
    { name: 'a read-only key where a trading key is needed', r: h({}, readonly), cls: 'auth_key', re: /is a read-only key: this route takes a trading key, created with POST \/auth\/api-key \(L1 headers\)$/ },
    { name: 'hyphenated names are read', r: req('GET', path, l2Headers(trading, alice.address, 'GET', path, undefined, { prefix: 'poly-', omit: ['passphrase'] })), cls: 'auth_header', re: /^missing L2 header POLY_PASSPHRASE;/ },
  ];
  for (const c of cases) expect(explainL2(c.r, c.kinds), c.cls, c.re);
  // These requests are signed with the key's secret, which proves the caller holds it: the mistake is named,
  // the key's wallet too. Without the secret, neither (the next test).
  const wrong = explainL2(h({ address: bob.address }));
  assert.ok(wrong.text.toLowerCase().includes(A.slice(2)), wrong.text);
  // The earlier failure wins: a stale timestamp with an unknown key is about the timestamp.
  expect(explainL2(h({ ts: now() - 100, apiKey: '00000000-0000-4000-8000-000000000000' })), 'auth_timestamp', /100 s behind/);
});

test('without the secret, a wrong address, a wrong passphrase and a wrong HMAC read the same, and the key\'s wallet is not named; its wallet reads which on GET /refusals', () => {
  const path = '/data/orders';
  const wrongKey = Buffer.alloc(32, 7);
  const h = (o: Signed) => req('GET', path, l2Headers(trading, alice.address, 'GET', path, undefined, { key: wrongKey, ...o }));
  const cases = [
    { name: 'wrong HMAC only', r: h({}), owner: 'auth_hmac', ownerRe: /^L2 signature does not match: this server signs .*: is the secret API key/ },
    { name: 'another wallet\'s address', r: h({ address: bob.address }), owner: 'auth_address', ownerRe: new RegExp(`^the address header POLY_ADDRESS "${bob.address}" is not this key's wallet \\(${A}\\)`) },
    { name: 'wrong passphrase', r: h({ passphrase: 'x'.repeat(64) }), owner: 'auth_passphrase', ownerRe: /^POLY_PASSPHRASE is not the passphrase of API key/ },
    { name: 'another key\'s passphrase', r: h({ passphrase: trading2.passphrase }), owner: 'auth_passphrase', ownerRe: new RegExp(`^POLY_PASSPHRASE is the passphrase of API key ${trading2.apiKey}`) },
  ];
  const texts = new Set<string>();
  for (const c of cases) {
    const r = explainL2(c.r);
    assert.equal(r.class, 'auth_credentials', `${c.name}: ${r.text}`);
    assert.match(r.text, new RegExp(`^L2 credentials of API key ${trading.apiKey} do not check: its address, passphrase and signature are not all the key's \\(which one is wrong is said only to a request whose signature proves it holds the key's secret; the key's wallet reads it on GET /refusals\\), and the signature does not verify: this server signs .*; none of \\d+ common mistakes reproduces it with the key's secret`));
    assert.ok(!r.text.toLowerCase().includes(A.slice(2)), `${c.name}: the key's wallet is named: ${r.text}`);
    assert.ok(!r.text.includes(trading2.apiKey), `${c.name}: another key of the wallet is named`);
    texts.add(r.text);
    assert.equal(r.owner?.class, c.owner, c.name);
    assert.match(r.owner!.text, c.ownerRe, c.name);
  }
  assert.equal(texts.size, 1, `one text for every case: ${[...texts].join(' | ')}`);
  // A common mistake made with the key's secret proves it: then the wrong passphrase is named with it.
  const proven = explainL2(req('GET', path, l2Headers(trading, alice.address, 'GET', path, undefined, { passphrase: 'x'.repeat(64), signedPath: '/data/trades' })));
  expect(proven, 'auth_passphrase', /^POLY_PASSPHRASE is not the passphrase of API key .*; and the L2 signature does not match: the request was signed over path \/data\/trades/);
});

test('a key still being written is named as such', async () => {
  const pending = keys.create(A, '7');
  const creds = deriveCredentials(MASTER, A, '7');
  const r = explainL2(req('GET', '/data/orders', l2Headers(creds, alice.address, 'GET', '/data/orders', undefined)));
  expect(r, 'auth_key', new RegExp(`^API key ${creds.apiKey} is still being created`));
  await pending;
});

test('builder headers: their own names and kinds, and the route families', () => {
  const path = '/builder/trades';
  const bh = (creds: Credentials, o: Signed = {}) => l2Headers(creds, '', 'GET', path, undefined, o, 'builder');
  expect(explainL2(req('GET', path, bh(builder, { omit: ['passphrase'] })), ['builder']), 'auth_header', /^missing builder header POLY_BUILDER_PASSPHRASE; .*\(POLY-BUILDER-PASSPHRASE\)/);
  expect(explainL2(req('GET', path, bh(trading)), ['builder']), 'auth_key', /is a trading key: the POLY_BUILDER_\* headers take a builder key \(POST \/auth\/builder-api-key\)/);
  expect(explainL2(req('GET', path, bh(builder, { ts: now() - 31 })), ['builder']), 'auth_timestamp', /^builder timestamp \d+ is 31 s behind/);
  expect(
    explainL2(req('GET', path, l2Headers(trading, alice.address, 'GET', path, undefined)), ['builder']),
    'auth_header',
    /^missing builder headers POLY_BUILDER_API_KEY, .*; this route takes builder keys only, and the L2 headers that arrived do not sign it$/,
  );
  expect(
    explainL2(req('GET', '/data/orders', bh(builder)), ['trading']),
    'auth_header',
    /^missing L2 headers .*; the builder headers that arrived do not sign this route \(it takes a trading key\)$/,
  );
  expect(explainL2(req('GET', path, bh(builder, { signedPath: '/data/trades' })), ['builder']), 'auth_hmac', /^builder signature does not match: the request was signed over path \/data\/trades, it arrived at \/builder\/trades$/);
  // A route taking both families explains both when both arrived.
  const both = { ...l2Headers(trading, alice.address, 'DELETE', '/auth/builder-api-key', undefined, { passphrase: 'nope' }), ...l2Headers(builder, '', 'DELETE', '/auth/builder-api-key', undefined, { ts: now() - 99 }, 'builder') };
  expect(explainL2(req('DELETE', '/auth/builder-api-key', both), ['trading', 'builder']), 'auth_passphrase', /^POLY_PASSPHRASE is not the passphrase .*; builder headers: builder timestamp \d+ is 99 s behind/);
});

// ---- the HMAC ---------------------------------------------------------------------------------------------

test('the HMAC: each mistake is reproduced with the real key and named', () => {
  const body = '{"order":{"salt":1,"side":"BUY"},"owner":"' + trading.apiKey + '","orderType":"GTC","deferExec":false}';
  const pretty = JSON.stringify(JSON.parse(body), null, 2);
  const post = (path: string, o: Signed, sent = body) => req('POST', path, l2Headers(trading, alice.address, 'POST', path.split('?')[0]!, sent, o), sent);
  const python = JSON.stringify(JSON.parse(body)).replace(/,"/g, ', "').replace(/":/g, '": ');
  const pyStr = python.replace('false', 'False');
  const cases: Array<{ name: string; r: RefusedRequest; re: RegExp }> = [
    { name: 'another path', r: post('/order', { signedPath: '/orders' }), re: /^L2 signature does not match: the request was signed over path \/orders, it arrived at \/order$/ },
    { name: 'a trailing slash', r: post('/order', { signedPath: '/order/' }), re: /signed over path \/order\/, it arrived at \/order$/ },
    {
      name: 'the query string',
      r: req('GET', '/data/trades?market=0xabc', l2Headers(trading, alice.address, 'GET', '/data/trades', undefined, { signedPath: '/data/trades?market=0xabc' })),
      re: /signed over "\/data\/trades\?market=0xabc": the query string is not signed \(sign \/data\/trades\)$/,
    },
    {
      name: 'the full URL',
      r: req('GET', '/data/trades', { host: 'clob.example', ...l2Headers(trading, alice.address, 'GET', '/data/trades', undefined, { signedPath: 'https://clob.example/data/trades' }) }),
      re: /signed over the full URL "https:\/\/clob.example\/data\/trades": sign the path only/,
    },
    { name: 'lower-case method', r: post('/order', { signedMethod: 'post' }), re: /signed with the method in lower case \(post\): sign POST$/ },
    { name: 'another method', r: post('/order', { signedMethod: 'DELETE' }), re: /signed as a DELETE request, it arrived as POST$/ },
    { name: 'compact body, pretty sent', r: post('/order', { signedBody: body }, pretty), re: /re-serialized compactly \(JSON.stringify\), not the \d+ bytes sent/ },
    { name: 'pretty body signed, compact sent', r: post('/order', { signedBody: pretty }), re: /signed over the body pretty-printed \(indented by 2 spaces\), and sent in another layout: sign the exact bytes sent$/ },
    {
      name: "signed in the official client's key order, sent reordered",
      r: post('/order', { signedBody: JSON.stringify({ deferExec: false, order: { salt: 1, side: 'BUY' }, owner: trading.apiKey, orderType: 'GTC' }) }),
      re: /signed over the body with its keys in the order the platform's client writes them, compact; the body sent has them in another order or layout/,
    },
    {
      name: 'top-level keys reordered',
      r: post('/order', { signedBody: JSON.stringify({ owner: trading.apiKey, order: { salt: 1, side: 'BUY' }, orderType: 'GTC', deferExec: false }) }),
      re: /signed over the same body with its keys in another order \(owner, order, orderType, deferExec\), compact: sign the exact bytes sent$/,
    },
    { name: "Python's json.dumps", r: post('/order', { signedBody: python }), re: /as Python's json.dumps writes it/ },
    { name: "py-clob-client's str(dict)", r: post('/order', { signedBody: pyStr }), re: /str\(body\) with ' replaced by " \(py-clob-client's way/ },
    { name: 'no body signed', r: post('/order', { signedBody: '' }), re: new RegExp(`signed without the body: sign the ${body.length} body bytes sent`) },
    { name: 'an object appended', r: post('/order', { signedBody: '[object Object]' }), re: /"\[object Object\]": an object was appended/ },
    { name: 'a body signed, none sent', r: req('DELETE', '/orders', l2Headers(trading, alice.address, 'DELETE', '/orders', undefined, { signedBody: '{}' })), re: /signed over the body \{\}, but the request carries no body/ },
    { name: 'milliseconds in the signature', r: post('/order', { signedTs: `${now()}000` }), re: new RegExp(`timestamp in milliseconds \\(${now()}000\\)`) },
    { name: 'a second apart', r: post('/order', { signedTs: String(now() - 1) }), re: new RegExp(`signed over timestamp ${now() - 1}, the header says ${now()}`) },
    { name: "the secret's text as key", r: post('/order', { key: Buffer.from(trading.secret) }), re: /keyed with the secret's text bytes: the key is the secret's base64url decoding$/ },
    { name: 'the secret read as hex', r: post('/order', { key: Buffer.from(trading.secret, 'hex') }), re: /keyed with the secret read as hex/ },
    { name: 'the passphrase as key', r: post('/order', { key: Buffer.from(trading.passphrase) }), re: /keyed with the passphrase instead of the secret$/ },
    {
      name: "another key's secret",
      r: post('/order', { key: keyBytes(trading2.secret) }),
      re: new RegExp(`keyed with the secret of API key ${trading2.apiKey} \\(a trading key of the same wallet\\)`),
    },
    { name: "a revoked key's secret", r: post('/order', { key: keyBytes(revoked.secret) }), re: new RegExp(`secret of API key ${revoked.apiKey} \\(a trading key of the same wallet, revoked\\)`) },
    {
      name: 'two mistakes: path and body',
      r: post('/order', { signedPath: '/orders', signedBody: python }),
      re: /^L2 signature does not match: the request was signed over path \/orders, it arrived at \/order; and it was signed over the body as Python's json.dumps writes it/,
    },
    {
      // Without a body (a body's key orders come before the pairs).
      name: 'two mistakes: method case and secret text',
      r: req('DELETE', '/cancel-all', l2Headers(trading, alice.address, 'DELETE', '/cancel-all', undefined, { signedMethod: 'delete', key: Buffer.from(trading.secret) })),
      re: /lower case \(delete\): sign DELETE; and it was keyed with the secret's text bytes/,
    },
  ];
  for (const c of cases) expect(explainL2(c.r), 'auth_hmac', c.re);
  // A read-only key reaches the HMAC on a route that takes it.
  const ro = req('GET', '/data/orders', l2Headers(readonly, alice.address, 'GET', '/data/orders', undefined, { signedPath: '/data/trades' }));
  expect(explainL2(ro, ['trading', 'readonly']), 'auth_hmac', /signed over path \/data\/trades, it arrived at \/data\/orders$/);
});

test('the HMAC: a body re-serialized after signing in a way no variant reproduces is named as such, not blamed on the secret', () => {
  // Signed with the order's own keys in another order (nothing re-sorts nested keys back), sent pretty-printed.
  const signed = '{"order":{"side":"BUY","salt":1},"owner":"' + trading.apiKey + '","orderType":"GTC","deferExec":false}';
  const sent = JSON.stringify({ order: { salt: 1, side: 'BUY' }, owner: trading.apiKey, orderType: 'GTC', deferExec: false }, null, 2);
  const r = explainL2(req('POST', '/order', l2Headers(trading, alice.address, 'POST', '/order', sent, { signedBody: signed }), sent), ['trading']);
  const form = `the JSON body sent is pretty-printed \\(${sent.length} bytes sent, ${JSON.stringify(JSON.parse(sent)).length} compact\\), and has its keys in another order than the platform's client writes them .*; sign the bytes you send`;
  // Nothing proves the caller holds the secret (issue 39: which credential is wrong is not said), but the body's
  // form is the caller's own and leads what the signature check says.
  expect(r, 'auth_credentials', new RegExp(`^L2 credentials of API key ${trading.apiKey} do not check: .*the signature does not verify: ${form}; this server signs HMAC-SHA256 over `));
  // The key's wallet reads the same, with the secret asked about last and only if those bytes were signed.
  assert.equal(r.owner?.class, 'auth_hmac');
  assert.match(r.owner!.text, new RegExp(`^L2 signature does not match: ${form}; this server signs HMAC-SHA256 over .*; none of \\d+ common mistakes reproduces it .*; if the bytes signed were these, is the secret API key ${trading.apiKey}'s\\?$`));
  // Compact, in an order of its own: the key order is named.
  const compact = JSON.stringify(JSON.parse(sent));
  const rc = explainL2(req('POST', '/order', l2Headers(trading, alice.address, 'POST', '/order', compact, { signedBody: signed }), compact), ['trading']);
  expect(rc, 'auth_credentials', /the signature does not verify: the JSON body sent has its keys in another order than the platform's client writes them/);
  assert.match(rc.owner!.text, /^L2 signature does not match: the JSON body sent has its keys in another order than the platform's client writes them/);
});

test('the HMAC: when no mistake reproduces it, what the server signs over, within the bounds', () => {
  const wrong = Buffer.alloc(32, 7);
  const body = '{"orderID":"0x' + 'ab'.repeat(32) + '"}';
  const ts = now();
  hmacs = 0;
  const r = explainL2(req('DELETE', '/order', l2Headers(trading, alice.address, 'DELETE', '/order', body, { key: wrong }), body), ['trading']);
  const signs = `this server signs HMAC-SHA256 over timestamp ${ts} \\+ DELETE \\+ /order \\+ the body as received \\(${body.length} bytes\\), keyed with the secret's base64url decoding; none of \\d+ common mistakes reproduces it with the key's secret`;
  // Nothing proves the caller holds the secret: what is signed is said, not which credential is wrong.
  expect(r, 'auth_credentials', new RegExp(`^L2 credentials of API key ${trading.apiKey} do not check: .*which one is wrong is said only to .*the signature does not verify: ${signs}`));
  // The key's wallet reads that the address and passphrase are right and the secret is what to look at.
  assert.equal(r.owner?.class, 'auth_hmac');
  assert.match(r.owner!.text, new RegExp(`^L2 signature does not match: ${signs} .*: is the secret API key ${trading.apiKey}'s\\?$`));
  assert.ok(hmacs > 50 && hmacs <= MAX_HMAC_TRIES, `${hmacs} HMACs`);
  const get = explainL2(req('GET', '/data/orders?next_cursor=MA==', l2Headers(trading, alice.address, 'GET', '/data/orders', undefined, { key: wrong })));
  assert.match(get.text, /\+ GET \+ \/data\/orders \(its query string is not signed\) \+ no body, keyed/);

  // Many routes: still at most MAX_HMAC_TRIES.
  const many = explainerWith({ paths: { POST: Array.from({ length: 2000 }, (_, i) => `/route/${i}`) } });
  hmacs = 0;
  explainL2(req('POST', '/order', l2Headers(trading, alice.address, 'POST', '/order', body, { key: wrong }), body), ['trading'], many);
  assert.equal(hmacs, MAX_HMAC_TRIES);
  // A large body: not hashed again at all (the authenticator did, once), and the reason says so.
  const big = JSON.stringify({ pad: 'x'.repeat(700_000) });
  hmacs = 0;
  const rb = explainL2(req('POST', '/order', l2Headers(trading, alice.address, 'POST', '/order', big, { key: wrong }), big));
  assert.equal(hmacs, 0);
  assert.match(rb.text, /the body as received \(700010 bytes\).*the body is 700010 bytes, and the common mistakes are tried only on bodies of at most 64 KiB/);
  // A body just under the bound: the bytes hashed stay within MAX_HMAC_BYTES.
  const near = JSON.stringify({ pad: 'x'.repeat(60_000) });
  hmacs = 0;
  hashed = 0;
  explainL2(req('POST', '/order', l2Headers(trading, alice.address, 'POST', '/order', near, { key: wrong }), near));
  assert.ok(hashed <= MAX_HMAC_BYTES && hmacs >= 2 && hmacs <= 5, `${hmacs} HMACs, ${hashed} bytes`);
  // Past the budget: nothing is hashed, the reason still says what is signed.
  const busy = explainerWith({ budget: new DiagnosisBudget({ network: { perSecond: 0, burst: 0 }, wallet: { perSecond: 0, burst: 0 }, all: { perSecond: 0, burst: 0 } }) });
  hmacs = 0;
  const rbusy = explainL2(req('POST', '/order', l2Headers(trading, alice.address, 'POST', '/order', body, { signedPath: '/orders' }), body), ['trading'], busy);
  assert.equal(hmacs, 0, 'no HMAC');
  expect(rbusy, 'auth_credentials', /the signature does not verify: this server signs .*; the common mistakes were not tried \(diagnosis is busy\)$/);
});

test('refused before the body: only headers are named; headers that check there say the HMAC was not checked', () => {
  const body = '{"a":1}';
  const h = l2Headers(trading, alice.address, 'POST', '/order', body);
  const early = (headers: Record<string, string>) => explainL2({ method: 'POST', path: '/order', query: '', headers: { ...headers, 'content-length': String(body.length) }, body: undefined });
  // Whether the passphrase or the HMAC is wrong cannot be told before the body: the same words either way,
  // and the key's wallet reads which.
  const wrongPass = early({ ...h, poly_passphrase: 'no' });
  expect(wrongPass, 'auth_credentials', /^L2 credentials of API key .* do not check: .*the request was refused before its body arrived, so its signature was not checked$/);
  assert.match(wrongPass.owner!.text, /^POLY_PASSPHRASE is not the passphrase/);
  hmacs = 0;
  const right = early(h);
  assert.equal(right.text, wrongPass.text);
  assert.match(right.owner!.text, /^L2 headers check, and the request was refused before its body arrived, so its signature was not checked/);
  assert.equal(hmacs, 0);
});

test('the HMAC diagnosis is reached exactly where the authenticator passes the headers (l2Head / builderHead)', () => {
  const authn = createAuthenticator({ keys, pool, auth: config.auth, clock });
  const path = '/data/orders';
  const sets: Array<[string, Record<string, string>]> = [
    ['good', l2Headers(trading, alice.address, 'GET', path, undefined, { signedPath: '/x' })],
    ['svc_ names', l2Headers(trading, alice.address, 'GET', path, undefined, { prefix: 'svc_', signedPath: '/x' })],
    ['hyphens', l2Headers(trading, alice.address, 'GET', path, undefined, { prefix: 'poly-', signedPath: '/x' })],
    ['upper-case hex digest', { ...l2Headers(trading, alice.address, 'GET', path, undefined), poly_signature: 'AB'.repeat(32) }],
    ['unpadded base64', { ...l2Headers(trading, alice.address, 'GET', path, undefined), poly_signature: 'A'.repeat(43) }],
    ['42 characters, not hex', l2Headers(trading, 'z'.repeat(42), 'GET', path, undefined)],
    ['lower-case address', l2Headers(trading, A, 'GET', path, undefined, { signedPath: '/x' })],
    ['edge of the skew', l2Headers(trading, alice.address, 'GET', path, undefined, { ts: now() - SKEW, signedPath: '/x' })],
    ['past the skew', l2Headers(trading, alice.address, 'GET', path, undefined, { ts: now() - SKEW - 1 })],
    ['12 digits', l2Headers(trading, alice.address, 'GET', path, undefined, { ts: '000' + String(now()).slice(1) })],
    ['read-only', l2Headers(readonly, alice.address, 'GET', path, undefined, { signedPath: '/x' })],
    ['builder', l2Headers(builder, alice.address, 'GET', path, undefined)],
    ['revoked', l2Headers(revoked, alice.address, 'GET', path, undefined)],
    ["bob's key", l2Headers(bobs, alice.address, 'GET', path, undefined)],
    ['empty passphrase', l2Headers(trading, alice.address, 'GET', path, undefined, { passphrase: '' })],
  ];
  for (const kinds of [['trading'], ['trading', 'readonly']] as KeyKind[][]) {
    for (const [name, h] of sets) {
      const passes = authn.l2Head(h);
      const headOk = passes !== undefined && kinds.includes(passes);
      const r = explainL2(req('GET', path, h), kinds);
      // What the key's wallet reads: the HMAC named exactly where the headers passed.
      assert.equal((r.owner ?? r).class === 'auth_hmac', headOk, `${name} on ${kinds.join('+')}: ${r.text}`);
    }
  }
  const bsets: Array<[string, Record<string, string>]> = [
    ['builder', l2Headers(builder, '', 'GET', '/builder/trades', undefined, { signedPath: '/x' }, 'builder')],
    ['trading in builder headers', l2Headers(trading, '', 'GET', '/builder/trades', undefined, {}, 'builder')],
    ['stale', l2Headers(builder, '', 'GET', '/builder/trades', undefined, { ts: now() - SKEW - 1 }, 'builder')],
  ];
  for (const [name, h] of bsets) {
    const r = explainL2(req('GET', '/builder/trades', h), ['builder']);
    assert.equal((r.owner ?? r).class === 'auth_hmac', authn.builderHead(h), `${name}: ${r.text}`);
  }
});

// ---- L1 ----------------------------------------------------------------------------------------------------


async function l1Headers(acct: PrivateKeyAccount, o: { chainId?: number; ts?: string; nonce?: string; address?: string; signer?: PrivateKeyAccount } = {}): Promise<Record<string, string>> {
  const ts = o.ts ?? String(now());
  const nonce = o.nonce ?? '0';
  const address = o.address ?? acct.address;
  const signature = await (o.signer ?? acct).signTypedData({
    domain: { name: 'ClobAuthDomain', version: '1', chainId: o.chainId ?? CHAIN },
    types: CLOB_AUTH_TYPES,
    primaryType: 'ClobAuth',
    message: { address: address as `0x${string}`, timestamp: ts, nonce: BigInt(nonce), message: 'This message attests that I control the given wallet' },
  });
  return { poly_address: address, poly_signature: signature, poly_timestamp: ts, poly_nonce: nonce };
}

test('L1: headers, then the signature recovered under this exchange and the platform domains', async () => {
  const good = await l1Headers(alice);
  const l1 = async (h: Record<string, string>) => record(await explainer.l1(h));
  expect(await l1((({ poly_signature, ...rest }) => rest)(good)), 'auth_header', /^missing L1 header POLY_SIGNATURE \(POLY_NONCE is optional, default 0\)/);
  expect(await l1({ ...good, poly_address: '0x1234' }), 'auth_header', /^POLY_ADDRESS "0x1234" is not an address: expected 0x \+ 40 hex \(42 characters\), got 6 characters$/);
  expect(await l1({ ...good, poly_signature: good.poly_signature!.slice(2) }), 'auth_header', /lacks the 0x prefix$/);
  expect(await l1({ ...good, poly_signature: 'A'.repeat(43) + '=' }), 'auth_header', /form of an L2 HMAC/);
  expect(await l1({ ...good, poly_timestamp: String(clock.now()) }), 'auth_timestamp', /^L1 timestamp \d{13} has 13 digits: it is in milliseconds/);
  expect(await l1(await l1Headers(alice, { ts: String(now() - 60) })), 'auth_timestamp', /^L1 timestamp \d+ is 60 s behind/);
  expect(await l1({ ...good, poly_nonce: '-1' }), 'auth_header', /^POLY_NONCE "-1" is not a uint256 in decimal$/);
  expect(
    await l1(await l1Headers(alice, { chainId: 137 })),
    'auth_l1_signature',
    new RegExp(`^L1 signature recovers to 0x[0-9a-f]{40} under this exchange's ClobAuth domain \\(chain ${CHAIN}\\); it recovers to the address under the platform's mainnet \\(Polygon, chain 137\\): sign ClobAuth for chain ${CHAIN} \\(GET /exchange-info\\), or start this exchange with PROFILE=platform, which takes it$`),
  );
  expect(await l1(await l1Headers(alice, { chainId: 80002 })), 'auth_l1_signature', /under the platform's test chain \(Amoy, chain 80002\): sign ClobAuth for chain \d+ \(GET \/exchange-info\), or start this exchange with PROFILE=clob-v2, which takes it$/);
  expect(
    await l1(await l1Headers(alice, { signer: bob })),
    'auth_l1_signature',
    new RegExp(`^L1 signature recovers to ${B} under this exchange's ClobAuth domain \\(chain ${CHAIN}\\), not to POLY_ADDRESS ${A}, nor under the platform's domains: sign ClobAuth \\{address ${A}, timestamp "\\d+", nonce 0\\}`),
  );
  expect(await l1(await l1Headers(alice, { nonce: '5' }).then((h) => ({ ...h, poly_nonce: '6' }))), 'auth_l1_signature', /nonce 6\}/);
  const badV = good.poly_signature!.slice(0, -2) + '1d';
  expect(await l1({ ...good, poly_signature: badV }), 'auth_l1_signature', /^L1 signature does not recover to any address: its last byte \(v\) is 0x1d, expected 1b or 1c/);
  const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const sig = good.poly_signature!;
  const highS = sig.slice(0, 66) + (N - BigInt('0x' + sig.slice(66, 130))).toString(16).padStart(64, '0') + (sig.endsWith('1b') ? '1c' : '1b');
  expect(await l1({ ...good, poly_signature: highS }), 'auth_l1_signature', /upper half of the curve order/);
  // A pool that cannot answer: the reason says what to sign, and the promise still resolves.
  const closed = new SigPool({ threads: 1 });
  await closed.ready;
  await closed.close();
  const e = createAuthExplainer({ keys, rules: AUTH_RULES, pool: closed, auth: config.auth, clock, paths: () => [] });
  expect(
    record(await e.l1(await l1Headers(alice, { chainId: 137 }))),
    'auth_l1_signature',
    new RegExp(`^L1 signature does not recover to POLY_ADDRESS ${A} under this exchange's ClobAuth domain \\(chain ${CHAIN}\\): sign ClobAuth .*; the signature pool could not be asked what it recovers to$`),
  );
});

test("an L1 flood with wrong signatures from one network cannot starve a wallet's own diagnosis from another", async () => {
  // The default rates, on a clock that does not move: only the flood's own spending counts.
  const e = createAuthExplainer({ keys, rules: AUTH_RULES, pool, auth: config.auth, clock, paths: () => [], budget: new DiagnosisBudget(DIAGNOSIS_RATES, () => 0) });
  const flood = await l1Headers(alice, { signer: bob });
  let busy = 0;
  for (let i = 0; i < 60; i++) {
    const r = record(await e.l1(flood, `198.51.100.${i}`));
    if (/diagnosis is busy/.test(r.text)) busy++;
  }
  assert.ok(busy >= 30, `${busy} of 60 said busy`);
  // Alice, from her own network, signed for the platform's chain: the domain is found and named.
  expect(record(await e.l1(await l1Headers(alice, { chainId: 137 }), '192.0.2.1')), 'auth_l1_signature', /it recovers to the address under the platform's mainnet \(Polygon, chain 137\)/);
});

// ---- user channel ------------------------------------------------------------------------------------------

test('the user channel: key, secret and passphrase mistakes', () => {
  const u = (auth: { apiKey: string; secret: string; passphrase: string }) => record(explainer.userChannel(auth));
  const t = { apiKey: trading.apiKey, secret: trading.secret, passphrase: trading.passphrase };
  expect(u({ ...t, apiKey: '00000000-0000-4000-8000-000000000000' }), 'auth_key', /^API key 00000000-0000-4000-8000-000000000000 is not known to this server/);
  expect(u({ ...t, apiKey: trading.passphrase }), 'auth_key', /^the apiKey value \(64 characters, not an API key id: a UUID\) is not known/);
  expect(u({ apiKey: revoked.apiKey, secret: revoked.secret, passphrase: revoked.passphrase }), 'auth_key', /is revoked since/);
  expect(u({ apiKey: builder.apiKey, secret: builder.secret, passphrase: builder.passphrase }), 'auth_key', /is a builder key: it proves no wallet on the user channel/);
  expect(u({ ...t, secret: '***' }), 'auth_hmac', /^the secret does not decode as base64 \(url-safe or standard, 3 characters arrived\)/);
  expect(u({ ...t, secret: keyBytes(trading.secret).toString('hex') }), 'auth_hmac', /^the secret was sent as hex: send it as issued \(base64url\)$/);
  expect(u({ ...t, secret: trading2.secret }), 'auth_hmac', new RegExp(`^the secret is API key ${trading2.apiKey}'s \\(a trading key of the same wallet\\), not API key ${trading.apiKey}'s`));
  expect(u({ ...t, secret: trading.passphrase, passphrase: trading.secret }), 'auth_hmac', /are swapped/);
  expect(u({ ...t, secret: Buffer.alloc(32, 1).toString('base64url') }), 'auth_hmac', /^the secret is not API key .*'s \(it decodes to 32 bytes, which are not this key's\)$/);
  // A wrong secret proves nothing: the passphrase is not judged to the caller, only to the key's wallet.
  const both = u({ ...t, secret: Buffer.alloc(32, 1).toString('base64url'), passphrase: 'p' });
  expect(both, 'auth_hmac', /^the secret is not API key .*'s \(it decodes to 32 bytes, which are not this key's\)$/);
  assert.match(both.owner!.text, /\(nor is the passphrase\)$/);
  assert.match(u({ ...t, secret: keyBytes(trading.secret).toString('hex'), passphrase: 'p' }).text, /\(nor is the passphrase\)$/, 'a secret sent as hex proves it');
  expect(u({ ...t, passphrase: 'p' }), 'auth_passphrase', /^the passphrase is not API key .*'s \(1 characters arrived/);
  expect(u({ ...t, passphrase: readonly.passphrase }), 'auth_passphrase', new RegExp(`^the passphrase is API key ${readonly.apiKey}'s \\(a read-only key of the same wallet\\)`));
});

// ---- walletOf ----------------------------------------------------------------------------------------------

test("walletOf: the key's wallet (any state, either family), else a well-formed address header", () => {
  const l2h = (creds: Credentials, address: string) => l2Headers(creds, address, 'GET', '/x', undefined);
  assert.equal(explainer.walletOf(l2h(trading, bob.address)), A, "the key's, not the header's");
  assert.equal(explainer.walletOf(l2h(revoked, bob.address)), A);
  assert.equal(explainer.walletOf(l2Headers(builder, '', 'GET', '/x', undefined, {}, 'builder')), A);
  assert.equal(explainer.walletOf({ ...l2h(trading, bob.address), poly_api_key: 'nope' }), B);
  assert.equal(explainer.walletOf({ 'poly-address': bob.address }), B);
  assert.equal(explainer.walletOf({ poly_address: '0x12' }), undefined);
  assert.equal(explainer.walletOf({}), undefined);
});

// ---- what no reason ever holds -----------------------------------------------------------------------------

test('no reason holds a secret, a passphrase or an expected HMAC, in any encoding, nor a 12-character piece of one', () => {
  assert.ok(produced.length >= 90, `${produced.length} reasons`);
  assert.ok(expectedDigests.length >= 60, `${expectedDigests.length} expected HMACs`);
  const forbidden: string[] = [];
  const encodings = (b: Buffer) => [b.toString('hex'), b.toString('base64'), b.toString('base64url'), b64url(b)];
  for (const c of [trading, trading2, readonly, builder, revoked, bobs, deriveCredentials(MASTER, A, '7')]) {
    const m = keys.forDiagnosis(c.apiKey)!;
    forbidden.push(c.secret, c.passphrase, ...encodings(m.hmacKey), ...encodings(Buffer.from(c.secret)));
  }
  for (const d of expectedDigests) forbidden.push(...encodings(d));
  for (const r of produced) {
    // What the caller is told, and what the key's wallet reads.
    for (const text of [r.text, r.owner?.text ?? '']) {
      for (const s of forbidden) {
        for (let i = 0; i + 12 <= s.length; i++) {
          const piece = s.slice(i, i + 12);
          assert.ok(!text.includes(piece), `reason holds ${piece} of a secret: ${text}`);
        }
      }
    }
  }
  assert.ok(!new RegExp(esc(trading.secret)).test(produced.map((r) => r.text).join('\n')));
});
