/**
 * The HTTP front end: creates the uWS app, mounts every route of the table, listens, and closes the
 * listen socket on shutdown. Each request runs the same pipeline:
 *
 *   copy + capped body (http.ts) -> auth (l2: HMAC over the raw bytes before the body is parsed;
 *   admin: bearer token; l1: EIP-712) -> rate limit (by API key once the HMAC passed, by client address
 *   otherwise) -> path params, query and JSON body validated (validate.ts) -> handler -> JSON answer.
 *
 * Every failure becomes a catalogue error in its group's form (error-reply.ts). A handler that throws
 * something unexpected answers 500 and is logged; it never takes the process down.
 */
import { timingSafeEqual } from 'node:crypto';
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { apiError, type ApiError } from '../domain/errors.ts';
import type { Logger } from '../runtime/log.ts';
import type { Clock } from '../runtime/clock.ts';
import { errorReply, problemError, toApiError } from './error-reply.ts';
import { InFlight, releasePending, serve, statusLine, writeAnswer, type AnswerSink, type Incoming, type Outgoing } from './http.ts';
import type { Metrics, RouteMetrics } from './metrics.ts';
import { clientAddress } from '../domain/ip.ts';
import { RateLimiter, type Verdict } from './rate-limit.ts';
import { bucketsFor } from './rate-limit-buckets.ts';
import { isReply, type AnyRoute, type Caller, type HttpMethod, type Reply, type RouteRequest } from './route.ts';
import { loadUws, type Uws, type UwsBuild } from './uws.ts';
import { compileRoute, paramNamesOf, type CompiledRoute } from './validate.ts';

/** Verifies signed headers. Implemented by the trading/auth module; absent = every signed route answers 401. */
export interface Authenticator {
  /** L2: API key + HMAC over `timestamp + METHOD + path + rawBody`. Undefined when anything fails. */
  l2(method: string, path: string, headers: Readonly<Record<string, string>>, rawBody: Buffer | undefined): { apiKey: string; address: string } | undefined;
  /** L1: EIP-712 ClobAuth signature. Undefined when anything fails. */
  l1(headers: Readonly<Record<string, string>>): Promise<{ address: string; nonce: string } | undefined>;
}

export interface EdgeOptions {
  routes: readonly AnyRoute[];
  host: string;
  port: number;
  maxBodyBytes: number;
  /** Bound of a request head; uWS answers 431 past it (it reads the bound once per process: uws.ts). */
  maxHeaderBytes: number;
  trustedProxies: readonly string[];
  adminToken: string;
  limiter: RateLimiter;
  metrics: Metrics;
  log: Logger;
  clock: Clock;
  auth?: Authenticator;
  /** Mounts the WebSocket routes on the same app before the catch-all route (edge/ws/channels.ts). */
  sockets?: (app: TemplatedApp) => void;
  /** Serve on this uWS module instead of the one uws.ts chooses (bench/edge/http.bench.ts compares builds). */
  uws?: { uws: Uws; build: UwsBuild };
}

export interface EdgeServer {
  readonly port: number;
  /** Which uWS build serves, and why (uws.ts). */
  readonly build: UwsBuild;
  readonly inFlight: InFlight;
  /** Stops accepting connections; in-flight requests still get their answers. */
  stopListening(): void;
  /** stopListening, then waits up to graceMs for in-flight requests. Returns whether all finished. */
  close(graceMs: number): Promise<boolean>;
}

interface Mounted {
  route: AnyRoute;
  compiled: CompiledRoute;
  buckets: readonly string[];
  label: string;
  metrics: RouteMetrics;
}

/**
 * Client address and rate-limit key per (peer, X-Forwarded-For): the same few peers send most requests,
 * and normalizing an address costs more than a Map read. Bounded: cleared when it reaches its cap.
 */
