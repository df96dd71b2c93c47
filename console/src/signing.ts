/**
 * What a wallet signs, in the browser, as docs/http-api.md, "Trading and authentication", describes it for any
 * client: the EIP-712 ClobAuth message for an API key (L1), the HMAC of each trading request (L2), and
 * the EIP-712 V2 Order struct. The private key stays inside viem's account object, which keeps it in a
 * closure and never hands it back; nothing here stores or shows it.
 */
import { hmac } from '@noble/hashes/hmac';
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex, keccak256, stringToBytes, stringToHex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { LOT_UNITS } from '../../src/domain/market-rules.ts';
import { PIPS, parsePips, parseUnits } from '../../src/domain/units.ts';
import type { ExchangeInfo, OrderSubmission } from '../../src/edge/schemas/orders.ts';
import { serviceNow } from './api.ts';

export interface Creds {
  apiKey: string;
  secret: string;
  passphrase: string;
}

export type Hex = `0x${string}`;

/** The five funded demo wallets (README "Demo wallets"): TEST keys anyone can derive from public strings. */
export const DEMO_WALLETS = [1, 2, 3, 4, 5].map((i) => ({ label: `Demo wallet ${i}`, seed: `pm-exchange demo wallet ${i}` }));

export function demoKey(seed: string): Hex {
  return keccak256(stringToHex(seed));
}

/** A signer for `privateKey`; throws viem's own error for a key that is not 32 bytes of hex. */
export function accountOf(privateKey: string): PrivateKeyAccount {
  const k = privateKey.trim();
  return privateKeyToAccount((k.startsWith('0x') ? k : `0x${k}`) as Hex);
}

/** EIP-712 ClobAuth headers for (address, nonce), as POST /auth/api-key and GET /auth/derive-api-key take them. */
export async function l1Headers(account: PrivateKeyAccount, info: ExchangeInfo, nonce = 0): Promise<Record<string, string>> {
  const timestamp = String(Math.floor((await serviceNow()) / 1000));
  const signature = await account.signTypedData({
    domain: info.authDomain,
    types: {
      ClobAuth: [
        { name: 'address', type: 'address' },
        { name: 'timestamp', type: 'string' },
        { name: 'nonce', type: 'uint256' },
        { name: 'message', type: 'string' },
      ],
    },
    primaryType: 'ClobAuth',
    message: { address: account.address, timestamp, nonce: BigInt(nonce), message: 'This message attests that I control the given wallet' },
  });
  return { SVC_ADDRESS: account.address, SVC_SIGNATURE: signature, SVC_TIMESTAMP: timestamp, SVC_NONCE: String(nonce) };
}

