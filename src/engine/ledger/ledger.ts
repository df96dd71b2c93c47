/**
 * Room engine/ledger/: money on the main thread: balances (this file, the moves; balances.ts, the shapes;
 * invariants.ts, the integrity check), what an order reserves (reservation.ts),
 * settling its fills (settlement.ts), wallet operations (wallet-ops.ts) and a trade's life after the match
 * (trade-lifecycle.ts). Separate because every unit of money moves here and only here; the shards never see it.
 *
 * The balance ledger of the sequencer: every wallet's USDC and outcome tokens, split into available and
 * reserved, in integer units. Pure: no I/O, no clock. It lives on the main thread only (docs/decisions/architecture.md,
 * "Reservations and balances live in one place"), so it needs no locking and cannot overspend however
 * orders are spread over shards.
 *
 * Risk stages (exchange-core's R1/R2):
 *   R1 reserve   before an order reaches a shard: a BUY reserves `buyNeed` USDC (its spend bound plus the
 *                largest fee it could owe), a SELL its tokens. Refused when available is short.
 *   R2 settle    per fill, from the reservation: a BUY pays `usdc + fee` and receives tokens; a SELL gives
 *                tokens and receives `usdc - fee`. Fees go to FEE_WALLET. MINT turns the two buyers' USDC
 *                into one token pair per unit of size; MERGE burns pairs and pays both sellers.
 *   release      cancel, expiry, FAK remainder, killed FOK, price improvement: the part of the reservation
 *                the order can no longer spend goes back to available.
 *
 * Deferred settlement (trade-lifecycle.ts). A deferred fill settles the same way, except that what it
 * delivers (the buyer's tokens, the seller's USDC, the fee wallet's fees) goes to `pending`, held but not
 * spendable: `landProceeds` moves it to available when the trade is MINED; `reverseFill` undoes a FAILED
 * trade exactly: the proceeds leave `pending` (they were never spendable, so they are all there) and what
 * each party gave (USDC with its fee, tokens) comes back to it, available; a MINT burns the pairs it made, a
 * MERGE mints back the pairs it burned. Held = available + reserved + pending everywhere below.
 *
 * Collateral identity (checked by `checkLedger`, invariants.ts): every complete set of outcome tokens is backed by one
 * USDC. Per market, while unresolved, supply(outcome 0) == supply(outcome 1) == collateral; once resolved
 * with winner w, collateral == supply(w) (loser tokens are worthless and redeem for 0). So
 *
 *   sum over wallets (USDC available + reserved) + sum over markets collateral == deposits - withdrawals
 *
 * where FEE_WALLET is an ordinary wallet holding the fees collected.

 * Fees, and what a BUY reserves for them: fees.ts.
 */

import { FEE_WALLET, type FillEvent } from '../../domain/events.ts';
import { LedgerCode, LedgerError, WalletBalance, proceedsOf, type MarketSupply, type Proceeds, type TokenBalance } from './balances.ts';
import { checkLedger, type ReservationView } from './invariants.ts';

export { FEE_WALLET };
export { LedgerCode, LedgerError, WalletBalance } from './balances.ts';
export type { ReservationView } from './invariants.ts';

export interface RedeemResult {
  code: number;
  payout: number;
  burned: [number, number];
}

function validAmount(n: number): boolean {
  return Number.isSafeInteger(n) && n > 0;
}

export class Ledger {
  readonly wallets = new Map<string, WalletBalance>();
  readonly markets = new Map<string, MarketSupply>();
  readonly tokenMarket = new Map<string, { market: MarketSupply; outcome: 0 | 1 }>();
  /** Deposits minus withdrawals, the right-hand side of the collateral identity. */
  netDeposits = 0;
  /** Wallets with balances changed since the last takeDirty(). */
  private dirty: WalletBalance[] = [];

