/**
 * Signature worker (piscina): EIP-712 digests and secp256k1 public-key recovery, off the main thread.
 * Stateless apart from two caches (the secp256k1 module and the domain separators), so any worker can
 * take any task. Every task answers; a malformed order or signature yields `recovered: undefined` for
 * that order only and never throws.
 *
 * `recoverDigests` serves only the refusal path (refusals/order-signature.ts): a refused order's diagnosis hands it
 * the digests of the mistakes it tries (other domains, the older struct), each with the signature to
 * recover it with, and it recovers them in order until one gives the expected address. It never runs
 * for an order that verified, and verifyOrders does not share any of its code path.
 *
 * secp256k1: the package's index silently falls back to a pure-JS implementation (elliptic, ~40x
 * slower) when its native binding does not load. This worker loads the binding explicitly so the
 * fallback is a decision it reports (`backend()`), not an accident.
 */
import { createRequire } from 'node:module';
import {
  authDomainSeparator,
  clobAuthDigest,
  orderDigestBytes,
  orderDomainSeparator,
  recoverAddress,
  type AuthDomain,
  type ClobAuthFields,
  type OrderDomain,
  type OrderDomains,
  type OrderStruct,
  type Secp256k1Recover,
} from './eip712.ts';

export type SecpBackend = 'native' | 'js';

const require = createRequire(import.meta.url);

function loadSecp(): { secp: Secp256k1Recover; backend: SecpBackend } {
  try {
    return { secp: require('secp256k1/bindings.js') as Secp256k1Recover, backend: 'native' };
  } catch {
    return { secp: require('secp256k1/elliptic.js') as Secp256k1Recover, backend: 'js' };
  }
}

const { secp, backend: loadedBackend } = loadSecp();

/** An order to verify: its signed fields, signature, and which domain it signs under. */
export interface OrderToVerify extends OrderStruct {
  signature: string;
  negRisk: boolean;
}

export interface OrderVerification {
  /** The EIP-712 digest (`0x` + 64 lowercase hex), '' when a field could not be encoded. */
  orderId: string;
  /** Lowercase address the signature recovers to, undefined when it does not recover. */
  recovered: string | undefined;
}

export interface VerifyOrdersTask {
  orders: OrderToVerify[];
  domains: OrderDomains;
}

export interface RecoverClobAuthTask {
  fields: ClobAuthFields & { signature: string };
  domain: AuthDomain;
}

/** A refused order's candidate digests (refusals/order.ts), in the order they are tried. */
export interface RecoverDigestsTask {
  items: Array<{ digest: Uint8Array; signature: string }>;
  /** Lowercase address: recovery stops at the first item that gives it. */
  until?: string;
}

// Domain separators by domain text: a task carries its domains (a worker holds no configuration), and
// the separator costs three keccak calls, so each is computed once per thread.
const separators = new Map<string, Uint8Array>();

function separatorOf(d: OrderDomain | AuthDomain): Uint8Array {
  const contract = 'verifyingContract' in d ? d.verifyingContract.toLowerCase() : '';
  const key = `${d.name}\n${d.version}\n${d.chainId}\n${contract}`;
  let s = separators.get(key);
  if (!s) {
    s = 'verifyingContract' in d ? orderDomainSeparator(d) : authDomainSeparator(d);
    separators.set(key, s);
  }
  return s;
}

export function verifyOrders(task: VerifyOrdersTask): OrderVerification[] {
  const normal = separatorOf(task.domains.normal);
  const negRisk = separatorOf(task.domains.negRisk);
  const out: OrderVerification[] = new Array(task.orders.length);
  for (let i = 0; i < task.orders.length; i++) {
    const o = task.orders[i]!;
    let digest: Uint8Array;
    try {
      digest = orderDigestBytes(o, o.negRisk ? negRisk : normal);
    } catch {
      out[i] = { orderId: '', recovered: undefined };
      continue;
    }
    out[i] = { orderId: '0x' + Buffer.from(digest).toString('hex'), recovered: recoverAddress(secp, digest, o.signature) };
  }
  return out;
}

export function recoverClobAuth(task: RecoverClobAuthTask): string | undefined {
  let digest: Uint8Array;
  try {
    digest = clobAuthDigest(task.fields, separatorOf(task.domain));
  } catch {
    return undefined;
  }
  return recoverAddress(secp, digest, task.fields.signature);
}

/**
 * The address each item's signature recovers to over its digest (undefined: does not recover), in order,
 * up to and including the first that recovers to `until`: the answer is shorter than `items` when one
 * matched, so the caller pays no recovery past the answer.
 */
export function recoverDigests(task: RecoverDigestsTask): Array<string | undefined> {
  const out: Array<string | undefined> = [];
  for (const item of task.items) {
    const r = recoverAddress(secp, item.digest, item.signature);
    out.push(r);
    if (r !== undefined && r === task.until) break;
  }
  return out;
}

export function backend(): SecpBackend {
  return loadedBackend;
}
