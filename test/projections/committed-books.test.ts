/**
 * The committed books: hand-written journal batches (rest, cancel, transfer, mint, merge, expiry, tick
 * change, FAK remainder) give the levels, last trades and bodies worked out by hand, on both tokens; and a
 * seeded random workload through a real engine ends with the same levels, last trades and frames as the
 * shards' own books, before and after a restart (seeded from Engine.bookSeed).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import type { FillEvent, MarketEvent, OrderAcceptedEvent, OrderStatusEvent } from '../../src/domain/events.ts';
import { Engine } from '../../src/engine/engine.ts';
import { CommittedBooks, hashOf } from '../../src/projections/committed-books.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { T, lcg, market, order, tempStore, until, wallet } from '../fixtures/engine-harness.ts';

const CID = '0x' + 'ab'.repeat(32);
const Y = '101';
const N = '102';
let seq = 0;
const ts = () => 1_700_000_000_000 + seq * 1000;

function marketEv(tickPips = 100): MarketEvent {
  seq++;
  return { type: 'market', seq, ts: ts(), conditionId: CID, marketId: 1, tokenIds: [Y, N], tickPips, minSizeUnits: T, makerFeeBps: 0, takerFeeBps: 0, acceptingOrders: true, negRisk: false };
}

function orderEv(id: string, outcome: 0 | 1, side: 'BUY' | 'SELL', pricePips: number, sizeUnits: number, orderType: 'GTC' | 'FAK' = 'GTC'): OrderAcceptedEvent {
  seq++;
  const w = wallet(1);
  return {
    type: 'order', seq, ts: ts(), orderId: id, wallet: w, tokenId: outcome === 0 ? Y : N, side, orderType, postOnly: false, makerAmount: 0, takerAmount: 0, expiration: 0,
    builder: '0x', owner: 'k', signer: w, salt: '1', timestamp: '0', signatureType: 0, signature: '0x', conditionId: CID, outcome, pricePips, sizeUnits, budgetUnits: 0, makerFeeBps: 0, takerFeeBps: 0,
  };
}

function fillEv(kind: FillEvent['kind'], taker: { id: string; outcome: 0 | 1; side: 'BUY' | 'SELL'; price: number }, maker: { id: string; outcome: 0 | 1; side: 'BUY' | 'SELL'; price: number; remaining: number }, size: number): FillEvent {
  seq++;
  return {
    type: 'fill', seq, ts: ts(), tradeId: '0x' + seq, txHash: '0x', conditionId: CID, kind, size, takerOrderId: taker.id, makerOrderId: maker.id, takerWallet: wallet(2), makerWallet: wallet(1),
    takerOwner: 'k2', makerOwner: 'k1', takerTokenId: taker.outcome === 0 ? Y : N, makerTokenId: maker.outcome === 0 ? Y : N, takerOutcome: taker.outcome, makerOutcome: maker.outcome,
    takerSide: taker.side, makerSide: maker.side, takerPricePips: taker.price, makerPricePips: maker.price, takerUsdc: 0, makerUsdc: 0, takerFee: 0, makerFee: 0, makerRemaining: maker.remaining, builder: '0x',
  };
}

function statusEv(id: string, status: OrderStatusEvent['status'], reason: OrderStatusEvent['reason'], remaining: number): OrderStatusEvent {
  seq++;
  return { type: 'status', seq, ts: ts(), orderId: id, wallet: wallet(1), conditionId: CID, status, reason, remaining, matched: 0 };
}

type Side = { price: string; size: string }[];
function parsed(b: CommittedBooks, token: string): { bids: Side; asks: Side; last_trade_price: string; tick_size: string; timestamp: string; hash: string } {
  return JSON.parse(b.book(token)!.json);
}

describe('hand-written batches', () => {
  const b = new CommittedBooks();
  b.seed({ markets: [], resting: [], lastTrades: [], ts: 0 });

  test('a new market has empty books on both tokens and reports its creation', () => {
    const ch = b.apply([marketEv()]);
    assert.equal(ch.length, 1);
    assert.equal(ch[0].created, true);
    for (const t of [Y, N]) assert.deepEqual([parsed(b, t).bids, parsed(b, t).asks, parsed(b, t).last_trade_price], [[], [], '']);
  });

  test('a resting BUY of outcome 0 is a bid at p on Yes and an ask at 1 - p on No', () => {
    const ch = b.apply([orderEv('a', 0, 'BUY', 4000, 10 * T)]);
    assert.deepEqual([ch[0].bids, ch[0].asks], [[4000], []]);
    assert.deepEqual(parsed(b, Y).bids, [{ price: '0.4', size: '10' }]);
    assert.deepEqual(parsed(b, N).asks, [{ price: '0.6', size: '10' }]);
    assert.deepEqual(b.top(Y), { bid: 4000, ask: 0 });
    assert.deepEqual(b.top(N), { bid: 0, ask: 6000 });
  });

  test('a resting SELL of outcome 1 at 0.55 is an ask on No and a bid at 0.45 on Yes', () => {
    b.apply([orderEv('b', 1, 'SELL', 5500, 5 * T)]);
    assert.deepEqual(parsed(b, Y).bids, [{ price: '0.4', size: '10' }, { price: '0.45', size: '5' }]);
    assert.deepEqual(parsed(b, N).asks, [{ price: '0.6', size: '10' }, { price: '0.55', size: '5' }]);
    assert.equal(b.levelSize(N, 'SELL', 5500), 5 * T);
    assert.equal(b.levelSize(Y, 'BUY', 4500), 5 * T);
  });

  test('a transfer takes from the maker level; the taker never rests (FAK); both last trades move', () => {
    // SELL Yes FAK at 0.4 for 3 against the bid at 0.45 (the No seller, mirrored): a MERGE at 0.45 / 0.55.
    const ch = b.apply([
      orderEv('c', 0, 'SELL', 4000, 3 * T, 'FAK'),
      fillEv('MERGE', { id: 'c', outcome: 0, side: 'SELL', price: 4500 }, { id: 'b', outcome: 1, side: 'SELL', price: 5500, remaining: 2 * T }, 3 * T),
      statusEv('c', 'MATCHED', 'FILLED', 0),
    ]);
    assert.deepEqual([ch[0].bids, ch[0].asks, ch[0].fills.length], [[4500], [], 1]);
    assert.deepEqual(parsed(b, Y).bids, [{ price: '0.4', size: '10' }, { price: '0.45', size: '2' }]);
    assert.equal(parsed(b, Y).last_trade_price, '0.45');
    assert.equal(parsed(b, N).last_trade_price, '0.55');
    assert.deepEqual(b.lastTrade(Y), { pricePips: 4500, side: 'SELL' });
    assert.equal(b.unknownOrders, 0);
  });

  test('a GTC taker that fills part rests the rest at its own price; a level touched and restored is no change', () => {
    // BUY No at 0.6 for 4 (GTC) takes the 2 left at 0.55 (a TRANSFER of No) and rests 2 at 0.6 (an outcome-0 ask at
    // 0.4); a second order adds and removes 1 at 0.3 in the same batch.
    const ch = b.apply([
      orderEv('d', 1, 'BUY', 6000, 4 * T),
      fillEv('TRANSFER', { id: 'd', outcome: 1, side: 'BUY', price: 5500 }, { id: 'b', outcome: 1, side: 'SELL', price: 5500, remaining: 0 }, 2 * T),
      statusEv('b', 'MATCHED', 'FILLED', 0),
      orderEv('e', 0, 'BUY', 3000, T),
      statusEv('e', 'CANCELED', 'USER', T),
    ]);
    assert.deepEqual([ch[0].bids.sort(), ch[0].asks], [[4500], [4000]]);
    assert.deepEqual(parsed(b, N).bids, [{ price: '0.6', size: '2' }]);
    assert.deepEqual(parsed(b, Y).asks, [{ price: '0.4', size: '2' }]);
    assert.equal(parsed(b, N).last_trade_price, '0.55');
  });

  test('a cancel removes what rests; an expiry too; a batch that touches nothing reports nothing', () => {
    b.apply([statusEv('a', 'CANCELED', 'USER', 10 * T), statusEv('d', 'CANCELED', 'EXPIRED', 2 * T)]);
    assert.deepEqual([parsed(b, Y).bids, parsed(b, Y).asks, parsed(b, N).bids, parsed(b, N).asks], [[], [], [], []]);
    assert.equal(b.restingCount, 0);
    const v = b.book(Y)!.version;
    assert.deepEqual(b.apply([{ type: 'deposit', seq: ++seq, ts: ts(), wallet: wallet(9), amount: T }]), []);
    assert.equal(b.book(Y)!.version, v);
  });

  test('a mint fills both tokens, each at its own price', () => {
    b.apply([orderEv('f', 1, 'BUY', 3500, 4 * T)]);
    const ch = b.apply([
      orderEv('g', 0, 'BUY', 6500, 4 * T),
      fillEv('MINT', { id: 'g', outcome: 0, side: 'BUY', price: 6500 }, { id: 'f', outcome: 1, side: 'BUY', price: 3500, remaining: 0 }, 4 * T),
      statusEv('f', 'MATCHED', 'FILLED', 0),
      statusEv('g', 'MATCHED', 'FILLED', 0),
    ]);
    assert.equal(ch[0].fills[0].kind, 'MINT');
    assert.deepEqual([parsed(b, Y).last_trade_price, parsed(b, N).last_trade_price], ['0.65', '0.35']);
    assert.deepEqual([parsed(b, Y).asks, parsed(b, N).bids], [[], []]);
  });

  test('a tick change is reported with the tick before; the body carries the new tick', () => {
    const ch = b.apply([marketEv(10)]);
    assert.equal(ch[0].tickBefore, 100);
    assert.equal(parsed(b, Y).tick_size, '0.001');
  });

  test('the body hash is SHA-1 of the body with hash "", and its timestamp the second of the last change', () => {
    b.apply([orderEv('h', 0, 'SELL', 7000, 3 * T)]);
    const book = b.book(Y)!;
    const body = JSON.parse(book.json);
    assert.equal(body.timestamp, String(Math.floor(ts() / 1000)));
    assert.equal(book.hash, body.hash);
    assert.equal(hashOf(book.json), body.hash);
    assert.equal(createHash('sha1').update(JSON.stringify({ ...body, hash: '' })).digest('hex'), body.hash);
    assert.equal(b.book(Y), book, 'built once per version');
  });
});

type Body = { bids: Side; asks: Side; last_trade_price: string; tick_size: string; min_order_size: string; neg_risk: boolean; market: string; asset_id: string };
const content = (json: string) => {
  const b = JSON.parse(json) as Body & { timestamp?: string; hash?: string };
  delete b.timestamp;
  delete b.hash;
  return b;
};

test('a seeded random workload through the engine: the committed books equal the shards\' books, before and after a restart', async () => {
  const env = tempStore('pm-committed-books-');
  const markets = [market(0x71), market(0x72, { tickPips: 10 })];
  const tokens = markets.flatMap((m) => m.tokenIds);
  const compare = async (e: Engine, b: CommittedBooks, when: string) => {
    for (const m of markets) await e.refreshSnapshot(m.conditionId);
    for (const t of tokens) assert.deepEqual(content(b.book(t)!.json), content(e.bookSnapshot(t)!.json), `${when}: token ${t}`);
  };
  let e: Engine | undefined;
  try {
    e = await Engine.open({ store: env.store, shards: 2, log: silentLogger });
    let b = new CommittedBooks();
    b.seed({ ...e.bookSeed(), ts: Date.now() });
    const kinds = new Set<string>();
    e!.onCommitted((events) => {
      for (const ev of events) if (ev.type === 'fill') kinds.add(ev.kind);
      b.apply(events);
    });
    for (const m of markets) e.registerMarket(m);
    const wallets = [1, 2, 3, 4].map((n) => wallet(0x900 + n));
    for (const w of wallets) {
      await e.deposit(w, 100_000 * T);
      for (const m of markets) await e.split(w, m.conditionId, 5_000 * T);
    }
    const rnd = lcg(20);
    const ids: string[] = [];
    const types = ['GTC', 'GTC', 'GTC', 'FAK', 'FOK'] as const;
    const inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < 600; i++) {
      const m = markets[rnd(2)];
      const step = m.tickPips!;
      const price = step * (1 + rnd(Math.floor(10_000 / step) - 1));
      const type = types[rnd(types.length)];
      const p = e.placeOrder(order({ wallet: wallets[rnd(4)], tokenId: m.tokenIds[rnd(2)], side: rnd(2) === 0 ? 'BUY' : 'SELL', price: type === 'GTC' ? price : Math.min(9900, Math.max(100, price - (price % 100))), size: (1 + rnd(20)) * T, type }));
      inFlight.push(p);
      if (i % 7 === 0) {
        const r = await p;
        if (r.status === 'live') ids.push(r.orderId);
      }
      if (i % 11 === 0 && ids.length > 0) await e.cancelOrders(wallets[0], [ids[rnd(ids.length)]]);
      if (i % 50 === 0) await e.afterCommit();
    }
    // Every order answered (the shards hold nothing the journal has not committed), then committed.
    await Promise.all(inFlight);
    await e.afterCommit();
    assert.equal(b.unknownOrders, 0);
    assert.deepEqual([...kinds].sort(), ['MERGE', 'MINT', 'TRANSFER']);
    assert.ok(b.restingCount > 20, `only ${b.restingCount} resting`);
    await compare(e, b, 'after the workload');
    const before = tokens.map((t) => content(b.book(t)!.json));
    await e.close();
    e = undefined;

    const e2 = await Engine.open({ store: env.store, shards: 2, log: silentLogger });
    e = e2;
    b = new CommittedBooks();
    b.seed({ ...e2.bookSeed(), ts: Date.now() });
    e2.onCommitted((events) => b.apply(events));
    await until(() => tokens.every((t) => e2.bookSnapshot(t) !== undefined));
    assert.deepEqual(tokens.map((t) => content(b.book(t)!.json)), before, 'the seed equals the state before the restart');
    await compare(e2, b, 'after the restart');
  } finally {
    // Closed on a failure too: its shard threads would keep the test process alive.
    await e?.close();
    await env.cleanup();
  }
});
