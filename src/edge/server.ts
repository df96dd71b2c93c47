/**
 * edge/'s root composes its rooms: this file (the uWS app and its listen socket), routes.ts (the route
 * table) and context.ts (what handlers may use). The rooms, each with its header: http/, pipeline/, limits/,
 * auth/ (refusals/ beside it), schemas/, routes/, ws/, sandbox/, cluster/, trading/.
 *
 * The HTTP front end: creates the uWS app, mounts every route of the table (each request then runs the
 * stages of pipeline.ts), answers what no route matches, listens, and closes the listen socket on shutdown.
 * A sandbox revert (src/node/revert.ts) keeps the listener and its connections while the service behind it
 * restarts: `hold` answers every new request with one reply meanwhile, `rebind` then serves the same table
 * over the new dependencies (each route's handler reads a slot that the rebind refills, since uWS mounts a
 * route once).
 */
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocket, WebSocketBehavior, us_listen_socket } from 'uWebSockets.js';
import { apiError } from '../domain/errors.ts';
import { clientAddress } from '../domain/ip.ts';
import { CREDENTIAL_HEADER_NAMES } from './auth/auth.ts';
import { errorReply } from './pipeline/error-reply.ts';
import { InFlight, serve, type Incoming, type Processor, type ServeOptions } from './http/http.ts';
import { type Outgoing } from './http/answer.ts';
import { MAX_JSON_DEPTH } from './http/json-body.ts';
import { processorFor } from './pipeline/pipeline.ts';
import { rateLimitHeaders, replayKindOf, serialize, walletBucketsOf, type Mounted } from './pipeline/mounted.ts';
import { type PipelineDeps } from './pipeline/ports.ts';
import { bucketsFor } from './limits/rate-limit-buckets.ts';
import type { AnyRoute, HttpMethod } from './pipeline/route.ts';
import { loadUws, type Uws, type UwsBuild } from './http/uws.ts';
import { compileRoute, paramNamesOf } from './pipeline/validate.ts';

export type { Authenticator } from './pipeline/ports.ts';

/** The pipeline's dependencies (pipeline.ts: admin token, limiter, metrics, log, clock, auth, replays, refusals) and the listener's. */
export interface EdgeOptions extends PipelineDeps {
  routes: readonly AnyRoute[];
  host: string;
  port: number;
  maxBodyBytes: number;
  /** Bound of a request head; uWS answers 431 past it (it reads the bound once per process: uws.ts). */
  maxHeaderBytes: number;
  trustedProxies: readonly string[];
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
  /**
   * Runs a request that did not come off a socket (a gateway's forward, edge/cluster/forward.ts) through its route's
   * processor, as uWS would route it; counted in flight like any other. No route: 404. `only: 'history'`: a
   * follower's read of history (replication/commands.ts, `reads`), and any route but those marked `history`
   * is answered 404 as well.
   */
  dispatch(req: Incoming, only?: 'history'): Promise<Outgoing>;
  /**
   * Serves the same route table from now on with new dependencies (a sandbox revert reopens the service
   * behind the listener it keeps: app.ts `listener`): every route's processor and the WebSocket routes'
   * behaviour are rebuilt over `opts`; the listen socket, its connections and the requests in flight stay.
   * The table must name the same routes (uWS cannot take one back). Ends a hold.
   */
  rebind(opts: EdgeOptions): void;
  /** Answers every request that arrives from now on with `answer` (a revert under way), until rebind or release. */
  hold(answer: Outgoing): void;
  release(): void;
}


/**
 * Client address and rate-limit key per (peer, X-Forwarded-For): the same few peers send most requests,
 * and normalizing an address costs more than a Map read. Bounded in entries (cleared when it reaches its
 * cap) and in bytes: X-Forwarded-For is read only when a proxy is trusted (signed routes copy every header,
 * so it arrives whether or not it is believed), and a value longer than MAX_CACHED_XFF is resolved without
 * being kept, so the cache holds at most cap x (peer + MAX_CACHED_XFF) characters, not cap x 16 KiB heads.
 */
const MAX_CACHED_XFF = 256;

