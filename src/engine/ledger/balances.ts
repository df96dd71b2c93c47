/**
 * The shapes of money the ledger holds (ledger.ts): a wallet's USDC and tokens, split into available, reserved
 * and pending; a market's supply of each outcome token; what a deferred fill delivers to each receiver
 * (proceedsOf); and the ledger's result codes and its one error. Owns those shapes; every move of money is
 * ledger.ts's. Separate so that the readers of balances (the balances writer, the invariants, the views) need
 * the shapes without the operations.
 *
 * Imports domain/ only.
 */
import { Errors } from '../../domain/errors.ts';
import { FEE_WALLET, type FillEvent } from '../../domain/events.ts';

export const LedgerCode = {
  OK: 0,
  BALANCE: Errors.PM_ERR_BALANCE.result,
  NOT_RESOLVED: Errors.PM_ERR_MARKET_NOT_RESOLVED.result,
  RESOLVED: Errors.PM_ERR_MARKET_RESOLVED.result,
  AMOUNT: Errors.PM_ERR_AMOUNT.result,
  UNKNOWN_MARKET: Errors.PM_ERR_MARKET_UNKNOWN.result,
} as const;

/** A broken ledger invariant: a bug, never a client mistake. The engine stops on it. */
export class LedgerError extends Error {}

export interface TokenBalance {
  available: number;
  reserved: number;
  /** Delivered by deferred fills not MINED yet: held, not spendable. */
  pending: number;
  dirty: boolean;
}

export class WalletBalance {
  usdcAvailable = 0;
  usdcReserved = 0;
  /** Delivered by deferred fills not MINED yet: held, not spendable. */
  usdcPending = 0;
  usdcDirty = false;
  readonly tokens = new Map<string, TokenBalance>();
  /** Token ids whose balance changed since the last takeDirty() (their `dirty` flag is set). */
  dirtyTokens: string[] = [];
  /** Queued in Ledger.dirty until the writer takes it. */
  queued = false;
  constructor(readonly wallet: string) {}

  token(tokenId: string): TokenBalance {
    let t = this.tokens.get(tokenId);
    if (t === undefined) {
      t = { available: 0, reserved: 0, pending: 0, dirty: false };
      this.tokens.set(tokenId, t);
    }
    return t;
  }
}

export interface MarketSupply {
  conditionId: string;
  tokenIds: [string, string];
  supply: [number, number];
  /** -1 while trading; the winning outcome once resolved. */
  resolved: -1 | 0 | 1;
}

/** What a deferred fill delivers to one receiver: `units` of USDC (tokenId undefined) or of a token. */
export interface Proceeds {
  wallet: string;
  tokenId: string | undefined;
  units: number;
}

/**
 * Allocates: what a fill delivers, receiver by receiver: `size` tokens to each BUY party, `usdc - fee` to
 * each SELL party, both fees to FEE_WALLET. Zero amounts are left out.
 */
export function proceedsOf(f: FillEvent): Proceeds[] {
  const out: Proceeds[] = [];
  const party = (side: string, wallet: string, tokenId: string, usdc: number, fee: number) => {
    if (side === 'BUY') out.push({ wallet, tokenId, units: f.size });
    else if (usdc - fee > 0) out.push({ wallet, tokenId: undefined, units: usdc - fee });
  };
  party(f.takerSide, f.takerWallet, f.takerTokenId, f.takerUsdc, f.takerFee);
  party(f.makerSide, f.makerWallet, f.makerTokenId, f.makerUsdc, f.makerFee);
  if (f.takerFee + f.makerFee > 0) out.push({ wallet: FEE_WALLET, tokenId: undefined, units: f.takerFee + f.makerFee });
  return out;
}

/** One open order's reservation, as the engine holds it, for checkLedger. */
