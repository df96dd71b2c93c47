/**
 * Why an order's signature was refused (refusals/reason.ts; the rule and admission reasons are order.ts's):
 * for an order whose EIP-712 signature does not recover to its signer, the common mistakes are TRIED, each
 * one digest and one recovery, until one recovers to the signer (diagnoseSignature). Like every diagnosis it
 * runs after the decision, on the refusal path only, and never changes it.
 *
 * The signature diagnosis, in order (the first candidate that recovers to the signer is the answer):
 *   0. the signature itself: a v byte other than 27/28 (0/1) is tried as both recovery ids; a high s
 *      (the malleated twin) is tried normalized; r or s out of range needs no recovery to say so;
 *   1. this exchange's other domain, same struct: the neg-risk flag read wrong (GET /neg-risk tells it);
 *   2. every domain the platform's clients sign for (known-domains.ts KNOWN_ORDER_DOMAINS: mainnet and
 *      Amoy, V2, V2 neg-risk, V3, V1, V1 neg-risk), V1 with the older struct (taker, expiration, nonce,
 *      feeRateBps as the submission carries them, else 0); a known domain equal to one of ours is skipped;
 *   3. the older V1 struct under this exchange's own domain.
 * Maker and signer swapped needs no recovery: an order reaches the signature check only with signer == the
 * key's address and the maker its type's (rules 4 and 5 of order-check.ts), so a swap is named by the rule
 * refusals instead. v 0/1 against 27/28 is noted, not tried: both recover
 * the same here, but the platform's contract takes 27/28 only.
 *
 * Steps 1 and 2's V2 and V3 domains go first, as one task; the V1 struct's candidates (step 2's V1 domains
 * and step 3) as a second task, made only when the first found nothing.
 *
 * Cost and bounds: at most MAX_DIAGNOSIS_RECOVERIES (12) recoveries per refused order, sent to the
 * signature pool's threads (native secp256k1; the worker stops at the first match, and never runs on this
 * thread); the digests are made here: the V2 struct with eip712.ts (~5 µs each), the V1 struct hashed once
 * with ox's hashStruct (~0.1 ms; viem's own EIP-712 core) and then ~5 µs per V1 domain. The diagnosis budget (budget.ts: its most
 * recoveries taken before it starts, what it did not use given back, per client network, per signer's
 * wallet and in all) caps the work a flood of bad signatures can cause; past it the reason says the
 * signature does not recover to the signer and that further diagnosis was skipped under load. A diagnosis that fails (pool closing) says so and leaves the refusal as it was.
 *
 * A reason names public things only: addresses, domains, chains, contracts, token and condition ids; never a
 * secret.
 */
import { hashStruct } from 'ox/TypedData';
import { orderDigestBytes, orderDomainSeparator, type OrderDomain, type OrderDomains } from '../auth/eip712.ts';
import { keccak256 } from '../auth/keccak.ts';
import type { OrderToVerify, SigPool } from '../auth/sig-pool.ts';
import { DiagnosisBudget, RECOVERY_COST, type DiagnosisParty } from './budget.ts';
import { KNOWN_ORDER_DOMAINS, profileAdvice } from './known-domains.ts';
import { ADDRESS, domainText, ourLabel } from './order.ts';
import type { Refusal, RefusalClass } from './reason.ts';

/** Most recoveries one refused order's signature diagnosis may cost. */
export const MAX_DIAGNOSIS_RECOVERIES = 12;

/** The process-wide budget the order checks use unless their deps carry another (tests). */
export const SIGNATURE_DIAGNOSES = new DiagnosisBudget();

const refusal = (cls: RefusalClass, text: string): Refusal => ({ class: cls, text });

// ---- signature diagnosis ----------------------------------------------------------------------------

/** A refused signature: what was verified, the submission as sent, and what it recovered to. */
export interface SignatureCase {
  /** The order's signed fields as verified (signer == the key's address, maker its type's), signature and neg-risk flag. */
  verify: OrderToVerify;
  /** The submission as sent: the older struct's taker, expiration, nonce and feeRateBps are read from it. */
  submission: unknown;
  /** What the signature recovered to under this exchange's domain for the market (undefined: nothing). */
  recovered: string | undefined;
}

export interface SignatureDiagnosisDeps {
  pool: Pick<SigPool, 'recoverDigests'>;
  domains: OrderDomains;
  budget: DiagnosisBudget;
  /** Who pays for it (budget.ts): the caller's client address and the order's signer. */
  by?: DiagnosisParty;
}

interface Candidate {
  digest: Uint8Array;
  signature: string;
  /** What the reason says when this candidate recovers to the signer. */
  says: string;
}

