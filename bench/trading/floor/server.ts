/**
 * The order path's floor: the least a signed, durably committed order can cost on this machine, measured
 * in the same run as the service (bench/trading/sweep.bench.ts compares the two). A prototype after the
 * probe in shared/probes/order-floor, kept here so that CI and every checkout have it.
 *
 * POST /order (one order) and POST /orders (a JSON array of up to 15 orders of one wallet), the load
 * tool's requests byte for byte (tools/load.ts), each answered after exactly this:
 *   1. the body, copied chunk by chunk as uWS hands it over (uWS reuses the buffer), then JSON.parse;
 *   2. L2 auth: the API key's record, its passphrase and address, the timestamp within 60 s, and
 *      HMAC-SHA256(secret, timestamp + method + path + body) compared in constant time;
 *   3. per order: the EIP-712 digest (src/edge/auth/eip712.ts, the service's own encoder: two keccak calls) and
 *      one native secp256k1 recovery on this thread, which must give the order's signer, its maker, and
 *      the request's address;
 *   4. one round trip to a worker thread (worker.ts echoes it), per request: the hop to the shard;
 *   5. one LMDB put per order into the environment src/journal/env.ts opens for the service (its options:
 *      durable commits, msgpack values), awaited until durable as the journal writer awaits it: the put's
 *      commit, then `root.flushed`. Puts issued in one event turn share a transaction (lmdb-js groups
 *      them), so flat out a commit carries several requests' orders, as the service's group commit does;
 *   6. the answer the service gives a resting order ({success, orderID: the digest, status "live"}),
 *      written inside cork.
 * Nothing else: no schema validation, replay guard, balance or order checks, matching, projections,
 * metrics or logging. What the service spends above this is what its design costs.
 *
 * Other routes: GET /time (the load tool warms its connections with it); POST /setup (the order domain
 * and the wallets' API keys, from the bench before each window; loopback only, unauthenticated); GET
 * /stats (orders committed and LMDB commits since start, commits slower than 20 ms from put to durable
 * since start, and the slowest commit since the previous GET /stats: the bench's self-check and its
 * commit columns).
 *
 * Run as the service is run (tools/service-process.ts `startService` with `entry`): npm start's node
 * flags, configured by HOST, PORT (0: the kernel picks; the `listening` line on stdout says which) and
 * DATA_DIR. SIGTERM closes the listen socket, the worker and the environment, and exits 0.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type { HttpRequest, HttpResponse, us_listen_socket } from 'uWebSockets.js';
import { orderDigestBytes, orderDomainSeparator, recoverAddress, type OrderDomain, type OrderStruct, type Secp256k1Recover } from '../../../src/edge/auth/eip712.ts';
import { loadUws } from '../../../src/edge/http/uws.ts';
import { startTsWorker } from '../../../src/engine/thread.ts';
import { openStore } from '../../../src/journal/env.ts';

const MAX_BODY_BYTES = 64 * 1024;
const MAX_BATCH = 15;
const CLOCK_SKEW_S = 60;
const STALL_MS = 20;

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 0);
const dataDir = process.env.DATA_DIR;
if (dataDir === undefined || dataDir === '') throw new Error('floor: DATA_DIR names no directory');

const secp = createRequire(import.meta.url)('secp256k1/bindings.js') as Secp256k1Recover;
const { uws } = loadUws(16 * 1024);
const store = openStore({ dataDir });
const worker = startTsWorker(new URL('./worker.ts', import.meta.url), {});

// ---- the worker round trip -------------------------------------------------------------------------

let tripId = 0;
const trips = new Map<number, () => void>();
worker.on('message', (id: number) => {
  const done = trips.get(id);
  trips.delete(id);
  done?.();
});
worker.on('error', (e) => {
  console.error(JSON.stringify({ msg: 'floor worker failed', error: String(e) }));
  process.exit(1);
});
const roundTrip = () =>
  new Promise<void>((resolve) => {
    const id = ++tripId;
    trips.set(id, resolve);
    worker.postMessage(id);
  });

// ---- the commit --------------------------------------------------------------------------------------

let seq = 0;
const stats = { orders: 0, commits: 0, over20ms: 0, longestMs: 0 };
let lastPut: Promise<boolean> | undefined;
let lastDurable: Promise<void> = Promise.resolve();

/** Puts the records and resolves once their transaction is durable (commit, then flush). */
function commit(records: readonly object[]): Promise<void> {
  let p: Promise<boolean> | undefined;
  for (const r of records) p = store.journal.put(++seq, r);
  // lmdb-js hands every put of one transaction the same promise: a new one is a new commit.
  if (p !== undefined && p !== lastPut) {
    lastPut = p;
    stats.commits++;
    const t0 = performance.now();
    lastDurable = p
      .then(() => store.root.flushed)
      .then(() => {
        const ms = performance.now() - t0;
        if (ms > STALL_MS) stats.over20ms++;
        if (ms > stats.longestMs) stats.longestMs = ms;
      });
  }
  return lastDurable.then(() => {
    stats.orders += records.length;
  });
}

