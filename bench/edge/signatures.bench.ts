/**
 * Signature verification: how many signed orders per second the service can verify, and what the
 * authentication stages cost.
 *
 * Workload: 4,096 distinct orders (V2 struct of DESIGN section 5) from 16 wallets, every fifth under
 * the neg-risk domain, signed before timing with the native secp256k1 binding over the hand-encoded
 * EIP-712 digest (src/edge/auth/eip712.ts; tests check it against viem). The orders are reused cyclically.
 * Measured, each for about a second after a warm-up:
 *   1. bare native recovery on one core, in-thread: `recoverAddress` (signature parse, ecdsaRecover,
 *      keccak of the public key) over precomputed digests. x os.availableParallelism() = the ceiling of
 *      any path that verifies orders on this machine. The pure-JS fallback is measured briefly for
 *      comparison (what a failed native load would cost);
 *   2. EIP-712 order digests: viem `hashTypedData` vs the hand encoder;
 *   3. full verification in-thread (digest + recovery), the per-order work a pool worker does;
 *   4. the pool (src/edge/auth/sig-pool.ts) with 2 worker threads, tasks of 1, 15 and 64 orders (maxBatch = call
 *      size), then calls of 1 order with the default options (what the service sends: one call per HTTP
 *      request; the pool batches what queues while its threads are busy): 32 calls in flight, a new call
 *      issued as each completes, about 24,576 orders per run; the rate counts orders whose recovered
 *      signer was checked, and is compared with 2 cores of the ceiling;
 *   5. L2 request verification (`Authenticator.l2`: header lookups, skew, key lookup, passphrase and
 *      HMAC-SHA256 over a 300-byte body, constant-time compares), accepted and rejected.
 * Excluded from timing: key generation, signing, worker start-up (the pool answers one call first),
 * opening the temporary LMDB store behind the API-key service.
 *
 * Self-check: every recovery in every stage must return the order's signer (the run throws otherwise),
 * and the rejected L2 requests must all be rejected.
 *
 * Run alone: npx tsx bench/edge/signatures.bench.ts
 */
import { createRequire } from 'node:module';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { hashTypedData, keccak256 } from 'viem';
import { ApiKeyService } from '../../src/edge/auth/api-keys.ts';
import { createAuthenticator } from '../../src/edge/auth/auth.ts';
import { ORDER_TYPES, orderDigestBytes, orderDomainSeparator, recoverAddress, type OrderDomains, type OrderStruct, type Secp256k1Recover } from '../../src/edge/auth/eip712.ts';
import { SigPool, type OrderToVerify } from '../../src/edge/auth/sig-pool.ts';
import { openStore } from '../../src/journal/env.ts';
import { ManualClock, nowSeconds } from '../../src/runtime/clock.ts';
import { testConfig } from '../../src/runtime/config.ts';

const ORDERS = 4096;
const WALLETS = 16;
const POOL_THREADS = 2;
const POOL_ORDERS = 24_576;
const IN_FLIGHT = 32;

interface Secp extends Secp256k1Recover {
  publicKeyCreate(sk: Uint8Array, compressed: boolean): Uint8Array;
  ecdsaSign(msg32: Uint8Array, sk: Uint8Array): { signature: Uint8Array; recid: number };
}

const require = createRequire(import.meta.url);
const native = require('secp256k1/bindings.js') as Secp;
const elliptic = require('secp256k1/elliptic.js') as Secp;

const domains: OrderDomains = {
  normal: { name: 'PM Exchange', version: '1', chainId: 31337001, verifyingContract: '0x00000000000000000000000000000000000e7c01' },
  negRisk: { name: 'PM Exchange', version: '1', chainId: 31337001, verifyingContract: '0x00000000000000000000000000000000000e7c02' },
};
const ZERO32 = '0x' + '0'.repeat(64);

interface Prepared {
  order: OrderToVerify;
  digest: Uint8Array;
  signer: string;
}

