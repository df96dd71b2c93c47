/**
 * How a refused answer carries its reason (refusals/reason.ts) once the stages have decided it: the
 * X-Refusal-Reason header, the error text under `auth.reasonInBody`, the wallet's log and the count. And the
 * one reason the pipeline writes itself, a benched key's. Runs on the refusal path only; never changes a
 * status or the contract's body.
 */
import { headerNamesOf, type Incoming } from '../http/http.ts';
import type { Outgoing } from '../http/answer.ts';
import type { HmacStrikes } from '../limits/hmac-strikes.ts';
import { headerValue, REFUSAL_HEADER, withReasonText, type Refusal } from '../refusals/reason.ts';
import type { RefusalDeps } from './ports.ts';

/**
 * An error body (`{"error": "..."}`, its other fields and their order kept) with the reason appended to its
 * text; any other body as it was (POST /orders appends to each element's errorMsg itself).
 */
function errorWithReason(body: string, reason: string): string {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    return body;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v) || typeof (v as { error?: unknown }).error !== 'string') return body;
  const o = v as { error: string };
  o.error = withReasonText(o.error, reason);
  return JSON.stringify(o);
}

/**
 * Why a benched key's request was refused on its headers (hmac-strikes.ts). Says no more than that its
 * requests kept failing their credential checks: which check is the key's wallet's to read (GET /refusals).
 */
export function benchedRefusal(apiKey: string, ms: number, s: HmacStrikes): Refusal {
  return {
    class: 'auth_credentials',
    text: `API key ${apiKey.slice(0, 36).toLowerCase()} is refused on its headers, before its body, for ${Math.ceil(ms / 1000)} s more: ${s.strikes} of its requests failed their credential checks within ${s.windowMs / 1000} s (the key's wallet reads why on GET /refusals)`,
  };
}

/**
 * A refusal's reason as the X-Refusal-Reason header, kept for the wallet the credentials name and counted;
 * dropped when refusals do not explain themselves (`d` absent). `refusal` never leaves as part of the answer.
 * `peer`: the client address, asked only when a wallet keeps the reason.
 */
export function explainRefusal(d: RefusalDeps | undefined, req: Incoming, out: Outgoing, peer: () => string): void {
  const r = out.refusal!;
  out.refusal = undefined;
  if (d === undefined) return;
  const text = headerValue(r.text);
  out.headers = { ...out.headers, [REFUSAL_HEADER]: text };
  if (d.inBody === true) out.body = errorWithReason(out.body, text);
  d.count(r.class);
  const wallet = d.auth?.walletOf(req.headers);
  // The key's wallet reads the full reason where the caller was told less (refusals/reason.ts `owner`).
  const kept = r.owner ?? r;
  if (wallet !== undefined) d.log.record(wallet, { at: Date.now(), method: req.method, path: req.path, headers: headerNamesOf(req), class: kept.class, reason: kept === r ? text : headerValue(kept.text), peer: peer() });
}
