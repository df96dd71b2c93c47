/**
 * What a route is. Every endpoint is one `RouteDef` in the table of `routes.ts`: method, path, group,
 * TypeBox schemas (the source of the handler's types), auth requirement, rate-limit buckets and handler.
 * Adding an endpoint is adding one `routeSpec({...})` (and its handler) to its group's module.
 *
 * Handlers get a plain `RouteRequest` (already copied off the socket, validated and typed) and return
 * either a JSON-serializable value (200) or a `Reply` built with `reply()`. They never see uWS.
 *
 * A route module writes its handlers as module-level functions of `(deps, req)`, where `deps` is the
 * module's own narrow interface (what it uses of the app context, nothing more), and its table as
 * `RouteSpec`s naming them; `bindRoutes` gives the table its dependencies once. A handler is then callable
 * with a hand-built deps object, without the app.
 */
import type { Static, TSchema, TObject } from '@sinclair/typebox';
import type { ApiError } from '../../domain/errors.ts';
import type { ReplayKind } from './replays.ts';
import type { Refusal } from '../refusals/reason.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Route groups decide the error body form (DESIGN section 4):
 *   data     wallet data: `{error: "unknown_field: x"}`, unknown query parameters are errors
 *   catalog  `{type, error}`
 *   clob     order book, market data: `{error}`
 *   trading  authenticated order routes: `{error}`
 *   admin    `{error, errors?}`
 *   ops      health, time, metrics, openapi: `{error}`
 */
export type RouteGroup = 'data' | 'catalog' | 'clob' | 'trading' | 'admin' | 'ops';

/** none; l1 = EIP-712 ClobAuth headers; l2 = API key + HMAC headers; admin = bearer ADMIN_TOKEN. */
export type AuthKind = 'none' | 'l1' | 'l2' | 'admin';

/**
 * The kinds of API key an l2 route may be signed with (edge/auth/auth.ts issues all three):
 *   trading   the L2 key of POST /auth/api-key: every route, the only kind that places, cancels or manages keys
 *   readonly  POST /auth/readonly-api-key: signs like a trading key, accepted only where a route lists it (reads)
 *   builder   POST /auth/builder-api-key: signs the builder headers (`*_BUILDER_API_KEY`, ...), never the L2 ones
 */
export type KeyKind = 'trading' | 'readonly' | 'builder';

/** What an l2 route accepts unless it says otherwise. */
export const TRADING_KEYS: readonly KeyKind[] = Object.freeze(['trading']);
/** Reads a read-only key may make: the wallet's orders, trades, balances, notifications, rewards. */
export const READ_KEYS: readonly KeyKind[] = Object.freeze(['trading', 'readonly']);

export interface Caller {
  /** Client address (X-Forwarded-For only from trusted proxies). */
  ip: string;
  /** Set on l2 routes once the HMAC passed. */
  apiKey?: string;
  /** Wallet address (lowercase) proven by l1 or owning the l2 key. */
  address?: string;
  /** l2: the kind of key the request was signed with. */
  keyKind?: KeyKind;
  /** l2 signed with a builder key: its builder code (bytes32 hex, lowercase). */
  builderCode?: string;
  /** l1 only: the nonce the caller signed. */
  nonce?: string;
}

export interface RouteRequest<Q = unknown, B = unknown, P = unknown> {
  method: HttpMethod;
  /** Path without the query string, as received. */
  path: string;
  query: Q;
  body: B;
  params: P;
  /**
   * Lowercase header names. Only what the pipeline needs is copied off the socket: every header on
   * signed (l1/l2) routes, `authorization` on admin routes, `content-length` on body routes,
   * `x-forwarded-for` when proxies are trusted, plus the route's own `headers` list.
   */
  headers: Readonly<Record<string, string>>;
  /** The raw body bytes exactly as received (HMAC is computed over these). */
  rawBody: Buffer | undefined;
  caller: Caller;
  /** Date.now() when the request arrived. */
  receivedAt: number;
  /**
   * On a sequencer, a request a gateway forwarded: the gateway's signature verifications (order-check.ts
   * OrderHint per submission). Only the command subscription sets it (edge/cluster/forward.ts), never an HTTP request.
   */
  hints?: unknown;
}

