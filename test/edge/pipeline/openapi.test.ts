/**
 * GET /openapi.json against the app's own route table (buildRoutes): the document is OpenAPI 3.1, lists
 * every route under its `{param}` path and method, every operation has a 200 response, parameters are
 * complete, path parameters are declared and required, every $ref resolves inside the document, and the
 * document is plain JSON (no TypeBox symbols). The expected list is derived from the table, so routes
 * that land later are checked without touching this file. A synthetic table covers the shapes the real
 * one does not have yet (path parameters, bodies, auth).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { startApp, VERSION, type App } from '../../../src/node/app.ts';
import { buildOpenApi } from '../../../src/edge/pipeline/openapi.ts';
import { route, type AnyRoute } from '../../../src/edge/pipeline/route.ts';
import { buildRoutes } from '../../../src/edge/routes.ts';
import { testConfig } from '../../../src/runtime/config.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { tempDir } from '../../fixtures/edge.ts';

type Json = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let app: App;
let doc: Json;
let routes: AnyRoute[];

before(async () => {
  app = await startApp(testConfig({ dataDir: tempDir(), http: { port: 0 }, rateLimits: { enabled: false } }), { log: silentLogger });
  routes = buildRoutes(app.ctx);
  const r = await fetch(`http://127.0.0.1:${app.port}/openapi.json`);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /application\/json/);
  doc = (await r.json()) as Json;
});

after(() => app.stop());

const oaPath = (pattern: string) => pattern.replace(/:(\w+)/g, '{$1}');

/** Every problem found in a document, as text, so one assertion shows them all. */
function problems(d: Json, table: readonly AnyRoute[]): string[] {
  const out: string[] = [];
  if (d.openapi !== '3.1.0') out.push(`openapi is ${String(d.openapi)}`);
  const info = d.info as Json | undefined;
  if (typeof info?.title !== 'string' || info.title === '') out.push('info.title missing');
  if (typeof info?.version !== 'string' || info.version === '') out.push('info.version missing');
  const paths = (d.paths ?? {}) as Record<string, Json>;

  for (const r of table) {
    const op = paths[oaPath(r.path)]?.[r.method.toLowerCase()] as Json | undefined;
    if (!op) out.push(`${r.method} ${r.path}: not in the document`);
  }
  const expected = new Set(table.map((r) => `${r.method.toLowerCase()} ${oaPath(r.path)}`));
  const operationIds = new Set<string>();
  for (const [path, item] of Object.entries(paths)) {
    const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    for (const [method, opv] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`;
      if (!METHODS.includes(method)) {
        out.push(`${where}: not an HTTP method`);
        continue;
      }
      if (!expected.has(`${method} ${path}`)) out.push(`${where}: in the document but not in the route table`);
      const op = opv as Json;
      if (typeof op.operationId === 'string') {
        if (operationIds.has(op.operationId)) out.push(`${where}: operationId ${op.operationId} reused`);
        operationIds.add(op.operationId);
      }
      const responses = op.responses as Json | undefined;
      if (!responses || typeof responses !== 'object') out.push(`${where}: no responses`);
      else {
        if (!responses['200']) out.push(`${where}: no 200 response`);
        for (const [code, resp] of Object.entries(responses)) {
          if (!/^[1-5]\d\d$/.test(code)) out.push(`${where}: response key ${code}`);
          if (typeof (resp as Json).description !== 'string') out.push(`${where}: response ${code} has no description`);
        }
      }
      const params = (op.parameters ?? []) as Json[];
      const seen = new Set<string>();
      for (const p of params) {
        if (typeof p.name !== 'string' || p.name === '') out.push(`${where}: parameter without name`);
        if (!['query', 'path', 'header', 'cookie'].includes(p.in as string)) out.push(`${where}: parameter ${String(p.name)} has in=${String(p.in)}`);
        if (typeof p.schema !== 'object' || p.schema === null) out.push(`${where}: parameter ${String(p.name)} has no schema`);
        if (p.in === 'path' && p.required !== true) out.push(`${where}: path parameter ${String(p.name)} not required`);
        if (p.in === 'path' && !templated.includes(p.name as string)) out.push(`${where}: path parameter ${String(p.name)} not in the path`);
        const key = `${String(p.in)}:${String(p.name)}`;
        if (seen.has(key)) out.push(`${where}: parameter ${key} twice`);
        seen.add(key);
      }
      for (const name of templated) {
        if (!params.some((p) => p.in === 'path' && p.name === name)) out.push(`${where}: path parameter {${name}} not declared`);
      }
      const route = table.find((r) => r.method.toLowerCase() === method && oaPath(r.path) === path);
      if (route?.body && !(op.requestBody as Json | undefined)?.content) out.push(`${where}: body route without requestBody`);
    }
  }
  for (const ref of refs(d)) {
    if (!resolves(d, ref)) out.push(`$ref ${ref} does not resolve`);
  }
  return out;
}

function refs(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) refs(x, out);
  else if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref') out.push(String(x));
      else refs(x, out);
    }
  }
  return out;
}

function resolves(d: Json, ref: string): boolean {
  if (!ref.startsWith('#/')) return false;
  let at: unknown = d;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof at !== 'object' || at === null || !(key in at)) return false;
    at = (at as Json)[key];
  }
  return at !== undefined;
}

/** Paths to every symbol-keyed property or non-JSON value (functions, undefined, bigint, non-finite numbers). */
function nonJson(v: unknown, path = '$', out: string[] = []): string[] {
  if (typeof v === 'function' || typeof v === 'undefined' || typeof v === 'bigint' || typeof v === 'symbol') out.push(`${path}: ${typeof v}`);
  else if (typeof v === 'number' && !Number.isFinite(v)) out.push(`${path}: ${v}`);
  else if (Array.isArray(v)) v.forEach((x, i) => nonJson(x, `${path}[${i}]`, out));
  else if (typeof v === 'object' && v !== null) {
    for (const s of Object.getOwnPropertySymbols(v)) out.push(`${path}[${String(s)}]`);
    for (const [k, x] of Object.entries(v)) nonJson(x, `${path}.${k}`, out);
  }
  return out;
}

test('the route table is not empty and has no duplicate method+path', () => {
  assert.ok(routes.length > 0);
  const keys = routes.map((r) => `${r.method} ${r.path}`);
  assert.equal(new Set(keys).size, keys.length);
});

test('openapi is 3.1.0 with info.title and info.version (the app version)', () => {
  assert.equal(doc.openapi, '3.1.0');
  const info = doc.info as Json;
  assert.equal(typeof info.title, 'string');
  assert.ok((info.title as string).length > 0);
  assert.equal(info.version, VERSION);
});

test('every route of the app table appears under its {param} path with its method, and nothing else does', () => {
  const paths = doc.paths as Record<string, Json>;
  for (const r of routes) {
    assert.ok(paths[oaPath(r.path)]?.[r.method.toLowerCase()], `${r.method} ${r.path} documented`);
  }
  const documented = Object.entries(paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`)).sort();
  assert.deepEqual(documented, routes.map((r) => `${r.method} ${oaPath(r.path)}`).sort());
});

