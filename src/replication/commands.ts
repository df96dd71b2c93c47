/**
 * Commands from gateways to the sequencer (ROLE=gateway; docs/decisions/scale-out.md, "Gateways"): core NATS
 * request/reply on `<stream lowercased>.cmd`, never a JetStream work queue. The gateway holds its client's
 * HTTP request open and needs the answer; one round trip carries it, and nothing is stored twice (the
 * sequencer's journal commit is the point of durability). A request lost in flight was never acknowledged:
 * its client gets a 503 and retries, which is safe because an order is idempotent by its id.
 *
 * Subject and membership. Only the sequencer subscribes (queue group `sequencer`, so a second one by
 * mistake splits the load rather than doubling it); a gateway addresses the subject, never a host. NATS's
 * permissions (tools/nats-config.ts) keep other roles off the subject, but the sequencer does not rely on
 * them: it believes a command, its client address and its gateway's verification hints only because the
 * message is sealed with the nodes' key.
 *
 * Sealing (seal.ts; docs/decisions/scale-out.md, "The cluster's threat model"). A command message is encrypted and
 * authenticated whole with the `commands` key (AES-256-GCM), bound to the subject it was sent on (which
 * names the lease's term: a command for another term, or copied to another subject, fails); it carries
 * passphrases and L2 signatures, which so never cross NATS in clear. The sequencer refuses (unanswered,
 * counted on /metrics `pm_commands_refused`, logged at most every 10 s per kind) a message that fails to
 * open, one sent more than `replayWindowMs` away from its clock, and one whose nonce it saw within twice that
 * window (a captured command replayed: admin writes are not idempotent). Its answer is sealed with the
 * `answers` key, bound to the subject and the command's nonce, so an answer is good for exactly the command
 * it answers (it carries new API secrets and passphrases); a gateway refuses any other answer
 * (`pm_gateway_refused_answers`) and answers its client 503.
 *
 * Reads of history. A replica or gateway started from a state snapshot (snapshot-install.ts) lacks the history
 * before its floor, and sends the reads that need it (the routes marked `history`, edge/pipeline/route.ts) to
 * the sequencer the same way, on `<stream lowercased>.reads` (`.reads.<term>` under a lease): a subject of
 * its own, so that a replica's NATS user may send reads and never a write (tools/nats-config.ts), and the
 * sequencer serves on it the history routes only (everything else is answered 404: edge/server.ts dispatch).
 *
 * Batching. What a gateway forwards in one event-loop turn leaves as one message (at most MAX_BATCH
 * requests), and the sequencer answers it with one message, answers in request order.
 *
 * Plaintext (msgpack, plain: any decoder reads it): a request batch `{v: 2, t, q: [request...]}` (t: ms since
 * the epoch when the gateway sent it), a request `{m, p, s, h, b?, ip, t, x?}` (method, path, query string,
 * headers, body bytes, client address, ms it arrived, the gateway's verification hints); an answer batch
 * `{v: 2, a: [answer...]}`, an answer `{s, h?, b, n?, r?}` (status, headers, body text, no-body flag, the
 * refusal's class and text). decode* check the shape, so a malformed message is refused, never half read.
 * Version 1 (unsealed) is read by no build from this one on.
 */
import { isObj, packr, unpackObject } from './msgpack.ts';
import type { Subscription } from '@nats-io/transport-node';
import type { ForwardedAnswer, ForwardedRequest } from '../domain/forwarded.ts';
import type { Logger } from '../runtime/log.ts';
import { openNatsLink, type NatsLink, type StreamSettings } from './nats-link.ts';
import { nonceOf, RefusalLogger, SEAL_OVERHEAD, type ClusterKeys } from './seal.ts';

export const COMMAND_VERSION = 2;
/** Most requests in one command message. */
export const MAX_BATCH = 64;

/**
 * The subject commands travel on. Under a lease (cluster.failover) it names the holder's term, so a deposed
 * sequencer that has not yet noticed (paused, partitioned) is never sent another command: gateways address
 * the term they read in the lease.
 */
export const commandSubject = (stream: string, term?: number, kind: CommandKind = 'commands') => {
  const base = `${stream.toLowerCase()}.${kind === 'reads' ? 'reads' : 'cmd'}`;
  return term === undefined ? base : `${base}.${term}`;
};

