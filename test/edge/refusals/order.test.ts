/**
 * Order refusals that explain themselves (src/edge/refusals/order.ts): each common mistake made on purpose,
 * the refusal's body exactly the platform's and its reason naming the mistake.
 *
 * First the checks alone (checkOrders with a real signature pool): orders signed by the platform's own
 * client for its mainnet V2, V3 and V1 exchanges, for this exchange's other domain (neg-risk read wrong
 * both ways), the V1 struct under this exchange's domain, a v byte with a chain id, a high s, a changed
 * field; the synchronous rules (owner an address, maker and signer swapped, signature type, token, market,
 * post-only type, GTD too soon, amounts); the bounds (at most 12 recoveries an order, the budget, nothing on
 * the accept path, nothing at all with explain off). Then the admission reasons from engine codes, and the
 * same through HTTP: `X-Refusal-Reason` on POST /order's 400 and POST /orders' 200, and none with
 * `auth.explainRefusals: false`, where every body is the same.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { getAddress } from 'viem';
import { OrderBuilder, Side, orderToJsonV1, orderToJsonV2 } from '@polymarket/clob-client-v2';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { App } from '../../../src/node/app.ts';
import { apiError, resultError, Errors } from '../../../src/domain/errors.ts';
import { type OrderDomain, type OrderStruct } from '../../../src/edge/auth/eip712.ts';
import { signedSubmission, typedOrder, type SignedSubmission } from '../../fixtures/typed-order.ts';
import { checkOrders, orderDomainsOf, type OrderCheckDeps, type OrderCheckResult, type TokenMarket } from '../../../src/edge/auth/order-check.ts';
import { KNOWN_ORDER_DOMAINS } from '../../../src/edge/refusals/known-domains.ts';
import { admissionRefusal, type AdmissionContext } from '../../../src/edge/refusals/order.ts';
import { MAX_DIAGNOSIS_RECOVERIES } from '../../../src/edge/refusals/order-signature.ts';
import { DiagnosisBudget, RECOVERY_COST } from '../../../src/edge/refusals/budget.ts';
import { REFUSAL_CLASSES } from '../../../src/edge/refusals/reason.ts';
import { Funders } from '../../../src/edge/auth/funders.ts';
import { SigPool } from '../../../src/edge/auth/sig-pool.ts';
import { ManualClock, nowSeconds } from '../../../src/runtime/clock.ts';
import { testConfig } from '../../../src/runtime/config.ts';
import { startTradingApp } from '../../fixtures/trading-app.ts';
import { TestClient, units } from '../../fixtures/trading-client.ts';

const ZERO32 = '0x' + '0'.repeat(64);
const API_KEY = '8b0a7c2e-0000-4000-8000-000000000001';
const HARDHAT0: `0x${string}` = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const alice = privateKeyToAccount(HARDHAT0);
const bob = privateKeyToAccount(('0x' + '22'.repeat(32)) as `0x${string}`);
const A = alice.address.toLowerCase();
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

const domains = orderDomainsOf(testConfig().auth);
const funders = new Funders(testConfig().auth.walletFactories);
const COND_A = '0x' + 'aa'.repeat(32);
const COND_N = '0x' + 'bb'.repeat(32);
const markets = new Map<string, TokenMarket>([
  ['1001', { conditionId: COND_A, negRisk: false }],
  ['2002', { conditionId: COND_N, negRisk: true }],
]);
const MAINNET_V2 = KNOWN_ORDER_DOMAINS.find((k) => k.domain.chainId === 137 && k.domain.version === '2' && !k.negRisk)!.domain;

const clock = new ManualClock(Date.UTC(2026, 0, 1));
let pool: SigPool;
/** Orders per recoverDigests call, as the diagnosis sent them. */
let recoveries: number[] = [];

function depsWith(over: Partial<OrderCheckDeps> = {}): OrderCheckDeps {
  const spy = {
    verifyOrders: pool.verifyOrders.bind(pool),
    recoverDigests: (items: Parameters<SigPool['recoverDigests']>[0], until?: string) => {
      recoveries.push(items.length);
      return pool.recoverDigests(items, until);
    },
  } as unknown as SigPool;
  return { pool: spy, domains, funders, market: (t) => markets.get(t), clock, explain: true, diagnoses: new DiagnosisBudget({ network: { perSecond: 1e12, burst: 1e12 }, wallet: { perSecond: 1e12, burst: 1e12 }, all: { perSecond: 1e12, burst: 1e12 } }), ...over };
}

before(() => {
  pool = new SigPool({ threads: 1 });
});
after(() => pool.close());

const typed = typedOrder;

type Sub = SignedSubmission;

/** A V2 submission signed by `acct` under `domain` (default: this exchange's domain for the token's market). */
function submission(acct: PrivateKeyAccount, o: { negRisk?: boolean; domain?: OrderDomain; over?: Partial<OrderStruct>; orderType?: string } = {}): Promise<Sub> {
  return signedSubmission(acct, o.domain ?? (o.negRisk ? domains.negRisk : domains.normal), { tokenId: o.negRisk ? '2002' : '1001', owner: API_KEY, over: o.over, orderType: o.orderType });
}

