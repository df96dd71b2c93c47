/**
 * The platform's official V2 client (@polymarket/clob-client-v2), unchanged, trading for a proxy wallet
 * (signatureType 1, POLY_PROXY) and a Safe (2, POLY_GNOSIS_SAFE) with a funder address, against the service in
 * the compatibility profile (config/clob-v2-compat.json, chain 80002): `new ClobClient({host, chain, signer,
 * creds, signatureType, funderAddress})` as a bot of a platform account is written.
 *
 * The signer is the Hardhat/Anvil test key #0; its proxy wallet and Safe are the addresses the platform's
 * official Rust client publishes for it (Polymarket/rs-clob-client src/lib.rs tests), not computed here, so
 * the service's derivation is checked against them. The admin funds the funders, never the signer. For each
 * type: derive the key (the signer's, one for both types), post, list, get, cancel, post a batch and cancel
 * it, then a fill against a counterparty (an EOA, Hardhat #1) with the balance and the position landing on
 * the funder (balance-allowance with the client's signature_type, the data API's positions of the funder),
 * the signer's own wallet untouched, the trade in /data/trades and on the user channel of the signer's key,
 * and the fill's notification read and dropped through the client. Trades settle at once here (sandbox.trades
 * zero, set explicitly): the lifecycle has tests of its own.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AssetType, ClobClient, OrderType, Side } from '@polymarket/clob-client-v2';
import { createWalletClient, custom, getAddress, keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startApp, type App } from '../../src/node/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { StreamClient, type StreamEvent } from '../../tools/stream-client.ts';

const HARDHAT_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const HARDHAT_1 = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
/** Hardhat #0's proxy wallet and Safe as the Rust client's tests publish them (checksummed here). */
const FUNDERS = { 1: getAddress('0x365f0cA36ae1F641E02Fe3b7743673DA42A13a70'), 2: getAddress('0xd93b25Cb943D14d0d34FBAf01fc93a0F8b5f6e47') } as const;
const ADMIN_TOKEN = 'official-client-funders-admin';
const T = 1_000_000;

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

const eoa = signer(HARDHAT_0);
const counterparty = signer(HARDHAT_1);

let app: App;
let dataDir: string;
let host: string;
const sockets: StreamClient[] = [];
/** One market per signature type, so each type's book and trades are its own: [YES, NO] and the condition id. */
const markets = new Map<1 | 2, { cid: string; yes: string; no: string }>();

async function admin(path: string, body: unknown): Promise<unknown> {
  const r = await fetch(`${host}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  assert.equal(r.status, 200, `${path}: ${text}`);
  return JSON.parse(text) as unknown;
}

before(async () => {
  const compat = JSON.parse(readFileSync(new URL('../../config/clob-v2-compat.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  dataDir = mkdtempSync(join(tmpdir(), 'pm-official-funders-'));
  const trades = { minedDelayMs: 0, confirmedDelayMs: 0, retryingShare: 0, retryDelayMs: 0, failedShare: 0, seed: 1 };
  app = await startApp(testConfig({ ...compat, dataDir, demo: false, adminToken: ADMIN_TOKEN, http: { port: 0 }, sandbox: { trades } }), { log: silentLogger });
  host = `http://127.0.0.1:${app.port}`;
  for (const type of [1, 2] as const) {
    const cid = keccak256(toHex(`official client funders ${type}`));
    const events = (await admin('/admin/events', [
      {
        title: `Funders e2e ${type}`,
        slug: `official-client-funders-${type}`,
        endDate: '2030-01-01T00:00:00Z',
        markets: [{ question: `Does a signatureType ${type} bot trade here?`, conditionId: cid, orderPriceMinTickSize: '0.01', orderMinSize: 5 }],
      },
    ])) as Array<{ markets: Array<{ clobTokenIds: string }> }>;
    const [yes, no] = JSON.parse(events[0]!.markets[0]!.clobTokenIds) as [string, string];
    markets.set(type, { cid, yes, no });
    await admin(`/admin/wallets/${FUNDERS[type]}/deposit`, { amount: '100' });
  }
  await admin(`/admin/wallets/${counterparty.account.address}/deposit`, { amount: '100' });
});

after(async () => {
  for (const s of sockets) s.close();
  await app.stop(1000);
  rmSync(dataDir, { recursive: true, force: true });
});

/** The signer's key, created or derived by the unchanged client (L1 names the signer, not a funder). */
async function keyOf(s: { wallet: Signer }) {
  return new ClobClient({ host, chain: 80002, signer: s.wallet }).createOrDeriveApiKey();
}

const usdc = async (c: ClobClient) => Number((await c.getBalanceAllowance({ asset_type: AssetType.COLLATERAL })).balance);
const tokens = async (c: ClobClient, tokenId: string) => Number((await c.getBalanceAllowance({ asset_type: AssetType.CONDITIONAL, token_id: tokenId })).balance);

