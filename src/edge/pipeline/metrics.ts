/**
 * Prometheus metrics (prom-client) on a registry of our own, so several servers in one process (tests)
 * never collide. Label children are cached per route: looking labels up per request would cost more
 * than the observation itself.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EngineStats } from '../../engine/engine.ts';

/**
 * Buckets of the stage histograms: fine where a request's budget is (a p99 under 10 ms at 5,000 orders/s),
 * coarse past it. bench/trading/orders.bench.ts reads them to say where a request's time went.
 */
const STAGE_BUCKETS = [0.00025, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.25, 1, 5];
/** The main thread's GC pauses stop every request in flight: the same resolution (prom-client's default is 1 ms, 10 ms, ...). */
const GC_BUCKETS = [0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.5, 1, 5];

/** The WebSocket channels' counters (edge/ws/channels.ts); `channel` is market or user, `reason` a closed set. */
export interface StreamMetrics {
  opened(channel: string): void;
  closed(channel: string, reason: string): void;
  /** Upgrades answered with an HTTP error (429, 503) instead of a socket. */
  refused(channel: string, status: string): void;
  /** An upgrade or a message refused by one of the channels' bounds; `reason` is a closed set (channels.ts RefusalReason). */
  refusal(channel: string, reason: string): void;
  /** Subscriptions added (negative: removed). */
  subscriptions(channel: string, delta: number): void;
  /** `frames` frames of `bytes` bytes in all were queued to sockets. */
  sent(channel: string, frames: number, bytes: number): void;
  /** A frame uWS dropped for a socket past its send-buffer bound. */
  dropped(channel: string): void;
  /** Seconds from a batch's commit being durable to its last frame published. */
  published(seconds: number): void;
  /** Sockets a stall fault holds (negative: released). */
  stalled(channel: string, delta: number): void;
}

