/**
 * The signature pool (src/edge/auth/sig-pool.ts): worker threads start under the TypeScript loader, load
 * the native secp256k1 binding, recover the right signers in batches (calls made in one turn, or while
 * every thread is busy, are coalesced and split over the threads, and each call still gets its own
 * results back in order), and
 * survive malformed input. Also the L1 ClobAuth digest against the platform client's published vectors.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { hashTypedData } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { authDomainSeparator, clobAuthDigest, type OrderDomains, type OrderStruct } from '../../../src/edge/auth/eip712.ts';
import { SigPool, type OrderToVerify } from '../../../src/edge/auth/sig-pool.ts';
import { typedOrder } from '../../fixtures/typed-order.ts';

const HARDHAT0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const ZERO32 = ('0x' + '0'.repeat(64)) as `0x${string}`;
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

const domains: OrderDomains = {
  normal: { name: 'PM Exchange', version: '1', chainId: 31337001, verifyingContract: '0x00000000000000000000000000000000000e7c01' },
  negRisk: { name: 'PM Exchange', version: '1', chainId: 31337001, verifyingContract: '0x00000000000000000000000000000000000e7c02' },
};

const accounts: PrivateKeyAccount[] = [1, 2, 3, 4].map((i) => privateKeyToAccount(`0x${i.toString(16).padStart(64, '0')}`));

function struct(acct: PrivateKeyAccount, i: number): OrderStruct {
  return {
    salt: String(1000 + i),
    maker: acct.address,
    signer: acct.address,
    tokenId: String(123456789n * BigInt(i + 1)),
    makerAmount: String(5_000_000 + i),
    takerAmount: '10000000',
    side: (i % 2) as 0 | 1,
    signatureType: 0,
    timestamp: String(1_700_000_000_000 + i),
    metadata: ZERO32,
    builder: ZERO32,
  };
}


async function signed(acct: PrivateKeyAccount, i: number, negRisk = i % 3 === 0): Promise<OrderToVerify & { expectedId: string }> {
  const o = struct(acct, i);
  const domain = negRisk ? domains.negRisk : domains.normal;
  const typed = typedOrder(o, domain);
  const signature = await acct.signTypedData(typed);
  return { ...o, signature, negRisk, expectedId: hashTypedData(typed) };
}

/** The same signature with s replaced by n - s (and v flipped): valid for plain ecrecover, malleated. */
function highS(sig: string): string {
  const s = BigInt('0x' + sig.slice(66, 130));
  const v = parseInt(sig.slice(130), 16);
  return sig.slice(0, 66) + (N - s).toString(16).padStart(64, '0') + (v === 27 ? '1c' : '1b');
}

let pool: SigPool;
let orders: (OrderToVerify & { expectedId: string })[];

before(async () => {
  // Tasks only: the tests below are about how the pool batches (the inline path has tests of its own).
  pool = new SigPool({ threads: 2, maxBatch: 8, inlineMax: 0 });
  orders = await Promise.all(Array.from({ length: 40 }, (_, i) => signed(accounts[i % accounts.length]!, i)));
});

after(async () => {
  await pool.close();
});

test('workers start under the TypeScript loader and use the native secp256k1 binding', async () => {
  assert.equal(await pool.backend(), 'native');
});

test('one call of 40 orders (5 tasks of 8 over 2 threads): every digest and signer is right, in order', async () => {
  const res = await pool.verifyOrders(orders, domains);
  assert.equal(res.length, 40);
  res.forEach((r, i) => {
    assert.equal(r.orderId, orders[i]!.expectedId, `digest of order ${i}`);
    assert.equal(r.recovered, orders[i]!.signer.toLowerCase(), `signer of order ${i}`);
  });
});

test('concurrent calls made in one turn are coalesced and each gets its own results', async () => {
  const calls = [orders.slice(0, 1), orders.slice(1, 16), orders.slice(16, 17), orders.slice(17, 40)];
  const results = await Promise.all(calls.map((c) => pool.verifyOrders(c, domains)));
  results.forEach((res, k) => {
    assert.deepEqual(res.map((r) => r.orderId), calls[k]!.map((o) => o.expectedId));
    assert.deepEqual(res.map((r) => r.recovered), calls[k]!.map((o) => o.signer.toLowerCase()));
  });
  assert.deepEqual(await pool.verifyOrders([], domains), []);
});

