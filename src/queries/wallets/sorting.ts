/**
 * The orders of a wallet view's rows (docs/decisions/wallet-data.md, "Sorting and paging"). Rows whose keys tie are
 * ordered by `ord`, their (conditionId, outcome) order, ascending whatever the direction: the documented
 * tie-break. So every order is total, and a row whose price moved can be taken out and put back at its
 * place (RowOrders.merge) instead of sorting every row again.
 *
 * A view sorts its rows once per (open or closed, sortBy, direction), on first use. Rows whose price moved
 * since wait in `moved` of each price order; the next read takes them out and merges them back in, so a
 * few republished books cost a pass over the rows, not a sort of them. A change of metadata drops the
 * orders that read it (title, end date), to be sorted again.
 */
import type { ClosedSort, PositionSort } from '../../edge/schemas/wallets.ts';
import type { LiveRow } from './live-row.ts';
import type { MarketMeta } from './market-meta.ts';

/** Sorts whose order follows catalog metadata. */
export const META_SORTS: ReadonlySet<string> = new Set(['TITLE', 'RESOLVING']);
/** Sorts whose order follows live prices. */
export const PRICE_SORTS: ReadonlySet<string> = new Set(['CURRENT', 'CASHPNL', 'PERCENTPNL', 'PRICE']);

type Cmp = (a: LiveRow, b: LiveRow) => number;

function compareTitle(a: MarketMeta, b: MarketMeta): number {
  if (a.titleLower !== b.titleLower) return a.titleLower < b.titleLower ? -1 : 1;
  if (a.title !== b.title) return a.title < b.title ? -1 : 1;
  return 0;
}

function byNumber(get: (r: LiveRow) => number, descending: boolean): Cmp {
  return descending ? (a, b) => get(b) - get(a) : (a, b) => get(a) - get(b);
}

function byTitle(descending: boolean): Cmp {
  return descending ? (a, b) => compareTitle(b.meta, a.meta) : (a, b) => compareTitle(a.meta, b.meta);
}

/** End date in the requested direction; rows without one come last either way. */
function byEndDate(descending: boolean): Cmp {
  return (a, b) => {
    const x = a.meta.endMs;
    const y = b.meta.endMs;
    const nx = Number.isNaN(x);
    const ny = Number.isNaN(y);
    if (nx || ny) return nx === ny ? 0 : nx ? 1 : -1;
    return descending ? y - x : x - y;
  };
}

/** The order of `sortBy` in one direction, ties broken by `ord`. */
export function comparator(sortBy: PositionSort | ClosedSort, descending: boolean): Cmp {
  const byKey = keyComparator(sortBy, descending);
  return (a, b) => byKey(a, b) || a.ord - b.ord;
}

/** The number each numeric sort orders by. */
const SORT_KEYS: Record<Exclude<PositionSort | ClosedSort, 'TITLE' | 'RESOLVING'>, (r: LiveRow) => number> = {
  CURRENT: (r) => r.cv,
  INITIAL: (r) => r.iv,
  TOKENS: (r) => r.size,
  CASHPNL: (r) => r.cash,
  PERCENTPNL: (r) => r.pct,
  PRICE: (r) => r.cur,
  AVGPRICE: (r) => r.avg,
  REALIZEDPNL: (r) => r.realized,
  // The seconds shown, not the ms of the close: rows closed within one second tie, and ties break as documented.
  TIMESTAMP: (r) => r.timestamp,
};

function keyComparator(sortBy: PositionSort | ClosedSort, descending: boolean): Cmp {
  if (sortBy === 'TITLE') return byTitle(descending);
  if (sortBy === 'RESOLVING') return byEndDate(descending);
  return byNumber(SORT_KEYS[sortBy], descending);
}

/** One order of a view's rows, and the rows that moved since it was last read. */
interface SortedRows {
  readonly closed: boolean;
  readonly sortBy: PositionSort | ClosedSort;
  rows: LiveRow[];
  cmp: Cmp;
  moved: LiveRow[];
  /** Too many moved rows to be worth merging: sort again. */
  resort: boolean;
}

