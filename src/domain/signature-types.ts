/**
 * The order's `signatureType` (the platform's SignatureType enum, Polymarket/ctf-exchange
 * src/exchange/libraries/OrderStructs.sol): who signs an order for whose money. Written once for the order
 * checks, their refusals and the routes that take the platform client's `signature_type` parameter.
 *
 *   0  EOA               the signer trades its own wallet: maker == signer
 *   1  POLY_PROXY        the signer trades its proxy wallet: maker = the proxy factory's CREATE2 address
 *                        for the signer
 *   2  POLY_GNOSIS_SAFE  the signer trades its Safe: maker = the Safe factory's CREATE2 address for it
 *   3  POLY_1271         a contract wallet that signs by ERC-1271: verifying it needs that contract's
 *                        code on a chain, so this exchange refuses it
 *
 * edge/funders.ts derives the makers of types 1 and 2.
 */

export const SIGNATURE_TYPES = { EOA: 0, POLY_PROXY: 1, POLY_GNOSIS_SAFE: 2, POLY_1271: 3 } as const;

/** The types this exchange verifies. */
export type VerifiedSignatureType = 0 | 1 | 2;

/** The platform's name of a type, for messages; undefined for a number it does not define. */
export function signatureTypeName(type: number): string | undefined {
  return (['EOA', 'POLY_PROXY', 'POLY_GNOSIS_SAFE', 'POLY_1271'] as const)[type];
}

export function isVerifiedSignatureType(type: number): type is VerifiedSignatureType {
  return type === 0 || type === 1 || type === 2;
}
