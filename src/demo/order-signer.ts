/**
 * Signs the demo traders' orders as any client does: the EIP-712 V2 `Order` struct under the service's
 * order domain (neg-risk markets under their own), as the submission POST /order takes. The digest is the
 * service's own encoder (edge/auth/eip712.ts, which the tests hold against viem and the platform client's
 * vectors) and the signature comes from the native secp256k1 binding (its JS build where no binary loads):
 * viem's pure-JS signing costs about a millisecond an order, which the demo's week of history could not
 * afford within its start-up budget.
 */
import { createRequire } from 'node:module';
import { ZERO_BYTES32 } from '../domain/ids.ts';
import { orderDigestBytes, orderDomainSeparator, type OrderDomains, type OrderStruct } from '../edge/auth/eip712.ts';
import type { OrderSubmission, OrderType } from '../edge/schemas/orders.ts';
import { orderAmounts, type Leg } from './trading.ts';

interface Secp256k1Sign {
  ecdsaSign(msg32: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
}

const require = createRequire(import.meta.url);

function loadSecp(): Secp256k1Sign {
  try {
    return require('secp256k1/bindings.js') as Secp256k1Sign;
  } catch {
    return require('secp256k1/elliptic.js') as Secp256k1Sign;
  }
}

let secp: Secp256k1Sign | undefined;

/** A wallet that signs orders: its key, lowercase address and the API key its orders name as owner. */
export interface SigningWallet {
  /** TEST ONLY keys: the demo's are derived from public strings. */
  privateKey: string;
  address: string;
  apiKey: string;
}

export interface OrderToSign {
  tokenId: string;
  negRisk: boolean;
  leg: Leg;
  orderType: OrderType;
  /** Signed uint256, unique per order of a wallet (with the timestamp it makes the order id). */
  salt: number;
  /** Signed timestamp in milliseconds, as the platform client sends it. */
  timestampMs: number;
  /** Sent with postOnly (not signed: the envelope's flag), e.g. a maker's quote in a post-only period. */
  postOnly?: boolean;
}

/** A signed submission and the id the service will give it (the digest). */
export interface SignedOrder {
  orderId: string;
  submission: OrderSubmission;
}

export class OrderSigner {
  private readonly separators: { normal: Uint8Array; negRisk: Uint8Array };
  private readonly keys = new Map<string, Uint8Array>();

  constructor(domains: OrderDomains) {
    this.separators = { normal: orderDomainSeparator(domains.normal), negRisk: orderDomainSeparator(domains.negRisk) };
  }

  sign(wallet: SigningWallet, o: OrderToSign): SignedOrder {
    secp ??= loadSecp();
    const { makerAmount, takerAmount } = orderAmounts(o.leg);
    const struct: OrderStruct = {
      salt: String(o.salt),
      maker: wallet.address,
      signer: wallet.address,
      tokenId: o.tokenId,
      makerAmount: String(makerAmount),
      takerAmount: String(takerAmount),
      side: o.leg.side === 'BUY' ? 0 : 1,
      signatureType: 0,
      timestamp: String(o.timestampMs),
      metadata: ZERO_BYTES32,
      builder: ZERO_BYTES32,
    };
    const digest = orderDigestBytes(struct, o.negRisk ? this.separators.negRisk : this.separators.normal);
    const orderId = '0x' + Buffer.from(digest).toString('hex');
    const { signature, recid } = secp.ecdsaSign(digest, this.keyOf(wallet));
    return {
      orderId,
      submission: {
        order: {
          salt: struct.salt,
          maker: struct.maker,
          signer: struct.signer,
          tokenId: struct.tokenId,
          makerAmount: struct.makerAmount,
          takerAmount: struct.takerAmount,
          side: o.leg.side,
          signatureType: 0,
          timestamp: struct.timestamp,
          metadata: ZERO_BYTES32,
          builder: ZERO_BYTES32,
          // v = 27/28 as Ethereum signers write it; ecdsaSign always returns a low s.
          signature: '0x' + Buffer.from(signature).toString('hex') + (27 + recid).toString(16),
        },
        owner: wallet.apiKey,
        orderType: o.orderType,
        ...(o.postOnly === true ? { postOnly: true } : {}),
      },
    };
  }

  private keyOf(w: SigningWallet): Uint8Array {
    let k = this.keys.get(w.privateKey);
    if (!k) {
      k = Buffer.from(w.privateKey.replace(/^0x/, ''), 'hex');
      this.keys.set(w.privateKey, k);
    }
    return k;
  }
}