const REPLY = Symbol.for('pm.reply');

export interface Reply {
  readonly [REPLY]: true;
  status: number;
  headers?: Record<string, string>;
  /** A value to JSON-serialize, or `raw` text already serialized. */
  body?: unknown;
  raw?: string;
  /** Status and headers only: a 304 carries no content, not even a Content-Length (RFC 9110 8.6). */
  noBody?: boolean;
  /**
   * Why something was refused, never in the body: the pipeline turns it into the X-Refusal-Reason header and
   * the caller's refusal log (refusals/reason.ts), or drops it under `auth.explainRefusals: false`.
   */
  refusal?: Refusal;
}

export function reply(r: { status?: number; headers?: Record<string, string>; body?: unknown; raw?: string; noBody?: boolean; refusal?: Refusal }): Reply {
  return { [REPLY]: true, status: r.status ?? 200, headers: r.headers, body: r.body, raw: r.raw, noBody: r.noBody, refusal: r.refusal };
}

export function isReply(v: unknown): v is Reply {
  return typeof v === 'object' && v !== null && (v as Record<symbol, unknown>)[REPLY] === true;
}

type S<T> = T extends TSchema ? Static<T> : undefined;

export interface RouteDef<Q extends TObject | undefined = any, B extends TSchema | undefined = any, P extends TObject | undefined = any> {
  method: HttpMethod;
  /** uWS pattern: `/events/slug/:slug`. */
  path: string;
  group: RouteGroup;
  summary: string;
  description?: string;
  tags?: string[];
  query?: Q;
  body?: B;
  params?: P;
  /** Response schema of the 200 answer (documentation and tests). */
  response?: TSchema;
  auth?: AuthKind;
  /**
   * l2 routes: the key kinds that authenticate it (default TRADING_KEYS). A request signed with a valid key
   * of another kind is refused like a bad signature (401), and charged to the client address.
   */
  keys?: readonly KeyKind[];
  /**
   * l2 routes: a request that carries no credential headers of the route's kinds (`keys`: the L2 API key
   * header for trading and read-only keys, the builder API key header for builder keys) is served as a public
   * one (charged to the client address, `caller.address` unset); one that carries them must verify. Headers
   * of another kind are ignored: they never turn a public read into a refusal.
   */
  authOptional?: boolean;
  /** Extra request headers (lowercase) the handler reads. */
  headers?: readonly string[];
  /** Rate-limit buckets; defaults to the route's entry in ROUTE_BUCKETS. */
  limits?: readonly string[];
  /** Units charged to the buckets (default 1); e.g. POST /orders charges one per order. Sees the parsed JSON body (unvalidated). */
  limitCost?: (body: unknown) => number;
  /** Clob/trading groups: the error text for a bad value of a named field (e.g. token_id -> "Invalid token id"). */
  fieldMessages?: Record<string, string>;
  /**
   * How a replay of this route's signed request is recognised (edge/pipeline/replays.ts). Default: `memory` for l1
   * routes and l2 routes that are not GET, `none` otherwise; `durable` where money moves; `none` where the
   * route is idempotent on its own (order placement, by order id).
   */
  replay?: ReplayKind;
  /** The error for a body array longer than its schema's maxItems (default: the group's invalid-body error). */
  tooMany?: (count: number, max: number) => ApiError;
  /**
   * Why a body failed the route's schema, beyond what the error says (refusals/reason.ts): called on that
   * refusal only, and only when refusals explain themselves; undefined adds nothing.
   */
  explainBody?: (body: unknown) => Refusal | undefined;
  /** A smaller body cap than http.maxBodyBytes for a route whose body is bounded (413 past it, before any parse). */
  maxBodyBytes?: number;
  /** Refuses a caller before its input is validated (e.g. the wallet data IP allowlist); undefined admits. */
  guard?: (caller: Caller) => ApiError | undefined;
  handler: (req: RouteRequest<S<Q>, S<B>, S<P>>) => unknown;
  /**
   * ROLE=gateway: what the gateway verifies of a request it forwards to the sequencer (edge/cluster/forward.ts), its
   * schema already checked; the sequencer gets it as `RouteRequest.hints`. A route without it is forwarded
   * as it arrived, and the sequencer checks all of it.
   */
  gatewayHints?: (req: RouteRequest<S<Q>, S<B>, S<P>>) => Promise<unknown>;
  /**
   * A read whose answer may hold rows of history (trades, fills, closed orders): a replica or gateway whose
   * store has a history floor (started from a state snapshot, journal/checkpoints/state-snapshot.ts) sends it
   * to the sequencer (PipelineDeps.history) instead of answering from what it holds.
   */
  history?: boolean;
  /**
   * A `history` route's request that such a node answers from its own store after all: what the answer is
   * made of is there whole (e.g. the order's row, which carries its trade ids). Called once the request has
   * passed every local stage; undefined, or false: sent to the sequencer.
   */
  heldHere?: (req: RouteRequest<S<Q>, S<B>, S<P>>) => boolean;
}

