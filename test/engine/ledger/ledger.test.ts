/**
 * Ledger cases, table-driven: R1 reserve, R2 settle per fill kind with fees, release, wallet operations,
 * never negative, and the collateral identity after every step (checkLedger); deferred settlement per fill
 * kind: proceeds pending until landed, a reversal that restores both wallets, the fees and the supply.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FillEvent } from '../../../src/domain/events.ts';
import { buyNeed, feeOf } from '../../../src/engine/ledger/fees.ts';
import { FEE_WALLET, Ledger, LedgerCode, type ReservationView } from '../../../src/engine/ledger/ledger.ts';

const T = 1_000_000;
const CID = '0xmarket';
const YES = 'yes-token';
const NO = 'no-token';

interface Party {
  wallet: string;
  side: 'BUY' | 'SELL';
  tokenId: string;
  usdc: number;
  fee: number;
}

/** A small harness: the ledger plus the reservations the engine would hold for open orders. */
function setup() {
  const l = new Ledger();
  l.addMarket(CID, [YES, NO]);
  const res = new Map<string, ReservationView>();
  const check = () => {
    const problems = l.checkLedger(res.values());
    assert.deepEqual(problems, []);
  };
  return { l, res, check };
}

function held(l: Ledger, wallet: string) {
  const w = l.wallets.get(wallet);
  if (w === undefined) return { usdc: [0, 0], yes: [0, 0], no: [0, 0] };
  const tok = (t: string) => {
    const b = w.tokens.get(t);
    return b === undefined ? [0, 0] : [b.available, b.reserved];
  };
  return { usdc: [w.usdcAvailable, w.usdcReserved], yes: tok(YES), no: tok(NO) };
}

describe('fee and reservation math', () => {
  const cases = [
    { name: 'zero bps', bps: 0, price: 5000, size: 10 * T, fee: 0 },
    { name: '100 bps at 0.50', bps: 100, price: 5000, size: 10 * T, fee: 50_000 },
    { name: 'symmetric: 0.30 and 0.70 pay the same', bps: 100, price: 7000, size: 10 * T, fee: 30_000 },
    { name: 'floor of a fractional fee', bps: 1, price: 1, size: 10_000, fee: 0 },
    { name: 'large size does not overflow', bps: 10_000, price: 5000, size: 9e15, fee: 4.5e15 },
  ];
  for (const c of cases) test(c.name, () => assert.equal(feeOf(c.bps, c.price, c.size), c.fee));

  test('resting BUY reserves notional plus the fee at min(p, 0.5)', () => {
    assert.equal(buyNeed(true, 4000, 10 * T, 0, 100), 4 * T + feeOf(100, 4000, 10 * T));
    assert.equal(buyNeed(true, 8000, 10 * T, 0, 100), 8 * T + feeOf(100, 5000, 10 * T));
  });

  test('FOK/FAK BUY reserves its budget plus the fee bound', () => {
    assert.equal(buyNeed(false, 8000, 10 * T, 7 * T, 0), 7 * T);
    assert.equal(buyNeed(false, 8000, 10 * T, 7 * T, 100), 7 * T + 50_000);
    assert.equal(buyNeed(false, 2000, 10 * T, 2 * T, 100), 2 * T + 20_000);
  });

  test('a partial fill at any better price never leaves a reservation short', () => {
    for (const bps of [0, 1, 37, 100, 2500]) {
      for (const p of [100, 3300, 5000, 6700, 9900]) {
        const size = 37 * 10_000;
        let reserved = buyNeed(true, p, size, 0, bps);
        let remaining = size;
        for (const [q, P] of [[10_000, p], [70_000, Math.max(1, p - 100)], [20_000, p]] as const) {
          const paid = (q / 10_000) * P + feeOf(bps, P, q);
          reserved -= paid;
          remaining -= q;
          assert.ok(reserved >= buyNeed(true, p, remaining, 0, bps), `bps ${bps} p ${p}`);
          reserved = buyNeed(true, p, remaining, 0, bps);
        }
      }
    }
  });
});