// ---- authentication and orders ------------------------------------------------------------------------

interface Key {
  hmacKey: Buffer;
  passphrase: string;
  address: string;
}
let keys = new Map<string, Key>();
let separator: Uint8Array | undefined;

interface Outgoing {
  status: string;
  body: string;
}
const refuse = (why: string): Outgoing => ({ status: '400 Bad Request', body: JSON.stringify({ error: why }) });

interface Headers {
  apiKey: string;
  signature: string;
  timestamp: string;
  passphrase: string;
  address: string;
}

/** The key of a request whose L2 headers hold, else why not. */
function authenticate(h: Headers, path: string, body: Buffer): Key | string {
  const key = keys.get(h.apiKey);
  if (key === undefined || key.passphrase !== h.passphrase || key.address !== h.address.toLowerCase()) return 'unknown API key';
  const ts = Number(h.timestamp);
  if (!Number.isInteger(ts) || Math.abs(Date.now() / 1000 - ts) > CLOCK_SKEW_S) return 'stale timestamp';
  const want = createHmac('sha256', key.hmacKey).update(h.timestamp + 'POST' + path).update(body).digest();
  const got = Buffer.from(h.signature, 'hex');
  return got.length === want.length && timingSafeEqual(got, want) ? key : 'bad HMAC';
}

interface Submission {
  order: Omit<OrderStruct, 'side'> & { side: string; signature: string };
  owner: string;
}

/** The order's id when its signature recovers to its signer, maker and the request's key; else why not. */
function verify(s: Submission, apiKey: string, key: Key): string | { error: string } {
  const o = s?.order;
  if (typeof o !== 'object' || o === null || s.owner !== apiKey) return { error: 'malformed order' };
  const struct: OrderStruct = { ...o, side: o.side === 'SELL' ? 1 : 0 };
  let digest: Uint8Array;
  try {
    digest = orderDigestBytes(struct, separator!);
  } catch {
    return { error: 'malformed order field' };
  }
  const signer = recoverAddress(secp, digest, o.signature);
  if (signer === undefined || signer !== String(o.signer).toLowerCase() || signer !== String(o.maker).toLowerCase() || signer !== key.address) {
    return { error: 'signature does not recover to the maker' };
  }
  return '0x' + Buffer.from(digest).toString('hex');
}

const live = (id: string) => ({ success: true, errorMsg: '', orderID: id, status: 'live', makingAmount: '', takingAmount: '', transactionsHashes: [] });

