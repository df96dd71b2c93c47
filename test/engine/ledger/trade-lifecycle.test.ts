/**
 * The trade lifecycle (src/engine/ledger/trade-lifecycle.ts) through the engine, with real shards and LMDB, on a
 * ManualClock whose timers the engine uses: a trade goes MATCHED -> MINED -> CONFIRMED as the clock
 * passes each delay; what it delivered cannot be spent before MINED (the platform's "not enough balance /
 * allowance") and can after; RETRYING trades end MINED or FAILED as the seed decides, and a FAILED one
 * leaves both wallets (and the fee wallet, and the token supply of a MINT) exactly as before the trade;
 * the trades table, the journal replay and the engine agree at every step, and the ledger invariants and
 * USDC conservation hold throughout. A restart between two moves recovers the same state and carries on.
 * With the default settings nothing is deferred. The crash variant (SIGKILL) is trade-lifecycle-crash.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Errors } from '../../../src/domain/errors.ts';
import { FEE_WALLET, type FillEvent, type JournalEvent, type TradeEvent } from '../../../src/domain/events.ts';
import { seededUnit } from '../../../src/domain/seeded.ts';
import { Engine, type TradeSettlement } from '../../../src/engine/engine.ts';
import { readFill } from '../../../src/journal/codecs/fill-codec.ts';
import { tradeIdSeq } from '../../../src/journal/codecs/trade-ids.ts';
import { metaKeys } from '../../../src/journal/keys.ts';
import { readJournal, verifyStore } from '../../../src/journal/recovery.ts';
import { tradeStateOf } from '../../../src/journal/trades.ts';
import { ManualClock } from '../../../src/runtime/clock.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { T, invariants, market, order, tempStore, wallet } from '../../fixtures/engine-harness.ts';

const SETTLE: TradeSettlement = { minedDelayMs: 5_000, confirmedDelayMs: 20_000, retryingShare: 0, retryDelayMs: 8_000, failedShare: 0, seed: 7 };

interface Harness {
  engine: Engine;
  clock: ManualClock;
  env: ReturnType<typeof tempStore>;
  events: JournalEvent[];
  reopen(settings?: TradeSettlement): Promise<void>;
  close(): Promise<void>;
}

async function harness(settings: TradeSettlement | undefined, over: Parameters<typeof market>[1] = {}): Promise<Harness & { m: ReturnType<typeof market> }> {
  const env = tempStore('pm-lifecycle-');
  const clock = new ManualClock(Date.UTC(2026, 3, 1));
  const events: JournalEvent[] = [];
  const open = (s: TradeSettlement | undefined) =>
    Engine.open({ store: env.store, shards: 1, log: silentLogger, now: () => clock.now(), timers: clock.timers, trades: s }).then((e) => {
      e.onCommitted((evs) => events.push(...evs));
      return e;
    });
  const h = {
    engine: await open(settings),
    clock,
    env,
    events,
    m: market(1, over),
    async reopen(s = settings) {
      await h.engine.close();
      h.engine = await open(s);
    },
    async close() {
      await h.engine.close();
      await env.cleanup();
    },
  };
  h.engine.registerMarket(h.m);
  return h;
}

/** Moves the clock and waits for what the moves journaled to be durable. */
async function pass(h: Harness, ms: number): Promise<void> {
  h.clock.advance(ms);
  assert.deepEqual(await h.engine.afterCommit(), { ok: true, code: 0 });
}

function tokens(e: Engine, w: string, tokenId: string) {
  const t = e.balances(w).tokens.find((x) => x.tokenId === tokenId);
  return { available: t?.available ?? 0, reserved: t?.reserved ?? 0, pending: e.unsettled(w).tokens.find((x) => x.tokenId === tokenId)?.pending ?? 0 };
}

function usdc(e: Engine, w: string) {
  return { ...e.balances(w).usdc, pending: e.unsettled(w).usdc };
}

/** The ledger holds, and the store's tables agree with its journal and with the engine's own state. */
function agree(h: Harness): void {
  assert.deepEqual(invariants(h.engine), []);
  assert.equal(verifyStore(h.env.store).hash, h.engine.stateHash(), 'tables, journal replay and engine agree');
}

function statusOf(h: Harness, tradeId: string): string {
  const seq = tradeIdSeq(h.env.store.meta.get(metaKeys.tradeIdPrefix) as string, tradeId)!;
  return tradeStateOf(h.env.store, readFill(h.env.store.fills, seq)!).status;
}

const tradeMoves = (h: Harness) => h.events.filter((e): e is TradeEvent => e.type === 'trade').map((e) => e.status);

