import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHUNK_SLOTS, ExpiryHeap, HandleIndex, INITIAL_SLOTS, LevelColumns, NIL, SlotTable } from '../../../src/engine/book/layout.ts';

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

test('layout: slots are handed out in order, freed slots come back LIFO', () => {
  const slots = new SlotTable();
  const a = slots.alloc();
  const b = slots.alloc();
  const c = slots.alloc();
  assert.deepEqual([a, b, c], [0, 1, 2]);
  assert.ok(slots.isLive(b));
  slots.release(b);
  slots.release(a);
  assert.equal(slots.isLive(b), false);
  assert.deepEqual([slots.live, slots.freeCount, slots.used], [1, 2, 3]);
  assert.equal(slots.alloc(), a);
  assert.equal(slots.alloc(), b);
  assert.equal(slots.alloc(), 3);
  assert.deepEqual([slots.live, slots.freeCount, slots.used], [4, 0, 4]);
});

test('layout: a row round-trips every column, and side/outcome give the outcome-0 book side', () => {
  const slots = new SlotTable();
  const rows: Array<[side: number, outcome: number, bookSide: number]> = [[0, 0, 0], [1, 1, 0], [1, 0, 1], [0, 1, 1]];
  for (const [side, outcome, bookSide] of rows) {
    const s = slots.alloc();
    slots.init(s, 2 ** 53 - 1 - s, 4_000_000_000 + s, side, outcome, 9_999, 2 ** 52 + 2 * s, 1_900_000_000, 2 ** 50 + s, s - 1);
    assert.deepEqual(
      [slots.handle(s), slots.owner(s), slots.side(s), slots.outcome(s), slots.bookSide(s), slots.level(s), slots.remaining(s), slots.expiresAt(s), slots.seq(s), slots.prev(s), slots.next(s), slots.heapPos(s), slots.isLive(s)],
      [2 ** 53 - 1 - s, 4_000_000_000 + s, side, outcome, bookSide, 9_999, 2 ** 52 + 2 * s, 1_900_000_000, 2 ** 50 + s, s - 1, NIL, NIL, true],
    );
  }
});

test('layout: growth doubles chunk 0 up to one chunk, then appends chunks without moving rows', () => {
  const slots = new SlotTable();
  assert.equal(slots.capacity, INITIAL_SLOTS);
  const n = CHUNK_SLOTS * 2 + 5;
  const seen: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = slots.alloc();
    slots.init(s, i * 3 + 1, i, i & 1, (i >> 1) & 1, i % 1000, (i + 1) * 10_000, 0, i, i - 1);
    if (s === CHUNK_SLOTS - 1 || s === CHUNK_SLOTS || s === 2 * CHUNK_SLOTS) seen.push(slots.capacity);
  }
  assert.deepEqual(seen, [CHUNK_SLOTS, 2 * CHUNK_SLOTS, 3 * CHUNK_SLOTS]);
  assert.equal(slots.chunkCount, 3);
  for (let i = 0; i < n; i++) {
    assert.equal(slots.handle(i), i * 3 + 1);
    assert.equal(slots.remaining(i), (i + 1) * 10_000);
    assert.equal(slots.level(i), i % 1000);
    assert.equal(slots.prev(i), i - 1);
    assert.equal(slots.bookSide(i), ((i & 1) ^ ((i >> 1) & 1)) as 0 | 1);
  }
  slots.reset();
  assert.deepEqual([slots.capacity, slots.used, slots.live, slots.chunkCount], [INITIAL_SLOTS, 0, 0, 1]);
});

const levelCases: Array<{ name: string; n: number; marked: number[]; queries: Array<[op: 'above' | 'below', from: number, expected: number]> }> = [
  { name: 'empty', n: 100, marked: [], queries: [['above', 0, 100], ['below', 100, 0], ['above', 50, 100], ['below', 1, 0]] },
  { name: 'within one word', n: 100, marked: [3, 7], queries: [['above', 0, 3], ['above', 3, 7], ['above', 7, 100], ['below', 7, 3], ['below', 3, 0], ['below', 100, 7]] },
  { name: 'across word boundaries', n: 10_000, marked: [31, 32, 63, 64, 9_999], queries: [['above', 31, 32], ['above', 32, 63], ['above', 64, 9_999], ['below', 64, 63], ['below', 32, 31], ['below', 9_999, 64], ['above', 9_999, 10_000], ['below', 10_000, 9_999]] },
  { name: 'far apart at a 1-pip tick', n: 10_000, marked: [1, 9_998], queries: [['above', 1, 9_998], ['below', 9_998, 1], ['above', 0, 1], ['below', 1, 0]] },
  { name: 'bit 31 of a word (sign bit)', n: 1_000, marked: [95], queries: [['above', 64, 95], ['below', 96, 95], ['below', 95, 0], ['above', 95, 1_000]] },
];

for (const c of levelCases) {
  test(`layout: level bitmap search — ${c.name}`, () => {
    const lv = new LevelColumns(c.n);
    lv.ensure();
    for (const l of c.marked) lv.mark(l);
    for (const [op, from, expected] of c.queries) {
      assert.equal(op === 'above' ? lv.nextAbove(from) : lv.prevBelow(from), expected, `${op}(${from})`);
    }
    for (const l of c.marked) {
      assert.ok(lv.isMarked(l));
      lv.unmark(l);
    }
    assert.equal(lv.nextAbove(0), c.n);
  });
}

