/**
 * An example bot test suite: how a bot's own tests drive this exchange. The bot (quoting-bot.ts) is written
 * against the platform's official client and knows nothing of the exchange; the tests arrange its world
 * through the exchange's admin API, as contract tests arrange theirs on a local chain:
 *
 *   startExchange()       the exchange in this process, on a free port, a store of its own, funded test
 *                         wallets; `close()` removes it all;
 *   admin.startScenario   a market with named counterparty wallets, its books, and timed events (a taker
 *                         sweeping the book five seconds in);
 *   admin.snapshot/revert the arranged world saved once, and every test started from it: whatever the test
 *                         before did (orders resting, trades, a resolved market, the clock moved) is undone;
 *   admin.fill            a counterparty taking the bot's resting order;
 *   admin.advance         the exchange's clock moved: GTD quotes expire, trades settle, scripts run (a
 *                         sweep, the market's resolution), at their own times, in order;
 *
 * The exchange is started once for the file and the world arranged once; each test begins from a revert to
 * that snapshot: the same market quoted 0.40 / 0.46, the bot holding no orders, the clock where it stood.
 *
 * Run it with the repository's tests (`npm test`), or alone: node --import tsx --test examples/quoting-bot.test.ts
 * From another project, `import { startExchange } from 'pm-exchange'` is the same (docs/sandbox.md, "Drive it
 * from a test suite").
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AssetType, ClobClient } from '@polymarket/clob-client-v2';
import { createWalletClient, custom } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startExchange, type Exchange } from 'pm-exchange';
import { QuotingBot } from './quoting-bot.ts';

// The official client signs for the platform's contracts on its test chain (80002): the exchange's
// compatibility profile accepts exactly those signatures.
const CLOB_V2_COMPAT = fileURLToPath(new URL('../config/clob-v2-compat.json', import.meta.url));
const TTL = 120;

let ex: Exchange;
let client: ClobClient;
let bot: QuotingBot;
let scenario: Awaited<ReturnType<Exchange['admin']['startScenario']>>;

before(async () => {
  ex = await startExchange({
    configFile: CLOB_V2_COMPAT,
    // Trades settle five seconds after their match, as on the platform: MATCHED, then MINED.
    config: { sandbox: { trades: { minedDelayMs: 5_000, confirmedDelayMs: 10_000, retryingShare: 0, retryDelayMs: 0, failedShare: 0, seed: 1 } } },
    // Nothing moves unless a test moves the clock.
    frozen: true,
  });
  // The bot trades as the first funded test wallet (10,000 USDC), through a signer that never needs a chain.
  const account = privateKeyToAccount(ex.wallets[0]!.privateKey);
  const signer = createWalletClient({ account, transport: custom({ request: async () => Promise.reject(new Error('no RPC here')) }) });
  const creds = await new ClobClient({ host: ex.url, chain: 80002, signer: signer as never }).createOrDeriveApiKey();
  client = new ClobClient({ host: ex.url, chain: 80002, signer: signer as never, creds, useServerTime: true, throwOnError: true });
  // The world every test starts from: a market maker "mm" quotes 0.40 / 0.46, and a taker waits.
  scenario = await ex.admin.startScenario({
    market: { question: 'Will the bot\'s tests pass?' },
    wallets: { mm: { usdc: '1000', yes: '500' }, taker: { usdc: '1000' } },
    books: [{ token: 'yes', maker: 'mm', bids: [{ price: '0.40', size: '100' }], asks: [{ price: '0.46', size: '100' }] }],
  });
  await ex.admin.snapshot('arranged');
});

after(() => ex.close());

// Each test starts from the arranged world: what the test before left (its quotes, fills, a resolution, the
// clock it moved) is undone by the revert, as a contract test's evm_revert undoes its chain.
beforeEach(async () => {
  await ex.admin.revert('arranged');
  bot = new QuotingBot(client, { conditionId: scenario.market.conditionId, tokenId: scenario.market.yes, tick: 0.01 }, { size: 10, ttlSeconds: TTL });
});

/** The bot's available USDC or tokens of one outcome, in 6-decimal units (as the client reads them). */
const balance = async (tokenId?: string) =>
  Number((await client.getBalanceAllowance(tokenId === undefined ? { asset_type: AssetType.COLLATERAL } : { asset_type: AssetType.CONDITIONAL, token_id: tokenId })).balance);