const caller = (acct: PrivateKeyAccount) => ({ apiKey: API_KEY, address: acct.address.toLowerCase() });

async function one(sub: unknown, d: OrderCheckDeps = depsWith(), who = caller(alice)): Promise<OrderCheckResult & { ok: false }> {
  const [r] = await checkOrders([sub], who, d);
  assert.equal(r!.ok, false, 'expected a refusal');
  return r as OrderCheckResult & { ok: false };
}

/** The refusal's body is the platform's message and its reason of `cls` matches every pattern. */
function explains(r: OrderCheckResult & { ok: false }, message: string, cls: string, ...patterns: RegExp[]): void {
  assert.equal(r.error.message, message);
  assert.ok(r.error.reason, `a reason for "${message}"`);
  assert.equal(r.error.reason.class, cls, r.error.reason.text);
  assert.ok((REFUSAL_CLASSES as readonly string[]).includes(r.error.reason.class));
  for (const p of patterns) assert.match(r.error.reason.text, p);
  assert.doesNotMatch(r.error.reason.text, /[\r\n]/);
}

/** The official client, signing as alice for `chainId`. */
function officialBuilder(chainId: 137 | 80002): OrderBuilder {
  const signer = { account: alice, signTypedData: (args: Parameters<typeof alice.signTypedData>[0]) => alice.signTypedData(args) };
  return new OrderBuilder(signer as unknown as ConstructorParameters<typeof OrderBuilder>[0], chainId);
}

test('the pool recovers a list of digests for one signature in order, stopping after the first that gives the expected address', async () => {
  const sub = await submission(alice);
  const sig = sub.order.signature as string;
  const o = { ...(sub.order as unknown as OrderStruct), side: 0 as const };
  const { hashTypedData } = await import('viem');
  const digest = (d: OrderDomain) => Buffer.from(hashTypedData(typed(o, d)).slice(2), 'hex');
  const items = [MAINNET_V2, domains.normal, domains.negRisk].map((d) => ({ digest: digest(d), signature: sig }));
  const got = await pool.recoverDigests(items, A);
  assert.equal(got.length, 2, 'nothing recovered past the match');
  assert.match(got[0]!, /^0x[0-9a-f]{40}$/);
  assert.notEqual(got[0], A);
  assert.equal(got[1], A);
  assert.equal((await pool.recoverDigests(items)).length, 3, 'without `until`, every item');
  const junk = await pool.recoverDigests([{ digest: items[0]!.digest, signature: '0x' + '00'.repeat(65) }, { digest: items[1]!.digest, signature: sig.slice(0, 130) + '05' }], A);
  assert.deepEqual(junk, [undefined, undefined], 'a malformed signature recovers to nothing, never throws');
});

test("the platform's client signing for its mainnet V2 exchange: the reason names that domain and the way out", async () => {
  for (const negRisk of [false, true]) {
    const order = await officialBuilder(137).buildOrder({ tokenID: negRisk ? '2002' : '1001', price: 0.55, size: 10, side: Side.BUY }, { tickSize: '0.01', negRisk }, 2);
    const body = JSON.parse(JSON.stringify(orderToJsonV2(order as Parameters<typeof orderToJsonV2>[0], API_KEY, 'GTC' as Parameters<typeof orderToJsonV2>[2])));
    const ours = negRisk ? domains.negRisk : domains.normal;
    explains(
      await one(body),
      'invalid order signature',
      'order_signature',
      new RegExp(`^order signature recovers to 0x[0-9a-f]{40} under this exchange's ${negRisk ? 'neg-risk ' : ''}domain \\(chain ${ours.chainId}, exchange ${ours.verifyingContract.toLowerCase()}\\), not to the signer ${A}`),
      new RegExp(`it recovers to the signer under the platform's mainnet V2 ${negRisk ? 'neg-risk ' : ''}exchange \\(chain 137\\)`),
      /GET \/exchange-info/,
      /or start this exchange with PROFILE=platform, which takes it/,
    );
  }
});

