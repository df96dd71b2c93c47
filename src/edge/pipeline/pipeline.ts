/**
 * Room edge/pipeline/: the stages every request passes (this file), what they are handed (ports.ts), what a
 * route is (route.ts) and a route as mounted (mounted.ts), the compiled schemas (validate.ts), the one place
 * that picks an error's status and body (error-reply.ts), how a refusal carries its reason (refusal-answer.ts),
 * the replay guard (replays.ts), the OpenAPI document (openapi.ts) and the metrics the stages record
 * (metrics.ts). Separate because it is the order of checks, not any one check: it uses http/, limits/ and refusals/, runs
 * the Authenticator it is handed (auth/ implements it) and asks cluster/ only which routes a replica serves.
 * It never imports auth/, routes/, ws/ or sandbox/.
 *
 * What every request goes through once http.ts has copied it off the socket, as named stages. Each stage
 * either answers (a catalogue error in the route group's form, error-reply.ts) or hands on:
 *
 *   head       before a byte of a body is read (`beforeBody`): the admin token, sign's first half and a
 *              benched key (below), then the body's bytes charged to the client address and, on a signed
 *              route, its key (rate-limit-bytes.ts; 429 past either, the body unread)
 *   gate       admin routes: the bearer token (404 when no token is configured)
 *   sign       l2 routes: API key + HMAC over the raw bytes, before anything parses them, in two halves.
 *              Everything the headers alone decide (every header present and well-formed, the key known,
 *              not revoked and of a kind the route takes, the address its owner, the passphrase its own,
 *              the timestamp within the skew) runs as soon as http.ts has copied the headers, before a
 *              byte of body is read (`beforeBody`), so a caller without credentials never makes the edge
 *              read, let alone parse, a large body; only the HMAC waits for the body (and, for a body of at
 *              most HEAD_DECIDES_ABOVE, a head that fails only on its address or passphrase: its HMAC may
 *              prove the secret, which decides what its reason may say). A key whose HMAC keeps failing is
 *              refused on its head where its body may be large (hmac-strikes.ts). A failure of either half
 *              answers the same 401 and is charged to the client address, so random keys cannot dodge the
 *              caps. A route names the key kinds it accepts (RouteDef.keys: trading, read-only, builder);
 *              a valid key of another kind is a failure like a bad signature. A route with `authOptional`
 *              serves as a public one a request that carries no credential headers of its kinds (the L2
 *              API key header for trading and read-only keys, the builder API key header for builder
 *              keys): headers of another kind are not the route's business and are ignored, so they
 *              never turn a public read into a refusal. A body http.ts found nested past the bound was not
 *              kept, so its HMAC cannot be checked: it is refused here as too deep, charged to the client
 *              address
 *   admit      rate limits (rate-limit.ts): the API key once the HMAC passed, else the client address; the
 *              trading windows also per wallet (all its keys together). A route that charges per item of
 *              its body (POST /orders) is first asked whether one unit fits, without charging, so a caller
 *              already over a cap is refused before its body is parsed
 *   parse      the JSON body, nesting bounded (json-body.ts), then the per-item charge
 *   l1         l1 routes: the EIP-712 signature (recovered on the signature pool)
 *   replay     signed routes that change something: an identical signed request within its window gets
 *              the first one's answer (replays.ts)
 *   dispatch   guard, path parameters, query and body validated (validate.ts), the handler, its answer
 *
 * On a gateway (forward.ts) a route only the sequencer serves runs these same stages but `replay` (the
 * sequencer keeps the replays), and `dispatch` forwards it instead of running its handler: what the sequencer
 * would refuse without its state is refused here, before anything is forwarded. A key the gateway does not
 * hold waits for it to catch up with the stream (`awaitKey`) before it is refused. On a replica or gateway
 * whose store has a history floor, a route marked `history` (route.ts) goes the same way, to the sequencer's
 * reads subject (PipelineDeps.history).
 *
 * Before the stages, on a read replica: a route only the sequencer serves (replica-routes.ts) answers 421
 * naming the sequencer; `beforeBody` leaves such a request to the stages, so it answers 421 whatever its
 * headers. After them: every answer of a read route carries `X-Journal-Seq`, and on a sequencer every answer
 * of a write route too. On a read route it is the sequence of the state it was read from, taken as the request
 * begins (ROLE=single: the engine's committed journal seq; in a
 * cluster the replication log's: the sequencer's committed rseq, a replica's applied one, which every write
 * moves, API keys and catalog edits included); on a write route, the sequence that covers the write, taken
 * as the answer leaves (the sequencer's last rseq drawn): a replica whose reads report at least that holds it.
 *
 * Refusals explain themselves (`auth.explainRefusals`, refusals/reason.ts): a refusal of the auth stages or
 * of a handler's order checks carries its reason to `finish`, which sends it as the X-Refusal-Reason header
 * (the body stays the contract's; with `auth.reasonInBody` its error text carries the reason too), keeps it
 * for the wallet the credentials name with the client address (GET /refusals) and counts it. The diagnosis runs after the decision, on the refusal path only; a refusal for being past the caps
 * (429) is not diagnosed.
 *
 * A handler that throws something unexpected answers 500 and is logged; it never takes the process down.
 */
