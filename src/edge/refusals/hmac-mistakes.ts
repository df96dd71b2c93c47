/**
 * The signing mistakes a refused HMAC is tried against (refusals/auth.ts, step 7), and what can be said of
 * a JSON body none of them reproduces. Each mistake is one change to what was signed (the path, the body,
 * the method, the timestamp or the key) with the words that name it; auth.ts's explainer computes one HMAC
 * per mistake with the key's real secret, within its bounds, and names the first that reproduces the
 * signature. The body variants are the serializations signers are known to produce: JSON.stringify,
 * Python's json.dumps and str(dict) (py-clob-client), sorted keys, the platform client's key order,
 * pretty-printing, and the body's top-level keys in every other order (keyOrders).
 *
 * Pure: no key store, no clock; what it needs of the key and the routes arrives as a MistakeContext. It
 * never decides or hashes anything.
 */
import { shown } from './reason.ts';

/** A body larger than this is not diagnosed: its HMAC is not computed again, nor any variant of it. */
export const MAX_DIAGNOSED_BODY = 64 * 1024;

// ---- Python's serializations, for the body variants ------------------------------------------------

/** `json.dumps(v)` with its default separators (', ' and ': ') and ensure_ascii. Numbers as JavaScript writes them. */
function pyDumps(v: unknown, ensureAscii: boolean): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean' || typeof v === 'number') return JSON.stringify(v);
  if (typeof v === 'string') {
    const s = JSON.stringify(v);
    // Python escapes everything outside ' '..'~' as \uXXXX (UTF-16 units), DEL included.
    return ensureAscii ? s.replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')) : s;
  }
  if (Array.isArray(v)) return '[' + v.map((x) => pyDumps(x, ensureAscii)).join(', ') + ']';
  return '{' + Object.entries(v as Record<string, unknown>).map(([k, x]) => pyDumps(k, ensureAscii) + ': ' + pyDumps(x, ensureAscii)).join(', ') + '}';
}

/** `str(v)` of the parsed value as Python writes it (single quotes, True/False/None). */
function pyStr(v: unknown): string {
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return JSON.stringify(v);
  if (typeof v === 'string') {
    const q = v.includes("'") && !v.includes('"') ? '"' : "'";
    return q + v.replace(/\\/g, '\\\\').replace(q === "'" ? /'/g : /"/g, '\\' + q).replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t') + q;
  }
  if (Array.isArray(v)) return '[' + v.map(pyStr).join(', ') + ']';
  return '{' + Object.entries(v as Record<string, unknown>).map(([k, x]) => pyStr(k) + ': ' + pyStr(x)).join(', ') + '}';
}

/** JSON.stringify with every object's keys sorted. */
function sortedJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(sortedJson).join(',') + ']';
  const o = v as Record<string, unknown>;
  return '{' + Object.keys(o).sort().map((k) => JSON.stringify(k) + ':' + sortedJson(o[k])).join(',') + '}';
}

/**
 * The key order the platform's official client writes an order submission in (clob-client-v2
 * `orderToJsonV2`): its top level, then the signed order's. Keys it does not write keep their place after.
 */
const CLIENT_SUBMISSION_KEYS = ['deferExec', 'postOnly', 'order', 'owner', 'orderType'];
const CLIENT_ORDER_KEYS = ['salt', 'maker', 'signer', 'taker', 'tokenId', 'makerAmount', 'takerAmount', 'side', 'signatureType', 'timestamp', 'expiration', 'metadata', 'builder', 'signature'];

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isSubmission = (v: unknown): v is Record<string, unknown> => isPlainObject(v) && isPlainObject(v.order);

/** `o`'s keys in `order` first (those it has), then its others as they came. */
function ordered(o: Record<string, unknown>, order: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of order) if (Object.hasOwn(o, k)) out[k] = o[k];
  for (const k of Object.keys(o)) if (!Object.hasOwn(out, k)) out[k] = o[k];
  return out;
}