/** The orders of one view's rows, sorted on first use and kept in order as prices and metadata change. */
export class RowOrders {
  private readonly sorted = new Map<string, SortedRows>();
  /** Marks of merges, never repeated among the orders of these rows (see merge). */
  private markStamp = 0;

  constructor(
    private readonly open: readonly LiveRow[],
    private readonly closed: readonly LiveRow[],
  ) {}

  /** The open or closed rows in this order (shared: read only). */
  rows(closed: boolean, sortBy: PositionSort | ClosedSort, descending: boolean): LiveRow[] {
    const key = `${closed ? 'c' : 'o'}:${sortBy}:${descending ? 'D' : 'A'}`;
    let sorted = this.sorted.get(key);
    if (sorted === undefined) {
      const cmp = comparator(sortBy, descending);
      sorted = { closed, sortBy, rows: [...(closed ? this.closed : this.open)].sort(cmp), cmp, moved: [], resort: false };
      this.sorted.set(key, sorted);
    } else if (sorted.resort) {
      sorted.rows.sort(sorted.cmp);
      sorted.resort = false;
    } else if (sorted.moved.length > 0) {
      this.merge(sorted);
    }
    return sorted.rows;
  }

  /**
   * The orders of open rows that read prices now hold `moved` out of place. Closed rows have no live price
   * (their PRICE is the closing price), and a moved open row merged into a closed order would show there.
   */
  pricesMoved(moved: readonly LiveRow[]): void {
    for (const sorted of this.sorted.values()) {
      if (sorted.closed || !PRICE_SORTS.has(sorted.sortBy) || sorted.resort) continue;
      for (const r of moved) sorted.moved.push(r);
      // Beyond an eighth of the rows, one sort costs less than merging (and the list stays bounded).
      if (sorted.moved.length * 8 > sorted.rows.length) {
        sorted.resort = true;
        sorted.moved = [];
      }
    }
  }

  /** Some row's metadata changed: the orders by title and end date are sorted again at their next use. */
  metaChanged(): void {
    for (const [key, sorted] of [...this.sorted]) if (META_SORTS.has(sorted.sortBy)) this.sorted.delete(key);
  }

  /**
   * Takes the moved rows out of `sorted` and puts them back at their places, in place; rows that did not
   * move keep their order. Each moved row finds its place by binary search among the others (k log n
   * comparisons for k moved rows): a merge pass compared every row, ~250 µs per request over 5,000 rows
   * while books moved under every read.
   */
  private merge(sorted: SortedRows): void {
    // Every order of these rows shares this counter: a stamp left on a row by one order's merge never
    // equals a later stamp of another.
    const stamp = ++this.markStamp;
    for (const r of sorted.moved) r.mark = stamp;
    const back: LiveRow[] = [];
    for (const r of sorted.moved) {
      if (r.mark !== stamp) continue;
      r.mark = -stamp;
      back.push(r);
    }
    sorted.moved = [];
    const cmp = sorted.cmp;
    back.sort(cmp);
    const rows = sorted.rows;
    // The rows that stay, compacted to the front, still in order.
    let m = 0;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      if (r.mark !== -stamp) rows[m++] = r;
    }
    // Each moved row goes before the first staying row it sorts before (after its equals), as a merge
    // would put it; `back` is sorted, so its places never decrease.
    const at = new Array<number>(back.length);
    let lo = 0;
    for (let j = 0; j < back.length; j++) {
      let a = lo;
      let b = m;
      while (a < b) {
        const mid = (a + b) >>> 1;
        if (cmp(back[j], rows[mid]) < 0) b = mid;
        else a = mid + 1;
      }
      at[j] = lo = a;
    }
    // Spread from the right: a staying row moves up by the number of moved rows placed before it.
    let w = m + back.length;
    let i = m - 1;
    for (let j = back.length - 1; j >= 0; j--) {
      while (i >= at[j]) rows[--w] = rows[i--];
      rows[--w] = back[j];
    }
  }
}