test('MATCHED -> MINED -> CONFIRMED as the clock passes each delay; proceeds are spendable from MINED on', async () => {
  const h = await harness(SETTLE);
  try {
    const { engine, m } = h;
    const seller = wallet(1);
    const buyer = wallet(2);
    await engine.deposit(seller, 10 * T);
    await engine.split(seller, m.conditionId, 10 * T);
    await engine.deposit(buyer, 10 * T);
    const ask = await engine.placeOrder(order({ wallet: seller, tokenId: m.tokenIds[0], side: 'SELL', price: 4000, size: 10 * T }));
    const bid = await engine.placeOrder(order({ wallet: buyer, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 10 * T }));
    assert.equal(ask.status, 'live');
    assert.equal(bid.status, 'matched');
    const [tradeId] = bid.tradeIds;
    const fill = h.events.find((e): e is FillEvent => e.type === 'fill')!;
    assert.equal(fill.deferred, true);
    assert.equal(statusOf(h, tradeId), 'MATCHED');
    assert.deepEqual(tokens(engine, buyer, m.tokenIds[0]), { available: 0, reserved: 0, pending: 10 * T });
    assert.deepEqual(usdc(engine, seller), { available: 0, reserved: 0, pending: 4 * T });
    agree(h);

    // Before MINED the buyer cannot sell what it bought, nor the seller spend what it got: the platform's message.
    const early = await engine.placeOrder(order({ wallet: buyer, tokenId: m.tokenIds[0], side: 'SELL', price: 6000, size: 10 * T }));
    assert.deepEqual([early.ok, early.code], [false, Errors.PM_ERR_BALANCE.result]);
    assert.equal(Errors.PM_ERR_BALANCE.message, 'not enough balance / allowance');
    assert.deepEqual(await engine.withdraw(seller, 1 * T), { ok: false, code: Errors.PM_ERR_BALANCE.result });

    await pass(h, 4_999);
    assert.equal(statusOf(h, tradeId), 'MATCHED', 'not before its delay');
    await pass(h, 1);
    assert.equal(statusOf(h, tradeId), 'MINED');
    assert.deepEqual(tokens(engine, buyer, m.tokenIds[0]), { available: 10 * T, reserved: 0, pending: 0 });
    assert.deepEqual(usdc(engine, seller), { available: 4 * T, reserved: 0, pending: 0 });
    agree(h);
    const late = await engine.placeOrder(order({ wallet: buyer, tokenId: m.tokenIds[0], side: 'SELL', price: 6000, size: 10 * T }));
    assert.deepEqual([late.ok, late.status], [true, 'live']);
    assert.deepEqual(await engine.withdraw(seller, 1 * T), { ok: true, code: 0 });

    await pass(h, 19_999);
    assert.equal(statusOf(h, tradeId), 'MINED');
    await pass(h, 1);
    assert.equal(statusOf(h, tradeId), 'CONFIRMED');
    assert.deepEqual(tradeMoves(h), ['MINED', 'CONFIRMED']);
    const moves = h.events.filter((e): e is TradeEvent => e.type === 'trade');
    assert.deepEqual(
      moves.map((e) => [e.tradeId, e.fillSeq, e.ts - fill.ts, e.takerWallet, e.makerWallet, e.conditionId]),
      [
        [tradeId, fill.seq, 5_000, buyer, seller, m.conditionId],
        [tradeId, fill.seq, 25_000, buyer, seller, m.conditionId],
      ],
    );
    agree(h);
    assert.deepEqual(engine.tradeSettlement().settling, { MATCHED: 0, RETRYING: 0, MINED: 0 });
  } finally {
    await h.close();
  }
});