/** commands: a gateway's writes (and what else only the sequencer serves); reads: the history reads of a node with a history floor. */
export type CommandKind = 'commands' | 'reads';

/** One forwarded request and its answer: the shapes the edge's two ends agree on (domain/forwarded.ts). */
export type CommandRequest = ForwardedRequest;
export type CommandAnswer = ForwardedAnswer;

export class CommandWireError extends Error {}
/** A message that is not what it claims: not sealed by a node, or for another subject or command. */
export class CommandAuthError extends CommandWireError {}

/** NATS's default max_payload, and what a message needs beyond its requests' own bytes. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
const MESSAGE_OVERHEAD = 4096 + SEAL_OVERHEAD;

/**
 * An upper bound of a request's encoded size: its strings and body, msgpack's framing of each field, and its
 * hints (a few hundred bytes per order: a key of the signed fields, an id, an address).
 */
export function requestBytes(r: ForwardedRequest): number {
  let n = 64 + r.method.length + r.path.length + r.query.length + r.ip.length + (r.body?.length ?? 0);
  for (const k in r.headers) n += k.length + r.headers[k]!.length + 10;
  if (Array.isArray(r.hints)) n += r.hints.length * 1024;
  return n;
}

const isStrings = (v: unknown): v is Record<string, string> => isObj(v) && Object.values(v).every((x) => typeof x === 'string');

export function encodeRequests(reqs: readonly CommandRequest[], sentAt = Date.now()): Uint8Array {
  return packr.pack({
    v: COMMAND_VERSION,
    t: sentAt,
    q: reqs.map((r) => ({ m: r.method, p: r.path, s: r.query, h: r.headers, ...(r.body === undefined ? {} : { b: r.body }), ip: r.ip, t: r.receivedAt, ...(r.hints === undefined ? {} : { x: r.hints }) })),
  });
}

function unpack(bytes: Uint8Array): Record<string, unknown> {
  const v = unpackObject(bytes, (why) => new CommandWireError(why), 'an object');
  if (v.v !== COMMAND_VERSION) throw new CommandWireError(`unknown command version ${JSON.stringify(v.v)} (this build reads ${COMMAND_VERSION})`);
  return v;
}

export function decodeRequests(bytes: Uint8Array): CommandRequest[] {
  return decodeRequestBatch(bytes).reqs;
}

/** A request batch and when its gateway sent it. */
export function decodeRequestBatch(bytes: Uint8Array): { sentAt: number; reqs: CommandRequest[] } {
  const v = unpack(bytes);
  if (typeof v.t !== 'number' || !Number.isFinite(v.t)) throw new CommandWireError('bad time t');
  if (!Array.isArray(v.q) || v.q.length === 0 || v.q.length > MAX_BATCH) throw new CommandWireError('bad request list q');
  const reqs = v.q.map((x: unknown, i: number): CommandRequest => {
    if (!isObj(x)) throw new CommandWireError(`request ${i}: not an object`);
    const { m, p, s, h, b, ip, t } = x;
    if (typeof m !== 'string' || typeof p !== 'string' || typeof s !== 'string' || typeof ip !== 'string' || typeof t !== 'number' || !isStrings(h)) {
      throw new CommandWireError(`request ${i}: bad field`);
    }
    if (b !== undefined && !(b instanceof Uint8Array)) throw new CommandWireError(`request ${i}: bad body`);
    const req: CommandRequest = { method: m, path: p, query: s, headers: h, body: b === undefined ? undefined : Buffer.from(b.buffer, b.byteOffset, b.byteLength), ip, receivedAt: t };
    if (x.x !== undefined) req.hints = x.x;
    return req;
  });
  return { sentAt: v.t, reqs };
}

/** The context a command message is sealed in: its subject (which names the term). */
const commandParts = (subject: string) => ['command', subject];
/** The context an answer is sealed in: the command's subject and nonce (it answers that message only). */
const answerParts = (subject: string, nonce: string) => ['answer', subject, nonce];

