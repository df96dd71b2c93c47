/**
 * Every method of the platform's official V2 client (@polymarket/clob-client-v2, pinned) that talks to the
 * exchange, called unchanged against the service in the compatibility profile (config/clob-v2-compat.json),
 * in the order a bot would: keys (trading, read-only, builder), a second wallet's quotes, market data, scoring
 * and rewards, orders of every type, fills, reads, notifications, cancels, a heartbeat left to lapse, key
 * deletion. Values are asserted, not only shapes: a 0.40/0.60 book has mid 0.5 and spread 0.2, a fill shows
 * up as a notification, a silent heartbeat cancels.
 *
 * Coverage. Every method of ClobClient.prototype is wrapped (observing only: it calls the original) to
 * record that it ran; the last test lists the prototype and fails when a method that is not in LOCAL (each
 * with its reason) never ran, so a client upgrade that adds a method is noticed.
 *
 * Profile settings for a test that must not take minutes: heartbeats time out after 2 s, rewards are
 * sampled every second. Signers: viem WalletClients over the public Hardhat test keys #5, #6, #7 with a
 * transport that throws (the client never needs an RPC). Identical signed requests within one second are
 * one request (edge/pipeline/replays.ts): a mutating call repeated on purpose waits for the next second.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axios, { type AxiosResponse, type InternalAxiosRequestConfig } from 'axios';
import { ApiError, AssetType, ClobClient, OrderType, PriceHistoryInterval, Side, type ApiKeyCreds } from '@polymarket/clob-client-v2';
import { createWalletClient, custom, keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startApp, type App } from '../../src/node/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';

const KEY_A = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';
const KEY_B = '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e';
const KEY_C = '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356';
const ADMIN_TOKEN = 'surface-admin';
const CHAIN = 80002;
/** The rewards market: 86.4 a day, so the whole of its scoring liquidity for one second earns 0.001. */
const MARKET = keccak256(toHex('official client surface: rewards market'));
const DAILY_RATE = 86.4;
/** A market without rewards, resolved at the end (its participants hear of it). */
const OTHER = keccak256(toHex('official client surface: other market'));
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/**
 * Prototype methods that never reach the exchange, each with its reason. Everything else must run here.
 */
const LOCAL: Record<string, string> = {
  constructor: 'not a method',
  getOrderBookHash: 'hashes a book locally (called here and compared with the served hash all the same)',
  createExchangeV3OrderFromAmounts: "signs a V3 order locally, for the platform's V3 exchange (domain version 3): nothing is sent",
  canL1Auth: 'checks the constructor arguments',
  canL2Auth: 'checks the constructor arguments',
  isBuilderOrder: 'compares a builder code with zero',
  throwIfError: 'turns an answer with `error` into an ApiError',
  _isOrderVersionMismatch: 'reads an error text',
};

type Signer = ConstructorParameters<typeof ClobClient>[0]['signer'];

function signer(key: `0x${string}`) {
  const account = privateKeyToAccount(key);
  const wallet = createWalletClient({
    account,
    transport: custom({
      request: async ({ method }: { method: string }) => {
        throw new Error(`the client asked for an RPC (${method}); it must sign locally`);
      },
    }),
  });
  return { account, wallet: wallet as unknown as Signer, address: account.address.toLowerCase() };
}

const A = signer(KEY_A);
const B = signer(KEY_B);
const C = signer(KEY_C);

let app: App;
let dataDir: string;
let host: string;
let yes: string;
let no: string;
let otherYes: string;
const seen: { method: string; path: string; status: number }[] = [];
let interceptors: { request: number; response: number };
/** Prototype methods that ran, and the originals to restore. */
const called = new Set<string>();
const originals = new Map<string, unknown>();

const pathOf = (url: string | undefined) => new URL(url ?? '', 'http://x').pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nextSecond = () => sleep(1000 - (Date.now() % 1000) + 5);
const today = () => new Date().toISOString().slice(0, 10);