test('RETRYING then FAILED reverses the trade exactly: both wallets, the fee wallet and the token supply', async () => {
  const h = await harness({ ...SETTLE, retryingShare: 1, failedShare: 1 }, { takerFeeBps: 200, makerFeeBps: 100 });
  try {
    const { engine, m } = h;
    const [yes, no] = m.tokenIds;
    const seller = wallet(1);
    const buyer = wallet(2);
    const minter = wallet(3);
    await engine.deposit(seller, 10 * T);
    await engine.split(seller, m.conditionId, 10 * T);
    await engine.deposit(buyer, 20 * T);
    await engine.deposit(minter, 20 * T);
    const before = () =>
      [seller, buyer, minter, FEE_WALLET].map((w) => ({ usdc: usdc(engine, w), yes: tokens(engine, w, yes), no: tokens(engine, w, no) }));
    // A resting ask and a resting NO bid, then a YES bid that takes the ask (TRANSFER) and mints against the NO bid (MINT).
    await engine.placeOrder(order({ wallet: seller, tokenId: yes, side: 'SELL', price: 4000, size: 5 * T }));
    await engine.placeOrder(order({ wallet: minter, tokenId: no, side: 'BUY', price: 5000, size: 5 * T }));
    const start = before();
    const supply = engine.usdcTotals();
    const bid = await engine.placeOrder(order({ wallet: buyer, tokenId: yes, side: 'BUY', price: 5000, size: 10 * T, type: 'FAK' }));
    assert.equal(bid.tradeIds.length, 2);
    const fills = h.events.filter((e): e is FillEvent => e.type === 'fill');
    assert.deepEqual(fills.map((f) => f.kind).sort(), ['MINT', 'TRANSFER']);
    assert.ok(fills.every((f) => f.takerFee > 0 && f.makerFee > 0), 'both parties pay fees');
    assert.ok(engine.usdcTotals().collateral > supply.collateral, 'the MINT made token pairs');
    agree(h);

    await pass(h, 5_000);
    assert.deepEqual(bid.tradeIds.map((id) => statusOf(h, id)), ['RETRYING', 'RETRYING']);
    assert.deepEqual(tokens(engine, buyer, yes).pending, 10 * T, 'still not spendable while RETRYING');
    agree(h);
    await pass(h, 8_000);
    assert.deepEqual(bid.tradeIds.map((id) => statusOf(h, id)), ['FAILED', 'FAILED']);
    // The resting orders stay as the matching left them (filled); what changed hands went back, available.
    const after = before();
    const held = (x: ReturnType<typeof before>[number]) => ({
      usdc: x.usdc.available + x.usdc.reserved + x.usdc.pending,
      yes: x.yes.available + x.yes.reserved + x.yes.pending,
      no: x.no.available + x.no.reserved + x.no.pending,
    });
    assert.deepEqual(after.map(held), start.map(held), 'every wallet holds exactly what it held before the trades');
    assert.deepEqual(after[1], start[1], 'the buyer (whose FAK left nothing resting) is back to the unit');
    assert.deepEqual(engine.usdcTotals(), supply, 'the MINT\'s pairs are burned: collateral as before');
    assert.deepEqual(tradeMoves(h), ['RETRYING', 'RETRYING', 'FAILED', 'FAILED']);
    agree(h);
    assert.deepEqual(engine.tradeSettlement().settling, { MATCHED: 0, RETRYING: 0, MINED: 0 });
  } finally {
    await h.close();
  }
});

test('the seed decides which trades retry and which of those fail; RETRYING ones that do not fail are MINED', async () => {
  const settings = { ...SETTLE, retryingShare: 0.5, failedShare: 0.5, seed: 11 };
  const h = await harness(settings);
  try {
    const { engine, m } = h;
    const seller = wallet(1);
    const buyer = wallet(2);
    await engine.deposit(seller, 100 * T);
    await engine.split(seller, m.conditionId, 100 * T);
    await engine.deposit(buyer, 100 * T);
    await engine.placeOrder(order({ wallet: seller, tokenId: m.tokenIds[0], side: 'SELL', price: 4000, size: 40 * T }));
    for (let i = 0; i < 40; i++) await engine.placeOrder(order({ wallet: buyer, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 1 * T }));
    const fills = h.events.filter((e): e is FillEvent => e.type === 'fill');
    assert.equal(fills.length, 40);
    await pass(h, 5_000);
    await pass(h, 8_000);
    await pass(h, 20_000);
    const expected = fills.map((f) => {
      if (seededUnit(11, 1, f.seq) >= 0.5) return 'CONFIRMED';
      return seededUnit(11, 2, f.seq) < 0.5 ? 'FAILED' : 'CONFIRMED';
    });
    assert.deepEqual(fills.map((f) => statusOf(h, f.tradeId)), expected);
    for (const s of ['FAILED', 'CONFIRMED'] as const) assert.ok(expected.includes(s), `some trades end ${s}`);
    const moves = tradeMoves(h);
    assert.equal(moves.filter((s) => s === 'RETRYING').length, fills.filter((f) => seededUnit(11, 1, f.seq) < 0.5).length);
    const failed = expected.filter((s) => s === 'FAILED').length;
    assert.deepEqual(tokens(engine, buyer, m.tokenIds[0]), { available: (40 - failed) * T, reserved: 0, pending: 0 });
    agree(h);
  } finally {
    await h.close();
  }
});