/** A request batch sealed for `subject` (seal.ts); `nonce` names the message. */
export function sealRequests(keys: ClusterKeys, subject: string, reqs: readonly CommandRequest[], sentAt = Date.now()): { bytes: Uint8Array; nonce: string } {
  const bytes = keys.seal('commands', commandParts(subject), encodeRequests(reqs, sentAt));
  return { bytes, nonce: nonceOf(bytes) };
}

/** The plaintext of a command message sealed for `subject`, or undefined when it was not (forged, another subject). */
export function openRequests(keys: ClusterKeys, subject: string, bytes: Uint8Array): Uint8Array | undefined {
  return keys.open('commands', commandParts(subject), bytes);
}

export function sealAnswers(keys: ClusterKeys, subject: string, nonce: string, answers: readonly CommandAnswer[]): Uint8Array {
  return keys.seal('answers', answerParts(subject, nonce), encodeAnswers(answers));
}

/** The answers to the command `nonce` sent on `subject`; throws CommandWireError when the message is not that command's answer. */
export function openAnswers(keys: ClusterKeys, subject: string, nonce: string, bytes: Uint8Array, expected: number): CommandAnswer[] {
  const plain = keys.open('answers', answerParts(subject, nonce), bytes);
  if (plain === undefined) throw new CommandAuthError('an answer not sealed by the sequencer for this command');
  return decodeAnswers(plain, expected);
}

export function encodeAnswers(answers: readonly CommandAnswer[]): Uint8Array {
  return packr.pack({
    v: COMMAND_VERSION,
    a: answers.map((a) => ({ s: a.status, ...(a.headers === undefined ? {} : { h: a.headers }), b: a.body, ...(a.noBody === true ? { n: true } : {}), ...(a.refusal === undefined ? {} : { r: a.refusal }) })),
  });
}

export function decodeAnswers(bytes: Uint8Array, expected: number): CommandAnswer[] {
  const v = unpack(bytes);
  if (!Array.isArray(v.a) || v.a.length !== expected) throw new CommandWireError(`expected ${expected} answers`);
  return v.a.map((x: unknown, i: number): CommandAnswer => {
    if (!isObj(x) || typeof x.s !== 'number' || typeof x.b !== 'string' || (x.h !== undefined && !isStrings(x.h))) throw new CommandWireError(`answer ${i}: bad field`);
    const a: CommandAnswer = { status: x.s, body: x.b };
    if (x.h !== undefined) a.headers = x.h as Record<string, string>;
    if (x.n === true) a.noBody = true;
    const r = x.r;
    if (r !== undefined) {
      if (!isObj(r) || typeof r.class !== 'string' || typeof r.text !== 'string') throw new CommandWireError(`answer ${i}: bad refusal`);
      a.refusal = { class: r.class, text: r.text };
    }
    return a;
  });
}

interface Waiting {
  req: CommandRequest;
  resolve: (a: CommandAnswer | undefined) => void;
}

export interface ForwarderStats {
  /** Command messages sent, and the requests they carried. */
  messages: number;
  requests: number;
  /** Requests no sequencer answered (none subscribed, a timeout, a malformed answer). */
  unanswered: number;
  /** Answer messages refused: not sealed by a node for the command they answered (a forgery, a stray). */
  refusedAnswers: number;
}

/**
 * The gateway's side: requests queued in one turn leave as one message; each resolves with its answer, or
 * undefined when no sequencer answered (the edge answers 503 with Retry-After: the client retries).
 */
export class CommandForwarder {
  private link: NatsLink | undefined;
  private queue: Waiting[] = [];
  private scheduled = false;
  private closed = false;
  readonly stats: ForwarderStats = { messages: 0, requests: 0, unanswered: 0, refusedAnswers: 0 };
  private readonly refusals: RefusalLogger;

  /** `term`: under a lease, the holder's term as last read (undefined: no holder known, nothing is sent). */
  constructor(private readonly o: { settings: StreamSettings; logger: Logger; timeoutMs: number; link?: NatsLink; term?: () => number | undefined; kind?: CommandKind }) {
    this.link = o.link;
    this.refusals = new RefusalLogger((d, m) => o.logger.error(d, m));
  }

