/**
 * Signed-order load generator: drives POST /order (or POST /orders, `--batch`) of a running service with
 * orders signed by test wallets, then checks that the service's books and balances agree with what it
 * acknowledged.
 *
 *   npx tsx --expose-gc tools/load.ts --url http://127.0.0.1:8080 --admin-token T [--wallets 50] [--duration 10]
 *       [--rate 2400 | --flat-out] [--connections 32] [--pipelining 1] [--markets 8] [--batch 1]
 *       [--mix resting|crossing|mixed] [--max-orders N] [--seed S] [--verify-sample 2000] [--no-verify]
 *       [--transport raw|http|fetch]
 *
 * The programmatic API (`runLoad`, or `prepareLoad` / `driveLoad` / `verifyLoad` separately) is what the CI
 * gate (test/load/load-gate.ts) and the benchmark (bench/trading/orders.bench.ts) use.
 *
 * Phases. Only phase 3 is timed.
 *   1. setup: GET /exchange-info (order domain), a fresh event with `--markets` binary markets through
 *      POST /admin/events (zero fees, tick 0.01, minimum size 5), wallets from seeded private keys (viem
 *      `privateKeyToAccount`), each funded through POST /admin/wallets/:address/deposit with exactly what
 *      its orders can reserve, and an API key per wallet (L1 EIP-712 ClobAuth, POST /auth/api-key, derive
 *      when the nonce is taken).
 *   2. pre-signing: every order the run can send is signed before the window (EIP-712 V2 struct of DESIGN
 *      section 5 under the domain of /exchange-info: src/edge/auth/eip712.ts digest + native secp256k1, one
 *      thread per core) and serialized once (with `--batch N > 1`, also every request body: a JSON array
 *      of N consecutive order submissions). The first order of every wallet is re-hashed and recovered
 *      with viem, so a digest bug cannot hide behind the service using the same encoder.
 *   3. the window: open loop at `--rate` (order i is due at t0 + i/rate; its latency runs from that due
 *      time, not from when a connection was free, so a stalled server cannot hide behind a slowed client:
 *      no coordinated omission) or `--flat-out` (every connection kept busy until `--duration` ends;
 *      latency from the send). Just before it the client collects its own heap when the process runs
 *      with `--expose-gc` (settleHeap), so its own GC pauses are not timed as the service's latency.
 *      L2 HMAC headers are computed per request at send time (a timestamp must
 *      be fresh; HMAC-SHA256 is microseconds). The default transport is a minimal HTTP/1.1 client over
 *      keep-alive sockets (`raw`): it costs the client several times less CPU per request than
 *      `node:http` with a keep-alive Agent or undici's global fetch (both kept for comparison), and on a
 *      two-core machine every microsecond the client spends is taken from the server. Header names are
 *      the spec's (`SVC_API_KEY`).
 *      Batches (`--batch N`, 2..15, DESIGN section 7): request q carries orders qN .. qN+N-1, all of one
 *      wallet (POST /orders takes only orders of the API key that signs the request), and answers one
 *      result per order, in order. `--rate` still counts orders: request q is due when its first order is
 *      (t0 + qN/rate). Latency is per request (from that due time, or from the send flat out); rates,
 *      acknowledgements and error classes are per order. A request without an HTTP 200 fails each of its
 *      orders with that class; a 200 that is not an array of exactly N results fails each of them too.
 *   4. checks, against the acknowledgements:
 *      - every 200 (every element of a batch's 200) is `{success: true, orderID: <our digest>, status:
 *        live|matched}` with the amounts a fill at the order's own price gives; anything else is an error
 *        class (HTTP status + text; order ids in a batch element's text read `<id>`);
 *      - acknowledged orders read back through GET /data/order/:id (a sample, or all): id, price, size,
 *        side, token, maker, and a status the acknowledgement allows;
 *      - every wallet's open orders (GET /data/orders, all pages) and balances (GET /admin/wallets/:a) equal
 *        what its acknowledged orders imply, per market the two outcomes' fills pair up one to one, and
 *        USDC is conserved: sum over the test wallets of USDC + one USDC per complete token set they hold
 *        == their deposits (the run's markets charge no fees, so any fee shows up as missing USDC).
 *
 * Workload (seeded, so the checks can predict every balance). Wallets come in two groups: even wallets
 * only BUY outcome 0, odd wallets only BUY outcome 1, so no wallet can ever meet its own order (a
 * self-trade would cancel the resting one). Orders alternate between the groups one by one, or with
 * `--batch N` one request of N orders at a time (position r of an outcome-0 request and position r of the
 * next, outcome-1, request form a pair in one market). Per market m a crossing price p_m (0.35 .. 0.64):
 *   crossing  outcome 0 BUY 10 @ p_m and outcome 1 BUY 10 @ 1 - p_m, alternating: the later one mints
 *             against the earlier (p + (1 - p) = 1). All crossing orders of a market have one price and one
 *             size, so whichever pairs up, every fill is whole and at the limit price: a wallet's balances
 *             depend only on which of its orders matched, which the service reports.
 *   resting   outcome 0 BUY below p_m, outcome 1 BUY below 1 - p_m, sizes 5..20: never cross anything.
 *   mixed     half of each (alternating per market).
 * Every order is GTC. The run's markets are new, so only the run's wallets trade in them.
 */
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { hashTypedData, keccak256, recoverAddress, toHex, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { CLOB_AUTH_MESSAGE, CLOB_AUTH_TYPES, ORDER_TYPES, orderDomainSeparator, type OrderDomain, type OrderStruct } from '../src/edge/auth/eip712.ts';
import { startTsWorker } from '../src/engine/thread.ts';
import { signAll, type SignJob, type SignReply, type SignRequest } from './load-sign-worker.ts';

// ---- options and results ------------------------------------------------------------------------------

export type Mix = 'resting' | 'crossing' | 'mixed';
export type Transport = 'raw' | 'http' | 'fetch';

export interface LoadOptions {
  /** Base URL of the service, loopback (http://127.0.0.1:8080). */
  url: string;
  adminToken: string;
  /** Test wallets (rounded up to an even number: two groups). Default 50. */
  wallets?: number;
  /** Length of the timed window in seconds. Default 10. */
  duration?: number;
  /** Open loop: orders per second. Default 2400 (ignored with flatOut). */
  rate?: number;
  /** Keep every connection busy for `duration` instead of following a schedule. */
  flatOut?: boolean;
  /** Keep-alive connections. Default 32. */
  connections?: number;
  /**
   * Requests in flight per connection (raw transport). Default 1. Keep 1 against this service: its uWS
   * build closes a connection that sends a request while an earlier one is still being answered, and
   * neither gets an answer (probed with two pipelined POSTs).
   */
  pipelining?: number;
  /** Fresh markets the run creates and trades. Default 8. */
  markets?: number;
  /**
   * Orders per request, 1..15. 1 (default) sends POST /order; N > 1 sends POST /orders with N orders of
   * one wallet per request (the last request of a run may carry fewer). `rate` still counts orders.
   */
  batch?: number;
  mix?: Mix;
  /** Orders pre-signed for a flat-out run (the run ends early if they run out). Default 15,000 x duration. */
  maxOrders?: number;
  /** Seed of the wallet keys. Default: random per run (fresh wallets). Markets and salts are always new. */
  seed?: string;
  /** Acknowledged orders read back one by one through GET /data/order/:id; 0 = all. Default 2000. */
  verifySample?: number;
  /** Run the checks after the window. Default true. */
  verify?: boolean;
  /** Progress bar on stdout. Default: stdout is a TTY. */
  progress?: boolean;
  transport?: Transport;
  /** Signing threads. Default: one per core. */
  signThreads?: number;
  /** Where setup and check messages go. Default: console.log. */
  log?: (line: string) => void;
}

type Resolved = Required<Omit<LoadOptions, 'log'>> & { log: (line: string) => void };

/** POST /orders takes at most this many orders (DESIGN section 7, src/edge/schemas/orders.ts). */
export const MAX_BATCH = 15;

export interface MarketInfo {
  conditionId: string;
  tokenIds: [string, string];
  /** Crossing price of outcome 0, in cents (tick 0.01). */
  crossCents: number;
}

export interface Wallet {
  index: number;
  account: PrivateKeyAccount;
  /** Lowercase. */
  address: string;
  privateKey: Hex;
  apiKey: string;
  secret: string;
  passphrase: string;
  /** HMAC key bytes of `secret`. */
  hmacKey: Buffer;
  /** USDC units deposited by this run. */
  deposit: number;
  /** Balances read before the deposit (units). */
  base: { usdcAvailable: number; usdcReserved: number };
}

/** One planned order. Amounts in units (10^-6). */
export interface PlannedOrder {
  wallet: number;
  market: number;
  outcome: 0 | 1;
  crossing: boolean;
  cents: number;
  size: number;
  /** USDC the order spends or reserves: cents x size / 100. */
  cost: number;
  id: string;
  body: string;
}

/**
 * Acknowledgement state of an order, per index. ACCEPTED: the request failed without a clear answer
 * (connection lost, timeout, 5xx) but the service holds the order; whether it rested or took first is
 * unknown.
 */
export const Ack = { NONE: 0, LIVE: 1, MATCHED: 2, ERROR: 3, ACCEPTED: 4 } as const;

export interface LoadSession {
  opts: Resolved;
  runId: string;
  orderDomain: OrderDomain;
  markets: MarketInfo[];
  wallets: Wallet[];
  orders: PlannedOrder[];
  /** Batch mode (opts.batch > 1): request q's body, orders q x batch .. (q + 1) x batch - 1. Empty otherwise. */
  batches: string[];
  /** Orders the timed window may send. */
  total: number;
  setupMs: number;
  signMs: number;
}

export interface RunStats {
  mode: 'open-loop' | 'flat-out';
  targetRate: number;
  /** Orders per request (1: POST /order). */
  batch: number;
  /** Requests sent (= sent with batch 1). */
  requests: number;
  /** Orders sent. */
  sent: number;
  acked: number;
  errors: number;
  /** "<HTTP status> <error text>" -> count. Status 0 = no HTTP answer. */
  errorClasses: Record<string, number>;
  /** Seconds from the first send (open loop: the first due time) to the last answer. */
  elapsedS: number;
  ordersPerSec: number;
  /** Per request (per order with batch 1). */
  latencyMs: { p50: number; p90: number; p99: number; p999: number; max: number };
  /** Per order index: Ack.*. */
  acks: Uint8Array;
  /** Orders still unanswered when the drain limit ended the run. */
  unanswered: number;
  /** CPU the client process spent per answered order during the window (all its threads), microseconds. */
  clientCpuUsPerOrder: number;
  /** Flat out: every pre-signed order was sent before the window ended (raise maxOrders). */
  ranOut: boolean;
  /** The client's heap was collected just before the window (the process runs with --expose-gc). */
  heapSettled: boolean;
}

export interface CheckReport {
  ok: boolean;
  problems: string[];
  ordersRead: number;
  walletsChecked: number;
  marketsChecked: number;
  openOrders: number;
  matchedOrders: number;
  /** Complete token sets minted by the run (units). */
  mintedSets: number;
  /** Open orders of the test wallets from earlier runs with the same seed (reserved in the base balances). */
  foreignOpen: number;
  durationMs: number;
}

export interface LoadReport {
  session: LoadSession;
  run: RunStats;
  check?: CheckReport;
}

function resolveOptions(o: LoadOptions): Resolved {
  const duration = o.duration ?? 10;
  const wallets = Math.max(2, Math.ceil((o.wallets ?? 50) / 2) * 2);
  const batch = o.batch ?? 1;
  if (!Number.isInteger(batch) || batch < 1 || batch > MAX_BATCH) throw new Error(`batch: an integer 1..${MAX_BATCH}, got ${batch}`);
  return {
    url: o.url.replace(/\/$/, ''),
    adminToken: o.adminToken,
    wallets,
    duration,
    rate: o.rate ?? 2400,
    flatOut: o.flatOut ?? false,
    connections: Math.max(1, o.connections ?? 32),
    pipelining: Math.max(1, o.pipelining ?? 1),
    markets: Math.max(1, o.markets ?? 8),
    batch,
    mix: o.mix ?? 'mixed',
    maxOrders: o.maxOrders ?? Math.ceil(duration * 15_000),
    seed: o.seed ?? randomBytes(8).toString('hex'),
    verifySample: o.verifySample ?? 2000,
    verify: o.verify ?? true,
    progress: o.progress ?? process.stdout.isTTY === true,
    transport: o.transport ?? 'raw',
    signThreads: Math.max(1, o.signThreads ?? availableParallelism()),
    log: o.log ?? ((line: string) => console.log(line)),
  };
}

// ---- a minimal HTTP/1.1 client ----------------------------------------------------------------------------

export interface HttpAnswer {
  status: number;
  body: string;
  /** Set when no HTTP answer arrived (socket error, closed connection). */
  error?: string;
}
type Done = (a: HttpAnswer) => void;

const EMPTY = Buffer.alloc(0);
const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * One keep-alive connection that writes whole requests and reads answers in order. It understands what
 * the service sends (Content-Length or chunked bodies) and nothing more. Requests written before the
 * socket connects are buffered by net.Socket; a socket that dies fails every request it carried and the
 * next request opens a new one.
 */
class Conn {
  private sock: net.Socket | undefined;
  private readonly waiting: Done[] = [];
  private buf: Buffer = EMPTY;

  constructor(private readonly host: string, private readonly port: number) {}

  write(request: string, done: Done): void {
    if (!this.sock) this.open();
    this.waiting.push(done);
    this.sock!.write(request, 'utf8');
  }

  private open(): void {
    const s = net.connect({ host: this.host, port: this.port, noDelay: true });
    this.sock = s;
    this.buf = EMPTY;
    s.on('data', (chunk: Buffer) => this.onData(chunk));
    const fail = (why: string) => {
      if (this.sock !== s) return;
      this.sock = undefined;
      s.destroy();
      const w = this.waiting.splice(0);
      for (const d of w) d({ status: 0, body: '', error: why });
    };
    s.on('error', (e) => fail(`socket error: ${(e as NodeJS.ErrnoException).code ?? e.message}`));
    s.on('close', () => fail('connection closed'));
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    for (;;) {
      const b = this.buf;
      const he = b.indexOf(HEADER_END);
      if (he < 0) return;
      const head = b.toString('latin1', 0, he);
      const status = Number(head.slice(9, 12));
      const start = he + 4;
      let body: string;
      let rest: number;
      const cl = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
      if (cl) {
        const len = Number(cl[1]);
        if (b.length < start + len) return;
        body = b.toString('utf8', start, start + len);
        rest = start + len;
      } else if (/\r\ntransfer-encoding:[ \t]*chunked/i.test(head)) {
        const parsed = dechunk(b, start);
        if (!parsed) return;
        body = parsed.body;
        rest = parsed.end;
      } else {
        body = '';
        rest = start;
      }
      this.buf = rest >= b.length ? EMPTY : b.subarray(rest);
      const done = this.waiting.shift();
      if (done) done({ status, body });
    }
  }

  close(): void {
    const s = this.sock;
    this.sock = undefined;
    s?.destroy();
    const w = this.waiting.splice(0);
    for (const d of w) d({ status: 0, body: '', error: 'client closed' });
  }
}

function dechunk(b: Buffer, from: number): { body: string; end: number } | undefined {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const eol = b.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = parseInt(b.toString('latin1', at, eol), 16);
    if (Number.isNaN(size)) return undefined;
    const dataStart = eol + 2;
    if (size === 0) {
      const end = b.indexOf(HEADER_END, eol);
      return end < 0 ? undefined : { body: Buffer.concat(parts).toString('utf8'), end: end + 4 };
    }
    if (b.length < dataStart + size + 2) return undefined;
    parts.push(b.subarray(dataStart, dataStart + size));
    at = dataStart + size + 2;
  }
}