import { timingSafeEqual } from 'node:crypto';
import { apiError, type ApiError } from '../../domain/errors.ts';
import { errorReply, problemError, toApiError } from './error-reply.ts';
import type { Incoming, Processor } from '../http/http.ts';
import type { Outgoing } from '../http/answer.ts';
import { MAX_JSON_DEPTH, parseJsonBody, parseScannedJsonBody, type ParsedBody } from '../http/json-body.ts';
import type { Charge, Verdict } from '../limits/rate-limit.ts';
import { servedByReplica } from '../cluster/replica-routes.ts';
import type { ReplayGuard } from './replays.ts';
import { isReply, TRADING_KEYS, type Caller, type HttpMethod, type KeyKind, type RouteRequest } from './route.ts';
import { type Refusal } from '../refusals/reason.ts';
import { headersCouldSign, signedBy, type Gateway, type PipelineDeps, type SignedCaller } from './ports.ts';
import { rateLimitHeaders, serialize, type Mounted } from './mounted.ts';
import { benchedRefusal, explainRefusal } from './refusal-answer.ts';


/** Seconds a client is told to wait before it retries at a node that cannot take its write now. */
export const RETRY_AFTER_SECONDS = 1;

/**
 * A signed request whose body may be larger than this is decided on its head alone when its head fails or
 * its key is benched (`beforeBody`); a smaller one is read first (its bytes charged like any body's), since
 * reading and hashing it costs about what refusing it does.
 */
export const HEAD_DECIDES_ABOVE = 64 * 1024;


function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}


const JSON_NOT_FOUND = JSON.stringify({ error: 'not found' });


/** A body nested past the bound (json-body.ts), found by http.ts as it arrived or by the parse stage. */
const tooDeep = (): ApiError => apiError('PM_ERR_JSON_TOO_DEEP', { max: MAX_JSON_DEPTH });

/** One request on its way through the stages: what each stage found out. */
interface Flow {
  req: Incoming;
  client: { ip: string; key: string };
  caller: Caller;
  charges: Charge[];
  signed: SignedCaller | undefined;
  json: unknown;
}

type Answer = Outgoing | Promise<Outgoing>;

/**
 * The stages of the header for one mounted route, one method each, in order: gate, sign, admit, parse,
 * l1, replay, dispatch. A stage answers (an error in the route group's form) or calls the next one.
 * `beforeBody` is sign's first half, which http.ts runs before the body is read.
 */
