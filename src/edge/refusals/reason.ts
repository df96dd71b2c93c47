/**
 * Room edge/refusals/: why a request was refused, in one header, and the diagnoses that say it (beside
 * auth/, whose checks they replay). Imports auth/, schemas/ and pipeline/route.ts (types); never routes/.
 *
 * Refusals that explain themselves (docs/decisions/authentication.md, "Refusals that explain themselves"): the
 * contract's body stays exactly the platform's (`Unauthorized/Invalid api key`, `invalid order signature`, ...), and
 * one more response header says what was wrong and what was expected, in one line:
 *
 *   X-Refusal-Reason: L2 timestamp 1764300000 is 45 s behind this server (allowed 30 s)
 *
 * This module owns that header: its name, the closed set of reason classes (the `/metrics` label
 * `refusals_total{class}`), and what a header value may hold. The diagnoses live beside it (auth.ts for the
 * L2 and builder credentials and the explainer that holds them all, l1-auth.ts for L1, user-auth.ts for the
 * user channel, credential-checks.ts for what all of them check of a key; order.ts for orders); the pipeline adds the header and keeps
 * the last refusals per wallet (log.ts, `GET /refusals`).
 *
 * Rules every diagnosis keeps:
 *  - it runs after the decision, only on the refusal path, and never changes it (an accepted request never
 *    pays for one); what it may cost is budgeted (budget.ts);
 *  - to a caller that has not proved it holds the key's secret, a reason never tells a wrong address or
 *    passphrase from a wrong HMAC, nor which wallet owns a key (class `auth_credentials`); the full reason
 *    goes to the key's wallet's log (`owner`);
 *  - a reason never holds a secret, a passphrase, an HMAC or expected signature, or anything derived from
 *    them that would help forge one; it may name public things (addresses, domains, paths, clocks);
 *  - `auth.explainRefusals: false` sends no header at all (the platform's silence);
 *  - `auth.reasonInBody` (on in the clob-v2 and platform profiles) also appends the reason to the body's
 *    error text (withReasonText), keeping the status and the body's shape: the only change a client sees.
 */

/** The response header that carries a refusal's reason. */
export const REFUSAL_HEADER = 'X-Refusal-Reason';

/**
 * What kind of mistake a refusal was: a closed set (a metrics label), coarse on purpose; the text says the
 * rest.
 */
export const REFUSAL_CLASSES = [
  /** An authentication header missing or malformed (L1, L2, builder, user channel). */
  'auth_header',
  /** The timestamp outside the allowed clock skew (or in milliseconds). */
  'auth_timestamp',
  /** The API key unknown, revoked, not yet committed, or of a kind the route does not take. */
  'auth_key',
  /** The address header does not name the key's wallet. */
  'auth_address',
  /** The passphrase is not the key's. */
  'auth_passphrase',
  /**
   * The address, the passphrase or the HMAC does not check, and the request does not prove it holds the
   * key's secret: which one is not said (docs/decisions/authentication.md, "What a reason may tell a caller without the
   * secret"); the key's wallet reads which one on GET /refusals.
   */
  'auth_credentials',
  /** The L2 or builder HMAC does not match what arrived. */
  'auth_hmac',
  /** The L1 (ClobAuth) signature does not recover to the address. */
  'auth_l1_signature',
  /** The order's `owner` is not the signing API key. */
  'order_owner',
  /** signer / maker not the API key's address. */
  'order_signer',
  /** A signature type other than EOA. */
  'order_signature_type',
  /** The order's EIP-712 signature does not recover to its signer (domain, struct, neg-risk flag, ...). */
  'order_signature',
  /** Unknown token, or conditionId of another market. */
  'order_market',
  /** expiration wrong for the order type, or too close. */
  'order_expiration',
  /** Amounts not positive whole units. */
  'order_amounts',
  /** Price off the tick. */
  'order_tick',
  /** Size under the market's minimum. */
  'order_size',
  /** Any other order rule (post-only type, market state, balance, closed-only, ...). */
  'order_rule',
] as const;

export type RefusalClass = (typeof REFUSAL_CLASSES)[number];

/** Why something was refused, for the header (never for the body). */
export interface Refusal {
  readonly class: RefusalClass;
  readonly text: string;
  /**
   * What the key's wallet may read of this refusal on GET /refusals when the caller is told less (`text`
   * says what a caller that has not proved the key's secret may know): kept in the log instead of `text`,
   * never sent.
   */
  readonly owner?: { readonly class: RefusalClass; readonly text: string };
}

/** Longest header value sent; a longer reason is cut and ends with an ellipsis. */
export const MAX_REASON_CHARS = 600;

/**
 * A reason as a header value: one line of printable ASCII (HTTP header values carry no line breaks, and
 * uWS writes them as given), at most MAX_REASON_CHARS.
 */
export function headerValue(text: string): string {
  // eslint-disable-next-line no-control-regex
  let t = text.replace(/[\r\n\t]+/g, ' ').replace(/[^\x20-\x7e]/g, '?');
  if (t.length > MAX_REASON_CHARS) t = t.slice(0, MAX_REASON_CHARS - 3) + '...';
  return t;
}

/**
 * An error text with its reason appended, for `auth.reasonInBody` (the clob-v2 and platform profiles): SDKs
 * that keep only the body (the platform's official client among them) show it. The platform's text comes
 * first and unchanged, so a client that compares the start of the text (or looks for a word in it) still
 * recognises the error: `not enough balance / allowance (reason: a SELL reserves ...)`. `reason` is a header
 * value (headerValue): one line, bounded.
 */
export function withReasonText(error: string, reason: string): string {
  return `${error} (reason: ${reason})`;
}

/** The reasons of several refused items of one request (POST /orders), one header line: `order 2: ...; order 5: ...`. */
export function joinReasons(items: ReadonlyArray<{ index: number; refusal: Refusal }>): Refusal | undefined {
  if (items.length === 0) return undefined;
  return { class: items[0]!.refusal.class, text: items.map((i) => `order ${i.index}: ${i.refusal.text}`).join('; ') };
}

/** A value the caller sent, quoted and cut: only ever for public fields (addresses, timestamps, nonces, paths). */
export function shown(v: string, max = 48): string {
  return JSON.stringify(v.length > max ? v.slice(0, max) + '...' : v);
}
