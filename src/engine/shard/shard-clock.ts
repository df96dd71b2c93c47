/**
 * The shards' time under the sandbox's test clock (runtime/clock.ts TestClock, driven by
 * edge/sandbox/test-clock.ts): what the driver asks of the engine, on top of shard-link's OP_TIME.
 *
 *   follow(t)              every shard follows the exchange's time `t` (running at an offset, or frozen);
 *   expireThrough(t, sec)  every GTD order due by `sec` expires, in time order across shards, each second's
 *                          orders journaled at that second (the engine's onExpiry hook holds the clock there);
 *   nextExpirySec()        the earliest second any shard may have an order due (a bound: may be early).
 *
 * Order across shards. Each shard expires its own orders second by second, but two shards answer in any
 * order, so expireThrough never lets two shards expire at once: the shard with the earliest bound goes first,
 * up to the next shard's bound, then the next, and so on. A shard whose bound is unknown (none asked since
 * start) is first asked to expire only what is due now, which tells its bound. Roundtrips: one per switch
 * between shards, not one per second; with one shard (the default), one for the whole advance.
 *
 * Never used when the test controls are off: then the shards follow the system clock as they always did.
 */
import type { ShardTime } from '../engine-types.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { ShardLink } from './shard-link.ts';

export class ShardClock {
  constructor(
    private readonly link: ShardLink,
    private readonly life: Lifecycle,
  ) {}

  async follow(t: ShardTime): Promise<void> {
    if (this.life.down) return;
    await Promise.all(Array.from({ length: this.link.shardCount }, (_, i) => this.link.time(i, t, 0)));
  }

  nextExpirySec(): number {
    let min = Infinity;
    for (const b of this.link.expiryBounds()) {
      if (b === -1) return -1;
      if (b < min) min = b;
    }
    return min;
  }

  async expireThrough(t: ShardTime, untilSec: number): Promise<void> {
    const nowSec = Math.floor(t.atMs / 1000);
    for (;;) {
      if (this.life.down) return;
      const bounds = this.link.expiryBounds();
      const unknown = bounds.flatMap((b, i) => (b === -1 ? [i] : []));
      if (unknown.length > 0) {
        await Promise.all(unknown.map((i) => this.link.time(i, t, Math.min(nowSec, untilSec))));
        continue;
      }
      const due = bounds.flatMap((b, i) => (b <= untilSec ? [i] : [])).sort((a, b) => bounds[a] - bounds[b] || a - b);
      if (due.length === 0) return;
      const through = due.length > 1 ? Math.min(untilSec, bounds[due[1]]) : untilSec;
      await this.link.time(due[0], t, through);
    }
  }
}
