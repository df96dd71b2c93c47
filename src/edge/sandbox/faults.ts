/**
 * Fault injection: what makes bots fail in production, on demand and replayable. A scenario (schemas/
 * sandbox.ts FaultScenario) comes from the admin API (PUT /admin/sandbox/faults) or from the file
 * `sandbox.faultsFile` names at start; there is none by default, and none in the default configuration.
 *
 *   ackLatency   the answer of an order route waits a fixed time or a draw of a uniform or exponential
 *                distribution, after the order (or cancel) was applied: the acknowledgement is slow, the
 *                effect is not;
 *   error500     a share of order requests answered 500 {"error":"internal error"}, of which `appliedShare`
 *                after the order was applied and the rest without applying it: a bot must ask GET
 *                /data/order/{id} (or /data/orders) to know which;
 *   error503     a share of the order-book API's requests (order routes, books, prices, /data/*) answered
 *                503 {"error":"service unavailable"}, not applied.
 *
 * Determinism. Every draw is seededUnit(seed, fault, n), n counting the requests the scenario has seen since
 * it was set (order routes and the other order-book routes alike, in arrival order): the same seed and the
 * same sequence of requests meet the same faults, whatever their timing. Each injected fault is logged
 * (fault, route, n) and counted in /metrics (`sandbox_faults_injected_total{fault}`); the configured share
 * of each fault is the gauge `sandbox_fault_share{fault}`, so an active scenario is visible in both.
 *
 *   streams      stalled or dropped WebSocket sockets (scenario `streams`): which sockets, and when, is
 *                drawn here (forSocket, drop, stall); edge/ws/socket-faults.ts runs the timers and
 *                edge/ws/channels.ts does it to the socket.
 *
 * Sockets are numbered like requests, per channel (market, user): the sockets open when the scenario is set
 * first, in the order they opened, then each new one as it opens. A socket's faults are
 * seededUnit(seed, fault of its channel, its number), so the same seed and the same sequence of connections
 * fault the same sockets after the same times; per channel, so that a bot's market and user sockets, whose
 * opening may race, are each numbered the same way on every run. A socket's draws are counted when the fault
 * happens (a socket closed before its time is not), as `stream_drop` and `stream_stall`.
 */
import { readFileSync } from 'node:fs';
import { Counter, Gauge, type Registry } from 'prom-client';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { seededUnit } from '../../domain/seeded.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/log.ts';
import { FaultScenario, type AckLatency, type FaultsState, type SocketDelay } from '../schemas/sandbox.ts';
import type { SocketChannel, StreamFaultSource } from '../ws/socket-faults.ts';

const STREAM_503 = 1;
const STREAM_500 = 2;
const STREAM_APPLIED = 3;
const STREAM_LATENCY_SHARE = 4;
const STREAM_LATENCY = 5;
// Stream faults: these plus USER_STREAMS for user sockets, so each channel draws on its own.
const STREAM_DROP = 6;
const STREAM_DROP_AFTER = 7;
const STREAM_STALL = 8;
const STREAM_STALL_AFTER = 9;
const STREAM_STALL_FOR = 10;
const USER_STREAMS = 16;
/** A repeating stall's k-th draw is number n * STALLS + k of its stream: at most STALLS stalls per socket. */
const STALLS = 65_536;

/** What one order request meets. */
export interface OrderFaults {
  /** Answered 503 without being applied. */
  error503: boolean;
  /** Answered 500, after being applied or without. */
  error500: 'applied' | 'not-applied' | undefined;
  /** Added before the answer, after the order was applied. */
  latencyMs: number;
}

const NO_FAULTS: Readonly<OrderFaults> = Object.freeze({ error503: false, error500: undefined, latencyMs: 0 });

const checkScenario = TypeCompiler.Compile(FaultScenario);

/** Everything wrong with a scenario, as the admin API lists problems ([] when valid). */
export function scenarioProblems(s: unknown): Array<{ path: string; message: string }> {
  const out = [...checkScenario.Errors(s)].map((e) => ({ path: e.path || '/', message: e.message }));
  if (out.length > 0) return out;
  const sc = s as FaultScenario;
  const ordered = (d: AckLatency | SocketDelay | undefined, path: string) => {
    if (d !== undefined && d.distribution === 'uniform' && d.minMs > d.maxMs) out.push({ path: `${path}/minMs`, message: 'must not exceed maxMs' });
  };
  ordered(sc.ackLatency, '/ackLatency');
  ordered(sc.streams?.drop?.afterMs, '/streams/drop/afterMs');
  ordered(sc.streams?.stall?.afterMs, '/streams/stall/afterMs');
  ordered(sc.streams?.stall?.forMs, '/streams/stall/forMs');
  return out;
}

