/**
 * The msgpack the cluster's wire formats share (wire.ts, the journal stream's batches; commands.ts, a
 * gateway's commands), and the first check of whatever arrives in them. Plain msgpack: no shared structures
 * or records, so any msgpack decoder reads a message; `undefined` keeps msgpackr's encoding (as lmdb-js
 * stores it), so a value round-trips exactly into a replica's tables. Each format keeps its own fields, its
 * version and its error class; what they share is only this encoding and "msgpack of a map, or say why not".
 */
import { Packr } from 'msgpackr';

export const packr = new Packr({ useRecords: false, moreTypes: false });

/** A msgpack map, as decoded (not an array, not bytes). */
export const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

/** `bytes` decoded as a map; otherwise `fail` with why (`not msgpack: ...`, or `not <what>`) is thrown. */
export function unpackObject(bytes: Uint8Array, fail: (why: string) => Error, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = packr.unpack(bytes);
  } catch (e) {
    throw fail(`not msgpack: ${(e as Error).message}`);
  }
  if (!isObj(v)) throw fail(`not ${what}`);
  return v;
}
