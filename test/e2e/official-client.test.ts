/**
 * The platform's official V2 client (@polymarket/clob-client-v2, pinned in package.json), unchanged,
 * against the service in the compatibility profile (config/clob-v2-compat.json: the client's V2 order
 * domain and exchange contracts on chain 80002): create or derive an API key, read a book, post a signed
 * GTC order, read it, cancel it; then market orders: a second wallet rests liquidity through the client,
 * and the client builds and posts FOK market BUYs against it, one for a USDC amount and one sized to the
 * whole balance (the client holds back the fee from /clob-markets' fee curve); and a neg-risk market, where
 * both sides sign for the neg-risk exchange and a FAK market BUY larger than the book fills what rests and
 * kills the rest. Every look-up the client makes before it signs (/version, /tick-size, /neg-risk,
 * /markets-by-token, /clob-markets, /book) goes to the real service; nothing is primed or stubbed, and the
 * test asserts that those look-ups were made and answered 200.
 *
 * Header names: the client sends `POLY_ADDRESS`, `POLY_API_KEY`, ... and they reach the service as sent.
 * A request interceptor on the axios instance the client itself imports (the package has no nested copy
 * of axios, so `import axios` here is the same module instance) only observes: it records the names, and
 * the test checks that the signed requests carried the underscore spelling.
 *
 * Signers: viem WalletClients over the public Hardhat/Anvil test keys #0 (limit orders), #1 (maker), #2
 * (market-order taker), #4 and #3 (neg-risk maker and taker), with a transport that throws: the client must
 * never need an RPC.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axios, { type AxiosResponse, type InternalAxiosRequestConfig } from 'axios';
import { ClobClient, OrderType, Side, AssetType } from '@polymarket/clob-client-v2';
import { createWalletClient, custom, keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startApp, type App } from '../../src/node/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';

/** Hardhat/Anvil accounts #0..#4: published test keys (shared/reference/official-client.md, Appendix A). */
const HARDHAT_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const HARDHAT_1 = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const HARDHAT_2 = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a';
const HARDHAT_3 = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6';
const HARDHAT_4 = '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a';
const ADMIN_TOKEN = 'official-client-admin';
const CONDITION_ID = keccak256(toHex('official client e2e market'));
/** The market-order market: a 2% taker fee, so the fee curve the client reads matters. */
const FEE_CONDITION_ID = keccak256(toHex('official client e2e market orders'));
const TAKER_FEE_BPS = 200;

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
  return { account, wallet: wallet as unknown as Signer };
}

const { account, wallet } = signer(HARDHAT_0);
const maker = signer(HARDHAT_1);
const taker = signer(HARDHAT_2);
const negRiskMaker = signer(HARDHAT_4);
const negRiskTaker = signer(HARDHAT_3);

interface Seen {
  method: string;
  path: string;
  status: number;
}

let app: App;
let dataDir: string;
let host: string;
let interceptors: { request: number; response: number };
const seen: Seen[] = [];
/** POLY_* header names seen on the client's requests, exactly as it spelled them. */
const sentPolyNames = new Set<string>();
/** Outcome 0's token, as the catalog import answered it. */
let tokenID: string;
/** Both tokens of the market-order market. */
let feeTokens: [string, string];

const pathOf = (url: string | undefined) => new URL(url ?? '', 'http://x').pathname;

