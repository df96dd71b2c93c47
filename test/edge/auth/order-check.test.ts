/**
 * Order checks before the engine (src/edge/auth/order-check.ts): the hand-written EIP-712 order digest
 * against viem's `hashTypedData`, signatures made with viem's `signTypedData` and with the platform's
 * official V2 client, and each rejection rule with the error it answers.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { OrderBuilder, Side, orderToJsonV2 } from '@polymarket/clob-client-v2';
import { getAddress, hashTypedData } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { ManualClock, nowSeconds } from '../../../src/runtime/clock.ts';
import { testConfig } from '../../../src/runtime/config.ts';
import { orderDigest, orderDomainSeparator, type OrderStruct } from '../../../src/edge/auth/eip712.ts';
import { signedSubmission, typedOrder, type SignedSubmission } from '../../fixtures/typed-order.ts';
import { canonicalUint, checkOrders, orderDomainsOf, orderHints, type OrderCheckDeps, type OrderCheckResult, type TokenMarket } from '../../../src/edge/auth/order-check.ts';
import { Funders } from '../../../src/edge/auth/funders.ts';
import { SigPool } from '../../../src/edge/auth/sig-pool.ts';
import { readFileSync } from 'node:fs';

const ZERO32 = '0x' + '0'.repeat(64);
const API_KEY = '8b0a7c2e-0000-4000-8000-000000000001';
const alice = privateKeyToAccount('0x' + '11'.repeat(32) as `0x${string}`);
const bob = privateKeyToAccount('0x' + '22'.repeat(32) as `0x${string}`);

const config = testConfig();
const domains = orderDomainsOf(config.auth);
const funders = new Funders(config.auth.walletFactories);
const compat = testConfig(JSON.parse(readFileSync(new URL('../../../config/clob-v2-compat.json', import.meta.url), 'utf8')) as Record<string, unknown>);
const compatDomains = orderDomainsOf(compat.auth);

const COND_A = '0x' + 'aa'.repeat(32);
const COND_N = '0x' + 'bb'.repeat(32);
const markets = new Map<string, TokenMarket>([
  ['1001', { conditionId: COND_A, negRisk: false }],
  ['2002', { conditionId: COND_N, negRisk: true }],
]);

const clock = new ManualClock(Date.UTC(2026, 0, 1));
let pool: SigPool;
let deps: OrderCheckDeps;

before(() => {
  pool = new SigPool({ threads: 1 });
  deps = { pool, domains, funders, market: (t) => markets.get(t), clock };
});
after(() => pool.close());

const typed = typedOrder;

type Sub = SignedSubmission;

/** A signed submission as a client sends it (amounts as strings, side as text). */
function submission(acct: PrivateKeyAccount, over: Partial<OrderStruct> = {}, opts: { negRisk?: boolean; orderType?: string } = {}): Promise<Sub> {
  return signedSubmission(acct, opts.negRisk ? domains.negRisk : domains.normal, { tokenId: opts.negRisk ? '2002' : '1001', owner: API_KEY, over, orderType: opts.orderType });
}

const caller = (acct: PrivateKeyAccount) => ({ apiKey: API_KEY, address: acct.address.toLowerCase() });

async function one(sub: unknown, who = caller(alice), d = deps): Promise<OrderCheckResult> {
  const [r] = await checkOrders([sub], who, d);
  return r!;
}

function rejected(r: OrderCheckResult, code: string, message?: RegExp): void {
  assert.equal(r.ok, false, `expected ${code}`);
  if (r.ok) return;
  assert.equal(r.error.spec.code, code, r.error.message);
  if (message) assert.match(r.error.message, message);
}

test('the hand-encoded digest equals viem hashTypedData (default, neg-risk and compat domains, extreme values)', () => {
  const base: OrderStruct = {
    salt: '0', maker: alice.address, signer: alice.address.toLowerCase(), tokenId: '1', makerAmount: '1', takerAmount: '1',
    side: 1, signatureType: 0, timestamp: '0', metadata: ZERO32, builder: ZERO32,
  };
  const variants: OrderStruct[] = [
    base,
    { ...base, salt: '123456789', tokenId: '71321045679252212594626385532706912750332728571942532289631379312455583992563', makerAmount: '99999999999999', takerAmount: '100000000000000' },
    { ...base, salt: ((1n << 256n) - 1n).toString(), tokenId: ((1n << 256n) - 1n).toString(), timestamp: '1767225600000', side: 0, metadata: '0x' + 'AB'.repeat(32), builder: '0x' + '0f'.repeat(32) },
    { ...base, signatureType: 255, maker: bob.address, makerAmount: '9007199254740991' },
  ];
  for (const d of [domains.normal, domains.negRisk, compatDomains.normal, compatDomains.negRisk]) {
    const sep = orderDomainSeparator(d);
    for (const o of variants) assert.equal(orderDigest(o, sep), hashTypedData(typed(o, d)));
  }
});

