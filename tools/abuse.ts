/**
 * One abusive client, for bench/edge/abuse.bench.ts: runs one pattern against a service for a bounded
 * time at the highest rate its caps allow (paced to the cap, not flooding: the point is that a client
 * who stays within its caps cannot hurt anyone else), then prints what it sent, what its pacing planned to
 * send, what it got back, the bytes its WebSockets received and its own CPU seconds over the attack as one
 * JSON line.
 *
 *   npx tsx tools/abuse.ts --url http://127.0.0.1:8080 --pattern methods --seconds 7 [--xff 10.6.6.6]
 *
 * Patterns (the findings of the hardening issues):
 *   methods   made-up method tokens up to 4 KB long on unknown routes, at the order-book cap (500/s)
 *   arrays    1 MiB JSON arrays of wrong elements to POST /last-trades-prices, at 500/s
 *   nesting   200 KB of `[[[[...` to POST /prices, at its named cap (8/s), and to unknown routes at 500/s
 *             (`nesting-known` and `nesting-unknown` are its two halves, alone: which one costs what)
 *   pipeline  4 connections, each pipelining 250 GET /openapi.json and never reading, renewed every 2 s
 *             (500 requests a second in all, the order-book cap)
 *   replay    one captured signed DELETE /cancel-all sent again and again, at the order-book cap (500/s)
 *   framing   requests with two different Content-Lengths, at 500/s
 *   keys      one funded wallet (--key) with 10 API keys placing orders on all of them, 48/s on each:
 *             twice what the wallet's trading cap (240/s) admits, which each key's own cap would allow
 *   dump-flood  from one address, DUMP_SOCKETS (50) /ws/market sockets, each sending a subscription to
 *             every token of the service (at most 500, the per-socket cap) with a book dump every
 *             DUMP_PERIOD_MS (10 ms: 100 messages a second a socket, 5,000 in all): first {"assets_ids": [...],
 *             "type": "market"} (its dump is the default), then {"operation": "subscribe", "assets_ids":
 *             [...], "initial_dump": true}. A socket the service closes or refuses is reopened, one upgrade
 *             per RETRY_MS (100 ms) a socket (at most 500 a second, the order-book cap), as a reconnecting
 *             client would.
 *   user-subs one free API key (a wallet of its own, no funds) on USER_ADDRESSES (8) addresses (the eight
 *             after --xff: the connect limit dump-flood spent on --xff is not theirs) x USER_SOCKETS (100,
 *             the per-address socket cap) /ws/user sockets, each subscribing to USER_IDS (500, the
 *             per-socket cap) made-up condition ids: all of them open at once, then each address closes and
 *             reopens one socket at a time (cycles) at its connect cap (ws-connect, 100 per 10 s: 10 a
 *             second), an empty slot (one refused or closed by the service) reopened before an open one is
 *             cycled. So the sockets, the subscriptions and their churn are as many as the per-address caps
 *             allow, for the global caps and the memory behind them.
 *   unsigned-bodies
 *             POST /merge, /split and /v1/heartbeats in turn, each with a 1 MiB body and no SVC_* or
 *             POLY_* headers, on UNSIGNED_CONNECTIONS (2) keep-alive connections, each request sent as soon
 *             as its connection's previous one was answered, up to the order-book cap (500/s); a connection
 *             the service closes is reopened for the next request.
 *   refusal-log
 *             issue 39, finding 1: free API keys for REFUSAL_WALLETS wallets (one L1 request each), then 401s
 *             naming those wallets in POLY_ADDRESS, each carrying REFUSAL_NAMES made-up header names of
 *             REFUSAL_NAME_CHARS characters, different in every request (what a refusal log that kept them as
 *             sent grew by, 15 KB a refusal), one request per connection at the order-book cap (500/s)
 *   hmac-bodies, valid-bodies
 *             issue 39, finding 2: a free key of its own sends DELETE /orders with a 1 MiB body on
 *             BODY_CONNECTIONS (4) keep-alive connections, each request as soon as its connection's previous
 *             one was answered, up to the order-book cap: hmac-bodies with a wrong HMAC (right passphrase),
 *             valid-bodies with a valid one (each such request answered 400: the body is no list of ids)
 *   sub-grab  issue 39, finding 7: GRAB_ADDRESSES (27) addresses, each of its own /24 (10.7.<n>.1, whatever
 *             --xff says), open GRAB_SOCKETS (100, the per-address socket cap) /ws/market sockets each and
 *             subscribe each to every token of the service without dumps, all at once; then, with all of it
 *             held, a client from an address of another network (10.8.0.1) asks for what one of those sockets
 *             asked for (every token, at most 500), and the
 *             attack counts `victim-subscribed` or `victim-refused` (the finding: others were told "too many
 *             subscriptions" once 27 addresses held all 200,000)
 * With --xff, every request carries X-Forwarded-For (the service must trust 127.0.0.1 as a proxy), so the
 * attacker is one client of its own and not the bench's well-behaved one; the WebSocket patterns set it on
 * the upgrade request, which the service keys its socket caps and connect limit by.
 *
 * Messages the WebSocket patterns send stay under MESSAGE_BUDGET bytes (the service's maxMessageBytes is 16
 * KiB by default, and a message past twice that is cut unread): a list of ids that does not fit one message
 * is sent in several (dump-flood's messages take the service's tokens' chunks in turn; user-subs sends its 500
 * ids as a first message and two subscribe updates, so each socket still asks for 500 subscriptions). The
 * issue's single first message of 500 condition ids (34.5 KB) would have been cut unread and subscribed to
 * nothing.
 *
 * What the attacker counts (`statuses`, one counter per outcome):
 *   HTTP patterns  the status line's code; 0 when the connection was reset or closed before one
 *   WebSocket patterns
 *     ws-open             an upgrade was accepted
 *     ws-refused-<code>   an upgrade was answered with that HTTP status (429, 503, ...); ws-refused-0: no
 *                         answer (reset, closed, or 10 s without one)
 *     frame-book          a frame of `book` events (a dump)
 *     frame-update        a frame of any other channel event (price_change, trades, orders, ...)
 *     frame-error:<kind>  an {"event_type": "error"} frame; <kind> is the words of letters only in its text
 *                         before the first ':', lower-cased and joined by '-' ("too many messages: at most
 *                         20 a second" -> too-many-messages), so the counts name what the service said
 *     frame-other         any other frame (PONG, ...)
 *     close-<code>        the service closed the socket with that code (1006: the connection ended without a
 *                         close frame)
 *     ws-closed           the attacker closed it (a user-subs cycle, or the attack's end; a close frame of the
 *                         service's that crossed the attacker's counts as the service's)
 * `planned` and `sent` are what the pacing meant to send and what it did send: HTTP patterns, requests; dump-flood,
 * messages and upgrade attempts (while a socket is open, one message per 10 ms from its opening to its close
 * or the attack's end; while it is not, one attempt per 100 ms from the moment it went down, the attempt
 * that opened it included); user-subs, upgrade attempts (the first 800 and the cycles' 10 a second per
 * address). An attacker that falls behind its schedule, for want of CPU or because the service answers
 * slowly, sends less than it planned. `bytesIn` is the payload bytes of the frames its WebSockets received.
 */