/** The request line and headers of one request (the body follows the blank line). */
function requestText(method: string, path: string, hostHeader: string, headers: Record<string, string>, body: string | undefined): string {
  let s = `${method} ${path} HTTP/1.1\r\nHost: ${hostHeader}\r\n`;
  for (const k in headers) s += `${k}: ${headers[k]}\r\n`;
  if (body !== undefined) s += `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  else s += '\r\n';
  return s;
}

/**
 * Sends requests over `connections` keep-alive connections with at most `pipelining` in flight on each;
 * further requests wait in order. Three transports behind one interface so their client-side cost can be
 * compared (the benchmark does); `raw` is the default.
 */
export class HttpClient {
  readonly transport: Transport;
  private readonly host: string;
  private readonly port: number;
  private readonly hostHeader: string;
  private readonly conns: Conn[] = [];
  /** Free request slots (a connection appears once per free pipelining slot). */
  private readonly free: Conn[] = [];
  private readonly queue: Array<() => void> = [];
  private queueHead = 0;
  private readonly agent: http.Agent | undefined;
  private inflight = 0;
  private readonly limit: number;

  constructor(baseUrl: string, connections: number, pipelining = 1, transport: Transport = 'raw') {
    const u = new URL(baseUrl);
    this.host = u.hostname;
    this.port = Number(u.port || 80);
    this.hostHeader = u.host;
    this.transport = transport;
    this.limit = connections * (transport === 'raw' ? pipelining : 1);
    if (transport === 'raw') {
      for (let i = 0; i < connections; i++) this.conns.push(new Conn(this.host, this.port));
      for (let p = 0; p < pipelining; p++) for (let i = connections - 1; i >= 0; i--) this.free.push(this.conns[i]!);
    } else if (transport === 'http') {
      this.agent = new http.Agent({ keepAlive: true, maxSockets: connections });
    }
  }

  /** Requests in flight (queued ones excluded). */
  get busy(): number {
    return this.inflight;
  }

  get capacity(): number {
    return this.limit;
  }

  /** Callback form (no promise per request): the load window uses it. */
  send(method: string, path: string, headers: Record<string, string>, body: string | undefined, done: Done): void {
    if (this.inflight >= this.limit) {
      this.queue.push(() => this.send(method, path, headers, body, done));
      return;
    }
    this.inflight++;
    const finish: Done = (a) => {
      this.inflight--;
      done(a);
      if (this.queueHead < this.queue.length) {
        const next = this.queue[this.queueHead]!;
        this.queue[this.queueHead++] = undefined as unknown as () => void;
        if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
          this.queue.splice(0, this.queueHead);
          this.queueHead = 0;
        }
        next();
      }
    };
    if (this.transport === 'raw') {
      const c = this.free.pop()!;
      c.write(requestText(method, path, this.hostHeader, headers, body), (a) => {
        this.free.push(c);
        finish(a);
      });
    } else if (this.transport === 'http') {
      const h: Record<string, string> = { ...headers };
      if (body !== undefined) h['Content-Type'] = 'application/json';
      const req = http.request({ host: this.host, port: this.port, method, path, headers: h, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => finish({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (e) => finish({ status: 0, body: '', error: `response error: ${e.message}` }));
      });
      req.on('error', (e) => finish({ status: 0, body: '', error: `socket error: ${(e as NodeJS.ErrnoException).code ?? e.message}` }));
      req.end(body);
    } else {
      const h: Record<string, string> = { ...headers };
      if (body !== undefined) h['Content-Type'] = 'application/json';
      fetch(`http://${this.hostHeader}${path}`, { method, headers: h, body }).then(
        async (r) => finish({ status: r.status, body: await r.text() }),
        (e: Error) => finish({ status: 0, body: '', error: `fetch error: ${(e.cause as NodeJS.ErrnoException | undefined)?.code ?? e.message}` }),
      );
    }
  }

  request(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<HttpAnswer> {
    return new Promise((resolve) => this.send(method, path, headers, body, resolve));
  }

  close(): void {
    for (const c of this.conns) c.close();
    this.agent?.destroy();
  }
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  });
  await Promise.all(lanes);
  return out;
}