test('a viem-signed order passes and comes out normalized for the engine', async () => {
  const sub = await submission(alice);
  const r = await one(sub);
  assert.ok(r.ok, r.ok ? '' : r.error.message);
  const expectedId = hashTypedData(typed({ ...(sub.order as unknown as OrderStruct), side: 0 }, domains.normal));
  assert.deepEqual(r.order, {
    orderId: expectedId,
    wallet: alice.address.toLowerCase(),
    tokenId: '1001',
    side: 'BUY',
    orderType: 'GTC',
    postOnly: false,
    makerAmount: 5_500_000,
    takerAmount: 10_000_000,
    expiration: 0,
    builder: ZERO32,
    owner: API_KEY,
    signer: alice.address.toLowerCase(),
    salt: '1297982436389',
    timestamp: '1767225600000',
    signatureType: 0,
    signature: (sub.order.signature as string).toLowerCase(),
    conditionId: COND_A,
  });
});

test('salt, timestamp and amounts as JSON numbers give the same order id as strings; metadata/builder default to zero', async () => {
  const sub = await submission(alice);
  const asNumbers = { ...sub, order: { ...sub.order, salt: 1297982436389, timestamp: 1767225600000, makerAmount: 5500000, takerAmount: 10000000 } };
  const withoutDefaults = { ...sub, order: { ...sub.order } };
  delete withoutDefaults.order.metadata;
  delete withoutDefaults.order.builder;
  const [a, b, c] = await checkOrders([sub, asNumbers, withoutDefaults], caller(alice), deps);
  assert.ok(a!.ok && b!.ok && c!.ok);
  assert.equal(a.order.orderId, b.order.orderId);
  assert.equal(a.order.orderId, c.order.orderId);
  assert.equal(b.order.salt, '1297982436389');
});

test('any signed field changed after signing -> PM_ERR_ORDER_SIGNATURE', async () => {
  const sub = await submission(alice);
  const tampered: [string, unknown][] = [
    ['makerAmount', '5500001'], ['takerAmount', '9999999'], ['salt', '1297982436390'], ['side', 'SELL'], ['timestamp', '1767225600001'],
    ['tokenId', '2002'], ['builder', '0x' + '01'.repeat(32)], ['metadata', '0x' + '02'.repeat(32)],
  ];
  const subs = tampered.map(([k, v]) => ({ ...sub, order: { ...sub.order, [k]: v } }));
  const res = await checkOrders(subs, caller(alice), deps);
  res.forEach((r, i) => {
    rejected(r, 'PM_ERR_ORDER_SIGNATURE', /invalid order signature/);
    assert.match((r as { orderId: string }).orderId, /^0x[0-9a-f]{64}$/, `${tampered[i]![0]}: the id is still reported`);
  });
});

test('ownership: owner must be the API key, signer the key address, maker the signer (EOA); signatureType 3 is refused', async () => {
  const sub = await submission(alice);
  rejected(await one({ ...sub, owner: 'another-key' }), 'PM_ERR_OWNER_MISMATCH', /owner of the API KEY/);
  rejected(await one(sub, caller(bob)), 'PM_ERR_SIGNER_MISMATCH', /signer address has to be the address of the API KEY/);
  const makerIsBob = await submission(alice, { maker: bob.address });
  rejected(await one(makerIsBob), 'PM_ERR_MAKER_SIGNER');
  // An EOA order naming the signer's own Safe as maker is still an EOA order: maker must be the signer.
  rejected(await one(await submission(alice, { maker: funders.makerOf(alice.address, 2) })), 'PM_ERR_MAKER_SIGNER');
  for (const type of [3, 4, 255]) {
    const contract = await submission(alice, { signatureType: type, maker: bob.address });
    rejected(await one(contract), 'PM_ERR_SIGNATURE_TYPE', new RegExp(`^signature type ${type} is not supported; use 0 \\(EOA\\), 1 \\(POLY_PROXY\\) or 2 \\(POLY_GNOSIS_SAFE\\)$`));
  }
  // Signed by bob but claiming alice as signer: the signature does not recover to the signer.
  const forged = await submission(bob);
  rejected(await one({ ...forged, order: { ...forged.order, signer: alice.address, maker: alice.address } }), 'PM_ERR_ORDER_SIGNATURE');
  // Addresses compare case-insensitively.
  const lower = { ...sub, order: { ...sub.order, maker: alice.address.toLowerCase(), signer: alice.address.toUpperCase().replace('0X', '0x') } };
  assert.ok((await one(lower)).ok);
});

