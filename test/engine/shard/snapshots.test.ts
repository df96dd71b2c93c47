/**
 * Depth-snapshot publication with real shard workers: a changed market is published at most once per
 * `snapshotIntervalMs` (by the end of a drain or by the worker's timer), the engine knows when a
 * published snapshot may miss an applied change (snapshotStale), refreshSnapshot makes it current (and
 * concurrent refreshes share one request), and the market-data reader relies on both for read-your-writes.
 * A long interval makes the coalescing observable without timing assumptions: within it nothing but a
 * refresh may publish a second time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Engine, tokenOutcomeOf } from '../../../src/engine/engine.ts';
import { MarketDataStore } from '../../../src/projections/market-data.ts';
import { MarketDataReader, type BookSource } from '../../../src/queries/market-data.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { T, invariants, market, order, tempStore, until, wallet } from '../../fixtures/engine-harness.ts';

type Book = { bids: { price: string; size: string }[]; asks: { price: string; size: string }[] };

async function funded(e: Engine, n: number): Promise<string> {
  const w = wallet(0x5000 + n);
  assert.deepEqual(await e.deposit(w, 1000 * T), { ok: true, code: 0 });
  return w;
}

function bookOf(e: Engine, tokenId: string): Book & { version: number } {
  const s = e.bookSnapshot(tokenId);
  assert.ok(s !== undefined, `no snapshot of ${tokenId}`);
  return { ...(JSON.parse(s.json) as Book), version: s.version };
}

describe('a long interval: one publication per interval, refreshes for readers', () => {
  let env: ReturnType<typeof tempStore>;
  let e: Engine;
  const published: string[] = [];

  before(async () => {
    env = tempStore('pm-snapshots-');
    e = await Engine.open({ store: env.store, shards: 1, log: silentLogger, snapshotIntervalMs: 600_000 });
    e.onSnapshots((ids) => published.push(...ids));
  });

  after(async () => {
    await e.close();
    await env.cleanup();
  });

  test('orders within the interval are not published; the engine marks the book stale until a refresh', async () => {
    const m = market(0x51);
    e.registerMarket(m);
    const [yes, no] = m.tokenIds;
    // A new market is due at once: its first publication needs no request.
    await until(() => e.bookSnapshot(yes) !== undefined && e.bookSnapshot(no) !== undefined);
    const first = bookOf(e, yes);
    assert.deepEqual([first.bids, first.asks], [[], []]);
    const seen = published.length;

    const w = await funded(e, 1);
    for (let i = 0; i < 10; i++) {
      const r = await e.placeOrder(order({ wallet: w, tokenId: yes, side: 'BUY', price: 3000 + i * 100, size: 2 * T }));
      assert.equal(r.status, 'live');
      assert.equal(e.snapshotStale(yes), true, `order ${i}: acknowledged, not yet published`);
      assert.equal(e.snapshotStale(no), true, 'the other token of the market is stale too');
    }
    assert.equal(bookOf(e, yes).version, first.version, 'no publication within the interval');
    assert.equal(published.length, seen);

    await e.refreshSnapshot(m.conditionId);
    const now = bookOf(e, yes);
    assert.equal(now.version, first.version + 1, 'ten changes, one publication');
    assert.equal(now.bids.length, 10);
    assert.deepEqual(now.bids.at(-1), { price: '0.39', size: '2' });
    assert.deepEqual(bookOf(e, no).asks.at(-1), { price: '0.61', size: '2' });
    assert.deepEqual(published.slice(seen).sort(), [yes, no].sort(), 'listeners hear of the refresh');
    assert.equal(e.snapshotStale(yes), false);
    assert.equal(e.snapshotStale(no), false);
    assert.equal(e.snapshotStale('424242'), false, 'unknown token');
    assert.deepEqual(invariants(e), []);
  });

  test('a refresh with nothing new publishes nothing; refreshes asked together share one request', async () => {
    const m = market(0x52);
    e.registerMarket(m);
    const [yes] = m.tokenIds;
    await e.refreshSnapshot(m.conditionId);
    const v = bookOf(e, yes).version;
    const seen = published.length;
    await e.refreshSnapshot(m.conditionId);
    assert.equal(bookOf(e, yes).version, v, 'the shard only confirms what was published');
    assert.equal(published.length, seen);

    const a = e.refreshSnapshot(m.conditionId);
    const b = e.refreshSnapshot(market(0x51).conditionId);
    assert.equal(a, b, 'no RESULT in between: the second caller joins the first request (same shard)');
    await a;
    const w = await funded(e, 2);
    await e.placeOrder(order({ wallet: w, tokenId: yes, side: 'SELL', price: 7000, size: T, type: 'FAK' }));
    const c = e.refreshSnapshot(m.conditionId);
    assert.notEqual(c, a, 'a RESULT since: a new request');
    await c;
  });

  test('read-your-writes through the market-data reader: stale books are refreshed before they are read', async () => {
    const m = market(0x53);
    e.registerMarket(m);
    const [yes, no] = m.tokenIds;
    // The engine's published snapshots as the reader's books.
    const books: BookSource = {
      bookSnapshot: (t) => e.bookSnapshot(t),
      snapshotStale: (t) => e.snapshotStale(t),
      refreshSnapshot: (c) => e.refreshSnapshot(c),
      lastTradePrice: (t) => e.lastTradePrice(t),
      tokenOutcome: (t) => tokenOutcomeOf(e, t),
      market: (c) => e.market(c),
    };
    const reader = new MarketDataReader(books, new MarketDataStore(env.store));
    await e.refreshSnapshot(m.conditionId);
    assert.equal(reader.ensureSnapshots([yes, no]), undefined, 'current: read at once');

    const w = await funded(e, 3);
    const placed = await e.placeOrder(order({ wallet: w, tokenId: no, side: 'BUY', price: 4500, size: 3 * T }));
    const wait = reader.ensureSnapshots([yes, no]);
    assert.ok(wait instanceof Promise, 'the acknowledged order is not published yet: the reader waits');
    await wait;
    assert.deepEqual(JSON.parse(reader.bookJson(no) as string).bids, [{ price: '0.45', size: '3' }]);
    assert.deepEqual(reader.quote(yes), { BUY: '', SELL: '0.55' });

    const canceled = await e.cancelOrders(w, [placed.orderId]);
    assert.deepEqual(canceled.canceled, [placed.orderId]);
    const again = reader.ensureSnapshots([yes]);
    assert.ok(again instanceof Promise, 'a cancel makes the book stale too');
    await again;
    assert.deepEqual(JSON.parse(reader.bookJson(no) as string).bids, []);
    assert.deepEqual(reader.quote(yes), { BUY: '', SELL: '' });
    assert.deepEqual(invariants(e), []);
  });
});

describe('a short interval: the worker publishes pending changes by itself', () => {
  let env: ReturnType<typeof tempStore>;
  let e: Engine;

  before(async () => {
    env = tempStore('pm-snapshots-');
    e = await Engine.open({ store: env.store, shards: 1, log: silentLogger, snapshotIntervalMs: 50 });
  });

  after(async () => {
    await e.close();
    await env.cleanup();
  });

  test('changes made within an interval are published once it has passed, without any request', async () => {
    const m = market(0x54);
    e.registerMarket(m);
    const [yes, no] = m.tokenIds;
    const w = await funded(e, 4);
    // Back to back: the later ones land within the interval of an earlier publication, and no command
    // follows them, so only the worker's timer can publish them. NO bids at p are YES asks at 1 - p.
    const acks = await Promise.all([5000, 4900, 4800].map((p) => e.placeOrder(order({ wallet: w, tokenId: no, side: 'BUY', price: p, size: T }))));
    for (const p of [4000, 4100, 4200]) acks.push(await e.placeOrder(order({ wallet: w, tokenId: yes, side: 'BUY', price: p, size: T })));
    assert.deepEqual(acks.map((a) => a.status), Array(6).fill('live'));
    await until(() => !e.snapshotStale(yes));
    const b = bookOf(e, yes);
    assert.deepEqual(
      [b.bids.map((l) => l.price), b.asks.map((l) => l.price)],
      [
        ['0.4', '0.41', '0.42'],
        ['0.52', '0.51', '0.5'],
      ],
    );
    assert.deepEqual(invariants(e), []);
  });
});

describe('an infinite interval (the service): nothing is published unless asked', () => {
  let env: ReturnType<typeof tempStore>;
  let e: Engine;
  const published: string[] = [];

  before(async () => {
    env = tempStore('pm-snapshots-');
    e = await Engine.open({ store: env.store, shards: 1, log: silentLogger, snapshotIntervalMs: Infinity });
    e.onSnapshots((ids) => published.push(...ids));
  });

  after(async () => {
    await e.close();
    await env.cleanup();
  });

  test('orders change the book without a publication; a refresh publishes it, current', async () => {
    const m = market(0x55);
    e.registerMarket(m);
    const [yes] = m.tokenIds;
    const w = await funded(e, 5);
    for (const p of [4000, 4100]) assert.equal((await e.placeOrder(order({ wallet: w, tokenId: yes, side: 'BUY', price: p, size: T }))).status, 'live');
    // Ten of the default interval: a shard publishing by itself would have by now.
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(published, []);
    assert.equal(e.bookSnapshot(yes), undefined);

    await e.refreshSnapshot(m.conditionId);
    assert.deepEqual(bookOf(e, yes).bids.map((l) => l.price), ['0.4', '0.41']);
    assert.equal(e.snapshotStale(yes), false);
    const count = published.length;

    assert.equal((await e.placeOrder(order({ wallet: w, tokenId: yes, side: 'BUY', price: 4200, size: T }))).status, 'live');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(published.length, count, 'no publication after the refresh either');
    assert.equal(e.snapshotStale(yes), true);
    await e.refreshSnapshot(m.conditionId);
    assert.deepEqual(bookOf(e, yes).bids.map((l) => l.price), ['0.4', '0.41', '0.42']);
    assert.deepEqual(invariants(e), []);
  });
});