import { createHmac, randomBytes } from 'node:crypto';
import net from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import WebSocket from 'ws';
import { OrderSigner, type SigningWallet } from '../src/demo/order-signer.ts';
import { l1Headers, l2Headers } from './load.ts';

export interface Tally {
  sent: number;
  /** What the pattern's pacing aims to send in its time: a caller can check that the attack ran at its full rate. */
  planned: number;
  statuses: Record<string, number>;
  /** WebSocket patterns: payload bytes of the frames received. */
  bytesIn?: number;
}

export interface AttackOptions {
  url: string;
  pattern: string;
  seconds: number;
  xff?: string;
  key?: string;
  /** Called when the set-up is done and the attack begins (its --seconds run from then). */
  onReady?: () => void;
}

export interface AttackResult extends Tally {
  pattern: string;
  /** The attacker's own CPU seconds over the attack (its set-up excluded). */
  cpuS: number;
}

/** A WebSocket message's size the patterns stay under: the service's default maxMessageBytes is 16 KiB. */
export const MESSAGE_BUDGET = 15_000;
/** What a message holds beside its list of ids: type, operation, flags, and user-subs' credentials (~200 bytes). */
const MESSAGE_ROOM = 400;
const DUMP_SOCKETS = 50;
const DUMP_PERIOD_MS = 10;
/** How often a WebSocket pattern's socket that is not open tries to open again. */
const RETRY_MS = 100;
const USER_ADDRESSES = 8;
const USER_SOCKETS = 100;
const USER_IDS = 500;
/** The ws-connect cap per address (100 per 10 s), which the cycles keep to. */
const USER_CYCLES_PER_S = 10;
const UNSIGNED_RATE = 500;
const UNSIGNED_CONNECTIONS = 2;
const UNSIGNED_BODY_BYTES = 1 << 20;
const REFUSAL_WALLETS = 50;
const REFUSAL_NAMES = 38;
const REFUSAL_NAME_CHARS = 390;
const BODY_CONNECTIONS = 4;
const BODY_BYTES = 1 << 20;
const GRAB_ADDRESSES = 27;
const GRAB_SOCKETS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const bump = (tally: Tally, outcome: string | number) => void (tally.statuses[outcome] = (tally.statuses[outcome] ?? 0) + 1);

/** How many of the times start, start + period, ... fall before `end`: what a schedule planned over [start, end). */
export function dueCount(start: number, end: number, period: number): number {
  return end > start ? Math.ceil((end - start) / period) : 0;
}

