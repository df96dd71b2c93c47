/**
 * The JSON body of a request: nesting bounded before anything parses it, then JSON.parse.
 *
 * Why a bound: no route takes a body nested more than a few levels (the admin catalog import is the
 * deepest, around eight), but JSON.parse accepts any depth and code that walks the value recursively does
 * not (the catalog import overflowed the stack at 10,000 levels), and a megabyte of `[[[[...` costs a
 * parse even when the answer is an error. `depthExceeds` scans the raw bytes once, skipping strings, and
 * stops at the first level past the bound.
 */

/** Deepest nesting of arrays and objects any route accepts. */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/** Whether `bytes` nests arrays and objects deeper than `max` (outside strings). Malformed input is left to JSON.parse. */
export function depthExceeds(bytes: Uint8Array, max: number): boolean {
  let depth = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const c = bytes[i]!;
    if (c === QUOTE) {
      // Skip the string: an escaped character is never its closing quote.
      for (i++; i < n; i++) {
        const d = bytes[i]!;
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

export type ParsedBody = { ok: true; value: unknown } | { ok: false; reason: 'invalid' | 'too-deep' };

/** Parses a request body; an absent or empty body is `undefined` (the schema decides whether that is allowed). */
export function parseJsonBody(body: Buffer | undefined, maxDepth = MAX_JSON_DEPTH): ParsedBody {
  if (body === undefined || body.length === 0) return { ok: true, value: undefined };
  if (depthExceeds(body, maxDepth)) return { ok: false, reason: 'too-deep' };
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) };
  } catch {
    return { ok: false, reason: 'invalid' };
  }
}