/** Reads and checks a scenario file; throws naming the file and its first problem. */
export function readScenarioFile(path: string): FaultScenario {
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`sandbox.faultsFile: cannot read ${path} as JSON: ${(e as Error).message}`);
  }
  const problems = scenarioProblems(v);
  if (problems.length > 0) throw new Error(`sandbox.faultsFile: ${path}: ${problems[0].path} ${problems[0].message}`);
  return v as FaultScenario;
}

/** A latency or delay drawn from `u` in [0, 1). */
function latencyOf(l: AckLatency | SocketDelay, u: number): number {
  switch (l.distribution) {
    case 'fixed':
      return l.ms;
    case 'uniform':
      return l.minMs + Math.floor(u * (l.maxMs - l.minMs + 1));
    case 'exponential':
      return Math.min(l.maxMs, Math.round(-l.meanMs * Math.log(1 - u)));
  }
}

type Injected = FaultsState['injected'];
const FAULT_LABELS: Record<keyof Injected, string> = {
  latency: 'ack_latency',
  error500Applied: 'error_500_applied',
  error500NotApplied: 'error_500_not_applied',
  error503: 'error_503',
  streamDrop: 'stream_drop',
  streamStall: 'stream_stall',
};

const NO_INJECTED: Readonly<Injected> = Object.freeze({ latency: 0, error500Applied: 0, error500NotApplied: 0, error503: 0, streamDrop: 0, streamStall: 0 });