/**
 * `ids` cut into lists, each of which makes a message of at most `budget` bytes: every id counted at the
 * longest one's length with its quotes and comma, and MESSAGE_ROOM bytes left for the rest of the message.
 */
export function chunkIds(ids: readonly string[], budget = MESSAGE_BUDGET): string[][] {
  const each = Math.max(0, ...ids.map((id) => id.length)) + 3;
  const per = Math.max(1, Math.floor((budget - MESSAGE_ROOM) / each));
  const out: string[][] = [];
  for (let i = 0; i < ids.length; i += per) out.push(ids.slice(i, i + per));
  return out;
}

/** An error frame's <kind>: the words of letters only before the first ':', lower-cased, joined by '-'. */
export function errorKind(text: string): string {
  const words = text.split(':')[0]!.split(/\s+/).filter((w) => /^[A-Za-z][A-Za-z'-]*$/.test(w));
  return words.join('-').toLowerCase().replace(/'/g, '').slice(0, 48) || 'unnamed';
}

/** What a frame from the service counts as (see the header); reads only its first bytes unless it is an error. */
export function frameOutcome(data: Buffer): string {
  const head = data.subarray(0, 96).toString('latin1');
  const m = /"event_type":"(\w+)"/.exec(head);
  if (m === null) return 'frame-other';
  if (m[1] === 'book') return 'frame-book';
  if (m[1] !== 'error') return 'frame-update';
  let text = '';
  try {
    const e = JSON.parse(data.toString()) as { error?: unknown } | { error?: unknown }[];
    text = String((Array.isArray(e) ? e[0]?.error : e.error) ?? '');
  } catch {
    /* not JSON: counted as an unnamed error */
  }
  return `frame-error:${errorKind(text)}`;
}

/**
 * Calls `send` at `rate` per second with at most `inFlight` outstanding, on a schedule from `t0` (default now;
 * calls already due are made at once) until `until`; counts what each answered.
 */
async function paced(rate: number, inFlight: number, until: number, send: () => Promise<number | string>, tally: Tally, t0 = Date.now()): Promise<void> {
  tally.planned += dueCount(t0, until, 1000 / rate);
  let k = 0;
  let open = 0;
  const pending = new Set<Promise<void>>();
  while (Date.now() < until) {
    const due = t0 + (k * 1000) / rate;
    if (due >= until) break;
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    if (open >= inFlight) {
      await Promise.race(pending);
      continue;
    }
    k++;
    open++;
    tally.sent++;
    const p: Promise<void> = send()
      .then(
        (status) => bump(tally, status),
        () => bump(tally, 'error'),
      )
      .finally(() => {
        open--;
        pending.delete(p);
      });
    pending.add(p);
  }
  await Promise.all(pending);
}

/** One raw request on its own connection; resolves with the first status line's code (0: none). */
function raw(url: URL, bytes: Buffer | string): Promise<number> {
  return new Promise((resolve) => {
    const s = net.connect(Number(url.port), url.hostname);
    let got = '';
    const done = (status: number) => {
      s.destroy();
      resolve(status);
    };
    s.on('connect', () => s.write(bytes));
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      if (m && Number(m[1]) >= 200) done(Number(m[1]));
    });
    s.on('error', () => done(0));
    s.on('close', () => done(0));
    s.setTimeout(10_000, () => done(0));
  });
}

/**
 * One HTTP/1.1 connection carrying requests one after another: each resolves with its answer's status, or 0
 * when the connection closed or reset first (or 10 s passed); a connection the service closed is opened
 * again for the next request. The answer may come before the whole body is written (the service refusing
 * unread): the next request then follows the rest of that body, as HTTP/1.1 has it.
 */
class KeepAlive {
  busy = false;
  private socket: net.Socket | undefined;
  private got = '';
  private answer: ((status: number) => void) | undefined;

  constructor(private readonly url: URL) {}

  request(bytes: Buffer): Promise<number> {
    this.busy = true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.drop(), 10_000);
      this.answer = (status) => {
        clearTimeout(timer);
        this.answer = undefined;
        this.busy = false;
        resolve(status);
      };
      (this.socket ?? this.open()).write(bytes);
    });
  }

  close(): void {
    this.drop();
  }

  private open(): net.Socket {
    const s = net.connect(Number(this.url.port), this.url.hostname);
    this.socket = s;
    this.got = '';
    s.on('data', (d: Buffer) => this.read(d));
    s.on('error', () => undefined);
    s.on('close', () => {
      if (this.socket !== s) return;
      this.socket = undefined;
      this.answer?.(0);
    });
    return s;
  }

  private read(d: Buffer): void {
    this.got += d.toString('latin1');
    const end = this.got.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = this.got.slice(0, end);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (this.got.length < end + 4 + length) return;
    this.got = this.got.slice(end + 4 + length);
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
    const answer = this.answer;
    this.answer = undefined;
    if (/\r\nconnection: *close/i.test(head)) this.drop();
    answer?.(status);
  }

  private drop(): void {
    const s = this.socket;
    this.socket = undefined;
    s?.destroy();
    this.answer?.(0);
  }
}

