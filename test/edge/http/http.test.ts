/**
 * The HTTP edge's request lifecycle through real HTTP on 127.0.0.1 (DESIGN sections 3 and 4, STYLE 11):
 * health and time through the real app, 404/405 fallbacks, malformed JSON, the body cap with a declared
 * Content-Length and with chunked uploads, handler faults, async handlers and clients that go away
 * mid-request, and signed routes refusing a caller on its headers before a byte of its body is read (issue
 * 31). Each case checks that the server keeps serving afterwards.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { pino } from 'pino';
import { Type } from '@sinclair/typebox';
import type { us_listen_socket } from 'uWebSockets.js';
import { startApp, type App } from '../../../src/app.ts';
import { apiError } from '../../../src/domain/errors.ts';
import { route } from '../../../src/edge/pipeline/route.ts';
import { testConfig } from '../../../src/runtime/config.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { InFlight, LINGER_BYTES, LINGER_MS, headerNamesOf, serve, type Incoming, type Processor, type ServeOptions } from '../../../src/edge/http/http.ts';
import { ManualClock } from '../../../src/runtime/clock.ts';
import { loadUws } from '../../../src/edge/http/uws.ts';
import { get, rawHttp, sleep, startTestServer, tempDir, waitFor, type TestServer } from '../../fixtures/edge.ts';

const CAP = 1024 * 1024;

interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One request on its own connection (agent: false), so a server-side close cannot leak into the next case. */
function request(port: number, o: { method?: string; path: string; headers?: Record<string, string>; body?: Buffer | string; chunks?: Buffer[] }): Promise<Res> {
  return new Promise((resolve, reject) => {
    let responded = false;
    const req = http.request({ host: '127.0.0.1', port, method: o.method ?? 'GET', path: o.path, headers: o.headers, agent: false }, (res) => {
      responded = true;
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    // After the answer the server may close while the request object still has work queued: the answer
    // is what counts. An error before it (EPIPE, reset) fails the caller.
    req.on('error', (e) => {
      if (!responded) reject(e);
    });
    if (o.chunks) {
      let i = 0;
      const pump = () => {
        while (i < o.chunks!.length) {
          if (req.destroyed) return;
          if (!req.write(o.chunks![i++])) {
            req.once('drain', pump);
            return;
          }
        }
        req.end();
      };
      pump();
    } else {
      req.end(o.body);
    }
  });
}

/** A JSON document of exactly `n` bytes: {"pad":"xxx..."}. */
function jsonOfSize(n: number): Buffer {
  const overhead = '{"pad":""}'.length;
  return Buffer.from(`{"pad":"${'x'.repeat(n - overhead)}"}`);
}

const chunksOf = (buf: Buffer, size: number): Buffer[] => {
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
};

// ---- the real app: GET /, GET /time, fallbacks ------------------------------------------------------

let app: App;
let appBase: string;

// ---- a server with one test route per lifecycle concern ----------------------------------------------

let srv: TestServer;
const logLines: Record<string, unknown>[] = [];
const slow = { started: 0, finished: 0 };

before(async () => {
  app = await startApp(testConfig({ dataDir: tempDir(), http: { port: 0 }, rateLimits: { enabled: false } }), { log: silentLogger });
  appBase = `http://127.0.0.1:${app.port}`;

  const log = pino({ level: 'error' }, { write: (s: string) => void logLines.push(JSON.parse(s) as Record<string, unknown>) });
  srv = await startTestServer(
    [
      route({ method: 'GET', path: '/', group: 'ops', summary: 'health', handler: () => 'OK' }),
      route({
        method: 'POST',
        path: '/echo',
        group: 'clob',
        summary: 'echo the body size',
        body: Type.Object({ pad: Type.String() }),
        handler: (r) => ({ bytes: r.rawBody?.length ?? 0, padLength: r.body.pad.length }),
      }),
      route({ method: 'PUT', path: '/echo', group: 'clob', summary: 'same path, other method', handler: () => 'put' }),
      route({ method: 'GET', path: '/boom', group: 'clob', summary: 'throws', handler: () => { throw new Error('kaboom'); } }),
      route({ method: 'GET', path: '/boom-async', group: 'clob', summary: 'rejects', handler: async () => { await sleep(5); throw new Error('async kaboom'); } }),
      route({ method: 'GET', path: '/teapot', group: 'clob', summary: 'catalogue error', handler: () => { throw apiError('PM_ERR_NOT_FOUND_ENTITY', { detail: 'no such token' }); } }),
      route({ method: 'GET', path: '/async', group: 'clob', summary: 'async', handler: async () => { await sleep(20); return { late: true }; } }),
      route({
        method: 'GET',
        path: '/slow',
        group: 'clob',
        summary: 'slow',
        handler: async () => {
          slow.started++;
          await sleep(300);
          slow.finished++;
          return { slow: true };
        },
      }),
    ],
    { maxBodyBytes: CAP, log },
  );
});

after(async () => {
  await srv.close();
  await app.stop();
});

test('GET / answers 200 with the JSON string "OK"', async () => {
  const r = await fetch(`${appBase}/`);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /application\/json/);
  assert.equal(await r.text(), '"OK"');
});

test('GET /time answers a bare integer of unix seconds within a second of now', async () => {
  const r = await fetch(`${appBase}/time`);
  assert.equal(r.status, 200);
  const text = await r.text();
  assert.match(text, /^\d+$/);
  assert.ok(Math.abs(Number(text) - Date.now() / 1000) <= 1, `time ${text} vs ${Date.now() / 1000}`);
});

const notFound = [
  { name: 'unknown path', method: 'GET', path: '/nope' },
  { name: 'unknown nested path', method: 'GET', path: '/time/extra' },
  { name: 'unknown path with POST', method: 'POST', path: '/nope' },
  { name: 'unknown path with query', method: 'GET', path: '/nope?x=1' },
];
for (const c of notFound) {
  test(`404 {"error":"not found"}: ${c.name}`, async () => {
    const r = await fetch(`${appBase}${c.path}`, { method: c.method });
    assert.equal(r.status, 404);
    assert.match(r.headers.get('content-type') ?? '', /application\/json/);
    assert.deepEqual(await r.json(), { error: 'not found' });
  });
}

const wrongMethod = [
  { name: 'POST on GET /time (app)', base: () => appBase, method: 'POST', path: '/time', allow: ['GET'] },
  { name: 'DELETE on GET / (app)', base: () => appBase, method: 'DELETE', path: '/', allow: ['GET'] },
  { name: 'PATCH on POST+PUT /echo', base: () => srv.base, method: 'PATCH', path: '/echo', allow: ['POST', 'PUT'] },
  { name: 'GET on POST+PUT /echo, trailing slash', base: () => srv.base, method: 'GET', path: '/echo/', allow: ['POST', 'PUT'] },
];
for (const c of wrongMethod) {
  test(`405 with Allow: ${c.name}`, async () => {
    const r = await fetch(`${c.base()}${c.path}`, { method: c.method });
    assert.equal(r.status, 405);
    assert.deepEqual(await r.json(), { error: 'method not allowed' });
    const allow = (r.headers.get('allow') ?? '').split(',').map((s) => s.trim()).sort();
    assert.deepEqual(allow, c.allow);
  });
}

test('HEAD on a GET route: 405 with Allow and no body, and the keep-alive connection stays in sync', async () => {
  // RFC 9110 9.3.2: a response to HEAD carries no content. Bytes after the header block would be read
  // as the start of the next response on the same connection.
  const r = await rawHttp(app.port, [`HEAD /time HTTP/1.1\r\nHost: x\r\n\r\n`, get('/time')], { responses: 2, headOnly: [true, false] });
  assert.equal(r.responses.length, 2, `got ${JSON.stringify(r.bytes.toString('latin1'))}`);
  assert.equal(r.responses[0].status, 405);
  assert.equal(r.responses[0].headers['allow'], 'GET');
  assert.equal(r.responses[1].status, 200, `second response: ${JSON.stringify(r.bytes.toString('latin1'))}`);
  assert.match(r.responses[1].body.toString(), /^\d+$/);
  const unknown = await rawHttp(app.port, [`HEAD /nope HTTP/1.1\r\nHost: x\r\n\r\n`, get('/')], { responses: 2, headOnly: [true, false] });
  assert.equal(unknown.responses[0]?.status, 404);
  assert.equal(unknown.responses[1]?.status, 200, `second response: ${JSON.stringify(unknown.bytes.toString('latin1'))}`);
  assert.equal(unknown.responses[1]?.body.toString(), '"OK"');
});

const badJson = [
  { name: 'truncated object', body: '{"pad":' },
  { name: 'single quotes', body: "{'pad':'x'}" },
  { name: 'bare word', body: 'nul' },
  { name: 'trailing comma', body: '{"pad":"x",}' },
  { name: 'whitespace only', body: '   ' },
  { name: 'invalid UTF-8 bytes as the document', body: Buffer.from([0xff, 0xfe, 0xfd]) },
  { name: 'NUL byte', body: Buffer.from('{"pad":"\u0000"}') },
];
for (const c of badJson) {
  test(`malformed JSON on a body route -> 400 invalid JSON body: ${c.name}`, async () => {
    const r = await request(srv.port, { method: 'POST', path: '/echo', headers: { 'content-type': 'application/json' }, body: c.body });
    assert.equal(r.status, 400);
    assert.deepEqual(JSON.parse(r.text), { error: 'invalid JSON body' });
  });
}

const TOO_DEEP = { error: 'invalid JSON body: nested deeper than 32 levels' };

test('nesting past the bound is found as the body arrives, wherever a chunk ends: 400, and the server keeps serving', async () => {
  // Sound until the 900th byte, then 40 levels: the bound is passed in a later chunk than the first.
  const late = Buffer.from(`{"pad":"${'x'.repeat(880)}","n":${'['.repeat(40)}${']'.repeat(40)}}`);
  const huge = Buffer.from('['.repeat(400_000) + ']'.repeat(400_000));
  for (const [body, size] of [[late, 7], [late, 256], [huge, 64 * 1024]] as const) {
    const r = await request(srv.port, { method: 'POST', path: '/echo', headers: { 'content-type': 'application/json' }, chunks: chunksOf(body, size) });
    assert.deepEqual([r.status, JSON.parse(r.text)], [400, TOO_DEEP], `${body.length} bytes in chunks of ${size}`);
  }
  // Brackets inside a string are not nesting, also when chunks cut the string (and its escapes) apart.
  const inString = Buffer.from(`{"pad":"\\"${'['.repeat(100)}"}`);
  const r = await request(srv.port, { method: 'POST', path: '/echo', headers: { 'content-type': 'application/json' }, chunks: chunksOf(inString, 3) });
  assert.deepEqual([r.status, JSON.parse(r.text)], [200, { bytes: inString.length, padLength: 101 }]);
  assert.equal((await request(srv.port, { path: '/' })).status, 200);
});

test('serve() keeps none of a body past the nesting bound: the processor gets bodyTooDeep and no bytes; a sound body arrives whole, marked scanned', async () => {
  const { uws } = loadUws(16384);
  const seen: Incoming[] = [];
  const opts: ServeOptions = {
    method: 'POST', allHeaders: false, headerNames: ['content-length'], paramCount: 0, readBody: true, maxBodyBytes: CAP, maxJsonDepth: 32,
    tooLarge: () => ({ status: 413, body: '{}' }), badFraming: () => ({ status: 400, body: '{}' }), onFault: () => ({ status: 500, body: '{}' }), tracker: new InFlight(),
  };
  const bare = uws.App().post('/*', (res, req) => serve(res, req, opts, (incoming) => (seen.push(incoming), { status: 200, body: '{}' })));
  const token = await new Promise<us_listen_socket>((resolve) => bare.listen('127.0.0.1', 0, (t) => resolve(t)));
  try {
    const port = uws.us_socket_local_port(token);
    const deep = Buffer.from('['.repeat(400_000) + ']'.repeat(400_000));
    const sound = Buffer.from(`{"pad":"${'['.repeat(100)}"}`);
    for (const body of [deep, sound]) {
      const r = await request(port, { method: 'POST', path: '/x', headers: { 'content-type': 'application/json' }, chunks: chunksOf(body, 16 * 1024) });
      assert.equal(r.status, 200);
    }
    // A scanned body says which it was (false: sound, so the parse stage does not scan it again).
    assert.deepEqual(seen.map((x) => [x.bodyTooDeep, x.body?.length]), [[true, undefined], [false, sound.length]]);
  } finally {
    uws.us_listen_socket_close(token);
  }
});

test('invalid UTF-8 inside a JSON string is decoded with U+FFFD replacement, not refused', async () => {
  const body = Buffer.concat([Buffer.from('{"pad":"'), Buffer.from([0xff, 0xc3]), Buffer.from('"}')]);
  const r = await request(srv.port, { method: 'POST', path: '/echo', body });
  assert.equal(r.status, 200);
  assert.deepEqual(JSON.parse(r.text), { bytes: body.length, padLength: 2 });
});

test('empty body on a body route fails validation (400), not the JSON parser', async () => {
  const r = await request(srv.port, { method: 'POST', path: '/echo', body: '' });
  assert.equal(r.status, 400);
  assert.equal(typeof JSON.parse(r.text).error, 'string');
  assert.notEqual(JSON.parse(r.text).error, 'invalid JSON body');
});

const twoMiB = jsonOfSize(2 * 1024 * 1024);
const bodyCap = [
  { name: '2 MiB with Content-Length', body: twoMiB, chunked: false, status: 413 },
  { name: '2 MiB chunked (no Content-Length)', body: twoMiB, chunked: true, status: 413 },
  { name: 'cap + 1 with Content-Length', body: jsonOfSize(CAP + 1), chunked: false, status: 413 },
  { name: 'cap + 1 chunked', body: jsonOfSize(CAP + 1), chunked: true, status: 413 },
  { name: 'exactly the cap with Content-Length', body: jsonOfSize(CAP), chunked: false, status: 200 },
  { name: 'exactly the cap chunked', body: jsonOfSize(CAP), chunked: true, status: 200 },
  { name: 'just under the cap', body: jsonOfSize(CAP - 1), chunked: false, status: 200 },
];
for (const c of bodyCap) {
  test(`body cap: ${c.name} -> ${c.status}, then the server still answers`, async () => {
    const r = c.chunked
      ? await request(srv.port, { method: 'POST', path: '/echo', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, chunks: chunksOf(c.body, 64 * 1024) })
      : await request(srv.port, { method: 'POST', path: '/echo', headers: { 'content-type': 'application/json', 'content-length': String(c.body.length) }, body: c.body });
    assert.equal(r.status, c.status, r.text.slice(0, 200));
    if (c.status === 413) assert.deepEqual(JSON.parse(r.text), { error: 'request body too large' });
    else assert.deepEqual(JSON.parse(r.text), { bytes: c.body.length, padLength: c.body.length - 10 });
    const next = await request(srv.port, { path: '/' });
    assert.equal(next.status, 200);
    assert.equal(next.text, '"OK"');
  });
}

test('413 on a keep-alive connection closes it, so the unread upload is never parsed as a request', async () => {
  // Declared 2 MiB, send a little of it; the bytes that follow would otherwise be read as the next request.
  // The upload never completes, so the 413 comes when the lingering close gives up (LINGER_MS).
  const head = `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n`;
  const r = await rawHttp(srv.port, [head, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'], { timeoutMs: LINGER_MS + 2000 });
  assert.equal(r.responses.length, 1, r.bytes.toString('latin1'));
  assert.equal(r.responses[0].status, 413);
  assert.equal(r.closedByServer, true);
  assert.equal((await request(srv.port, { path: '/' })).status, 200);
});

test('a handler that throws answers 500 {"error":"internal error"}, is logged, and the server keeps serving', async () => {
  for (const path of ['/boom', '/boom-async']) {
    logLines.length = 0;
    const r = await request(srv.port, { path });
    assert.equal(r.status, 500);
    assert.deepEqual(JSON.parse(r.text), { error: 'internal error' });
    assert.ok(logLines.some((l) => l.route === path && l.level === 50), `error logged for ${path}: ${JSON.stringify(logLines)}`);
    assert.equal((await request(srv.port, { path: '/' })).status, 200);
  }
});

test('a handler that throws a catalogue error answers that error, not 500', async () => {
  const r = await request(srv.port, { path: '/teapot' });
  assert.equal(r.status, 404);
  assert.deepEqual(JSON.parse(r.text), { error: 'no such token' });
});

test('async handler: the awaited value is the 200 body', async () => {
  const rs = await Promise.all(Array.from({ length: 20 }, () => request(srv.port, { path: '/async' })));
  for (const r of rs) {
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text), { late: true });
  }
});

test('a client that disconnects mid-body does not crash the server or leak an in-flight slot', async () => {
  const head = `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
  // Headers plus a third of the body, then the socket is destroyed by the timeout.
  const r = await rawHttp(srv.port, [head, '{"pad":"' + 'x'.repeat(300)], { timeoutMs: 150 });
  assert.equal(r.responses.length, 0);
  const chunked = `POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{"pad":"xxxxxxxx\r\n`;
  await rawHttp(srv.port, chunked, { timeoutMs: 150 });
  await waitFor(() => srv.server.inFlight.size === 0, 2000, 'in-flight count back to 0');
  const next = await request(srv.port, { method: 'POST', path: '/echo', body: '{"pad":"ok"}' });
  assert.equal(next.status, 200);
  assert.deepEqual(JSON.parse(next.text), { bytes: 12, padLength: 2 });
});

test('a client that disconnects while an async handler runs: the late answer is dropped, the server lives', async () => {
  const before = { ...slow };
  const pending = rawHttp(srv.port, get('/slow'), { timeoutMs: 60 });
  await waitFor(() => slow.started === before.started + 1, 2000, 'slow handler to start');
  const r = await pending;
  assert.equal(r.responses.length, 0, 'the client left before the answer');
  await waitFor(() => slow.finished === before.finished + 1, 2000, 'slow handler to finish');
  await sleep(20);
  assert.equal(srv.server.inFlight.size, 0);
  const next = await request(srv.port, { path: '/slow' });
  assert.equal(next.status, 200);
  assert.deepEqual(JSON.parse(next.text), { slow: true });
});

test('GET with a body on a GET route is answered and does not desync the connection', async () => {
  const r = await rawHttp(srv.port, ['GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello', get('/')], { responses: 2 });
  assert.deepEqual(r.responses.map((x) => [x.status, x.body.toString()]), [[200, '"OK"'], [200, '"OK"']]);
});

test('header names with any token character (the spec\'s SVC_* / POLY_* auth headers among them) are answered', async () => {
  const names = ['SVC_API_KEY', 'POLY_ADDRESS', 'x.dotted', 'x~tilde', "x!#$%&'*+^`|", 'Mixed_Case-Name'];
  const r = await rawHttp(app.port, `GET /time HTTP/1.1\r\nHost: x\r\n${names.map((n) => `${n}: v\r\n`).join('')}Connection: close\r\n\r\n`, { timeoutMs: 1500, untilFinal: true });
  assert.equal(r.responses[0]?.status, 200, `no answer within 1.5 s (closedByServer=${r.closedByServer})`);
});

test('a request head within http.maxHeaderBytes is served; a longer one gets the parser\'s 431 and the server keeps serving', async () => {
  const bound = testConfig().http.maxHeaderBytes;
  const headOf = (padding: number) => `GET /time HTTP/1.1\r\nHost: x\r\nX-Pad: ${'p'.repeat(padding)}\r\nConnection: close\r\n\r\n`;
  const within = await rawHttp(app.port, headOf(bound - 1024), { timeoutMs: 2000, untilFinal: true });
  assert.equal(within.responses[0]?.status, 200, 'a head 1 KiB under the bound');
  const over = await rawHttp(app.port, headOf(bound + 1024), { timeoutMs: 2000, untilFinal: true });
  assert.equal(over.responses[0]?.status, 431, 'a head 1 KiB over the bound');
  const next = await request(app.port, { path: '/time' });
  assert.equal(next.status, 200);
});

test('413 the client can read: Node\'s http client keeps writing a 2 MiB upload and still gets the JSON answer, every time', async () => {
  const body = Buffer.alloc(2 * 1024 * 1024, 0x61);
  for (let i = 0; i < 10; i++) {
    const chunked = i % 2 === 1;
    const r = chunked
      ? await request(app.port, { method: 'POST', path: '/prices', headers: { 'content-type': 'application/json' }, chunks: chunksOf(body, 64 * 1024) })
      : await request(app.port, { method: 'POST', path: '/prices', headers: { 'content-type': 'application/json', 'content-length': String(body.length) }, body });
    assert.equal(r.status, 413, `attempt ${i} (${chunked ? 'chunked' : 'Content-Length'})`);
    assert.deepEqual(JSON.parse(r.text), { error: 'request body too large' });
  }
  assert.equal((await request(app.port, { path: '/' })).status, 200);
});

/** A raw client that keeps sending until the server closes; resolves with what it read. */
function endlessUpload(port: number, head: string, chunk: Buffer): Promise<{ read: string; ms: number; sent: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let read = '';
    let sent = 0;
    const sock = net.connect(port, '127.0.0.1', () => {
      sock.write(head);
      const pump = () => {
        while (!sock.destroyed && sock.write(chunk)) sent += chunk.length;
      };
      sock.on('drain', pump);
      pump();
    });
    sock.on('data', (d: Buffer) => (read += d.toString('latin1')));
    sock.on('error', () => undefined);
    sock.on('close', () => resolve({ read, ms: Date.now() - t0, sent }));
  });
}

