/**
 * The timers of the stream faults (scenario `streams`, DESIGN section 11): a drawn share of sockets is
 * dropped by the server after a drawn time, or stalls for a drawn time and resumes. What is drawn, and
 * under which seed, is the fault scenario's (edge/sandbox/faults.ts, through StreamFaultSource); what a
 * stall and a drop do to a socket is the channels' (edge/ws/channels.ts, through SocketOps). This module
 * only says when, per socket:
 *
 *   opened(s)   numbers the socket (forSocket) and arms its drop timer and its first stall timer;
 *   stall       ops.stall(s), then a timer of forMs to ops.resume(s), then, when the scenario repeats
 *               stalls, the next stall's timer, and so on;
 *   drop        ops.drop(s, how): the socket closes, and closed(s) forgets it;
 *   closed(s)   clears what is pending (a socket closed by its client is not faulted afterwards);
 *   reset(open) the scenario changed: every socket pending or stalled is resumed and forgotten, then the open
 *               sockets, in the order they opened, are numbered and armed again from now.
 *
 * Memory: one entry per socket with a fault pending, holding at most two timers; nothing is queued per
 * socket (a stalled socket's frames are not kept: see channels.ts).
 */
import type { Timers } from '../../runtime/clock.ts';

export type SocketChannel = 'market' | 'user';

/** The scenario's draws (FaultInjector implements it). */
export interface StreamFaultSource {
  /** Numbers a socket of `channel`; undefined when the scenario has no stream faults. */
  forSocket(channel: SocketChannel): number | undefined;
  drop(channel: SocketChannel, n: number): { afterMs: number; how: 'abrupt' | 'going-away' } | undefined;
  stall(channel: SocketChannel, n: number, k: number): { afterMs: number; forMs: number } | undefined;
  /** A fault happened (counted and logged by the source). */
  socketFault(fault: 'drop' | 'stall', channel: SocketChannel, n: number, ms: number): void;
  /** Called after each change of scenario. */
  onChange(listener: () => void): void;
}

/** What a fault does to a socket (the channels' side). */
export interface SocketOps<S> {
  /** Stops everything to and from the socket; false when it cannot stall (closing). */
  stall(s: S): boolean;
  resume(s: S): void;
  drop(s: S, how: 'abrupt' | 'going-away'): void;
  /** Stalled sockets now, per channel (the gauge). */
  stalled(channel: SocketChannel, delta: number): void;
  /** A stall ended (logged). */
  resumed(channel: SocketChannel, n: number): void;
}

interface Pending {
  channel: SocketChannel;
  n: number;
  drop: unknown;
  stallTimer: unknown;
  /** The stall in progress or next to come (0 the first). */
  k: number;
  stalled: boolean;
}

export class SocketFaults<S> {
  private readonly pending = new Map<S, Pending>();

  constructor(
    private readonly source: StreamFaultSource,
    private readonly timers: Timers,
    private readonly ops: SocketOps<S>,
  ) {}

  /** A socket opened (or is re-armed by reset): numbered and armed when the scenario has stream faults. */
  opened(s: S, channel: SocketChannel): void {
    const n = this.source.forSocket(channel);
    if (n === undefined) return;
    const drop = this.source.drop(channel, n);
    const stall = this.source.stall(channel, n, 0);
    if (drop === undefined && stall === undefined) return;
    const p: Pending = { channel, n, drop: undefined, stallTimer: undefined, k: 0, stalled: false };
    this.pending.set(s, p);
    if (drop !== undefined) {
      p.drop = this.timers.set(() => {
        p.drop = undefined;
        this.source.socketFault('drop', channel, n, drop.afterMs);
        // The close handler runs at once and calls closed(s), which forgets the socket.
        this.ops.drop(s, drop.how);
      }, drop.afterMs);
    }
    if (stall !== undefined) this.armStall(s, p, stall.afterMs, stall.forMs);
  }

  closed(s: S): void {
    const p = this.pending.get(s);
    if (p === undefined) return;
    this.forget(s, p);
  }

  /** The scenario changed: faults in progress end (stalled sockets resume), then `open` is armed again. */
  reset(open: Iterable<[S, SocketChannel]>): void {
    for (const [s, p] of [...this.pending]) {
      const wasStalled = p.stalled;
      this.forget(s, p);
      if (wasStalled) this.ops.resume(s);
    }
    for (const [s, channel] of open) this.opened(s, channel);
  }

  /** Sockets with a fault pending or in progress (tests: nothing is kept once they close). */
  get size(): number {
    return this.pending.size;
  }

  private armStall(s: S, p: Pending, afterMs: number, forMs: number): void {
    p.stallTimer = this.timers.set(() => {
      if (!this.ops.stall(s)) {
        p.stallTimer = undefined;
        return;
      }
      p.stalled = true;
      this.ops.stalled(p.channel, 1);
      this.source.socketFault('stall', p.channel, p.n, forMs);
      p.stallTimer = this.timers.set(() => this.endStall(s, p), forMs);
    }, afterMs);
  }

  private endStall(s: S, p: Pending): void {
    p.stallTimer = undefined;
    p.stalled = false;
    this.ops.stalled(p.channel, -1);
    this.ops.resume(s);
    this.ops.resumed(p.channel, p.n);
    const next = this.source.stall(p.channel, p.n, ++p.k);
    // At least 1 ms between stalls: draws of 0 would otherwise chain timers without a pause.
    if (next !== undefined) this.armStall(s, p, Math.max(1, next.afterMs), next.forMs);
    else if (p.drop === undefined) this.pending.delete(s);
  }

  private forget(s: S, p: Pending): void {
    if (p.drop !== undefined) this.timers.clear(p.drop);
    if (p.stallTimer !== undefined) this.timers.clear(p.stallTimer);
    if (p.stalled) this.ops.stalled(p.channel, -1);
    p.stalled = false;
    this.pending.delete(s);
  }
}
