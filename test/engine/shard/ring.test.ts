/**
 * The SPSC ring: wrap-around (slots and 32-bit counters), a full ring refusing claims without
 * overwriting, and two threads passing records in order under backpressure with a real worker.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HEADER_INTS, Ring } from '../../../src/engine/shard/ring.ts';
import { startTsWorker } from '../../../src/engine/thread.ts';

function push(r: Ring, v: number): boolean {
  const off = r.tryClaim();
  if (off < 0) return false;
  r.words[off] = v;
  r.words[off + 1] = -v;
  return true;
}

function popAll(r: Ring): number[] {
  const out: number[] = [];
  const n = r.available();
  for (let i = 0; i < n; i++) {
    const off = r.consume();
    assert.equal(r.words[off + 1], -r.words[off]);
    out.push(r.words[off]);
  }
  r.release();
  return out;
}

describe('ring in one thread', () => {
  test('records wrap around the slots in order', () => {
    const r = Ring.create(4, 2);
    const got: number[] = [];
    let next = 1;
    for (let round = 0; round < 50; round++) {
      const k = 1 + (round % 4);
      for (let i = 0; i < k; i++) assert.ok(push(r, next++));
      r.publish();
      got.push(...popAll(r));
    }
    assert.deepEqual(got, Array.from({ length: next - 1 }, (_, i) => i + 1));
  });

  test('a full ring refuses claims and overwrites nothing', () => {
    const r = Ring.create(8, 2);
    for (let i = 1; i <= 8; i++) assert.ok(push(r, i));
    assert.equal(r.tryClaim(), -1);
    assert.equal(r.freeSlots(), 0);
    r.publish();
    assert.equal(r.tryClaim(), -1, 'still full until the consumer releases');
    const off = r.consume();
    assert.equal(r.words[off], 1);
    assert.equal(r.tryClaim(), -1, 'consumed but not released');
    r.release();
    assert.ok(push(r, 9));
    r.publish();
    assert.deepEqual(popAll(r), [2, 3, 4, 5, 6, 7, 8, 9]);
  });

  test('unpublished records are invisible to the consumer', () => {
    const r = Ring.create(4, 2);
    push(r, 1);
    assert.equal(r.available(), 0);
    assert.equal(r.unpublished(), 1);
    r.publish();
    assert.equal(r.available(), 1);
  });

  test('the 32-bit counters wrap without losing a record', () => {
    const a = Ring.create(4, 2);
    const h = new Int32Array(a.sab, 0, HEADER_INTS);
    h[0] = 2 ** 31 - 3;
    h[16] = 2 ** 31 - 3;
    const r = Ring.attach(a.sab);
    const got: number[] = [];
    for (let i = 1; i <= 20; i++) {
      assert.ok(push(r, i));
      if (i % 3 === 0) {
        r.publish();
        got.push(...popAll(r));
      }
    }
    r.publish();
    got.push(...popAll(r));
    assert.deepEqual(got, Array.from({ length: 20 }, (_, i) => i + 1));
    assert.ok(h[16] < 0, 'tail wrapped past 2^31');
  });

  test('capacity must be a power of two', () => {
    assert.throws(() => Ring.create(6, 2));
    assert.throws(() => Ring.create(1, 2));
  });
});

describe('ring across threads', () => {
  /**
   * Main thread -> worker -> main thread through two rings of 64 slots. The main thread never blocks: on a
   * full input ring it awaits waitForSpace (Atomics.waitAsync); it keeps no queue of its own, so nothing
   * grows while it waits. Every record must come back exactly once and in order.
   */
  async function roundTrip(count: number, slowMs: number) {
    const input = Ring.create(64, 4);
    const output = Ring.create(64, 4);
    const worker = startTsWorker(new URL('../../fixtures/ring-echo-worker.ts', import.meta.url), {
      workerData: { input: input.sab, output: output.sab, slowMs },
    });
    const exited = new Promise<number>((resolve, reject) => {
      worker.on('exit', resolve);
      worker.on('error', reject);
    });
    let fullWaits = 0;
    let received = 0;
    let outOfOrder = 0;
    const receiver = (async () => {
      for (;;) {
        const n = output.available();
        if (n === 0) {
          await output.waitForDataAsync();
          continue;
        }
        let done = false;
        for (let i = 0; i < n; i++) {
          const off = output.consume();
          const v = output.words[off];
          if (v === -1) done = true;
          else {
            if (v !== received + 1 || output.words[off + 3] !== v * 3) outOfOrder++;
            received++;
          }
        }
        output.release();
        if (done) return;
      }
    })();
    for (let v = 1; v <= count + 1; v++) {
      let off = input.tryClaim();
      while (off < 0) {
        fullWaits++;
        input.publish();
        await input.waitForSpace();
        off = input.tryClaim();
      }
      const value = v === count + 1 ? -1 : v;
      input.words[off] = value;
      input.words[off + 3] = value * 3;
      if (v % 16 === 0 || value === -1) input.publish();
    }
    await receiver;
    assert.equal(await exited, 0);
    return { received, outOfOrder, fullWaits };
  }

  test('200k records arrive in order, none lost', async () => {
    const r = await roundTrip(200_000, 0);
    assert.equal(r.received, 200_000);
    assert.equal(r.outOfOrder, 0);
  });

  test('a slow consumer applies backpressure without drops', async () => {
    const r = await roundTrip(5_000, 1);
    assert.equal(r.received, 5_000);
    assert.equal(r.outOfOrder, 0);
    assert.ok(r.fullWaits > 0, 'the producer met a full ring');
  });
});