describe('wallet operations', () => {
  const cases: Array<{ name: string; run: (l: Ledger) => number; code: number; a: ReturnType<typeof held> }> = [
    { name: 'deposit', run: (l) => l.deposit('a', 5 * T), code: LedgerCode.OK, a: { usdc: [5 * T, 0], yes: [0, 0], no: [0, 0] } },
    { name: 'deposit of zero is refused', run: (l) => l.deposit('a', 0), code: LedgerCode.AMOUNT, a: { usdc: [0, 0], yes: [0, 0], no: [0, 0] } },
    { name: 'deposit of a fraction of a unit is refused', run: (l) => l.deposit('a', 1.5), code: LedgerCode.AMOUNT, a: { usdc: [0, 0], yes: [0, 0], no: [0, 0] } },
    { name: 'withdraw within balance', run: (l) => (l.deposit('a', 5 * T), l.withdraw('a', 2 * T)), code: LedgerCode.OK, a: { usdc: [3 * T, 0], yes: [0, 0], no: [0, 0] } },
    { name: 'withdraw beyond balance never goes negative', run: (l) => (l.deposit('a', T), l.withdraw('a', 2 * T)), code: LedgerCode.BALANCE, a: { usdc: [T, 0], yes: [0, 0], no: [0, 0] } },
    { name: 'split', run: (l) => (l.deposit('a', 5 * T), l.split('a', CID, 2 * T)), code: LedgerCode.OK, a: { usdc: [3 * T, 0], yes: [2 * T, 0], no: [2 * T, 0] } },
    { name: 'split beyond balance', run: (l) => (l.deposit('a', T), l.split('a', CID, 2 * T)), code: LedgerCode.BALANCE, a: { usdc: [T, 0], yes: [0, 0], no: [0, 0] } },
    { name: 'split on an unknown market', run: (l) => (l.deposit('a', T), l.split('a', 'nope', T)), code: LedgerCode.UNKNOWN_MARKET, a: { usdc: [T, 0], yes: [0, 0], no: [0, 0] } },
    { name: 'merge', run: (l) => (l.deposit('a', 5 * T), l.split('a', CID, 2 * T), l.merge('a', CID, T)), code: LedgerCode.OK, a: { usdc: [4 * T, 0], yes: [T, 0], no: [T, 0] } },
    { name: 'merge beyond one side', run: (l) => (l.deposit('a', 5 * T), l.split('a', CID, T), l.merge('a', CID, 2 * T)), code: LedgerCode.BALANCE, a: { usdc: [4 * T, 0], yes: [T, 0], no: [T, 0] } },
    { name: 'redeem before resolution', run: (l) => (l.deposit('a', T), l.split('a', CID, T), l.redeem('a', CID).code), code: LedgerCode.NOT_RESOLVED, a: { usdc: [0, 0], yes: [T, 0], no: [T, 0] } },
    {
      name: 'resolve YES then redeem pays the winner 1 per token, the loser 0',
      run: (l) => (l.deposit('a', 3 * T), l.split('a', CID, 2 * T), l.resolve(CID, 0), l.redeem('a', CID).code),
      code: LedgerCode.OK,
      a: { usdc: [3 * T, 0], yes: [0, 0], no: [0, 0] },
    },
    { name: 'split after resolution is refused', run: (l) => (l.deposit('a', T), l.resolve(CID, 1), l.split('a', CID, T)), code: LedgerCode.RESOLVED, a: { usdc: [T, 0], yes: [0, 0], no: [0, 0] } },
    { name: 'resolving twice is refused', run: (l) => (l.resolve(CID, 1), l.resolve(CID, 0)), code: LedgerCode.RESOLVED, a: { usdc: [0, 0], yes: [0, 0], no: [0, 0] } },
    // An admin credit: complete sets minted against a deposit, one outcome to the wallet, the other to the house.
    { name: 'credit of YES', run: (l) => l.credit('a', 'house', CID, 0, 3 * T), code: LedgerCode.OK, a: { usdc: [0, 0], yes: [3 * T, 0], no: [0, 0] } },
    { name: 'credit of NO', run: (l) => l.credit('a', 'house', CID, 1, T), code: LedgerCode.OK, a: { usdc: [0, 0], yes: [0, 0], no: [T, 0] } },
    { name: 'credit of nothing is refused', run: (l) => l.credit('a', 'house', CID, 0, 0), code: LedgerCode.AMOUNT, a: { usdc: [0, 0], yes: [0, 0], no: [0, 0] } },
    { name: 'credit in a resolved market is refused', run: (l) => (l.resolve(CID, 0), l.credit('a', 'house', CID, 0, T)), code: LedgerCode.RESOLVED, a: { usdc: [0, 0], yes: [0, 0], no: [0, 0] } },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { l, check } = setup();
      assert.equal(c.run(l), c.code);
      assert.deepEqual(held(l, 'a'), c.a);
      check();
    });
  }

  test('redeem after a NO resolution pays NO holders and burns YES', () => {
    const { l, check } = setup();
    l.deposit('a', 4 * T);
    l.split('a', CID, 4 * T);
    const w = l.wallets.get('a')!;
    l.deposit('b', T);
    l.split('b', CID, T);
    assert.equal(l.resolve(CID, 1), LedgerCode.OK);
    const r = l.redeem('a', CID);
    assert.deepEqual(r, { code: LedgerCode.OK, payout: 4 * T, burned: [4 * T, 4 * T] });
    assert.equal(w.usdcAvailable, 4 * T);
    check();
    const again = l.redeem('a', CID);
    assert.deepEqual(again, { code: LedgerCode.OK, payout: 0, burned: [0, 0] });
    check();
  });
});

