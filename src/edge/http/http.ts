/**
 * Room edge/http/ (the transport): loading uWS (uws.ts, elf-imports.ts), a request's life on the socket
 * (this file) and how its answer leaves (answer.ts), the JSON body's depth bound (json-body.ts) and static
 * files from memory (static-files.ts).
 * Separate because uWS's rules (copy synchronously, onAborted, cork) are kept in one place and nothing above
 * sees a raw request or response. It knows no route, stage or credential: of edge/ it imports only the
 * refusal header's type (refusals/reason.ts); tools/check-imports.ts EDGE_ROOMS holds every room's directions.
 *
 * The uWS request lifecycle, in one place. uWS hands out request and response objects that are only
 * valid in a narrow window, so every route goes through `serve()`:
 *
 *   1. copy everything needed from the request synchronously (the HttpRequest is dead after the
 *      handler returns): method, path, query, headers, path parameters, peer address;
 *   2. register onAborted before any asynchronous step and keep an `aborted` flag: writing to an
 *      aborted response crashes the process;
 *   3. read the body with a byte cap, copying each chunk (uWS reuses the ArrayBuffer after the
 *      callback). A body over the cap (declared, or received so far) is refused with 413 and a lingering
 *      close, as nginx does: the rest of the upload is read and discarded (nothing is copied) until it
 *      ends, LINGER_BYTES more have arrived or LINGER_MS have passed, and only then is the 413 written
 *      and the connection closed. Closing a socket while the client's bytes are still arriving makes
 *      the kernel answer with a reset, which discards the 413 before a client that is still writing
 *      (Node's http, curl) reads it. At most maxBodyBytes + LINGER_BYTES of a request are ever read; a
 *      declared length beyond that is answered at once. A JSON body's nesting is scanned as it arrives
 *      (maxJsonDepth): past the bound nothing more is kept, and the request runs with `bodyTooDeep`.
 *      Before any of that, a processor's `beforeBody` (pipeline.ts: the admin token, signed headers, the
 *      body's bytes charged to the caller, `bodyBound` of them) may refuse the request on its headers alone:
 *      its answer is written without waiting for the body, none of which is kept. If
 *      the whole body came in the read that carried the head (uWS hands it over right after the handler,
 *      last chunk marked), nothing is left unread: the answer is written then and the connection kept.
 *      Otherwise it is written on the next turn with `Connection: close`, and uWS closes the connection
 *      (FIN, then close). Closing is a must: on a kept connection uWS reads and drops the rest of the body,
 *      however long it is, and then serves what follows, while a response whose answer is complete can no
 *      longer be closed from here (uWS.js throws). So what is read and dropped is bounded by the read that
 *      carried the head plus at most one more before that turn (uWS reads at most 512 KiB at a time; about
 *      120 KiB of a 1 MiB upload on loopback). The client that sent headers and stalls gets its answer at
 *      once, which a lingering close like the 413's would delay. Body bytes still arriving after the close
 *      draw a reset, but the answer is ahead of it: Node's http and curl read it even while writing a 16 MiB
 *      upload (loopback);
 *   4. hand a plain `Incoming` to the processor and check the flag after it settles;
 *   5. write the answer (answer.ts) inside `cork` (one syscall; required outside the handler's synchronous top) with
 *      `tryEnd`, never `end`: `end` hands uWS whatever the socket cannot take, and uWS then goes on to the
 *      next pipelined request, so a client that pipelines requests and never reads made the process buffer
 *      every answer (seen: 5,000 pipelined GET /openapi.json on four sockets, 2.9 GB and a 7 s stall for
 *      everyone). With `tryEnd` a reader that is behind leaves its answer pending: its remaining bytes wait
 *      here until the socket drains (onWritable), and uWS parses nothing more from that connection until
 *      the answer is complete, so a connection holds at most one pending answer. uWS closes one that
 *      makes no progress for its idle timeout (about 10 s), and past MAX_PENDING_BYTES pending over all
 *      connections a new slow reader is closed at once.
 *
 * Processors never see uWS objects; they return an `Outgoing` (or a promise of one).
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { DepthScan } from './json-body.ts';
import { endAndClose, releasePending, writeAnswer, type AnswerSink, type Outgoing } from './answer.ts';

export interface Incoming {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  /** The names of the headers that arrived and were not copied into `headers` (ServeOptions.keptHeaders), in arrival order. */
  otherHeaders?: readonly string[] | undefined;
  params: string[];
  /** Direct peer address (text form). */
  peer: string;
  body: Buffer | undefined;
  /**
   * Set when the body was scanned as it arrived (ServeOptions.maxJsonDepth): true when it nested past the
   * bound (none of it was kept, `body` is undefined), false when it did not (its nesting need not be scanned
   * again). Undefined when nothing scanned it.
   */
  bodyTooDeep?: boolean;
  receivedAt: number;
  /** The sequence the read state reflected as the request began (pipeline.ts, X-Journal-Seq of read routes). */
  seq?: number;
  /**
   * On a sequencer: a request a gateway forwarded (edge/cluster/forward.ts), and what the gateway verified of it.
   * Never set on a request read off a socket.
   */
  forwarded?: boolean;
  hints?: unknown;
}

