/**
 * Wallet operations that touch only the ledger: deposits, withdrawals, split, merge, redeem and the admin's
 * credit of outcome tokens, and the
 * balances views (available and reserved; pending proceeds of unsettled trades apart). Every operation spends
 * only what is available: proceeds of a trade not MINED yet cannot be withdrawn, split, merged or redeemed.
 *
 * Each operation is checked and applied by the ledger at once (ledger.ts returns a LedgerCode, a catalogue
 * result), journals one event when it changed something, and is answered through group commit, so only
 * after that event is durable. A refused operation journals nothing and is answered at once. No shard is
 * involved: token pairs and USDC move in the ledger, books are untouched.
 */
import { Errors } from '../../domain/errors.ts';
import { HOUSE_WALLET, creditEvent, depositEvent, redeemEvent, splitEvent } from '../../domain/events.ts';
import type { JournalWriter } from '../../journal/writer.ts';
import type { BalancesView, OpResult, UnsettledView } from '../engine-types.ts';
import type { GroupCommit } from '../group-commit.ts';
import { LedgerCode, type Ledger } from './ledger.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { MarketState, MarketTable } from '../markets/market-table.ts';

export class WalletOps {
  constructor(
    private readonly ledger: Ledger,
    private readonly markets: MarketTable,
    private readonly writer: JournalWriter,
    private readonly commit: GroupCommit,
    private readonly life: Lifecycle,
  ) {}

  deposit(wallet: string, units: number): Promise<OpResult> {
    return this.moveUsdc('deposit', wallet, units);
  }

  withdraw(wallet: string, units: number): Promise<OpResult> {
    return this.moveUsdc('withdraw', wallet, units);
  }

  /** A deposit or withdrawal: the ledger moves it, the journal keeps it, net deposits change with it. */
  private moveUsdc(kind: 'deposit' | 'withdraw', wallet: string, units: number): Promise<OpResult> {
    return this.run(() => {
      const code = kind === 'deposit' ? this.ledger.deposit(wallet, units) : this.ledger.withdraw(wallet, units);
      if (code === LedgerCode.OK) {
        this.writer.append(depositEvent(kind, wallet, units));
        this.commit.netDepositsChanged();
      }
      return code;
    });
  }

  split(wallet: string, conditionId: string, units: number): Promise<OpResult> {
    return this.run(() => {
      const code = this.ledger.split(wallet, conditionId, units);
      if (code === LedgerCode.OK) this.writer.append(splitEvent('split', wallet, conditionId, this.marketTokens(conditionId), units));
      return code;
    });
  }

  merge(wallet: string, conditionId: string, units: number): Promise<OpResult> {
    return this.run(() => {
      const code = this.ledger.merge(wallet, conditionId, units);
      if (code === LedgerCode.OK) this.writer.append(splitEvent('merge', wallet, conditionId, this.marketTokens(conditionId), units));
      return code;
    });
  }

  /** Admin credit of outcome tokens (ledger.credit), journaled as a `credit` event; net deposits change with it. */
  credit(wallet: string, conditionId: string, outcome: 0 | 1, units: number, pricePips: number): Promise<OpResult> {
    return this.run(() => {
      const code = this.ledger.credit(wallet, HOUSE_WALLET, conditionId, outcome, units);
      if (code === LedgerCode.OK) {
        this.writer.append(creditEvent(wallet, conditionId, this.marketTokens(conditionId), outcome, units, pricePips));
        this.commit.netDepositsChanged();
      }
      return code;
    });
  }

  redeem(wallet: string, conditionId: string): Promise<OpResult> {
    return this.run(() => {
      const r = this.ledger.redeem(wallet, conditionId);
      if (r.code === LedgerCode.OK && (r.burned[0] > 0 || r.burned[1] > 0)) {
        const m = this.markets.get(conditionId) as MarketState;
        this.writer.append(redeemEvent(wallet, conditionId, m.tokenIds, m.resolved as 0 | 1, r.burned, r.payout));
      }
      return r.code;
    });
  }

  /** Allocates: the wallet's USDC and the tokens it holds or has reserved, with their markets. */
  balances(wallet: string): BalancesView {
    const w = this.ledger.wallets.get(wallet);
    if (w === undefined) return { usdc: { available: 0, reserved: 0 }, tokens: [] };
    const tokens: BalancesView['tokens'] = [];
    for (const [tokenId, t] of w.tokens) {
      if (t.available === 0 && t.reserved === 0) continue;
      const tm = this.markets.token(tokenId);
      if (tm === undefined) continue;
      tokens.push({ tokenId, conditionId: tm.market.conditionId, outcome: tm.outcome, available: t.available, reserved: t.reserved });
    }
    return { usdc: { available: w.usdcAvailable, reserved: w.usdcReserved }, tokens };
  }

  /** Allocates: what the wallet's unsettled trades delivered (pending), tokens with any. */
  unsettled(wallet: string): UnsettledView {
    const w = this.ledger.wallets.get(wallet);
    if (w === undefined) return { usdc: 0, tokens: [] };
    const tokens: UnsettledView['tokens'] = [];
    for (const [tokenId, t] of w.tokens) if (t.pending > 0) tokens.push({ tokenId, pending: t.pending });
    return { usdc: w.usdcPending, tokens };
  }

  /** The ledger accepted the split or merge, so the market exists. */
  private marketTokens(conditionId: string): [string, string] {
    return (this.markets.get(conditionId) as MarketState).tokenIds;
  }

  private run(op: () => number): Promise<OpResult> {
    if (this.life.down) return Promise.resolve({ ok: false, code: Errors.PM_ERR_ENGINE_DOWN.result });
    const code = op();
    if (code !== LedgerCode.OK) return Promise.resolve({ ok: false, code });
    return new Promise((resolve) => this.commit.ack(resolve, { ok: true, code: 0 }));
  }
}