/** An order submission (or POST /orders' array of them) compact, in the official client's key order; undefined for other bodies. */
function clientOrderJson(v: unknown): string | undefined {
  const one = (x: unknown) => (isSubmission(x) ? { ...ordered(x, CLIENT_SUBMISSION_KEYS), order: ordered(x.order as Record<string, unknown>, CLIENT_ORDER_KEYS) } : x);
  if (isSubmission(v)) return JSON.stringify(ordered(one(v) as Record<string, unknown>, CLIENT_SUBMISSION_KEYS));
  if (Array.isArray(v) && v.length > 0 && v.every(isSubmission)) return JSON.stringify(v.map((x) => ordered(one(x) as Record<string, unknown>, CLIENT_SUBMISSION_KEYS)));
  return undefined;
}

/** Every order of `keys` but the one given (at most 5 keys: 119), for the top-level key-order variants. */
function otherOrders(keys: readonly string[]): string[][] {
  if (keys.length < 2 || keys.length > 5) return [];
  const out: string[][] = [];
  const walk = (done: string[], left: string[]) => {
    if (left.length === 0) {
      if (done.some((k, i) => k !== keys[i])) out.push(done);
      return;
    }
    left.forEach((k, i) => walk([...done, k], [...left.slice(0, i), ...left.slice(i + 1)]));
  };
  walk([], [...keys]);
  return out;
}

/**
 * What can be said of a JSON body whose signature none of the variants reproduced: that it is pretty-printed
 * (whitespace between its tokens), or that its keys are not in the order the platform's client writes them.
 * Undefined for a body that is not JSON, or compact in the client's order (or one the client never sends).
 */
function bodyForm(body: Buffer, v: unknown): string | undefined {
  const compact = JSON.stringify(v);
  const facts: string[] = [];
  if (Buffer.byteLength(compact) !== body.length) facts.push(`is pretty-printed (${body.length} bytes sent, ${Buffer.byteLength(compact)} compact)`);
  const client = clientOrderJson(v);
  if (client !== undefined && client !== compact) facts.push(`has its keys in another order than the platform's client writes them (${CLIENT_SUBMISSION_KEYS.join(', ')}; in the order: ${CLIENT_ORDER_KEYS.join(', ')})`);
  if (facts.length === 0) return undefined;
  return `the JSON body sent ${facts.join(', and ')}: its HMAC must be over exactly these bytes, so a client that signed one serialization of the body and sent another (re-serialized, reordered or pretty-printed after signing, by it or a library or proxy) fails here whatever its secret; sign the bytes you send`;
}

/** bodyForm of a body that parses as JSON (and is small enough to parse here), else undefined. */
export function jsonBodyForm(body: Buffer): string | undefined {
  if (body.length === 0 || body.length > MAX_DIAGNOSED_BODY) return undefined;
  try {
    return bodyForm(body, JSON.parse(body.toString('utf8')));
  } catch {
    return undefined;
  }
}

/** Edit distance, for ordering route paths nearest the request's first (paths are short). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

// ---- the HMAC variants -----------------------------------------------------------------------------

/** What one HMAC is computed over, and with what key. */
export interface Signing {
  key: Buffer;
  ts: string;
  method: string;
  path: string;
  body: Buffer | string;
}

/** One mistake: how it changes the signing, and how the reason names it. */
export interface Alt {
  what: string;
  apply(s: Signing): Signing;
}

export const bytesOf = (s: Signing): number => s.ts.length + s.method.length + s.path.length + Buffer.byteLength(s.body) + 64;

/** What the mistakes are tried against: the refused request as it arrived and the key it names. */
export interface MistakeContext {
  method: string;
  path: string;
  /** The query string as received, without `?` ('' when none). */
  query: string;
  /** The Host header, when one arrived. */
  host: string | undefined;
  /** The key's secret (base64url text), passphrase (its bytes) and id, and the HMAC key its secret decodes to. */
  secret: string;
  passphrase: Buffer;
  apiKey: string;
  hmacKey: Buffer;
  /** The paths of the routes registered for the method. */
  routePaths: readonly string[];
  /** The HMAC keys of the wallet's other keys, each with how the reason names the mistake of using it. */
  otherKeys: ReadonlyArray<{ hmacKey: Buffer; what: string }>;
}

