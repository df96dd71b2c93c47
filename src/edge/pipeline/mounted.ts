/**
 * A route as the server mounts it (its compiled schemas, rate-limit buckets, replay kind and metrics) and
 * how an answer leaves: a Reply serialized to what http.ts sends, the rate-limit headers of a refusal. Shared
 * by the stages (pipeline.ts), the server's table and unmatched-route answers (edge/server.ts) and a
 * gateway's forwarding (cluster/forward.ts).
 */
import type { Outgoing } from '../http/answer.ts';
import type { RouteMetrics } from './metrics.ts';
import type { Verdict } from '../limits/rate-limit.ts';
import { WALLET_BUCKETS } from '../limits/rate-limit-buckets.ts';
import type { ReplayKind } from './replays.ts';
import { type AnyRoute, type Reply } from './route.ts';
import type { CompiledRoute } from './validate.ts';

/** A route as mounted: its compiled schemas, rate-limit buckets and metrics. */
export interface Mounted {
  route: AnyRoute;
  compiled: CompiledRoute;
  buckets: readonly string[];
  /** The buckets also charged to the caller's wallet on signed routes (the trading windows). */
  walletBuckets: readonly string[];
  replay: ReplayKind;
  label: string;
  metrics: RouteMetrics;
}

export function serialize(r: Reply): Outgoing {
  if (r.noBody === true) return { status: r.status, headers: r.headers, body: '', noBody: true };
  const out: Outgoing = { status: r.status, headers: r.headers, body: r.raw ?? (r.body === undefined ? 'null' : JSON.stringify(r.body)) };
  if (r.refusal !== undefined) out.refusal = r.refusal;
  return out;
}

export function rateLimitHeaders(v: Verdict): Record<string, string> {
  return {
    'Retry-After': String(v.retryAfterSeconds),
    'RateLimit-Limit': String(v.limit),
    'RateLimit-Remaining': String(v.remaining),
    'RateLimit-Reset': String(v.resetSeconds),
  };
}

/** What the caller is replayed by: signed routes that change something, unless the route says otherwise. */
export function replayKindOf(route: AnyRoute): ReplayKind {
  if (route.replay !== undefined) return route.replay;
  if (route.auth === 'l1') return 'memory';
  if (route.auth === 'l2' && route.method !== 'GET') return 'memory';
  return 'none';
}

export function walletBucketsOf(buckets: readonly string[]): readonly string[] {
  return buckets.filter((b) => WALLET_BUCKETS.includes(b));
}