const V1_TYPES = {
  Order: [
    { name: 'salt', type: 'uint256' },
    { name: 'maker', type: 'address' },
    { name: 'signer', type: 'address' },
    { name: 'taker', type: 'address' },
    { name: 'tokenId', type: 'uint256' },
    { name: 'makerAmount', type: 'uint256' },
    { name: 'takerAmount', type: 'uint256' },
    { name: 'expiration', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'feeRateBps', type: 'uint256' },
    { name: 'side', type: 'uint8' },
    { name: 'signatureType', type: 'uint8' },
  ],
} as const;

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** A uint256 field of the submission as a BigInt: as carried, else 0 (what the V1 client sends by default). */
function uintOf(v: unknown): bigint {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'string' && /^\d{1,78}$/.test(v)) return BigInt(v);
  return 0n;
}

/**
 * The V1 struct's hashStruct of the order (ox: refusal path only). It is the same under every domain, so
 * one diagnosis hashes it once and each V1 candidate adds only its domain (v1Digest).
 */
function v1StructHash(v: OrderToVerify, submission: unknown): Uint8Array {
  const s = (submission ?? {}) as { expiration?: unknown; order?: Record<string, unknown> };
  const o = s.order ?? {};
  const taker = typeof o.taker === 'string' && ADDRESS.test(o.taker) ? o.taker : ZERO_ADDRESS;
  const hex = hashStruct({
    types: V1_TYPES,
    primaryType: 'Order',
    data: {
      salt: BigInt(v.salt),
      maker: v.maker as `0x${string}`,
      signer: v.signer as `0x${string}`,
      taker: taker as `0x${string}`,
      tokenId: BigInt(v.tokenId),
      makerAmount: BigInt(v.makerAmount),
      takerAmount: BigInt(v.takerAmount),
      expiration: uintOf(o.expiration ?? s.expiration),
      nonce: uintOf(o.nonce),
      feeRateBps: uintOf(o.feeRateBps),
      side: v.side,
      signatureType: v.signatureType,
    },
  });
  return Buffer.from(hex.slice(2), 'hex');
}

/** EIP-712's digest, keccak256(0x1901 ‖ domain separator ‖ struct hash), of a V1 struct hash under `d`. */
function v1Digest(structHash: Uint8Array, d: OrderDomain): Uint8Array {
  return keccak256(Buffer.concat([EIP712_PREFIX, separatorOf(d), structHash]));
}

const EIP712_PREFIX = Buffer.from([0x19, 0x01]);

// A domain's separator costs three keccak calls: each domain object (ours, the known ones) is encoded once.
const separators = new WeakMap<OrderDomain, Uint8Array>();
function separatorOf(d: OrderDomain): Uint8Array {
  let sep = separators.get(d);
  if (sep === undefined) {
    sep = orderDomainSeparator(d);
    separators.set(d, sep);
  }
  return sep;
}

const sameDomain = (a: OrderDomain, b: OrderDomain) =>
  a.chainId === b.chainId && a.name === b.name && a.version === b.version && a.verifyingContract.toLowerCase() === b.verifyingContract.toLowerCase();

/**
 * The candidates of steps 1-3 of the header, in order, as two rounds: the V2 struct first (this exchange's
 * other domain, the platform's V2 and V3 exchanges: what current clients send, a few µs a digest), then the
 * older V1 struct (hashed once with ox, ~0.1 ms), made only when the first round found nothing.
 */
function candidates(c: SignatureCase, domains: OrderDomains, signature: string, round: 'v2' | 'v1'): Candidate[] {
  const v = c.verify;
  const ours = v.negRisk ? domains.negRisk : domains.normal;
  const other = v.negRisk ? domains.normal : domains.negRisk;
  const out: Candidate[] = [];
  const structHash = round === 'v1' ? v1StructHash(v, c.submission) : undefined;
  const neg = `token ${v.tokenId}'s market has neg_risk ${v.negRisk} (GET /neg-risk?token_id=${v.tokenId} tells it)`;
  if (round === 'v2' && !sameDomain(ours, other)) {
    out.push({
      digest: orderDigestBytes(v, separatorOf(other)),
      signature,
      says: `it recovers to the signer under ${ourLabel(!v.negRisk)} (${domainText(other)}), but ${neg}: sign its orders for ${ourLabel(v.negRisk)}`,
    });
  }
  for (const k of KNOWN_ORDER_DOMAINS) {
    if (k.struct !== round || sameDomain(k.domain, domains.normal) || sameDomain(k.domain, domains.negRisk)) continue;
    const flag = k.negRisk === v.negRisk ? '' : ` (and ${neg})`;
    let digest: Uint8Array;
    let advice: string;
    if (k.struct === 'v1') {
      digest = v1Digest(structHash!, k.domain);
      advice = `this exchange verifies the V2 order struct (timestamp, metadata, builder) under its own domain: sign that for ${ourLabel(v.negRisk)} (GET /exchange-info)${flag}`;
    } else {
      digest = orderDigestBytes(v, separatorOf(k.domain));
      advice = `sign for ${ourLabel(v.negRisk)} (GET /exchange-info)${profileAdvice(k.profile)}${flag}`;
    }
    out.push({ digest, signature, says: `it recovers to the signer under ${k.label} (chain ${k.domain.chainId}): ${advice}` });
  }
  if (round === 'v1') {
    out.push({
      digest: v1Digest(structHash!, ours),
      signature,
      says: `it recovers to the signer when read as the older V1 order struct (taker, expiration, nonce, feeRateBps) under ${ourLabel(v.negRisk)}: sign the V2 struct (timestamp, metadata, builder) instead`,
    });
  }
  return out;
}