  /** Where commands go now; undefined under a lease nobody is known to hold. */
  private subject(): string | undefined {
    if (this.o.term === undefined) return commandSubject(this.o.settings.stream, undefined, this.o.kind);
    const term = this.o.term();
    return term === undefined ? undefined : commandSubject(this.o.settings.stream, term, this.o.kind);
  }

  /** Connects (in the background: until it has, forwarded requests are answered as unanswered). */
  start(): void {
    if (this.link !== undefined) return;
    void openNatsLink(this.o.settings, this.o.logger, () => this.closed, 'pm-gateway').then((link) => {
      if (link !== undefined && this.closed) void link.close();
      else this.link = link;
    });
  }

  forward(req: CommandRequest): Promise<CommandAnswer | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.queue.push({ req, resolve });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.o.link === undefined) await this.link?.close().catch(() => undefined);
  }

  /**
   * The most a request may weigh (requestBytes) to travel at all: the server's max_payload (1 MiB unless its
   * configuration says otherwise) less room for one message's framing. The edge refuses heavier ones (413).
   */
  maxRequestBytes(): number {
    return (this.link?.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) - MESSAGE_OVERHEAD;
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    // At most MAX_BATCH requests and the server's max_payload per message.
    const limit = this.maxRequestBytes();
    while (this.queue.length > 0) {
      let n = 0;
      let bytes = 0;
      while (n < this.queue.length && n < MAX_BATCH) {
        const b = requestBytes(this.queue[n]!.req);
        if (n > 0 && bytes + b > limit) break;
        bytes += b;
        n++;
      }
      void this.send(this.queue.splice(0, n));
    }
  };

  private async send(batch: Waiting[]): Promise<void> {
    this.stats.messages++;
    this.stats.requests += batch.length;
    let answers: CommandAnswer[] | undefined;
    const link = this.link;
    const subject = this.subject();
    if (link !== undefined && subject !== undefined && !this.closed) {
      const { keys } = this.o.settings;
      const { bytes, nonce } = sealRequests(keys, subject, batch.map((w) => w.req));
      try {
        const reply = await link.nc.request(subject, bytes, { timeout: this.o.timeoutMs });
        answers = openAnswers(keys, subject, nonce, reply.data, batch.length);
      } catch (err) {
        if (err instanceof CommandAuthError) {
          this.stats.refusedAnswers++;
          this.refusals.refused('forged-answer', { subject, requests: batch.length }, 'refused an answer not sealed by the sequencer for its command (counted: pm_gateway_refused_answers)');
        } else {
          // No responders (no sequencer holds the subject), a timeout, a malformed answer: the client retries.
          this.o.logger.warn({ err: (err as Error).message, requests: batch.length }, 'no sequencer answered forwarded requests');
        }
      }
    }
    if (answers === undefined) this.stats.unanswered += batch.length;
    for (let i = 0; i < batch.length; i++) batch[i]!.resolve(answers?.[i]);
  }
}

/**
 * The sequencer's side: runs each request of a command message through `handle` (the edge's pipeline) and
 * answers the message with all of them, in order.
 */
export class CommandServer {
  private link: NatsLink | undefined;
  private sub: Subscription | undefined;
  private closed = false;
  private readonly inFlight = new Set<Promise<void>>();
  /**
   * Command messages answered; refused as malformed (sealed by a node, unreadable: a bug or another build);
   * refused as not what they claim (not sealed for this subject, outside the replay window, replayed).
   */
  readonly stats = { messages: 0, requests: 0, malformed: 0, refused: 0 };
  private readonly refusals: RefusalLogger;
  private readonly seen: ReplayWindow;

  /**
   * `term`: under a lease, the term this sequencer holds (it takes that term's subject only).
   * `replayWindowMs`: how far a command's sending time may be from this node's clock (default REPLAY_WINDOW_MS).
   */
  constructor(private readonly o: { settings: StreamSettings; logger: Logger; handle: (reqs: CommandRequest[]) => Promise<CommandAnswer[]>; link?: NatsLink; term?: number; replayWindowMs?: number; kind?: CommandKind }) {
    this.link = o.link;
    this.refusals = new RefusalLogger((d, m) => o.logger.error(d, m));
    this.seen = new ReplayWindow(o.replayWindowMs ?? REPLAY_WINDOW_MS);
  }