function base64UrlBytes(s: string): Uint8Array {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/**
 * L2 headers: HMAC-SHA256 of `timestamp + METHOD + path + body`, keyed with the base64url-decoded secret,
 * as lowercase hex. `path` is signed without its query string, as the service checks it.
 */
export async function l2Headers(address: string, creds: Creds, method: string, path: string, body: string | undefined): Promise<Record<string, string>> {
  const timestamp = String(Math.floor((await serviceNow()) / 1000));
  const mac = hmac(sha256, base64UrlBytes(creds.secret), stringToBytes(timestamp + method + path.split('?')[0] + (body ?? '')));
  return {
    SVC_ADDRESS: address,
    SVC_API_KEY: creds.apiKey,
    SVC_PASSPHRASE: creds.passphrase,
    SVC_TIMESTAMP: timestamp,
    SVC_SIGNATURE: bytesToHex(mac).slice(2),
  };
}

const ORDER_TYPES = {
  Order: [
    { name: 'salt', type: 'uint256' },
    { name: 'maker', type: 'address' },
    { name: 'signer', type: 'address' },
    { name: 'tokenId', type: 'uint256' },
    { name: 'makerAmount', type: 'uint256' },
    { name: 'takerAmount', type: 'uint256' },
    { name: 'side', type: 'uint8' },
    { name: 'signatureType', type: 'uint8' },
    { name: 'timestamp', type: 'uint256' },
    { name: 'metadata', type: 'bytes32' },
    { name: 'builder', type: 'bytes32' },
  ],
} as const;

const ZERO32 = `0x${'0'.repeat(64)}` as Hex;

export type OrderType = 'GTC' | 'GTD' | 'FOK' | 'FAK';

export interface Ticket {
  tokenId: string;
  side: 'BUY' | 'SELL';
  /** Decimal texts as typed: price per token, size in tokens. */
  price: string;
  size: string;
  orderType: OrderType;
  postOnly: boolean;
  /** GTD only: unix seconds. */
  expiration?: number;
  negRisk: boolean;
}

/**
 * The signed amounts of a ticket, in integer units (10^-6): a BUY gives USDC for tokens, a SELL tokens for
 * USDC, and the service reads the price back as USDC / size. Only what cannot be signed at all is refused
 * here (text that is not a number, a price outside (0, 1), a USDC amount finer than a unit); tick, lot and
 * minimum size are the service's rules, and its answer says which one an order broke.
 */
export function ticketAmounts(t: Pick<Ticket, 'side' | 'price' | 'size'>): { makerAmount: number; takerAmount: number } | { problem: string } {
  const pips = parsePips(t.price.trim());
  if (pips === undefined || pips <= 0 || pips >= PIPS) return { problem: 'price: a decimal between 0 and 1, at most 4 decimals' };
  const size = parseUnits(t.size.trim());
  if (size === undefined || size <= 0) return { problem: 'size: a positive number of tokens' };
  const usdc = (size * pips) / PIPS;
  if (!Number.isSafeInteger(usdc)) {
    return { problem: `size × price must be whole micro-USDC: sizes in steps of ${LOT_UNITS / 1_000_000} fit every price` };
  }
  return t.side === 'BUY' ? { makerAmount: usdc, takerAmount: size } : { makerAmount: size, takerAmount: usdc };
}

function randomSalt(): bigint {
  const words = crypto.getRandomValues(new Uint32Array(2));
  return (BigInt(words[0] & 0x1fffff) << 32n) | BigInt(words[1]);
}

/** A POST /order body: the V2 Order struct signed under the market's order domain, owned by `creds`. */
export async function signOrder(account: PrivateKeyAccount, creds: Creds, info: ExchangeInfo, t: Ticket): Promise<OrderSubmission> {
  const amounts = ticketAmounts(t);
  if ('problem' in amounts) throw new Error(amounts.problem);
  const order = {
    salt: randomSalt(),
    maker: account.address,
    signer: account.address,
    tokenId: BigInt(t.tokenId),
    makerAmount: BigInt(amounts.makerAmount),
    takerAmount: BigInt(amounts.takerAmount),
    side: t.side === 'BUY' ? 0 : 1,
    signatureType: 0,
    timestamp: BigInt(Math.floor(await serviceNow())),
    metadata: ZERO32,
    builder: ZERO32,
  };
  const domain = t.negRisk ? info.negRiskOrderDomain : info.orderDomain;
  const signature = await account.signTypedData({
    domain: { ...domain, verifyingContract: domain.verifyingContract as Hex },
    types: ORDER_TYPES,
    primaryType: 'Order',
    message: order,
  });
  return {
    order: {
      salt: order.salt.toString(),
      maker: order.maker,
      signer: order.signer,
      tokenId: t.tokenId,
      makerAmount: String(amounts.makerAmount),
      takerAmount: String(amounts.takerAmount),
      side: t.side,
      signatureType: 0,
      timestamp: order.timestamp.toString(),
      metadata: ZERO32,
      builder: ZERO32,
      signature,
    },
    owner: creds.apiKey,
    orderType: t.orderType,
    ...(t.postOnly ? { postOnly: true } : {}),
    ...(t.orderType === 'GTD' && t.expiration !== undefined ? { expiration: String(t.expiration) } : {}),
  } as OrderSubmission;
}
