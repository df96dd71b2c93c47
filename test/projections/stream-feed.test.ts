/**
 * The stream feed's publishing turn (src/projections/stream-feed.ts) on hand-made journal batches and a
 * recording sink: nothing is published while the commit's listeners run (the acknowledgements go first),
 * everything in the next setImmediate; batches applied back to back before that turn are merged, and a
 * client applying the merged frames (tools/stream-client.ts LocalBook) holds exactly the committed books'
 * levels and hash on both tokens after every turn, over a seeded random run of rests, cancels and fills
 * grouped 1-4 batches per turn; every fill's last_trade_price and every order's PLACEMENT arrives once, in
 * journal order.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FillEvent, JournalEvent, MarketEvent, OrderAcceptedEvent, OrderStatusEvent } from '../../src/domain/events.ts';
import { CommittedBooks } from '../../src/projections/committed-books.ts';
import { StreamFeed, bookMessage, marketTopic } from '../../src/projections/stream-feed.ts';
import { LocalBook, type StreamEvent } from '../../tools/stream-client.ts';
import { T, lcg, wallet } from '../fixtures/engine-harness.ts';

const CID = '0x' + 'cd'.repeat(32);
const Y = '201';
const N = '202';
const W = wallet(7);
let seq = 0;
const ts = () => 1_700_000_000_000 + seq * 1000;

const marketEv = (): MarketEvent => ({ type: 'market', seq: ++seq, ts: ts(), conditionId: CID, marketId: 1, tokenIds: [Y, N], tickPips: 100, minSizeUnits: T, makerFeeBps: 0, takerFeeBps: 0, acceptingOrders: true, negRisk: false });

function orderEv(id: string, outcome: 0 | 1, side: 'BUY' | 'SELL', pricePips: number, sizeUnits: number): OrderAcceptedEvent {
  seq++;
  return {
    type: 'order', seq, ts: ts(), orderId: id, wallet: W, tokenId: outcome === 0 ? Y : N, side, orderType: 'GTC', postOnly: false, makerAmount: 0, takerAmount: 0, expiration: 0,
    builder: '0x', owner: 'k', signer: W, salt: '1', timestamp: '0', signatureType: 0, signature: '0x', conditionId: CID, outcome, pricePips, sizeUnits, budgetUnits: 0, makerFeeBps: 0, takerFeeBps: 0,
  };
}

function fillEv(maker: { id: string; outcome: 0 | 1; side: 'BUY' | 'SELL'; price: number; remaining: number }, size: number): FillEvent {
  seq++;
  const takerSide = maker.side === 'BUY' ? 'SELL' : 'BUY';
  return {
    type: 'fill', seq, ts: ts(), tradeId: '0x' + seq.toString(16), txHash: '0x', conditionId: CID, kind: 'TRANSFER', size, takerOrderId: 't' + seq, makerOrderId: maker.id, takerWallet: W, makerWallet: W,
    takerOwner: 'k', makerOwner: 'k', takerTokenId: maker.outcome === 0 ? Y : N, makerTokenId: maker.outcome === 0 ? Y : N, takerOutcome: maker.outcome, makerOutcome: maker.outcome,
    takerSide, makerSide: maker.side, takerPricePips: maker.price, makerPricePips: maker.price, takerUsdc: 0, makerUsdc: 0, takerFee: 0, makerFee: 0, makerRemaining: maker.remaining, builder: '0x',
  };
}

const cancelEv = (id: string, remaining: number): OrderStatusEvent => ({ type: 'status', seq: ++seq, ts: ts(), orderId: id, wallet: W, conditionId: CID, status: 'CANCELED', reason: 'USER', remaining, matched: 0 });

function harness() {
  const books = new CommittedBooks();
  books.seed({ markets: [], resting: [], lastTrades: [], ts: 0 });
  books.apply([marketEv()]);
  const frames: Array<{ topic: string; events: StreamEvent[] }> = [];
  const feed = new StreamFeed({
    books,
    sink: { wants: () => true, publish: (topic, frame) => void frames.push({ topic, events: [JSON.parse(frame)].flat() }) },
    order: () => undefined,
    fill: () => undefined,
    outcomes: () => undefined,
    marketInfo: () => undefined,
    bookIntervalMs: 0,
  });
  books.onApplied(feed.onApplied);
  return { books, feed, frames };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

test('frames leave in the turn after the commit\'s listeners, not inside them', async () => {
  const h = harness();
  await turn();
  h.frames.length = 0;
  h.books.apply([orderEv('a', 0, 'BUY', 4000, 10 * T)]);
  assert.equal(h.frames.length, 0, 'nothing while the listeners run');
  await turn();
  assert.deepEqual(h.frames.map((f) => f.topic).sort(), [`market-custom:${N}`, `market-custom:${Y}`, marketTopic(N), marketTopic(Y), `user:${W}`, `user:${W}:${CID}`].sort());
  h.feed.close();
});

test('batches merged in one turn: a client applying the frames holds the committed books after every turn', async () => {
  const h = harness();
  const local: Record<string, LocalBook> = { [Y]: new LocalBook(Y), [N]: new LocalBook(N) };
  for (const t of [Y, N]) local[t].apply(JSON.parse(bookMessage(h.books.book(t)!)) as StreamEvent);
  await turn();
  h.frames.length = 0;
  const rnd = lcg(20261127);
  const resting = new Map<string, { id: string; outcome: 0 | 1; side: 'BUY' | 'SELL'; price: number; remaining: number }>();
  const placed: string[] = [];
  const fills: string[] = [];
  let merged = 0;
  let id = 0;
  for (let round = 0; round < 300; round++) {
    const batches = 1 + rnd(4);
    if (batches > 1) merged++;
    for (let b = 0; b < batches; b++) {
      const events: JournalEvent[] = [];
      for (let k = 1 + rnd(3); k > 0; k--) {
        const pick = rnd(4);
        const list = [...resting.values()];
        if (pick <= 1 || list.length === 0) {
          const o = { id: `o${++id}`, outcome: rnd(2) as 0 | 1, side: (rnd(2) === 0 ? 'BUY' : 'SELL') as 'BUY' | 'SELL', price: 100 * (10 + rnd(80)), remaining: (1 + rnd(20)) * T };
          resting.set(o.id, o);
          placed.push(o.id);
          events.push(orderEv(o.id, o.outcome, o.side, o.price, o.remaining));
        } else if (pick === 2) {
          const o = list[rnd(list.length)];
          resting.delete(o.id);
          events.push(cancelEv(o.id, o.remaining));
        } else {
          const o = list[rnd(list.length)];
          const size = Math.min(o.remaining, (1 + rnd(10)) * T);
          o.remaining -= size;
          if (o.remaining === 0) resting.delete(o.id);
          const f = fillEv(o, size);
          fills.push(f.tradeId);
          events.push(f);
        }
      }
      h.books.apply(events);
    }
    await turn();
    for (const f of h.frames) for (const e of f.events) if (f.topic.startsWith('market:')) local[f.topic.slice(7)].apply(e);
    for (const t of [Y, N]) {
      const rest = JSON.parse(h.books.book(t)!.json) as { bids: unknown[]; asks: unknown[]; hash: string };
      assert.deepEqual(local[t].levels(), { bids: rest.bids, asks: rest.asks }, `round ${round}, token ${t}`);
      assert.equal(local[t].hash, rest.hash, `round ${round}, token ${t}: hash`);
    }
  }
  assert.ok(merged > 100, `turns with merged batches: ${merged}`);
  const all = h.frames.flatMap((f) => f.events.map((e) => ({ topic: f.topic, e })));
  const lastTrades = all.filter((x) => x.topic === marketTopic(Y) || x.topic === marketTopic(N)).filter((x) => x.e.event_type === 'last_trade_price');
  assert.equal(lastTrades.length, fills.length, 'one last_trade_price per fill, none lost or repeated');
  const userAll = all.filter((x) => x.topic === `user:${W}`).map((x) => x.e);
  assert.deepEqual(userAll.filter((e) => e.event_type === 'order' && e.type === 'PLACEMENT').map((e) => (e as { id: string }).id), placed, 'placements once each, in journal order');
  assert.deepEqual(userAll.filter((e) => e.event_type === 'trade' && e.trader_side === 'TAKER').map((e) => (e as { id: string }).id), fills, 'trades once each, in journal order');
  h.feed.close();
});

test('close() publishes what is still queued', async () => {
  const h = harness();
  await turn();
  h.frames.length = 0;
  h.books.apply([orderEv('z', 1, 'SELL', 5000, 3 * T)]);
  h.feed.close();
  assert.ok(h.frames.length > 0);
  const n = h.frames.length;
  await turn();
  assert.equal(h.frames.length, n, 'and nothing twice');
});

test('a book version\'s `book` event is built once for every reader; a new version gets its own', () => {
  const h = harness();
  h.books.apply([orderEv('r1', 0, 'BUY', 4000, T)]);
  const body = h.books.book(Y)!;
  // Count the reads of the body's bytes: building the event reads them once, a cached event never.
  let reads = 0;
  const counted = { ...body, get json() {
    reads++;
    return body.json;
  } };
  const first = bookMessage(counted);
  for (let i = 0; i < 1000; i++) assert.equal(bookMessage(counted), first);
  assert.equal(reads, 1);
  assert.deepEqual(JSON.parse(first), { ...JSON.parse(body.json), event_type: 'book', timestamp: String(body.ts) });
  // The committed books hand out the same body until the version changes, so the feed and every dump share it.
  assert.equal(h.books.book(Y), body);
  h.books.apply([orderEv('r2', 0, 'BUY', 4100, T)]);
  const next = h.books.book(Y)!;
  assert.notEqual(next, body);
  assert.notEqual(bookMessage(next), first);
  assert.match(bookMessage(next), /"price":"0.41"/);
});