/** Turns a request into its answer; handed the request once its body is in (or at once, without one). */
export interface Processor {
  (req: Incoming): Outgoing | Promise<Outgoing>;
  /**
   * Runs as soon as the headers are copied, before a byte of a body is read (routes that read one): an answer
   * refuses the request on its headers alone, and the processor itself never runs for it (step 3).
   * `bodyBytes` is the most body the request can make the edge read: its Content-Length within the route's
   * bound, the bound itself for a chunked body, 0 for none.
   */
  beforeBody?: (req: Incoming, bodyBytes: number) => Outgoing | undefined;
}

export interface ServeOptions {
  /** The route's method: uWS matched it, so there is no need to ask; '' = the request's own (any route). */
  method: string;
  /** See every header (signed routes read many, and their refusals name what arrived), or only these lowercase names. */
  allHeaders: boolean;
  headerNames: readonly string[];
  /**
   * With `allHeaders`: the names copied into `headers` (what the route and its refusals read); every other
   * header's name goes to `otherHeaders`, its value dropped. Absent: every header is copied. A header name
   * made an object's key is internalized by V8 (its string table, old space): 38 made-up names a request cost
   * 4.6x the CPU of keeping them in an array, and full collections besides (issue 39's refusal-log flood).
   * The signed routes set it (edge/server.ts); the order path's cost is unchanged (docs/decisions/hardening.md).
   */
  keptHeaders?: ReadonlySet<string>;
  paramCount: number;
  /** Read a body for this route. */
  readBody: boolean;
  /** Read the body only to drop it (no copy is kept): what no route matched. */
  discardBody?: boolean;
  maxBodyBytes: number;
  /**
   * The route's body is JSON bounded at this nesting: each piece is scanned as it arrives, and once the bound
   * is passed nothing more is kept (the request still runs, with `bodyTooDeep`, so its stages answer it).
   */
  maxJsonDepth?: number;
  /** Called when the body passes the cap: the answer to send before closing. */
  tooLarge: () => Outgoing;
  /** Called when the framing headers conflict: the answer to send before closing. */
  badFraming: () => Outgoing;
  /** Called when a processor throws or rejects (a bug): the answer to send. */
  onFault: (err: unknown, req: Incoming) => Outgoing;
  /** In-flight accounting for graceful shutdown. */
  tracker: InFlight;
}

/** Counts requests between arrival and answer so shutdown can wait for them. */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];
  enter(): void {
    this.count++;
  }
  leave(): void {
    if (--this.count === 0) for (const w of this.waiters.splice(0)) w();
  }
  get size(): number {
    return this.count;
  }
  /** Resolves when no request is in flight, or after `timeoutMs`. Returns whether it drained. */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), timeoutMs);
      this.waiters.push(() => {
        clearTimeout(t);
        resolve(true);
      });
    });
  }
}

/** How much of a refused upload is read and discarded before the 413 is written and the socket closed. */
export const LINGER_BYTES = 16 * 1024 * 1024;
/** How long a refused upload may take to arrive before the 413 is written anyway. */
export const LINGER_MS = 3000;

// uWS calls forEach's callback synchronously; module-level targets avoid a closure per request.
let headerTarget: Record<string, string> = {};
let keptTarget: ReadonlySet<string> | undefined;
let otherTarget: string[] | undefined;
let framingBad = false;
function copyHeader(k: string, v: string): void {
  if (k === 'content-length' || k === 'transfer-encoding') noteFraming(k, v);
  else if (keptTarget !== undefined && !keptTarget.has(k)) {
    (otherTarget ??= []).push(k);
    return;
  }
  headerTarget[k] = v;
}

/**
 * Framing a proxy in front could read differently from uWS (which takes the first Content-Length and
 * reads any transfer coding list ending in chunked as chunked): Content-Length twice with different
 * values, Transfer-Encoding twice, or a transfer coding other than a single `chunked`. Such a request is
 * refused with 400 and its connection closed, so nothing rides in its body as a second request.
 */