export class CallerCache {
  private readonly map = new Map<string, { ip: string; key: string }>();
  constructor(private readonly trusted: readonly string[], private readonly cap = 10_000) {}
  get(peer: string, xff: string | undefined): { ip: string; key: string } {
    if (this.trusted.length === 0) xff = undefined;
    if (xff !== undefined && xff.length > MAX_CACHED_XFF) {
      const ip = clientAddress(peer, xff, this.trusted);
      return { ip, key: `ip:${ip}` };
    }
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

  /** Characters held in keys (tests). */
  get chars(): number {
    let n = 0;
    for (const k of this.map.keys()) n += k.length;
    return n;
  }
}


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




/** Compiled path patterns for telling 404 from 405. */
function patternRegex(pattern: string): RegExp {
  const body = pattern
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${body}/?$`);
}

/** One mounted route as `dispatch` matches it: the pattern's segments (`:x` matches any one segment). */
interface TableEntry {
  method: string;
  segments: readonly string[];
  processor: (req: Incoming) => Outgoing | Promise<Outgoing>;
  history: boolean;
}

/** The mounted routes for `dispatch`: those without parameters by `METHOD path`, the others in mount order. */
interface RouteTable {
  exact: Map<string, Pick<TableEntry, 'processor' | 'history'>>;
  patterns: TableEntry[];
}

/**
 * The processor and path parameters of a method and path, as uWS routes them; undefined when none matches.
 * A path without parameters is one Map look-up (the order routes a gateway forwards are); the rest are
 * matched segment by segment.
 */
function lookup(table: RouteTable, method: string, path: string): { processor: TableEntry['processor']; history: boolean; params: string[] } | undefined {
  const exact = table.exact.get(`${method} ${path}`);
  if (exact !== undefined) return { ...exact, params: [] };
  const segs = path.split('/');
  for (const e of table.patterns) {
    if (e.method !== method || e.segments.length !== segs.length) continue;
    const params: string[] = [];
    let ok = true;
    for (let i = 0; i < segs.length && ok; i++) {
      const p = e.segments[i]!;
      if (p.startsWith(':')) {
        if (segs[i] === '') ok = false;
        else params.push(segs[i]!);
      } else ok = p === segs[i];
    }
    if (ok) return { processor: e.processor, history: e.history, params };
  }
  return undefined;
}

/** What one route's handler serves with: replaced whole by a rebind. */
interface Slot {
  serveOpts: ServeOptions;
  processor: Processor;
}

/** What every handler of one server shares. `opts`, the slots and the table change with a rebind. */
interface Shared {
  opts: EdgeOptions;
  slots: Map<string, Slot>;
  table: RouteTable;
  /** While set (a revert under way), every request is answered by it. */
  held: Processor | undefined;
  inFlight: InFlight;
  who: (req: Incoming) => { ip: string; key: string };
  tooLarge: () => Outgoing;
  badFraming: () => Outgoing;
}

export function startServer(opts: EdgeOptions): Promise<EdgeServer> {
  const { uws: uWS, build } = opts.uws ?? loadUws(opts.maxHeaderBytes);
  const app = uWS.App();
  const callers = new CallerCache(opts.trustedProxies);
  const shared: Shared = {
    opts,
    slots: new Map(),
    table: { exact: new Map(), patterns: [] },
    held: undefined,
    inFlight: new InFlight(),
    who: (req) => callers.get(req.peer, req.headers['x-forwarded-for']),
    tooLarge: () => serialize(errorReply(apiError('PM_ERR_BODY_TOO_LARGE'))),
    badFraming: () => serialize(errorReply(apiError('PM_ERR_BAD_FRAMING'))),
  };
  let mounted = bindRoutes(shared);
  for (const route of opts.routes) {
    const slot = shared.slots.get(`${route.method} ${route.path}`)!;
    const handler = (res: HttpResponse, req: HttpRequest) => serve(res, req, slot.serveOpts, shared.held ?? slot.processor);
    switch (route.method) {
      case 'GET': app.get(route.path, handler); break;
      case 'POST': app.post(route.path, handler); break;
      case 'PUT': app.put(route.path, handler); break;
      case 'DELETE': app.del(route.path, handler); break;
    }
  }
  const sockets = swappableSockets(app);
  opts.sockets?.(sockets.app);
  // Last: uWS matches routes in the order they were added, and this one matches everything.
  let unmatched = unmatchedHandler(mounted, shared);
  app.any('/*', (res, req) => unmatched(res, req));
  const dispatch = async (req: Incoming, only?: 'history'): Promise<Outgoing> => {
    const hit = lookup(shared.table, req.method, req.path);
    if (hit === undefined || (only === 'history' && !hit.history)) return serialize(errorReply(apiError('PM_ERR_NOT_FOUND')));
    req.params = hit.params;
    shared.inFlight.enter();
    try {
      return await (shared.held ?? hit.processor)(req);
    } finally {
      shared.inFlight.leave();
    }
  };
  const rebind = (next: EdgeOptions) => {
    const keys = (rs: readonly AnyRoute[]) => rs.map((r) => `${r.method} ${r.path}`).sort().join('\n');
    if (keys(next.routes) !== keys(shared.opts.routes)) throw new Error('rebind: the route table differs from the one mounted');
    shared.opts = next;
    shared.table = { exact: new Map(), patterns: [] };
    mounted = bindRoutes(shared);
    unmatched = unmatchedHandler(mounted, shared);
    next.sockets?.(sockets.app);
    shared.held = undefined;
  };
  const hold = (answer: Outgoing) => (shared.held = () => answer);
  const release = () => (shared.held = undefined);
  return listen(uWS, app, build, shared, { dispatch, rebind, hold, release });
}

/**
 * The WebSocket routes behind a rebind: uWS mounts a path's behaviour once, so the one mounted delegates to
 * the newest behaviour given for the path, and each socket keeps the behaviour it opened under (its
 * messages and its close go to the generation that knows it, even after a rebind).
 */
function swappableSockets(app: TemplatedApp): { app: TemplatedApp } {
  type Behavior = WebSocketBehavior<unknown>;
  const current = new Map<string, Behavior>();
  const owner = new WeakMap<WebSocket<unknown>, Behavior>();
  const facade = {
    ws(path: string, behavior: Behavior) {
      const first = !current.has(path);
      current.set(path, behavior);
      if (!first) return facade;
      const now = () => current.get(path)!;
      app.ws(path, {
        ...behavior,
        upgrade: (res, req, context) => now().upgrade?.(res, req, context),
        open: (ws) => {
          owner.set(ws, now());
          return now().open?.(ws);
        },
        message: (ws, message, isBinary) => owner.get(ws)?.message?.(ws, message, isBinary),
        dropped: (ws, message, isBinary) => owner.get(ws)?.dropped?.(ws, message, isBinary),
        drain: (ws) => owner.get(ws)?.drain?.(ws),
        ping: (ws, message) => owner.get(ws)?.ping?.(ws, message),
        pong: (ws, message) => owner.get(ws)?.pong?.(ws, message),
        close: (ws, code, message) => {
          const b = owner.get(ws);
          owner.delete(ws);
          return b?.close?.(ws, code, message);
        },
      });
      return facade;
    },
    publish: (topic: string, message: string, isBinary?: boolean, compress?: boolean) => app.publish(topic, message, isBinary, compress),
    numSubscribers: (topic: string) => app.numSubscribers(topic),
  };
  return { app: facade as unknown as TemplatedApp };
}

/**
 * Every route of the table on its own processor (pipeline.ts), in its slot: the first call creates the
 * slots the uWS handlers read, a rebind fills them anew. Also rebuilds the table `dispatch` reads.
 */
function bindRoutes(shared: Shared): Mounted[] {
  const { opts, inFlight, who, table } = shared;
  const { limiter, metrics, log, clock } = opts;
  const mounted: Mounted[] = [];
  const seen = new Set<string>();
  for (const route of opts.routes) {
    const key = `${route.method} ${route.path}`;
    if (seen.has(key)) throw new Error(`route registered twice: ${key}`);
    seen.add(key);
    const buckets = route.limits ?? bucketsFor(route.method, route.path);
    const m: Mounted = {
      route,
      compiled: compileRoute(route),
      buckets,
      walletBuckets: route.auth === 'l2' ? walletBucketsOf(buckets) : [],
      replay: replayKindOf(route),
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
    const serveOpts: ServeOptions = {
      method: route.method,
      allHeaders: auth === 'l1' || auth === 'l2',
      headerNames,
      // What a signed route, its authentication and its refusals read by name; the others are only named.
      ...(auth === 'l1' || auth === 'l2' ? { keptHeaders: new Set([...headerNames, ...CREDENTIAL_HEADER_NAMES, 'host', 'content-type']) } : {}),
      paramCount: paramNamesOf(route.path).length,
      readBody: route.method !== 'GET',
      maxBodyBytes: Math.min(route.maxBodyBytes ?? opts.maxBodyBytes, opts.maxBodyBytes),
      ...(m.compiled.hasBody ? { maxJsonDepth: MAX_JSON_DEPTH } : {}),
      tooLarge: shared.tooLarge,
      badFraming: shared.badFraming,
      onFault: (err: unknown): Outgoing => {
        log.error({ err, route: m.label }, 'request processing failed');
        const out = serialize(errorReply(apiError('PM_ERR_INTERNAL')));
        m.metrics.observe(out.status, 0);
        return out;
      },
      tracker: inFlight,
    };
    const processor = processorFor(
      m,
      { adminToken: opts.adminToken, limiter, metrics, log, clock, auth: opts.auth, replays: opts.replays, replica: opts.replica, gateway: opts.gateway, history: opts.history, historyHeld: opts.historyHeld, deposed: opts.deposed, journalSeq: opts.journalSeq, writeSeq: opts.writeSeq, refusals: opts.refusals, bodies: opts.bodies, strikes: opts.strikes },
      who,
    );
    const history = route.history === true;
    if (route.path.includes('/:')) table.patterns.push({ method: route.method, segments: route.path.split('/'), processor, history });
    else table.exact.set(key, { processor, history });
    const slot = shared.slots.get(key);
    if (slot === undefined) shared.slots.set(key, { serveOpts, processor });
    else {
      slot.serveOpts = serveOpts;
      slot.processor = processor;
    }
  }
  return mounted;
}

/**
 * What no route matches goes through the same lifecycle (its body, if any, is read and dropped within the
 * cap, so it is never parsed as a next request) and is charged like any other request (the order-book
 * API's general cap), so a flood of made-up paths or methods is limited per client like everything else.
 */
function unmatchedHandler(mounted: readonly Mounted[], shared: Shared): (res: HttpResponse, req: HttpRequest) => void {
  const { opts, inFlight, who } = shared;
  const { limiter, metrics, log, clock } = opts;
  const patterns = mounted.map((m) => ({ re: patternRegex(m.route.path), method: m.route.method }));
  const unmatched: Processor = (req: Incoming): Outgoing => {
    const method = req.method;
    const v = limiter.take(who(req).key, UNMATCHED_BUCKETS, 1, clock.now());
    let out: Outgoing;
    if (!v.ok) {
      metrics.rateLimited(v.bucket);
      out = serialize(errorReply(apiError('PM_ERR_RATE_LIMITED'), rateLimitHeaders(v)));
    } else {
      const allowed = patterns.filter((p) => p.re.test(req.path)).map((p) => p.method);
      out = allowed.length > 0 && !allowed.includes(method as HttpMethod)
        ? { ...serialize(errorReply(apiError('PM_ERR_METHOD_NOT_ALLOWED'))), headers: { Allow: [...new Set(allowed)].join(', ') } }
        : serialize(errorReply(apiError('PM_ERR_NOT_FOUND')));
    }
    // The method is the request's own spelling (uWS accepts any token): never a metrics label as it is.
    metrics.observe(methodLabel(method), UNMATCHED_ROUTE, out.status, (Date.now() - req.receivedAt) / 1000);
    // A HEAD answer carries no content (RFC 9110 9.3.2).
    return method === 'HEAD' ? { ...out, noBody: true } : out;
  };
  // A body no route reads is still read (to drop it): its bytes are charged to the client address like any
  // other body's (rate-limit-bytes.ts), before they are read.
  const bodies = opts.bodies;
  if (bodies !== undefined) {
    unmatched.beforeBody = (req, bodyBytes) => {
      if (bodyBytes <= 0) return undefined;
      const v = bodies.take(who(req).key, undefined, bodyBytes, clock.now());
      if (v.ok) return undefined;
      metrics.rateLimited(v.bucket);
      metrics.observe(methodLabel(req.method), UNMATCHED_ROUTE, 429, (Date.now() - req.receivedAt) / 1000);
      return serialize(errorReply(apiError('PM_ERR_RATE_LIMITED'), rateLimitHeaders(v)));
    };
  }
  const serveOpts: ServeOptions = {
    method: '',
    allHeaders: false,
    headerNames: ['content-length', ...(opts.trustedProxies.length > 0 ? ['x-forwarded-for'] : [])],
    paramCount: 0,
    readBody: true,
    discardBody: true,
    maxBodyBytes: opts.maxBodyBytes,
    tooLarge: shared.tooLarge,
    badFraming: shared.badFraming,
    onFault: (err: unknown): Outgoing => {
      log.error({ err }, 'unmatched request failed');
      return serialize(errorReply(apiError('PM_ERR_INTERNAL')));
    },
    tracker: inFlight,
  };
  return (res, req) => serve(res, req, serveOpts, shared.held ?? unmatched);
}

function listen(uWS: Uws, app: TemplatedApp, build: UwsBuild, shared: Shared, calls: Pick<EdgeServer, 'dispatch' | 'rebind' | 'hold' | 'release'>): Promise<EdgeServer> {
  const { opts, inFlight } = shared;
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
        ...calls,
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