async function admin(method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(`${host}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  assert.equal(r.status, 200, `${path}: ${text}`);
  return JSON.parse(text);
}

const client = (s: { wallet: Signer }, creds?: ApiKeyCreds, builderCode?: string) =>
  new ClobClient({ host, chain: CHAIN, signer: s.wallet, creds, throwOnError: true, builderConfig: builderCode ? { builderCode } : undefined });

/** The ApiError status of a call that must fail. */
async function refused(p: Promise<unknown>): Promise<{ status: number | undefined; message: string }> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ApiError, `an ApiError, got ${String(e)}`);
    return { status: e.status, message: e.message };
  }
  assert.fail('the call was expected to fail');
}

/** The builder headers the platform's V1 client sends (POLY_BUILDER_*), signed here with node:crypto. */
function builderHeaders(creds: { key: string; secret: string; passphrase: string }, method: string, path: string, body = ''): Record<string, string> {
  const ts = String(Math.floor(Date.now() / 1000));
  const sig = createHmac('sha256', Buffer.from(creds.secret, 'base64')).update(ts + method + path + body).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
  return { POLY_BUILDER_API_KEY: creds.key, POLY_BUILDER_PASSPHRASE: creds.passphrase, POLY_BUILDER_TIMESTAMP: ts, POLY_BUILDER_SIGNATURE: sig };
}

before(async () => {
  const compat = JSON.parse(readFileSync(new URL('../../config/clob-v2-compat.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  dataDir = mkdtempSync(join(tmpdir(), 'pm-client-surface-'));
  app = await startApp(
    // The profile's trades settle after a delay (test/e2e/bot-day.test.ts follows them); here at once, so what is read is final.
    testConfig({ ...compat, sandbox: { trades: { minedDelayMs: 0, confirmedDelayMs: 0 } }, dataDir, demo: false, adminToken: ADMIN_TOKEN, http: { port: 0 }, heartbeats: { timeoutSeconds: 2 }, rewards: { sampleSeconds: 1 } }),
    { log: silentLogger },
  );
  host = `http://127.0.0.1:${app.port}`;

  const record = (method: string | undefined, url: string | undefined, status: number) => seen.push({ method: (method ?? 'get').toUpperCase(), path: pathOf(url), status });
  interceptors = {
    request: axios.interceptors.request.use((c: InternalAxiosRequestConfig) => c),
    response: axios.interceptors.response.use(
      (r: AxiosResponse) => {
        record(r.config.method, r.config.url, r.status);
        return r;
      },
      (e: { config?: InternalAxiosRequestConfig; response?: AxiosResponse }) => {
        record(e.config?.method, e.config?.url, e.response?.status ?? 0);
        return Promise.reject(e);
      },
    ),
  };
  // Observes which methods run; each still does exactly what it did.
  const proto = ClobClient.prototype as unknown as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(proto)) {
    const fn = proto[name];
    if (name === 'constructor' || typeof fn !== 'function') continue;
    originals.set(name, fn);
    proto[name] = function (this: unknown, ...args: unknown[]) {
      called.add(name);
      return (fn as (...a: unknown[]) => unknown).apply(this, args);
    };
  }

  const events = await admin('POST', '/admin/events', [
    {
      title: 'Official client surface',
      slug: 'official-client-surface',
      endDate: '2030-01-01T00:00:00Z',
      markets: [
        {
          question: 'Does every client method work here?',
          conditionId: MARKET,
          orderPriceMinTickSize: '0.01',
          orderMinSize: 5,
          rewardsMinSize: 10,
          rewardsMaxSpread: 15,
          clobRewards: [{ rewardsDailyRate: DAILY_RATE }],
        },
        { question: 'Is the other market resolved?', conditionId: OTHER, orderPriceMinTickSize: '0.01', orderMinSize: 5 },
      ],
    },
  ]);
  [yes, no] = JSON.parse(events[0].markets[0].clobTokenIds);
  otherYes = JSON.parse(events[0].markets[1].clobTokenIds)[0];
  for (const [w, amount] of [[A, '500'], [B, '500'], [C, '100']] as const) await admin('POST', `/admin/wallets/${w.account.address}/deposit`, { amount });
});

after(async () => {
  axios.interceptors.request.eject(interceptors.request);
  axios.interceptors.response.eject(interceptors.response);
  const proto = ClobClient.prototype as unknown as Record<string, unknown>;
  for (const [name, fn] of originals) proto[name] = fn;
  await app.stop(1000);
  rmSync(dataDir, { recursive: true, force: true });
});

let credsA: ApiKeyCreds;
let credsB: ApiKeyCreds;
let readonly: ApiKeyCreds;
let builder: { key: string; secret: string; passphrase: string; builderCode: string };
/** B's quotes: BUY YES 0.40 x 100, BUY NO 0.40 x 100 (YES's ask at 0.60), BUY YES 0.30 x 100 (too far to score). */
let quotes: { bid: string; ask: string; far: string };

test('health, time and version answer as the client reads them', { timeout: 30_000 }, async () => {
  const pub = new ClobClient({ host, chain: CHAIN, throwOnError: true });
  assert.equal(await pub.getOk(), 'OK');
  const t = await pub.getServerTime();
  assert.ok(Math.abs(t - Date.now() / 1000) < 5, `server time ${t}`);
  assert.equal(await pub.getVersion(), 2);
});

