/**
 * keccak-256 (Ethereum's keccak with 0x01 padding, not NIST SHA3-256) for EIP-712 digests and addresses,
 * from the `keccak` package: ethereumjs's native binding (prebuilt for linux-x64; it falls back to its
 * own JS build where no binary loads). It runs in the signature workers on every order, about 4 us per
 * order struct natively against ~35 us for the pure-JS @noble/hashes viem wraps, so the choice matters.
 */
import createKeccakHash from 'keccak';

export function keccak256(data: Uint8Array): Uint8Array {
  return createKeccakHash('keccak256').update(Buffer.from(data.buffer, data.byteOffset, data.byteLength)).digest();
}
