/**
 * Deferred, coalesced view writes (projections/projector.ts, ViewWrites): the overlays answer every write
 * at once, held or issued, until it commits; a flush issues the last value of each key once, view writes
 * before cursors, in one turn; a cursor never reaches LMDB ahead of the view writes it covers; memory is
 * bounded; the timer is unref'd and stops at close; the app issues what is held before its store closes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JournalEvent } from '../../src/domain/events.ts';
import { openStore, type Store } from '../../src/journal/env.ts';
import { metaKeys, priceKey, type Key } from '../../src/journal/keys.ts';
import { readJournal } from '../../src/journal/recovery.ts';
import { MarketDataStore, MidpointSampler, RangeOverlay } from '../../src/projections/market-data.ts';
import { Projector, ViewStore, ViewWrites, type Projection } from '../../src/projections/projector.ts';
import { buildProjections } from '../../src/projections/registry.ts';
import { startApp } from '../../src/node/app.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger, type Logger } from '../../src/runtime/log.ts';
import { wallet } from '../fixtures/engine-harness.ts';
import { deposit, journal, totals } from '../fixtures/projections.ts';

const LONG = { delayMs: 3_600_000 };
const freshDir = () => mkdtempSync(join(tmpdir(), 'pm-vw-'));
const freshStore = (dir = freshDir()): Store => openStore({ dataDir: dir, mapSize: 256 * 1024 ** 2 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Until lmdb-js committed what was issued and the overlays settled. */
async function committed(store: Store): Promise<void> {
  await store.root.flushed;
  await new Promise((r) => setImmediate(r));
}

type Db = { put: (k: never, v: unknown) => Promise<boolean>; remove: (k: never) => Promise<boolean> };
interface Issued {
  puts: Array<[unknown, unknown]>;
  removes: unknown[];
}
/** Records what a database is actually asked to write; `fail` makes its puts throw or its commits reject. */
function watch(db: Db, log: string[] = [], tag = ''): Issued & { fail?: 'throw' | 'reject' } {
  const seen: Issued & { fail?: 'throw' | 'reject' } = { puts: [], removes: [] };
  const put = db.put.bind(db);
  const remove = db.remove.bind(db);
  db.put = (k, v) => {
    if (seen.fail === 'throw') throw new Error('cannot encode');
    if (seen.fail === 'reject') return Promise.reject(new Error('commit failed'));
    seen.puts.push([k, v]);
    log.push(tag);
    return put(k, v);
  };
  db.remove = (k) => {
    seen.removes.push(k);
    log.push(tag);
    return remove(k);
  };
  return seen;
}

test('ViewStore: 100 writes to 10 keys are read at once and issue 10 puts, the last values, only at the flush', async () => {
  const store = freshStore();
  await store.views.put(['k', 'gone'], 'committed');
  const w = new ViewWrites(silentLogger, LONG);
  const v = new ViewStore(store.views, w);
  const issued = watch(store.views);
  for (let i = 0; i < 100; i++) v.put(['k', i % 10], i);
  v.remove(['k', 'gone']);
  const last = [90, 91, 92, 93, 94, 95, 96, 97, 98, 99];
  const answers = () => {
    assert.equal(v.get(['k', 3]), 93);
    assert.equal(v.get(['k', 'gone']), undefined);
    assert.deepEqual(v.range<number>(['k']).map((e) => e.value), last);
    assert.deepEqual(v.range<number>(['k'], { reverse: true, limit: 2 }).map((e) => e.value), [99, 98]);
  };
  answers();
  assert.deepEqual(v.queuedUnder<number>(['k']).map((e) => e.value).sort(), last);
  assert.equal(v.version, 101, 'every write counts when it is made');
  assert.deepEqual([issued.puts.length, issued.removes.length, w.pending, v.queued], [0, 0, 11, 11]);
  await committed(store);
  assert.equal(store.views.get(['k', 3]), undefined, 'held: nothing reached LMDB');
  answers();

  w.flush();
  assert.deepEqual(issued.puts.map(([k, x]) => [(k as Key)[1], x]).sort(), last.map((x) => [x - 90, x]));
  assert.deepEqual(issued.removes, [['k', 'gone']]);
  assert.equal(w.pending, 0);
  answers(); // issued, not yet committed
  await committed(store);
  assert.equal(v.queued, 0, 'committed writes leave the overlay');
  assert.equal(store.views.get(['k', 3]), 93);
  assert.equal(store.views.get(['k', 'gone']), undefined);
  answers();
  assert.equal(v.version, 101, 'neither the issue nor the commit changes an answer, so not the version');
  w.flush();
  assert.equal(issued.puts.length, 10, 'a flush with nothing held issues nothing');
  await store.close();
});

