/**
 * EIP-712 digests of the two typed structures the service verifies, and ECDSA public-key recovery.
 * Pure functions: the signature pool's workers run them, tests and benchmarks call them directly.
 *
 *   Order     (DESIGN section 5) Order(uint256 salt,address maker,address signer,uint256 tokenId,
 *             uint256 makerAmount,uint256 takerAmount,uint8 side,uint8 signatureType,uint256 timestamp,
 *             bytes32 metadata,bytes32 builder) under {name, version, chainId, verifyingContract}.
 *   ClobAuth  (L1 headers) ClobAuth(address address,string timestamp,uint256 nonce,string message) under
 *             {name, version, chainId}.
 *
 * Both structs are encoded by hand instead of through viem's generic `hashTypedData`: they are fixed,
 * so type hashes and domain separators are computed once and an order digest is two keccak calls over
 * a preallocated buffer, several times faster (bench/edge/signatures.bench.ts). It also keeps viem out
 * of the signature workers, where loading its ~1000 modules through the TypeScript loader took most of
 * a second per thread. keccak comes from the native `keccak` binding (keccak.ts); the pure-JS
 * implementation viem wraps was about half of a worker's per-order work. test/edge/order-check.test.ts and test/edge/sig-pool.test.ts check
 * both digests against viem's `hashTypedData` and the platform client's published vectors.
 *
 * Recovery refuses what OpenZeppelin's ECDSA.recover (used by the platform's exchange contracts)
 * refuses: a malformed signature, v other than 27/28 (0/1 accepted too), r or s out of range, and a
 * high s (s > n/2; every mainstream signer emits low s, and accepting both would give each order two
 * valid signatures).
 */
import { keccak256 } from './keccak.ts';

export interface AuthDomain {
  name: string;
  version: string;
  chainId: number;
}

export interface OrderDomain extends AuthDomain {
  verifyingContract: string;
}

/** The domain per market kind: neg-risk markets sign for a separate exchange contract. */
export interface OrderDomains {
  normal: OrderDomain;
  negRisk: OrderDomain;
}

/**
 * The signed fields of an order in canonical text: uint256 values as decimal strings, addresses and
 * bytes32 as 0x hex (any case), side 0 BUY / 1 SELL.
 */
export interface OrderStruct {
  salt: string;
  maker: string;
  signer: string;
  tokenId: string;
  makerAmount: string;
  takerAmount: string;
  side: 0 | 1;
  signatureType: number;
  timestamp: string;
  metadata: string;
  builder: string;
}

export interface ClobAuthFields {
  address: string;
  /** Exactly the header text: the struct signs it as a string. */
  timestamp: string;
  /** Decimal uint256. */
  nonce: string;
}

export const ORDER_TYPE =
  'Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,uint256 takerAmount,uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,bytes32 builder)';