class RouteProcessor {
  private readonly auth: string;
  private readonly keys: readonly KeyKind[];
  private readonly perItem: boolean;
  /** A write route on a replica: refused (421) before anything else. */
  private readonly refused: boolean;
  /**
   * A write route on a gateway: through every stage that needs no state a lagging stream could lack (the bearer
   * token, the signed headers before the body, the HMAC, the caps per client address, key and wallet, the JSON,
   * an L1 signature, validation), then forwarded with what the gateway verified (a route's gatewayHints). Only
   * what the sequencer would not refuse on those grounds reaches it (docs/decisions/scale-out.md, "Gateways").
   */
  private readonly forwarding: 'checked' | undefined;
  /** Where a forwarded request goes: the gateway's commands, or a history read's (PipelineDeps.history). */
  private readonly via: Gateway | undefined;
  /** A route only the sequencer serves (what a replica refuses). */
  private readonly writes: boolean;
  /** Read routes: where X-Journal-Seq comes from. */
  private readonly seqOf: (() => number) | undefined;
  /** Write routes: where their answers' X-Journal-Seq comes from. */
  private readonly writeSeqOf: (() => number) | undefined;

  constructor(
    private readonly m: Mounted,
    private readonly d: PipelineDeps,
    private readonly who: (req: Incoming) => { ip: string; key: string },
  ) {
    this.auth = m.route.auth ?? 'none';
    this.keys = m.route.keys ?? TRADING_KEYS;
    this.perItem = m.route.limitCost !== undefined && m.compiled.hasBody;
    const read = servedByReplica(m.route);
    this.via = !read ? d.gateway : m.route.history === true ? d.history : undefined;
    this.forwarding = this.via === undefined ? undefined : 'checked';
    this.refused = d.replica !== undefined && d.gateway === undefined && !read;
    this.writes = !read;
    this.seqOf = read ? d.journalSeq : undefined;
    this.writeSeqOf = read || d.replica !== undefined || d.gateway !== undefined ? undefined : d.writeSeq;
  }

  readonly process = (req: Incoming): Answer => {
    if (this.refused) return this.fail(req, apiError('PM_ERR_READ_REPLICA', { sequencer: this.d.replica!.sequencerUrl() }));
    if (this.writes && this.d.deposed !== undefined) {
      const why = this.d.deposed();
      if (why !== undefined) return this.fail(req, apiError('PM_ERR_DEPOSED'), { 'Retry-After': String(RETRY_AFTER_SECONDS) });
    }
    // Before anything is read: a header at most what the answer reflects, so a client that waits for a
    // write's sequence never takes an older read for a newer one (a handler may await while batches apply).
    if (this.seqOf !== undefined) req.seq = this.seqOf();
    const client = this.who(req);
    return this.gate({ req, client, caller: { ip: client.ip }, charges: [{ caller: client.key, buckets: this.m.buckets }], signed: undefined, json: undefined });
  };

  /** Admin routes: the bearer token; without a configured token the admin API does not exist. */
  private gate(f: Flow): Answer {
    if (this.auth !== 'admin') return this.sign(f);
    if (!this.d.adminToken) return this.finish(f.req, { status: 404, body: JSON_NOT_FOUND });
    const given = f.req.headers['authorization'] ?? '';
    if (given.startsWith('Bearer ') && sameSecret(given.slice(7), this.d.adminToken)) return this.sign(f);
    return this.refuse(f.req, f.client, apiError('PM_ERR_ADMIN_UNAUTHORIZED'));
  }

  /** An authOptional route's request without credential headers of the route's kinds: served as a public one. */
  private isPublic(req: Incoming): boolean {
    return this.m.route.authOptional === true && !(this.d.auth?.presented(req.headers, this.keys) ?? false);
  }