test("a Safe order signed for the platform's mainnet: the diagnosis digests its maker and names its signer", async () => {
  const signer = { account: alice, signTypedData: (args: Parameters<typeof alice.signTypedData>[0]) => alice.signTypedData(args) };
  const safe = getAddress(funders.makerOf(A, 2));
  const builder = new OrderBuilder(signer as unknown as ConstructorParameters<typeof OrderBuilder>[0], 137, 2, safe);
  const order = await builder.buildOrder({ tokenID: '1001', price: 0.55, size: 10, side: Side.BUY }, { tickSize: '0.01', negRisk: false }, 2);
  const body = JSON.parse(JSON.stringify(orderToJsonV2(order as Parameters<typeof orderToJsonV2>[0], API_KEY, 'GTC' as Parameters<typeof orderToJsonV2>[2])));
  explains(await one(body), 'invalid order signature', 'order_signature', new RegExp(`not to the signer ${A}`), /it recovers to the signer under the platform's mainnet V2 exchange \(chain 137\)/);
});

test("the platform's V3 exchange and its Amoy test chain are named too", async () => {
  const v3 = await officialBuilder(137).buildExchangeV3OrderFromAmounts({ tokenID: '1001', makerAmount: '5500000', takerAmount: '10000000', side: Side.BUY } as Parameters<OrderBuilder['buildExchangeV3OrderFromAmounts']>[0]);
  const v3Body = JSON.parse(JSON.stringify(orderToJsonV2(v3 as Parameters<typeof orderToJsonV2>[0], API_KEY, 'GTC' as Parameters<typeof orderToJsonV2>[2])));
  explains(await one(v3Body), 'invalid order signature', 'order_signature', /under the platform's mainnet V3 exchange \(chain 137\)/);
  const amoy = await officialBuilder(80002).buildOrder({ tokenID: '1001', price: 0.55, size: 10, side: Side.BUY }, { tickSize: '0.01', negRisk: false }, 2);
  const amoyBody = JSON.parse(JSON.stringify(orderToJsonV2(amoy as Parameters<typeof orderToJsonV2>[0], API_KEY, 'GTC' as Parameters<typeof orderToJsonV2>[2])));
  const r = await one(amoyBody);
  explains(r, 'invalid order signature', 'order_signature', /under the platform's Amoy test chain V2 exchange \(chain 80002\)/, /or start this exchange with PROFILE=clob-v2, which takes it/);
  // The platform profile adopts the mainnet's domains only: it is no way out for an Amoy signature, nor is any profile for the V3 one.
  assert.doesNotMatch(r.error.reason!.text, /PROFILE=platform/);
  assert.doesNotMatch((await one(v3Body)).error.reason!.text, /PROFILE=/);
});

test('the V1 struct, signed by the official client for the V1 exchange, with the taker, expiration, nonce and feeRateBps it carries', async () => {
  const order = await officialBuilder(137).buildOrder(
    { tokenID: '1001', price: 0.55, size: 10, side: Side.BUY, nonce: 7, feeRateBps: 0, taker: bob.address } as Parameters<OrderBuilder['buildOrder']>[0],
    { tickSize: '0.01', negRisk: false },
    1,
  );
  const v1 = JSON.parse(JSON.stringify(orderToJsonV1(order as Parameters<typeof orderToJsonV1>[0], API_KEY, 'GTC' as Parameters<typeof orderToJsonV1>[2])));
  assert.equal(v1.order.nonce, '7');
  // As the V1 client sends it, the order fails the V2 submission shape (no timestamp): the batch says why.
  const [shape] = await checkOrders([v1], caller(alice), depsWith());
  explains(shape as OrderCheckResult & { ok: false }, 'missing order.timestamp', 'order_signature', /older V1 order struct/, /V2 order \(timestamp, metadata, builder\)/);
  // With a timestamp added it is checked, and its signature is tried as the V1 struct.
  const hybrid = { ...v1, order: { ...v1.order, timestamp: '1767225600000' } };
  explains(await one(hybrid), 'invalid order signature', 'order_signature', /under the platform's mainnet V1 exchange \(the older order struct\) \(chain 137\)/, /verifies the V2 order struct/);
});

test('the V1 struct signed for this exchange\'s own domain', async () => {
  const ours = domains.normal;
  const signature = await alice.signTypedData({
    domain: { name: ours.name, version: ours.version, chainId: ours.chainId, verifyingContract: ours.verifyingContract as `0x${string}` },
    types: {
      Order: [
        { name: 'salt', type: 'uint256' }, { name: 'maker', type: 'address' }, { name: 'signer', type: 'address' }, { name: 'taker', type: 'address' },
        { name: 'tokenId', type: 'uint256' }, { name: 'makerAmount', type: 'uint256' }, { name: 'takerAmount', type: 'uint256' }, { name: 'expiration', type: 'uint256' },
        { name: 'nonce', type: 'uint256' }, { name: 'feeRateBps', type: 'uint256' }, { name: 'side', type: 'uint8' }, { name: 'signatureType', type: 'uint8' },
      ],
    },
    primaryType: 'Order',
    message: {
      salt: 5n, maker: alice.address, signer: alice.address, taker: '0x0000000000000000000000000000000000000000', tokenId: 1001n,
      makerAmount: 5_500_000n, takerAmount: 10_000_000n, expiration: 0n, nonce: 3n, feeRateBps: 0n, side: 0, signatureType: 0,
    },
  });
  const sub = { order: { salt: '5', maker: alice.address, signer: alice.address, tokenId: '1001', makerAmount: '5500000', takerAmount: '10000000', side: 'BUY', signatureType: 0, timestamp: '1', nonce: '3', signature }, owner: API_KEY, orderType: 'GTC' };
  explains(await one(sub), 'invalid order signature', 'order_signature', /when read as the older V1 order struct .* under this exchange's domain: sign the V2 struct/);
});

test("this exchange's other domain: neg-risk read wrong both ways, with the market's flag and where to read it", async () => {
  // Signed for the neg-risk exchange, on a plain market.
  const plain = await submission(alice, { domain: domains.negRisk });
  explains(
    await one(plain),
    'invalid order signature',
    'order_signature',
    new RegExp(`it recovers to the signer under this exchange's neg-risk domain \\(chain ${domains.negRisk.chainId}, exchange ${domains.negRisk.verifyingContract.toLowerCase()}\\)`),
    /token 1001's market has neg_risk false \(GET \/neg-risk\?token_id=1001 tells it\)/,
    /sign its orders for this exchange's domain$/,
  );
  // Signed for the plain exchange, on a neg-risk market.
  const neg = await submission(alice, { negRisk: true, domain: domains.normal });
  explains(await one(neg), 'invalid order signature', 'order_signature', /under this exchange's domain \(chain/, /token 2002's market has neg_risk true/, /sign its orders for this exchange's neg-risk domain$/);
});

test('a changed field, a v byte with a chain id, a high s: each says what it is', async () => {
  const sub = await submission(alice);
  const changed = await one({ ...sub, order: { ...sub.order, makerAmount: '5500001' } });
  explains(changed, 'invalid order signature', 'order_signature', /^order signature recovers to 0x[0-9a-f]{40} under this exchange's domain/, /a signed field differs from what was signed/);

  const sig = sub.order.signature as string;
  const recid = parseInt(sig.slice(130), 16) - 27;
  // EIP-155 style v for chain 1: 35 + 2 * 1 + recid.
  const eip155 = sig.slice(0, 130) + (37 + recid).toString(16);
  explains(await one({ ...sub, order: { ...sub.order, signature: eip155 } }), 'invalid order signature', 'order_signature', new RegExp(`v byte is ${37 + recid}: expected 27 or 28`), new RegExp(`with v ${27 + recid} it recovers to the signer`));

  const s = BigInt('0x' + sig.slice(66, 130));
  const high = sig.slice(0, 66) + (N - s).toString(16).padStart(64, '0') + (recid === 0 ? '1c' : '1b');
  explains(await one({ ...sub, order: { ...sub.order, signature: high } }), 'invalid order signature', 'order_signature', /high s/, /it recovers to the signer under this exchange's domain/);

  // v as 0/1 is taken here (it recovers), so an order refused for its domain notes that the platform would not take it.
  const v01 = await submission(alice, { domain: MAINNET_V2 });
  const v01sig = v01.order.signature as string;
  const low = v01sig.slice(0, 130) + (parseInt(v01sig.slice(130), 16) - 27).toString(16).padStart(2, '0');
  explains(await one({ ...v01, order: { ...v01.order, signature: low } }), 'invalid order signature', 'order_signature', /mainnet V2 exchange/, /v is [01]: taken here, but the platform's contract takes only 27\/28/);
});

test('bounds: at most 12 recoveries an order, the V1 round only when the V2 one found nothing; the budget; nothing for an accepted order; nothing at all with explain off', async () => {
  recoveries = [];
  const sub = await submission(alice);
  await one({ ...sub, order: { ...sub.order, makerAmount: '5500001' } });
  // No match: the V2-struct round (this exchange's other domain, the platform's 4 V2 and 2 V3 exchanges),
  // then the V1 round (4 V1 exchanges, this exchange's domain): every candidate, and no more than the bound.
  assert.deepEqual(recoveries, [7, 5]);
  assert.equal(7 + 5, MAX_DIAGNOSIS_RECOVERIES);

  recoveries = [];
  await one(await submission(alice, { domain: domains.negRisk }));
  assert.deepEqual(recoveries, [7], 'a V2-struct match: no V1 round (and the worker stops at the first match)');

  recoveries = [];
  const ok = await checkOrders([sub, sub], caller(alice), depsWith());
  assert.ok(ok.every((r) => r.ok));
  assert.deepEqual(recoveries, [], 'an accepted order costs no diagnosis');

  recoveries = [];
  let t = 0;
  // Room for two diagnoses (each takes its most recoveries first), then one a second.
  const one12 = 12 * RECOVERY_COST;
  const budget = new DiagnosisBudget({ network: { perSecond: one12, burst: 2 * one12 }, wallet: { perSecond: one12, burst: 2 * one12 }, all: { perSecond: one12, burst: 2 * one12 } }, () => t);
  const bad = await submission(alice, { domain: MAINNET_V2 });
  const three = await checkOrders([bad, bad, bad], caller(alice), depsWith({ diagnoses: budget }));
  const texts = three.map((r) => (r as { error: { reason?: { text: string } } }).error.reason!.text);
  assert.equal(texts.filter((x) => /mainnet V2 exchange/.test(x)).length, 2, 'two diagnosed (the burst)');
  const skipped = texts.find((x) => /skipped under load/.test(x))!;
  assert.match(skipped, new RegExp(`^order signature does not recover to the signer ${A} under this exchange's domain \\(chain ${domains.normal.chainId}`));
  assert.equal(recoveries.length, 2);
  t = 1000;
  explains(await one(bad, depsWith({ diagnoses: budget })), 'invalid order signature', 'order_signature', /mainnet V2 exchange/);

  recoveries = [];
  const off = await checkOrders([bad, { ...sub, owner: alice.address }, { ...sub, order: { ...sub.order, tokenId: '9999' } }], caller(alice), depsWith({ explain: false }));
  assert.deepEqual(off.map((r) => (r.ok ? 'ok' : r.error.message)), ['invalid order signature', 'the order owner has to be the owner of the API KEY', 'market not found for token 9999']);
  assert.ok(off.every((r) => !r.ok && r.error.reason === undefined), 'no reason');
  assert.deepEqual(recoveries, [], 'no diagnosis');
});

test('rule refusals: owner, signer and maker (both addresses named, a swap spotted), signature type, token, market, post-only, expiration, amounts', async () => {
  const sub = await submission(alice);
  explains(await one({ ...sub, owner: alice.address }), 'the order owner has to be the owner of the API KEY', 'order_owner', new RegExp(`owner ${alice.address} is an address: owner must be the API key id the request is signed with \\(${API_KEY}\\)`));
  const other = '11111111-2222-4333-8444-555555555555';
  explains(await one({ ...sub, owner: other }), 'the order owner has to be the owner of the API KEY', 'order_owner', new RegExp(`owner ${other} is another API key than the one this request is signed with`));
  // Anything else is not echoed (a client that sent its secret there does not get it back in a header).
  const secretish = 'c2VjcmV0LXNob3VsZC1ub3QtYmUtZWNob2Vk';
  const notEchoed = await one({ ...sub, owner: secretish });
  explains(notEchoed, 'the order owner has to be the owner of the API KEY', 'order_owner', /owner \(36 characters, not an API key id\) is not the API key/);
  assert.ok(!notEchoed.error.reason!.text.includes(secretish));

  const B = bob.address.toLowerCase();
  const swapped = await submission(alice, { over: { signer: bob.address, maker: alice.address } });
  explains(await one(swapped), 'the order signer address has to be the address of the API KEY', 'order_signer', new RegExp(`order.signer ${B} is not the address of the API key the request is signed with, ${A} \\(the maker is: maker and signer look swapped\\)`));
  const makerBob = await submission(alice, { over: { maker: bob.address } });
  const [, aliceProxy, aliceSafe] = funders.walletsOf(A);
  explains(
    await one(makerBob),
    'the order maker has to be the signer for signature type 0 (EOA)',
    'order_signer',
    new RegExp(`order.maker ${B} is not order.signer ${A}: an EOA order \\(signatureType 0\\) is made by its signer; order.maker ${B} is none of the wallets of the API key's address ${A}: ${A} \\(signatureType 0\\), its proxy wallet ${aliceProxy} \\(1\\), its Safe ${aliceSafe} \\(2\\)`),
  );
  // The signer's own Safe as maker of an EOA order: the type that names it is said.
  const eoaForSafe = await submission(alice, { over: { maker: aliceSafe } });
  explains(await one(eoaForSafe), 'the order maker has to be the signer for signature type 0 (EOA)', 'order_signer', new RegExp(`order.maker ${aliceSafe} is its Safe \\(POLY_GNOSIS_SAFE, signatureType 2\\) of the API key's address ${A}: send signatureType 2`));

  // A proxy order whose maker is not the signer's proxy wallet: what the factory derives is named, and what the maker is.
  const proxyBob = await submission(alice, { over: { signatureType: 1, maker: bob.address } });
  explains(
    await one(proxyBob),
    `the order maker has to be the signer's proxy wallet ${aliceProxy} for signature type 1`,
    'order_signer',
    new RegExp(`a POLY_PROXY order's maker is the proxy wallet its signer controls: the proxy factory 0xab45c5a4b0c941a2f231c04c3f49182e1a254052 derives ${aliceProxy} from ${A} \\(CREATE2`),
    new RegExp(`order.maker ${B} is none of the wallets`),
  );
  const safeAsProxy = await submission(alice, { over: { signatureType: 1, maker: aliceSafe } });
  explains(await one(safeAsProxy), `the order maker has to be the signer's proxy wallet ${aliceProxy} for signature type 1`, 'order_signer', /the proxy factory/, /is its Safe \(POLY_GNOSIS_SAFE, signatureType 2\) of the API key's address .*: send signatureType 2/);
  const selfAsSafe = await submission(alice, { over: { signatureType: 2, maker: alice.address } });
  explains(await one(selfAsSafe), `the order maker has to be the signer's Safe ${aliceSafe} for signature type 2`, 'order_signer', /the Safe factory 0xaacfeea03eb1561c4e67d661e40682bd20e3541b derives/, /is the signer itself \(EOA, signatureType 0\) .*: send signatureType 0/);

  // The funder named as signer: the key's address signs, the funder is the maker.
  const safeSigns = await submission(alice, { over: { signatureType: 2, signer: aliceSafe, maker: aliceSafe } });
  explains(await one(safeSigns), 'the order signer address has to be the address of the API KEY', 'order_signer', new RegExp(`order.signer ${aliceSafe} is not the address of the API key .* \\(it is the key's Safe: a funder is the maker, the key's address signs\\)`));

  const contract = await submission(alice, { over: { signatureType: 3, maker: bob.address } });
  explains(
    await one(contract),
    'signature type 3 is not supported; use 0 (EOA), 1 (POLY_PROXY) or 2 (POLY_GNOSIS_SAFE)',
    'order_signature_type',
    /signature type 3 \(POLY_1271\) is not supported: this exchange verifies EOA \(0\), POLY_PROXY \(1\) and POLY_GNOSIS_SAFE \(2\) orders/,
    /ERC-1271/,
    new RegExp(A),
  );

  explains(await one({ ...sub, order: { ...sub.order, tokenId: '9999' } }), 'market not found for token 9999', 'order_market', /token 9999 names no market/);
  const cond = await one({ ...sub, order: { ...sub.order, conditionId: COND_N } });
  assert.equal(cond.error.spec.code, 'PM_ERR_CONDITION_MISMATCH');
  assert.equal(cond.error.reason?.class, 'order_market');
  assert.match(cond.error.reason!.text, new RegExp(`order.conditionId ${COND_N} is not the market of token 1001; token 1001's market is ${COND_A}`));

  const fok = await submission(alice, { orderType: 'FOK' });
  explains(await one({ ...fok, postOnly: true }), Errors.PM_ERR_POST_ONLY_TYPE.message, 'order_rule', /postOnly is set on a FOK order/);

  const now = nowSeconds(clock);
  const gtd = await submission(alice, { orderType: 'GTD' });
  explains(await one({ ...gtd, expiration: now + 45 }), 'invalid expiration', 'order_expiration', new RegExp(`GTD expiration ${now + 45} is 45 s ahead of this server, 15 s short of the minimum 60 s ahead; this server's time is ${now}`));
  explains(await one({ ...gtd, order: { ...gtd.order, expiration: String(now - 30) } }), 'invalid expiration', 'order_expiration', /GTD order.expiration \d+ is 30 s in the past, 90 s short of the minimum 60 s ahead/);
  explains(await one(gtd), 'invalid expiration', 'order_expiration', /a GTD order needs an expiration/);
  explains(await one({ ...sub, expiration: now + 3600 }), 'invalid expiration', 'order_expiration', new RegExp(`expiration ${now + 3600} is set on a GTC order: only GTD orders expire`));

  const dec = await one({ ...sub, order: { ...sub.order, makerAmount: '5.5' } });
  assert.equal(dec.error.reason?.class, 'order_amounts');
  assert.match(dec.error.reason!.text, /makerAmount 5.5 is a decimal: amounts are whole units of 10\^-6 \(5.5 would be 5500000\)/);
  const zero = await one({ ...sub, order: { ...sub.order, takerAmount: '0' } });
  assert.match(zero.error.reason!.text, /takerAmount is 0: both amounts must be positive; a BUY offers makerAmount USDC for takerAmount tokens/);
  const big = await one({ ...sub, order: { ...sub.order, makerAmount: '9007199254740993' } });
  assert.match(big.error.reason!.text, /makerAmount 9007199254740993 is above 2\^53 - 1 units/);
});

test('admission reasons from engine and sandbox codes: tick, minimum size, amounts, market state, balance, closed-only', () => {
  const order = {
    orderId: '0x' + '01'.repeat(32), wallet: A, tokenId: '1001', side: 'BUY' as 'BUY' | 'SELL', orderType: 'GTC' as const, postOnly: false,
    makerAmount: 5_230_000, takerAmount: 10_000_000, expiration: 0, builder: ZERO32, owner: API_KEY, signer: A, salt: '1', timestamp: '1',
    signatureType: 0, signature: '0x', conditionId: COND_A,
  };
  const market = { tickPips: 100, minSizeUnits: 5_000_000, acceptingOrders: true, resolved: -1 };
  const ctx = (m: typeof market | undefined = market): AdmissionContext => ({
    market: () => m,
    balances: () => ({ usdc: { available: 2_000_000 }, tokens: [{ tokenId: '1001', available: 1_500_000 }] }),
    now: 1_767_225_600,
  });
  const reason = (e: ReturnType<typeof apiError>, o = order, c = ctx()) => admissionRefusal(e, o, c);

  const tick = reason(resultError(Errors.PM_ERR_ORDER_TICK.result, { id: order.orderId, price: '0.523', tick: '0.01' }));
  assert.deepEqual(tick, { class: 'order_tick', text: "price 0.523 is not a multiple of the market's tick 0.01 (GET /tick-size)" });
  const one = reason(apiError('PM_ERR_ORDER_TICK', { id: order.orderId, price: '1', tick: '0.01' }), { ...order, makerAmount: 10_000_000 });
  assert.equal(one!.text, "price 1 is outside the market's range [0.01, 0.99] (tick 0.01)");
  const pips = reason(apiError('PM_ERR_ORDER_TICK', { id: order.orderId, price: '0.52345', tick: '0.01' }), { ...order, makerAmount: 5_234_500 });
  assert.equal(pips!.text, "price 0.52345 (makerAmount/takerAmount 5234500/10000000) is not a whole number of pips, so not a multiple of the market's tick 0.01");

  const min = reason(apiError('PM_ERR_ORDER_MIN_SIZE', { id: order.orderId, size: '1', min: '5' }), { ...order, makerAmount: 500_000, takerAmount: 1_000_000 });
  assert.deepEqual(min, { class: 'order_size', text: "size 1 tokens is under the market's minimum order size 5 (GET /book min_order_size)" });

  const lots = reason(apiError('PM_ERR_ORDER_AMOUNTS', { id: order.orderId, detail: 'size must be a whole number of 0.01 tokens' }), { ...order, takerAmount: 10_005_000 });
  assert.deepEqual(lots, { class: 'order_amounts', text: 'size 10.005 tokens (BUY takerAmount 10005000) is not a whole number of 0.01 tokens (10000 units)' });

  assert.match(reason(apiError('PM_ERR_MARKET_NOT_READY'), order, ctx({ ...market, acceptingOrders: false }))!.text, new RegExp(`market ${COND_A} is not accepting orders`));
  assert.match(reason(apiError('PM_ERR_MARKET_NOT_READY'), order, ctx({ ...market, resolved: 1 }))!.text, /is resolved \(outcome 1 won\)/);

  const usdc = reason(apiError('PM_ERR_BALANCE'));
  assert.deepEqual(usdc, { class: 'order_rule', text: `a BUY reserves its USDC: 5.23 (makerAmount) plus the taker fee it may pay, and wallet ${A} has 2 USDC available (GET /balance-allowance)` });
  const tokens = reason(apiError('PM_ERR_BALANCE'), { ...order, side: 'SELL', makerAmount: 10_000_000, takerAmount: 5_000_000 });
  assert.match(tokens!.text, /a SELL reserves the tokens it offers: 10 \(makerAmount\) of token 1001, and wallet .* has 1.5 available/);
  // A Safe order spends its funder's balance: the reason says whose, and where to read it.
  const safe = funders.makerOf(A, 2);
  const forSafe = reason(apiError('PM_ERR_BALANCE'), { ...order, wallet: safe, signatureType: 2 });
  assert.equal(
    forSafe!.text,
    `a BUY reserves its USDC: 5.23 (makerAmount) plus the taker fee it may pay, and wallet ${safe} (the order's maker: a signatureType 2 order spends its funder's balance, not its signer's) has 2 USDC available (GET /balance-allowance?signature_type=2)`,
  );
  assert.match(reason(apiError('PM_ERR_CLOSED_ONLY', { address: A }), { ...order, wallet: safe, signatureType: 2 })!.text, new RegExp(`wallet ${A} is in closed-only mode`), 'the closed-only address the sandbox named');
  assert.match(tokens!.text, /a SELL reserves the tokens it offers: 10 \(makerAmount\) of token 1001, and wallet .* has 1.5 available \(GET \/balance-allowance\?asset_type=CONDITIONAL\)$/);
  // Tokens just bought, whose trade is still settling (sandbox.trades): held, and said so.
  const settlingCtx = (): AdmissionContext => ({ ...ctx(), unsettled: () => ({ usdc: 3_000_000, tokens: [{ tokenId: '1001', pending: 8_500_000 }, { tokenId: '7', pending: 1 }] }) });
  const held = reason(apiError('PM_ERR_BALANCE'), { ...order, side: 'SELL', makerAmount: 10_000_000, takerAmount: 5_000_000 }, settlingCtx());
  assert.match(
    held!.text,
    /has 1.5 available \(GET \/balance-allowance\?asset_type=CONDITIONAL\); 8.5 more of them are held by trades still settling \(MATCHED or RETRYING: spendable once MINED, as on the platform; GET \/data\/trades shows their status\)$/,
  );
  assert.match(reason(apiError('PM_ERR_BALANCE'), order, settlingCtx())!.text, /has 2 USDC available \(GET \/balance-allowance\); 3 more USDC are held by trades still settling/);

  assert.match(reason(apiError('PM_ERR_CLOSED_ONLY', { address: A }))!.text, new RegExp(`wallet ${A} is in closed-only mode`));
  assert.match(reason(apiError('PM_ERR_POST_ONLY_MODE', undefined, { code: 'post_only_mode', retry_after_seconds: 42 }))!.text, /post-only period .* for 42 s more/);
  assert.equal(reason(apiError('PM_ERR_ENGINE_BUSY')), undefined, 'a server fault is not the caller\'s mistake');
});

// ---- through HTTP ---------------------------------------------------------------------------------------

const CID_P = `0x${'e1'.repeat(32)}`;
const CID_N = `0x${'e2'.repeat(32)}`;

interface Service {
  app: App;
  base: string;
  alice: TestClient;
  plain: string;
  neg: string;
}

async function service(explain: boolean): Promise<Service> {
  const market = (question: string, conditionId: string, negRisk: boolean) => ({ question, conditionId, orderPriceMinTickSize: 0.01, orderMinSize: '5', negRisk });
  const t = await startTradingApp({
    auth: { masterKey: 'ef'.repeat(32), explainRefusals: explain },
    events: [
      { title: 'Refusals', slug: 'refusals-plain', endDate: '2027-06-30T00:00:00Z', markets: [market('Plain?', CID_P, false)] },
      { title: 'Refusals N', slug: 'refusals-neg', endDate: '2027-06-30T00:00:00Z', negRisk: true, markets: [market('Neg-risk?', CID_N, true)] },
    ],
    wallets: [{ key: HARDHAT0, deposit: '10' }],
  });
  return { app: t.app, base: t.base, alice: t.clients[0]!, plain: t.tokens(CID_P)[0], neg: t.tokens(CID_N)[0] };
}

/** A signed POST with the answer's status, body and refusal header. */
async function post(s: Service, path: '/order' | '/orders', body: unknown): Promise<{ status: number; body: unknown; reason: string | null }> {
  const text = JSON.stringify(body);
  const r = await fetch(`${s.base}${path}`, { method: 'POST', headers: s.alice.l2Headers('POST', path, text), body: text });
  return { status: r.status, body: await r.json(), reason: r.headers.get('x-refusal-reason') };
}

/** The mistakes, signed once: every service gets the very same signed orders (only `owner` is its key). */
async function mistakes(c: TestClient, plain: string) {
  const now = Math.floor(Date.now() / 1000);
  const mk = (salt: string): OrderStruct => ({
    salt, maker: alice.address, signer: alice.address, tokenId: plain, makerAmount: '5000000', takerAmount: '10000000',
    side: 0, signatureType: 0, timestamp: String(Date.now()), metadata: ZERO32, builder: ZERO32,
  });
  const signedFor = async (o: OrderStruct, d: OrderDomain) => ({ order: { ...o, side: 'BUY', signature: await alice.signTypedData(typed(o, d)) }, owner: '', orderType: 'GTC' });
  const buy = (makerAmount: number, takerAmount: number, extra: Partial<Parameters<TestClient['signOrder']>[0]> = {}) => c.signOrder({ tokenId: plain, side: 'BUY', makerAmount, takerAmount, ...extra });
  return {
    mainnet: await signedFor(mk('11'), MAINNET_V2),
    negDomain: await signedFor(mk('12'), c.info.negRiskOrderDomain),
    ownerAddress: { ...(await buy(units(5), units(10))), owner: c.account.address },
    gtdSoon: await buy(units(5), units(10), { orderType: 'GTD', expiration: now + 30 }),
    tick: await buy(5_230_000, units(10)),
    size: await buy(units(0.5), units(1)),
    balance: await buy(units(50), units(100)),
    good: await buy(units(0.5), units(5)),
    good2: await buy(units(0.6), units(5)),
  };
}

/** A submission with this service's key as owner (unless it is the owner mistake). */
const ownedBy = (s: Service, b: Record<string, unknown>) => (typeof b.owner === 'string' && b.owner.startsWith('0x') ? b : { ...b, owner: s.alice.creds!.apiKey });

test('through HTTP: the same bodies with explainRefusals on and off; the reason header only when on', async () => {
  const on = await service(true);
  const off = await service(false);
  try {
    assert.equal(on.plain, off.plain);
    const m = await mistakes(on.alice, on.plain);
    const expected: Array<[keyof typeof m, number, RegExp | undefined]> = [
      ['mainnet', 400, /it recovers to the signer under the platform's mainnet V2 exchange \(chain 137\)/],
      ['negDomain', 400, /under this exchange's neg-risk domain .* neg_risk false \(GET \/neg-risk\?token_id=/],
      ['ownerAddress', 400, /is an address: owner must be the API key id/],
      ['gtdSoon', 400, /GTD expiration \d+ is (28|29|30) s ahead of this server, (30|31|32) s short of the minimum 60 s ahead/],
      ['tick', 400, /^price 0.523 is not a multiple of the market's tick 0.01/],
      ['size', 400, /^size 1 tokens is under the market's minimum order size 5/],
      ['balance', 400, /a BUY reserves its USDC: 50 \(makerAmount\) .* has 10 USDC available/],
      ['good', 200, undefined],
    ];
    const bodies: Record<string, unknown[]> = {};
    for (const s of [on, off]) {
      for (const [name, status, reason] of expected) {
        const r = await post(s, '/order', ownedBy(s, m[name]));
        assert.equal(r.status, status, `${name}: ${JSON.stringify(r.body)}`);
        (bodies[name] ??= []).push(r.body);
        if (s === off || reason === undefined) assert.equal(r.reason, null, `${name}: no header`);
        else assert.match(r.reason ?? '', reason, name);
      }
      // One batch: a good order, the mainnet signature, a tick refusal: 200, and one reason line naming both.
      const batch = await post(s, '/orders', [m.good2, m.mainnet, m.tick].map((b) => ownedBy(s, b)));
      assert.equal(batch.status, 200);
      (bodies.batch ??= []).push((batch.body as Array<{ success: boolean; errorMsg: string }>).map((x) => [x.success, x.errorMsg]));
      if (s === off) assert.equal(batch.reason, null);
      else assert.match(batch.reason ?? '', /^order 1: order signature recovers to 0x[0-9a-f]{40} under this exchange's domain.*; order 2: price 0.523 is not a multiple/);
    }
    for (const [name, [a, b]] of Object.entries(bodies)) {
      if (name !== 'good') assert.deepEqual(a, b, `${name}: the body does not depend on explainRefusals`);
    }
    assert.deepEqual(bodies.mainnet![0], { error: 'invalid order signature' });
    assert.deepEqual(bodies.ownerAddress![0], { error: 'the order owner has to be the owner of the API KEY' });
    assert.deepEqual(bodies.gtdSoon![0], { error: 'invalid expiration' });
    assert.deepEqual(bodies.balance![0], { error: 'not enough balance / allowance' });
    const tickError = (bodies.tick![0] as { error: string }).error;
    assert.match(tickError, /^order 0x[0-9a-f]{64} is invalid\. Price \(0\.523\) breaks minimum tick size rule: 0\.01$/);
    assert.deepEqual(bodies.batch![0], [[true, ''], [false, 'invalid order signature'], [false, tickError]]);
  } finally {
    await on.app.stop();
    await off.app.stop();
  }
});