test('a raw client that keeps sending gets the 413, is cut off within the linger bound, and others are served meanwhile', async () => {
  const chunk = Buffer.alloc(64 * 1024, 0x62);
  const cases = [
    // Declared far beyond what the lingering close would read: answered at once.
    { name: 'declared 100 MB', head: 'POST /prices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n', data: chunk },
    // Chunked without end: read and discarded up to the bound, then answered.
    { name: 'endless chunked', head: 'POST /prices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n', data: Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) },
  ];
  for (const c of cases) {
    const upload = endlessUpload(app.port, c.head, c.data);
    const other = await request(app.port, { path: '/time' });
    assert.equal(other.status, 200, `${c.name}: another client is served while the upload runs`);
    const r = await upload;
    assert.match(r.read, /^HTTP\/1\.1 413 /, `${c.name}: read ${JSON.stringify(r.read.slice(0, 80))}`);
    assert.ok(r.read.endsWith('{"error":"request body too large"}'), c.name);
    assert.ok(r.ms < LINGER_MS + 2000, `${c.name}: cut off after ${r.ms} ms`);
    assert.ok(r.sent < CAP + LINGER_BYTES + 16 * 1024 * 1024, `${c.name}: ${r.sent} bytes accepted before the close`);
  }
  assert.equal((await request(app.port, { path: '/' })).status, 200);
});

