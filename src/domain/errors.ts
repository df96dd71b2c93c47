/**
 * The closed catalogue of every error the service can answer.
 *
 * Each entry has a stable string code (PM_ERR_*), a numeric result code in a range per pipeline stage,
 * the HTTP status, and the message (a template: `{name}` placeholders are filled by `errorBody`).
 *   0xxx edge and request shape   1xxx order validation   2xxx authentication
 *   3xxx risk / balances          4xxx matching           5xxx persistence and engine
 *   6xxx catalog                  7xxx wallet data        8xxx admin
 * Only the numeric code crosses a thread boundary (an Error subclass loses its class and fields through
 * postMessage), so the stages that answer with numbers take them from here: the ledger's LedgerCode
 * (engine/ledger/ledger.ts) and the matching core's MatchCode (engine/book/api.ts, exactly the 4xxx section).
 * `test/domain/errors.test.ts` checks the catalogue is complete, has no duplicates, and that every entry
 * lies in the range of the section it is written in.
 *
 * The body shape depends on the route group, not on the code: wallet data answers `{error}` with
 * `reason: detail` texts, the catalog `{type, error}`, everything else `{error}` (DESIGN section 4).
 */

export interface ErrorSpec {
  readonly code: string;
  readonly result: number;
  readonly status: number;
  readonly message: string;
  /** Catalog-form `type` (only used by catalog routes). */
  readonly type?: string;
  readonly doc: string;
}

/** Keeps each entry's `result` as its literal number, so codes derived from entries stay closed unions. */
function define<const T extends Record<string, Omit<ErrorSpec, 'code'>>>(specs: T): { [K in keyof T]: ErrorSpec & { code: K; result: T[K]['result'] } } {
  const out = {} as { [K in keyof T]: ErrorSpec & { code: K; result: T[K]['result'] } };
  for (const key of Object.keys(specs) as (keyof T)[]) {
    out[key] = Object.freeze({ code: key, ...specs[key] }) as unknown as ErrorSpec & { code: typeof key };
  }
  return Object.freeze(out);
}