test('a restart between two moves recovers the same state, then the next move comes on time', async () => {
  const h = await harness({ ...SETTLE, retryingShare: 1, failedShare: 0 });
  try {
    const seller = wallet(1);
    const buyer = wallet(2);
    await h.engine.deposit(seller, 10 * T);
    await h.engine.split(seller, h.m.conditionId, 10 * T);
    await h.engine.deposit(buyer, 10 * T);
    await h.engine.placeOrder(order({ wallet: seller, tokenId: h.m.tokenIds[0], side: 'SELL', price: 4000, size: 10 * T }));
    const bid = await h.engine.placeOrder(order({ wallet: buyer, tokenId: h.m.tokenIds[0], side: 'BUY', price: 4000, size: 4 * T }));
    const [tradeId] = bid.tradeIds;
    const snapshot = () => ({ hash: h.engine.stateHash(), buyer: tokens(h.engine, buyer, h.m.tokenIds[0]), seller: usdc(h.engine, seller), settling: h.engine.tradeSettlement().settling });

    // Restart while MATCHED.
    let was = snapshot();
    await h.reopen();
    assert.deepEqual(snapshot(), was, 'MATCHED: the same state after the restart');
    agree(h);
    // The clock passed the delay while the engine was down: the move comes at once when the engine reopens.
    await h.engine.close();
    h.clock.set(h.clock.now() + 6_000);
    await h.reopen();
    assert.equal(statusOf(h, tradeId), 'MATCHED', 'nothing moves during Engine.open');
    await pass(h, 0);
    assert.equal(statusOf(h, tradeId), 'RETRYING');

    // Restart while RETRYING: the move to MINED comes 8 s after the RETRYING move, not 8 s after the restart.
    was = snapshot();
    await pass(h, 3_000);
    await h.reopen();
    assert.deepEqual(snapshot(), was, 'RETRYING: the same state after the restart');
    agree(h);
    await pass(h, 4_999);
    assert.equal(statusOf(h, tradeId), 'RETRYING');
    await pass(h, 1);
    assert.equal(statusOf(h, tradeId), 'MINED');
    assert.deepEqual(tokens(h.engine, buyer, h.m.tokenIds[0]), { available: 4 * T, reserved: 0, pending: 0 });

    // Restart while MINED, then CONFIRMED on time.
    was = snapshot();
    await h.reopen();
    assert.deepEqual(snapshot(), was, 'MINED: the same state after the restart');
    agree(h);
    await pass(h, 20_000);
    assert.equal(statusOf(h, tradeId), 'CONFIRMED');
    agree(h);
    const journal = [...readJournal(h.env.store)].filter((e): e is TradeEvent => e.type === 'trade').map((e) => e.status);
    assert.deepEqual(journal, ['RETRYING', 'MINED', 'CONFIRMED']);
  } finally {
    await h.close();
  }
});

test('default settings defer nothing: fills are not deferred, spendable at once, and no trade event is journaled', async () => {
  const h = await harness(undefined);
  try {
    const { engine, m } = h;
    const seller = wallet(1);
    const buyer = wallet(2);
    await engine.deposit(seller, 10 * T);
    await engine.split(seller, m.conditionId, 10 * T);
    await engine.deposit(buyer, 10 * T);
    await engine.placeOrder(order({ wallet: seller, tokenId: m.tokenIds[0], side: 'SELL', price: 4000, size: 10 * T }));
    const bid = await engine.placeOrder(order({ wallet: buyer, tokenId: m.tokenIds[0], side: 'BUY', price: 4000, size: 10 * T }));
    const fill = h.events.find((e): e is FillEvent => e.type === 'fill')!;
    assert.equal('deferred' in fill, false);
    assert.equal(statusOf(h, bid.tradeIds[0]), 'CONFIRMED');
    assert.deepEqual(tokens(engine, buyer, m.tokenIds[0]), { available: 10 * T, reserved: 0, pending: 0 });
    assert.equal(h.clock.pendingTimers, 0, 'no timer armed');
    assert.equal(h.env.store.trades.getCount(), 0, 'no trades-table row');
    assert.deepEqual(tradeMoves(h), []);
    agree(h);
  } finally {
    await h.close();
  }
});

test('settings out of range are refused when the engine opens', async () => {
  const env = tempStore('pm-lifecycle-');
  try {
    for (const bad of [{ retryingShare: 1.5 }, { failedShare: -0.1 }, { minedDelayMs: -1 }, { confirmedDelayMs: 0.5 }]) {
      await assert.rejects(Engine.open({ store: env.store, shards: 1, log: silentLogger, trades: { ...SETTLE, ...bad } }), /trade settlement: \w+ must/);
    }
  } finally {
    await env.cleanup();
  }
});