test('layout: level bitmap agrees with a linear scan on random marks', () => {
  const r = rng(3);
  for (const n of [10, 100, 400, 1_000, 10_000]) {
    const lv = new LevelColumns(n);
    lv.ensure();
    const marked = new Set<number>();
    for (let k = 0; k < n / 4; k++) {
      const l = 1 + Math.floor(r() * (n - 1));
      lv.mark(l);
      marked.add(l);
    }
    for (let from = 0; from <= n; from++) {
      let above = n;
      for (let l = from + 1; l < n; l++) if (marked.has(l)) { above = l; break; }
      let below = 0;
      for (let l = from - 1; l > 0; l--) if (marked.has(l)) { below = l; break; }
      assert.equal(lv.nextAbove(from), above, `n ${n} above ${from}`);
      assert.equal(lv.prevBelow(from), below, `n ${n} below ${from}`);
    }
  }
});

test('layout: handle index matches a Map under random put/remove, with growth and handles above 2^32', () => {
  const r = rng(7);
  const index = new HandleIndex();
  const model = new Map<number, number>();
  const keys: number[] = [];
  for (let step = 0; step < 60_000; step++) {
    if (r() < 0.6 || keys.length === 0) {
      // Mix sequential, strided and huge handles: the hash must spread all of them.
      const kind = r();
      const h = kind < 0.4 ? step : kind < 0.7 ? step * 4096 : 2 ** 52 + Math.floor(r() * 2 ** 40);
      if (model.has(h)) continue;
      index.put(h, step);
      model.set(h, step);
      keys.push(h);
    } else {
      const i = Math.floor(r() * keys.length);
      const h = keys[i];
      keys[i] = keys[keys.length - 1];
      keys.pop();
      assert.equal(index.remove(h), true);
      model.delete(h);
      assert.equal(index.get(h), NIL);
      assert.equal(index.remove(h), false);
    }
  }
  assert.equal(index.count, model.size);
  for (const [h, s] of model) assert.equal(index.get(h), s);
  assert.deepEqual(new Map(index.entries()), model);
  assert.ok(index.count * 2 <= index.capacity);
  index.reset();
  assert.equal(index.get(keys[0]), NIL);
});

test('layout: handle index stays exact during an incremental resize (get/remove across both tables)', () => {
  const index = new HandleIndex();
  const model = new Map<number, number>();
  const keys: number[] = [];
  let h = 1;
  let sawResize = 0;
  const r = rng(5);
  for (let round = 0; round < 13; round++) {
    // Grow through one more doubling, removing and probing while entries sit in both tables.
    const target = 16 << round;
    while (model.size < target) {
      index.put(h, h * 2);
      model.set(h, h * 2);
      keys.push(h);
      h += 1 + Math.floor(r() * 3);
      if (index.resizing) {
        sawResize++;
        const at = Math.floor(r() * keys.length);
        const victim = keys[at];
        keys[at] = keys[keys.length - 1];
        keys.pop();
        assert.equal(index.get(victim), model.get(victim));
        assert.equal(index.remove(victim), true);
        model.delete(victim);
        assert.equal(index.get(victim), NIL);
        if (sawResize % 4099 === 0) {
          for (const [k, v] of model) assert.equal(index.get(k), v);
          assert.equal(index.entries().length, model.size);
        }
      }
    }
  }
  assert.ok(sawResize > 100, 'resizes were exercised');
  for (const [k, v] of model) assert.equal(index.get(k), v);
  assert.equal(index.count, model.size);
});

test('layout: handle index growth is incremental (no one-shot rehash), and every entry stays readable meanwhile', () => {
  // Wall-clock limits belong in bench/; here the property itself: once a resize starts, the old table
  // drains over many later puts instead of inside the one that triggered it.
  const index = new HandleIndex();
  let resizes = 0;
  let longestMigration = 0;
  let run = 0;
  for (let i = 0; i < 300_000; i++) {
    const was = index.resizing;
    index.put(i * 7 + 3, i);
    if (index.resizing) {
      if (!was) resizes++;
      run++;
      if (run > longestMigration) longestMigration = run;
    } else {
      run = 0;
    }
    if (index.resizing && i % 997 === 0) {
      for (let j = Math.max(0, i - 2000); j <= i; j++) assert.equal(index.get(j * 7 + 3), j);
    }
  }
  assert.ok(resizes >= 5, `resizes: ${resizes}`);
  assert.ok(longestMigration > 1000, `the largest resize spread over ${longestMigration} puts`);
  for (let j = 0; j < 300_000; j += 37) assert.equal(index.get(j * 7 + 3), j);
  assert.equal(index.count, 300_000);
});

test('layout: expiry heap pops by (expiresAt, handle) and removes from the middle', () => {
  const r = rng(11);
  const slots = new SlotTable();
  const heap = new ExpiryHeap(slots);
  const live = new Set<number>();
  for (let i = 0; i < 2_000; i++) {
    const s = slots.alloc();
    slots.init(s, 10_000 - i, 0, 0, 0, 1, 10_000, 1 + Math.floor(r() * 50), i, NIL);
    heap.push(s);
    live.add(s);
  }
  for (const s of [...live]) {
    if (r() < 0.3) {
      heap.remove(s);
      assert.equal(slots.heapPos(s), NIL);
      live.delete(s);
    }
  }
  const expected = [...live].sort((a, b) => slots.expiresAt(a) - slots.expiresAt(b) || slots.handle(a) - slots.handle(b));
  const popped: number[] = [];
  while (heap.size > 0) {
    const s = heap.top();
    for (let i = 0; i < heap.size; i++) assert.equal(slots.heapPos(heap.at(i)), i);
    heap.remove(s);
    popped.push(s);
  }
  assert.deepEqual(popped, expected);
  assert.equal(heap.top(), NIL);
});