export const ORDER_TYPES = {
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

export const CLOB_AUTH_MESSAGE = 'This message attests that I control the given wallet';
export const CLOB_AUTH_TYPES = {
  ClobAuth: [
    { name: 'address', type: 'address' },
    { name: 'timestamp', type: 'string' },
    { name: 'nonce', type: 'uint256' },
    { name: 'message', type: 'string' },
  ],
} as const;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const UINT = /^\d{1,78}$/;
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
const UINT256_MAX = (1n << 256n) - 1n;

const utf8 = (s: string) => Buffer.from(s, 'utf8');
const keccak = keccak256;

const ORDER_TYPEHASH = keccak(utf8(ORDER_TYPE));
const DOMAIN_TYPEHASH = keccak(utf8('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'));
const AUTH_DOMAIN_TYPEHASH = keccak(utf8('EIP712Domain(string name,string version,uint256 chainId)'));
const CLOB_AUTH_TYPEHASH = keccak(utf8('ClobAuth(address address,string timestamp,uint256 nonce,string message)'));
const CLOB_AUTH_MESSAGE_HASH = keccak(utf8(CLOB_AUTH_MESSAGE));

/** Writes a decimal uint256 as a 32-byte big-endian word at `off` (the word must already be zero). */
function putUint(buf: Buffer, off: number, dec: string): void {
  if (!UINT.test(dec)) throw new RangeError('not a decimal uint256');
  // Up to 14 digits fits 47 bits: one writeUIntBE, no BigInt.
  if (dec.length <= 14) {
    buf.writeUIntBE(Number(dec), off + 26, 6);
    return;
  }
  const v = BigInt(dec);
  if (v > UINT256_MAX) throw new RangeError('uint256 overflow');
  buf.write(v.toString(16).padStart(64, '0'), off, 'hex');
}

function putAddress(buf: Buffer, off: number, addr: string): void {
  // Buffer.write stops silently at the first non-hex character, so the format is checked first.
  if (!ADDRESS.test(addr)) throw new RangeError('not an address');
  buf.write(addr.slice(2), off + 12, 'hex');
}

function putBytes32(buf: Buffer, off: number, hex: string): void {
  if (!BYTES32.test(hex)) throw new RangeError('not bytes32');
  buf.write(hex.slice(2), off, 'hex');
}

function putSmall(buf: Buffer, off: number, n: number, max: number): void {
  if (!Number.isInteger(n) || n < 0 || n > max) throw new RangeError('out of range');
  buf.writeUIntBE(n, off + 26, 6);
}

/** The EIP-712 domain separator of an order domain (compute once per domain and keep it). */
export function orderDomainSeparator(d: OrderDomain): Uint8Array {
  const buf = Buffer.alloc(5 * 32);
  buf.set(DOMAIN_TYPEHASH, 0);
  buf.set(keccak(utf8(d.name)), 32);
  buf.set(keccak(utf8(d.version)), 64);
  putUint(buf, 96, String(d.chainId));
  putAddress(buf, 128, d.verifyingContract);
  return keccak(buf);
}

// One scratch buffer per thread: digests are computed synchronously, so nothing else touches it between
// the fill and the keccak.
const structBuf = Buffer.alloc(12 * 32);
const digestBuf = Buffer.alloc(2 + 32 + 32);
digestBuf[0] = 0x19;
digestBuf[1] = 0x01;

/** keccak256(0x1901 ‖ separator ‖ hashStruct(order)) as bytes. Throws RangeError on a malformed field. */
export function orderDigestBytes(o: OrderStruct, separator: Uint8Array): Uint8Array {
  const b = structBuf;
  b.fill(0);
  b.set(ORDER_TYPEHASH, 0);
  putUint(b, 32, o.salt);
  putAddress(b, 64, o.maker);
  putAddress(b, 96, o.signer);
  putUint(b, 128, o.tokenId);
  putUint(b, 160, o.makerAmount);
  putUint(b, 192, o.takerAmount);
  putSmall(b, 224, o.side, 1);
  putSmall(b, 256, o.signatureType, 255);
  putUint(b, 288, o.timestamp);
  putBytes32(b, 320, o.metadata);
  putBytes32(b, 352, o.builder);
  digestBuf.set(separator, 2);
  digestBuf.set(keccak(b), 34);
  return keccak(digestBuf);
}

/** The order id: `0x` + 64 lowercase hex of the EIP-712 digest. */
export function orderDigest(o: OrderStruct, separator: Uint8Array): string {
  return '0x' + Buffer.from(orderDigestBytes(o, separator)).toString('hex');
}

/** The EIP-712 domain separator of the L1 auth domain (no verifyingContract). */
export function authDomainSeparator(d: AuthDomain): Uint8Array {
  const buf = Buffer.alloc(4 * 32);
  buf.set(AUTH_DOMAIN_TYPEHASH, 0);
  buf.set(keccak(utf8(d.name)), 32);
  buf.set(keccak(utf8(d.version)), 64);
  putUint(buf, 96, String(d.chainId));
  return keccak(buf);
}

/** EIP-712 digest of the L1 ClobAuth struct. Throws RangeError on a malformed address or nonce. */
export function clobAuthDigest(f: ClobAuthFields, separator: Uint8Array): Uint8Array {
  const b = Buffer.alloc(5 * 32);
  b.set(CLOB_AUTH_TYPEHASH, 0);
  putAddress(b, 32, f.address);
  b.set(keccak(utf8(f.timestamp)), 64);
  putUint(b, 96, f.nonce);
  b.set(CLOB_AUTH_MESSAGE_HASH, 128);
  const d = Buffer.alloc(66);
  d[0] = 0x19;
  d[1] = 0x01;
  d.set(separator, 2);
  d.set(keccak(b), 34);
  return keccak(d);
}

/** The slice of the `secp256k1` package API that recovery needs (native binding or its JS fallback). */
export interface Secp256k1Recover {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean): Uint8Array;
}

// n/2 of secp256k1: a signature with a larger s is the malleated twin of a low-s one.
const HALF_N = Buffer.from('7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0', 'hex');

/**
 * Recovers the signer address (lowercase 0x hex) of a 65-byte `r ‖ s ‖ v` signature over a 32-byte
 * digest, or undefined when the signature is malformed or does not recover.
 */
export function recoverAddress(secp: Secp256k1Recover, digest: Uint8Array, signature: string): string | undefined {
  if (typeof signature !== 'string' || !SIGNATURE.test(signature)) return undefined;
  const raw = Buffer.from(signature.slice(2), 'hex');
  let v = raw[64]!;
  if (v >= 27) v -= 27;
  if (v !== 0 && v !== 1) return undefined;
  const rs = raw.subarray(0, 64);
  if (Buffer.compare(rs.subarray(32, 64), HALF_N) > 0) return undefined;
  let pub: Uint8Array;
  try {
    // Throws when r or s is zero or not below the group order, or no point recovers.
    pub = secp.ecdsaRecover(rs, v, digest, false);
  } catch {
    return undefined;
  }
  return '0x' + Buffer.from(keccak(pub.subarray(1))).subarray(12).toString('hex');
}
