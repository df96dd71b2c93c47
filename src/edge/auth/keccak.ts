/**
 * keccak-256 (Ethereum's keccak with 0x01 padding, not NIST SHA3-256) for EIP-712 digests and addresses,
 * from the `keccak` package: ethereumjs's native binding (prebuilt for linux-x64; it falls back to its
 * own JS build where no binary loads). It runs in the signature workers three times per order (struct
 * hash, digest, public key -> address).
 *
 * The package's public API builds a readable-stream Transform per hash, which cost more than the
 * hashing itself (~6 µs per call against ~1 µs). Its native addon exposes the sponge directly
 * (`initialize(rate, capacity)`, `absorb`, `absorbLastFewBits`, `squeeze`, the same interface as its JS
 * state, which is the fallback), so one state per thread is reused: calls are synchronous, nothing can
 * interleave between initialize and squeeze.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

interface KeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  absorbLastFewBits(bits: number): void;
  squeeze(length: number): Buffer;
}

const require = createRequire(import.meta.url);

function loadState(): { state: KeccakState; native: boolean } {
  const dir = dirname(require.resolve('keccak/package.json'));
  try {
    // The addon's export is the state class itself (keccak/bindings.js hands it to lib/api as KeccakState).
    const Native = createRequire(require.resolve('keccak'))('node-gyp-build')(dir) as new () => KeccakState;
    return { state: new Native(), native: true };
  } catch {
    const Js = require('keccak/lib/keccak.js') as new () => KeccakState;
    return { state: new Js(), native: false };
  }
}

const { state, native } = loadState();

/** Whether the native sponge loaded (bench/edge/signatures.bench.ts reports it). */
export const keccakNative = native;

export function keccak256(data: Uint8Array): Uint8Array {
  state.initialize(1088, 512);
  state.absorb(Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  state.absorbLastFewBits(0x01);
  return state.squeeze(32);
}