test('while every thread is busy, calls queue and leave together as one task when a thread comes back', async () => {
  const one = new SigPool({ threads: 1, maxBatch: 128, inlineMax: 0 });
  try {
    await one.backend();
    const before = one.tasks;
    const ordersBefore = one.orders;
    const big = [...orders, ...orders];
    const first = one.verifyOrders(big, domains); // one task of 80 recoveries: milliseconds of work
    const later: Promise<Awaited<ReturnType<SigPool['verifyOrders']>>>[] = [];
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setImmediate(r)); // each call in an event-loop turn of its own
      later.push(one.verifyOrders([orders[i]!], domains));
    }
    const res = await Promise.all([first, ...later]);
    assert.equal(one.tasks - before, 2, 'the ten single-order calls made while the thread was busy went as one task');
    assert.equal(one.orders - ordersBefore, big.length + 10, 'the tasks carried every order once');
    assert.deepEqual(res[0]!.map((r) => r.orderId), big.map((o) => o.expectedId));
    res.slice(1).forEach((r, i) => assert.deepEqual(r, [{ orderId: orders[i]!.expectedId, recovered: orders[i]!.signer.toLowerCase() }]));
    // An idle pool sends a lone call at once, alone.
    const t = one.tasks;
    await one.verifyOrders([orders[0]!], domains);
    assert.equal(one.tasks - t, 1);
  } finally {
    await one.close();
  }
});

test('a quiet pool verifies a lone order on the calling thread (no task), with the same answer a worker gives', async () => {
  const quiet = new SigPool({ threads: 1 });
  try {
    await quiet.ready;
    const viaTask = await pool.verifyOrders([orders[5]!], domains);
    const t = quiet.tasks;
    const res = await quiet.verifyOrders([orders[5]!], domains);
    assert.deepEqual(res, viaTask);
    assert.deepEqual(res, [{ orderId: orders[5]!.expectedId, recovered: orders[5]!.signer.toLowerCase() }]);
    assert.equal(quiet.tasks - t, 0, 'no task was sent');
    assert.equal(quiet.inline, 1);
    // A malformed order answers as the worker answers it.
    const bad = { ...orders[5]!, signature: '0x00' };
    assert.deepEqual(await quiet.verifyOrders([bad], domains), await pool.verifyOrders([bad], domains));
    // More than inlineMax orders in one turn go to the pool as before.
    const t2 = quiet.tasks;
    const two = await Promise.all([quiet.verifyOrders([orders[6]!], domains), quiet.verifyOrders([orders[7]!], domains)]);
    assert.equal(quiet.tasks - t2, 1, 'two orders of one turn left as one task');
    assert.deepEqual(two.flat().map((r) => r.orderId), [orders[6]!.expectedId, orders[7]!.expectedId]);
    assert.equal(quiet.inline, 2);
  } finally {
    await quiet.close();
  }
});

test('a busy event loop sends even a lone order to the pool', async () => {
  const guarded = new SigPool({ threads: 1, inlineBelow: 0.5 });
  try {
    await guarded.ready;
    await new Promise((r) => setTimeout(r, 60));
    await guarded.verifyOrders([orders[8]!], domains); // begins a utilization window (its own path is not asserted)
    const inlineBefore = guarded.inline;
    // Keep this thread's loop busy for more than one utilization window, then ask for one order.
    const until = performance.now() + 120;
    while (performance.now() < until) {
      const spin = performance.now() + 5;
      while (performance.now() < spin);
      await new Promise((r) => setImmediate(r));
    }
    const t = guarded.tasks;
    const res = await guarded.verifyOrders([orders[8]!], domains);
    assert.equal(res[0]!.recovered, orders[8]!.signer.toLowerCase());
    assert.equal(guarded.tasks - t, 1, 'a task was sent');
    assert.equal(guarded.inline, inlineBefore);
  } finally {
    await guarded.close();
  }
});

test('malformed orders and signatures answer recovered undefined (or another signer) without failing the batch', async () => {
  const good = orders[0]!;
  const sig = good.signature;
  const cases: { name: string; order: OrderToVerify; id: 'same' | 'empty'; recovered: 'none' | 'other' }[] = [
    { name: 'short signature', order: { ...good, signature: sig.slice(0, 100) }, id: 'same', recovered: 'none' },
    { name: 'not hex', order: { ...good, signature: '0x' + 'zz'.repeat(65) }, id: 'same', recovered: 'none' },
    { name: 'no 0x', order: { ...good, signature: sig.slice(2) + '00' }, id: 'same', recovered: 'none' },
    { name: 'v = 29', order: { ...good, signature: sig.slice(0, 130) + '1d' }, id: 'same', recovered: 'none' },
    { name: 'r = 0', order: { ...good, signature: '0x' + '0'.repeat(64) + sig.slice(66) }, id: 'same', recovered: 'none' },
    { name: 's = n', order: { ...good, signature: sig.slice(0, 66) + N.toString(16) + sig.slice(130) }, id: 'same', recovered: 'none' },
    { name: 'high s (malleated twin)', order: { ...good, signature: highS(sig) }, id: 'same', recovered: 'none' },
    { name: 'v flipped', order: { ...good, signature: sig.slice(0, 130) + (sig.endsWith('1b') ? '1c' : '1b') }, id: 'same', recovered: 'other' },
    { name: 'signature of another order', order: { ...good, signature: orders[4]!.signature }, id: 'same', recovered: 'other' },
    { name: 'bad maker address', order: { ...good, maker: '0x1234' }, id: 'empty', recovered: 'none' },
    { name: 'uint256 overflow', order: { ...good, tokenId: (1n << 256n).toString() }, id: 'empty', recovered: 'none' },
    { name: 'side 2', order: { ...good, side: 2 as 0 }, id: 'empty', recovered: 'none' },
    { name: 'signature not a string', order: { ...good, signature: 42 as unknown as string }, id: 'same', recovered: 'none' },
  ];
  const res = await pool.verifyOrders([...cases.map((c) => c.order), good], domains);
  cases.forEach((c, i) => {
    const r = res[i]!;
    assert.equal(r.orderId, c.id === 'same' ? good.expectedId : '', `${c.name}: orderId`);
    if (c.recovered === 'none') assert.equal(r.recovered, undefined, `${c.name}: recovered`);
    else assert.ok(r.recovered !== undefined && r.recovered !== good.signer.toLowerCase(), `${c.name}: recovered ${r.recovered}`);
  });
  assert.equal(res[cases.length]!.recovered, good.signer.toLowerCase(), 'the good order in the same task still verifies');
  // v as 0/1 instead of 27/28 is the same signature.
  const v01 = sig.slice(0, 130) + (sig.endsWith('1b') ? '00' : '01');
  assert.equal((await pool.verifyOrders([{ ...good, signature: v01 }], domains))[0]!.recovered, good.signer.toLowerCase());
});