  /**
   * What the head alone decides, called by http.ts once the headers are copied and before a byte of a body is
   * read (`bodyBytes`: the most the body can make it read): an answer refuses the request with its body
   * unread, undefined lets it go on to the stages once the body is in. In order:
   *   - admin routes: the bearer token (the gate's own answer); with it, nothing more (the operator's bytes
   *     are not charged);
   *   - l2 routes (not served as public): `sign`'s first half, the same 401 as `sign` (charged the same way)
   *     when the headers alone already fail, unless only their address or passphrase does (`provable`) and
   *     the body is at most HEAD_DECIDES_ABOVE (then the body is read and `sign` judges the whole request, so
   *     that a caller whose signature proves it holds the secret is told which is wrong: refusals/auth.ts); then,
   *     for a larger body, a key benched for failing its HMAC (hmac-strikes.ts), refused with 401;
   *   - the body's bytes, charged to the client address and, on an l2 route, to the key the headers name
   *     (rate-limit-bytes.ts): 429 past either.
   * Leaves a replica's refused route to `process` (421).
   */
  readonly beforeBody = (req: Incoming, bodyBytes: number): Outgoing | undefined => {
    if (this.refused) return undefined;
    if (this.auth === 'admin') return this.adminHead(req);
    let apiKey: string | undefined;
    if (this.auth === 'l2' && !this.isPublic(req)) {
      const large = bodyBytes > HEAD_DECIDES_ABOVE;
      if (!headersCouldSign(this.keys, this.d.auth, req)) {
        // A key this gateway does not hold yet: the body is read while it catches up (`awaitKey`), its bytes
        // charged to the client address.
        if (this.unknownHere(req)) return this.chargeBody(req, undefined, bodyBytes);
        // Only the address or passphrase wrong, and a small body: read, and the request judged whole once it
        // is in, its HMAC able to prove that the caller holds the secret (then its reason says which is wrong).
        if (!large && this.d.auth?.provable?.(req.headers, this.keys) === true) return this.chargeBody(req, undefined, bodyBytes);
        return this.refuse(req, this.who(req), apiError('PM_ERR_UNAUTHORIZED'), this.explainL2);
      }
      apiKey = this.d.auth!.apiKeyOf?.(req.headers);
      const benched = !large || apiKey === undefined ? 0 : (this.d.strikes?.benched(apiKey, this.d.clock.now()) ?? 0);
      if (benched > 0) return this.refuse(req, this.who(req), apiError('PM_ERR_UNAUTHORIZED'), () => benchedRefusal(apiKey!, benched, this.d.strikes!));
    }
    return this.chargeBody(req, apiKey, bodyBytes);
  };

  /** The body's bytes, charged before it is read (rate-limit-bytes.ts): 429 past the address's or the key's. */
  private chargeBody(req: Incoming, apiKey: string | undefined, bodyBytes: number): Outgoing | undefined {
    const bodies = this.d.bodies;
    if (bodies === undefined || bodyBytes <= 0) return undefined;
    const v = bodies.take(this.who(req).key, apiKey, bodyBytes, this.d.clock.now());
    return v.ok ? undefined : this.limited(req, v);
  }

  /** An admin route's head: the gate's answer when the token is missing or wrong, else undefined. */
  private adminHead(req: Incoming): Outgoing | undefined {
    if (!this.d.adminToken) return this.finish(req, { status: 404, body: JSON_NOT_FOUND });
    const given = req.headers['authorization'] ?? '';
    if (given.startsWith('Bearer ') && sameSecret(given.slice(7), this.d.adminToken)) return undefined;
    return this.refuse(req, this.who(req), apiError('PM_ERR_ADMIN_UNAUTHORIZED'));
  }

  /** Why an l2 route refused the credentials (after deciding, on the refusal path only). */
  private readonly explainL2 = (req: Incoming, ip: string): Refusal | undefined => this.d.refusals?.auth?.l2(req, this.keys, ip);