test('proxy (1) and Safe (2): the maker is the wallet the factory derives from the signer; it reserves and settles, the signer signs', async () => {
  const a = alice.address.toLowerCase();
  for (const type of [1, 2] as const) {
    const funder = funders.makerOf(alice.address, type);
    assert.notEqual(funder, a);
    const sub = await submission(alice, { signatureType: type, maker: funder });
    const r = await one(sub);
    assert.ok(r.ok, r.ok ? '' : r.error.message);
    assert.equal(r.order.wallet, funder, 'the order is the funder\'s');
    assert.equal(r.order.signer, a, 'signed by the key\'s address');
    assert.equal(r.order.signatureType, type);
    assert.equal(r.order.orderId, hashTypedData(typed({ ...(sub.order as unknown as OrderStruct), side: 0 }, domains.normal)), 'the id digests the funder as maker');
    // Checksummed, lower or upper case: the same maker.
    assert.ok((await one({ ...sub, order: { ...sub.order, maker: funder.toUpperCase().replace('0X', '0x') } })).ok, 'the maker in upper case');

    // Wrong maker: the other type's wallet, the signer itself, another signer's wallet of the same type.
    const other = funders.makerOf(alice.address, type === 1 ? 2 : 1);
    for (const maker of [other, alice.address, funders.makerOf(bob.address, type)]) {
      const wrong = await one(await submission(alice, { signatureType: type, maker }));
      rejected(wrong, 'PM_ERR_MAKER_WALLET', new RegExp(`^the order maker has to be the signer's ${type === 1 ? 'proxy wallet' : 'Safe'} ${funder} for signature type ${type}$`));
      assert.equal((wrong as { orderId: string }).orderId, '', 'refused before any digest');
    }
    // Wrong signer: the key is bob's; the order names alice (whose funder it is).
    rejected(await one(sub, caller(bob)), 'PM_ERR_SIGNER_MISMATCH');
    // Bob signs alice's funder order with alice as signer: the signature does not recover to the signer.
    const forged = await submission(bob, { signatureType: type, maker: funder, signer: alice.address });
    rejected(await one(forged), 'PM_ERR_ORDER_SIGNATURE');
    // Signed with another signatureType than the one sent: a signed field differs.
    rejected(await one({ ...sub, order: { ...sub.order, signatureType: type === 1 ? 2 : 1, maker: other } }), 'PM_ERR_ORDER_SIGNATURE');
  }
});

test('amounts: zero, decimals, junk and values beyond 2^53 -> PM_ERR_ORDER_AMOUNTS naming the order', async () => {
  const sub = await submission(alice);
  for (const [field, value, detail] of [
    ['makerAmount', '0', /makerAmount must be positive/],
    ['takerAmount', '0', /takerAmount must be positive/],
    ['makerAmount', '1.5', /makerAmount must be a whole number/],
    ['takerAmount', 'abc', /takerAmount must be a whole number/],
    ['makerAmount', '-5', /makerAmount must be a whole number/],
    ['makerAmount', '9007199254740993', /makerAmount must be a whole number/],
  ] as const) {
    const r = await one({ ...sub, order: { ...sub.order, [field]: value } });
    rejected(r, 'PM_ERR_ORDER_AMOUNTS', detail);
    const id = (r as { orderId: string }).orderId;
    if (/^\d+$/.test(value)) assert.match((r as { error: Error }).error.message, new RegExp(`^order ${id} is invalid\\.`));
    else assert.match((r as { error: Error }).error.message, /^order with salt 1297982436389 is invalid\./);
  }
});

test('neg-risk tokens verify under the neg-risk domain only', async () => {
  const neg = await submission(alice, {}, { negRisk: true });
  const ok = await one(neg);
  assert.ok(ok.ok);
  assert.equal(ok.order.orderId, hashTypedData(typed({ ...(neg.order as unknown as OrderStruct), side: 0 }, domains.negRisk)));
  assert.equal(ok.order.conditionId, COND_N);
  // The same signature when the token is not neg-risk (or the reverse) does not verify.
  rejected(await one(neg, caller(alice), { ...deps, market: () => ({ conditionId: COND_N, negRisk: false }) }), 'PM_ERR_ORDER_SIGNATURE');
  const normal = await submission(alice);
  rejected(await one(normal, caller(alice), { ...deps, market: () => ({ conditionId: COND_A, negRisk: true }) }), 'PM_ERR_ORDER_SIGNATURE');
});