test('L1 ClobAuth: the platform client vectors recover to Hardhat #0 (digest checked against the published one and viem)', async () => {
  const acct = privateKeyToAccount(HARDHAT0);
  const vectors = [
    // official-client.md Appendix A (chain 137) and platform-semantics.md 4.1 (chain 80002, nonce 23)
    { chainId: 137, timestamp: '1700000000', nonce: '0', signature: '0x659ed4b28ae28e0f038fdf0023c00863c9559caacb9ebc83f44eea87059a099a36f1e1dee110e7faa1c4f65d17489b2da1333ebef78bbe2116d81207b975052d1c' },
    { chainId: 80002, timestamp: '10000000', nonce: '23', signature: '0xf62319a987514da40e57e2f4d7529f7bac38f0355bd88bb5adbb3768d80de6c1682518e0af677d5260366425f4361e7b70c25ae232aff0ab2331e2b164a1aedc1b' },
  ];
  for (const v of vectors) {
    const domain = { name: 'ClobAuthDomain', version: '1', chainId: v.chainId };
    const fields = { address: acct.address, timestamp: v.timestamp, nonce: v.nonce };
    const digest = '0x' + Buffer.from(clobAuthDigest(fields, authDomainSeparator(domain))).toString('hex');
    const viemDigest = hashTypedData({
      domain,
      types: { ClobAuth: [{ name: 'address', type: 'address' }, { name: 'timestamp', type: 'string' }, { name: 'nonce', type: 'uint256' }, { name: 'message', type: 'string' }] },
      primaryType: 'ClobAuth',
      message: { address: acct.address, timestamp: v.timestamp, nonce: BigInt(v.nonce), message: 'This message attests that I control the given wallet' },
    });
    assert.equal(digest, viemDigest);
    if (v.chainId === 137) assert.equal(digest, '0xc85352894b3c41f3ea6152479d64b9233fbaf2de87eabc7e4bba3a161fd28493');
    assert.equal(await pool.recoverClobAuth({ ...fields, signature: v.signature }, domain), acct.address.toLowerCase());
    // Any change to a signed field changes the signer.
    assert.notEqual(await pool.recoverClobAuth({ ...fields, nonce: '1', signature: v.signature }, domain), acct.address.toLowerCase());
    assert.notEqual(await pool.recoverClobAuth({ ...fields, signature: v.signature }, { ...domain, chainId: 1 }), acct.address.toLowerCase());
  }
  assert.equal(await pool.recoverClobAuth({ address: 'nope', timestamp: '1', nonce: '0', signature: vectors[0]!.signature }, { name: 'ClobAuthDomain', version: '1', chainId: 137 }), undefined);
  assert.equal(await pool.recoverClobAuth({ address: acct.address, timestamp: '1', nonce: '0', signature: '0x00' }, { name: 'ClobAuthDomain', version: '1', chainId: 137 }), undefined);
});

test('a pool closed right after it was made lets its threads finish loading first (terminating one mid-load can abort the process)', async () => {
  const p = new SigPool({ threads: 2 });
  let loaded = false;
  void p.ready.then(() => (loaded = true), () => undefined);
  await p.close();
  assert.equal(loaded, true, 'ready resolved before close terminated the threads');
  // A pool that is ready stays ready; closing it again is a no-op.
  await p.ready;
  await p.close();
});

test('a closed pool rejects new work instead of hanging', async () => {
  const p = new SigPool({ threads: 1 });
  const inFlight = assert.rejects(p.verifyOrders(orders.slice(0, 2), domains), /closed/);
  await p.close();
  await inFlight;
  await assert.rejects(p.verifyOrders(orders.slice(0, 1), domains), /closed/);
  await assert.rejects(p.recoverClobAuth({ address: accounts[0]!.address, timestamp: '1', nonce: '0', signature: orders[0]!.signature }, { name: 'a', version: '1', chainId: 1 }), /closed/);
});
