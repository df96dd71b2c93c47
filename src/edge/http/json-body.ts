/**
 * The JSON body of a request: nesting bounded before anything parses it, then JSON.parse.
 *
 * Why a bound: no route takes a body nested more than a few levels (the admin catalog import is the
 * deepest, around eight), but JSON.parse accepts any depth and code that walks the value recursively does
 * not (the catalog import overflowed the stack at 10,000 levels), and a megabyte of `[[[[...` costs a
 * parse even when the answer is an error. `DepthScan` reads the raw bytes once, skipping strings, and
 * stops at the first level past the bound; http.ts feeds it each piece of a body as it arrives and keeps
 * none of a body past the bound: it is refused without its bytes being copied and joined first.
 */

/** Deepest nesting of arrays and objects any route accepts. */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * The nesting of a body fed to it in pieces, as it arrives (http.ts): a body past the bound is known from
 * its first bytes past it, and none of the rest need be kept. Outside strings only; malformed input is left
 * to JSON.parse.
 */
export class DepthScan {
  private depth = 0;
  private inString = false;
  /** The previous byte, inside a string, was a backslash: this one is escaped (never a closing quote). */
  private escaped = false;
  exceeded = false;

  constructor(private readonly max: number) {}

  /** Scans the next piece; true once the nesting went past the bound (and from then on). */
  feed(bytes: Uint8Array): boolean {
    if (this.exceeded) return true;
    let { depth, inString, escaped } = this;
    const max = this.max;
    const n = bytes.length;
    for (let i = 0; i < n; i++) {
      const c = bytes[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
      } else if (c === QUOTE) {
        inString = true;
      } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (++depth > max) {
          this.exceeded = true;
          return true;
        }
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        depth--;
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    return false;
  }
}

/** Whether `bytes` nests arrays and objects deeper than `max` (outside strings). Malformed input is left to JSON.parse. */
export function depthExceeds(bytes: Uint8Array, max: number): boolean {
  return new DepthScan(max).feed(bytes);
}

export type ParsedBody = { ok: true; value: unknown } | { ok: false; reason: 'invalid' | 'too-deep' };

/** Parses a request body; an absent or empty body is `undefined` (the schema decides whether that is allowed). */
export function parseJsonBody(body: Buffer | undefined, maxDepth = MAX_JSON_DEPTH): ParsedBody {
  if (body !== undefined && depthExceeds(body, maxDepth)) return { ok: false, reason: 'too-deep' };
  return parseScannedJsonBody(body);
}

/** parseJsonBody for a body whose nesting a DepthScan already bounded as it arrived (http.ts): not scanned again. */
export function parseScannedJsonBody(body: Buffer | undefined): ParsedBody {
  if (body === undefined || body.length === 0) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) };
  } catch {
    return { ok: false, reason: 'invalid' };
  }
}