/**
 * One fill between a taker and a maker, each with its reservation, as the engine runs it:
 * reserve (R1), settle both parties (R2), mint/burn for the kind, release what is left.
 */
interface FillCase {
  name: string;
  kind: 'TRANSFER' | 'MINT' | 'MERGE';
  size: number;
  taker: Party;
  maker: Party;
  expectTaker: ReturnType<typeof held>;
  expectMaker: ReturnType<typeof held>;
  fees: number;
  collateral: number;
}

// Wallets a (taker) and b (maker) each start with 10 USDC and 10 YES + 10 NO (20 deposited, 10 split).
const fillCases: FillCase[] = [
  {
    name: 'TRANSFER: BUY YES 10 @0.40 from a SELL YES, no fees',
    kind: 'TRANSFER',
    size: 10 * T,
    taker: { wallet: 'a', side: 'BUY', tokenId: YES, usdc: 4 * T, fee: 0 },
    maker: { wallet: 'b', side: 'SELL', tokenId: YES, usdc: 4 * T, fee: 0 },
    expectTaker: { usdc: [6 * T, 0], yes: [20 * T, 0], no: [10 * T, 0] },
    expectMaker: { usdc: [14 * T, 0], yes: [0, 0], no: [10 * T, 0] },
    fees: 0,
    collateral: 20 * T,
  },
  {
    name: 'TRANSFER with fees: the BUY pays on top, the SELL from its proceeds',
    kind: 'TRANSFER',
    size: 10 * T,
    taker: { wallet: 'a', side: 'BUY', tokenId: YES, usdc: 4 * T, fee: feeOf(200, 4000, 10 * T) },
    maker: { wallet: 'b', side: 'SELL', tokenId: YES, usdc: 4 * T, fee: feeOf(100, 4000, 10 * T) },
    expectTaker: { usdc: [6 * T - 80_000, 0], yes: [20 * T, 0], no: [10 * T, 0] },
    expectMaker: { usdc: [14 * T - 40_000, 0], yes: [0, 0], no: [10 * T, 0] },
    fees: 120_000,
    collateral: 20 * T,
  },
  {
    name: 'MINT: BUY YES @0.40 x BUY NO @0.60 creates 10 pairs',
    kind: 'MINT',
    size: 10 * T,
    taker: { wallet: 'a', side: 'BUY', tokenId: YES, usdc: 4 * T, fee: feeOf(100, 4000, 10 * T) },
    maker: { wallet: 'b', side: 'BUY', tokenId: NO, usdc: 6 * T, fee: 0 },
    expectTaker: { usdc: [6 * T - 40_000, 0], yes: [20 * T, 0], no: [10 * T, 0] },
    expectMaker: { usdc: [4 * T, 0], yes: [10 * T, 0], no: [20 * T, 0] },
    fees: 40_000,
    collateral: 30 * T,
  },
  {
    name: 'MERGE: SELL NO @0.55 x SELL YES @0.45 burns 10 pairs',
    kind: 'MERGE',
    size: 10 * T,
    taker: { wallet: 'a', side: 'SELL', tokenId: NO, usdc: 5_500_000, fee: feeOf(100, 5500, 10 * T) },
    maker: { wallet: 'b', side: 'SELL', tokenId: YES, usdc: 4_500_000, fee: 0 },
    expectTaker: { usdc: [15_500_000 - 45_000, 0], yes: [10 * T, 0], no: [0, 0] },
    expectMaker: { usdc: [14_500_000, 0], yes: [0, 0], no: [10 * T, 0] },
    fees: 45_000,
    collateral: 10 * T,
  },
];

