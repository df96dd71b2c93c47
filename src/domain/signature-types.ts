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
 * The makers of types 1 and 2 are the platform exchange's rule (Polymarket/ctf-exchange
 * src/exchange/mixins/Signatures.sol and PolyFactoryHelper.sol): `getPolyProxyWalletAddress(signer)` and
 * `getSafeAddress(signer)`, CREATE2 addresses keccak256(0xff ‖ factory ‖ salt ‖ initCodeHash)[12:] with the
 * signer in the salt:
 *
 *   proxy  salt = keccak256(abi.encodePacked(signer))   20 bytes   (libraries/PolyProxyLib.sol)
 *   Safe   salt = keccak256(abi.encode(signer))         32 bytes   (libraries/PolySafeLib.sol)
 *
 * deriveFunder computes them (viem) for the factories it is given: the service's configuration
 * (auth.walletFactories, edge/auth/funders.ts, which caches) and the console (from GET /exchange-info).
 */
import { encode, encodePacked } from 'ox/AbiParameters';
import { fromCreate2 } from 'ox/ContractAddress';
import { keccak256 } from 'ox/Hash';
import type { Hex } from 'ox/Hex';

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

/** A wallet factory: its address and the keccak256 of the wallets' creation code. */
export interface WalletFactory {
  readonly factory: string;
  readonly initCodeHash: string;
}

export interface WalletFactories {
  readonly proxy: WalletFactory;
  readonly safe: WalletFactory;
}

/** The proxy wallet (1) or Safe (2) `factories` derive for `signer` (a 0x address in any case), lowercase. */
export function deriveFunder(factories: WalletFactories, signer: string, type: 1 | 2): string {
  const f = type === 1 ? factories.proxy : factories.safe;
  const a = signer.toLowerCase() as Hex;
  const salt = type === 1 ? keccak256(encodePacked(['address'], [a])) : keccak256(encode([{ type: 'address' }], [a]));
  // Lowercase in: ox checks a mixed-case address's checksum, and the configuration takes any case.
  return fromCreate2({ from: f.factory.toLowerCase() as Hex, salt, bytecodeHash: f.initCodeHash as Hex }).toLowerCase();
}