test('keys: trading (create, derive, list), closed-only status, read-only and builder keys', { timeout: 30_000 }, async () => {
  const l1 = client(A);
  credsA = await l1.createOrDeriveApiKey();
  assert.deepEqual(await l1.deriveApiKey(), credsA, 'derive answers the created credentials');
  // A used nonce: create answers 400, which createOrDeriveApiKey turns into a derive (sent in a later second:
  // the same L1 headers within one would be a replay of the first create, answered as it was).
  await nextSecond();
  assert.equal((await refused(l1.createApiKey())).status, 400);
  credsB = await client(B).createOrDeriveApiKey();

  const a = client(A, credsA);
  assert.deepEqual(await a.getApiKeys(), { apiKeys: [credsA.key] });
  assert.deepEqual(await a.getClosedOnlyMode(), { closed_only: false });

  const ro = await a.createReadonlyApiKey();
  assert.match(ro.apiKey, /^[0-9a-f-]{36}$/);
  const full = ro as unknown as { apiKey: string; secret: string; passphrase: string };
  readonly = { key: full.apiKey, secret: full.secret, passphrase: full.passphrase };
  assert.deepEqual(await a.getReadonlyApiKeys(), [readonly.key]);
  const valid = async (address: string, key: string) => (await (await fetch(`${host}/auth/validate-readonly-api-key?address=${address}&key=${key}`)).json()) as { valid: boolean };
  assert.deepEqual(await valid(A.account.address, readonly.key), { valid: true });
  assert.deepEqual(await valid(B.account.address, readonly.key), { valid: false }, "another wallet's key is not valid for it");
  assert.deepEqual(await valid(A.account.address, credsA.key), { valid: false }, 'a trading key is not a read-only key');

  builder = (await a.createBuilderApiKey()) as unknown as typeof builder;
  assert.match(builder.builderCode, /^0x[0-9a-f]{64}$/);
  const listed = await a.getBuilderApiKeys();
  assert.equal(listed.length, 1);
  assert.equal(listed[0]!.key, builder.key);
  assert.equal(listed[0]!.revokedAt, undefined);
});

test('a second wallet quotes, and the market data reads the 0.40/0.60 book: mid 0.5, spread 0.2', { timeout: 30_000 }, async () => {
  const b = client(B, credsB);
  const bid = await b.createAndPostOrder({ tokenID: yes, price: 0.4, size: 100, side: Side.BUY }, undefined, OrderType.GTC);
  const ask = await b.createAndPostOrder({ tokenID: no, price: 0.4, size: 100, side: Side.BUY }, undefined, OrderType.GTC);
  const far = await b.createAndPostOrder({ tokenID: yes, price: 0.3, size: 100, side: Side.BUY }, { tickSize: '0.01', negRisk: false }, OrderType.GTC);
  for (const r of [bid, ask, far]) assert.equal(r.status, 'live', JSON.stringify(r));
  quotes = { bid: bid.orderID, ask: ask.orderID, far: far.orderID };

  const pub = new ClobClient({ host, chain: CHAIN, throwOnError: true });
  const book = await pub.getOrderBook(yes);
  assert.deepEqual([book.bids, book.asks], [[{ price: '0.3', size: '100' }, { price: '0.4', size: '100' }], [{ price: '0.6', size: '100' }]]);
  const served = book.hash;
  assert.equal(await pub.getOrderBookHash(book), served, "the client's own hash of the book is the served one");
  const books = await pub.getOrderBooks([{ token_id: yes, side: Side.BUY }, { token_id: no, side: Side.SELL }]);
  assert.deepEqual(books.map((x) => x.asset_id), [yes, no]);
  assert.deepEqual(books[1]!.bids.at(-1), { price: '0.4', size: '100' }, "NO's own bid");

  assert.deepEqual(await pub.getMidpoint(yes), { mid: '0.5' });
  assert.deepEqual(await pub.getMidpoints([{ token_id: yes, side: Side.BUY }, { token_id: no, side: Side.BUY }]), { [yes]: '0.5', [no]: '0.5' });
  assert.deepEqual(await pub.getPrice(yes, 'BUY'), { price: '0.4' });
  assert.deepEqual(await pub.getPrices([{ token_id: yes, side: Side.BUY }]), { [yes]: { BUY: '0.4', SELL: '0.6' } });
  assert.deepEqual(await pub.getSpread(yes), { spread: '0.2' });
  assert.deepEqual(await pub.getSpreads([{ token_id: yes, side: Side.BUY }, { token_id: no, side: Side.SELL }]), { [yes]: '0.2', [no]: '0.2' });
  assert.deepEqual(await pub.getLastTradePrice(yes), { price: '', side: '' }, 'no trade yet');
  assert.deepEqual(await pub.getLastTradesPrices([{ token_id: yes, side: Side.BUY }]), [{ token_id: yes, price: '', side: '' }]);
  assert.equal(await pub.calculateMarketPrice(yes, Side.BUY, 5), 0.6, 'a 5 USDC market BUY walks to the 0.60 ask');

  assert.equal(await pub.getTickSize(yes), '0.01');
  assert.equal(await pub.getNegRisk(yes), false);
  assert.equal(await pub.getFeeRateBps(yes), 0);
  assert.equal(await pub.getFeeExponent(yes), 0);
  const info = await pub.getClobMarketInfo(MARKET);
  assert.deepEqual(info.t.map((t) => t.t), [yes, no]);
});

