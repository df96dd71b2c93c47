/**
 * Signing thread of tools/load.ts: EIP-712 order digests (the service's own encoder, src/edge/auth/eip712.ts,
 * which the tests hold against viem and the platform client's vectors) signed with the native secp256k1
 * binding. Signing is the expensive part of a client, so the load tool spreads it over one thread per
 * core before the timed window starts; nothing here runs while load is measured.
 *
 * Protocol (one request, one reply, then the parent terminates the thread):
 *   in   { separator: hex of the domain separator, keys: hex private keys, orders: SignJob[] }
 *   out  { ids: string[], signatures: string[] }  index-aligned with `orders`
 */
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import { orderDigestBytes, type OrderStruct } from '../src/edge/auth/eip712.ts';

/** An order to sign: its struct and which of `keys` signs it. */
export interface SignJob {
  key: number;
  struct: OrderStruct;
}

export interface SignRequest {
  separator: string;
  keys: string[];
  orders: SignJob[];
}

export interface SignReply {
  ids: string[];
  signatures: string[];
}

interface Secp {
  ecdsaSign(msg32: Uint8Array, sk: Uint8Array): { signature: Uint8Array; recid: number };
}

/** Signs every job in this thread. Also used in-thread by the load tool for small batches. */
export function signAll(req: SignRequest): SignReply {
  const secp = createRequire(import.meta.url)('secp256k1/bindings.js') as Secp;
  const separator = Buffer.from(req.separator, 'hex');
  const keys = req.keys.map((k) => Buffer.from(k.replace(/^0x/, ''), 'hex'));
  const ids: string[] = new Array(req.orders.length);
  const signatures: string[] = new Array(req.orders.length);
  for (let i = 0; i < req.orders.length; i++) {
    const job = req.orders[i]!;
    const digest = orderDigestBytes(job.struct, separator);
    ids[i] = '0x' + Buffer.from(digest).toString('hex');
    const { signature, recid } = secp.ecdsaSign(digest, keys[job.key]!);
    // v = 27/28 as every Ethereum signer writes it; ecdsaSign always returns low s.
    signatures[i] = '0x' + Buffer.from(signature).toString('hex') + (27 + recid).toString(16);
  }
  return { ids, signatures };
}

if (parentPort) {
  const port = parentPort;
  port.once('message', (req: SignRequest) => port.postMessage(signAll(req)));
}
