/**
 * Identifiers and their parsers. Every id that enters the service goes through one of these, so no
 * module invents its own format check. Parsers return the canonical form (lowercase hex) or undefined.
 *
 *   address      0x + 40 hex, any case in; lowercase out (DESIGN section 7)
 *   condition id 0x + 64 hex (a market)
 *   order id     0x + 64 hex (the EIP-712 digest of the signed order)
 *   token id     uint256 as a decimal string without leading zeros (order-book and trading routes)
 *   asset        <conditionId>:<outcomeIndex> (wallet data routes only)
 *   bytes32      0x + 64 hex (builder codes, metadata)
 */

declare const brand: unique symbol;
type Brand<T, B extends string> = T & { readonly [brand]: B };

export type Address = Brand<string, 'Address'>;
export type ConditionId = Brand<string, 'ConditionId'>;
export type OrderId = Brand<string, 'OrderId'>;
export type TokenId = Brand<string, 'TokenId'>;
export type Bytes32 = Brand<string, 'Bytes32'>;
export type OutcomeIndex = 0 | 1;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX32 = /^0x[0-9a-fA-F]{64}$/;
const UINT = /^(0|[1-9]\d{0,77})$/;
const UINT256_MAX = (1n << 256n) - 1n;

export const ZERO_BYTES32 = ('0x' + '0'.repeat(64)) as Bytes32;
export const ZERO_ADDRESS = ('0x' + '0'.repeat(40)) as Address;

export function parseAddress(s: string): Address | undefined {
  return ADDRESS.test(s) ? (s.toLowerCase() as Address) : undefined;
}

export function parseConditionId(s: string): ConditionId | undefined {
  return HEX32.test(s) ? (s.toLowerCase() as ConditionId) : undefined;
}

export function parseOrderId(s: string): OrderId | undefined {
  return HEX32.test(s) ? (s.toLowerCase() as OrderId) : undefined;
}

/** A uint256 in canonical decimal form (no sign, no leading zeros, at most 2^256 - 1). */
export function parseTokenId(s: string): TokenId | undefined {
  if (!UINT.test(s)) return undefined;
  if (s.length === 78 && BigInt(s) > UINT256_MAX) return undefined;
  return s as TokenId;
}

/** `<conditionId>:<outcomeIndex>`, the wallet data routes' name for a token. */
export function formatAsset(conditionId: ConditionId | string, outcome: number): string {
  return `${conditionId}:${outcome}`;
}

export function parseAsset(s: string): { conditionId: ConditionId; outcome: OutcomeIndex } | undefined {
  const i = s.lastIndexOf(':');
  if (i < 0) return undefined;
  const conditionId = parseConditionId(s.slice(0, i));
  const o = s.slice(i + 1);
  if (!conditionId || (o !== '0' && o !== '1')) return undefined;
  return { conditionId, outcome: Number(o) as OutcomeIndex };
}

