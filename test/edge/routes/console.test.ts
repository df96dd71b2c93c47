/**
 * The console module (src/edge/routes/console.ts) through the real app, serving a directory made here:
 * its three routes answer in their schema and charge the console bucket; the page carries its security
 * headers and is revalidated (304 without a body for its ETag), hashed files are immutable; names that
 * try to leave the directory are unknown; a console never built answers how to build it; with
 * `console.enabled` false there is no /console at all. Test harness: test/fixtures/route-contract.ts.
 * The handlers alone, on a hand-built file map: the page and a file, 304 for a matching ETag, 404s.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { isApiError } from '../../../src/domain/errors.ts';
import { isReply, type AnyRoute } from '../../../src/edge/pipeline/route.ts';
import { CONTENT_SECURITY_POLICY, consoleFile, consolePage, consoleRoutes } from '../../../src/edge/routes/console.ts';
import { IMMUTABLE, REVALIDATE, type StaticFile } from '../../../src/edge/http/static-files.ts';
import { routeRequest } from '../../fixtures/route-request.ts';
import { get, rawHttp } from '../../fixtures/edge.ts';
import { assertAnswers, assertGroupError, assertServes, startRouteApp, type RouteApp, type RouteCase } from '../../fixtures/route-contract.ts';

const PAGE = '<!doctype html><title>console</title><script type="module" src="/console/main-4KJ2HQ3P.js"></script>';
const SCRIPT = 'document.title = "ok";';
const dir = mkdtempSync(join(tmpdir(), 'pm-console-'));
writeFileSync(join(dir, 'index.html'), PAGE);
writeFileSync(join(dir, 'main-4KJ2HQ3P.js'), SCRIPT);

let h: RouteApp;
let routes: AnyRoute[];
before(async () => {
  h = await startRouteApp({ demo: 'off', console: { enabled: true, dir } });
  routes = consoleRoutes(h.app.ctx);
});
after(() => h.close());

const CASES: RouteCase[] = [
  { route: 'GET /console', group: 'ops', ok: () => h.send('GET', '/console') },
  { route: 'GET /console/', group: 'ops', ok: () => h.send('GET', '/console/') },
  {
    route: 'GET /console/:file',
    group: 'ops',
    ok: () => h.send('GET', '/console/main-4KJ2HQ3P.js'),
    bad: { send: () => h.send('GET', '/console/main-00000000.js'), status: 404, error: 'not found' },
  },
];

test('the module serves exactly its three routes, in the ops group', () => {
  assertServes(routes, CASES);
});

for (const c of CASES) {
  test(`${c.route} answers in its schema and charges its buckets`, async () => {
    await assertAnswers(h, routes, c);
  });
}

test('GET /console/:file: an unknown file is the ops group\'s 404', async () => {
  const bad = CASES[2].bad!;
  assertGroupError('ops', await bad.send(), bad.status, bad.error);
});

test('the page: its bytes, HTML, revalidated, framed by nobody, loading only from its own origin', async () => {
  for (const path of ['/console', '/console/', '/console/index.html']) {
    const r = await fetch(h.base + path);
    assert.equal(r.status, 200, path);
    assert.equal(await r.text(), PAGE, path);
    assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8', path);
    assert.equal(r.headers.get('cache-control'), REVALIDATE, path);
    assert.equal(r.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY, path);
    assert.equal(r.headers.get('x-frame-options'), 'DENY', path);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff', path);
    assert.equal(r.headers.get('referrer-policy'), 'no-referrer', path);
    assert.match(r.headers.get('etag') ?? '', /^"[A-Za-z0-9_-]+"$/, path);
  }
  assert.match(CONTENT_SECURITY_POLICY, /default-src 'none'/);
  assert.match(CONTENT_SECURITY_POLICY, /script-src 'self'/);
  assert.match(CONTENT_SECURITY_POLICY, /connect-src 'self'/);
});

test('a hashed file is immutable and has its own type; it carries no page policy', async () => {
  const r = await fetch(`${h.base}/console/main-4KJ2HQ3P.js`);
  assert.equal(await r.text(), SCRIPT);
  assert.equal(r.headers.get('content-type'), 'text/javascript; charset=utf-8');
  assert.equal(r.headers.get('cache-control'), IMMUTABLE);
  assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(r.headers.get('content-security-policy'), null);
});

test('If-None-Match with the page\'s ETag answers 304 with the headers and no content, and the connection goes on', async () => {
  const etag = (await fetch(`${h.base}/console`)).headers.get('etag')!;
  const req = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`;
  const r = await rawHttp(h.app.port, req('/console', `If-None-Match: ${etag}\r\n`) + req('/time'), { responses: 2 });
  const [notModified, next] = r.responses;
  assert.equal(notModified.status, 304);
  assert.equal(notModified.headers['etag'], etag);
  assert.equal(notModified.headers['cache-control'], REVALIDATE);
  assert.equal(notModified.headers['content-length'], undefined, 'a 304 carries no Content-Length');
  assert.equal(next.status, 200, 'the next request on the connection is answered');
  assert.match(next.body.toString(), /^\d+$/);
  const changed = await fetch(`${h.base}/console`, { headers: { 'if-none-match': '"another"' } });
  assert.equal(changed.status, 200);
});

test('names that try to leave the directory are unknown names', async () => {
  for (const path of ['/console/..%2fpackage.json', '/console/%2e%2e%2fpackage.json', '/console/..', '/console/.%2e', '/console/%2fetc%2fpasswd', '/console/index.html%00.js']) {
    const r = await rawHttp(h.app.port, get(path), { responses: 1 });
    assert.equal(r.responses[0]?.status, 404, path);
    assert.equal(r.responses[0]?.body.toString(), '{"error":"not found"}', path);
  }
  const nested = await rawHttp(h.app.port, get('/console/../package.json'), { responses: 1 });
  assert.notEqual(nested.responses[0]?.status, 200);
  assert.doesNotMatch(nested.bytes.toString(), /"name": "pm-exchange"/);
});

test('a console that was never built answers 404 saying how to build it; disabled, there is no console', async () => {
  const unbuilt = await startRouteApp({ demo: 'off', console: { enabled: true, dir: join(dir, 'never-built') } });
  try {
    for (const path of ['/console', '/console/main-4KJ2HQ3P.js']) {
      const r = await unbuilt.send('GET', path);
      assertGroupError('ops', r, 404, 'the web console is not built: run npm run build:console');
    }
  } finally {
    await unbuilt.close();
  }
  const off = await startRouteApp({ demo: 'off', console: { enabled: false, dir } });
  try {
    assert.deepEqual(consoleRoutes(off.app.ctx), []);
    assertGroupError('ops', await off.send('GET', '/console'), 404, 'not found');
  } finally {
    await off.close();
  }
});

test('the handlers answer from the files they are given, without the app', () => {
  const file = (name: string, body: string, contentType: string): StaticFile => ({ name, body, bytes: body.length, contentType, cacheControl: REVALIDATE, etag: `"${name}"` });
  const files = new Map([
    ['index.html', file('index.html', PAGE, 'text/html; charset=utf-8')],
    ['a.js', file('a.js', SCRIPT, 'text/javascript; charset=utf-8')],
  ]);
  const pageReply = consolePage({ files }, routeRequest({}));
  assert.ok(isReply(pageReply));
  assert.equal(pageReply.raw, PAGE);
  assert.equal(pageReply.headers?.['content-security-policy'], CONTENT_SECURITY_POLICY);
  const fileReply = consoleFile({ files }, routeRequest({ params: { file: 'a.js' } }));
  assert.ok(isReply(fileReply));
  assert.equal(fileReply.raw, SCRIPT);
  assert.equal(fileReply.headers?.['content-security-policy'], undefined, 'the page policy is the page\'s');
  const again = consoleFile({ files }, routeRequest({ params: { file: 'a.js' }, headers: { 'if-none-match': '"a.js"' } }));
  assert.ok(isReply(again));
  assert.equal(again.status, 304);
  assert.equal(again.noBody, true);
  assert.throws(() => consoleFile({ files }, routeRequest({ params: { file: 'b.js' } })), (e) => isApiError(e) && e.spec.code === 'PM_ERR_NOT_FOUND');
  assert.throws(
    () => consolePage({ files: new Map() }, routeRequest({})),
    (e) => isApiError(e) && e.spec.status === 404 && e.message === 'the web console is not built: run npm run build:console',
  );
});
