/**
 * Whether the engine takes requests, and how it stops.
 *
 * Owns `halted` (the error that stopped the engine: set once, never cleared), `closing` (close() or a halt
 * has begun stopping the workers) and the halt sequence. A shard's unexpected throw or exit, a result that
 * does not match its command (EngineHalt), a broken ledger invariant (LedgerError) or a failed commit calls
 * halt(); the steps engine.ts registers then run once, in the order it wires them: answers waiting for a
 * commit become PM_ERR_ENGINE_DOWN, snapshot readers are let go, the commands in flight are answered, the
 * workers stop.
 *
 * Invariant: every part asks `down` before it takes a request, so after a halt nothing more is journaled and
 * every pending and later request answers PM_ERR_ENGINE_DOWN; a restart recovers the last committed state.
 */
import { apiError } from '../domain/errors.ts';
import type { Logger } from '../runtime/log.ts';

/** What a shard reported cannot be reconciled with the sequencer's state: stop rather than trade on it. */
export class EngineHalt extends Error {}

export class Lifecycle {
  /** Why the engine stopped, if it did. */
  halted: Error | undefined = undefined;
  /** The workers are being stopped (close(), or after a halt): no request is taken. */
  closing = false;
  private readonly steps: Array<() => void> = [];

  constructor(private readonly log: Logger) {}

  /** Halted or closing: requests answer PM_ERR_ENGINE_DOWN. */
  get down(): boolean {
    return this.halted !== undefined || this.closing;
  }

  /** For calls that answer by throwing (admin): PM_ERR_ENGINE_DOWN when down. */
  assertUp(): void {
    if (this.down) throw apiError('PM_ERR_ENGINE_DOWN');
  }

  /** Adds a step to the halt sequence; steps run in the order they were added. */
  onHalt(step: () => void): void {
    this.steps.push(step);
  }

  /** Stops trading for good (once; later calls do nothing). */
  halt(err: Error): void {
    if (this.halted) return;
    this.halted = err;
    this.log.fatal({ err }, 'engine halted: no further orders accepted');
    for (const step of this.steps) step();
  }
}