  /** A command message as it arrived: its requests, or undefined when refused (counted and logged). */
  receive(subject: string, data: Uint8Array, now = Date.now()): { reqs: CommandRequest[]; nonce: string } | undefined {
    const plain = openRequests(this.o.settings.keys, subject, data);
    if (plain === undefined) return this.refuse('forged-command', { subject, bytes: data.length }, 'refused a command not sealed by a gateway for this subject');
    let batch: { sentAt: number; reqs: CommandRequest[] };
    try {
      batch = decodeRequestBatch(plain);
    } catch (e) {
      // Unanswered: the gateway times out and answers 503; the message is logged for the operator.
      this.stats.malformed++;
      this.o.logger.error({ err: (e as Error).message }, 'malformed command message refused');
      return undefined;
    }
    const nonce = nonceOf(data);
    const window = this.seen.windowMs;
    if (Math.abs(now - batch.sentAt) > window) return this.refuse('stale-command', { subject, skewMs: now - batch.sentAt, windowMs: window }, 'refused a command sent outside the replay window (a replay, or clocks apart)');
    if (!this.seen.first(nonce, now)) return this.refuse('replayed-command', { subject }, 'refused a command seen before (a replay)');
    return { reqs: batch.reqs, nonce };
  }

  private refuse(kind: string, detail: Record<string, unknown>, msg: string): undefined {
    this.stats.refused++;
    this.refusals.refused(kind, detail, `${msg} (counted: pm_commands_refused)`);
    return undefined;
  }

  /** Resolves once subscribed (or closed first). */
  async start(): Promise<void> {
    this.link ??= await openNatsLink(this.o.settings, this.o.logger, () => this.closed, 'pm-sequencer-commands');
    if (this.link === undefined || this.closed) return;
    const subject = commandSubject(this.o.settings.stream, this.o.term, this.o.kind);
    this.sub = this.link.nc.subscribe(subject, {
      queue: 'sequencer',
      callback: (err, msg) => {
        if (err !== null) {
          this.o.logger.warn({ err }, 'command subscription error');
          return;
        }
        const got = this.receive(subject, msg.data);
        if (got === undefined) return;
        const { reqs, nonce } = got;
        this.stats.messages++;
        this.stats.requests += reqs.length;
        const done = this.o.handle(reqs).then(
          (answers) => {
            msg.respond(sealAnswers(this.o.settings.keys, subject, nonce, answers));
          },
          (e: unknown) => this.o.logger.error({ err: e }, 'forwarded requests failed'),
        );
        this.inFlight.add(done);
        void done.finally(() => this.inFlight.delete(done));
      },
    });
    await this.link.nc.flush();
  }

  /** Takes no more commands; the ones being handled are still answered, then the connection closes. */
  async close(): Promise<void> {
    this.closed = true;
    this.sub?.unsubscribe();
    await Promise.all([...this.inFlight]);
    if (this.o.link === undefined) await this.link?.close().catch(() => undefined);
  }
}

/**
 * How far a command's sending time may be from the sequencer's clock. Commands outside it are refused, and
 * a nonce needs remembering only while a message carrying it could still be inside it. The nodes' clocks
 * must agree within it (NTP); a gateway that waited longer has answered its client 503 anyway
 * (cluster.forwardTimeoutMs, 5 s by default).
 */
export const REPLAY_WINDOW_MS = 10_000;

/**
 * The nonces of the commands taken, remembered for at least twice the window (a command is taken only within
 * `windowMs` of its sending time, so a replay comes at most 2 windows after the original): two generations,
 * the older dropped every 2 windows. Bounded by the commands one sequencer takes in 4 windows.
 */
class ReplayWindow {
  private current = new Set<string>();
  private previous = new Set<string>();
  private rotatedAt = Date.now();

  constructor(readonly windowMs: number) {}

  /** True the first time `nonce` is seen (and remembers it). */
  first(nonce: string, now: number): boolean {
    if (now - this.rotatedAt >= 2 * this.windowMs) {
      this.previous = this.current;
      this.current = new Set();
      this.rotatedAt = now;
    }
    if (this.current.has(nonce) || this.previous.has(nonce)) return false;
    this.current.add(nonce);
    return true;
  }
}
