/**
 * Seeded draws that depend on what they are about, not on when they are made: `seededUnit(seed, stream, n)`
 * is a number in [0, 1) fixed by the three integers. The sandbox decides with it which trades go through
 * RETRYING (stream and n: the trade's fill seq) and which requests meet an injected fault (n: the request's
 * number since the scenario was set), so the same seed and the same traffic give the same failures,
 * whatever the timing, and a restart decides a pending trade as the crashed process would have.
 *
 * The mixer is the murmur3 32-bit finalizer applied word by word: well spread for consecutive inputs,
 * which is all a share of requests or trades needs (not cryptographic).
 */

function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

const TWO_32 = 2 ** 32;

/** A number in [0, 1) determined by `seed`, `stream` (what is being decided) and `n` (which one, any safe integer >= 0). */
export function seededUnit(seed: number, stream: number, n: number): number {
  let h = mix32((seed | 0) ^ 0x9e3779b9);
  h = mix32(h ^ (stream | 0));
  h = mix32(h ^ (n >>> 0));
  h = mix32(h ^ Math.floor(n / TWO_32));
  return h / TWO_32;
}