test('market lists: one market, the simplified and sampling forms; an unknown condition id is 404', { timeout: 30_000 }, async () => {
  const pub = new ClobClient({ host, chain: CHAIN, throwOnError: true });
  const m = await pub.getMarket(MARKET);
  assert.equal(m.condition_id, MARKET.toLowerCase());
  assert.deepEqual(m.tokens.map((t: { token_id: string; price: number }) => [t.token_id, t.price]), [[yes, 0.5], [no, 0.5]], 'prices are the live midpoints');
  assert.deepEqual(m.rewards, { rates: [{ asset_address: ZERO_ADDRESS, rewards_daily_rate: DAILY_RATE }], min_size: 10, max_spread: 15 });
  assert.equal((await refused(pub.getMarket(keccak256(toHex('no such market'))))).status, 404);

  const markets = await pub.getMarkets();
  assert.deepEqual([markets.count, markets.next_cursor], [2, 'LTE=']);
  const simplified = await pub.getSimplifiedMarkets();
  assert.deepEqual(simplified.data.map((x) => x.condition_id), [MARKET.toLowerCase(), OTHER.toLowerCase()]);
  assert.deepEqual(Object.keys(simplified.data[0]).sort(), ['accepting_orders', 'active', 'archived', 'closed', 'condition_id', 'rewards', 'tokens']);
  assert.equal(simplified.next_cursor, 'LTE=');
  const sampling = await pub.getSamplingSimplifiedMarkets();
  assert.deepEqual(sampling.data.map((x) => x.condition_id), [MARKET.toLowerCase()], 'only the market with rewards');
  assert.deepEqual((await pub.getSamplingMarkets()).data.map((x) => x.condition_id), [MARKET.toLowerCase()]);
});

test('scoring and rewards: the quotes within 15 cents of the mid score, and earn the daily rate for the seconds they rest', { timeout: 30_000 }, async () => {
  const b = client(B, credsB);
  assert.deepEqual(await b.isOrderScoring({ order_id: quotes.bid }), { scoring: true }, '10 cents from the mid, 100 >= 10 tokens');
  assert.deepEqual(await b.areOrdersScoring({ orderIds: [quotes.bid, quotes.ask, quotes.far] }), { [quotes.bid]: true, [quotes.ask]: true, [quotes.far]: false });
  // Another wallet's order never scores for the caller.
  assert.deepEqual(await client(A, credsA).isOrderScoring({ order_id: quotes.bid }), { scoring: false });

  const pub = new ClobClient({ host, chain: CHAIN, throwOnError: true });
  const current = await pub.getCurrentRewards();
  assert.deepEqual(current.map((r) => [r.condition_id, r.rewards_max_spread, r.rewards_min_size]), [[MARKET.toLowerCase(), 15, 10]]);
  assert.deepEqual(current[0]!.rewards_config.map((c) => [c.asset_address, c.rate_per_day]), [[ZERO_ADDRESS, DAILY_RATE]]);
  assert.deepEqual(await pub.getRawRewardsForMarket(MARKET), current);
  assert.deepEqual(await pub.getRawRewardsForMarket(OTHER), [], 'a market without a program');

  assert.deepEqual(await b.getRewardPercentages(), { [MARKET.toLowerCase()]: 100 }, 'B holds all the scoring liquidity');
  const start = Date.now();
  await sleep(2300);
  const date = today();
  // The sampler accrues every second: the three reads below are taken again until no sample landed between them.
  let earned = await b.getEarningsForUserForDay(date);
  let totals = await b.getTotalEarningsForUserForDay(date);
  let markets = await b.getUserEarningsAndMarketsConfig(date);
  for (let tries = 0; tries < 20 && !(totals.length === 1 && markets.length === 1 && earned.length === 1 && totals[0]!.earnings === earned[0]!.earnings && markets[0]!.earnings[0]!.earnings === earned[0]!.earnings); tries++) {
    earned = await b.getEarningsForUserForDay(date);
    totals = await b.getTotalEarningsForUserForDay(date);
    markets = await b.getUserEarningsAndMarketsConfig(date);
  }
  assert.equal(earned.length, 1, JSON.stringify(earned));
  const e = earned[0]!;
  assert.deepEqual([e.condition_id, e.asset_address, e.maker_address, e.asset_rate], [MARKET.toLowerCase(), ZERO_ADDRESS, B.address, 1]);
  // One second of all the scoring liquidity earns 86.4 / 86400 = 0.001: B earned that per sample.
  const samples = e.earnings / 0.001;
  assert.ok(samples >= 1 && samples <= (Date.now() - start) / 1000 + 1, `earnings ${e.earnings}`);
  assert.ok(Math.abs(samples - Math.round(samples)) < 1e-6, `a whole number of samples: ${samples}`);
  assert.deepEqual(totals.map((t) => [t.asset_address, t.maker_address]), [[ZERO_ADDRESS, B.address]]);
  assert.ok(Math.abs(totals[0]!.earnings - e.earnings) < 1e-12);
  assert.equal(markets.length, 1);
  assert.equal(markets[0]!.condition_id, MARKET.toLowerCase());
  assert.ok(markets[0]!.earning_percentage > 0 && markets[0]!.earning_percentage <= 100);
  assert.ok(Math.abs(markets[0]!.earnings[0]!.earnings - e.earnings) < 1e-12);
  // Scores: 100 tokens at 10 of 15 cents, twice: 2 * (5/15)^2 * 100 on average over the seconds sampled.
  assert.ok(markets[0]!.market_competitiveness > 0 && markets[0]!.market_competitiveness <= (2 * 100) / 9 + 1e-9);

  // A wallet that never scored: an honest zero.
  const a = client(A, credsA);
  assert.deepEqual(await a.getEarningsForUserForDay(date), []);
  assert.deepEqual(await a.getTotalEarningsForUserForDay(date), [{ date, asset_address: ZERO_ADDRESS, maker_address: A.address, earnings: 0, asset_rate: 1 }]);
  assert.deepEqual(await a.getRewardPercentages(), {});
  assert.equal((await a.getUserEarningsAndMarketsConfig(date))[0]!.earnings[0]!.earnings, 0);
});