function noteFraming(k: string, v: string): void {
  const prev = headerTarget[k];
  if (k === 'content-length') {
    if (prev !== undefined && prev !== v) framingBad = true;
  } else if (prev !== undefined || v.trim().toLowerCase() !== 'chunked') {
    framingBad = true;
  }
}

const framingSeen: Record<string, string> = {};
function checkFraming(k: string, v: string): void {
  if (k !== 'content-length' && k !== 'transfer-encoding') return;
  headerTarget = framingSeen;
  noteFraming(k, v);
  framingSeen[k] = v;
}

/** Whether the request's framing headers conflict (see noteFraming); cheap when it has neither. */
function framingConflicts(req: HttpRequest, copiedAll: boolean): boolean {
  if (copiedAll) return framingBad;
  if (req.getHeader('content-length') === '' && req.getHeader('transfer-encoding') === '') return false;
  framingBad = false;
  delete framingSeen['content-length'];
  delete framingSeen['transfer-encoding'];
  req.forEach(checkFraming);
  return framingBad;
}

/**
 * One request in flight. A class rather than closures: every request would otherwise allocate half a
 * dozen function objects (answer, run, the body reader), which is measurable at 100k requests/s.
 */
class Exchange implements AnswerSink {
  aborted = false;
  /** The answer was started; `finished` once its last byte was written or the client went away. */
  answered = false;
  finished = false;
  /** AnswerSink: bytes of a pending answer counted in MAX_PENDING_BYTES. */
  pendingSize = 0;
  chunks: Buffer[] | undefined;
  received = 0;
  /** The body's nesting so far (routes with a JSON body); `exceeded` once past the bound. */
  depth: DepthScan | undefined;
  /** Set while a refused upload is being drained: the answer to write once it ends (lingering close). */
  refusal: Outgoing | undefined;
  /** Set when the processor refused the request on its headers (step 3): the answer, none of the body kept. */
  early: Outgoing | undefined;
  lingerTimer: NodeJS.Timeout | undefined;
  lingerUntil = 0;

  constructor(
    readonly res: HttpResponse,
    readonly opts: ServeOptions,
    readonly processor: Processor,
    readonly incoming: Incoming,
  ) {}

  /** The client went away (or a pending answer was dropped): nothing more is written. */
  abort(): void {
    if (this.finished) return;
    if (this.lingerTimer !== undefined) clearTimeout(this.lingerTimer);
    releasePending(this);
    this.aborted = true;
    this.answered = true;
    this.finish();
  }

  answer(out: Outgoing): void {
    if (this.answered) return;
    this.answered = true;
    if (writeAnswer(this.res, out, this)) this.finish();
  }

  /** AnswerSink: a pending answer's last byte was written. */
  written(): void {
    this.finish();
  }

  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.opts.tracker.leave();
  }

  run(): void {
    let result: Outgoing | Promise<Outgoing>;
    try {
      result = this.processor(this.incoming);
    } catch (err) {
      this.answer(this.opts.onFault(err, this.incoming));
      return;
    }
    if (result instanceof Promise) {
      result.then(
        (out) => {
          if (!this.aborted) this.answer(out);
        },
        (err) => {
          if (!this.aborted) this.answer(this.opts.onFault(err, this.incoming));
        },
      );
    } else {
      this.answer(result);
    }
  }

  /**
   * Answers a request refused on its headers (step 3): keeping the connection if the whole body comes in the
   * read that carried the head (data() sees its last chunk before the next turn), else closing it then.
   */
  refuseEarly(out: Outgoing): void {
    this.early = out;
    setImmediate(() => {
      if (this.answered) return;
      this.answered = true;
      endAndClose(this.res, out, this);
    });
  }

  /** Starts the lingering close of a refused upload (see the header, step 3). */
  refuse(): void {
    this.refusal = { ...this.opts.tooLarge(), close: true };
    this.chunks = undefined;
    this.lingerUntil = this.opts.maxBodyBytes + LINGER_BYTES;
    this.lingerTimer = setTimeout(() => this.endLinger(), LINGER_MS);
  }

  endLinger(): void {
    if (this.lingerTimer !== undefined) clearTimeout(this.lingerTimer);
    if (!this.aborted && this.refusal) this.answer(this.refusal);
  }

  data(chunk: ArrayBuffer, isLast: boolean): void {
    if (this.answered) return;
    if (this.early !== undefined) {
      if (isLast) this.answer(this.early);
      return;
    }
    this.received += chunk.byteLength;
    if (this.refusal) {
      if (isLast || this.received >= this.lingerUntil) this.endLinger();
      return;
    }
    if (this.received > this.opts.maxBodyBytes) {
      this.refuse();
      if (isLast) this.endLinger();
      return;
    }
    if (chunk.byteLength > 0 && this.opts.discardBody !== true) {
      const bytes = new Uint8Array(chunk);
      if (this.depth !== undefined && this.depth.feed(bytes)) {
        this.chunks = undefined;
        this.incoming.bodyTooDeep = true;
      } else {
        // Buffer.from(Uint8Array) copies; the ArrayBuffer is reused by uWS after this callback.
        (this.chunks ??= []).push(Buffer.from(bytes));
      }
    }
    if (isLast) {
      if (this.depth !== undefined) this.incoming.bodyTooDeep = this.depth.exceeded;
      const c = this.chunks;
      this.incoming.body = c === undefined ? undefined : c.length === 1 ? c[0] : Buffer.concat(c, this.received);
      this.run();
    }
  }
}