async function admin(path: string, body: unknown): Promise<unknown> {
  const r = await fetch(`${host}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  assert.equal(r.status, 200, `${path}: ${text}`);
  return JSON.parse(text) as unknown;
}

async function clientOf(s: { wallet: Signer }): Promise<ClobClient> {
  const creds = await new ClobClient({ host, chain: 80002, signer: s.wallet }).createOrDeriveApiKey();
  return new ClobClient({ host, chain: 80002, signer: s.wallet, creds, throwOnError: true });
}

before(async () => {
  const compat = JSON.parse(readFileSync(new URL('../../config/clob-v2-compat.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  dataDir = mkdtempSync(join(tmpdir(), 'pm-official-client-'));
  // The profile's trades settle after a delay (MATCHED -> MINED -> CONFIRMED, test/e2e/bot-day.test.ts); here they
  // settle at once, so balances and trade statuses are final when read.
  const instant = { sandbox: { trades: { minedDelayMs: 0, confirmedDelayMs: 0 } } };
  app = await startApp(testConfig({ ...compat, ...instant, dataDir, demo: false, adminToken: ADMIN_TOKEN, http: { port: 0 } }), { log: silentLogger });
  host = `http://127.0.0.1:${app.port}`;

  // Observes only (see the header): which POLY_* names the client sends.
  const request = axios.interceptors.request.use((config: InternalAxiosRequestConfig) => {
    for (const name of Object.keys(config.headers.toJSON())) if (/^poly/i.test(name)) sentPolyNames.add(name);
    return config;
  });
  const record = (method: string | undefined, url: string | undefined, status: number) => seen.push({ method: (method ?? 'get').toUpperCase(), path: pathOf(url), status });
  const response = axios.interceptors.response.use(
    (r: AxiosResponse) => {
      record(r.config.method, r.config.url, r.status);
      return r;
    },
    (e: { config?: InternalAxiosRequestConfig; response?: AxiosResponse }) => {
      record(e.config?.method, e.config?.url, e.response?.status ?? 0);
      return Promise.reject(e);
    },
  );
  interceptors = { request, response };

  const events = (await admin('/admin/events', [
    {
      title: 'Official client e2e',
      slug: 'official-client-e2e',
      endDate: '2030-01-01T00:00:00Z',
      markets: [
        { question: 'Does the official client trade here?', conditionId: CONDITION_ID, orderPriceMinTickSize: '0.01', orderMinSize: 5 },
        { question: 'Does it take liquidity too?', conditionId: FEE_CONDITION_ID, orderPriceMinTickSize: '0.01', orderMinSize: 5, takerBaseFee: TAKER_FEE_BPS },
      ],
    },
  ])) as Array<{ markets: Array<{ clobTokenIds: string }> }>;
  tokenID = (JSON.parse(events[0]!.markets[0]!.clobTokenIds) as string[])[0]!;
  feeTokens = JSON.parse(events[0]!.markets[1]!.clobTokenIds) as [string, string];
  await admin(`/admin/wallets/${account.address}/deposit`, { amount: '100' });
  await admin(`/admin/wallets/${maker.account.address}/deposit`, { amount: '200' });
  await admin(`/admin/wallets/${taker.account.address}/deposit`, { amount: '100' });
});

after(async () => {
  axios.interceptors.request.eject(interceptors.request);
  axios.interceptors.response.eject(interceptors.response);
  await app.stop(1000);
  rmSync(dataDir, { recursive: true, force: true });
});