test('ViewStore: put then remove ends removed, remove then put ends put; a write over an issued one waits for the next flush', async () => {
  const store = freshStore();
  await store.views.put(['b'], 'old');
  const w = new ViewWrites(silentLogger, LONG);
  const v = new ViewStore(store.views, w);
  const issued = watch(store.views);
  v.put(['a'], 1);
  v.remove(['a']);
  v.remove(['b']);
  v.put(['b'], 2);
  assert.deepEqual([v.get(['a']), v.get(['b'])], [undefined, 2]);
  w.flush();
  assert.deepEqual(issued.puts, [[['b'], 2]]);
  assert.deepEqual(issued.removes, [['a']]);
  await committed(store);
  assert.deepEqual([store.views.get(['a']), store.views.get(['b'])], [undefined, 2]);

  v.put(['c'], 1);
  w.flush();
  v.put(['c'], 2);
  assert.deepEqual([v.get(['c']), w.pending], [2, 1]);
  await committed(store);
  assert.equal(store.views.get(['c']), 1);
  assert.equal(v.get(['c']), 2, 'the held write still answers over the committed one');
  assert.equal(v.queued, 1);
  w.flush();
  await committed(store);
  assert.deepEqual([store.views.get(['c']), v.queued], [2, 0]);
  await store.close();
});

test('RangeOverlay: 100 writes to 10 keys are read at once and issue 10 puts, the last values, only at the flush', async () => {
  const store = freshStore();
  await store.prices.put(['t', 100], 'committed');
  const w = new ViewWrites(silentLogger, LONG);
  const o = new RangeOverlay(store.prices, w);
  const issued = watch(store.prices);
  for (let i = 0; i < 100; i++) o.put(['t', i % 10], i);
  const last = [90, 91, 92, 93, 94, 95, 96, 97, 98, 99];
  const answers = () => {
    assert.equal(o.get(['t', 3]), 93);
    assert.deepEqual([...o.range<unknown>(['t', 0], ['t', 1000])].map((e) => e.value), [...last, 'committed']);
    assert.deepEqual(o.queuedIn(['t', 2], ['t', 4]).map((e) => e.value), [92, 93]);
  };
  answers();
  assert.deepEqual([issued.puts.length, w.pending, o.pending], [0, 10, 10]);
  w.flush();
  assert.deepEqual(issued.puts.map(([k, x]) => [(k as Key)[1], x]).sort(), last.map((x) => [x - 90, x]));
  answers();
  o.put(['t', 3], 'again');
  assert.equal(o.get(['t', 3]), 'again');
  await committed(store);
  assert.equal(o.pending, 1, 'the committed writes left; the held one stays');
  assert.deepEqual([store.prices.get(['t', 3]), o.get(['t', 3])], [93, 'again']);
  w.flush();
  await committed(store);
  assert.deepEqual([store.prices.get(['t', 3]), o.pending], ['again', 0]);
  await store.close();
});

test('a failed commit leaves no overlay entry behind', async () => {
  const store = freshStore();
  const w = new ViewWrites(silentLogger, LONG);
  const v = new ViewStore(store.views, w);
  const o = new RangeOverlay(store.prices, w);
  watch(store.views).fail = 'reject';
  watch(store.prices).fail = 'reject';
  v.put(['a'], 1);
  o.put(['a'], 1);
  w.flush();
  assert.deepEqual([v.queued, o.pending], [1, 1]);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual([v.queued, o.pending], [0, 0]);
  assert.deepEqual([v.get(['a']), o.get(['a'])], [undefined, undefined]);
  assert.deepEqual(v.range(['a']), []);
  await store.close();
});

test('a write that throws at its issue is forgotten and logged once, and no cursor is issued from then on', async () => {
  const store = freshStore();
  const errors: string[] = [];
  const log = { error: (_o: unknown, msg: string) => errors.push(msg) } as unknown as Logger;
  const w = new ViewWrites(log, LONG);
  const v = new ViewStore(store.views, w);
  const p = new Projector(store, [totals(v)], silentLogger, w);
  const views = watch(store.views);
  const meta = watch(store.meta);
  views.fail = 'throw';
  p.onCommitted([deposit(1, 'a', 5), deposit(2, 'b', 1)]);
  w.flush();
  assert.equal(errors.length, 1);
  assert.ok(w.failed instanceof Error);
  assert.equal(v.queued, 0, 'writes that cannot be issued leave the overlay');
  assert.equal(meta.puts.length, 0, 'the cursor does not go out without the views it covers');
  views.fail = undefined;
  p.onCommitted([deposit(3, 'c', 2)]);
  w.flush();
  assert.deepEqual(views.puts, [[['totals', 'c'], 2]], 'views still go out: a replay over them is harmless');
  assert.equal(meta.puts.length, 0, 'a cursor now would cover the lost writes');
  assert.equal(errors.length, 1);
  await store.close();
});