  addMarket(conditionId: string, tokenIds: [string, string]): MarketSupply {
    let m = this.markets.get(conditionId);
    if (m === undefined) {
      m = { conditionId, tokenIds, supply: [0, 0], resolved: -1 };
      this.markets.set(conditionId, m);
      this.tokenMarket.set(tokenIds[0], { market: m, outcome: 0 });
      this.tokenMarket.set(tokenIds[1], { market: m, outcome: 1 });
    }
    return m;
  }

  wallet(wallet: string): WalletBalance {
    let w = this.wallets.get(wallet);
    if (w === undefined) {
      w = new WalletBalance(wallet);
      this.wallets.set(wallet, w);
    }
    return w;
  }

  /**
   * The wallets whose balances changed since the last call. Their `usdcDirty` flags and `dirtyTokens`
   * lists are left for the caller, which writes those balances and clears them.
   */
  takeDirty(): WalletBalance[] {
    const d = this.dirty;
    this.dirty = [];
    for (const w of d) w.queued = false;
    return d;
  }

  private touchUsdc(w: WalletBalance): void {
    w.usdcDirty = true;
    if (!w.queued) {
      w.queued = true;
      this.dirty.push(w);
    }
  }

  private touchToken(w: WalletBalance, tokenId: string, t: TokenBalance): void {
    if (!t.dirty) {
      t.dirty = true;
      w.dirtyTokens.push(tokenId);
    }
    if (!w.queued) {
      w.queued = true;
      this.dirty.push(w);
    }
  }

  private collateral(m: MarketSupply): number {
    return m.resolved === -1 ? m.supply[0] : m.supply[m.resolved];
  }

  // ---- recovery --------------------------------------------------------------------------------------

  /** Restores a held balance (available, nothing reserved) from the balances table. */
  setHeld(wallet: string, asset: string, held: number, usdcAsset: string): void {
    const w = this.wallet(wallet);
    if (asset === usdcAsset) {
      w.usdcAvailable = held;
      return;
    }
    const t = w.token(asset);
    t.available = held;
    const tm = this.tokenMarket.get(asset);
    if (tm === undefined) throw new LedgerError(`balance of unknown token ${asset} for ${wallet}`);
    tm.market.supply[tm.outcome] += held;
  }

  // ---- R1 / release ----------------------------------------------------------------------------------

  reserveUsdc(w: WalletBalance, n: number): boolean {
    if (w.usdcAvailable < n) return false;
    w.usdcAvailable -= n;
    w.usdcReserved += n;
    this.touchUsdc(w);
    return true;
  }

  releaseUsdc(w: WalletBalance, n: number): void {
    if (n === 0) return;
    if (n < 0 || w.usdcReserved < n) throw new LedgerError(`release of ${n} USDC exceeds ${w.wallet}'s reservation ${w.usdcReserved}`);
    w.usdcReserved -= n;
    w.usdcAvailable += n;
    this.touchUsdc(w);
  }

  reserveTokens(w: WalletBalance, tokenId: string, n: number): boolean {
    const t = w.tokens.get(tokenId);
    if (t === undefined || t.available < n) return false;
    t.available -= n;
    t.reserved += n;
    this.touchToken(w, tokenId, t);
    return true;
  }

  releaseTokens(w: WalletBalance, tokenId: string, n: number): void {
    if (n === 0) return;
    const t = w.token(tokenId);
    if (n < 0 || t.reserved < n) throw new LedgerError(`release of ${n} of token ${tokenId} exceeds ${w.wallet}'s reservation ${t.reserved}`);
    t.reserved -= n;
    t.available += n;
    this.touchToken(w, tokenId, t);
  }

  // ---- R2 settle -------------------------------------------------------------------------------------

