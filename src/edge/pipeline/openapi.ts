/**
 * OpenAPI 3.1 document generated from the route table. TypeBox schemas are JSON Schema 2020-12, which
 * OpenAPI 3.1 embeds as is, so each route's query, path, body and response schemas go in unchanged
 * (JSON.stringify drops TypeBox's symbol keys). Allocates: built once at start-up.
 */
import type { TObject, TSchema } from '@sinclair/typebox';
import type { AnyRoute } from './route.ts';
import { paramNamesOf } from './validate.ts';

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'string' }, type: { type: 'string' } },
};

const errorResponses = (r: AnyRoute): Record<string, unknown> => {
  const out: Record<string, unknown> = {
    '400': { description: 'Invalid request', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    '429': {
      description: 'Rate limit exceeded',
      headers: Object.fromEntries(
        ['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'].map((h) => [h, { schema: { type: 'integer' } }]),
      ),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    },
    '500': { description: 'Internal error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
  };
  if (r.auth && r.auth !== 'none') out['401'] = { description: 'Unauthorized', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  if (r.params || r.group === 'catalog') out['404'] = { description: 'Not found', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  if (r.body) out['413'] = { description: 'Body too large', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  return out;
};

const plain = (s: TSchema): unknown => JSON.parse(JSON.stringify(s));

function parameters(r: AnyRoute): unknown[] {
  const out: unknown[] = [];
  const add = (where: 'path' | 'query', obj: TObject | undefined) => {
    if (!obj) return;
    const required = new Set(obj.required ?? []);
    for (const [name, schema] of Object.entries(obj.properties)) {
      const s = plain(schema) as Record<string, unknown>;
      const p: Record<string, unknown> = { name, in: where, required: where === 'path' || required.has(name), schema: s };
      if (typeof s.description === 'string') p.description = s.description;
      if (s.type === 'array') {
        p.style = 'form';
        p.explode = false;
      }
      out.push(p);
    }
  };
  add('path', r.params as TObject | undefined);
  // OpenAPI requires every `{name}` of the path to be declared; a route without a params schema still has them.
  for (const name of paramNamesOf(r.path)) {
    if (!(r.params as TObject | undefined)?.properties[name]) out.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
  add('query', r.query as TObject | undefined);
  return out;
}

const L2 = { L2Address: [], L2ApiKey: [], L2Passphrase: [], L2Timestamp: [], L2Signature: [] };
const BUILDER = { BuilderApiKey: [], BuilderPassphrase: [], BuilderTimestamp: [], BuilderSignature: [] };
const SECURITY: Record<string, unknown[]> = {
  l1: [{ L1Address: [], L1Signature: [], L1Timestamp: [], L1Nonce: [] }],
  admin: [{ AdminBearer: [] }],
};

/** The requirements of a route: l2 by the key kinds it accepts (L2 headers, builder headers), none when optional. */
function securityOf(r: AnyRoute): unknown[] | undefined {
  if (!r.auth || r.auth === 'none') return undefined;
  if (r.auth !== 'l2') return SECURITY[r.auth];
  const keys = r.keys ?? ['trading'];
  const out: unknown[] = [];
  if (keys.includes('trading') || keys.includes('readonly')) out.push(L2);
  if (keys.includes('builder')) out.push(BUILDER);
  if (r.authOptional) out.push({});
  return out;
}

export function buildOpenApi(routes: readonly AnyRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:(\w+)/g, '{$1}');
    // A trailing slash names the directory's own page (GET /console/ beside GET /console): `...Index`.
    const words = path.replace(/[{}]/g, '').replace(/(.)\/$/, '$1/index');
    const op: Record<string, unknown> = {
      operationId: `${r.method.toLowerCase()}${words.replace(/[^A-Za-z0-9]+(\w)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: r.summary,
      tags: r.tags ?? [r.group],
      parameters: parameters(r),
      responses: {
        '200': {
          description: 'OK',
          content: { 'application/json': { schema: r.response ? plain(r.response) : {} } },
        },
        ...errorResponses(r),
      },
    };
    if (r.description) op.description = r.description;
    if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: plain(r.body) } } };
    const security = securityOf(r);
    if (security !== undefined) op.security = security;
    // Which kinds of API key sign the route (route.ts KeyKind): a vendor extension, OpenAPI has no word for it.
    if (r.auth === 'l2') op['x-key-kinds'] = r.keys ?? ['trading'];
    (paths[path] ??= {})[r.method.toLowerCase()] = op;
  }
  const header = (name: string) => ({ type: 'apiKey', in: 'header', name });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Prediction-market exchange',
      version,
      description: 'Wallet data, catalog, market data and trading of a self-hosted prediction-market exchange.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: ERROR_SCHEMA },
      securitySchemes: {
        L1Address: header('SVC_ADDRESS'),
        L1Signature: header('SVC_SIGNATURE'),
        L1Timestamp: header('SVC_TIMESTAMP'),
        L1Nonce: header('SVC_NONCE'),
        L2Address: header('SVC_ADDRESS'),
        L2ApiKey: header('SVC_API_KEY'),
        L2Passphrase: header('SVC_PASSPHRASE'),
        L2Timestamp: header('SVC_TIMESTAMP'),
        L2Signature: header('SVC_SIGNATURE'),
        BuilderApiKey: header('SVC_BUILDER_API_KEY'),
        BuilderPassphrase: header('SVC_BUILDER_PASSPHRASE'),
        BuilderTimestamp: header('SVC_BUILDER_TIMESTAMP'),
        BuilderSignature: header('SVC_BUILDER_SIGNATURE'),
        AdminBearer: { type: 'http', scheme: 'bearer' },
      },
    },
  };
}