test('crash consistency: the cursor goes out in the flush of the view writes it covers, after them, never before', async () => {
  const dir = freshDir();
  let store = freshStore(dir);
  const events = [deposit(1, 'a', 5), deposit(2, 'a', 7), deposit(3, 'b', 1), deposit(4, 'b', 2), deposit(5, 'a', 100)];
  await journal(store, events);
  let w = new ViewWrites(silentLogger, LONG);
  let v = new ViewStore(store.views, w);
  let p = new Projector(store, [totals(v)], silentLogger, w);
  const order: string[] = [];
  watch(store.views, order, 'view');
  watch(store.meta, order, 'cursor');
  p.onCommitted(events.slice(0, 3));
  assert.deepEqual([v.get(['totals', 'a']), v.get(['totals', 'b']), p.cursor('totals')], [12, 1, 3], 'applied at once');
  await committed(store);
  assert.deepEqual(order, []);
  assert.deepEqual([store.meta.get(metaKeys.projectionCursor('totals')), store.views.get(['totals', 'a'])], [undefined, undefined]);
  w.flush();
  assert.deepEqual(order, ['view', 'view', 'cursor'], 'one put per key, the cursor last, all in one turn');
  await committed(store);
  assert.deepEqual([store.meta.get(metaKeys.projectionCursor('totals')), store.views.get(['totals', 'a']), store.views.get(['totals', 'b'])], [3, 12, 1]);

  // Applied but never flushed, then the process dies: LMDB keeps cursor 3 with the views up to 3.
  p.onCommitted(events.slice(3));
  assert.equal(v.get(['totals', 'a']), 112);
  await store.close();

  store = freshStore(dir);
  w = new ViewWrites(silentLogger, LONG);
  v = new ViewStore(store.views, w);
  p = new Projector(store, [totals(v)], silentLogger, w);
  assert.equal(p.cursor('totals'), 3);
  assert.equal(p.catchUp(), 2);
  assert.equal(w.pending, 0, 'catch-up flushes at its end');
  await committed(store);
  assert.deepEqual([store.meta.get(metaKeys.projectionCursor('totals')), store.views.get(['totals', 'a']), store.views.get(['totals', 'b'])], [5, 112, 3]);
  await store.close();
});

test('bounded: catch-up and a live apply flush after the event that reaches the bound, and after each catch-up batch', async () => {
  const store = freshStore();
  const events = Array.from({ length: 500 }, (_, i) => deposit(i + 1, 'a', 1));
  await journal(store, events);
  const w = new ViewWrites(silentLogger, { ...LONG, bound: 50 });
  const v = new ViewStore(store.views, w);
  let maxHeld = 0;
  const bySeq: Projection = {
    name: 'by-seq',
    apply(e) {
      v.put(['s', e.seq], 1);
      maxHeld = Math.max(maxHeld, w.pending);
    },
  };
  const p = new Projector(store, [bySeq], silentLogger, w);
  assert.equal(p.catchUp(1000), 500);
  assert.equal(maxHeld, 50, 'never more than the bound held');
  assert.equal(w.pending, 0);
  await committed(store);
  assert.equal(store.views.getCount({ start: ['s'], end: ['s', '\uffff'] }), 500);
  assert.equal(store.meta.get(metaKeys.projectionCursor('by-seq')), 500);

  // Live: 120 events in one commit cross the bound; what was flushed is consistent with its cursor.
  p.onCommitted(Array.from({ length: 120 }, (_, i) => deposit(501 + i, 'a', 1)));
  assert.ok(w.pending < 50);
  await committed(store);
  const c = store.meta.get(metaKeys.projectionCursor('by-seq')) as number;
  assert.ok(c > 500 && c < 620, `cursor ${c}`);
  assert.equal(store.views.getCount({ start: ['s', 501], end: ['s', '\uffff'] }), c - 500, 'exactly the views up to the cursor');
  assert.equal(w.pending, 620 - c + 1, 'the rest held, with the cursor that will cover them');

  // Each catch-up batch is flushed even far below the bound.
  const store2 = freshStore();
  await journal(store2, events);
  const w2 = new ViewWrites(silentLogger, LONG);
  const v2 = new ViewStore(store2.views, w2);
  let max2 = 0;
  const p2 = new Projector(store2, [{ name: 'by-seq', apply: (e) => (v2.put(['s', e.seq], 1), (max2 = Math.max(max2, w2.pending))) }], silentLogger, w2);
  assert.equal(p2.catchUp(100), 500);
  assert.equal(max2, 100);
  await store.close();
  await store2.close();
});