// ---- refused on the headers, before the body (issue 31) -------------------------------------------------

const UNAUTHORIZED = '{"error":"Unauthorized/Invalid api key"}';
const MiB = 1024 * 1024;

/** A request head declaring a body of `length` bytes (the body itself is for the caller to send, or not). */
const postHead = (path: string, length: number, headers: Record<string, string> = {}) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}Content-Length: ${length}\r\n\r\n`;

test('serve(): a beforeBody refusal is answered before any body byte is sent; the connection is kept only when the whole body came with the head', async () => {
  const { uws } = loadUws(16384);
  const ran: string[] = [];
  const processor: Processor = (incoming) => (ran.push(incoming.path), { status: 200, body: '"ran"' });
  processor.beforeBody = (incoming) => (incoming.headers['x-deny'] !== undefined ? { status: 401, body: '{"error":"no"}' } : undefined);
  const opts: ServeOptions = {
    method: 'POST', allHeaders: true, headerNames: [], paramCount: 0, readBody: true, maxBodyBytes: CAP,
    tooLarge: () => ({ status: 413, body: '{}' }), badFraming: () => ({ status: 400, body: '{}' }), onFault: () => ({ status: 500, body: '{}' }), tracker: new InFlight(),
  };
  const bare = uws.App().post('/*', (res, req) => serve(res, req, opts, processor));
  const token = await new Promise<us_listen_socket>((resolve) => bare.listen('127.0.0.1', 0, (t) => resolve(t)));
  try {
    const port = uws.us_socket_local_port(token);
    const next = postHead('/next', 2) + '{}';

    // Headers, then nothing: the refusal comes anyway, and the connection is closed (its body is never read).
    const t0 = Date.now();
    const stalled = await rawHttp(port, postHead('/stalled', MiB, { 'X-Deny': '1' }), { timeoutMs: 3000 });
    assert.deepEqual(stalled.responses.map((r) => [r.status, r.body.toString(), r.headers['connection']]), [[401, '{"error":"no"}', 'close']]);
    assert.equal(stalled.closedByServer, true);
    assert.ok(Date.now() - t0 < 1500, `answered after ${Date.now() - t0} ms`);

    // Part of the body with the head: refused and closed; what follows is never parsed as a request.
    const partial = await rawHttp(port, postHead('/partial', 1000, { 'X-Deny': '1' }) + 'x'.repeat(100), { timeoutMs: 3000 });
    assert.deepEqual(partial.responses.map((r) => r.status), [401]);
    assert.equal(partial.closedByServer, true);

    // The whole body in the read that carried the head: nothing is left unread, so the connection is kept
    // and the next request on it is served.
    const whole = await rawHttp(port, postHead('/whole', 10, { 'X-Deny': '1' }) + '0123456789' + next, { responses: 2, timeoutMs: 3000 });
    assert.deepEqual(whole.responses.map((r) => [r.status, r.body.toString()]), [[401, '{"error":"no"}'], [200, '"ran"']]);

    // A request beforeBody lets through runs once its body is in.
    const through = await rawHttp(port, postHead('/through', 2) + '{}', { responses: 1, timeoutMs: 3000 });
    assert.deepEqual(through.responses.map((r) => r.status), [200]);
    assert.deepEqual(ran, ['/next', '/through'], 'the processor never ran for a refused request');
    await waitFor(() => opts.tracker.size === 0, 2000, 'no request left in flight');
  } finally {
    uws.us_listen_socket_close(token);
  }
});

test('serve(): a route that sees every header keeps only the names it reads as keys; the others arrive as names, in order, framing still checked', async () => {
  const { uws } = loadUws(16384);
  const seen: Array<{ headers: Record<string, string>; other: readonly string[] | undefined; names: string[] }> = [];
  const processor: Processor = (incoming) => (seen.push({ headers: { ...incoming.headers }, other: incoming.otherHeaders, names: headerNamesOf(incoming) }), { status: 200, body: '"ran"' });
  const opts: ServeOptions = {
    method: 'POST', allHeaders: true, headerNames: [], keptHeaders: new Set(['poly_address', 'host']), paramCount: 0, readBody: true, maxBodyBytes: CAP,
    tooLarge: () => ({ status: 413, body: '{}' }), badFraming: () => ({ status: 400, body: '{}' }), onFault: () => ({ status: 500, body: '{}' }), tracker: new InFlight(),
  };
  const bare = uws.App().post('/*', (res, req) => serve(res, req, opts, processor));
  const token = await new Promise<us_listen_socket>((resolve) => bare.listen('127.0.0.1', 0, (t) => resolve(t)));
  try {
    const port = uws.us_socket_local_port(token);
    const made = Array.from({ length: 5 }, (_, i) => `x-${i}-${'q'.repeat(300)}`);
    const head = `POST /k HTTP/1.1\r\nHost: x\r\nPOLY_ADDRESS: 0xab\r\n${made.map((n) => `${n}: 1\r\n`).join('')}Content-Length: 2\r\n\r\n{}`;
    const r = await rawHttp(port, head, { responses: 1, timeoutMs: 3000 });
    assert.deepEqual(r.responses.map((x) => x.status), [200]);
    assert.deepEqual(seen[0]!.headers, { host: 'x', poly_address: '0xab', 'content-length': '2' }, 'only the kept names (and framing) are keys');
    assert.deepEqual(seen[0]!.other, made, 'the made-up names, in arrival order');
    assert.deepEqual(seen[0]!.names.sort(), ['content-length', 'host', 'poly_address', ...made].sort());
    // Framing headers are kept whatever the set says, so a conflict is still refused.
    const twice = await rawHttp(port, 'POST /k HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', { timeoutMs: 3000 });
    assert.deepEqual(twice.responses.map((x) => x.status), [400]);
    await waitFor(() => opts.tracker.size === 0, 2000, 'no request left in flight');
  } finally {
    uws.us_listen_socket_close(token);
  }
});

const SIGNED_WRITES = ['/merge', '/split', '/v1/heartbeats'];

test('signed routes refuse a caller without credentials before its body: headers, then a stall, get the same 401 at once', async () => {
  const foreign = { SVC_ADDRESS: '0x' + '11'.repeat(20), SVC_API_KEY: '00000000-0000-4000-8000-000000000000', SVC_PASSPHRASE: 'x', SVC_TIMESTAMP: String(Math.floor(Date.now() / 1000)), SVC_SIGNATURE: 'ab'.repeat(32) };
  for (const path of SIGNED_WRITES) {
    for (const [name, headers] of [['no credentials', {}], ['an unknown key', foreign]] as const) {
      const t0 = Date.now();
      // No body byte is ever sent: an answer at all is an answer before the body.
      const r = await rawHttp(app.port, postHead(path, MiB, headers), { timeoutMs: 3000 });
      const label = `${path}, ${name}`;
      assert.equal(r.responses.length, 1, `${label}: no answer before the body (${JSON.stringify(r.bytes.toString('latin1'))})`);
      assert.equal(r.responses[0].status, 401, label);
      assert.equal(r.responses[0].body.toString(), UNAUTHORIZED, label);
      assert.equal(r.closedByServer, true, `${label}: the unread body is not left on a live connection`);
      assert.ok(Date.now() - t0 < 1500, `${label}: answered after ${Date.now() - t0} ms`);
    }
  }
  assert.equal((await request(app.port, { path: '/' })).status, 200);
});

test('a refused 1 MiB upload: Node\'s http client, still writing, reads the same 401; a small one keeps its connection', async () => {
  const body = jsonOfSize(MiB);
  for (const path of SIGNED_WRITES) {
    for (const chunked of [false, true]) {
      const r = chunked
        ? await request(app.port, { method: 'POST', path, headers: { 'content-type': 'application/json' }, chunks: chunksOf(body, 64 * 1024) })
        : await request(app.port, { method: 'POST', path, headers: { 'content-type': 'application/json', 'content-length': String(body.length) }, body });
      assert.deepEqual([r.status, r.text], [401, UNAUTHORIZED], `${path} (${chunked ? 'chunked' : 'Content-Length'})`);
    }
  }
  const small = await rawHttp(app.port, [postHead('/merge', 2) + '{}' + get('/')], { responses: 2, timeoutMs: 3000 });
  assert.deepEqual(small.responses.map((r) => [r.status, r.body.toString()]), [[401, UNAUTHORIZED], [200, '"OK"']]);
});

test('a refusal before the body is charged to the client address, as after it: past the cap it answers 429, still before the body', async () => {
  const clock = new ManualClock();
  const limited = await startApp(testConfig({ dataDir: tempDir(), http: { port: 0 }, rateLimits: { enabled: true, buckets: { clob: { limit: 3, windowSeconds: 600 } } } }), { clock, log: silentLogger });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await rawHttp(limited.port, postHead('/merge', MiB), { timeoutMs: 3000 });
      statuses.push(r.responses[0]?.status ?? 0);
    }
    assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
    // The same address, another route of the bucket: the refusals were charged to it.
    assert.equal((await request(limited.port, { path: '/version' })).status, 429);
  } finally {
    await limited.stop(1000);
  }
});