class CallerCache {
  private readonly map = new Map<string, { ip: string; key: string }>();
  constructor(private readonly trusted: readonly string[], private readonly cap = 10_000) {}
  get(peer: string, xff: string | undefined): { ip: string; key: string } {
    const id = xff === undefined ? peer : `${peer}|${xff}`;
    let hit = this.map.get(id);
    if (!hit) {
      const ip = clientAddress(peer, xff, this.trusted);
      hit = { ip, key: `ip:${ip}` };
      if (this.map.size >= this.cap) this.map.clear();
      this.map.set(id, hit);
    }
    return hit;
  }
}

const JSON_NOT_FOUND = JSON.stringify({ error: 'not found' });

/** Requests no route matched count against the order-book API's general cap (rate-limit-buckets.ts). */
const UNMATCHED_BUCKETS = bucketsFor('GET', '(unmatched)');
const UNMATCHED_ROUTE = '(unmatched)';

/**
 * The method as a metrics label: one of a closed set, else OTHER. uWS accepts any token as a method
 * (tens of kilobytes long), and every distinct label value is a new series kept for the life of the
 * process: 22,000 made-up methods took the process to 3.5 GB and the next scrape out of heap.
 */
const METHOD_LABELS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'CONNECT', 'TRACE']);
export function methodLabel(method: string): string {
  return METHOD_LABELS.has(method) ? method : 'OTHER';
}

function serialize(r: Reply): Outgoing {
  return { status: r.status, headers: r.headers, body: r.raw ?? (r.body === undefined ? 'null' : JSON.stringify(r.body)) };
}