describe('R1 reserve, R2 settle, release per fill kind', () => {
  for (const c of fillCases) {
    test(c.name, () => {
      const { l, res, check } = setup();
      for (const w of ['a', 'b']) {
        l.deposit(w, 20 * T);
        l.split(w, CID, 10 * T);
      }
      check();
      const parties = [c.taker, c.maker];
      const reservation = (p: Party) => (p.side === 'BUY' ? p.usdc + p.fee : c.size);
      for (const [i, p] of parties.entries()) {
        const w = l.wallet(p.wallet);
        const need = reservation(p);
        const ok = p.side === 'BUY' ? l.reserveUsdc(w, need) : l.reserveTokens(w, p.tokenId, need);
        assert.ok(ok, `R1 for party ${i}`);
        res.set(String(i), { orderId: String(i), wallet: p.wallet, tokenId: p.side === 'SELL' ? p.tokenId : undefined, usdc: p.side === 'BUY' ? need : 0, tokens: p.side === 'SELL' ? need : 0, need });
      }
      check();
      for (const p of parties) {
        const w = l.wallet(p.wallet);
        if (p.side === 'BUY') l.settleBuy(w, p.tokenId, c.size, p.usdc, p.fee);
        else l.settleSell(w, p.tokenId, c.size, p.usdc, p.fee);
      }
      if (c.kind === 'MINT') l.mint(CID, c.size);
      if (c.kind === 'MERGE') l.burn(CID, c.size);
      res.clear();
      check();
      assert.deepEqual(held(l, c.taker.wallet), c.expectTaker);
      assert.deepEqual(held(l, c.maker.wallet), c.expectMaker);
      assert.equal(l.wallets.get(FEE_WALLET)?.usdcAvailable ?? 0, c.fees);
      assert.equal(l.totalUsdc().collateral, c.collateral);
    });
  }

  test('release returns exactly what was reserved and refuses more', () => {
    const { l, res, check } = setup();
    l.deposit('a', 5 * T);
    const w = l.wallet('a');
    assert.ok(l.reserveUsdc(w, 3 * T));
    res.set('o', { orderId: 'o', wallet: 'a', tokenId: undefined, usdc: 3 * T, tokens: 0, need: 3 * T });
    check();
    assert.equal(l.reserveUsdc(w, 3 * T), false, 'only 2 available');
    l.releaseUsdc(w, T);
    res.set('o', { orderId: 'o', wallet: 'a', tokenId: undefined, usdc: 2 * T, tokens: 0, need: 2 * T });
    check();
    assert.throws(() => l.releaseUsdc(w, 3 * T));
    assert.deepEqual(held(l, 'a').usdc, [3 * T, 2 * T]);
  });

  test('settling more than reserved throws instead of going negative', () => {
    const { l } = setup();
    l.deposit('a', 5 * T);
    const w = l.wallet('a');
    l.reserveUsdc(w, T);
    assert.throws(() => l.settleBuy(w, YES, 10 * T, T, 1));
    assert.throws(() => l.settleSell(w, YES, T, T, 0));
  });

  test('checkLedger reports a reservation that differs from what the order can spend', () => {
    const { l } = setup();
    l.deposit('a', 5 * T);
    l.reserveUsdc(l.wallet('a'), 2 * T);
    const problems = l.checkLedger([{ orderId: 'o', wallet: 'a', tokenId: undefined, usdc: 2 * T, tokens: 0, need: T }]);
    assert.equal(problems.length, 1);
    assert.match(problems[0], /reserves 2000000 but can spend 1000000/);
  });

  test('checkLedger reports USDC that appeared from nowhere', () => {
    const { l } = setup();
    l.deposit('a', 5 * T);
    l.wallet('a').usdcAvailable += 1;
    assert.ok(l.checkLedger([]).some((p) => p.startsWith('USDC not conserved')));
  });
});

/** The fill event of a case (what landProceeds and reverseFill read). */
function fillOf(c: FillCase): FillEvent {
  return {
    type: 'fill', seq: 1, ts: 0, tradeId: '', txHash: '', conditionId: CID, kind: c.kind, size: c.size,
    takerOrderId: 't', makerOrderId: 'm', takerWallet: c.taker.wallet, makerWallet: c.maker.wallet, takerOwner: '', makerOwner: '',
    takerTokenId: c.taker.tokenId, makerTokenId: c.maker.tokenId, takerOutcome: c.taker.tokenId === YES ? 0 : 1, makerOutcome: c.maker.tokenId === YES ? 0 : 1,
    takerSide: c.taker.side, makerSide: c.maker.side, takerPricePips: 0, makerPricePips: 0, takerUsdc: c.taker.usdc, makerUsdc: c.maker.usdc,
    takerFee: c.taker.fee, makerFee: c.maker.fee, makerRemaining: 0, builder: '', deferred: true,
  };
}

