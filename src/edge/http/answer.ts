/**
 * How an answer leaves on the socket (http.ts step 5): the status line and headers written inside `cork`, the
 * body with `tryEnd`, what a reader that is behind leaves pending until its socket drains (all connections
 * together bounded by MAX_PENDING_BYTES), and an answer that closes its connection after it. What an answer
 * is (`Outgoing`) is defined here: the processors return it, this file alone writes it. Knows no request.
 */
import { STATUS_CODES } from 'node:http';
import type { HttpResponse } from 'uWebSockets.js';
import type { Refusal } from '../refusals/reason.ts';

export interface Outgoing {
  status: number;
  headers?: Record<string, string>;
  /** Serialized body. */
  body: string;
  /** Close the connection after answering (used when the request body was not read). */
  close?: boolean;
  /** Status and headers only (the answer to HEAD). */
  noBody?: boolean;
  /** Why the request was refused (route.ts Reply.refusal); the pipeline sends it as a header, never as body. */
  refusal?: Refusal;
}

/** Bound of the answer bytes waiting for slow readers, all connections together (http.ts step 5). */
export const MAX_PENDING_BYTES = 64 * 1024 * 1024;
let pendingBytes = 0;

/** Answer bytes waiting for slow readers right now (metrics, tests). */
export function pendingAnswerBytes(): number {
  return pendingBytes;
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

function writeHead(res: HttpResponse, out: Outgoing): void {
  res.writeStatus(statusLine(out.status));
  if (out.headers === undefined || out.headers['content-type'] === undefined) res.writeHeader('content-type', 'application/json');
  if (out.headers) for (const k in out.headers) res.writeHeader(k, out.headers[k]);
}

/**
 * Who is told when a pending answer is complete; `pendingSize` is what it holds of MAX_PENDING_BYTES;
 * `aborted` once uWS reported the client gone (nothing may be written then).
 */
export interface AnswerSink {
  pendingSize: number;
  aborted: boolean;
  written(): void;
}

/** Gives back what a pending answer held (its client went away, or it completed). */
export function releasePending(sink: AnswerSink): void {
  pendingBytes -= sink.pendingSize;
  sink.pendingSize = 0;
}

/**
 * Writes a whole answer on a response whose reader may be behind (http.ts step 5). Returns true when it is
 * complete; otherwise the rest is written as the socket drains and `sink.written()` is called then, or
 * the connection is closed (uWS then reports it aborted: the caller's onAborted must releasePending).
 */
export function writeAnswer(res: HttpResponse, out: Outgoing, sink: AnswerSink): boolean {
  if (out.close === true) {
    // Written on the next turn: from inside its own parser callback uWS does not close the connection
    // but goes on to the next pipelined request, which is what a refusal with a close must prevent. With
    // the answer pending, uWS parses nothing more from the connection; if the client pipelined more, uWS
    // closes the connection itself and this answer is not sent, but nothing after the refused request runs.
    setImmediate(() => endAndClose(res, out, sink));
    return false;
  }
  if (out.noBody === true) {
    res.cork(() => {
      writeHead(res, out);
      res.endWithoutBody();
    });
    return true;
  }
  const size = Buffer.byteLength(out.body);
  let complete = true;
  res.cork(() => {
    writeHead(res, out);
    complete = res.tryEnd(out.body, size)[1];
  });
  if (complete) return true;
  if (pendingBytes + size > MAX_PENDING_BYTES) {
    res.close();
    return false;
  }
  // The body's bytes from the write offset on; the offset counts body bytes only.
  const bytes = Buffer.from(out.body);
  pendingBytes += size;
  sink.pendingSize = size;
  res.onWritable((offset) => {
    const [ok, finished] = res.tryEnd(bytes.subarray(offset), size);
    if (finished) {
      releasePending(sink);
      sink.written();
    }
    return ok;
  });
  return false;
}

/** Writes an answer and closes the connection; only from outside uWS's parser callbacks (see writeAnswer). */
export function endAndClose(res: HttpResponse, out: Outgoing, sink: AnswerSink): void {
  if (!sink.aborted) {
    res.cork(() => {
      writeHead(res, out);
      res.end(out.body, true);
    });
  }
  sink.written();
}