let fak: string;
let fok: string;
let gtc: string;
let gtd: string;
let gtdExpiration: number;
let batch: string[];

test('orders of every type, attributed to a builder code: FAK and FOK fill against the quotes, GTC and GTD rest', { timeout: 30_000 }, async () => {
  const a = client(A, credsA, builder.builderCode);
  // FOK market BUY of 6 USDC at the 0.60 ask: 10 YES (the builder fee look-up is the client's own).
  const bought = await a.createAndPostMarketOrder({ tokenID: yes, amount: 6, side: Side.BUY, orderType: OrderType.FOK }, undefined, OrderType.FOK);
  assert.deepEqual([bought.success, bought.status, bought.makingAmount, bought.takingAmount], [true, 'matched', '6', '10']);
  assert.equal(bought.transactionsHashes?.length, 1, 'the client resolved the fill to its transaction hash through GET /data/trades');
  fok = bought.orderID;
  assert.ok(seen.some((s) => s.path === `/fees/builder-fees/${builder.builderCode}` && s.status === 200), 'the client read the builder fee');
  // Sized to a balance, a BUY holds back the market's and the builder's taker fees (the client's private
  // getBuilderTakerFeeRate and adjustBuyAmountForBalance): both are 0 here, so the amount stands.
  const sized = await a.createMarketOrder({ tokenID: yes, amount: 6, side: Side.BUY, orderType: OrderType.FOK, userUSDCBalance: 100 });
  assert.deepEqual([sized.makerAmount, sized.builder], ['6000000', builder.builderCode]);

  // FAK market SELL of 5 YES into the 0.40 bid.
  const sold = await a.createAndPostMarketOrder({ tokenID: yes, amount: 5, side: Side.SELL, orderType: OrderType.FAK }, undefined, OrderType.FAK);
  assert.deepEqual([sold.status, sold.makingAmount, sold.takingAmount], ['matched', '5', '2']);
  fak = sold.orderID;

  const live = await a.createAndPostOrder({ tokenID: yes, price: 0.45, size: 10, side: Side.BUY }, undefined, OrderType.GTC);
  assert.equal(live.status, 'live');
  gtc = live.orderID;
  gtdExpiration = Math.floor(Date.now() / 1000) + 3600;
  const dated = await a.createAndPostOrder({ tokenID: yes, price: 0.44, size: 10, side: Side.BUY, expiration: gtdExpiration }, undefined, OrderType.GTD);
  assert.equal(dated.status, 'live');
  gtd = dated.orderID;
  const one = await a.createOrder({ tokenID: yes, price: 0.42, size: 10, side: Side.BUY });
  const two = await a.createOrder({ tokenID: yes, price: 0.41, size: 10, side: Side.BUY });
  const posted = await a.postOrders([
    { order: one, orderType: OrderType.GTC },
    { order: two, orderType: OrderType.GTC },
  ]);
  assert.deepEqual(posted.map((p) => p.status), ['live', 'live']);
  const single = await a.postOrder(await a.createOrder({ tokenID: yes, price: 0.43, size: 10, side: Side.BUY }), OrderType.GTC, true);
  assert.equal(single.status, 'live', 'post-only, below the ask');
  batch = [...posted.map((p) => p.orderID), single.orderID];

  // The platform's V1 order (the client still builds one on request): signed locally after the fee-rate
  // look-up, and refused here, where orders are verified as V2.
  const v1 = await a.createOrder({ tokenID: yes, price: 0.2, size: 10, side: Side.BUY }, { version: 1 });
  assert.equal((v1 as { feeRateBps?: string }).feeRateBps, '0');
  const refusedV1 = await refused(a.postOrder(v1, OrderType.GTC));
  assert.equal(refusedV1.status, 400);
});

