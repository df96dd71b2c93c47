/**
 * What explaining refusals costs (issue 34, edge/refusals/): the same signed requests through one l2 route's
 * pipeline (pipeline.ts processorFor, the stages of a real route: sign, admit, dispatch) with
 * `auth.explainRefusals` on and off, and the order checks (order-check.ts checkOrders, its signature recovered
 * on a one-thread pool) with and without the diagnosis.
 *
 * Workload: one wallet with one API key in a temporary LMDB store, the service's own Authenticator and
 * explainer (auth.ts createAuthServices); a GET route answering a constant. Tasks, each on vs off:
 *   - accepted: a valid signed request (the accept path: must cost the same);
 *   - stale timestamp: refused by the headers (a header diagnosis: a few look-ups);
 *   - bad HMAC: signed with a wrong secret, every header right: the HMAC diagnosis tries its variants (at most
 *     300 HMACs). Its budget is raised for the bench so every iteration pays the full diagnosis, as the first 50
 *     refusals of each second do; past the budget a refusal costs what the "off" line shows plus a look-up;
 *   - order signed for the platform's mainnet: checkOrders refuses it after recovery; "on" also runs the
 *     signature diagnosis on the pool (the second candidate matches). The budget is raised likewise.
 * The rate limiter is disabled (a refusal is charged to the client address otherwise, and would soon be a 429,
 * which is never diagnosed).
 *
 * Self-check: every accepted request answers 200 without the header, every refused one the contract's exact
 * body, with the header when on and without it when off; the order is refused with `invalid order signature`
 * and, when on, a reason naming chain 137.
 *
 * Run alone: npx tsx bench/edge/refusals.bench.ts
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { privateKeyToAccount } from 'viem/accounts';
import { AUTH_RULES, createAuthServices } from '../../src/edge/auth/auth.ts';
import type { Incoming } from '../../src/edge/http/http.ts';
import type { Outgoing } from '../../src/edge/http/answer.ts';
import { Metrics } from '../../src/edge/pipeline/metrics.ts';
import { processorFor } from '../../src/edge/pipeline/pipeline.ts';
import { replayKindOf, type Mounted } from '../../src/edge/pipeline/mounted.ts';
import { type RefusalDeps } from '../../src/edge/pipeline/ports.ts';
import { RateLimiter } from '../../src/edge/limits/rate-limit.ts';
import { createAuthExplainer } from '../../src/edge/refusals/auth.ts';
import { RefusalLog } from '../../src/edge/refusals/log.ts';
import { DiagnosisBudget } from '../../src/edge/refusals/budget.ts';
import { REFUSAL_HEADER } from '../../src/edge/refusals/reason.ts';
import type { AnyRoute } from '../../src/edge/pipeline/route.ts';
import { checkOrders, orderDomainsOf, type OrderCheckDeps } from '../../src/edge/auth/order-check.ts';
import { compileRoute } from '../../src/edge/pipeline/validate.ts';
import { openStore } from '../../src/journal/env.ts';
import { systemClock } from '../../src/runtime/clock.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';

const PK = `0x${'5a'.repeat(32)}` as const;
const UNAUTHORIZED = JSON.stringify({ error: 'Unauthorized/Invalid api key' });
const TOKEN = '1234567890';
const ZERO32 = `0x${'0'.repeat(64)}` as const;
const UNBOUNDED = { perSecond: 1e15, burst: 1e15 };
const LOTS = { budget: new DiagnosisBudget({ network: UNBOUNDED, wallet: UNBOUNDED, all: UNBOUNDED }) };

export default async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pm-refusals-bench-'));
  const config = testConfig({ dataDir: dir, auth: { signatureThreads: 1, masterKey: '7e'.repeat(32), inlineSignatures: { maxOrders: 0, belowUtilization: 0 } } });
  const store = openStore({ dataDir: dir });
  const auth = createAuthServices({ config, store, clock: systemClock, log: silentLogger });
  await auth.pool.ready;
  const account = privateKeyToAccount(PK);
  const address = account.address.toLowerCase();
  const creds = await auth.keys.create(address, '0');

  const route: AnyRoute = { method: 'GET', path: '/data/orders', group: 'trading', auth: 'l2', summary: '', handler: () => ({ ok: true }) };
  const metrics = new Metrics(false);
  const mounted: Mounted = { route, compiled: compileRoute(route), buckets: [], walletBuckets: [], replay: replayKindOf(route), label: route.path, metrics: metrics.route('GET', route.path) };
  const explainer = createAuthExplainer({ keys: auth.keys, rules: AUTH_RULES, pool: auth.pool, auth: config.auth, clock: systemClock, paths: () => ['/data/orders', '/data/trades', '/order', '/orders'], ...LOTS });
  const refusals: RefusalDeps = { auth: explainer, log: new RefusalLog(() => true), count: (c) => metrics.refused(c) };
  const base = { adminToken: '', limiter: new RateLimiter({ enabled: false, maxCallers: 16, buckets: {} }), metrics, log: silentLogger, clock: systemClock, auth: auth.authenticator };
  const who = () => ({ ip: '127.0.0.1', key: 'ip:127.0.0.1' });
  const on = processorFor(mounted, { ...base, refusals }, who);
  const off = processorFor(mounted, base, who);

  const request = (secret: string, ageSeconds: number): Incoming => {
    const ts = String(Math.floor(Date.now() / 1000) - ageSeconds);
    const sig = createHmac('sha256', Buffer.from(secret, 'base64')).update(`${ts}GET/data/orders`).digest('hex');
    const headers = { poly_address: account.address, poly_api_key: creds.apiKey, poly_passphrase: creds.passphrase, poly_timestamp: ts, poly_signature: sig };
    return { method: 'GET', path: '/data/orders', query: '', headers, params: [], peer: '127.0.0.1', body: undefined, receivedAt: Date.now() };
  };
  const wrongSecret = Buffer.alloc(32, 9).toString('base64url');
  const answers = { accepted: [0, 0], stale: [0, 0], hmac: [0, 0] };
  const check = (out: Outgoing, kind: keyof typeof answers, explained: boolean) => {
    const ok = kind === 'accepted' ? out.status === 200 && out.headers?.[REFUSAL_HEADER] === undefined : out.status === 401 && out.body === UNAUTHORIZED && (out.headers?.[REFUSAL_HEADER] !== undefined) === explained;
    answers[kind][ok ? 0 : 1]!++;
  };
  // Requests are made per iteration (the timestamp must stay fresh); both sides pay the same for that.
  const sync = (p: typeof on, kind: keyof typeof answers, explained: boolean, secret: string, age: number) => () => check(p(request(secret, age)) as Outgoing, kind, explained);

  // The order: valid in form, signed for the platform's mainnet V2 exchange instead of this service's domain.
  const platform = { name: 'Polymarket CTF Exchange', version: '2', chainId: 137, verifyingContract: '0xE111180000d2663C0091e4f400237545B87B996B' as const };
  const message = { salt: 1n, maker: account.address, signer: account.address, tokenId: BigInt(TOKEN), makerAmount: 2_000_000n, takerAmount: 5_000_000n, side: 0, signatureType: 0, timestamp: 1_700_000_000_000n, metadata: ZERO32, builder: ZERO32 };
  const signature = await account.signTypedData({
    domain: platform,
    types: {
      Order: [
        { name: 'salt', type: 'uint256' }, { name: 'maker', type: 'address' }, { name: 'signer', type: 'address' }, { name: 'tokenId', type: 'uint256' },
        { name: 'makerAmount', type: 'uint256' }, { name: 'takerAmount', type: 'uint256' }, { name: 'side', type: 'uint8' }, { name: 'signatureType', type: 'uint8' },
        { name: 'timestamp', type: 'uint256' }, { name: 'metadata', type: 'bytes32' }, { name: 'builder', type: 'bytes32' },
      ],
    },
    primaryType: 'Order',
    message,
  });
  const submission = {
    order: { salt: '1', maker: account.address, signer: account.address, tokenId: TOKEN, makerAmount: '2000000', takerAmount: '5000000', side: 'BUY', signatureType: 0, timestamp: '1700000000000', metadata: ZERO32, builder: ZERO32, signature },
    owner: creds.apiKey,
    orderType: 'GTC',
  };
  const orderDeps = (explain: boolean): OrderCheckDeps => ({
    pool: auth.pool,
    domains: orderDomainsOf(config.auth),
    funders: auth.funders,
    clock: systemClock,
    market: (t) => (t === TOKEN ? { conditionId: `0x${'c1'.repeat(32)}`, negRisk: false } : undefined),
    explain,
    diagnoses: LOTS.budget,
  });
  const orders = { on: [0, 0], off: [0, 0] };
  const order = (explain: boolean) => async () => {
    const [r] = await checkOrders([submission], { apiKey: creds.apiKey, address }, orderDeps(explain));
    const ok = r !== undefined && !r.ok && r.error.message === 'invalid order signature' && (explain ? /chain 137/.test(r.error.reason?.text ?? '') : r.error.reason === undefined);
    orders[explain ? 'on' : 'off'][ok ? 0 : 1]!++;
  };

  const bench = new Bench({ name: 'refusals explained', time: 1_000, warmup: true, throws: true });
  bench.add('accepted, explain on', sync(on, 'accepted', true, creds.secret, 0));
  bench.add('accepted, explain off', sync(off, 'accepted', false, creds.secret, 0));
  bench.add('stale timestamp, explain on', sync(on, 'stale', true, creds.secret, 100));
  bench.add('stale timestamp, explain off', sync(off, 'stale', false, creds.secret, 100));
  bench.add('bad HMAC (wrong secret), explain on', sync(on, 'hmac', true, wrongSecret, 0));
  bench.add('bad HMAC (wrong secret), explain off', sync(off, 'hmac', false, wrongSecret, 0));
  bench.add('order signed for chain 137, explain on', order(true));
  bench.add('order signed for chain 137, explain off', order(false));
  try {
    await bench.run();
    console.table(bench.table());
    for (const [kind, [good, bad]] of Object.entries(answers)) if (bad !== 0 || good === 0) throw new Error(`${kind}: ${bad} wrong answers of ${good + bad}`);
    for (const [kind, [good, bad]] of Object.entries(orders)) if (bad !== 0 || good === 0) throw new Error(`order ${kind}: ${bad} wrong answers of ${good + bad}`);
    const median = (name: string) => {
      const r = bench.tasks.find((t) => t.name === name)!.result;
      if (r.state !== 'completed') throw new Error(`${name}: tinybench task ${r.state}`);
      return r.latency.p50! * 1000;
    };
    const pair = (what: string) => `${what}: median ${median(`${what}, explain on`).toFixed(1)} µs on, ${median(`${what}, explain off`).toFixed(1)} µs off (${(median(`${what}, explain on`) / median(`${what}, explain off`)).toFixed(2)}x)`;
    for (const what of ['accepted', 'stale timestamp', 'bad HMAC (wrong secret)', 'order signed for chain 137']) console.log(pair(what));
  } finally {
    await auth.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) await run();