async function place(h: Headers, path: '/order' | '/orders', body: Buffer): Promise<Outgoing> {
  if (separator === undefined) return refuse('POST /setup first');
  const key = authenticate(h, path, body);
  if (typeof key === 'string') return { status: '401 Unauthorized', body: JSON.stringify({ error: key }) };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return refuse('body is not JSON');
  }
  const list = path === '/order' ? [parsed as Submission] : (parsed as Submission[]);
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_BATCH) return refuse('expected 1..15 orders');
  const ids: string[] = [];
  for (const s of list) {
    const id = verify(s, h.apiKey, key);
    if (typeof id !== 'string') return refuse(id.error);
    ids.push(id);
  }
  await roundTrip();
  const at = Date.now();
  await commit(list.map((s, i) => ({ id: ids[i], owner: s.owner, ...s.order, at })));
  const answers = ids.map(live);
  return { status: '200 OK', body: JSON.stringify(path === '/order' ? answers[0] : answers) };
}

// ---- the uWS request lifecycle --------------------------------------------------------------------------

function respond(res: HttpResponse, aborted: { now: boolean }, out: Outgoing): void {
  if (aborted.now) return;
  res.cork(() => res.writeStatus(out.status).writeHeader('content-type', 'application/json').end(out.body));
}

/** Copies what it needs from `req` at once (it dies when this returns), then reads the body. */
function readBody(res: HttpResponse, then: (body: Buffer) => Promise<Outgoing> | Outgoing): void {
  const aborted = { now: false };
  res.onAborted(() => {
    aborted.now = true;
  });
  const chunks: Buffer[] = [];
  let size = 0;
  res.onData((chunk, last) => {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) {
      if (last) respond(res, aborted, { status: '413 Payload Too Large', body: '{"error":"body too large"}' });
      return;
    }
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (!last) return;
    Promise.resolve()
      .then(() => then(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
      .then(
        (out) => respond(res, aborted, out),
        (e: unknown) => respond(res, aborted, { status: '500 Internal Server Error', body: JSON.stringify({ error: String(e) }) }),
      );
  });
}

const headersOf = (req: HttpRequest): Headers => ({
  apiKey: req.getHeader('svc_api_key'),
  signature: req.getHeader('svc_signature'),
  timestamp: req.getHeader('svc_timestamp'),
  passphrase: req.getHeader('svc_passphrase'),
  address: req.getHeader('svc_address'),
});

interface Setup {
  orderDomain: OrderDomain;
  keys: Array<{ apiKey: string; secret: string; passphrase: string; address: string }>;
}

const app = uws
  .App()
  .get('/time', (res) => {
    res.cork(() => res.writeHeader('content-type', 'application/json').end(String(Math.floor(Date.now() / 1000))));
  })
  .get('/stats', (res) => {
    const body = JSON.stringify(stats);
    stats.longestMs = 0;
    res.cork(() => res.writeHeader('content-type', 'application/json').end(body));
  })
  .post('/setup', (res) => {
    readBody(res, (body) => {
      const s = JSON.parse(body.toString('utf8')) as Setup;
      separator = orderDomainSeparator(s.orderDomain);
      keys = new Map(s.keys.map((k) => [k.apiKey, { hmacKey: Buffer.from(k.secret, 'base64'), passphrase: k.passphrase, address: k.address.toLowerCase() }]));
      return { status: '200 OK', body: JSON.stringify({ keys: keys.size }) };
    });
  })
  .post('/order', (res, req) => {
    const h = headersOf(req);
    readBody(res, (body) => place(h, '/order', body));
  })
  .post('/orders', (res, req) => {
    const h = headersOf(req);
    readBody(res, (body) => place(h, '/orders', body));
  })
  .any('/*', (res) => {
    res.cork(() => res.writeStatus('404 Not Found').end('{"error":"not found"}'));
  });

let listenSocket: us_listen_socket | undefined;
app.listen(host, port, (socket) => {
  if (!socket) {
    console.error(JSON.stringify({ msg: 'floor could not listen', host, port }));
    process.exit(1);
  }
  listenSocket = socket;
  console.log(JSON.stringify({ msg: 'listening', port: uws.us_socket_local_port(socket) }));
});

process.once('SIGTERM', () => {
  if (listenSocket !== undefined) uws.us_listen_socket_close(listenSocket);
  void worker
    .terminate()
    .then(() => store.close())
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
});