export interface RouteMetrics {
  observe(status: number, seconds: number): void;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request arrival to answer, by route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [this.registry],
  });
  private readonly limited = new Counter({
    name: 'http_rate_limited_total',
    help: 'Requests refused with 429, by the bucket that refused them',
    labelNames: ['bucket'] as const,
    registers: [this.registry],
  });
  private readonly heldHere = new Counter({
    name: 'pm_history_held_here_total',
    help: 'On a node with a history floor: reads of a history route answered from its own store, which held their rows (not sent to the sequencer), by route pattern',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  private readonly refusals = new Counter({
    name: 'refusals_total',
    help: 'Refusals of the auth and order checks answered with a reason (X-Refusal-Reason), by class (edge/refusals/reason.ts)',
    labelNames: ['class'] as const,
    registers: [this.registry],
  });
  private readonly orderStages = new Histogram({
    name: 'order_stage_duration_seconds',
    help:
      'Per POST /order or /orders request, by stage: "checks" (order checks, signatures recovered in the signature pool, its queue included) ' +
      'and "engine" (from the engine taking the orders to the last answer, the journal commit included)',
    labelNames: ['stage'] as const,
    buckets: STAGE_BUCKETS,
    registers: [this.registry],
  });
  private readonly checksStage = this.orderStages.labels('checks');
  private readonly engineStage = this.orderStages.labels('engine');
  private readonly commits = new Histogram({
    name: 'journal_commit_duration_seconds',
    help: 'Per journal transaction (group commit): from its puts to durable on disk',
    buckets: STAGE_BUCKETS,
    registers: [this.registry],
  });
  private readonly counterChildren = new Map<string, { inc(): void }>();
  private readonly latencyChildren = new Map<string, { observe(v: number): void }>();

  constructor(defaults = true) {
    if (defaults) collectDefaultMetrics({ register: this.registry, gcDurationBuckets: GC_BUCKETS });
  }

  /**
   * The observer of one route: label children resolved once, per status on first use, so a request
   * costs two array/Map reads and two increments.
   */
  route(method: string, route: string): RouteMetrics {
    const latency = this.latency.labels(method, route);
    const byStatus = new Map<number, { inc(): void }>();
    const requests = this.requests;
    return {
      observe(status: number, seconds: number) {
        let c = byStatus.get(status);
        if (!c) {
          c = requests.labels(method, route, String(status));
          byStatus.set(status, c);
        }
        c.inc();
        latency.observe(seconds);
      },
    };
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let c = this.counterChildren.get(key);
    if (!c) {
      c = this.requests.labels(method, route, String(status));
      this.counterChildren.set(key, c);
    }
    c.inc();
    const lkey = `${method} ${route}`;
    let h = this.latencyChildren.get(lkey);
    if (!h) {
      h = this.latency.labels(method, route);
      this.latencyChildren.set(lkey, h);
    }
    h.observe(seconds);
  }

  /**
   * The engine's counters, read when /metrics is scraped (nothing on the hot path). Orders per journal
   * transaction is what group commit buys: transactions and batches next to orders accepted and fills.
   */
  watchEngine(stats: () => EngineStats): void {
    const gauges: Array<[keyof EngineStats, string]> = [
      ['journalSeq', 'Last journal sequence number assigned'],
      ['committedSeq', 'Last journal sequence number durably committed'],
      ['transactions', 'LMDB transactions the journal has committed since start'],
      ['batches', 'Journal batches flushed since start'],
      ['ordersAccepted', 'Orders accepted since start'],
      ['fills', 'Fills since start'],
      ['backpressureWaits', 'Commands that waited for command-ring space since start'],
      ['busyRejects', 'Commands refused because the engine was saturated, since start'],
      ['openOrders', 'Orders resting in the books'],
    ];
    for (const [key, help] of gauges) {
      new Gauge({
        name: `engine_${key.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())}`,
        help,
        registers: [this.registry],
        collect() {
          this.set(stats()[key]);
        },
      });
    }
  }

  /** Gauges read at scrape time from `read()`: one per key, named `name_<key in snake case>`. */
  watch<K extends string>(prefix: string, read: () => Record<K, number>, help: Record<K, string>): void {
    for (const key of Object.keys(help) as K[]) {
      new Gauge({
        name: `${prefix}_${key.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())}`,
        help: help[key],
        registers: [this.registry],
        collect() {
          this.set(read()[key]);
        },
      });
    }
  }

  /**
   * The signature pool's counters: orders per task is what its batching buys (each task wakes a thread), and
   * the orders a quiet service verified without a task.
   */
  watchSignaturePool(stats: () => { tasks: number; orders: number; inline: number }): void {
    for (const [key, help] of [
      ['tasks', 'Tasks sent to the signature pool since start'],
      ['orders', 'Orders verified by the signature pool since start'],
      ['inline', 'Orders verified on the receiving thread instead (the pool idle, that thread quiet) since start'],
    ] as const) {
      new Gauge({
        name: `signature_pool_${key}`,
        help,
        registers: [this.registry],
        collect() {
          this.set(stats()[key]);
        },
      });
    }
  }

  /** A placement request's order checks, in seconds. */
  orderChecks(seconds: number): void {
    this.checksStage.observe(seconds);
  }

  /** A placement request's time in the engine (when any of its orders got there), in seconds. */
  orderEngine(seconds: number): void {
    this.engineStage.observe(seconds);
  }

  /** One journal transaction, from its puts to durable (Engine's onCommit). */
  commit(seconds: number): void {
    this.commits.observe(seconds);
  }

  /** The WebSocket channels' metrics (label children cached per channel: a publish costs two increments). */
  stream(): StreamMetrics {
    const reg = [this.registry];
    const sockets = new Gauge({ name: 'ws_sockets', help: 'Open WebSocket connections, by channel', labelNames: ['channel'] as const, registers: reg });
    const subs = new Gauge({ name: 'ws_subscriptions', help: 'Subscriptions held by open sockets (assets on market, markets on user), by channel', labelNames: ['channel'] as const, registers: reg });
    const frames = new Counter({ name: 'ws_frames_sent_total', help: 'Frames queued to sockets (a publish counts once per subscribed socket), by channel', labelNames: ['channel'] as const, registers: reg });
    const bytes = new Counter({ name: 'ws_bytes_sent_total', help: 'Payload bytes queued to sockets, by channel', labelNames: ['channel'] as const, registers: reg });
    const drops = new Counter({ name: 'ws_frames_dropped_total', help: 'Frames dropped for sockets past their send-buffer bound (the socket is then closed), by channel', labelNames: ['channel'] as const, registers: reg });
    const closes = new Counter({ name: 'ws_closes_total', help: 'WebSocket closes, by channel and reason', labelNames: ['channel', 'reason'] as const, registers: reg });
    const stalled = new Gauge({ name: 'ws_stalled_sockets', help: 'Sockets a stall fault holds now (sandbox fault scenario), by channel', labelNames: ['channel'] as const, registers: reg });
    const refused = new Counter({ name: 'ws_upgrades_refused_total', help: 'Upgrade requests answered with an HTTP error, by channel and status', labelNames: ['channel', 'status'] as const, registers: reg });
    const refusals = new Counter({
      name: 'ws_refusals_total',
      help: 'Upgrades and messages refused by a bound (an HTTP error, or an error frame and nothing done), by channel and reason',
      labelNames: ['channel', 'reason'] as const,
      registers: reg,
    });
    const delay = new Histogram({
      name: 'ws_commit_to_publish_seconds',
      help: 'Per committed batch with frames: from the commit being durable (projections included) to its last frame handed to the sockets',
      buckets: STAGE_BUCKETS,
      registers: reg,
    });
    const per = <T>(make: (channel: string) => T) => {
      const m = new Map<string, T>();
      return (channel: string) => {
        let c = m.get(channel);
        if (c === undefined) m.set(channel, (c = make(channel)));
        return c;
      };
    };
    const sent = per((c) => ({ frames: frames.labels(c), bytes: bytes.labels(c) }));
    const socketsOf = per((c) => sockets.labels(c));
    const subsOf = per((c) => subs.labels(c));
    return {
      opened: (c) => socketsOf(c).inc(),
      closed: (c, reason) => {
        socketsOf(c).dec();
        closes.labels(c, reason).inc();
      },
      refused: (c, status) => refused.labels(c, status).inc(),
      refusal: (c, reason) => refusals.labels(c, reason).inc(),
      subscriptions: (c, delta) => subsOf(c).inc(delta),
      sent: (c, n, b) => {
        const s = sent(c);
        s.frames.inc(n);
        s.bytes.inc(b);
      },
      dropped: (c) => drops.labels(c).inc(),
      published: (seconds) => delay.observe(seconds),
      stalled: (c, delta) => stalled.labels(c).inc(delta),
    };
  }

  rateLimited(bucket: string): void {
    this.limited.labels(bucket).inc();
  }

  /** A read of a history route answered from this node's store (PipelineDeps.history, RouteDef.heldHere). */
  historyHeldHere(route: string): void {
    this.heldHere.labels(route).inc();
  }

  /** One refusal answered with its reason; `cls` is one of REFUSAL_CLASSES (a closed set). */
  refused(cls: string): void {
    this.refusals.labels(cls).inc();
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