function prepare(): Prepared[] {
  const sep = { normal: orderDomainSeparator(domains.normal), negRisk: orderDomainSeparator(domains.negRisk) };
  const keys = Array.from({ length: WALLETS }, (_, i) => {
    const sk = Buffer.alloc(32);
    sk.writeUInt32BE(0x1000 + i, 28);
    // The address comes from the public key through viem, independently of the recovery path measured.
    const addr = '0x' + keccak256(native.publicKeyCreate(sk, false).subarray(1)).slice(-40);
    return { sk, addr };
  });
  return Array.from({ length: ORDERS }, (_, i) => {
    const k = keys[i % WALLETS]!;
    const negRisk = i % 5 === 0;
    const s: OrderStruct = {
      salt: String(1_000_000_007 * (i + 1)),
      maker: k.addr,
      signer: k.addr,
      tokenId: (12345678901234567890n * BigInt(i + 1)).toString(),
      makerAmount: String(1_000_000 + i * 10_000),
      takerAmount: String(2_000_000 + i * 10_000),
      side: (i & 1) as 0 | 1,
      signatureType: 0,
      timestamp: String(1_767_225_600_000 + i),
      metadata: ZERO32,
      builder: ZERO32,
    };
    const digest = Uint8Array.from(orderDigestBytes(s, negRisk ? sep.negRisk : sep.normal));
    const { signature, recid } = native.ecdsaSign(digest, k.sk);
    const sig = '0x' + Buffer.from(signature).toString('hex') + (27 + recid).toString(16);
    return { order: { ...s, signature: sig, negRisk }, digest, signer: k.addr };
  });
}

/** Runs `fn` in batches until ~`ms` elapsed (after one warm-up batch); returns operations per second. */
function rate(ms: number, batch: number, fn: (n: number) => void): number {
  fn(batch);
  let ops = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < ms) {
    fn(batch);
    ops += batch;
    t = performance.now();
  }
  return (ops / (t - t0)) * 1000;
}

/** `batch` orders per verifyOrders call, IN_FLIGHT calls outstanding. */
async function poolRate(pool: SigPool, prepared: Prepared[], batch: number): Promise<number> {
  let next = 0;
  let done = 0;
  let bad = 0;
  const calls = Math.ceil(POOL_ORDERS / batch);
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    let issued = 0;
    let finished = 0;
    const issue = () => {
      if (issued >= calls) return;
      issued++;
      const slice: Prepared[] = [];
      for (let k = 0; k < batch; k++) slice.push(prepared[next++ % prepared.length]!);
      pool.verifyOrders(slice.map((p) => p.order), domains).then((res) => {
        res.forEach((r, k) => {
          if (r.recovered !== slice[k]!.signer) bad++;
        });
        done += res.length;
        if (++finished === calls) resolve();
        else issue();
      }, reject);
    };
    for (let k = 0; k < Math.min(IN_FLIGHT, calls); k++) issue();
  });
  const s = (performance.now() - t0) / 1000;
  if (bad > 0) throw new Error(`pool recovered ${bad} wrong signers`);
  return done / s;
}