export const Errors = define({
  // ---- 0xxx edge -------------------------------------------------------------------------------
  PM_ERR_NOT_FOUND: { result: 1, status: 404, message: 'not found', doc: 'No route matches the method and path.' },
  PM_ERR_METHOD_NOT_ALLOWED: { result: 2, status: 405, message: 'method not allowed', doc: 'The path exists but not for this method.' },
  PM_ERR_INVALID_JSON: { result: 3, status: 400, message: 'invalid JSON body', doc: 'The body is not valid JSON.' },
  PM_ERR_BODY_TOO_LARGE: { result: 4, status: 413, message: 'request body too large', doc: 'The body exceeds http.maxBodyBytes.' },
  PM_ERR_RATE_LIMITED: { result: 5, status: 429, message: 'Too Many Requests', doc: 'A rate-limit window is exhausted; see Retry-After.' },
  PM_ERR_BAD_REQUEST: { result: 6, status: 400, message: '{detail}', doc: 'A parameter or body field failed validation (order-book, market-data and trading routes).' },
  PM_ERR_INTERNAL: { result: 7, status: 500, message: 'internal error', doc: 'An unexpected server fault; never a client mistake.' },
  PM_ERR_UNAVAILABLE: { result: 8, status: 503, message: 'service unavailable', doc: 'The service is starting or shutting down.' },
  PM_ERR_NOT_FOUND_ENTITY: { result: 9, status: 404, message: '{detail}', doc: 'A named resource (token, order) does not exist.' },
  PM_ERR_JSON_TOO_DEEP: { result: 10, status: 400, message: 'invalid JSON body: nested deeper than {max} levels', doc: 'The body nests arrays and objects deeper than any route accepts.' },
  PM_ERR_BAD_FRAMING: { result: 11, status: 400, message: 'conflicting request framing', doc: 'Content-Length given twice with different values, or a transfer coding other than a single `chunked`; the connection is closed.' },
  PM_ERR_NOT_READY: { result: 12, status: 425, message: 'service not ready', doc: 'A maintenance window (the platform\'s weekly engine restart) is under way: order routes refuse until it ends; reads keep working.' },
  PM_ERR_READ_REPLICA: {
    result: 14,
    status: 421,
    message: 'read replica: send this to {sequencer}',
    doc: 'A trading or admin route called on a read replica (ROLE=replica): the sequencer at the URL named (cluster.sequencerUrl) takes it; a replica never forwards.',
  },
  PM_ERR_NO_SEQUENCER: {
    result: 15,
    status: 503,
    message: 'no sequencer answered: retry',
    doc: 'ROLE=gateway: the sequencer did not answer a forwarded request in time (none holds the command subject, a takeover is under way, or it is overloaded); header Retry-After. An order may have been placed: a retry is answered by its order id.',
  },
  PM_ERR_DEPOSED: {
    result: 16,
    status: 503,
    message: 'this node is no longer the sequencer: retry',
    doc: 'A sequencer that lost its lease (cluster.failover) answers writes so until it has become a standby; header Retry-After. Send writes to a gateway, or to the new lease holder a replica names.',
  },
  PM_ERR_REVERTING: {
    result: 17,
    status: 503,
    message: 'reverting to snapshot {name}: retry',
    doc: 'A sandbox revert (POST /admin/snapshots/{name}/revert) is under way: every request that arrives meanwhile is answered so, nothing applied; header Retry-After. The revert\'s own answer comes once the snapshot\'s state serves.',
  },
  PM_ERR_POST_ONLY_MODE: { result: 13, status: 503, message: 'post-only mode: only post-only orders and cancels are allowed', doc: 'The post-only period after a maintenance window: an order without postOnly is refused (body adds `code` and `retry_after_seconds`, header Retry-After).' },

  // ---- 1xxx order validation -------------------------------------------------------------------
  PM_ERR_ORDER_TICK: { result: 1001, status: 400, message: 'order {id} is invalid. Price ({price}) breaks minimum tick size rule: {tick}', doc: 'GTC/GTD price is not a multiple of the tick or lies outside [tick, 1 - tick].' },
  PM_ERR_ORDER_MIN_SIZE: { result: 1002, status: 400, message: 'order {id} is invalid. Size ({size}) lower than the minimum: {min}', doc: 'Order size below the market minimum.' },
  PM_ERR_ORDER_EXPIRATION: { result: 1003, status: 400, message: 'invalid expiration', doc: 'GTD expiration missing or less than 60 s ahead, or expiration on a non-GTD order.' },
  PM_ERR_MARKET_UNKNOWN: { result: 1004, status: 400, message: 'market not found for token {tokenId}', doc: 'The token id names no market.' },
  PM_ERR_MARKET_NOT_READY: { result: 1005, status: 400, message: 'the market is not yet ready to process new orders', doc: 'Market inactive, closed, resolved or not accepting orders.' },
  PM_ERR_ORDER_AMOUNTS: { result: 1006, status: 400, message: 'order {id} is invalid. {detail}', doc: 'makerAmount/takerAmount are zero, too large, or not in whole lots of 0.01 token.' },
  PM_ERR_POST_ONLY_TYPE: { result: 1007, status: 400, message: 'invalid post-only order: post-only is only supported for GTC and GTD orders', doc: 'postOnly combined with FOK or FAK.' },
  PM_ERR_CONDITION_MISMATCH: { result: 1008, status: 400, message: 'order {id} is invalid. conditionId does not match the token market', doc: 'conditionId given but not the market of tokenId.' },
  PM_ERR_TOO_MANY_ORDERS: { result: 1009, status: 400, message: 'Too many orders in payload: {count}, max allowed: {max}', doc: 'POST /orders carried more orders than allowed.' },
  PM_ERR_CLOSED_ONLY: { result: 1010, status: 400, message: "'{address}' address in closed only mode", doc: 'The wallet is in closed-only mode (admin): only cancels and SELL orders, which reduce a position, are accepted.' },
  PM_ERR_HEARTBEAT_ID: { result: 1011, status: 400, message: 'invalid heartbeat id: {id} (send "" to start a new heartbeat)', doc: 'POST /v1/heartbeats named an id that is not the wallet\'s running heartbeat (it lapsed, and the wallet\'s orders were canceled, or it never existed).' },

  // ---- 2xxx authentication ---------------------------------------------------------------------
  PM_ERR_UNAUTHORIZED: { result: 2001, status: 401, message: 'Unauthorized/Invalid api key', doc: 'Missing or invalid L2 headers, stale timestamp, bad HMAC, wrong passphrase or address.' },
  PM_ERR_L1_HEADERS: { result: 2002, status: 401, message: 'Invalid L1 Request headers', doc: 'Missing or invalid L1 (EIP-712 ClobAuth) headers.' },
  PM_ERR_OWNER_MISMATCH: { result: 2003, status: 400, message: 'the order owner has to be the owner of the API KEY', doc: 'Submission owner is not the caller API key.' },
  PM_ERR_SIGNER_MISMATCH: { result: 2004, status: 400, message: 'the order signer address has to be the address of the API KEY', doc: 'order.signer is not the API key address.' },
  PM_ERR_ORDER_SIGNATURE: { result: 2005, status: 400, message: 'invalid order signature', doc: 'The EIP-712 order signature does not recover to order.signer.' },
  PM_ERR_SIGNATURE_TYPE: {
    result: 2006,
    status: 400,
    message: 'signature type {type} is not supported; use 0 (EOA), 1 (POLY_PROXY) or 2 (POLY_GNOSIS_SAFE)',
    doc: 'A signature type other than 0, 1 and 2: POLY_1271 (3) needs the contract wallet\'s code, on a chain.',
  },
  PM_ERR_CREATE_API_KEY: { result: 2007, status: 400, message: 'Could not create api key', doc: 'The nonce is already used for this address.' },
  PM_ERR_DERIVE_API_KEY: { result: 2008, status: 400, message: 'Could not derive api key!', doc: 'No created, unrevoked key for (address, nonce).' },
  PM_ERR_MAKER_SIGNER: { result: 2009, status: 400, message: 'the order maker has to be the signer for signature type 0 (EOA)', doc: 'An EOA order (signatureType 0) whose maker differs from its signer.' },
  PM_ERR_TOO_MANY_KEYS: { result: 2010, status: 400, message: 'too many API keys for this wallet: at most {max}; revoke one first', doc: 'Creating another key would exceed auth.maxKeysPerWallet usable keys.' },
  PM_ERR_MAKER_WALLET: {
    result: 2012,
    status: 400,
    message: "the order maker has to be the signer's {wallet} {expected} for signature type {type}",
    doc: "A proxy (1) or Safe (2) order whose maker is not the wallet the factory derives from its signer (auth.walletFactories, the platform's).",
  },
  PM_ERR_REPLAY_UNKNOWN: { result: 2011, status: 409, message: 'this signed request was received before a restart and its outcome is unknown; read your orders and balances', doc: 'A replay of a signed request whose answer was not recorded before the service restarted.' },

  // ---- 3xxx risk / balances ----------------------------------------------------------------------
  PM_ERR_BALANCE: { result: 3001, status: 400, message: 'not enough balance / allowance', doc: 'Available balance does not cover the order (or operation).' },
  PM_ERR_MARKET_NOT_RESOLVED: { result: 3002, status: 400, message: 'market {conditionId} is not resolved', doc: 'Redeem before resolution.' },
  PM_ERR_MARKET_RESOLVED: { result: 3003, status: 400, message: 'market {conditionId} is already resolved', doc: 'Resolve, split or trade on a resolved market.' },
  PM_ERR_AMOUNT: { result: 3004, status: 400, message: 'invalid amount', doc: 'A deposit, withdrawal, split or merge amount is not a positive 6-decimal number.' },

  // ---- 4xxx matching ---------------------------------------------------------------------------
  PM_ERR_FOK_NOT_FILLED: { result: 4001, status: 400, message: "order couldn't be fully filled. FOK orders are fully filled or killed.", doc: 'A FOK order could not be filled entirely; nothing was filled.' },
  PM_ERR_FAK_NO_MATCH: { result: 4002, status: 400, message: 'no orders found to match with FAK order. FAK orders are partially filled or killed if no match is found.', doc: 'A FAK order found nothing to match.' },
  PM_ERR_POST_ONLY_CROSSES: { result: 4003, status: 400, message: 'invalid post-only order: order crosses book', doc: 'A post-only order would have matched.' },
  PM_ERR_DUPLICATE_ORDER: { result: 4004, status: 400, message: 'order {id} is invalid. Duplicated.', doc: 'The same order id is already in the engine (internal; retries get the original answer).' },
  PM_ERR_ORDER_NOT_FOUND: { result: 4005, status: 404, message: 'order not found', doc: 'No such order, or not the caller\'s (never revealed).' },
  PM_ERR_INVALID_PRICE: { result: 4006, status: 400, message: 'order {id} is invalid. invalid price', doc: 'The matching core refused the price (should be caught earlier).' },
  PM_ERR_INVALID_SIZE: { result: 4007, status: 400, message: 'order {id} is invalid. invalid size', doc: 'The matching core refused the size (should be caught earlier).' },

  // ---- 5xxx persistence and engine ---------------------------------------------------------------
  PM_ERR_JOURNAL: { result: 5001, status: 500, message: 'could not insert order', doc: 'The journal commit failed; nothing was acknowledged.' },
  PM_ERR_ENGINE_DOWN: { result: 5002, status: 503, message: 'Trading is currently disabled', doc: 'The engine is stopping or a shard failed.' },
  PM_ERR_ENGINE_BUSY: { result: 5003, status: 503, message: 'the engine is overloaded, retry later', doc: 'A shard command ring and its bounded overflow queue are full (backpressure); nothing was applied.' },

  // ---- 6xxx catalog ------------------------------------------------------------------------------
  PM_ERR_CATALOG_REQUIRED: { result: 6001, status: 400, type: 'bad request', message: '{param} is required', doc: 'A required catalog parameter is missing (e.g. GET /public-search without q: "q is required").' },
  PM_ERR_CATALOG_PARAM: { result: 6002, status: 400, type: 'bad request', message: '{param} is invalid', doc: 'A catalog query parameter has a bad value.' },
  PM_ERR_CATALOG_SLUG: { result: 6003, status: 404, type: 'not found error', message: 'slug not found', doc: 'Unknown event or market slug.' },

  // ---- 7xxx wallet data ------------------------------------------------------------------------
  PM_ERR_DATA_UNKNOWN_FIELD: { result: 7001, status: 400, message: 'unknown_field: {name}', doc: 'Unrecognised query parameter on a wallet data route.' },
  PM_ERR_DATA_MISSING_FIELD: { result: 7002, status: 400, message: 'missing_field: {name}', doc: 'Required parameter missing on a wallet data route.' },
  PM_ERR_DATA_INVALID_FIELD: { result: 7003, status: 400, message: 'invalid_field: {name}', doc: 'Bad value (type, range, enum, length) on a wallet data route.' },
  PM_ERR_DATA_IP: { result: 7004, status: 401, message: 'unauthorized: ip_not_allowlisted', doc: 'Caller address not on dataApi.ipAllowlist.' },
  PM_ERR_DATA_DB: { result: 7005, status: 500, message: 'internal_error: unexpected database failure', doc: 'A storage read failed on a wallet data route.' },

  // ---- 8xxx admin ------------------------------------------------------------------------------
  PM_ERR_ADMIN_UNAUTHORIZED: { result: 8001, status: 401, message: 'unauthorized', doc: 'Missing or wrong admin bearer token.' },
  PM_ERR_ADMIN_INVALID: { result: 8002, status: 400, message: 'invalid request', doc: 'An admin payload failed validation; `errors` lists every problem.' },
  PM_ERR_ADMIN_MARKET_UNKNOWN: { result: 8003, status: 404, message: 'market {conditionId} not found', doc: 'An admin market route names a condition id the catalog does not hold.' },
  // The sandbox's test controls (edge/sandbox/test-clock.ts, counterparties.ts, scenario.ts): 81xx.
  PM_ERR_CLOCK_BACKWARDS: {
    result: 8101,
    status: 400,
    message: 'the test clock only moves forward: {to} is before its time {now}',
    doc: 'POST /admin/clock/advance to a time before the exchange\'s: time never goes back (the journal\'s times would).',
  },
  // Named snapshots and revert (src/node/revert.ts, journal/checkpoints/named-snapshots.ts): 811x.
  PM_ERR_SNAPSHOT_UNKNOWN: { result: 8111, status: 404, message: 'snapshot {name} not found', doc: 'A snapshot route names a snapshot that is not listed (never taken, deleted, or its taking did not finish).' },
  PM_ERR_SNAPSHOT_EXISTS: { result: 8112, status: 409, message: 'snapshot {name} already exists', doc: 'POST /admin/snapshots with a name taken: delete it first, or choose another.' },
  PM_ERR_SNAPSHOT_LIMIT: { result: 8113, status: 409, message: 'at most {max} snapshots are kept (sandbox.snapshots.max): delete one first', doc: 'POST /admin/snapshots when sandbox.snapshots.max are listed.' },
  PM_ERR_REVERT_FAILED: {
    result: 8114,
    status: 500,
    message: 'revert to snapshot {name} failed: {detail}',
    doc: 'The service did not start on the snapshot\'s store (the reason says why); it started again on the state it had before the revert, and sockets were closed as for any revert.',
  },
});