  /** A BUY party: pays `usdc + fee` out of its reservation, receives `size` tokens (pending when `deferred`). */
  settleBuy(w: WalletBalance, tokenId: string, size: number, usdc: number, fee: number, deferred = false): void {
    const pay = usdc + fee;
    if (w.usdcReserved < pay) throw new LedgerError(`${w.wallet} pays ${pay} but has ${w.usdcReserved} reserved`);
    w.usdcReserved -= pay;
    this.touchUsdc(w);
    const t = w.token(tokenId);
    if (deferred) t.pending += size;
    else t.available += size;
    this.touchToken(w, tokenId, t);
    this.collectFee(fee, deferred);
  }

  /** A SELL party: gives `size` reserved tokens, receives `usdc - fee` (pending when `deferred`). */
  settleSell(w: WalletBalance, tokenId: string, size: number, usdc: number, fee: number, deferred = false): void {
    const t = w.token(tokenId);
    if (t.reserved < size) throw new LedgerError(`${w.wallet} sells ${size} of ${tokenId} but has ${t.reserved} reserved`);
    if (fee > usdc) throw new LedgerError(`fee ${fee} exceeds proceeds ${usdc}`);
    t.reserved -= size;
    this.touchToken(w, tokenId, t);
    if (deferred) w.usdcPending += usdc - fee;
    else w.usdcAvailable += usdc - fee;
    this.touchUsdc(w);
    this.collectFee(fee, deferred);
  }

  private collectFee(fee: number, deferred: boolean): void {
    if (fee === 0) return;
    const f = this.wallet(FEE_WALLET);
    if (deferred) f.usdcPending += fee;
    else f.usdcAvailable += fee;
    this.touchUsdc(f);
  }

  // ---- deferred settlement ---------------------------------------------------------------------------

  /** Moves a receiver's proceeds from pending to available, from available to pending, or out of pending ('gone'). */
  private movePending(p: Proceeds, to: 'available' | 'pending' | 'gone'): void {
    const w = this.wallet(p.wallet);
    if (p.tokenId === undefined) {
      if (to === 'pending') {
        if (w.usdcAvailable < p.units) throw new LedgerError(`${w.wallet} holds ${w.usdcAvailable} USDC available, less than the ${p.units} pending`);
        w.usdcAvailable -= p.units;
        w.usdcPending += p.units;
      } else {
        if (w.usdcPending < p.units) throw new LedgerError(`${w.wallet} has ${w.usdcPending} USDC pending, less than the ${p.units} a trade delivered`);
        w.usdcPending -= p.units;
        if (to === 'available') w.usdcAvailable += p.units;
      }
      this.touchUsdc(w);
      return;
    }
    const t = w.token(p.tokenId);
    if (to === 'pending') {
      if (t.available < p.units) throw new LedgerError(`${w.wallet} holds ${t.available} of ${p.tokenId} available, less than the ${p.units} pending`);
      t.available -= p.units;
      t.pending += p.units;
    } else {
      if (t.pending < p.units) throw new LedgerError(`${w.wallet} has ${t.pending} of ${p.tokenId} pending, less than the ${p.units} a trade delivered`);
      t.pending -= p.units;
      if (to === 'available') t.available += p.units;
    }
    this.touchToken(w, p.tokenId, t);
  }

  /** MINED: what the deferred fill delivered becomes spendable. */
  landProceeds(f: FillEvent): void {
    for (const p of proceedsOf(f)) this.movePending(p, 'available');
  }

  /**
   * Start-up: the proceeds of a deferred fill not MINED yet, restored as available from the balances
   * table, are set aside as pending again. Throws when a wallet does not hold them (a damaged store).
   */
  holdProceeds(f: FillEvent): void {
    for (const p of proceedsOf(f)) this.movePending(p, 'pending');
  }