// ---- money as integers ---------------------------------------------------------------------------------

const UNITS = 1_000_000;

/** Units -> minimal decimal string ("0.43", "10", "4.3"). */
export function unitsText(units: number): string {
  const neg = units < 0;
  const a = Math.abs(units);
  const whole = Math.floor(a / UNITS);
  const frac = String(a % UNITS).padStart(6, '0').replace(/0+$/, '');
  return (neg ? '-' : '') + (frac === '' ? String(whole) : `${whole}.${frac}`);
}

/** Decimal string -> units, undefined when it is not one. */
export function textUnits(text: unknown): number | undefined {
  if (typeof text !== 'string' && typeof text !== 'number') return undefined;
  const m = /^(-?)(\d+)(?:\.(\d{1,6}))?$/.exec(String(text));
  if (!m) return undefined;
  const v = Number(m[2]) * UNITS + Number((m[3] ?? '').padEnd(6, '0'));
  return m[1] === '-' ? -v : v;
}

// ---- L1 / L2 headers ---------------------------------------------------------------------------------------

const nowSec = () => String(Math.floor(Date.now() / 1000));

/** L2 headers (the spec's names, hex HMAC-SHA256 over timestamp + METHOD + path + body). */
export function l2Headers(w: Pick<Wallet, 'address' | 'apiKey' | 'passphrase' | 'hmacKey'>, method: string, path: string, body?: string): Record<string, string> {
  const ts = nowSec();
  const h = createHmac('sha256', w.hmacKey).update(ts + method + path);
  if (body !== undefined) h.update(body);
  return {
    SVC_ADDRESS: w.address,
    SVC_API_KEY: w.apiKey,
    SVC_PASSPHRASE: w.passphrase,
    SVC_TIMESTAMP: ts,
    SVC_SIGNATURE: h.digest('hex'),
  };
}

/** L1 headers (EIP-712 ClobAuth) for POST /auth/api-key and GET /auth/derive-api-key. */
export async function l1Headers(account: PrivateKeyAccount, authDomain: { name: string; version: string; chainId: number }, nonce: bigint): Promise<Record<string, string>> {
  const ts = nowSec();
  const signature = await account.signTypedData({
    domain: authDomain,
    types: CLOB_AUTH_TYPES,
    primaryType: 'ClobAuth',
    message: { address: account.address, timestamp: ts, nonce, message: CLOB_AUTH_MESSAGE },
  });
  return { SVC_ADDRESS: account.address, SVC_SIGNATURE: signature, SVC_TIMESTAMP: ts, SVC_NONCE: nonce.toString() };
}

// ---- phase 1 and 2: setup and pre-signing -------------------------------------------------------------------

const ZERO32 = '0x' + '0'.repeat(64);
const CROSS_SIZE = 10 * UNITS;

function parseJson(a: HttpAnswer, what: string): any {
  if (a.error) throw new Error(`${what}: ${a.error}`);
  try {
    return JSON.parse(a.body);
  } catch {
    throw new Error(`${what}: HTTP ${a.status}, not JSON: ${a.body.slice(0, 200)}`);
  }
}

function expectOk(a: HttpAnswer, what: string): any {
  const v = parseJson(a, what);
  if (a.status !== 200) throw new Error(`${what}: HTTP ${a.status} ${a.body.slice(0, 300)}`);
  return v;
}

/** Deterministic per-run value in [0, n). */
const mix32 = (a: number, b: number) => {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35);
  h ^= h >>> 13;
  h = Math.imul(h, 0x27d4eb2f);
  return (h ^ (h >>> 16)) >>> 0;
};

/**
 * The order plan: who sends what where (module header, "Workload"). Order k is position r of request b
 * (k = b x batch + r); requests alternate between the outcome-0 and outcome-1 groups, and j, which picks
 * the market, price and size, is shared by position r of requests 2c and 2c + 1. With batch 1 this is
 * order k alternating outcome, j = k >> 1.
 */