/** An open socket of a WebSocket pattern. */
interface Sock {
  ws: WebSocket;
  /** Resolves at its close, whoever closed it. */
  closed: Promise<void>;
  isClosed: boolean;
  /**
   * Set when the attacker closes it (and `cut` when it then ends the connection itself): that close counts
   * as ws-closed. A close frame of the service's own that crossed ours still counts as close-<code>.
   */
  own: boolean;
  cut: boolean;
}

/**
 * Opens one WebSocket (X-Forwarded-For `xff` on the upgrade): resolves with the upgrade's outcome, and the
 * socket when it opened. From then on its frames, bytes and close are counted in `tally`.
 */
function openSocket(url: string, xff: string | undefined, tally: Tally): Promise<{ outcome: string; sock?: Sock }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: 10_000, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } });
    let settled = false;
    const settle = (outcome: string, sock?: Sock) => {
      if (settled) return;
      settled = true;
      resolve({ outcome, sock });
    };
    ws.on('error', () => settle('ws-refused-0'));
    ws.once('unexpected-response', (_req, res) => {
      settle(`ws-refused-${res.statusCode ?? 0}`);
      ws.terminate();
    });
    ws.once('close', () => settle('ws-refused-0'));
    ws.once('open', () => {
      let onClose: () => void = () => undefined;
      const sock: Sock = { ws, closed: new Promise((r) => (onClose = r)), isClosed: false, own: false, cut: false };
      // perMessageDeflate off and the default binaryType: every message is one Buffer.
      ws.on('message', (data) => {
        tally.bytesIn = (tally.bytesIn ?? 0) + (data as Buffer).length;
        bump(tally, frameOutcome(data as Buffer));
      });
      ws.once('close', (code: number) => {
        sock.isClosed = true;
        bump(tally, (sock.own && code === 1000) || sock.cut ? 'ws-closed' : `close-${code}`);
        onClose();
      });
      settle('ws-open', sock);
    });
  });
}

/** The attacker closes `sock` (1000) and waits for the close, at most 2 s (then the connection is cut). */
async function closeOwn(sock: Sock): Promise<void> {
  if (sock.isClosed) return;
  sock.own = true;
  sock.ws.close(1000);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([sock.closed, new Promise<void>((r) => (timer = setTimeout(r, 2000)))]);
  clearTimeout(timer);
  if (!sock.isClosed) {
    sock.cut = true;
    sock.ws.terminate();
    await sock.closed;
  }
}

/** Every token id of the service (GET /markets, every page). */
async function tokenIds(origin: string, headers: Record<string, string>): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const r = await fetch(`${origin}/markets${cursor === undefined ? '' : `?next_cursor=${encodeURIComponent(cursor)}`}`, { headers });
    if (r.status !== 200) throw new Error(`GET /markets: ${r.status} ${await r.text()}`);
    const page = (await r.json()) as { data: { tokens: { token_id: string }[] }[]; next_cursor: string };
    for (const m of page.data) for (const t of m.tokens) out.push(t.token_id);
    cursor = page.next_cursor;
  } while (cursor !== 'LTE=' && cursor !== '');
  return out;
}

/** The API key of `account` for `nonce`: created, or derived when a previous run (the bench's rounds) created it. */
async function apiKey(origin: string, account: PrivateKeyAccount, nonce: bigint, headers: Record<string, string>): Promise<{ apiKey: string; secret: string; passphrase: string }> {
  const info = (await (await fetch(`${origin}/exchange-info`, { headers })).json()) as { authDomain: { name: string; version: string; chainId: number } };
  const created = await fetch(`${origin}/auth/api-key`, { method: 'POST', headers: { ...headers, ...(await l1Headers(account, info.authDomain, nonce)) } });
  const c = (created.status === 200 ? await created.json() : await (await fetch(`${origin}/auth/derive-api-key`, { headers: { ...headers, ...(await l1Headers(account, info.authDomain, nonce)) } })).json()) as { apiKey: string; secret: string; passphrase: string };
  if (c.secret === undefined) throw new Error(`no API key for nonce ${nonce}: ${JSON.stringify(c)}`);
  return c;
}

/** The IPv4 address `n` after `ip` (user-subs' addresses). */
function nthAddress(ip: string, n: number): string {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !(p >= 0 && p <= 255))) throw new Error(`--xff ${ip}: user-subs needs an IPv4 address`);
  const v = ((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]! + n;
  return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
}

/**
 * One dump-flood socket slot until `until`: opens (one attempt per RETRY_MS while down), then sends a
 * message every DUMP_PERIOD_MS while open; adds what its schedule planned to `tally.planned` (see the header).
 */