/** The mistakes to try, by dimension, each without its no-op (a variant equal to what was received). */
export function signingMistakes(req: MistakeContext, s: Signing): Alt[][] {
  const P = req.path;
  const M = req.method;
  const B = s.body as Buffer;

  const paths: Alt[] = [];
  const seenPath = new Set<string>([P]);
  const addPath = (p: string, what: string) => {
    if (seenPath.has(p)) return;
    seenPath.add(p);
    paths.push({ what, apply: (x) => ({ ...x, path: p }) });
  };
  if (req.query !== '') addPath(`${P}?${req.query}`, `the request was signed over ${shown(`${P}?${req.query}`, 80)}: the query string is not signed (sign ${P})`);
  const slash = P.length > 1 && P.endsWith('/') ? P.slice(0, -1) : P + '/';
  addPath(slash, `the request was signed over path ${slash}, it arrived at ${P}`);
  const host = req.host;
  if (host !== undefined && host !== '') {
    for (const scheme of ['https', 'http']) addPath(`${scheme}://${host}${P}`, `the request was signed over the full URL ${shown(`${scheme}://${host}${P}`, 80)}: sign the path only (${P})`);
  }
  const routes = req.routePaths
    .filter((p) => !p.includes(':'))
    .map((p) => ({ p, d: distance(p, P) }))
    .sort((a, b) => a.d - b.d || (a.p < b.p ? -1 : 1));
  for (const { p } of routes) addPath(p, `the request was signed over path ${p}, it arrived at ${P}`);

  const methods: Alt[] = [];
  if (M.toLowerCase() !== M) methods.push({ what: `it was signed with the method in lower case (${M.toLowerCase()}): sign ${M}`, apply: (x) => ({ ...x, method: M.toLowerCase() }) });
  for (const other of ['GET', 'POST', 'PUT', 'DELETE']) {
    if (other !== M) methods.push({ what: `it was signed as a ${other} request, it arrived as ${M}`, apply: (x) => ({ ...x, method: other }) });
  }

  const bodies: Alt[] = [];
  const seenBody = new Set<string>([B.toString('latin1')]);
  const addBody = (text: string, what: string) => {
    const b = Buffer.from(text);
    const id = b.toString('latin1');
    if (seenBody.has(id)) return;
    seenBody.add(id);
    bodies.push({ what, apply: (x) => ({ ...x, body: b }) });
  };
  if (B.length > 0) {
    addBody('', `it was signed without the body: sign the ${B.length} body bytes sent, after the path`);
    let parsed: { v: unknown } | undefined;
    if (B.length <= MAX_DIAGNOSED_BODY) {
      try {
        parsed = { v: JSON.parse(B.toString('utf8')) };
      } catch {
        parsed = undefined;
      }
    }
    if (parsed !== undefined) {
      const v = parsed.v;
      const exact = 'sign the exact bytes sent';
      addBody(JSON.stringify(v), `it was signed over the body re-serialized compactly (JSON.stringify), not the ${B.length} bytes sent: ${exact}`);
      addBody(pyDumps(v, true), `it was signed over the body as Python's json.dumps writes it (", " and ": " separators), not as sent: ${exact}`);
      addBody(pyDumps(v, false), `it was signed over the body as Python's json.dumps(ensure_ascii=False) writes it, not as sent: ${exact}`);
      addBody(pyStr(v).replace(/'/g, '"'), `it was signed over str(body) with ' replaced by " (py-clob-client's way; True/False/None stay Python's), not the JSON sent: ${exact}`);
      addBody(pyStr(v), `it was signed over Python's str(body) (single quotes), not the JSON sent: ${exact}`);
      addBody(sortedJson(v), `it was signed over the body with its keys sorted, not as sent: ${exact}`);
      const client = clientOrderJson(v);
      if (client !== undefined) addBody(client, `it was signed over the body with its keys in the order the platform's client writes them, compact; the body sent has them in another order or layout: ${exact}`);
      for (const indent of [2, 4, '\t'] as const) {
        addBody(JSON.stringify(v, null, indent), `it was signed over the body pretty-printed (indented by ${indent === '\t' ? 'tabs' : `${indent} spaces`}), and sent in another layout: ${exact}`);
      }
    }
    addBody('[object Object]', 'it was signed over "[object Object]": an object was appended to the signing string, not its JSON text (sign the body text sent)');
    const text = B.toString('latin1');
    const trimmed = text.replace(/\s+$/, '');
    if (trimmed !== text) bodies.push({ what: 'it was signed over the body without its trailing whitespace, which the body sent ends with: sign the exact bytes sent', apply: (x) => ({ ...x, body: Buffer.from(trimmed, 'latin1') }) });
    else addBody(text + '\n', 'it was signed over the body with a trailing newline, which the body sent does not have: sign the exact bytes sent');
  } else {
    addBody('{}', 'it was signed over the body {}, but the request carries no body: sign nothing after the path');
    addBody('undefined', 'it was signed over "undefined": a missing body was appended to the signing string as text (append nothing)');
    addBody('null', 'it was signed over "null", but the request carries no body: sign nothing after the path');
    addBody('""', 'it was signed over "\\"\\"", but the request carries no body: sign nothing after the path');
  }

  const ts = s.ts;
  const stamps: Alt[] = [
    { what: `it was signed over the timestamp in milliseconds (${ts}000): the header and the signature both take unix seconds`, apply: (x) => ({ ...x, ts: ts + '000' }) },
    ...[Number(ts) - 1, Number(ts) + 1].map((t) => ({ what: `it was signed over timestamp ${t}, the header says ${ts}: sign the timestamp that is sent`, apply: (x: Signing) => ({ ...x, ts: String(t) }) })),
  ];

  const keyAlts: Alt[] = [];
  const seenKeys: Buffer[] = [req.hmacKey];
  const addKey = (k: Buffer, what: string) => {
    if (k.length === 0 || seenKeys.some((x) => x.equals(k))) return;
    seenKeys.push(k);
    keyAlts.push({ what, apply: (x) => ({ ...x, key: k }) });
  };
  addKey(Buffer.from(req.secret), "it was keyed with the secret's text bytes: the key is the secret's base64url decoding");
  addKey(Buffer.from(req.secret, 'hex'), 'it was keyed with the secret read as hex: the secret is base64url, and its decoding is the key');
  if (/[-_]/.test(req.secret)) {
    addKey(Buffer.from(req.secret.replace(/[-_]/g, ''), 'base64'), "it was keyed with the secret decoded as standard base64 that dropped its '-' and '_' (e.g. Python's base64.b64decode): decode it as url-safe base64");
  }
  addKey(Buffer.from(req.passphrase), 'it was keyed with the passphrase instead of the secret');
  addKey(Buffer.from(req.apiKey), 'it was keyed with the API key instead of the secret');
  for (const other of req.otherKeys) addKey(other.hmacKey, other.what);
  return [paths, bodies, methods, stamps, keyAlts];
}

/** The body with its top-level keys in every other order (compact): tried after the single mistakes, before pairs. */
export function keyOrders(body: Buffer): Alt[] {
  if (body.length === 0 || body.length > MAX_DIAGNOSED_BODY) return [];
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    return [];
  }
  if (!isPlainObject(v)) return [];
  const o = v;
  // Each body is made when tried: the tries and bytes bounds stop a large body's orders early.
  return otherOrders(Object.keys(o)).map((keys) => ({
    what: `it was signed over the same body with its keys in another order (${keys.join(', ')}), compact: sign the exact bytes sent`,
    apply: (x: Signing) => ({ ...x, body: JSON.stringify(ordered(o, keys)) }),
  }));
}