test('shape and market: per-element schema errors, unknown token, conditionId mismatch, non-canonical token id', async () => {
  const sub = await submission(alice);
  const noSig = { ...sub, order: { ...sub.order } };
  delete noSig.order.signature;
  const res = await checkOrders(
    [
      noSig,
      { ...sub, order: { ...sub.order, side: 'buy' } },
      { ...sub, order: { ...sub.order, tokenId: '9999' } },
      { ...sub, order: { ...sub.order, conditionId: COND_N } },
      { ...sub, order: { ...sub.order, conditionId: COND_A.toUpperCase().replace('0X', '0x') } },
      { ...sub, order: { ...sub.order, tokenId: '01001' } },
      'not an object',
      sub,
    ],
    caller(alice),
    deps,
  );
  rejected(res[0]!, 'PM_ERR_BAD_REQUEST', /^missing order\.signature$/);
  rejected(res[1]!, 'PM_ERR_BAD_REQUEST', /^invalid order\.side$/);
  rejected(res[2]!, 'PM_ERR_MARKET_UNKNOWN', /9999/);
  rejected(res[3]!, 'PM_ERR_CONDITION_MISMATCH');
  assert.ok(res[4]!.ok, 'a matching conditionId (any case) is accepted');
  rejected(res[5]!, 'PM_ERR_BAD_REQUEST', /order\.tokenId/);
  rejected(res[6]!, 'PM_ERR_BAD_REQUEST');
  assert.ok(res[7]!.ok, 'a good order in the same batch still passes');
  await assert.rejects(checkOrders(Array(16).fill(sub), caller(alice), deps), /Too many orders in payload: 16, max allowed: 15/);
  assert.equal((await checkOrders(Array(15).fill(sub), caller(alice), deps)).filter((r) => r.ok).length, 15);
});

test('order type options: GTD expiration at least 60 s ahead (top level or inside the order), others none; postOnly only with GTC/GTD', async () => {
  const now = nowSeconds(clock);
  const gtd = await submission(alice, {}, { orderType: 'GTD' });
  rejected(await one(gtd), 'PM_ERR_ORDER_EXPIRATION');
  rejected(await one({ ...gtd, expiration: String(now + 59) }), 'PM_ERR_ORDER_EXPIRATION');
  const ok = await one({ ...gtd, expiration: now + 60 });
  assert.ok(ok.ok);
  assert.equal(ok.order.expiration, now + 60);
  const inside = await one({ ...gtd, order: { ...gtd.order, expiration: String(now + 3600) } });
  assert.ok(inside.ok && inside.order.expiration === now + 3600);
  const gtc = await submission(alice);
  assert.ok((await one({ ...gtc, order: { ...gtc.order, expiration: '0' } })).ok);
  rejected(await one({ ...gtc, expiration: now + 3600 }), 'PM_ERR_ORDER_EXPIRATION');
  const fok = await submission(alice, {}, { orderType: 'FOK' });
  rejected(await one({ ...fok, postOnly: true }), 'PM_ERR_POST_ONLY_TYPE');
  const postOnly = await one({ ...gtc, postOnly: true });
  assert.ok(postOnly.ok && postOnly.order.postOnly);
});

test('orders built and signed by the official V2 client (@polymarket/clob-client-v2) pass under the compat profile', async () => {
  const acct = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
  const signer = { account: acct, signTypedData: (args: Parameters<typeof acct.signTypedData>[0]) => acct.signTypedData(args) };
  const builder = new OrderBuilder(signer as unknown as ConstructorParameters<typeof OrderBuilder>[0], 80002);
  const compatDeps: OrderCheckDeps = { ...deps, domains: compatDomains };
  for (const negRisk of [false, true]) {
    const tokenID = negRisk ? '2002' : '1001';
    const order = await builder.buildOrder({ tokenID, price: 0.55, size: 10, side: Side.BUY }, { tickSize: '0.01', negRisk }, 2);
    const body = JSON.parse(JSON.stringify(orderToJsonV2(order as Parameters<typeof orderToJsonV2>[0], API_KEY, 'GTC' as Parameters<typeof orderToJsonV2>[2])));
    const r = await one(body, { apiKey: API_KEY, address: acct.address.toLowerCase() }, compatDeps);
    assert.ok(r.ok, r.ok ? '' : r.error.message);
    assert.equal(r.order.makerAmount, 5_500_000);
    assert.equal(r.order.takerAmount, 10_000_000);
    // Under this service's own domain the same order is not valid (DESIGN section 5: no cross-use).
    rejected(await one(body, { apiKey: API_KEY, address: acct.address.toLowerCase() }, deps), 'PM_ERR_ORDER_SIGNATURE');
  }
});

