/**
 * Room edge/trading/: trading features that keep state of their own behind a route (heartbeats, this file).
 * Separate from routes/ because a route module holds handlers and a table, not timers; it imports the
 * engine's facade and the store, and nothing of edge/.
 *
 * Heartbeats (DESIGN section 11; POST /v1/heartbeats, the platform client's postHeartbeat): a dead man's
 * switch per wallet. A wallet starts one by sending `heartbeat_id: ""` (or null, or none) and gets its id;
 * each later heartbeat names that id. A wallet that started one and sends none for `heartbeats.timeoutSeconds`
 * (default 10) has every open order canceled (Engine.cancelAll, as DELETE /cancel-all does: every order the
 * wallet signed, for itself or for its proxy wallet or Safe, edge/auth/funders.ts) and its heartbeat
 * ends: a later heartbeat naming the old id is refused (400), which tells the bot its orders are gone, and
 * `""` starts a new one.
 *
 *   ""  while one runs   continues it and answers its id (a bot that restarted and lost the id)
 *   the running id       continues it
 *   any other id         400 `invalid heartbeat id`, nothing changes
 *
 * One timer per wallet with a running heartbeat (on the app's Timers, so tests drive them with a ManualClock),
 * reset by each heartbeat; close() stops them all.
 *
 * Across a restart. The wallets whose heartbeat runs, with their ids, are one meta record, written when one
 * starts (awaited before the answer) and when one lapses. A restart restores them and gives each a full
 * timeout from the start: the bot could not reach the service while it was down, and its orders, restored
 * from the journal, rest again, so they must stay under the switch; a bot that died meanwhile has them
 * canceled one timeout after the start. Deadlines themselves are not stored (a heartbeat writes nothing).
 */
import { randomUUID } from 'node:crypto';
import { apiError } from '../../domain/errors.ts';
import type { Engine } from '../../engine/engine.ts';
import type { Store } from '../../journal/env.ts';
import { metaKeys } from '../../journal/keys.ts';
import type { Timers } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/log.ts';

export interface HeartbeatsDeps {
  store: Store;
  engine: Pick<Engine, 'cancelAll'>;
  log: Logger;
  timers: Timers;
  timeoutSeconds: number;
}

interface Running {
  id: string;
  timer: unknown;
}

/** The meta record: [wallet, heartbeat id] pairs, sorted by wallet. */
type StoredHeartbeats = [string, string][];

export class Heartbeats {
  private readonly running = new Map<string, Running>();
  private readonly timeoutMs: number;
  private closed = false;
  /** Heartbeats that lapsed since start (tests, logs). */
  lapsed = 0;

  constructor(private readonly deps: HeartbeatsDeps) {
    this.timeoutMs = deps.timeoutSeconds * 1000;
    const stored = deps.store.meta.get(metaKeys.heartbeats);
    for (const [wallet, id] of Array.isArray(stored) ? (stored as StoredHeartbeats) : []) this.arm(wallet, id);
    if (this.running.size > 0) deps.log.info({ wallets: this.running.size, timeoutSeconds: deps.timeoutSeconds }, 'heartbeats restored: each has a full timeout from now');
  }

  /** A heartbeat of `wallet` (lowercase); answers the id to send next. Throws a 400 for an id that is not running. */
  async beat(wallet: string, heartbeatId: string | null | undefined): Promise<{ heartbeat_id: string }> {
    const r = this.running.get(wallet);
    if (heartbeatId === undefined || heartbeatId === null || heartbeatId === '') {
      if (r !== undefined) return { heartbeat_id: this.arm(wallet, r.id) };
      const id = this.arm(wallet, randomUUID());
      await this.persist();
      return { heartbeat_id: id };
    }
    if (r === undefined || r.id !== heartbeatId) throw apiError('PM_ERR_HEARTBEAT_ID', { id: heartbeatId });
    return { heartbeat_id: this.arm(wallet, r.id) };
  }

  /** The wallets whose heartbeat runs (tests, metrics). */
  get size(): number {
    return this.running.size;
  }

  /** Stops every timer; the running heartbeats stay recorded for the next start. */
  close(): void {
    this.closed = true;
    for (const r of this.running.values()) this.deps.timers.clear(r.timer);
  }

  /** (Re)starts the wallet's timeout; returns the id. */
  private arm(wallet: string, id: string): string {
    const old = this.running.get(wallet);
    if (old !== undefined) this.deps.timers.clear(old.timer);
    if (this.closed) return id;
    const timer = this.deps.timers.set(() => this.lapse(wallet, id), this.timeoutMs);
    this.running.set(wallet, { id, timer });
    return id;
  }

  private lapse(wallet: string, id: string): void {
    const r = this.running.get(wallet);
    if (r === undefined || r.id !== id) return;
    this.running.delete(wallet);
    this.lapsed++;
    const { log, engine } = this.deps;
    this.persist().catch((err: unknown) => log.error({ err }, 'could not record the heartbeats'));
    engine.cancelAll(wallet).then(
      (c) => log.warn({ wallet, heartbeatId: id, canceled: c.canceled.length }, 'heartbeat lapsed: open orders canceled'),
      (err: unknown) => log.error({ err, wallet }, 'heartbeat lapsed but its orders could not be canceled'),
    );
  }

  private persist(): Promise<boolean> {
    const list: StoredHeartbeats = [...this.running].map(([w, r]) => [w, r.id] as [string, string]).sort((a, b) => (a[0] < b[0] ? -1 : 1));
    return this.deps.store.meta.put(metaKeys.heartbeats, list);
  }
}