// Bounded: a request the edge never answered would otherwise wait forever.
test('the unchanged V2 client creates a key, reads a book, posts, reads and cancels a GTC order', { timeout: 60_000 }, async () => {
  const l1 = new ClobClient({ host, chain: 80002, signer: wallet as unknown as ConstructorParameters<typeof ClobClient>[0]['signer'] });
  const creds = await l1.createOrDeriveApiKey();
  assert.match(creds.key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.deepEqual(await l1.createOrDeriveApiKey(), creds, 'a second call derives the same credentials');

  const client = new ClobClient({ host, chain: 80002, signer: wallet as unknown as ConstructorParameters<typeof ClobClient>[0]['signer'], creds, throwOnError: true });

  const book = await client.getOrderBook(tokenID);
  assert.equal(book.asset_id, tokenID);
  assert.equal(book.market, CONDITION_ID);
  assert.equal(book.tick_size, '0.01');
  assert.deepEqual([book.bids, book.asks], [[], []]);

  const posted = await client.createAndPostOrder({ tokenID, price: 0.45, size: 10, side: Side.BUY }, undefined, OrderType.GTC);
  assert.equal(posted.success, true, JSON.stringify(posted));
  assert.equal(posted.status, 'live');
  assert.match(posted.orderID, /^0x[0-9a-f]{64}$/);

  // The look-ups the client made before signing were answered by the service itself.
  for (const path of ['/version', '/tick-size', '/neg-risk']) {
    const hit = seen.find((s) => s.path === path);
    assert.ok(hit, `the client looked up ${path}`);
    assert.equal(hit.status, 200, `${path} answered by the service`);
  }
  assert.deepEqual(
    seen.filter((s) => s.path === '/order').map((s) => [s.method, s.status]),
    [['POST', 200]],
  );
  for (const name of ['POLY_ADDRESS', 'POLY_SIGNATURE', 'POLY_TIMESTAMP', 'POLY_API_KEY', 'POLY_PASSPHRASE']) {
    assert.ok(sentPolyNames.has(name), `the client sent ${name} as written (saw ${[...sentPolyNames].join(', ')})`);
  }

  // The compatibility profile answers the client's OpenOrder (compat.shapes), not the spec's {order: Order}.
  const read = await client.getOrder(posted.orderID);
  assert.deepEqual(
    pick(read as unknown as Record<string, unknown>, ['id', 'status', 'market', 'asset_id', 'side', 'price', 'original_size', 'size_matched', 'maker_address', 'owner', 'order_type']),
    {
      id: posted.orderID,
      status: 'LIVE',
      market: CONDITION_ID,
      asset_id: tokenID,
      side: 'BUY',
      price: '0.45',
      original_size: '10',
      size_matched: '0',
      maker_address: account.address.toLowerCase(),
      owner: creds.key,
      order_type: 'GTC',
    },
  );
  assert.equal(typeof read.created_at, 'number');
  const resting = await client.getOrderBook(tokenID);
  assert.deepEqual(resting.bids, [{ price: '0.45', size: '10' }]);
  const usdc = await client.getBalanceAllowance({ asset_type: AssetType.COLLATERAL });
  assert.equal(usdc.balance, String(100_000_000 - 4_500_000), 'the order reserves 10 x 0.45 USDC');

  const canceled = (await client.cancelOrder({ orderID: posted.orderID })) as unknown as { canceled: string[]; not_canceled: Record<string, string> };
  assert.deepEqual(canceled, { canceled: [posted.orderID], not_canceled: {} });
  assert.equal((await client.getOrder(posted.orderID)).status, 'CANCELED');
  assert.deepEqual((await client.getOrderBook(tokenID)).bids, []);
  assert.equal((await client.getBalanceAllowance({ asset_type: AssetType.COLLATERAL })).balance, String(100_000_000), 'the cancel released the reservation');
  // Sent again in a later second (the same signed cancel in the same second would be a replay, answered as
  // the first one), it is a new request: the order is already canceled.
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
  assert.deepEqual(await client.cancelOrder({ orderID: posted.orderID }), { canceled: [], not_canceled: { [posted.orderID]: 'order already canceled' } });
});

test('the unchanged V2 client builds FOK market BUYs from the market look-ups and fills them against resting liquidity', { timeout: 60_000 }, async () => {
  const [YES, NO] = feeTokens;
  const makerClient = await clientOf(maker);
  const takerClient = await clientOf(taker);

  // Liquidity through the client's limit-order path: BUY NO at 0.40 shows in YES's book as an ask at 0.60.
  const rest = await makerClient.createAndPostOrder({ tokenID: NO, price: 0.4, size: 200, side: Side.BUY }, undefined, OrderType.GTC);
  assert.equal(rest.status, 'live', JSON.stringify(rest));
  assert.deepEqual((await takerClient.getOrderBook(YES)).asks, [{ price: '0.6', size: '200' }]);

  // 6 USDC at the 0.60 ask: 10 tokens, plus the taker fee 2% x min(0.6, 0.4) x 10 = 0.08 USDC.
  const from = seen.length;
  const order = await takerClient.createMarketOrder({ tokenID: YES, amount: 6, side: Side.BUY, orderType: OrderType.FOK });
  assert.deepEqual([order.makerAmount, order.takerAmount, order.tokenId], ['6000000', '10000000', YES]);
  const lookups = seen.slice(from).map((x) => `${x.method} ${x.path} ${x.status}`);
  const cid = FEE_CONDITION_ID.toLowerCase();
  for (const want of [`GET /markets-by-token/${YES} 200`, `GET /clob-markets/${cid} 200`, 'GET /book 200']) {
    assert.ok(lookups.includes(want), `the client made ${want}; it made ${JSON.stringify(lookups)}`);
  }
  assert.ok(!lookups.some((l) => / \/(tick-size|neg-risk) /.test(l)), 'tick size and neg risk came from /clob-markets');
  const filled = await takerClient.postOrder(order, OrderType.FOK);
  assert.equal(filled.success, true, JSON.stringify(filled));
  assert.deepEqual([filled.status, filled.makingAmount, filled.takingAmount], ['matched', '6.08', '10']);

  const read = (await takerClient.getOrder(filled.orderID)) as unknown as Record<string, unknown>;
  assert.deepEqual(pick(read, ['status', 'order_type', 'side', 'asset_id', 'price', 'original_size', 'size_matched']), {
    status: 'MATCHED',
    order_type: 'FOK',
    side: 'BUY',
    asset_id: YES,
    price: '0.6',
    original_size: '10',
    size_matched: '10',
  });
  const usdc = async () => (await takerClient.getBalanceAllowance({ asset_type: AssetType.COLLATERAL })).balance;
  const yesHeld = async () => (await takerClient.getBalanceAllowance({ asset_type: AssetType.CONDITIONAL, token_id: YES })).balance;
  assert.equal(await usdc(), String(100_000_000 - 6_000_000 - 80_000));
  assert.equal(await yesHeld(), '10000000');
  const trades = await takerClient.getTrades({ market: FEE_CONDITION_ID });
  assert.deepEqual(
    trades.map((t) => [t.taker_order_id, t.asset_id, t.side, t.size, t.price, t.status, t.fee_rate_bps]),
    [[filled.orderID, YES, 'BUY', '10', '0.6', 'CONFIRMED', String(TAKER_FEE_BPS)]],
  );
  assert.deepEqual((await takerClient.getOrderBook(YES)).asks, [{ price: '0.6', size: '190' }]);

  // The whole balance (93.92): the client holds back the fee from fd and the engine must accept what is
  // left. Without fd (or with a curve that holds back less than the engine reserves) this is refused.
  const balance = Number(await usdc()) / 1_000_000;
  const all = await takerClient.createMarketOrder({ tokenID: YES, amount: balance, side: Side.BUY, orderType: OrderType.FOK, userUSDCBalance: balance });
  assert.deepEqual([all.makerAmount, all.takerAmount], ['92350000', '153916600'], 'amount = balance - balance / 0.6 x 1%, rounded by the client');
  const spent = await takerClient.postOrder(all, OrderType.FOK);
  assert.equal(spent.success, true, JSON.stringify(spent));
  assert.equal(spent.status, 'matched');
  // 153.91 tokens x 0.6 = 92.346 USDC, fee 2% x 0.4 x 153.91 = 1.23128 USDC.
  assert.equal(await usdc(), String(93_920_000 - 92_346_000 - 1_231_280));
  assert.equal(await yesHeld(), String(10_000_000 + 153_910_000));
  assert.equal((await takerClient.getTrades({ market: FEE_CONDITION_ID })).length, 2);
});

test('the unchanged V2 client trades a neg-risk market: orders signed for its exchange, and a FAK market BUY takes what rests', { timeout: 60_000 }, async () => {
  const NR_A = keccak256(toHex('official client e2e neg-risk A'));
  const NR_B = keccak256(toHex('official client e2e neg-risk B'));
  const events = (await admin('/admin/events', [
    {
      title: 'Official client e2e, neg risk',
      slug: 'official-client-e2e-neg-risk',
      endDate: '2030-01-01T00:00:00Z',
      negRisk: true,
      markets: [
        { question: 'Candidate A?', conditionId: NR_A, orderPriceMinTickSize: '0.01', orderMinSize: 5 },
        { question: 'Candidate B?', conditionId: NR_B, orderPriceMinTickSize: '0.01', orderMinSize: 5 },
      ],
    },
  ])) as Array<{ markets: Array<{ clobTokenIds: string; negRisk: boolean }> }>;
  assert.equal(events[0]!.markets[0]!.negRisk, true);
  const [YES, NO] = JSON.parse(events[0]!.markets[0]!.clobTokenIds) as [string, string];
  await admin(`/admin/wallets/${negRiskMaker.account.address}/deposit`, { amount: '100' });
  await admin(`/admin/wallets/${negRiskTaker.account.address}/deposit`, { amount: '50' });
  const makerClient = await clientOf(negRiskMaker);
  const takerClient = await clientOf(negRiskTaker);

  // The client signs for the neg-risk exchange when the market says so; the service verifies under that
  // domain, so a wrong domain on either side is an invalid signature, not a live order.
  const from = seen.length;
  const rest = await makerClient.createAndPostOrder({ tokenID: NO, price: 0.4, size: 20, side: Side.BUY }, undefined, OrderType.GTC);
  assert.equal(rest.status, 'live', JSON.stringify(rest));
  const negRiskLookup = seen.slice(from).find((x) => x.path === '/neg-risk' || x.path.startsWith('/clob-markets/'));
  assert.ok(negRiskLookup && negRiskLookup.status === 200, 'the client asked the service whether the market is neg-risk');
  assert.deepEqual((await takerClient.getOrderBook(YES)).asks, [{ price: '0.6', size: '20' }]);

  // 30 USDC against 12 USDC of asks: FAK fills the 20 tokens at 0.60 and kills the rest (FOK would refuse).
  const order = await takerClient.createMarketOrder({ tokenID: YES, amount: 30, side: Side.BUY, orderType: OrderType.FAK });
  assert.equal(order.makerAmount, '30000000');
  const filled = await takerClient.postOrder(order, OrderType.FAK);
  assert.equal(filled.success, true, JSON.stringify(filled));
  assert.deepEqual([filled.status, filled.makingAmount, filled.takingAmount], ['matched', '12', '20']);
  const read = await takerClient.getOrder(filled.orderID);
  assert.deepEqual(pick(read as unknown as Record<string, unknown>, ['order_type', 'side', 'asset_id', 'size_matched']), { order_type: 'FAK', side: 'BUY', asset_id: YES, size_matched: '20' });
  assert.notEqual(read.status, 'LIVE', 'nothing of a FAK rests');
  assert.equal((await takerClient.getBalanceAllowance({ asset_type: AssetType.COLLATERAL })).balance, String(50_000_000 - 12_000_000), 'only the filled part is paid; the killed rest reserves nothing');
  assert.equal((await takerClient.getBalanceAllowance({ asset_type: AssetType.CONDITIONAL, token_id: YES })).balance, '20000000');
  assert.deepEqual((await takerClient.getOrderBook(YES)).asks, []);
});

function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = typeof o[k] === 'string' && (k === 'maker_address' || k === 'market') ? (o[k] as string).toLowerCase() : o[k];
  return out;
}

test('the unchanged V2 client reads its closed-only mode (getClosedOnlyMode) as the admin sets it', { timeout: 60_000 }, async () => {
  const client = await clientOf(taker);
  assert.deepEqual(await client.getClosedOnlyMode(), { closed_only: false });
  const put = await fetch(`${host}/admin/wallets/${taker.account.address}/closed-only`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ closedOnly: true }),
  });
  assert.equal(put.status, 200);
  assert.deepEqual(await client.getClosedOnlyMode(), { closed_only: true });
});