export class FaultInjector implements StreamFaultSource {
  private scenario: FaultScenario | undefined;
  private source: 'admin' | 'file' | undefined;
  private since = 0;
  private n = 0;
  private sockets = { market: 0, user: 0 };
  private injected: Injected = { ...NO_INJECTED };
  private readonly counter: Counter<'fault'>;
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly log: Logger,
    private readonly clock: Clock,
    registry: Registry,
  ) {
    this.counter = new Counter({
      name: 'sandbox_faults_injected_total',
      help: 'Faults the sandbox injected (fault scenario), by fault',
      labelNames: ['fault'] as const,
      registers: [registry],
    });
    const shares = (): Array<[string, number]> => {
      const s = this.scenario;
      return [
        ['ack_latency', s?.ackLatency === undefined ? 0 : (s.ackLatency.share ?? 1)],
        ['error_500', s?.error500?.share ?? 0],
        ['error_503', s?.error503?.share ?? 0],
        ['stream_drop', s?.streams?.drop?.share ?? 0],
        ['stream_stall', s?.streams?.stall?.share ?? 0],
      ];
    };
    new Gauge({
      name: 'sandbox_fault_share',
      help: 'Share of requests each configured fault applies to (0: off)',
      labelNames: ['fault'] as const,
      registers: [registry],
      collect() {
        for (const [fault, share] of shares()) this.labels(fault).set(share);
      },
    });
  }

  get active(): boolean {
    return this.scenario !== undefined;
  }

  /**
   * Replaces the scenario (undefined: none); the request and socket counts and the injected faults start
   * again from 0, and the listeners (the streaming channels) are told, so they end every stream fault in
   * progress and draw the open sockets' faults under the new scenario.
   */
  set(scenario: FaultScenario | undefined, source: 'admin' | 'file'): void {
    this.scenario = scenario === undefined || Object.keys(scenario).filter((k) => k !== 'seed').length === 0 ? undefined : structuredClone(scenario);
    this.source = this.scenario === undefined ? undefined : source;
    this.since = this.clock.now();
    this.n = 0;
    this.sockets = { market: 0, user: 0 };
    this.injected = { ...NO_INJECTED };
    if (this.scenario !== undefined) this.log.warn({ scenario: this.scenario, source }, 'fault injection on');
    else this.log.info({ source }, 'fault injection off');
    for (const l of this.listeners) l();
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** A socket of `channel` to number: its number, or undefined when the scenario has no stream faults. */
  forSocket(channel: SocketChannel): number | undefined {
    if (this.scenario?.streams === undefined) return undefined;
    return ++this.sockets[channel];
  }

  /** Whether socket `n` of `channel` is dropped, and after how long from when it was numbered. */
  drop(channel: SocketChannel, n: number): { afterMs: number; how: 'abrupt' | 'going-away' } | undefined {
    const d = this.scenario?.streams?.drop;
    if (d === undefined || !(d.channels ?? ['market', 'user']).includes(channel)) return undefined;
    const seed = this.scenario!.seed ?? 1;
    const off = channel === 'user' ? USER_STREAMS : 0;
    if (seededUnit(seed, STREAM_DROP + off, n) >= d.share) return undefined;
    return { afterMs: latencyOf(d.afterMs, seededUnit(seed, STREAM_DROP_AFTER + off, n)), how: d.how ?? 'abrupt' };
  }

  /**
   * Stall `k` (0 the first) of socket `n` of `channel`: after how long from when the socket was numbered
   * (k = 0) or from the end of the previous stall, and for how long. Undefined when the socket does not
   * stall, or the scenario does not repeat stalls and k > 0.
   */
  stall(channel: SocketChannel, n: number, k: number): { afterMs: number; forMs: number } | undefined {
    const st = this.scenario?.streams?.stall;
    if (st === undefined || !(st.channels ?? ['market', 'user']).includes(channel)) return undefined;
    if (k > 0 && (st.repeat !== true || k >= STALLS)) return undefined;
    const seed = this.scenario!.seed ?? 1;
    const off = channel === 'user' ? USER_STREAMS : 0;
    if (seededUnit(seed, STREAM_STALL + off, n) >= st.share) return undefined;
    const draw = n * STALLS + k;
    return { afterMs: latencyOf(st.afterMs, seededUnit(seed, STREAM_STALL_AFTER + off, draw)), forMs: latencyOf(st.forMs, seededUnit(seed, STREAM_STALL_FOR + off, draw)) };
  }

  /** A stream fault happened to socket `n` of `channel`: counted and logged like the others. */
  socketFault(fault: 'drop' | 'stall', channel: SocketChannel, n: number, ms: number): void {
    const key = fault === 'drop' ? 'streamDrop' : 'streamStall';
    this.injected[key]++;
    this.counter.labels(FAULT_LABELS[key]).inc();
    this.log.info({ fault: FAULT_LABELS[key], channel, socket: n, ms }, 'injected fault');
  }

  /** An order request (placement or cancel) on `route`: the faults it meets. */
  forOrder(route: string): Readonly<OrderFaults> {
    const s = this.scenario;
    if (s === undefined) return NO_FAULTS;
    const n = ++this.n;
    const seed = s.seed ?? 1;
    if (s.error503 !== undefined && seededUnit(seed, STREAM_503, n) < s.error503.share) {
      this.note('error503', route, n);
      return { error503: true, error500: undefined, latencyMs: 0 };
    }
    let error500: OrderFaults['error500'];
    if (s.error500 !== undefined && seededUnit(seed, STREAM_500, n) < s.error500.share) {
      error500 = seededUnit(seed, STREAM_APPLIED, n) < s.error500.appliedShare ? 'applied' : 'not-applied';
      this.note(error500 === 'applied' ? 'error500Applied' : 'error500NotApplied', route, n);
    }
    let latencyMs = 0;
    const l = s.ackLatency;
    if (error500 !== 'not-applied' && l !== undefined && seededUnit(seed, STREAM_LATENCY_SHARE, n) < (l.share ?? 1)) {
      latencyMs = latencyOf(l, seededUnit(seed, STREAM_LATENCY, n));
      if (latencyMs > 0) this.note('latency', route, n, latencyMs);
    }
    return { error503: false, error500, latencyMs };
  }

  /** Another order-book API request on `route`: whether it is answered 503. */
  forOther(route: string): boolean {
    const s = this.scenario;
    if (s === undefined) return false;
    const n = ++this.n;
    if (s.error503 === undefined || seededUnit(s.seed ?? 1, STREAM_503, n) >= s.error503.share) return false;
    this.note('error503', route, n);
    return true;
  }

  state(): FaultsState {
    return {
      scenario: this.scenario === undefined ? null : structuredClone(this.scenario),
      source: this.source ?? null,
      since: this.scenario === undefined ? null : new Date(this.since).toISOString(),
      requests: this.n,
      sockets: { ...this.sockets },
      injected: { ...this.injected },
    };
  }

  private note(fault: keyof Injected, route: string, n: number, ms?: number): void {
    this.injected[fault]++;
    this.counter.labels(FAULT_LABELS[fault]).inc();
    this.log.info({ fault: FAULT_LABELS[fault], route, n, ...(ms === undefined ? {} : { ms }) }, 'injected fault');
  }
}