function rateLimitHeaders(v: Verdict): Record<string, string> {
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

/** Compiled path patterns for telling 404 from 405. */
function patternRegex(pattern: string): RegExp {
  const body = pattern
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${body}/?$`);
}

export function startServer(opts: EdgeOptions): Promise<EdgeServer> {
  const { limiter, metrics, log, clock } = opts;
  const inFlight = new InFlight();
  const { uws: uWS, build } = opts.uws ?? loadUws(opts.maxHeaderBytes);
  const app = uWS.App();
  const mounted: Mounted[] = [];

  const tooLarge = (): Outgoing => serialize(errorReply(apiError('PM_ERR_BODY_TOO_LARGE')));

  const finish = (m: Mounted, req: Incoming, out: Outgoing): Outgoing => {
    m.metrics.observe(out.status, (Date.now() - req.receivedAt) / 1000);
    return out;
  };
  const callers = new CallerCache(opts.trustedProxies);

  const fail = (m: Mounted, req: Incoming, e: ApiError, headers?: Record<string, string>): Outgoing => finish(m, req, serialize(errorReply(e, headers)));

  const limited = (m: Mounted, req: Incoming, v: Verdict): Outgoing => {
    metrics.rateLimited(v.bucket);
    return fail(m, req, apiError('PM_ERR_RATE_LIMITED'), rateLimitHeaders(v));
  };

  const onFault = (m: Mounted) => (err: unknown, req: Incoming): Outgoing => {
    log.error({ err, route: m.label }, 'request processing failed');
    return fail(m, req, apiError('PM_ERR_INTERNAL'));
  };

  /** Runs validation and the handler once auth and rate limits passed. */
  const dispatch = (m: Mounted, req: Incoming, caller: Caller, json: unknown): Outgoing | Promise<Outgoing> => {
    const { route, compiled } = m;
    const refused = route.guard?.(caller);
    if (refused) return fail(m, req, refused);
    const params = compiled.parseParams(req.params);
    if (!params.ok) return fail(m, req, problemError(route.group, params.problem, route.fieldMessages));
    const query = compiled.parseQuery(req.query);
    if (!query.ok) return fail(m, req, problemError(route.group, query.problem, route.fieldMessages));
    let body: unknown = undefined;
    if (compiled.hasBody) {
      const checked = compiled.checkBody(json);
      if (!checked.ok) return fail(m, req, problemError(route.group, checked.problem, route.fieldMessages));
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
      return handlerFailed(m, req, e);
    }
    if (result instanceof Promise) {
      return result.then(
        (v: unknown) => settle(m, req, v),
        (e: unknown) => handlerFailed(m, req, e),
      );
    }
    return settle(m, req, result);
  };

  const settle = (m: Mounted, req: Incoming, v: unknown): Outgoing =>
    finish(m, req, isReply(v) ? serialize(v) : { status: 200, body: v === undefined ? 'null' : JSON.stringify(v) });

  const handlerFailed = (m: Mounted, req: Incoming, e: unknown): Outgoing => {
    const { error, unexpected } = toApiError(e);
    if (unexpected) log.error({ err: e, route: m.label }, 'handler failed');
    return fail(m, req, error);
  };

  const processorFor = (m: Mounted) => (req: Incoming): Outgoing | Promise<Outgoing> => {
    const { route } = m;
    const who0 = callers.get(req.peer, req.headers['x-forwarded-for']);
    const ip = who0.ip;
    const caller: Caller = { ip };
    const auth = route.auth ?? 'none';

    if (auth === 'admin') {
      // Without a configured token the admin API does not exist.
      if (!opts.adminToken) return finish(m, req, { status: 404, body: JSON_NOT_FOUND });
      const given = req.headers['authorization'] ?? '';
      if (!given.startsWith('Bearer ') || !sameSecret(given.slice(7), opts.adminToken)) {
        const v = limiter.take(who0.key, m.buckets, 1, clock.now());
        return v.ok ? fail(m, req, apiError('PM_ERR_ADMIN_UNAUTHORIZED')) : limited(m, req, v);
      }
    }

    // Signed routes: the HMAC is checked over the raw bytes before anything parses them, and failures
    // are charged to the client address so random keys cannot dodge the caps.
    let limitKey = who0.key;
    if (auth === 'l2') {
      const who = opts.auth?.l2(req.method, req.path, req.headers, req.body);
      if (!who) {
        const v = limiter.take(limitKey, m.buckets, 1, clock.now());
        return v.ok ? fail(m, req, apiError('PM_ERR_UNAUTHORIZED')) : limited(m, req, v);
      }
      caller.apiKey = who.apiKey;
      caller.address = who.address;
      limitKey = `key:${who.apiKey}`;
    }

    let json: unknown = undefined;
    let jsonError = false;
    if (m.compiled.hasBody && req.body !== undefined && req.body.length > 0) {
      try {
        json = JSON.parse(req.body.toString('utf8'));
      } catch {
        jsonError = true;
      }
    }
    let cost = 1;
    if (route.limitCost && !jsonError) cost = Math.max(1, route.limitCost(json));
    const v = limiter.take(limitKey, m.buckets, cost, clock.now());
    if (!v.ok) return limited(m, req, v);
    if (jsonError) return fail(m, req, apiError('PM_ERR_INVALID_JSON'));

    if (auth === 'l1') {
      const l1 = opts.auth?.l1(req.headers);
      if (!l1) return fail(m, req, apiError('PM_ERR_L1_HEADERS'));
      return l1.then((who) => {
        if (!who) return fail(m, req, apiError('PM_ERR_L1_HEADERS'));
        caller.address = who.address;
        caller.nonce = who.nonce;
        return dispatch(m, req, caller, json);
      });
    }
    return dispatch(m, req, caller, json);
  };

  const seen = new Set<string>();
  for (const route of opts.routes) {
    const key = `${route.method} ${route.path}`;
    if (seen.has(key)) throw new Error(`route registered twice: ${key}`);
    seen.add(key);
    const compiled = compileRoute(route);
    const m: Mounted = {
      route,
      compiled,
      buckets: route.limits ?? bucketsFor(route.method, route.path),
      label: route.path,
      metrics: metrics.route(route.method, route.path),
    };
    mounted.push(m);
    const auth = route.auth ?? 'none';
    const headerNames = [
      ...(route.headers ?? []),
      ...(route.method !== 'GET' ? ['content-length'] : []),
      ...(opts.trustedProxies.length > 0 ? ['x-forwarded-for'] : []),
      ...(auth === 'admin' ? ['authorization'] : []),
    ];
    const serveOpts = {
      method: route.method,
      allHeaders: auth === 'l1' || auth === 'l2',
      headerNames,
      paramCount: paramNamesOf(route.path).length,
      readBody: route.method !== 'GET',
      maxBodyBytes: opts.maxBodyBytes,
      tooLarge,
      onFault: onFault(m),
      tracker: inFlight,
    };
    const processor = processorFor(m);
    const handler = (res: HttpResponse, req: HttpRequest) => serve(res, req, serveOpts, processor);
    switch (route.method) {
      case 'GET': app.get(route.path, handler); break;
      case 'POST': app.post(route.path, handler); break;
      case 'PUT': app.put(route.path, handler); break;
      case 'DELETE': app.del(route.path, handler); break;
    }
  }

  opts.sockets?.(app);

  const patterns = mounted.map((m) => ({ re: patternRegex(m.route.path), method: m.route.method }));
  app.any('/*', (res, req) => {
    // Copied at once: the request dies when this handler returns. The method is the request's own
    // spelling (uWS accepts any token), so it never becomes a metrics label as it is.
    const method = req.getCaseSensitiveMethod();
    const path = req.getUrl();
    const who = callers.get(Buffer.from(res.getRemoteAddressAsText()).toString(), opts.trustedProxies.length > 0 ? req.getHeader('x-forwarded-for') || undefined : undefined);
    const sink: AnswerSink & { gone: boolean } = { pendingSize: 0, gone: false, written: () => undefined };
    res.onAborted(() => {
      sink.gone = true;
      releasePending(sink);
    });
    // Unmatched requests are charged like any other (the order-book API's general cap), so a flood of
    // made-up paths or methods is limited per client like everything else.
    const v = limiter.take(who.key, UNMATCHED_BUCKETS, 1, clock.now());
    let out: Outgoing;
    if (!v.ok) {
      metrics.rateLimited(v.bucket);
      out = serialize(errorReply(apiError('PM_ERR_RATE_LIMITED'), rateLimitHeaders(v)));
    } else {
      const allowed = patterns.filter((p) => p.re.test(path)).map((p) => p.method);
      out = allowed.length > 0 && !allowed.includes(method as HttpMethod)
        ? { ...serialize(errorReply(apiError('PM_ERR_METHOD_NOT_ALLOWED'))), headers: { Allow: [...new Set(allowed)].join(', ') } }
        : serialize(errorReply(apiError('PM_ERR_NOT_FOUND')));
    }
    metrics.observe(methodLabel(method), UNMATCHED_ROUTE, out.status, 0);
    // A HEAD answer carries no content (RFC 9110 9.3.2): bytes after its header block would be read by a
    // keep-alive client as the start of the next response.
    if (method === 'HEAD') {
      res.cork(() => {
        res.writeStatus(statusLine(out.status)).writeHeader('content-type', 'application/json');
        if (out.headers) for (const k in out.headers) res.writeHeader(k, out.headers[k]);
        res.endWithoutBody();
      });
      return;
    }
    // The body of an unmatched request is never read: close so it is not parsed as the next request.
    writeAnswer(res, { ...out, close: method !== 'GET' }, sink);
  });

  return new Promise((resolve, reject) => {
    app.listen(opts.host, opts.port, (socket) => {
      if (!socket) {
        reject(new Error(`cannot listen on ${opts.host}:${opts.port}`));
        return;
      }
      let listening: us_listen_socket | undefined = socket;
      const stopListening = () => {
        if (listening) {
          uWS.us_listen_socket_close(listening);
          listening = undefined;
        }
      };
      resolve({
        port: uWS.us_socket_local_port(socket),
        build,
        inFlight,
        stopListening,
        async close(graceMs: number) {
          stopListening();
          const drained = await inFlight.drained(graceMs);
          app.close();
          return drained;
        },
      });
    });
  });
}
