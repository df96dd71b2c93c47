/**
 * Why credentials were refused (refusals/reason.ts): the X-Refusal-Reason text of a 401 from an l2 route
 * (`Unauthorized/Invalid api key`) or an l1 route (`Invalid L1 Request headers`), and the error frame the
 * user channel sends before it closes with 4001. The decision is edge/auth/auth.ts's and is already made when
 * anything here runs: this module replays the authenticator's checks, in the authenticator's order, on the
 * refused request, and names the first one that fails. It is called on the refusal path only, so an
 * accepted request never pays for it, and it changes no answer.
 *
 * L2 and builder headers (`l2`), in the order of auth.ts `l2Key` / `builderKey`, then the pipeline's kind
 * check, then the HMAC:
 *   1. every header present (L2: POLY_ADDRESS, POLY_API_KEY, POLY_PASSPHRASE, POLY_TIMESTAMP,
 *      POLY_SIGNATURE; builder: the POLY_BUILDER_* four), named in the platform's spelling, with near
 *      misses that arrived but are not read;
 *   2. the signature has the form of a digest (64 hex, or 43/44 base64 in either alphabet);
 *   3. the timestamp is decimal unix seconds (13 digits: milliseconds, said), within
 *      `auth.maxClockSkewSeconds` of this server (behind or ahead by how much, and the server's time);
 *   4. the key: unknown here (keys of the platform or another server do not work here), not yet committed,
 *      revoked (since when), a builder key on the L2 headers or another kind on the builder headers;
 *   5. a key kind the route takes (a read-only key where a trading key is needed): like 4, it depends on
 *      the key id alone, so it is said before anything that would confirm an address or a passphrase;
 *   6. the address (L2: 42 characters, the key's wallet), the passphrase (the key's, or another key's of
 *      the same wallet) and the HMAC, judged together: to a caller whose signature proves it holds the
 *      key's secret (it verifies over what arrived, or a mistake of step 7 reproduces it) the reason names
 *      which is wrong, the key's wallet included; to any other the three read the same (class
 *      auth_credentials, what the server signs over, never the wallet), and `Refusal.owner` carries the
 *      precise reason to the key's wallet's log (docs/decisions/authentication.md, "What a reason may tell a caller
 *      without the secret");
 *   7. the HMAC, once the key's own checks pass: the common mistakes (hmac-mistakes.ts) are TRIED with the key's real
 *      secret, one HMAC each, and the first that reproduces the signature is named: another path of the
 *      method (routes nearest the request's first), the query string or the full URL signed, a trailing
 *      slash, another method or its lower case, the body re-serialized (JSON.stringify, Python's
 *      json.dumps, py-clob-client's str(dict) with ' made ", sorted keys, the platform client's key order,
 *      indented by 2 or 4 spaces or tabs), left out, or an object appended as text, the timestamp in
 *      milliseconds or a second off, the secret's text bytes, hex or a base64 decoding that dropped '-' and
 *      '_' as the key, the passphrase or API key as the key, another key of the same wallet; single
 *      mistakes first, then the body's top-level keys in every other order (up to 5 keys: 119), then pairs
 *      as far as the bounds go.
 *      When none matches, the reason says what this server signed over and how it decodes the secret, and
 *      a JSON body that is pretty-printed, or whose keys are not in the order the platform's client writes
 *      them, is named as such first: its signer signed other bytes than it sent, which no secret fixes.
 * A route taking both families (DELETE /auth/builder-api-key) explains both when both arrived, L2 first.
 * Refused before the body arrived (body undefined with a Content-Length), the HMAC was not checked: only a
 * header check can have failed, and that is what is said.
 *
 * L1 (`l1`) is l1-auth.ts's, the user channel (`userChannel`) user-auth.ts's, and the checks every family makes
 * of a key (its state, the timestamp, near-miss headers, the wallet's other keys) credential-checks.ts's.
 *
 * What a reason never holds: a secret, a passphrase, an HMAC or expected signature in any encoding or any
 * part of one, the bytes a wrong secret decoded to, nor which wallet owns a key, or whether an address or a
 * passphrase is right, for a caller that has not proved the key's secret (step 6). It names public things: header names,
 * addresses the caller sent or a signature recovers to, paths, methods, clocks, byte counts, domains, the
 * API key id the caller sent (when it has the form of one) and other key ids of a wallet whose credentials
 * the caller has just shown it holds. Values of credential headers are never echoed, in case a secret
 * was put in the wrong one. Every comparison with key material is constant-time, as in auth.ts: the
 * diagnosis runs on the request's path, so an early-exit compare would time-leak what it compares.
 *
 * Cost. Header diagnoses: a few Map look-ups and at most three HMACs to derive the key's material (a
 * passphrase mismatch also derives the wallet's other keys', at most credential-checks.ts MAX_OTHER_KEYS). The HMAC diagnosis:
 * at most MAX_HMAC_TRIES (300) HMACs and MAX_HMAC_BYTES (256 KiB) hashed, on the main thread (a few µs per
 * HMAC over a small body: about a millisecond at worst), and none for a body over MAX_DIAGNOSED_BODY
 * (64 KiB): the reason says so; reachable only by a caller naming a usable key of the route's kind with a
 * fresh timestamp; L1: at most 1 + KNOWN_AUTH_DOMAINS recoveries on the pool. Both are priced by their work
 * (budget.ts: bytes hashed, RECOVERY_COST a recovery) for the client's network, the wallet named and the
 * service, taken at their most before and given back after: past a share the reason says what failed and
 * that the variants were not tried.
 *
 * What it must agree with arrives through auth-ports.ts (the rules, the keys), as edge/auth/auth.ts builds it.
 */
