/**
 * Strict query, path and body validation through HTTP, one test route per route group, each answering
 * in its group's error form (DESIGN section 4): wallet data `{"error":"unknown_field|missing_field|
 * invalid_field: <name>"}`, catalog `{"type":"bad request","error":"<name> is invalid|required"}`, order
 * book / trading `{"error":"invalid <name>"}` or the route's own message; plus the query coercion table
 * (validate.ts) and field paths in body errors.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { route } from '../../../src/edge/pipeline/route.ts';
import { startTestServer, type TestServer } from '../../fixtures/edge.ts';

const ADDRESS = '0x' + 'ab'.repeat(20);
const ORDER_ID = '0x' + '0f'.repeat(32);

let srv: TestServer;

before(async () => {
  srv = await startTestServer([
    route({
      method: 'GET',
      path: '/positions',
      group: 'data',
      summary: 'wallet data',
      query: Type.Object({
        user: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }),
        limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 500 })),
        sizeThreshold: Type.Optional(Type.Number({ minimum: 0 })),
        redeemable: Type.Optional(Type.Boolean()),
        sortBy: Type.Optional(Type.Union([Type.Literal('CASH'), Type.Literal('TOKENS'), Type.Literal('TITLE')])),
        title: Type.Optional(Type.String({ maxLength: 10 })),
        market: Type.Optional(Type.Array(Type.String({ pattern: '^0x[0-9a-f]{4}$' }))),
      }),
      handler: (r) => r.query,
    }),
    route({
      method: 'GET',
      path: '/events',
      group: 'catalog',
      summary: 'catalog listing',
      query: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
        closed: Type.Optional(Type.Boolean()),
        tag_id: Type.Optional(Type.Array(Type.Integer())),
      }),
      handler: (r) => r.query,
    }),
    route({
      method: 'GET',
      path: '/public-search',
      group: 'catalog',
      summary: 'catalog search',
      query: Type.Object({ q: Type.String({ minLength: 1 }), limit_per_type: Type.Optional(Type.Integer({ minimum: 1 })) }),
      handler: (r) => r.query,
    }),
    route({
      method: 'GET',
      path: '/events/slug/:slug',
      group: 'catalog',
      summary: 'catalog by slug',
      params: Type.Object({ slug: Type.String({ pattern: '^[a-z0-9-]{1,20}$' }) }),
      handler: (r) => r.params,
    }),
    route({
      method: 'GET',
      path: '/price',
      group: 'clob',
      summary: 'market data',
      query: Type.Object({ token_id: Type.String({ pattern: '^\\d{1,78}$' }), side: Type.Union([Type.Literal('BUY'), Type.Literal('SELL')]) }),
      fieldMessages: { token_id: 'Invalid token id' },
      handler: (r) => r.query,
    }),
    route({
      method: 'GET',
      path: '/data/order/:id',
      group: 'clob',
      summary: 'order by id',
      params: Type.Object({ id: Type.String({ pattern: '^0x[0-9a-f]{64}$' }) }),
      handler: (r) => r.params,
    }),
    route({
      method: 'GET',
      path: '/coerce',
      group: 'clob',
      summary: 'coercion table',
      query: Type.Object({
        i: Type.Optional(Type.Integer()),
        n: Type.Optional(Type.Number()),
        b: Type.Optional(Type.Boolean()),
        s: Type.Optional(Type.String()),
        ints: Type.Optional(Type.Array(Type.Integer())),
        strs: Type.Optional(Type.Array(Type.String())),
        bools: Type.Optional(Type.Array(Type.Boolean())),
      }),
      handler: (r) => r.query,
    }),
    route({
      method: 'POST',
      path: '/order',
      group: 'trading',
      summary: 'nested body',
      body: Type.Object({
        order: Type.Object({
          makerAmount: Type.String({ pattern: '^\\d+$' }),
          takerAmount: Type.String({ pattern: '^\\d+$' }),
          side: Type.Union([Type.Literal('BUY'), Type.Literal('SELL')]),
        }),
        owner: Type.String({ minLength: 1 }),
        orderType: Type.Optional(Type.Union([Type.Literal('GTC'), Type.Literal('FOK')])),
      }),
      handler: () => ({ success: true }),
    }),
    route({
      method: 'POST',
      path: '/prices',
      group: 'clob',
      summary: 'array body',
      body: Type.Array(Type.Object({ token_id: Type.String({ pattern: '^\\d+$' }), side: Type.Optional(Type.Union([Type.Literal('BUY'), Type.Literal('SELL')])) }), { maxItems: 3 }),
      fieldMessages: { '[0].token_id': 'Invalid token id in first entry' },
      handler: (r) => r.body.length,
    }),
    route({
      method: 'POST',
      path: '/admin/wallets/:address/deposit',
      group: 'admin',
      summary: 'admin body',
      params: Type.Object({ address: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }) }),
      body: Type.Object({ amount: Type.String({ pattern: '^\\d+(\\.\\d{1,6})?$' }), note: Type.Optional(Type.String({ maxLength: 5 })) }),
      handler: (r) => ({ address: r.params.address, amount: r.body.amount }),
    }),
  ]);
});

after(() => srv.close());

async function getJson(path: string): Promise<{ status: number; body: unknown }> {
  const r = await fetch(srv.base + path);
  return { status: r.status, body: await r.json() };
}

async function postJson(path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const r = await fetch(srv.base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

interface Case {
  name: string;
  path: string;
  status: number;
  body: unknown;
}

function table(title: string, cases: Case[]): void {
  for (const c of cases) {
    test(`${title}: ${c.name}`, async () => {
      const r = await getJson(c.path);
      assert.equal(r.status, c.status, `GET ${c.path} -> ${JSON.stringify(r.body)}`);
      assert.deepEqual(r.body, c.body);
    });
  }
}

const u = `user=${ADDRESS}`;

table('data group', [
  { name: 'valid request is coerced to typed values', path: `/positions?${u}&limit=10&sizeThreshold=1.5&redeemable=true&sortBy=CASH&title=abc&market=0xab12,0xcd34`, status: 200, body: { user: ADDRESS, limit: 10, sizeThreshold: 1.5, redeemable: true, sortBy: 'CASH', title: 'abc', market: ['0xab12', '0xcd34'] } },
  { name: 'unknown parameter', path: `/positions?${u}&foo=1`, status: 400, body: { error: 'unknown_field: foo' } },
  { name: 'unknown parameter wins over a bad known one', path: `/positions?${u}&limit=x&foo=1`, status: 400, body: { error: 'unknown_field: foo' } },
  { name: 'unknown empty-valued parameter', path: `/positions?${u}&foo`, status: 400, body: { error: 'unknown_field: foo' } },
  { name: 'missing required', path: '/positions?limit=5', status: 400, body: { error: 'missing_field: user' } },
  { name: 'missing required, no query at all', path: '/positions', status: 400, body: { error: 'missing_field: user' } },
  { name: 'bad integer', path: `/positions?${u}&limit=abc`, status: 400, body: { error: 'invalid_field: limit' } },
  { name: 'fractional integer', path: `/positions?${u}&limit=1.5`, status: 400, body: { error: 'invalid_field: limit' } },
  { name: 'integer above maximum', path: `/positions?${u}&limit=501`, status: 400, body: { error: 'invalid_field: limit' } },
  { name: 'integer below minimum', path: `/positions?${u}&limit=-1`, status: 400, body: { error: 'invalid_field: limit' } },
  { name: 'empty integer', path: `/positions?${u}&limit=`, status: 400, body: { error: 'invalid_field: limit' } },
  { name: 'number below minimum', path: `/positions?${u}&sizeThreshold=-0.5`, status: 400, body: { error: 'invalid_field: sizeThreshold' } },
  { name: 'enum outside the set', path: `/positions?${u}&sortBy=cash`, status: 400, body: { error: 'invalid_field: sortBy' } },
  { name: 'boolean 1', path: `/positions?${u}&redeemable=1`, status: 400, body: { error: 'invalid_field: redeemable' } },
  { name: 'boolean TRUE', path: `/positions?${u}&redeemable=TRUE`, status: 400, body: { error: 'invalid_field: redeemable' } },
  { name: 'string too long', path: `/positions?${u}&title=${'a'.repeat(11)}`, status: 400, body: { error: 'invalid_field: title' } },
  { name: 'pattern mismatch', path: '/positions?user=0x12', status: 400, body: { error: 'invalid_field: user' } },
  { name: 'bad array element names the parameter', path: `/positions?${u}&market=0xab12,nope`, status: 400, body: { error: 'invalid_field: market' } },
  { name: 'repeated scalar key', path: `/positions?${u}&${u}`, status: 400, body: { error: 'invalid_field: user' } },
]);

table('catalog group', [
  { name: 'valid', path: '/events?limit=5&closed=false&tag_id=1,2', status: 200, body: { limit: 5, closed: false, tag_id: [1, 2] } },
  { name: 'bad integer', path: '/events?limit=abc', status: 400, body: { type: 'bad request', error: 'limit is invalid' } },
  { name: 'integer out of range', path: '/events?limit=1001', status: 400, body: { type: 'bad request', error: 'limit is invalid' } },
  { name: 'bad boolean', path: '/events?closed=yes', status: 400, body: { type: 'bad request', error: 'closed is invalid' } },
  { name: 'bad array element names the parameter', path: '/events?tag_id=1,x', status: 400, body: { type: 'bad request', error: 'tag_id is invalid' } },
  { name: 'unknown parameters are ignored', path: '/events?limit=2&foo=bar&order=x', status: 200, body: { limit: 2 } },
  { name: 'missing q', path: '/public-search', status: 400, body: { type: 'bad request', error: 'q is required' } },
  { name: 'missing q, other params present', path: '/public-search?limit_per_type=3', status: 400, body: { type: 'bad request', error: 'q is required' } },
  { name: 'empty q is invalid, not missing', path: '/public-search?q=', status: 400, body: { type: 'bad request', error: 'q is invalid' } },
  { name: 'q present', path: '/public-search?q=election&extra=1', status: 200, body: { q: 'election' } },
  { name: 'path parameter valid', path: '/events/slug/will-it-rain', status: 200, body: { slug: 'will-it-rain' } },
  { name: 'path parameter invalid', path: '/events/slug/Not_A_Slug', status: 400, body: { type: 'bad request', error: 'slug is invalid' } },
]);

table('clob group', [
  { name: 'valid', path: '/price?token_id=123&side=BUY', status: 200, body: { token_id: '123', side: 'BUY' } },
  { name: 'custom message for a bad value', path: '/price?token_id=abc&side=BUY', status: 400, body: { error: 'Invalid token id' } },
  { name: 'custom message for a missing value', path: '/price?side=BUY', status: 400, body: { error: 'Invalid token id' } },
  { name: 'default message for a bad value', path: '/price?token_id=1&side=buy', status: 400, body: { error: 'invalid side' } },
  { name: 'default message for a missing value', path: '/price?token_id=1', status: 400, body: { error: 'missing side' } },
  { name: 'unknown parameters are ignored', path: '/price?token_id=1&side=SELL&x=y&z', status: 200, body: { token_id: '1', side: 'SELL' } },
  { name: 'path parameter valid', path: `/data/order/${ORDER_ID}`, status: 200, body: { id: ORDER_ID } },
  { name: 'path parameter invalid', path: '/data/order/0x1234', status: 400, body: { error: 'invalid id' } },
]);

// Query coercion: what each schema kind accepts from text. `value` is the handler's view of the field
// (undefined in `expected` = the request is refused naming that field).
const coercion: { name: string; query: string; field: string; expected?: unknown }[] = [
  { name: 'integer', query: 'i=42', field: 'i', expected: 42 },
  { name: 'negative integer', query: 'i=-7', field: 'i', expected: -7 },
  { name: 'largest safe integer', query: 'i=9007199254740991', field: 'i', expected: 9007199254740991 },
  { name: 'integer beyond 2^53 would lose digits', query: 'i=9007199254740993', field: 'i' },
  { name: 'integer with 22 digits', query: 'i=9999999999999999999999', field: 'i' },
  { name: 'integer written as 1.0', query: 'i=1.0', field: 'i' },
  { name: 'integer in exponent form', query: 'i=1e3', field: 'i' },
  { name: 'integer in hex', query: 'i=0x10', field: 'i' },
  { name: 'integer with a leading space', query: 'i=%201', field: 'i' },
  { name: 'integer with a plus sign', query: 'i=%2B1', field: 'i' },
  { name: 'integer empty', query: 'i=', field: 'i' },
  { name: 'number decimal', query: 'n=1.5', field: 'n', expected: 1.5 },
  { name: 'number leading dot', query: 'n=-.5', field: 'n', expected: -0.5 },
  { name: 'number exponent', query: 'n=1e3', field: 'n', expected: 1000 },
  { name: 'number overflowing to Infinity', query: 'n=1e400', field: 'n' },
  { name: 'number NaN', query: 'n=NaN', field: 'n' },
  { name: 'number Infinity', query: 'n=Infinity', field: 'n' },
  { name: 'number word', query: 'n=abc', field: 'n' },
  { name: 'boolean true', query: 'b=true', field: 'b', expected: true },
  { name: 'boolean false', query: 'b=false', field: 'b', expected: false },
  { name: 'boolean 1', query: 'b=1', field: 'b' },
  { name: 'boolean 0', query: 'b=0', field: 'b' },
  { name: 'boolean True', query: 'b=True', field: 'b' },
  { name: 'boolean yes', query: 'b=yes', field: 'b' },
  { name: 'boolean empty', query: 'b=', field: 'b' },
  { name: 'boolean repeated', query: 'b=true&b=true', field: 'b' },
  { name: 'string URL-encoded', query: 's=a%20b%26c%3Dd', field: 's', expected: 'a b&c=d' },
  { name: 'string plus is a space', query: 's=a+b', field: 's', expected: 'a b' },
  { name: 'string UTF-8 encoded', query: 's=%E2%9C%93', field: 's', expected: '\u2713' },
  { name: 'string bad escape kept as text', query: 's=%ZZ', field: 's', expected: '%ZZ' },
  { name: 'string empty', query: 's=', field: 's', expected: '' },
  { name: 'string repeated key is ambiguous', query: 's=a&s=b', field: 's' },
  { name: 'integer repeated key', query: 'i=1&i=2', field: 'i' },
  { name: 'integer list by comma', query: 'ints=1,2,3', field: 'ints', expected: [1, 2, 3] },
  { name: 'integer list by repeated key', query: 'ints=1&ints=2', field: 'ints', expected: [1, 2] },
  { name: 'integer list mixed', query: 'ints=1,2&ints=3', field: 'ints', expected: [1, 2, 3] },
  { name: 'integer list with encoded comma', query: 'ints=1%2C2', field: 'ints', expected: [1, 2] },
  { name: 'integer list skips empty items', query: 'ints=1,,2,', field: 'ints', expected: [1, 2] },
  { name: 'integer list trims items', query: 'ints=1,%202', field: 'ints', expected: [1, 2] },
  { name: 'integer list empty', query: 'ints=', field: 'ints', expected: [] },
  { name: 'integer list bad item', query: 'ints=1,x', field: 'ints' },
  { name: 'integer list fractional item', query: 'ints=1,2.5', field: 'ints' },
  { name: 'string list', query: 'strs=a,b&strs=c%20d', field: 'strs', expected: ['a', 'b', 'c d'] },
  { name: 'boolean list', query: 'bools=true,false', field: 'bools', expected: [true, false] },
  { name: 'boolean list bad item', query: 'bools=true,1', field: 'bools' },
];

for (const c of coercion) {
  test(`query coercion: ${c.name} (${c.query}) -> ${c.expected === undefined ? `invalid ${c.field}` : JSON.stringify(c.expected)}`, async () => {
    const r = await getJson(`/coerce?${c.query}`);
    if (c.expected === undefined) {
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.deepEqual(r.body, { error: `invalid ${c.field}` });
    } else {
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual((r.body as Record<string, unknown>)[c.field], c.expected);
    }
  });
}

const validOrder = { order: { makerAmount: '100', takerAmount: '50', side: 'BUY' }, owner: 'k' };

const bodies: { name: string; path: string; body: unknown; status: number; expected: unknown }[] = [
  { name: 'valid nested body', path: '/order', body: validOrder, status: 200, expected: { success: true } },
  { name: 'nested field of the wrong type', path: '/order', body: { ...validOrder, order: { ...validOrder.order, makerAmount: 100 } }, status: 400, expected: { error: 'invalid order.makerAmount' } },
  { name: 'nested field missing', path: '/order', body: { ...validOrder, order: { takerAmount: '1', side: 'SELL' } }, status: 400, expected: { error: 'missing order.makerAmount' } },
  { name: 'nested enum', path: '/order', body: { ...validOrder, order: { ...validOrder.order, side: 'HOLD' } }, status: 400, expected: { error: 'invalid order.side' } },
  { name: 'top-level field missing', path: '/order', body: { order: validOrder.order }, status: 400, expected: { error: 'missing owner' } },
  { name: 'optional field wrong', path: '/order', body: { ...validOrder, orderType: 'IOC' }, status: 400, expected: { error: 'invalid orderType' } },
  { name: 'huge number where a string is due', path: '/order', body: { ...validOrder, owner: 1e308 }, status: 400, expected: { error: 'invalid owner' } },
  { name: 'array body, valid', path: '/prices', body: [{ token_id: '1' }, { token_id: '2', side: 'SELL' }], status: 200, expected: 2 },
  { name: 'array element field invalid (custom message)', path: '/prices', body: [{ token_id: 'x' }], status: 400, expected: { error: 'Invalid token id in first entry' } },
  { name: 'array element field invalid', path: '/prices', body: [{ token_id: '1' }, { token_id: 'y' }], status: 400, expected: { error: 'invalid [1].token_id' } },
  { name: 'array element field missing', path: '/prices', body: [{ token_id: '1' }, {}], status: 400, expected: { error: 'missing [1].token_id' } },
  { name: 'array too long', path: '/prices', body: [{ token_id: '1' }, { token_id: '1' }, { token_id: '1' }, { token_id: '1' }], status: 400, expected: { error: 'too many items: 4, max allowed: 3' } },
  { name: 'object where an array is due', path: '/prices', body: { token_id: '1' }, status: 400, expected: { error: 'invalid body' } },
];

for (const c of bodies) {
  test(`body validation: ${c.name}`, async () => {
    const r = await postJson(c.path, c.body);
    assert.equal(r.status, c.status, JSON.stringify(r.body));
    assert.deepEqual(r.body, c.expected);
  });
}

test('body validation, admin group: every problem is listed with its path', async () => {
  const r = await postJson(`/admin/wallets/${ADDRESS}/deposit`, { amount: '1.1234567', note: 'too long' });
  assert.equal(r.status, 400);
  const body = r.body as { error: string; errors: { path: string; message: string }[] };
  assert.equal(body.error, 'invalid request');
  assert.deepEqual(body.errors.map((e) => e.path).sort(), ['amount', 'note']);
  for (const e of body.errors) assert.equal(typeof e.message, 'string');
  const ok = await postJson(`/admin/wallets/${ADDRESS}/deposit`, { amount: '1.5' });
  assert.deepEqual(ok, { status: 200, body: { address: ADDRESS, amount: '1.5' } });
});

test('path parameter validation, admin group', async () => {
  const r = await postJson('/admin/wallets/0xnope/deposit', { amount: '1' });
  assert.equal(r.status, 400);
  const body = r.body as { error: string; errors: { path: string }[] };
  assert.equal(body.error, 'invalid request');
  assert.deepEqual(body.errors.map((e) => e.path), ['address']);
});
