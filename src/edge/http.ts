/**
 * The uWS request lifecycle, in one place. uWS hands out request and response objects that are only
 * valid in a narrow window, so every route goes through `serve()`:
 *
 *   1. copy everything needed from the request synchronously (the HttpRequest is dead after the
 *      handler returns): method, path, query, headers, path parameters, peer address;
 *   2. register onAborted before any asynchronous step and keep an `aborted` flag: writing to an
 *      aborted response crashes the process;
 *   3. read the body with a byte cap, copying each chunk (uWS reuses the ArrayBuffer after the
 *      callback); a declared Content-Length over the cap is refused before reading, a received
 *      length over the cap as soon as it passes, and the connection is closed so the rest of the
 *      upload is never read;
 *   4. hand a plain `Incoming` to the processor and check the flag after it settles;
 *   5. write the answer inside `cork` (one syscall; required outside the handler's synchronous top).
 *
 * Processors never see uWS objects; they return an `Outgoing` (or a promise of one).
 */
import { STATUS_CODES } from 'node:http';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';

export interface Incoming {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  params: string[];
  /** Direct peer address (text form). */
  peer: string;
  body: Buffer | undefined;
  receivedAt: number;
}

export interface Outgoing {
  status: number;
  headers?: Record<string, string>;
  /** Serialized body. */
  body: string;
  /** Close the connection after answering (used when the request body was not read). */
  close?: boolean;
}

export type Processor = (req: Incoming) => Outgoing | Promise<Outgoing>;

export interface ServeOptions {
  paramCount: number;
  /** Read a body for this route. */
  readBody: boolean;
  maxBodyBytes: number;
  /** Called when the body passes the cap: the answer to send before closing. */
  tooLarge: () => Outgoing;
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

const statusLines = new Map<number, string>();
export function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (!line) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    statusLines.set(status, line);
  }
  return line;
}

function write(res: HttpResponse, out: Outgoing): void {
  res.writeStatus(statusLine(out.status));
  if (out.headers === undefined || out.headers['content-type'] === undefined) res.writeHeader('content-type', 'application/json');
  if (out.headers) for (const k in out.headers) res.writeHeader(k, out.headers[k]);
  res.end(out.body, out.close === true);
}

/** Copies the request, reads the body, runs the processor and answers. Attach as a uWS route handler. */
export function serve(res: HttpResponse, req: HttpRequest, opts: ServeOptions, processor: Processor): void {
  const headers: Record<string, string> = {};
  req.forEach((k, v) => {
    headers[k] = v;
  });
  const params: string[] = [];
  for (let i = 0; i < opts.paramCount; i++) params.push(req.getParameter(i) ?? '');
  const incoming: Incoming = {
    method: req.getMethod().toUpperCase(),
    path: req.getUrl(),
    query: req.getQuery() ?? '',
    headers,
    params,
    peer: Buffer.from(res.getRemoteAddressAsText()).toString(),
    body: undefined,
    receivedAt: Date.now(),
  };

  const state = { aborted: false, answered: false };
  res.onAborted(() => {
    if (!state.answered) {
      state.aborted = true;
      state.answered = true;
      opts.tracker.leave();
    }
  });
  opts.tracker.enter();

  const answer = (out: Outgoing) => {
    if (state.answered) return;
    state.answered = true;
    res.cork(() => write(res, out));
    opts.tracker.leave();
  };

  const run = () => {
    let result: Outgoing | Promise<Outgoing>;
    try {
      result = processor(incoming);
    } catch (err) {
      answer(opts.onFault(err, incoming));
      return;
    }
    if (result instanceof Promise) {
      result.then(
        (out) => {
          if (!state.aborted) answer(out);
        },
        (err) => {
          if (!state.aborted) answer(opts.onFault(err, incoming));
        },
      );
    } else {
      answer(result);
    }
  };

  if (!opts.readBody) {
    run();
    return;
  }

  const declared = headers['content-length'];
  if (declared !== undefined && declared !== '' && !(Number(declared) <= opts.maxBodyBytes)) {
    answer({ ...opts.tooLarge(), close: true });
    return;
  }

  const chunks: Buffer[] = [];
  let received = 0;
  res.onData((chunk, isLast) => {
    if (state.answered) return;
    received += chunk.byteLength;
    if (received > opts.maxBodyBytes) {
      answer({ ...opts.tooLarge(), close: true });
      return;
    }
    // Buffer.from(Uint8Array) copies; the ArrayBuffer is reused by uWS after this callback.
    if (chunk.byteLength > 0) chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) {
      incoming.body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
      run();
    }
  });
}