test('it quotes one tick inside the book, good till two minutes from the server\'s time', async () => {
  const q = await bot.step();
  assert.deepEqual([q.bid?.price, q.ask, q.skippedAsk], [0.41, undefined, 'nothing to sell yet']);
  const [bid] = await client.getOpenOrders({ market: scenario.market.conditionId });
  const now = (await ex.admin.clock()).time;
  assert.deepEqual([bid!.side, bid!.price, bid!.original_size, Number(bid!.expiration)], ['BUY', '0.41', '10', now + TTL]);
});

test('a taker fills its bid; once the trade settles it offers what it bought', async () => {
  const { bid } = await bot.step();
  // A counterparty on call: the house taker sells into the bot's bid.
  const filled = await ex.admin.fill(bid!.orderId);
  assert.equal(filled.order.status, 'MATCHED');
  const [trade] = await client.getTrades({ market: scenario.market.conditionId });
  assert.deepEqual([trade!.status, trade!.trader_side, trade!.price, trade!.size], ['MATCHED', 'MAKER', '0.41', '10']);

  // Matched, not settled: the tokens are not the bot's to sell yet.
  assert.equal((await bot.step()).skippedAsk, 'nothing to sell yet');
  await ex.admin.advance(5);
  const q = await bot.step();
  assert.deepEqual([q.bid?.price, q.ask?.price], [0.41, 0.45]);
  const asks = (await client.getOpenOrders({ market: scenario.market.conditionId })).filter((o) => o.side === 'SELL');
  assert.deepEqual(asks.map((o) => [o.price, o.original_size]), [['0.45', '10']]);
});

test('its quotes expire when the clock passes them, and the next round puts them back', async () => {
  await bot.step();
  await ex.admin.advance(TTL - 1);
  assert.equal((await client.getOpenOrders({ market: scenario.market.conditionId })).length, 1);
  await ex.admin.advance(1);
  assert.equal((await client.getOpenOrders({ market: scenario.market.conditionId })).length, 0, 'expired at its second');
  await bot.step();
  assert.equal((await client.getOpenOrders({ market: scenario.market.conditionId })).length, 1);
});

test('a taker sweeps the ask five seconds in; the bot follows the book', async () => {
  // A scripted event on the same market: at t+5 s the taker buys the whole 0.46 level.
  await ex.admin.startScenario({
    market: { conditionId: scenario.market.conditionId },
    wallets: { taker: { address: scenario.wallets.taker } },
    script: [{ at: '+5s', do: 'sweep', wallet: 'taker', token: 'yes', side: 'BUY', price: '0.46', size: '100' }],
  });
  assert.equal((await bot.step()).bid?.price, 0.41);
  await ex.admin.advance(5);
  // The ask side is empty now: the bot has no book to quote inside, and says so by quoting nothing.
  assert.deepEqual(await bot.step(), {});
  assert.equal((await client.getOrderBook(scenario.market.yes)).asks.length, 0);
  // The market maker comes back higher; so does the bot.
  await ex.admin.setBook(scenario.market.yes, { maker: scenario.wallets.mm, bids: [{ price: 0.45, size: 100 }], asks: [{ price: 0.5, size: 100 }] });
  assert.equal((await bot.step()).bid?.price, 0.46);
});

test('the market resolves a minute in: its quotes are canceled, what it holds won, and it stops quoting', async () => {
  // Scripted on the market: the "yes" outcome wins at t+60 s.
  await ex.admin.startScenario({ market: { conditionId: scenario.market.conditionId }, script: [{ at: '+60s', do: 'resolve', winner: 'yes' }] });
  const { bid } = await bot.step();
  await ex.admin.fill(bid!.orderId); // the bot buys 10 "yes" at 0.41
  await ex.admin.advance(30);
  // Settled: it holds the 10 tokens and quotes an ask for them beside its new bid.
  assert.equal(await balance(scenario.market.yes), 10_000_000);
  const q = await bot.step();
  assert.deepEqual([q.bid?.price, q.ask?.price], [0.41, 0.45]);
  const usdc = await balance();

  await ex.admin.advance(30);
  // Resolution cancels every order in the market: the bid's USDC and the ask's tokens are the bot's again.
  assert.equal((await client.getOpenOrders({ market: scenario.market.conditionId })).length, 0);
  assert.equal(await balance(), usdc + 4_100_000); // 10 x 0.41
  assert.equal(await balance(scenario.market.yes), 10_000_000);
  // Its tokens won (redeemed for 1 USDC each by POST /redeem, as on the platform by the chain), and the bot stops.
  assert.deepEqual((await client.getMarket(scenario.market.conditionId)).tokens.map((t: { winner: boolean }) => t.winner), [true, false]);
  assert.deepEqual(await bot.step(), { stopped: 'market closed' });
});
