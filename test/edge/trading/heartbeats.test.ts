/**
 * Heartbeats (edge/trading/heartbeats.ts) on a ManualClock's timers and a real store, with an engine double that
 * records cancelAll: "" starts (or continues) a wallet's heartbeat, its id continues it, any other id is a 400
 * that changes nothing; silent for the timeout, the wallet's orders are all canceled and its id is refused;
 * each wallet has its own deadline; close() stops every timer; a restart restores the running heartbeats
 * with a full timeout from the start.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isApiError } from '../../../src/domain/errors.ts';
import { Heartbeats } from '../../../src/edge/trading/heartbeats.ts';
import { openStore, type Store } from '../../../src/journal/env.ts';
import { ManualClock } from '../../../src/runtime/clock.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { tempDir } from '../../fixtures/edge.ts';

const A = '0x' + 'a'.repeat(40);
const B = '0x' + 'b'.repeat(40);

function harness(store: Store = openStore({ dataDir: tempDir(), mapSize: 64 * 1024 ** 2 })) {
  const clock = new ManualClock();
  const canceled: string[] = [];
  const engine = { cancelAll: async (wallet: string) => (canceled.push(wallet), { canceled: [], notCanceled: {} }) };
  const hb = new Heartbeats({ store, engine, log: silentLogger, timers: clock.timers, timeoutSeconds: 10 });
  return { store, clock, canceled, hb };
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.ok(isApiError(e));
    assert.equal(e.spec.status, 400);
    return e.message;
  }
  assert.fail('expected a 400');
}

test('"" starts a heartbeat; its id continues it; silent for the timeout, every open order is canceled and the id refused', async () => {
  const { clock, canceled, hb } = harness();
  const { heartbeat_id: id } = await hb.beat(A, '');
  assert.match(id, /^[0-9a-f-]{36}$/);
  clock.advance(9_000);
  assert.deepEqual(await hb.beat(A, id), { heartbeat_id: id });
  clock.advance(9_000);
  assert.deepEqual(canceled, [], '18 s, but never 10 s without a heartbeat');
  assert.deepEqual(await hb.beat(A, null), { heartbeat_id: id }, 'an empty id while one runs continues it');
  clock.advance(10_000);
  await Promise.resolve();
  assert.deepEqual(canceled, [A]);
  assert.equal(hb.size, 0);
  assert.match(await refusal(hb.beat(A, id)), /invalid heartbeat id/);
  const again = await hb.beat(A, undefined);
  assert.notEqual(again.heartbeat_id, id, 'a new heartbeat after the lapse');
});

test('a wrong id changes nothing; wallets keep their own deadlines', async () => {
  const { clock, canceled, hb } = harness();
  await hb.beat(A, '');
  clock.advance(5_000);
  const b = (await hb.beat(B, '')).heartbeat_id;
  assert.match(await refusal(hb.beat(A, b)), /invalid heartbeat id/, "B's id is not A's");
  clock.advance(5_000);
  assert.deepEqual(canceled, [A], 'the wrong id did not extend A');
  assert.equal((await hb.beat(B, b)).heartbeat_id, b);
  clock.advance(9_999);
  assert.deepEqual(canceled, [A]);
});

test('close() stops every timer; a restart restores the running heartbeats with a full timeout from the start', async () => {
  const first = harness();
  const id = (await first.hb.beat(A, '')).heartbeat_id;
  first.clock.advance(8_000);
  first.hb.close();
  assert.equal(first.clock.pendingTimers, 0);
  first.clock.advance(60_000);
  assert.deepEqual(first.canceled, [], 'stopped, not lapsed');

  const second = harness(first.store);
  assert.equal(second.hb.size, 1);
  second.clock.advance(9_000);
  assert.deepEqual(await second.hb.beat(A, id), { heartbeat_id: id }, 'the same id continues after the restart');
  second.clock.advance(10_000);
  await Promise.resolve();
  assert.deepEqual(second.canceled, [A]);

  // A lapse is recorded too: the next start restores nothing.
  await first.store.meta.flushed;
  assert.equal(harness(first.store).hb.size, 0);
  await first.store.close();
});
