/**
 * Normalization of admin input fields shared by every kind of record: dates, creators, ids, and the
 * two-value fields that arrive as JSON-encoded strings or arrays.
 */

/** One problem of an upsert request: where (`[0].markets[1].slug`) and what. */
export interface Problem {
  path: string;
  message: string;
}

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** ISO 8601 text -> normalized UTC ISO string; a time without a zone is UTC (never the server's zone). */
export function normalizeIso(text: string): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (y < 1900 || mo < 1 || mo > 12 || d < 1 || d > (mo === 2 && !leap ? 28 : DAYS[mo - 1])) return undefined;
  let t = text.replace(' ', 'T');
  if (t.includes('T') && !/(Z|[+-]\d{2}:?\d{2})$/.test(t)) t += 'Z';
  t = t.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = Date.parse(t);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

export const present = <T>(v: T | null | undefined): v is T => v !== null && v !== undefined;
/** For fields the catalog answers as "" when unset: "" is absent too, so an answer can be re-imported. */
export const given = (v: string | null | undefined): v is string => v !== null && v !== undefined && v !== '';

export function normalizeCreator(c: string | null | undefined): string | undefined {
  if (!given(c)) return undefined;
  return /^0x[0-9a-fA-F]{40}$/.test(c) ? c.toLowerCase() : c;
}

export function idText(id: string | number | null | undefined): string | undefined {
  return present(id) ? String(id) : undefined;
}

/** A JSON-encoded string array or a plain array (DESIGN section 9). */
export function stringPair(v: string | unknown[], path: string, problems: Problem[]): unknown[] | undefined {
  let arr: unknown = v;
  if (typeof v === 'string') {
    try {
      arr = JSON.parse(v);
    } catch {
      problems.push({ path, message: 'must be a JSON-encoded array of two values' });
      return undefined;
    }
  }
  if (!Array.isArray(arr) || arr.length !== 2) {
    problems.push({ path, message: 'must hold exactly two values' });
    return undefined;
  }
  return arr;
}