async function dumpSlot(wsUrl: string, xff: string | undefined, first: readonly string[], again: readonly string[], until: number, tally: Tally): Promise<void> {
  // A phase (down, or open) plans its schedule's due times within it, and never less than it made: a timer
  // may fire a millisecond before its due time as the wall clock reads it.
  const plan = (made: number, start: number, end: number, period: number) => (tally.planned += Math.max(made, dueCount(start, end, period)));
  let down = Date.now();
  let next = down;
  let attempts = 0;
  let sock: Sock | undefined;
  while (next < until) {
    const wait = next - Date.now();
    if (wait > 0) await sleep(wait);
    const started = Date.now();
    if (started >= until) break;
    tally.sent++;
    attempts++;
    next += RETRY_MS;
    const r = await openSocket(wsUrl, xff, tally);
    bump(tally, r.outcome);
    if (r.sock === undefined) continue;
    sock = r.sock;
    plan(attempts, down, started + 1, RETRY_MS);
    attempts = 0;
    const opened = Date.now();
    let k = 0;
    for (;;) {
      const due = opened + k * DUMP_PERIOD_MS;
      if (due >= until) break;
      const ahead = due - Date.now();
      if (ahead > 0) await Promise.race([sleep(ahead), sock.closed]);
      if (sock.ws.readyState !== WebSocket.OPEN) break;
      sock.ws.send(k === 0 ? first[0]! : again[k % again.length]!);
      tally.sent++;
      k++;
    }
    if (sock.ws.readyState === WebSocket.OPEN) {
      // Open to the attack's end: its schedule is done, and so is the slot's.
      plan(k, opened, until, DUMP_PERIOD_MS);
      down = until;
      break;
    }
    // Closing (the service's close frame came): down once the close completes.
    await sock.closed;
    down = Math.min(Date.now(), until);
    plan(k, opened, down, DUMP_PERIOD_MS);
    next = Math.max(next, down);
  }
  // The attempts due after the last socket went down (none when one was open to the end).
  plan(attempts, down, until, RETRY_MS);
  if (sock !== undefined) await closeOwn(sock);
}