  /**
   * FAILED: the deferred fill is undone. Its proceeds leave pending; each party gets back, available, what
   * it gave (a BUY its `usdc + fee`, a SELL its tokens); a MINT's pairs are burned, a MERGE's minted back.
   */
  reverseFill(f: FillEvent): void {
    for (const p of proceedsOf(f)) this.movePending(p, 'gone');
    const giveBack = (side: string, wallet: string, tokenId: string, usdc: number, fee: number) => {
      const w = this.wallet(wallet);
      if (side === 'BUY') {
        w.usdcAvailable += usdc + fee;
        this.touchUsdc(w);
      } else {
        const t = w.token(tokenId);
        t.available += f.size;
        this.touchToken(w, tokenId, t);
      }
    };
    giveBack(f.takerSide, f.takerWallet, f.takerTokenId, f.takerUsdc, f.takerFee);
    giveBack(f.makerSide, f.makerWallet, f.makerTokenId, f.makerUsdc, f.makerFee);
    if (f.kind === 'MINT') this.burn(f.conditionId, f.size);
    else if (f.kind === 'MERGE') this.mint(f.conditionId, f.size);
  }

  /** MINT fill: the two buyers' USDC (summing to `size`) becomes `size` token pairs. */
  mint(conditionId: string, size: number): void {
    const m = this.marketOf(conditionId);
    m.supply[0] += size;
    m.supply[1] += size;
  }

  /** MERGE fill: `size` token pairs are burned, releasing `size` USDC to the two sellers. */
  burn(conditionId: string, size: number): void {
    const m = this.marketOf(conditionId);
    if (m.supply[0] < size || m.supply[1] < size) throw new LedgerError(`merge of ${size} exceeds supply of ${conditionId}`);
    m.supply[0] -= size;
    m.supply[1] -= size;
  }

  private marketOf(conditionId: string): MarketSupply {
    const m = this.markets.get(conditionId);
    if (m === undefined) throw new LedgerError(`unknown market ${conditionId}`);
    return m;
  }

  // ---- wallet operations -----------------------------------------------------------------------------

  deposit(wallet: string, units: number): number {
    if (!validAmount(units) || !Number.isSafeInteger(this.netDeposits + units)) return LedgerCode.AMOUNT;
    const w = this.wallet(wallet);
    w.usdcAvailable += units;
    this.netDeposits += units;
    this.touchUsdc(w);
    return LedgerCode.OK;
  }

  withdraw(wallet: string, units: number): number {
    if (!validAmount(units)) return LedgerCode.AMOUNT;
    const w = this.wallets.get(wallet);
    if (w === undefined || w.usdcAvailable < units) return LedgerCode.BALANCE;
    w.usdcAvailable -= units;
    this.netDeposits -= units;
    this.touchUsdc(w);
    return LedgerCode.OK;
  }

  /** The market a split or merge of `units` works on, or the code refusing it. */
  private unresolvedMarket(conditionId: string, units: number): MarketSupply | number {
    if (!validAmount(units)) return LedgerCode.AMOUNT;
    const m = this.markets.get(conditionId);
    if (m === undefined) return LedgerCode.UNKNOWN_MARKET;
    if (m.resolved >= 0) return LedgerCode.RESOLVED;
    return m;
  }

  /** USDC -> one token of each outcome per unit. */
  split(wallet: string, conditionId: string, units: number): number {
    const m = this.unresolvedMarket(conditionId, units);
    if (typeof m === 'number') return m;
    const w = this.wallets.get(wallet);
    if (w === undefined || w.usdcAvailable < units) return LedgerCode.BALANCE;
    w.usdcAvailable -= units;
    this.touchUsdc(w);
    for (const o of [0, 1] as const) {
      const t = w.token(m.tokenIds[o]);
      t.available += units;
      this.touchToken(w, m.tokenIds[o], t);
      m.supply[o] += units;
    }
    return LedgerCode.OK;
  }

  /**
   * Admin credit (the sandbox's test controls): `units` complete sets minted against as many USDC deposited,
   * outcome `outcome` to `wallet`, the other to `house`. Net deposits grow by `units`; supplies stay whole.
   */
  credit(wallet: string, house: string, conditionId: string, outcome: 0 | 1, units: number): number {
    const m = this.unresolvedMarket(conditionId, units);
    if (typeof m === 'number') return m;
    if (!Number.isSafeInteger(this.netDeposits + units)) return LedgerCode.AMOUNT;
    for (const [o, who] of [[outcome, wallet], [1 - outcome, house]] as const) {
      const w = this.wallet(who);
      const t = w.token(m.tokenIds[o]);
      t.available += units;
      this.touchToken(w, m.tokenIds[o], t);
      m.supply[o] += units;
    }
    this.netDeposits += units;
    return LedgerCode.OK;
  }