for (const type of [1, 2] as const) {
  const name = type === 1 ? 'proxy wallet (POLY_PROXY)' : 'Safe (POLY_GNOSIS_SAFE)';
  test(`the unchanged V2 client trades for a ${name}: key, post, list, get, cancel, batch, a fill on the funder, its trade and user channel`, { timeout: 90_000 }, async () => {
    const { cid, yes, no } = markets.get(type)!;
    const funder = FUNDERS[type];
    const creds = await keyOf(eoa);
    assert.deepEqual(await keyOf(eoa), creds, 'one key per signer, whatever it trades for');
    const client = new ClobClient({ host, chain: 80002, signer: eoa.wallet, creds, signatureType: type, funderAddress: funder, throwOnError: true });
    const own = new ClobClient({ host, chain: 80002, signer: eoa.wallet, creds, throwOnError: true });
    const ownBefore = await usdc(own);

    // The user channel of the signer's key, on every market, before anything trades.
    const socket = await StreamClient.connect(`ws://127.0.0.1:${app.port}/ws/user`, { pingMs: 0 });
    sockets.push(socket);
    socket.subscribeUser({ apiKey: creds.key, secret: creds.secret, passphrase: creds.passphrase });

    // Post, list, get, cancel: a BUY of 10 at 0.45 reserves 4.5 USDC of the funder's.
    const posted = await client.createAndPostOrder({ tokenID: yes, price: 0.45, size: 10, side: Side.BUY }, undefined, OrderType.GTC);
    assert.equal(posted.success, true, JSON.stringify(posted));
    assert.equal(posted.status, 'live');
    assert.equal(await usdc(client), 100 * T - 4.5 * T, 'balance-allowance with the client\'s signature_type: the funder\'s');
    assert.equal(await usdc(own), ownBefore, 'the signer\'s own wallet is untouched');
    const read = await client.getOrder(posted.orderID);
    assert.deepEqual([read.id, read.status, read.maker_address.toLowerCase(), read.owner, read.side, read.price], [posted.orderID, 'LIVE', funder.toLowerCase(), creds.key, 'BUY', '0.45']);
    const open = await client.getOpenOrders({ market: cid });
    assert.deepEqual(open.map((o) => [o.id, o.maker_address.toLowerCase()]), [[posted.orderID, funder.toLowerCase()]]);
    assert.deepEqual((await own.getOpenOrders({ market: cid })).map((o) => o.id), [posted.orderID], 'the key lists what its signer signed, whichever client asks');
    const placement = await socket.next((e) => e.event_type === 'order' && (e as { id?: string }).id === posted.orderID);
    assert.equal((placement as { maker_address?: string }).maker_address?.toLowerCase(), funder.toLowerCase(), 'the funder\'s order reaches the signer\'s key');
    assert.deepEqual(await client.cancelOrder({ orderID: posted.orderID }), { canceled: [posted.orderID], not_canceled: {} });
    assert.equal((await client.getOrder(posted.orderID)).status, 'CANCELED');
    assert.equal(await usdc(client), 100 * T);

    // A batch of two, canceled together by id.
    const batch = await Promise.all([0.41, 0.42].map((price) => client.createOrder({ tokenID: yes, price, size: 10, side: Side.BUY })));
    assert.ok(
      batch.every((o) => o.maker.toLowerCase() === funder.toLowerCase() && o.signer.toLowerCase() === eoa.account.address.toLowerCase() && Number(o.signatureType) === type),
      'the client builds the funder as maker and the EOA as signer',
    );
    const results = await client.postOrders(batch.map((order) => ({ order, orderType: OrderType.GTC })));
    assert.deepEqual(
      results.map((r: { success: boolean; status: string }) => [r.success, r.status]),
      [
        [true, 'live'],
        [true, 'live'],
      ],
      JSON.stringify(results),
    );
    const ids = results.map((r: { orderID: string }) => r.orderID);
    assert.deepEqual(new Set((await client.getOpenOrders({ market: cid })).map((o) => o.id)), new Set(ids));
    const canceled = (await client.cancelOrders(ids)) as unknown as { canceled: string[]; not_canceled: Record<string, string> };
    assert.deepEqual([new Set(canceled.canceled), canceled.not_canceled], [new Set(ids), {}]);
    assert.deepEqual(await client.getOpenOrders({ market: cid }), []);

    // A fill: the counterparty (an EOA) rests BUY NO at 0.40, an ask of YES at 0.60; the funder buys 10 YES.
    const other = new ClobClient({ host, chain: 80002, signer: counterparty.wallet, creds: await keyOf(counterparty), throwOnError: true });
    const rest = await other.createAndPostOrder({ tokenID: no, price: 0.4, size: 10, side: Side.BUY }, undefined, OrderType.GTC);
    assert.equal(rest.status, 'live', JSON.stringify(rest));
    const filled = await client.createAndPostOrder({ tokenID: yes, price: 0.6, size: 10, side: Side.BUY }, undefined, OrderType.GTC);
    assert.equal(filled.success, true, JSON.stringify(filled));
    assert.deepEqual([filled.status, filled.makingAmount, filled.takingAmount], ['matched', '6', '10']);

    assert.equal(await usdc(client), 100 * T - 6 * T, 'paid from the funder');
    assert.equal(await tokens(client, yes), 10 * T, 'the tokens land on the funder');
    assert.equal(await tokens(own, yes), 0);
    assert.equal(await usdc(own), ownBefore);
    const positions = (await (await fetch(`${host}/positions?user=${funder}&sizeThreshold=0.01`)).json()) as Array<{ proxyWallet: string; conditionId: string; size: number }>;
    assert.deepEqual(
      positions.map((p) => [p.proxyWallet.toLowerCase(), p.conditionId, p.size]),
      [[funder.toLowerCase(), cid, 10]],
      'the data API shows the position under the funder',
    );
    const signerPositions = (await (await fetch(`${host}/positions?user=${eoa.account.address}&sizeThreshold=0.01`)).json()) as unknown[];
    assert.deepEqual(signerPositions, []);

    const trades = await client.getTrades({ market: cid });
    assert.deepEqual(
      trades.map((t) => [t.taker_order_id, t.asset_id, t.side, t.size, t.price, t.trader_side, t.maker_address.toLowerCase()]),
      [[filled.orderID, yes, 'BUY', '10', '0.6', 'TAKER', funder.toLowerCase()]],
    );
    assert.equal((await client.getTrades({ market: cid, maker_address: funder })).length, 1, 'maker_address: the funder, one of the key\'s wallets');
    assert.deepEqual(await client.getTrades({ market: cid, maker_address: counterparty.account.address }), [], 'another wallet\'s address: none of the key\'s trades');

    const trade = await socket.next((e) => e.event_type === 'trade' && (e as { taker_order_id?: string }).taker_order_id === filled.orderID);
    assert.deepEqual(
      [(trade as { trader_side?: string }).trader_side, (trade as { maker_address?: string }).maker_address?.toLowerCase(), (trade as { size?: string }).size],
      ['TAKER', funder.toLowerCase(), '10'],
    );
    // Nothing of the counterparty's own reached the signer's key.
    assert.ok(!socket.events.some((e: StreamEvent) => e.event_type === 'order' && (e as { id?: string }).id === rest.orderID), 'the counterparty\'s order is not the signer\'s');

    // The fill's notification is the funder's: read with the client's signature_type, dropped by its id alone.
    const notes = (await client.getNotifications()) as unknown as Array<{ id: string; type: number; payload: { order_id?: string } }>;
    const fill = notes.find((n) => n.type === 2 && n.payload.order_id === filled.orderID);
    assert.ok(fill, JSON.stringify(notes));
    assert.match(fill.id, new RegExp(`^${type}-\\d+$`));
    assert.ok(!((await own.getNotifications()) as unknown as Array<{ payload: { order_id?: string } }>).some((n) => n.payload.order_id === filled.orderID), 'not the signer\'s own');
    await client.dropNotifications({ ids: [fill.id] });
    assert.ok(!((await client.getNotifications()) as unknown as Array<{ id: string }>).some((n) => n.id === fill.id), 'dropped');
    if (type === 2) {
      // Without ids, a drop clears every wallet of the key: the proxy wallet's notices (the type 1 test's) too.
      const proxy = new ClobClient({ host, chain: 80002, signer: eoa.wallet, creds, signatureType: 1, funderAddress: FUNDERS[1], throwOnError: true });
      assert.ok(((await proxy.getNotifications()) as unknown as unknown[]).length > 0, 'the proxy wallet has notifications of its own');
      await client.dropNotifications();
      assert.deepEqual([await proxy.getNotifications(), await client.getNotifications()], [[], []]);
    }
  });
}

test('a funder the signer does not control is refused with the wallet it must be, and nothing is reserved', { timeout: 60_000 }, async () => {
  const creds = await keyOf(eoa);
  // The Safe's address with signatureType 1: the proxy wallet is expected.
  const wrong = new ClobClient({ host, chain: 80002, signer: eoa.wallet, creds, signatureType: 1, funderAddress: FUNDERS[2], throwOnError: true });
  const { yes } = markets.get(1)!;
  const safe = new ClobClient({ host, chain: 80002, signer: eoa.wallet, creds, signatureType: 2, funderAddress: FUNDERS[2], throwOnError: true });
  const before = await usdc(safe);
  await assert.rejects(wrong.createAndPostOrder({ tokenID: yes, price: 0.3, size: 10, side: Side.BUY }, undefined, OrderType.GTC), (e: Error & { status?: number }) => {
    assert.equal(e.status, 400);
    assert.match(e.message, new RegExp(`the order maker has to be the signer's proxy wallet ${FUNDERS[1].toLowerCase()} for signature type 1`));
    return true;
  });
  assert.equal(await usdc(safe), before);
});