test('reads: orders in the client\'s OpenOrder, trades, builder trades, live activity, balances, history, pre-migration orders', { timeout: 30_000 }, async () => {
  const a = client(A, credsA);
  const order = await a.getOrder(gtc);
  assert.deepEqual([order.id, order.status, order.side, order.price, order.original_size, order.size_matched, order.order_type, order.maker_address], [gtc, 'LIVE', 'BUY', '0.45', '10', '0', 'GTC', A.address]);
  const open = await a.getOpenOrders({ market: MARKET });
  assert.deepEqual(open.map((o) => o.id).sort(), [gtc, gtd, ...batch].sort());
  assert.deepEqual((await a.getOpenOrders({ id: gtd })).map((o) => [o.id, o.order_type, o.expiration]), [[gtd, 'GTD', String(gtdExpiration)]]);
  assert.deepEqual(await a.getPreMigrationOrders(), []);

  const trades = await a.getTrades({ market: MARKET });
  assert.deepEqual(trades.map((t) => [t.taker_order_id, t.side, t.size, t.price, t.trader_side]), [[fok, 'BUY', '10', '0.6', 'TAKER'], [fak, 'SELL', '5', '0.4', 'TAKER']]);
  const paged = await a.getTradesPaginated({ market: MARKET });
  assert.deepEqual([paged.trades.length, paged.next_cursor, paged.count], [2, 'LTE=', 2]);

  const bt = await a.getBuilderTrades({ builder_code: builder.builderCode });
  assert.deepEqual(bt.trades.map((t) => [t.takerOrderHash, t.builderCode, t.side, t.size, t.sizeUsdc, t.price, t.maker]), [
    [fok, builder.builderCode, 'BUY', '10', '6', '0.6', A.address],
    [fak, builder.builderCode, 'SELL', '5', '2', '0.4', A.address],
  ]);
  assert.equal(bt.next_cursor, 'LTE=');

  const activity = await a.getMarketTradesEvents(MARKET);
  assert.deepEqual(activity.map((x) => [x.event_type, x.side, x.size, x.price, x.outcome, x.outcome_index, x.user.address]), [
    ['trade', 'SELL', '5', '0.4', 'Yes', 0, A.address],
    ['trade', 'BUY', '10', '0.6', 'Yes', 0, A.address],
  ]);
  assert.equal(activity[0]!.market.question, 'Does every client method work here?');

  // 500 - 6 (FOK) + 2 (FAK) - 0.45/0.44/0.42/0.41/0.43 x 10 resting.
  const usdc = await a.getBalanceAllowance({ asset_type: AssetType.COLLATERAL });
  assert.equal(usdc.balance, String(496_000_000 - 21_500_000));
  assert.equal(Object.values(usdc.allowances)[0], usdc.balance);
  assert.deepEqual(await a.updateBalanceAllowance({ asset_type: AssetType.CONDITIONAL, token_id: yes }), await a.getBalanceAllowance({ asset_type: AssetType.CONDITIONAL, token_id: yes }));
  assert.equal((await a.getBalanceAllowance({ asset_type: AssetType.CONDITIONAL, token_id: yes })).balance, '5000000');

  const history = (await a.getPricesHistory({ market: yes, interval: PriceHistoryInterval.ONE_HOUR, fidelity: 1 })) as unknown as { history: { t: number; p: number }[] };
  assert.ok(history.history.length > 0 && history.history.every((h) => h.p > 0 && h.p < 1));
});