test('the timer issues held writes within delayMs, never keeps the process up, and never fires after close', async () => {
  const store = freshStore();
  const w = new ViewWrites(silentLogger, { delayMs: 10 });
  const v = new ViewStore(store.views, w);
  const issued = watch(store.views);
  const refTimers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = refTimers();
  v.put(['a'], 1);
  assert.equal(refTimers(), before, "the flush timer is unref'd");
  assert.equal(issued.puts.length, 0);
  await sleep(50);
  assert.equal(issued.puts.length, 1);

  v.put(['b'], 1);
  w.close();
  assert.equal(issued.puts.length, 2, 'close issues what is held');
  v.put(['c'], 1);
  await sleep(50);
  assert.equal(issued.puts.length, 2, 'no timer after close');
  assert.deepEqual([w.pending, v.get(['c'])], [1, 1]);
  w.flush();
  assert.equal(issued.puts.length, 3);
  await store.close();
});

test('ride: a journal commit takes held writes along once the oldest has waited rideAfterMs, not before', async () => {
  const store = freshStore();
  const w = new ViewWrites(silentLogger, { delayMs: 3_600_000, rideAfterMs: 30 });
  const v = new ViewStore(store.views, w);
  const issued = watch(store.views);
  w.ride();
  assert.equal(issued.puts.length, 0, 'nothing held: nothing to issue');
  v.put(['a'], 1);
  w.ride();
  assert.equal(issued.puts.length, 0, 'held for less than rideAfterMs: left for a later commit');
  await sleep(40);
  v.put(['b'], 2);
  w.ride();
  assert.equal(issued.puts.length, 2, 'the oldest waited long enough: everything held goes, the newer write too');
  assert.equal(w.pending, 0);
  v.put(['c'], 3);
  w.ride();
  assert.equal(issued.puts.length, 2, 'the wait starts again with the next write held');
  w.close();
  assert.equal(issued.puts.length, 3);
  await store.close();
});

test('midpoint samples and the market-data overlays a registry makes join the deferral', async () => {
  const store = freshStore();
  const w = new ViewWrites(silentLogger, LONG);
  const issued = watch(store.prices);
  const md = new MarketDataStore(store, w);
  let listener: (ids: readonly string[]) => void = () => undefined;
  const now = Date.UTC(2027, 0, 1, 12, 0, 5);
  const s = new MidpointSampler({ feed: { onSnapshots: (l) => (listener = l) }, md, midpoint: () => 5000, now: () => now, log: silentLogger });
  s.start();
  listener(['111']);
  s.stop();
  const key = priceKey('111', now / 1000);
  assert.deepEqual([s.samples, md.prices.get(key), issued.puts.length, w.pending], [1, 5000, 0, 1]);
  w.flush();
  assert.deepEqual(issued.puts, [[key, 5000]]);

  const fill = { type: 'fill', seq: 1, ts: now, takerTokenId: '222', makerTokenId: '222', takerPricePips: 4000, makerPricePips: 4000 } as unknown as JournalEvent;
  const projections = buildProjections({ store, views: new ViewStore(store.views, w), prices: new ViewStore(store.prices, w) });
  projections.find((p) => p.name === 'market-data:trade-prices')!.apply(fill);
  assert.deepEqual([issued.puts.length, w.pending], [1, 1]);
  w.flush();
  assert.deepEqual(issued.puts[1], [priceKey('222', now / 1000), 4000]);
  await store.close();
});

test('app stop issues the held view writes and cursors before the store closes', async () => {
  const dataDir = freshDir();
  // A flush delay no test outlives: only the stop can issue what the last commits held.
  const app = await startApp(testConfig({ dataDir, http: { port: 0 }, rateLimits: { enabled: false } }), { log: silentLogger, viewWrites: LONG });
  assert.ok((await app.ctx.engine!.deposit(wallet(0x77), 5_000_000)).ok);
  await app.stop();
  const store = freshStore(dataDir);
  const last = Math.max(...[...readJournal(store)].map((e) => e.seq));
  const names = buildProjections({ store, views: new ViewStore(store.views), prices: new ViewStore(store.prices) }).map((p) => p.name);
  assert.ok(names.length >= 4);
  for (const n of names) assert.equal(store.meta.get(metaKeys.projectionCursor(n)), last, n);
  await store.close();
});