/**
 * Why the order's signature does not recover to its signer, tried as the header describes. Never throws:
 * a diagnosis that cannot finish says so.
 */
export async function diagnoseSignature(c: SignatureCase, deps: SignatureDiagnosisDeps): Promise<Refusal> {
  const v = c.verify;
  const signer = v.signer.toLowerCase();
  const ours = v.negRisk ? deps.domains.negRisk : deps.domains.normal;
  const under = `under ${ourLabel(v.negRisk)} (${domainText(ours)})`;
  const sig = v.signature.toLowerCase();
  const vByte = parseInt(sig.slice(130, 132), 16);
  const s = BigInt('0x' + sig.slice(66, 130));
  const r = BigInt('0x' + sig.slice(2, 66));
  const head = c.recovered === undefined ? `order signature does not recover ${under}` : `order signature recovers to ${c.recovered} ${under}, not to the signer ${signer}`;

  if (r === 0n || r >= N || s === 0n || s >= N) return refusal('order_signature', `order signature does not recover to any address: r or s is zero or not below the curve order`);
  // Priced by its recoveries (budget.ts), for the caller's network and the signer's wallet; what it did not use goes back.
  const by: DiagnosisParty = { ...deps.by, wallet: signer };
  const reserved = MAX_DIAGNOSIS_RECOVERIES * RECOVERY_COST;
  if (!deps.budget.take(by, reserved)) return refusal('order_signature', `order signature does not recover to the signer ${signer} ${under}; further diagnosis skipped under load`);
  let recoveries = 0;
  const recover = (tries: Array<{ digest: Uint8Array; signature: string }>) => {
    recoveries += tries.length;
    return deps.pool.recoverDigests(tries, signer);
  };

  try {
    if (![0, 1, 27, 28].includes(vByte)) {
      const digest = orderDigestBytes(v, separatorOf(ours));
      const tries = ['1b', '1c'].map((vv) => ({ digest, signature: sig.slice(0, 130) + vv }));
      const got = await recover(tries);
      const hit = got.findIndex((a) => a === signer);
      const fix = hit >= 0 ? `; with v ${27 + hit} it recovers to the signer ${under}: send v as 27/28 (v with a chain id, EIP-155 style, is for transactions, not EIP-712 signatures)` : '';
      return refusal('order_signature', `order signature's v byte is ${vByte}: expected 27 or 28 (0/1 also taken)${fix}`);
    }
    if (s > N / 2n) {
      const low = sig.slice(0, 66) + (N - s).toString(16).padStart(64, '0') + (vByte >= 27 ? 55 - vByte : 1 - vByte).toString(16).padStart(2, '0');
      const [got] = await recover([{ digest: orderDigestBytes(v, separatorOf(ours)), signature: low }]);
      const then = got === signer ? 'the signer' : got ?? 'no address';
      return refusal(
        'order_signature',
        `order signature has a high s (above n/2, the malleated twin of a low-s signature), refused as the platform's exchange contract refuses it; normalized (s -> n - s, v flipped) it recovers to ${then} ${under}: normalize s before sending`,
      );
    }
    const vNote = vByte < 27 ? ` (v is ${vByte}: taken here, but the platform's contract takes only 27/28)` : '';
    let left = MAX_DIAGNOSIS_RECOVERIES;
    for (const round of ['v2', 'v1'] as const) {
      const list = candidates(c, deps.domains, sig, round).slice(0, left);
      left -= list.length;
      const got = await recover(list.map((x) => ({ digest: x.digest, signature: x.signature })));
      const hit = got.findIndex((a) => a === signer);
      if (hit >= 0) return refusal('order_signature', `${head}; ${list[hit]!.says}${vNote}`);
    }
    return refusal(
      'order_signature',
      `${head}; nor under ${ourLabel(!v.negRisk)}, the platform's V2, V3 or V1 exchanges (chains 137 and 80002) or as the V1 struct: a signed field differs from what was signed (amounts, side, token, salt, timestamp, metadata, builder) or another key signed it${vNote}`,
    );
  } catch {
    return refusal('order_signature', `order signature does not recover to the signer ${signer} ${under}; further diagnosis failed`);
  } finally {
    deps.budget.refund(by, reserved - recoveries * RECOVERY_COST);
  }
}