  /** One token of each outcome -> one USDC per unit. */
  merge(wallet: string, conditionId: string, units: number): number {
    const m = this.unresolvedMarket(conditionId, units);
    if (typeof m === 'number') return m;
    const w = this.wallets.get(wallet);
    const t0 = w?.tokens.get(m.tokenIds[0]);
    const t1 = w?.tokens.get(m.tokenIds[1]);
    if (w === undefined || t0 === undefined || t1 === undefined || t0.available < units || t1.available < units) return LedgerCode.BALANCE;
    t0.available -= units;
    t1.available -= units;
    this.touchToken(w, m.tokenIds[0], t0);
    this.touchToken(w, m.tokenIds[1], t1);
    m.supply[0] -= units;
    m.supply[1] -= units;
    w.usdcAvailable += units;
    this.touchUsdc(w);
    return LedgerCode.OK;
  }

  /** Sets the winner. The engine cancels the market's orders first, so no token is reserved. */
  resolve(conditionId: string, winningOutcome: 0 | 1): number {
    const m = this.markets.get(conditionId);
    if (m === undefined) return LedgerCode.UNKNOWN_MARKET;
    if (m.resolved >= 0) return LedgerCode.RESOLVED;
    m.resolved = winningOutcome;
    return LedgerCode.OK;
  }

  /** Burns the wallet's tokens of a resolved market: 1 USDC per winning token, 0 per losing one. */
  redeem(wallet: string, conditionId: string): RedeemResult {
    const m = this.markets.get(conditionId);
    if (m === undefined) return { code: LedgerCode.UNKNOWN_MARKET, payout: 0, burned: [0, 0] };
    if (m.resolved === -1) return { code: LedgerCode.NOT_RESOLVED, payout: 0, burned: [0, 0] };
    const winner = m.resolved;
    const w = this.wallets.get(wallet);
    const burned: [number, number] = [0, 0];
    if (w === undefined) return { code: LedgerCode.OK, payout: 0, burned };
    for (const o of [0, 1] as const) {
      const t = w.tokens.get(m.tokenIds[o]);
      if (t === undefined || t.available === 0) continue;
      if (t.reserved !== 0) throw new LedgerError(`${wallet} still has ${t.reserved} of ${m.tokenIds[o]} reserved after resolution`);
      burned[o] = t.available;
      m.supply[o] -= t.available;
      t.available = 0;
      this.touchToken(w, m.tokenIds[o], t);
    }
    const payout = burned[winner];
    if (payout > 0) {
      w.usdcAvailable += payout;
      this.touchUsdc(w);
    }
    return { code: LedgerCode.OK, payout, burned };
  }

  // ---- checks ----------------------------------------------------------------------------------------

  /** Sum of USDC held by wallets plus collateral locked in markets; equals netDeposits when conserved. */
  totalUsdc(): { wallets: number; collateral: number; netDeposits: number } {
    let wallets = 0;
    for (const w of this.wallets.values()) wallets += w.usdcAvailable + w.usdcReserved + w.usdcPending;
    let collateral = 0;
    for (const m of this.markets.values()) collateral += this.collateral(m);
    return { wallets, collateral, netDeposits: this.netDeposits };
  }

  /** Allocates: tests, benchmarks and debug only. Every invariant of the ledger (invariants.ts); the problems found, empty = consistent. */
  checkLedger(open: Iterable<ReservationView>, settling: Iterable<FillEvent> = []): string[] {
    return checkLedger(this, open, settling);
  }
}