/** Runs `o.pattern` against `o.url` for `o.seconds` after its set-up; resolves with what it counted. */
export async function attack(o: AttackOptions): Promise<AttackResult> {
  const url = new URL(o.url);
  // The attack runs for o.seconds from the end of its set-up (keys, signed bodies), which onReady announces,
  // so a caller can time its window from the attack rather than from the process start.
  let until = 0;
  let cpu0 = process.cpuUsage();
  const go = (): number => {
    until = Date.now() + o.seconds * 1000;
    cpu0 = process.cpuUsage();
    o.onReady?.();
    return until;
  };
  const xff = o.xff ? `X-Forwarded-For: ${o.xff}\r\n` : '';
  const xffHeader: Record<string, string> = o.xff ? { 'x-forwarded-for': o.xff } : {};
  const tally: Tally = { sent: 0, planned: 0, statuses: {} };
  const head = (method: string, path: string, extra = '') => `${method} ${path} HTTP/1.1\r\nHost: x\r\n${xff}${extra}Connection: close\r\n`;
  const wsBase = `ws://${url.host}`;

  switch (o.pattern) {
    case 'methods':
      await paced(500, 32, go(), () => raw(url, `${head(`M${Math.random().toString(36).slice(2).toUpperCase()}${'X'.repeat(Math.floor(Math.random() * 4000))}`, '/no/such/route')}\r\n`), tally);
      break;
    case 'arrays': {
      const body = Buffer.from(`[${Array(520_000).fill('1').join(',')}]`);
      // One request, built once: copying 1 MiB per request (500 MiB/s) was client CPU taken from the service's cores.
      const request = Buffer.concat([Buffer.from(`${head('POST', '/last-trades-prices', `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`)}\r\n`), body]);
      await paced(500, 16, go(), () => raw(url, request), tally);
      break;
    }
    case 'nesting':
    case 'nesting-known':
    case 'nesting-unknown': {
      const body = Buffer.from('['.repeat(100_000) + ']'.repeat(100_000));
      const to = (path: string) => {
        const request = Buffer.concat([Buffer.from(`${head('POST', path, `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`)}\r\n`), body]);
        return () => raw(url, request);
      };
      const end = go();
      await Promise.all([
        o.pattern !== 'nesting-unknown' && paced(8, 4, end, to('/prices'), tally),
        o.pattern !== 'nesting-known' && paced(500, 16, end, to('/no/such/route'), tally),
      ]);
      break;
    }
    case 'pipeline': {
      const pipelined = `GET /openapi.json HTTP/1.1\r\nHost: x\r\n${xff}\r\n`.repeat(250);
      tally.planned = 500 * o.seconds;
      go();
      while (Date.now() < until) {
        const sockets = Array.from({ length: 4 }, () => {
          const s = net.connect(Number(url.port), url.hostname, () => s.write(pipelined));
          s.pause();
          s.on('error', () => undefined);
          return s;
        });
        tally.sent += 1000;
        await sleep(2000);
        for (const s of sockets) s.destroy();
      }
      break;
    }
    case 'replay': {
      const account = privateKeyToAccount(`0x${'ab'.repeat(31)}01`);
      const creds = await apiKey(url.origin, account, 0n, xffHeader);
      const wallet = { address: account.address.toLowerCase(), apiKey: creds.apiKey, passphrase: creds.passphrase, hmacKey: Buffer.from(creds.secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64') };
      let captured = l2Headers(wallet, 'DELETE', '/cancel-all');
      let capturedAt = Date.now();
      await paced(500, 32, go(), async () => {
        // A capture is replayable for the skew window: take a fresh one every 20 s.
        if (Date.now() - capturedAt > 20_000) {
          captured = l2Headers(wallet, 'DELETE', '/cancel-all');
          capturedAt = Date.now();
        }
        const r = await fetch(`${url.origin}/cancel-all`, { method: 'DELETE', headers: { ...xffHeader, ...captured } });
        await r.arrayBuffer();
        return r.status;
      }, tally);
      break;
    }
    case 'framing':
      await paced(500, 32, go(), () => raw(url, `${head('POST', '/prices', 'Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 40\r\n')}\r\n[]`), tally);
      break;
    case 'keys': {
      if (!o.key) throw new Error('--key: the private key of a funded wallet');
      const info = (await (await fetch(`${url.origin}/exchange-info`)).json()) as { orderDomain: never; negRiskOrderDomain: never };
      const markets = (await (await fetch(`${url.origin}/markets?limit=1`)).json()) as { data: { tokens: { token_id: string }[]; neg_risk: boolean }[] };
      const market = markets.data.find((m) => m.tokens.length > 0)!;
      const account = privateKeyToAccount(o.key as `0x${string}`);
      const keys: SigningWallet[] = [];
      const hmac: { apiKey: string; passphrase: string; hmacKey: Buffer }[] = [];
      for (let n = 0n; n < 10n; n++) {
        const c = await apiKey(url.origin, account, n, xffHeader);
        keys.push({ privateKey: o.key, address: account.address.toLowerCase(), apiKey: c.apiKey });
        hmac.push({ apiKey: c.apiKey, passphrase: c.passphrase, hmacKey: Buffer.from(c.secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64') });
      }
      const signer = new OrderSigner({ normal: info.orderDomain, negRisk: info.negRiskOrderDomain });
      const perKey = Math.ceil(48 * o.seconds);
      const bodies = keys.map((k) =>
        Array.from({ length: perKey }, (_, i) =>
          JSON.stringify(signer.sign(k, { tokenId: market.tokens[0]!.token_id, negRisk: market.neg_risk, leg: { outcome: 0, side: 'BUY', pricePips: 100, sizeUnits: 5_000_000 }, orderType: 'GTC', salt: i + 1, timestampMs: Date.now() }).submission),
        ),
      );
      const end = go();
      await Promise.all(
        keys.map((k, j) => {
          let i = 0;
          return paced(48, 8, end, () => {
            // Raw bytes on a connection of its own, as the other patterns send: the attacker's own client CPU
            // (fetch's is several times this) is taken from the same two cores as the service's.
            const body = bodies[j]![i++ % perKey]!;
            const l2 = l2Headers({ ...hmac[j]!, address: k.address }, 'POST', '/order', body);
            const extra = Object.entries(l2).map(([name, v]) => `${name}: ${v}\r\n`).join('');
            return raw(url, `${head('POST', '/order', `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}`)}\r\n${body}`);
          }, tally);
        }),
      );
      break;
    }
    case 'dump-flood': {
      // Every token, at most the per-socket subscription cap (500); lists past one message's budget are sent
      // in turn, one per message (the first message carries the first).
      const lists = chunkIds((await tokenIds(url.origin, xffHeader)).slice(0, 500));
      if (lists.length === 0) throw new Error('dump-flood: the service lists no token');
      const first = lists.map((ids) => JSON.stringify({ assets_ids: ids, type: 'market' }));
      const again = lists.map((ids) => JSON.stringify({ operation: 'subscribe', assets_ids: ids, initial_dump: true }));
      tally.bytesIn = 0;
      const end = go();
      await Promise.all(Array.from({ length: DUMP_SOCKETS }, () => dumpSlot(`${wsBase}/ws/market`, o.xff, first, again, end, tally)));
      break;
    }
    case 'user-subs': {
      const account = privateKeyToAccount(`0x${'ab'.repeat(31)}02`);
      const auth = await apiKey(url.origin, account, 0n, xffHeader);
      const addresses = Array.from({ length: USER_ADDRESSES }, (_, i) => (o.xff === undefined ? undefined : nthAddress(o.xff, i + 1)));
      // Each slot's messages, made once: its 500 made-up ids as a first message and subscribe updates.
      const messages = addresses.map(() =>
        Array.from({ length: USER_SOCKETS }, () => {
          const ids = Array.from({ length: USER_IDS }, () => `0x${randomBytes(32).toString('hex')}`);
          return chunkIds(ids).map((part, i) => JSON.stringify(i === 0 ? { auth, markets: part, type: 'user' } : { operation: 'subscribe', markets: part }));
        }),
      );
      tally.bytesIn = 0;
      const end = go();
      const started = Date.now();
      await Promise.all(
        addresses.map(async (address, a) => {
          const held: (Sock | undefined)[] = new Array(USER_SOCKETS).fill(undefined);
          const open = async (slot: number): Promise<string> => {
            const r = await openSocket(`${wsBase}/ws/user`, address, tally);
            held[slot] = r.sock;
            if (r.sock !== undefined) for (const m of messages[a]![slot]!) r.sock.ws.send(m);
            return r.outcome;
          };
          tally.planned += USER_SOCKETS;
          tally.sent += USER_SOCKETS;
          for (const outcome of await Promise.all(held.map((_, slot) => open(slot)))) bump(tally, outcome);
          let turn = 0;
          // The cycles' schedule starts with the attack: those due while the first sockets opened are made then.
          await paced(USER_CYCLES_PER_S, 1, end, async () => {
            let slot = held.findIndex((s) => s === undefined || s.isClosed);
            if (slot < 0) {
              slot = turn++ % USER_SOCKETS;
              await closeOwn(held[slot]!);
            }
            return open(slot);
          }, tally, started);
          await Promise.all(held.map((s) => s && closeOwn(s)));
        }),
      );
      break;
    }
    case 'unsigned-bodies': {
      const body = Buffer.from(`{"pad":"${'a'.repeat(UNSIGNED_BODY_BYTES - 10)}"}`);
      const requests = ['/merge', '/split', '/v1/heartbeats'].map((path) =>
        Buffer.concat([Buffer.from(`POST ${path} HTTP/1.1\r\nHost: x\r\n${xff}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`), body]),
      );
      const connections = Array.from({ length: UNSIGNED_CONNECTIONS }, () => new KeepAlive(url));
      let k = 0;
      await paced(UNSIGNED_RATE, UNSIGNED_CONNECTIONS, go(), () => connections.find((c) => !c.busy)!.request(requests[k++ % requests.length]!), tally);
      for (const c of connections) c.close();
      break;
    }
    case 'refusal-log':
      await refusalLog(url, o.xff, go, tally);
      break;
    case 'hmac-bodies':
    case 'valid-bodies':
      await bodyFlood(url, o.xff, o.pattern === 'valid-bodies', go, tally);
      break;
    case 'sub-grab':
      await subscriptionGrab(url, go, tally);
      break;
    default:
      throw new Error(`unknown pattern ${o.pattern}`);
  }
  const cpu = process.cpuUsage(cpu0);
  return { pattern: o.pattern, ...tally, cpuS: (cpu.user + cpu.system) / 1e6 };
}

// ---- issue 39's patterns ---------------------------------------------------------------------------------

/** refusal-log (see the header): the wallets' keys first, then the refusals, each a connection of its own. */
async function refusalLog(url: URL, xff: string | undefined, go: () => number, tally: Tally): Promise<void> {
  const xffHeader: Record<string, string> = xff === undefined ? {} : { 'x-forwarded-for': xff };
  const wallets: string[] = [];
  for (let i = 0; i < REFUSAL_WALLETS; i++) {
    const account = privateKeyToAccount(`0x${'ac'.repeat(16)}${(i + 1).toString(16).padStart(32, '0')}`);
    await apiKey(url.origin, account, 0n, xffHeader);
    wallets.push(account.address);
  }
  // Every name differs from every other (a counter before one random tail), so the service cannot share them.
  const tail = Buffer.from(`${randomBytes(REFUSAL_NAME_CHARS).toString('hex').slice(0, REFUSAL_NAME_CHARS - 14)}: 1\r\n`);
  const xffLine = xff === undefined ? '' : `X-Forwarded-For: ${xff}\r\n`;
  let n = 0;
  const request = (): Buffer => {
    const parts = [Buffer.from(`POST /order HTTP/1.1\r\nHost: x\r\n${xffLine}POLY_ADDRESS: ${wallets[n % wallets.length]}\r\n`)];
    for (let i = 0; i < REFUSAL_NAMES; i++) parts.push(Buffer.from(`x-${(n * REFUSAL_NAMES + i).toString(36).padStart(10, '0')}-`), tail);
    parts.push(Buffer.from('Content-Length: 2\r\nConnection: close\r\n\r\n{}'));
    n++;
    return Buffer.concat(parts);
  };
  await paced(500, 32, go(), () => raw(url, request()), tally);
}

/**
 * hmac-bodies and valid-bodies (see the header): one free key's DELETE /orders with 1 MiB bodies. The signature
 * is made once a second (its timestamp's), so the attacker's own CPU stays small: a flood, not a hashing bench.
 */
async function bodyFlood(url: URL, xff: string | undefined, valid: boolean, go: () => number, tally: Tally): Promise<void> {
  const xffHeader: Record<string, string> = xff === undefined ? {} : { 'x-forwarded-for': xff };
  const account = privateKeyToAccount(`0x${'ab'.repeat(31)}${valid ? '04' : '03'}`);
  const creds = await apiKey(url.origin, account, 0n, xffHeader);
  const key = valid ? Buffer.from(creds.secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64') : Buffer.alloc(32, 0x66);
  const body = Buffer.from(`{"pad":"${'a'.repeat(BODY_BYTES - 10)}"}`);
  const xffLine = xff === undefined ? '' : `X-Forwarded-For: ${xff}\r\n`;
  let second = -1;
  let request = Buffer.alloc(0);
  const signed = (): Buffer => {
    const now = Math.floor(Date.now() / 1000);
    if (now !== second) {
      second = now;
      const sig = createHmac('sha256', key).update(`${now}DELETE/orders`).update(body).digest('hex');
      const head = `DELETE /orders HTTP/1.1\r\nHost: x\r\n${xffLine}POLY_ADDRESS: ${account.address}\r\nPOLY_API_KEY: ${creds.apiKey}\r\nPOLY_PASSPHRASE: ${creds.passphrase}\r\nPOLY_TIMESTAMP: ${now}\r\nPOLY_SIGNATURE: ${sig}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
      request = Buffer.concat([Buffer.from(head), body]);
    }
    return request;
  };
  const connections = Array.from({ length: BODY_CONNECTIONS }, () => new KeepAlive(url));
  await paced(500, BODY_CONNECTIONS, go(), () => connections.find((c) => !c.busy)!.request(signed()), tally);
  for (const c of connections) c.close();
}

/** sub-grab (see the header): counts upgrades and frames as the WebSocket patterns do, and the victim's outcome. */
async function subscriptionGrab(url: URL, go: () => number, tally: Tally): Promise<void> {
  const wsUrl = `ws://${url.host}/ws/market`;
  const tokens = await tokenIds(url.origin, {});
  if (tokens.length === 0) throw new Error('sub-grab: the service lists no token');
  const lists = chunkIds(tokens.slice(0, 500)).map((ids, i) => JSON.stringify(i === 0 ? { type: 'market', assets_ids: ids, initial_dump: false } : { operation: 'subscribe', assets_ids: ids, initial_dump: false }));
  tally.bytesIn = 0;
  const until = go();
  const held: Sock[] = [];
  await Promise.all(
    Array.from({ length: GRAB_ADDRESSES }, async (_, a) => {
      const address = `10.7.${a}.1`;
      tally.planned += GRAB_SOCKETS;
      await Promise.all(
        Array.from({ length: GRAB_SOCKETS }, async () => {
          tally.sent++;
          const r = await openSocket(wsUrl, address, tally);
          bump(tally, r.outcome);
          if (r.sock === undefined) return;
          held.push(r.sock);
          for (const m of lists) r.sock.ws.send(m);
        }),
      );
    }),
  );
  // Everything asked for is held (or refused): now someone else subscribes.
  await sleep(500);
  tally.planned++;
  tally.sent++;
  const victim = await openSocket(wsUrl, '10.8.0.1', { sent: 0, planned: 0, statuses: {} });
  if (victim.sock === undefined) bump(tally, 'victim-refused');
  else {
    const answered = new Promise<string>((resolve) => {
      victim.sock!.ws.on('message', (data: Buffer) => {
        const text = data.toString();
        if (text === 'PONG') resolve('victim-subscribed');
        else if (/"event_type":"error"/.test(text)) resolve('victim-refused');
      });
    });
    // As much as one socket of the attack asks for: a smaller request could fit in the gap a refused message
    // leaves below the global cap, and pass where the cap is all taken.
    for (const m of lists) victim.sock.ws.send(m);
    victim.sock.ws.send('PING');
    bump(tally, await Promise.race([answered, sleep(10_000).then(() => 'victim-refused')]));
    await closeOwn(victim.sock);
  }
  const left = until - Date.now();
  if (left > 0) await sleep(left);
  await Promise.all(held.map((sock) => closeOwn(sock)));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      pattern: { type: 'string' },
      seconds: { type: 'string', default: '7' },
      xff: { type: 'string' },
      key: { type: 'string' },
    },
  });
  if (!values.url || !values.pattern) throw new Error('usage: tools/abuse.ts --url URL --pattern P [--seconds S] [--xff IP] [--key 0x...]');
  const result = await attack({
    url: values.url,
    pattern: values.pattern,
    seconds: Number(values.seconds),
    xff: values.xff,
    key: values.key,
    // A `{"ready":true}` line: the bench opens its window from it.
    onReady: () => process.stdout.write('{"ready":true}\n'),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