  /**
   * l2 routes: the HMAC over the raw bytes, before anything parses them (the headers' own checks ran before the
   * body was read, beforeBody, and run again here); a failure is charged to the client address. An
   * authOptional route without credential headers of its kinds is a public request.
   */
  private sign(f: Flow): Answer {
    if (this.auth !== 'l2' || this.isPublic(f.req)) return this.admit(f);
    if (f.req.bodyTooDeep === true) return this.refuse(f.req, f.client, tooDeep());
    const signed = signedBy(this.keys, this.d.auth, f.req);
    if (!signed && this.unknownHere(f.req)) return this.awaitKey(f);
    if (!signed) {
      // Headers that could sign and a signature that does not: the HMAC failed (hmac-strikes.ts).
      const strikes = this.d.strikes;
      if (strikes !== undefined && headersCouldSign(this.keys, this.d.auth, f.req)) {
        const apiKey = this.d.auth!.apiKeyOf?.(f.req.headers);
        if (apiKey !== undefined) strikes.failed(apiKey, this.d.clock.now());
      }
      return this.refuse(f.req, f.client, apiError('PM_ERR_UNAUTHORIZED'), this.explainL2);
    }
    f.signed = signed;
    f.caller.apiKey = signed.apiKey;
    f.caller.address = signed.address;
    f.caller.keyKind = signed.keyKind;
    f.caller.builderCode = signed.builderCode;
    f.charges = [{ caller: `key:${signed.apiKey}`, buckets: this.m.buckets }];
    if (this.m.walletBuckets.length > 0) f.charges.push({ caller: `wallet:${signed.address}`, buckets: this.m.walletBuckets });
    return this.admit(f);
  }

  /**
   * On a gateway: credentials naming a key this node does not hold, which a lagging stream may not have
   * brought yet.
   */
  private unknownHere(req: Incoming): boolean {
    const a = this.d.auth;
    return this.forwarding === 'checked' && a !== undefined && a.presented(req.headers, this.keys) && !a.knowsKey(req.headers);
  }

  /**
   * On a gateway, a key it does not hold: once it has applied the stream as it stands, the key is either here
   * (signed as usual) or does not exist (refused here, as the sequencer would: a flood of made-up keys never
   * reaches it). Only a gateway that cannot catch up in time (its stream lags, or is away) leaves the request to
   * the sequencer, charged to the client address like any refusal.
   */
  private awaitKey(f: Flow): Answer {
    return this.via!.caughtUp().then(
      (caughtUp): Answer => {
        if (this.d.auth!.knowsKey(f.req.headers)) return this.sign(f);
        if (caughtUp) return this.refuse(f.req, f.client, apiError('PM_ERR_UNAUTHORIZED'), this.explainL2);
        const v = this.d.limiter.take(f.client.key, this.m.buckets, 1, this.d.clock.now());
        return v.ok ? this.forward(f.req, f.client.ip) : this.limited(f.req, v);
      },
      (e: unknown) => this.handlerFailed(f.req, e),
    );
  }

  /** On a gateway: the sequencer's answer to the request (forward.ts), with what this node verified of it. */
  private forward(req: Incoming, ip: string, hints?: unknown): Answer {
    return this.via!.forward(req, ip, hints).then((out) => this.finish(req, out));
  }

  /** Rate limits, before the body is parsed: a per-item route is first asked whether one unit fits. */
  private admit(f: Flow): Answer {
    const { limiter, clock } = this.d;
    const v = this.perItem ? limiter.admits(f.charges, 1, clock.now()) : limiter.takeAll(f.charges, 1, clock.now());
    return v.ok ? this.parse(f) : this.limited(f.req, v);
  }

  /** The JSON body, nesting bounded; then what a per-item route charges for it. */
  private parse(f: Flow): Answer {
    const { limiter, clock } = this.d;
    if (this.m.compiled.hasBody) {
      const scanned = f.req.bodyTooDeep;
      const parsed: ParsedBody = scanned === true ? { ok: false, reason: 'too-deep' } : scanned === false ? parseScannedJsonBody(f.req.body) : parseJsonBody(f.req.body);
      if (!parsed.ok) {
        if (this.perItem) limiter.takeAll(f.charges, 1, clock.now());
        return this.fail(f.req, parsed.reason === 'too-deep' ? tooDeep() : apiError('PM_ERR_INVALID_JSON'));
      }
      f.json = parsed.value;
    }
    if (this.perItem) {
      const v = limiter.takeAll(f.charges, Math.max(1, this.m.route.limitCost!(f.json)), clock.now());
      if (!v.ok) return this.limited(f.req, v);
    }
    return this.auth === 'l1' ? this.l1(f) : this.replay(f);
  }