import { parseAddress } from '../../domain/ids.ts';
import type { KeyKind } from '../pipeline/route.ts';
import { DiagnosisBudget } from './budget.ts';
import { MAX_DIAGNOSED_BODY, bytesOf, jsonBodyForm, keyOrders, signingMistakes, type Signing } from './hmac-mistakes.ts';
import { shown, type Refusal } from './reason.ts';
import type { AuthExplainer, AuthExplainerDeps, KeyMaterial, RefusedRequest } from './auth-ports.ts';
import { CREATE_ROUTE, KIND_WORD, createKeyChecks, hyphenName, keyName, kindOf, platformName, refusal, sameBytes, takes } from './credential-checks.ts';
import { l1Explainer } from './l1-auth.ts';
import { userChannelExplainer } from './user-auth.ts';

type Headers = Readonly<Record<string, string>>;

/** Most HMACs one refused request's signature diagnosis computes. */
export const MAX_HMAC_TRIES = 300;
/** Most bytes those HMACs hash in all (a large body leaves room for fewer tries). */
export const MAX_HMAC_BYTES = 256 * 1024;

// ---- the explainer ---------------------------------------------------------------------------------

type Family = 'L2' | 'builder';

/** The outcome of replaying one family's header checks: a refusal, or the key whose HMAC is to be explained. */
/** The key's own checks passed; `mismatch` is the refusal of the address or passphrase, when one fails (said only once the secret is proved). */
interface KeyVerdict {
  key: KeyMaterial;
  apiKey: string;
  timestamp: string;
  signature: string;
  mismatch: Refusal | undefined;
}
type HeadVerdict = { refusal: Refusal } | KeyVerdict;

/**
 * What trying a request's HMAC showed: it verifies over what arrived, or `found` names the mistake that
 * reproduces it, or `why` says what was tried; `form`, how a JSON body sent differs from the client's form.
 */
interface HmacFinding {
  verified: boolean;
  found?: string;
  why: string;
  form?: string;
}

