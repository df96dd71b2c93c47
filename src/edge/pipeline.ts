/**
 * What every request goes through once http.ts has copied it off the socket, as named stages. Each stage
 * either answers (a catalogue error in the route group's form, error-reply.ts) or hands on:
 *
 *   gate       admin routes: the bearer token (404 when no token is configured)
 *   sign       l2 routes: API key + HMAC over the raw bytes, before anything parses them; a failure is
 *              charged to the client address, so random keys cannot dodge the caps
 *   admit      rate limits (rate-limit.ts): the API key once the HMAC passed, else the client address; the
 *              trading windows also per wallet (all its keys together). A route that charges per item of
 *              its body (POST /orders) is first asked whether one unit fits, without charging, so a caller
 *              already over a cap is refused before its body is parsed
 *   parse      the JSON body, nesting bounded (json-body.ts), then the per-item charge
 *   l1         l1 routes: the EIP-712 signature (recovered on the signature pool)
 *   replay     signed routes that change something: an identical signed request within its window gets
 *              the first one's answer (replays.ts)
 *   dispatch   guard, path parameters, query and body validated (validate.ts), the handler, its answer
 *
 * A handler that throws something unexpected answers 500 and is logged; it never takes the process down.
 */
import { timingSafeEqual } from 'node:crypto';
import { apiError, type ApiError } from '../domain/errors.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Logger } from '../runtime/log.ts';
import { errorReply, problemError, toApiError } from './error-reply.ts';
import type { Incoming, Outgoing } from './http.ts';
import { MAX_JSON_DEPTH, parseJsonBody } from './json-body.ts';
import type { Metrics, RouteMetrics } from './metrics.ts';
import type { Charge, RateLimiter, Verdict } from './rate-limit.ts';
import { WALLET_BUCKETS } from './rate-limit-buckets.ts';
import type { ReplayGuard, ReplayKind } from './replays.ts';
import { isReply, type AnyRoute, type Caller, type HttpMethod, type Reply, type RouteRequest } from './route.ts';
import type { CompiledRoute } from './validate.ts';

/** Verifies signed headers. Implemented by auth.ts; absent = every signed route answers 401. */
export interface Authenticator {
  /**
   * L2: API key + HMAC over `timestamp + METHOD + path + rawBody`. Undefined when anything fails.
   * `replayKey` names the signed content (key and digest), valid until `expiresAt` (unix seconds).
   */
  l2(method: string, path: string, headers: Readonly<Record<string, string>>, rawBody: Buffer | undefined): SignedCaller | undefined;
  /** L1: EIP-712 ClobAuth signature. Undefined when anything fails. */
  l1(headers: Readonly<Record<string, string>>): Promise<(SignedCaller & { nonce: string }) | undefined>;
}

export interface SignedCaller {
  address: string;
  apiKey?: string;
  replayKey: string;
  expiresAt: number;
}

export interface PipelineDeps {
  adminToken: string;
  limiter: RateLimiter;
  metrics: Metrics;
  log: Logger;
  clock: Clock;
  auth?: Authenticator;
  replays?: ReplayGuard;
}

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
  return { status: r.status, headers: r.headers, body: r.raw ?? (r.body === undefined ? 'null' : JSON.stringify(r.body)) };
}