  /** l1 routes: the EIP-712 signature, recovered on the signature pool. */
  private l1(f: Flow): Answer {
    const pending = this.d.auth?.l1(f.req.headers);
    if (!pending) return this.fail(f.req, apiError('PM_ERR_L1_HEADERS'));
    return pending.then((ok) => {
      if (!ok) return this.l1Refused(f.req, f.client.ip);
      f.caller.address = ok.address;
      f.caller.nonce = ok.nonce;
      f.signed = ok;
      return this.replay(f);
    });
  }

  /** A refused L1 signature, with its reason when refusals explain themselves (the diagnosis recovers on the pool). */
  private l1Refused(req: Incoming, ip: string): Answer {
    const e = apiError('PM_ERR_L1_HEADERS');
    const explain = this.d.refusals?.auth;
    if (explain === undefined) return this.fail(req, e);
    return explain.l1(req.headers, ip, req.otherHeaders).then(
      (r) => {
        e.reason = r;
        return this.fail(req, e);
      },
      (err: unknown) => {
        this.d.log.warn({ err }, 'L1 refusal diagnosis failed');
        return this.fail(req, e);
      },
    );
  }

  /** Signed requests that change something: a replay within its window gets the first answer (replays.ts). */
  private replay(f: Flow): Answer {
    const { replays } = this.d;
    const { req, signed } = f;
    // On a gateway the sequencer, where the request takes effect, keeps the replays.
    if (this.m.replay === 'none' || signed === undefined || replays === undefined || this.forwarding !== undefined) return this.dispatch(f);
    const key = `${this.auth}|${req.method}|${req.path}|${signed.replayKey}`;
    const run = (claim: Awaited<ReturnType<ReplayGuard['claim']>>): Answer => {
      if (claim.kind === 'refused') return this.fail(req, claim.error);
      if (claim.kind === 'replay') {
        const answer = claim.answer;
        return answer instanceof Promise ? answer.then((out) => this.finish(req, out)) : this.finish(req, answer);
      }
      const out = this.dispatch(f);
      return out instanceof Promise ? out.then(claim.settle) : claim.settle(out);
    };
    const claim = replays.claim(key, signed.expiresAt, this.m.replay, this.auth === 'l1' ? f.caller.ip : undefined);
    return claim instanceof Promise ? claim.then(run) : run(claim);
  }

  /** Guard, path parameters, query and body validated, the handler, its answer. */
  private dispatch(f: Flow): Answer {
    const { route, compiled } = this.m;
    const { req, caller } = f;
    const refused = route.guard?.(caller);
    if (refused) return this.fail(req, refused);
    const params = compiled.parseParams(req.params);
    if (!params.ok) return this.fail(req, problemError(route.group, params.problem, route.fieldMessages));
    const query = compiled.parseQuery(req.query);
    if (!query.ok) return this.fail(req, problemError(route.group, query.problem, route.fieldMessages));
    let body: unknown = undefined;
    if (compiled.hasBody) {
      const checked = compiled.checkBody(f.json);
      if (!checked.ok) {
        const p = checked.problem;
        if (p.kind === 'too-many' && route.tooMany) return this.fail(req, route.tooMany(p.count!, p.max!));
        const e = problemError(route.group, p, route.fieldMessages);
        if (route.explainBody !== undefined && this.d.refusals !== undefined) e.reason = route.explainBody(f.json);
        return this.fail(req, e);
      }
      body = checked.value;
    }
    const rr: RouteRequest = { method: req.method as HttpMethod, path: req.path, query: query.value, body, params: params.value, headers: req.headers, rawBody: req.body, caller, receivedAt: req.receivedAt };
    if (req.hints !== undefined) rr.hints = req.hints;
    if (this.forwarding === 'checked' && !this.answeredHere(rr)) return this.forwardChecked(f, rr);
    let result: unknown;
    try {
      result = route.handler(rr);
    } catch (e) {
      return this.handlerFailed(req, e);
    }
    if (result instanceof Promise) {
      return result.then(
        (v: unknown) => this.settle(req, v),
        (e: unknown) => this.handlerFailed(req, e),
      );
    }
    return this.settle(req, result);
  }

