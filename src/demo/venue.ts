/**
 * What the trading desk (desk.ts) trades on, and through what: the markets it is given, and the Venue it
 * places, cancels and reads back through, with the answers a venue owes. The living demo's venue is the
 * engine in process (engine-venue.ts); tools/simulate.ts's is the service over HTTP. Separate so that a venue
 * is written against this contract alone, without the desk's decisions.
 *
 * Types only. Imports the trading rules' market type (trading.ts) and the signer's types (order-signer.ts).
 */
import type { SignedOrder, SigningWallet } from './order-signer.ts';
import type { MarketRules } from './trading.ts';

export interface DeskMarket extends MarketRules {
  conditionId: string;
  tokenIds: readonly [string, string];
  negRisk: boolean;
  makerFeeBps: number;
  /** Where the fair price starts, in pips of outcome 0. */
  fairPips: number;
}

export type PlaceOutcome =
  | { ok: true; orderId: string; status: string; makingAmount: number; takingAmount: number; tradeIds: readonly string[] }
  | { ok: false; orderId: string; error: string };

/** An order as read back: status LIVE while it rests. */
export interface OrderState {
  status: string;
  sizeMatched: number;
  tradeIds: readonly string[];
}

/** A wallet's USDC and tokens, available + reserved, in units. */
export interface Holdings {
  usdc: number;
  tokens: ReadonlyMap<string, number>;
}

/**
 * Where the desk trades. A venue applies the items of one call in the order given (as far as its
 * transport allows: in process exactly), answers one outcome per item, and reports failures as outcomes
 * or error strings rather than throwing, except when it cannot answer at all.
 */
export interface Venue {
  /** Where trading stands (the sandbox's maintenance windows); a venue that cannot tell is always open. */
  phase?(): 'open' | 'maintenance' | 'post-only';
  place(items: readonly { wallet: SigningWallet; order: SignedOrder }[]): Promise<PlaceOutcome[]>;
  cancel(items: readonly { wallet: SigningWallet; orderIds: readonly string[] }[]): Promise<void>;
  cancelAll(wallet: SigningWallet): Promise<void>;
  /** The current state of these orders of the wallet; an id the venue does not know is left out. */
  orderStates(wallet: SigningWallet, orderIds: readonly string[]): Promise<Map<string, OrderState>>;
  holdings(wallet: SigningWallet): Promise<Holdings>;
  deposit(wallet: SigningWallet, units: number): Promise<void>;
}
