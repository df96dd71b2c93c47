/**
 * What start-up has opened, closed newest first: a failed start and stop() unwind this one stack (app.ts),
 * so the two cannot drift. Each closer runs once; one that throws is logged and the rest still run (the
 * store, opened first, is always closed), and closeAll() then rejects with the first failure. Knows nothing
 * of what it closes: each step of start-up, roles.ts's included, registers here the moment it has opened.
 */
import type { Logger } from '../runtime/log.ts';

export class Closers {
  private readonly stack: { what: string; close: () => unknown }[] = [];
  constructor(private readonly log: Logger) {}

  add(what: string, close: () => unknown): void {
    this.stack.push({ what, close });
  }

  /** Closes all, newest first; the one named `skip` is dropped unrun (a revert keeps the listener). */
  async closeAll(skip?: string): Promise<void> {
    const failures: unknown[] = [];
    for (let c = this.stack.pop(); c !== undefined; c = this.stack.pop()) {
      if (c.what === skip) continue;
      try {
        await c.close();
      } catch (err) {
        this.log.error({ err, closing: c.what }, 'close failed');
        failures.push(err);
      }
    }
    if (failures.length > 0) throw failures[0];
  }
}