  /**
   * A history read this node's store holds whole after all, counted; never a write: all of them once its
   * history is backfilled (PipelineDeps.historyHeld), else those the route's heldHere says.
   */
  private answeredHere(rr: RouteRequest): boolean {
    if (this.via !== this.d.history) return false;
    if (this.d.historyHeld?.() !== true && this.m.route.heldHere?.(rr) !== true) return false;
    this.d.metrics.historyHeldHere(this.m.route.path);
    return true;
  }

  /** On a gateway: the signatures recovered here (the route's gatewayHints, where it has some), then the sequencer's answer. */
  private forwardChecked(f: Flow, rr: RouteRequest): Answer {
    const gatewayHints = this.m.route.gatewayHints;
    if (gatewayHints === undefined) return this.forward(f.req, f.client.ip);
    let hints: Promise<unknown>;
    try {
      hints = gatewayHints(rr);
    } catch (e) {
      return this.handlerFailed(f.req, e);
    }
    return hints.then(
      (h) => this.forward(f.req, f.client.ip, h),
      (e: unknown) => this.handlerFailed(f.req, e),
    );
  }

  private finish(req: Incoming, out: Outgoing): Outgoing {
    // A forwarded request's reason goes back to the gateway that answers it, which sends and keeps it.
    if (out.refusal !== undefined && req.forwarded !== true) explainRefusal(this.d.refusals, req, out, () => this.who(req).ip);
    if (this.seqOf !== undefined) out.headers = { ...out.headers, 'X-Journal-Seq': String(req.seq ?? this.seqOf()) };
    else if (this.writeSeqOf !== undefined) out.headers = { ...out.headers, 'X-Journal-Seq': String(this.writeSeqOf()) };
    this.m.metrics.observe(out.status, (Date.now() - req.receivedAt) / 1000);
    return out;
  }

  private fail(req: Incoming, e: ApiError, headers?: Record<string, string>): Outgoing {
    return this.finish(req, serialize(errorReply(e, headers)));
  }


  /**
   * An authentication failure, charged to the client address (random keys cannot dodge the caps); `explain`
   * says why when it is answered (not when the address is past its caps: a flood is not diagnosed).
   */
  private refuse(req: Incoming, client: { ip: string; key: string }, e: ApiError, explain?: (req: Incoming, ip: string) => Refusal | undefined): Outgoing {
    const v = this.d.limiter.take(client.key, this.m.buckets, 1, this.d.clock.now());
    if (!v.ok) return this.limited(req, v);
    if (explain !== undefined) {
      try {
        e.reason = explain(req, client.ip);
      } catch (err) {
        this.d.log.warn({ err, route: this.m.label }, 'refusal diagnosis failed');
      }
    }
    return this.fail(req, e);
  }

  private limited(req: Incoming, v: Verdict): Outgoing {
    this.d.metrics.rateLimited(v.bucket);
    return this.fail(req, apiError('PM_ERR_RATE_LIMITED'), rateLimitHeaders(v));
  }

  private handlerFailed(req: Incoming, e: unknown): Outgoing {
    const { error, unexpected } = toApiError(e);
    if (unexpected) this.d.log.error({ err: e, route: this.m.label }, 'handler failed');
    return this.fail(req, error);
  }

  private settle(req: Incoming, v: unknown): Outgoing {
    return this.finish(req, isReply(v) ? serialize(v) : { status: 200, body: v === undefined ? 'null' : JSON.stringify(v) });
  }
}

/** The request processor of one mounted route: the stages of the header, in order (what the head decides before the body). */
export function processorFor(m: Mounted, d: PipelineDeps, who: (req: Incoming) => { ip: string; key: string }): Processor {
  const p = new RouteProcessor(m, d, who);
  const processor: Processor = p.process;
  processor.beforeBody = p.beforeBody;
  return processor;
}