export function createAuthExplainer(deps: AuthExplainerDeps): AuthExplainer {
  const { keys, rules } = deps;
  const budget = deps.budget ?? new DiagnosisBudget();
  const checks = createKeyChecks(deps);
  const { nearMisses, timestampProblem, passphraseOwner, otherKeys, keyStateProblem } = checks;

  /** The address (L2) or passphrase that does not check against the key, as its wallet may read it; undefined when both do. */
  function mismatchOf(family: Family, h: Headers, m: KeyMaterial, name: string): Refusal | undefined {
    const names = family === 'L2' ? rules.l2 : rules.builder;
    if (family === 'L2') {
      const address = rules.header(h, rules.l2.address)!;
      const addrName = platformName(rules.l2.address);
      if (address.length !== 42) return refusal('auth_address', `${addrName} is ${address.length} characters, expected 42 (0x + 40 hex)`);
      if (address.toLowerCase() !== m.record.address) {
        return refusal('auth_address', `the address header ${addrName} ${shown(address)} is not this key's wallet (${m.record.address}): send the address that created the key with L1 (the signer, not a funder or proxy wallet)`);
      }
    }
    const passphrase = rules.header(h, names.passphrase)!;
    const given = Buffer.from(passphrase);
    if (sameBytes(given, m.passphrase)) return undefined;
    const passName = platformName(names.passphrase);
    const other = passphraseOwner(m.record.address, m.record.apiKey, given);
    return refusal(
      'auth_passphrase',
      other !== undefined
        ? `${passName} is the passphrase of API key ${other.apiKey} (${KIND_WORD[kindOf(other)]} of the same wallet), not of ${name}: send one key's id, passphrase and secret together`
        : `${passName} is not the passphrase of ${name} (${passphrase.length} characters arrived; this server's passphrases are 64 hex characters, as issued with the key)`,
    );
  }

  /** auth.ts l2Key / builderKey replayed: the first check that fails, else what the HMAC diagnosis needs. */
  function head(family: Family, req: Pick<RefusedRequest, 'headers' | 'otherHeaders'>, kinds: readonly KeyKind[]): HeadVerdict {
    const h = req.headers;
    const names = family === 'L2' ? rules.l2 : rules.builder;
    const fields: Array<[string, readonly string[]]> =
      family === 'L2'
        ? [['address', rules.l2.address], ['apiKey', names.apiKey], ['passphrase', names.passphrase], ['timestamp', names.timestamp], ['signature', names.signature]]
        : [['apiKey', names.apiKey], ['passphrase', names.passphrase], ['timestamp', names.timestamp], ['signature', names.signature]];
    const missing = fields.filter(([, n]) => rules.header(h, n) === undefined).map(([, n]) => n);
    if (missing.length > 0) {
      const list = missing.map(platformName).join(', ');
      const all = missing.length === fields.length;
      let text = `missing ${family} header${missing.length > 1 ? 's' : ''} ${list}${all ? ` (none of the ${fields.length} arrived)` : ''}`;
      text += `; the SVC_ spellings are read too, and underscored names also hyphenated (${hyphenName(missing[0]!)})`;
      const misses = nearMisses(req, missing);
      if (misses.length > 0) text += `; arrived but not read: ${misses.join(', ')}`;
      else if (all) text += '; a proxy such as nginx drops underscored header names unless underscores_in_headers is on';
      return { refusal: refusal('auth_header', text) };
    }
    const apiKey = rules.header(h, names.apiKey)!;
    const timestamp = rules.header(h, names.timestamp)!;
    const signature = rules.header(h, names.signature)!;
    const sigName = platformName(names.signature);

    if (!rules.digestForm(signature)) {
      let why: string;
      if (/^0x[0-9a-fA-F]{130}$/.test(signature)) why = 'it is an EIP-712 signature (0x + 130 hex), which L1 routes take; this route takes the HMAC-SHA256 of the request';
      else if (/^0x[0-9a-fA-F]{64}$/.test(signature)) why = 'it is 0x + 64 hex: send the digest without the 0x prefix';
      else why = `expected the HMAC-SHA256 digest as 64 hex characters or 44 characters of base64 (url-safe or standard; 43 without padding), got ${signature.length} characters`;
      return { refusal: refusal('auth_header', `${sigName} is not a digest: ${why}`) };
    }
    const late = timestampProblem(family, names.timestamp, timestamp);
    if (late !== undefined) return { refusal: late };

    const keyHeader = platformName(names.apiKey);
    const name = keyName(apiKey, keyHeader);
    const m = keys.forDiagnosis(apiKey);
    if (m === undefined) {
      return {
        refusal: refusal(
          'auth_key',
          `${name} is not known to this server: API keys issued by the platform or by another server do not work here; create one with ${CREATE_ROUTE[family === 'L2' ? 'trading' : 'builder']}`,
        ),
      };
    }
    const state = keyStateProblem(m, name);
    if (state !== undefined) return { refusal: state };
    const kind = kindOf(m.record);
    if (family === 'L2' && kind === 'builder') {
      return { refusal: refusal('auth_key', `${name} is a builder key: builder keys sign the POLY_BUILDER_* headers, not the L2 ones; this route takes ${takes(kinds)}`) };
    }
    if (family === 'builder' && kind !== 'builder') {
      return { refusal: refusal('auth_key', `${name} is ${KIND_WORD[kind]}: the POLY_BUILDER_* headers take a builder key (${CREATE_ROUTE.builder}); ${KIND_WORD[kind]} signs the L2 headers`) };
    }
    if (!kinds.includes(kind)) {
      return { refusal: refusal('auth_key', `${name} is ${KIND_WORD[kind]}: this route takes ${takes(kinds)}${kinds.includes('trading') ? `, created with ${CREATE_ROUTE.trading}` : ''}`) };
    }
    // The address and the passphrase are judged with the HMAC (`credentials`): which of the three fails is
    // said only to a caller whose signature proves it holds the secret.
    return { key: m, apiKey, timestamp, signature, mismatch: mismatchOf(family, h, m, name) };
  }

  /**
   * What the HMAC of a request whose key passed its own checks shows: whether it verifies with the key's
   * secret over what arrived, or which common mistake reproduces it (either proves the caller holds the
   * secret), else why nothing was found. Priced by the bytes it hashes, for the caller's network and the
   * key's wallet (budget.ts); a body over MAX_DIAGNOSED_BODY is not hashed again at all.
   */
  function hmacFinding(req: RefusedRequest, v: KeyVerdict, ip: string | undefined): HmacFinding {
    const given = rules.decodeSignature(v.signature)!;
    const body = req.body ?? Buffer.alloc(0);
    if (body.length > MAX_DIAGNOSED_BODY) {
      return { verified: false, why: `the body is ${body.length} bytes, and the common mistakes are tried only on bodies of at most ${MAX_DIAGNOSED_BODY / 1024} KiB` };
    }
    const base: Signing = { key: v.key.hmacKey, ts: v.timestamp, method: req.method, path: req.path, body };
    const by = { ip, wallet: v.key.record.address };
    // Room for variants longer than what arrived (full URLs, Python's spacing); what is not used goes back.
    const reserved = Math.min(MAX_HMAC_BYTES, MAX_HMAC_TRIES * (2 * bytesOf(base) + 128));
    if (!budget.take(by, reserved)) return { verified: false, why: 'the common mistakes were not tried (diagnosis is busy)' };
    const matches = (s: Signing): boolean => sameBytes(rules.l2Digest(s.key, s.ts, s.method, s.path, s.body), given);
    let tries = 0;
    let bytes = 0;
    let cut = false;
    const attempt = (s: Signing): boolean => {
      const cost = bytesOf(s);
      if (tries >= MAX_HMAC_TRIES || bytes + cost > reserved) {
        cut = true;
        return false;
      }
      tries++;
      bytes += cost;
      return matches(s);
    };
    const done = (r: HmacFinding) => {
      budget.refund(by, reserved - bytes);
      return r;
    };
    if (attempt(base)) return done({ verified: true, why: '' });
    const m = v.key;
    const others = otherKeys(m.record.address, m.record.apiKey).flatMap((r) => {
      const other = keys.forDiagnosis(r.apiKey);
      if (other === undefined) return [];
      const state = r.revoked ? ', revoked' : '';
      return [{ hmacKey: other.hmacKey, what: `it was keyed with the secret of API key ${r.apiKey} (${KIND_WORD[kindOf(r)]} of the same wallet${state}): send that key's id and passphrase with it, or sign with this key's secret` }];
    });
    const context = { method: req.method, path: req.path, query: req.query, host: req.headers['host'], secret: m.secret, passphrase: m.passphrase, apiKey: v.apiKey, hmacKey: m.hmacKey, routePaths: deps.paths(req.method), otherKeys: others };
    const dims = signingMistakes(context, base);
    for (const dim of dims) {
      for (const a of dim) {
        if (attempt(a.apply(base))) return done({ verified: false, found: a.what, why: '' });
        if (cut) break;
      }
    }
    // A body re-serialized with its keys in another order is a likelier mistake than any two at once.
    for (const a of keyOrders(body)) {
      if (cut) break;
      if (attempt(a.apply(base))) return done({ verified: false, found: a.what, why: '' });
    }
    for (let i = 0; i < dims.length && !cut; i++) {
      for (let j = i + 1; j < dims.length && !cut; j++) {
        for (const a of dims[i]!) {
          for (const b of dims[j]!) {
            if (attempt(b.apply(a.apply(base)))) return done({ verified: false, found: `${a.what}; and ${b.what}`, why: '' });
            if (cut) break;
          }
          if (cut) break;
        }
      }
    }
    const form = jsonBodyForm(body);
    return done({
      verified: false,
      why: `none of ${tries - 1} common mistakes reproduces it with the key's secret (other paths, the query string, method, the body re-serialized, reordered, indented or left out, milliseconds, secret encodings, the wallet's other keys)`,
      ...(form !== undefined && { form }),
    });
  }

  /**
   * The address, passphrase and HMAC of a key that passed its own checks, judged together. To a caller whose
   * signature proves it holds the key's secret (it verifies over what arrived, or a common mistake reproduces
   * it), the reason names what is wrong; to any other, a wrong address, passphrase or HMAC read the same
   * (`auth_credentials`), and the key's wallet reads which on GET /refusals (`owner`).
   */
  function credentials(f: Family, req: RefusedRequest, v: KeyVerdict, ip: string | undefined): Refusal {
    const body = req.body;
    const name = keyName(v.apiKey, platformName((f === 'L2' ? rules.l2 : rules.builder).apiKey));
    const what = `${f} signature does not match`;
    const query = req.query === '' ? '' : ` (its query string is not signed)`;
    const length = body?.length ?? 0;
    const server = `this server signs HMAC-SHA256 over timestamp ${v.timestamp} + ${req.method} + ${req.path}${query} + ${length > 0 ? `the body as received (${length} bytes)` : 'no body'}, keyed with the secret's base64url decoding`;
    const fields = f === 'L2' ? 'address, passphrase and signature' : 'passphrase and signature';
    const unproven = (detail: string, owner: Refusal): Refusal => ({
      class: 'auth_credentials',
      // Said before the detail, which may be long enough for the header's bound to cut (reason.ts).
      text: `${f} credentials of ${name} do not check: its ${fields} are not all the key's (which one is wrong is said only to a request whose signature proves it holds the key's secret; the key's wallet reads it on GET /refusals), and ${detail}`,
      owner: { class: owner.class, text: owner.text },
    });
    const declared = Number(req.headers['content-length'] ?? '0');
    if (body === undefined && (declared > 0 || req.headers['transfer-encoding'] !== undefined)) {
      const detail = 'the request was refused before its body arrived, so its signature was not checked';
      return unproven(detail, v.mismatch ?? refusal('auth_hmac', `${f} headers check, and ${detail} (retry it)`));
    }
    const h = hmacFinding(req, v, ip);
    const m = v.mismatch;
    if (h.verified) return m ?? refusal('auth_hmac', `${f} headers and signature check now: the request was refused as it arrived (its timestamp or key may have changed state since)`);
    if (h.found !== undefined) return m === undefined ? refusal('auth_hmac', `${what}: ${h.found}`) : refusal(m.class, `${m.text}; and the ${what}: ${h.found}`);
    // A JSON body sent in another form than the client's (pretty-printed, reordered) is named first: it fails
    // whatever the secret, so the question about the secret comes last and conditional.
    const form = h.form === undefined ? '' : `${h.form}; `;
    const secret = `the secret API key ${v.apiKey.toLowerCase()}'s?`;
    const ask = h.form === undefined ? `: is ${secret}` : `; if the bytes signed were these, is ${secret}`;
    const detail = `the signature does not verify: ${form}${server}; ${h.why}`;
    return unproven(detail, m === undefined ? refusal('auth_hmac', `${what}: ${form}${server}; ${h.why}${ask}`) : refusal(m.class, `${m.text}; and the ${what}: ${form}${server}; ${h.why}`));
  }

  /** One family's diagnosis: its header checks, then its credentials once the body is in. */
  function family(f: Family, req: RefusedRequest, kinds: readonly KeyKind[], ip: string | undefined): Refusal {
    const v = head(f, req, kinds);
    if ('refusal' in v) return v.refusal;
    return credentials(f, req, v, ip);
  }

  /** `r` with more said after it, to its caller and to its wallet alike. */
  const and = (r: Refusal, more: string): Refusal => ({ class: r.class, text: r.text + more, ...(r.owner && { owner: { class: r.owner.class, text: r.owner.text + more } }) });

  return {
    l2(req, kinds, ip) {
      const h = req.headers;
      const l2Kinds = kinds.includes('trading') || kinds.includes('readonly');
      const builderKinds = kinds.includes('builder');
      const hasL2 = rules.header(h, rules.l2.apiKey) !== undefined;
      const hasBuilder = rules.header(h, rules.builder.apiKey) !== undefined;
      if (l2Kinds && builderKinds) {
        if (hasL2 && hasBuilder) {
          const a = family('L2', req, kinds, ip);
          const b = family('builder', req, kinds, ip);
          const owner = a.owner !== undefined || b.owner !== undefined ? { owner: { class: (a.owner ?? a).class, text: `${(a.owner ?? a).text}; builder headers: ${(b.owner ?? b).text}` } } : {};
          return { class: a.class, text: `${a.text}; builder headers: ${b.text}`, ...owner };
        }
        if (hasBuilder) return family('builder', req, kinds, ip);
        const a = family('L2', req, kinds, ip);
        return hasL2 ? a : and(a, "; or sign with a builder key's POLY_BUILDER_* headers");
      }
      if (builderKinds) {
        const b = family('builder', req, kinds, ip);
        return !hasBuilder && hasL2 ? and(b, '; this route takes builder keys only, and the L2 headers that arrived do not sign it') : b;
      }
      const a = family('L2', req, kinds, ip);
      return !hasL2 && hasBuilder ? and(a, `; the builder headers that arrived do not sign this route (it takes ${takes(kinds)})`) : a;
    },

    l1: l1Explainer(deps, checks, budget),
    userChannel: userChannelExplainer(deps, checks),

    walletOf(headers) {
      for (const names of [rules.l2.apiKey, rules.builder.apiKey]) {
        const apiKey = rules.header(headers, names);
        const r = apiKey === undefined ? undefined : keys.record(apiKey);
        if (r !== undefined) return r.address;
      }
      const address = rules.header(headers, rules.l2.address);
      return address === undefined ? undefined : parseAddress(address);
    },
  };
}