export type ErrorCode = keyof typeof Errors;

const byResult = new Map<number, ErrorSpec>(Object.values(Errors).map((e) => [e.result, e]));

/** The spec of a numeric result code (as received from another thread). */
export function errorByResult(result: number): ErrorSpec {
  return byResult.get(result) ?? Errors.PM_ERR_INTERNAL;
}

/** Fills `{name}` placeholders; unknown placeholders are left as they are. */
export function formatMessage(template: string, vars?: Record<string, string | number>): string {
  if (!vars) return template;
  return template.replace(/\{(\w+)\}/g, (m, k: string) => (k in vars ? String(vars[k]) : m));
}

/**
 * An error carried through async code on the main thread. Handlers throw it; the edge turns it into a
 * response. Branded with a symbol (not instanceof) so a copy from another realm is still recognised.
 */
export const API_ERROR = Symbol.for('pm.api-error');

export class ApiError extends Error {
  readonly [API_ERROR] = true;
  readonly spec: ErrorSpec;
  readonly vars: Record<string, string | number> | undefined;
  /** Extra body fields (e.g. the admin `errors` list). */
  readonly extra: Record<string, unknown> | undefined;
  /**
   * Why, in words, for the edge's X-Refusal-Reason header (edge/refusals/reason.ts); never in the body. Set by
   * the diagnosis after the refusal was decided; `class` is one of that module's REFUSAL_CLASSES.
   */
  reason: { readonly class: string; readonly text: string } | undefined = undefined;
  constructor(spec: ErrorSpec, vars?: Record<string, string | number>, extra?: Record<string, unknown>) {
    // An ApiError is an answer, not a fault: where it was made tells a log reader nothing, and capturing the
    // stack was most of what making one cost, paid on every refusal (each 429 of a client past its caps).
    const message = formatMessage(spec.message, vars);
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.spec = spec;
    this.vars = vars;
    this.extra = extra;
  }
}

export function apiError(code: ErrorCode, vars?: Record<string, string | number>, extra?: Record<string, unknown>): ApiError {
  return new ApiError(Errors[code], vars, extra);
}

/** An error carried back from another thread or stage as its numeric result code (engine results). */
export function resultError(result: number, vars?: Record<string, string | number>): ApiError {
  return new ApiError(errorByResult(result), vars);
}

export function isApiError(e: unknown): e is ApiError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[API_ERROR] === true;
}