test('the served document passes every structural check (responses, parameters, path params, $refs)', () => {
  assert.deepEqual(problems(doc, routes), []);
});

test('the document is plain JSON: no TypeBox symbols, functions or undefined, and it round-trips', () => {
  const built = buildOpenApi(routes, VERSION);
  assert.deepEqual(nonJson(built), []);
  assert.deepEqual(JSON.parse(JSON.stringify(built)), built);
  assert.deepEqual(doc, JSON.parse(JSON.stringify(built)), 'served document equals the generated one');
});

test('synthetic table (path params with and without a schema, query arrays, bodies, auth): the generator stays valid', () => {
  const Token = Type.String({ pattern: '^\\d+$', description: 'token id' });
  const table: AnyRoute[] = [
    route({ method: 'GET', path: '/events/slug/:slug', group: 'catalog', summary: 'by slug', params: Type.Object({ slug: Type.String() }), handler: () => null }),
    route({ method: 'GET', path: '/admin/wallets/:address', group: 'admin', summary: 'no params schema', auth: 'admin', handler: () => null }),
    route({ method: 'PUT', path: '/admin/wallets/:address/profile', group: 'admin', summary: 'params + body', auth: 'admin', params: Type.Object({ address: Type.String() }), body: Type.Object({ name: Type.Optional(Type.String()) }), handler: () => null }),
    route({ method: 'GET', path: '/book', group: 'clob', summary: 'query', query: Type.Object({ token_id: Token, ids: Type.Optional(Type.Array(Type.Integer())) }), response: Type.Object({ hash: Type.String() }), handler: () => null }),
    route({ method: 'POST', path: '/order', group: 'trading', summary: 'l2', auth: 'l2', body: Type.Object({ order: Type.Object({ makerAmount: Type.String() }) }), handler: () => null }),
    route({ method: 'DELETE', path: '/order', group: 'trading', summary: 'l2 delete', auth: 'l2', body: Type.Object({ orderID: Type.String() }), handler: () => null }),
  ];
  const built = buildOpenApi(table, '9.9.9');
  assert.deepEqual(problems(JSON.parse(JSON.stringify(built)) as Json, table), []);
  assert.deepEqual(nonJson(built), []);
  const book = ((built.paths as Record<string, Json>)['/book'].get as Json).parameters as Json[];
  assert.deepEqual(book.map((p) => [p.name, p.in, p.required]), [['token_id', 'query', true], ['ids', 'query', false]]);
  assert.equal(book[0].description, 'token id');
  const secured = (built.paths as Record<string, Json>)['/order'].post as Json;
  const schemes = (built.components as Json).securitySchemes as Json;
  for (const req of secured.security as Json[]) for (const name of Object.keys(req)) assert.ok(schemes[name], `security scheme ${name} defined`);
});
