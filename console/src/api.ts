/**
 * The console's only way to the service: the public HTTP API, as any client calls it. An answer that is
 * not 2xx becomes an ApiError carrying the API's own words (`error`, and an admin route's `errors` list),
 * which the pages show as they are. Signed (L2) and admin requests get their headers from signing.ts and
 * session.ts; the page never builds an authorization of its own.
 */
import type { ExchangeInfo } from '../../src/edge/schemas/orders.ts';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** The API's `error` text, or the status line when the answer was not the API's JSON. */
    readonly text: string,
    /** An admin route's list of problems (`errors: [{path, message}]`). */
    readonly errors: { path: string; message: string }[] = [],
  ) {
    super(text);
    this.name = 'ApiError';
  }
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

async function errorOf(r: Response): Promise<ApiError> {
  const text = await r.text();
  try {
    const j = JSON.parse(text) as { error?: unknown; errors?: unknown };
    if (typeof j.error === 'string') return new ApiError(r.status, j.error, Array.isArray(j.errors) ? (j.errors as ApiError['errors']) : []);
  } catch {
    // Not the API's JSON (a proxy's page, say): the status line is all there is to show.
  }
  return new ApiError(r.status, `${r.status} ${r.statusText || 'error'}`.trim());
}

/** Calls `path` (with its query) and answers the parsed JSON; throws ApiError for an answer that is not 2xx. */
export async function call<T>(path: string, o: CallOptions = {}): Promise<T> {
  const text = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
  let r: Response;
  try {
    r = await fetch(path, {
      method: o.method ?? 'GET',
      headers: { ...(text !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers },
      body: text,
      signal: o.signal,
      cache: 'no-store',
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, 'the service cannot be reached');
  }
  if (!r.ok) throw await errorOf(r);
  return (await r.json()) as T;
}

/** `?a=1&b=x` of the defined values, '' when none. */
export function query(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

let info: Promise<ExchangeInfo> | undefined;
/** GET /exchange-info, once per page: the domains orders and API keys are signed under. */
export function exchangeInfo(): Promise<ExchangeInfo> {
  info ??= call<ExchangeInfo>('/exchange-info').catch((e: unknown) => {
    info = undefined;
    throw e;
  });
  return info;
}

let skew: Promise<number> | undefined;
/**
 * The service's clock minus this browser's, in ms, from GET /time: signed requests carry the service's
 * time, which a browser whose clock is off by more than the accepted skew (30 s) would otherwise miss.
 */
export function clockSkewMs(): Promise<number> {
  skew ??= (async () => {
    const before = Date.now();
    const serverSeconds = await call<number>('/time');
    const after = Date.now();
    // The service's second started somewhere in [serverSeconds, serverSeconds + 1): take its middle.
    return (serverSeconds + 0.5) * 1000 - (before + after) / 2;
  })().catch((e: unknown) => {
    skew = undefined;
    throw e;
  });
  return skew;
}

/** The service's time now, in ms. */
export async function serviceNow(): Promise<number> {
  const s = await clockSkewMs();
  // Within a second either way the browser's own clock is the better one (the skew estimate is ±0.5 s).
  return Math.abs(s) < 1000 ? Date.now() : Date.now() + s;
}

/** The text to show for any failure: the API's words when it answered. */
export function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.text;
  if (e instanceof Error) return e.message;
  return String(e);
}
