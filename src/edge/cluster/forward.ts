/**
 * Room edge/cluster/: the edge's part of running more than one node: gateway forwarding (this file) and
 * the routes a read replica serves (replica-routes.ts). Separate because a single node never needs it; it
 * runs requests through pipeline/ and imports http/ (types), pipeline/ and refusals/, never routes/ or auth/.
 *
 * Requests a gateway forwards to the sequencer, both ends (ROLE=gateway; docs/decisions/scale-out.md, "Gateways").
 * The transport is the command subscription (replication/commands.ts), wired by app.ts; this module holds
 * what the edge decides about it, on either side.
 *
 * On a gateway (pipeline.ts runs it): every route a replica serves is served here from the gateway's own
 * store, and every other one is the sequencer's. Each of those goes through the stages that need no state a
 * lagging stream could lack, exactly as the sequencer would run them: the bearer token of admin routes, the
 * signed headers before the body and then the HMAC against the replicated key, an L1 signature, the caps per
 * client address, key and wallet, the JSON and the schema; a route with `gatewayHints` (POST /order, POST
 * /orders) then has its signatures recovered here (the work that leaves the sequencer). Only what passes is
 * forwarded, so a flood of unsigned or badly signed requests at a gateway costs the sequencer nothing. A key
 * this gateway does not hold (issued a moment ago) waits until the gateway has applied the stream as it
 * stands (`caughtUp`): then it is here, or it does not exist and is refused here; only a gateway that cannot
 * catch up in time forwards such a request whole, and the sequencer decides. The answer, status, headers and body, is the sequencer's, unchanged; a refusal's reason
 * comes back as its class and text and is sent, counted and kept here as a refusal of this node's own.
 * When no sequencer answers in time the gateway answers 503 PM_ERR_NO_SEQUENCER with Retry-After.
 *
 * On the sequencer: a forwarded request runs through the very processor of its route (server.ts
 * `dispatch`) as if it had arrived on a socket, its client address the one the gateway saw; the only
 * differences are that signatures the gateway recovered are taken from its hints (order-check.ts binds
 * each to the exact signed fields) and that a refusal's reason travels back instead of being sent here.
 */
import { apiError } from '../../domain/errors.ts';
import type { ForwardedAnswer, ForwardedRequest } from '../../domain/forwarded.ts';
import { errorReply } from '../pipeline/error-reply.ts';
import type { Incoming } from '../http/http.ts';
import type { Outgoing } from '../http/answer.ts';
import { RETRY_AFTER_SECONDS } from '../pipeline/pipeline.ts';
import { serialize } from '../pipeline/mounted.ts';
import { type Gateway } from '../pipeline/ports.ts';
import { REFUSAL_CLASSES, type RefusalClass } from '../refusals/reason.ts';

/** The gateway's way to the sequencer; undefined when none answered. */
export type SendToSequencer = (req: ForwardedRequest) => Promise<ForwardedAnswer | undefined>;

// Hop-by-hop and proxy headers are the gateway's business, not the sequencer's: the client address travels as `ip`.
const DROPPED = new Set(['x-forwarded-for', 'connection', 'keep-alive', 'transfer-encoding']);

/**
 * `send` delivers to the sequencer; `fits` says whether a request is light enough to travel (the transport's
 * message bound): a heavier one is answered 413 here, as the sequencer would answer a body past its own cap.
 * `caughtUp` is the gateway's follower's (replication/follower.ts).
 */
export function gateway(send: SendToSequencer, fits: (req: ForwardedRequest) => boolean, caughtUp: () => Promise<boolean>): Gateway {
  return {
    caughtUp,
    async forward(req, ip, hints) {
      const headers: Record<string, string> = {};
      for (const k in req.headers) if (!DROPPED.has(k)) headers[k] = req.headers[k]!;
      const fwd: ForwardedRequest = { method: req.method, path: req.path, query: req.query, headers, body: req.body, ip, receivedAt: req.receivedAt };
      if (hints !== undefined) fwd.hints = hints;
      if (!fits(fwd)) return serialize(errorReply(apiError('PM_ERR_BODY_TOO_LARGE')));
      const a = await send(fwd);
      if (a === undefined) return serialize(errorReply(apiError('PM_ERR_NO_SEQUENCER'), { 'Retry-After': String(RETRY_AFTER_SECONDS) }));
      const out: Outgoing = { status: a.status, headers: a.headers, body: a.body };
      if (a.noBody === true) out.noBody = true;
      const r = a.refusal;
      if (r !== undefined && (REFUSAL_CLASSES as readonly string[]).includes(r.class)) out.refusal = { class: r.class as RefusalClass, text: r.text };
      return out;
    },
  };
}

/**
 * The sequencer's side: each forwarded request through `dispatch` (the edge's route table and processors),
 * answers in order. A request that fails outright answers 500, as on a socket.
 */
export function forwardedHandler(dispatch: (req: Incoming) => Outgoing | Promise<Outgoing>): (reqs: ForwardedRequest[]) => Promise<ForwardedAnswer[]> {
  return (reqs) =>
    Promise.all(
      reqs.map(async (r): Promise<ForwardedAnswer> => {
        const req: Incoming = { method: r.method, path: r.path, query: r.query, headers: r.headers, params: [], peer: r.ip, body: r.body, receivedAt: r.receivedAt, seq: undefined, forwarded: true };
        if (r.hints !== undefined) req.hints = r.hints;
        let out: Outgoing;
        try {
          out = await dispatch(req);
        } catch {
          out = serialize(errorReply(apiError('PM_ERR_INTERNAL')));
        }
        const a: ForwardedAnswer = { status: out.status, body: out.body };
        if (out.headers !== undefined) a.headers = out.headers;
        if (out.noBody === true) a.noBody = true;
        if (out.refusal !== undefined) a.refusal = { class: out.refusal.class, text: out.refusal.text };
        return a;
      }),
    );
}
