/**
 * Halting: once, with the first error, running the registered steps in order; `down` once halted or
 * closing; requests that answer by throwing get PM_ERR_ENGINE_DOWN.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isApiError } from '../../src/domain/errors.ts';
import { Lifecycle } from '../../src/engine/lifecycle.ts';
import { silentLogger } from '../../src/runtime/log.ts';

test('halt runs every step once, in the order they were added, and keeps the first error', () => {
  const life = new Lifecycle(silentLogger);
  const ran: string[] = [];
  life.onHalt(() => ran.push('answers'));
  life.onHalt(() => ran.push('workers'));
  assert.equal(life.down, false);
  assert.doesNotThrow(() => life.assertUp());
  const first = new Error('commit failed');
  life.halt(first);
  life.halt(new Error('worker exited'));
  assert.deepEqual(ran, ['answers', 'workers']);
  assert.equal(life.halted, first);
  assert.equal(life.down, true);
  assert.throws(
    () => life.assertUp(),
    (e: unknown) => isApiError(e) && e.spec.code === 'PM_ERR_ENGINE_DOWN',
  );
});

test('closing is down without a halt', () => {
  const life = new Lifecycle(silentLogger);
  life.closing = true;
  assert.equal(life.down, true);
  assert.equal(life.halted, undefined);
});