export type AnyRoute = RouteDef<any, any, any>;

/** The request a handler of these schemas receives: `RequestOf<typeof Query, typeof Body, typeof Params>`. */
export type RequestOf<Q extends TSchema | undefined = undefined, B extends TSchema | undefined = undefined, P extends TSchema | undefined = undefined> = RouteRequest<S<Q>, S<B>, S<P>>;

/** A route of a module's table: its handler takes the module's dependencies (`D`) explicitly, before the request. */
export interface RouteSpec<D, Q extends TObject | undefined = any, B extends TSchema | undefined = any, P extends TObject | undefined = any>
  extends Omit<RouteDef<Q, B, P>, 'handler' | 'guard' | 'gatewayHints' | 'heldHere'> {
  /** As RouteDef's guard, given the module's dependencies (e.g. a configured allowlist). */
  guard?: (deps: D, caller: Caller) => ApiError | undefined;
  handler: (deps: D, req: RouteRequest<S<Q>, S<B>, S<P>>) => unknown;
  /** As RouteDef's gatewayHints, given the module's dependencies. */
  gatewayHints?: (deps: D, req: RouteRequest<S<Q>, S<B>, S<P>>) => Promise<unknown>;
  /** As RouteDef's heldHere, given the module's dependencies. */
  heldHere?: (deps: D, req: RouteRequest<S<Q>, S<B>, S<P>>) => boolean;
}

/** As `route`, for a table entry whose handler takes dependencies; `D` is inferred from the handler. */
export function routeSpec<D, Q extends TObject | undefined = undefined, B extends TSchema | undefined = undefined, P extends TObject | undefined = undefined>(
  def: RouteSpec<D, Q, B, P>,
): RouteSpec<D> {
  return def as RouteSpec<D>;
}

/** The routes of a module's table, each handler given `deps` (the table's key order is kept). */
export function bindRoutes<D>(deps: D, specs: readonly RouteSpec<D>[]): AnyRoute[] {
  return specs.map((s) => {
    const { handler, guard, gatewayHints, heldHere } = s;
    const bound = { ...s, handler: (req: RouteRequest) => handler(deps, req) } as AnyRoute;
    if (guard !== undefined) bound.guard = (caller) => guard(deps, caller);
    if (gatewayHints !== undefined) bound.gatewayHints = (req: RouteRequest) => gatewayHints(deps, req);
    if (heldHere !== undefined) bound.heldHere = (req: RouteRequest) => heldHere(deps, req);
    return bound;
  });
}

/** Identity function that makes TypeScript infer the handler's request type from the schemas. */
export function route<Q extends TObject | undefined = undefined, B extends TSchema | undefined = undefined, P extends TObject | undefined = undefined>(
  def: RouteDef<Q, B, P>,
): AnyRoute {
  return def as AnyRoute;
}
