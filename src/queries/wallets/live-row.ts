/**
 * One position of a wallet view (LiveRow): the projection's state of it, its numbers, and its answer as
 * JSON text.
 *
 * Numbers (docs/decisions/wallet-data.md, "Wallet data"). Inside everything is an integer: sizes in units (10^-6
 * token), prices in micro-USDC per token, money in micro-USDC. Per position:
 *   initialValue  = round(size * avgPrice)          (half up, to 10^-6)
 *   currentValue  = round(size * curPrice)
 *   cashPnl       = currentValue - initialValue
 *   percentPnl    = trunc(cashPnl / initialValue * 100, 4 decimals); 0 when initialValue is 0
 *   percentRealizedPnl = trunc((currentValue - B) / B * 100, 4 decimals), B = round(totalBought * avgPrice);
 *                   0 when B is 0 (reference/platform-semantics.md section 1.2, a compatibility shape)
 * and only then divided into JSON numbers (x / 10^6, percentages x / 10^4).
 */
import { UNITS, unitsToNumber } from '../../domain/units.ts';
import type { MarketFacts, PositionState } from '../../projections/wallets.ts';
import type { MarketMeta } from './market-meta.ts';
import { flat } from './page-cache.ts';

/** round(a * b / 10^6), half up, exactly, for non-negative safe integers (a * b may pass 2^53). */
export function mulMicro(a: number, b: number): number {
  const hi = Math.floor(a / UNITS);
  const lo = a - hi * UNITS;
  // lo * b < 10^12 is exact, and a quotient that is x.5 exactly is representable, so Math.round is exact.
  return hi * b + Math.round((lo * b) / UNITS);
}

/** trunc(num / den * 100) to 4 decimals, as an integer of 10^-4 percent (den > 0). */
export function percent4(num: number, den: number): number {
  const n = num * UNITS;
  // Below 2^53 the correctly rounded quotient of two exact integers cannot cross an integer.
  if (Number.isSafeInteger(n)) return Math.trunc(n / den);
  return Number((BigInt(num) * BigInt(UNITS)) / BigInt(den));
}

/** A percentage in 10^-4 percent as its JSON number. */
const percentNumber = (p4: number) => p4 / 10_000;

/**
 * One position of a wallet view, with everything its answer and its sorts need. A class, so that every
 * row shares one hidden class: a view's rows are scanned on every request, and object literals built by
 * spreading decoded records ended up with many shapes (megamorphic reads, measured 20x slower).
 */
export class LiveRow {
  /** The price inputs the numbers were computed from (compared by identity). */
  snap: { version: number; json: string } | undefined = undefined;
  last: { pricePips: number } | undefined = undefined;
  /** Priced by a two-sided book with a spread of at most 0.10 (the last trade did not count). */
  tight = false;
  cur = 0;
  iv = 0;
  cv = 0;
  cash = 0;
  pct = 0;
  pctReal = 0;
  /** This row's answer as JSON text, written once per change of its numbers (number formatting is slow). */
  json: string | undefined = undefined;
  /** Index in its view's `open` or `closed` list: (conditionId, outcome) order, every sort's tie-break. */
  ord = 0;
  /** Scratch mark of a sort fix-up (sorting.ts). */
  mark = 0;

  /** The position state, copied out of the decoded record: decoded records come in many shapes. */
  readonly size: number;
  readonly avg: number;
  readonly bought: number;
  readonly realized: number;
  /** Seconds of the last activity, or of the close for a closed row. */
  readonly timestamp: number;
  readonly closedAt: number;

  constructor(
    readonly conditionId: string,
    readonly outcome: 0 | 1,
    st: PositionState,
    /** Replaced when the catalog's metadata of the market changes (wallet-views.ts, checkRows). */
    public meta: MarketMeta,
    readonly facts: MarketFacts | undefined,
    /** Token whose live price moves this row; undefined when nothing live can (resolved, closed, unknown). */
    readonly token: string | undefined,
    readonly redeemable: boolean,
    readonly mergeable: boolean,
  ) {
    this.size = st.size;
    this.avg = st.avg;
    this.bought = st.bought;
    this.realized = st.realized;
    this.closedAt = st.closedAt;
    this.timestamp = Math.floor((st.closedAt > 0 ? st.closedAt : st.last) / 1000);
    if (st.size === 0) this.cur = st.closePrice;
  }

  /** Computes the numbers from the state and `cur`; the text is written again at its next use. */
  compute(): void {
    this.json = undefined;
    this.iv = mulMicro(this.size, this.avg);
    this.cv = mulMicro(this.size, this.cur);
    this.cash = this.cv - this.iv;
    const basis = mulMicro(this.bought, this.avg);
    this.pct = this.iv === 0 ? 0 : percent4(this.cash, this.iv);
    this.pctReal = basis === 0 ? 0 : percent4(this.cv - basis, basis);
  }

  /**
   * This position as JSON text, fields in the order of the Position schema (`negativeRisk` last, left out
   * for closed rows), kept until its numbers or metadata change. Text from storage is escaped once, in
   * the metadata cache; the wallet is a validated lowercase address.
   */
  text(wallet: string, withNegRisk: boolean): string {
    if (this.json !== undefined) return this.json;
    const { meta, outcome } = this;
    const j = meta.json;
    const num = unitsToNumber;
    const tail = withNegRisk ? `,"negativeRisk":${this.facts?.negRisk ?? meta.negRisk}}` : '}';
    this.json = flat(
      `{"proxyWallet":"${wallet}","asset":${j.assets[outcome]},"conditionId":${j.conditionId},"size":${num(this.size)},` +
      `"avgPrice":${num(this.avg)},"initialValue":${num(this.iv)},"currentValue":${num(this.cv)},"cashPnl":${num(this.cash)},` +
      `"percentPnl":${percentNumber(this.pct)},"totalBought":${num(this.bought)},"realizedPnl":${num(this.realized)},` +
      `"percentRealizedPnl":${percentNumber(this.pctReal)},"curPrice":${num(this.cur)},"redeemable":${this.redeemable},"mergeable":${this.mergeable},` +
      `"title":${j.title},"slug":${j.slug},"icon":${j.icon},"eventSlug":${j.eventSlug},"outcome":${j.outcomes[outcome]},` +
      `"outcomeIndex":${outcome},"oppositeOutcome":${j.outcomes[1 - outcome]},"oppositeAsset":${j.assets[1 - outcome]},` +
      `"endDate":${j.endDate},"timestamp":${this.timestamp}${tail}`,
    );
    return this.json;
  }
}
