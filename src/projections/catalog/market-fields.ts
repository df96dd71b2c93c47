/**
 * The market fields whose input needs more than a default: the outcome labels, the token ids (fixed once
 * stored), the indicative prices and the minimum order size. Each reports what is wrong with its field to
 * `problems` and falls back to the value the market keeps.
 */
import type { MarketInput } from '../../edge/schemas/admin.ts';
import { DEFAULT_OUTCOMES, LOT_UNITS } from '../../domain/market-rules.ts';
import { parseTokenId } from '../../domain/ids.ts';
import { formatScaled, parseScaled, parseUnits, UNITS } from '../../domain/units.ts';
import type { MarketRec } from './catalog-index.ts';
import { present, stringPair, type Problem } from './input.ts';

const DEFAULT_MIN_SIZE_UNITS = 5 * UNITS;

/** Two different labels of at most 100 characters; the default pair when absent or invalid. */
export function outcomesOf(m: MarketInput, path: string, problems: Problem[]): [string, string] {
  if (!present(m.outcomes)) return [DEFAULT_OUTCOMES[0], DEFAULT_OUTCOMES[1]];
  const pair = stringPair(m.outcomes, `${path}.outcomes`, problems);
  if (pair) {
    if (pair.every((o) => typeof o === 'string' && o.trim() !== '' && o.length <= 100) && pair[0] !== pair[1]) return pair as [string, string];
    problems.push({ path: `${path}.outcomes`, message: 'must be two different non-empty labels of at most 100 characters' });
  }
  return [DEFAULT_OUTCOMES[0], DEFAULT_OUTCOMES[1]];
}

/** The given token ids, which must equal the stored ones of market `id`; else `kept` (stored or derived). */
export function tokenIdsOf(m: MarketInput, id: string, old: MarketRec | undefined, kept: [string, string], path: string, problems: Problem[]): [string, string] {
  if (!present(m.clobTokenIds)) return kept;
  const pair = stringPair(m.clobTokenIds, `${path}.clobTokenIds`, problems);
  if (!pair) return kept;
  const ids = pair.map((t) => (typeof t === 'string' ? parseTokenId(t) : undefined));
  if (ids[0] === undefined || ids[1] === undefined || ids[0] === ids[1]) {
    problems.push({ path: `${path}.clobTokenIds`, message: 'must be two different uint256 decimal strings' });
  } else if (old && (old.clobTokenIds[0] !== ids[0] || old.clobTokenIds[1] !== ids[1])) {
    problems.push({ path: `${path}.clobTokenIds`, message: `market ${id} has token ids ${JSON.stringify(old.clobTokenIds)}; they cannot change` });
  } else return [ids[0], ids[1]];
  return kept;
}

/** Two decimals in [0, 1] of at most 6 places, written without trailing zeros; none when absent or invalid. */
export function pricesOf(m: MarketInput, path: string, problems: Problem[]): string[] {
  if (!present(m.outcomePrices)) return [];
  const pair = stringPair(m.outcomePrices, `${path}.outcomePrices`, problems);
  if (!pair) return [];
  const scaled = pair.map((p) => (typeof p === 'number' || typeof p === 'string' ? parseScaled(String(p), 6) : undefined));
  if (scaled.some((p) => p === undefined || p > UNITS)) {
    problems.push({ path: `${path}.outcomePrices`, message: 'must be two decimals in [0, 1] with at most 6 decimals' });
    return [];
  }
  return scaled.map((p) => formatScaled(p!, 6));
}

/** Units of a positive multiple of one lot; 5 shares when absent or invalid. */
export function minSizeOf(m: MarketInput, path: string, problems: Problem[]): number {
  if (!present(m.orderMinSize)) return DEFAULT_MIN_SIZE_UNITS;
  const units = parseUnits(String(m.orderMinSize));
  if (units !== undefined && units > 0 && units % LOT_UNITS === 0) return units;
  problems.push({ path: `${path}.orderMinSize`, message: 'must be a positive multiple of 0.01' });
  return DEFAULT_MIN_SIZE_UNITS;
}