/** Every balance of a wallet: [available, reserved, pending] of USDC and both tokens. */
function full(l: Ledger, wallet: string) {
  const w = l.wallets.get(wallet);
  const tok = (t: string) => {
    const b = w?.tokens.get(t);
    return [b?.available ?? 0, b?.reserved ?? 0, b?.pending ?? 0];
  };
  return { usdc: [w?.usdcAvailable ?? 0, w?.usdcReserved ?? 0, w?.usdcPending ?? 0], yes: tok(YES), no: tok(NO) };
}

describe('deferred settlement per fill kind', () => {
  for (const c of fillCases) {
    test(c.name, () => {
      const { l } = setup();
      for (const w of ['a', 'b']) {
        l.deposit(w, 20 * T);
        l.split(w, CID, 10 * T);
      }
      const start = ['a', 'b', FEE_WALLET].map((w) => full(l, w));
      for (const p of [c.taker, c.maker]) {
        const w = l.wallet(p.wallet);
        if (p.side === 'BUY') l.reserveUsdc(w, p.usdc + p.fee);
        else l.reserveTokens(w, p.tokenId, c.size);
      }
      for (const p of [c.taker, c.maker]) {
        const w = l.wallet(p.wallet);
        if (p.side === 'BUY') l.settleBuy(w, p.tokenId, c.size, p.usdc, p.fee, true);
        else l.settleSell(w, p.tokenId, c.size, p.usdc, p.fee, true);
      }
      if (c.kind === 'MINT') l.mint(CID, c.size);
      if (c.kind === 'MERGE') l.burn(CID, c.size);
      const f = fillOf(c);
      assert.deepEqual(l.checkLedger([], [f]), [], 'pending is what the unsettled fill delivered');
      assert.ok(l.checkLedger([], []).some((p) => /pending but its unsettled trades delivered 0/.test(p)), 'pending without a fill is reported');
      assert.equal(l.wallets.get(FEE_WALLET)?.usdcAvailable ?? 0, 0, 'fees wait too');
      const matched = ['a', 'b', FEE_WALLET].map((w) => full(l, w));

      // Landed: the same balances as an immediate settlement.
      l.landProceeds(f);
      assert.deepEqual(l.checkLedger([], []), []);
      const flat = (x: ReturnType<typeof full>) => ({ usdc: x.usdc.slice(0, 2), yes: x.yes.slice(0, 2), no: x.no.slice(0, 2) });
      assert.deepEqual(flat(full(l, c.taker.wallet)), c.expectTaker);
      assert.deepEqual(flat(full(l, c.maker.wallet)), c.expectMaker);
      assert.equal(l.wallets.get(FEE_WALLET)?.usdcAvailable ?? 0, c.fees);

      // Reversed instead (from the MATCHED state): every wallet as before the trade, supply too.
      const r = new Ledger();
      r.addMarket(CID, [YES, NO]);
      for (const [i, w] of ['a', 'b', FEE_WALLET].entries()) {
        const b = r.wallet(w);
        [b.usdcAvailable, b.usdcReserved, b.usdcPending] = matched[i].usdc;
        for (const [t, v] of [[YES, matched[i].yes], [NO, matched[i].no]] as const) Object.assign(b.token(t), { available: v[0], reserved: v[1], pending: v[2] });
      }
      r.netDeposits = l.netDeposits;
      const supply = c.collateral;
      r.markets.get(CID)!.supply = [supply, supply];
      assert.deepEqual(r.checkLedger([], [f]), []);
      r.reverseFill(f);
      assert.deepEqual(['a', 'b', FEE_WALLET].map((w) => full(r, w)), start);
      assert.deepEqual(r.markets.get(CID)!.supply, [20 * T, 20 * T]);
      assert.deepEqual(r.checkLedger([], []), []);
    });
  }

  test('holdProceeds sets restored proceeds aside, and refuses a wallet that does not hold them', () => {
    const { l } = setup();
    l.deposit('a', 10 * T);
    l.split('a', CID, 10 * T);
    l.deposit('b', 5 * T);
    const f = fillOf(fillCases[0]);
    l.holdProceeds(f);
    assert.deepEqual(full(l, 'a').yes, [0, 0, 10 * T]);
    assert.deepEqual(full(l, 'b').usdc, [T, 0, 4 * T]);
    assert.deepEqual(l.checkLedger([], [f]), []);
    assert.throws(() => l.holdProceeds(f), /less than the \d+ pending/);
  });
});