test('notifications: a fill is told to both parties; dropped ones are gone; a resolution reaches the participants', { timeout: 30_000 }, async () => {
  const a = client(A, credsA);
  const mine = await a.getNotifications();
  const fills = mine.filter((n) => n.type === 2).map((n) => [n.payload.order_id, n.payload.trader_side, n.payload.size, n.payload.price]);
  assert.deepEqual(fills, [[fok, 'TAKER', '10', '0.6'], [fak, 'TAKER', '5', '0.4']]);
  assert.ok(mine.every((n) => n.owner === A.address));
  const b = client(B, credsB);
  const bFills = (await b.getNotifications()).filter((n) => n.type === 2).map((n) => [n.payload.order_id, n.payload.trader_side]);
  assert.deepEqual(bFills, [[quotes.ask, 'MAKER'], [quotes.bid, 'MAKER']]);

  const first = (mine[0] as unknown as { id: string }).id;
  await a.dropNotifications({ ids: [first] });
  const left = await a.getNotifications();
  assert.equal(left.length, mine.length - 1);
  assert.ok(!left.some((n) => (n as unknown as { id: string }).id === first));

  // C trades the other market, which then resolves: C hears of the resolution (and of nothing else).
  const c = client(C, await client(C).createOrDeriveApiKey());
  await c.createAndPostOrder({ tokenID: otherYes, price: 0.5, size: 10, side: Side.BUY }, undefined, OrderType.GTC);
  await admin('POST', `/admin/markets/${OTHER}/resolve`, { winningOutcomeIndex: 0 });
  const told = await c.getNotifications();
  assert.deepEqual(
    told.map((n) => [n.type, n.payload.reason ?? n.payload.winning_asset_id]),
    [[1, 'MARKET_RESOLVED'], [4, otherYes]],
    'its open order was canceled by the resolution, then the market resolved',
  );
  await c.dropNotifications();
  assert.deepEqual(await c.getNotifications(), [], 'no ids: every notification dropped');
});

test('a read-only key reads the wallet (orders, trades, balances, notifications, rewards) and is refused 401 where anything changes', { timeout: 30_000 }, async () => {
  const ro = client(A, readonly);
  const full = client(A, credsA);
  assert.deepEqual(await ro.getOpenOrders(), await full.getOpenOrders());
  assert.deepEqual((await ro.getTrades()).map((t) => t.id), (await full.getTrades()).map((t) => t.id));
  assert.deepEqual(await ro.getBalanceAllowance({ asset_type: AssetType.COLLATERAL }), await full.getBalanceAllowance({ asset_type: AssetType.COLLATERAL }));
  assert.deepEqual(await ro.getNotifications(), await full.getNotifications());
  assert.deepEqual(await ro.getClosedOnlyMode(), { closed_only: false });
  assert.deepEqual(await ro.isOrderScoring({ order_id: gtc }), { scoring: true }, "A's 0.45 bid, 10 tokens, 5.5 cents from the mid");
  assert.ok(Array.isArray(await ro.getTotalEarningsForUserForDay(today())));

  const denied: [string, () => Promise<unknown>][] = [
    ['createAndPostOrder', () => ro.createAndPostOrder({ tokenID: yes, price: 0.3, size: 10, side: Side.BUY }, { tickSize: '0.01', negRisk: false }, OrderType.GTC)],
    ['postOrders', () => ro.postOrders([])],
    ['cancelOrder', () => ro.cancelOrder({ orderID: gtc })],
    ['cancelOrders', () => ro.cancelOrders([gtc])],
    ['cancelMarketOrders', () => ro.cancelMarketOrders({ market: MARKET })],
    ['cancelAll', () => ro.cancelAll()],
    ['postHeartbeat', () => ro.postHeartbeat()],
    ['dropNotifications', () => ro.dropNotifications()],
    ['createReadonlyApiKey', () => ro.createReadonlyApiKey()],
    ['getReadonlyApiKeys', () => ro.getReadonlyApiKeys()],
    ['createBuilderApiKey', () => ro.createBuilderApiKey()],
    ['getApiKeys', () => ro.getApiKeys()],
    ['deleteApiKey', () => ro.deleteApiKey()],
  ];
  for (const [name, call] of denied) assert.equal((await refused(call())).status, 401, name);
  assert.equal((await full.getOrder(gtc)).status, 'LIVE', 'nothing was canceled');
});

