/**
 * What every family of refused credentials is checked for before its own signature (refusals/auth.ts L2 and
 * builder headers, l1-auth.ts, user-auth.ts): the wording of keys, kinds and headers, the near misses among
 * the headers that arrived, the timestamp against the clock (auth.ts `fresh`), a key's state (pending,
 * revoked), and the wallet's other keys a secret or passphrase may belong to. Owns those checks and their
 * words; which family runs them, in which order, is each family's. Separate so that the three diagnoses say
 * the same thing the same way, and each reads as its own order of checks.
 *
 * Every comparison with key material is constant-time (sameBytes), as in auth.ts: the diagnosis runs on the
 * request's path. Imports auth-ports.ts (what it is handed) and reason.ts; never edge/auth/auth.ts.
 */
import { timingSafeEqual } from 'node:crypto';
import { nowSeconds } from '../../runtime/clock.ts';
import type { KeyKind } from '../pipeline/route.ts';
import { shown, type Refusal, type RefusalClass } from './reason.ts';
import type { AuthExplainerDeps, ExplainedRecord, KeyMaterial, RefusedRequest } from './auth-ports.ts';

/** Other keys of the wallet tried as the HMAC key or compared as the passphrase. */
export const MAX_OTHER_KEYS = 20;

export const refusal = (cls: RefusalClass, text: string): Refusal => ({ class: cls, text });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The platform's spelling of a field (`poly_api_key` -> POLY_API_KEY): the second name auth.ts reads. */
export const platformName = (names: readonly string[]): string => names[1]!.toUpperCase();
/** Its hyphenated alias (POLY-API-KEY). */
export const hyphenName = (names: readonly string[]): string => names[3]!.toUpperCase();

export const KIND_WORD: Record<KeyKind, string> = { trading: 'a trading key', readonly: 'a read-only key', builder: 'a builder key' };
export const CREATE_ROUTE: Record<KeyKind, string> = {
  trading: 'POST /auth/api-key (L1 headers)',
  readonly: 'POST /auth/readonly-api-key',
  builder: 'POST /auth/builder-api-key',
};
export const kindOf = (r: ExplainedRecord): KeyKind => r.kind ?? 'trading';
export const takes = (kinds: readonly KeyKind[]): string => kinds.map((k) => KIND_WORD[k]).join(' or ');

/** The caller's API key header, named without echoing anything that is not an id. */
export function keyName(apiKey: string, header: string): string {
  return UUID.test(apiKey) ? `API key ${apiKey.toLowerCase()}` : `the ${header} value (${apiKey.length} characters, not an API key id: a UUID)`;
}

export const isoOf = (seconds: number): string => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

export const sameBytes = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

/** The checks bound to what the explainer was handed (its keys, rules, clock and skew). */
export type KeyChecks = ReturnType<typeof createKeyChecks>;

export function createKeyChecks(deps: Pick<AuthExplainerDeps, 'keys' | 'rules' | 'clock' | 'auth' | 'wallClock'>) {
  const { keys, rules, clock } = deps;
  const skew = deps.auth.maxClockSkewSeconds;

  /** Accepted spellings of every credential header of both families, for the near-miss scan. */
  const known = new Set<string>([...Object.values(rules.l2).flat(), ...Object.values(rules.builder).flat()]);

  /** Headers that arrived, look like the missing fields, and are not read (`x-poly-api-key`, `poly_apikey`). */
  function nearMisses(req: Pick<RefusedRequest, 'headers' | 'otherHeaders'>, fields: ReadonlyArray<readonly string[]>): string[] {
    const tokens = fields.map((names) => names[0]!.slice(4).replace(/[^a-z]/g, ''));
    const out: string[] = [];
    for (const name of [...Object.keys(req.headers), ...(req.otherHeaders ?? [])]) {
      // No spelling of a credential header is longer; a request may carry many made-up long names.
      if (name.length > 40 || known.has(name)) continue;
      const flat = name.replace(/[^a-z]/g, '');
      if (tokens.some((t) => flat.endsWith(t))) out.push(name);
      if (out.length === 3) break;
    }
    return out;
  }

  /** The timestamp's problem, if any (the same test as auth.ts `fresh`). */
  function timestampProblem(label: string, names: readonly string[], ts: string): Refusal | undefined {
    const now = nowSeconds(clock);
    const name = platformName(names);
    if (!rules.timestampForm(ts)) {
      if (/^\d{13}$/.test(ts)) return refusal('auth_timestamp', `${label} timestamp ${ts} has 13 digits: it is in milliseconds; send unix seconds (server time ${now})`);
      if (/^\d+\.\d+$/.test(ts)) return refusal('auth_timestamp', `${label} timestamp ${shown(ts)} has a fraction: send whole unix seconds (server time ${now})`);
      if (/^\d+$/.test(ts)) return refusal('auth_timestamp', `${label} timestamp ${shown(ts)} has ${ts.length} digits: send unix seconds (server time ${now})`);
      return refusal('auth_timestamp', `${name} ${shown(ts)} is not a decimal number of unix seconds (server time ${now})`);
    }
    const behind = now - Number(ts);
    if (Math.abs(behind) <= skew) return undefined;
    if (deps.wallClock !== undefined && Math.abs(nowSeconds(deps.wallClock) - Number(ts)) <= skew) return undefined;
    const how = behind > 0 ? `${behind} s behind` : `${-behind} s ahead of`;
    return refusal('auth_timestamp', `${label} timestamp ${Number(ts)} is ${how} this server (allowed ${skew} s; server time ${now}, GET /time)`);
  }

  /** Another key of the wallet whose passphrase this is (constant-time compares), else undefined. */
  function passphraseOwner(address: string, self: string, given: Buffer): ExplainedRecord | undefined {
    for (const r of otherKeys(address, self)) {
      const m = keys.forDiagnosis(r.apiKey);
      if (m !== undefined && sameBytes(given, m.passphrase)) return r;
    }
    return undefined;
  }

  /** The wallet's other committed keys, every kind, at most MAX_OTHER_KEYS (newest first: the likeliest mix-up). */
  function otherKeys(address: string, self: string): ExplainedRecord[] {
    const all = (['trading', 'readonly', 'builder'] as const).flatMap((k) => keys.records(address, k)).filter((r) => r.apiKey !== self);
    return all.sort((a, b) => b.createdAt - a.createdAt).slice(0, MAX_OTHER_KEYS);
  }

  /** Why a key that exists cannot sign (pending, revoked), else undefined. */
  function keyStateProblem(m: KeyMaterial, name: string): Refusal | undefined {
    if (m.pending) return refusal('auth_key', `${name} is still being created (its write has not committed): retry once its creation has answered`);
    const r = m.record;
    if (r.revoked) {
      const since = r.revokedAt === undefined ? '' : ` since ${isoOf(r.revokedAt)} (unix ${r.revokedAt})`;
      return refusal('auth_key', `${name} is revoked${since}: create another with ${CREATE_ROUTE[kindOf(r)]}`);
    }
    return undefined;
  }

  return { nearMisses, timestampProblem, passphraseOwner, otherKeys, keyStateProblem };
}
