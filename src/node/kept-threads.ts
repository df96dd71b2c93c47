/**
 * The threads a revertible node keeps from one opening of the app to the next (revert.ts): the matching
 * threads (engine/shard/shard-threads.ts) and the signature pool (edge/auth/sig-pool.ts). Starting a worker
 * under the TypeScript loader costs hundreds of milliseconds, and a revert is meant to run between every two
 * tests of a suite; what the threads hold is no state of the exchange (a shard is reset when an engine takes
 * it over; the signature threads only recover signatures), so the next opening takes them over.
 *
 * Matching threads that ended or failed (their engine halted), or were started for other shards or another
 * book, are ended and new ones started for the opening that asks. The host closes what it kept when it
 * stops, after the last opening closed.
 */
import { signaturePool } from '../edge/auth/auth.ts';
import type { SigPool } from '../edge/auth/sig-pool.ts';
import { ShardThreads, type ThreadSpec } from '../engine/shard/shard-threads.ts';
import type { ShardTime } from '../engine/engine-types.ts';
import type { Config } from '../runtime/config.ts';
import type { Logger } from '../runtime/log.ts';

export class KeptThreads {
  private shards: ShardThreads | undefined;
  private pool: SigPool | undefined;

  /** Matching threads for an engine of `spec`: the kept ones when they still serve, else new ones kept from now on. */
  async shardThreads(spec: ThreadSpec, time: ShardTime | undefined): Promise<ShardThreads> {
    const kept = this.shards;
    if (kept !== undefined && kept.usable && kept.fits(spec)) return kept;
    this.shards = undefined;
    await kept?.terminate();
    this.shards = await ShardThreads.spawn(spec, time);
    return this.shards;
  }

  /** The signature pool: the kept one, or a new one for `config` kept from now on. */
  signatures(config: Readonly<Config>, log: Logger): SigPool {
    return (this.pool ??= signaturePool(config, log));
  }

  /** Ends what is kept (the host stops); the next ask starts new threads. */
  async close(): Promise<void> {
    const { shards, pool } = this;
    this.shards = undefined;
    this.pool = undefined;
    await Promise.all([shards?.terminate(), pool?.close()]);
  }
}