test('proxy and Safe orders built and signed by the official V2 client with a funder address pass under the compat profile', async () => {
  const key = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
  const acct = privateKeyToAccount(key);
  const signer = { account: acct, signTypedData: (args: Parameters<typeof acct.signTypedData>[0]) => acct.signTypedData(args) };
  const compatDeps: OrderCheckDeps = { ...deps, domains: compatDomains };
  // The Rust client's published pair for this key (Polymarket/rs-clob-client src/lib.rs tests), checksummed
  // as a wallet shows it (the test writes it in another case).
  const pairs = { 1: getAddress('0x365f0cA36ae1F641E02Fe3b7743673DA42A13a70'), 2: getAddress('0xd93b25Cb943D14d0d34FBAf01fc93a0F8b5f6e47') } as const;
  for (const type of [1, 2] as const) {
    const builder = new OrderBuilder(signer as unknown as ConstructorParameters<typeof OrderBuilder>[0], 80002, type, pairs[type]);
    const order = await builder.buildOrder({ tokenID: '1001', price: 0.55, size: 10, side: Side.BUY }, { tickSize: '0.01', negRisk: false }, 2);
    const body = JSON.parse(JSON.stringify(orderToJsonV2(order as Parameters<typeof orderToJsonV2>[0], API_KEY, 'GTC' as Parameters<typeof orderToJsonV2>[2])));
    assert.equal(body.order.signatureType, type);
    const r = await one(body, { apiKey: API_KEY, address: acct.address.toLowerCase() }, compatDeps);
    assert.ok(r.ok, r.ok ? '' : r.error.message);
    assert.equal(r.order.wallet, pairs[type].toLowerCase());
    assert.equal(r.order.signer, acct.address.toLowerCase());
    // The same client with the other type's funder: refused, naming the wallet it must be.
    const swapped = new OrderBuilder(signer as unknown as ConstructorParameters<typeof OrderBuilder>[0], 80002, type, pairs[type === 1 ? 2 : 1]);
    const bad = await swapped.buildOrder({ tokenID: '1001', price: 0.55, size: 10, side: Side.BUY }, { tickSize: '0.01', negRisk: false }, 2);
    const badBody = JSON.parse(JSON.stringify(orderToJsonV2(bad as Parameters<typeof orderToJsonV2>[0], API_KEY, 'GTC' as Parameters<typeof orderToJsonV2>[2])));
    rejected(await one(badBody, { apiKey: API_KEY, address: acct.address.toLowerCase() }, compatDeps), 'PM_ERR_MAKER_WALLET', new RegExp(pairs[type].toLowerCase()));
  }
});

test('uint256 text is made canonical without BigInt: leading zeros dropped, 2^256 - 1 the largest, anything else refused', () => {
  const max = ((1n << 256n) - 1n).toString();
  for (const [input, out] of [
    ['0', '0'], ['000', '0'], ['007', '7'], ['1767225600000', '1767225600000'], ['0001767225600000', '1767225600000'],
    [max, max], ['0' + max.slice(1), max.slice(1)], [(BigInt(max) - 1n).toString(), (BigInt(max) - 1n).toString()],
    [(1n << 255n).toString(), (1n << 255n).toString()],
  ] as const) assert.equal(canonicalUint(input), out, input);
  for (const input of [(BigInt(max) + 1n).toString(), '9'.repeat(78), '1'.repeat(79), '0' + max, '', '12a', '-1', ' 1', '1.0']) assert.equal(canonicalUint(input), undefined, input);
  assert.equal(canonicalUint(42), '42');
  assert.equal(canonicalUint(Number.MAX_SAFE_INTEGER + 1), undefined);
  assert.equal(canonicalUint(-1), undefined);
  // Against BigInt over random texts of every length.
  for (let n = 1; n <= 78; n++) {
    const text = Array.from({ length: n }, () => String(Math.floor(Math.random() * 10))).join('');
    const b = BigInt(text);
    assert.equal(canonicalUint(text), b <= BigInt(max) ? b.toString() : undefined, text);
  }
});