function planOrders(count: number, wallets: number, markets: MarketInfo[], mix: Mix, batch: number): Omit<PlannedOrder, 'id' | 'body'>[] {
  const half = wallets / 2;
  const M = markets.length;
  const out: Omit<PlannedOrder, 'id' | 'body'>[] = new Array(count);
  for (let k = 0; k < count; k++) {
    const b = Math.floor(k / batch);
    const c = Math.floor(b / 2);
    const j = c * batch + (k - b * batch);
    const outcome = (b & 1) as 0 | 1;
    const wallet = 2 * (c % half) + outcome;
    const market = j % M;
    const round = Math.floor(j / M);
    const crossing = mix === 'crossing' || (mix === 'mixed' && round % 2 === 0);
    const p0 = markets[market]!.crossCents;
    let cents: number;
    let size: number;
    if (crossing) {
      cents = outcome === 0 ? p0 : 100 - p0;
      size = CROSS_SIZE;
    } else {
      // Strictly below the crossing price of its own outcome: cannot cross a crossing order or another resting one.
      const below = outcome === 0 ? p0 - 1 : 100 - p0 - 1;
      cents = 1 + (mix32(j, 1) % below);
      size = (5 + (mix32(j, 2) % 16)) * UNITS;
    }
    out[k] = { wallet, market, outcome, crossing, cents, size, cost: (cents * size) / 100 };
  }
  return out;
}

