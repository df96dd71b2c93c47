/**
 * Integer units and their decimal form. Inside the service every amount is an integer:
 *   - tokens and USDC in units of 10^-6 (UNITS = 1_000_000 per whole token or dollar);
 *   - prices in pips of 10^-4 (PIPS = 10_000 per 1.0).
 * Decimal strings exist only at the edge: parse on the way in, format on the way out. Parsing is exact
 * (string digits, never parseFloat) and refuses more decimals than the unit holds, so no value is ever
 * silently rounded.
 */

export const UNIT_DECIMALS = 6;
export const UNITS = 1_000_000;
export const PIP_DECIMALS = 4;
export const PIPS = 10_000;
/** A price in pips times this is the price in units (micro-USDC) per token. */
export const UNITS_PER_PIP = UNITS / PIPS;

const DECIMAL = /^(\d{1,16})(?:\.(\d+))?$/;

/**
 * Parses a non-negative decimal ("12", "0.55", "120.500000") into an integer scaled by 10^decimals.
 * Returns undefined when the text is not a plain decimal, has more fractional digits than `decimals`
 * (after trimming trailing zeros), or exceeds Number.MAX_SAFE_INTEGER once scaled.
 */
export function parseScaled(text: string, decimals: number): number | undefined {
  const m = DECIMAL.exec(text);
  if (!m) return undefined;
  const frac = (m[2] ?? '').replace(/0+$/, '');
  if (frac.length > decimals) return undefined;
  const value = Number(m[1]) * 10 ** decimals + (frac ? Number(frac.padEnd(decimals, '0')) : 0);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Formats an integer scaled by 10^decimals as the minimal decimal string: 5500 pips -> "0.55", 120500000 units -> "120.5". */
export function formatScaled(value: number, decimals: number): string {
  const neg = value < 0;
  const abs = Math.abs(value);
  const scale = 10 ** decimals;
  const whole = Math.floor(abs / scale);
  const frac = abs - whole * scale;
  let s = String(whole);
  if (frac !== 0) s += '.' + String(frac).padStart(decimals, '0').replace(/0+$/, '');
  return neg ? '-' + s : s;
}

/** Decimal token/USDC amount -> integer units. */
export const parseUnits = (text: string) => parseScaled(text, UNIT_DECIMALS);
/** Integer units -> minimal decimal string. */
export const formatUnits = (units: number) => formatScaled(units, UNIT_DECIMALS);
/** Decimal price -> integer pips (undefined if finer than a pip). */
export const parsePips = (text: string) => parseScaled(text, PIP_DECIMALS);
/** Integer pips -> minimal decimal string. */
export const formatPips = (pips: number) => formatScaled(pips, PIP_DECIMALS);

/** Integer units -> JSON number for the wallet data routes (exact to 6 decimals). */
export const unitsToNumber = (units: number) => units / UNITS;
/** Integer pips -> JSON number. */
export const pipsToNumber = (pips: number) => pips / PIPS;

/**
 * Parses an integer amount given as a decimal string of base units (the signed makerAmount/takerAmount
 * of an order). Refuses signs, decimals, leading junk and anything above MAX_SAFE_INTEGER.
 */
export function parseIntegerUnits(text: string): number | undefined {
  if (!/^\d{1,16}$/.test(text)) return undefined;
  const v = Number(text);
  return Number.isSafeInteger(v) ? v : undefined;
}

/** The tick sizes a market may use, as decimal strings and pips. */
export const TICK_SIZES = ['0.1', '0.01', '0.001', '0.0001'] as const;
export type TickSize = (typeof TICK_SIZES)[number];
export const tickToPips = (tick: TickSize): number => parsePips(tick)!;

// ---- serialization fast paths ------------------------------------------------------------------------
// The depth snapshots format every level of every changed book (engine/shard/book-json.ts), often hundreds of
// levels per publication: formatScaled's String/padStart/regex per value dominated the shard's CPU. These
// give the same strings (test/engine/book-json.test.ts compares them over many values) without that work.

/** formatPips of the prices 0..PIPS, filled as they are met (a thread that formats few prices keeps few). */
const PIP_TEXT: Array<string | undefined> = new Array(PIPS + 1);
/** Fractions of a whole token that are whole multiples of 10^-2 (every order size is): ".01" .. ".99". */
const CENT_TEXT: readonly string[] = Array.from({ length: 100 }, (_, c) => (c === 0 ? '' : formatScaled(c, 2).slice(1)));
const CENT_UNITS = UNITS / 100;

/** Same string as formatPips, by table lookup for integer prices 0..PIPS (every book price). */
export function formatPipsFast(pips: number): string {
  if (!(pips >= 0 && pips <= PIPS && Number.isInteger(pips))) return formatPips(pips);
  return PIP_TEXT[pips] ?? (PIP_TEXT[pips] = formatPips(pips));
}

/** Same string as formatUnits, without padding or regex for the non-negative integers sizes are. */
export function formatUnitsFast(units: number): string {
  if (!(units >= 0 && Number.isSafeInteger(units))) return formatUnits(units);
  const whole = Math.floor(units / UNITS);
  const frac = units - whole * UNITS;
  if (frac === 0) return '' + whole;
  if (frac % CENT_UNITS === 0) return whole + CENT_TEXT[frac / CENT_UNITS];
  // Not a whole number of cents: drop the trailing zeros digit by digit, then pad to the remaining digits.
  let f = frac;
  let digits = UNIT_DECIMALS;
  while (f % 10 === 0) {
    f /= 10;
    digits--;
  }
  const s = '' + f;
  return whole + (s.length === digits ? '.' : '.' + '0'.repeat(digits - s.length)) + s;
}