test("a gateway's hints (ROLE=gateway): used where they bind the exact signed order and domain, the pool recovers the rest, and no hint makes an order pass as another", async () => {
  const good = await submission(alice);
  const negRisk = await submission(alice, {}, { negRisk: true });
  const unknown = await signedSubmission(alice, domains.normal, { tokenId: '3003', owner: API_KEY });
  // The gateway: one hint per submission it can normalize; none for a token it does not know.
  const hints = await orderHints([good, negRisk, unknown], caller(alice), deps, false);
  assert.equal(hints.length, 3);
  assert.ok(hints[0] !== null && hints[1] !== null);
  assert.equal(hints[2], null);
  const direct = await checkOrders([good, negRisk], caller(alice), deps);
  assert.equal(hints[0]!.id, (direct[0] as { order: { orderId: string } }).order.orderId);
  assert.equal(hints[0]!.r, alice.address.toLowerCase());

  // The sequencer: with matching hints the pool is not asked.
  const counted: number[] = [];
  const watched: OrderCheckDeps = { ...deps, pool: { verifyOrders: (o: unknown[], d: unknown) => (counted.push(o.length), pool.verifyOrders(o as never, d as never)) } as unknown as SigPool };
  const hinted = await checkOrders([good, negRisk], caller(alice), watched, false, hints.slice(0, 2));
  assert.deepEqual(hinted, direct);
  assert.deepEqual(counted, []);

  // A hint for another order (a key that does not match) is ignored: the pool recovers, the answer is the truth.
  const other = await submission(alice, { makerAmount: '3000000' });
  const wrong = await checkOrders([other], caller(alice), watched, false, [hints[0]]);
  assert.deepEqual(counted, [1]);
  assert.equal(wrong[0]!.ok, true);
  assert.notEqual((wrong[0] as { order: { orderId: string } }).order.orderId, hints[0]!.id);

  // A hint that claims a signer for the right order but lies about it binds nothing else: the check still
  // compares the claimed signer with the order's, so a forged "recovered" of another wallet is refused.
  const lie = await checkOrders([good], caller(alice), watched, false, [{ ...hints[0]!, r: bob.address.toLowerCase() }]);
  assert.equal(lie[0]!.ok, false);
  rejected(lie[0]!, 'PM_ERR_ORDER_SIGNATURE');

  // A hint whose id is not the digest of what was signed (a victim's order id, say) is not used: the id the
  // order gets is always the hash of its own signed fields, so it can never be answered as another order.
  counted.length = 0;
  const victimId = (direct[1] as { order: { orderId: string } }).order.orderId;
  const renamed = await checkOrders([good], caller(alice), watched, false, [{ ...hints[0]!, id: victimId }]);
  assert.deepEqual(counted, [1], 'the pool recovered the order itself');
  assert.equal(renamed[0]!.ok, true);
  assert.equal((renamed[0] as { order: { orderId: string } }).order.orderId, hints[0]!.id, "the order's own digest, not the hint's id");

  // A Safe order's hint binds its maker and type: used as is, and not for the same struct with another maker.
  const safe = await submission(alice, { signatureType: 2, maker: funders.makerOf(alice.address, 2) });
  const [safeHint] = await orderHints([safe], caller(alice), deps, false);
  assert.ok(safeHint !== null && safeHint.r === alice.address.toLowerCase(), 'a hint for the Safe order, recovered to its signer');
  counted.length = 0;
  const safeChecked = await checkOrders([safe], caller(alice), watched, false, [safeHint]);
  assert.ok(safeChecked[0]!.ok, 'the Safe order passes on its hint');
  assert.deepEqual([safeChecked[0].order.wallet, safeChecked[0].order.orderId], [funders.makerOf(alice.address, 2), safeHint!.id]);
  assert.deepEqual(counted, []);
  const proxy = await submission(alice, { signatureType: 1, maker: funders.makerOf(alice.address, 1) });
  await checkOrders([proxy], caller(alice), watched, false, [safeHint]);
  assert.deepEqual(counted, [1], 'the Safe order\'s hint is not the proxy order\'s');

  // Malformed hints are no hints.
  counted.length = 0;
  await checkOrders([good], caller(alice), watched, false, [{ k: 1 }]);
  await checkOrders([good], caller(alice), watched, false, 'nonsense');
  assert.deepEqual(counted, [1, 1]);
});