export function rateLimitHeaders(v: Verdict): Record<string, string> {
  return {
    'Retry-After': String(v.retryAfterSeconds),
    'RateLimit-Limit': String(v.limit),
    'RateLimit-Remaining': String(v.remaining),
    'RateLimit-Reset': String(v.resetSeconds),
  };
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
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

const JSON_NOT_FOUND = JSON.stringify({ error: 'not found' });

/** The request processor of one mounted route: the stages of the header, in order. */
export function processorFor(m: Mounted, d: PipelineDeps, who: (req: Incoming) => { ip: string; key: string }): (req: Incoming) => Outgoing | Promise<Outgoing> {
  const { limiter, metrics, log, clock } = d;
  const { route, compiled } = m;
  const auth = route.auth ?? 'none';

  const finish = (req: Incoming, out: Outgoing): Outgoing => {
    m.metrics.observe(out.status, (Date.now() - req.receivedAt) / 1000);
    return out;
  };
  const fail = (req: Incoming, e: ApiError, headers?: Record<string, string>): Outgoing => finish(req, serialize(errorReply(e, headers)));
  const limited = (req: Incoming, v: Verdict): Outgoing => {
    metrics.rateLimited(v.bucket);
    return fail(req, apiError('PM_ERR_RATE_LIMITED'), rateLimitHeaders(v));
  };
  const handlerFailed = (req: Incoming, e: unknown): Outgoing => {
    const { error, unexpected } = toApiError(e);
    if (unexpected) log.error({ err: e, route: m.label }, 'handler failed');
    return fail(req, error);
  };
  const settle = (req: Incoming, v: unknown): Outgoing => finish(req, isReply(v) ? serialize(v) : { status: 200, body: v === undefined ? 'null' : JSON.stringify(v) });

  /** Guard, validation and the handler, once every earlier stage passed. */
  const dispatch = (req: Incoming, caller: Caller, json: unknown): Outgoing | Promise<Outgoing> => {
    const refused = route.guard?.(caller);
    if (refused) return fail(req, refused);
    const params = compiled.parseParams(req.params);
    if (!params.ok) return fail(req, problemError(route.group, params.problem, route.fieldMessages));
    const query = compiled.parseQuery(req.query);
    if (!query.ok) return fail(req, problemError(route.group, query.problem, route.fieldMessages));
    let body: unknown = undefined;
    if (compiled.hasBody) {
      const checked = compiled.checkBody(json);
      if (!checked.ok) {
        const p = checked.problem;
        if (p.kind === 'too-many' && route.tooMany) return fail(req, route.tooMany(p.count!, p.max!));
        return fail(req, problemError(route.group, p, route.fieldMessages));
      }
      body = checked.value;
    }
    const rr: RouteRequest = {
      method: req.method as HttpMethod,
      path: req.path,
      query: query.value,
      body,
      params: params.value,
      headers: req.headers,
      rawBody: req.body,
      caller,
      receivedAt: req.receivedAt,
    };
    let result: unknown;
    try {
      result = route.handler(rr);
    } catch (e) {
      return handlerFailed(req, e);
    }
    if (result instanceof Promise) {
      return result.then(
        (v: unknown) => settle(req, v),
        (e: unknown) => handlerFailed(req, e),
      );
    }
    return settle(req, result);
  };

  /** The replay stage around dispatch: see replays.ts. */
  const guarded = (req: Incoming, caller: Caller, json: unknown, signed: SignedCaller | undefined): Outgoing | Promise<Outgoing> => {
    if (m.replay === 'none' || signed === undefined || d.replays === undefined) return dispatch(req, caller, json);
    const key = auth === 'l1' ? `l1|${req.method}|${req.path}|${signed.replayKey}` : `l2|${req.method}|${req.path}|${signed.replayKey}`;
    const run = (claim: Awaited<ReturnType<ReplayGuard['claim']>>): Outgoing | Promise<Outgoing> => {
      if (claim.kind === 'refused') return fail(req, claim.error);
      if (claim.kind === 'replay') {
        const answer = claim.answer;
        return answer instanceof Promise ? answer.then((out) => finish(req, out)) : finish(req, answer);
      }
      const out = dispatch(req, caller, json);
      return out instanceof Promise ? out.then(claim.settle) : claim.settle(out);
    };
    const claim = d.replays.claim(key, signed.expiresAt, m.replay, auth === 'l1' ? caller.ip : undefined);
    return claim instanceof Promise ? claim.then(run) : run(claim);
  };

  return (req) => {
    const client = who(req);
    const caller: Caller = { ip: client.ip };

    // gate
    if (auth === 'admin') {
      // Without a configured token the admin API does not exist.
      if (!d.adminToken) return finish(req, { status: 404, body: JSON_NOT_FOUND });
      const given = req.headers['authorization'] ?? '';
      if (!given.startsWith('Bearer ') || !sameSecret(given.slice(7), d.adminToken)) {
        const v = limiter.take(client.key, m.buckets, 1, clock.now());
        return v.ok ? fail(req, apiError('PM_ERR_ADMIN_UNAUTHORIZED')) : limited(req, v);
      }
    }

    // sign
    let charges: Charge[] = [{ caller: client.key, buckets: m.buckets }];
    let signed: SignedCaller | undefined;
    if (auth === 'l2') {
      signed = d.auth?.l2(req.method, req.path, req.headers, req.body);
      if (!signed) {
        const v = limiter.take(client.key, m.buckets, 1, clock.now());
        return v.ok ? fail(req, apiError('PM_ERR_UNAUTHORIZED')) : limited(req, v);
      }
      caller.apiKey = signed.apiKey;
      caller.address = signed.address;
      charges = [{ caller: `key:${signed.apiKey}`, buckets: m.buckets }];
      if (m.walletBuckets.length > 0) charges.push({ caller: `wallet:${signed.address}`, buckets: m.walletBuckets });
    }

    // admit (before the body is parsed)
    const perItem = route.limitCost !== undefined && compiled.hasBody;
    const first = perItem ? limiter.admits(charges, 1, clock.now()) : limiter.takeAll(charges, 1, clock.now());
    if (!first.ok) return limited(req, first);

    // parse
    let json: unknown = undefined;
    if (compiled.hasBody) {
      const parsed = parseJsonBody(req.body);
      if (!parsed.ok) {
        if (perItem) limiter.takeAll(charges, 1, clock.now());
        return fail(req, parsed.reason === 'too-deep' ? apiError('PM_ERR_JSON_TOO_DEEP', { max: MAX_JSON_DEPTH }) : apiError('PM_ERR_INVALID_JSON'));
      }
      json = parsed.value;
    }
    if (perItem) {
      const v = limiter.takeAll(charges, Math.max(1, route.limitCost!(json)), clock.now());
      if (!v.ok) return limited(req, v);
    }

    // l1
    if (auth === 'l1') {
      const l1 = d.auth?.l1(req.headers);
      if (!l1) return fail(req, apiError('PM_ERR_L1_HEADERS'));
      return l1.then((ok) => {
        if (!ok) return fail(req, apiError('PM_ERR_L1_HEADERS'));
        caller.address = ok.address;
        caller.nonce = ok.nonce;
        return guarded(req, caller, json, ok);
      });
    }
    return guarded(req, caller, json, signed);
  };
}