async function createMarkets(client: HttpClient, o: Resolved, runId: string): Promise<MarketInfo[]> {
  const conditionIds = Array.from({ length: o.markets }, (_, m) => keccak256(toHex(`pm-exchange load ${runId} market ${m}`)));
  const event = {
    title: `Load test ${runId}`,
    slug: `load-test-${runId}`,
    endDate: '2030-01-01T00:00:00Z',
    negRisk: false,
    markets: conditionIds.map((conditionId, m) => ({
      question: `Load test ${runId} market ${m}?`,
      conditionId,
      slug: `load-test-${runId}-m${m}`,
      orderPriceMinTickSize: '0.01',
      orderMinSize: 5,
      makerBaseFee: 0,
      takerBaseFee: 0,
      acceptingOrders: true,
      enableOrderBook: true,
    })),
  };
  const body = JSON.stringify([event]);
  const r = expectOk(await client.request('POST', '/admin/events', { Authorization: `Bearer ${o.adminToken}` }, body), 'POST /admin/events');
  const stored = (r as Array<{ markets: Array<{ conditionId: string; clobTokenIds: string | string[] }> }>)[0]!.markets;
  const markets = conditionIds.map((cid, m) => {
    const s = stored.find((x) => x.conditionId.toLowerCase() === cid.toLowerCase());
    if (!s) throw new Error(`POST /admin/events did not return market ${cid}`);
    const ids = (typeof s.clobTokenIds === 'string' ? JSON.parse(s.clobTokenIds) : s.clobTokenIds) as string[];
    if (ids.length !== 2) throw new Error(`market ${cid}: expected two token ids`);
    return { conditionId: cid.toLowerCase(), tokenIds: [ids[0]!, ids[1]!] as [string, string], crossCents: 35 + ((m * 7) % 30) };
  });
  // A token's book answers once the engine has registered its market (the edge waits up to 2 s for it).
  for (const m of markets) {
    for (let attempt = 0; ; attempt++) {
      const b = await client.request('GET', `/book?token_id=${m.tokenIds[0]}`);
      if (b.status === 200) break;
      if (attempt >= 20) throw new Error(`market ${m.conditionId} never became tradable: GET /book HTTP ${b.status} ${b.body.slice(0, 200)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return markets;
}

async function readBalances(client: HttpClient, o: Resolved, address: string): Promise<WalletBalances> {
  return expectOk(await client.request('GET', `/admin/wallets/${address}`, { Authorization: `Bearer ${o.adminToken}` }), `GET /admin/wallets/${address}`) as WalletBalances;
}

interface WalletBalances {
  usdc: { available: string; reserved: string };
  tokens: Array<{ tokenId: string; available: string; reserved: string }>;
}

async function setupWallet(client: HttpClient, o: Resolved, index: number, deposit: number, authDomain: { name: string; version: string; chainId: number }): Promise<Wallet> {
  const privateKey = keccak256(toHex(`pm-exchange load ${o.seed} wallet ${index}`));
  const account = privateKeyToAccount(privateKey);
  const address = account.address.toLowerCase();
  const before = await readBalances(client, o, address);
  const base = { usdcAvailable: textUnits(before.usdc.available)!, usdcReserved: textUnits(before.usdc.reserved)! };
  expectOk(
    await client.request('POST', `/admin/wallets/${address}/deposit`, { Authorization: `Bearer ${o.adminToken}` }, JSON.stringify({ amount: unitsText(deposit) })),
    `deposit to ${address}`,
  );
  let creds = parseJson(await client.request('POST', '/auth/api-key', await l1Headers(account, authDomain, 0n)), 'POST /auth/api-key');
  if (typeof creds?.apiKey !== 'string') {
    // The nonce is taken (a wallet of an earlier run with the same seed): its key derives again.
    creds = expectOk(await client.request('GET', '/auth/derive-api-key', await l1Headers(account, authDomain, 0n)), 'GET /auth/derive-api-key');
  }
  const { apiKey, secret, passphrase } = creds as { apiKey: string; secret: string; passphrase: string };
  return { index, account, address, privateKey, apiKey, secret, passphrase, hmacKey: Buffer.from(secret, 'base64'), deposit, base };
}

async function signOrders(jobs: SignJob[], separator: string, keys: string[], threads: number): Promise<SignReply> {
  if (threads <= 1 || jobs.length < 2000) return signAll({ separator, keys, orders: jobs });
  const per = Math.ceil(jobs.length / threads);
  const parts = await Promise.all(
    Array.from({ length: threads }, (_, t) => {
      const slice = jobs.slice(t * per, (t + 1) * per);
      const worker = startTsWorker(new URL('./load-sign-worker.ts', import.meta.url), {});
      return new Promise<SignReply>((resolve, reject) => {
        // Terminated before resolving: a thread still shutting down would be billed to the timed window.
        worker.once('message', (r: SignReply) => void worker.terminate().then(() => resolve(r), reject));
        worker.once('error', reject);
        worker.postMessage({ separator, keys, orders: slice } satisfies SignRequest);
      });
    }),
  );
  return { ids: parts.flatMap((p) => p.ids), signatures: parts.flatMap((p) => p.signatures) };
}

/** Phases 1 and 2: markets, funded wallets with API keys, and every order signed and serialized. */
export async function prepareLoad(options: LoadOptions): Promise<LoadSession> {
  const o = resolveOptions(options);
  const t0 = performance.now();
  // Markets and salts are new in every run, even with a reused seed (which reuses the wallets): a replayed
  // order id would get the service's original answer instead of being traded again.
  const runId = randomBytes(6).toString('hex');
  const client = new HttpClient(o.url, 8);
  try {
    const info = expectOk(await client.request('GET', '/exchange-info'), 'GET /exchange-info') as {
      authDomain: { name: string; version: string; chainId: number };
      orderDomain: OrderDomain;
    };
    const markets = await createMarkets(client, o, runId);
    const total = o.flatOut ? o.maxOrders : Math.ceil(o.rate * o.duration);
    const plan = planOrders(total, o.wallets, markets, o.mix, o.batch);
    const deposits = new Array<number>(o.wallets).fill(0);
    for (const p of plan) deposits[p.wallet]! += p.cost;
    const wallets = await mapLimit(
      Array.from({ length: o.wallets }, (_, i) => i),
      8,
      // One USDC of headroom: a deposit of 0 is refused, and an unused wallet still needs an API key.
      (i) => setupWallet(client, o, i, deposits[i]! + UNITS, info.authDomain),
    );
    const setupMs = performance.now() - t0;

    const t1 = performance.now();
    const saltBase = BigInt('0x' + keccak256(toHex(`pm-exchange load salt ${runId}`)).slice(2, 14));
    const stamp = String(Date.now());
    const jobs: SignJob[] = plan.map((p, k) => {
      const w = wallets[p.wallet]!;
      const m = markets[p.market]!;
      return {
        key: p.wallet,
        struct: {
          salt: (saltBase + BigInt(k)).toString(),
          maker: w.address,
          signer: w.address,
          tokenId: m.tokenIds[p.outcome],
          makerAmount: String(p.cost),
          takerAmount: String(p.size),
          side: 0,
          signatureType: 0,
          timestamp: stamp,
          metadata: ZERO32,
          builder: ZERO32,
        } satisfies OrderStruct,
      };
    });
    const separator = Buffer.from(orderDomainSeparator(info.orderDomain)).toString('hex');
    const signed = await signOrders(jobs, separator, wallets.map((w) => w.privateKey), o.signThreads);
    const orders: PlannedOrder[] = plan.map((p, k) => {
      const s = jobs[k]!.struct;
      const body = JSON.stringify({
        order: {
          salt: s.salt,
          maker: s.maker,
          signer: s.signer,
          tokenId: s.tokenId,
          makerAmount: s.makerAmount,
          takerAmount: s.takerAmount,
          side: 'BUY',
          signatureType: 0,
          timestamp: s.timestamp,
          metadata: s.metadata,
          builder: s.builder,
          signature: signed.signatures[k],
        },
        owner: wallets[p.wallet]!.apiKey,
        orderType: 'GTC',
      });
      return { ...p, id: signed.ids[k]!, body };
    });
    await crossCheckWithViem(orders, jobs, signed, wallets, info.orderDomain);
    const batches: string[] = [];
    if (o.batch > 1) {
      for (let first = 0; first < orders.length; first += o.batch) {
        const part = orders.slice(first, first + o.batch);
        if (part.some((p) => p.wallet !== part[0]!.wallet)) throw new Error(`batch at order ${first} mixes wallets`);
        batches.push(`[${part.map((p) => p.body).join(',')}]`);
      }
    }
    const signMs = performance.now() - t1;
    return { opts: o, runId, orderDomain: info.orderDomain, markets, wallets, orders, batches, total, setupMs, signMs };
  } finally {
    client.close();
  }
}

/** The first order of every wallet, hashed and recovered by viem: the service's encoder is not our only witness. */
async function crossCheckWithViem(orders: PlannedOrder[], jobs: SignJob[], signed: SignReply, wallets: Wallet[], d: OrderDomain): Promise<void> {
  const seen = new Set<number>();
  for (let k = 0; k < orders.length && seen.size < wallets.length; k++) {
    const p = orders[k]!;
    if (seen.has(p.wallet)) continue;
    seen.add(p.wallet);
    const s = jobs[k]!.struct;
    const hash = hashTypedData({
      domain: { name: d.name, version: d.version, chainId: d.chainId, verifyingContract: d.verifyingContract as Hex },
      types: ORDER_TYPES,
      primaryType: 'Order',
      message: {
        salt: BigInt(s.salt),
        maker: s.maker as Hex,
        signer: s.signer as Hex,
        tokenId: BigInt(s.tokenId),
        makerAmount: BigInt(s.makerAmount),
        takerAmount: BigInt(s.takerAmount),
        side: s.side,
        signatureType: s.signatureType,
        timestamp: BigInt(s.timestamp),
        metadata: s.metadata as Hex,
        builder: s.builder as Hex,
      },
    });
    if (hash !== p.id) throw new Error(`order digest differs from viem's hashTypedData: ${p.id} vs ${hash}`);
    const who = (await recoverAddress({ hash, signature: signed.signatures[k] as Hex })).toLowerCase();
    if (who !== wallets[p.wallet]!.address) throw new Error(`order signature recovers to ${who}, not ${wallets[p.wallet]!.address}`);
  }
}

// ---- phase 3: the timed window ---------------------------------------------------------------------------------

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

interface ProgressBar {
  update(v: number, payload: Record<string, unknown>): void;
  stop(): void;
}

async function progressBar(total: number): Promise<ProgressBar> {
  const { default: cli } = await import('cli-progress');
  const bar = new cli.SingleBar(
    { format: 'orders [{bar}] {value}/{total} | {rate}/s | errors {errors} | in flight {inflight}', stream: process.stdout, hideCursor: true },
    cli.Presets.shades_classic,
  );
  bar.start(total, 0, { rate: 0, errors: 0, inflight: 0 });
  return bar;
}

/** How long answers may trail the end of the window before the run stops waiting for them. */
const DRAIN_LIMIT_MS = 30_000;

/**
 * Phase 3: sends the pre-signed orders (open loop or flat out) and checks every answer. Flow control and
 * latency are per request (one order with batch 1, up to `batch` orders of one wallet otherwise);
 * acknowledgements, errors and rates are per order. `onStart` is told the window's first due time once the
 * connections are warm and the client's heap settled, so a caller timing something of its own beside the
 * orders (the abuse bench's book readers) starts its clock with theirs, not during the client's set-up.
 */
export async function driveLoad(session: LoadSession, onStart?: (t0: number) => void): Promise<RunStats> {
  const o = session.opts;
  const { orders, wallets } = session;
  const client = new HttpClient(o.url, o.connections, o.pipelining, o.transport);
  const batch = o.batch;
  const path = batch > 1 ? '/orders' : '/order';
  if (batch > 1 && session.batches.length * batch < orders.length) throw new Error('session has no pre-serialized batches: prepare it with the same batch option');
  /** Orders. */
  const total = o.flatOut ? orders.length : session.total;
  /** Requests: request q carries orders q x batch .. min(total, (q + 1) x batch) - 1. */
  const requests = Math.ceil(total / batch);
  /** Between due times of consecutive orders / requests (open loop). */
  const interval = o.flatOut ? 0 : 1000 / o.rate;
  const reqInterval = interval * batch;
  const acks = new Uint8Array(orders.length);
  const latency = new Float64Array(requests);
  const sentAt = new Float64Array(requests);
  const errorClasses: Record<string, number> = {};
  /** Requests sent / answered. */
  let next = 0;
  let answered = 0;
  /** Orders sent / answered. */
  let sentOrders = 0;
  let answeredOrders = 0;
  let acked = 0;
  let errors = 0;
  let lastAnswer = 0;
  let timer: NodeJS.Timeout | undefined;
  // Warm the connections first so the window does not time TCP handshakes.
  await Promise.all(Array.from({ length: Math.min(client.capacity, o.connections) }, () => client.request('GET', '/time')));
  const heapSettled = settleHeap();
  const t0 = performance.now() + 20;
  onStart?.(t0);
  const deadline = t0 + o.duration * 1000;
  const cpu0 = process.cpuUsage();
  const bar = o.progress ? await progressBar(total) : undefined;

  const error = (i: number, key: string) => {
    errors++;
    acks[i] = Ack.ERROR;
    errorClasses[key] = (errorClasses[key] ?? 0) + 1;
  };

  return new Promise<RunStats>((resolve) => {
    let finished = false;
    let drainTimer: NodeJS.Timeout | undefined;
    let deadlineTimer: NodeJS.Timeout | undefined;
    const progress = bar
      ? setInterval(() => {
          const s = (performance.now() - t0) / 1000;
          bar.update(answeredOrders, { rate: s > 0 ? Math.round(acked / s) : 0, errors, inflight: client.busy });
        }, 250)
      : undefined;

    const finish = () => {
      if (finished) return;
      finished = true;
      if (timer) clearTimeout(timer);
      if (drainTimer) clearTimeout(drainTimer);
      if (deadlineTimer) clearTimeout(deadlineTimer);
      if (progress) clearInterval(progress);
      bar?.update(answeredOrders, { rate: Math.round(acked / Math.max(1e-9, (lastAnswer - t0) / 1000)), errors, inflight: 0 });
      bar?.stop();
      const cpu = process.cpuUsage(cpu0);
      const unanswered = sentOrders - answeredOrders;
      if (unanswered > 0) errorClasses[`0 no answer within ${DRAIN_LIMIT_MS / 1000} s after the window`] = unanswered;
      client.close();
      const lat = latency.slice(0, answered).sort();
      const elapsedS = Math.max(1e-9, (lastAnswer - t0) / 1000);
      resolve({
        mode: o.flatOut ? 'flat-out' : 'open-loop',
        targetRate: o.flatOut ? 0 : o.rate,
        batch,
        requests: next,
        sent: sentOrders,
        acked,
        errors: errors + unanswered,
        errorClasses,
        elapsedS,
        ordersPerSec: acked / elapsedS,
        latencyMs: { p50: percentile(lat, 0.5), p90: percentile(lat, 0.9), p99: percentile(lat, 0.99), p999: percentile(lat, 0.999), max: lat.length ? lat[lat.length - 1]! : 0 },
        acks,
        unanswered,
        clientCpuUsPerOrder: answeredOrders > 0 ? (cpu.user + cpu.system) / answeredOrders : 0,
        ranOut: o.flatOut && next === requests && lastAnswer < deadline,
        heapSettled,
      });
    };

    let latIndex = 0;
    const onAnswer = (q: number, a: HttpAnswer) => {
      // Requests failed by closing the client after the drain limit are already counted as unanswered.
      if (finished) return;
      const now = performance.now();
      lastAnswer = now;
      latency[latIndex++] = now - (o.flatOut ? sentAt[q]! : t0 + q * reqInterval);
      answered++;
      const first = q * batch;
      const end = Math.min(total, first + batch);
      answeredOrders += end - first;
      if (a.error !== undefined) {
        for (let i = first; i < end; i++) error(i, `0 ${a.error}`);
      } else if (a.status !== 200) {
        let text = a.body.slice(0, 160);
        try {
          const e = JSON.parse(a.body) as { error?: unknown };
          if (typeof e.error === 'string') text = e.error.replace(/0x[0-9a-f]{64}/gi, '<id>');
        } catch {
          /* not JSON: keep the raw text */
        }
        for (let i = first; i < end; i++) error(i, `${a.status} ${text}`);
      } else if (batch === 1) {
        const why = checkAck(orders[first]!, a.body);
        if (typeof why === 'string') error(first, `200 ${why}`);
        else {
          acks[first] = why;
          acked++;
        }
      } else {
        const results = batchResults(a.body, end - first);
        for (let i = first; i < end; i++) {
          const why = typeof results === 'string' ? results : checkResult(orders[i]!, results[i - first]);
          if (typeof why === 'string') error(i, `200 ${why.replace(/0x[0-9a-f]{64}/gi, '<id>')}`);
          else {
            acks[i] = why;
            acked++;
          }
        }
      }
      pump();
      if (answered === next && (next === requests || performance.now() >= deadline)) finish();
    };

    const send = (q: number) => {
      const first = q * batch;
      const p = orders[first]!;
      const body = batch > 1 ? session.batches[q]! : p.body;
      sentOrders += Math.min(total, first + batch) - first;
      if (o.flatOut) sentAt[q] = performance.now();
      client.send('POST', path, l2Headers(wallets[p.wallet]!, 'POST', path, body), body, (a) => onAnswer(q, a));
    };

    const pump = () => {
      const now = performance.now();
      if (o.flatOut) {
        while (next < requests && now < deadline && client.busy < client.capacity) send(next++);
        if (now >= deadline || next === requests) startDrain();
        return;
      }
      // Request q is due when its first order is: t0 + q x batch / rate.
      const due = Math.min(requests, Math.floor((now - t0) / reqInterval) + 1);
      // Open loop: everything due goes out now; the client queues what its connections cannot carry yet,
      // and latency still counts from the due time.
      while (next < due) send(next++);
      if (next < requests && !timer) {
        timer = setTimeout(() => {
          timer = undefined;
          pump();
        }, Math.max(0, t0 + next * reqInterval - performance.now()));
      }
      if (next === requests) startDrain();
    };

    const startDrain = () => {
      if (drainTimer || finished) return;
      if (answered === next) {
        finish();
        return;
      }
      drainTimer = setTimeout(finish, Math.max(0, deadline - performance.now()) + DRAIN_LIMIT_MS);
    };

    timer = setTimeout(() => {
      timer = undefined;
      pump();
    }, Math.max(0, t0 - performance.now()));
    // Flat out, only answers drive the pump: a service that stops answering must still end the window.
    if (o.flatOut) deadlineTimer = setTimeout(pump, Math.max(0, deadline - performance.now()) + 1);
  });
}

/**
 * Collects the client's own heap before a timed window, when the process runs with `--expose-gc`.
 * Pre-signing leaves megabytes of young objects (the session's orders and bodies); without this, the
 * first scavenges inside the window copy them, and the client's pauses (measured here: 10-30 ms, several
 * per run) would be timed as the service's latency. Returns whether it could.
 */
export function settleHeap(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') return false;
  // Twice: the first promotes what is still young, the second compacts the old generation that holds it.
  gc();
  gc();
  return true;
}

/** The results of a POST /orders answer: exactly `count` of them, else the error text (for each order). */
function batchResults(body: string, count: number): unknown[] | string {
  let r: unknown;
  try {
    r = JSON.parse(body);
  } catch {
    return 'answer is not JSON';
  }
  if (!Array.isArray(r)) return 'POST /orders answer is not an array';
  if (r.length !== count) return `POST /orders answered ${r.length} results for ${count} orders`;
  return r;
}

/** Ack.LIVE / Ack.MATCHED for a valid acknowledgement, else the error text. */
function checkAck(p: PlannedOrder, body: string): number | string {
  let r: unknown;
  try {
    r = JSON.parse(body);
  } catch {
    return 'answer is not JSON';
  }
  return checkResult(p, r);
}

/** One order's result (POST /order's answer, or one element of POST /orders'): Ack.LIVE / Ack.MATCHED, else the error text. */
function checkResult(p: PlannedOrder, value: unknown): number | string {
  if (typeof value !== 'object' || value === null) return 'result is not an object';
  const r = value as { success?: unknown; orderID?: unknown; status?: unknown; makingAmount?: unknown; takingAmount?: unknown; errorMsg?: unknown };
  if (r.success !== true) return `success=${String(r.success)} ${String(r.errorMsg ?? '')}`.trim();
  if (r.orderID !== p.id) return 'orderID is not the order digest';
  if (r.status === 'live') {
    // Nothing changed hands at once.
    const none = (v: unknown) => v === '' || v === '0' || v === undefined;
    if (!none(r.makingAmount) || !none(r.takingAmount)) return `live order answered with amounts ${String(r.makingAmount)}/${String(r.takingAmount)}`;
    return Ack.LIVE;
  }
  if (r.status === 'matched') {
    if (!p.crossing) return 'a resting order answered matched';
    // A crossing order fills whole at its own price: it pays its cost in USDC and takes its size.
    if (textUnits(r.makingAmount) !== p.cost || textUnits(r.takingAmount) !== p.size) {
      return `matched amounts ${String(r.makingAmount)}/${String(r.takingAmount)}, expected ${unitsText(p.cost)}/${unitsText(p.size)}`;
    }
    return Ack.MATCHED;
  }
  return `unexpected status ${JSON.stringify(r.status)}`;
}

// ---- phase 4: checks -----------------------------------------------------------------------------------------

const ACK_NAMES = ['none', 'live', 'matched', 'error', 'unanswered but accepted'];

export interface VerifyOptions {
  /** Another base URL (the gate restarts the service on another port). */
  url?: string;
  /** Overrides the session's verifySample (0 = all). */
  sample?: number;
}

/**
 * Phase 4: reads the service back and compares it with the acknowledgements (module header). Problems are
 * collected, not thrown, so a report lists all of them; at most 20 of each kind are spelled out.
 */
export async function verifyLoad(session: LoadSession, run: RunStats, vo: VerifyOptions = {}): Promise<CheckReport> {
  const o = session.opts;
  const t0 = performance.now();
  const client = new HttpClient(vo.url ?? o.url, 16);
  const problems: string[] = [];
  const counts = new Map<string, number>();
  const problem = (kind: string, text: string) => {
    const n = (counts.get(kind) ?? 0) + 1;
    counts.set(kind, n);
    if (n <= 20) problems.push(text);
  };
  const { orders, wallets, markets } = session;
  const acks = Uint8Array.from(run.acks);
  try {
    // An order whose request failed without a clear rejection may still have been accepted: ask.
    const unknown: number[] = [];
    for (let i = 0; i < run.sent; i++) if (acks[i] === Ack.ERROR) unknown.push(i);
    await mapLimit(unknown, 16, async (i) => {
      const p = orders[i]!;
      const path = `/data/order/${p.id}`;
      const a = await client.request('GET', path, l2Headers(wallets[p.wallet]!, 'GET', path));
      if (a.status === 404) return;
      const rec = a.status === 200 ? (JSON.parse(a.body) as { order?: { status?: string } }).order : undefined;
      if (rec?.status === 'LIVE' || rec?.status === 'MATCHED') acks[i] = Ack.ACCEPTED;
      else problem('unknown', `order ${p.id} answered an error but reads back HTTP ${a.status} ${a.body.slice(0, 120)}`);
    });
    const ackedIdx: number[] = [];
    for (let i = 0; i < orders.length; i++) if (acks[i] === Ack.LIVE || acks[i] === Ack.MATCHED || acks[i] === Ack.ACCEPTED) ackedIdx.push(i);

    // Open orders per wallet, every page.
    const open = new Set<string>();
    const byId = new Map<string, number>();
    for (const i of ackedIdx) byId.set(orders[i]!.id, i);
    let foreignOpen = 0;
    const runMarkets = new Set(markets.map((m) => m.conditionId));
    await mapLimit(wallets, 8, async (w) => {
      let cursor = 'MA==';
      for (let page = 0; cursor !== 'LTE='; page++) {
        if (page > orders.length / 10 + 100) {
          problem('paging', `GET /data/orders for ${w.address} did not end`);
          return;
        }
        const a = await client.request('GET', `/data/orders?next_cursor=${encodeURIComponent(cursor)}`, l2Headers(w, 'GET', '/data/orders'));
        if (a.status !== 200) {
          problem('open', `GET /data/orders for ${w.address}: HTTP ${a.status} ${a.body.slice(0, 200)}`);
          return;
        }
        const r = JSON.parse(a.body) as { data?: Array<Record<string, unknown>>; next_cursor?: string };
        if (!Array.isArray(r.data) || typeof r.next_cursor !== 'string') {
          problem('open', `GET /data/orders for ${w.address}: no data/next_cursor`);
          return;
        }
        for (const x of r.data) {
          const id = String(x.id ?? x.orderID ?? x.order_id ?? '');
          const i = byId.get(id);
          if (i === undefined) {
            if (runMarkets.has(String(x.market ?? '').toLowerCase())) problem('open', `open order ${id} of ${w.address} in this run's market was never acknowledged`);
            else foreignOpen++;
          }
          else if (orders[i]!.wallet !== w.index) problem('open', `open order ${id} listed for ${w.address}, which did not send it`);
          else open.add(id);
        }
        cursor = r.next_cursor;
      }
    });

    // Final state of each acknowledged order, as the open lists say.
    let matchedOrders = 0;
    const pairs = markets.map(() => ({ matchedAcks: 0, unknownAcks: 0, matched: [0, 0], open: [0, 0] }));
    for (const i of ackedIdx) {
      const p = orders[i]!;
      const isOpen = open.has(p.id);
      const mk = pairs[p.market]!;
      if (acks[i] === Ack.MATCHED) {
        mk.matchedAcks++;
        if (isOpen) problem('state', `order ${p.id} was acknowledged matched but is listed open`);
      }
      if (acks[i] === Ack.ACCEPTED && p.crossing) mk.unknownAcks++;
      if (!p.crossing && !isOpen) problem('state', `resting order ${p.id} (acknowledged live) is not open`);
      if (isOpen) mk.open[p.outcome]!++;
      else {
        matchedOrders++;
        if (p.crossing) mk.matched[p.outcome]!++;
      }
    }
    // Each fill pairs one outcome-0 with one outcome-1 crossing order (equal sizes), and exactly one of the
    // two was acknowledged `matched` (the one that arrived second; unknown for an order whose answer was lost).
    pairs.forEach((mk, m) => {
      const c = markets[m]!.conditionId;
      if (mk.matched[0] !== mk.matched[1]) problem('pairs', `market ${c}: ${mk.matched[0]} outcome-0 and ${mk.matched[1]} outcome-1 orders filled`);
      if (mk.matched[0]! < mk.matchedAcks || mk.matched[0]! > mk.matchedAcks + mk.unknownAcks) {
        problem('pairs', `market ${c}: ${mk.matched[0]} fills but ${mk.matchedAcks} orders acknowledged matched${mk.unknownAcks ? ` (and ${mk.unknownAcks} unanswered)` : ''}`);
      }
    });
    // Open crossing orders of both outcomes in one market would have crossed.
    const crossingOpen = markets.map(() => [0, 0]);
    for (const i of ackedIdx) {
      const p = orders[i]!;
      if (p.crossing && open.has(p.id)) crossingOpen[p.market]![p.outcome]!++;
    }
    crossingOpen.forEach(([a, b], m) => {
      if (a! > 0 && b! > 0) problem('crossed', `market ${markets[m]!.conditionId}: ${a} outcome-0 and ${b} outcome-1 crossing orders rest together (a crossed book)`);
    });

    // Orders read back one by one.
    const sample = vo.sample ?? o.verifySample;
    let pick = ackedIdx;
    if (sample > 0 && ackedIdx.length > sample) {
      const step = ackedIdx.length / sample;
      pick = Array.from({ length: sample }, (_, k) => ackedIdx[Math.floor(k * step)]!);
    }
    await mapLimit(pick, 16, async (i) => {
      const p = orders[i]!;
      const w = wallets[p.wallet]!;
      const path = `/data/order/${p.id}`;
      const a = await client.request('GET', path, l2Headers(w, 'GET', path));
      if (a.status !== 200) {
        problem('read', `GET ${path} (acknowledged ${ACK_NAMES[acks[i]!]}): HTTP ${a.status} ${a.error ?? a.body.slice(0, 160)}`);
        return;
      }
      const r = (JSON.parse(a.body) as { order?: Record<string, unknown> }).order;
      if (!r) {
        problem('read', `GET ${path}: no order`);
        return;
      }
      const isOpen = open.has(p.id);
      const want: Record<string, unknown> = {
        id: p.id,
        status: isOpen ? 'LIVE' : 'MATCHED',
        sizeMatched: isOpen ? '0' : unitsText(p.size),
        originalSize: unitsText(p.size),
        price: unitsText(p.cents * 10_000),
        side: 'BUY',
        assetId: markets[p.market]!.tokenIds[p.outcome],
        market: markets[p.market]!.conditionId,
        makerAddress: w.address,
        owner: w.apiKey,
        type: 'GTC',
      };
      for (const k in want) {
        const got = typeof r[k] === 'string' && (k === 'makerAddress' || k === 'market') ? (r[k] as string).toLowerCase() : r[k];
        if (got !== want[k]) problem('read', `order ${p.id} (acknowledged ${ACK_NAMES[acks[i]!]}): ${k} is ${JSON.stringify(r[k])}, expected ${JSON.stringify(want[k])}`);
      }
    });

    // Balances per wallet, and conservation over all of them.
    const expect = wallets.map((w) => ({ usdcAvailable: w.base.usdcAvailable + w.deposit, usdcReserved: w.base.usdcReserved, tokens: new Map<string, number>() }));
    for (const i of ackedIdx) {
      const p = orders[i]!;
      const e = expect[p.wallet]!;
      e.usdcAvailable -= p.cost;
      if (open.has(p.id)) e.usdcReserved += p.cost;
      else {
        const t = markets[p.market]!.tokenIds[p.outcome];
        e.tokens.set(t, (e.tokens.get(t) ?? 0) + p.size);
      }
    }
    const runTokens = new Map<string, [number, 0 | 1]>();
    markets.forEach((m, k) => {
      runTokens.set(m.tokenIds[0], [k, 0]);
      runTokens.set(m.tokenIds[1], [k, 1]);
    });
    const held = markets.map(() => [0, 0]);
    let usdcNow = 0;
    let usdcBase = 0;
    let deposits = 0;
    await mapLimit(wallets, 8, async (w) => {
      const b = await readBalances(client, o, w.address);
      const e = expect[w.index]!;
      const av = textUnits(b.usdc.available)!;
      const rs = textUnits(b.usdc.reserved)!;
      usdcNow += av + rs;
      usdcBase += w.base.usdcAvailable + w.base.usdcReserved;
      deposits += w.deposit;
      if (av !== e.usdcAvailable || rs !== e.usdcReserved) {
        problem('balance', `${w.address}: USDC ${b.usdc.available} available / ${b.usdc.reserved} reserved, expected ${unitsText(e.usdcAvailable)} / ${unitsText(e.usdcReserved)}`);
      }
      const seen = new Set<string>();
      for (const t of b.tokens) {
        const at = runTokens.get(t.tokenId);
        if (!at) continue;
        seen.add(t.tokenId);
        const tav = textUnits(t.available)!;
        const trs = textUnits(t.reserved)!;
        held[at[0]]![at[1]]! += tav + trs;
        const want = e.tokens.get(t.tokenId) ?? 0;
        if (tav !== want || trs !== 0) problem('balance', `${w.address}: token ${t.tokenId} ${t.available} available / ${t.reserved} reserved, expected ${unitsText(want)} / 0`);
      }
      for (const [t, want] of e.tokens) if (!seen.has(t) && want !== 0) problem('balance', `${w.address}: token ${t} missing, expected ${unitsText(want)}`);
    });
    let mintedSets = 0;
    held.forEach(([a, b], m) => {
      if (a !== b) problem('conservation', `market ${markets[m]!.conditionId}: ${unitsText(a!)} outcome-0 tokens but ${unitsText(b!)} outcome-1 tokens held`);
      mintedSets += Math.min(a!, b!);
    });
    if (usdcNow - usdcBase + mintedSets !== deposits) {
      problem('conservation', `USDC not conserved: wallets changed by ${unitsText(usdcNow - usdcBase)}, ${unitsText(mintedSets)} locked in token sets, deposits ${unitsText(deposits)}`);
    }
    for (const [kind, n] of counts) if (n > 20) problems.push(`... ${n - 20} more ${kind} problems`);
    return {
      ok: problems.length === 0,
      problems,
      ordersRead: pick.length,
      walletsChecked: wallets.length,
      marketsChecked: markets.length,
      openOrders: open.size,
      matchedOrders,
      mintedSets,
      foreignOpen,
      durationMs: performance.now() - t0,
    };
  } finally {
    client.close();
  }
}

// ---- everything, and the CLI --------------------------------------------------------------------------------

export async function runLoad(options: LoadOptions): Promise<LoadReport> {
  const session = await prepareLoad(options);
  const o = session.opts;
  o.log(
    `setup ${(session.setupMs / 1000).toFixed(1)} s: ${o.markets} markets, ${o.wallets} wallets funded with API keys; ` +
      `${session.orders.length.toLocaleString('en-US')} orders pre-signed in ${(session.signMs / 1000).toFixed(1)} s (${o.signThreads} threads)`,
  );
  const run = await driveLoad(session);
  const check = o.verify ? await verifyLoad(session, run) : undefined;
  return { session, run, check };
}

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

/** The human summary the CLI prints (also used by the gate and the benchmark for their logs). */
export function formatReport(r: LoadReport): string {
  const o = r.session.opts;
  const run = r.run;
  const lines = [
    `${run.mode === 'flat-out' ? 'flat out' : `open loop at ${fmt(run.targetRate)}/s`} for ${o.duration} s, mix ${o.mix}, ${o.markets} markets, ${o.wallets} wallets, ` +
      `${o.connections} connections x ${o.pipelining}, transport ${o.transport}` +
      (run.batch > 1 ? `, POST /orders with ${run.batch} orders per request` : ''),
    `sent ${fmt(run.sent)}  acknowledged ${fmt(run.acked)}  errors ${fmt(run.errors)}` + (run.batch > 1 ? `  (orders; ${fmt(run.requests)} requests)` : ''),
    `throughput ${fmt(run.ordersPerSec)} orders/s over ${run.elapsedS.toFixed(2)} s${run.ranOut ? ' (ran out of pre-signed orders before the window ended: raise --max-orders)' : ''}`,
    `latency ms  p50 ${run.latencyMs.p50.toFixed(2)}  p90 ${run.latencyMs.p90.toFixed(2)}  p99 ${run.latencyMs.p99.toFixed(2)}  p99.9 ${run.latencyMs.p999.toFixed(2)}  max ${run.latencyMs.max.toFixed(2)}` +
      (run.batch > 1
        ? run.mode === 'open-loop'
          ? `  (per request of ${run.batch} orders, from its first order's due time)`
          : `  (per request of ${run.batch} orders, from each send)`
        : run.mode === 'open-loop'
          ? '  (from each order\'s due time)'
          : '  (from each send)'),
    `client CPU ${run.clientCpuUsPerOrder.toFixed(1)} µs per order`,
  ];
  const classes = Object.entries(run.errorClasses).sort((a, b) => b[1] - a[1]);
  if (classes.length === 0) lines.push('errors: none');
  else for (const [k, n] of classes) lines.push(`error x${fmt(n)}: ${k}`);
  if (r.check) {
    const c = r.check;
    lines.push(
      `check ${c.ok ? 'OK' : 'FAILED'} in ${(c.durationMs / 1000).toFixed(1)} s: ${fmt(c.ordersRead)} orders read back, ${c.walletsChecked} wallets, ${c.marketsChecked} markets; ` +
        `${fmt(c.openOrders)} open, ${fmt(c.matchedOrders)} filled, ${unitsText(c.mintedSets)} token sets minted`,
    );
    for (const p of c.problems) lines.push(`  problem: ${p}`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string', default: 'http://127.0.0.1:8080' },
      'admin-token': { type: 'string', default: process.env.ADMIN_TOKEN ?? '' },
      wallets: { type: 'string' },
      duration: { type: 'string' },
      rate: { type: 'string' },
      'flat-out': { type: 'boolean', default: false },
      connections: { type: 'string' },
      pipelining: { type: 'string' },
      markets: { type: 'string' },
      batch: { type: 'string' },
      mix: { type: 'string' },
      'max-orders': { type: 'string' },
      seed: { type: 'string' },
      'verify-sample': { type: 'string' },
      'no-verify': { type: 'boolean', default: false },
      transport: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(fileURLToPath(import.meta.url) + ': see the header comment for every option.');
    console.log('npx tsx --expose-gc tools/load.ts --url http://127.0.0.1:8080 --admin-token T [--wallets 50] [--duration 10] [--rate 2400 | --flat-out] [--connections 32] [--markets 8] [--batch 1..15] [--mix resting|crossing|mixed]');
    return;
  }
  const num = (name: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${name}: expected a non-negative number, got ${v}`);
    return n;
  };
  if (!values['admin-token']) throw new Error('--admin-token (or ADMIN_TOKEN) is required: wallets are funded through the admin API');
  const mix = values.mix as Mix | undefined;
  if (mix !== undefined && !['resting', 'crossing', 'mixed'].includes(mix)) throw new Error(`--mix: resting, crossing or mixed, got ${mix}`);
  const transport = values.transport as Transport | undefined;
  if (transport !== undefined && !['raw', 'http', 'fetch'].includes(transport)) throw new Error(`--transport: raw, http or fetch, got ${transport}`);
  const batch = num('batch', values.batch);
  if (batch !== undefined && !(Number.isInteger(batch) && batch >= 1 && batch <= MAX_BATCH)) throw new Error(`--batch: an integer 1..${MAX_BATCH}, got ${values.batch}`);
  const url = new URL(values.url!);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) throw new Error(`--url: loopback only (got ${url.hostname})`);
  const report = await runLoad({
    url: values.url!,
    adminToken: values['admin-token'],
    wallets: num('wallets', values.wallets),
    duration: num('duration', values.duration),
    rate: num('rate', values.rate),
    flatOut: values['flat-out'],
    connections: num('connections', values.connections),
    pipelining: num('pipelining', values.pipelining),
    markets: num('markets', values.markets),
    batch,
    mix,
    maxOrders: num('max-orders', values['max-orders']),
    seed: values.seed,
    verifySample: num('verify-sample', values['verify-sample']),
    verify: !values['no-verify'],
    transport,
  });
  console.log(formatReport(report));
  const failed = report.run.errors > 0 || (report.check !== undefined && !report.check.ok);
  process.exitCode = failed ? 1 : 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exitCode = 1;
  });
}
