/**
 * The web console (console/, built into `console.dir` by tools/build-console.ts): GET /console is its page
 * and GET /console/{file} its scripts and styles, served from memory by static-files.ts (content types,
 * caching, no way out of the directory, bounded sizes). The console is a client of the public API like
 * any other: it reads and trades through the routes and channels every client uses, and nothing here
 * gives it another way in. Without `console.enabled` there are no such routes; a console that was never
 * built answers 404 saying how to build it.
 *
 * Every answer carries nosniff and no-referrer; the page also forbids framing (the operator page acts
 * with the admin token) and loads nothing but its own origin (CONTENT_SECURITY_POLICY), so it works
 * offline and a catalog text can never bring in a script.
 */
import { Type } from '@sinclair/typebox';
import { apiError } from '../../domain/errors.ts';
import { consoleDir } from '../../runtime/config.ts';
import type { AppContext } from '../context.ts';
import { bindRoutes, reply, routeSpec, type AnyRoute, type RequestOf, type RouteSpec } from '../pipeline/route.ts';
import { loadStaticFiles, matchesEtag, type StaticFile } from '../http/static-files.ts';

export const CONSOLE_PAGE = 'index.html';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const COMMON_HEADERS = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };
const PAGE_HEADERS = { ...COMMON_HEADERS, 'content-security-policy': CONTENT_SECURITY_POLICY, 'x-frame-options': 'DENY' };

const FileParams = Type.Object({ file: Type.String({ maxLength: 200, description: 'a file of the built console, e.g. main-4KJ2HQ3P.js' }) });

/** What the console's handlers use: the files of the built console, read into memory once (none when never built). */
export interface ConsoleDeps {
  readonly files: ReadonlyMap<string, StaticFile>;
}

/** The console's files, read at start-up; what is not served (or the whole console, unbuilt) is logged. */
export function consoleDeps(ctx: Pick<AppContext, 'config' | 'log'>): ConsoleDeps {
  const dir = consoleDir(ctx.config);
  const load = loadStaticFiles(dir);
  if (!load.files.has(CONSOLE_PAGE)) ctx.log.warn({ dir, reason: load.missing ?? `no ${CONSOLE_PAGE}` }, 'the web console is not built: /console answers 404 until `npm run build:console`');
  for (const s of load.skipped) ctx.log.warn({ dir, file: s.name, reason: s.reason }, 'console file not served');
  return { files: load.files };
}

function answer(d: ConsoleDeps, name: string, ifNoneMatch: string | undefined) {
  if (!d.files.has(CONSOLE_PAGE)) throw apiError('PM_ERR_NOT_FOUND_ENTITY', { detail: 'the web console is not built: run npm run build:console' });
  const f: StaticFile | undefined = d.files.get(name);
  if (f === undefined) throw apiError('PM_ERR_NOT_FOUND');
  const headers = { ...(name === CONSOLE_PAGE ? PAGE_HEADERS : COMMON_HEADERS), 'content-type': f.contentType, 'cache-control': f.cacheControl, etag: f.etag };
  if (matchesEtag(ifNoneMatch, f.etag)) return reply({ status: 304, headers, noBody: true });
  return reply({ headers, raw: f.body });
}

export function consolePage(d: ConsoleDeps, req: RequestOf) {
  return answer(d, CONSOLE_PAGE, req.headers['if-none-match']);
}

export function consoleFile(d: ConsoleDeps, req: RequestOf<undefined, undefined, typeof FileParams>) {
  return answer(d, req.params.file, req.headers['if-none-match']);
}

const response = Type.String({ description: 'the file as text (text/html, text/javascript, text/css); 304 without a body when If-None-Match names its ETag' });
// uWS matches a pattern exactly: /console/ is a route of its own (a parameter never matches an empty segment).
const page = (path: string) =>
  routeSpec({
    method: 'GET',
    path,
    group: 'ops',
    summary: 'The web console: markets, books and charts, wallets, an order ticket and the operator\'s controls',
    headers: ['if-none-match'],
    response,
    handler: consolePage,
  });

export const CONSOLE_ROUTES: readonly RouteSpec<ConsoleDeps>[] = [
  page('/console'),
  page('/console/'),
  routeSpec({
    method: 'GET',
    path: '/console/:file',
    group: 'ops',
    summary: 'A file of the web console (hashed names are immutable)',
    params: FileParams,
    headers: ['if-none-match'],
    response,
    handler: consoleFile,
  }),
];

export function consoleRoutes(ctx: Pick<AppContext, 'config' | 'log'>): AnyRoute[] {
  if (!ctx.config.console.enabled) return [];
  return bindRoutes(consoleDeps(ctx), CONSOLE_ROUTES);
}
