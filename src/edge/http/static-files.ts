/**
 * Static files served from memory (the web console's page, script and styles). A directory is read once,
 * when the routes are built (allocates: start-up only), and a request never touches the file system:
 *
 *   names      a request names a file; the name is looked up in a map, never joined to a path, so nothing
 *              outside the directory can be reached (`..`, `%2e%2e%2f`, absolute paths are just unknown
 *              names). Only the directory's own regular files are loaded: subdirectories and symbolic
 *              links are skipped, and so is a name outside NAME (a hidden file, a space, a backslash).
 *   types      only the text types of STATIC_TYPES, each answered with its own Content-Type; the answer
 *              body is text (http.ts writes strings), so a file that is not valid UTF-8 is skipped.
 *   bounds     at most maxFiles files, maxFileBytes each and maxTotalBytes together; what is past a bound
 *              is skipped and reported, never truncated.
 *   caching    a name that carries a content hash (`main-4KJ2HQ3P.js`, as tools/build-console.ts names its
 *              outputs) never changes: cached for a year, immutable. Any other name (index.html, which
 *              names the hashed files) is revalidated on every use: `no-cache` with a strong ETag, and an
 *              If-None-Match that names it is answered 304 without a body.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

export const STATIC_TYPES: Readonly<Record<string, string>> = Object.freeze({
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
});

/** A servable name: one path segment of letters, digits, `.`, `_` and `-`, not starting with a dot. */
export const NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/** What tools/build-console.ts appends to the names of its outputs: `-` and esbuild's 8-character hash. */
export const HASHED_NAME = /-[A-Z0-9]{8}\.[a-z]+$/;

export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const REVALIDATE = 'no-cache';

export interface StaticLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

export const DEFAULT_STATIC_LIMITS: StaticLimits = Object.freeze({ maxFiles: 64, maxFileBytes: 8 * 1024 * 1024, maxTotalBytes: 16 * 1024 * 1024 });

export interface StaticFile {
  readonly name: string;
  readonly body: string;
  readonly bytes: number;
  readonly contentType: string;
  readonly cacheControl: string;
  /** Strong entity tag, quoted. */
  readonly etag: string;
}

export interface StaticLoad {
  readonly files: ReadonlyMap<string, StaticFile>;
  /** Set when the directory could not be read at all (not built yet, say). */
  readonly missing?: string;
  /** Entries left out, with the reason. */
  readonly skipped: readonly { name: string; reason: string }[];
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Reads `dir`'s servable files into memory. Never throws: an unreadable directory is `missing`. */
export function loadStaticFiles(dir: string, limits: StaticLimits = DEFAULT_STATIC_LIMITS): StaticLoad {
  const files = new Map<string, StaticFile>();
  const skipped: { name: string; reason: string }[] = [];
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (e) {
    return { files, skipped, missing: (e as Error).message };
  }
  let total = 0;
  for (const name of names) {
    const type = STATIC_TYPES[extname(name)];
    const st = NAME.test(name) && type !== undefined ? lstatSync(join(dir, name), { throwIfNoEntry: false }) : undefined;
    const refused = refusal(name, type, st?.isFile() === true ? st.size : undefined, files.size, total, limits);
    if (refused !== undefined) {
      skipped.push({ name, reason: refused });
      continue;
    }
    const raw = readFileSync(join(dir, name));
    let body: string;
    try {
      body = utf8.decode(raw);
    } catch {
      skipped.push({ name, reason: 'not UTF-8 text' });
      continue;
    }
    total += raw.length;
    files.set(name, {
      name,
      body,
      bytes: raw.length,
      contentType: type!,
      cacheControl: HASHED_NAME.test(name) ? IMMUTABLE : REVALIDATE,
      etag: `"${createHash('sha256').update(raw).digest('base64url').slice(0, 27)}"`,
    });
  }
  return { files, skipped };
}

/** Why an entry is not loaded; undefined loads it. `size` is undefined when it is not a regular file. */
function refusal(name: string, type: string | undefined, size: number | undefined, count: number, total: number, limits: StaticLimits): string | undefined {
  if (!NAME.test(name)) return 'not a servable name';
  if (type === undefined) return 'not a served type';
  if (size === undefined) return 'not a regular file';
  if (size > limits.maxFileBytes) return `larger than ${limits.maxFileBytes} bytes`;
  if (total + size > limits.maxTotalBytes) return `past ${limits.maxTotalBytes} bytes in all`;
  if (count >= limits.maxFiles) return `past ${limits.maxFiles} files`;
  return undefined;
}

/** Whether an If-None-Match header value names `etag` (a list, weak forms and `*` included; RFC 9110 13.1.2). */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined || ifNoneMatch === '') return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === opaque);
}