/** L2 verification rates against a real API-key service (temporary LMDB store; setup not timed). */
async function l2Rates(): Promise<{ ok: number; rejected: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'pm-bench-sig-'));
  const store = openStore({ dataDir: dir });
  try {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const keys = ApiKeyService.open(store, Buffer.alloc(32, 3), clock);
    // The L2 path never touches the signature pool, so none is started.
    const auth = createAuthenticator({ keys, pool: undefined as unknown as SigPool, auth: testConfig().auth, clock });
    const address = '0x' + '5a'.repeat(20);
    const creds = await keys.create(address, '0');
    const ts = String(nowSeconds(clock));
    const body = Buffer.alloc(300, 0x61);
    const sig = createHmac('sha256', Buffer.from(creds.secret, 'base64')).update(ts + 'POST' + '/order').update(body).digest('base64url') + '=';
    const headers = { svc_address: address, svc_api_key: creds.apiKey, svc_passphrase: creds.passphrase, svc_timestamp: ts, svc_signature: sig };
    const badHeaders = { ...headers, svc_signature: (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1) };
    let calls = 0;
    let accepted = 0;
    const ok = rate(1000, 1000, (n) => {
      for (let k = 0; k < n; k++, calls++) if (auth.l2('POST', '/order', headers, body)) accepted++;
    });
    if (accepted !== calls) throw new Error(`L2 self-check: ${calls - accepted} valid requests refused`);
    calls = 0;
    let refused = 0;
    const rejected = rate(1000, 1000, (n) => {
      for (let k = 0; k < n; k++, calls++) if (!auth.l2('POST', '/order', badHeaders, body)) refused++;
    });
    if (refused !== calls) throw new Error(`L2 self-check: ${calls - refused} forged requests accepted`);
    return { ok, rejected };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function run(): Promise<void> {
  const cores = availableParallelism();
  const prepared = prepare();
  const rows: { stage: string; rate: string; note: string }[] = [];
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

  let bad = 0;
  let i = 0;
  const nativeRate = rate(1000, 256, (n) => {
    for (let k = 0; k < n; k++) {
      const p = prepared[i++ % ORDERS]!;
      if (recoverAddress(native, p.digest, p.order.signature) !== p.signer) bad++;
    }
  });
  const ceiling = nativeRate * cores;
  rows.push({ stage: 'native recovery, 1 core (in-thread)', rate: fmt(nativeRate), note: 'recoverAddress: parse + ecdsaRecover + keccak' });
  rows.push({ stage: `ceiling = 1 core x ${cores} cores`, rate: fmt(ceiling), note: 'upper bound of any verified-order path' });

  const jsRate = rate(300, 16, (n) => {
    for (let k = 0; k < n; k++) {
      const p = prepared[i++ % ORDERS]!;
      if (recoverAddress(elliptic, p.digest, p.order.signature) !== p.signer) bad++;
    }
  });
  rows.push({ stage: 'pure-JS fallback recovery, 1 core', rate: fmt(jsRate), note: `${(nativeRate / jsRate).toFixed(0)}x slower than native` });

  const viemRate = rate(1000, 64, (n) => {
    for (let k = 0; k < n; k++) {
      const p = prepared[i++ % ORDERS]!;
      const o = p.order;
      const d = o.negRisk ? domains.negRisk : domains.normal;
      hashTypedData({
        domain: { ...d, verifyingContract: d.verifyingContract as `0x${string}` },
        types: ORDER_TYPES,
        primaryType: 'Order',
        message: {
          salt: BigInt(o.salt), maker: o.maker as `0x${string}`, signer: o.signer as `0x${string}`, tokenId: BigInt(o.tokenId),
          makerAmount: BigInt(o.makerAmount), takerAmount: BigInt(o.takerAmount), side: o.side, signatureType: o.signatureType,
          timestamp: BigInt(o.timestamp), metadata: o.metadata as `0x${string}`, builder: o.builder as `0x${string}`,
        },
      });
    }
  });
  const sep = { normal: orderDomainSeparator(domains.normal), negRisk: orderDomainSeparator(domains.negRisk) };
  const handRate = rate(1000, 256, (n) => {
    for (let k = 0; k < n; k++) {
      const p = prepared[i++ % ORDERS]!;
      orderDigestBytes(p.order, p.order.negRisk ? sep.negRisk : sep.normal);
    }
  });
  rows.push({ stage: 'EIP-712 order digest, viem hashTypedData', rate: fmt(viemRate), note: '1 core' });
  rows.push({ stage: 'EIP-712 order digest, hand encoder', rate: fmt(handRate), note: `1 core, ${(handRate / viemRate).toFixed(1)}x viem` });

  const fullRate = rate(1000, 256, (n) => {
    for (let k = 0; k < n; k++) {
      const p = prepared[i++ % ORDERS]!;
      const d = orderDigestBytes(p.order, p.order.negRisk ? sep.negRisk : sep.normal);
      if (recoverAddress(native, d, p.order.signature) !== p.signer) bad++;
    }
  });
  rows.push({ stage: 'digest + recovery, 1 core (in-thread)', rate: fmt(fullRate), note: 'what a pool worker does per order' });
  rows.push({ stage: `digest + recovery x ${POOL_THREADS} threads`, rate: fmt(fullRate * POOL_THREADS), note: 'what a perfect pool of 2 would reach' });
  if (bad > 0) throw new Error(`${bad} in-thread recoveries returned the wrong signer`);

  // maxBatch = the call size: every task carries exactly one call (the old dispatch's best case for
  // batch > 1). Then the service's case: calls of one order (one per HTTP request) with the default
  // options, which batch whatever queues while the threads are busy.
  for (const [batch, maxBatch] of [[1, 1], [15, 15], [64, 64], [1, undefined]] as const) {
    const pool = new SigPool({ threads: POOL_THREADS, maxBatch });
    try {
      if ((await pool.backend()) !== 'native') throw new Error('pool workers did not load the native binding');
      await pool.verifyOrders(prepared.slice(0, 64).map((p) => p.order), domains);
      const r = await poolRate(pool, prepared, batch);
      rows.push({
        stage: maxBatch === undefined
          ? `pool, ${POOL_THREADS} workers, calls of ${batch} order, default batching`
          : `pool, ${POOL_THREADS} workers, ${batch} order(s) per task`,
        rate: fmt(r),
        note: `${((r / (nativeRate * POOL_THREADS)) * 100).toFixed(0)}% of ${POOL_THREADS} cores of the ceiling, ${((r / (fullRate * POOL_THREADS)) * 100).toFixed(0)}% of digest+recovery x ${POOL_THREADS}`,
      });
    } finally {
      await pool.close();
    }
  }

  const l2 = await l2Rates();
  rows.push({ stage: 'L2 request verification, accepted', rate: fmt(l2.ok), note: '1 core, main thread, 300-byte body' });
  rows.push({ stage: 'L2 request verification, rejected (bad HMAC)', rate: fmt(l2.rejected), note: '1 core' });

  console.log(`signature verification (${cores} cores, Node ${process.versions.node})`);
  console.table(rows);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