/** Every header name that arrived: those copied into `headers`, then the others (ServeOptions.keptHeaders). */
export function headerNamesOf(req: Pick<Incoming, 'headers' | 'otherHeaders'>): string[] {
  const names = Object.keys(req.headers);
  return req.otherHeaders === undefined ? names : names.concat(req.otherHeaders);
}

/** Copies the request, reads the body, runs the processor and answers. Attach as a uWS route handler. */
export function serve(res: HttpResponse, req: HttpRequest, opts: ServeOptions, processor: Processor): void {
  const headers: Record<string, string> = {};
  let otherHeaders: string[] | undefined;
  if (opts.allHeaders) {
    headerTarget = headers;
    keptTarget = opts.keptHeaders;
    otherTarget = undefined;
    framingBad = false;
    req.forEach(copyHeader);
    otherHeaders = otherTarget;
  } else {
    for (const name of opts.headerNames) {
      const v = req.getHeader(name);
      if (v !== '') headers[name] = v;
    }
  }
  let params: string[] = NO_PARAMS;
  if (opts.paramCount > 0) {
    params = [];
    for (let i = 0; i < opts.paramCount; i++) params.push(req.getParameter(i) ?? '');
  }
  const incoming: Incoming = {
    method: opts.method || req.getCaseSensitiveMethod(),
    path: req.getUrl(),
    query: req.getQuery() ?? '',
    headers,
    otherHeaders,
    params,
    peer: Buffer.from(res.getRemoteAddressAsText()).toString(),
    body: undefined,
    receivedAt: Date.now(),
    // Set by the pipeline on read routes; present from the start so every request keeps one object shape.
    seq: undefined,
  };

  const x = new Exchange(res, opts, processor, incoming);
  res.onAborted(() => x.abort());
  opts.tracker.enter();

  if (framingConflicts(req, opts.allHeaders)) {
    x.answer({ ...opts.badFraming(), close: true });
    return;
  }
  // A body only dropped is read only when the request says it has one: uWS reports no data at all for a
  // bodiless GET, so waiting for it would never answer.
  const dropOnly = opts.discardBody === true && (headers['content-length'] ?? '0') === '0' && req.getHeader('transfer-encoding') === '';
  if (!opts.readBody || dropOnly) {
    x.run();
    return;
  }
  const early = processor.beforeBody?.(incoming, bodyBound(headers['content-length'], req.getHeader('transfer-encoding') !== '', opts.maxBodyBytes));
  if (early !== undefined) {
    x.refuseEarly(early);
    res.onData((chunk, isLast) => x.data(chunk, isLast));
    return;
  }

  const declared = headers['content-length'];
  if (declared !== undefined && declared !== '' && !(Number(declared) <= opts.maxBodyBytes)) {
    // Too large to drain within the bound (or not a number): answer now; the client cannot be helped.
    if (!(Number(declared) <= opts.maxBodyBytes + LINGER_BYTES)) {
      x.answer({ ...opts.tooLarge(), close: true });
      return;
    }
    x.refuse();
  }
  if (opts.maxJsonDepth !== undefined) x.depth = new DepthScan(opts.maxJsonDepth);
  res.onData((chunk, isLast) => x.data(chunk, isLast));
}

const NO_PARAMS: string[] = [];

/**
 * The most body bytes a request can make the edge read before it is answered: a declared length within the
 * route's bound (past it, at most the bound is kept before the 413), the bound for a chunked body, 0 for a
 * request that declares neither (it has no body).
 */
export function bodyBound(contentLength: string | undefined, chunked: boolean, maxBodyBytes: number): number {
  if (contentLength !== undefined && contentLength !== '') {
    const n = Number(contentLength);
    return n >= 0 ? Math.min(n, maxBodyBytes) : maxBodyBytes;
  }
  return chunked ? maxBodyBytes : 0;
}