test('a builder key signs the builder headers: /builder/trades lists its builder\'s trades; it cannot sign L2; revocation', { timeout: 30_000 }, async () => {
  const get = (path: string, headers: Record<string, string>) => fetch(`${host}${path}`, { headers });
  const signed = await get('/builder/trades', builderHeaders(builder, 'GET', '/builder/trades'));
  assert.equal(signed.status, 200);
  const rows = ((await signed.json()) as { data: { takerOrderHash: string }[] }).data;
  assert.deepEqual(rows.map((r) => r.takerOrderHash), [fok, fak], "without builder_code: the key's own builder trades");
  const other = `0x${'ab'.repeat(32)}`;
  assert.equal((await get(`/builder/trades?builder_code=${other}`, builderHeaders(builder, 'GET', '/builder/trades'))).status, 400, "another builder's code");
  assert.equal((await get('/builder/trades', builderHeaders({ ...builder, secret: readonly.secret }, 'GET', '/builder/trades'))).status, 401, 'a bad signature');

  // A builder key as an L2 key: refused, so are trading and read-only keys in the builder headers.
  const asL2 = client(A, { key: builder.key, secret: builder.secret, passphrase: builder.passphrase });
  assert.equal((await refused(asL2.getOpenOrders())).status, 401);
  const tradingAsBuilder = builderHeaders({ key: credsA.key, secret: credsA.secret, passphrase: credsA.passphrase }, 'GET', '/builder/trades');
  assert.equal((await get('/builder/trades', tradingAsBuilder)).status, 401);

  // Revoked with its own builder headers (the V1 way), then the V2 client's revoke (a trading key) takes the rest.
  const second = (await client(A, credsA).createBuilderApiKey()) as unknown as typeof builder;
  const del = await fetch(`${host}/auth/builder-api-key`, { method: 'DELETE', headers: builderHeaders(second, 'DELETE', '/auth/builder-api-key') });
  assert.equal(del.status, 200);
  assert.equal((await get('/builder/trades', builderHeaders(second, 'GET', '/builder/trades'))).status, 401, 'revoked');
  assert.equal((await get('/builder/trades', builderHeaders(builder, 'GET', '/builder/trades'))).status, 200, 'the other key still works');
  assert.equal(await client(A, credsA).revokeBuilderApiKey(), 'OK');
  assert.equal((await get('/builder/trades', builderHeaders(builder, 'GET', '/builder/trades'))).status, 401);
  const keys = await client(A, credsA).getBuilderApiKeys();
  assert.deepEqual(keys.map((k) => [k.key, typeof k.revokedAt]), [[builder.key, 'string'], [second.key, 'string']]);
});

test('cancels of every kind; each canceled order is told', { timeout: 30_000 }, async () => {
  const a = client(A, credsA);
  assert.deepEqual(await a.cancelOrder({ orderID: gtc }), { canceled: [gtc], not_canceled: {} });
  assert.deepEqual(await a.cancelOrders([batch[0]!]), { canceled: [batch[0]], not_canceled: {} });
  assert.deepEqual(await a.cancelMarketOrders({ asset_id: yes }), { canceled: [gtd, batch[1], batch[2]], not_canceled: {} });
  assert.deepEqual(await a.cancelAll(), { canceled: [], not_canceled: {} });
  assert.deepEqual(await a.getOpenOrders(), []);
  const told = (await a.getNotifications()).filter((n) => n.type === 1).map((n) => [n.payload.order_id, n.payload.reason, n.payload.size_canceled]);
  assert.deepEqual(told, [gtc, batch[0], gtd, batch[1], batch[2]].map((id) => [id, 'USER', '10']));
});

test('a heartbeat started and left silent cancels the wallet\'s open orders; its id is then refused', { timeout: 30_000 }, async () => {
  const b = client(B, credsB);
  const { heartbeat_id: id } = await b.postHeartbeat();
  assert.match(id, /^[0-9a-f-]{36}$/);
  await sleep(1200);
  assert.deepEqual(await b.postHeartbeat(id), { heartbeat_id: id }, 'continued within the timeout');
  assert.equal((await b.getOpenOrders()).length, 3, 'the quotes still rest');
  await sleep(2600);
  assert.deepEqual(await b.getOpenOrders(), [], 'silent for longer than 2 s: every open order canceled');
  const canceled = (await b.getNotifications()).filter((n) => n.type === 1).map((n) => n.payload.order_id).sort();
  assert.deepEqual(canceled, [quotes.bid, quotes.ask, quotes.far].sort());
  const stale = await refused(b.postHeartbeat(id));
  assert.equal(stale.status, 400);
  assert.match(stale.message, /invalid heartbeat id/);
});

test('key deletion: the read-only key, then the trading key itself', { timeout: 30_000 }, async () => {
  const a = client(A, credsA);
  assert.equal(await a.deleteReadonlyApiKey(readonly.key), true);
  await nextSecond();
  assert.equal(await a.deleteReadonlyApiKey(readonly.key), false, 'already gone');
  assert.deepEqual(await a.getReadonlyApiKeys(), []);
  assert.equal((await refused(client(A, readonly).getOpenOrders())).status, 401);
  assert.equal(await a.deleteApiKey(), 'OK');
  assert.equal((await refused(a.getOpenOrders())).status, 401);
});

test('every prototype method of the client that talks to the exchange ran (a new one fails here until it is exercised)', () => {
  const names = Object.getOwnPropertyNames(ClobClient.prototype);
  for (const local of Object.keys(LOCAL)) assert.ok(names.includes(local), `LOCAL names ${local}, which the client no longer has`);
  const missing = names.filter((n) => !(n in LOCAL) && !called.has(n));
  assert.deepEqual(missing, [], 'methods that talk to the exchange and were never called');
});
